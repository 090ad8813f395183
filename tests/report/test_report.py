"""`jurat report`: structure (parsed HTML), escaping, numbers, receipt loading, and the page
as headless Chromium renders it."""

from __future__ import annotations

import base64
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pydantic
import pytest

from jurat.errors import IntakeError, ValidationError, VerificationError
from jurat.models import Decision, tone_of
from jurat.receipts import statement_document
from jurat.report import ReportReceipt
from jurat.report._report import load_receipt_files, render_report
from jurat.report._report_stats import mean_agreement, running_agreement
from jurat.report._svg import MAX_SERIES
from jurat.style import TONE_HEX
from tests.report.browser import open_page, png_pixels_vary
from tests.report.expect import documented_order, said
from tests.report.receipt_builder import SCRIPT, all_receipts, bundle, statement
from tests.support.builders import (
    criteria_suite,
    criterion_answer,
    panel,
    policy,
    rubric_case,
    statement_for,
    vote,
)

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


def _render(receipts: list[dict[str, Any]], **options: Any) -> str:
    """The page over receipts given as ``ReportReceipt`` fields (statements as documents)."""
    return render_report([ReportReceipt.model_validate(r) for r in receipts], **options)


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
    return _render(receipts, title="nightly <eval>", cost=COST)


@pytest.fixture(scope="module")
def dom(html: str) -> Node:
    return parse(html)


def _decision_rows(dom: Node) -> list[Node]:
    body = dom.by_id("decisions").all("tbody")[0]
    return [n for n in body.children if isinstance(n, Node) and "decision" in n.attrs["class"]]


def _row(dom: Node, artifact: str, review: int = 1) -> Node:
    (row,) = [r for r in _decision_rows(dom)
              if r.attrs["data-artifact"] == artifact and r.attrs["data-review"] == str(review)]
    return row


def _receipt_of(row: Node, receipts: list[dict[str, Any]]) -> dict[str, Any]:
    """The receipt a row shows: its element id is its position in the input."""
    return receipts[int(row.attrs["id"].removeprefix("decision-"))]


def _text(row: Node, cls: str) -> str:
    return row.all("td", cls)[0].text()


def test_the_page_names_and_colours_a_decision_as_the_terminal_does(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    # One owner of the words (jurat.models) and one of the colours (jurat.style).
    for row in _decision_rows(dom):
        receipt = _receipt_of(row, receipts)
        decision = Decision.model_validate(receipt["statement"]["predicate"]["decision"])
        assert row.attrs["data-outcome"] == decision.outcome
        assert f"tone-{tone_of(decision.outcome)}" in row.attrs["class"].split()
    assert f"--good: {TONE_HEX['good']}" in dom.all("style")[0].text()


def test_rows_follow_the_documented_order(dom: Node, receipts: list[dict[str, Any]]) -> None:
    rows = _decision_rows(dom)
    assert len(rows) == len(receipts)
    shown = [(r.attrs["data-campaign"], r.attrs["data-artifact"], r.attrs["data-review"])
             for r in rows]
    # docs/report.md: campaign; worst outcome first; artifact id; superseded after current.
    assert shown == [
        ("gsm8k-eq", "e-judged", "1"),
        ("gsm8k-eq", "e-numeric", "1"),
        ("pairs-2026", "p-1", "1"),
        ("review-2026", "r-gate", "1"),
        ("review-2026", "r-parse", "1"),
        ("review-2026", "r-good", "1"),
        ("review-2026", "r-split", "2"),
        ("review-2026", "r-split", "1"),
        ("skills-2026", "c-block", "1"),
        ("skills-2026", "c-warn", "1"),
        ("skills-2026", "c-ship", "1"),
    ]
    assert shown == documented_order([r.attrs for r in rows])
    groups = [n.text() for n in dom.by_id("decisions").all("tr", "campaign")]
    assert groups == ["campaign gsm8k-eq (equivalence)", "campaign pairs-2026 (pairwise)",
                      "campaign review-2026 (rubric)", "campaign skills-2026 (criteria)"]
    verify = [r.attrs["data-artifact"] for r in dom.by_id("verify").all("tbody")[0].all("tr")]
    assert verify == [a for _, a, _ in shown]


def test_decision_table_shows_the_signed_numbers(dom: Node) -> None:
    for artifact, want in EXPECTED.items():
        row = _row(dom, artifact)
        assert row.attrs["data-outcome"] == want and _text(row, "outcome") == want
    good = _row(dom, "r-good")
    assert _text(good, "score") == "Q 0.8625 (min 0.75)"
    assert _text(good, "agreement").startswith("3/3")
    assert _text(good, "samples") == "14 / 15"  # one timed-out sample
    assert _text(_row(dom, "c-block"), "score") == "pass 4/6"
    assert _text(_row(dom, "c-warn"), "agreement").startswith("min 7/11")
    assert _text(_row(dom, "e-numeric"), "score") == "settled deterministically"
    assert _text(_row(dom, "e-judged"), "agreement").startswith("2/3")


def test_every_review_version_is_listed_and_the_superseded_one_tagged(dom: Node) -> None:
    current, earlier = _row(dom, "r-split", 2), _row(dom, "r-split", 1)
    assert _text(current, "review") == "v2 current"
    assert _text(earlier, "review") == "v1 superseded by v2"
    assert earlier.attrs["data-superseded-by"] == "2" and current.attrs["data-superseded-by"] == ""
    assert "superseded" in earlier.attrs["class"].split()
    # They decided differently: both outcomes are on the page, each on its own version.
    assert (current.attrs["data-outcome"], earlier.attrs["data-outcome"]) == ("accept", "reject")
    assert _text(_row(dom, "r-good"), "review") == "v1"  # a single version needs no tag
    summary = dom.all("p", "summary")[0].text()
    assert summary.startswith("10 artifacts:") and "and 1 superseded review." in summary


def test_a_veto_shows_its_root_cause_first_and_no_judge_support(dom: Node) -> None:
    parse = _row(dom, "r-parse")
    assert parse.attrs["data-vetoed-by"] == "python.parse"
    assert _text(parse, "gates") == "python.parse; skipped: python.imports, tests.pass"
    assert (_text(parse, "score"), _text(parse, "agreement"), _text(parse, "samples")) == (
        "vetoed", "not asked", "not asked")
    reasons = [li.text() for li in dom.by_id(f"votes-{parse.attrs['id'][9:]}").all("li")]
    assert reasons == [
        "python.parse failed: line 1, column 15",
        "python.imports skipped: python.parse failed",
        "tests.pass skipped: python.parse failed",
        "judges not asked: veto by python.parse",
    ]
    # A receipt from before judges were skipped: its votes are recorded, none counted.
    gate = _row(dom, "r-gate")
    assert (_text(gate, "score"), _text(gate, "agreement")) == ("vetoed", "not considered: veto")
    assert "Q " not in _text(gate, "score") + _text(gate, "agreement")
    block = dom.by_id(f"votes-{gate.attrs['id'][9:]}")
    reasons = [li.text() for li in block.all("li")]
    # Recorded before issue 25 with node ids: the count, and the ids not repeated.
    assert reasons[0] == "tests.pass failed: 2 of 9 tests did not pass"
    assert reasons[1].startswith("15 judge votes not considered: veto by tests.pass")
    assert not any("independent votes agree" in r for r in reasons)
    votes = block.all("table", "votes")[0].all("tbody")[0].all("tr")
    assert len(votes) == 15 and all(v.attrs["data-considered"] == "no" for v in votes)
    assert {v.all("td", "considered")[0].text() for v in votes} == {"not considered: veto"}


def test_each_vote_shows_what_that_sample_said(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    for i, r in enumerate(receipts):
        details = dom.by_id(f"votes-{i}")
        assert details.tag == "details" and "open" not in details.attrs
        rows = details.all("table", "votes")[0].all("tbody")[0].all("tr")
        predicate = r["statement"]["predicate"]
        votes, kind = predicate["votes"], predicate["campaign"]["kind"]
        assert len(rows) == max(len(votes), 1)
        for row, recorded in zip(rows, votes, strict=False):
            judge, criterion, sample, order, said_cell = (c.text() for c in row.all("td")[:5])
            assert (judge, criterion, sample) == (
                recorded["judge"],
                recorded["criterion"],
                str(recorded["sample"]),
            )
            assert order == (recorded["order"] or "—")
            assert said_cell == row.attrs["data-said"] == said(
                kind, recorded, predicate["campaign"]["policy"])
    # The split panel: each sample carries its own word, not the decision's.
    split = dom.by_id("votes-3").all("table", "votes")[0].all("tbody")[0].all("tr")
    assert {r.attrs["data-said"] for r in split} == {"accept", "reject"}
    assert "judge said" not in dom.text()
    # Vetoed: the judges' own scores say accept, the gate rejected; the rows say both.
    gate = dom.by_id("votes-1").all("table", "votes")[0].all("tbody")[0].all("tr")
    assert {r.attrs["data-said"] for r in gate} == {"accept", "error: timeout"}
    pairwise = dom.by_id("votes-5").all("table", "votes")[0].all("tbody")[0].all("tr")
    # Judge A, sample 1 was shown BA and answered "A": canonical B.
    assert pairwise[1].all("td")[4].text() == "B"
    assert pairwise[1].all("td")[5].text().startswith("canonical; presented A, order BA")


def test_untrusted_text_renders_as_text(
    html: str, dom: Node, receipts: list[dict[str, Any]]
) -> None:
    hostile = json.loads(json.dumps(receipts[0]))
    hostile["statement"]["predicate"]["artifact"]["id"] = '"><img src=x onerror=alert(1)>'
    hostile["statement"]["predicate"]["campaign"]["id"] = "<b>bold</b>"
    tree = parse(_render([hostile], title="<script>t</script>"))
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


def test_agreement_histogram_counts_current_decisions_a_veto_did_not_make(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    svg = dom.by_id("agreement-histogram")
    assert "chart" in svg.attrs["class"]
    counted = [
        _receipt_of(r, receipts)["statement"]["predicate"]["decision"]
        for r in _decision_rows(dom)
        if not r.attrs["data-superseded-by"] and not r.attrs["data-vetoed-by"]
    ]
    expected = sum(d["agreement"] is not None for d in counted)
    expected += sum(len(d["criteria"]) for d in counted)
    counts = [int(t.text()) for t in svg.all("text", "count")]
    # r-good, r-split v2, p-1, e-judged and 18 criterion evaluations; not r-gate (vetoed) nor
    # r-split v1 (superseded), whose agreements are not null either.
    assert sum(counts) == expected == 4 + 18
    assert svg.all("rect", "bar")
    assert [t.text() for t in svg.all("text", "legend")] == [
        "decisions (judges agree)", "criterion evaluations (samples agree)"]


def test_convergence_draws_one_line_per_judge_with_a_legend(
    dom: Node, receipts: list[dict[str, Any]]
) -> None:
    charts = dom.by_id("convergence").all("svg", "chart")
    titles = [c.all("title")[0].text() for c in charts]
    assert titles == [  # in the order of the rows
        "equivalence · gsm8k-eq · 1 artifact",
        "pairwise · pairs-2026 · 1 artifact",
        "rubric · review-2026 · 3 artifacts",  # r-parse has no votes; r-split counts as v2
        "cites-sources (criteria) · skills-2026 · blocker · 3 artifacts",
        "cfo-headline (criteria) · skills-2026 · blocker · 3 artifacts",
        "concise (criteria) · skills-2026 · 3 artifacts",
    ]
    assert charts[3].all("line", "reference") and not charts[5].all("line", "reference")
    for chart in charts:
        lines = chart.all("polyline", "series")
        assert 1 <= len(lines) <= MAX_SERIES
        names = [t.text() for t in chart.all("text", "legend")]
        judges = [f"judge {j}" for j in ("ABC" if len(lines) == 3 else "JK" if len(lines) == 2
                                         else "E")]
        quorum = ["blocker quorum 0.8"] if chart.all("line", "reference") else []
        assert names == judges + quorum
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
    # A judge's line is the mean over its artifacts, each up to the samples it has.
    assert mean_agreement([["yes", "yes"], ["yes", "no", "no"]]) == (1.0, 0.75, 2 / 3)


def test_a_large_panel_is_split_into_small_charts() -> None:
    judges = panel("ABCDEF", samples=2)
    big = policy("criteria", id="big", judges=judges, criteria=criteria_suite(2))
    votes = [vote(j.id, k, criterion_answer("yes"), c) for j in judges for c in ("c1", "c2")
             for k in range(2)]
    charts = parse(_render([{"statement": statement(big, "x", [], votes)}])).by_id(
        "convergence").all("svg", "chart")
    assert [len(c.all("polyline", "series")) for c in charts] == [4, 2, 4, 2]
    assert charts[0].all("title")[0].text() == (
        "c1 (criteria) · big · blocker · judges 1/2 · 1 artifact")


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
    usd = parse(_render(priced)).by_id("cost").all("tr", "phase-judge")[0].all("td")[5]
    rubric_votes = [v for r in priced for v in r["statement"]["predicate"]["votes"]]
    want = (
        sum(
            v["usage"].get("input_tokens", 0) * 0.27 + v["usage"].get("output_tokens", 0) * 1.10
            for v in rubric_votes
        )
        / 1e6
    )
    assert usd.text() == f"${want:,.4f}"
    no_cost = parse(_render(priced)).by_id("cost").all("tr", "phase-execution")[0]
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
    codes = {
        r.attrs["data-artifact"]: r.all("code")[0].text()
        for r in dom.by_id("verify").all("tbody")[0].all("tr")
    }
    assert codes["r-good"] == "jurat verify /tmp/out/r-good.sigstore.json --key /tmp/keys/jurat.pub"
    assert len(dom.by_id("verify").all("code")) == len(receipts)
    odd = dict(receipts[0], receipt_path="/tmp/my out/r-good.sigstore.json", key_path=None)
    code = parse(_render([odd])).by_id("verify").all("code")[0].text()
    assert code == "jurat verify '/tmp/my out/r-good.sigstore.json' --key <pub>"


def test_a_statement_is_read_as_the_verifier_reads_it_or_refused(
    receipts: list[dict[str, Any]],
) -> None:
    # Step 4 of verification (schema and normal form), naming the field: nothing is read
    # leniently, so a field of the wrong type or one left to its default is not a dash.
    with pytest.raises(VerificationError, match=r"_type 'x' is not"):
        ReportReceipt.model_validate({"statement": {"_type": "x"}})
    with pytest.raises(pydantic.ValidationError, match=r"statement"):
        ReportReceipt.model_validate({"receipt_path": "x"})
    odd = json.loads(json.dumps(receipts[0]["statement"]))
    odd["predicate"]["decision"]["agreement"] = "2/3"
    with pytest.raises(VerificationError, match=r"predicate\.decision\.agreement"):
        ReportReceipt(statement=odd)
    defaulted = json.loads(json.dumps(receipts[0]["statement"]))
    del defaulted["predicate"]["votes"][0]["attempts"]  # the record has a default for it
    with pytest.raises(VerificationError, match="not in normal form"):
        ReportReceipt(statement=defaulted)
    # What an earlier jurat wrote and still verifies reads as it was signed: a vote with the
    # judge's explanation text, a gate without data.reference (receipt_builder.py).
    first = ReportReceipt.model_validate(receipts[0]).statement
    assert statement_document(first) == receipts[0]["statement"]


def test_rendering_is_deterministic_and_empty_input_renders(receipts: list[dict[str, Any]]) -> None:
    assert _render(receipts) == _render(receipts)
    empty = parse(render_report([]))
    assert "No receipts" in empty.by_id("decisions").text()


def test_load_receipt_files_decodes_bundles(tmp_path: Path, receipts: list[dict[str, Any]]) -> None:
    for i, r in enumerate(receipts[:3]):
        name = r["statement"]["predicate"]["artifact"]["id"]
        (tmp_path / f"{i}-{name}.sigstore.json").write_text(json.dumps(bundle(r["statement"])))
    (tmp_path / "notes.json").write_text("{}")
    loaded = load_receipt_files(tmp_path, key_path=tmp_path / "jurat.pub")
    assert [statement_document(x.statement) for x in loaded] == [
        r["statement"] for r in receipts[:3]]
    assert loaded[0].receipt_path == str(tmp_path / "0-r-good.sigstore.json")
    assert loaded[0].key_path == str(tmp_path / "jurat.pub")
    assert _row(parse(render_report(loaded)), "r-good").attrs["data-outcome"] == "accept"


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
        (_bundle(base64.b64encode(json.dumps({
            "_type": "https://in-toto.io/Statement/v1", "subject": [],
            "predicateType": "https://jurat.dev/decision/v1", "predicate": {},
        }).encode()).decode()), r"parse statement: \d+ schema error"),
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
    from jurat.receipts._statement import parse_statement

    key, pub = keygen(tmp_path / "keys")
    out = tmp_path / "out dir"  # a space: the command must quote it
    out.mkdir()
    signed = parse_statement(statement_for(*rubric_case()))  # made by jurat.receipts itself
    (out / "c1.sigstore.json").write_bytes(sign_statement(signed, load_private_key(key)))
    page = parse(render_report(load_receipt_files(out, key_path=pub)))
    assert _decision_rows(page)[0].attrs["data-outcome"] == "accept"
    command = shlex.split(page.by_id("verify").all("code")[0].text())
    assert command[:2] == ["jurat", "verify"]
    jurat = Path(sys.executable).with_name("jurat")
    done = subprocess.run([str(jurat), *command[1:]], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


# -- the page in a real browser ------------------------------------------------------------


def test_report_opens_in_headless_chromium(tmp_path: Path, html: str) -> None:
    page_file = tmp_path / "report.html"
    page_file.write_text(html, encoding="utf-8")
    shot = tmp_path / "shots" / "report.png"
    with open_page(page_file, tmp_path / "profile") as (page, seen):
        rows = page.locator("table#decisions > tbody > tr.decision")
        assert rows.count() == 11
        shown = {
            rows.nth(i).get_attribute("data-artifact"): rows.nth(i)
            .locator("td.outcome")
            .inner_text()
            .strip()
            for i in range(rows.count())
        }
        assert {k: v for k, v in shown.items() if k in EXPECTED} == EXPECTED
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
    assert seen.requests and all(u.startswith("file:") for u in seen.requests), seen.requests
    assert not seen.problems, seen.problems
    png = shot.read_bytes()
    width, height, distinct = png_pixels_vary(png)
    assert width == 1280 and height > 2000
    assert len(png) > 50_000 and distinct > 50
