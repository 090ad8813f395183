"""The paths, endpoints and files a campaign file names, checked as it loads.

Every path is relative to the campaign file and free of ``..``, and every file it names
exists there (all missing ones named at once); base URLs and ``allowed_destinations``
parse under the one destination rule (models/_endpoints.py). Symlinks and caps are the
reader's, when the files are opened (campaign/_files.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from jurat.campaign._files import campaign_path_problem, inside
from jurat.campaign._translate import Found
from jurat.models._endpoints import canonical_entry, normalise_url
from jurat.models._problems import Loc, close_match

__all__ = [
    "destination_problems",
    "missing_files",
    "named_paths",
    "path_problems",
]

#: Keys that name files, per table; each must stay inside the campaign's directory.
_PATH_KEYS = {
    "artifacts": ("path", "a_path", "b_path", "tests", "explanation_path"),
    "tasks": ("path", "reference_path", "tests"),
    "datasets": ("path",),
    "judges": ("replay_file",),
    "subject": ("replay_file",),
}
_PATH_FIX = (
    "give a path relative to the campaign file, without '..', to a file inside its "
    "directory; copy the file in if it lives elsewhere"
)
_URL_FIX = (
    "give an http(s) base URL such as http://127.0.0.1:8000/v1 (no user@, query, fragment "
    "or '..'); see docs/campaign-format.md"
)


def _entries(data: Mapping[str, Any], table: str) -> list[tuple[Loc, dict[str, Any]]]:
    value = data.get(table)
    if isinstance(value, dict):
        return [((table,), value)]
    if isinstance(value, list):
        return [((table, i), item) for i, item in enumerate(value) if isinstance(item, dict)]
    return []


def named_paths(data: Mapping[str, Any]) -> list[tuple[Loc, str]]:
    """Every (place, path) the campaign names, in file order of the tables."""
    named: list[tuple[Loc, str]] = []
    checks = data.get("checks")
    python = checks.get("python") if isinstance(checks, dict) else None
    if isinstance(python, dict) and isinstance(python.get("tests"), str):
        named.append((("checks", "python", "tests"), python["tests"]))
    grounding = data.get("grounding")
    references = grounding.get("references") if isinstance(grounding, dict) else None
    for index, entry in enumerate(references if isinstance(references, list) else []):
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            named.append((("grounding", "references", index, "path"), entry["path"]))
    for table, keys in _PATH_KEYS.items():
        for loc, entry in _entries(data, table):
            named.extend(((*loc, key), entry[key]) for key in keys
                         if isinstance(entry.get(key), str))
    return named


def path_problems(data: Mapping[str, Any]) -> list[Found]:
    """Every path the campaign names is relative and free of ``..`` (docs/campaign-format.md)."""
    found = []
    for loc, value in named_paths(data):
        problem = campaign_path_problem(value)
        if problem:
            found.append(Found(
                loc, f"{value!r} {problem}; campaign paths stay inside the campaign file's "
                "directory", _PATH_FIX))
    return found


def missing_files(data: Mapping[str, Any], base_dir: str) -> list[Found]:
    """Every file the campaign names exists: all missing ones are named at once, at load.

    Only a path that resolves inside the directory is looked up here; one that leads
    outside is intake's to refuse, and whether something exists out there is not said.
    """
    root = os.path.realpath(base_dir)
    found = []
    for loc, value in named_paths(data):
        if campaign_path_problem(value):
            continue
        target = os.path.realpath(os.path.join(root, value))
        if not inside(target, root) or os.path.lexists(target):
            continue
        found.append(Found(
            loc, f"cannot read {value!r}: there is no such file in the campaign file's "
            f"directory ({base_dir})" + _nearby(value, root),
            "check the spelling; paths are relative to the campaign file"))
    return found


def _nearby(value: str, root: str) -> str:
    """"; did you mean 'tests/test_solution.py'?" for a file next to where ``value`` points."""
    folder, name = os.path.split(value)
    where = os.path.realpath(os.path.join(root, folder))
    if not inside(where, root) or not os.path.isdir(where):
        return ""
    try:
        names = [n for n in os.listdir(where) if os.path.isfile(os.path.join(where, n))]
    except OSError:
        return ""
    guess = close_match(name, names)
    return f"; did you mean {os.path.join(folder, guess)!r}?" if guess else ""


def destination_problems(data: Mapping[str, Any]) -> list[Found]:
    """Base URLs and allowed_destinations entries parse under the one destination rule."""
    found = []
    head = data.get("campaign")
    allowed = head.get("allowed_destinations") if isinstance(head, dict) else None
    for entry in allowed if isinstance(allowed, list) else []:
        if not isinstance(entry, str):
            continue
        try:
            canonical_entry(entry)
        except ValueError as exc:
            found.append(Found(("campaign", "allowed_destinations"), str(exc), _URL_FIX))
    for table in ("judges", "subject"):
        for loc, item in _entries(data, table):
            url = item.get("base_url")
            if not isinstance(url, str):
                continue
            try:
                normalise_url(url)
            except ValueError as exc:
                found.append(Found((*loc, "base_url"), f"base_url {exc}", _URL_FIX))
    return found
