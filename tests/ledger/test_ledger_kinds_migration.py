"""A ledger created by an earlier jurat admits the entry kinds added since (issue 27).

Its entries table keeps the kind constraint it was created with, which refused
``transport_failed``: upgrading jurat broke ``jurat run`` on it exactly when a judge was
down. A writer's open widens the constraint once, every row kept byte for byte; a
reader's open leaves the ledger as it is.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from jurat.errors import LedgerError
from jurat.ledger import ENTRY_KINDS, Ledger, LogSigner, _backend, open_ledger
from tests.cli._run_support import run
from tests.cli.test_run_outage import _down, kinds, write
from tests.support.fake_openai import FakeOpenAI
from tests.support.postgres import pg_engine

from .conftest import Target

# The kinds of the jurat before issue 27/28 added an outage sample and claim extraction.
NEW = ("transport_failed", "claims_extracted")
OLD = tuple(k for k in ENTRY_KINDS if k not in NEW)
ROWS = (
    "SELECT seq, kind, job_id, campaign_id, artifact_id, payload, payload_sha256, "
    "recorded_at, prev_hash, entry_hash, leaf_hash FROM {entries} ORDER BY seq"
)


def _query(target: Target, sql: str) -> list[tuple[Any, ...]]:
    if target.backend == "sqlite":
        conn = sqlite3.connect(target.url.removeprefix("sqlite:///"))
        try:
            return [tuple(r) for r in conn.execute(sql)]
        finally:
            conn.close()
    engine = pg_engine()
    try:
        with engine.connect() as conn:
            return [
                tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                for r in conn.exec_driver_sql(sql.replace("%", "%%"))
            ]
    finally:
        engine.dispose()


def _rows(target: Target) -> list[tuple[Any, ...]]:
    return _query(target, ROWS.format(entries=target.table("entries")))


def _constraint(target: Target) -> str:
    """The stored kind constraint's text and identity (it changes when it is rebuilt)."""
    if target.backend == "sqlite":
        ((sql,),) = _query(target, "SELECT sql FROM sqlite_master WHERE name = 'jurat_entries'")
        ((version,),) = _query(target, "PRAGMA schema_version")
        return f"{version}: {sql}"
    ((oid, definition),) = _query(
        target,
        "SELECT oid, pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = "
        f"'jurat_entries_kind' AND connamespace = '{target.schema}'::regnamespace",
    )
    return f"{oid}: {definition}"


def _schema_objects(target: Target) -> set[str]:
    """Names of the ledger's indexes and triggers."""
    if target.backend == "sqlite":
        found = _query(target, "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger')")
        return {str(name) for (name,) in found}
    found = _query(
        target,
        f"SELECT indexname FROM pg_indexes WHERE schemaname = '{target.schema}' UNION "
        "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN (SELECT oid "
        f"FROM pg_class WHERE relnamespace = '{target.schema}'::regnamespace)",
    )
    return {str(name) for (name,) in found}


def _old_ledger(
    target: Target, monkeypatch: pytest.MonkeyPatch, signer: LogSigner,
    kinds: tuple[str, ...] = OLD,
) -> None:
    """A ledger as the earlier jurat left it: its constraint, six entries, a checkpoint."""
    with monkeypatch.context() as patch:
        patch.setattr(_backend, "ENTRY_KINDS", kinds)
        with target.open() as ledger:
            for i in range(6):
                ledger.append(OLD[i % 4], f"job-{i // 2}", {"i": i, "text": "πß ✓"},
                              campaign_id="camp", artifact_id=f"a{i % 3}")
            ledger.checkpoint(signer)
    assert "transport_failed" not in _constraint(target)


def _append_new_kinds(ledger: Ledger) -> None:
    for kind in NEW:
        if kind in ENTRY_KINDS:
            ledger.append(kind, "job-outage", {"judge": "remote", "sample": 0},
                          campaign_id="camp", artifact_id="a0")


def test_a_writers_open_widens_the_old_constraint_and_keeps_every_entry(
    target: Target, monkeypatch: pytest.MonkeyPatch, signer: LogSigner
) -> None:
    _old_ledger(target, monkeypatch, signer)
    before, objects = _rows(target), _schema_objects(target)
    with target.open() as ledger:
        _append_new_kinds(ledger)
        report = ledger.verify(public_key=signer.public_key)
        # The checkpoint signed before the migration still verifies, and a new one
        # extends it (checkpoint() refuses a database that no longer reaches the old).
        assert (report.checkpoints_checked, report.external_tree_size) == (1, 6)
        ledger.checkpoint(signer)
        assert ledger.verify(public_key=signer.public_key).checkpoints_checked == 2
    added = sum(1 for kind in NEW if kind in ENTRY_KINDS)
    assert report.tree_size == 6 + added and report.kinds["transport_failed"] == 1
    after = _rows(target)
    assert after[:6] == before  # seq, payload bytes, hashes: all as they were
    assert [row[1] for row in after[6:]] == [k for k in NEW if k in ENTRY_KINDS]
    assert _schema_objects(target) == objects  # every index and trigger is back
    # The triggers are in force again, the checkpoints' order trigger too.
    with pytest.raises(Exception, match="append-only"):
        target.raw(f"DELETE FROM {target.table('entries')}")
    with pytest.raises(Exception, match="checkpoint out of order"):
        target.raw(f"INSERT INTO {target.table('checkpoints')} VALUES "
                   "(2, 999, 'x', 'o', 'n', 't')")
    # Once: the next writer's open finds every kind admitted and changes nothing.
    widened = _constraint(target)
    assert all(f"'{kind}'" in widened for kind in ENTRY_KINDS)
    target.open().close()
    assert _constraint(target) == widened


def test_a_readers_open_of_an_old_ledger_reads_and_changes_nothing(
    target: Target, monkeypatch: pytest.MonkeyPatch, signer: LogSigner
) -> None:
    _old_ledger(target, monkeypatch, signer)
    before, constraint = _rows(target), _constraint(target)
    with target.open(create=False) as ledger:
        assert ledger.verify(public_key=signer.public_key).tree_size == 6
        assert len(list(ledger.entries())) == 6
        # Still the old constraint: the widening is the writer's open's work, not this.
        with pytest.raises(LedgerError, match="appending to the ledger failed"):
            ledger.append("transport_failed", "job-outage", {"sample": 0})
    assert (_rows(target), _constraint(target)) == (before, constraint)


def test_kinds_only_a_newer_jurat_knows_stay_admitted(
    target: Target, monkeypatch: pytest.MonkeyPatch, signer: LogSigner
) -> None:
    _old_ledger(target, monkeypatch, signer, kinds=(*OLD, "future_kind"))
    with target.open() as ledger:
        _append_new_kinds(ledger)
        assert ledger.verify().kinds["transport_failed"] == 1
    assert "'future_kind'" in _constraint(target)


def test_jurat_run_with_its_judge_down_records_the_outage_on_an_old_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    url = f"sqlite:///{tmp_path / 'l.db'}"
    with monkeypatch.context() as patch:
        patch.setattr(_backend, "ENTRY_KINDS", OLD)
        with open_ledger(url) as ledger:
            earlier = ledger.append("job_received", "earlier-job", {"from": "jurat 0.x"})
    with FakeOpenAI(behaviour=_down) as server:
        result = run(tmp_path, write(tmp_path, server.url, artifacts=1), server)
    # Incomplete for want of a judge (exit 4), not an internal error on the constraint.
    assert result.code == 4, result.out + result.err
    said = " ".join((result.out + result.err).split())
    assert "judge remote got no answer for any of its 2 samples" in said, said
    assert kinds(tmp_path)["transport_failed"] >= 2
    with open_ledger(url, create=False) as ledger:
        assert ledger.entry(0) == earlier
        assert ledger.verify().tree_size == ledger.size()
