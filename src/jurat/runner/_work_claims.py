"""Claims from the work: the claims an artifact submitted, and those a pinned judge
extracts from it, labelled with the campaign's own (seed 000, "Factual grounding and
hallucination audit": "Decompose factual statements into checkable claims";
docs/grounding.md, "Claims from the work").

The extraction is asked once per job, before any claim is labelled, at temperature 0; its
prompt id, model and whole answer go into the ledger (``claims_extracted``) and its digest
into the receipt (``inputs.claim_extraction``). A job that has that entry reuses it and
never asks again: a model's extraction does not reproduce (RF-1), so asking again would
silently change what was judged. A refused answer is such an entry too, with no claims,
its failure and the operator's debug record; the receipt binds the failure's kind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from pydantic import JsonValue

from jurat.canonical import digest_json, sha256_digest
from jurat.errors import JudgeOutputError
from jurat.judges import Engine, SampleDebug
from jurat.judges._extract import render_extract, validate_extract
from jurat.judges._protocol import RawResponse
from jurat.ledger import Entry
from jurat.models import Artifact, Policy, echoed
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
    policy: Policy, artifact: Artifact, engine: Engine,
    recorded: Callable[[], Sequence[Entry]], append: Append,
) -> tuple[Artifact, dict[str, JsonValue] | None]:
    """``artifact`` with its extracted claims after the submitted ones, and the receipt's
    ``inputs.claim_extraction``; as given and None without ``[grounding] extract``.

    ``recorded`` reads the job's ``claims_extracted`` entries, called only when the policy
    extracts (a ledger read per job cost a run without extraction about 0.2 ms a job); the
    first is reused. Otherwise the extraction judge is asked once and its answer appended
    (``append``) before any claim is labelled. A refused answer is recorded too
    (``_extract``) and gives no claims: the job goes on, and the fold's grounding says what
    zero claims mean (docs/grounding.md).
    A call that got no answer at all (TransportError) still fails the job: nothing was
    paid for, and a re-run asks again.
    """
    grounding = policy.grounding
    if grounding is None or grounding.extract is None:
        return artifact, None
    extract = grounding.extract
    earlier = recorded()
    if earlier:
        payload = earlier[0].payload
    else:
        payload = await _extract(policy, artifact, engine)
        await append(payload)
    texts = [str(t) for t in payload["claims"]]
    prefix = WORK_CLAIM_PREFIXES["extracted"]
    evidence = tuple(r.id for r in grounding.references)
    extracted = tuple(
        GroundedClaim(id=f"{prefix}{n}", artifact=artifact.id, text=text, weight=extract.weight,
                      evidence=evidence, origin="extracted")
        for n, text in enumerate(texts, 1))
    # Shaped again: an entry recorded before the rule (models/_echoed.py) may hold any text.
    returned = payload["returned_model"]
    ref = ClaimExtraction(
        judge=payload["judge"], model=payload["model"],
        returned_model=echoed(returned) if isinstance(returned, str) else None,
        prompt_id=payload["prompt_id"], output_sha256=payload["output_sha256"],
        claims=len(texts), failure=_failure_kind(payload), replay_fidelity_level="RF-1")
    updated = artifact.model_copy(update={"claims": (*artifact.claims, *extracted)})
    return updated, ref.model_dump(mode="json")


async def _extract(policy: Policy, artifact: Artifact, engine: Engine) -> dict[str, JsonValue]:
    """Ask the extraction judge once: the ``claims_extracted`` payload of its answer.

    A refused answer (prose, a wrong schema, a body cut short, an unusable envelope) is a
    payload too, with no claims, its ``failure`` (kind and path) and the operator's debug
    record (the raw answer capped at ``RAW_CAP``, as for a judge sample): raising here
    instead would fail the job on every run, each paying for the same call, so that text
    which steers the extractor into prose would keep the artifact from ever being
    decided. Recorded, the failure is reused like any extraction (no second paid call).
    """
    assert policy.grounding is not None and policy.grounding.extract is not None
    extract = policy.grounding.extract
    config = next(j for j in policy.judges if j.id == extract.judge)
    prompt = render_extract(artifact, extract.max_claims)
    common: dict[str, JsonValue] = {"judge": config.id, "model": config.model,
                                    "prompt_id": prompt.prompt_id}
    raw: RawResponse | None = None
    try:
        # Temperature 0 whatever the judge's own: the least varying reading (seed 001 §3).
        raw = await engine.complete_prompt(
            config, prompt, key=artifact.sha256, criterion=_CRITERION, temperature=0.0)
        answered = validate_extract(_answer_text(raw), extract.max_claims)
    except JudgeOutputError as exc:
        debug = SampleDebug.of(raw, exc, prompt)
        output = raw.text if raw is not None and raw.text is not None else ""
        return {
            **common, "returned_model": raw.returned_model if raw is not None else None,
            # The answer's digest; its text is kept capped in the debug record only, as a
            # refused sample's is (a runaway answer must not bloat the ledger).
            "output_sha256": sha256_digest(output), "claims": [],
            "attempts": raw.attempts if raw is not None else 1,
            "failure": {"kind": exc.kind, "path": exc.path},
            "debug": debug.record() if debug is not None else None,
            **_usage(raw),
        }
    output = raw.text or ""
    return {
        **common, "returned_model": raw.returned_model, "output": output,
        "output_sha256": sha256_digest(output), "claims": list(answered),
        "attempts": raw.attempts, **_usage(raw),
    }


def _usage(raw: RawResponse | None) -> dict[str, JsonValue]:
    """The call's token usage (what a ``[budget]`` charged, when the endpoint reported
    none that counts), so a later run counts the extraction's cost from the ledger
    (runner/_budget.py); nothing for a call that got no response."""
    if raw is None or not raw.usage:
        return {}
    return {"usage": {key: value for key, value in raw.usage.items()}}


def _answer_text(raw: RawResponse) -> str | None:
    """The extraction answer's text, after the envelope checks every judge answer gets
    (judges/_validate.py ``interpret``): an unusable envelope, a refusal or an answer cut
    at the token limit is refused by its own kind, not read as whatever text came."""
    if raw.envelope_error is not None:
        raise JudgeOutputError("the provider's envelope was unusable", kind=raw.envelope_error,
                               path=raw.envelope_path)
    if raw.refusal or raw.finish in ("refusal", "content_filter"):
        raise JudgeOutputError("the model refused to extract claims", kind="refused")
    if raw.finish in ("length", "max_tokens"):
        raise JudgeOutputError("the answer was cut at the token limit", kind="truncated")
    return raw.text


def _failure_kind(payload: dict[str, JsonValue]) -> str | None:
    failure = payload.get("failure")
    return str(failure["kind"]) if isinstance(failure, dict) else None
