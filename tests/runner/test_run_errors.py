"""Bad campaign files exit 3 naming file, field and fix, and write no ledger entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._support import copy_example, entries, jurat, keys


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (('samples = 5', 'samplez = 5'), ["judges[0].samplez", "unknown key", "fix:"]),
        (('weight = 0.45', 'weight = 0.55'), ["rubric.criteria", "sum to 1", "fix:"]),
        (('id = "sim-a"\nprovider = "sim"', 'id = "sim-a"\nprovider = "oracle"'),
         ["judges[0].provider", "unknown provider"]),
        (('path = "contributions/c1_canonical.py"', 'path = "contributions/missing.py"'),
         ["artifacts[0].path", "cannot read", "fix:"]),
        (("[rubric]", "[rubrik]"), ["rubrik", "unknown table"]),
    ],
)
def test_bad_campaign_exits_3_without_ledger_entries(
    tmp_path: Path, change: tuple[str, str], words: list[str]
) -> None:
    campaign = copy_example("rubric", tmp_path)
    campaign.write_text(campaign.read_text().replace(*change, 1))
    key, _ = keys(tmp_path)
    db = tmp_path / "l.db"
    r = jurat("run", str(campaign), "--out", str(tmp_path / "out"), "--ledger",
              f"sqlite:///{db}", "--key", str(key), "--quiet", cwd=tmp_path)
    assert r.returncode == 3, r.stdout + r.stderr
    message = " ".join(r.stderr.split())
    assert "campaign.toml" in message
    for word in words:
        assert word in message
    assert entries(db) == []
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_missing_rubric_exits_3(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    text = campaign.read_text()
    start, end = text.index("[rubric]"), text.index("[checks.python]")
    campaign.write_text(text[:start] + text[end:])
    r = jurat("run", str(campaign), "--ledger", f"sqlite:///{tmp_path / 'l.db'}", "--quiet",
              cwd=tmp_path)
    assert r.returncode == 3
    assert "rubric" in r.stderr and "needs a [rubric] table" in " ".join(r.stderr.split())
    assert entries(tmp_path / "l.db") == []


def test_altered_artifact_is_refused(tmp_path: Path) -> None:
    campaign = copy_example("rubric", tmp_path)
    text = campaign.read_text().replace('id = "c1-canonical"',
                                        'id = "c1-canonical"\nsha256 = "' + "ab" * 32 + '"')
    campaign.write_text(text)
    r = jurat("run", str(campaign), "--ledger", f"sqlite:///{tmp_path / 'l.db'}", "--quiet",
              cwd=tmp_path)
    assert r.returncode == 3
    assert "altered" in r.stderr
    assert entries(tmp_path / "l.db") == []
