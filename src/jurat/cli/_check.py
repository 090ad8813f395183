"""``jurat check CANDIDATE.py [--tests TESTS.py] [--limits ...] [--campaign FILE [--task ID]]
[--json]``.

The deterministic checks alone (``jurat.checks.run_checks``). Exit 0 every required gate
passed, 2 a required gate did not pass, 3 bad input (nothing was run).

Which gates are required:

- with ``--campaign FILE``, the campaign's ``rubric.hard_gates``, and the checks run with
  its ``[checks.python]`` (tests, module, limits, import policy, lint rules), the candidate
  read as ``jurat run`` reads an artifact (``runner.intake_artifact``: the artifact whose
  ``path`` it is, with that artifact's own tests, else as an inline artifact): ``check``
  and ``run`` then decide the gates alike on the same file. A campaign ``jurat serve``
  serves (no ``[[artifacts]]``: its artifacts come over HTTP) is read as the service reads
  it, and the candidate as a submission: inline, for the task ``--task`` names;
- without it, ``python.parse``, and ``tests.pass`` when ``--tests`` is given: the others
  are evidence, reported and never a veto. The output says which applied.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pydantic
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jurat.campaign import load_campaign
from jurat.canonical import sha256_digest
from jurat.checks import CheckReport, run_checks
from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.errors import CampaignError, CampaignErrors, ConfigError
from jurat.explain import record_lines
from jurat.models import (
    DEFAULT_HARD_GATES,
    GATE_PYTHON_PARSE,
    Artifact,
    ArtifactSpec,
    Campaign,
    Frozen,
    Limits,
    PythonChecks,
)
from jurat.models._invalid import invalid
from jurat.models._problems import close_match

__all__ = ["check_command", "parse_limits"]

_INT_LIMITS = {name for name, f in Limits.model_fields.items() if f.annotation in (int, "int")}
_STYLE = {"pass": "green", "fail": "red", "error": "magenta", "skip": "yellow"}


def parse_limits(text: str) -> Limits:
    """``"wall_s=5,memory_mb=256"`` -> Limits; ConfigError naming the field and the fix."""
    known = ", ".join(Limits.model_fields)
    values: dict[str, int | float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, raw = part.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key:
            raise ConfigError(f"--limits: {part!r} is not key=value (fix: e.g. wall_s=5,procs=16)")
        if key not in Limits.model_fields:
            raise ConfigError(f"--limits: unknown limit `{key}` (fix: use one of {known})")
        try:
            values[key] = int(raw) if key in _INT_LIMITS else float(raw)
        except ValueError:
            kind = "an integer" if key in _INT_LIMITS else "a number"
            raise ConfigError(
                f"--limits: `{key}` must be {kind}, got {raw!r} (fix: e.g. {key}=10)"
            ) from None
    try:
        return Limits.model_validate(values)
    except pydantic.ValidationError as exc:
        raise invalid(exc, Limits, values, ConfigError, source="--limits") from exc


def _read_text(path: Path, what: str) -> tuple[str, bytes]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{what}: cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what}: {path} is not UTF-8 text ({exc.reason})") from exc


def _read_tests(path: Path) -> dict[str, str]:
    files = sorted(path.glob("*.py")) if path.is_dir() else [path]
    if not files:
        raise ConfigError(f"--tests: {path} holds no .py files (fix: point at a test file)")
    return {f.name: _read_text(f, "--tests")[0] for f in files}


def _module_for(candidate: Path, tests: dict[str, str] | None) -> str:
    """``solution``, unless the tests import the candidate by its own file name."""
    stem = candidate.stem
    if not tests or not stem.isidentifier() or stem == "solution":
        return "solution"
    pattern = re.compile(rf"^\s*(from|import)\s+{re.escape(stem)}\b", re.MULTILINE)
    imports_stem = any(pattern.search(text) for text in tests.values())
    imports_solution = any(
        re.search(r"^\s*(from|import)\s+solution\b", text, re.MULTILINE) for text in tests.values()
    )
    return stem if imports_stem and not imports_solution else "solution"


class _Plan(Frozen):
    """What ``check`` runs: the candidate, how it is checked, and which gates are required."""

    source: str
    """The candidate's text."""
    sha256: str
    """Its digest (as intake pins it)."""
    tests: dict[str, str] | None
    """Test files by name, None without tests."""
    config: PythonChecks
    """The ``[checks.python]`` settings."""
    hard_gates: tuple[str, ...]
    """The required gates."""
    why: str
    """Where the required gates come from, for the output."""


def _standalone(candidate: Path, tests: Path | None, limits: str | None) -> _Plan:
    """Today's ``check``: ``python.parse`` required, and ``tests.pass`` with tests."""
    source, raw = _read_text(candidate, "CANDIDATE")
    test_files = _read_tests(Path(tests)) if tests is not None else None
    config = PythonChecks(
        limits=parse_limits(limits) if limits else Limits(),
        module=_module_for(candidate, test_files),
    )
    # Without tests there is no test gate to require.
    hard = DEFAULT_HARD_GATES if test_files else (GATE_PYTHON_PARSE,)
    why = ("without --campaign: python.parse" + (", tests.pass given --tests" if test_files
                                                  else "") +
           "; the others are evidence, reported, never a veto here; --campaign FILE requires "
           "what `jurat run` requires")
    return _Plan(source=source, sha256=sha256_digest(raw), tests=test_files, config=config,
                 hard_gates=tuple(hard), why=why)


def _load(path: Path) -> Campaign:
    """The campaign as `jurat run` loads it; one that lists no artifacts is a campaign
    `jurat serve` takes its artifacts for over HTTP, loaded as the service loads it."""
    try:
        return load_campaign(path)
    except CampaignError as exc:
        # "The campaign has no artifacts" is the one problem the served reading does not
        # have; it reports every other one the first reading found, without that one.
        problems = exc.problems if isinstance(exc, CampaignErrors) else (exc,)
        if not any(problem.field == "artifacts" for problem in problems):
            raise
    return load_campaign(path, served=True)


def _task(campaign: Campaign, task: str | None) -> str | None:
    """The task the candidate answers: ``--task``, checked against ``[[tasks]]``, or the
    campaign's one task; ConfigError naming the ids when it cannot be chosen."""
    ids = [t.id for t in campaign.tasks if t.id is not None]
    if task is None:
        if len(campaign.tasks) > 1:
            raise ConfigError(
                f"the campaign has {len(campaign.tasks)} tasks, and a candidate answers one "
                f"of them (fix: add --task ID, one of {', '.join(ids)})")
        return None  # none, or the one task, which intake gives an artifact naming none
    if not campaign.tasks:
        raise ConfigError(f"--task {task!r}: the campaign declares no [[tasks]] (fix: drop "
                          "--task)")
    if task not in ids:
        guess = close_match(task, ids)
        raise ConfigError(f"--task {task!r} is not one of the campaign's tasks"
                          + (f"; did you mean {guess!r}?" if guess else "")
                          + f" (fix: one of {', '.join(ids)})")
    return task


def _as_artifact(campaign: Campaign, candidate: Path, task: str | None = None
                 ) -> tuple[Artifact, str]:
    """The candidate as ``jurat run`` reads it: the campaign artifact whose ``path`` it is
    (its own ``tests`` included), else an inline artifact with ``[checks.python] tests``,
    answering ``task`` (``--task``) as a submission to `jurat serve` names it. Both go
    through intake: paths inside the campaign directory, size caps, the task's statement.
    """
    from jurat.runner import intake_artifact

    base = Path(campaign.source or ".").resolve().parent
    target = candidate.resolve()
    for index, spec in enumerate(campaign.artifacts):
        if spec.path is not None and (base / spec.path).resolve() == target:
            one = campaign.tasks[0].id if len(campaign.tasks) == 1 else None
            if task is not None and (spec.task or one) != task:
                raise ConfigError(
                    f"--task {task!r}: {candidate} is the campaign's artifact {spec.id!r}, "
                    f"which answers {spec.task!r} (fix: drop --task, or check a copy of the "
                    "file outside the campaign's artifacts)")
            return intake_artifact(campaign, index), f"as its artifact {spec.id!r}"
    chosen = _task(campaign, task)
    source, _ = _read_text(candidate, "CANDIDATE")
    # The task's own hidden tests, limits and objects ([[tasks]] tests, limits, objects)
    # come from intake, as for a run's artifact: `artifact.tests` and `artifact.checks`.
    inline = ArtifactSpec(id="candidate", text=source, media_type="text/x-python",
                          task=chosen)
    alone = campaign.model_copy(update={"artifacts": (inline,), "datasets": ()})
    how = ("as a submission (the campaign lists no artifacts)" if not campaign.artifacts
           and not campaign.datasets else "as an inline artifact (not one of its artifacts)")
    return intake_artifact(alone, 0), how + (f", for task {chosen!r}" if chosen else "")


def _with_campaign(candidate: Path, campaign_path: Path, task: str | None = None) -> _Plan:
    """``check --campaign [--task ID]``: the campaign's ``[checks.python]`` and hard gates."""
    campaign = _load(campaign_path)
    python = campaign.policy.python
    if python is None:
        raise ConfigError(
            f"{campaign_path}: the campaign has no [checks.python] table, so `jurat run` runs "
            "no deterministic checks on its artifacts (fix: add [checks.python], or check "
            "without --campaign)")
    artifact, how = _as_artifact(campaign, candidate, task)
    if artifact.media_type != "text/x-python":
        raise ConfigError(
            f"{candidate}: `jurat run` reads it {how} with media type {artifact.media_type}, "
            "and runs the Python checks only on text/x-python (fix: a .py file, or "
            'media_type = "text/x-python" on the artifact)')
    hard = campaign.policy.hard_gates
    why = (f"rubric.hard_gates of {campaign_path}, as `jurat run` requires them; "
           f"the candidate read {how}; the others are evidence") if hard else (
        f"none: {campaign_path} names no rubric.hard_gates, so `jurat run` vetoes on no gate")
    # The config runner/_job.py's deterministic_checks runs a run's artifact under.
    return _Plan(source=artifact.text, sha256=artifact.sha256, tests=artifact.tests or None,
                 config=artifact.checks or python, hard_gates=tuple(hard), why=why)


def check_command(
    candidate: Path, tests: Path | None, limits: str | None, as_json: bool,
    *, campaign: Path | None = None, show_hidden: bool = False, task: str | None = None,
) -> ExitCode:
    """``jurat check``: print a table or the JSON document; return the exit status.

    What the tests' run measured and quoted (which tests failed and how, their names and
    assertion lines, the candidate's output) is printed for tests given on the command line,
    which are the caller's own; a campaign's tests are hidden tests, and their detail is
    printed only with ``show_hidden`` (``--show-hidden``): a CI log is public.
    """
    try:
        if campaign is None and task is not None:
            raise ConfigError("--task picks one of a campaign's [[tasks]] (fix: add "
                              "--campaign FILE, or drop --task)")
        if campaign is None:
            plan = _standalone(Path(candidate), tests, limits)
        elif tests is not None or limits is not None:
            given = " and ".join(o for o, v in (("--tests", tests), ("--limits", limits)) if v)
            raise ConfigError(
                f"{given} with --campaign: the campaign's [checks.python] names the tests and "
                f"limits `jurat run` uses (fix: drop {given}, or drop --campaign)")
        else:
            plan = _with_campaign(Path(candidate), Path(campaign), task)
        # The arguments runner/_job.py's deterministic_checks passes for a run's artifact.
        report = run_checks(
            plan.source, tests=plan.tests, config=plan.config, hard_gates=plan.hard_gates,
            artifact_sha256=plan.sha256,
        )
    except ConfigError as exc:  # bad input, or a missing sandbox tool: nothing was run
        return print_error(exc, code=ExitCode.INPUT)
    operator = campaign is None or show_hidden
    if as_json:
        print(json.dumps(report.to_json(operator=operator), indent=2, ensure_ascii=False))
    else:
        _print_table(report, Path(candidate), plan.why, operator=operator)
    return ExitCode.OK if report.ok else ExitCode.REJECT


def _print_table(report: CheckReport, candidate: Path, why: str, *, operator: bool) -> None:
    console = Console(emoji=False, highlight=False)
    table = Table(title=f"jurat check {shown(candidate)}")
    for column in ("gate", "outcome", "required", "tool", "detail", "evidence"):
        table.add_column(column)
    for gate in report.gates:
        style = _STYLE[gate.outcome]
        table.add_row(
            gate.id,
            f"[{style}]{gate.outcome}[/{style}]",
            "yes" if gate.required else "",
            f"{gate.tool} {gate.tool_version}".strip(),
            escape(gate.detail),
            "" if gate.evidence_index is None else f"#{gate.evidence_index}",
        )
    console.print(table)
    for gate in report.gates:
        if gate.outcome in ("fail", "error") and gate.evidence_index is not None:
            item = report.evidence[gate.evidence_index - 1]
            console.print(f"[bold]{gate.id}[/bold] evidence #{gate.evidence_index}:")
            console.print(item.excerpt[:1200], markup=False)
        elif gate.outcome == "error":
            message = escape(str(gate.data.get("message", gate.detail)))
            console.print(f"[bold]{gate.id}[/bold]: {message}")
    if operator:
        if report.record is not None:
            for line in record_lines(report.record.record):
                console.print(line, markup=False, soft_wrap=True)
        for block in report.reference_detail:
            console.print(block.for_operator(), markup=False)
    elif report.record is not None or report.reference_detail:
        console.print("hidden-test detail withheld (which tests failed and how, their names "
                      "and assertion lines): this output may be a public CI log; add "
                      "--show-hidden on the operator's own terminal to print it",
                      markup=False, soft_wrap=True)
    required = [gate.id for gate in report.gates if gate.required]
    # A required gate these checks do not record can never pass: it is listed too.
    required += [g for g in report.required_failed if g not in required]
    # Not wrapped: the campaign's path in it is for copying.
    console.print(f"required gates: {', '.join(required) or 'none'} ({escape(why)})",
                  soft_wrap=True)
    if report.ok:
        console.print("[green]every required gate passed[/green]")
    else:
        console.print(f"[red]required gates not passed: {', '.join(report.required_failed)}[/red]")
