"""Widening the entries table's ``kind`` constraint of a ledger made by an earlier jurat.

The constraint lists the kinds of ``ENTRY_KINDS`` as they were when the table was
created, so a ledger from before ``transport_failed`` (an outage sample) refused it, and
upgrading jurat broke ``jurat run`` on an existing ledger exactly when a judge was down.
A writer's open compares the stored list with ``ENTRY_KINDS`` and widens it when a kind
is missing, so the next added kind needs no code here. Kinds the stored list admits that
this jurat does not know (a newer jurat made the table) stay admitted: narrowing would
refuse rows already recorded.

Every row is kept as it is (seq, payload bytes, hashes), and the triggers that make the
tables append-only are back before the transaction commits: the seed's "append-only by
convention, not by invariant" (seed 001, Limits and open work) must not become true for
the length of a migration.
"""

from __future__ import annotations

import re

from sqlalchemy import Connection, MetaData, text
from sqlalchemy.schema import CreateTable

from jurat.errors import LedgerError
from jurat.ledger._backend import Backend, _build_tables
from jurat.ledger._models import ENTRY_KINDS

__all__ = ["widen_kinds"]

# The constraint as SQLAlchemy wrote it into SQLite's schema: ``kind IN ('a', 'b')``.
_SQLITE_IN = re.compile(r"\bkind\s+IN\s*\(([^)]*)\)", re.IGNORECASE)
# PostgreSQL shows it as ``(kind)::text = ANY (ARRAY['a'::character varying, …])``.
_LITERAL = re.compile(r"'([^']*)'")


def _stored_kinds(conn: Connection, backend: Backend) -> frozenset[str] | None:
    """The kinds the stored constraint admits; None when the table has none (admits all)."""
    name = backend.tables.entries.name
    if backend.name == "sqlite":
        sql = conn.execute(
            text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :n"),
            {"n": name},
        ).scalar()
        found = _SQLITE_IN.search(str(sql or ""))
        return None if found is None else frozenset(_LITERAL.findall(found.group(1)))
    definition = conn.execute(
        text(
            "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
            "WHERE conname = :c AND conrelid = to_regclass(:t)"
        ),
        {"c": f"{backend.prefix}entries_kind", "t": backend.qualified("entries")},
    ).scalar()
    return None if definition is None else frozenset(_LITERAL.findall(str(definition)))


def _wanted(stored: frozenset[str] | None) -> tuple[str, ...] | None:
    """The kinds the widened constraint lists, or None when the stored one admits all."""
    if stored is None or stored >= set(ENTRY_KINDS):
        return None
    return ENTRY_KINDS + tuple(sorted(stored - set(ENTRY_KINDS)))


def widen_kinds(backend: Backend) -> bool:
    """Make the stored entries table admit every kind of ``ENTRY_KINDS``; True if it had to.

    Costs one catalog read when nothing is missing (every writer's open). The change runs
    in one write transaction, after the missing kinds are read again under the lock, so of
    concurrent openers one migrates and the others find nothing to do.
    """
    with backend.read() as conn:
        if _wanted(_stored_kinds(conn, backend)) is None:
            return False
    with backend.write(lock=False) as conn:
        if backend.name == "postgresql":
            # ALTER TABLE takes this lock anyway; taking it first, before the re-read,
            # means no appender holds EXCLUSIVE while this waits to upgrade.
            conn.exec_driver_sql(
                f"LOCK TABLE {backend.qualified('entries')} IN ACCESS EXCLUSIVE MODE"
            )
        kinds = _wanted(_stored_kinds(conn, backend))
        if kinds is None:
            return False
        if backend.name == "sqlite":
            _rebuild_sqlite(conn, backend, kinds)
        else:
            _alter_postgresql(conn, backend, kinds)
    return True


def _alter_postgresql(conn: Connection, backend: Backend, kinds: tuple[str, ...]) -> None:
    name = f'"{backend.prefix}entries_kind"'
    admitted = ", ".join(f"'{k}'" for k in kinds)
    # One statement: there is no moment without the constraint. Adding a CHECK only
    # scans the rows (they all passed the narrower list); it rewrites none of them.
    conn.exec_driver_sql(
        f"ALTER TABLE {backend.qualified('entries')} DROP CONSTRAINT {name}, "
        f"ADD CONSTRAINT {name} CHECK (kind IN ({admitted}))"
    )


def _rebuild_sqlite(conn: Connection, backend: Backend, kinds: tuple[str, ...]) -> None:
    """Copy the entries into a table with the wider constraint and put it in the old one's place.

    A rebuild because SQLite cannot alter or drop a constraint (no ALTER CONSTRAINT). It
    runs once per ledger: the rebuilt table admits every kind this jurat knows. It runs
    under the writer lock (the ``flock`` and ``BEGIN IMMEDIATE`` of ``Backend.write``), so
    no other process appends meanwhile, and in one transaction, so a crash leaves the old
    table as it was.
    """
    prefix = backend.prefix
    old = backend.tables.entries
    _, wider = _build_tables(prefix, None, kinds)
    temp = wider.entries.to_metadata(MetaData(), name=f"{prefix}entries_widen")
    columns = ", ".join(f'"{c.name}"' for c in old.columns)
    before = conn.execute(text(f'SELECT count(*) FROM "{old.name}"')).scalar_one()
    conn.execute(CreateTable(temp))
    conn.exec_driver_sql(
        f'INSERT INTO "{temp.name}" ({columns}) SELECT {columns} FROM "{old.name}" ORDER BY seq'
    )
    copied = conn.execute(text(f'SELECT count(*) FROM "{temp.name}"')).scalar_one()
    if copied != before:
        raise LedgerError(
            f"widening {old.name}'s kinds copied {copied} of {before} entries; nothing was "
            "changed (fix: run `jurat log verify` on the ledger, then open it again)"
        )
    # This trigger reads the entries table: SQLite re-checks every trigger when a table
    # is renamed and refuses while it names a table that is gone. Recreated below.
    conn.exec_driver_sql(f'DROP TRIGGER IF EXISTS "{prefix}checkpoints_order"')
    conn.exec_driver_sql(f'DROP TABLE "{old.name}"')  # with its indexes and triggers
    conn.exec_driver_sql(f'ALTER TABLE "{temp.name}" RENAME TO "{old.name}"')
    for index in old.indexes:
        index.create(conn)
    backend.create_triggers(conn)
