"""The execution phase of criteria campaigns: run the subject under test once per input.

Seed 001 §3: the subject is pinned at ``execution_temperature`` (greedy by default), so the
output being judged is not a fresh random draw every run. The output is recorded in the
job's ``job_received`` entry before any judge sees it, so a resumed job judges the same
output instead of executing again.
"""

from __future__ import annotations

from typing import Any

from jurat.canonical import sha256_digest
from jurat.models import Artifact, EvidenceItem, GateOutcome, Policy


def execution_prompt(policy: Policy, artifact: Artifact) -> str:
    """The prompt under test with the test case's input filled in."""
    assert policy.subject_prompt is not None and artifact.input is not None
    return policy.subject_prompt.replace("{input}", artifact.input)


async def execute_subject(policy: Policy, artifact: Artifact) -> dict[str, Any]:
    """Run the subject and return the record kept in the ledger and the receipt."""
    from jurat.judges import complete_text

    assert policy.subject is not None and policy.criteria is not None
    temperature = policy.criteria.execution_temperature
    raw = await complete_text(policy.subject, execution_prompt(policy, artifact),
                              temperature=temperature)
    if raw.text is None:
        return {"output": None, "error": raw.envelope_error or raw.finish or "no output",
                "usage": dict(raw.usage), "attempts": raw.attempts}
    return {
        "output": raw.text,
        "output_sha256": sha256_digest(raw.text),
        "model": policy.subject.model,
        "returned_model": raw.returned_model,
        "temperature": temperature,
        "usage": dict(raw.usage),
        "attempts": raw.attempts,
    }


def with_output(artifact: Artifact, execution: dict[str, Any]) -> Artifact:
    """The artifact as judges see it: the subject's output for this input."""
    return artifact.model_copy(update={"text": str(execution["output"])})


def execution_evidence(
    policy: Policy, artifact: Artifact, execution: dict[str, Any], *, index: int
) -> tuple[GateOutcome, EvidenceItem, Artifact]:
    """The execution as a required gate and an evidence item; the artifact with its output.

    A subject that produced no output fails the gate, so the fold blocks: missing evidence
    never becomes a SHIP.
    """
    assert policy.subject is not None
    output = execution.get("output")
    tool = policy.subject.model or policy.subject.provider
    if not isinstance(output, str):
        detail = str(execution.get("error") or "no output")
        item = EvidenceItem(kind="subject_output", tool=tool, tool_version="",
                            sha256=sha256_digest(""), excerpt=f"execution failed: {detail}",
                            gate="subject.execution")
        gate = GateOutcome(id="subject.execution", outcome="error", required=True, tool=tool,
                           evidence_index=index, detail=detail)
        return gate, item, artifact
    item = EvidenceItem(kind="subject_output", tool=tool, tool_version="",
                        sha256=sha256_digest(output), excerpt=output[:2000],
                        gate="subject.execution")
    gate = GateOutcome(id="subject.execution", outcome="pass", required=True, tool=tool,
                       evidence_index=index,
                       data={"temperature": execution.get("temperature"),
                             "returned_model": execution.get("returned_model"),
                             "usage": execution.get("usage", {})})
    return gate, item, with_output(artifact, execution)
