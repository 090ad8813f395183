"""A reject caused by a failed required gate says so, not "too few independent votes" as
well (issue 37, item 5). The signed reasons are the fold's and re-derive character for
character (docs/receipt-format.md §8.8): they keep the kind's own sentence, so receipts
written before re-derive unchanged. What presents them as reasons (the CI file, the
report, the board: ``jurat.explain.reason_codes``) names the gate and that no judge was
asked, and nothing the kind's rule said of votes there were none of."""

from __future__ import annotations

from pathlib import Path

from jurat.canonical import canonical_json_value
from jurat.explain import reason_codes
from jurat.fold import FOLD_RULE, decide
from jurat.receipts import keygen, load_private_key, verify_bundle
from jurat.receipts._bundle import sign_payload
from jurat.report._codes import reason_codes as receipt_reason_codes
from tests.support.builders import (
    criteria_case,
    gates,
    rubric_case,
    statement_for,
    vote,
)

VETO = "required gate tests.pass fail (1 of 3 failed): veto"


def test_the_fold_keeps_its_reasons_and_the_codes_name_only_the_gate() -> None:
    case = rubric_case()
    d = decide(case.policy, gates(ok=False), ())
    # The fold is unchanged: its signed reasons are the veto, then the rubric's own rule.
    assert d.fold_rule == FOLD_RULE and d.disposition == "reject"
    assert d.reasons == (VETO, "too few independent votes: 0 of 3 required")
    codes = [r.to_json() for r in reason_codes(case.policy, gates(ok=False), d,
                                               judges_asked=False)]
    assert codes == [{"code": "gate_not_passed", "gate": "tests.pass", "outcome": "fail"},
                     {"code": "judges_not_asked", "outcome": "veto"}]


def test_judges_asked_and_silent_under_a_veto_still_count_as_too_few_votes() -> None:
    case = rubric_case()
    # judge_after_veto: asked, and every answer was an error.
    votes = [vote(j, i, None, error="judge_output") for j in "ABC" for i in range(5)]
    d = decide(case.policy, gates(ok=False), votes)
    codes = [r.code for r in reason_codes(case.policy, gates(ok=False), d, judges_asked=True)]
    assert codes == ["gate_not_passed", "too_few_votes"]


def test_criteria_not_asked_under_a_veto_list_no_criterion() -> None:
    case = criteria_case()
    d = decide(case.policy, gates(ok=False), ())
    assert d.rollout == "BLOCK" and d.criteria  # the outcomes are recorded, all unsure
    codes = [r.code for r in reason_codes(case.policy, gates(ok=False), d,
                                          judges_asked=False)]
    assert codes == ["gate_not_passed", "judges_not_asked"]
    asked = [r.code for r in reason_codes(case.policy, gates(ok=False), d, judges_asked=True)]
    assert "criterion_not_passed" in asked


def test_a_receipt_signed_with_the_kinds_sentence_verifies_and_reads_as_the_gate(
        tmp_path: Path) -> None:
    case = rubric_case()
    statement = statement_for(case.policy, gates(ok=False), (), inputs={
        "judges_skipped": "veto"})
    key_path, pub_path = keygen(tmp_path / "k")
    signed = sign_payload(canonical_json_value(statement), load_private_key(key_path))
    report = verify_bundle(signed, pub_path.read_bytes())
    assert report.ok, report.failed
    assert report.statement is not None
    predicate = report.statement.predicate
    assert "too few independent votes: 0 of 3 required" in predicate.decision.reasons
    assert [r.code for r in receipt_reason_codes(predicate)] == [
        "gate_not_passed", "judges_not_asked"]
