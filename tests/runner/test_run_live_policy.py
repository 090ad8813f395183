"""A live campaign never changes under ``jurat run`` (issue 27; seed 000, "Do not lower the
threshold after observing an inconvenient result"): the same campaign id with another
policy on the same ledger exits 3 before anything is sent or written."""

from __future__ import annotations

import shutil
from pathlib import Path

from jurat.ledger import open_ledger
from tests.cli._run_support import run

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "rubric"


def _entries(root: Path) -> int:
    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        return sum(1 for _ in ledger.entries())


def test_a_changed_threshold_on_the_same_ledger_is_refused(tmp_path: Path) -> None:
    campaign_dir = tmp_path / "rubric"
    shutil.copytree(QUICKSTART, campaign_dir)
    campaign = campaign_dir / "campaign.toml"
    first = run(tmp_path, campaign, None)
    assert first.code in (0, 1, 2), first.err
    recorded = _entries(tmp_path)
    receipts = sorted(p.name for p in (tmp_path / "out").iterdir())

    text = campaign.read_text()
    assert "threshold = 0.75" in text
    campaign.write_text(text.replace("threshold = 0.75", "threshold = 0.9"))
    second = run(tmp_path, campaign, None)
    assert second.code == 3, second.out + second.err
    assert "under another policy" in second.err and "new [campaign] id" in second.err
    assert _entries(tmp_path) == recorded  # nothing written
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == receipts

    # The unchanged file still resumes: every receipt reused, nothing drawn.
    campaign.write_text(text)
    again = run(tmp_path, campaign, None)
    assert again.code == first.code, again.err
    assert "0 drawn in this run" in again.out


def test_a_changed_policy_under_a_raised_task_version_runs(tmp_path: Path) -> None:
    """The refusal's own fix works: the changed threshold under a new task_version is a new
    version of the campaign, judged afresh, its receipts superseding the old ones."""
    campaign_dir = tmp_path / "rubric"
    shutil.copytree(QUICKSTART, campaign_dir)
    campaign = campaign_dir / "campaign.toml"
    first = run(tmp_path, campaign, None)
    assert first.code in (0, 1, 2), first.err
    text = campaign.read_text()
    changed = text.replace("threshold = 0.75", "threshold = 0.9").replace(
        "[campaign]\n", '[campaign]\ntask_version = "2"\n', 1)
    campaign.write_text(changed)
    second = run(tmp_path, campaign, None)
    assert second.code in (0, 1, 2), second.out + second.err
    assert "under another policy" not in second.err
    assert "0 drawn in this run" not in second.out  # judged again under the new version
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        versions = {e.payload["task_version"] for e in ledger.entries(kind="job_received")}
        reviews = [e.payload["review_version"] for e in ledger.entries(kind="receipt")]
    assert versions == {"1", "2"} and max(reviews) == 2
    # Changing the new version's policy again is refused like any live change.
    campaign.write_text(changed.replace("threshold = 0.9", "threshold = 0.8"))
    third = run(tmp_path, campaign, None)
    assert third.code == 3 and "task_version '2'" in third.err, third.err
