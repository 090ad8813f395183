"""Hand-built campaigns of every kind, decided with the real fold, for receipt tests."""

from __future__ import annotations

from typing import Any

from jurat.canonical import sha256_digest
from jurat.fold import decide
from jurat.models import (
    Artifact,
    CriteriaSuite,
    Criterion,
    EquivalencePolicy,
    EvidenceBundle,
    EvidenceItem,
    GateOutcome,
    JudgeConfig,
    Policy,
    Vote,
)
from jurat.receipts import build_statement
from tests.support.rubrics import SEED_RUBRIC

SOURCE = (
    "def fib(n: int) -> int:\n"
    "    a, b = 0, 1\n"
    "    for _ in range(n):\n"
    "        a, b = b, a + b\n"
    "    return a\n"
)
KEYS = ("correctness", "reasoning", "adherence", "presentation")
RUBRIC = SEED_RUBRIC


def panel(samples: int = 3, provider: str = "sim") -> tuple[JudgeConfig, ...]:
    return tuple(
        JudgeConfig(
            id=name,
            provider=provider,
            model=f"sim-{name.lower()}",
            samples=samples,
            seed=seed,
            reliability=0.85,
            api_key_env="OPENAI_API_KEY" if provider == "openai-compat" else None,
        )
        for seed, name in enumerate(("A", "B", "C"))
    )


def arcv(scores: tuple[int, int, int, int], preference: str = "A") -> dict[str, Any]:
    return {
        "artifact_sha256": sha256_digest(SOURCE),
        "preference": preference,
        "scores": dict(zip(KEYS, scores, strict=True)),
        "hard_gates_pass": True,
        "disposition": "accept",
        "evidence_indices": [0, 1],
        "explanation": "Iterative Fibonacci; tests pass and edge cases are handled.",
    }


def artifact() -> Artifact:
    return Artifact(
        id="c1",
        sha256=sha256_digest(SOURCE),
        media_type="text/x-python",
        text=SOURCE,
        contributor="alice",
        task="fib-1",
    )


def evidence() -> EvidenceBundle:
    return EvidenceBundle(
        items=(
            EvidenceItem(
                kind="artifact",
                tool="jurat",
                tool_version="0.1.0",
                sha256=sha256_digest(SOURCE),
                excerpt=SOURCE,
            ),
            EvidenceItem(
                kind="tests",
                tool="pytest",
                tool_version="9.2.0",
                sha256="1" * 64,
                excerpt="3 passed",
                gate="tests.pass",
            ),
        )
    )


def gates() -> list[GateOutcome]:
    return [
        GateOutcome(
            id="python.parse",
            outcome="pass",
            required=True,
            tool="jurat",
            tool_version="0.1.0",
            evidence_index=0,
        ),
        GateOutcome(
            id="tests.pass",
            outcome="pass",
            required=True,
            tool="pytest",
            tool_version="9.2.0",
            evidence_index=1,
            detail="3 passed",
            data={"passed": 3, "failed": 0, "coverage": 87.5},
        ),
    ]


def rubric_votes() -> list[Vote]:
    """3 judges x 3 samples in dispatch order (interleaved), one sample errored."""
    scores = {"A": (5, 4, 4, 4), "B": (5, 5, 4, 4), "C": (4, 4, 4, 5)}
    votes = []
    for sample in range(3):
        for judge in ("A", "B", "C"):
            errored = judge == "C" and sample == 1
            votes.append(
                Vote(
                    judge=judge,
                    criterion="rubric",
                    sample=sample,
                    attempts=2 if errored else 1,
                    answer=None if errored else arcv(scores[judge]),
                    error="timeout" if errored else None,
                    returned_model=None if errored else f"sim-{judge.lower()}",
                    usage={} if errored else {"input_tokens": 812, "output_tokens": 96},
                    dispatch_ms=sample * 3 + "ABC".index(judge),
                    latency_ms=40,
                    prompt_id="jurat.rubric@1",
                )
            )
    return votes


def rubric_policy(provider: str = "sim") -> Policy:
    return Policy(
        id="demo-2026-11",
        kind="rubric",
        allowed_destinations=("sim",),
        rubric=RUBRIC,
        judges=panel(3, provider),
    )


def criteria_case() -> tuple[Policy, list[GateOutcome], list[Vote]]:
    policy = Policy(
        id="crit",
        kind="criteria",
        allowed_destinations=("sim",),
        judges=panel(5)[:1],
        criteria=CriteriaSuite(
            samples=5,
            blocker_samples=5,
            blocker_quorum=0.8,
            items=(
                Criterion(id="cites", text="Cites sources?", blocker=True),
                Criterion(id="short", text="Under 200 words?"),
            ),
        ),
    )
    verdicts: dict[str, list[str | None]] = {
        "cites": ["no", "no", "no", "no", "yes"],
        "short": ["yes"] * 4 + [None],
    }
    votes = [
        Vote(
            judge="A",
            criterion=c,
            sample=i,
            answer=None if v is None else {"verdict": v, "explanation": "checked"},
            error="malformed_json" if v is None else None,
        )
        for c, vs in verdicts.items()
        for i, v in enumerate(vs)
    ]
    return policy, [], votes


def pairwise_case() -> tuple[Policy, list[GateOutcome], list[Vote]]:
    policy = Policy(
        id="pw", kind="pairwise", allowed_destinations=("sim",), rubric=RUBRIC, judges=panel(2)
    )
    votes = [
        Vote(
            judge=j,
            criterion="pairwise",
            sample=i,
            order="BA" if i % 2 else "AB",
            answer=arcv((4, 4, 4, 4), preference="B" if i % 2 else "A"),
        )
        for j in ("A", "B", "C")
        for i in range(2)
    ]
    return policy, gates(), votes


def equivalence_case() -> tuple[Policy, list[GateOutcome], list[Vote]]:
    policy = Policy(
        id="eq",
        kind="equivalence",
        allowed_destinations=("stub",),
        equivalence=EquivalencePolicy(votes=3, min_agreement=2),
        judges=(JudgeConfig(id="S", provider="stub:always-equivalent", samples=3),),
    )
    votes = [
        Vote(
            judge="S",
            criterion="equivalence",
            sample=i,
            answer={"decision": "EQUIVALENT", "reason": "same number"},
        )
        for i in range(3)
    ]
    return policy, [], votes


def statement_for(
    policy: Policy, gate_list: list[GateOutcome], votes: list[Vote], **extra: Any
) -> dict[str, Any]:
    from jurat.receipts import replay_fidelity_level_for

    return build_statement(
        policy=policy,
        artifact=artifact(),
        gates=gate_list,
        votes=votes,
        decision=decide(policy, gate_list, votes),
        bundle=evidence(),
        replay_fidelity_level=replay_fidelity_level_for(policy),
        jurat_version="0.1.0",
        **extra,
    )
