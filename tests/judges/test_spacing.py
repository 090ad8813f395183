"""Spaced dispatch (``[[judges]] spacing_ms``): one item's samples are sent apart, other
groups are not held back, and the spacing is part of the policy digest.

Times are a FakeClock's: the engine sleeps on it and the samples' ``dispatch_ms`` are read
from it, so nothing here depends on the wall clock.
"""

from __future__ import annotations

from jurat.judges import Engine, run_samples
from jurat.models import EvidenceBundle, Vote, policy_digest
from tests.support.builders import artifact, criteria_suite, gates, judge, policy
from tests.support.clock import FakeClock

ART = artifact()
EMPTY = EvidenceBundle()


async def _votes(pol: object, clock: FakeClock, **kwargs: object) -> list[Vote]:
    engine = Engine(sleep=clock.sleep)
    try:
        return await run_samples(pol, ART, EMPTY, gates(), engine=engine,  # type: ignore[arg-type]
                                 clock=clock, **kwargs)  # type: ignore[arg-type]
    finally:
        await engine.aclose()


def _times(votes: list[Vote], judge_id: str, criterion: str) -> list[int]:
    own = sorted((v for v in votes if v.judge == judge_id and v.criterion == criterion),
                 key=lambda v: v.sample)
    return [v.dispatch_ms for v in own]


async def test_one_items_samples_are_dispatched_at_least_spacing_apart() -> None:
    clock = FakeClock()
    votes = await _votes(policy("rubric", judges=judge(samples=4, spacing_ms=250)), clock)
    times = _times(votes, "A", "rubric")
    assert len(times) == 4
    assert all(b - a >= 250 for a, b in zip(times, times[1:], strict=False)), times
    assert clock.slept == [0.25, 0.25, 0.25]


async def test_without_spacing_the_samples_go_in_one_burst() -> None:
    clock = FakeClock()
    votes = await _votes(policy("rubric", judges=judge(samples=4)), clock)
    assert _times(votes, "A", "rubric") == [0, 0, 0, 0]
    assert clock.slept == []


async def test_the_call_can_override_the_judges_spacing_either_way() -> None:
    # ``spacing_ms`` of the dispatch call wins: 0 is a burst, a number spaces every judge.
    burst = FakeClock()
    votes = await _votes(policy("rubric", judges=judge(samples=3, spacing_ms=250)), burst,
                         spacing_ms=0)
    assert _times(votes, "A", "rubric") == [0, 0, 0]
    spaced = FakeClock()
    votes = await _votes(policy("rubric", judges=judge(samples=3)), spaced, spacing_ms=100)
    times = _times(votes, "A", "rubric")
    assert all(b - a >= 100 for a, b in zip(times, times[1:], strict=False)), times


async def test_spacing_is_per_judge_and_criterion_not_a_global_throttle() -> None:
    # Two judges × two criteria × 3 samples, 200 ms apart within each group: each group
    # waits before its 2nd and 3rd samples only (8 waits), where a global throttle would
    # wait before each of the 11 sends after the first. (The FakeClock adds every sleeper's
    # wait to one time line, so the groups' times are not compared with each other.)
    clock = FakeClock()
    pol = policy("criteria", judges=(judge("A", samples=3, spacing_ms=200),
                                     judge("B", samples=3, spacing_ms=200)),
                 criteria=criteria_suite(3))
    votes = await _votes(pol, clock)
    assert len(votes) == 12
    for judge_id in ("A", "B"):
        for criterion in ("c1", "c2"):
            times = _times(votes, judge_id, criterion)
            assert len(times) == 3
            assert all(b - a >= 200 for a, b in zip(times, times[1:], strict=False)), times
    assert len(clock.slept) == 8


def test_spacing_is_in_the_policy_digest_and_absent_when_unset() -> None:
    plain = policy("rubric", judges=judge(samples=3))
    spaced = policy("rubric", judges=judge(samples=3, spacing_ms=250))
    assert policy_digest(plain) != policy_digest(spaced)
    assert "spacing_ms" not in plain.judges[0].model_dump()
    assert spaced.judges[0].model_dump()["spacing_ms"] == 250
