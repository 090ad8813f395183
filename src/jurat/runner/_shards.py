"""One run in several worker processes (``jurat run --workers N``).

A single interpreter spends about 1.5-2 ms of CPU per judge call on a whole run (the SDK's
request path, answer validation, the ledger's commits, statements and signatures;
bench/README.md, "Whole runs"), so one process cannot keep a fast endpoint busy: at
64 connections and 50 ms it would need under 0.8 ms per call. Worker k of n runs the
artifacts whose place in the campaign is k modulo n, with its part of every judge's
limits (``limit_share``), so the n processes together never exceed what the campaign
declares, and the endpoint sees the same concurrency as from one process.

What stays true with several processes:

- the parent writes the ledger for every worker (ledger/_remote.py): a worker's group
  commit sends its batches to the parent, which commits the batches waiting from all
  workers in one transaction and answers each; a worker's append returns once its entry
  is committed, so a vote is durable before its fold exactly as in one process, and the
  chain and the tree stay one and gap-free. The workers read the ledger themselves
  (their jobs' histories, review slots, the proofs);
- an artifact is in exactly one worker's part, so it has one job and one receipt;
- the parent keeps the summary (each worker's ``RunTally``, merged) and signs the one
  checkpoint; then each worker writes its own receipts' proofs in it (two cores for the
  run's last step, which one process spends about 0.5 s on at 2,000 receipts);
- a worker that fails or dies stops the others: what completed is durable, and the
  same command resumes it (exit 4); an interrupt stops every worker (exit 130).

Workers are forked after the preflight, so they inherit the checked campaign, the key
and the inventory without re-reading them; each opens its own ledger connection and
judge engine (a connection or an event loop is never shared across a fork).
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from jurat.errors import ConfigError, JuratError
from jurat.judges import Engine
from jurat.ledger import AppendServer, Ledger, open_ledger, remote_group_commit
from jurat.models import Campaign
from jurat.receipts import PrivateKey
from jurat.runner._datasets import Inventory
from jurat.runner._job import JobResult
from jurat.runner._progress import PricedProgress as Counters
from jurat.runner._proofs import write_proofs
from jurat.runner._run import RunOptions, run_campaign_async
from jurat.runner._summary import RunTally

__all__ = [
    "GC_THRESHOLDS",
    "MIN_ARTIFACTS_PER_WORKER",
    "SWITCH_INTERVAL_S",
    "Gathered",
    "default_workers",
    "tuned_for_jobs",
    "Workers",
    "start_workers",
    "usable_workers",
    "workers_for",
]

#: The interpreter's thread switch interval during a run. The ledger's commit thread gives
#: up the GIL at every SQLite call and must win it back from the event loop; at Python's
#: default 5 ms it waits up to 5 ms each time while the jobs wait on its commits. 0.5 ms
#: took a sim run of 10,000 samples from 24 s to 16 s (bench/README.md, "Whole runs").
SWITCH_INTERVAL_S = 0.0005


#: The cyclic garbage collector's thresholds during a run. A job allocates thousands of
#: short-lived containers (records, their dumps, the statement), nearly all freed by their
#: reference counts at once; at Python's default (700, 10, 10) the collector still ran
#: about 170 times per worker in a run of 1,000 artifacts, 6% of the worker's CPU
#: (bench/README.md, "Whole runs"). Cyclic garbage waits at most this many more
#: allocations than frees before it is collected.
GC_THRESHOLDS = (20_000, 20, 100)


@contextmanager
def tuned_for_jobs() -> Iterator[None]:
    """The interpreter's settings while a run's jobs run, restored after: the thread switch
    interval at ``SWITCH_INTERVAL_S``, the collector at ``GC_THRESHOLDS``, and what was
    alive before (modules, the campaign, compiled schemas: never garbage) frozen out of
    its scans."""
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        sys.setswitchinterval(interval)

#: How often a worker tells the parent how far it got (the progress bar's steps).
PROGRESS_EVERY_S = 0.1
#: How often the parent does its own work while the workers run (``Workers.gather``).
IDLE_EVERY_S = 0.5

#: Artifacts per worker below which ``--workers``' default starts no more processes: a
#: small campaign finishes before another process would have imported anything.
MIN_ARTIFACTS_PER_WORKER = 128

#: Progress: (artifacts done, samples, errors, spend, samples at an unknown price) added
#: since the last message.
OnProgress = Callable[[int, int, int, float, int], None]


@dataclass
class Gathered:
    """What a run keeps as its jobs end: the summary and each receipt's (entry, file)."""

    tally: RunTally
    receipts: list[tuple[int, str]] = field(default_factory=list)
    """Each receipt's ledger entry and the file it was written to."""
    processes: int = 1
    """The processes that ran the jobs."""

    def add(self, result: JobResult, index: int) -> None:
        """Count one job's result (its artifact's ``index`` in the campaign) and drop it."""
        self.tally.add(result, index)
        if result.receipt_seq is not None:
            self.receipts.append((result.receipt_seq, result.receipt_path))

    def merge(self, other: Gathered) -> None:
        """Add what another worker gathered."""
        self.tally.merge(other.tally)
        self.receipts.extend(other.receipts)


def workers_for(options: RunOptions, campaign: Campaign, artifacts: int) -> int:
    """The worker processes a run uses: ``--workers``, else one per core (at most 4) for a
    campaign of ``MIN_ARTIFACTS_PER_WORKER`` artifacts per worker, and one when threads
    are running or with telemetry (its file has one writer). Raises ConfigError for
    ``--workers`` above 1 with ``--telemetry``."""
    if options.telemetry_path is not None or options.otlp is not None:
        flag = "--telemetry" if options.telemetry_path is not None else "--otlp"
        if options.workers is not None and options.workers > 1:
            raise ConfigError(f"--workers {options.workers} with {flag}: the telemetry "
                              "is written by one process (fix: drop --workers, or "
                              f"{flag})")
        return 1
    if campaign.budget is not None:
        return 1  # one process holds the cap (runner/_budget.py refuses --workers above 1)
    requested = options.workers
    if requested is None:
        if threading.active_count() > 1:
            # Embedded in a process that runs threads (a test's server, an application):
            # a fork copies only this thread, and the others may hold locks it needs.
            return 1
        requested = min(default_workers(), artifacts // MIN_ARTIFACTS_PER_WORKER)
    return usable_workers(requested, campaign, artifacts)


def usable_workers(requested: int, campaign: Campaign, artifacts: int) -> int:
    """How many worker processes a run uses: at most ``requested``, one per artifact, and
    no more than the smallest limit (concurrency, requests or tokens per minute), so that
    every worker's part of it is at least 1 and the parts add up to the limit; one where
    processes cannot be forked."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    policy = campaign.policy
    configs = [*policy.judges, *([policy.subject] if policy.subject is not None else [])]
    limits = [limit for config in configs
              for limit in (config.max_concurrency, config.rpm, config.tpm) if limit]
    return max(1, min(requested, artifacts, *limits))


def _worker(conn: Connection, writer: AppendServer, appends: socket.socket, shard: int,
            shards: int, campaign: Campaign, inventory: Inventory, options: RunOptions,
            key: PrivateKey) -> None:
    """Run worker ``shard``'s part and send its progress, then what it gathered; its
    appends go to the parent's ``writer`` over ``appends``."""
    # The copies of the writer's ends this fork inherited: with them open here, another
    # worker would not see the parent go.
    writer.close()
    gathered = Gathered(RunTally(campaign.policy))
    counters = Counters()
    # What the parent was told: jobs ended, samples, errors, spend, unpriced samples.
    sent = [0, 0, 0, 0.0, 0]
    told = time.monotonic()

    def tell() -> None:
        # Deltas: the parent adds every worker's into one bar.
        done = gathered.tally.artifacts
        conn.send(("progress", done - sent[0], counters.samples - sent[1],
                   counters.errors - sent[2], counters.spend_usd - sent[3],
                   counters.unpriced - sent[4]))
        sent[:] = [done, counters.samples, counters.errors, counters.spend_usd,
                   counters.unpriced]

    def ended(result: JobResult, index: int) -> None:
        nonlocal told
        gathered.add(result, index)
        # At most every PROGRESS_EVERY_S: a message per job costs as much as a job's fold.
        if time.monotonic() - told >= PROGRESS_EVERY_S:
            tell()
            told = time.monotonic()

    async def main() -> None:
        async with Engine(share=(shard, shards)) as engine:
            engine.preflight(campaign.policy, [inventory.first] if inventory.first else [])
            with open_ledger(options.ledger_url) as ledger:
                await run_campaign_async(
                    campaign, options, ledger=ledger, key=key, progress=counters,
                    engine=engine, checked=inventory, on_result=ended,
                    appends=remote_group_commit(appends))

    try:
        with tuned_for_jobs():
            asyncio.run(main())
        # The receipts stay here: once the parent has signed the checkpoint, this worker
        # proves them (``Workers.prove``).
        receipts, gathered.receipts = gathered.receipts, []
        tell()
        conn.send(("done", gathered))
        order = conn.recv()
        if order[0] == "prove":
            with open_ledger(options.ledger_url) as ledger:
                write_proofs(ledger, receipts, order[1])
            conn.send(("proved",))
    except EOFError:
        pass  # the parent stopped: nothing left to do
    except KeyboardInterrupt:
        conn.send(("interrupted",))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it
        text = exc.diagnostics() if isinstance(exc, JuratError) else f"{type(exc).__name__}: {exc}"
        conn.send(("failed", text))
    finally:
        conn.close()


def start_workers(campaign: Campaign, inventory: Inventory, options: RunOptions,
                  key: PrivateKey, workers: int, ledger: Ledger) -> Workers:
    """Fork ``workers`` processes that run the campaign, worker k the artifacts at places
    k modulo ``workers``; ``Workers.gather`` waits for them and commits their appends to
    ``ledger`` (this process's, open) meanwhile.

    Call it before starting any thread (a progress bar's included): a fork copies only
    the calling thread.
    """
    context = multiprocessing.get_context("fork")
    writer = AppendServer(ledger)
    children: dict[Connection, BaseProcess] = {}
    for shard in range(workers):
        theirs, ours = context.Pipe()
        appends = writer.channel()
        process = context.Process(
            target=_worker, name=f"jurat worker {shard + 1} of {workers}", daemon=True,
            args=(ours, writer, appends, shard, workers, campaign, inventory, options, key))
        process.start()
        ours.close()
        appends.close()
        children[theirs] = process
    return Workers(campaign, children, writer)


class Workers:
    """The worker processes of one run; leaving ``with`` stops any still running."""

    def __init__(self, campaign: Campaign, children: dict[Connection, BaseProcess],
                 writer: AppendServer) -> None:
        self._campaign = campaign
        self._children = children
        self._writer = writer

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Terminate the workers still running and wait for every one."""
        for process in self._children.values():
            if process.is_alive():
                process.terminate()
        for process in self._children.values():
            process.join()
        self._writer.close()

    def gather(self, on_progress: OnProgress,
               on_idle: Callable[[], None] | None = None) -> Gathered:
        """Wait for every worker's jobs, passing on their progress; return what they
        gathered, but for the receipts, which each worker keeps for ``prove``.

        ``on_idle`` is called every ``IDLE_EVERY_S`` meanwhile: this process has little
        else to do while the workers run (the command line checks the entries the
        checkpoint will sign, ``Ledger.precheck``). Raises JuratError when a worker fails
        or dies (the others are stopped first) and KeyboardInterrupt when interrupted.
        """
        merged = Gathered(RunTally(self._campaign.policy), processes=len(self._children))

        def received(message: tuple[Any, ...]) -> bool:
            if message[0] == "progress":
                on_progress(*message[1:])
                return False
            merged.merge(message[1])
            return True

        self._until("done", received, on_idle)
        return merged

    def prove(self, note: str) -> Callable[[], None]:
        """Have every worker write its receipts' proofs in the checkpoint ``note``; returns
        the wait for them (which raises as ``gather`` does), so that this process can
        print the run's summary meanwhile."""
        for conn in self._children:
            conn.send(("prove", note))

        def proven() -> None:
            self._until("proved", lambda message: True)
            self.stop()

        return proven

    def _until(self, last: str, received: Callable[[tuple[Any, ...]], bool],
               on_idle: Callable[[], None] | None = None) -> None:
        """Pass each worker's messages to ``received`` until it returns True for the
        worker's ``last`` message, calling ``on_idle`` every ``IDLE_EVERY_S``; stop every
        worker and raise on a failure or interrupt."""
        pending = dict(self._children)
        failure: str | None = None
        interrupted = False
        idle_at = time.monotonic() + IDLE_EVERY_S
        try:
            while pending and failure is None and not interrupted:
                timeout = None if on_idle is None else max(0.0, idle_at - time.monotonic())
                ready_now = wait([*pending, *self._writer.sockets], timeout)
                # The workers' appends first: their jobs wait on them.
                self._writer.serve([r for r in ready_now if isinstance(r, socket.socket)])
                if on_idle is not None and time.monotonic() >= idle_at:
                    on_idle()
                    idle_at = time.monotonic() + IDLE_EVERY_S
                for ready in ready_now:
                    if not isinstance(ready, Connection):
                        continue
                    name = pending[ready].name
                    try:
                        message = ready.recv()
                    except EOFError:
                        process = pending.pop(ready)
                        process.join()
                        failure = failure or (f"{name} exited with status {process.exitcode} "
                                              "before finishing its part")
                        continue
                    if message[0] == "interrupted":
                        interrupted = True
                    elif message[0] == "failed":
                        failure = f"{name}: {message[1]}"
                    elif received(message) and message[0] == last:
                        pending.pop(ready)
        except KeyboardInterrupt:
            interrupted = True
        if interrupted or failure is not None:
            self.stop()
        if interrupted:
            raise KeyboardInterrupt
        if failure is not None:
            raise JuratError(f"{failure}\nwhat completed is in the ledger; running the same "
                             "command again resumes from it")


def default_workers() -> int:
    """``--workers`` when not given: one per core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))
