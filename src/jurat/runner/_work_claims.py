"""Claims from the work: the claims an artifact submitted, and those a pinned judge
extracts from it, labelled with the campaign's own (seed 000, "Factual grounding and
hallucination audit": "Decompose factual statements into checkable claims";
docs/grounding.md, "Claims from the work").

The extraction is asked once per job, before any claim is labelled, at temperature 0; its
prompt id, model and whole answer go into the ledger (``claims_extracted``) and its digest
into the receipt (``inputs.claim_extraction``). A job that has that entry reuses it and
never asks again: a model's extraction does not reproduce (RF-1), so asking again would
silently change what was judged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from pydantic import JsonValue

from jurat.canonical import digest_json, sha256_digest
from jurat.judges import Engine
from jurat.judges._extract import render_extract, validate_extract
from jurat.ledger import Entry
from jurat.models import Artifact, Policy
from jurat.models._grounding import WORK_CLAIM_PREFIXES, ClaimExtraction, GroundedClaim

__all__ = ["claims_identity", "with_extracted_claims"]

#: The replay record key's criterion of an extraction call (judges/_replay.py).
_CRITERION = "claim-extract"

Append = Callable[[dict[str, JsonValue]], Awaitable[None]]


def claims_identity(job: str, artifact: Artifact) -> str:
    """``job`` bound to the digests of the claims the artifact submitted (other claims are
    another judgment, not the old receipt reused); ``job`` itself when it submitted none."""
    submitted = [sha256_digest(c.text) for c in artifact.claims if c.origin == "submitted"]
    return digest_json({"job": job, "claims": submitted}) if submitted else job


async def with_extracted_claims(
    policy: Policy, artifact: Artifact, engine: Engine, recorded: Sequence[Entry],
    append: Append,
) -> tuple[Artifact, dict[str, JsonValue] | None]:
    """``artifact`` with its extracted claims after the submitted ones, and the receipt's
    ``inputs.claim_extraction``; as given and None without ``[grounding] extract``.

    ``recorded``: the job's ``claims_extracted`` entries; the first one is reused. Otherwise
    the extraction judge is asked once and its answer appended (``append``) before any claim
    is labelled. A refused answer raises JudgeOutputError (the job's evaluation fails).
    """
    grounding = policy.grounding
    if grounding is None or grounding.extract is None:
        return artifact, None
    extract = grounding.extract
    if recorded:
        payload = recorded[0].payload
    else:
        config = next(j for j in policy.judges if j.id == extract.judge)
        prompt = render_extract(artifact, extract.max_claims)
        # Temperature 0 whatever the judge's own: the least varying reading (seed 001 §3).
        raw = await engine.complete_prompt(
            config, prompt, key=artifact.sha256, criterion=_CRITERION, temperature=0.0)
        answered = validate_extract(raw.text, extract.max_claims)
        output = raw.text or ""
        payload = {
            "judge": config.id, "model": config.model, "returned_model": raw.returned_model,
            "prompt_id": prompt.prompt_id, "output": output,
            "output_sha256": sha256_digest(output), "claims": list(answered),
            "attempts": raw.attempts,
        }
        await append(payload)
    texts = [str(t) for t in payload["claims"]]
    prefix = WORK_CLAIM_PREFIXES["extracted"]
    evidence = tuple(r.id for r in grounding.references)
    extracted = tuple(
        GroundedClaim(id=f"{prefix}{n}", artifact=artifact.id, text=text, weight=extract.weight,
                      evidence=evidence, origin="extracted")
        for n, text in enumerate(texts, 1))
    ref = ClaimExtraction(
        judge=payload["judge"], model=payload["model"], returned_model=payload["returned_model"],
        prompt_id=payload["prompt_id"], output_sha256=payload["output_sha256"],
        claims=len(texts), replay_fidelity_level="RF-1")
    updated = artifact.model_copy(update={"claims": (*artifact.claims, *extracted)})
    return updated, ref.model_dump(mode="json")
