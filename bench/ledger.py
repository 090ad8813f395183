"""Benchmark durable ledger appends against an fsync'd append-only file.

    .venv/bin/python bench/ledger.py [--appends N] [--pg-url URL] [--no-pg] [--no-write]

Single writer, one commit per append (the runner's pattern: every sample is
durable before the next judge call). The baseline, measured in the same run
on the same disk, appends the same bytes (entry bytes + canonical payload) to
a plain file with ``os.fsync`` after each record: the floor any durable
append must pay. ``verify()`` throughput (entries re-hashed per second,
checkpoints and Merkle root included) is reported too.

``bench_rows()`` returns the rows; other benchmarks (e.g. receipt
verification) can add rows of the same shape and be merged into one table.
The numbers are printed and written between the markers in
``bench/README.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _readme import write_section  # bench/ is on sys.path when a script runs

from jurat.canonical import canonical_json
from jurat.ledger import Ledger, load_or_create_log_key, open_ledger
from jurat.ledger._entry import entry_bytes

HERE = Path(__file__).resolve().parent
README = HERE / "README.md"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"


@dataclass(frozen=True)
class BenchRow:
    """One measured quantity next to the baseline it is compared with."""

    name: str
    value: float
    unit: str
    baseline: str
    baseline_value: float

    @property
    def ratio(self) -> float:
        return self.value / self.baseline_value if self.baseline_value else float("nan")


def _payload(i: int) -> dict[str, Any]:
    # Shaped like one recorded judge sample: the most frequent entry.
    return {
        "judge": "A",
        "criterion": "correctness",
        "sample": i,
        "attempts": 1,
        "order": "AB",
        "answer": {"verdict": "yes", "explanation": "The tests pass and the edge cases hold."},
        "error": None,
        "returned_model": "qwen2.5-7b-instruct",
        "usage": {"input_tokens": 1432, "output_tokens": 118},
        "dispatch_ms": 1200 + i,
        "latency_ms": 812,
    }


def _record(i: int) -> bytes:
    data = canonical_json(_payload(i))
    header = entry_bytes(
        seq=i,
        kind="sample_recorded",
        job_id="f" * 64,
        campaign_id="bench",
        artifact_id="c1",
        payload_sha256=hashlib.sha256(data).hexdigest(),
        recorded_at="2026-11-29T00:00:00.000000Z",
        prev_hash="0" * 64,
    )
    return header + data + b"\n"


class _Timer:
    """Accumulated wall time and count of one writer across interleaved rounds."""

    def __init__(self, step: Callable[[int], object]) -> None:
        self.step, self.count, self.seconds = step, 0, 0.0

    def run(self, n: int) -> None:
        start = time.perf_counter()
        for _ in range(n):
            self.step(self.count)
            self.count += 1
        self.seconds += time.perf_counter() - start

    @property
    def rate(self) -> float:
        return self.count / self.seconds


def _file_appender(path: Path) -> tuple[Callable[[int], object], Callable[[], None]]:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write(i: int) -> None:
        os.write(fd, _record(i))
        os.fsync(fd)

    return write, lambda: os.close(fd)


def _ledger_appender(ledger: Ledger) -> Callable[[int], object]:
    return lambda i: ledger.append(
        "sample_recorded", "f" * 64, _payload(i), campaign_id="bench", artifact_id="c1"
    )


def rehash_file_rate(path: Path) -> float:
    """Records per second read back from the baseline file and sha256-hashed."""
    start = time.perf_counter()
    records = path.read_bytes().splitlines()
    for record in records:
        hashlib.sha256(b"\x00" + record).digest()
    return len(records) / (time.perf_counter() - start)


def _verify_rate(ledger: Ledger, key: Path) -> float:
    ledger.checkpoint(load_or_create_log_key(key))
    start = time.perf_counter()
    report = ledger.verify()
    return report.tree_size / (time.perf_counter() - start)


def bench_rows(n: int = 500, pg_url: str | None = DEFAULT_PG, rounds: int = 5) -> list[BenchRow]:
    """Measure every ledger row; ``pg_url=None`` skips PostgreSQL.

    The writers take turns in ``rounds`` chunks of ``n / rounds`` appends, so
    load from other processes on the shared disk falls on all of them alike.
    """
    with tempfile.TemporaryDirectory(dir=HERE.parent) as name:
        tmp = Path(name)
        write, close = _file_appender(tmp / "baseline.log")
        sqlite = open_ledger(f"sqlite:///{tmp / 'bench.db'}")
        schema = f"jurat_bench_{uuid.uuid4().hex[:8]}"
        pg = (
            open_ledger(pg_url, schema=schema, checkpoint_path=tmp / "pg.checkpoint")
            if pg_url is not None
            else None
        )
        try:
            timers = {"file": _Timer(write), "sqlite": _Timer(_ledger_appender(sqlite))}
            if pg is not None:
                timers["pg"] = _Timer(_ledger_appender(pg))
            for _ in range(rounds):
                for timer in timers.values():
                    timer.run(n // rounds)
            close()
            base = timers["file"].rate
            rehash = rehash_file_rate(tmp / "baseline.log")
            label = "SQLite (WAL, synchronous=FULL)"
            rows = [
                BenchRow(
                    f"{label}: durable appends",
                    timers["sqlite"].rate,
                    "appends/s",
                    "fsync'd file append",
                    base,
                ),
                BenchRow(
                    f"{label}: verify()",
                    _verify_rate(sqlite, tmp / "s.key"),
                    "entries/s",
                    "re-hash file records",
                    rehash,
                ),
            ]
            if pg is not None:
                rows += [
                    BenchRow(
                        "PostgreSQL: durable appends",
                        timers["pg"].rate,
                        "appends/s",
                        "fsync'd file append",
                        base,
                    ),
                    BenchRow(
                        "PostgreSQL: verify()",
                        _verify_rate(pg, tmp / "p.key"),
                        "entries/s",
                        "re-hash file records",
                        rehash,
                    ),
                ]
        finally:
            sqlite.close()
            if pg is not None and pg_url is not None:
                pg.close()
                _drop_schema(pg_url, schema)
        rows.append(BenchRow("baseline: fsync'd file append", base, "appends/s", "itself", base))
        rows.append(
            BenchRow("baseline: re-hash file records", rehash, "records/s", "itself", rehash)
        )
    return rows


def _drop_schema(url: str, schema: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        engine.dispose()


def _markdown(rows: list[BenchRow], n: int) -> str:
    lines = [
        f"{n} appends per backend, single writer, one commit per append; "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{os.cpu_count()} cores, {platform.machine()}.",
        "",
        "| measurement | value | unit | baseline | ratio |",
        "|---|---:|---|---|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.name} | {row.value:,.0f} | {row.unit} | {row.baseline} | {row.ratio:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=500)
    parser.add_argument("--pg-url", default=DEFAULT_PG)
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    rows = bench_rows(args.appends, None if args.no_pg else args.pg_url)
    table = Table(title=f"ledger: {args.appends} durable appends per backend")
    for column in ("measurement", "value", "unit", "baseline", "ratio"):
        table.add_column(
            column, justify="right" if column in ("value", "ratio") else "left", no_wrap=True
        )
    for row in rows:
        table.add_row(row.name, f"{row.value:,.0f}", row.unit, row.baseline, f"{row.ratio:.2f}")
    Console(width=160).print(table)  # wide enough to read in a log, not 80 columns
    if not args.no_write:
        write_section("ledger", _markdown(rows, args.appends))
    return 0


if __name__ == "__main__":
    sys.exit(main())
