"""A selection's artifacts, shared out among a run's worker processes (runner/_datasets.py)."""

from __future__ import annotations

import json
from pathlib import Path

from jurat.campaign import load_campaign
from jurat.models import Campaign
from jurat.runner import Selection, check_artifacts
from jurat.runner._datasets import iter_placed

CAMPAIGN = """\
[campaign]
id = "shards"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
items = [{ id = "ok", text = "Is it fine?" }]

[[judges]]
id = "s"
provider = "sim"

[[artifacts]]
id = "a1"
text = "one"

[[artifacts]]
id = "a2"
text = "two"

[[datasets]]
path = "rows.jsonl"
"""


def _campaign(tmp_path: Path) -> Campaign:
    rows = "".join(json.dumps({"id": f"r{i}", "text": f"row {i}"}) + "\n" for i in range(6))
    (tmp_path / "rows.jsonl").write_text(rows)
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    return load_campaign(tmp_path / "c.toml")


def test_shards_split_the_selection_by_rank(tmp_path: Path) -> None:
    campaign = _campaign(tmp_path)
    every = [(place, a.id) for place, a in iter_placed(campaign)]
    assert [place for place, _ in every] == list(range(8))
    chosen = Selection(limit=4, only=("a2", "r0", "r2", "r3", "r5"))
    parts = [[(p, a.id) for p, a in iter_placed(campaign, shard=(k, 2), selection=chosen)]
             for k in range(2)]
    # The first four kept, in campaign order, with their places in the whole campaign,
    # alternating between the two workers.
    assert parts == [[(1, "a2"), (4, "r2")], [(2, "r0"), (5, "r3")]]
    inventory = check_artifacts(campaign, selection=chosen)
    assert (inventory.count, inventory.total) == (4, 8)
    assert inventory.first is not None and inventory.first.id == "a2"
    plain = check_artifacts(campaign)
    assert (plain.count, plain.total) == (8, 8)
