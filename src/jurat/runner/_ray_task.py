"""What a Ray worker runs: ``jurat_job``, a few artifacts' jobs (runner/_ray.py dispatches).

A task is pure data in, pure data out: the campaign (its artifacts' content included, read
by the driver), the signing key as PKCS#8 PEM (a key object does not pickle), the ledger
URL and the task's slot. It runs each artifact through the same ``JobRunner`` as
``jurat run`` in one process, so a job resumes from the ledger exactly as a rerun does:
its recorded samples are kept and never drawn again, a job with a receipt returns that
receipt. A task that runs again after its worker died (Ray's retry) is such a rerun.

The receipts are written to a scratch directory on the worker and returned as bytes: the
driver writes them to ``--out``, which need not exist on any worker node. A task owns
what it opens, and closes it before it returns: its ledger, its judge engine and the pool
its code checks run in. A Ray worker process outlives its tasks and offers no hook at its
end, so nothing is kept open between tasks: opening the ledger costs a task about 15 ms
(SQLite) or 40 ms (PostgreSQL) of wall time and 7-9 ms of CPU, once per batch of up to
``MAX_BATCH`` jobs (runner/_ray.py).
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from pydantic import JsonValue

from jurat.errors import ConfigError
from jurat.judges import Engine
from jurat.ledger import open_ledger
from jurat.models import Artifact, Campaign, Frozen
from jurat.receipts import PrivateKey, receipt_path_for
from jurat.runner._job import JobResult, check_pool
from jurat.runner._progress import PricedProgress
from jurat.runner._run import JobRunner, RunOptions
from jurat.runner._shards import Gathered, tuned_for_jobs
from jurat.runner._summary import RunTally

__all__ = ["TaskInput", "TaskOutput", "key_pem", "run_task"]


class TaskInput(Frozen):
    """One ``jurat_job`` task: some artifacts of one run, and what their jobs need (the
    campaign travels beside it, put in Ray's object store once for every task)."""

    key_pem: bytes
    """The receipt signing key, PKCS#8 PEM: every worker signs the receipts of its jobs."""
    ledger_url: str
    """Absolute: a worker's working directory is not the driver's."""
    out_dir: str
    """The driver's ``--out``: the receipt paths the summary and the proofs name."""
    attempt: int
    """The run's attempt number, part of each job's identity (``RunOptions.attempt``)."""
    run_id: str | None = None
    """The run the subject is executed under (``RunOptions.run_id``, runner/_rerun.py)."""
    slot: int
    """This task's part of every judge's limits, k of ``slots`` (``limit_share``)."""
    slots: int
    """Tasks the driver runs at once at most: the slots the limits are split into."""
    in_flight: int
    """Jobs of this task run at once."""
    artifacts: tuple[tuple[int, Artifact], ...]
    """Each artifact with its place in the campaign."""
    job: str | None = None
    """The ledger job id to record under, for callers with their own job identities (the
    service: one artifact per task); None: ``job_identity``, as in `jurat run`."""
    inputs: dict[str, JsonValue] | None = None
    """Receipt inputs replacing the run's defaults (the service's, with ``job``)."""


@dataclass
class TaskOutput:
    """What a task hands back: its summary part, the receipts' bytes and the counters (a
    dataclass, not a record: it is filled as the task's jobs end, like ``Gathered``)."""

    gathered: Gathered
    """The task's part of the run's summary and its (entry, file) receipt pairs."""
    receipts: dict[str, bytes] = field(default_factory=dict)
    """Receipt path under the driver's ``--out`` -> the signed bundle to write there."""
    reviews: list[tuple[int, int | None]] = field(default_factory=list)
    """Each job's (review version, receipt entry), in the order the jobs ended."""
    samples: int = 0
    """Samples drawn by the task (the progress bar's counters)."""
    errors: int = 0
    """Of those, errored samples."""
    spend_usd: float = 0.0
    """What the drawn samples cost."""
    unpriced: int = 0
    """Of the samples, those drawn at an unknown price (the spend is then unknown)."""


def key_pem(key: PrivateKey) -> bytes:
    """The key as PKCS#8 PEM, for the tasks (a key object does not pickle)."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _key(pem: bytes) -> PrivateKey:
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except ValueError as exc:
        raise ConfigError(f"the signing key sent to the worker does not load: {exc}") from exc
    if not isinstance(key, ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey):
        raise ConfigError(f"the signing key sent to the worker is a {type(key).__name__}")
    return key


def run_task(campaign: Campaign, task: TaskInput) -> TaskOutput:
    """Run a task's jobs (on a Ray worker); raises what the first failed job raised."""
    key = _key(task.key_pem)
    scratch = Path(tempfile.mkdtemp(prefix="jurat-ray-"))
    output = TaskOutput(Gathered(RunTally(campaign.policy)))
    counters = PricedProgress()
    out_dir = Path(task.out_dir)

    def ended(result: JobResult, index: int) -> None:
        signed = Path(result.receipt_path).read_bytes()
        result.receipt_path = str(receipt_path_for(out_dir, result.artifact.id))
        output.receipts[result.receipt_path] = signed
        output.reviews.append((result.review_version, result.receipt_seq))
        output.gathered.add(result, index)

    async def main() -> None:
        policy = campaign.policy
        first = [task.artifacts[0][1]] if task.artifacts else []
        options = RunOptions(out_dir=scratch, ledger_url=task.ledger_url,
                             attempt=task.attempt, run_id=task.run_id, quiet=True)
        async with (Engine(share=(task.slot, task.slots)) as engine,
                    check_pool([policy]) as checks):
            engine.preflight(policy, first)
            async with ledger.group_commit() as log:
                # history=None: each job reads its own entries, so a task run again after
                # its worker died sees what the dead attempt recorded (a snapshot taken
                # by the driver before dispatch would not).
                runner = JobRunner(campaign, options, ledger=ledger, log=log, key=key,
                                   progress=counters, telemetry=None, engine=engine,
                                   checks=checks, history=None)
                gate = asyncio.Semaphore(task.in_flight)

                async def job(index: int, artifact: Artifact) -> None:
                    async with gate:
                        ended(await runner.run_one(artifact, job=task.job,
                                                   inputs=task.inputs), index)

                try:
                    # The first failure cancels the others: what they recorded is durable.
                    async with asyncio.TaskGroup() as group:
                        for index, artifact in task.artifacts:
                            group.create_task(job(index, artifact))
                except BaseExceptionGroup as failed:
                    # The driver reports one error, as a run in one process does.
                    raise failed.exceptions[0] from None

    try:
        with open_ledger(task.ledger_url) as ledger, tuned_for_jobs():
            asyncio.run(main())
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    output.samples, output.errors = counters.samples, counters.errors
    output.spend_usd = counters.spend_usd
    output.unpriced = counters.unpriced
    return output
