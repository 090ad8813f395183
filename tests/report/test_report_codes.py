"""A receipt's reasons as codes, its gate failures as counts and its adjudication, as the
public board and the report show them (report/_codes.py, issue 29): the same codes as
`jurat run --json` (jurat.explain), and never a test's name or a private rationale."""

from __future__ import annotations

from typing import Any

from jurat.explain import REASON_CODES
from jurat.models import Adjudication
from jurat.report._codes import adjudication_note, gate_failures, reason_codes
from jurat.report._codes_html import adjudication_markup, codes_markup
from jurat.report._report_data import ReportReceipt, views_of
from tests.report.receipt_builder import criteria_statements, rubric_statements


def _by_id(statements: list[dict[str, Any]]) -> dict[str, Any]:
    receipts = [ReportReceipt(statement=s) for s in statements]
    return {r.statement.predicate.artifact.id: r.statement.predicate for r in receipts}


def test_a_failed_test_gate_is_a_count_and_a_code_never_a_test_name() -> None:
    by_id = _by_id(rubric_statements())
    gate = by_id["r-gate"]
    assert [f.text for f in gate_failures(gate)] == ["tests_failed 2"]
    codes = [r.to_json() for r in reason_codes(gate)]
    assert codes[0] == {"code": "gate_not_passed", "gate": "tests.pass", "outcome": "fail"}
    markup = codes_markup(reason_codes(gate), gate_failures(gate))
    assert 'data-kind="tests_failed" data-count="2"' in markup
    assert "test_empty" not in markup and "test_dip" not in markup
    # A candidate that does not parse: the root cause, then what it made skip.
    parse = by_id["r-parse"]
    assert [f.text for f in gate_failures(parse)] == ["parse_failed 1", "imports_skipped 1",
                                                     "tests_skipped 1"]
    assert {"code": "judges_not_asked", "outcome": "veto"} in [
        r.to_json() for r in reason_codes(parse)]
    assert gate_failures(by_id["r-good"]) == ()


def test_every_receipt_reason_has_a_known_code() -> None:
    for predicate in _by_id(rubric_statements() + criteria_statements()).values():
        codes = [r.code for r in reason_codes(predicate)]
        assert set(codes) <= set(REASON_CODES), predicate.decision.reasons
        assert "other" not in codes, predicate.decision.reasons
        # A criteria SHIP has nothing to explain; every other decision has a reason.
        assert codes or predicate.decision.outcome == "SHIP", predicate.decision


def test_the_board_shows_a_rationale_only_where_the_reviewer_published_it() -> None:
    predicate = _by_id(rubric_statements())["r-good"]
    private = Adjudication(reviewer="rita", at="2026-12-01T10:00:00Z", disposition="reject",
                           rationale="the hidden case QZX fails")
    review = predicate.review.model_copy(update={"adjudication": private})
    shown = adjudication_markup(adjudication_note(predicate.model_copy(
        update={"review": review})))
    assert "adjudicated: reject by rita at 2026-12-01T10:00:00Z" in shown
    assert "QZX" not in shown and "rationale not published" in shown
    public = private.model_copy(update={"rationale_public": True})
    review = predicate.review.model_copy(update={"adjudication": public})
    shown = adjudication_markup(adjudication_note(predicate.model_copy(
        update={"review": review})))
    assert "rationale: the hidden case QZX fails" in shown
    # Absent when false: receipts adjudicated before the flag keep their normal form.
    assert "rationale_public" not in private.model_dump()
    assert public.model_dump()["rationale_public"] is True


def test_report_views_carry_the_codes() -> None:
    views = views_of([ReportReceipt(statement=s) for s in rubric_statements()])
    gate = next(v for v in views if v.artifact_id == "r-gate")
    assert [f.kind for f in gate.gate_failures] == ["tests_failed"]
    assert gate.reason_codes[0].code == "gate_not_passed"


def test_the_report_shows_each_campaigns_headline_rate() -> None:
    """The rate `jurat run` prints, over the current verdicts, labelled for what it measures
    (issue 29: the headline metric in the terminal, the JSON and the report)."""
    from jurat.fold import MEASURES
    from jurat.report import render_report

    receipts = [ReportReceipt(statement=s) for s in rubric_statements() + criteria_statements()]
    page = render_report(receipts)
    shown = page.split('<ul id="headline">')[1].split("</ul>")[0]
    # Current rubric verdicts: r-good and r-split's v2 accept, r-gate and r-parse reject (its
    # superseded v1 is not counted); the criteria campaign ships one of three.
    assert "review-2026: accept rate 0.50 [0.15, 0.85] (n=4)" in shown, shown
    assert "skills-2026: ship rate 0.33 [" in shown and "(n=3)" in shown, shown
    assert MEASURES in page
