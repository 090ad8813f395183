"""C2SP signed notes and tlog checkpoints, and the Ed25519 log key that signs them.

Formats followed (https://c2sp.org/signed-note, https://c2sp.org/tlog-checkpoint):

* checkpoint body: ``<origin>\\n<tree size>\\n<base64 root hash>\\n`` then
  optional extension lines;
* note: body, one empty line, then signature lines
  ``— <key name> <base64(key ID || signature)>\\n``;
* key ID: the first 4 bytes of SHA-256(key name || 0x0A || 0x01 || public key),
  0x01 being the Ed25519 signature type;
* verifier key: ``<name>+<hex key ID>+<base64(0x01 || public key)>``.

The key's files (where they live, how they are read and written) are ``_logkey.py``'s.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from jurat.errors import ConfigError, TamperError
from jurat.ledger._models import Checkpoint

__all__ = [
    "LogSigner",
    "checkpoint_body",
    "default_origin",
    "parse_checkpoint",
    "parse_unverified_checkpoint",
    "public_key_from_verifier",
    "verifier_key",
]

_ED25519 = b"\x01"
_SIG_PREFIX = "\u2014 "  # em dash and space, as the spec requires
_DECIMAL = re.compile(r"^(0|[1-9][0-9]{0,19})$")
_MAX_SIGNATURES = 100


def _key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + _ED25519 + public).digest()[:4]


def _check_name(name: str) -> None:
    # The spec forbids whitespace and "+" in key names; "+" separates fields
    # of the verifier key encoding.
    if not name or "+" in name or any(ch.isspace() for ch in name):
        raise ConfigError(f"invalid signed-note key name {name!r}: no spaces or '+' allowed")


def _raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


class LogSigner:
    """An Ed25519 key that signs checkpoints under a key name (by default the origin)."""

    def __init__(self, private_key: Ed25519PrivateKey, *, name: str | None = None) -> None:
        self._private = private_key
        self.public_key = private_key.public_key()
        self.public_bytes = _raw_public(self.public_key)
        self.name = name or default_origin(self.public_bytes)
        _check_name(self.name)
        self.key_id = _key_id(self.name, self.public_bytes)

    @property
    def origin(self) -> str:
        """The checkpoint origin line; C2SP recommends it equal the key name."""
        return self.name

    def verifier_key(self) -> str:
        """The C2SP verifier key string that lets others check this key's notes."""
        return verifier_key(self.name, self.public_bytes)

    def sign_note(self, body: str) -> str:
        """Return the signed note: ``body``, an empty line, one signature line."""
        if not body.endswith("\n"):
            raise ValueError("a note body ends with a newline")
        signature = self._private.sign(body.encode())
        blob = base64.b64encode(self.key_id + signature).decode()
        return f"{body}\n{_SIG_PREFIX}{self.name} {blob}\n"


def verifier_key(name: str, public: bytes) -> str:
    """The C2SP verifier key ``<name>+<hex key ID>+<base64(0x01 || public key)>``."""
    _check_name(name)
    encoded = base64.b64encode(_ED25519 + public).decode()
    return f"{name}+{_key_id(name, public).hex()}+{encoded}"


def default_origin(public: bytes) -> str:
    """``jurat.local/log/<first 16 hex of sha256(public key)>``: unique per key."""
    return f"jurat.local/log/{hashlib.sha256(public).hexdigest()[:16]}"


def checkpoint_body(
    origin: str, tree_size: int, root: bytes, extensions: tuple[str, ...] = ()
) -> str:
    """The unsigned checkpoint text."""
    if not origin or "\n" in origin:
        raise ConfigError("a checkpoint origin is one non-empty line")
    lines = [origin, str(tree_size), base64.b64encode(root).decode(), *extensions]
    return "".join(line + "\n" for line in lines)


def public_key_from_verifier(vkey: str) -> tuple[str, Ed25519PublicKey]:
    """Decode a C2SP verifier key string into (name, public key)."""
    # Names and key IDs have no "+", base64 may: split on the first two only.
    parts = vkey.strip().split("+", 2)
    if len(parts) != 3:
        raise ConfigError("a verifier key is <name>+<hex key id>+<base64 key>")
    name, key_hex, encoded = parts
    try:
        raw = base64.b64decode(encoded, validate=True)
    except binascii.Error as exc:
        raise ConfigError("verifier key: the key is not base64") from exc
    if len(raw) != 33 or raw[:1] != _ED25519:
        raise ConfigError("verifier key: only Ed25519 (type 0x01) keys are supported")
    _check_name(name)
    if _key_id(name, raw[1:]).hex() != key_hex.lower():
        raise ConfigError("verifier key: the key ID does not match the name and key")
    return name, Ed25519PublicKey.from_public_bytes(raw[1:])


def _split_note(text: str) -> tuple[str, list[str]]:
    if "\r" in text or any(ord(ch) < 0x20 and ch != "\n" for ch in text):
        raise TamperError("checkpoint note contains control characters")
    body, sep, sigs = text.partition("\n\n")
    if not sep or not sigs.endswith("\n"):
        raise TamperError("checkpoint note has no signature block")
    lines = sigs[:-1].split("\n")
    if len(lines) > _MAX_SIGNATURES:
        raise TamperError("checkpoint note has too many signatures")
    return body + "\n", lines


def parse_unverified_checkpoint(text: str) -> Checkpoint:
    """Parse a checkpoint note's body without checking any signature."""
    body, _ = _split_note(text)
    lines = body[:-1].split("\n")
    if len(lines) < 3:
        raise TamperError("checkpoint body needs origin, tree size and root hash lines")
    origin, size_text, root_text, *extensions = lines
    if not origin:
        raise TamperError("checkpoint origin line is empty")
    if not _DECIMAL.match(size_text):
        raise TamperError(f"checkpoint tree size {size_text!r} is not a plain decimal")
    try:
        root = base64.b64decode(root_text, validate=True)
    except binascii.Error as exc:
        raise TamperError("checkpoint root hash is not base64") from exc
    if len(root) != 32 or base64.b64encode(root).decode() != root_text:
        raise TamperError("checkpoint root hash is not a canonical base64 SHA-256")
    if any(not ext for ext in extensions):
        raise TamperError("checkpoint extension lines must not be empty")
    return Checkpoint(
        origin=origin,
        tree_size=int(size_text),
        root_hash=root.hex(),
        extensions=tuple(extensions),
        note=text,
    )


def parse_checkpoint(
    text: str, public_key: Ed25519PublicKey | str, *, origin: str | None = None
) -> Checkpoint:
    """Parse a checkpoint note and require a valid signature by ``public_key``.

    ``public_key`` is an Ed25519 public key or a C2SP verifier key string.
    Signatures by other keys (witness cosignatures) are ignored. Raises
    :class:`TamperError` when no signature by the key verifies or the origin
    differs from ``origin``.
    """
    want_name: str | None = None
    if isinstance(public_key, str):
        want_name, public_key = public_key_from_verifier(public_key)
    public = _raw_public(public_key)
    # Step 1: the body must be a well-formed checkpoint.
    checkpoint = parse_unverified_checkpoint(text)
    if origin is not None and checkpoint.origin != origin:
        raise TamperError(f"checkpoint origin {checkpoint.origin!r} is not {origin!r}")
    body, sig_lines = _split_note(text)
    # Step 2: find a signature line whose key ID matches this key under its name.
    for line in sig_lines:
        if not line.startswith(_SIG_PREFIX):
            raise TamperError("malformed checkpoint signature line")
        name, _, blob_text = line[len(_SIG_PREFIX) :].rpartition(" ")
        if want_name is not None and name != want_name:
            continue
        try:
            blob = base64.b64decode(blob_text, validate=True)
        except binascii.Error as exc:
            raise TamperError("checkpoint signature is not base64") from exc
        if len(blob) < 5 or blob[:4] != _key_id(name, public):
            continue
        # Step 3: the Ed25519 signature covers the body including its final newline.
        try:
            public_key.verify(blob[4:], body.encode())
        except InvalidSignature as exc:
            raise TamperError(f"checkpoint signature by {name!r} does not verify") from exc
        return checkpoint.model_copy(update={"key_name": name, "key_id": blob[:4].hex()})
    raise TamperError("checkpoint carries no signature by the given log key")
