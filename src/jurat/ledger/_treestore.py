"""The stored Merkle nodes in the database: reading them, and keeping them level with the entries.

Nodes are written in the same transaction as the entries that complete them
(``_append``), so normally the newest epoch of the ``tree`` table covers
exactly the entries. Two things can leave it otherwise, and
:func:`sync_tree` (run under the write lock) repairs both:

* *behind*: a ledger written before the table existed, or entries appended
  by an older jurat. The missing nodes are built from the stored leaf hashes,
  once; on a ledger with no tree at all that is the migration
  (``open_ledger`` runs it when it creates the table).
* *ahead or different*: nodes for entries that are gone or differ, which
  only an edit behind the ledger's back produces. Nodes are never updated or
  deleted, so the tree is rebuilt from the entries as the next epoch. That
  repairs proofs for the entries as they are; whether they are the entries
  that were signed is for the checkpoints to say (``verify()``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Connection, Table, func, select

from jurat.errors import TamperError
from jurat.ledger._merkle import CompactRange
from jurat.ledger._sql import chunks, one_of
from jurat.ledger._tree import INDEX_BITS, frontier, leaf_key, node_key

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = [
    "TreeState",
    "current_epoch",
    "extend_tree",
    "heads",
    "insert_nodes",
    "read_level",
    "read_nodes",
    "stored_leaf_count",
    "sync_to_entries",
    "sync_tree",
]

_INSERT_CHUNK = 5000
_READ_CHUNK = 10000
_ANALYZE_AFTER = 20000


class TreeState:
    """The epoch in use and the compact range at the ledger's size, for the next appends."""

    def __init__(self, epoch: int, rng: CompactRange) -> None:
        self.epoch = epoch
        self.range = rng


def current_epoch(conn: Connection, tree: Table) -> int:
    """The newest epoch (0 for an empty table)."""
    found = conn.execute(select(func.max(tree.c.epoch))).scalar()
    return 0 if found is None else int(found)


def heads(conn: Connection, tables: Tables) -> tuple[int, int]:
    """The ledger's size and the tree's newest epoch, in one round trip."""
    e, t = tables.entries, tables.tree
    row = conn.execute(
        select(
            select(func.max(e.c.seq)).scalar_subquery(),
            select(func.max(t.c.epoch)).scalar_subquery(),
        )
    ).one()
    top, epoch = row
    return (0 if top is None else int(top) + 1), (0 if epoch is None else int(epoch))


def read_nodes(conn: Connection, tree: Table, epoch: int, keys: Iterable[int]) -> dict[int, bytes]:
    """The stored hashes of ``keys`` that exist, by key."""
    wanted = sorted(set(keys))
    found: dict[int, bytes] = {}
    for chunk in chunks(conn, wanted):
        rows = conn.execute(
            select(tree.c.node, tree.c.hash).where(
                tree.c.epoch == epoch, one_of(conn, tree.c.node, chunk)
            )
        )
        for node, value in rows:
            found[int(node)] = bytes(value)
    return found


def read_level(
    conn: Connection, tree: Table, epoch: int, level: int, lo: int, hi: int
) -> list[bytes]:
    """Hashes of nodes ``(level, lo) … (level, hi - 1)``; TamperError if one is missing."""
    out: list[bytes] = []
    start = lo
    while start < hi:
        end = min(hi, start + _READ_CHUNK)
        rows = conn.execute(
            select(tree.c.node, tree.c.hash)
            .where(
                tree.c.epoch == epoch,
                tree.c.node >= node_key(level, start),
                tree.c.node < node_key(level, end),
            )
            .order_by(tree.c.node)
        ).all()
        for offset, (node, value) in enumerate(rows):
            if int(node) != node_key(level, start + offset):
                break
            out.append(bytes(value))
        if len(out) != end - lo:
            missing = lo + len(out)
            raise TamperError(
                f"seq {missing << level}: the Merkle tree node at level {level}, index "
                f"{missing} is missing"
            )
        start = end
    return out


def stored_leaf_count(conn: Connection, tree: Table, epoch: int) -> int:
    """How many leaves ``epoch`` holds: the highest level-0 index + 1."""
    top = conn.execute(
        select(func.max(tree.c.node)).where(tree.c.epoch == epoch, tree.c.node < (1 << INDEX_BITS))
    ).scalar()
    return 0 if top is None else int(top) + 1


def insert_nodes(
    conn: Connection, tree: Table, epoch: int, nodes: Sequence[tuple[int, int, bytes]]
) -> None:
    """Insert ``(level, index, hash)`` nodes into ``epoch``."""
    stmt = tree.insert()
    for i in range(0, len(nodes), _INSERT_CHUNK):
        rows = [
            {"epoch": epoch, "node": node_key(level, index), "hash": value}
            for level, index, value in nodes[i : i + _INSERT_CHUNK]
        ]
        if rows:
            conn.execute(stmt, rows)


def extend_tree(conn: Connection, tables: Tables, epoch: int, rng: CompactRange, size: int) -> None:
    """Append the stored leaf hashes of seq ``rng.size … size - 1`` to ``rng``, storing the nodes.

    Reads the ``leaf_hash`` column, not the entries' content: a leaf that does
    not match its entry is for ``verify()`` and the checkpoint to catch.
    """
    e, tree = tables.entries, tables.tree
    pending: list[tuple[int, int, bytes]] = []
    built = rng.size
    while rng.size < size:
        start = rng.size
        rows = conn.execute(
            select(e.c.seq, e.c.leaf_hash)
            .where(e.c.seq >= start, e.c.seq < min(size, start + _READ_CHUNK))
            .order_by(e.c.seq)
        ).all()
        if not rows:
            raise TamperError(f"seq {start}: entry missing")
        for seq, leaf in rows:
            if int(seq) != rng.size:
                raise TamperError(f"seq {rng.size}: entry missing (next stored seq is {seq})")
            pending.extend(rng.append(bytes.fromhex(leaf)))
        if len(pending) >= _INSERT_CHUNK:
            insert_nodes(conn, tree, epoch, pending)
            pending = []
    insert_nodes(conn, tree, epoch, pending)
    if size - built > _ANALYZE_AFTER and conn.dialect.name == "postgresql":
        # Without statistics PostgreSQL plans `epoch = e AND node IN (…)` as a
        # scan of the whole epoch (measured: 3x slower proofs at 10^5 entries
        # until autovacuum analyses the table); a bulk build gives it some.
        conn.exec_driver_sql(f"ANALYZE {_qualified(conn, tree)}")


def _qualified(conn: Connection, table: Table) -> str:
    quote = conn.dialect.identifier_preparer.quote
    name = quote(table.name)
    return f"{quote(table.schema)}.{name}" if table.schema else name


def sync_to_entries(conn: Connection, tables: Tables) -> TreeState:
    """:func:`sync_tree` at the ledger's current size (under the write lock)."""
    e = tables.entries
    tail = conn.execute(select(e.c.seq, e.c.leaf_hash).order_by(e.c.seq.desc()).limit(1)).first()
    if tail is None:
        return sync_tree(conn, tables, 0, None)
    return sync_tree(conn, tables, int(tail.seq) + 1, str(tail.leaf_hash))


def _resume(conn: Connection, tree: Table, epoch: int, size: int) -> CompactRange | None:
    keys = [node_key(level, index) for level, index in frontier(size)]
    found = read_nodes(conn, tree, epoch, keys)
    if len(found) != len(keys):
        return None
    return CompactRange.resume(size, [found[k] for k in keys])


def sync_tree(
    conn: Connection, tables: Tables, size: int, tail_leaf: str | None, *, epoch: int | None = None
) -> TreeState:
    """Make the newest epoch cover exactly seq ``0 … size - 1``; return it with its range.

    Runs under the write lock. ``tail_leaf`` is the stored leaf hash (hex) of
    seq ``size - 1``; ``epoch`` the newest epoch when the caller read it with the tail.
    The common case (the tree is level with the entries) costs one read of O(log n)
    nodes.
    """
    tree = tables.tree
    if epoch is None:
        epoch = current_epoch(conn, tree)
    if size > 0 and tail_leaf is not None:
        keys = [node_key(level, index) for level, index in frontier(size)]
        probe = read_nodes(conn, tree, epoch, [*keys, leaf_key(size - 1), leaf_key(size)])
        level = (
            leaf_key(size) not in probe
            and probe.get(leaf_key(size - 1)) == bytes.fromhex(tail_leaf)
            and all(k in probe for k in keys)
        )
        if level:
            return TreeState(epoch, CompactRange.resume(size, [probe[k] for k in keys]))
    stored = stored_leaf_count(conn, tree, epoch)
    rng: CompactRange | None = None
    # Resume only from a tree that is exactly the nodes of its first
    # `stored` leaves, ending on the entry's leaf: anything else would
    # collide with the nodes about to be written.
    if stored <= size and _node_count(conn, tree, epoch) == 2 * stored - stored.bit_count():
        if stored == 0:
            rng = CompactRange()
        else:
            e = tables.entries
            leaf = conn.execute(select(e.c.leaf_hash).where(e.c.seq == stored - 1)).scalar()
            tail = read_nodes(conn, tree, epoch, [leaf_key(stored - 1)]).get(leaf_key(stored - 1))
            if leaf is not None and tail == bytes.fromhex(leaf):
                rng = _resume(conn, tree, epoch, stored)
    if rng is None:
        # The stored tree is ahead of the entries or disagrees with them.
        epoch += 1
        rng = CompactRange()
    extend_tree(conn, tables, epoch, rng, size)
    return TreeState(epoch, rng)


def _node_count(conn: Connection, tree: Table, epoch: int) -> int:
    return int(
        conn.execute(select(func.count()).select_from(tree).where(tree.c.epoch == epoch)).scalar()
        or 0
    )
