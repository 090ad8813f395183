"""Benchmark the ledger: durable appends, group commit, inclusion proofs at scale.

    .venv/bin/python bench/ledger.py [--appends N] [--writers N] [--max-size N]
                                     [--pg-url URL] [--no-pg] [--no-write]

Appends: one commit per append from a single writer (``Ledger.append``, the
runner's pattern until now: every sample durable before the next judge
call), and ``--writers`` asyncio tasks appending through one
``Ledger.group_commit()`` (each task resumes only once its entry is
committed). The baseline, measured in the same run on the same disk, appends
the same bytes (entry bytes + canonical payload) to a plain file with
``os.fsync`` after each record: the floor any durable one-at-a-time append
must pay. ``verify()`` throughput (entries re-hashed per second, checkpoints,
Merkle root and stored tree included) is reported too.

Proofs: one ledger per backend grown to 10^3, 10^4, 10^5 and 10^6 entries
(``--max-size``). At each size: ``prove_entry`` (latest checkpoint, entry,
O(log n) stored nodes) for random entries, ``prove_entries`` of those
entries against one checkpoint, and the previous way (read every stored leaf
hash, compute the path from them) for comparison. The entries are written by
a bulk path (rows computed here and inserted many per statement, the
database's chain trigger still checking each); the tree is then built from
the stored leaves by the same code that migrates an older ledger, and the
times of both are reported.

``bench_rows()`` returns the rows; other benchmarks (e.g. receipt
verification) can add rows of the same shape and be merged into one table.
The numbers are printed and written between the markers in
``bench/README.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _readme import write_section  # bench/ is on sys.path when a script runs
from sqlalchemy import select

from jurat.canonical import canonical_json
from jurat.ledger import Ledger, LogSigner, load_or_create_log_key, open_ledger
from jurat.ledger._entry import entry_bytes
from jurat.ledger._merkle import inclusion_path, leaf_hash, root_from_leaves

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


class _GroupTimer:
    """Like _Timer, for ``writers`` asyncio tasks appending through one group commit."""

    def __init__(self, ledger: Ledger, writers: int) -> None:
        self.ledger, self.writers = ledger, writers
        self.count, self.seconds, self.batches = 0, 0.0, 0

    def run(self, n: int) -> None:
        start = time.perf_counter()
        asyncio.run(self._round(n))
        self.seconds += time.perf_counter() - start

    async def _round(self, n: int) -> None:
        async with self.ledger.group_commit() as log:

            async def writer(w: int) -> None:
                for i in range(w, n, self.writers):
                    await log.append(
                        "sample_recorded",
                        "f" * 64,
                        _payload(self.count + i),
                        campaign_id="bench",
                        artifact_id="c1",
                    )

            await asyncio.gather(*(writer(w) for w in range(self.writers)))
            self.batches += log.batches
        self.count += n

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


def bench_rows(
    n: int = 500, pg_url: str | None = DEFAULT_PG, rounds: int = 5, writers: int = 64
) -> list[BenchRow]:
    """Measure every append and verify row; ``pg_url=None`` skips PostgreSQL.

    The writers take turns in ``rounds`` chunks of ``n / rounds`` appends, so
    load from other processes on the shared disk falls on all of them alike.
    Group commit appends ``4 n`` entries (it is that much faster) in the
    same rounds.
    """
    with tempfile.TemporaryDirectory(dir=HERE.parent) as name:
        tmp = Path(name)
        write, close = _file_appender(tmp / "baseline.log")
        sqlite = open_ledger(f"sqlite:///{tmp / 'bench.db'}")
        sqlite_group = open_ledger(f"sqlite:///{tmp / 'group.db'}")
        schema = f"jurat_bench_{uuid.uuid4().hex[:8]}"
        pg = pg_group = None
        if pg_url is not None:
            pg = open_ledger(pg_url, schema=schema, checkpoint_path=tmp / "pg.checkpoint")
            pg_group = open_ledger(
                pg_url, schema=schema, prefix="group_", checkpoint_path=tmp / "pgg.checkpoint"
            )
        try:
            timers: dict[str, _Timer | _GroupTimer] = {
                "file": _Timer(write),
                "sqlite": _Timer(_ledger_appender(sqlite)),
                "sqlite_group": _GroupTimer(sqlite_group, writers),
            }
            if pg is not None and pg_group is not None:
                timers["pg"] = _Timer(_ledger_appender(pg))
                timers["pg_group"] = _GroupTimer(pg_group, writers)
            for _ in range(rounds):
                for key, timer in timers.items():
                    timer.run((4 * n if key.endswith("group") else n) // rounds)
            close()
            base = timers["file"].rate
            rehash = rehash_file_rate(tmp / "baseline.log")
            rows = _backend_rows("SQLite (WAL, synchronous=FULL)", "sqlite", timers, base, writers)
            rows.append(
                BenchRow(
                    "SQLite (WAL, synchronous=FULL): verify()",
                    _verify_rate(sqlite, tmp / "s.key"),
                    "entries/s",
                    "re-hash file records",
                    rehash,
                )
            )
            if pg is not None:
                rows += _backend_rows("PostgreSQL", "pg", timers, base, writers)
                rows.append(
                    BenchRow(
                        "PostgreSQL: verify()",
                        _verify_rate(pg, tmp / "p.key"),
                        "entries/s",
                        "re-hash file records",
                        rehash,
                    )
                )
        finally:
            sqlite.close()
            sqlite_group.close()
            if pg is not None and pg_group is not None and pg_url is not None:
                pg.close()
                pg_group.close()
                _drop_schema(pg_url, schema)
        rows.append(BenchRow("baseline: fsync'd file append", base, "appends/s", "itself", base))
        rows.append(
            BenchRow("baseline: re-hash file records", rehash, "records/s", "itself", rehash)
        )
    return rows


def _backend_rows(
    label: str, key: str, timers: dict[str, _Timer | _GroupTimer], base: float, writers: int
) -> list[BenchRow]:
    group = timers[f"{key}_group"]
    assert isinstance(group, _GroupTimer)
    per_commit = group.count / max(group.batches, 1)
    return [
        BenchRow(
            f"{label}: durable appends, one commit each",
            timers[key].rate,
            "appends/s",
            "fsync'd file append",
            base,
        ),
        BenchRow(
            f"{label}: group commit, {writers} writers ({per_commit:.0f} appends/commit)",
            group.rate,
            "appends/s",
            "fsync'd file append",
            base,
        ),
        BenchRow(
            f"{label}: group commit vs one commit each",
            group.rate,
            "appends/s",
            "one commit each",
            timers[key].rate,
        ),
    ]


# -- inclusion proofs vs log size ---------------------------------------------


@dataclass(frozen=True)
class ProofRow:
    """Proof cost at one ledger size, with what it took to build that size."""

    backend: str
    size: int
    insert_s: float
    tree_s: float
    checkpoint_s: float
    prove_entry_us: float
    prove_entries_us: float
    old_ms: float


def _bulk_rows(start: int, end: int, prev: str) -> tuple[list[dict[str, Any]], str]:
    """Entry rows for seq ``start … end - 1`` chained onto ``prev``: the bulk path's rows."""
    rows = []
    for seq in range(start, end):
        data = canonical_json(_payload(seq))
        fields: dict[str, Any] = {
            "seq": seq,
            "kind": "sample_recorded",
            "job_id": f"{seq // 15:064x}",
            "campaign_id": "bench",
            "artifact_id": f"c{seq // 15}",
            "payload_sha256": hashlib.sha256(data).hexdigest(),
            "recorded_at": "2026-11-30T00:00:00.000000Z",
            "prev_hash": prev,
        }
        hashed = entry_bytes(**fields)
        prev = hashlib.sha256(hashed).hexdigest()
        rows.append(
            {**fields, "payload": data, "entry_hash": prev, "leaf_hash": leaf_hash(hashed).hex()}
        )
    return rows, prev


def _bulk_insert(ledger: Ledger, start: int, end: int, prev: str) -> str:
    """Insert entries without their tree nodes (as an older jurat would have)."""
    backend = ledger._backend
    chunk = 20_000
    for lo in range(start, end, chunk):
        rows, prev = _bulk_rows(lo, min(end, lo + chunk), prev)
        with backend.write() as conn:
            conn.execute(backend.tables.entries.insert(), rows)
    return prev


def _old_proof_ms(ledger: Ledger, seq: int, size: int) -> float:
    """The previous inclusion proof: read every stored leaf hash, compute the path from them."""
    e = ledger._backend.tables.entries
    start = time.perf_counter()
    with ledger._backend.read() as conn:
        leaves = [
            bytes.fromhex(h)
            for h in conn.execute(
                select(e.c.leaf_hash).where(e.c.seq < size).order_by(e.c.seq)
            ).scalars()
        ]
    inclusion_path(seq, leaves)
    root_from_leaves(leaves)
    return (time.perf_counter() - start) * 1000


@dataclass
class _Sized:
    """One ledger built to one size, with its checkpoint and what the build took."""

    ledger: Ledger
    note: str
    seconds: tuple[float, float, float]
    single: list[float]
    many: list[float]


def _build(ledger: Ledger, size: int, signer: LogSigner) -> _Sized:
    """Bulk-insert ``size`` entries, build the tree from them, sign the first checkpoint."""
    t0 = time.perf_counter()
    _bulk_insert(ledger, 0, size, "0" * 64)
    t1 = time.perf_counter()
    ledger._sync_tree()  # the migration path: the tree from the stored leaves
    t2 = time.perf_counter()
    note = ledger.checkpoint(signer)
    t3 = time.perf_counter()
    return _Sized(ledger, note, (t1 - t0, t2 - t1, t3 - t2), [], [])


def proof_rows(
    backend: str,
    ledgers: dict[int, Ledger],
    signer: LogSigner,
    rounds: int = 5,
    per_round: int = 40,
) -> list[ProofRow]:
    """Build each ledger to its size, then time proofs on all of them in interleaved rounds.

    Rounds take turns between sizes so that load from other processes (and
    PostgreSQL's autovacuum after a bulk load) falls on every size alike.
    """
    rnd = random.Random(20261130)
    built: dict[int, _Sized] = {}
    for size, ledger in ledgers.items():
        built[size] = _build(ledger, size, signer)
        print(f"  {backend} {size:>9,}: built in {built[size].seconds}", flush=True)
    for _ in range(rounds):
        for size, b in built.items():
            seqs = [rnd.randrange(size) for _ in range(per_round)]
            for seq in seqs:
                start = time.perf_counter()
                b.ledger.prove_entry(seq)
                b.single.append(time.perf_counter() - start)
            start = time.perf_counter()
            b.ledger.prove_entries(seqs, b.note)
            b.many.append((time.perf_counter() - start) / len(seqs))
    rows = []
    for size, b in built.items():
        samples = 2 if size > 10**5 else 5
        old = min(_old_proof_ms(b.ledger, rnd.randrange(size), size) for _ in range(samples))
        rows.append(
            ProofRow(
                backend,
                size,
                *b.seconds,
                statistics.median(b.single) * 1e6,
                statistics.median(b.many) * 1e6,
                old,
            )
        )
        print(f"  {rows[-1]}", flush=True)
    return rows


def all_proof_rows(max_size: int, pg_url: str | None) -> list[ProofRow]:
    """Proof rows for SQLite and (unless ``pg_url`` is None) PostgreSQL."""
    sizes = [s for s in (10**3, 10**4, 10**5, 10**6) if s <= max_size]
    rows: list[ProofRow] = []
    with tempfile.TemporaryDirectory(dir=HERE.parent) as name:
        tmp = Path(name)
        signer = load_or_create_log_key(tmp / "log.key")
        ledgers = {size: open_ledger(f"sqlite:///{tmp / f'proofs{size}.db'}") for size in sizes}
        try:
            rows += proof_rows("SQLite", ledgers, signer)
        finally:
            for ledger in ledgers.values():
                ledger.close()
        if pg_url is not None:
            schema = f"jurat_bench_{uuid.uuid4().hex[:8]}"
            ledgers = {
                size: open_ledger(
                    pg_url,
                    schema=schema,
                    prefix=f"p{size}_",
                    checkpoint_path=tmp / f"pg{size}.checkpoint",
                )
                for size in sizes
            }
            try:
                rows += proof_rows("PostgreSQL", ledgers, signer)
            finally:
                for ledger in ledgers.values():
                    ledger.close()
                _drop_schema(pg_url, schema)
    return rows


def _drop_schema(url: str, schema: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        engine.dispose()


def _markdown(rows: list[BenchRow], proofs: list[ProofRow], n: int, writers: int) -> str:
    lines = [
        f"{n} appends per backend one commit each, {4 * n} through group commit with "
        f"{writers} asyncio writers; Python {platform.python_version()}, SQLite "
        f"{sqlite3.sqlite_version}, {os.cpu_count()} cores, {platform.machine()}.",
        "",
        "| measurement | value | unit | baseline | ratio |",
        "|---|---:|---|---|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.name} | {row.value:,.0f} | {row.unit} | {row.baseline} | {row.ratio:.2f} |"
        )
    if proofs:
        lines += [
            "",
            "Inclusion proofs vs log size, one ledger per size, measured in 5 interleaved "
            "rounds: `prove_entry` median of 200 random entries; `prove_entries` median per "
            "proof of batches of 40 against one checkpoint; the previous way (every leaf "
            "read) best of 2-5. Build: bulk insert of the entries, the tree built from their "
            "leaf hashes (the migration path), the first checkpoint (checks every entry).",
            "",
            "| backend | entries | prove_entry µs | vs 10^3 | prove_entries µs/proof "
            "| previous way ms | insert s | tree build s | checkpoint s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        first: dict[str, float] = {}
        for p in proofs:
            first.setdefault(p.backend, p.prove_entry_us)
            lines.append(
                f"| {p.backend} | {p.size:,} | {p.prove_entry_us:,.0f} | "
                f"{p.prove_entry_us / first[p.backend]:.2f} | {p.prove_entries_us:,.0f} | "
                f"{p.old_ms:,.1f} | {p.insert_s:.1f} | {p.tree_s:.1f} | {p.checkpoint_s:.1f} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=500)
    parser.add_argument("--writers", type=int, default=64)
    parser.add_argument("--max-size", type=int, default=10**6)
    parser.add_argument("--pg-url", default=DEFAULT_PG)
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    pg_url = None if args.no_pg else args.pg_url
    rows = bench_rows(args.appends, pg_url, writers=args.writers)
    table = Table(title=f"ledger: durable appends per backend ({args.appends} one at a time)")
    for column in ("measurement", "value", "unit", "baseline", "ratio"):
        table.add_column(
            column, justify="right" if column in ("value", "ratio") else "left", no_wrap=True
        )
    for row in rows:
        table.add_row(row.name, f"{row.value:,.0f}", row.unit, row.baseline, f"{row.ratio:.2f}")
    console = Console(width=160)  # wide enough to read in a log, not 80 columns
    console.print(table)
    proofs = all_proof_rows(args.max_size, pg_url)
    ptable = Table(title="ledger: inclusion proofs vs log size")
    for column in (
        "backend",
        "entries",
        "prove_entry µs",
        "prove_entries µs",
        "previous ms",
        "insert s",
        "tree s",
        "checkpoint s",
    ):
        ptable.add_column(column, justify="left" if column == "backend" else "right")
    for p in proofs:
        ptable.add_row(
            p.backend,
            f"{p.size:,}",
            f"{p.prove_entry_us:,.0f}",
            f"{p.prove_entries_us:,.0f}",
            f"{p.old_ms:,.1f}",
            f"{p.insert_s:.1f}",
            f"{p.tree_s:.1f}",
            f"{p.checkpoint_s:.1f}",
        )
    console.print(ptable)
    if not args.no_write:
        write_section("ledger", _markdown(rows, proofs, args.appends, args.writers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
