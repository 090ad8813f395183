"""Whole-ledger verification, and offline verification of one entry's proof."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pydantic
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import Connection, select

from jurat.canonical import canonical_json
from jurat.errors import LedgerError, TamperError, ValidationError
from jurat.ledger._backend import ZERO_HASH
from jurat.ledger._checkpoint import read_external
from jurat.ledger._entry import broken_link, entry_from_row, hashed_bytes
from jurat.ledger._jobs import decode_receipt
from jurat.ledger._logkey import default_log_key_path, load_log_key
from jurat.ledger._merkle import EMPTY_ROOT, CompactRange, leaf_hash, node_hash, verify_inclusion
from jurat.ledger._models import Checkpoint, Entry, EntryProof, LedgerReport
from jurat.ledger._note import parse_checkpoint, parse_unverified_checkpoint
from jurat.ledger._treestore import current_epoch, read_level, stored_leaf_count
from jurat.models._invalid import invalid

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = ["verify_entry_proof", "verify_ledger", "verify_receipt_inclusion"]

_BATCH = 1000
_TREE_BATCH = 10000


class _Walk(NamedTuple):
    """What step 3 recomputed from the entries."""

    size: int
    root: bytes
    head: str
    roots: dict[int, bytes]
    kinds: Counter[str]


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

    Steps: 1. the SQLite file's own structure (SQLite only); 2. the anchors:
    stored checkpoints in order, each matching its note, and the checkpoint
    file; 3. every entry, in order, against its own hashes and its
    predecessor, folding the Merkle tree; 4. every stored checkpoint against
    the recomputed tree (and its signature); 5. the checkpoint file likewise;
    6. the stored Merkle tree nodes against the recomputed tree; 7. the
    report. Steps 4 and 5 share :func:`_check_anchor`.
    """
    warnings: list[str] = []
    _check_sqlite_file(conn, backend)
    stored, external = _read_anchors(conn, tables, checkpoint_path)
    wanted = {cp.tree_size for cp in stored}
    if external is not None:
        wanted.add(external.tree_size)
    walk = _walk_entries(conn, tables, wanted)
    signatures = _check_stored(stored, walk, public_key)
    signatures += _check_external(external, stored, walk, checkpoint_path, public_key, warnings)
    _check_tree(conn, tables, walk.size, warnings)
    # Step 7: report what held, and what weakens the guarantee.
    if not stored and external is None:
        warnings.append("no checkpoint yet: losing the newest entries would not be detected")
    if public_key is None and (stored or external is not None):
        warnings.append("checkpoint signatures not checked (no log public key given)")
    return LedgerReport(
        backend=backend,
        tree_size=walk.size,
        root_hash=walk.root.hex(),
        head_hash=walk.head,
        kinds=dict(sorted(walk.kinds.items())),
        checkpoints_checked=len(stored),
        signatures_checked=signatures,
        external_checkpoint=None if checkpoint_path is None else str(checkpoint_path),
        external_tree_size=None if external is None else external.tree_size,
        warnings=tuple(warnings),
    )


def _check_sqlite_file(conn: Connection, backend: str) -> None:
    """Step 1: on SQLite, the file's own structure must be sound.

    A byte changed in an index copy would otherwise hide a row from look-ups
    without touching the row itself.
    """
    if backend == "sqlite":
        problems = [str(r) for r in conn.exec_driver_sql("PRAGMA integrity_check").scalars()]
        if problems != ["ok"]:
            raise TamperError(f"SQLite integrity check failed: {'; '.join(problems[:3])}")


def _read_anchors(
    conn: Connection, tables: Tables, checkpoint_path: Path | None
) -> tuple[list[Checkpoint], Checkpoint | None]:
    """Step 2: checkpoints stored in the database, in the order written, and the one outside."""
    c = tables.checkpoints
    stored: list[Checkpoint] = []
    for i, row in enumerate(conn.execute(select(c).order_by(c.c.id)).all()):
        if row.id != i:
            raise TamperError(f"checkpoint {i} is missing from the database")
        cp = parse_unverified_checkpoint(row.note)
        if (cp.tree_size, cp.root_hash, cp.origin) != (row.tree_size, row.root_hash, row.origin):
            raise TamperError(f"checkpoint {i}: stored columns differ from its signed note")
        stored.append(cp)
    external = read_external(checkpoint_path) if checkpoint_path is not None else None
    return stored, external


def _walk_entries(conn: Connection, tables: Tables, wanted: set[int]) -> _Walk:
    """Step 3: every entry in seq order.

    Each must be the next seq, hash to its stored entry and leaf hashes from
    its own bytes, and link to its predecessor; its leaf extends the Merkle
    tree, whose root is kept at each anchor's size.
    """
    e = tables.entries
    rng = CompactRange()
    roots: dict[int, bytes] = {0: EMPTY_ROOT}
    kinds: Counter[str] = Counter()
    prev = ZERO_HASH
    rows = conn.execute(select(e).order_by(e.c.seq).execution_options(yield_per=_BATCH))
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
    return _Walk(rng.size, rng.root(), prev, roots, kinds)


def _check_stored(stored: list[Checkpoint], walk: _Walk, key: Ed25519PublicKey | str | None) -> int:
    """Step 4: every stored checkpoint is reached by the entries; returns signatures checked.

    Sizes never shrink, none exceeds the ledger, each root is recomputed.
    """
    signatures = 0
    good_size = 0
    for i, cp in enumerate(stored):
        if i and cp.tree_size < stored[i - 1].tree_size:
            raise TamperError(f"checkpoint {i} shrinks the tree to {cp.tree_size}")
        signatures += _check_anchor(cp, walk, good_size, f"stored checkpoint {i}", key)
        good_size = cp.tree_size
    return signatures


def _check_external(
    external: Checkpoint | None,
    stored: list[Checkpoint],
    walk: _Walk,
    checkpoint_path: Path | None,
    key: Ed25519PublicKey | str | None,
    warnings: list[str],
) -> int:
    """Step 5: the checkpoint outside the database; returns signatures checked.

    It catches a restored older copy or a truncated tail, which leave the
    database self-consistent.
    """
    if external is None:
        if checkpoint_path is not None and stored:
            warnings.append(
                f"checkpoint file {checkpoint_path} is missing: a restored older copy of the "
                "database would not be detected"
            )
        return 0
    below = [cp.tree_size for cp in stored if cp.tree_size <= external.tree_size]
    where = f"external checkpoint {checkpoint_path}"
    return _check_anchor(external, walk, max(below, default=0), where, key)


def _check_tree(conn: Connection, tables: Tables, size: int, warnings: list[str]) -> None:
    """Step 6: the stored Merkle tree nodes are the tree of the entries just walked.

    Proofs are read from these nodes (and each is checked against its
    checkpoint when made), so an edited node is tampering even though no
    entry changed. Level 0 is compared with the entries' leaf hashes, each
    level above with the hashes of the pairs below it.
    """
    t = tables.tree
    epoch = current_epoch(conn, t)
    stored = stored_leaf_count(conn, t, epoch)
    if epoch:
        warnings.append(
            f"the Merkle tree table was rebuilt {epoch} time(s): a copy disagreed with the "
            "entries, so entries were removed or rewritten behind the ledger's back"
        )
    if stored > size:
        warnings.append(
            f"the Merkle tree table holds {stored} leaves but the ledger {size} entries: "
            "entries were removed behind the ledger's back (the next append rebuilds the tree)"
        )
    elif stored < size:
        warnings.append(
            f"the Merkle tree table covers {stored} of {size} entries (appended by an older "
            "jurat); the next append or checkpoint completes it"
        )
    n = min(stored, size)
    e = tables.entries
    for lo in range(0, n, _TREE_BATCH):
        hi = min(n, lo + _TREE_BATCH)
        leaves = conn.execute(
            select(e.c.seq, e.c.leaf_hash).where(e.c.seq >= lo, e.c.seq < hi).order_by(e.c.seq)
        ).all()
        for (seq, leaf), node in zip(leaves, read_level(conn, t, epoch, 0, lo, hi), strict=True):
            if node.hex() != leaf:
                raise TamperError(f"seq {seq}: the stored Merkle tree leaf differs from the entry")
    level = 1
    while n >> level:
        count = n >> level
        for lo in range(0, count, _TREE_BATCH):
            hi = min(count, lo + _TREE_BATCH)
            below = read_level(conn, t, epoch, level - 1, 2 * lo, 2 * hi)
            for i, node in enumerate(read_level(conn, t, epoch, level, lo, hi)):
                if node_hash(below[2 * i], below[2 * i + 1]) != node:
                    first = (lo + i) << level
                    raise TamperError(
                        f"seq {first}..{first + (1 << level) - 1}: the stored Merkle tree hash "
                        f"at level {level} differs from the entries' (tree table edited)"
                    )
        level += 1


def _check_anchor(
    cp: Checkpoint,
    walk: _Walk,
    good_size: int,
    where: str,
    key: Ed25519PublicKey | str | None,
) -> int:
    """Steps 4 and 5 for one checkpoint: reached, same root, signed; returns signatures checked."""
    if cp.tree_size > walk.size:
        raise TamperError(
            f"seq {walk.size}: the {where} commits to {cp.tree_size} entries but the ledger "
            f"has {walk.size}: truncated or restored from an older copy"
        )
    if walk.roots[cp.tree_size].hex() != cp.root_hash:
        # Every entry hashed correctly, so the history was rewritten with
        # fresh hashes; the last matching checkpoint bounds where.
        raise TamperError(
            f"seq {good_size}..{cp.tree_size - 1}: entries differ from the {where} "
            "(history rewritten or forked)"
        )
    if key is None:
        return 0
    parse_checkpoint(cp.note, key)
    return 1


def _load_proof(proof: EntryProof | str | bytes | dict[str, Any]) -> EntryProof:
    try:
        if isinstance(proof, str | bytes):
            return EntryProof.model_validate_json(proof)
        if isinstance(proof, dict):
            return EntryProof.model_validate(proof)
        return proof
    except pydantic.ValidationError as exc:
        raise invalid(exc, EntryProof, proof if isinstance(proof, dict) else None, TamperError,
                      source="entry proof is malformed", fix=False) from exc


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
