"""Exact curtailment (``jurat.curtail/v1``, docs/receipt-format.md §8.5): stopping once the
drawn samples settle a binary criterion never changes its verdict, its gate or the rollout."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jurat.fold import CURTAIL_RULE, decide, fold_criterion, settled, stability_gate
from jurat.models import Vote
from tests.support.builders import criteria_suite, gates, policy, vote

LABELS = st.sampled_from(["yes", "no", "unsure", None])  # None: an errored sample
QUORUMS = st.sampled_from([0.5, 0.6, 2 / 3, 0.7, 0.8, 0.9, 1.0])


def _stop(seq: list[str | None], *, blocker: bool, quorum: float) -> int:
    """The engine's rule: draw in sample order, stop at the first settled prefix."""
    for k in range(1, len(seq) + 1):
        if settled(seq[:k], len(seq), blocker=blocker, quorum=quorum):
            return k
    raise AssertionError("all N samples always settle")


def _votes(item: str, seq: list[str | None]) -> list[Vote]:
    return [
        vote("J0", k, None if v is None else {"verdict": v, "explanation": "checked"}, item,
             error="timeout")
        for k, v in enumerate(seq)
    ]


@settings(max_examples=400, deadline=None)
@given(
    n=st.integers(1, 15),
    data=st.data(),
    quorum=QUORUMS,
)
def test_curtailed_fold_equals_the_full_fold(n: int, data: st.DataObject, quorum: float) -> None:
    blocker_seq = data.draw(st.lists(LABELS, min_size=n, max_size=n))
    other_seq = data.draw(st.lists(LABELS, min_size=n, max_size=n))
    p = policy("criteria", judges=1,
               criteria=criteria_suite(n, quorum=quorum).model_copy(update={"curtail": True}))
    kb = _stop(blocker_seq, blocker=True, quorum=quorum)
    ko = _stop(other_seq, blocker=False, quorum=quorum)
    full = decide(p, gates(), _votes("c1", blocker_seq) + _votes("c2", other_seq))
    cut = decide(p, gates(), _votes("c1", blocker_seq[:kb]) + _votes("c2", other_seq[:ko]))
    assert cut.rollout == full.rollout
    for f, c, k in zip(full.criteria, cut.criteria, (kb, ko), strict=True):
        assert (c.verdict, c.gate) == (f.verdict, f.gate)
        assert c.samples == n
        assert c.drawn == (k if k < n else None)
        assert c.sample_verdicts[k:] == ("undrawn",) * (n - k)
    assert cut.curtailment == {"rule": CURTAIL_RULE, "planned": 2 * n, "drawn": kb + ko}
    assert full.curtailment == {"rule": CURTAIL_RULE, "planned": 2 * n, "drawn": 2 * n}


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 13), data=st.data(), quorum=QUORUMS, blocker=st.booleans())
def test_settled_means_every_completion_agrees(
    n: int, data: st.DataObject, quorum: float, blocker: bool
) -> None:
    k = data.draw(st.integers(1, n))
    prefix = data.draw(st.lists(LABELS, min_size=k, max_size=k))
    rest = data.draw(st.lists(LABELS, min_size=n - k, max_size=n - k))

    def outcome(seq: list[str | None]) -> tuple[str, str]:
        r = fold_criterion(seq, blocker=blocker)
        return r.verdict, stability_gate(r, quorum=quorum)

    if settled(prefix, n, blocker=blocker, quorum=quorum):
        assert outcome(prefix + rest) == outcome(prefix + [None] * (n - k))


def test_seed_001_numbers() -> None:
    # N = 11 blocker at quorum 0.8: 9 "no" block whatever the last two say; 8 do not.
    assert settled(["no"] * 9, 11, blocker=True, quorum=0.8)
    assert not settled(["no"] * 8, 11, blocker=True, quorum=0.8)
    # N = 5: three "yes" are a majority of five whatever follows.
    assert settled(["yes"] * 3, 5, blocker=False, quorum=0.8)
    assert not settled(["yes", "yes", None], 5, blocker=False, quorum=0.8)


def test_a_gap_or_an_unsettled_prefix_is_missing_not_curtailed() -> None:
    p = policy("criteria", judges=1,
               criteria=criteria_suite(5).model_copy(update={"curtail": True}))
    yes = {"verdict": "yes", "explanation": "checked"}
    gap = [vote("J0", k, yes, "c2") for k in (0, 1, 3)]
    d = decide(p, gates(), gap)
    c2 = d.criteria[1]
    assert c2.drawn is None and c2.sample_verdicts[-2:] == ("error:missing", "error:missing")
    short = [vote("J0", k, yes, "c2") for k in (0, 1)]
    assert decide(p, gates(), short).criteria[1].drawn is None


def _every_filling_agrees(tally: tuple[int, int, int], rest: int, blocker: bool,
                          quorum: float) -> bool:
    yes, no, unsure = tally
    seen = set()
    for a in range(rest + 1):
        for b in range(rest + 1 - a):
            r = fold_criterion(["yes"] * (yes + a) + ["no"] * (no + b)
                               + [None] * (unsure + rest - a - b), blocker=blocker)
            seen.add((r.verdict, stability_gate(r, quorum=quorum)))
    return len(seen) == 1


def test_the_corner_check_is_the_every_filling_rule_exhaustively() -> None:
    # settled() checks three corner fillings; the doc (§8.5) defines it over every filling.
    for n in range(1, 13):
        for k in range(1, n + 1):
            for yes in range(k + 1):
                for no in range(k + 1 - yes):
                    prefix = ["yes"] * yes + ["no"] * no + [None] * (k - yes - no)
                    for blocker in (True, False):
                        for quorum in (0.5, 2 / 3, 0.8, 1.0):
                            assert settled(prefix, n, blocker=blocker, quorum=quorum) == (
                                _every_filling_agrees((yes, no, k - yes - no), n - k,
                                                      blocker, quorum)), (prefix, n)
