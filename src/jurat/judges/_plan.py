"""The sample plan of one artifact's job, fixed from the policy before any dispatch.

Also what a judge sees as evidence (the artifact first) and what a receipt pins per judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jurat._version import __version__
from jurat.canonical import digest_json
from jurat.errors import ConfigError
from jurat.judges._general import (
    GENERAL_DECISION_TEMPLATE,
    GENERAL_PAIRWISE_TEMPLATE,
    GENERAL_SCHEMA_ID,
    general_ids,
)
from jurat.judges._order import presentation_order
from jurat.judges._prompts import TEMPLATE_FOR_KIND
from jurat.judges._protocol import CallKind
from jurat.judges._validate import SCHEMA_FOR_KIND
from jurat.models import (
    Artifact,
    Criterion,
    EvidenceBundle,
    EvidenceItem,
    Frozen,
    JudgeConfig,
    Policy,
    Vote,
)
from jurat.models._grounding import GroundedClaim, claim_criterion

__all__ = ["PlannedSample", "index_existing", "judge_bundle", "judge_pins", "plan_samples"]


class PlannedSample(Frozen):
    """One sample of the plan, fixed before dispatch."""

    judge: JudgeConfig
    """The judge configuration."""
    criterion: str
    """``rubric``, ``pairwise``, ``equivalence`` or a binary criterion id."""
    sample: int
    """Sample index k (0-based)."""
    of: int
    """N for this (judge, criterion)."""
    kind: CallKind
    """What is asked."""
    order: str | None = None
    """Pairwise presentation order, ``AB`` or ``BA``."""
    item: Criterion | None = None
    """The binary criterion (criteria campaigns)."""
    claim: GroundedClaim | None = None
    """The grounded claim (``claim`` samples; docs/grounding.md)."""

    @property
    def key(self) -> tuple[str, str, int]:
        """(judge id, criterion, k): the identity of a sample."""
        return (self.judge.id, self.criterion, self.sample)


def plan_samples(policy: Policy, artifact: Artifact) -> list[PlannedSample]:
    """Every sample of the job in dispatch order: judge panel order, criterion order, k."""
    plan: list[PlannedSample] = []
    for judge in policy.judges:
        if policy.kind == "rubric":
            plan.extend(
                PlannedSample(
                    judge=judge, criterion="rubric", sample=k, of=judge.samples, kind="rubric"
                )
                for k in range(judge.samples)
            )
        elif policy.kind == "pairwise":
            plan.extend(
                PlannedSample(
                    judge=judge,
                    criterion="pairwise",
                    sample=k,
                    of=judge.samples,
                    kind="pairwise",
                    order=presentation_order(judge.seed, artifact.sha256, k),
                )
                for k in range(judge.samples)
            )
        elif policy.kind == "criteria":
            suite = policy.criteria
            assert suite is not None  # the Policy validator guarantees it
            for item in suite.items:
                n = suite.blocker_samples if item.blocker else suite.samples
                plan.extend(
                    PlannedSample(
                        judge=judge, criterion=item.id, sample=k, of=n, kind="criterion", item=item
                    )
                    for k in range(n)
                )
        else:
            n = policy.equivalence.votes if policy.equivalence else 1
            plan.extend(
                PlannedSample(
                    judge=judge, criterion="equivalence", sample=k, of=n, kind="equivalence"
                )
                for k in range(n)
            )
        plan.extend(claim_samples(policy, judge, artifact))
    return plan


def claim_samples(
    policy: Policy, judge: JudgeConfig, artifact: Artifact
) -> list[PlannedSample]:
    """Seed 000 grounding: N samples per claim of the artifact per judge, after the kind's."""
    grounding = policy.grounding
    if grounding is None:
        return []
    n = grounding.samples
    return [
        PlannedSample(judge=judge, criterion=claim_criterion(claim.id), sample=k, of=n,
                      kind="claim", claim=claim)
        # The campaign's claims, then the work's (submitted, then extracted): the fold's order.
        for claim in (*grounding.claims_of(artifact.id), *artifact.claims)
        for k in range(n)
    ]


def judge_bundle(artifact: Artifact, bundle: EvidenceBundle) -> EvidenceBundle:
    """The bundle a judge sees: the artifact itself at index 0, then the checks' evidence."""
    if not bundle.items:
        item = EvidenceItem(
            kind="artifact", tool="jurat", tool_version=__version__, sha256=artifact.sha256
        )
        return EvidenceBundle(items=(item,))
    first = bundle.items[0]
    if first.kind != "artifact" or first.sha256 != artifact.sha256:
        raise ConfigError(
            f"artifact {artifact.id}: evidence bundle item 0 must be the artifact itself "
            f"(kind 'artifact', sha256 {artifact.sha256}), got {first.kind} {first.sha256}"
        )
    return bundle


def index_existing(
    plan: Sequence[PlannedSample], existing: Sequence[Vote]
) -> dict[tuple[str, str, int], Vote]:
    """Recorded votes by sample identity; a vote outside the plan means the policy changed."""
    planned = {p.key: p for p in plan}
    done: dict[tuple[str, str, int], Vote] = {}
    for vote in existing:
        key = (vote.judge, vote.criterion, vote.sample)
        if key not in planned:
            raise ConfigError(f"recorded vote {key} is not in this policy's sample plan")
        if key in done:
            raise ConfigError(f"recorded vote {key} appears twice")
        if vote.order != planned[key].order:
            raise ConfigError(
                f"recorded vote {key} was presented {vote.order}, "
                f"the plan says {planned[key].order}"
            )
        done[key] = vote
    return done


def judge_pins(policy: Policy) -> list[dict[str, Any]]:
    """What the receipt pins per judge: model, prompt id@version, schema, decoding, digest."""
    pins = []
    prompt_id, schema_id = TEMPLATE_FOR_KIND[policy.kind], SCHEMA_FOR_KIND[policy.kind]
    if policy.kind in ("rubric", "pairwise") and general_ids(policy.rubric):
        # A rubric beyond the ARCV four (judges/_general.py).
        template = GENERAL_DECISION_TEMPLATE if policy.kind == "rubric" else (
            GENERAL_PAIRWISE_TEMPLATE)
        prompt_id, schema_id = "@".join(template), GENERAL_SCHEMA_ID
    for config in policy.judges:
        decoding: dict[str, Any] = {
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            "structured_output": config.structured_output,
        }
        if policy.criteria is not None:
            decoding["execution_temperature"] = policy.criteria.execution_temperature
        pins.append(
            {
                "id": config.id,
                "provider": config.provider,
                "model": config.model,
                "prompt_id": prompt_id,
                "schema_id": schema_id,
                "decoding": decoding,
                "config_sha256": digest_json(config),
            }
        )
    return pins
