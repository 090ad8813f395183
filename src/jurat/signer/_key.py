"""The settlement key: a secp256k1 secret that only the signer process ever reads.

Threat model. The key authorises payments, so it must stay out of everything an attacker
or an accident can read: the model and its tools (seed 000: "The model must never receive
transaction private keys"), the runner, the ledger, receipts, logs, the signer's own
state, process arguments and environments. It therefore lives in exactly one file,
written once by ``jurat signer keygen`` (mode 0600, created exclusively) and read only by
``jurat signer serve`` from a path on its command line; no option, variable or response
carries the secret, and ``SettlementKey`` never shows it in a ``repr``.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any

from jurat.errors import ConfigError

__all__ = ["KEY_FILE_NAME", "SettlementKey", "keygen_settlement", "load_settlement_key"]

#: The key's file name in the directory ``jurat signer keygen --out`` writes.
KEY_FILE_NAME = "settlement.key"
_SECRET = re.compile(r"0x[0-9a-fA-F]{64}")
#: secp256k1's group order: a secret must be in [1, n - 1].
_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


class SettlementKey:
    """The secret and its address; signs EIP-712 typed data. Not a record: never dumped."""

    __slots__ = ("_secret", "address")

    def __init__(self, secret: bytes) -> None:
        from eth_account import Account

        self._secret = secret
        self.address: str = str(Account.from_key(secret).address)

    def __repr__(self) -> str:
        return f"SettlementKey(address={self.address})"

    def sign_typed_data(self, typed_data: dict[str, Any]) -> str:
        """The 65-byte signature (r ‖ s ‖ v) over the EIP-712 digest, as 0x-hex."""
        from eth_account import Account
        from eth_account.messages import encode_typed_data

        message = encode_typed_data(full_message=typed_data)
        signed = Account.sign_message(message, self._secret)
        return "0x" + bytes(signed.signature).hex()


def _secret_from_text(text: str, path: Path) -> bytes:
    value = text.strip()
    if not _SECRET.fullmatch(value):
        raise ConfigError(f"{path}: not a settlement key (0x + 64 hex digits, from "
                          "`jurat signer keygen`)")
    secret = bytes.fromhex(value[2:])
    if not 0 < int.from_bytes(secret, "big") < _ORDER:
        raise ConfigError(f"{path}: the secret is outside the secp256k1 range")
    return secret


def load_settlement_key(path: Path) -> SettlementKey:
    """Read the key file; refuses a file others can read (the secret may have leaked)."""
    try:
        mode = Path(path).stat().st_mode
        text = Path(path).read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise ConfigError(f"cannot read settlement key {path}: {reason}") from exc
    if mode & 0o077:
        raise ConfigError(f"{path}: mode {mode & 0o777:o} lets others read the settlement key "
                          f"(fix: chmod 600 {path})")
    return SettlementKey(_secret_from_text(text, Path(path)))


def keygen_settlement(out: Path) -> tuple[Path, str]:
    """Write ``out/settlement.key`` (0600, created exclusively); return it and its address."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / KEY_FILE_NAME
    secret = b""
    while not 0 < int.from_bytes(secret or b"\0", "big") < _ORDER:
        secret = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError as exc:
        raise ConfigError(f"{path} exists; refusing to overwrite a settlement key") from exc
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write("0x" + secret.hex() + "\n")
    return path, SettlementKey(secret).address
