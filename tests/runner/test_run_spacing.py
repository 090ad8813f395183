"""``[[judges]] spacing_ms`` through ``jurat run``: the receipt's policy records it, each
item's samples are dispatched at least that far apart, and adding it to a live campaign is
a changed policy, refused like any other (issue 27)."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

from tests.cli._run_support import run

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "rubric"
SPACED = 'id = "sim-a"\nspacing_ms = 5\n'


def _predicates(out: Path) -> list[dict[str, object]]:
    found = []
    for path in sorted(out.glob("*.sigstore.json")):
        envelope = json.loads(path.read_bytes())["dsseEnvelope"]
        found.append(json.loads(base64.b64decode(envelope["payload"]))["predicate"])
    return found


def test_spacing_is_recorded_and_changing_it_on_a_live_campaign_is_refused(
    tmp_path: Path,
) -> None:
    campaign_dir = tmp_path / "rubric"
    shutil.copytree(QUICKSTART, campaign_dir)
    campaign = campaign_dir / "campaign.toml"
    text = campaign.read_text()
    assert 'id = "sim-a"\n' in text
    campaign.write_text(text.replace('id = "sim-a"\n', SPACED))
    first = run(tmp_path, campaign, None)
    assert first.code in (0, 1, 2), first.err
    predicates = _predicates(tmp_path / "out")
    asked = 0
    for predicate in predicates:
        judges = predicate["campaign"]["policy"]["judges"]  # type: ignore[index]
        spaced = next(j for j in judges if j["id"] == "sim-a")
        assert spaced["spacing_ms"] == 5
        assert all("spacing_ms" not in j for j in judges if j["id"] != "sim-a")
        times = sorted(v["dispatch_ms"] for v in predicate["votes"]  # type: ignore[union-attr]
                       if v["judge"] == "sim-a")
        if "judges_skipped" in predicate["inputs"]:  # type: ignore[operator]
            assert times == []  # a veto: no judge asked
            continue
        asked += 1
        assert len(times) == 5
        assert all(b - a >= 5 for a, b in zip(times, times[1:], strict=False)), times

    assert asked >= 2
    campaign.write_text(text)  # the same campaign id without the spacing: another policy
    second = run(tmp_path, campaign, None)
    assert second.code == 3, second.out + second.err
    assert "under another policy" in second.err
