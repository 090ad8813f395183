"""The signed qualification record: an in-toto statement of its own predicate type.

Signed through receipts' one signing path for payloads (``sign_payload``: a Sigstore bundle
v0.3 whose DSSE payload is the statement's RFC 8785 JSON) with the receipts' key. Its fold
inputs are the recorded samples (and the gold labels, operator material: the record is the
operator's, never shown to a contributor), so ``verify_record`` re-derives every figure
from the signed bytes and refuses a record whose figures do not follow from its samples.
Items are named by their artifact's sha256 only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jurat.canonical import canonical_json, digest_json, loads_strict
from jurat.errors import VerificationError
from jurat.models import Policy
from jurat.qualify._identity import judge_identity
from jurat.qualify._measure import JudgeFigures, Sample, measure
from jurat.receipts import (
    load_private_key,
    receipt_digest,
)
from jurat.receipts._bundle import parse_bundle, sign_payload
from jurat.receipts._dsse import PAYLOAD_TYPE, pae
from jurat.receipts._keys import PublicKey, load_or_create_default_key, verify_bytes

__all__ = ["PREDICATE_TYPE", "qualification_statement", "sign_record", "verify_record"]

PREDICATE_TYPE = "https://jurat.dev/qualification/v1"
_STATEMENT_TYPE = "https://in-toto.io/Statement/v1"


def qualification_statement(policy: Policy, samples: Sequence[Sample],
                            gold: Mapping[tuple[str, str], str],
                            figures: Sequence[JudgeFigures], *, samples_per_cell: int,
                            windows: int, spacing_ms: int, pause: float, budget: float,
                            started: float) -> dict[str, Any]:
    """The statement: judges as subjects (by identity digest), design, samples, figures."""
    return {
        "_type": _STATEMENT_TYPE,
        # A judge is named by its identity (``_require.judge_identity``), so a campaign
        # that requires this record finds its judge under another id or sample count.
        "subject": [{"name": f"judge:{j.id}", "digest": {"sha256": judge_identity(j)}}
                    for j in policy.judges],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "policy_sha256": digest_json(policy),
            "kind": policy.kind,
            "design": {"samples_per_cell": samples_per_cell, "windows": windows,
                       "modes": ["burst", "spaced"], "spacing_ms": spacing_ms,
                       "pause_s": pause, "budget": budget, "started_unix": int(started)},
            "gold": [[item, criterion, label]
                     for (item, criterion), label in sorted(gold.items())],
            "samples": [s.model_dump(mode="json") for s in samples],
            "figures": [f.model_dump(mode="json") for f in figures],
        },
    }


def sign_record(statement: Mapping[str, Any], key: Path | None) -> tuple[bytes, str]:
    """The signed record (bundle bytes) and its sha256 (the digest a campaign cites)."""
    private = load_private_key(key) if key is not None else load_or_create_default_key()[0]
    bundle = sign_payload(canonical_json(dict(statement)), private)
    return bundle, receipt_digest(bundle)


def _rederive(predicate: Mapping[str, Any]) -> list[dict[str, Any]]:
    samples = [Sample.model_validate(s) for s in predicate["samples"]]
    gold = {(item, criterion): label for item, criterion, label in predicate["gold"]}
    kind = predicate["kind"]
    out = []
    for recorded in predicate["figures"]:
        again = measure(recorded["judge"], "criterion" if kind == "criteria" else kind,
                        samples, gold, campaign_samples=recorded["campaign_samples"],
                        quorum=recorded["quorum"], budget=recorded["budget"])
        out.append(again.model_dump(mode="json"))
    return out


def verify_record(bundle_bytes: bytes, public_key: PublicKey) -> list[str]:
    """Check a qualification record in numbered steps; the lines of the steps that held.

    Raises VerificationError naming the first step that failed.
    """
    parsed = parse_bundle(bundle_bytes)
    lines = ["1. bundle parsed: one DSSE signature"]
    if parsed.payload_type != PAYLOAD_TYPE or not verify_bytes(
            public_key, parsed.signature, pae(parsed.payload_type, parsed.payload)):
        raise VerificationError("the signature does not verify with this key", step="2")
    lines.append("2. signature verified")
    try:
        statement = loads_strict(parsed.payload)  # bounded: a record may be hostile
        predicate = statement["predicate"]
        if statement.get("predicateType") != PREDICATE_TYPE:
            raise VerificationError(f"predicateType is not {PREDICATE_TYPE}", step="3")
    except (ValueError, KeyError, TypeError) as exc:
        raise VerificationError(f"not a qualification statement: {exc}", step="3") from exc
    lines.append(f"3. statement is {PREDICATE_TYPE}: {len(predicate['samples'])} samples, "
                 f"{len(predicate['figures'])} judges")
    try:
        again = _rederive(predicate)
    except (ValueError, KeyError, TypeError) as exc:
        raise VerificationError(f"samples cannot be re-read: {exc}", step="4") from exc
    if canonical_json(again) != canonical_json(predicate["figures"]):
        raise VerificationError("the recorded figures do not re-derive from the signed "
                                "samples", step="4")
    lines.append("4. every figure re-derived from the signed samples")
    return lines
