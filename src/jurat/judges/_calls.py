"""The engine's two calls as functions: one artifact's samples (``run_samples``) and one
subject call (``complete_text``), on the caller's engine or on one opened for the call
alone (judges/_engine.py holds the engine and its rules)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from jurat.judges._engine import Engine, OnRetry, OnVote
from jurat.judges._protocol import RawResponse
from jurat.judges._telemetry import SampleTelemetry
from jurat.models import Artifact, EvidenceBundle, GateOutcome, JudgeConfig, Policy, Vote

__all__ = ["complete_text", "run_samples"]


async def run_samples(
    policy: Policy,
    artifact: Artifact,
    bundle: EvidenceBundle,
    gates: Sequence[GateOutcome],
    *,
    existing: Sequence[Vote] = (),
    on_vote: OnVote | None = None,
    on_retry: OnRetry | None = None,
    telemetry: SampleTelemetry | None = None,
    clock: Callable[[], float] = time.monotonic,
    started: float | None = None,
    engine: Engine | None = None,
    spacing_ms: int | None = None,
) -> list[Vote]:
    """Run every planned judge sample of one artifact's job and return all its votes.

    The plan (``plan_samples``) is fixed before dispatch: rubric ``judge.samples`` per judge;
    pairwise the same with a seeded presentation order per sample (``Vote.order``); criteria
    ``suite.samples`` or ``suite.blocker_samples`` per item; equivalence
    ``policy.equivalence.votes``. Samples already in ``existing`` are not sampled again.
    With ``[criteria] curtail = true`` a criterion's samples are drawn in waves, in sample
    order, and the undrawn rest is left out once the drawn ones settle it (judges/_curtail.py,
    docs/receipt-format.md §8.5): such samples are neither dispatched nor returned.
    The rest run concurrently within the limits; ``on_vote`` is awaited for each vote as soon
    as it is final, one at a time; ``on_retry(sample key, failed attempt, kind)`` for each
    transport retry. Returns existing and new votes in dispatch order (panel order,
    criterion order, k). ``dispatch_ms`` counts from ``started`` (default: now).

    Raises ConfigError (missing API key, a stub that cannot judge this kind, a recorded vote
    outside the plan) or DestinationError before any request is sent.

    ``engine`` is the caller's (a run passes the one it opened); without it, an engine is
    opened for this call and closed before returning, so no limit or connection is shared
    with any other call.

    ``spacing_ms``: the least time between successive samples of one (judge, criterion);
    None takes each judge's ``spacing_ms``, 0 sends them in one burst (judges/_spacing.py).
    """
    if engine is None:
        async with Engine() as own:
            return await own.run_samples(
                policy, artifact, bundle, gates, existing=existing, on_vote=on_vote,
                on_retry=on_retry, telemetry=telemetry, clock=clock, started=started,
                spacing_ms=spacing_ms,
            )
    return await engine.run_samples(
        policy,
        artifact,
        bundle,
        gates,
        existing=existing,
        on_vote=on_vote,
        on_retry=on_retry,
        telemetry=telemetry,
        clock=clock,
        started=started,
        spacing_ms=spacing_ms,
    )


async def complete_text(
    config: JudgeConfig,
    prompt: str,
    *,
    temperature: float,
    max_tokens: int | None = None,
    on_retry: OnRetry | None = None,
    engine: Engine | None = None,
) -> RawResponse:
    """Run the subject under test once (the execution phase), pinned at ``temperature``.

    Seed 001 §3: pass the policy's ``execution_temperature`` (greedy by default) so the
    output being judged is not a fresh random draw every run. Transport failures are
    retried like judge calls; when they persist, TransportError is raised. ``engine`` as
    for ``run_samples``.
    """
    if engine is None:
        async with Engine() as own:
            return await own.complete_text(
                config, prompt, temperature=temperature, max_tokens=max_tokens,
                on_retry=on_retry,
            )
    return await engine.complete_text(
        config, prompt, temperature=temperature, max_tokens=max_tokens, on_retry=on_retry
    )
