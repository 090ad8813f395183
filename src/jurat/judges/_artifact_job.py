"""What every sample of one artifact's job shares, and the prompt each planned sample gets."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jurat.fold import hard_gates_pass
from jurat.judges._claims import render_claim
from jurat.judges._plan import PlannedSample
from jurat.judges._prompts import render_criterion, render_decision, render_equivalence
from jurat.judges._protocol import Prompt
from jurat.models import Artifact, EvidenceBundle, GateOutcome, Policy

__all__ = ["ArtifactJob"]


class ArtifactJob:
    """What every sample of one artifact's job shares."""

    def __init__(
        self,
        policy: Policy,
        artifact: Artifact,
        bundle: EvidenceBundle,
        gates: Sequence[GateOutcome],
        hard_gates: Sequence[str],
        started: float,
        clock: Callable[[], float],
    ) -> None:
        self.policy = policy
        self.artifact = artifact
        self.bundle = bundle
        self.gates = tuple(gates)
        self.hard_gates = tuple(hard_gates)
        # An equivalence pair's `b` is reference material unless the campaign says not.
        self.reference = policy.equivalence is None or policy.equivalence.reference == "b"
        self.gates_ok = hard_gates_pass(gates, hard_gates)
        self.started = started
        self.clock = clock

    def render(self, planned: PlannedSample) -> Prompt:
        if planned.kind in ("rubric", "pairwise"):
            assert self.policy.rubric is not None
            return render_decision(
                self.policy.rubric, self.artifact, self.bundle, self.gates, order=planned.order
            )
        if planned.kind == "criterion":
            assert planned.item is not None
            return render_criterion(planned.item, self.artifact, self.gates)
        if planned.kind == "claim":
            assert planned.claim is not None
            return render_claim(planned.claim, self.artifact, self.bundle)
        return render_equivalence(self.artifact)
