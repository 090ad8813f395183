"""DSSE v1: the pre-authentication encoding and strict standard base64.

The signature never covers the envelope's JSON, only ``PAE(payloadType, payload)``,
so the envelope can be re-serialised freely without breaking it.
"""

from __future__ import annotations

import base64
import binascii

from jurat.errors import VerificationError

#: The DSSE payload type of an in-toto statement.
PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, payload: bytes) -> bytes:
    """``"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body``; LEN is ASCII decimal bytes."""
    type_bytes = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(type_bytes), type_bytes, len(payload), payload)


def b64encode(data: bytes) -> str:
    """Standard base64 (RFC 4648 §4, ``+/``) with ``=`` padding, as protobuf JSON writes bytes."""
    return base64.b64encode(data).decode("ascii")


def b64decode(text: object, field: str, *, step: str) -> bytes:
    """Decode standard padded base64, refusing anything a re-encoding would not reproduce.

    Refusing non-canonical encodings (URL-safe alphabet, missing padding, stray bits in
    the last character) keeps one signed byte string to one textual form.
    """
    if not isinstance(text, str):
        raise VerificationError(f"{field} must be a base64 string", step=step)
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise VerificationError(f"{field} is not standard base64: {exc}", step=step) from exc
    if b64encode(data) != text:
        raise VerificationError(f"{field} is not canonical padded standard base64", step=step)
    return data
