"""Load a campaign TOML file into records, reporting every problem in it at once.

Each problem names the file, the line, the field and the fix (docs/campaign-format.md,
"Errors"). One reading collects them all: the file's shape (unknown tables and keys, with
the closest known name), the paths and endpoints it names, the records' own validation
(pydantic's, translated into plain words by the one translator, ``models/_invalid.py``,
in the campaign file's words, ``campaign/_translate.py``), and the semantic checks
(weights, unique ids, tables a kind needs, ``truth`` labels) on every part that is valid on
its own, so that one wrong field does not hide another. One problem raises a
``CampaignError``; several raise ``CampaignErrors``, which lists them by line.
"""

from __future__ import annotations

import re
import tomllib
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import pydantic

from jurat.campaign._files import read_campaign
from jurat.campaign._paths import (
    destination_problems,
    missing_files,
    named_paths,
    path_problems,
)
from jurat.campaign._toml_lines import TomlLines
from jurat.campaign._translate import (
    CAMPAIGN_KEYS,
    TABLES,
    Found,
    home_of,
    keys_of,
    toml_loc,
    translate,
    unknown_key,
)
from jurat.errors import CampaignError, CampaignErrors
from jurat.models._campaign import Campaign, no_artifacts_problems, truth_problems
from jurat.models._checks import PythonChecks
from jurat.models._policy import (
    RISK_TIERS,
    Criterion,
    Kind,
    criteria_suite_problems,
    equivalence_problems,
    hard_gate_problems,
    policy_problems,
    rubric_problems,
)
from jurat.models._problems import Loc, Problem, close_match, dotted, duplicate_problems

__all__ = ["campaign_from_dict", "load_campaign"]

def load_campaign(path: str | Path, *, served: bool = False) -> Campaign:
    """Read and validate a campaign file; every problem in it is reported at once.

    ``served``: the campaign is served by `jurat serve`, which takes its artifacts over
    HTTP, so it may list none.

    Raises CampaignError (one problem) or CampaignErrors (several), each naming file, line,
    field and fix. The files the campaign names must exist inside its directory; they are
    read later, through ``campaign/_files.py``.
    """
    file = Path(path)
    text = read_campaign(file)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib says where as "(at line 3, column 7)": the line goes where every error
        # puts it, the column into the fix.
        at = re.search(r" \(at line (\d+), column (\d+)\)", str(exc))
        what = str(exc).replace(at.group(0), "") if at else str(exc)
        # The two tomllib messages that are about meaning rather than syntax, in words.
        if what == "Cannot overwrite a value":
            what = "a key is set twice (a key may appear once in a table)"
        declared = re.fullmatch(r"Cannot declare \((.*)\) twice", what)
        if declared:
            name = ".".join(re.findall(r"'([^']*)'", declared.group(1)))
            what = f"the table [{name}] is declared twice"
        line = int(at.group(1)) if at else None
        where = f" at line {at.group(1)}, column {at.group(2)}" if at else ""
        raise CampaignError(
            f"not valid TOML: {what}", file=str(file), line=line,
            fix=f"correct the TOML syntax{where}",
        ) from exc
    return campaign_from_dict(
        data, source=str(file), text=text, base_dir=str(file.resolve().parent),
        check_files=True, served=served,
    )


def campaign_from_dict(
    data: dict[str, Any],
    *,
    source: str = "<campaign>",
    text: str = "",
    base_dir: str = ".",
    check_files: bool = False,
    served: bool = False,
) -> Campaign:
    """Validate an already-parsed campaign mapping (the TOML's structure).

    ``text`` (the TOML text) gives the problems their lines; with ``check_files`` every file
    the campaign names must exist in ``base_dir``; ``served`` allows no artifacts
    (``load_campaign``).
    """
    lines = TomlLines(text)
    found = _shape(data, lines)
    found += _hard_gates(data)
    found += _python_checks(data)
    found += path_problems(data)
    found += destination_problems(data)
    if check_files:
        found += missing_files(data, base_dir)
    payload = {
        "policy": _policy_dict(data),
        "artifacts": data.get("artifacts", []),
        "datasets": data.get("datasets", []),
        "intake": data.get("intake", {}),
        "tasks": data.get("tasks", []),
        "upstream": data.get("upstream"),
        "monitor": data.get("monitor", {}),
        "budget": data.get("budget"),
        "gate": data.get("gate"),
        "source": source,
        "base_dir": base_dir,
        "tests_path": _tests_path(data),
    }
    campaign: Campaign | None = None
    try:
        campaign = Campaign.model_validate(payload, context={"served": served})
    except pydantic.ValidationError as exc:
        found += translate(exc, payload)
        # Validators of a record whose own fields failed did not run: run their checks on
        # whatever is valid on its own.
        found += _semantic(payload, served=served)
    if not isinstance(data.get("campaign"), dict):
        # Reported once as a missing table, not once per key it would have held.
        found = [f for f in found if f.loc[:1] != ("campaign",) or f.loc == ("campaign",)]
    if campaign is None and not found:  # never expected: every validation error is translated
        found = [Found((), "the campaign is not valid", "see docs/campaign-format.md")]
    if found or campaign is None:
        raise _error(found, source, lines)
    return campaign


# --- the file's shape: tables and keys -----------------------------------------------------


def _shape(data: dict[str, Any], lines: TomlLines) -> list[Found]:
    """Unknown tables, unknown ``[campaign]`` keys, ``[checks]`` other than python, risk tier
    names and ``[subject]``'s prompt. Unknown keys inside the other tables are the records'
    own (``extra_forbidden``, translated below)."""
    found: list[Found] = []
    for name in data:
        if name not in TABLES:
            found.append(_unknown_table(name, lines))
    head = data.get("campaign")
    if not isinstance(head, dict):
        found.append(Found(("campaign",), "the [campaign] table is missing",
                           'add [campaign] with id = "…" and kind = "rubric"'))
        head = {}
    for key in head:
        if key not in CAMPAIGN_KEYS:
            found.append(unknown_key(("campaign", key), "[campaign]"))
    tier = head.get("risk_tier")
    if isinstance(tier, str) and tier not in RISK_TIERS:
        guess = close_match(tier, RISK_TIERS)
        found.append(Found(
            ("campaign", "risk_tier"),
            f"unknown risk tier {tier!r}" + (f"; did you mean {guess!r}?" if guess else ""),
            f'risk_tier = "{guess}"' if guess else
            f"use one of {', '.join(RISK_TIERS)}, or {{ votes = 3, min_agreement = 0.67 }}",
        ))
    checks = data.get("checks")
    if checks is not None and not isinstance(checks, dict):
        found.append(Found(("checks",), "must be a table", "write [checks.python]"))
    for key, value in (checks or {}).items():
        if key == "python":
            continue
        if isinstance(value, dict):
            found.append(Found(
                ("checks", key), f"unknown table [checks.{key}]; did you mean [checks.python]?",
                "rename it to [checks.python], the one kind of checks there is"))
        else:
            found.append(Found(
                ("checks", key), f"{key!r} directly under [checks]",
                f"put it under a [checks.python] header: {keys_of('[checks.python]')}"))
    subject = data.get("subject")
    if isinstance(subject, dict) and "prompt" not in subject:
        found.append(Found(("subject",), "[subject] needs a prompt",
                           'add prompt = "… {input} …"'))
    elif subject is not None and not isinstance(subject, dict):
        found.append(Found(("subject",), "must be a table", "write [subject]"))
    return found


def _unknown_table(name: str, lines: TomlLines) -> Found:
    """A top-level name no table has: the table meant, written as the user wrote it."""
    written = lines.header((name,))
    guess = close_match(name, TABLES)
    known = ", ".join(f"[{t}]" for t in TABLES)
    if written is None:
        # A key written before any table header.
        home = home_of(name)
        if home:
            return Found((name,), f"unknown key {name!r} at the top of the file; it belongs "
                         f"in {home}", f"move it under the {home} header")
        return Found((name,), f"unknown key {name!r} at the top of the file",
                     f"remove it; the top level holds only the tables {known}")
    message = f"unknown table {written}"
    if guess is not None:
        # judges and artifacts are arrays of tables: [[judges]], whatever was written.
        inner = written.strip("[]").replace(name, guess, 1)
        arrays = ("judges", "artifacts", "datasets", "tasks")
        suggestion = f"[[{inner}]]" if guess in arrays else f"[{inner}]"
        return Found((name,), f"{message}; did you mean {suggestion}?",
                     f"rename it to {suggestion}")
    return Found((name,), message, f"use only the tables {known} (docs/campaign-format.md)")


def _hard_gates(data: Mapping[str, Any]) -> list[Found]:
    """``[rubric] hard_gates`` names gates jurat records (``hard_gate_problems``)."""
    rubric = data.get("rubric")
    gates = _typed(tuple[str, ...], rubric.get("hard_gates", ())) if isinstance(
        rubric, dict) else None
    if gates is None:
        return []
    return [Found(("rubric", *p.loc), p.message, p.fix) for p in hard_gate_problems(gates)]


def _python_checks(data: Mapping[str, Any]) -> list[Found]:
    """What the checks would refuse when they first run, refused at load instead: the import
    policy id, the Python version, ruff selectors, the module name and test file names.

    The rules are the checks' own (``Plan`` in checks/_steps.py, which raises ConfigError
    with the field and the fix); run here so that nothing is evaluated or written first.
    """
    checks = data.get("checks")
    raw = checks.get("python") if isinstance(checks, dict) else None
    config = _typed(PythonChecks, raw) if isinstance(raw, dict) else None
    if config is None:
        return []
    # Only for campaigns with checks: importing them costs start-up a twentieth of a second.
    from jurat.checks._policy import IMPORT_POLICIES
    from jurat.checks._steps import Plan
    from jurat.errors import ConfigError

    found: list[Found] = []
    here = ("checks", "python")
    if config.import_policy not in IMPORT_POLICIES:
        guess = close_match(config.import_policy, IMPORT_POLICIES)
        found.append(Found(
            (*here, "import_policy"), f"unknown import policy {config.import_policy!r}"
            + (f"; did you mean {guess!r}?" if guess else ""),
            f'import_policy = "{guess or next(iter(IMPORT_POLICIES))}" (docs/checks.md)'))
        config = config.model_copy(update={"import_policy": next(iter(IMPORT_POLICIES))})
    names = [(loc, PurePosixPath(value).name) for loc, value in named_paths(data)
             if loc[-1] == "tests"]
    defaults = PythonChecks()
    for loc, tests in [(here, None), *((loc, {name: ""}) for loc, name in names)]:
        # Plan stops at the first problem: set that key back to its default and ask again,
        # so every problem is named (a few keys, so a few rounds at most).
        for _ in PythonChecks.model_fields:
            try:
                Plan("", tests, config)
                break
            except ConfigError as exc:
                said = re.fullmatch(r"(?:([\w.]+): )?(.*?)(?: \(fix: (.*)\))?", str(exc),
                                    re.S)
                field, message, fix = said.groups() if said else (None, str(exc), None)
                # "tests: …" is about a file name, which the tests key that named it holds.
                key = field.rsplit(".", 1)[-1] if field and field != "tests" else None
                found.append(Found((*here, key) if key in PythonChecks.model_fields else loc,
                                   message, fix or "see docs/campaign-format.md"))
                if key not in PythonChecks.model_fields:
                    break
                config = config.model_copy(update={key: getattr(defaults, key)})
    return found


# --- the records ---------------------------------------------------------------------------


def _policy_dict(data: Mapping[str, Any]) -> dict[str, Any]:
    """What ``Policy`` validates: ``[campaign]``'s known keys and the policy's tables."""
    head = data.get("campaign")
    head = head if isinstance(head, dict) else {}
    policy = {key: value for key, value in head.items() if key in CAMPAIGN_KEYS}
    tier = head.get("risk_tier")
    if isinstance(tier, str):
        if tier in RISK_TIERS:
            policy["risk_tier"] = RISK_TIERS[tier]
        else:
            del policy["risk_tier"]  # reported by _shape
    for table in ("rubric", "criteria", "equivalence", "grounding"):
        if table in data:
            policy[table] = data[table]
    checks = data.get("checks")
    if isinstance(checks, dict) and "python" in checks:
        policy["python"] = _pinned_python(checks["python"])
    policy["judges"] = data.get("judges", [])
    subject = data.get("subject")
    if isinstance(subject, dict) and "prompt" in subject:
        rest = dict(subject)
        policy["subject_prompt"] = rest.pop("prompt")
        policy["subject"] = {"id": "subject", "samples": 1, **rest}
    return policy


def _tests_path(data: Mapping[str, Any]) -> str | None:
    checks = data.get("checks")
    python = checks.get("python") if isinstance(checks, dict) else None
    tests = python.get("tests") if isinstance(python, dict) else None
    return tests if isinstance(tests, str) else None


def _pinned_python(python: Any) -> Any:
    """``[checks.python]`` as the policy pins it: the tests file by the digest of its path.

    The policy is signed into every receipt and published on the board, and the hidden
    tests' file name is reference material (``test_last_case_is_15.py``); the operator's
    ``Campaign.tests_path`` keeps the path itself (docs/checks.md, "What crosses into a
    trusted output").
    """
    tests = python.get("tests") if isinstance(python, dict) else None
    if not isinstance(tests, str):
        return python
    from jurat.canonical import sha256_digest

    return {**python, "tests": f"sha256:{sha256_digest(tests)}"}


# --- semantic checks on whatever validates on its own --------------------------------------


_Truth = str | dict[str, str] | None
#: One adapter per type: building one costs far more than using it, and a campaign may
#: hold 10^5 artifacts.
_ADAPTERS: dict[Any, pydantic.TypeAdapter[Any]] = {}


def _typed(kind: Any, value: Any) -> Any:
    """``value`` validated as ``kind``, or None if it is not valid on its own."""
    adapter = _ADAPTERS.get(kind)
    if adapter is None:
        adapter = _ADAPTERS[kind] = pydantic.TypeAdapter(kind)
    try:
        return adapter.validate_python(value)
    except pydantic.ValidationError:
        return None


def _semantic(payload: Mapping[str, Any], *, served: bool = False) -> list[Found]:
    """The records' semantic checks, run on each part that validates on its own.

    A record's validator runs only when all of its fields are valid, and ``Campaign``'s
    only when everything is; these are the same check functions, so a problem they report
    twice has the same place and words and is reported once (``_error``).
    """
    policy = payload["policy"]
    found: list[Found] = []

    def add(base: Loc, problems: Iterable[Problem]) -> None:
        found.extend(Found(toml_loc((*base, *p.loc)), p.message, p.fix) for p in problems)

    rubric = policy.get("rubric")
    if isinstance(rubric, dict):
        criteria = _typed(tuple[Criterion, ...], rubric.get("criteria"))
        if criteria:
            add(("policy", "rubric"), rubric_problems(criteria))
    suite = policy.get("criteria")
    items = _typed(tuple[Criterion, ...], suite.get("items")) if isinstance(suite, dict) else None
    if items is not None:
        add(("policy", "criteria"), criteria_suite_problems(items))
    equivalence = policy.get("equivalence")
    if isinstance(equivalence, dict):
        votes = _typed(int, equivalence.get("votes", 1))
        least = _typed(int, equivalence.get("min_agreement", 1))
        if votes is not None and least is not None:
            add(("policy", "equivalence"), equivalence_problems(votes, least))
    kind = policy.get("kind") if policy.get("kind") in typing.get_args(Kind) else None
    judges = policy.get("judges")
    if kind is not None and isinstance(judges, list):
        # A table that is present but malformed is reported as such, not as missing.
        add(("policy",), policy_problems(
            kind, has_rubric="rubric" in policy, has_criteria="criteria" in policy,
            judge_ids=_ids(judges)))
    artifacts, datasets = payload["artifacts"], payload["datasets"]
    if artifacts == [] and datasets == [] and not served:
        add((), no_artifacts_problems(0, 0))
    if isinstance(artifacts, list):
        add((), duplicate_problems(_ids(artifacts), "artifacts", "artifact"))
        if kind is not None:
            truths = [_typed(_Truth, a.get("truth")) if isinstance(a, dict) else None
                      for a in artifacts]
            ids = [c.id for c in items] if items is not None else None
            add((), truth_problems(kind, ids, truths))
    return found


def _ids(entries: list[Any]) -> list[str]:
    """Each entry's id, and for one without a valid id a placeholder no id can equal."""
    return [e["id"] if isinstance(e, dict) and isinstance(e.get("id"), str) else f"\0{i}"
            for i, e in enumerate(entries)]


# --- the error ----------------------------------------------------------------------------


def _error(found: list[Found], source: str, lines: TomlLines) -> CampaignError:
    """One CampaignError per distinct problem, in line order; several as CampaignErrors."""
    seen: set[tuple[str, str]] = set()
    errors: list[CampaignError] = []
    for item in found:
        field = dotted(item.loc) or None
        if (field or "", item.message) in seen:
            continue
        seen.add((field or "", item.message))
        errors.append(CampaignError(item.message, file=source, field=field,
                                    line=lines.line(item.loc), fix=item.fix))
    errors.sort(key=lambda e: (e.line is None, e.line or 0, e.field or ""))
    return errors[0] if len(errors) == 1 else CampaignErrors(errors)
