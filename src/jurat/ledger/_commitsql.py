"""The commit path's statements, written once per backend and run on the driver's cursor.

A group commit runs a handful of small statements per batch. Built as SQLAlchemy Core
expressions, each one cost more CPU in the client (cache key, compiled-cache lookup,
expanding ``IN`` parameters, result wrapping) than the database took to run it: about
half of the commit thread's time, profiled in a ``jurat run``. Here the same statements
are plain SQL text made once per ledger and executed on the DBAPI cursor of the
transaction's connection, so they run inside the write transaction that
``Backend.write()`` opened, under its lock, exactly as the Core statements did.

Only the hot path lives here: the tail read, the frontier read, the receipt lookups and
the two inserts; and the reads a served job makes (``select_entries``, ``newest_receipt``:
a job's entries, an entry by seq, an artifact's latest receipt), where the Core statement
cost about 350 us of CPU of a 500 us read on SQLite, and on PostgreSQL a read blocks the
service's event loop. Anything rare (an empty ledger, a tree to repair or migrate, reading
stored receipts) keeps the Core code in ``_append`` and ``_treestore``.

Driver errors are wrapped as SQLAlchemy wraps them (``DBAPIError``), so callers see the
same exceptions, and the same ``LedgerError`` at the ``Ledger`` boundary, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Table
from sqlalchemy.exc import DBAPIError

from jurat.ledger._tree import INDEX_BITS

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = ["ENTRY_COLUMNS", "CommitSQL", "Tail"]

#: The entries table's columns in the order the insert takes a row's values.
ENTRY_COLUMNS = (
    "seq",
    "kind",
    "job_id",
    "campaign_id",
    "artifact_id",
    "payload",
    "payload_sha256",
    "recorded_at",
    "prev_hash",
    "entry_hash",
    "leaf_hash",
)
#: The columns ``select_entries`` filters on with ``=`` (never a caller's text: the SQL
#: names them).
ENTRY_FILTERS = ("seq", "kind", "job_id", "campaign_id", "artifact_id")
#: Keys per ``IN`` list on SQLite: far below its parameter limit (32,766).
_SQLITE_IN = 500

#: PostgreSQL array types of the inserted columns, as the tables declare them.
_PG_ENTRY_TYPES = ("bigint",) + ("varchar",) * 4 + ("bytea",) + ("varchar",) * 5
_PG_NODE_TYPES = ("integer", "bigint", "bytea")

#: ``(seq, entry_hash, leaf_hash, newest epoch, highest leaf of that epoch)`` of the tail.
Tail = tuple[int, str, str, int, int | None]


class CommitSQL:
    """The commit path's SQL for one ledger's tables on one backend."""

    def __init__(self, dialect_name: str, tables: Tables, quote: Any) -> None:
        self.pg = dialect_name == "postgresql"
        e, t = _name(tables.entries, quote), _name(tables.tree, quote)
        # Highest leaf of the newest epoch beside the tail: a tree level with the entries
        # has exactly the tail's leaf there. Both are answered from the primary key.
        self._tail = (
            f"SELECT seq, entry_hash, leaf_hash, (SELECT MAX(epoch) FROM {t}), "
            f"(SELECT MAX(node) FROM {t} WHERE epoch = (SELECT MAX(epoch) FROM {t}) "
            f"AND node < {1 << INDEX_BITS}) "
            f"FROM {e} ORDER BY seq DESC LIMIT 1"
        )
        if self.pg:
            # Rows in order of the arrays (ORDER BY the ordinality): the chain trigger
            # checks each row against the one inserted before it.
            self._insert_entries = _unnest_insert(e, ENTRY_COLUMNS, _PG_ENTRY_TYPES)
            self._insert_nodes = _unnest_insert(t, ("epoch", "node", "hash"), _PG_NODE_TYPES)
        else:
            self._insert_entries = (
                f"INSERT INTO {e} ({', '.join(ENTRY_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(ENTRY_COLUMNS))})"
            )
            self._insert_nodes = f"INSERT INTO {t} (epoch, node, hash) VALUES (?, ?, ?)"
        ph = "%s" if self.pg else "?"
        self._ph = ph
        self._select = f"SELECT {', '.join(ENTRY_COLUMNS)} FROM {e}"
        self._selects: dict[tuple[str, ...], str] = {}
        self._newest_receipt = (
            f"{self._select} WHERE kind = 'receipt' AND campaign_id = {ph} "
            f"AND artifact_id = {ph} ORDER BY seq DESC LIMIT 1"
        )
        # Completed by ``_one_of``.
        self._nodes = f"SELECT node, hash FROM {t} WHERE epoch = {ph} AND node"
        # Rows of (campaign, key, seq); a NULL campaign marks a job's receipt.
        self._jobs = f"SELECT NULL, job_id, seq FROM {e} WHERE kind = 'receipt' AND job_id"
        self._subjects = (
            f"SELECT campaign_id, artifact_id, seq FROM {e} "
            f"WHERE kind = 'receipt' AND campaign_id = {ph} AND artifact_id"
        )

    @contextmanager
    def cursor(self, conn: Connection) -> Iterator[Any]:
        """The DBAPI cursor of ``conn``'s transaction; driver errors wrapped as SQLAlchemy's."""
        dbapi = conn.dialect.loaded_dbapi
        cur = conn.connection.cursor()
        try:
            yield cur
        except dbapi.Error as exc:
            raise DBAPIError.instance(None, None, exc, dbapi.Error) from exc
        finally:
            cur.close()

    def select_entries(
        self, cur: Any, equal: dict[str, Any], *, after: int, limit: int
    ) -> list[dict[str, Any]]:
        """Entry rows (column -> value) whose ``equal`` columns have those values and whose
        seq is above ``after``, in seq order, at most ``limit``: ``Ledger.entries``' batch."""
        names = tuple(equal)
        key = (*names, str(int(limit)))  # the limit is in the statement's text
        statement = self._selects.get(key)
        if statement is None:
            unknown = set(names) - set(ENTRY_FILTERS)
            if unknown:
                raise ValueError(f"not an entry filter: {sorted(unknown)}")
            tests = " AND ".join([*(f"{name} = {self._ph}" for name in names),
                                  f"seq > {self._ph}"])
            statement = f"{self._select} WHERE {tests} ORDER BY seq LIMIT {int(limit)}"
            self._selects[key] = statement
        cur.execute(statement, [*equal.values(), after])
        return [dict(zip(ENTRY_COLUMNS, row, strict=True)) for row in cur.fetchall()]

    def newest_receipt(self, cur: Any, campaign_id: str, artifact_id: str) -> dict[str, Any] | None:
        """The newest receipt row of (campaign, artifact), as ``receipt_row`` finds it."""
        cur.execute(self._newest_receipt, [campaign_id, artifact_id])
        row = cur.fetchone()
        return None if row is None else dict(zip(ENTRY_COLUMNS, row, strict=True))

    def tail(self, cur: Any) -> Tail | None:
        """The chain's tail with the tree's newest epoch and its highest leaf; None if empty."""
        cur.execute(self._tail)
        row = cur.fetchone()
        if row is None:
            return None
        seq, entry_hash, leaf, epoch, top = row
        return (
            int(seq),
            str(entry_hash),
            str(leaf),
            0 if epoch is None else int(epoch),
            None if top is None else int(top),
        )

    def read_nodes(self, cur: Any, epoch: int, keys: Sequence[int]) -> dict[int, bytes]:
        """The stored hashes of those ``keys`` in ``epoch`` that exist, by key."""
        found: dict[int, bytes] = {}
        for test, values in self._one_of(sorted(set(keys)), "bigint"):
            cur.execute(f"{self._nodes} {test}", [epoch, *values])
            found.update((int(node), bytes(value)) for node, value in cur.fetchall())
        return found

    def receipt_seqs(
        self, cur: Any, jobs: Sequence[str], subjects: dict[str, list[str]]
    ) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
        """The newest receipt's seq for each job and each (campaign, artifact) that has one.

        Selects only (key, seq) with no ORDER BY, so each lookup is answered from its
        covering index (``entries_job``, ``entries_subject``); see ``_receipts_in_play``.
        The lookups go in one statement (``UNION ALL``) as far as the parameters allow.
        """
        parts = [(f"{self._jobs} {test}", values) for test, values in self._one_of(jobs, "varchar")]
        for campaign, artifacts in subjects.items():
            parts.extend(
                (f"{self._subjects} {test}", [campaign, *values])
                for test, values in self._one_of(artifacts, "varchar")
            )
        by_job: dict[str, int] = {}
        by_subject: dict[tuple[str, str], int] = {}
        for statement, params in _unions(parts, limit=None if self.pg else _SQLITE_IN):
            cur.execute(statement, params)
            for campaign, key, seq in cur.fetchall():
                if campaign is None:
                    by_job[str(key)] = max(int(seq), by_job.get(str(key), -1))
                else:
                    subject = (str(campaign), str(key))
                    by_subject[subject] = max(int(seq), by_subject.get(subject, -1))
        return by_job, by_subject

    def _one_of(self, values: Sequence[Any], kind: str) -> Iterator[tuple[str, list[Any]]]:
        """``IN``-tests of a column against ``values`` with their parameters, as ``_sql``.

        PostgreSQL: one array parameter, so the text is the same for any number of values,
        binary (%b) because psycopg writes a text array element by element in Python.
        SQLite: ``IN`` lists of at most ``_SQLITE_IN`` parameters.
        """
        if not values:
            return
        if self.pg:
            yield f"= ANY(%b::{kind}[])", [list(values)]
            return
        for start in range(0, len(values), _SQLITE_IN):
            chunk = list(values[start : start + _SQLITE_IN])
            yield f"IN ({', '.join('?' * len(chunk))})", chunk

    def insert_entries(self, cur: Any, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert entry rows, values in ``ENTRY_COLUMNS`` order, in seq order."""
        self._insert(cur, self._insert_entries, rows)

    def insert_nodes(self, cur: Any, epoch: int, nodes: Sequence[tuple[int, int, bytes]]) -> None:
        """Insert ``(level, index, hash)`` nodes into ``epoch``."""
        rows = [(epoch, (level << INDEX_BITS) | index, value) for level, index, value in nodes]
        self._insert(cur, self._insert_nodes, rows)

    def _insert(self, cur: Any, insert: str, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.pg:
            # One statement whatever the number of rows: one array per column. psycopg's
            # executemany pipelines a statement per row, and a multi-row VALUES has a new
            # text (parsed by the driver and the server) for each number of rows.
            cur.execute(insert, [list(column) for column in zip(*rows, strict=True)])
        else:
            # sqlite3 steps one prepared statement over the rows, in C.
            cur.executemany(insert, rows)


def _name(table: Table, quote: Any) -> str:
    name = str(quote(table.name))
    return f"{quote(table.schema)}.{name}" if table.schema else name


def _unnest_insert(table: str, columns: Sequence[str], types: Sequence[str]) -> str:
    arrays = ", ".join(f"%b::{kind}[]" for kind in types)
    names = ", ".join(columns)
    return (
        f"INSERT INTO {table} ({names}) SELECT {names} FROM unnest({arrays}) "
        f"WITH ORDINALITY AS r({names}, n) ORDER BY n"
    )


def _unions(
    parts: list[tuple[str, list[Any]]], *, limit: int | None
) -> Iterator[tuple[str, list[Any]]]:
    """``parts`` joined by ``UNION ALL`` into as few statements as ``limit`` parameters allow."""
    texts: list[str] = []
    params: list[Any] = []
    for text, values in parts:
        if texts and limit is not None and len(params) + len(values) > limit:
            yield " UNION ALL ".join(texts), params
            texts, params = [], []
        texts.append(text)
        params.extend(values)
    if texts:
        yield " UNION ALL ".join(texts), params
