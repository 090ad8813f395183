"""One signing key per campaign's receipts, unless the operator rotates (issue 27).

A run reuses the receipts a campaign already has in the ledger and prints the command
that verifies them. Signed by another key than ``--key``, they would fail that command
at step 3 ("signature"), so ``jurat run`` compares, before anything is written, the key
ids of the campaign's current receipts (each artifact's latest) with ``--key``'s and
refuses a difference (exit 3) unless ``--rotate-key`` is given. A rotated run signs its
new receipts with the new key, leaves the reused ones as they were signed, and prints
one verify command per key that signed the campaign's current receipts.

Naming the old key's public file needs that file: every run keeps the public half of
the key it signs with in its receipts directory, ``DIR/public-keys/<hex>.pub`` (the hex
of the key id's 32 bytes), where a later rotated run finds it. A public key is no
secret, and a file found there is used only when its own key id is the one sought.
docs/receipt-format.md §4.2 describes this.
"""

from __future__ import annotations

import base64
import re
from collections import Counter
from pathlib import Path

from jurat.errors import ConfigError, VerificationError
from jurat.ledger import Ledger
from jurat.models import Frozen
from jurat.receipts import (
    PrivateKey,
    default_public_key_path,
    load_public_key,
    public_key_hint,
    public_key_pem,
    receipt_path_for,
    signing_key_id,
)

__all__ = [
    "KEYS_DIR",
    "KeyGroup",
    "current_key_ids",
    "find_public_key",
    "keep_public_key",
    "key_groups",
    "refuse_other_key",
    "verify_lines",
]

#: The receipts directory's subdirectory that keeps the public keys of its receipts.
KEYS_DIR = "public-keys"
#: A key id as jurat writes it: standard base64 of 32 bytes.
_KEY_ID = re.compile(r"[A-Za-z0-9+/]{43}=")
#: What a receipt without a readable key id is counted under (never a real key id).
_UNREADABLE = "(no readable key id)"


def _key_id(signed: bytes) -> str:
    """The receipt's key id, or ``_UNREADABLE``: shown only when it has a key id's shape."""
    try:
        found = signing_key_id(signed)
    except VerificationError:
        return _UNREADABLE
    return found if found is not None and _KEY_ID.fullmatch(found) else _UNREADABLE


def current_key_ids(ledger: Ledger, campaign_id: str) -> dict[str, str]:
    """Artifact id -> the key id of its latest receipt in the ledger (what a run reuses).

    One pass over the campaign's receipts; a fresh campaign has none and costs one read.
    """
    latest: dict[str, str] = {}
    for entry, signed in ledger.receipts(campaign_id=campaign_id):
        latest[entry.artifact_id or ""] = _key_id(signed)
    return latest


def refuse_other_key(campaign_id: str, current: dict[str, str], key: PrivateKey,
                     key_path: Path, *, rotate: bool) -> None:
    """ConfigError (exit 3) when a current receipt names another key than ``key`` and the
    operator did not rotate: both key ids, how many receipts, and the fix."""
    mine = public_key_hint(key.public_key())
    others = Counter(kid for kid in current.values() if kid != mine)
    if not others or rotate:
        return
    theirs = "; ".join(f"key id {kid} ({n} receipt{'s' if n > 1 else ''})"
                       for kid, n in sorted(others.items()))
    raise ConfigError(
        f"campaign {campaign_id!r} has receipts in the ledger signed by {theirs}, and --key "
        f"{key_path} is key id {mine}: this run would reuse them under a verify command "
        "for the wrong key (fix: run with the key that signed them, or add --rotate-key to "
        "sign new receipts with the new key; the existing ones stay signed by the old key)")


def key_file(out_dir: Path, key_id: str) -> Path:
    """``DIR/public-keys/<hex>.pub``: where the public key with ``key_id`` is kept."""
    return out_dir / KEYS_DIR / f"{base64.b64decode(key_id).hex()}.pub"


def keep_public_key(out_dir: Path, key: PrivateKey) -> None:
    """Keep the public half of the run's key in its receipts directory, for a later
    rotated run to name (written once; a file that differs is replaced)."""
    pem = public_key_pem(key.public_key())
    path = key_file(out_dir, public_key_hint(key.public_key()))
    try:
        if path.exists() and path.read_bytes() == pem:
            return
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(pem)
    except OSError as exc:
        raise ConfigError(f"--out {out_dir}: cannot keep the public key at {path}: "
                          f"{exc.strerror} (fix: a writable directory)") from exc


def find_public_key(out_dir: Path, key_id: str) -> Path | None:
    """A public key file whose key id is ``key_id``: the one the receipts directory kept,
    else the default public key; None when neither is it."""
    if not _KEY_ID.fullmatch(key_id):
        return None
    for candidate in (key_file(out_dir, key_id), default_public_key_path()):
        try:
            if public_key_hint(load_public_key(candidate)) == key_id:
                return candidate
        except ConfigError:
            continue
    return None


class KeyGroup(Frozen):
    """The current receipts one key signed, for one verify line."""

    key_id: str
    """The key id the receipts name."""
    first: Path | None
    """The receipts directory's file of the first of them the ledger holds, None when
    the directory has none of theirs."""
    count: int
    """How many current receipts of the campaign in the ledger it signed."""


def key_groups(out_dir: Path, current: dict[str, str]) -> list[KeyGroup]:
    """The campaign's current receipts (``current_key_ids``) grouped by the key that
    signed them, in the ledger's order."""
    firsts: dict[str, Path | None] = {}
    counts: Counter[str] = Counter()
    for artifact, kid in current.items():
        counts[kid] += 1
        path = receipt_path_for(out_dir, artifact)
        if firsts.get(kid) is None:
            firsts[kid] = path if path.is_file() else None
    return [KeyGroup(key_id=kid, first=first, count=counts[kid])
            for kid, first in firsts.items()]


def verify_lines(groups: list[KeyGroup], out_dir: Path, key: PrivateKey, key_public: Path,
                 tail: str) -> list[str]:
    """After a rotated run: for each key that signed the campaign's current receipts, a
    line naming it and how many it signed, then the command that verifies the first of
    them (``tail``: the checkpoint and log-key options every command ends with)."""
    mine = public_key_hint(key.public_key())
    lines = []
    for group in groups:
        n = f"{group.count} receipt{'s' if group.count > 1 else ''}"
        if group.key_id == mine:
            lines.append(f"signed by key id {group.key_id} (--key, this run's): {n}")
            public: str = str(key_public)
        else:
            found = find_public_key(out_dir, group.key_id)
            if found is None:
                lines.append(
                    f"signed by key id {group.key_id} (an earlier key): {n}; its public "
                    f"key is not in {out_dir / KEYS_DIR} nor the default one: verify them "
                    "with the public key file whose key id this is (`jurat keygen` printed "
                    "it as 'key hint')")
                public = "OLD-KEY.pub"
            else:
                lines.append(f"signed by key id {group.key_id} (an earlier key, kept "
                             f"at {found}): {n}")
                public = str(found)
        if group.first is None:
            lines.append(f"          (none of their receipt files is in {out_dir})")
        else:
            lines.append(f"verify:   jurat verify {group.first} --key {public} {tail}")
    return lines
