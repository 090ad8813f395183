"""Artifacts from ``[[datasets]]`` files, a row at a time (docs/campaign-format.md, "Datasets").

Threat model: a dataset is campaign input like any file a campaign names, and may come
from a stranger with the campaign. It is opened only inside the campaign directory and
read a line at a time, no line longer than ``row_bytes`` (``read_lines`` in
campaign/_files.py); each JSON Lines row is parsed strictly (``canonical.loads_strict``:
duplicate keys, NaN, deep nesting refused) and every row is validated as an
``[[artifacts]]`` entry (``campaign/_rows.py``); the files a row names are read through
intake like an entry's, inside the directory and within ``[intake]``'s caps.

A dataset is never held whole. A run reads every dataset twice:

1. ``check_artifacts`` (the run's preflight, before anything is sent or written) intakes
   every artifact, inline and in every dataset: keys and types, ``truth`` labels, ids
   unique across the inline artifacts and all datasets, files, caps, pinned digests. It
   collects the problems (the first ``_LISTED`` named, the rest counted) and raises them
   together: the run exits 3 with nothing evaluated.
2. ``iter_artifacts`` reads them again for the run, yielding one artifact at a time.

``intake`` does both and holds every artifact in one list: for small campaigns and tests.

Between rows only the ids are held, each with where it was first seen (10^5 ids are a
few megabytes).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from jurat.campaign import (
    RowMap,
    RowValues,
    campaign_line,
    csv_header_problems,
    csv_row_values,
    read_lines,
    row_spec,
)
from jurat.canonical import StrictJSONError, loads_strict
from jurat.errors import CampaignError, CampaignErrors
from jurat.models import Artifact, ArtifactSpec, Campaign
from jurat.models._problems import Problem, dotted
from jurat.runner._intake import (
    _check_replay_files,
    check_destinations,
    intake_artifact,
    intake_spec,
)
from jurat.runner._job import job_identity
from jurat.runner._reference_evidence import reference_evidence
from jurat.runner._selection import Selection
from jurat.runner._upstream import artifact_upstream, stage_keys
from jurat.runner._work_claims import claims_identity

__all__ = ["Inventory", "check_artifacts", "intake", "iter_artifacts", "iter_placed", "row_bytes"]

#: Problems named one by one; the rest are counted.
_LISTED = 20
_MIB = 1024 * 1024
#: ``intake_spec``'s place for a row; its refusals are re-placed in the row's file and line.
_ROW = "row"


def row_bytes(campaign: Campaign) -> int:
    """The longest line a dataset may hold: room for a pair at the artifact cap, with JSON
    escapes (a control character is six bytes escaped), and the other keys."""
    return 4 * campaign.intake.max_artifact_bytes + _MIB


@dataclass(frozen=True)
class Inventory:
    """What the checking pass learnt about a campaign's artifacts, without keeping them."""

    count: int
    """Artifacts the run judges: every one in the campaign (inline and every dataset row),
    or those its ``Selection`` keeps (``--limit``, ``--only``)."""
    first: Artifact | None
    """The first of them (the engine's preflight reads the call kinds from one artifact)."""
    total: int = 0
    """Artifacts in the campaign, selected or not."""


@dataclass(frozen=True)
class _Row:
    """One dataset row that validated as an ``[[artifacts]]`` entry."""

    file: str
    """The dataset as messages name it (the campaign's directory joined with its path)."""
    line: int
    """The line the row starts on, from 1."""
    spec: ArtifactSpec
    """The entry it holds."""
    metadata: dict[str, str]
    """Its extra columns, when the dataset keeps them (``[[datasets]] extra``)."""


def _shown_file(campaign: Campaign, rel: str) -> str:
    folder = os.path.dirname(campaign.source) if campaign.source else ""
    return os.path.join(folder, rel) if folder else rel


def _problem(file: str, line: int | None, problem: Problem) -> CampaignError:
    return CampaignError(problem.message, file=file, line=line,
                         field=dotted(problem.loc) or None, fix=problem.fix)


def _rows(campaign: Campaign, index: int) -> Generator[_Row | CampaignError, None, None]:
    """Each row of dataset ``index``, or the problem it has, in file order.

    A problem that leaves the rest of the file unreadable (the file cannot be opened, a
    line too long, a CSV header that is wrong, a CSV row the parser cannot follow) is
    raised instead.
    """
    dataset = campaign.datasets[index]
    file = _shown_file(campaign, dataset.path)
    lines = read_lines(campaign, dataset.path, f"datasets[{index}].path",
                       max_line=row_bytes(campaign), file=file)
    policy = campaign.policy
    ids = [c.id for c in policy.criteria.items] if policy.criteria is not None else None
    rows = RowMap.of(dataset)
    values_of = (_jsonl(file, lines, row_bytes(campaign)) if dataset.format == "jsonl" else
                 _csv(file, lines, row_bytes(campaign), rows))
    try:
        for line, values in values_of:
            if isinstance(values, CampaignError):
                yield values
                continue
            spec = row_spec(values, kind=policy.kind, criterion_ids=ids, rows=rows)
            if isinstance(spec, RowValues):
                yield _Row(file, line, spec.spec, spec.metadata)
            else:
                yield from (_problem(file, line, p) for p in spec)
    finally:
        lines.close()


_Values = dict[str, object] | CampaignError


def _jsonl(file: str, lines: Iterator[tuple[int, bytes]], limit: int
           ) -> Iterator[tuple[int, _Values]]:
    """JSON Lines: one object per line; blank lines are skipped."""
    for line, raw in lines:
        if not raw.strip():
            continue
        try:
            value = loads_strict(raw, max_bytes=limit)
        except StrictJSONError as exc:
            yield line, CampaignError(
                f"the line is not one JSON object ({exc})", file=file, line=line,
                fix='write one object per line: {"id": "c1", "text": "…"}')
            continue
        if not isinstance(value, dict):
            yield line, CampaignError(
                f"the line holds a JSON {type(value).__name__}, not an object", file=file,
                line=line, fix='write one object per line: {"id": "c1", "text": "…"}')
            continue
        yield line, value


class _Lines:
    """Decoded lines for the CSV parser, remembering the number of the last one given."""

    def __init__(self, file: str, lines: Iterator[tuple[int, bytes]]) -> None:
        self.file = file
        self.lines = lines
        self.last = 0

    def __iter__(self) -> Iterator[str]:
        for line, raw in self.lines:
            self.last = line
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CampaignError("the line is not UTF-8 text", file=self.file, line=line,
                                    fix="save the file as UTF-8") from exc
            # A spreadsheet's UTF-8 export starts with a byte order mark.
            yield (text.removeprefix("\ufeff") if line == 1 else text) + "\n"


def _csv(file: str, lines: Iterator[tuple[int, bytes]], limit: int, rows: RowMap
         ) -> Iterator[tuple[int, _Values]]:
    """CSV (RFC 4180, as spreadsheets write it): a header row naming the keys, then one
    row per artifact; a quoted cell may span lines; blank lines are skipped."""
    # The csv module's cell limit is process-wide, 128 KiB by default: raise it to what a
    # line may hold (never lower it), so a cell is bounded by the line limit instead.
    csv.field_size_limit(max(csv.field_size_limit(), limit))
    source = _Lines(file, lines)
    reader = csv.reader(source, strict=True)
    header: list[str] | None = None
    start = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise CampaignError(f"cannot read the CSV row starting on this line: {exc}",
                                file=file, line=start,
                                fix="quote cells holding commas, quotes or line breaks "
                                    '("a ""quoted"" word")') from exc
        line, start = start, source.last + 1
        if not cells:
            continue
        if header is None:
            header = [name.strip() for name in cells]
            problems = csv_header_problems(header, rows)
            if problems:
                errors = [_problem(file, line, p) for p in problems]
                raise errors[0] if len(errors) == 1 else CampaignErrors(errors)
            continue
        values = csv_row_values(header, cells)
        yield line, (_problem(file, line, values) if isinstance(values, Problem) else
                     dict(values))


def _relocated(exc: CampaignError, row: _Row) -> CampaignError:
    """Intake's refusal of a row, named by the row's file and line instead of the campaign's."""
    field = exc.field
    if field is not None and field.startswith(_ROW):
        field = field[len(_ROW):].lstrip(".") or None
    return CampaignError(exc.message, file=row.file, line=row.line, field=field, fix=exc.fix)


def _test_name_problem(campaign: Campaign, spec: ArtifactSpec) -> Problem | None:
    """A row's own ``tests`` file has a name the checks can import (``Plan``, refused at
    load for ``[[artifacts]]`` entries by campaign/_load.py)."""
    python = campaign.policy.python
    if not spec.tests or python is None:
        return None
    # Only here: importing the checks costs every run's start-up a twentieth of a second.
    from jurat.checks._steps import _TEST_NAME

    name = PurePosixPath(spec.tests).name
    if _TEST_NAME.match(name) and name != f"{python.module}.py":
        return None
    return Problem(("tests",), f"file name {name!r} is not usable as a test module",
                   f"a module file name like test_{python.module}.py, different from "
                   f"{python.module}.py")


_SAME_CONTENT_FIX = (
    "keep one of them, or make them differ: a job is bound to the artifact's content and "
    "what it answers (its input, its task's [[tasks]] statement, its target), not its id "
    "(docs/receipt-format.md §6.10), so two ids with all of these alike would share a job "
    "and its one receipt; answers to different questions: give each row its input (the "
    "question) or declare the tasks with their statements"
)
#: The policy digest of the duplicate check's identities: they are compared within one
#: campaign, whose policy every job shares.
_ANY_POLICY = "0" * 64


class _Seen:
    """Every artifact id and content digest seen so far, with where each was first seen."""

    def __init__(self, campaign: Campaign) -> None:
        self.policy = campaign.policy
        self.ids: dict[str, str] = {}
        # Digests as bytes: half the memory of their hex, for 10^5 of them.
        self.contents: dict[bytes, str] = {}

    def id_problem(self, artifact_id: str, where: str) -> Problem | None:
        seen = self.ids.setdefault(artifact_id, where)
        if seen == where:
            return None
        return Problem(("id",), f"duplicate artifact id {artifact_id!r} (first at {seen})",
                       "give each artifact its own id, across [[artifacts]] and every dataset")

    def content_problem(self, artifact: Artifact) -> Problem | None:
        # The job's identity itself (runner/_job.py): the content, its task statement and
        # explanation, its given output's input, its target and submitted claims; so two
        # contributors' same code explained apart, or one answer to two questions, are two
        # jobs, and only a true duplicate is refused.
        job = claims_identity(job_identity(_ANY_POLICY, artifact, self.policy, 1), artifact)
        first = self.contents.setdefault(bytes.fromhex(job), artifact.id)
        if first == artifact.id:
            return None
        return Problem((), f"artifact {artifact.id!r} has the same content as {first!r} "
                       f"(at {self.ids[first]})", _SAME_CONTENT_FIX)


def check_artifacts(campaign: Campaign, *, cache: dict[str, str] | None = None,
                    selection: Selection | None = None) -> Inventory:
    """Intake every artifact of the campaign once, keeping none: the run's preflight.

    Destinations and replay files first, then each ``[[artifacts]]`` entry (a file that
    cannot be read raises, as intake does), then every row of every dataset, collecting
    problems: the first ``_LISTED`` are named, each with its file, line and field, and the
    rest counted. Ids are unique across the campaign, and so are contents (a job is bound
    to the content). Raises CampaignError or CampaignErrors (exit 3) before anything is
    sent or written. ``cache`` is intake's test-file cache, to share with
    ``iter_artifacts``. With a ``selection`` every artifact is still checked, and the
    inventory counts those it keeps; an ``--only`` id no artifact has is a ConfigError.
    """
    check_destinations(campaign.policy, campaign.source)
    _check_replay_files(campaign)
    # Pinned grounding references: read and digest-checked (url ones once captured).
    reference_evidence(campaign, captured=False)
    keys = stage_keys(campaign)
    cache = {} if cache is None else cache
    seen = _Seen(campaign)
    count, first = 0, None
    selection = selection or Selection()
    picker = selection.picker()
    problems: list[CampaignError] = []
    unlisted = 0

    def found(problem: CampaignError) -> None:
        nonlocal unlisted
        if len(problems) < _LISTED:
            problems.append(problem)
        else:
            unlisted += 1

    for index, spec in enumerate(campaign.artifacts):
        artifact = intake_artifact(campaign, index, cache=cache)
        where = f"artifacts[{index}]"
        seen.id_problem(spec.id, f"{campaign.source or 'the campaign'}, {where}")
        same = seen.content_problem(artifact)
        if same is not None:
            found(CampaignError(same.message, file=campaign.source, field=where,
                                line=campaign_line(campaign.source, where), fix=same.fix))
        try:
            artifact_upstream(campaign, keys, artifact, where)
        except CampaignError as exc:
            found(exc)
        picked = picker.pick(artifact.id)
        count, first = count + 1, first or (artifact if picked else None)
    for index in range(len(campaign.datasets)):
        for row in _rows(campaign, index):
            if isinstance(row, CampaignError):
                found(row)
                continue
            problem = seen.id_problem(row.spec.id, f"{row.file}:{row.line}") or (
                _test_name_problem(campaign, row.spec))
            if problem is not None:
                found(_problem(row.file, row.line, problem))
                continue
            try:
                artifact = intake_spec(campaign, row.spec, _ROW, cache=cache,
                                       metadata=row.metadata)
                artifact_upstream(campaign, keys, artifact, _ROW)
            except CampaignError as exc:
                found(_relocated(exc, row))
                continue
            same = seen.content_problem(artifact)
            if same is not None:
                found(_problem(row.file, row.line, same))
                continue
            picked = picker.pick(artifact.id)
            count, first = count + 1, first or (artifact if picked else None)
    if unlisted:
        problems.append(CampaignError(
            f"and {unlisted} more problems in the datasets", file=problems[-1].file,
            fix="fix the problems named above, then run again: every problem is named then"))
    if problems:
        raise problems[0] if len(problems) == 1 else CampaignErrors(problems)
    selection.refuse_unknown(seen.ids)
    return Inventory(count=picker.picked, first=first, total=count)


def iter_artifacts(campaign: Campaign, *, cache: dict[str, str] | None = None,
                   selection: Selection | None = None) -> Iterator[Artifact]:
    """Every artifact of the campaign, inline first, then each dataset's rows in order,
    intaken one at a time: what a run evaluates after ``check_artifacts`` passed (with a
    ``selection``, only those it keeps).

    A problem found now (a file changed since the check) raises CampaignError at that row.
    """
    for _, artifact in iter_placed(campaign, cache=cache, selection=selection):
        yield artifact


def iter_placed(campaign: Campaign, *, cache: dict[str, str] | None = None,
                shard: tuple[int, int] = (0, 1), selection: Selection | None = None
                ) -> Iterator[tuple[int, Artifact]]:
    """``iter_artifacts`` with each artifact's place in the campaign, only the places k
    modulo n for ``shard`` (k, n): one worker's part of a run (runner/_shards.py). Rows of
    the other parts are read (their ids are checked) but not intaken.

    With a ``selection``, only the artifacts it keeps, shared out by their rank among them
    (the k-th kept goes to worker k modulo n); reading stops once its limit is reached.
    """
    cache = {} if cache is None else cache
    picker = (selection or Selection()).picker()
    mine, parts = shard
    place = -1
    for index in range(len(campaign.artifacts)):
        place += 1
        if picker.full:
            return
        if picker.pick(campaign.artifacts[index].id) and (picker.picked - 1) % parts == mine:
            yield place, intake_artifact(campaign, index, cache=cache)
    ids = {spec.id for spec in campaign.artifacts}
    for index in range(len(campaign.datasets)):
        rows = _rows(campaign, index)
        try:
            for row in rows:
                if picker.full:
                    return
                if isinstance(row, CampaignError):
                    raise row
                if row.spec.id in ids:
                    raise _problem(row.file, row.line, Problem(
                        ("id",), f"duplicate artifact id {row.spec.id!r}",
                        "the dataset changed since it was checked; run again"))
                ids.add(row.spec.id)
                place += 1
                if not picker.pick(row.spec.id) or (picker.picked - 1) % parts != mine:
                    continue
                try:
                    artifact = intake_spec(campaign, row.spec, _ROW, cache=cache,
                                           metadata=row.metadata)
                except CampaignError as exc:
                    raise _relocated(exc, row) from exc
                yield place, artifact
        finally:
            rows.close()


def intake(campaign: Campaign) -> list[Artifact]:
    """Intake the whole campaign before anything is evaluated or sent, and return every
    artifact, ``[[datasets]]`` rows included, held in one list.

    For small campaigns and tests; a run checks everything first and then streams the
    artifacts instead (``check_artifacts``, ``iter_artifacts``).
    """
    cache: dict[str, str] = {}
    if not campaign.datasets:  # one pass: every artifact is held anyway
        check_destinations(campaign.policy, campaign.source)
        _check_replay_files(campaign)
        return [intake_artifact(campaign, i, cache=cache) for i in range(len(campaign.artifacts))]
    check_artifacts(campaign, cache=cache)
    return list(iter_artifacts(campaign, cache=cache))
