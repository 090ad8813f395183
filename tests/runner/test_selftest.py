"""`jurat selftest`: negative controls (seed 002 §6), canaries and the bias monitor."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jurat.runner._selftest import selftest_judge
from tests.support.builders import judge

from ._support import QUICKSTART, jurat


def _by_name(provider: str) -> dict[str, bool]:
    config = judge(provider, provider, samples=5, seed=3, reliability=0.95)
    return {c.name: c.ok for c in asyncio.run(selftest_judge(config))}


def test_reliable_sim_judge_passes_every_control() -> None:
    results = _by_name("sim")
    assert len(results) >= 10
    assert all(results.values()), results


def test_always_equivalent_stub_is_flagged() -> None:
    results = _by_name("stub:always-equivalent")
    assert results["identity → EQUIVALENT"] is True
    assert results["mismatch → DIFFERENT"] is False
    assert results["missing/non-numeric → ABSTAIN"] is False
    assert results["bias: always-equivalent"] is False


def test_always_accept_stub_is_flagged() -> None:
    results = _by_name("stub:always-accept")
    assert results["canary: correct code accepted"] is True
    assert results["bias: always-accept (broken code)"] is False


@pytest.mark.parametrize("stub", ["stub:always-different", "stub:always-abstain",
                                  "stub:parse-error", "stub:raising"])
def test_degenerate_equivalence_stubs_fail_controls(stub: str) -> None:
    results = _by_name(stub)
    assert not all(results.values()), results


def test_numeric_simulated_stub_passes_the_equivalence_controls() -> None:
    results = _by_name("stub:numeric-simulated")
    assert results["identity → EQUIVALENT"] and results["mismatch → DIFFERENT"]


def test_cli_exit_codes(tmp_path: Path) -> None:
    ok = jurat("selftest", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "all applicable controls pass" in ok.stdout
    bad = jurat("selftest", "--judge", "stub:always-equivalent", cwd=tmp_path)
    assert bad.returncode == 1
    assert "FAIL" in bad.stdout
    panel = jurat("selftest", str(QUICKSTART / "rubric" / "campaign.toml"), cwd=tmp_path)
    assert panel.returncode in (0, 1)
    for name in ("sim-a", "sim-b", "sim-c"):
        assert name in panel.stdout
