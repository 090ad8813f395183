"""The Sigstore bundle v0.3 that carries the DSSE envelope: build, parse, digest.

Bundles are written as RFC 8785 canonical JSON so that the sha256 of the file
is the receipt digest (``receipt_digest``), whatever tool later re-reads it.

Threat model of ``parse_bundle`` (step 1 of verification): anyone may hand jurat a
receipt and controls all of its bytes. They must not reach a crash, a stall or an
unbounded allocation, and no byte of the bundle may go unread-but-accepted: the
whole document is at most ``MAX_BUNDLE_BYTES`` and ``MAX_DEPTH`` levels deep
(checked before parsing, by ``loads_strict``), UTF-8 only, and every object the
Sigstore bundle v0.3 schema defines is an object with only that schema's fields,
as a protobuf JSON parser refuses unknown fields by default. Content jurat does
not interpret (certificates, transparency-log entries, timestamps) is only
type-checked and bounded; step 3 refuses keyless material anyway.
(docs/receipt-format.md §2.2 and §7.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from jurat.canonical import MAX_JSON_DEPTH, canonical_json, loads_strict, sha256_digest
from jurat.errors import ValidationError, VerificationError
from jurat.models import Frozen
from jurat.receipts._dsse import PAYLOAD_TYPE, b64decode, b64encode, pae
from jurat.receipts._keys import PrivateKey, public_key_hint, sign_bytes

BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
#: The pre-0.3 spelling of the same media type; Sigstore clients still read it.
_LEGACY_V03_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle+json;version=0.3"
#: The largest receipt jurat reads or writes: 16 MiB. A criteria receipt with 186 votes
#: is 79 kB, so this leaves room for about 30 000 votes in one receipt.
MAX_BUNDLE_BYTES = 16 * 1024 * 1024
#: The deepest JSON nesting of a bundle, and separately of its payload (a statement
#: nests about ten levels; a keyless bundle about six).
MAX_DEPTH = MAX_JSON_DEPTH
_STEP = "parse envelope"
# The Sigstore bundle v0.3 fields (protobuf-specs, lowerCamelCase JSON names) of each
# object jurat reads; anything else is refused.
_BUNDLE_FIELDS = frozenset(
    {"mediaType", "verificationMaterial", "dsseEnvelope", "messageSignature"}
)
_MATERIAL_FIELDS = frozenset(
    {"publicKey", "certificate", "x509CertificateChain", "tlogEntries", "timestampVerificationData"}
)
Material = Literal["publicKey", "certificate", "x509CertificateChain"]
_MATERIALS: tuple[Material, ...] = ("publicKey", "certificate", "x509CertificateChain")
_PUBLIC_KEY_FIELDS = frozenset({"hint"})
_ENVELOPE_FIELDS = frozenset({"payload", "payloadType", "signatures"})
_SIGNATURE_FIELDS = frozenset({"sig", "keyid"})


def sign_payload(payload: bytes, key: PrivateKey, *, payload_type: str = PAYLOAD_TYPE) -> bytes:
    """Sign payload bytes into a canonical Sigstore bundle v0.3 (one signature).

    The DSSE step under ``sign_statement``, which checks a statement before it is signed
    and is how jurat signs decisions; tests call this one directly to sign bytes a verifier
    must refuse.
    """
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
    data = canonical_json(bundle)
    if len(data) > MAX_BUNDLE_BYTES:
        # Never write a receipt that jurat's own verifier (and docs/receipt-format.md) refuses.
        raise ValidationError(
            f"the receipt would be {len(data)} bytes, more than the {MAX_BUNDLE_BYTES}-byte "
            "limit of a receipt"
        )
    return data


def receipt_digest(bundle_bytes: bytes) -> str:
    """sha256 of the bundle's RFC 8785 canonical JSON: the id ``review.supersedes`` cites.

    For a bundle written by jurat this is the sha256 of the file's bytes. Raises
    ValidationError for bytes that are not a JSON document within the receipt limits.
    """
    try:
        parsed = loads_strict(bundle_bytes, max_bytes=MAX_BUNDLE_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise ValidationError(f"receipt is not JSON: {exc}") from exc
    return sha256_digest(canonical_json(parsed))


class ParsedBundle(Frozen):
    """A bundle after step 1: shape checked, nothing trusted yet."""

    media_type: str
    """The bundle's ``mediaType``."""
    material: Material
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


def _kind(value: Any) -> str:
    """The JSON type name of a parsed value, for messages."""
    if isinstance(value, bool):
        return "boolean"
    names = {dict: "object", list: "array", str: "string", int: "number", float: "number"}
    return names.get(type(value), "null")


def _name(key: str) -> str:
    # Field names come from the receipt: shown quoted, escaped and short.
    return repr(key if len(key) <= 40 else key[:40] + "...")


def _object(value: Any, where: str, fields: frozenset[str] | None = None) -> dict[str, Any]:
    """``value`` as a JSON object; with ``fields``, holding no other field."""
    if not isinstance(value, dict):
        raise _fail(f"{where} must be a JSON object, found {_kind(value)}")
    if fields is not None:
        unknown = sorted(set(value) - fields)
        if unknown:
            shown = ", ".join(_name(k) for k in unknown[:3]) + (" ..." if len(unknown) > 3 else "")
            raise _fail(
                f"{where} has unknown field(s) {shown}; in a Sigstore bundle v0.3 it holds "
                f"only {', '.join(sorted(fields))}"
            )
    return value


def _string(obj: Mapping[str, Any], field: str, where: str) -> str | None:
    """An optional string field (absent is None; JSON null is refused)."""
    if field not in obj:
        return None
    value = obj[field]
    if not isinstance(value, str):
        raise _fail(f"{where}.{field} must be a string, found {_kind(value)}")
    return value


def _material(vm: dict[str, Any]) -> tuple[Material, str | None]:
    kinds = [k for k in _MATERIALS if k in vm]
    if len(kinds) != 1:
        raise _fail(
            "verificationMaterial must hold exactly one of publicKey, certificate, "
            f"x509CertificateChain; found {kinds or 'none'}"
        )
    kind = kinds[0]
    if kind != "publicKey":
        # Keyless material: only its shape is checked here; step 3 refuses it.
        _object(vm[kind], f"verificationMaterial.{kind}")
        return kind, None
    pk = _object(vm[kind], "verificationMaterial.publicKey", _PUBLIC_KEY_FIELDS)
    return kind, _string(pk, "hint", "verificationMaterial.publicKey")


def _tlog_entries(vm: dict[str, Any]) -> int:
    tlog = vm.get("tlogEntries", [])
    if not isinstance(tlog, list):
        raise _fail(f"verificationMaterial.tlogEntries must be an array, found {_kind(tlog)}")
    for i, entry in enumerate(tlog):
        _object(entry, f"verificationMaterial.tlogEntries[{i}]")
    if "timestampVerificationData" in vm:
        _object(vm["timestampVerificationData"], "verificationMaterial.timestampVerificationData")
    return len(tlog)


def parse_bundle(bundle_bytes: bytes) -> ParsedBundle:
    """Step 1: parse the Sigstore bundle and its DSSE envelope; exactly one signature.

    Raises VerificationError (step ``parse envelope``) for anything else, including
    bytes beyond ``MAX_BUNDLE_BYTES`` or nesting beyond ``MAX_DEPTH``.
    """
    try:
        doc = loads_strict(bundle_bytes, max_bytes=MAX_BUNDLE_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise _fail(f"not JSON: {exc}") from exc
    doc = _object(doc, "the bundle", _BUNDLE_FIELDS)
    media_type = doc.get("mediaType")
    if not isinstance(media_type, str) or media_type not in (
        BUNDLE_MEDIA_TYPE,
        _LEGACY_V03_MEDIA_TYPE,
    ):
        shown = repr(media_type)[:80] if isinstance(media_type, str) else _kind(media_type)
        raise _fail(f"mediaType {shown} is not {BUNDLE_MEDIA_TYPE}")
    if "verificationMaterial" not in doc:
        raise _fail("verificationMaterial is missing")
    vm = _object(doc["verificationMaterial"], "verificationMaterial", _MATERIAL_FIELDS)
    material, hint = _material(vm)
    tlog_entries = _tlog_entries(vm)
    if "messageSignature" in doc:
        raise _fail("the bundle holds a messageSignature, not a DSSE envelope")
    if "dsseEnvelope" not in doc:
        raise _fail("dsseEnvelope is missing")
    env = _object(doc["dsseEnvelope"], "dsseEnvelope", _ENVELOPE_FIELDS)
    payload_type = env.get("payloadType")
    if not isinstance(payload_type, str):
        raise _fail(f"dsseEnvelope.payloadType must be a string, found {_kind(payload_type)}")
    payload = b64decode(env.get("payload"), "dsseEnvelope.payload", step=_STEP)
    if not payload:
        raise _fail("dsseEnvelope.payload is empty")
    sigs = env.get("signatures")
    if not isinstance(sigs, list) or len(sigs) != 1:
        count = len(sigs) if isinstance(sigs, list) else "no"
        raise _fail(f"dsseEnvelope must hold exactly one signature, found {count}")
    entry = _object(sigs[0], "dsseEnvelope.signatures[0]", _SIGNATURE_FIELDS)
    _string(entry, "keyid", "dsseEnvelope.signatures[0]")
    signature = b64decode(entry.get("sig"), "dsseEnvelope.signatures[0].sig", step=_STEP)
    if not signature:
        raise _fail("dsseEnvelope.signatures[0].sig is empty")
    return ParsedBundle(
        media_type=media_type,
        material=material,
        hint=hint,
        tlog_entries=tlog_entries,
        payload_type=payload_type,
        payload=payload,
        signature=signature,
    )


def read_statement(bundle_bytes: bytes) -> dict[str, Any]:
    """The in-toto statement inside a receipt, decoded but NOT verified (use verify_bundle).

    For tools that display or index receipts already verified, or about to be (the
    report, replay). The same limits as verification apply (``MAX_BUNDLE_BYTES``,
    ``MAX_DEPTH`` for the bundle and for the payload), so a hostile receipt is a
    VerificationError here too, never a crash.
    """
    parsed = parse_bundle(bundle_bytes)
    if parsed.payload_type != PAYLOAD_TYPE:
        raise _fail(f"dsseEnvelope.payloadType is {parsed.payload_type[:80]!r}, not {PAYLOAD_TYPE}")
    try:
        statement = loads_strict(parsed.payload, max_bytes=MAX_BUNDLE_BYTES, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise _fail(f"the DSSE payload is not JSON: {exc}") from exc
    if not isinstance(statement, dict) or not isinstance(statement.get("predicate"), dict):
        raise _fail("the DSSE payload is not an in-toto statement with a predicate")
    return statement


def signing_key_id(bundle_bytes: bytes) -> str | None:
    """The key id a receipt names for its signer, read but NOT verified: the bundle's
    ``publicKey.hint`` (jurat writes the same value as the DSSE signature's ``keyid``;
    docs/receipt-format.md §2), None for keyless material or a bundle without a hint.

    What ``jurat run`` compares with its ``--key`` before it reuses a receipt; the hint
    is the only one of the two that step 3 checks against the verifying key.
    """
    return parse_bundle(bundle_bytes).hint
