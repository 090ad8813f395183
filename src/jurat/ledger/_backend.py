"""Database backends: URLs, engines, tables, append-only triggers, write locks.

Two backends share one SQLAlchemy Core schema:

* SQLite (default): WAL journal, ``synchronous=FULL`` so a commit survives a
  crash, readers ``BEGIN`` (a snapshot), writers ``BEGIN IMMEDIATE`` so two
  writers can never both read the same chain tail.
* PostgreSQL through psycopg 3: writers take ``LOCK TABLE … IN EXCLUSIVE
  MODE`` (reads still proceed); readers use REPEATABLE READ for a snapshot.

In both, triggers refuse UPDATE and DELETE (and TRUNCATE in PostgreSQL) on
every ledger table, and refuse an INSERT whose ``seq`` is not the next one or
whose ``prev_hash`` is not the tail's hash, so gaps and forks are refused by
the database itself, not only by this code.

The ``tree`` table holds the Merkle tree's stored nodes (``_tree``), keyed by
``(epoch, node)``. Epoch 0 is the tree built as entries were appended; a
tree found to disagree with the entries (only possible when someone edited
the database behind the ledger) is rebuilt as the next epoch rather than
edited, and the newest epoch is the one in use (``_treestore``).
"""

from __future__ import annotations

import hashlib
import os

try:
    import fcntl
except ImportError:  # not on Windows: writers there wait in SQLite's busy handler
    fcntl = None  # type: ignore[assignment]
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Connection,
    Engine,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

from jurat.errors import ConfigError, DependencyError, LedgerError
from jurat.ledger._commitsql import CommitSQL
from jurat.ledger._models import ENTRY_KINDS

__all__ = ["FORMAT", "ZERO_HASH", "Backend", "Tables", "default_checkpoint_path"]

FORMAT = "jurat.ledger/1"
ZERO_HASH = "0" * 64
_IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,30}$")
BackendName = Literal["sqlite", "postgresql"]


@dataclass(frozen=True)
class Tables:
    """The ledger tables; all of them append-only."""

    meta: Table
    entries: Table
    checkpoints: Table
    tree: Table


def _seq_type() -> Any:
    # In SQLite only INTEGER PRIMARY KEY aliases the rowid (no second index).
    return BigInteger().with_variant(Integer(), "sqlite")


def _build_tables(
    prefix: str, schema: str | None, kinds: tuple[str, ...] | None = None
) -> tuple[MetaData, Tables]:
    md = MetaData(schema=schema)
    # ``kinds``: a migration keeps the kinds a newer jurat admitted (``_migrate``).
    admitted = ", ".join(f"'{k}'" for k in (ENTRY_KINDS if kinds is None else kinds))
    meta = Table(
        f"{prefix}meta",
        md,
        Column("key", String(64), primary_key=True),
        Column("value", Text, nullable=False),
    )
    entries = Table(
        f"{prefix}entries",
        md,
        Column("seq", _seq_type(), primary_key=True, autoincrement=False),
        Column("kind", String(32), nullable=False),
        Column("job_id", String(256), nullable=False),
        Column("campaign_id", String(256)),
        Column("artifact_id", String(256)),
        Column("payload", LargeBinary, nullable=False),
        Column("payload_sha256", String(64), nullable=False),
        Column("recorded_at", String(32), nullable=False),
        Column("prev_hash", String(64), nullable=False),
        Column("entry_hash", String(64), nullable=False),
        Column("leaf_hash", String(64), nullable=False),
        CheckConstraint(f"kind IN ({admitted})", name=f"{prefix}entries_kind"),
        CheckConstraint("seq >= 0", name=f"{prefix}entries_seq"),
        Index(f"{prefix}entries_job", "job_id", "kind"),
        Index(f"{prefix}entries_subject", "campaign_id", "artifact_id", "kind", "seq"),
        Index(f"{prefix}entries_kind", "kind", "seq"),
    )
    checkpoints = Table(
        f"{prefix}checkpoints",
        md,
        Column("id", _seq_type(), primary_key=True, autoincrement=False),
        Column("tree_size", BigInteger, nullable=False),
        Column("root_hash", String(64), nullable=False),
        Column("origin", Text, nullable=False),
        Column("note", Text, nullable=False),
        Column("recorded_at", String(32), nullable=False),
    )
    tree = Table(
        f"{prefix}tree",
        md,
        Column("epoch", Integer, primary_key=True, autoincrement=False),
        Column("node", BigInteger, primary_key=True, autoincrement=False),
        Column("hash", LargeBinary, nullable=False),
        CheckConstraint("length(hash) = 32", name=f"{prefix}tree_hash"),
        CheckConstraint("epoch >= 0 AND node >= 0", name=f"{prefix}tree_key"),
        # Rows are small and looked up only by key: no rowid copy in SQLite.
        sqlite_with_rowid=False,
    )
    return md, Tables(meta=meta, entries=entries, checkpoints=checkpoints, tree=tree)


def _sqlite_triggers(prefix: str) -> list[str]:
    e, c = f"{prefix}entries", f"{prefix}checkpoints"
    ddl: list[str] = []
    for table in (f"{prefix}meta", e, c, f"{prefix}tree"):
        for op in ("UPDATE", "DELETE"):
            ddl.append(
                f'CREATE TRIGGER IF NOT EXISTS "{table}_no_{op.lower()}" BEFORE {op} ON "{table}" '
                f"BEGIN SELECT RAISE(ABORT, 'jurat ledger: {table} is append-only; {op} refused'); "
                "END"
            )
    ddl.append(
        f'CREATE TRIGGER IF NOT EXISTS "{e}_chain" BEFORE INSERT ON "{e}" '
        f'WHEN NEW.seq IS NOT (SELECT COALESCE(MAX(seq), -1) + 1 FROM "{e}") '
        f'OR NEW.prev_hash IS NOT COALESCE((SELECT entry_hash FROM "{e}" WHERE seq = NEW.seq - 1), '
        f"'{ZERO_HASH}') "
        "BEGIN SELECT RAISE(ABORT, 'jurat ledger: insert would leave a gap or fork the chain'); END"
    )
    ddl.append(
        f'CREATE TRIGGER IF NOT EXISTS "{c}_order" BEFORE INSERT ON "{c}" '
        f'WHEN NEW.tree_size < (SELECT COALESCE(MAX(tree_size), 0) FROM "{c}") '
        f'OR NEW.tree_size > (SELECT COALESCE(MAX(seq), -1) + 1 FROM "{e}") '
        f'OR NEW.id IS NOT (SELECT COALESCE(MAX(id), -1) + 1 FROM "{c}") '
        "BEGIN SELECT RAISE(ABORT, 'jurat ledger: checkpoint out of order'); END"
    )
    return ddl


def _pg_triggers(prefix: str, schema: str | None) -> list[str]:
    def q(name: str) -> str:
        return f'"{schema}"."{name}"' if schema else f'"{name}"'

    e, c, m = q(f"{prefix}entries"), q(f"{prefix}checkpoints"), q(f"{prefix}meta")
    t = q(f"{prefix}tree")
    refuse, chain, order = q(f"{prefix}refuse"), q(f"{prefix}chain"), q(f"{prefix}cp_order")
    ddl = [
        f"CREATE OR REPLACE FUNCTION {refuse}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION 'jurat ledger: % is append-only; % refused', TG_TABLE_NAME, TG_OP; "
        "END $$",
        f"CREATE OR REPLACE FUNCTION {chain}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "DECLARE tail_seq bigint; tail_hash text; BEGIN "
        f"SELECT seq, entry_hash INTO tail_seq, tail_hash FROM {e} ORDER BY seq DESC LIMIT 1; "
        f"IF NOT FOUND THEN tail_seq := -1; tail_hash := '{ZERO_HASH}'; END IF; "
        "IF NEW.seq <> tail_seq + 1 OR NEW.prev_hash <> tail_hash THEN RAISE EXCEPTION "
        "'jurat ledger: insert would leave a gap or fork the chain (seq %)', NEW.seq; END IF; "
        "RETURN NEW; END $$",
        f"CREATE OR REPLACE FUNCTION {order}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"IF NEW.tree_size < (SELECT COALESCE(MAX(tree_size), 0) FROM {c}) "
        f"OR NEW.tree_size > (SELECT COALESCE(MAX(seq), -1) + 1 FROM {e}) "
        f"OR NEW.id <> (SELECT COALESCE(MAX(id), -1) + 1 FROM {c}) THEN "
        "RAISE EXCEPTION 'jurat ledger: checkpoint out of order'; END IF; RETURN NEW; END $$",
    ]
    for table, short in ((m, "meta"), (e, "entries"), (c, "checkpoints"), (t, "tree")):
        ddl.append(
            f'CREATE OR REPLACE TRIGGER "{prefix}{short}_no_change" BEFORE UPDATE OR DELETE '
            f"ON {table} FOR EACH ROW EXECUTE FUNCTION {refuse}()"
        )
        # TRUNCATE fires no row triggers, so it needs its own.
        ddl.append(
            f'CREATE OR REPLACE TRIGGER "{prefix}{short}_no_truncate" BEFORE TRUNCATE '
            f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {refuse}()"
        )
    ddl.append(
        f'CREATE OR REPLACE TRIGGER "{prefix}entries_chain" BEFORE INSERT ON {e} '
        f"FOR EACH ROW EXECUTE FUNCTION {chain}()"
    )
    ddl.append(
        f'CREATE OR REPLACE TRIGGER "{prefix}checkpoints_order" BEFORE INSERT ON {c} '
        f"FOR EACH ROW EXECUTE FUNCTION {order}()"
    )
    return ddl


def _state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "jurat"


def default_checkpoint_path(url: URL, *, prefix: str, schema: str | None) -> Path:
    """Where the checkpoint kept outside the database lives unless configured.

    SQLite: ``<db file>.checkpoint`` next to it (a copy of the directory moves
    both, a restore of the file alone is caught). PostgreSQL:
    ``$XDG_STATE_HOME/jurat/checkpoints/<digest of server, db, schema, prefix>.checkpoint``.
    """
    if url.get_backend_name() == "sqlite":
        assert url.database is not None
        return Path(url.database + ".checkpoint")
    ident = f"{url.host}:{url.port or 5432}/{url.database}/{schema or ''}/{prefix}"
    digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
    return _state_dir() / "checkpoints" / f"{digest}.checkpoint"


def _resolve_url(url: str | None) -> URL:
    raw = url if url is not None else "sqlite:///jurat.db"
    if raw.startswith("postgres://"):
        raw = "postgresql://" + raw[len("postgres://") :]
    try:
        parsed = make_url(raw)
    except ArgumentError as exc:
        raise ConfigError(
            f"not a ledger URL: {raw!r} (use sqlite:///path or postgresql://…)"
        ) from exc
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:" or parsed.query:
            raise ConfigError("a SQLite ledger needs a file: sqlite:///path/to/ledger.db")
        return parsed
    if backend == "postgresql":
        if "+" in parsed.drivername and driver != "psycopg":
            raise ConfigError(f"unsupported PostgreSQL driver {driver!r}; use postgresql://…")
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise DependencyError(
                "a PostgreSQL ledger needs psycopg 3: pip install 'jurat[postgres]'"
            ) from exc
        return parsed.set(drivername="postgresql+psycopg")
    raise ConfigError(f"unsupported ledger URL scheme {backend!r}; use sqlite:/// or postgresql://")


def _sqlite_engine(url: URL) -> Engine:
    engine = create_engine(url, connect_args={"timeout": 60.0, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Take transactions away from the sqlite3 module so that BEGIN is
        # emitted by us, with the locking mode we choose.
        dbapi_conn.isolation_level = None
        # Bytes edited into a TEXT column need not be UTF-8; decoding them
        # leniently lets the hash checks name the entry instead of the
        # driver failing the whole read.
        dbapi_conn.text_factory = lambda data: data.decode("utf-8", "replace")
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("jurat_write", False)
        statement = "BEGIN IMMEDIATE" if immediate else "BEGIN"
        # On the driver's connection: every transaction starts here, and through
        # exec_driver_sql this one statement cost more CPU than a small batch's inserts.
        try:
            conn.connection.driver_connection.execute(statement)  # type: ignore[union-attr]
        except sqlite3.Error as exc:
            raise DBAPIError.instance(statement, None, exc, sqlite3.Error) from exc

    return engine


class Backend:
    """One ledger database: engine, tables, and the read and write transactions."""

    def __init__(self, url: str | None, *, prefix: str = "jurat_", schema: str | None = None):
        if not _IDENT.match(prefix):
            raise ConfigError(f"table prefix {prefix!r} must match {_IDENT.pattern}")
        if schema is not None and not _IDENT.match(schema):
            raise ConfigError(f"schema {schema!r} must match {_IDENT.pattern}")
        self.url = _resolve_url(url)
        self.name: BackendName = (
            "sqlite" if self.url.get_backend_name() == "sqlite" else "postgresql"
        )
        if self.name == "sqlite" and schema is not None:
            raise ConfigError("schemas are a PostgreSQL feature; use a table prefix with SQLite")
        self.prefix, self.schema = prefix, schema
        self.metadata, self.tables = _build_tables(prefix, schema)
        try:
            if self.name == "sqlite":
                self.engine = _sqlite_engine(self.url)
            else:
                # No server-side prepared statements: psycopg prepares a statement after
                # five runs, and PostgreSQL may then keep a generic plan made while the
                # ledger was small. One such plan read the whole campaign through
                # `entries_subject` for every batch's receipt lookup (17,700 index tuples a
                # scan at 850,000 entries); planned with the actual values, it reads the
                # few rows it needs.
                self.engine = create_engine(
                    self.url, pool_pre_ping=True, connect_args={"prepare_threshold": None}
                )
        except SQLAlchemyError as exc:
            raise LedgerError(f"cannot open ledger database: {exc}") from exc
        self._write_engine = self.engine.execution_options(jurat_write=True)
        self.commit_sql = CommitSQL(
            self.name, self.tables, self.engine.dialect.identifier_preparer.quote
        )
        self._lock_sql = f"LOCK TABLE {self.qualified('entries')} IN EXCLUSIVE MODE"
        self._lock_path: str | None = None
        if self.name == "sqlite" and fcntl is not None:
            self._lock_path = f"{self.url.database}-writer.lock"
        self.write_guards: list[Callable[[], None]] = []
        """Run before every write transaction: a campaign hold that checks it still holds
        (ledger/_hold.py), and raises rather than let the write go on without it."""

    def display_url(self) -> str:
        """The URL with any password hidden."""
        return self.url.render_as_string(hide_password=True)

    def exists(self, table: str = "entries") -> bool:
        """Whether the ledger's ``table`` already exists (without creating anything)."""
        if self.name == "sqlite":
            assert self.url.database is not None
            if not Path(self.url.database).exists():
                return False
        name = getattr(self.tables, table).name
        try:
            with self.read() as conn:
                return bool(conn.dialect.has_table(conn, name, self.schema))
        except SQLAlchemyError as exc:
            raise LedgerError(f"cannot reach ledger database {self.display_url()}: {exc}") from exc

    def install(self) -> None:
        """Create tables and triggers if missing, and stamp the format; idempotent."""
        with self.write(lock=False) as conn:
            if self.name == "postgresql":
                # Concurrent first opens would race on CREATE TABLE; an
                # advisory lock keyed by the ledger's name serialises them.
                key = int.from_bytes(
                    hashlib.sha256(f"{self.schema}.{self.prefix}".encode()).digest()[:8],
                    "big",
                    signed=True,
                )
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
                if self.schema:
                    conn.exec_driver_sql(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            self.metadata.create_all(conn, checkfirst=True)
            self.create_triggers(conn)
            meta = self.tables.meta
            found = conn.execute(meta.select().where(meta.c.key == "format")).first()
            if found is None:
                conn.execute(meta.insert().values(key="format", value=FORMAT))
        self.check_format()

    def create_triggers(self, conn: Connection) -> None:
        """Create the append-only and chain triggers that are missing; idempotent."""
        ddl = (
            _sqlite_triggers(self.prefix)
            if self.name == "sqlite"
            else _pg_triggers(self.prefix, self.schema)
        )
        for statement in ddl:
            if self.name == "postgresql":
                # psycopg reads % as a placeholder even with no parameters.
                statement = statement.replace("%", "%%")
            conn.exec_driver_sql(statement)

    def check_format(self) -> None:
        """Refuse a database written in another ledger format."""
        meta = self.tables.meta
        with self.read() as conn:
            found = conn.execute(meta.select().where(meta.c.key == "format")).first()
        if found is None or found.value != FORMAT:
            got = None if found is None else found.value
            raise LedgerError(f"{self.display_url()} is not a {FORMAT} ledger (format {got!r})")

    @contextmanager
    def write(self, *, lock: bool = True) -> Iterator[Connection]:
        """A write transaction holding the ledger's single-writer lock."""
        for guard in self.write_guards:
            guard()
        with self._writer_turn(), self._write_engine.begin() as conn:
            if lock and self.name == "postgresql":
                # On the driver's cursor, as the commit path's statements (``_commitsql``).
                with self.commit_sql.cursor(conn) as cur:
                    cur.execute(self._lock_sql)
            yield conn

    @contextmanager
    def _writer_turn(self) -> Iterator[None]:
        """SQLite: wait for the other processes' writes in the kernel, not by polling.

        SQLite's busy handler retries a locked ``BEGIN IMMEDIATE`` after sleeps of 1, 2,
        5, 10 … 100 ms, so processes writing one ledger at once (``jurat run --workers``)
        lose most of their time asleep while the lock is free. An exclusive ``flock`` on
        a file beside the database queues them instead: the next writer wakes as soon as
        the lock is released. A separate file, because closing any descriptor of the
        database file itself would drop SQLite's own POSIX locks in this process.
        """
        if self._lock_path is None:
            yield
            return
        with open(self._lock_path, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read transaction on one consistent snapshot."""
        with self.engine.connect() as conn:
            if self.name == "postgresql":
                conn = conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    def qualified(self, short: str) -> str:
        """The quoted (schema-qualified) name of the ledger's table ``short``."""
        name = f'"{self.prefix}{short}"'
        return f'"{self.schema}".{name}' if self.schema else name

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()
