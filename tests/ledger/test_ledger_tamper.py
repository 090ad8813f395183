"""Tampering behind the ledger's back is caught by ``verify()``.

The attacker here has the database: triggers are dropped (SQLite) or
disabled with ``session_replication_role = replica`` (PostgreSQL superuser),
rows are rewritten, reordered, deleted, or an older copy is restored.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jurat.canonical import canonical_json
from jurat.errors import TamperError
from jurat.ledger import Ledger, LogSigner
from jurat.ledger._commitsql import ENTRY_COLUMNS
from jurat.ledger._entry import entry_bytes

from .conftest import Target, make_sqlite_target


def _flip_hex(column: str) -> str:
    return f"CASE WHEN substr({column}, 1, 1) = '0' THEN '1' ELSE '0' END || substr({column}, 2)"


def _payload_edit(target: Target) -> str:
    if target.backend == "sqlite":
        return "CAST(replace(CAST(payload AS TEXT), 'm0004', 'm0005') AS BLOB)"
    return "convert_to(replace(convert_from(payload, 'UTF8'), 'm0004', 'm0005'), 'UTF8')"


# Every stored column but seq (reordering seqs is its own test).
COLUMNS = [column for column in ENTRY_COLUMNS if column != "seq"]


@pytest.mark.parametrize("column", COLUMNS)
def test_changing_any_column_of_an_entry_is_caught(
    target: Target, filled: Callable[[int], Ledger], column: str
) -> None:
    filled(10).close()
    new_value = {
        "kind": "'decision'",
        "job_id": "'job-9'",
        "campaign_id": "'other'",
        "artifact_id": "'a9'",
        "payload": _payload_edit(target),
        "recorded_at": "'2000-01-01T00:00:00.000000Z'",
    }.get(column, _flip_hex(column))
    target.tamper(f"UPDATE {target.table('entries')} SET {column} = {new_value} WHERE seq = 4")
    with target.open() as ledger, pytest.raises(TamperError, match=r"^seq 4: "):
        ledger.verify()


def test_a_tampered_row_is_refused_on_every_read_path(
    target: Target, filled: Callable[[int], Ledger]
) -> None:
    filled(10).close()
    target.tamper(
        f"UPDATE {target.table('entries')} SET payload = {_payload_edit(target)} WHERE seq = 4"
    )
    with target.open() as ledger:
        with pytest.raises(TamperError, match="seq 4"):
            ledger.entry(4)
        with pytest.raises(TamperError, match="seq 4"):
            list(ledger.entries())
        with pytest.raises(TamperError, match="seq 4"):
            list(ledger.entries(job_id="job-1"))


def _rewrite(target: Target, start: int, edit: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite rows from ``start`` on and recompute every hash, as a careful attacker would."""
    with target.open() as ledger:
        entries = list(ledger.entries())
    prev = entries[start - 1].entry_hash if start else "0" * 64
    statements = []
    for e in entries[start:]:
        payload = dict(e.payload)
        if e.seq == start:
            edit(payload)
        data = canonical_json(payload)
        fields = {
            "seq": e.seq,
            "kind": e.kind,
            "job_id": e.job_id,
            "campaign_id": e.campaign_id,
            "artifact_id": e.artifact_id,
            "payload_sha256": hashlib.sha256(data).hexdigest(),
            "recorded_at": e.recorded_at,
            "prev_hash": prev,
        }
        hashed = entry_bytes(**fields)  # type: ignore[arg-type]
        entry_hash = hashlib.sha256(hashed).hexdigest()
        leaf = hashlib.sha256(b"\x00" + hashed).hexdigest()
        blob = f"X'{data.hex()}'" if target.backend == "sqlite" else f"'\\x{data.hex()}'::bytea"
        statements.append(
            f"UPDATE {target.table('entries')} SET payload = {blob}, "
            f"payload_sha256 = '{fields['payload_sha256']}', prev_hash = '{prev}', "
            f"entry_hash = '{entry_hash}', "
            f"leaf_hash = '{leaf}' WHERE seq = {e.seq}"
        )
        prev = entry_hash
    target.tamper(*statements)


def test_a_single_row_rewritten_with_fresh_hashes_breaks_the_chain(
    target: Target, filled: Callable[[int], Ledger]
) -> None:
    filled(10).close()
    with target.open() as ledger:
        original = list(ledger.entries())
    _rewrite(target, 4, lambda p: p.update(i=999))
    # Put rows 5.. back as they were: only row 4 differs, hashes and all.
    statements = [
        f"UPDATE {target.table('entries')} SET prev_hash = '{e.prev_hash}', "
        f"entry_hash = '{e.entry_hash}', leaf_hash = '{e.leaf_hash}', "
        f"payload_sha256 = '{e.payload_sha256}', "
        + (
            f"payload = X'{canonical_json(e.payload).hex()}'"
            if target.backend == "sqlite"
            else f"payload = '\\x{canonical_json(e.payload).hex()}'::bytea"
        )
        + f" WHERE seq = {e.seq}"
        for e in original[5:]
    ]
    target.tamper(*statements)
    with target.open() as ledger, pytest.raises(TamperError, match=r"^seq 4: .*seq 5"):
        ledger.verify()


def test_a_rewritten_tail_with_a_valid_chain_is_caught_by_the_checkpoint(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(10) as ledger:
        ledger.checkpoint(signer)
        ledger.append("decision", "late", {"after": "checkpoint"})
    _rewrite(target, 6, lambda p: p.update(i=999))
    with target.open() as ledger:
        with pytest.raises(TamperError, match=r"seq 0\.\.9: entries differ from the stored"):
            ledger.verify()
        with pytest.raises(TamperError, match="history was rewritten"):
            ledger.checkpoint(signer)


def test_reordering_entries_is_caught(target: Target, filled: Callable[[int], Ledger]) -> None:
    filled(10).close()
    t = target.table("entries")
    target.tamper(
        f"UPDATE {t} SET seq = 1000 WHERE seq = 3",
        f"UPDATE {t} SET seq = 3 WHERE seq = 6",
        f"UPDATE {t} SET seq = 6 WHERE seq = 1000",
    )
    with target.open() as ledger, pytest.raises(TamperError, match=r"^seq 3: "):
        ledger.verify()


def test_deleting_an_entry_is_caught(target: Target, filled: Callable[[int], Ledger]) -> None:
    filled(10).close()
    target.tamper(f"DELETE FROM {target.table('entries')} WHERE seq = 4")
    with target.open() as ledger, pytest.raises(TamperError, match=r"^seq 4: entry missing"):
        ledger.verify()


def test_truncating_the_tail_is_caught_by_stored_checkpoints(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(10) as ledger:
        ledger.checkpoint(signer)
    target.tamper(f"DELETE FROM {target.table('entries')} WHERE seq >= 7")
    with target.open() as ledger, pytest.raises(TamperError, match=r"^seq 7: the stored"):
        ledger.verify()


def test_truncating_entries_and_checkpoints_is_caught_by_the_external_file(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(10) as ledger:
        ledger.checkpoint(signer)
    target.tamper(
        f"DELETE FROM {target.table('entries')} WHERE seq >= 7",
        f"DELETE FROM {target.table('checkpoints')}",
    )
    with target.open() as ledger:
        with pytest.raises(TamperError, match=r"^seq 7: the external checkpoint"):
            ledger.verify()
        with pytest.raises(TamperError, match="restored from an older copy"):
            ledger.checkpoint(signer)


def test_without_any_checkpoint_truncation_is_undetectable_and_said_so(
    target: Target, filled: Callable[[int], Ledger]
) -> None:
    filled(10).close()
    target.tamper(f"DELETE FROM {target.table('entries')} WHERE seq >= 7")
    with target.open() as ledger:
        report = ledger.verify()
    assert report.tree_size == 7
    assert any("no checkpoint yet" in w for w in report.warnings)


def _snapshot(target: Target) -> dict[str, list[dict[str, Any]]]:
    engine = sa.create_engine(target.url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            return {
                t: [
                    dict(r._mapping)
                    for r in conn.exec_driver_sql(f"SELECT * FROM {target.table(t)}")
                ]
                for t in ("entries", "checkpoints")
            }
    finally:
        engine.dispose()


def _restore(target: Target, snapshot: dict[str, list[dict[str, Any]]]) -> None:
    engine = sa.create_engine(target.url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("SET LOCAL session_replication_role = replica")
            md = sa.MetaData(schema=target.schema)
            for short, rows in snapshot.items():
                table = sa.Table(f"jurat_{short}", md, autoload_with=conn)
                conn.execute(table.delete())
                if rows:
                    conn.execute(table.insert(), rows)
    finally:
        engine.dispose()


def _copy_sqlite(src: Path, dst: Path) -> None:
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)


def test_a_restored_older_copy_is_caught_by_the_external_checkpoint(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(5) as ledger:
        ledger.checkpoint(signer)
    backup = target.tmp / "backup.db"
    if target.backend == "sqlite":
        _copy_sqlite(Path(target.url.removeprefix("sqlite:///")), backup)
    else:
        snapshot = _snapshot(target)
    with target.open() as ledger:
        for i in range(5):
            ledger.append("decision", f"later-{i}", {"i": i})
        ledger.checkpoint(signer)
        assert ledger.verify(public_key=signer.public_key).external_tree_size == 10
    # Restore the older copy, which on its own is perfectly consistent.
    if target.backend == "sqlite":
        db = Path(target.url.removeprefix("sqlite:///"))
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(backup, db)
    else:
        _restore(target, snapshot)
    with target.open(checkpoint_path=target.tmp / "elsewhere.checkpoint") as ledger:
        assert ledger.verify().tree_size == 5  # blind without the outside copy
    with target.open() as ledger:
        with pytest.raises(TamperError, match=r"^seq 5: the external checkpoint .* commits to 10"):
            ledger.verify()
        with pytest.raises(TamperError, match="restored from an older copy"):
            ledger.checkpoint(signer)
        # Writing new, different history past the old size is a fork, also caught.
        for i in range(6):
            ledger.append("decision", f"fork-{i}", {"i": i})
        with pytest.raises(TamperError, match=r"entries differ from the external checkpoint"):
            ledger.verify()


def test_a_forged_external_checkpoint_fails_its_signature(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(4) as ledger:
        ledger.checkpoint(signer)
    note = target.checkpoint_path.read_text()
    body, _, sig = note.partition("\n\n")
    lines = body.split("\n")
    target.checkpoint_path.write_text("\n".join([lines[0], "3", *lines[2:]]) + "\n\n" + sig)
    with target.open() as ledger, pytest.raises(TamperError):
        ledger.verify(public_key=signer.public_key)


def test_flipping_any_byte_of_an_entry_in_the_sqlite_file_is_caught(tmp_path: Path) -> None:
    target = make_sqlite_target(tmp_path)
    with target.open() as ledger:
        for i in range(10):
            ledger.append(
                "sample_recorded",
                f"job-{i:03d}",
                {"i": i, "marker": f"m{i:04d}", "text": "πß ✓"},
                campaign_id=f"campaign-{i:03d}",
                artifact_id=f"artifact-{i:03d}",
            )
        victim = ledger.entry(4)
    db = Path(target.url.removeprefix("sqlite:///"))
    assert not Path(f"{db}-wal").exists()  # closed cleanly: everything is in the main file
    pristine = db.read_bytes()
    fields = {
        "payload": canonical_json(victim.payload),
        "job_id": victim.job_id.encode(),
        "campaign_id": (victim.campaign_id or "").encode(),
        "artifact_id": (victim.artifact_id or "").encode(),
        "payload_sha256": victim.payload_sha256.encode(),
        "recorded_at": victim.recorded_at.encode(),
        "prev_hash": victim.prev_hash.encode(),
        "entry_hash": victim.entry_hash.encode(),
        "leaf_hash": victim.leaf_hash.encode(),
    }
    checked = 0
    for name, value in fields.items():
        # Every copy in the file: the row itself, and index or neighbour copies.
        starts = []
        at = pristine.find(value)
        while at != -1:
            starts.append(at)
            at = pristine.find(value, at + 1)
        assert starts, name
        step = 1 if name == "payload" else 7
        for start in starts:
            for offset in range(0, len(value), step):
                # 0x01 keeps the text valid UTF-8; 0x80 makes it invalid.
                for mask in (0x01, 0x80) if offset % 3 == 0 else (0x01,):
                    damaged = bytearray(pristine)
                    damaged[start + offset] ^= mask
                    db.write_bytes(bytes(damaged))
                    with target.open() as ledger, pytest.raises(TamperError):
                        ledger.verify()
                    checked += 1
    db.write_bytes(pristine)
    with target.open() as ledger:
        assert ledger.verify().tree_size == 10
    assert checked > 100
