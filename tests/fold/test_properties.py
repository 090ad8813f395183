"""Hypothesis properties of the fold."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

import jurat
from jurat.fold import decide
from jurat.models import ARCV_SCORE_KEYS as KEYS
from jurat.models import GATE_TESTS_PASS, Kind
from tests.support.builders import SEED_WEIGHTS as W
from tests.support.builders import arcv, criterion_answer, gate, gates, policy, vote

label = st.sampled_from(["yes", "no", "unsure", None])
score = st.integers(min_value=1, max_value=5)


@given(st.lists(label, min_size=1, max_size=15), st.randoms(use_true_random=False),
       st.booleans())
def test_criterion_fold_is_invariant_to_vote_order(
    votes: list[str | None], rnd: random.Random, blocker: bool
) -> None:
    shuffled = list(votes)
    rnd.shuffle(shuffled)
    a = jurat.fold_criterion(votes, blocker=blocker)
    b = jurat.fold_criterion(shuffled, blocker=blocker)
    assert a == b
    assert jurat.stability_gate(a, quorum=0.8) == jurat.stability_gate(b, quorum=0.8)


@given(st.lists(st.sampled_from(["A", "B", "tie", "abstain", None]), min_size=1, max_size=15),
       st.randoms(use_true_random=False))
def test_consensus_is_invariant_to_vote_order(labels: list[str | None], rnd: random.Random) -> None:
    shuffled = list(labels)
    rnd.shuffle(shuffled)
    assert jurat.pairwise_consensus(labels) == jurat.pairwise_consensus(shuffled)


@given(st.lists(label, min_size=1, max_size=15), st.booleans())
def test_an_errored_sample_never_raises_substantive_agreement(
    votes: list[str | None], blocker: bool
) -> None:
    # Agreement behind a yes or no can only fall; the gate never moves toward pass or block.
    before = jurat.fold_criterion(votes, blocker=blocker)
    after = jurat.fold_criterion([*votes, None], blocker=blocker)
    for lab in ("yes", "no"):
        assert after.tally[lab] / after.samples <= before.tally[lab] / before.samples
    if after.verdict in ("yes", "no"):
        assert after.agreement <= before.agreement
    rank = {"block": 2, "pass": 2, "warn": 0}
    if len(votes) > 1:
        g0 = jurat.stability_gate(before, quorum=0.8)
        g1 = jurat.stability_gate(after, quorum=0.8)
        assert g1 == g0 or rank[g1] < rank[g0]


@given(st.lists(st.sampled_from(["A", "B", "tie", "abstain", None]), min_size=1, max_size=15))
def test_an_errored_pairwise_vote_never_raises_agreement(labels: list[str | None]) -> None:
    before = jurat.pairwise_consensus(labels)
    after = jurat.pairwise_consensus([*labels, None])
    assert after.n == before.n and after.missing == before.missing + 1
    assert after.agreement == before.agreement


@given(st.lists(st.tuples(score, score, score, score), min_size=15, max_size=15),
       st.sampled_from(["rubric", "pairwise"]))
def test_failed_required_gate_never_accepts(scores: list[tuple[int, ...]], kind: Kind) -> None:
    p = policy(kind=kind)
    votes = [vote(f"J{i // 5}", i % 5, arcv(s, preference="A"), kind,
                  order="AB" if kind == "pairwise" else None) for i, s in enumerate(scores)]
    assert decide(p, gates(ok=False), votes).disposition == "reject"
    assert decide(p, gates()[:1], votes).disposition != "accept"


@given(st.lists(st.sampled_from(["yes", "no", "unsure"]), min_size=10, max_size=10))
def test_failed_required_gate_never_ships(verdicts: list[str]) -> None:
    p = policy(kind="criteria", judges=1, samples=5)
    votes = [vote("J0", k % 5, criterion_answer(v), "c1" if k < 5 else "c2")
             for k, v in enumerate(verdicts)]
    failed = [gate(GATE_TESTS_PASS, "fail")]
    assert decide(p, failed, votes).rollout == "BLOCK"


@given(st.tuples(score, score, score, score), st.sampled_from(range(4)))
def test_q_is_monotone_in_every_score(scores: tuple[int, ...], idx: int) -> None:
    base = dict(zip(KEYS, scores, strict=True))
    if base[KEYS[idx]] == 5:
        return
    raised = {**base, KEYS[idx]: base[KEYS[idx]] + 1}
    assert jurat.rubric_score(raised, W) > jurat.rubric_score(base, W)


@given(st.lists(st.tuples(score, score, score, score), min_size=15, max_size=15),
       st.randoms(use_true_random=False))
def test_decide_is_invariant_to_vote_list_order(
    scores: list[tuple[int, ...]], rnd: random.Random
) -> None:
    votes = [vote(f"J{i // 5}", i % 5, arcv(s)) for i, s in enumerate(scores)]
    shuffled = list(votes)
    rnd.shuffle(shuffled)
    assert decide(policy(), gates(), votes) == decide(policy(), gates(), shuffled)
