"""The run's exit status (issue 27): a bias alarm needs a person, so a run whose decisions
alone would exit 0 exits 1 and says why; without an alarm the decisions decide."""

from __future__ import annotations

from types import SimpleNamespace

from jurat.cli._exit import ExitCode
from jurat.cli._run import _status
from jurat.judges._bias import BiasReading
from jurat.judges._order import OrderReversal
from jurat.models import MonitorBounds

BOUNDS = MonitorBounds()


def _tally(readings: list[BiasReading]) -> SimpleNamespace:
    return SimpleNamespace(decisions=[], bias_readings=lambda: readings)


def test_a_bias_alarm_turns_an_all_clear_run_into_exit_1() -> None:
    biased = BiasReading(judge="first", order=OrderReversal(first_position=40, ab_answers=40))
    assert biased.alarms(BOUNDS), "the reading is outside the default bounds"
    code, why = _status(_tally([biased]), [], BOUNDS)  # type: ignore[arg-type]
    assert code == ExitCode.ESCALATE
    assert "1 bias alarm (above)" in why and "decisions alone would exit 0" in why


def test_without_an_alarm_the_decisions_decide() -> None:
    fair = BiasReading(judge="fair", order=OrderReversal(first_position=20, ab_answers=40))
    assert not fair.alarms(BOUNDS)
    code, _ = _status(_tally([fair]), [], BOUNDS)  # type: ignore[arg-type]
    assert code == ExitCode.OK
