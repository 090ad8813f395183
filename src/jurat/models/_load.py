"""Load a campaign TOML file into records, with errors that name file, field, line and fix."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pydantic

from jurat.errors import CampaignError
from jurat.models._base import Frozen
from jurat.models._campaign import Campaign
from jurat.models._policy import RISK_TIERS, Policy

#: The largest campaign file read. Inline artifacts live in it, each capped by
#: ``[intake] max_artifact_bytes``; bigger inputs belong in files next to it.
MAX_CAMPAIGN_BYTES = 64 * 1024 * 1024

_CAMPAIGN_KEYS = (
    "id",
    "kind",
    "risk_tier",
    "allowed_destinations",
    "task_version",
    "min_valid_fraction",
)
_TABLES = {"rubric": "rubric", "criteria": "criteria", "equivalence": "equivalence"}
_TOP_LEVEL = {
    "campaign", "rubric", "criteria", "equivalence", "checks", "judges", "artifacts", "subject",
    "intake",
}
#: Keys that name files, per table; each must stay inside the campaign's directory.
_PATH_KEYS = {
    "artifacts": ("path", "a_path", "b_path", "tests"),
    "judges": ("replay_file",),
}
_PATH_FIX = (
    "give a path relative to the campaign file, without '..', to a file inside its "
    "directory; copy the file in if it lives elsewhere"
)
_URL_FIX = (
    "give an http(s) base URL such as http://127.0.0.1:8000/v1 (no user@, query, fragment "
    "or '..'); see docs/campaign-format.md"
)


def load_campaign(path: str | Path) -> Campaign:
    """Read and validate a campaign file. Raises CampaignError naming the field and line."""
    file = Path(path)
    try:
        with file.open("rb") as handle:
            raw = handle.read(MAX_CAMPAIGN_BYTES + 1)
    except OSError as exc:
        raise CampaignError(
            f"cannot read campaign file: {exc.strerror}",
            file=str(file),
            fix="check the path",
        ) from exc
    if len(raw) > MAX_CAMPAIGN_BYTES:
        raise CampaignError(
            f"the campaign file is larger than {MAX_CAMPAIGN_BYTES} bytes",
            file=str(file),
            fix="move large artifacts into files next to it (path = …) or split the campaign",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CampaignError(
            "the campaign file is not UTF-8 text", file=str(file), fix="save it as UTF-8"
        ) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        raise CampaignError(
            f"not valid TOML: {exc}", file=str(file), line=line, fix="correct the TOML syntax"
        ) from exc
    return campaign_from_dict(
        data, source=str(file), text=text, base_dir=str(file.resolve().parent)
    )


def campaign_from_dict(
    data: dict[str, Any], *, source: str = "<campaign>", text: str = "", base_dir: str = "."
) -> Campaign:
    """Validate an already-parsed campaign mapping (the TOML's structure)."""
    unknown = sorted(set(data) - _TOP_LEVEL)
    if unknown:
        raise CampaignError(
            f"unknown table(s) {unknown}",
            file=source,
            field=unknown[0],
            line=_find_line(text, (unknown[0],)),
            fix=f"use only {sorted(_TOP_LEVEL)}",
        )
    head = data.get("campaign")
    if not isinstance(head, dict):
        raise CampaignError(
            "missing [campaign] table",
            file=source,
            field="campaign",
            fix='add [campaign] with id = "…" and kind = "rubric"',
        )
    policy_dict: dict[str, Any] = {}
    extra = sorted(set(head) - set(_CAMPAIGN_KEYS))
    if extra:
        raise CampaignError(
            f"unknown key {extra[0]!r}",
            file=source,
            field=f"campaign.{extra[0]}",
            line=_find_line(text, ("campaign", extra[0])),
            fix=f"remove it or check the spelling; [campaign] takes {list(_CAMPAIGN_KEYS)}",
        )
    policy_dict.update(head)
    tier = head.get("risk_tier", "standard")
    if isinstance(tier, str):
        if tier not in RISK_TIERS:
            raise CampaignError(
                f"unknown risk tier {tier!r}",
                file=source,
                field="campaign.risk_tier",
                line=_find_line(text, ("campaign", "risk_tier")),
                fix=f"use one of {sorted(RISK_TIERS)} or {{ votes = 1, min_agreement = 1.0 }}",
            )
        policy_dict["risk_tier"] = RISK_TIERS[tier]
    for table, field in _TABLES.items():
        if table in data:
            policy_dict[field] = data[table]
    checks = data.get("checks", {})
    if checks:
        if set(checks) - {"python"}:
            raise CampaignError(
                "only [checks.python] is supported",
                file=source,
                field="checks",
                line=_find_line(text, ("checks",)),
                fix="rename the table to [checks.python]",
            )
        policy_dict["python"] = checks["python"]
    policy_dict["judges"] = data.get("judges", [])
    _check_paths(data, source, text)
    _check_destinations(data, source, text)
    subject = data.get("subject")
    if subject is not None:
        if not isinstance(subject, dict) or "prompt" not in subject:
            raise CampaignError("[subject] needs a prompt", file=source, field="subject.prompt",
                                line=_find_line(text, ("subject",)),
                                fix='add prompt = "… {input} …"')
        subject = dict(subject)
        policy_dict["subject_prompt"] = subject.pop("prompt")
        policy_dict["subject"] = {"id": "subject", "samples": 1, **subject}
    try:
        policy = Policy.model_validate(policy_dict)
        return Campaign(
            policy=policy, artifacts=data.get("artifacts", []), source=source, base_dir=base_dir,
            intake=data.get("intake", {}),
        )
    except pydantic.ValidationError as exc:
        raise _campaign_error(exc, source, text) from exc


def campaign_path_problem(value: str) -> str | None:
    """Why ``value`` cannot be a campaign path, judged from its text alone; None if it can.

    Absolute paths and ``..`` components are refused outright, not resolved and compared:
    a path that names its way out and back in is still a path a stranger wrote to probe.
    Symlinks are judged when the file is opened (runner/_intake.py).
    """
    if not value:
        return "is empty"
    if "\x00" in value:
        return "contains a NUL byte"
    pure = PurePosixPath(value)
    if pure.is_absolute():
        return "is absolute"
    if ".." in pure.parts:
        return "has a '..' component"
    return None


def _entries(data: dict[str, Any], table: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    value = data.get(table)
    if isinstance(value, dict):
        return [((table,), value)]
    if isinstance(value, list):
        return [((table, i), item) for i, item in enumerate(value) if isinstance(item, dict)]
    return []


def _check_paths(data: dict[str, Any], source: str, text: str) -> None:
    """Every path the campaign names is relative and free of ``..`` (docs/campaign-format.md)."""
    named: list[tuple[tuple[Any, ...], Any]] = []
    for table, keys in (*_PATH_KEYS.items(), ("subject", ("replay_file",))):
        for loc, entry in _entries(data, table):
            named.extend(((*loc, key), entry[key]) for key in keys if key in entry)
    python = data.get("checks", {}).get("python") if isinstance(data.get("checks"), dict) else None
    if isinstance(python, dict) and "tests" in python:
        named.append((("checks.python", "tests"), python["tests"]))
    for loc, value in named:
        problem = campaign_path_problem(value) if isinstance(value, str) else None
        if problem:
            raise CampaignError(
                f"{value!r} {problem}; campaign paths stay inside the campaign file's directory",
                file=source, field=_dotted(loc), line=_find_line(text, loc), fix=_PATH_FIX,
            )


def _check_destinations(data: dict[str, Any], source: str, text: str) -> None:
    """Base URLs and allowed_destinations entries parse under the one destination rule."""
    from jurat.judges._destinations import canonical_entry, normalise_url

    allowed = data["campaign"].get("allowed_destinations")
    names = [e for e in allowed if isinstance(e, str)] if isinstance(allowed, list) else []
    for name in names:
        try:
            canonical_entry(name)
        except ValueError as exc:
            raise CampaignError(
                str(exc), file=source, field="campaign.allowed_destinations",
                line=_find_line(text, ("campaign", "allowed_destinations")), fix=_URL_FIX,
            ) from exc
    for table in ("judges", "subject"):
        for loc, entry in _entries(data, table):
            url = entry.get("base_url")
            if not isinstance(url, str):
                continue
            try:
                normalise_url(url)
            except ValueError as exc:
                raise CampaignError(
                    f"base_url {exc}", file=source, field=_dotted((*loc, "base_url")),
                    line=_find_line(text, (*loc, "base_url")), fix=_URL_FIX,
                ) from exc


_SECTION_OF = {
    "rubric": "rubric",
    "criteria": "criteria",
    "equivalence": "equivalence",
    "python": "checks.python",
    "judges": "judges",
    "artifacts": "artifacts",
    "intake": "intake",
}


def _campaign_error(exc: pydantic.ValidationError, source: str, text: str) -> CampaignError:
    err = exc.errors()[0]
    loc = tuple(p for p in err["loc"] if p != "policy")
    if loc and loc[0] in _SECTION_OF:
        toml_loc: tuple[Any, ...] = (_SECTION_OF[str(loc[0])], *loc[1:])
    elif loc:
        toml_loc = ("campaign", *loc)
    else:
        toml_loc = ("campaign",)
    kind = err["type"]
    msg = str(err["msg"]).removeprefix("Value error, ")
    # Model-level validators prefix their message with the field they are about.
    prefix = re.match(r"^([a-z_]+): ", msg)
    if prefix and kind == "value_error" and len(toml_loc) >= 1:
        sub = prefix.group(1)
        if toml_loc == ("campaign",) and sub in _SECTION_OF:
            toml_loc = (_SECTION_OF[sub],)
        elif toml_loc[0] in _SECTION_OF.values() and sub not in ("campaign",):
            toml_loc = (*toml_loc, sub)
        msg = msg[prefix.end():]
    field = _dotted(toml_loc)
    if kind == "missing":
        fix = f"add `{toml_loc[-1]} = …`"
        msg = "required field is missing"
    elif kind == "extra_forbidden":
        fix = "remove it or check the spelling"
        msg = f"unknown key {toml_loc[-1]!r}"
    elif "needs a [" in msg:
        fix = "add the table; docs/campaign-format.md lists its keys"
    elif "duplicate" in msg or "must be unique" in msg:
        fix = "give each entry its own id"
    else:
        fix = "see docs/campaign-format.md for the allowed values"
    more = len(exc.errors()) - 1
    if more:
        msg += f" (and {more} more problem{'s' if more > 1 else ''})"
    return CampaignError(msg, file=source, field=field, line=_find_line(text, toml_loc), fix=fix)


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _find_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line of a TOML location: the table header, then the key below it."""
    if not text or not loc:
        return None
    lines = text.splitlines()
    section = str(loc[0])
    rest = list(loc[1:])
    index = 0
    if section in ("judges", "artifacts") and rest and isinstance(rest[0], int):
        index = rest.pop(0)
    header = re.compile(r"^\s*\[\[?\s*" + re.escape(section) + r"\s*\]\]?\s*$")
    starts = [i for i, line in enumerate(lines) if header.match(line)]
    if not starts:
        return None
    start = starts[min(index, len(starts) - 1)]
    keys = [str(p) for p in rest if not isinstance(p, int)]
    line_no = start
    for key in keys[:1]:
        pattern = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
        for i in range(start + 1, len(lines)):
            if re.match(r"^\s*\[", lines[i]):
                break
            if pattern.match(lines[i]):
                line_no = i
                break
    # Entries of an inline-table array (criteria = [ {...}, {...} ]) sit one per line.
    positions = [p for p in rest if isinstance(p, int)]
    if positions and line_no != start:
        target = line_no + 1 + positions[0]
        if target < len(lines) and "{" in lines[target]:
            line_no = target
    return line_no + 1


def policy_digest(policy: Frozen) -> str:
    """sha256 of the policy's canonical JSON: the digest pinned into jobs and receipts."""
    from jurat.canonical import digest_json

    return digest_json(policy)
