"""Build realistic receipt statements for the report tests, one campaign per kind.

Decisions come from the real fold (``jurat.decide``) over the votes built here, and the
statements from ``jurat.receipts.build_statement``, so they are what ``jurat run`` would
sign, minus the signature. Policies, judges, gates, answers and votes come from
``tests/support/builders.py``; this module adds the campaigns' shapes and the review fields
a re-review writes. Some votes keep a judge's ``explanation`` text and some gates a detail
without ``data.reference``, as receipts written by earlier jurat versions do (they still
verify: docs/receipt-format.md §6.5, §6.7, §11.2).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

from jurat.canonical import canonical_json
from jurat.fold import decide
from jurat.models import (
    GATE_EQUIVALENCE_DETERMINISTIC,
    GATE_PYTHON_IMPORTS,
    GATE_PYTHON_PARSE,
    GATE_TESTS_PASS,
    Criterion,
    EquivalencePolicy,
    GateOutcome,
    Policy,
    Vote,
)
from jurat.receipts import build_statement, replay_fidelity_level_for
from tests.support.builders import (
    arcv,
    artifact,
    criteria_suite,
    criterion_answer,
    equivalence_answer,
    evidence,
    gate,
    gates,
    panel,
    policy,
    vote,
)

SCRIPT = "<script>alert('pwned')</script>"
PRICE: dict[str, Any] = {"price_in_per_mtok": 0.27, "price_out_per_mtok": 1.10}


def _recorded(judge: str, criterion: str, k: int, t: int, *, errored: bool) -> dict[str, Any]:
    """What the engine records beside an answer, varied by the dispatch slot ``t``."""
    return {
        "returned_model": f"sim-{judge.lower()}",
        "usage": {} if errored else {"input_tokens": 1200 + 10 * k, "output_tokens": 240},
        "dispatch_ms": 5 * t,
        "latency_ms": 300 + (37 * t) % 200,
        "prompt_id": f"jurat/{criterion}@1",
    }


def statement(
    campaign: Policy,
    artifact_id: str,
    outcomes: list[GateOutcome],
    votes: list[Vote],
    *,
    version: int = 1,
    supersedes: str | None = None,
    judges_skipped: str | None = None,
) -> dict[str, Any]:
    """The in-toto Statement v1 with the jurat decision predicate, as ``jurat run`` signs it
    (``build_statement``: the real fold's decision, checked as a verifier reads it)."""
    inputs: dict[str, Any] = {"task": "t1", "contributor": None}
    if judges_skipped is not None:
        inputs["judges_skipped"] = judges_skipped
    return build_statement(
        policy=campaign,
        artifact=artifact(f"# {artifact_id}\n", id=artifact_id),
        gates=outcomes,
        votes=votes,
        decision=decide(campaign, outcomes, votes),
        bundle=evidence(),
        inputs=inputs,
        review_version=version,
        supersedes=supersedes,
        replay_fidelity_level=replay_fidelity_level_for(campaign),
        jurat_version="0.1.0",
    )


def parse_failure() -> list[GateOutcome]:
    """A candidate that does not parse: the gates it made skip sort before it by id."""
    return [
        gate(GATE_PYTHON_PARSE, "fail", tool="python-ast", tool_version="3.11.7",
             detail="SyntaxError at line 1, column 15: '(' was never closed",
             data={"line": 1, "column": 15, "message": "'(' was never closed"}),
        gate(GATE_PYTHON_IMPORTS, "skip", detail="python.parse failed"),
        gate(GATE_TESTS_PASS, "skip", tool="pytest", detail="python.parse failed"),
    ]


def rubric_statements() -> list[dict[str, Any]]:
    """3 judges x 5 samples: one accept (with an errored sample and a hostile explanation),
    one rejected by a failed required gate with the judges' votes recorded (as receipts did
    before judges were skipped on a veto), one that does not parse (judges not asked), one
    escalated then reviewed again."""
    rubric = policy(id="review-2026", judges=panel("ABC", samples=5, **PRICE))
    passing = gates()
    good, split, t = [], [], 0
    for j in "ABC":
        for k in range(5):
            t += 1
            hostile: dict[str, Any] = (
                {"explanation": f"Looks right. {SCRIPT}"} if (j, k) == ("B", 2) else {}
            )
            errored = (j, k) == ("C", 4)
            good.append(vote(
                j, k, None if errored else arcv((5, 4, 4, 4), **hostile), error="timeout",
                **_recorded(j, "rubric", k, t, errored=errored),
            ))
            scores = (5, 4, 4, 4) if j == "A" else (2, 3, 3, 3) if j == "B" else (4, 4, 3, 4)
            disposition = "accept" if min(scores) >= 4 else "reject"
            split.append(vote(
                j, k, arcv(scores, disposition), **_recorded(j, "rubric", k, t, errored=False)
            ))
    failing = [*passing[:1], gate(
        GATE_TESTS_PASS, "fail", tool="pytest", detail="failed",
        data={"outcome": "failed", "collected": 9, "passed": 7,
              "not_passed": ["test_solution.py::test_empty", "test_solution.py::test_dip"]},
    )]
    first = statement(rubric, "r-split", passing, split)
    return [
        statement(rubric, "r-good", passing, good),
        statement(rubric, "r-gate", failing, good),
        statement(
            rubric, "r-parse", parse_failure(), [],
            judges_skipped="required gate python.parse did not pass (a veto no judge can change)",
        ),
        first,
        statement(
            rubric,
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
    pairwise = policy("pairwise", id="pairs-2026", judges=panel("ABC", samples=6, **PRICE))
    votes, t = [], 0
    for j in "ABC":
        for k in range(6):
            t += 1
            order = "AB" if k % 2 == 0 else "BA"
            presented = "A" if j == "C" else ("B" if order == "AB" else "A")
            answer = arcv((4, 4, 4, 4), preference=presented)
            votes.append(vote(
                j, k, answer, "pairwise", order=order,
                **_recorded(j, "pairwise", k, t, errored=False),
            ))
    return [statement(pairwise, "p-1", gates(), votes)]


def criteria_statements() -> list[dict[str, Any]]:
    """2 judges; blockers at 11 samples, one non-blocker at 5; some samples error out."""
    suite = criteria_suite(5, blocker_samples=11, quorum=0.8, items=(
        Criterion(id="cites-sources", text="Does it cite sources?", blocker=True),
        Criterion(id="cfo-headline", text="Does it lead with the dollar figure?", blocker=True),
        Criterion(id="concise", text="Is it concise?"),
    ))
    criteria = policy("criteria", id="skills-2026", judges="JK", criteria=suite)
    plans: dict[str, dict[str, Sequence[str | None]]] = {
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
    for artifact_id, plan in plans.items():
        votes, t = [], 0
        for j in "JK":
            for criterion, verdicts in plan.items():
                # Judge K answers the same multiset in reverse order: same fold, other path.
                for k, verdict in enumerate(verdicts if j == "J" else verdicts[::-1]):
                    t += 1
                    answer = (
                        None if verdict is None
                        else criterion_answer(verdict, f"Sample {k} of {criterion}.")
                    )
                    votes.append(vote(
                        j, k, answer, criterion, error="rate_limited",
                        **_recorded(j, criterion, k, t, errored=answer is None),
                    ))
        out.append(statement(criteria, artifact_id, [], votes))
    return out


def equivalence_statements() -> list[dict[str, Any]]:
    """One pair settled deterministically (no judge called), one by 3 judge samples."""
    equivalence = policy(
        "equivalence",
        id="gsm8k-eq",
        judges=panel("E", samples=3, **PRICE),
        equivalence=EquivalencePolicy(votes=3, min_agreement=2),
    )
    det = [gate(GATE_EQUIVALENCE_DETERMINISTIC, required=False, tool="math-verify",
                tool_version="0.9.0")]
    skipped = [gate(GATE_EQUIVALENCE_DETERMINISTIC, "skip", required=False, tool="math-verify")]
    answers = ["EQUIVALENT", "EQUIVALENT", "ABSTAIN"]
    votes = [
        vote("E", k, equivalence_answer(d, "Both say 200."), "equivalence",
             **_recorded("E", "equivalence", k, k + 1, errored=False))
        for k, d in enumerate(answers)
    ]
    return [
        statement(equivalence, "e-numeric", det, []),
        statement(equivalence, "e-judged", skipped, votes),
    ]


def all_receipts(out: str = "/tmp/out", key: str = "/tmp/keys/jurat.pub") -> list[dict[str, Any]]:
    """Every kind, as the fields of the ``ReportReceipt`` records render_report takes (the
    statement as its JSON document, which the record parses as the verifier does)."""
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
