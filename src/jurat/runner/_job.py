"""One artifact's job: checks → judges → validation → fold → receipt → ledger.

The stages and their order are docs/design.md's pipeline.

Every sample is appended to the ledger as soon as it is final, so an interrupted run
resumes from the ledger and never resamples (seed 000: a retry is not a new sample).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jurat._version import __version__
from jurat.canonical import digest_json, sha256_digest
from jurat.errors import JuratError
from jurat.fold import gate_veto
from jurat.judges import CostSummary, PhaseCost, cost_summary, usd
from jurat.ledger import job_id
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_SUBJECT_EXECUTION,
    Artifact,
    Decision,
    EvidenceItem,
    GateOutcome,
    Policy,
    Untrusted,
    Vote,
    echoed,
    token_count,
)
from jurat.runner._execute import Execution

if TYPE_CHECKING:
    from jurat.checks import CheckPool, CheckRecord

EXCERPT_CHARS = 2000


@dataclass
class JobResult:
    """What the summary table and the exit code need from one artifact's job.

    ``reference_detail`` is for the operator's terminal only: it quotes the campaign's
    tests (failure excerpts, the run's output), which are reference material, so nothing
    here may copy it into a receipt, the ledger, telemetry or the report
    (docs/receipt-format.md §11). It is empty for a reused receipt: the tests did not run.
    """

    artifact: Artifact
    decision: Decision
    votes: list[Vote]
    """Every vote the receipt records: drawn in this run, recorded earlier, or both."""
    gates: list[GateOutcome]
    receipt_path: str
    drawn_cost: CostSummary
    """What this run spent: the samples and the execution drawn in it."""
    reused_cost: CostSummary
    """What was recorded before this run and reused, not drawn again (ledger or receipt)."""
    drawn: list[Vote] = field(default_factory=list)
    """The votes of ``votes`` drawn in this run (the others were recorded before it)."""
    review_version: int = 1
    reused: bool = False
    judges_skipped: str | None = None
    """Why no judge was asked, as the receipt records it (``inputs.judges_skipped``)."""
    reference_detail: tuple[Untrusted, ...] = ()
    """Operator-only check detail (``CheckReport.reference_detail``); never persisted."""
    record: CheckRecord | None = None
    """Operator-only: what the hidden tests' run measured (``Checked.record``)."""
    receipt_seq: int | None = None
    """The ledger entry of its receipt: what its inclusion proof proves."""


@dataclass(frozen=True)
class Checked:
    """The deterministic checks of one artifact, as the job uses them."""

    gates: list[GateOutcome]
    evidence: list[EvidenceItem]
    reference_detail: tuple[Untrusted, ...] = ()
    """Operator-only (see ``JobResult``)."""
    record: CheckRecord | None = None
    """Operator-only: what the hidden tests' run measured, with the salt of the commitment
    the gates carry; the ledger keeps it as the job's ``checks_recorded`` entry."""


@dataclass
class Progress:
    """Counters the progress bar shows; updated from the event loop only."""

    samples: int = 0
    errors: int = 0
    spend_usd: float = 0.0
    on_change: Callable[[], None] | None = None

    def vote(self, vote: Vote, usd: float | None) -> None:
        self.samples += 1
        self.errors += vote.error is not None
        self.spend_usd += usd or 0.0
        if self.on_change:
            self.on_change()


def artifact_evidence(artifact: Artifact) -> EvidenceItem:
    """Index 0 of every bundle: the artifact itself, so judges cite it by number."""
    if artifact.a is not None or artifact.b is not None:
        half = EXCERPT_CHARS // 2
        # A gold b by its keyed digest: the bundle's digest is public (issue 36).
        b = artifact.reference_hmac or (artifact.b or "")[:half]
        excerpt = f"A:\n{(artifact.a or '')[:half]}\nB:\n{b}"
    else:
        excerpt = artifact.text[:EXCERPT_CHARS]
    return EvidenceItem(kind="artifact", tool="jurat", tool_version=__version__,
                        sha256=artifact.sha256, excerpt=excerpt)


def check_pool(
    policies: Iterable[Policy],
) -> contextlib.AbstractAsyncContextManager[CheckPool | None]:
    """The pool the jobs of ``policies`` run their code checks in, for their owner to open
    (``async with check_pool(...) as checks``) and pass to its ``JobRunner``: None, and the
    checks not imported, when no campaign has ``[checks.python]``."""
    if not any(policy.python is not None for policy in policies):
        return contextlib.nullcontext(None)
    # Imported here, not at the top: the checks are a twentieth of a second of every run's
    # start-up, and campaigns without them never use them.
    from jurat.checks import CheckPool

    return CheckPool()


async def deterministic_checks(policy: Policy, artifact: Artifact,
                               checks: CheckPool | None) -> Checked:
    """Seed 000 code pipeline for Python artifacts, in ``checks`` (``check_pool``); seed 002
    numeric pass for answer pairs."""
    hard_gates = policy.hard_gates
    if policy.kind == "equivalence" and artifact.a is not None and artifact.b is not None:
        settings = policy.equivalence
        if settings is None or settings.deterministic_first:
            from jurat.checks import deterministic_equivalence

            check = deterministic_equivalence(artifact.a, artifact.b)
            # By default `b` is the reference (the gold answer): the gate binds it by digest
            # only (docs/receipt-format.md, "Reference material").
            reference = settings is None or settings.reference == "b"
            return Checked([check.to_gate(reference=reference,
                                          reference_hmac=artifact.reference_hmac)], [])
        return Checked([], [])
    if policy.python is not None and artifact.media_type == "text/x-python":
        if checks is None:
            raise JuratError(f"campaign {policy.id}: its code checks need a CheckPool "
                             "(runner/_job.py, check_pool), and its runner was given none")
        report = await checks.run(
            artifact.text, tests=artifact.tests or None, config=artifact.checks or policy.python,
            hard_gates=hard_gates, artifact_sha256=artifact.sha256,
        )
        return Checked(list(report.gates), list(report.evidence), report.reference_detail,
                       report.record)
    return Checked([], [])


def judges_skipped(policy: Policy, gates: list[GateOutcome]) -> str | None:
    """Why no judge is asked about this artifact, or None when they are.

    Judges are asked only when their votes can change the decision:

    - a pair the deterministic pass settled: it overrides any judge (seed 002 §3);
    - a subject that produced no output: there is nothing to judge (seed 001 §3);
    - a required gate that ran and failed (rubric, pairwise, criteria): a veto, the fold
      rejects or blocks whatever the judges say (seed 000, hard gates), unless the campaign
      sets ``judge_after_veto``. Equivalence folds no veto, so it is not skipped for one.

    A required gate that errored, was skipped or is missing is not a failure: the fold
    escalates for the missing evidence (criteria: blocks), and the judges are still asked.
    That outcome says nothing against the artifact (a sandbox that could not start, a
    missing tool), and their reading is what the person who takes the escalation up
    starts from.
    """
    for gate in gates:
        if gate.id == GATE_EQUIVALENCE_DETERMINISTIC and gate.outcome in ("pass", "fail"):
            return f"settled deterministically by {GATE_EQUIVALENCE_DETERMINISTIC}"
        if gate.id == GATE_SUBJECT_EXECUTION and gate.outcome != "pass":
            return f"{GATE_SUBJECT_EXECUTION} {gate.outcome}: the subject produced no output"
    if policy.kind == "equivalence" or policy.judge_after_veto:
        return None
    veto = gate_veto(policy.hard_gates, gates)
    if not veto.hard_fail:
        return None
    failed = [g.id for g in gates if g.id in veto.failed and g.outcome == "fail"]
    noun = "gate" if len(failed) == 1 else "gates"
    return f"required {noun} {', '.join(failed)} did not pass (a veto no judge can change)"


def job_identity(policy_sha256: str, artifact: Artifact, policy: Policy, attempt: int) -> str:
    """Seed 000: bind every job to artifact digest, task version, policy, evaluator, attempt;
    and to the digests of the task statement and the contributor's explanation the judges
    read, when there are any (``context_identity``), and to the question the output answers
    (``question_binding``)."""
    base = context_identity(job_id(artifact.sha256, policy.task_version, policy_sha256,
                                   f"jurat/{__version__}", attempt), artifact)
    question = question_binding(artifact)
    if question:
        # Issue 29: one answer to two questions is two judgments, not one receipt shared.
        base = digest_json({"job": base, **question})
    if artifact.target is None:
        return base
    # Issue 28: a corrected reference answer is a new judgment, not the old receipt reused
    # under a digest its judges never compared with. Issue 36: by its keyed digest, as the
    # job id is in every receipt and a plain digest would let anyone test guesses of it.
    if artifact.reference_hmac is None:
        raise JuratError(f"artifact {artifact.id}: its target has no keyed digest (intake, "
                         "runner/_intake.py, computes it)")
    return digest_json({"job": base, "target": artifact.reference_hmac})


def question_binding(artifact: Artifact) -> dict[str, str]:
    """What identifies the question an output answers, beyond what the job binds already:
    the input's digest when the output was given beside it (a criteria row without a
    ``[subject]``; a subject's artifact digest is its input's). A task is bound by its
    statement (``context_digests``); a bare task id without ``[[tasks]]`` is a label, not
    bound, so that every job made before issue 29 keeps its id (a quickstart ledger resumes
    without drawing a sample). Empty for an artifact without such an input."""
    if artifact.input is not None and artifact.sha256 != sha256_digest(artifact.input):
        return {"input_sha256": sha256_digest(artifact.input)}
    return {}


def context_identity(base: str, artifact: Artifact) -> str:
    """``base`` bound to the artifact's task statement and explanation digests; ``base``
    itself when it has neither, so jobs made before tasks existed keep their ids."""
    bound = context_digests(artifact)
    return digest_json({"job": base, **bound}) if bound else base


def context_digests(artifact: Artifact) -> dict[str, str]:
    """The digests of what the judges read beside the artifact: its task statement and its
    explanation (only those present)."""
    out: dict[str, str] = {}
    if artifact.task_statement is not None:
        out["task_statement_sha256"] = sha256_digest(artifact.task_statement)
    if artifact.explanation is not None:
        out["explanation_sha256"] = artifact.explanation.sha256.removeprefix("sha256:")
    return out


def recorded_vote(payload: Any) -> Vote:
    """A vote the ledger holds, as a new receipt records it: what its endpoint echoed
    shaped as ``models._echoed`` shapes it now (a ledger written before issue 36 holds it
    as sent), so a resumed job signs no endpoint's text."""
    vote = Vote.model_validate(payload)
    shaped = {"returned_model": echoed(vote.returned_model),
              "system_fingerprint": echoed(vote.system_fingerprint)}
    if all(getattr(vote, name) == value for name, value in shaped.items()):
        return vote
    return vote.model_copy(update=shaped)


def job_cost(policy: Policy, votes: Sequence[Vote], execution: Execution | None) -> CostSummary:
    """Tokens and USD per phase for one job (seed 001 §5): only the judge phase multiplies."""
    extra = []
    if execution is not None and policy.subject is not None:
        # A count an older ledger recorded as the endpoint sent it may be out of range.
        tin = token_count(execution.usage.get("input_tokens")) or 0
        tout = token_count(execution.usage.get("output_tokens")) or 0
        extra.append(PhaseCost(phase="execution", calls=1, attempts=execution.attempts,
                               input_tokens=tin, output_tokens=tout,
                               usd=usd(policy.subject, tin, tout)))
    return cost_summary(votes, policy.judges, extra)

