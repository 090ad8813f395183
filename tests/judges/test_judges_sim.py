"""The sim panel reproduces its declared statistics and passes the same validation as a model."""

from __future__ import annotations

from collections import Counter

import pytest
from scipy.stats import binom

from jurat.errors import ConfigError
from jurat.fold import (
    canonical_preference,
    decide,
    false_block_probability,
    fold_criterion,
    stability_gate,
)
from jurat.judges import Engine, SimJudge, run_samples, sim_label
from jurat.models import Criterion, EvidenceBundle, JudgeConfig
from tests.support.builders import artifact, criteria_suite, gates, judge, pair, policy
from tests.support.clock import FakeClock

ITEMS = 20_000
N, QUORUM, RELIABILITY = 5, 0.8, 0.85
EMPTY = EvidenceBundle()


def false_blocks(config: JudgeConfig) -> int:
    """Items whose truly passing blocker criterion is blocked by N = 5 votes at quorum 0.8."""
    blocks = 0
    for i in range(ITEMS):
        item = f"{i:064x}"
        votes = [sim_label(config, item, "blocker", k, "criterion", "yes") for k in range(N)]
        blocks += stability_gate(fold_criterion(votes, blocker=True), quorum=QUORUM) == "block"
    return blocks


def test_false_block_rate_matches_the_binomial_and_correlation_raises_it() -> None:
    expected = false_block_probability(N, QUORUM, 1 - RELIABILITY)
    assert round(expected, 4) == 0.0022  # seed 001: "the binomial majority-error ~ 0.0022"
    low, high = binom.interval(0.99, ITEMS, expected)
    independent = false_blocks(judge("S", seed=11, reliability=RELIABILITY))
    correlated = false_blocks(judge("S", seed=11, reliability=RELIABILITY, correlation=0.1))
    print(
        f"\nfalse-block rate over {ITEMS} items: independent {independent / ITEMS:.4f} "
        f"({independent} blocks), correlation 0.1 {correlated / ITEMS:.4f} ({correlated} blocks); "
        f"binomial {expected:.4f}, 99% interval [{low / ITEMS:.4f}, {high / ITEMS:.4f}]"
    )
    assert low <= independent <= high
    assert correlated > high
    # with correlation rho, P(block) = rho * (1 - r) + (1 - rho) * binomial value
    predicted = 0.1 * (1 - RELIABILITY) + 0.9 * expected
    low_c, high_c = binom.interval(0.99, ITEMS, predicted)
    assert low_c <= correlated <= high_c


def test_declared_reliability_and_correlation_are_what_samples_show() -> None:
    config = judge("S", seed=3, reliability=0.7, correlation=0.5)
    right = Counter[bool]()
    both_wrong = 0
    pairs = 4000
    for i in range(pairs):
        a, b = (sim_label(config, f"i{i}", "c", k, "criterion", "yes") for k in range(2))
        right[a == "yes"] += 1
        right[b == "yes"] += 1
        both_wrong += a == b == "no"
    share = right[True] / (2 * pairs)
    assert 0.68 <= share <= 0.72
    # corr = rho: P(both wrong) = rho (1 - r) + (1 - rho) (1 - r)^2 = 0.5*0.3 + 0.5*0.09 = 0.195
    assert 0.175 <= both_wrong / pairs <= 0.215


def test_draws_do_not_depend_on_order_or_repetition() -> None:
    config = judge("S", seed=9, reliability=0.6)
    forward = [sim_label(config, "x", "c", k, "pairwise", "A") for k in range(50)]
    backward = [sim_label(config, "x", "c", k, "pairwise", "A") for k in reversed(range(50))]
    assert forward == backward[::-1]
    assert set(forward) == {"A", "B", "tie"}
    other_seed = [
        sim_label(config.model_copy(update={"seed": 10}), "x", "c", k, "pairwise", "A")
        for k in range(50)
    ]
    assert other_seed != forward


async def test_sim_votes_are_reproducible_through_the_engine() -> None:
    pol = policy("rubric", judges=judge(samples=7, seed=4, reliability=0.6))
    art = artifact(truth="accept")
    first = await run_samples(pol, art, EMPTY, gates(), engine=Engine())
    second = await run_samples(pol, art, EMPTY, gates(), engine=Engine())
    strip = [v.model_copy(update={"latency_ms": 0, "dispatch_ms": 0}) for v in first]
    assert strip == [v.model_copy(update={"latency_ms": 0, "dispatch_ms": 0}) for v in second]
    assert {v.answer["disposition"] for v in first if v.answer} == {"accept", "reject"}


async def test_sim_never_accepts_over_failed_gates() -> None:
    pol = policy("rubric", judges=judge(samples=20, reliability=1.0))
    votes = await run_samples(pol, artifact(truth="accept"), EMPTY, gates(False), engine=Engine())
    assert all(v.error is None for v in votes)
    assert {v.answer["disposition"] for v in votes if v.answer} == {"reject"}
    assert {v.answer["hard_gates_pass"] for v in votes if v.answer} == {False}
    assert decide(pol, gates(False), votes).disposition == "reject"


async def test_sim_pairwise_answers_in_presented_order_and_maps_back() -> None:
    pol = policy("pairwise", judges=judge(samples=30, reliability=1.0, seed=2))
    votes = await run_samples(pol, pair("x", "y", truth="B"), EMPTY, gates(), engine=Engine())
    presented = {v.order: v.answer["preference"] for v in votes if v.answer}
    assert presented == {"AB": "B", "BA": "A"}
    assert {canonical_preference(v) for v in votes} == {"B"}


async def test_sim_criteria_read_truth_per_criterion() -> None:
    pol = policy("criteria", judges=judge(reliability=1.0))
    art = artifact(truth={"c1": "yes", "c2": "no"})  # c1 is the blocker
    votes = await run_samples(pol, art, EMPTY, (), engine=Engine())
    by = {(v.criterion, v.answer["verdict"]) for v in votes if v.answer}
    assert by == {("c1", "yes"), ("c2", "no")}
    assert decide(pol, (), votes).rollout == "WARN"


async def test_sim_equivalence_and_missing_truth() -> None:
    pol = policy("equivalence", judges=judge(reliability=1.0), samples=3)
    votes = await run_samples(pol, pair("1", "2", truth="different"), EMPTY, (), engine=Engine())
    assert {v.answer["decision"] for v in votes if v.answer} == {"DIFFERENT"}
    # no truth: a seeded latent label, the same for every sample at reliability 1
    untold = await run_samples(pol, pair("3", "4"), EMPTY, (), engine=Engine())
    assert len({v.answer["decision"] for v in untold if v.answer}) == 1


async def test_sim_error_and_malformed_rates() -> None:
    suite = criteria_suite(100, items=[Criterion(id=f"c{i}", text="?") for i in range(4)])
    config = judge(error_rate=0.3, malformed_rate=0.1, retries=0)
    votes = await run_samples(
        policy("criteria", judges=config, criteria=suite),
        artifact(truth="yes"),
        EMPTY,
        (),
        engine=Engine(),
    )
    kinds = Counter(v.error for v in votes)
    assert 0.25 <= kinds["http_5xx"] / 400 <= 0.35
    assert 0.04 <= kinds["malformed_json"] / 400 <= 0.10  # 10% of the samples that got through
    assert set(kinds) == {None, "http_5xx", "malformed_json"}
    retried = await run_samples(
        policy("criteria", judges=config.model_copy(update={"retries": 5}), criteria=suite),
        artifact(truth="yes"),
        EMPTY,
        (),
        engine=Engine(backoff_s=0.0001, backoff_max_s=0.0001),
    )
    assert len(retried) == 400
    assert Counter(v.error for v in retried)["http_5xx"] <= 2
    assert max(v.attempts for v in retried) > 1


async def test_a_truth_label_of_the_wrong_kind_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a rubric label"):
        await run_samples(
            policy("rubric", judges=judge()), artifact(truth="yes"), EMPTY, gates(), engine=Engine()
        )


async def test_sim_latency_is_simulated() -> None:
    clock = FakeClock()
    engine = Engine(factory=lambda config: SimJudge(config, sleep=clock.sleep))
    pol = policy("rubric", judges=judge(samples=4, latency_ms=80))
    votes = await run_samples(pol, artifact(truth="reject"), EMPTY, gates(), engine=engine,
                              clock=clock)
    assert clock.slept == [0.08] * 4  # every call waits the declared latency, once
    assert [v.latency_ms for v in votes] == [80] * 4


async def test_the_engine_path_draws_exactly_what_sim_label_says() -> None:
    """The 20,000-item statistic uses sim_label directly; the adapter must agree with it."""
    config = judge(seed=11, reliability=RELIABILITY, correlation=0.1)
    suite = criteria_suite(N, items=[Criterion(id="blocker", blocker=True)])
    pol = policy("criteria", judges=config, criteria=suite)
    engine = Engine()
    for i in range(150):
        art = artifact(f"output {i}", truth="yes")
        votes = await run_samples(pol, art, EMPTY, (), engine=engine)
        expected = [
            sim_label(config, art.sha256, "blocker", k, "criterion", "yes") for k in range(N)
        ]
        assert [v.answer["verdict"] if v.answer else None for v in votes] == expected
