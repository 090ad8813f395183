"""The checkpoint file kept outside the database.

A database restored from an older backup (or truncated) is internally
consistent; only something it does not contain can show it lost entries.
Every ``Ledger.checkpoint()`` also writes the signed note to this file, and
``verify()`` requires the database to still reach that tree size and root.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Row, select

from jurat.errors import LedgerError, TamperError
from jurat.ledger._entry import broken_link, check_row
from jurat.ledger._logkey import wrong_log_key
from jurat.ledger._merkle import CompactRange
from jurat.ledger._models import Checkpoint
from jurat.ledger._note import LogSigner, checkpoint_body, parse_unverified_checkpoint
from jurat.ledger._queries import current_size, now
from jurat.ledger._tree import range_hash, range_keys
from jurat.ledger._treestore import current_epoch, read_level, read_nodes, sync_tree

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = [
    "Precheck",
    "chained_rows",
    "precheck",
    "read_external",
    "sign_checkpoint",
    "stored_frontier",
    "write_external",
]

_MAX_NOTE = 64 * 1024
_BATCH = 1000


def read_external(path: Path) -> Checkpoint | None:
    """The checkpoint in ``path`` (signature unchecked), or None if there is no file."""
    try:
        with path.open("rb") as fh:
            data = fh.read(_MAX_NOTE + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LedgerError(f"cannot read checkpoint file {path}: {exc.strerror}") from exc
    if len(data) > _MAX_NOTE:
        raise TamperError(f"checkpoint file {path} is larger than any checkpoint")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TamperError(f"checkpoint file {path} is not UTF-8") from exc
    try:
        return parse_unverified_checkpoint(text)
    except TamperError as exc:
        raise TamperError(f"checkpoint file {path}: {exc}") from exc


def write_external(path: Path, note: str) -> None:
    """Replace ``path`` with ``note`` atomically and durably.

    A crash leaves either the old or the new checkpoint, never a torn file
    that would make the next ``verify()`` fail for no reason.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(note.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        raise LedgerError(f"cannot write checkpoint file {path}: {exc.strerror}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def chained_rows(conn: Connection, tables: Tables, first: int) -> Iterator[Row[Any]]:
    """The entry rows from seq ``first`` to the tail, in order, each refused (TamperError)
    unless it matches its own hashes (``check_row``) and, after the first, links to the
    row before it.

    How a reader checks rows no signed root has vouched for yet: what a checkpoint is about
    to sign (``_new_leaves``), what the settlement signer is about to trust
    (``_current``). The first row's own link needs the row before it: the caller's.
    """
    e = tables.entries
    prev: str | None = None
    # Options on the statement, not the connection: on the connection they
    # would outlive this read and turn a later INSERT into a cursor.
    rows = conn.execute(
        select(e).where(e.c.seq >= first).order_by(e.c.seq).execution_options(yield_per=_BATCH)
    )
    for row in rows:
        # The hashes alone: a checkpoint signs leaves, not the payloads' meaning.
        check_row(row._mapping)
        if prev is not None and row.prev_hash != prev:
            raise TamperError(broken_link(int(row.seq)))
        prev = row.entry_hash
        yield row


def stored_frontier(conn: Connection, tables: Tables, epoch: int, size: int) -> list[bytes]:
    """The stored tree's compact range of the first ``size`` leaves, largest subtree first
    (what ``CompactRange.resume`` takes). Unchecked: a root over it proves it or not."""
    keys = range_keys(0, size)
    nodes = read_nodes(conn, tables.tree, epoch, set(keys))
    try:
        return [nodes[k] for k in keys]
    except KeyError as exc:
        raise TamperError(f"the Merkle tree node for a root at size {size} is missing") from exc


def _new_leaves(conn: Connection, tables: Tables, epoch: int, since: int, size: int) -> list[bytes]:
    """Leaf hashes of seq ``since … size - 1``, each entry checked in full.

    Entries past the last checkpoint are covered by no signed root yet, so
    before they are signed each must match its own hashes, link to its
    predecessor (from ``since - 1``), and be the leaf the stored tree holds.
    """
    start = max(since - 1, 0)
    stored = read_level(conn, tables.tree, epoch, 0, start, size)
    leaves: list[bytes] = []
    for row in chained_rows(conn, tables, start):
        seq = int(row.seq)
        if row.leaf_hash != stored[seq - start].hex():
            raise TamperError(
                f"seq {seq}: the entry is not the leaf the Merkle tree recorded when it "
                "was appended: history was rewritten"
            )
        if seq >= since:
            leaves.append(bytes.fromhex(row.leaf_hash))
    if len(leaves) != size - since:
        raise TamperError(f"seq {since + len(leaves)}: entry missing")
    return leaves


@dataclass(frozen=True, slots=True)
class Precheck:
    """Entries checked ahead of the checkpoint that signs them (``precheck``).

    Each entry past the last checkpoint must be checked before a root over it is signed;
    checked while a run is still appending, they need not be read again when it ends.
    What was checked is kept as a compact range: O(log n), however many entries.
    """

    since: int
    """The tree size of the last checkpoint when the checking began."""
    epoch: int
    """The stored tree's epoch the entries' leaves were compared with."""
    base: tuple[bytes, ...]
    """The compact range of the first ``since`` leaves, from the stored tree: the sign
    step compares it with the one the last checkpoint's root vouches for."""
    size: int
    """Entries ``since … size - 1`` are checked."""
    roots: tuple[bytes, ...]
    """The compact range of the first ``size`` leaves."""

    def continues(self, since: int, epoch: int, base: list[bytes], size: int) -> bool:
        """Whether the checkpoint about to be signed can start from here."""
        return (self.since, self.epoch, self.base) == (since, epoch, tuple(base)) and (
            self.size <= size)


def precheck(conn: Connection, tables: Tables, prior: Precheck | None = None) -> Precheck:
    """Check the entries appended since the last checkpoint (or since ``prior``) as signing
    would (``_new_leaves``), without the write lock: committed entries never change, and a
    change made by tampering afterwards either fails the sign step's comparison with the
    stored tree or is caught by the signed root it would contradict.
    """
    c = tables.checkpoints
    last = conn.execute(select(c.c.tree_size).order_by(c.c.id.desc()).limit(1)).first()
    since = 0 if last is None else int(last.tree_size)
    size = current_size(conn, tables.entries)
    epoch = current_epoch(conn, tables.tree)
    base = stored_frontier(conn, tables, epoch, since)
    if prior is not None and prior.continues(since, epoch, base, size):
        start, rng = prior.size, CompactRange.resume(prior.size, prior.roots)
    else:
        start, rng = since, CompactRange.resume(since, base)
    for leaf in _new_leaves(conn, tables, epoch, start, size):
        rng.append(leaf)
    return Precheck(since, epoch, tuple(base), size, rng.roots())


def sign_checkpoint(conn: Connection, tables: Tables, signer: LogSigner, path: Path,
                    checked: Precheck | None = None) -> str:
    """Sign the tree head, insert the checkpoint row and write ``path``; return the note.

    Runs inside the ledger's write transaction, so no entry is appended
    between computing the root and storing it. Refuses (TamperError) when the
    database no longer reaches the last stored or external checkpoint, so a
    restored or rewritten database is never re-signed.

    Costs O(k + log n) for k entries since the last checkpoint: the earlier
    entries are vouched for by the last checkpoint's root, which the stored
    tree must reproduce, and the signed root is that checkpoint's compact
    range extended with the k newly checked leaves. With ``checked`` (a
    ``precheck`` of this ledger since that checkpoint), only the entries past
    it are read.
    """
    c = tables.checkpoints
    # Read under the lock: another checkpointer may have just moved it.
    external = read_external(path)
    last = conn.execute(select(c).order_by(c.c.id.desc()).limit(1)).first()
    if last is not None and last.origin != signer.origin:
        # One log, one identity: a second key would split its history
        # between two origins no verifier would connect. The message names the
        # key that can sign (the legacy hidden one, when it is that key).
        raise LedgerError(wrong_log_key(str(last.origin), signer, None))
    size = current_size(conn, tables.entries)
    anchors: list[tuple[int, str, str]] = []
    if last is not None:
        anchors.append((int(last.tree_size), str(last.root_hash), "stored"))
    if external is not None:
        anchors.append((external.tree_size, external.root_hash, "external"))
    for anchor_size, _, where in anchors:
        if anchor_size > size:
            raise TamperError(
                f"seq {size}: the {where} checkpoint commits to {anchor_size} entries "
                f"but the ledger has {size}: truncated or restored from an older copy"
            )
    tail = None if size == 0 else _tail_leaf(conn, tables, size)
    tree = sync_tree(conn, tables, size, tail)
    since = 0 if last is None else int(last.tree_size)
    sizes = {a[0] for a in anchors} | {since}
    nodes = read_nodes(conn, tables.tree, tree.epoch, {k for s in sizes for k in range_keys(0, s)})
    for anchor_size, anchor_root, where in anchors:
        if _root(anchor_size, nodes).hex() != anchor_root:
            raise TamperError(
                f"the ledger's first {anchor_size} entries do not match the {where} "
                "checkpoint: history was rewritten"
            )
    # The signed root comes from the entries themselves past the last
    # signed size, not from stored interior nodes no root has vouched for.
    base = [nodes[k] for k in range_keys(0, since)]
    if checked is not None and checked.continues(since, tree.epoch, base, size):
        start, rng = checked.size, CompactRange.resume(checked.size, checked.roots)
    else:
        start, rng = since, CompactRange.resume(since, base)
    for leaf in _new_leaves(conn, tables, tree.epoch, start, size):
        rng.append(leaf)
    root = rng.root()
    if root != tree.range.root():
        raise TamperError(
            f"seq {since}..{size - 1}: the stored Merkle tree differs from the entries"
        )
    note = signer.sign_note(checkpoint_body(signer.origin, size, root))
    next_id = 0 if last is None else int(last.id) + 1
    conn.execute(
        c.insert().values(
            id=next_id,
            tree_size=size,
            root_hash=root.hex(),
            origin=signer.origin,
            note=note,
            recorded_at=now(),
        )
    )
    # Written while the lock is held so concurrent checkpointers cannot
    # move the file backwards; the entries it covers are already
    # committed, so a crash before our commit leaves it still true.
    write_external(path, note)
    return note


def _tail_leaf(conn: Connection, tables: Tables, size: int) -> str | None:
    e = tables.entries
    found = conn.execute(select(e.c.leaf_hash).where(e.c.seq == size - 1)).scalar()
    return None if found is None else str(found)


def _root(size: int, nodes: dict[int, bytes]) -> bytes:
    try:
        return range_hash(0, size, nodes)
    except KeyError as exc:
        raise TamperError(f"the Merkle tree node for a root at size {size} is missing") from exc
