"""Stage 1/2 receipts as an upstream signer issues them (docs/campaign-format.md,
"[upstream]"): a Sigstore bundle over an in-toto statement naming the artifact's sha256,
with the stage, when it was issued and, optionally, until when it holds."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

from jurat.canonical import canonical_json, sha256_digest
from jurat.receipts import load_private_key, load_public_key
from jurat.receipts._bundle import sign_payload
from jurat.receipts._keys import public_key_der

STAGE1 = "https://example.org/stage1/v1"
ISSUED = "2026-01-01T00:00:00Z"


def upstream_receipt(key: Path, text: str, *, stage: str | None = "stage1",
                     issued_at: str = ISSUED, not_after: str | None = None,
                     predicate_type: str = STAGE1) -> dict[str, Any]:
    """A bundle signed with the private key at ``key`` about the bytes of ``text``;
    ``stage=None`` leaves the stage out, as a receipt of before stages would."""
    predicate: dict[str, Any] = {"structurally_admitted": True, "issued_at": issued_at}
    if stage is not None:
        predicate["stage"] = stage
    if not_after is not None:
        predicate["not_after"] = not_after
    statement = {"_type": "https://in-toto.io/Statement/v1",
                 "subject": [{"name": "candidate", "digest": {"sha256": sha256_digest(text)}}],
                 "predicateType": predicate_type, "predicate": predicate}
    bundle: dict[str, Any] = json.loads(sign_payload(canonical_json(statement),
                                                     load_private_key(key)))
    return bundle


def payload_sha256(bundle: dict[str, Any]) -> str:
    """What a jurat receipt binds the bundle by: the sha256 of its signed DSSE payload."""
    return hashlib.sha256(base64.b64decode(bundle["dsseEnvelope"]["payload"])).hexdigest()


def key_sha256(public_pem: Path) -> str:
    """sha256 of a public key's DER SubjectPublicKeyInfo, as a receipt names its signer."""
    return hashlib.sha256(public_key_der(load_public_key(public_pem))).hexdigest()
