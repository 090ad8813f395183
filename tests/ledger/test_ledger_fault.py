"""SIGKILL a writer at random points; every commit it reported must survive intact.

Each round starts a child process that appends simulated receipts (with
supersession and periodic checkpoints), kills it with SIGKILL after a random
delay, then reopens the ledger, verifies it against its checkpoints and the
checkpoint file, and checks every entry the child reported as committed.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from jurat.ledger import load_or_create_log_key
from tests.support.scale import scaled

from .conftest import Target
from .test_ledger_concurrency import child_args, child_env

ROUNDS = scaled(16, 50)  # tests/support/scale.py


def _kill_rounds(target: Target, tmp_path: Path, rounds: int) -> int:
    key = tmp_path / "log.key"
    signer = load_or_create_log_key(key)
    target.open().close()
    rng = random.Random(20261129)
    committed: dict[int, tuple[str, str]] = {}
    landed_mid_run = 0
    for run in range(rounds):
        proc = subprocess.Popen(
            child_args(target, key, "fault", f"r{run}"),
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        # Odd rounds kill only after the child reported a commit, so that kills land after
        # real work however slow the machine is; even rounds may kill it at start-up.
        first = proc.stdout.readline() if run % 2 else ""
        time.sleep(rng.uniform(0.0, 0.08))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        # A kill can tear the last line mid-write: only a finished line is a report.
        lines = ([first.rstrip("\n")] if first.endswith("\n") else []) + (
            proc.stdout.read().split("\n")[:-1])
        proc.stdout.close()
        landed_mid_run += bool(lines)
        for line in lines:
            seq, job, digest = line.split()
            committed[int(seq)] = (job, digest)

        with target.open() as ledger:
            report = ledger.verify(public_key=signer.public_key)
            assert report.tree_size >= len(committed)
            by_seq = {e.seq: e for e in ledger.entries(kind="receipt")}
            for seq, (job, digest) in committed.items():
                entry = by_seq[seq]
                assert entry.job_id == job
                assert entry.payload["receipt_sha256"] == digest
                receipt = ledger.receipt_for_job(job)
                assert receipt is not None and hashlib.sha256(receipt).hexdigest() == digest
            # Review versions per artifact count up by one with no gaps.
            for subject in ("a0", "a1", "a2"):
                versions = [
                    e.payload["review_version"] for e in by_seq.values() if e.artifact_id == subject
                ]
                assert versions == list(range(1, len(versions) + 1))
    # The kills landed after real work, not only at start-up (every odd round, at least).
    assert landed_mid_run >= rounds // 2 and len(committed) >= rounds // 2
    return landed_mid_run


@pytest.mark.slow
def test_sigkill_never_loses_a_reported_commit_sqlite(
    sqlite_target: Target, tmp_path: Path
) -> None:
    landed = _kill_rounds(sqlite_target, tmp_path, ROUNDS)
    assert landed >= ROUNDS // 2


@pytest.mark.slow
@pytest.mark.postgres
def test_sigkill_never_loses_a_reported_commit_postgresql(
    pg_target: Target, tmp_path: Path
) -> None:
    _kill_rounds(pg_target, tmp_path, scaled(6, 12))
