"""The engine with ``[criteria] curtail = true``: it stops each (judge, criterion) once the
drawn samples settle it, never redraws a recorded sample, and the fold's decision is the one
drawing all N gives (docs/receipt-format.md §8.5)."""

from __future__ import annotations

from typing import Any

from jurat.fold import decide
from jurat.judges import Engine, run_samples
from jurat.models import EvidenceBundle, Policy, Vote
from tests.support.builders import artifact, criteria_suite, gates, judge, policy

EMPTY = EvidenceBundle()


def _policy(*, curtail: bool, **sim: Any) -> Policy:
    judges = tuple(judge(n, "sim", seed=i, **sim) for i, n in enumerate("AB"))
    suite = criteria_suite(5, blocker_samples=11).model_copy(update={"curtail": curtail})
    return policy("criteria", judges=judges, criteria=suite)


async def test_curtailed_draws_are_a_prefix_and_decide_alike(engine: Engine) -> None:
    for i, truth in enumerate(("yes", "no")):
        art = artifact(f"answer {i}", id=f"a{i}", truth={"c1": truth, "c2": truth})
        full_policy, cut_policy = _policy(curtail=False), _policy(curtail=True)
        full = await run_samples(full_policy, art, EMPTY, gates(), engine=engine)
        cut = await run_samples(cut_policy, art, EMPTY, gates(), engine=engine)
        assert len(full) == 2 * (11 + 5) and len(cut) < len(full)
        # sim answers depend on the sample index only: the curtailed draws are the same votes
        key = {(v.judge, v.criterion, v.sample): v.answer for v in full}
        assert all(key[(v.judge, v.criterion, v.sample)] == v.answer for v in cut)
        d_full = decide(full_policy, gates(), full)
        d_cut = decide(cut_policy, gates(), cut)
        assert d_cut.rollout == d_full.rollout
        assert [(c.verdict, c.gate) for c in d_cut.criteria] == [
            (c.verdict, c.gate) for c in d_full.criteria]
        assert d_cut.curtailment == {"rule": "jurat.curtail/v1", "planned": 32,
                                     "drawn": len(cut)}


async def test_resume_counts_recorded_samples_and_never_redraws_them(engine: Engine) -> None:
    art = artifact("resume", id="r", truth={"c1": "yes", "c2": "yes"})
    pol = _policy(curtail=True)
    first = await run_samples(pol, art, EMPTY, gates(), engine=engine)
    seen: list[Vote] = []
    again = await run_samples(pol, art, EMPTY, gates(), existing=first[:3], engine=engine,
                              on_vote=seen.append)
    assert [(v.judge, v.criterion, v.sample) for v in again] == [
        (v.judge, v.criterion, v.sample) for v in first]
    assert len(seen) == len(first) - 3  # the three recorded ones were not drawn again


async def test_errors_count_as_unsure_while_curtailing(engine: Engine) -> None:
    art = artifact("errors", id="e", truth={"c1": "no", "c2": "yes"})
    noisy = {"error_rate": 0.3, "retries": 0}
    full_policy, cut_policy = _policy(curtail=False, **noisy), _policy(curtail=True, **noisy)
    full = await run_samples(full_policy, art, EMPTY, gates(), engine=engine)
    cut = await run_samples(cut_policy, art, EMPTY, gates(), engine=engine)
    assert any(v.error for v in full)
    assert decide(cut_policy, gates(), cut).rollout == decide(full_policy, gates(), full).rollout
