"""`jurat diff BASE NEW` (issue 29): two CI runs of one criteria suite, the second with one
artifact changed, compared as ledgers, receipts directories and `--json` run results. Each
shows that artifact and only it, with its receipts; the JSON and the page hold no artifact
text; `--fail-on-change` exits 2; a side that is none of the three is exit 3."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli._run_support import run
from tests.cli.test_run_ci import CAMPAIGN, MARKERS
from tests.support.cli import invoke

#: a4 comes back from the changed prompt wrong: its blocker fails.
CHANGED = ('text = "marker-four-4b6f Thanks: 4."\ntruth = {{ correct = "yes", polite = "yes" }}',
           'text = "marker-four-4b6f Thanks: 5."\ntruth = {{ correct = "no", polite = "yes" }}')


def _suite(root: Path, *, changed: bool) -> Path:
    root.mkdir()
    text = CAMPAIGN.replace(*CHANGED) if changed else CAMPAIGN
    assert text != CAMPAIGN or not changed
    campaign = root / "campaign.toml"
    campaign.write_text(text.format(gate=""))
    done = run(root, campaign, None, "--json", str(root / "result.json"))
    assert done.code in (1, 2), done.out + done.err
    return root


def test_diff_of_two_runs_shows_the_changed_artifact(tmp_path: Path) -> None:
    base = _suite(tmp_path / "base", changed=False)
    new = _suite(tmp_path / "new", changed=True)
    for a, b in ((base / "l.db", new / "l.db"), (base / "out", new / "out"),
                 (base / "result.json", new / "result.json")):
        out = tmp_path / f"diff-{a.name}.json"
        page = tmp_path / f"diff-{a.name}.html"
        done = invoke("diff", str(a), str(b), "--json", str(out), "--html", str(page))
        assert done.exit_code == 0, done.stdout + done.stderr
        assert "diff: 4 artifacts on both sides; changed: 1 decision, 0 reasons, 0 added, " \
               "0 removed" in done.stdout, done.stdout
        doc = json.loads(out.read_text())
        assert doc["schema"] == "jurat.diff/v1" and doc["compared"] == 4
        [row] = doc["rows"]
        assert (row["artifact"], row["change"]) == ("a4", "decision")
        assert (row["base"]["decision"], row["new"]["decision"]) == ("SHIP", "BLOCK")
        assert row["base"]["reasons"] == []
        assert {"code": "criterion_not_passed", "judge": "s", "criterion": "correct",
                "verdict": "no", "stability": "block", "agree": 1, "samples": 1} \
            in row["new"]["reasons"]
        # With its receipts: a file of the run, or the ledger entry that holds it.
        assert row["new"]["receipt"].endswith("a4.sigstore.json") or \
            " entry " in row["new"]["receipt"], row
        html = page.read_text()
        assert 'data-change="decision" data-artifact="a4"' in html
        assert html.count('class="diff-row"') == 1
        for text in (out.read_text(), html, done.stdout):
            assert not any(m in text for m in MARKERS), "artifact or criterion text leaked"
    same = invoke("diff", str(base / "l.db"), str(base / "out"), "--fail-on-change")
    assert same.exit_code == 0 and "changed: 0 decision" in same.stdout, same.stdout
    gated = invoke("diff", str(base / "result.json"), str(new / "result.json"),
                   "--fail-on-change")
    assert gated.exit_code == 2, gated.stdout + gated.stderr


def test_diff_names_what_it_could_not_read(tmp_path: Path) -> None:
    base = _suite(tmp_path / "base", changed=False)
    stray = tmp_path / "stray.json"
    stray.write_text('{"schema": "something/v9"}')
    done = invoke("diff", str(base / "result.json"), str(stray))
    assert done.exit_code == 3
    assert "schema is 'something/v9', not 'jurat.run-result/v1'" in done.stderr, done.stderr
    broken = tmp_path / "broken.json"
    doc = json.loads((base / "result.json").read_text())
    doc["artifacts"][0]["decision"] = 7
    broken.write_text(json.dumps(doc))
    done = invoke("diff", str(base / "result.json"), str(broken))
    assert done.exit_code == 3 and "artifacts.0.decision" in done.stderr, done.stderr
    done = invoke("diff", str(base / "l.db"), str(base / "l.db"), "--campaign", "nope")
    assert done.exit_code == 3 and "--campaign nope" in done.stderr
    assert "(it has: suite)" in done.stderr, done.stderr
