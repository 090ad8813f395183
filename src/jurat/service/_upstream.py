"""Upstream (Stage 1/2) receipts: verified against the campaign's trusted keys and bound
by digest (seed 000: "Its input is a frozen candidate version with authenticated Stage 1
and Stage 2 evidence"; "Reject stale receipts or a candidate altered after Stage 1").

Threat model. A submitter hands in bundles it may have forged, copied from another
artifact, or edited. A bundle is accepted only when (1) it is a Sigstore bundle whose DSSE
envelope carries an in-toto statement, (2) the signature over the envelope's PAE verifies
with one of the keys the campaign trusts (``[upstream] keys``), and (3) one of the
statement's subjects has this artifact's sha256: a receipt about other bytes is stale, or
the candidate was altered after that stage. Any failure refuses the whole job before
anything is recorded or sampled. What is bound is ``{name, sha256}``: the statement's
``predicateType`` and the sha256 of the signed DSSE payload, which does not depend on how
the bundle's JSON was re-serialised on the way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from jurat.campaign import read_inside
from jurat.canonical import canonical_json, loads_strict, sha256_digest
from jurat.errors import JuratError
from jurat.models import Campaign
from jurat.receipts import MAX_DEPTH, PAYLOAD_TYPE, PublicKey, pae
from jurat.receipts._bundle import parse_bundle
from jurat.receipts._keys import public_key_from_pem, verify_bytes
from jurat.service._errors import ServiceRefusal
from jurat.service._limits import UPSTREAM_BYTES

__all__ = ["trusted_keys", "verify_upstream"]

#: The largest key file read: a PEM public key is a few hundred bytes.
_KEY_BYTES = 64 * 1024


def trusted_keys(campaign: Campaign) -> tuple[PublicKey, ...]:
    """The public keys of the campaign's ``[upstream] keys``: files inside its directory, read
    through the campaign's confined reader (``campaign/_files.py``) within ``_KEY_BYTES``.
    Raises CampaignError naming ``upstream.keys[i]``, or ConfigError for a file that holds
    no public key."""
    if campaign.upstream is None:
        return ()
    keys = []
    for i, rel in enumerate(campaign.upstream.keys):
        field = f"upstream.keys[{i}]"
        pem = read_inside(campaign, rel, field, cap=_KEY_BYTES, what=f"key file {rel!r}")
        keys.append(public_key_from_pem(pem, source=f"{campaign.source}: {field} {rel!r}"))
    return tuple(keys)


def _refuse(index: int, why: str) -> ServiceRefusal:
    return ServiceRefusal(
        422, f"upstream_receipts[{index}]: {why}; the job was refused and nothing "
        "was sampled", field=f"upstream_receipts[{index}]",
        fix="submit the current Stage 1/2 receipts of exactly this artifact, as "
            "their signers issued them")


def _one(index: int, bundle: dict[str, Any], keys: Sequence[PublicKey],
         artifact_sha256: str) -> dict[str, JsonValue]:
    try:
        raw = canonical_json(bundle)
    except (JuratError, ValueError, TypeError) as exc:
        raise _refuse(index, "not a JSON bundle jurat can read") from exc
    if len(raw) > UPSTREAM_BYTES:
        raise _refuse(index, f"larger than {UPSTREAM_BYTES} bytes")
    try:
        parsed = parse_bundle(raw)
    except JuratError as exc:
        raise _refuse(index, "not a Sigstore bundle with one DSSE signature") from exc
    if parsed.payload_type != PAYLOAD_TYPE:
        raise _refuse(index, f"payloadType is not {PAYLOAD_TYPE}")
    signed = pae(parsed.payload_type, parsed.payload)
    if not any(verify_bytes(key, parsed.signature, signed) for key in keys):
        raise _refuse(index, "its signature does not verify with any key this campaign "
                      "trusts (altered, or signed by another key)")
    try:
        statement = loads_strict(parsed.payload, max_depth=MAX_DEPTH)
    except ValueError as exc:
        raise _refuse(index, "its payload is not a JSON statement") from exc
    subjects = statement.get("subject") if isinstance(statement, dict) else None
    digests = [s.get("digest", {}).get("sha256") for s in subjects or []
               if isinstance(s, dict) and isinstance(s.get("digest"), dict)]
    if artifact_sha256 not in digests:
        raise _refuse(index, "it is about other bytes than this artifact (stale, or the "
                      "candidate was altered after that stage)")
    kind = statement.get("predicateType")
    name = kind if isinstance(kind, str) and 0 < len(kind) <= 200 else f"upstream[{index}]"
    return {"name": name, "sha256": sha256_digest(parsed.payload)}


def verify_upstream(bundles: Sequence[dict[str, Any]], keys: Sequence[PublicKey],
                    artifact_sha256: str) -> tuple[dict[str, JsonValue], ...]:
    """Each bundle verified and bound as ``{name, sha256}``, or ServiceRefusal (422) naming the
    first that is not acceptable. A campaign that trusts no key refuses any bundle."""
    if bundles and not keys:
        raise ServiceRefusal(
            422, "this campaign trusts no upstream keys, so it cannot check "
            "upstream receipts; the job was refused", field="upstream_receipts",
            fix="submit without upstream_receipts, or ask the operator to list the "
                "signers' keys in the campaign's [upstream] keys")
    return tuple(_one(i, b, keys, artifact_sha256) for i, b in enumerate(bundles))
