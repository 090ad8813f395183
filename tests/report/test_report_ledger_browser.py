"""The report of a real ledger, as headless Chromium renders it.

The ledger is made by `jurat run` (sim judges, the sandboxed checks): the rubric quickstart
plus a candidate that does not parse and one the judges reject, run twice with a changed
artifact so that review v2 supersedes v1 (as tests/runner/test_run_rubric.py does); the
criteria quickstart (SHIP, WARN, BLOCK); and a campaign with ``judge_after_veto`` whose
vetoed artifacts carry votes, as receipts did before judges were skipped on a veto.

Checked in the browser: rows in the order docs/report.md documents, each vote's own label,
every review version listed and the superseded one tagged, the veto's root cause first and
no judge support shown for it, charts that do not overlap and each have a legend, and no
request other than the page itself. Screenshots go to a temporary directory; one is kept at
/tmp/report-shot.png for a person to look at.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jurat.errors import IntakeError
from jurat.ledger import open_ledger
from jurat.receipts import read_statement
from jurat.report import receipts_from_ledger, render_report
from tests.report.browser import open_page, png_pixels_vary
from tests.report.expect import documented_order, inside, overlap, said

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "examples" / "quickstart" / "rubric"
CRITERIA = REPO / "examples" / "quickstart" / "criteria"
SHOT = Path("/tmp/report-shot.png")

BROKEN = "def below_zero(operations:\n    return False\n"
ARTIFACT = """
[[artifacts]]
id = "{id}"
path = "contributions/{file}"
contributor = "{who}"
task = "HumanEval/3"
truth = "{truth}"
"""


def _jurat(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(cwd / ".config")}
    return subprocess.run([sys.executable, "-m", "jurat", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300, env=env)


def _campaign(src: Path, dest: Path, *, header: dict[str, str], artifacts: list[str]) -> Path:
    """A copy of the rubric quickstart with its header edited and its own artifact list."""
    shutil.copytree(src, dest)
    text = (src / "campaign.toml").read_text().split("[[artifacts]]")[0]
    for old, new in header.items():
        assert old in text
        text = text.replace(old, new)
    (dest / "campaign.toml").write_text(text + "".join(artifacts))
    return dest / "campaign.toml"


def _run(campaign: Path, tmp: Path) -> None:
    # A receipts directory holds one campaign's receipts: each campaign runs into its own,
    # and the current receipts are gathered in ``out``, the directory the report is told of.
    own = tmp / "runs" / campaign.parent.name
    done = _jurat("run", str(campaign), "--out", str(own), "--ledger",
                  f"sqlite:///{tmp / 'l.db'}", "--key", str(tmp / "keys" / "jurat.key"),
                  "--quiet", cwd=tmp)
    assert done.returncode in (1, 2), done.stdout + done.stderr  # some reject or BLOCK
    (tmp / "out").mkdir(exist_ok=True)
    for written in own.glob("*.sigstore.json*"):
        shutil.copy(written, tmp / "out" / written.name)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ledger")
    made = _jurat("keygen", "--out", str(tmp / "keys"), cwd=tmp)
    assert made.returncode == 0, made.stderr
    quickstart = (RUBRIC / "campaign.toml").read_text().split("[[artifacts]]", 1)[1]
    rubric = _campaign(RUBRIC, tmp / "rubric", header={}, artifacts=[
        "[[artifacts]]" + quickstart,
        ARTIFACT.format(id="c6-broken", file="c6_broken.py", who="erin", truth="accept"),
        ARTIFACT.format(id="c7-weak", file="c7_weak.py", who="frank", truth="reject"),
    ])
    sources = rubric.parent / "contributions"
    (sources / "c6_broken.py").write_text(BROKEN)
    (sources / "c7_weak.py").write_text((sources / "c2_accumulate.py").read_text() + "# weak\n")
    _run(rubric, tmp)
    canonical = sources / "c1_canonical.py"
    canonical.write_text(canonical.read_text() + "\n# a comment changes the bytes\n")
    _run(rubric, tmp)  # c1-canonical: review v2 supersedes v1; the others are reused
    after = _campaign(RUBRIC, tmp / "after-veto", header={
        'id = "quickstart-rubric"': 'id = "quickstart-after-veto"',
        'kind = "rubric"': 'kind = "rubric"\njudge_after_veto = true',
    }, artifacts=[ARTIFACT.format(id="c6-asked", file="c6_broken.py", who="erin",
                                  truth="accept")])
    (after.parent / "contributions" / "c6_broken.py").write_text(BROKEN)
    _run(after, tmp)
    shutil.copytree(CRITERIA, tmp / "criteria")
    _run(tmp / "criteria" / "campaign.toml", tmp)
    return tmp


@pytest.fixture(scope="module")
def statements(ledger: Path) -> dict[int, tuple[dict[str, Any], bytes]]:
    """Every receipt in the ledger by its entry's position: the statement and its bytes."""
    with open_ledger(f"sqlite:///{ledger / 'l.db'}", create=False) as log:
        return {entry.seq: (read_statement(signed), signed) for entry, signed in log.receipts()}


@pytest.fixture(scope="module")
def page_file(ledger: Path) -> Path:
    with open_ledger(f"sqlite:///{ledger / 'l.db'}", create=False) as log:
        receipts = receipts_from_ledger(log, source=str(ledger / "l.db"),
                                        out_dir=ledger / "out", key_path=ledger / "keys/jurat.pub")
    page = ledger / "report.html"
    page.write_text(render_report(receipts, title="contest"), encoding="utf-8")
    return page


def _rows(page: Any) -> list[dict[str, Any]]:
    """Every decision row's attributes, and its cells' text by class (``cells``)."""
    rows: list[dict[str, Any]] = page.locator("table#decisions > tbody > tr.decision").evaluate_all(
        """rows => rows.map(r => Object.assign(
             Object.fromEntries([...r.attributes].map(a => [a.name, a.value])),
             {cells: Object.fromEntries([...r.cells].map(c => [c.className, c.innerText]))}))"""
    )
    return rows


def _votes(page: Any, index: str) -> list[dict[str, Any]]:
    """Every vote row under decision ``index``: its label, its said cell, whether counted."""
    rows = page.locator(f"#votes-{index} table.votes > tbody > tr")
    votes: list[dict[str, Any]] = rows.evaluate_all(
        """rows => rows.map(r => ({said: r.dataset.said, considered: r.dataset.considered,
             cell: r.querySelector('td.said') ? r.querySelector('td.said').textContent : null,
             judge: r.dataset.judge, sample: r.dataset.sample}))"""
    )
    return votes


def _boxes(page: Any, selector: str) -> list[Any]:
    boxes = [el.bounding_box() for el in page.locator(selector).all()]
    assert all(b is not None and b["width"] > 0 and b["height"] > 0 for b in boxes), selector
    return boxes


def test_the_report_of_a_ledger_in_chromium(
    ledger: Path, page_file: Path, statements: dict[int, tuple[dict[str, Any], bytes]],
    tmp_path: Path,
) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    with open_page(page_file, tmp_path / "profile") as (page, seen):
        rows = _rows(page)

        # Every review version in the ledger has a row, in the documented order.
        assert sorted(int(r["data-ledger-seq"]) for r in rows) == sorted(statements)
        shown = [(r["data-campaign"], r["data-artifact"], r["data-review"]) for r in rows]
        assert shown == documented_order(rows)
        outcomes = {r["data-outcome"] for r in rows}
        assert {"accept", "reject", "SHIP", "BLOCK"} <= outcomes
        assert [c for c, *_ in shown][:1] == ["quickstart-after-veto"]
        assert shown.index(("quickstart-rubric", "c6-broken", "1")) < shown.index(
            ("quickstart-rubric", "c2-accumulate", "1"))  # reject before accept

        # The superseded version: listed, tagged, and really the one v2 supersedes.
        by_key = {(r["data-campaign"], r["data-artifact"], r["data-review"]): r for r in rows}
        v2 = by_key[("quickstart-rubric", "c1-canonical", "2")]
        v1 = by_key[("quickstart-rubric", "c1-canonical", "1")]
        assert shown.index(("quickstart-rubric", "c1-canonical", "1")) == shown.index(
            ("quickstart-rubric", "c1-canonical", "2")) + 1
        assert v1["cells"]["review"].split() == ["v1", "superseded", "by", "v2"]
        assert v2["cells"]["review"].split() == ["v2", "current"]
        assert "superseded" in v1["class"].split()
        old_bytes = statements[int(v1["data-ledger-seq"])][1]
        new = statements[int(v2["data-ledger-seq"])][0]
        assert new["predicate"]["review"]["supersedes"] == hashlib.sha256(old_bytes).hexdigest()
        assert sum(r["cells"]["review"].endswith("superseded by v2") for r in rows) == 1

        # Each vote row says what that sample said, read from the receipt independently.
        labels: set[str] = set()
        for row in rows:
            predicate = statements[int(row["data-ledger-seq"])][0]["predicate"]
            kind, policy = predicate["campaign"]["kind"], predicate["campaign"]["policy"]
            votes = _votes(page, row["id"].removeprefix("decision-"))
            recorded = predicate["votes"]
            assert len(votes) == max(len(recorded), 1)
            for shown_vote, vote in zip(votes, recorded, strict=False):
                want = said(kind, vote, policy)
                assert shown_vote["said"] == shown_vote["cell"] == want, (row["data-artifact"],
                                                                           vote["sample"])
                assert (shown_vote["judge"], shown_vote["sample"]) == (
                    vote["judge"], str(vote["sample"]))
                labels.add(want)
        assert {"accept", "reject", "yes", "no"} <= labels

        # Vetoed: the root cause first, the gates it made skip after, no judge support.
        broken = by_key[("quickstart-rubric", "c6-broken", "1")]
        assert broken["data-vetoed-by"] == "python.parse"
        assert broken["cells"]["gates"] == "python.parse; skipped: python.imports, tests.pass"
        assert (broken["cells"]["score"], broken["cells"]["agreement"]) == ("vetoed", "not asked")
        index = broken["id"].removeprefix("decision-")
        reasons = page.locator(f"#votes-{index} ul.reasons > li").all_text_contents()
        assert reasons[0].startswith("python.parse failed: line 1, column ")
        assert reasons[1:4] == ["python.imports skipped: python.parse failed",
                                "tests.pass skipped: python.parse failed",
                                "judges not asked: veto by python.parse"]
        asked = by_key[("quickstart-after-veto", "c6-asked", "1")]
        assert (asked["cells"]["score"], asked["cells"]["agreement"]) == (
            "vetoed", "not considered: veto")
        assert "Q " not in asked["cells"]["score"] + asked["cells"]["agreement"]
        votes = _votes(page, asked["id"].removeprefix("decision-"))
        assert len(votes) == 15 and {v["considered"] for v in votes} == {"no"}
        # The judges' own scores mostly said accept; the gate rejected. Both are visible.
        assert asked["data-outcome"] == "reject" and "accept" in {v["said"] for v in votes}

        # Charts: a handful of series each, a legend each, nothing overlapping.
        charts = page.locator("svg.chart").all()
        assert len(charts) >= 5
        boxes = _boxes(page, "svg.chart")
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert not overlap(a, b), (a, b)
        for chart in charts:
            # Measured again here: bounding boxes are relative to the viewport.
            box = chart.bounding_box()
            assert box is not None
            series = chart.locator("polyline.series").count()
            assert series <= 4
            items = chart.locator("g.legend > g.legend-item")
            if series:  # a line chart: one entry per line, and one for the quorum line
                assert items.count() == series + chart.locator("line.reference").count()
            else:  # bars: one entry per stacked series
                fills = set(chart.locator("rect.bar").evaluate_all(
                    "bars => bars.map(b => b.getAttribute('fill'))"))
                assert items.count() >= max(len(fills), 1), chart.get_attribute("id")
            legend = chart.locator("g.legend").bounding_box()
            plot = chart.locator("g.plot").bounding_box()
            title = chart.locator("text.chart-title").bounding_box()
            assert legend and plot and title
            assert inside(legend, box) and inside(plot, box) and inside(title, box)
            assert not overlap(legend, plot) and not overlap(title, legend)
            entries = [item.bounding_box() for item in items.all()]
            for i, a in enumerate(entries):
                assert a is not None and inside(a, box)
                for b in entries[i + 1 :]:
                    assert b is not None and not overlap(a, b)
        for chart in charts:  # scrolls the page: after every measurement
            chart.screenshot(path=str(shots / f"{chart.get_attribute('id')}.png"))

        # What a person looks at: the vetoed rows and the superseded pair, opened.
        for row in (asked, broken, v2, v1):
            page.locator(f"#votes-{row['id'].removeprefix('decision-')} > summary").click()
        page.screenshot(path=str(shots / "report.png"), full_page=True)
    assert seen.requests == [page_file.as_uri()], seen.requests  # no network, nothing else
    assert not seen.problems, seen.problems

    pngs = sorted(shots.glob("*.png"))
    assert len(pngs) == len(charts) + 1
    for png in pngs:
        width, height, distinct = png_pixels_vary(png.read_bytes())
        assert width > 100 and height > 100 and distinct > 20, png.name
    width, height, _ = png_pixels_vary((shots / "report.png").read_bytes())
    assert width == 1280 and height > 3000
    shutil.copyfile(shots / "report.png", SHOT)


def test_a_superseded_review_is_verified_by_the_printed_replay_command(
    ledger: Path, page_file: Path
) -> None:
    html = page_file.read_text()
    pub = ledger / "keys" / "jurat.pub"
    current = f"jurat verify {ledger / 'out' / 'c1-canonical.sigstore.json'} --key {pub}"
    replay = f"jurat replay {ledger / 'l.db'} --key {pub}"
    assert current in html and replay in html
    assert html.count(replay) == 1  # only the one superseded review has no file of its own
    done = _jurat(*shlex.split(replay)[1:], cwd=ledger)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_ledger_receipt_that_does_not_decode_names_its_entry(tmp_path: Path) -> None:
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as log:
        entry = log.append_receipt("0" * 64, b"not a bundle", campaign_id="c",
                                   artifact_id="a", review=log.next_review("c", "a"))
        with pytest.raises(IntakeError, match=f"ledger entry {entry.seq}: not a jurat receipt"):
            receipts_from_ledger(log)
