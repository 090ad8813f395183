"""The ``sim`` judge: a seeded, noisy panel member with declared statistics.

Each sample answers the artifact's truth label with probability ``reliability`` and a
wrong label otherwise (uniformly among the other labels of the kind). Samples of one item
are correlated through a shared per-item draw: with probability ``correlation`` all samples
of an (item, criterion) reuse one common draw (a common-cause failure, e.g. co-batching);
otherwise each sample draws its own. The pairwise correlation of two samples' correctness is
then exactly ``correlation``, and each sample's marginal reliability stays ``reliability``.

Truth conventions (``Artifact.truth``, case-insensitive; the only place jurat reads it):
rubric ``accept``/``reject``; pairwise ``A``/``B``/``tie`` (canonical order);
criteria ``yes``/``no``, or a dict criterion id → ``yes``/``no``;
equivalence ``EQUIVALENT``/``DIFFERENT``/``ABSTAIN``.
With no truth for an item, the label the samples aim at is itself a seeded draw per
(seed, item, criterion), so the panel is still deterministic and still noisy around it.

Every draw is a function of (seed, artifact digest, criterion, sample, attempt) only, so the
answers do not depend on dispatch order or concurrency, and a re-run reproduces them (RF-2).
Transport errors (``error_rate``, per attempt, retried like real ones), malformed answers
(``malformed_rate``, per sample) and ``latency_ms`` (waited out through an injectable
``sleep``) are simulated too. Answers are raw text that goes through the same parser and
validator as any provider's; apart from the malformed fraction they pass it (right digest,
evidence index 0, no accept on failed gates).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable

from jurat.errors import ConfigError
from jurat.judges._local import (
    LocalJudge,
    criterion_text,
    decision_text,
    equivalence_text,
    local,
)
from jurat.judges._protocol import JudgeCall, RawResponse, TransportFailure
from jurat.models import Artifact, JudgeConfig
from jurat.models._truth import SIM_LABELS

__all__ = ["SimJudge", "sim_label", "sim_truth"]

_SCALE = float(2**64)


def _uniforms(*parts: object) -> tuple[float, float, float, float]:
    digest = hashlib.sha256("|".join(map(str, ("jurat.sim/v1", *parts))).encode()).digest()
    return (
        int.from_bytes(digest[0:8], "big") / _SCALE,
        int.from_bytes(digest[8:16], "big") / _SCALE,
        int.from_bytes(digest[16:24], "big") / _SCALE,
        int.from_bytes(digest[24:32], "big") / _SCALE,
    )


def sim_truth(artifact: Artifact, kind: str, criterion: str) -> str | None:
    """The artifact's truth label for ``kind``/``criterion``, normalised, or None."""
    truth = artifact.truth
    if isinstance(truth, dict):
        truth = truth.get(criterion)
    if truth is None:
        return None
    for label in SIM_LABELS[kind]:
        if label.lower() == truth.strip().lower():
            return label
    raise ConfigError(
        f"artifact {artifact.id}: truth {truth!r} is not a {kind} label; "
        f"use one of {list(SIM_LABELS[kind])}"
    )


def sim_label(
    config: JudgeConfig, item: str, criterion: str, sample: int, kind: str, truth: str | None
) -> str:
    """The canonical label sample ``sample`` of (item, criterion) answers."""
    labels = SIM_LABELS[kind]
    couple, shared, shared_wrong, latent = _uniforms("item", config.seed, item, criterion)
    target = truth if truth is not None else labels[int(latent * len(labels))]
    if couple < config.correlation:
        draw, wrong = shared, shared_wrong
    else:
        draw, wrong, _, _ = _uniforms("sample", config.seed, item, criterion, sample)
    if draw < config.reliability:
        return target
    others = [label for label in labels if label != target]
    return others[int(wrong * len(others))]


def _claim_truth(call: JudgeCall) -> str | None:
    """A claim call's truth label (``[[grounding.claims]] truth``), or None."""
    return call.claim.truth if call.claim is not None else None


def _presented(label: str, order: str | None) -> str:
    if order == "BA" and label in ("A", "B"):
        return "B" if label == "A" else "A"
    return label


class SimJudge(LocalJudge):
    """A seeded noisy judge; see the module docstring for its model.

    ``sleep`` waits out the simulated ``latency_ms``; it is injectable for tests, as the
    engine's is.
    """

    def __init__(
        self,
        config: JudgeConfig,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(config)
        self._model = config.model or "sim"
        self._sleep = sleep

    async def complete(self, call: JudgeCall) -> RawResponse:
        config = self._config
        item = call.artifact.sha256
        if config.latency_ms > 0:
            await self._sleep(config.latency_ms / 1000)
        if call.kind == "text":
            return local(f"sim output {_uniforms('text', config.seed, item)[0]:.6f}", self._model)
        error_draw = _uniforms(
            "attempt", config.seed, item, call.criterion, call.sample, call.attempt
        )
        if error_draw[0] < config.error_rate:
            raise TransportFailure("simulated transport failure", kind="http_5xx")
        kind = call.kind
        label = sim_label(
            config,
            item,
            call.criterion,
            call.sample,
            kind,
            _claim_truth(call) if kind == "claim"
            else sim_truth(call.artifact, kind, call.criterion),
        )
        text = self._text(call, label)
        if _uniforms("malformed", config.seed, item, call.criterion, call.sample)[0] < (
            config.malformed_rate
        ):
            text = text[: len(text) // 2]
        return local(text, self._model)

    def _text(self, call: JudgeCall, label: str) -> str:
        if call.kind == "rubric":
            return decision_text(call, good=label == "accept", preference="A", why=_WHY)
        if call.kind == "pairwise":
            preference = _presented(label, call.order)
            return decision_text(call, good=True, preference=preference, why=_WHY)
        if call.kind == "criterion":
            return criterion_text(label, _WHY)
        if call.kind == "claim":
            # Cites the last bundle item: the references follow the artifact and checks.
            cited = [call.bundle_size - 1] if label in ("supported", "contradicted") else []
            return json.dumps({"label": label, "evidence_indices": cited, "explanation": _WHY})
        return equivalence_text(label, "simulated judgement")


_WHY = "Simulated judgement drawn with the declared reliability."
