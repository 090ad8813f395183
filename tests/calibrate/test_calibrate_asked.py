"""A judge is calibrated only on the artifacts it was asked about (issue 31).

An equivalence campaign whose numeric pairs the deterministic pass settles asks its judge
about the 7 text pairs alone. Before, the 23 settled pairs counted as the judge's
undecided answers (coverage 23%, kappa near 0, flagged, exit 1); now the judge is compared
on its 7, and the 23 are reported apart as the pipeline's settlements, with their own
agreement with gold, which never flags the panel.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat.calibrate import SETTLED
from jurat.cli import ExitCode
from tests.calibrate._campaign import calibrate_json, run_campaign
from tests.support.cli import isolate_homes

CAMPAIGN = """\
[campaign]
id = "mostly-settled"
kind = "equivalence"
allowed_destinations = ["sim"]

[equivalence]
votes = 1
min_agreement = 1
deterministic_first = true

[[judges]]
id = "sim-1"
provider = "sim"
reliability = 1.0
seed = 1

[[datasets]]
path = "pairs.jsonl"
"""

WORDS = [("blue", "the colour blue", "EQUIVALENT"), ("a cat", "a feline", "EQUIVALENT"),
         ("north", "south", "DIFFERENT"), ("red", "crimson red", "EQUIVALENT"),
         ("tea", "coffee", "DIFFERENT"), ("up", "upwards", "EQUIVALENT"),
         ("left", "right", "DIFFERENT")]


@pytest.fixture(autouse=True)
def _homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


def test_a_judge_is_compared_only_on_the_pairs_it_was_asked(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = []
    gold: list[dict[str, object]] = []
    for k in range(23):  # settled by the numeric pass: 12 equal, 11 different
        same = k % 2 == 0
        label = "EQUIVALENT" if same else "DIFFERENT"
        rows.append({"id": f"n{k}", "a": f"The answer is {k + 10}.",
                     "b": str(k + 10 if same else k + 11), "truth": label})
        # Two gold labels disagree with the settlement: its accuracy shows it.
        wrong = k in (0, 1)
        gold.append({"id": f"n{k}", "label": (not same) if wrong else same})
    for k, (a, b, label) in enumerate(WORDS):
        rows.append({"id": f"w{k}", "a": a, "b": b, "truth": label})
        gold.append({"id": f"w{k}", "label": label})
    out, gold_file, key = run_campaign(tmp_path, CAMPAIGN, rows, gold)
    code, report, output = calibrate_json(out, gold_file, key, tmp_path / "calibration.json")
    assert "raters" in report, output
    raters = {r["rater"]: r for r in report["raters"]}  # type: ignore[union-attr]
    judge = raters["sim-1"]
    assert judge["items"] == 7 and judge["not_asked"] == 23
    assert judge["coverage"] == 1.0 and judge["accuracy"] == 1.0
    assert judge["kappa"]["value"] == pytest.approx(1.0)
    assert judge["flags"] == []
    # The folded decision is the pipeline's answer on every compared artifact.
    assert raters["decision"]["items"] == 30 and raters["decision"]["not_asked"] == 0
    settled = report["settled"]
    assert settled["rater"] == SETTLED  # type: ignore[index]
    assert settled["items"] == 23  # type: ignore[index]
    assert settled["accuracy"] == pytest.approx(21 / 23)  # type: ignore[index]
    assert report["settled_by"] == {
        "settled deterministically by equivalence.deterministic": 23}
    assert code == ExitCode.OK, output
    assert "not a judge's" in output and "23 artifacts settled without a judge" in output


def test_a_judge_asked_about_nothing_is_flagged_not_scored(tmp_path: Path) -> None:
    rows = [{"id": f"n{k}", "a": f"{k}", "b": f"{k}", "truth": "EQUIVALENT"} for k in range(3)]
    gold: list[dict[str, object]] = [{"id": f"n{k}", "label": True} for k in range(3)]
    out, gold_file, key = run_campaign(tmp_path, CAMPAIGN, rows, gold)
    code, report, _ = calibrate_json(out, gold_file, key, tmp_path / "calibration.json")
    judge = report["raters"][0]  # type: ignore[index]
    assert judge["items"] == 0 and judge["not_asked"] == 3
    assert judge["flags"] == ["no items to compare"]
    assert code == ExitCode.ESCALATE
