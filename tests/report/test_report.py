"""`jurat report`: structure (parsed HTML), escaping, numbers, receipt loading, and the page
as headless Chromium renders it."""

from __future__ import annotations

import base64
import json
import shlex
import struct
import subprocess
import sys
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from jurat.errors import IntakeError, ValidationError
from jurat.models import Decision, tone_of
from jurat.report._report import load_receipt_files, render_report
from jurat.report._report_stats import running_agreement
from jurat.style import TONE_HEX
from tests.report.receipt_builder import SCRIPT, all_receipts, bundle
from tests.support.builders import rubric_case, statement_for

EXPECTED = {
    "r-good": "accept",
    "r-gate": "reject",
    "p-1": "escalate",
    "c-ship": "SHIP",
    "c-block": "BLOCK",
    "c-warn": "WARN",
    "e-numeric": "equivalent",
    "e-judged": "equivalent",
}
COST = {
    "trigger": {"calls": 4, "input_tokens": 1000, "output_tokens": 200, "usd": 0.001},
    "execution": {"calls": 8, "input_tokens": 5000, "output_tokens": 2500, "usd": 0.004},
}
VOID = {"meta", "br", "hr", "img", "input", "link", "area", "base", "col", "source", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        out = []
        for c in self.children:
            if isinstance(c, Node):
                if (tag is None or c.tag == tag) and (
                    cls is None or cls in c.attrs.get("class", "").split()
                ):
                    out.append(c)
                out.extend(c.all(tag, cls))
        return out

    def by_id(self, ident: str) -> Node:
        found = [n for n in self.all() if n.attrs.get("id") == ident]
        assert len(found) == 1, f"{len(found)} elements with id {ident!r}"
        return found[0]

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)


class _Tree(HTMLParser):
    """A strict little DOM: a mismatched end tag fails the test."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root")
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    tree = _Tree()
    tree.feed(html)
    tree.close()
    assert tree.stack == [tree.root], "unclosed elements: " + ", ".join(n.tag for n in tree.stack)
    return tree.root


@pytest.fixture(scope="module")
def receipts() -> list[dict[str, Any]]:
    return all_receipts()


@pytest.fixture(scope="module")
def html(receipts: list[dict[str, Any]]) -> str:
    return render_report(receipts, title="nightly <eval>", cost=COST)


@pytest.fixture(scope="module")
def dom(html: str) -> Node:
    return parse(html)


def _decision_rows(dom: Node) -> list[Node]:
    body = dom.by_id("decisions").all("tbody")[0]
    return [n for n in body.children if isinstance(n, Node) and "decision" in n.attrs["class"]]


def test_the_page_names_and_colours_a_decision_as_the_terminal_does(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    # One owner of the words (jurat.models) and one of the colours (jurat.style).
    for row, receipt in zip(_decision_rows(dom), receipts, strict=True):
        decision = Decision.model_validate(receipt["statement"]["predicate"]["decision"])
        assert row.attrs["data-outcome"] == decision.outcome
        assert f"tone-{tone_of(decision.outcome)}" in row.attrs["class"].split()
    assert f"--good: {TONE_HEX['good']}" in dom.all("style")[0].text()


def test_decision_table_has_one_row_per_receipt_with_the_signed_outcome(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    rows = _decision_rows(dom)
    assert [r.attrs["data-artifact"] for r in rows] == [
        r["statement"]["predicate"]["artifact"]["id"] for r in receipts
    ]
    for row in rows:
        want = EXPECTED.get(row.attrs["data-artifact"])
        if want:
            assert row.attrs["data-outcome"] == want
            assert row.all("td", "outcome")[0].text() == want
    cells = {r.attrs["data-artifact"]: r for r in rows}
    good = cells["r-good"]
    assert good.all("td", "score")[0].text() == "Q 0.8625 (min 0.75)"
    assert good.all("td", "agreement")[0].text().startswith("3/3")
    assert good.all("td", "samples")[0].text() == "14 / 15"  # one timed-out sample
    assert cells["r-gate"].all("td", "gates")[0].text() == "tests.pass"
    assert cells["c-block"].all("td", "score")[0].text() == "pass 4/6"
    assert cells["c-warn"].all("td", "agreement")[0].text().startswith("min 7/11")
    assert cells["e-numeric"].all("td", "score")[0].text() == "settled deterministically"
    assert cells["e-judged"].all("td", "agreement")[0].text().startswith("2/3")
    reviews = [
        r.all("td", "review")[0].text() for r in rows if r.attrs["data-artifact"] == "r-split"
    ]
    assert reviews == ["v1 superseded", "v2"]


def test_each_artifact_has_collapsible_votes_in_dispatch_order(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    for i, r in enumerate(receipts):
        details = dom.by_id(f"votes-{i}")
        assert details.tag == "details" and "open" not in details.attrs
        table = details.all("table", "votes")[0]
        rows = table.all("tbody")[0].all("tr")
        votes = r["statement"]["predicate"]["votes"]
        assert len(rows) == max(len(votes), 1)
        for row, vote in zip(rows, votes, strict=False):
            judge, criterion, sample, order, answer = (c.text() for c in row.all("td")[:5])
            assert (judge, criterion, sample) == (
                vote["judge"],
                vote["criterion"],
                str(vote["sample"]),
            )
            assert order == (vote["order"] or "—")
            if vote["error"]:
                assert answer == f"error: {vote['error']}"
    pairwise = dom.by_id("votes-4").all("table", "votes")[0].all("tbody")[0].all("tr")
    # Judge A, sample 1 was shown BA and answered "A": canonical B.
    assert pairwise[1].all("td")[4].text().startswith("B canonical (presented A, order BA)")


def test_untrusted_text_renders_as_text(
    html: str, dom: Node, receipts: list[dict[str, Any]]
) -> None:
    hostile = json.loads(json.dumps(receipts[0]))
    hostile["statement"]["predicate"]["artifact"]["id"] = '"><img src=x onerror=alert(1)>'
    hostile["statement"]["predicate"]["campaign"]["id"] = "<b>bold</b>"
    tree = parse(render_report([hostile], title="<script>t</script>"))
    assert not tree.all("script") and not tree.all("img") and not tree.all("b")
    assert all(not k.startswith("on") for n in tree.all() for k in n.attrs)
    assert tree.all("title")[0].text() == "<script>t</script>"
    assert not dom.all("script")
    assert SCRIPT in dom.text()  # shown, as text, in the vote table
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in html
    assert dom.all("title")[0].text() == "nightly <eval>"


def test_page_is_self_contained(dom: Node) -> None:
    assert not dom.all("link") and not dom.all("img") and not dom.all("iframe")
    csp = [m for m in dom.all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0].attrs["content"]
    for node in dom.all():
        for key, value in node.attrs.items():
            if key == "xmlns":
                continue
            assert "://" not in value and not value.startswith("//"), (node.tag, key, value)
    assert "@import" not in dom.all("style")[0].text() and "url(" not in dom.all("style")[0].text()


def test_agreement_histogram_counts_every_agreement(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    svg = dom.by_id("agreement-histogram")
    assert "chart" in svg.attrs["class"]
    decisions = [r["statement"]["predicate"]["decision"] for r in receipts]
    expected = sum(d["agreement"] is not None for d in decisions)
    expected += sum(len(d["criteria"]) for d in decisions)
    counts = [int(t.text()) for t in svg.all("text", "count")]
    assert sum(counts) == expected
    assert svg.all("rect", "bar")


def test_convergence_has_one_chart_per_criterion_ending_at_the_fold_agreement(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    charts = dom.by_id("convergence").all("svg", "chart")
    titles = [c.all("title")[0].text() for c in charts]
    assert titles == [
        "rubric",
        "pairwise",
        "cites-sources (criteria) · blocker",
        "cfo-headline (criteria) · blocker",
        "concise (criteria)",
        "equivalence",
    ]
    assert charts[2].all("line", "reference") and not charts[4].all("line", "reference")
    # The fold counts an errored sample as unsure, so the last point is the signed agreement.
    crit = next(r for r in receipts if r["statement"]["predicate"]["artifact"]["id"] == "c-warn")
    predicate = crit["statement"]["predicate"]
    for outcome in predicate["decision"]["criteria"]:
        labels = [
            "unsure" if v["error"] else v["answer"]["verdict"]
            for v in predicate["votes"]
            if v["judge"] == outcome["judge"] and v["criterion"] == outcome["criterion_id"]
        ]
        assert running_agreement(labels)[-1] == pytest.approx(outcome["agreement"])
    assert running_agreement(["yes", "yes", None, "no"]) == (1.0, 1.0, 2 / 3, 0.5)


def test_order_reversal_flags_the_position_biased_judge(dom: Node) -> None:
    rows = {
        r.attrs["data-judge"]: [c.text() for c in r.all("td")]
        for r in dom.by_id("order-reversal").all("tbody")[0].all("tr")
    }
    assert rows["A"][1:] == ["1/1 (100%)", "9/9 (100%)", "3/6 (50%)"]
    assert rows["C"][1:] == ["0/1 (0%)", "0/9 (0%)", "6/6 (100%)"]
    assert dom.by_id("order-chart").all("rect", "bar")


def test_cost_per_phase(dom: Node, receipts: list[dict[str, Any]]) -> None:
    rows = {
        r.attrs["class"]: [c.text() for c in r.all("td")]
        for r in dom.by_id("cost").all("tbody")[0].all("tr")
    }
    votes = [v for r in receipts for v in r["statement"]["predicate"]["votes"]]
    tokens_in = sum(v["usage"].get("input_tokens", 0) for v in votes)
    attempts = sum(v.get("attempts", 1) for v in votes)
    # phase, calls, attempts, tokens in, tokens out, USD, source
    assert rows["phase-trigger"][:6] == ["trigger", "4", "4", "1,000", "200", "$0.0010"]
    assert rows["phase-judge"][1:4] == [f"{len(votes):,}", f"{attempts:,}", f"{tokens_in:,}"]
    assert rows["phase-judge"][5] == "unknown"  # the criteria judges have no pinned price
    assert rows["phase-total"][1] == f"{len(votes) + 12:,}" and rows["phase-total"][5] == "unknown"
    priced = [r for r in receipts if r["statement"]["predicate"]["campaign"]["kind"] == "rubric"]
    usd = parse(render_report(priced)).by_id("cost").all("tr", "phase-judge")[0].all("td")[5]
    rubric_votes = [v for r in priced for v in r["statement"]["predicate"]["votes"]]
    want = (
        sum(
            v["usage"].get("input_tokens", 0) * 0.27 + v["usage"].get("output_tokens", 0) * 1.10
            for v in rubric_votes
        )
        / 1e6
    )
    assert usd.text() == f"${want:,.4f}"
    no_cost = parse(render_report(priced)).by_id("cost").all("tr", "phase-execution")[0]
    assert no_cost.all("td")[1].text() == "not recorded"


@pytest.mark.parametrize(
    ("cost", "where"),
    [
        ({"judging": {"calls": 1}}, "cost.judging"),
        ({"trigger": {"calls": -1}}, "cost.trigger.calls"),
        ({"trigger": {"calls": 1, "tokens_in": 5}}, "cost.trigger.tokens_in"),
    ],
)
def test_bad_cost_names_the_field(cost: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError, match=where.replace(".", r"\.")):
        render_report([], cost=cost)


def test_verify_commands_are_exact(dom: Node, receipts: list[dict[str, Any]]) -> None:
    codes = [c.text() for c in dom.by_id("verify").all("code")]
    assert codes[0] == "jurat verify /tmp/out/r-good.sigstore.json --key /tmp/keys/jurat.pub"
    assert len(codes) == len(receipts)
    odd = dict(receipts[0], receipt_path="/tmp/my out/r-good.sigstore.json", key_path=None)
    code = parse(render_report([odd])).by_id("verify").all("code")[0].text()
    assert code == "jurat verify '/tmp/my out/r-good.sigstore.json' --key <pub>"


def test_receipt_without_predicate_is_refused() -> None:
    with pytest.raises(ValidationError, match=r"receipts\[0\]\.statement\.predicate"):
        render_report([{"statement": {"_type": "x"}}])
    with pytest.raises(ValidationError, match=r"receipts\[0\]\.statement"):
        render_report([{"receipt_path": "x"}])


def test_malformed_predicate_fields_render_as_dashes_not_crashes() -> None:
    odd = {
        "campaign": {"kind": "rubric"},
        "votes": "not a list",
        "decision": {"agreement": float("nan"), "agreement_votes": "²/3", "reasons": 7},
    }
    row = _decision_rows(parse(render_report([{"statement": {"predicate": odd}}])))[0]
    assert row.attrs["data-outcome"] == "missing"
    assert row.all("td", "agreement")[0].text() == "²/3"


def test_rendering_is_deterministic_and_empty_input_renders(receipts: list[dict[str, Any]]) -> None:
    assert render_report(receipts) == render_report(receipts)
    empty = parse(render_report([]))
    assert "No receipts" in empty.by_id("decisions").text()


def test_load_receipt_files_decodes_bundles(tmp_path: Path, receipts: list[dict[str, Any]]) -> None:
    for i, r in enumerate(receipts[:3]):
        name = r["statement"]["predicate"]["artifact"]["id"]
        (tmp_path / f"{i}-{name}.sigstore.json").write_text(json.dumps(bundle(r["statement"])))
    (tmp_path / "notes.json").write_text("{}")
    loaded = load_receipt_files(tmp_path, key_path=tmp_path / "jurat.pub")
    assert [x["statement"] for x in loaded] == [r["statement"] for r in receipts[:3]]
    assert loaded[0]["receipt_path"] == str(tmp_path / "0-r-good.sigstore.json")
    assert loaded[0]["key_path"] == str(tmp_path / "jurat.pub")
    assert _decision_rows(parse(render_report(loaded)))[0].attrs["data-outcome"] == "accept"


def _bundle(payload: str, payload_type: str = "application/vnd.in-toto+json") -> str:
    """A structurally complete Sigstore bundle around ``payload`` (base64), signature junk."""
    return json.dumps(
        {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {"publicKey": {"hint": "x"}, "tlogEntries": []},
            "dsseEnvelope": {
                "payload": payload,
                "payloadType": payload_type,
                "signatures": [{"sig": "c2ln", "keyid": "x"}],
            },
        }
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON"),
        (json.dumps({"mediaType": "x"}), "mediaType"),
        (_bundle("%%%"), "payload"),
        (_bundle("e30=", "text/plain"), "payloadType"),
        (_bundle(base64.b64encode(b"[1]").decode()), "not an in-toto statement"),
    ],
)
def test_load_receipt_files_refuses_bad_bundles(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "x.sigstore.json").write_text(content)
    with pytest.raises(IntakeError, match=message):
        load_receipt_files(tmp_path)
    with pytest.raises(IntakeError, match="not a directory"):
        load_receipt_files(tmp_path / "missing")


def test_printed_verify_command_verifies_a_real_signed_receipt(tmp_path: Path) -> None:
    from jurat.receipts import keygen, load_private_key, sign_statement

    key, pub = keygen(tmp_path / "keys")
    out = tmp_path / "out dir"  # a space: the command must quote it
    out.mkdir()
    signed = statement_for(*rubric_case())  # made by jurat.receipts itself, accepted
    (out / "c1.sigstore.json").write_bytes(sign_statement(signed, load_private_key(key)))
    page = parse(render_report(load_receipt_files(out, key_path=pub)))
    assert _decision_rows(page)[0].attrs["data-outcome"] == "accept"
    command = shlex.split(page.by_id("verify").all("code")[0].text())
    assert command[:2] == ["jurat", "verify"]
    jurat = Path(sys.executable).with_name("jurat")
    done = subprocess.run([str(jurat), *command[1:]], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


# -- the page in a real browser ------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    # Without these Chromium phones home at start, and this closed network refuses it.
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _png_pixels_vary(png: bytes) -> tuple[int, int, int]:
    """Width, height and the number of distinct byte values in the decoded image data."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    pos, idat = 8, b""
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += png[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def test_report_opens_in_headless_chromium(tmp_path: Path, html: str) -> None:
    if not CHROMIUM.exists():
        pytest.fail(
            f"Debian's chromium is not installed at {CHROMIUM}: run `make test`, which installs "
            "it (Makefile target sysdeps), or `apt-get install chromium`"
        )
    from playwright.sync_api import sync_playwright

    page_file = tmp_path / "report.html"
    page_file.write_text(html, encoding="utf-8")
    shot = tmp_path / "shots" / "report.png"
    requests: list[str] = []
    problems: list[str] = []
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1280, "height": 900},
        )
        try:
            page = context.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(page_file.as_uri(), wait_until="load")

            rows = page.locator("table#decisions > tbody > tr.decision")
            assert rows.count() == 10
            seen = {
                rows.nth(i).get_attribute("data-artifact"): rows.nth(i)
                .locator("td.outcome")
                .inner_text()
                .strip()
                for i in range(rows.count())
            }
            assert {k: v for k, v in seen.items() if k in EXPECTED} == EXPECTED
            assert rows.first.bounding_box() is not None

            chart = page.locator("svg.chart#agreement-histogram")
            box = chart.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 150
            bars = chart.locator("rect.bar")
            assert bars.count() > 0
            bar = bars.first.bounding_box()
            assert bar is not None and bar["width"] > 0 and bar["height"] > 0
            line = page.locator("#convergence svg.chart polyline.series").first.bounding_box()
            assert line is not None and line["width"] > 0

            # The hostile explanation is visible as text once its row is opened.
            page.locator("#votes-0 > summary").click()
            assert page.locator("#votes-0 .explanation", has_text="<script>").count() == 1
            assert page.locator("script").count() == 0

            shot.parent.mkdir()
            page.screenshot(path=str(shot), full_page=True)
        finally:
            context.close()
    assert requests and all(u.startswith("file:") for u in requests), requests
    assert not problems, problems
    png = shot.read_bytes()
    width, height, distinct = _png_pixels_vary(png)
    assert width == 1280 and height > 2000
    assert len(png) > 50_000 and distinct > 50
