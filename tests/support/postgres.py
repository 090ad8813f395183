"""The real PostgreSQL server the tests use (127.0.0.1:5432; JURAT_TEST_PG_URL overrides)."""

from __future__ import annotations

import os

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
