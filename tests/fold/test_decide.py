"""decide(): the whole fold per campaign kind."""

from __future__ import annotations

from typing import Any

import pytest

from jurat.errors import FoldInputError
from jurat.fold import RUBRIC_OPERATOR, decide
from jurat.models import GATE_EQUIVALENCE_DETERMINISTIC, RiskTier, Vote
from tests.support.builders import (
    SEED_Q,
    SEED_RUBRIC,
    SEED_SCORES,
    arcv,
    criterion_answer,
    equivalence_answer,
    gate,
    gates,
    policy,
    vote,
    votes_by_judge,
)

GOOD = arcv(SEED_SCORES)
BAD = arcv((2, 2, 2, 2), "reject")


def rubric_votes(per_judge: list[list[dict[str, Any] | None]]) -> list[Vote]:
    """Judge Jj's samples are per_judge[j]; None is a timed-out sample."""
    return votes_by_judge({f"J{j}": answers for j, answers in enumerate(per_judge)})


def test_rubric_accepts_with_three_agreeing_judges() -> None:
    d = decide(policy(), gates(), rubric_votes([[GOOD] * 5] * 3))
    assert d.disposition == "accept"
    assert d.q == SEED_Q and d.q_bp == 8625
    assert d.independent_votes == 3 and d.samples == 15 and d.valid_samples == 15
    assert d.agreement_votes == "3/3"
    assert d.aggregation == RUBRIC_OPERATOR


def test_failed_required_test_vetoes_unanimous_accept() -> None:
    d = decide(policy(), gates(ok=False), rubric_votes([[GOOD] * 5] * 3))
    assert d.disposition == "reject"
    assert d.gates_failed == ("tests.pass",)
    assert "veto" in d.reasons[0]


def test_missing_required_gate_escalates_never_accepts() -> None:
    d = decide(policy(), gates()[:1], rubric_votes([[GOOD] * 5] * 3))
    assert d.disposition == "escalate"


def test_too_few_valid_votes_escalates() -> None:
    # Two judges all errors: only one substantive judge of the three the tier needs.
    d = decide(policy(), gates(), rubric_votes([[GOOD] * 5, [None] * 5, [None] * 5]))
    assert d.disposition == "escalate"
    assert d.independent_votes == 1
    assert "too few independent votes" in d.reasons[0]


def test_samples_of_one_judge_are_not_independent_votes() -> None:
    d = decide(policy(judges=1, samples=15), gates(), rubric_votes([[GOOD] * 15]))
    assert d.disposition == "escalate"
    assert d.independent_votes == 1 and d.samples == 15


def test_declared_tier_with_one_vote() -> None:
    p = policy(judges=1, tier=RiskTier(votes=1, min_agreement=1.0))
    assert decide(p, gates(), rubric_votes([[GOOD] * 5])).disposition == "accept"
    assert decide(p, gates(), rubric_votes([[BAD] * 5])).disposition == "reject"


def test_minimum_per_criterion_blocks_style_compensation() -> None:
    lenient = SEED_RUBRIC.model_copy(update={"threshold": 0.6})
    style = arcv((2, 5, 5, 5))  # Q = 0.6625 clears 0.6, but correctness 2 < minimum 3
    d = decide(policy(rubric=lenient), gates(), rubric_votes([[style] * 5] * 3))
    assert d.q == 0.6625
    assert d.disposition == "reject"
    assert "minimum" in d.reasons[0] and "correctness" in d.reasons[0]


def test_disagreeing_judges_escalate_under_elevated_tier() -> None:
    p = policy(judges=5, tier="elevated")
    d = decide(p, gates(), rubric_votes([[GOOD] * 5] * 3 + [[BAD] * 5] * 2))
    assert d.disposition == "escalate"
    assert d.agreement_votes == "3/5"


def test_critical_tier_needs_adjudication() -> None:
    p = policy(judges=5, tier="critical")
    d = decide(p, gates(), rubric_votes([[GOOD] * 5] * 5))
    assert d.disposition == "escalate"
    assert "adjudication" in d.reasons[0]


def test_missing_samples_count_as_errors() -> None:
    # Only 1 of 5 samples recorded per judge: below min_valid_fraction, no substantive vote.
    d = decide(policy(), gates(), rubric_votes([[GOOD]] * 3))
    assert d.disposition == "escalate"
    assert d.samples == 15


def test_pairwise_restores_canonical_order() -> None:
    p = policy(kind="pairwise", judges=3, samples=2)
    votes = []
    for j in range(3):
        # Presented BA and the judge preferred the first shown (B) → canonical B.
        votes.append(vote(f"J{j}", 0, arcv((4, 4, 4, 4), preference="A"), "pairwise", order="BA"))
        votes.append(vote(f"J{j}", 1, arcv((4, 4, 4, 4), preference="B"), "pairwise", order="AB"))
    d = decide(p, gates(), votes)
    assert d.label == "B" and d.disposition == "accept"
    assert d.agreement == 1.0 and d.entropy == 0.0


def test_pairwise_a_a_b_passes_standard_tier_but_gate_failure_blocks() -> None:
    p = policy(kind="pairwise", judges=3, samples=1)
    prefs = ["A", "A", "B"]
    votes = [vote(f"J{j}", 0, arcv((4, 4, 4, 4), preference=x), "pairwise", order="AB")
             for j, x in enumerate(prefs)]
    d = decide(p, gates(), votes)
    assert d.disposition == "accept" and d.label == "A" and d.agreement_votes == "2/3"
    assert decide(p, gates(ok=False), votes).disposition == "reject"


def test_pairwise_a_b_tie_escalates() -> None:
    p = policy(kind="pairwise", judges=3, samples=1)
    votes = [vote(f"J{j}", 0, arcv((4, 4, 4, 4), preference=x), "pairwise", order="AB")
             for j, x in enumerate(["A", "B", "tie"])]
    d = decide(p, gates(), votes)
    assert d.disposition == "escalate" and d.label is None


def test_criteria_stability_and_rollout() -> None:
    p = policy(kind="criteria", judges=1, samples=5, rubric=None)
    votes = [vote("J0", k, criterion_answer("no"), "c1") for k in range(5)]
    votes += [vote("J0", k, criterion_answer("yes"), "c2") for k in range(5)]
    d = decide(p, [], votes)
    assert d.rollout == "BLOCK"
    assert d.stability == {"min_blocker_agreement": 0.8, "unstable_blocker_failures": 0}
    assert d.criteria[0].sample_verdicts == ("no",) * 5


def test_criteria_unstable_blocker_warns() -> None:
    p = policy(kind="criteria", judges=1, samples=5)
    answers = ["no", "no", "no", "yes", "yes"]
    votes = [vote("J0", k, criterion_answer(a), "c1") for k, a in enumerate(answers)]
    votes += [vote("J0", k, criterion_answer("yes"), "c2") for k in range(5)]
    d = decide(p, [], votes)
    assert d.rollout == "WARN"
    assert d.stability is not None and d.stability["unstable_blocker_failures"] == 1


def test_criteria_single_sample_has_no_stability_object() -> None:
    p = policy(kind="criteria", judges=1, samples=1)
    votes = [vote("J0", 0, criterion_answer("yes"), c) for c in ("c1", "c2")]
    d = decide(p, [], votes)
    assert d.rollout == "SHIP" and d.stability is None


def test_equivalence_deterministic_gate_overrides_judges() -> None:
    p = policy(kind="equivalence", judges=1, samples=1)
    det = gate(GATE_EQUIVALENCE_DETERMINISTIC, "fail", required=False, tool="math-verify")
    votes = [vote("J0", 0, equivalence_answer("EQUIVALENT"), "equivalence")]
    d = decide(p, [det], votes)
    assert d.equivalent is False and d.equivalence_settled


def test_equivalence_judge_multivote() -> None:
    p = policy(kind="equivalence", judges=1, samples=3)
    dec = ["EQUIVALENT", "EQUIVALENT", "DIFFERENT"]
    votes = [vote("J0", k, equivalence_answer(x), "equivalence") for k, x in enumerate(dec)]
    assert decide(p, [], votes).equivalent is None  # min_agreement = 3
    votes = [vote("J0", k, equivalence_answer("EQUIVALENT"), "equivalence") for k in range(3)]
    assert decide(p, [], votes).equivalent is True


def test_vote_from_unknown_judge_is_refused() -> None:
    with pytest.raises(FoldInputError, match="votes\\[0\\].judge"):
        decide(policy(), gates(), [vote("intruder", 0, GOOD)])


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(FoldInputError, match="fold_rule"):
        decide(policy(), gates(), [], rule="jurat.fold/v0")


def test_split_vote_is_escalated_whatever_the_hash_seed() -> None:
    p = policy(judges=2, tier=RiskTier(votes=2, min_agreement=0.5))
    d = decide(p, gates(), rubric_votes([[GOOD] * 5, [BAD] * 5]))
    assert d.disposition == "escalate" and "no majority" in d.reasons[0]


def test_answer_without_scores_is_a_fold_input_error() -> None:
    broken = {k: v for k, v in GOOD.items() if k != "scores"}
    with pytest.raises(FoldInputError, match="scores"):
        decide(policy(), gates(), rubric_votes([[broken] * 5] * 3))
