"""The suite gate against decision counts (issue 29): exact rates, every bound checked,
a rate over no artifact never holds."""

from __future__ import annotations

import pytest

from jurat.fold import suite_gate
from jurat.models._suite_gate import SuiteGate


def test_seven_of_ten_meets_point_seven_exactly() -> None:
    result = suite_gate(SuiteGate(min_ship_rate=0.7), "criteria",
                        {"SHIP": 7, "WARN": 2, "BLOCK": 1}, 10)
    assert result.holds
    assert (result.ship, result.warn, result.block) == (7, 2, 1)
    assert result.text() == "suite gate holds: min_ship_rate = 0.7: ship rate 0.70 holds"


def test_every_declared_bound_must_hold() -> None:
    gate = SuiteGate(min_ship_rate=0.5, max_block=0, max_warn=5)
    result = suite_gate(gate, "rubric", {"accept": 3, "escalate": 0, "reject": 1}, 4)
    assert [(c.bound, c.holds) for c in result.checks] == [
        ("min_ship_rate", True), ("max_block", False), ("max_warn", True)]
    assert not result.holds
    assert "max_block = 0: 1 blocked FAILS" in result.text()


def test_no_artifact_is_no_evidence() -> None:
    result = suite_gate(SuiteGate(min_ship_rate=0.0), "criteria", {}, 0)
    assert not result.holds
    assert result.checks[0].value is None


def test_a_kind_without_ship_words_has_no_gate() -> None:
    with pytest.raises(KeyError):
        suite_gate(SuiteGate(max_block=0), "equivalence", {}, 1)
