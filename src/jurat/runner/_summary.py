"""The summary of a run as data: what ``jurat run`` prints after its last job.

``cli/_summary.py`` prints it; everything here is computed from the jobs' results and the
policy, nothing is read again:

- one row per artifact: its decision, what the judges said (or that they were not asked),
  the required gates that did not pass, root cause first, and what this run spent on it;
- under it, its reasons: the evidence (jurat/explain.py), then what the judges did;
- one health row per judge: samples, drawn now or reused, errors by kind, valid share.
  A judge with samples and not one valid answer is ``dead`` (an endpoint down, a key
  refused), and the run's exit status says so (cli/_run.py);
- counts per outcome and per contributor, and judge calls drawn in this run vs reused.

A run gathers it in a ``RunTally`` as each job ends, so that the summary of 10^5
artifacts needs neither their votes nor 10^5 rows (``ROWS_KEPT``).

A vetoed artifact never shows the judges' score or agreement as if they had backed the
veto: either they were not asked (``judges_skipped``), or their reading is marked
overruled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, get_args

from rich.console import Console

from jurat.explain import Line, gate_lines, not_passed, root_causes
from jurat.fold import gate_veto
from jurat.judges import BiasCounts, BiasReading, combine
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_TESTS_PASS,
    Decision,
    Disposition,
    EquivalenceWord,
    Frozen,
    GateOutcome,
    Policy,
    Rollout,
    Tone,
    tone_of,
)
from jurat.runner._job import JobResult
from jurat.runner._results import ResultLog

__all__ = [
    "ROWS_KEPT",
    "ArtifactRow",
    "JudgeHealth",
    "RunTally",
    "artifact_row",
    "outcome_text",
    "tally",
    "wide_console",
]

#: The outcome words of each campaign kind, in the order the summary counts them.
_WORDS: dict[str, tuple[str, ...]] = {
    "rubric": get_args(Disposition),
    "pairwise": get_args(Disposition),
    "criteria": get_args(Rollout),
    "equivalence": get_args(EquivalenceWord),
}


def wide_console() -> Console:
    """Piped output (CI logs, files) gets a table wide enough to read, not 80 columns."""
    return Console() if Console().is_terminal else Console(width=140)


def outcome_text(d: Decision) -> str:
    """The decision word per kind (``Decision.outcome``), ``?`` when it is missing."""
    return d.outcome or "?"


class ArtifactRow(Frozen):
    """One artifact's line of the summary table and the reasons printed under it."""

    artifact: str
    """Artifact id."""
    outcome: str
    """The decision word."""
    tone: Tone
    """How the word reads (good, bad, hold)."""
    score: str
    """Q, the criteria pass fraction or the label; ``vetoed`` under a veto."""
    agreement: str
    """Independent votes agreeing; ``not asked`` when the judges were skipped."""
    samples: str
    """Valid over recorded samples; ``-`` when no judge was asked."""
    gates: str
    """Required gates that did not pass, root cause first, then those skipped."""
    cost: str
    """USD this run spent on the artifact (``unknown`` at an unknown price)."""
    review: str
    """Review version, and whether the receipt was reused."""
    reasons: tuple[Line, ...]
    """The evidence and the judges' part, root cause first; empty for a plain decision."""


class JudgeHealth(Frozen):
    """How one judge of the panel fared over the run's artifacts."""

    judge: str
    """Judge id."""
    provider: str
    """Its provider."""
    samples: int
    """Samples the decisions rest on: drawn in this run and reused."""
    drawn: int
    """Of them, drawn in this run."""
    valid: int
    """Samples with a validated answer."""
    errors: tuple[tuple[str, int], ...]
    """Errored samples by kind, most frequent first."""

    @property
    def dead(self) -> bool:
        """It had samples and not one valid answer: every vote of it is missing."""
        return self.samples > 0 and self.valid == 0

    def valid_text(self) -> str:
        """``valid/samples (percent)``, or ``-`` without samples."""
        if not self.samples:
            return "-"
        return f"{self.valid}/{self.samples} ({100 * self.valid / self.samples:.0f}%)"

    def errors_text(self) -> str:
        """``kind n, kind n``, or ``-``."""
        return ", ".join(f"{kind} {n}" for kind, n in self.errors) or "-"


def _vetoed(policy: Policy, result: JobResult) -> list[str]:
    """The required gates that ran and failed, when the fold vetoes on them."""
    if policy.kind == "equivalence":
        return []  # equivalence folds no veto (fold/_decide.py)
    return root_causes(policy.hard_gates, result.gates)


def _score(d: Decision) -> str:
    if d.q is not None:
        return f"Q {d.q:.4f}"
    if d.kind == "criteria" and d.criteria:
        passed = sum(1 for c in d.criteria if c.gate == "pass")
        return f"{passed}/{len(d.criteria)} pass"
    return d.label or "-"


def _agreement(d: Decision) -> str:
    if d.kind == "criteria" and d.criteria:
        low = min(d.criteria, key=lambda c: c.agreement)
        return f"min {low.agreement_votes}"
    return d.agreement_votes or "-"


def _gates(policy: Policy, result: JobResult) -> str:
    named: list[str] = []
    skipped: list[str] = []
    for gate_id, outcome in not_passed(policy.hard_gates, result.gates):
        if outcome == "skip":
            skipped.append(gate_id)
        else:
            named.append(gate_id if outcome == "fail" else f"{gate_id} ({outcome})")
    if skipped:
        named.append(f"skipped: {', '.join(skipped)}")
    return "; ".join(named) or "-"


def _reasons(policy: Policy, result: JobResult, vetoed: list[str]) -> list[Line]:
    d = result.decision
    by_id = {g.id: g for g in result.gates}
    lines: list[Line] = []
    for gate_id, outcome in not_passed(policy.hard_gates, result.gates):
        if outcome == "missing":
            lines.append(Line(text=f"{gate_id} has no outcome (required)"))
            continue
        lines += gate_lines(by_id[gate_id], result.reference_detail, _record(result))
        if result.reused and gate_id == GATE_TESTS_PASS and outcome == "fail":
            lines.append(Line(text="the tests did not run again for a reused receipt: "
                                   "`jurat check` shows the failing assertion", depth=1))
    if result.judges_skipped is not None:
        why = f"veto by {', '.join(vetoed)}" if vetoed and not result.votes else (
            result.judges_skipped)
        lines.append(Line(text=f"judges not asked: {why}"))
    elif vetoed:
        if d.label and d.agreement_votes:
            said = f"they said {d.label} ({d.agreement_votes})"
        elif not d.valid_samples:
            said = "none of their answers was valid"
        else:
            said = f"they said {_score(d)}"
        lines.append(Line(text=f"judges asked (judge_after_veto), overruled by the veto: {said}"))
    else:
        # The fold's own reasons, less the veto lines the evidence above replaces; beside a
        # gate that could not run, they are marked as the judges', not the cause.
        veto = gate_veto(policy.hard_gates, result.gates)
        mark = "judges: " if veto.failed else ""
        lines += [Line(text=mark + r) for r in d.reasons if r not in veto.reasons]
    required = {gate_id for gate_id, _ in not_passed(policy.hard_gates, result.gates)}
    for gate in result.gates:
        if gate.id not in required and _faulty(gate):
            evidence = gate_lines(gate, result.reference_detail, _record(result))
            head = evidence[0].model_copy(
                update={"text": evidence[0].text + " (not required: reported, no veto)"})
            lines += [head, *evidence[1:]]
    return lines


def _record(result: JobResult) -> dict[str, Any] | None:
    return result.record.record if result.record is not None else None


def _faulty(gate: GateOutcome) -> bool:
    """A gate that failed or could not run. Not the deterministic equivalence pass: its
    ``fail`` means the two answers differ, an outcome rather than a fault."""
    return gate.outcome in ("fail", "error") and gate.id != GATE_EQUIVALENCE_DETERMINISTIC


def _plain(result: JobResult) -> bool:
    """A decision that needs no reasons under it: good, or an equivalence settled."""
    d = result.decision
    if any(_faulty(g) for g in result.gates):
        return False
    if d.kind == "equivalence":
        return d.equivalent is not None
    return tone_of(d.outcome) == "good"


def artifact_row(policy: Policy, result: JobResult) -> ArtifactRow:
    """The summary line of one artifact's job, with its reasons."""
    d = result.decision
    vetoed = _vetoed(policy, result)
    asked = result.judges_skipped is None or bool(result.votes)
    score, agreement = _score(d), _agreement(d)
    if vetoed:
        score = "vetoed"
        agreement = "overruled" if asked else "not asked"
    elif not asked:
        agreement = "settled" if d.equivalence_settled else "not asked"
    samples = f"{d.valid_samples}/{d.samples}" if asked and d.samples else "-"
    usd = result.drawn_cost.total.usd
    return ArtifactRow(
        artifact=result.artifact.id,
        outcome=outcome_text(d),
        tone=tone_of(d.outcome),
        score=score,
        agreement=agreement,
        samples=samples,
        gates=_gates(policy, result),
        cost="unknown" if usd is None else f"${usd:.4f}",
        review=f"v{result.review_version}" + (" (reused)" if result.reused else ""),
        reasons=() if _plain(result) else tuple(_reasons(policy, result, vetoed)),
    )


#: Artifact rows a run's summary keeps: every row of a campaign up to this size; past it,
#: the rows with reasons first (what needs a look), the rest counted, not printed.
ROWS_KEPT = 200


class _Health:
    """One judge's running counts (``JudgeHealth`` once the run ends)."""

    def __init__(self) -> None:
        self.samples = 0
        self.drawn = 0
        self.valid = 0
        self.errors: Counter[str] = Counter()


class RunTally:
    """A run's summary, gathered as each job ends, keeping none of the jobs' votes.

    Counts (outcomes, contributors, judge calls, judge health, cost) cover every artifact;
    rows are kept for at most ``rows`` artifacts, those with reasons first, so a run of
    10^5 artifacts holds a few hundred rows, never 10^5 jobs' votes. ``add`` each
    ``JobResult`` as its job ends, in any order: rows come back in the campaign's order.
    """

    def __init__(self, policy: Policy, *, rows: int = ROWS_KEPT) -> None:
        self.policy = policy
        self.limit = rows
        self.artifacts = 0
        """Artifacts added."""
        self.first_receipt: str | None = None
        """The receipt of the first artifact in the campaign's order (for a `verify` hint)."""
        self._first_index: int | None = None
        self._explained: list[tuple[int, ArtifactRow]] = []
        self._plain: list[tuple[int, ArtifactRow]] = []
        self._health = {config.id: _Health() for config in policy.judges}
        self._outcomes: Counter[str] = Counter()
        self._contributors: dict[str, Counter[str]] = {}
        self._contributor_first: dict[str, int] = {}
        self._decisions: dict[str, Decision] = {}
        self.drawn_calls = 0
        """Judge calls drawn in this run."""
        self.reused_calls = 0
        """Judge calls reused from the ledger or a receipt (recorded before this run)."""
        self.drawn_cost = combine(())
        """What this run spent, summed over its jobs."""
        self.reused_cost = combine(())
        """What was recorded before this run and reused, summed over its jobs."""
        self.bias = BiasCounts()
        """The live bias monitor's counts over every vote (judges/_bias.py)."""
        self.results = ResultLog(policy)
        """Every artifact's entry for ``--json`` and ``--junit`` (runner/_results.py)."""

    def add(self, result: JobResult, index: int | None = None) -> None:
        """Count one job; ``index`` is its artifact's place in the campaign (default: the
        order added)."""
        index = self.artifacts if index is None else index
        self.artifacts += 1
        if self._first_index is None or index < self._first_index:
            self._first_index, self.first_receipt = index, result.receipt_path
        row = artifact_row(self.policy, result)
        if row.reasons and len(self._explained) < self.limit:
            self._explained.append((index, row))
        elif not row.reasons and len(self._plain) < self.limit:
            self._plain.append((index, row))
        word = outcome_text(result.decision)
        self._outcomes[word] += 1
        self._decisions.setdefault(word, result.decision)
        who = result.artifact.contributor or "(none)"
        self._contributors.setdefault(who, Counter())[word] += 1
        self._contributor_first[who] = min(index, self._contributor_first.get(who, index))
        fresh = len(result.drawn)
        self.drawn_calls += fresh
        self.reused_calls += len(result.votes) - fresh
        for vote in result.votes:
            health = self._health.get(vote.judge)
            if health is None:
                continue
            health.samples += 1
            if vote.error is None and vote.answer is not None:
                health.valid += 1
            else:
                health.errors[vote.error or "no answer"] += 1
        for vote in result.drawn:
            if vote.judge in self._health:
                self._health[vote.judge].drawn += 1
        self.bias.add(self.policy.kind, result.artifact, result.votes)
        self.results.add(result, index)
        self.drawn_cost = combine((self.drawn_cost, result.drawn_cost))
        self.reused_cost = combine((self.reused_cost, result.reused_cost))

    def merge(self, other: RunTally) -> None:
        """Add the tally of another part of the same run (a worker process's artifacts)."""
        self.artifacts += other.artifacts
        if other._first_index is not None and (
                self._first_index is None or other._first_index < self._first_index):
            self._first_index, self.first_receipt = other._first_index, other.first_receipt
        # Each part kept its first rows; keep the campaign's first of them all.
        self._explained = sorted(self._explained + other._explained,
                                 key=lambda item: item[0])[:self.limit]
        self._plain = sorted(self._plain + other._plain, key=lambda item: item[0])[:self.limit]
        self._outcomes.update(other._outcomes)
        for word, decision in other._decisions.items():
            self._decisions.setdefault(word, decision)
        for who, counts in other._contributors.items():
            self._contributors.setdefault(who, Counter()).update(counts)
            first = other._contributor_first[who]
            self._contributor_first[who] = min(first, self._contributor_first.get(who, first))
        for judge, theirs in other._health.items():
            mine = self._health.setdefault(judge, _Health())
            mine.samples += theirs.samples
            mine.drawn += theirs.drawn
            mine.valid += theirs.valid
            mine.errors.update(theirs.errors)
        self.drawn_calls += other.drawn_calls
        self.reused_calls += other.reused_calls
        self.bias.merge(other.bias)
        self.results.merge(other.results)
        self.drawn_cost = combine((self.drawn_cost, other.drawn_cost))
        self.reused_cost = combine((self.reused_cost, other.reused_cost))

    @property
    def rows(self) -> list[ArtifactRow]:
        """The rows kept, in the campaign's order: those with reasons, then plain ones up to
        the limit."""
        room = max(0, self.limit - len(self._explained))
        kept = self._explained + self._plain[:room]
        return [row for _, row in sorted(kept, key=lambda item: item[0])]

    @property
    def rows_left_out(self) -> int:
        """Artifacts counted but not given a row."""
        return self.artifacts - len(self.rows)

    @property
    def decisions(self) -> list[Decision]:
        """One decision per outcome word seen: enough for the run's exit status."""
        return list(self._decisions.values())

    def health(self) -> list[JudgeHealth]:
        """One row per judge of the panel, in panel order."""
        rows = []
        for config in self.policy.judges:
            h = self._health[config.id]
            rows.append(JudgeHealth(judge=config.id, provider=config.provider,
                                    samples=h.samples, drawn=h.drawn, valid=h.valid,
                                    errors=tuple(h.errors.most_common())))
        return rows

    def bias_readings(self) -> list[BiasReading]:
        """The bias monitor's readings, one per judge with something to read, panel order."""
        return self.bias.readings([config.id for config in self.policy.judges])

    def outcomes(self) -> dict[str, int]:
        """How many artifacts ended in each of the kind's outcome words (zeros included)."""
        words = _WORDS.get(self.policy.kind, ())
        return {**{w: self._outcomes[w] for w in words},
                **{w: n for w, n in self._outcomes.items() if w not in words}}

    def contributors(self) -> dict[str, dict[str, int]]:
        """Per contributor (in the campaign's order of their first artifact; ``(none)`` when
        unnamed), outcome counts."""
        order = sorted(self._contributors, key=self._contributor_first.__getitem__)
        return {who: dict(self._contributors[who]) for who in order}


def tally(policy: Policy, results: Sequence[JobResult]) -> RunTally:
    """A ``RunTally`` of results already held, in their order."""
    out = RunTally(policy)
    for result in results:
        out.add(result)
    return out
