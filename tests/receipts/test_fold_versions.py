"""A receipt names its fold rule (docs/receipt-format.md §10): a ``jurat.fold/v1`` receipt
still verifies and re-derives with v1, a v2 one with v2, and the two differ exactly where
v2 adds a rule (model families, curtailment)."""

from __future__ import annotations

from pathlib import Path

from jurat.canonical import canonical_json
from jurat.fold import FOLD_RULE, FOLD_RULE_V1, decide
from jurat.receipts import (
    decision_statement,
    keygen,
    load_private_key,
    replay_fidelity_level_for,
    sign_statement,
    verify_bundle,
)
from tests.receipts.doc_verifier import verify_receipt
from tests.support.builders import (
    SEED_SCORES,
    arcv,
    artifact,
    evidence,
    gates,
    judge,
    policy,
    votes_by_judge,
)

ONE_MODEL = tuple(judge(n, "openai-compat", model="m", base_url="http://10.0.0.1/v1")
                  for n in "ABC")


def _receipt(tmp: Path, rule: str) -> tuple[bytes, bytes]:
    key_path, pub_path = keygen(tmp / rule.replace("/", "-"))
    p = policy(judges=ONE_MODEL)
    votes = votes_by_judge({n: [arcv(SEED_SCORES)] * 5 for n in "ABC"})
    statement = decision_statement(
        policy=p, artifact=artifact(), gates=gates(), votes=votes,
        decision=decide(p, gates(), votes, rule=rule), bundle=evidence(),
        replay_fidelity_level=replay_fidelity_level_for(p), jurat_version="0.1.0",
    )
    return sign_statement(statement, load_private_key(key_path)), pub_path.read_bytes()


def test_a_v1_receipt_still_verifies_and_keeps_its_decision(tmp_path: Path) -> None:
    receipt, pub = _receipt(tmp_path, FOLD_RULE_V1)
    report = verify_bundle(receipt, pub)
    assert report.ok, report
    verified = verify_receipt(receipt, pub)  # the independent verifier, from the doc alone
    decision = verified.statement["predicate"]["decision"]
    assert decision["fold_rule"] == FOLD_RULE_V1 and decision["disposition"] == "accept"
    assert "independent_families" not in decision
    assert b"independent_families" not in canonical_json(verified.statement)


def test_the_same_inputs_under_v2_escalate_one_model_family(tmp_path: Path) -> None:
    receipt, pub = _receipt(tmp_path, FOLD_RULE)
    assert verify_bundle(receipt, pub).ok
    decision = verify_receipt(receipt, pub).statement["predicate"]["decision"]
    assert decision["fold_rule"] == FOLD_RULE and decision["disposition"] == "escalate"
    assert (decision["independent_votes"], decision["independent_families"]) == (3, 1)
