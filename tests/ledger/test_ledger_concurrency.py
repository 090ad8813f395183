"""Several writers — threads, asyncio tasks, processes — never leave a gap or a fork."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

from jurat.ledger import LogSigner, load_or_create_log_key

from .conftest import Target

CHILD = Path(__file__).with_name("ledger_child.py")
SRC = Path(__file__).resolve().parents[2] / "src"


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    return env


def child_args(target: Target, key: Path, mode: str, run: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        str(CHILD),
        mode,
        target.url,
        target.schema or "-",
        str(target.checkpoint_path),
        str(key),
        run,
        *extra,
    ]


def test_threads_and_asyncio_tasks_append_without_gaps(target: Target, signer: LogSigner) -> None:
    with target.open() as ledger:
        errors: list[BaseException] = []

        def writer(n: int) -> None:
            try:
                for i in range(20):
                    ledger.append("sample_recorded", f"thread-{n}", {"i": i})
                    if i == 10 and n == 0:
                        ledger.checkpoint(signer)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
        for t in threads:
            t.start()

        async def tasks() -> None:
            await asyncio.gather(
                *(
                    asyncio.to_thread(ledger.append, "transport_retry", f"task-{k}", {"k": k})
                    for k in range(30)
                )
            )

        asyncio.run(tasks())
        for t in threads:
            t.join()
        assert not errors
        report = ledger.verify(public_key=signer.public_key)
        assert report.tree_size == 6 * 20 + 30
        for n in range(6):
            assert [p["i"] for p in ledger.samples_for_job(f"thread-{n}")] == list(range(20))


def test_processes_append_without_gaps(target: Target, tmp_path: Path) -> None:
    key = tmp_path / "log.key"
    load_or_create_log_key(key)
    target.open().close()  # create the schema once, before the race
    procs = [
        subprocess.Popen(
            child_args(target, key, "append", f"proc-{n}", "40"),
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for n in range(3)
    ]
    reported: dict[str, list[int]] = {}
    for n, proc in enumerate(procs):
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        reported[f"proc-{n}"] = [int(line) for line in out.split()[1:]]
    with target.open() as ledger:
        assert ledger.verify().tree_size == 120
        for run, seqs in reported.items():
            entries = list(ledger.entries(job_id=run))
            assert [e.seq for e in entries] == seqs
            assert [e.payload["i"] for e in entries] == list(range(40))
