"""Fixtures for the ledger tests: a fresh ledger per test on SQLite and on PostgreSQL.

PostgreSQL is the real server on 127.0.0.1:5432 (``JURAT_TEST_PG_URL`` to
override); each test gets its own schema, dropped afterwards.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jurat.ledger import Ledger, LogSigner, load_or_create_log_key, open_ledger
from tests.support.postgres import PG_URL, drop_schema, pg_engine

_pg_state: dict[str, bool] = {}


def pg_available() -> bool:
    if "ok" not in _pg_state:
        try:
            engine = pg_engine()
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
            engine.dispose()
            _pg_state["ok"] = True
        except Exception:  # noqa: BLE001 - any failure means "no server"
            _pg_state["ok"] = False
    return _pg_state["ok"]


@dataclass
class Target:
    """One ledger under test, plus a way around its triggers to play the attacker."""

    backend: str
    url: str
    schema: str | None
    checkpoint_path: Path
    tmp: Path

    def open(self, **kwargs: object) -> Ledger:
        kwargs.setdefault("checkpoint_path", self.checkpoint_path)
        return open_ledger(self.url, schema=self.schema, **kwargs)  # type: ignore[arg-type]

    def table(self, short: str) -> str:
        name = f"jurat_{short}"
        return f'"{self.schema}"."{name}"' if self.schema else f'"{name}"'

    def tamper(self, *statements: str) -> None:
        """Run SQL with the append-only triggers out of the way, as a superuser could."""
        self._execute(statements, bypass_triggers=True)

    def raw(self, statement: str) -> None:
        """Run SQL as an ordinary client would (triggers in force)."""
        self._execute((statement,), bypass_triggers=False)

    def _execute(self, statements: tuple[str, ...], *, bypass_triggers: bool) -> None:
        if self.backend == "sqlite":
            conn = sqlite3.connect(self.url.removeprefix("sqlite:///"))
            try:
                if bypass_triggers:
                    names = [
                        r[0]
                        for r in conn.execute(
                            "SELECT name FROM sqlite_master WHERE type = 'trigger'"
                        )
                    ]
                    for name in names:
                        conn.execute(f'DROP TRIGGER "{name}"')
                for statement in statements:
                    conn.execute(statement)
                conn.commit()
            finally:
                conn.close()
            return
        engine = pg_engine()
        try:
            with engine.begin() as conn:
                if bypass_triggers:
                    conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
                for statement in statements:
                    # psycopg reads % as a placeholder even with no parameters.
                    conn.exec_driver_sql(statement.replace("%", "%%"))
        finally:
            engine.dispose()


def make_sqlite_target(tmp_path: Path) -> Target:
    db = tmp_path / "ledger.db"
    return Target("sqlite", f"sqlite:///{db}", None, Path(f"{db}.checkpoint"), tmp_path)


def require_postgres() -> None:
    """Fail, never skip, when the PostgreSQL server the tests use is not there."""
    if not pg_available():
        pytest.fail(f"PostgreSQL not reachable at {PG_URL}: start it (docs/design.md, "
                    "'Running the tests') or set JURAT_TEST_PG_URL")


@pytest.fixture
def sqlite_target(tmp_path: Path) -> Target:
    return make_sqlite_target(tmp_path)


@pytest.fixture
def pg_target(tmp_path: Path) -> Iterator[Target]:
    require_postgres()
    schema = f"jurat_t_{uuid.uuid4().hex[:12]}"
    try:
        yield Target("postgresql", PG_URL, schema, tmp_path / "pg.checkpoint", tmp_path)
    finally:
        drop_schema(schema)


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Target]:
    if request.param == "sqlite":
        yield make_sqlite_target(tmp_path)
        return
    require_postgres()
    schema = f"jurat_t_{uuid.uuid4().hex[:12]}"
    try:
        yield Target("postgresql", PG_URL, schema, tmp_path / "pg.checkpoint", tmp_path)
    finally:
        drop_schema(schema)


@pytest.fixture
def signer(tmp_path: Path) -> LogSigner:
    return load_or_create_log_key(tmp_path / "keys" / "log.key")


@pytest.fixture
def filled(target: Target) -> Callable[[int], Ledger]:
    """Open the target and append n varied entries."""

    def fill(n: int) -> Ledger:
        ledger = target.open()
        kinds = ["job_received", "sample_recorded", "transport_retry", "evaluation_failed"]
        for i in range(n):
            ledger.append(
                kinds[i % len(kinds)],
                f"job-{i // 4}",
                {"i": i, "marker": f"m{i:04d}", "text": "πß ✓"},
                campaign_id="camp",
                artifact_id=f"a{i % 3}",
            )
        return ledger

    return fill
