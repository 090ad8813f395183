"""Keyed reference digests in receipts (issue 36, docs/receipt-format.md §6.4, §7 step 5,
§11.3): new receipts bind a target by ``inputs.target_hmac`` and never a plain digest;
receipts written before keep verifying and re-deriving byte for byte; step 5 checks the
binding given the reference and the key, and says it did not without them."""

from __future__ import annotations

from typing import Any

import pytest

from jurat.canonical import canonical_json_value, keyed_digest, sha256_digest
from jurat.errors import ValidationError
from jurat.models import GATE_EQUIVALENCE_DETERMINISTIC, Artifact, GateOutcome, Untrusted
from jurat.models._artifact import PAIR_MEDIA_TYPE, pair_digest
from jurat.receipts import PrivateKey, load_public_key, verify_bundle
from jurat.receipts._bundle import sign_payload
from jurat.receipts._statement import parse_statement
from tests.receipts.doc_verifier import DocVerifyError, verify_receipt
from tests.support.builders import (
    artifact,
    criteria_case,
    equivalence_case,
    statement_for,
)

KEY = b"r" * 32
TARGET = "Canberra"


def _signed(doc: dict[str, Any], key: PrivateKey) -> bytes:
    """The receipt of a statement document, signed as jurat signs (its RFC 8785 bytes)."""
    return sign_payload(canonical_json_value(doc), key)


def _criteria(**fields: Any) -> dict[str, Any]:
    subject = artifact("Sydney", id="q1", media_type="text/plain",
                       target=Untrusted(TARGET, "reference"), **fields)
    return statement_for(*criteria_case(), subject=subject)


def test_a_target_is_recorded_by_its_keyed_digest_only() -> None:
    doc = _criteria(reference_hmac=keyed_digest(KEY, TARGET))
    inputs = doc["predicate"]["inputs"]
    assert inputs["target_hmac"] == keyed_digest(KEY, TARGET)
    assert "target_sha256" not in inputs
    assert sha256_digest(TARGET) not in str(doc)
    # A target intake did not key is never signed under a plain digest.
    with pytest.raises(ValidationError, match="no keyed digest"):
        _criteria()


def test_a_receipt_written_before_keyed_digests_still_verifies(
        private_key: PrivateKey, pub_path: Any) -> None:
    doc = _criteria(reference_hmac=keyed_digest(KEY, TARGET))
    inputs = doc["predicate"]["inputs"]
    del inputs["target_hmac"]
    inputs["target_sha256"] = sha256_digest(TARGET)  # as jurat wrote it before issue 36
    parse_statement(doc)  # step 4's normal form holds
    bundle = _signed(doc, private_key)
    public = load_public_key(pub_path)
    report = verify_bundle(bundle, public)
    assert report.ok and report.reference_checked is None
    assert report.statement is not None
    assert report.statement.predicate.inputs.target_sha256 == sha256_digest(TARGET)
    assert verify_receipt(bundle, pub_path.read_bytes()).reference_checked is None
    # Nothing keyed to check it against: a reference given fails step 5, naming why.
    given = verify_bundle(bundle, public, reference_hmac=keyed_digest(KEY, TARGET))
    assert given.failed is not None and given.failed.number == 5
    assert "binds none by a keyed digest" in given.failed.detail


def test_step_5_checks_the_target_with_the_key_and_says_so_without(
        private_key: PrivateKey, pub_path: Any) -> None:
    bundle = _signed(_criteria(reference_hmac=keyed_digest(KEY, TARGET)), private_key)
    public = load_public_key(pub_path)
    without = verify_bundle(bundle, public)
    assert without.ok and without.reference_checked is False
    assert "reference binding not checked" in without.steps[4].detail
    held = verify_bundle(bundle, public, reference_hmac=keyed_digest(KEY, TARGET))
    assert held.ok and held.reference_checked is True
    for wrong in (keyed_digest(KEY, "Sydney"), keyed_digest(b"o" * 32, TARGET)):
        failed = verify_bundle(bundle, public, reference_hmac=wrong)
        assert not failed.ok and failed.failed is not None and failed.failed.number == 5
        assert "inputs.target_hmac is not the keyed digest" in failed.failed.detail
    pem = pub_path.read_bytes()
    assert verify_receipt(bundle, pem, reference=(KEY, TARGET.encode())).reference_checked
    with pytest.raises(DocVerifyError) as info:
        verify_receipt(bundle, pem, reference=(KEY, b"Sydney"))
    assert info.value.step == 5


def _pair_statement(b: str, *, gate_data: dict[str, Any]) -> dict[str, Any]:
    policy, gates, votes = equivalence_case()
    keyed = keyed_digest(KEY, b)
    a = "A: 200000"
    subject = Artifact(id="p1", sha256=pair_digest(sha256_digest(a), keyed),
                       media_type=PAIR_MEDIA_TYPE, a=a, b=b, reference_hmac=keyed)
    gate = GateOutcome(id=GATE_EQUIVALENCE_DETERMINISTIC, outcome="skip", tool="math-verify",
                       data=gate_data)
    return statement_for(policy, [*gates, gate], votes, subject=subject)


def test_a_pair_is_checked_from_its_a_its_b_and_the_key(
        private_key: PrivateKey, pub_path: Any) -> None:
    b = "40000"
    keyed = keyed_digest(KEY, b)
    bundle = _signed(_pair_statement(b, gate_data={"reference": "b", "reference_hmac": keyed}),
                     private_key)
    public = load_public_key(pub_path)
    a_sha256 = sha256_digest("A: 200000")
    held = verify_bundle(bundle, public, artifact_sha256=a_sha256, reference_hmac=keyed)
    assert held.ok and held.reference_checked is True
    assert "the pair of the given a and reference" in held.steps[4].detail
    # Without the reference, a's digest is not the pair's: step 5 says how to give it.
    alone = verify_bundle(bundle, public, artifact_sha256=a_sha256)
    assert alone.failed is not None and "a pair's digest binds both parts" in alone.failed.detail
    wrong = verify_bundle(bundle, public, artifact_sha256=a_sha256,
                          reference_hmac=keyed_digest(KEY, "40001"))
    assert wrong.failed is not None and wrong.failed.number == 5
    assert verify_receipt(bundle, pub_path.read_bytes(), artifact_sha256=a_sha256,
                          reference=(KEY, b.encode())).reference_checked is True
