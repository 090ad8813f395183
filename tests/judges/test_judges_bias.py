"""The bias monitor's statistics (judges/_bias.py) and the ``[monitor]`` table."""

from __future__ import annotations

import statistics

import pytest

from jurat.campaign import campaign_from_dict
from jurat.errors import JuratError
from jurat.judges import BiasCounts
from jurat.judges._bias import Correlation
from jurat.models import Artifact, MonitorBounds, Vote, policy_digest

_ART = Artifact(id="x", sha256="0" * 64, media_type="text/plain", text="t")


def _eq(judge: str, decision: str | None, k: int) -> Vote:
    if decision is None:
        return Vote(judge=judge, criterion="equivalence", sample=k, error="timeout")
    return Vote(judge=judge, criterion="equivalence", sample=k,
                answer={"decision": decision, "reason": "r"})


def test_correlation_is_pearson_and_merges() -> None:
    xs = [1.0, 2.0, 3.5, 4.0, 7.0, 2.2]
    ys = [2.0, 1.0, 4.0, 3.0, 5.0, 2.5]
    whole, left, right = Correlation(), Correlation(), Correlation()
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        whole = whole.plus(x, y)
        if i < 3:
            left = left.plus(x, y)
        else:
            right = right.plus(x, y)
    assert whole.r == pytest.approx(statistics.correlation(xs, ys))
    assert left.merged(right).r == pytest.approx(whole.r)
    constant = Correlation().plus(1.0, 3.0).plus(2.0, 3.0).plus(3.0, 3.0)
    assert constant.r is None  # no variance in y: no correlation, not 0


def test_always_equivalent_alarm_errors_not_counted() -> None:
    counts = BiasCounts()
    for i in range(25):
        counts.add("equivalence", _ART, [_eq("stuck", "EQUIVALENT", 0),
                                          _eq("fair", "EQUIVALENT" if i % 2 else "DIFFERENT", 0),
                                          _eq("fair", None, 1)])
    stuck, fair = counts.readings(["stuck", "fair"])
    assert stuck.always_equivalent_rate == 1.0
    assert fair.equivalence_answers == 25  # the timeouts are no answer
    bounds = MonitorBounds()
    assert [a.monitor for a in stuck.alarms(bounds)] == ["always-equivalent"]
    assert fair.alarms(bounds) == []
    # Too few answers: shown, no alarm.
    assert stuck.alarms(MonitorBounds(min_votes=26)) == []


def test_rubric_verbosity_correlation() -> None:
    counts = BiasCounts()
    for n in range(1, 31):
        art = Artifact(id=f"a{n}", sha256="0" * 64, media_type="text/plain", text="w " * n * 10)
        score = 1 + min(4, n // 6)  # longer, higher: a taste for length
        counts.add("rubric", art, [Vote(judge="j", criterion="rubric", sample=0, answer={
            "scores": {"correctness": score, "reasoning": score}})])
    (reading,) = counts.readings(["j"])
    assert reading.verbosity.r is not None and reading.verbosity.r > 0.8
    assert [a.monitor for a in reading.alarms(MonitorBounds())] == ["verbosity"]


BASE = {
    "campaign": {"id": "m", "kind": "equivalence", "allowed_destinations": ["stub"]},
    "judges": [{"id": "j", "provider": "stub:always-equivalent"}],
    "artifacts": [{"id": "a", "a": "1", "b": "2"}],
}


def test_monitor_table_is_outside_the_policy_digest() -> None:
    plain = campaign_from_dict(BASE)
    tight = campaign_from_dict({**BASE, "monitor": {"max_always_equivalent": 0.5,
                                                    "min_votes": 5}})
    assert plain.monitor == MonitorBounds()
    assert tight.monitor.max_always_equivalent == 0.5
    assert policy_digest(plain.policy) == policy_digest(tight.policy)


def test_monitor_unknown_key_is_refused() -> None:
    with pytest.raises(JuratError, match="max_first_postion"):
        campaign_from_dict({**BASE, "monitor": {"max_first_postion": 0.7}})
