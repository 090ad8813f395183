"""A receipt pins each judge's answer schema (issue 27: `schema_id` was null in every
receipt)."""

from __future__ import annotations

import shutil
from pathlib import Path

from jurat.receipts import read_statement
from tests.cli._run_support import run

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def test_every_judge_pin_names_its_schema(tmp_path: Path) -> None:
    shutil.copytree(QUICKSTART / "rubric", tmp_path / "rubric")
    done = run(tmp_path, tmp_path / "rubric" / "campaign.toml", None)
    assert done.code in (0, 1, 2), done.err
    for receipt in sorted((tmp_path / "out").glob("*.sigstore.json")):
        judges = read_statement(receipt.read_bytes())["predicate"]["judges"]
        assert [j["schema_id"] for j in judges] == ["arcv-judge-decision/v1"] * 3
