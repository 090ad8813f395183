"""The execution phase of criteria campaigns: run the subject under test once per input.

Seed 001 §3: the subject is pinned at ``execution_temperature`` (greedy by default), so the
output being judged is not a fresh random draw every run. The output is recorded in a
``job_received`` entry before any judge sees it: under `jurat run`, each run's own
execution job (runner/_rerun.py: a new run executes again, ``--resume`` does not); for the
service, the job's, so a resumed job judges the same output instead of executing again.
"""

from __future__ import annotations

from pydantic import Field, JsonValue

from jurat.canonical import sha256_digest
from jurat.errors import (
    BudgetExhausted,
    JobIncomplete,
    JudgeOutputError,
    JuratError,
    TransportError,
)
from jurat.judges import Engine, no_answer
from jurat.models import (
    GATE_SUBJECT_EXECUTION,
    Artifact,
    EvidenceItem,
    Frozen,
    GateOutcome,
    Policy,
    echoed,
)

__all__ = ["Execution", "execute_subject", "execution_evidence", "execution_prompt"]


class Execution(Frozen):
    """The subject's run on one input, as the ledger's ``job_received`` entry records it.

    Three shapes, told apart by which fields are set: an output (``output`` and its
    digest, model, temperature, usage, attempts), an answer without text (``output`` null,
    ``error``, usage, attempts), or a failure that produced no answer (``output`` null,
    ``error``, ``message``). ``record()`` writes only the fields that were set, so the
    ledger holds exactly the keys of its shape.
    """

    output: str | None = None
    """The subject's text, or null when it produced none."""
    output_sha256: str | None = None
    """sha256 of ``output``."""
    model: str | None = None
    """The model the subject's configuration names."""
    returned_model: str | None = None
    """The model the endpoint said answered, as the response recorded it: a token, else its
    digest and length (models/_echoed.py)."""
    temperature: float | None = None
    """The pinned execution temperature (seed 001 §3)."""
    usage: dict[str, int] = Field(default_factory=dict)
    """Token usage the endpoint reported (input_tokens, output_tokens); under a
    ``[budget]``, the reservation charged when it reported none that counts."""
    attempts: int = 1
    """Transport attempts, retries included."""
    error: str | None = None
    """Why there is no output: the error kind, the finish reason or the envelope error."""
    message: str | None = None
    """The error's message, when the call failed without an answer."""

    def record(self) -> dict[str, JsonValue]:
        """The JSON object kept in the ledger: the fields of this record's shape only."""
        return self.model_dump(mode="json", exclude_unset=True)


def execution_prompt(policy: Policy, artifact: Artifact) -> str:
    """The prompt under test with the test case's input filled in."""
    assert policy.subject_prompt is not None and artifact.input is not None
    return policy.subject_prompt.replace("{input}", artifact.input)


async def execute_subject(policy: Policy, artifact: Artifact, engine: Engine) -> Execution:
    """Run the subject once; any failure is recorded as the execution, never raised.

    A failed execution is evidence: the ``subject.execution`` gate fails, so the fold
    blocks, and no judge is asked about an output that does not exist. No answer at all
    (an outage) is not: JobIncomplete, nothing recorded, so a later run executes it.
    """
    assert policy.subject is not None and policy.criteria is not None
    temperature = policy.criteria.execution_temperature
    try:
        raw = await engine.complete_text(
            policy.subject, execution_prompt(policy, artifact), temperature=temperature
        )
    except BudgetExhausted:
        raise  # not sent: no execution happened, and a run under a raised cap makes it
    except JuratError as exc:
        if isinstance(exc, TransportError) and no_answer(exc):
            # An outage of the subject's endpoint (connection, timeout, 5xx, 429 after its
            # retries, an open breaker) is not an output the subject gave: nothing is
            # signed, and the same command executes it again (issue 27's rule for judges).
            raise JobIncomplete(
                f"artifact {artifact.id!r}: the subject got no answer ({exc.kind}), so "
                "nothing was signed for it (fix: run the same command again once the "
                "subject's endpoint answers)", judge=policy.subject.id) from exc
        kind = exc.kind if isinstance(exc, TransportError | JudgeOutputError) else None
        return Execution(output=None, error=kind or type(exc).__name__, message=str(exc))
    if raw.text is None:
        return Execution(output=None, error=raw.envelope_error or raw.finish or "no output",
                         usage=dict(raw.usage), attempts=raw.attempts)
    return Execution(
        output=raw.text,
        output_sha256=sha256_digest(raw.text),
        model=policy.subject.model,
        returned_model=raw.returned_model,
        temperature=temperature,
        usage=dict(raw.usage),
        attempts=raw.attempts,
    )


def with_output(artifact: Artifact, execution: Execution) -> Artifact:
    """The artifact as judges see it: the subject's output for this input."""
    return artifact.model_copy(update={"text": str(execution.output)})


def execution_evidence(
    policy: Policy, artifact: Artifact, execution: Execution, *, index: int
) -> tuple[GateOutcome, EvidenceItem, Artifact]:
    """The execution as a required gate and an evidence item; the artifact with its output.

    A subject that produced no output fails the gate, so the fold blocks: missing evidence
    never becomes a SHIP.
    """
    assert policy.subject is not None
    output = execution.output
    tool = policy.subject.model or policy.subject.provider
    # What the endpoint echoed (a finish reason as the error, the returned model) reaches
    # the receipt only as a token or its digest (models/_echoed.py): shaped here too, for
    # an execution the ledger recorded before that rule.
    if output is None:
        detail = echoed(execution.error) or "no output"
        item = EvidenceItem(kind="subject_output", tool=tool, tool_version="",
                            sha256=sha256_digest(""), excerpt=f"execution failed: {detail}",
                            gate=GATE_SUBJECT_EXECUTION)
        gate = GateOutcome(id=GATE_SUBJECT_EXECUTION, outcome="error", required=True, tool=tool,
                           evidence_index=index, detail=detail)
        return gate, item, artifact
    item = EvidenceItem(kind="subject_output", tool=tool, tool_version="",
                        sha256=sha256_digest(output), excerpt=output[:2000],
                        gate=GATE_SUBJECT_EXECUTION)
    gate = GateOutcome(id=GATE_SUBJECT_EXECUTION, outcome="pass", required=True, tool=tool,
                       evidence_index=index,
                       data={"temperature": execution.temperature,
                             "returned_model": echoed(execution.returned_model),
                             "usage": execution.usage})
    return gate, item, with_output(artifact, execution)
