"""The report shows no reference answer, even from receipts written before jurat kept it out.

docs/receipt-format.md, "Reference material": receipts made earlier recorded the gold answer
in the ``equivalence.deterministic`` gate (detail, ``b_value``, ``b_answer``) and the judge's
REASON / NUMERIC_B; the report is contributor-visible and must not show it.
"""

from __future__ import annotations

from jurat.checks import deterministic_equivalence
from jurat.models import GATE_EQUIVALENCE_DETERMINISTIC, EquivalencePolicy
from jurat.report import ReportReceipt
from jurat.report._report import render_report
from tests.report.receipt_builder import statement
from tests.support.builders import gate, policy, vote

POLICY = policy(
    "equivalence",
    id="gold",
    judges="E",
    equivalence=EquivalencePolicy(votes=2, min_agreement=1),
)
A = "So he had 250,000-50,000=$200,000 left\nA: 200,000"
GOLD = "So he has 100,000-60,000=$40,000 leftover\nA: 40,000"
SECRETS = ("40,000", "40000", "leftover")


def _render(*statements: dict[str, object]) -> str:
    return render_report([ReportReceipt(statement=s) for s in statements])


def test_an_old_receipt_shows_neither_the_gold_gate_detail_nor_the_judge_reason() -> None:
    check = deterministic_equivalence(A, GOLD)
    old_gate = gate(
        GATE_EQUIVALENCE_DETERMINISTIC,
        "fail",
        required=False,
        tool="math-verify",
        detail=check.detail,
        data={"rule": "jurat.answers/v1", "b_value": check.b_value, "method": check.method},
    )
    assert "40,000" in old_gate.detail  # what an earlier jurat wrote
    skipped = gate(
        GATE_EQUIVALENCE_DETERMINISTIC,
        "skip",
        required=False,
        tool="math-verify",
        detail="a '200,000' = 200000, b '40,000' = 40000: rounding",
    )
    answer = {
        "decision": "DIFFERENT",
        "reason": "A says 200,000, B says 40,000",
        "numeric_a": "200000",
        "numeric_b": "40000",
    }
    votes = [
        vote("E", k, answer, "equivalence", prompt_id="invariance-checker/judge/v1@1")
        for k in range(2)
    ]
    html = _render(
        statement(POLICY, "old-settled", [old_gate], []),
        statement(POLICY, "old-judged", [skipped], votes),
    )
    assert [s for s in SECRETS if s in html] == []
    assert html.count("not shown: recorded before receipts kept the reference answer out") == 2


def test_a_current_receipt_shows_the_redacted_detail() -> None:
    gate = deterministic_equivalence(A, GOLD).to_gate()
    html = _render(statement(POLICY, "new", [gate], []))
    assert "a = 200000: different from the reference" in html
    assert [s for s in SECRETS if s in html] == []
