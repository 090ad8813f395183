"""An artifact none of whose claims applies gets a receipt (issue 27): grounding is not
measured, the gate warns and a rubric accept escalates; the run exits 1 (a person
decides), never 4 for good."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from jurat.fold import NOT_MEASURED
from jurat.receipts import read_statement
from tests.runner._support import jurat, keys

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grounding"


def test_no_applicable_claim_is_a_defined_outcome(tmp_path: Path) -> None:
    campaign = tmp_path / "grounding"
    shutil.copytree(EXAMPLE, campaign)
    path = campaign / "campaign.toml"
    text = re.sub(r'truth = "(supported|contradicted|unresolved)"', 'truth = "not_applicable"',
                  path.read_text())
    text = re.sub(r"reliability = [0-9.]+", "reliability = 1.0", text)
    path.write_text(text)
    key, _ = keys(tmp_path)
    args = ("run", str(path), "--out", str(tmp_path / "out"), "--ledger",
            f"sqlite:///{tmp_path / 'l.db'}", "--key", str(key), "--quiet")
    first = jurat(*args, cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    receipts = sorted((tmp_path / "out").glob("*.sigstore.json"))
    assert receipts
    for receipt in receipts:
        decision = read_statement(receipt.read_bytes())["predicate"]["decision"]
        grounding = decision["grounding"]
        assert (grounding["coverage"], grounding["contradiction_rate"]) == (None, None)
        assert grounding["gate"] == "warn" and NOT_MEASURED in grounding["reasons"]
        assert decision["disposition"] == "escalate"
    # The same command again resumes: every receipt reused, the same exit.
    again = jurat(*args, cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr


def test_claims_of_zero_weight_in_all_are_refused_at_load(tmp_path: Path) -> None:
    campaign = tmp_path / "grounding"
    shutil.copytree(EXAMPLE, campaign)
    path = campaign / "campaign.toml"
    path.write_text(re.sub(r"weight = [0-9.]+\n", "weight = 0.0\n", path.read_text()))
    key, _ = keys(tmp_path)
    r = jurat("run", str(path), "--out", str(tmp_path / "out"), "--ledger",
              f"sqlite:///{tmp_path / 'l.db'}", "--key", str(key), "--quiet", cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    assert "weigh 0 in all" in r.stderr and "positive weight" in r.stderr
    assert not (tmp_path / "l.db").exists()
