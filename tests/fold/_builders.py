"""Small builders of policies and votes for fold tests."""

from __future__ import annotations

from typing import Any

from jurat.models import (
    RISK_TIERS,
    CriteriaSuite,
    Criterion,
    EquivalencePolicy,
    GateOutcome,
    JudgeConfig,
    Policy,
    RiskTier,
    Vote,
)
from tests.support.rubrics import SEED_RUBRIC

RUBRIC = SEED_RUBRIC
SHA = "0" * 64


def panel(n: int, samples: int = 5) -> tuple[JudgeConfig, ...]:
    return tuple(JudgeConfig(id=f"J{i}", provider="sim", samples=samples) for i in range(n))


def policy(kind: str = "rubric", judges: int = 3, samples: int = 5,
           tier: RiskTier | None = None, **extra: Any) -> Policy:
    kw: dict[str, Any] = {"id": "t", "kind": kind, "judges": panel(judges, samples),
                          "risk_tier": tier or RISK_TIERS["standard"]}
    if kind in ("rubric", "pairwise"):
        kw["rubric"] = RUBRIC
    if kind == "criteria":
        kw["criteria"] = CriteriaSuite(
            samples=samples, blocker_samples=samples, blocker_quorum=0.8,
            items=(Criterion(id="c1", text="?", blocker=True), Criterion(id="c2", text="?")),
        )
    if kind == "equivalence":
        kw["equivalence"] = EquivalencePolicy(votes=samples, min_agreement=samples)
    kw.update(extra)
    return Policy(**kw)


def arcv(scores: tuple[int, int, int, int], disposition: str = "accept",
         preference: str = "A") -> dict[str, Any]:
    keys = ("correctness", "reasoning", "adherence", "presentation")
    return {
        "artifact_sha256": SHA, "preference": preference,
        "scores": dict(zip(keys, scores, strict=True)), "hard_gates_pass": True,
        "disposition": disposition, "evidence_indices": [0], "explanation": "x" * 20,
    }


def vote(judge: str, sample: int, answer: dict[str, Any] | None, criterion: str = "rubric",
         error: str | None = None, order: str | None = None) -> Vote:
    return Vote(judge=judge, criterion=criterion, sample=sample, answer=answer,
                error=error if answer is None else None, order=order)


def gates(ok: bool = True) -> list[GateOutcome]:
    return [
        GateOutcome(id="python.parse", outcome="pass", required=True),
        GateOutcome(id="tests.pass", outcome="pass" if ok else "fail", required=True,
                    detail="" if ok else "failed"),
    ]
