"""SIGKILL a process in the middle of group commits; every acknowledged append must survive.

Each round starts a child (``ledger_child.py group``) whose asyncio workers
append samples and receipts through one ``group_commit()`` (with checkpoints
now and then), kills it with SIGKILL after a random delay, then reopens the
ledger and checks: the chain, the Merkle tree and every checkpoint verify;
every append the child saw return is there, at its seq, exactly once; review
versions count up without gaps; the stored tree was never rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from jurat.ledger import load_or_create_log_key
from tests.support.scale import scaled

from .conftest import Target
from .test_ledger_concurrency import child_args, child_env

WORKERS = "24"
ROUNDS = scaled(10, 25)  # tests/support/scale.py
PG_ROUNDS = scaled(6, 12)


def _kill_rounds(target: Target, tmp_path: Path, rounds: int) -> tuple[int, int]:
    key = tmp_path / "log.key"
    signer = load_or_create_log_key(key)
    target.open().close()
    rng = random.Random(20261130)
    acked: dict[int, tuple[str, str, str]] = {}
    shared = 0  # acknowledged appends that shared their commit with another
    for run in range(rounds):
        proc = subprocess.Popen(
            child_args(target, key, "group", f"g{run}", WORKERS),
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.02, 0.3))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        # A kill can tear the last line mid-write: only a finished line is a report.
        lines = proc.stdout.read().split("\n")[:-1]
        proc.stdout.close()
        batches: Counter[str] = Counter()
        for line in lines:
            what, seq, job, digest, batch = line.split()
            acked[int(seq)] = (what, job, digest)
            batches[batch] += 1
        shared += sum(n for n in batches.values() if n > 1)

        with target.open() as ledger:
            report = ledger.verify(public_key=signer.public_key)
            assert not [w for w in report.warnings if "Merkle tree" in w], report.warnings
            assert report.tree_size >= len(acked)
            entries = {e.seq: e for e in ledger.entries()}
            for seq, (what, job, digest) in acked.items():
                entry = entries[seq]
                assert entry.job_id == job
                if what == "R":
                    assert entry.kind == "receipt"
                    assert entry.payload["receipt_sha256"] == digest
                    receipt = ledger.receipt_for_job(job)
                    assert receipt is not None and hashlib.sha256(receipt).hexdigest() == digest
                else:
                    assert hashlib.sha256(entry.payload["m"].encode()).hexdigest() == digest
            # Nothing twice: every sample marker and every receipt job is there once.
            markers = Counter(e.payload["m"] for e in entries.values() if "m" in e.payload)
            assert max(markers.values(), default=1) == 1
            receipts = Counter(e.job_id for e in entries.values() if e.kind == "receipt")
            assert max(receipts.values(), default=1) == 1
            for subject in ("a0", "a1", "a2"):
                versions = [
                    e.payload["review_version"]
                    for e in entries.values()
                    if e.kind == "receipt" and e.artifact_id == subject
                ]
                assert versions == list(range(1, len(versions) + 1))
    return len(acked), shared


@pytest.mark.slow
def test_sigkill_during_group_commit_loses_no_acknowledged_append_sqlite(
    sqlite_target: Target, tmp_path: Path
) -> None:
    acked, shared = _kill_rounds(sqlite_target, tmp_path, ROUNDS)
    assert acked > ROUNDS and shared > 0


@pytest.mark.slow
@pytest.mark.postgres
def test_sigkill_during_group_commit_loses_no_acknowledged_append_postgresql(
    pg_target: Target, tmp_path: Path
) -> None:
    acked, shared = _kill_rounds(pg_target, tmp_path, PG_ROUNDS)
    assert acked > PG_ROUNDS and shared > 0
