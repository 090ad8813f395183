"""Whole-ledger verification, and offline verification of one entry's proof."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import ValidationError as PydanticValidationError
from sqlalchemy import Connection, select

from jurat.canonical import canonical_json
from jurat.errors import LedgerError, TamperError, ValidationError
from jurat.ledger._backend import ZERO_HASH
from jurat.ledger._checkpoint import read_external
from jurat.ledger._entry import broken_link, entry_from_row, hashed_bytes
from jurat.ledger._jobs import decode_receipt
from jurat.ledger._merkle import EMPTY_ROOT, CompactRange, leaf_hash, verify_inclusion
from jurat.ledger._models import Checkpoint, Entry, EntryProof, LedgerReport
from jurat.ledger._note import (
    default_log_key_path,
    load_log_key,
    parse_checkpoint,
    parse_unverified_checkpoint,
)

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = ["verify_entry_proof", "verify_ledger", "verify_receipt_inclusion"]

_BATCH = 1000


def verify_ledger(
    conn: Connection,
    tables: Tables,
    *,
    backend: str,
    checkpoint_path: Path | None,
    public_key: Ed25519PublicKey | str | None,
) -> LedgerReport:
    """Recompute the chain and the Merkle tree and hold them against every checkpoint.

    Runs inside one read transaction, so it sees one snapshot even while
    writers append. Raises :class:`TamperError` naming the first bad ``seq``.
    """
    e, c = tables.entries, tables.checkpoints
    warnings: list[str] = []

    # Step 0: on SQLite, the file's own structure must be sound; a byte
    # changed in an index copy would otherwise hide a row from look-ups
    # without touching the row itself.
    if backend == "sqlite":
        problems = [str(r) for r in conn.exec_driver_sql("PRAGMA integrity_check").scalars()]
        if problems != ["ok"]:
            raise TamperError(f"SQLite integrity check failed: {'; '.join(problems[:3])}")

    # Step 1: collect the anchors: checkpoints stored in the database, in the
    # order they were written, and the one kept outside it.
    stored_rows = conn.execute(select(c).order_by(c.c.id)).all()
    stored: list[Checkpoint] = []
    for i, row in enumerate(stored_rows):
        if row.id != i:
            raise TamperError(f"checkpoint {i} is missing from the database")
        cp = parse_unverified_checkpoint(row.note)
        if (cp.tree_size, cp.root_hash, cp.origin) != (row.tree_size, row.root_hash, row.origin):
            raise TamperError(f"checkpoint {i}: stored columns differ from its signed note")
        stored.append(cp)
    external = read_external(checkpoint_path) if checkpoint_path is not None else None
    wanted = {cp.tree_size for cp in stored}
    if external is not None:
        wanted.add(external.tree_size)

    # Step 2: walk every entry in seq order. Each must be the next seq, hash
    # to its stored entry and leaf hashes from its own bytes, and link to its
    # predecessor; its leaf extends the Merkle tree.
    rng = CompactRange()
    roots: dict[int, bytes] = {0: EMPTY_ROOT}
    kinds: Counter[str] = Counter()
    prev = ZERO_HASH
    rows = conn.execution_options(yield_per=_BATCH).execute(select(e).order_by(e.c.seq))
    for row in rows:
        expected = rng.size
        if row.seq != expected:
            if row.seq > expected:
                raise TamperError(f"seq {expected}: entry missing (next stored seq is {row.seq})")
            raise TamperError(f"seq {expected}: entries out of order")
        entry = entry_from_row(row._mapping)
        if entry.prev_hash != prev:
            raise TamperError(broken_link(entry.seq))
        prev = entry.entry_hash
        kinds[entry.kind] += 1
        rng.append(bytes.fromhex(entry.leaf_hash))
        if rng.size in wanted:
            roots[rng.size] = rng.root()
    size = rng.size

    # Step 3: every stored checkpoint must be reached by the entries: sizes
    # never shrink, none exceeds the ledger, each root is recomputed.
    key = public_key
    signatures = 0
    good_size = 0
    for i, cp in enumerate(stored):
        if i and cp.tree_size < stored[i - 1].tree_size:
            raise TamperError(f"checkpoint {i} shrinks the tree to {cp.tree_size}")
        _check_anchor(cp, size, roots, good_size, f"stored checkpoint {i}")
        if key is not None:
            parse_checkpoint(cp.note, key)
            signatures += 1
        good_size = cp.tree_size

    # Step 4: the checkpoint outside the database catches a restored older
    # copy or a truncated tail, which leave the database self-consistent.
    if external is not None:
        where = f"external checkpoint {checkpoint_path}"
        below = [cp.tree_size for cp in stored if cp.tree_size <= external.tree_size]
        _check_anchor(external, size, roots, max(below, default=0), where)
        if key is not None:
            parse_checkpoint(external.note, key)
            signatures += 1
    elif checkpoint_path is not None and stored:
        warnings.append(
            f"checkpoint file {checkpoint_path} is missing: a restored older copy of the "
            "database would not be detected"
        )
    if not stored and external is None:
        warnings.append("no checkpoint yet: losing the newest entries would not be detected")
    if key is None and (stored or external is not None):
        warnings.append("checkpoint signatures not checked (no log public key given)")

    # Step 5: report what held.
    return LedgerReport(
        backend=backend,
        tree_size=size,
        root_hash=rng.root().hex(),
        head_hash=prev,
        kinds=dict(sorted(kinds.items())),
        checkpoints_checked=len(stored),
        signatures_checked=signatures,
        external_checkpoint=None if checkpoint_path is None else str(checkpoint_path),
        external_tree_size=None if external is None else external.tree_size,
        warnings=tuple(warnings),
    )


def _check_anchor(
    cp: Checkpoint, size: int, roots: dict[int, bytes], good_size: int, where: str
) -> None:
    if cp.tree_size > size:
        raise TamperError(
            f"seq {size}: the {where} commits to {cp.tree_size} entries but the ledger has "
            f"{size}: truncated or restored from an older copy"
        )
    if roots[cp.tree_size].hex() != cp.root_hash:
        # Every entry hashed correctly, so the history was rewritten with
        # fresh hashes; the last matching checkpoint bounds where.
        raise TamperError(
            f"seq {good_size}..{cp.tree_size - 1}: entries differ from the {where} "
            "(history rewritten or forked)"
        )


def _load_proof(proof: EntryProof | str | bytes | dict[str, Any]) -> EntryProof:
    try:
        if isinstance(proof, str | bytes):
            return EntryProof.model_validate_json(proof)
        if isinstance(proof, dict):
            return EntryProof.model_validate(proof)
        return proof
    except PydanticValidationError as exc:
        raise TamperError(f"entry proof is malformed: {exc}") from exc


def _check_entry_proof(doc: EntryProof, checkpoint: Checkpoint) -> Entry:
    """Steps shared by the offline verifiers, once the checkpoint is trusted."""
    entry, inclusion = doc.entry, doc.proof
    # The payload hashes to the digest the entry commits to.
    try:
        payload_digest = hashlib.sha256(canonical_json(entry.payload)).hexdigest()
    except ValidationError as exc:
        raise TamperError("entry payload cannot be canonicalised") from exc
    if payload_digest != entry.payload_sha256:
        raise TamperError(f"seq {entry.seq}: payload does not match payload_sha256")
    # The entry's bytes give its entry hash and leaf hash.
    data = hashed_bytes(entry)
    leaf = leaf_hash(data)
    if hashlib.sha256(data).hexdigest() != entry.entry_hash or leaf.hex() != entry.leaf_hash:
        raise TamperError(f"seq {entry.seq}: entry hashes do not match its fields")
    # The proof is about this leaf and this checkpoint.
    if (inclusion.leaf_index, inclusion.leaf_hash) != (entry.seq, entry.leaf_hash):
        raise TamperError("inclusion proof is for a different entry")
    if (inclusion.tree_size, inclusion.root_hash) != (checkpoint.tree_size, checkpoint.root_hash):
        raise TamperError(
            f"inclusion proof is for tree size {inclusion.tree_size}, the checkpoint for "
            f"{checkpoint.tree_size} (or their roots differ); prove against this checkpoint "
            "with `jurat log prove`"
        )
    # The audit path leads from the leaf to the checkpoint's root.
    verify_inclusion(
        leaf,
        inclusion.leaf_index,
        inclusion.tree_size,
        [bytes.fromhex(h) for h in inclusion.hashes],
        bytes.fromhex(checkpoint.root_hash),
    )
    return entry


def verify_entry_proof(
    proof: EntryProof | str | bytes | dict[str, Any],
    public_key: Ed25519PublicKey | str,
    *,
    origin: str | None = None,
) -> Entry:
    """Check offline that an entry is in the log, from its proof and the log's public key.

    Steps: 1. the proof document is well formed; 2. its checkpoint is signed
    by ``public_key`` (and names ``origin``); 3. the payload hashes to the
    entry's ``payload_sha256``; 4. the entry's fields hash to its entry and
    leaf hashes; 5. the proof is for that leaf and that checkpoint; 6. the
    audit path reaches the signed root. Returns the entry (payload
    included); raises :class:`TamperError` otherwise.
    """
    doc = _load_proof(proof)
    checkpoint = parse_checkpoint(doc.checkpoint, public_key, origin=origin)
    return _check_entry_proof(doc, checkpoint)


def verify_receipt_inclusion(
    receipt: bytes,
    proof: str | os.PathLike[str],
    checkpoint: str | os.PathLike[str],
    *,
    public_key: Ed25519PublicKey | str | None = None,
) -> str:
    """Check that ``receipt`` is in the log committed to by the checkpoint file.

    For ``jurat verify RECEIPT --checkpoint CP`` (the receipts package's
    ``InclusionCheck``): ``proof`` is the JSON written by ``jurat log prove``
    / ``Ledger.prove_entry``. The checkpoint's signature is checked with
    ``public_key`` (Ed25519 key or C2SP verifier key), else with the default
    log key when this machine has one; without either, the checkpoint file
    itself is the trust anchor and the returned text says so. Returns a
    one-line description; raises a :class:`~jurat.errors.JuratError` when a
    step fails.
    """
    # Step 1: read both files.
    try:
        doc = _load_proof(Path(proof).read_text(encoding="utf-8"))
        note = Path(checkpoint).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LedgerError(f"cannot read inclusion proof or checkpoint: {exc}") from exc
    # Step 2: trust the checkpoint, by signature when a log key is known.
    key = public_key
    if key is None and default_log_key_path().exists():
        key = load_log_key().public_key
    anchor = parse_checkpoint(note, key) if key is not None else parse_unverified_checkpoint(note)
    # Steps 3-6: the entry, its hashes and its audit path up to that checkpoint.
    entry = _check_entry_proof(doc, anchor)
    # Step 7: the entry is this receipt, byte for byte.
    if entry.kind != "receipt" or decode_receipt(entry.payload, seq=entry.seq) != receipt:
        raise TamperError(f"ledger entry {entry.seq} is not this receipt")
    signed = "signature checked" if key is not None else "signature NOT checked (no log key)"
    return (
        f"entry {entry.seq} (review version {entry.payload.get('review_version')}) is in "
        f"{anchor.origin} at tree size {anchor.tree_size}; checkpoint {signed}"
    )
