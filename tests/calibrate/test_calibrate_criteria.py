"""Criteria campaigns against per-row gold (issue 31): one rater per (judge, criterion).

Gold gives each artifact's expected verdict, as ``truth`` does: one ``yes``/``no`` for
every criterion, or an object per criterion id. A sim judge at reliability 1 answers the
truth every time (kappa 1 on each criterion); ``stub:always-yes`` says yes to everything
and is flagged on both criteria (exit 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat.cli import ExitCode
from tests.calibrate._campaign import calibrate_json, run_campaign
from tests.support.cli import isolate_homes

CAMPAIGN = """\
[campaign]
id = "criteria-gold"
kind = "criteria"
allowed_destinations = ["sim", "stub"]

[criteria]
samples = 1
blocker_samples = 3
items = [
  {{ id = "correct", text = "Is the final answer correct?", blocker = true }},
  {{ id = "tidy", text = "Is the working laid out step by step?" }},
]

{judges}

[[datasets]]
path = "pairs.jsonl"
"""
SIM = '[[judges]]\nid = "sim-1"\nprovider = "sim"\nreliability = 1.0\nseed = 1\nsamples = 1\n'
YES = '[[judges]]\nid = "yes-man"\nprovider = "stub:always-yes"\nsamples = 1\n'

#: (correct, tidy) per artifact.
TRUTH = [("yes", "yes"), ("no", "yes"), ("yes", "no"), ("no", "no"), ("yes", "yes"),
         ("no", "no"), ("yes", "no"), ("no", "yes")]


@pytest.fixture(autouse=True)
def _homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


def _rows() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    rows: list[dict[str, object]] = []
    gold: list[dict[str, object]] = []
    for k, (correct, tidy) in enumerate(TRUTH):
        rows.append({"id": f"r{k}", "text": f"Response {k}: 2 + 2 = {4 + k % 2}",
                     "truth": {"correct": correct, "tidy": tidy}})
        if k == 0:  # one verdict for every criterion
            gold.append({"id": "r0", "label": "yes"})
        elif k == 1:  # a criterion left out is not compared on this artifact
            gold.append({"id": "r1", "label": {"correct": "no"}})
        else:
            gold.append({"id": f"r{k}", "label": {"correct": correct, "tidy": tidy}})
    return rows, gold


def test_each_judge_is_compared_with_gold_on_each_criterion(tmp_path: Path) -> None:
    rows, gold = _rows()
    out, gold_file, key = run_campaign(tmp_path, CAMPAIGN.format(judges=SIM + "\n" + YES),
                                       rows, gold)
    code, report, output = calibrate_json(out, gold_file, key, tmp_path / "calibration.json")
    assert "raters" in report, output
    assert report["kind"] == "criteria"
    raters = {(r["rater"], r["criterion"]): r for r in report["raters"]}  # type: ignore[union-attr]
    assert list(raters) == [("sim-1", "correct"), ("sim-1", "tidy"),
                            ("yes-man", "correct"), ("yes-man", "tidy")]
    assert raters[("sim-1", "correct")]["items"] == 8
    assert raters[("sim-1", "tidy")]["items"] == 7  # r1 has no tidy gold
    for criterion in ("correct", "tidy"):
        sim = raters[("sim-1", criterion)]
        assert sim["accuracy"] == 1.0 and sim["kappa"]["value"] == pytest.approx(1.0)
        assert sim["categories"] == ["yes", "no", "undecided"]
        assert sim["flags"] == []
        yes = raters[("yes-man", criterion)]
        assert yes["kappa"]["value"] == 0
        assert any(f.startswith("constant: yes") for f in yes["flags"])
    assert raters[("yes-man", "correct")]["accuracy"] == pytest.approx(4 / 8)
    assert report["settled"] is None
    assert code == ExitCode.ESCALATE
    assert "yes-man / correct" in output


def test_a_gold_criterion_the_campaign_does_not_have_is_named(tmp_path: Path) -> None:
    rows, gold = _rows()
    gold[2] = {"id": "r2", "label": {"corect": "yes"}}
    out, gold_file, key = run_campaign(tmp_path, CAMPAIGN.format(judges=SIM), rows[:3], gold)
    code, _, output = calibrate_json(out, gold_file, key, tmp_path / "calibration.json")
    assert code == ExitCode.INPUT
    assert "'corect'" in output and "r2" in output and "tidy" in output
