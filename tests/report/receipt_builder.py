"""Build realistic receipt statements for the report tests, one campaign per kind.

Decisions come from the real fold (``jurat.decide``) over the votes built here, so the
statements are what ``jurat run`` would sign, minus the signature.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from jurat.canonical import canonical_json
from jurat.fold import decide
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_PYTHON_PARSE,
    GATE_TESTS_PASS,
    Artifact,
    EvidenceBundle,
    EvidenceItem,
    GateOutcome,
    JudgeConfig,
    Policy,
    Vote,
    policy_digest,
)

SCRIPT = "<script>alert('pwned')</script>"
RUBRIC = {
    "version": "code-review/1",
    "threshold": 0.75,
    "hard_gates": [GATE_PYTHON_PARSE, GATE_TESTS_PASS],
    "criteria": [
        {"id": "correctness", "weight": 0.45, "minimum": 3},
        {"id": "reasoning", "weight": 0.25},
        {"id": "adherence", "weight": 0.20},
        {"id": "presentation", "weight": 0.10},
    ],
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _judges(ids: str, samples: int, *, priced: bool) -> tuple[JudgeConfig, ...]:
    price = {"price_in_per_mtok": 0.27, "price_out_per_mtok": 1.10} if priced else {}
    return tuple(
        JudgeConfig(id=j, provider="sim", model=f"sim-{j.lower()}", samples=samples, **price)
        for j in ids
    )


def _vote(
    judge: str, criterion: str, k: int, t: int, answer: dict[str, Any] | None, **kw: Any
) -> Vote:
    error = kw.pop("error", None)
    return Vote(
        judge=judge,
        criterion=criterion,
        sample=k,
        answer=None if error else answer,
        error=error,
        returned_model=f"sim-{judge.lower()}",
        usage={} if error else {"input_tokens": 1200 + 10 * k, "output_tokens": 240},
        dispatch_ms=5 * t,
        latency_ms=300 + (37 * t) % 200,
        prompt_id=f"jurat/{criterion}@1",
        **kw,
    )


def statement(
    policy: Policy,
    artifact_id: str,
    gates: list[GateOutcome],
    votes: list[Vote],
    *,
    version: int = 1,
    supersedes: str | None = None,
) -> dict[str, Any]:
    """An in-toto Statement v1 with the jurat decision predicate."""
    digest = _sha(artifact_id)
    decision = decide(policy, gates, votes)
    return {
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{"name": artifact_id, "digest": {"sha256": digest}}],
        "predicateType": "https://jurat.dev/decision/v1",
        "predicate": {
            "jurat_version": "0.1.0",
            "fold_rule": "jurat.fold/v1",
            "replay_fidelity_level": "RF-1" if votes else "RF-2",
            "campaign": {
                "id": policy.id,
                "kind": policy.kind,
                "policy_sha256": policy_digest(policy),
                "policy": policy.model_dump(mode="json"),
            },
            "artifact": {"id": artifact_id, "sha256": digest, "media_type": "text/x-python"},
            "inputs": {"task": "t1", "contributor": None, "upstream_receipts": []},
            "gates": [g.model_dump(mode="json") for g in gates],
            "judges": [
                {"id": j.id, "provider": j.provider, "model": j.model, "prompt_id": "p@1"}
                for j in policy.judges
            ],
            "votes": [v.model_dump(mode="json") for v in votes],
            "decision": decision.model_dump(mode="json"),
            "review": {"version": version, "supersedes": supersedes},
        },
    }


def _arcv(
    scores: tuple[int, ...], *, preference: str = "A", explanation: str = ""
) -> dict[str, Any]:
    keys = ("correctness", "reasoning", "adherence", "presentation")
    return {
        "artifact_sha256": "0" * 64,
        "preference": preference,
        "scores": dict(zip(keys, scores, strict=True)),
        "hard_gates_pass": True,
        "disposition": "accept" if min(scores) >= 4 else "reject",
        "evidence_indices": [0],
        "explanation": explanation or "The function handles the edge cases and tests pass.",
    }


def rubric_statements() -> list[dict[str, Any]]:
    """3 judges x 5 samples: one accept (with an errored sample and a hostile explanation),
    one rejected by a failed required gate, one escalated then reviewed again."""
    policy = Policy(
        id="review-2026", kind="rubric", rubric=RUBRIC, judges=_judges("ABC", 5, priced=True)
    )
    passing = [
        GateOutcome(id=GATE_PYTHON_PARSE, outcome="pass", required=True),
        GateOutcome(id=GATE_TESTS_PASS, outcome="pass", required=True, tool="pytest"),
    ]
    good, split, t = [], [], 0
    for j in "ABC":
        for k in range(5):
            t += 1
            explanation = f"Looks right. {SCRIPT}" if (j, k) == ("B", 2) else ""
            err = "timeout" if (j, k) == ("C", 4) else None
            good.append(
                _vote(j, "rubric", k, t, _arcv((5, 4, 4, 4), explanation=explanation), error=err)
            )
            scores = (5, 4, 4, 4) if j == "A" else (2, 3, 3, 3) if j == "B" else (4, 4, 3, 4)
            split.append(_vote(j, "rubric", k, t, _arcv(scores)))
    failing = [
        passing[0],
        GateOutcome(
            id=GATE_TESTS_PASS, outcome="fail", required=True, tool="pytest", detail="2 of 9 failed"
        ),
    ]
    first = statement(policy, "r-split", passing, split)
    return [
        statement(policy, "r-good", passing, good),
        statement(policy, "r-gate", failing, good),
        first,
        statement(
            policy,
            "r-split",
            passing,
            good,
            version=2,
            supersedes=hashlib.sha256(canonical_json(first)).hexdigest(),
        ),
    ]


def pairwise_statements() -> list[dict[str, Any]]:
    """3 judges x 6 samples alternating AB/BA. Canonical truth is B. Judges A and B restore it
    under both orders; judge C always says "A" as presented (position bias)."""
    policy = Policy(
        id="pairs-2026", kind="pairwise", rubric=RUBRIC, judges=_judges("ABC", 6, priced=True)
    )
    votes, t = [], 0
    for j in "ABC":
        for k in range(6):
            t += 1
            order = "AB" if k % 2 == 0 else "BA"
            presented = "A" if j == "C" else ("B" if order == "AB" else "A")
            votes.append(
                _vote(j, "pairwise", k, t, _arcv((4, 4, 4, 4), preference=presented), order=order)
            )
    gates = [
        GateOutcome(id=GATE_PYTHON_PARSE, outcome="pass", required=True),
        GateOutcome(id=GATE_TESTS_PASS, outcome="pass", required=True, tool="pytest"),
    ]
    return [statement(policy, "p-1", gates, votes)]


CRITERIA = {
    "samples": 5,
    "blocker_samples": 11,
    "blocker_quorum": 0.8,
    "items": [
        {"id": "cites-sources", "text": "Does it cite sources?", "blocker": True},
        {"id": "cfo-headline", "text": "Does it lead with the dollar figure?", "blocker": True},
        {"id": "concise", "text": "Is it concise?"},
    ],
}


def criteria_statements() -> list[dict[str, Any]]:
    """2 judges; blockers at 11 samples, one non-blocker at 5; some samples error out."""
    policy = Policy(
        id="skills-2026", kind="criteria", criteria=CRITERIA, judges=_judges("JK", 5, priced=False)
    )
    plans = {
        # artifact: criterion -> verdicts for 11 (or 5) samples; None is an errored sample
        "c-ship": {
            "cites-sources": ["yes"] * 9 + [None, None],
            "cfo-headline": ["yes"] * 11,
            "concise": ["yes", "yes", "no", "yes", "yes"],
        },
        "c-block": {
            "cites-sources": ["no"] * 10 + ["yes"],
            "cfo-headline": ["yes"] * 11,
            "concise": ["yes"] * 5,
        },
        "c-warn": {
            "cites-sources": ["no"] * 7 + ["yes", "yes", None, "unsure"],
            "cfo-headline": ["yes"] * 11,
            "concise": ["yes", None, "yes", "yes", "yes"],
        },
    }
    out = []
    for artifact, plan in plans.items():
        votes, t = [], 0
        for j in "JK":
            for criterion, verdicts in plan.items():
                # Judge K answers the same multiset in reverse order: same fold, other path.
                for k, verdict in enumerate(verdicts if j == "J" else verdicts[::-1]):
                    t += 1
                    err = "rate_limited" if verdict is None else None
                    answer = {"verdict": verdict, "explanation": f"Sample {k} of {criterion}."}
                    votes.append(_vote(j, criterion, k, t, answer, error=err))
        out.append(statement(policy, artifact, [], votes))
    return out


def equivalence_statements() -> list[dict[str, Any]]:
    """One pair settled deterministically (no judge called), one by 3 judge samples."""
    policy = Policy(
        id="gsm8k-eq",
        kind="equivalence",
        equivalence={"votes": 3, "min_agreement": 2},
        judges=_judges("E", 3, priced=True),
    )
    det = [
        GateOutcome(
            id=GATE_EQUIVALENCE_DETERMINISTIC,
            outcome="pass",
            tool="math-verify",
            tool_version="0.9.0",
        )
    ]
    skipped = [GateOutcome(id=GATE_EQUIVALENCE_DETERMINISTIC, outcome="skip", tool="math-verify")]
    answers = ["EQUIVALENT", "EQUIVALENT", "ABSTAIN"]
    votes = [
        _vote("E", "equivalence", k, k + 1, {"decision": d, "reason": "Both say 200."})
        for k, d in enumerate(answers)
    ]
    return [statement(policy, "e-numeric", det, []), statement(policy, "e-judged", skipped, votes)]


def all_receipts(out: str = "/tmp/out", key: str = "/tmp/keys/jurat.pub") -> list[dict[str, Any]]:
    """Every kind, as the dicts render_report takes."""
    statements = rubric_statements() + pairwise_statements() + criteria_statements()
    statements += equivalence_statements()
    return [
        {
            "statement": s,
            "receipt_path": f"{out}/{s['predicate']['artifact']['id']}.sigstore.json",
            "key_path": key,
        }
        for s in statements
    ]


def bundle(statement: dict[str, Any]) -> dict[str, Any]:
    """A Sigstore bundle v0.3 around the statement (the signature is not checked by the report)."""
    return {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {"publicKey": {"hint": "test"}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": base64.b64encode(canonical_json(statement)).decode(),
            "payloadType": "application/vnd.in-toto+json",
            "signatures": [{"sig": base64.b64encode(b"not-a-signature").decode(), "keyid": ""}],
        },
    }


def real_statement(build_statement: Any) -> dict[str, Any]:
    """A statement made by the receipts module itself (``jurat.receipts.build_statement``)."""
    policy = Policy(id="e2e", kind="rubric", rubric=RUBRIC, judges=_judges("ABC", 5, priced=True))
    gates = [
        GateOutcome(id=GATE_PYTHON_PARSE, outcome="pass", required=True),
        GateOutcome(id=GATE_TESTS_PASS, outcome="pass", required=True, tool="pytest"),
    ]
    text = "def f():\n    return 1\n"
    artifact = Artifact(id="c1", sha256=_sha(text), media_type="text/x-python", text=text)
    evidence = EvidenceBundle(
        items=(
            EvidenceItem(kind="artifact", tool="jurat", tool_version="0.1.0", sha256=_sha(text)),
        )
    )
    votes = [
        _vote(j, "rubric", k, 5 * i + k, _arcv((5, 4, 4, 4)))
        for i, j in enumerate("ABC")
        for k in range(5)
    ]
    statement: dict[str, Any] = build_statement(
        policy=policy,
        artifact=artifact,
        gates=gates,
        votes=votes,
        decision=decide(policy, gates, votes),
        bundle=evidence,
        replay_fidelity_level="RF-2",  # a sim panel reproduces its votes
        jurat_version="0.1.0",
    )
    return statement
