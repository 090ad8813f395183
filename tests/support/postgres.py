"""The real PostgreSQL server the tests use (127.0.0.1:5432; JURAT_TEST_PG_URL overrides)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import sqlalchemy as sa

PG_URL = os.environ.get("JURAT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/test")


def pg_engine() -> sa.Engine:
    """An engine on PG_URL through psycopg 3, for setup, attacks and clean-up around a test."""
    return sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1))


def drop_schema(schema: str) -> None:
    """Remove a test's schema and everything in it."""
    engine = pg_engine()
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        engine.dispose()


@contextlib.contextmanager
def fresh_database() -> Iterator[str]:
    """A new, empty database on the server for one test (a ledger URL), dropped after: for
    commands that take a URL and use the default tables, such as `jurat run --ledger`."""
    name = f"jurat_test_{uuid.uuid4().hex[:12]}"
    # pool_pre_ping: the DROP after a test that restarted the server gets a live session.
    engine = sa.create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1),
                              isolation_level="AUTOCOMMIT", pool_pre_ping=True)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield PG_URL.rsplit("/", 1)[0] + f"/{name}"
        finally:
            with engine.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        engine.dispose()
