"""Adjudication as a fold input (fold/_adjudication.py): what it may settle, and that a
receipt whose adjudication says otherwise does not re-derive."""

from __future__ import annotations

import copy

import pytest

from jurat.errors import FoldInputError
from jurat.fold import decide
from jurat.models import RISK_TIERS, Adjudication
from jurat.receipts import adjudicated_statement, rederive, statement_document
from jurat.receipts._statement import decision_mismatches, parse_statement
from tests.support.builders import gates, policy, rubric_votes, statement_for

CRITICAL = policy(id="crit", judges="ABC", samples=3, tier=RISK_TIERS["critical"],
                  allowed_destinations=("sim",))
STANDARD = policy(id="std", judges="ABC", samples=3, allowed_destinations=("sim",))


def _adj(disposition: str = "accept") -> Adjudication:
    return Adjudication(reviewer="rita", at="2026-12-01T00:00:00.000000Z",
                        disposition=disposition, rationale="Checked by hand.")  # type: ignore[arg-type]


def test_only_an_adjudication_accepts_in_the_critical_tier() -> None:
    votes = rubric_votes()
    panel = decide(CRITICAL, gates(), votes)
    assert panel.disposition == "escalate"
    settled = decide(CRITICAL, gates(), votes, adjudication=_adj())
    assert settled.disposition == "accept" and settled.adjudicated is True
    assert settled.reasons[0].startswith("adjudicated accept by rita")
    assert decide(CRITICAL, gates(), votes, adjudication=_adj("reject")).disposition == "reject"
    # Without one, the field is absent: decisions recorded before it keep their form.
    assert "adjudicated" not in panel.model_dump(mode="json")


def test_an_adjudication_cannot_lift_a_failed_gate_or_settle_what_is_settled() -> None:
    votes = rubric_votes()
    with pytest.raises(FoldInputError, match="review.adjudication"):
        decide(STANDARD, gates(), votes, adjudication=_adj())  # accepted already
    with pytest.raises(FoldInputError, match="review.adjudication"):
        decide(CRITICAL, gates(ok=False), votes, adjudication=_adj())  # the veto rejected
    missing = [g for g in gates() if g.id != "tests.pass"]
    assert decide(CRITICAL, missing, votes).disposition == "escalate"
    with pytest.raises(FoldInputError, match="cannot override a required gate"):
        decide(CRITICAL, missing, votes, adjudication=_adj())
    assert decide(CRITICAL, missing, votes, adjudication=_adj("reject")).disposition == "reject"


def test_a_receipt_with_an_edited_adjudication_does_not_rederive() -> None:
    first = parse_statement(statement_for(CRITICAL, gates(), rubric_votes()))
    second = statement_document(adjudicated_statement(
        first, version=2, supersedes="ab" * 32, adjudication=_adj()))
    recorded = second["predicate"]["decision"]
    assert recorded["disposition"] == "accept" and recorded["adjudicated"] is True
    assert not decision_mismatches(rederive(second), recorded)
    for edit in ({"disposition": "reject"}, None):
        forged = copy.deepcopy(second)
        adjudication = forged["predicate"]["review"]
        adjudication["adjudication"] = (None if edit is None
                                        else {**adjudication["adjudication"], **edit})
        assert decision_mismatches(rederive(forged), recorded), edit
