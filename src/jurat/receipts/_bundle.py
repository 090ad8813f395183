"""The Sigstore bundle v0.3 that carries the DSSE envelope: build, parse, digest.

Bundles are written as RFC 8785 canonical JSON so that the sha256 of the file
is the receipt digest (``receipt_digest``), whatever tool later re-reads it.
"""

from __future__ import annotations

from typing import Any, Literal

from jurat.canonical import canonical_json, loads_strict, sha256_digest
from jurat.errors import ValidationError, VerificationError
from jurat.models import Frozen
from jurat.receipts._dsse import PAYLOAD_TYPE, b64decode, b64encode, pae
from jurat.receipts._keys import PrivateKey, public_key_hint, sign_bytes

BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
#: The pre-0.3 spelling of the same media type; Sigstore clients still read it.
_LEGACY_V03_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle+json;version=0.3"
_STEP = "parse envelope"


def sign_payload(payload: bytes, key: PrivateKey, *, payload_type: str = PAYLOAD_TYPE) -> bytes:
    """Sign arbitrary payload bytes into a canonical Sigstore bundle v0.3 (one signature)."""
    hint = public_key_hint(key.public_key())
    signature = sign_bytes(key, pae(payload_type, payload))
    bundle = {
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {"publicKey": {"hint": hint}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": b64encode(payload),
            "payloadType": payload_type,
            "signatures": [{"sig": b64encode(signature), "keyid": hint}],
        },
    }
    return canonical_json(bundle)


def sign_statement(statement: dict[str, Any], key: PrivateKey) -> bytes:
    """Sign an in-toto statement; returns the Sigstore bundle JSON bytes (RFC 8785 canonical).

    The DSSE payload is the RFC 8785 canonical JSON of ``statement``.
    """
    if not isinstance(statement, dict) or not isinstance(statement.get("_type"), str):
        raise ValidationError("statement: not an in-toto statement (no `_type`)")
    return sign_payload(canonical_json(statement), key)


def receipt_digest(bundle_bytes: bytes) -> str:
    """sha256 of the bundle's RFC 8785 canonical JSON: the id ``review.supersedes`` cites.

    For a bundle written by jurat this is the sha256 of the file's bytes.
    """
    try:
        parsed = loads_strict(bundle_bytes)
    except ValueError as exc:
        raise ValidationError(f"receipt is not JSON: {exc}") from exc
    return sha256_digest(canonical_json(parsed))


class ParsedBundle(Frozen):
    """A bundle after step 1: shape checked, nothing trusted yet."""

    media_type: str
    """The bundle's ``mediaType``."""
    material: Literal["publicKey", "certificate", "x509CertificateChain"]
    """Which verification material it carries: a key hint, or a (keyless) certificate."""
    hint: str | None
    """``verificationMaterial.publicKey.hint``, when present."""
    tlog_entries: int
    """Number of transparency-log entries (jurat writes none)."""
    payload_type: str
    """The envelope's ``payloadType`` (unauthenticated until the signature verifies)."""
    payload: bytes
    """The decoded payload bytes."""
    signature: bytes
    """The one decoded signature."""


def _fail(message: str) -> VerificationError:
    return VerificationError(message, step=_STEP)


def _material(vm: dict[str, Any]) -> tuple[str, str | None]:
    kinds = [k for k in ("publicKey", "certificate", "x509CertificateChain") if k in vm]
    if len(kinds) != 1:
        raise _fail(
            "verificationMaterial must hold exactly one of publicKey, certificate, "
            f"x509CertificateChain; found {kinds or 'none'}"
        )
    kind = kinds[0]
    if kind != "publicKey":
        return kind, None
    pk = vm["publicKey"]
    hint = pk.get("hint") if isinstance(pk, dict) else None
    if hint is not None and not isinstance(hint, str):
        raise _fail("verificationMaterial.publicKey.hint must be a string")
    return kind, hint


def parse_bundle(bundle_bytes: bytes) -> ParsedBundle:
    """Step 1: parse the Sigstore bundle and its DSSE envelope; exactly one signature."""
    try:
        doc = loads_strict(bundle_bytes)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _fail(f"not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise _fail("the bundle is not a JSON object")
    media_type = doc.get("mediaType")
    if media_type not in (BUNDLE_MEDIA_TYPE, _LEGACY_V03_MEDIA_TYPE):
        raise _fail(f"mediaType {media_type!r} is not {BUNDLE_MEDIA_TYPE}")
    vm = doc.get("verificationMaterial")
    if not isinstance(vm, dict):
        raise _fail("verificationMaterial is missing")
    material, hint = _material(vm)
    tlog = vm.get("tlogEntries", [])
    if not isinstance(tlog, list):
        raise _fail("verificationMaterial.tlogEntries must be a list")
    if "messageSignature" in doc:
        raise _fail("the bundle holds a messageSignature, not a DSSE envelope")
    env = doc.get("dsseEnvelope")
    if not isinstance(env, dict):
        raise _fail("dsseEnvelope is missing")
    payload_type = env.get("payloadType")
    if not isinstance(payload_type, str):
        raise _fail("dsseEnvelope.payloadType must be a string")
    payload = b64decode(env.get("payload"), "dsseEnvelope.payload", step=_STEP)
    if not payload:
        raise _fail("dsseEnvelope.payload is empty")
    sigs = env.get("signatures")
    if not isinstance(sigs, list) or len(sigs) != 1:
        count = len(sigs) if isinstance(sigs, list) else "no"
        raise _fail(f"dsseEnvelope must hold exactly one signature, found {count}")
    entry = sigs[0]
    if not isinstance(entry, dict):
        raise _fail("dsseEnvelope.signatures[0] must be an object")
    signature = b64decode(entry.get("sig"), "dsseEnvelope.signatures[0].sig", step=_STEP)
    if not signature:
        raise _fail("dsseEnvelope.signatures[0].sig is empty")
    return ParsedBundle(
        media_type=media_type,
        material=material,
        hint=hint,
        tlog_entries=len(tlog),
        payload_type=payload_type,
        payload=payload,
        signature=signature,
    )


def read_statement(bundle_bytes: bytes) -> dict[str, Any]:
    """The in-toto statement inside a receipt, decoded but NOT verified (use verify_bundle).

    For tools that display or index receipts already verified, or about to be.
    """
    parsed = parse_bundle(bundle_bytes)
    if parsed.payload_type != PAYLOAD_TYPE:
        raise _fail(f"dsseEnvelope.payloadType is {parsed.payload_type!r}, not {PAYLOAD_TYPE}")
    try:
        statement = loads_strict(parsed.payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _fail(f"the DSSE payload is not JSON: {exc}") from exc
    if not isinstance(statement, dict) or not isinstance(statement.get("predicate"), dict):
        raise _fail("the DSSE payload is not an in-toto statement with a predicate")
    return statement
