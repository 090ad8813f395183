"""One run on a Ray cluster (``jurat run --executor ray [--ray-address ADDRESS]``).

The driver (the ``jurat run`` process) reads the campaign's artifacts, as the local
executor does, and hands them out in small batches, each a Ray task named ``jurat_job``
(runner/_ray_task.py) that runs their jobs with the same ``JobRunner`` on whichever worker
Ray places it; the checks run sandboxed there. docs/scale.md says how to run it on
several machines.

What holds, and why (docs/design.md, "Executors"):

- **Judge limits are the cluster's, not each worker's.** The driver runs at most ``slots``
  tasks at once (the cluster's CPUs, and never more than the smallest judge limit) and
  gives each running task a distinct slot k of ``slots``; the task's engine keeps
  ``limit_share(limit, k, slots)`` of every ``max_concurrency``, ``rpm`` and ``tpm``,
  exactly as ``--workers`` splits them between processes (runner/_shards.py), so the
  parts of the tasks running at any moment add up to at most the campaign's limit,
  wherever they run. A slot is handed out again only once its task has ended (a task
  retried after its worker died keeps its slot: the dead attempt holds nothing).
- **The ledger is the record.** Every worker appends to the one ledger (PostgreSQL when
  the cluster spans machines) through its own group commit: a vote is durable before its
  fold. A task that dies with its worker is run again by Ray (``RETRIES`` times); the
  retry is a resume: each job reads its own ledger history, keeps the samples recorded
  and draws only the missing ones, and a job with a receipt returns it.
- **One receipt per (job, review version).** An artifact is in exactly one batch, and a
  batch runs once at a time (its retry starts after its worker is gone); the ledger's
  review slot, checked inside the receipt's transaction, refuses a second receipt for the
  same version whatever happens.
- Workers get the judges' API keys from the driver's environment (``judge_env``, as the
  tasks' Ray runtime environment): the driver's preflight checked them, and a worker
  node's own environment is not the driver's.
- The driver writes the receipts the tasks return into ``--out`` (the same layout as the
  local executor), and keeps the summary and one (entry, file) pair per receipt, so the
  checkpoint and proofs (cli/_run.py) are the local path's.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterable, Iterator
from importlib import import_module
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from jurat.errors import ConfigError, DependencyError, JuratError
from jurat.models import Artifact, Campaign
from jurat.receipts import PrivateKey
from jurat.runner._datasets import Inventory, iter_placed
from jurat.runner._ray_task import TaskInput, TaskOutput, key_pem, run_task
from jurat.runner._run import RunOptions, artifacts_in_flight
from jurat.runner._shards import Gathered, OnProgress, usable_workers
from jurat.runner._stream import still_as_checked
from jurat.runner._summary import RunTally

__all__ = [
    "MAX_BATCH",
    "RETRIES",
    "TASK_NAME",
    "batch_size",
    "check_ray_options",
    "cluster_slots",
    "connect_ray",
    "import_ray",
    "judge_env",
    "run_on_ray",
    "task_options",
    "worker_ledger_url",
]

#: The Ray task's name, as the dashboard and ``ray list tasks`` show it.
TASK_NAME = "jurat_job"
#: Runs of one task after the first when its worker or node dies (Ray's ``max_retries``):
#: each is a resume from the ledger. An error a job raises is not retried: it would raise
#: again (the same command, run again, resumes once it is fixed).
RETRIES = 3
#: The most artifacts in one task. A task costs the driver and Ray about a millisecond
#: whatever its size (bench/README.md, "Ray"); batches amortise it, and small ones lose
#: little when a worker dies (its batch's finished jobs are reused, not redone).
MAX_BATCH = 32
#: Batches per slot at least, so that the slots stay busy while the last ones finish.
BATCHES_PER_SLOT = 4

_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def import_ray() -> ModuleType:
    """The ``ray`` module; DependencyError (exit 3) when the extra is not installed."""
    try:
        return import_module("ray")
    except ImportError as exc:
        raise DependencyError(
            f"--executor ray needs Ray, which is not installed ({exc}) "
            "(fix: pip install 'jurat[ray]')") from exc


def worker_ledger_url(url: str | None) -> str:
    """The ledger URL as workers must see it: a SQLite path made absolute (a worker's
    working directory is not the driver's); the default file is ``jurat.db`` here."""
    url = url or "sqlite:///jurat.db"
    prefix = "sqlite:///"
    if url.startswith(prefix):
        path = Path(url[len(prefix):])
        if not path.is_absolute():
            return prefix + str(path.resolve())
    return url


def check_ray_options(options: RunOptions, address: str | None) -> None:
    """Refuse what cannot run on Ray, before anything is written (ConfigError, exit 3)."""
    if options.telemetry_path is not None:
        raise ConfigError("--executor ray with --telemetry: the telemetry file is written by "
                          "one process (fix: drop --telemetry, or --executor local)")
    if options.otlp is not None:
        raise ConfigError("--executor ray with --otlp: spans are exported by one process "
                          "(fix: drop --otlp and unset OTEL_EXPORTER_OTLP_*ENDPOINT, or "
                          "--executor local)")
    if options.workers is not None:
        raise ConfigError("--executor ray with --workers: the cluster's CPUs decide how many "
                          "jobs run at once (fix: drop --workers)")
    url = worker_ledger_url(options.ledger_url)
    if url.startswith("sqlite") and address is not None and not _is_loopback(address):
        raise ConfigError(
            f"--ray-address {address} with a SQLite ledger: workers on other machines cannot "
            "share a SQLite file (fix: --ledger postgresql://…, reachable from every node)")


def _is_loopback(address: str) -> bool:
    if address in ("auto", "local"):
        return True
    host = urlsplit(address if "://" in address else f"ray://{address}").hostname
    return host in _LOOPBACK


def batch_size(artifacts: int, slots: int) -> int:
    """Artifacts per task: ``BATCHES_PER_SLOT`` batches per slot at least, at most
    ``MAX_BATCH`` artifacts each."""
    return max(1, min(MAX_BATCH, math.ceil(artifacts / (slots * BATCHES_PER_SLOT))))


def _batches(placed: Iterable[tuple[int, Artifact]], size: int
             ) -> Iterator[tuple[tuple[int, Artifact], ...]]:
    batch: list[tuple[int, Artifact]] = []
    for item in placed:
        batch.append(item)
        if len(batch) == size:
            yield tuple(batch)
            batch = []
    if batch:
        yield tuple(batch)


def connect_ray(ray: ModuleType, address: str | None) -> None:
    """Join the cluster at ``address``, or start a local runtime on loopback (None);
    ConfigError (exit 3) when neither works."""
    try:
        if address is None:
            # A runtime of this machine's own, on loopback, gone when the run ends.
            ray.init(_node_ip_address="127.0.0.1", include_dashboard=False,
                     log_to_driver=False, logging_level=logging.WARNING)
        else:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        where = f"the Ray cluster at {address}" if address else "a local Ray runtime"
        raise ConfigError(f"--executor ray: cannot start or join {where}: {exc} "
                          "(fix: `ray start --head` there, or the right --ray-address)"
                          ) from exc


def judge_env(campaigns: Iterable[Campaign]) -> dict[str, str]:
    """The judges' API-key environment variables as the driver has them (its preflight
    checked they are set), for the workers, which call the judges: a worker node's own
    environment is not the driver's. Sent as the tasks' Ray runtime environment."""
    names: set[str] = set()
    for campaign in campaigns:
        policy = campaign.policy
        for config in [*policy.judges, *([policy.subject] if policy.subject else [])]:
            if config.api_key_env:
                names.add(config.api_key_env)
            elif config.provider == "anthropic":
                names.add("ANTHROPIC_API_KEY")  # the adapter's default (judges/_anthropic.py)
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}


def task_options(campaigns: Iterable[Campaign]) -> dict[str, Any]:
    """The ``jurat_job`` task's Ray options: its name, and the judges' keys."""
    env = judge_env(campaigns)
    return {"name": TASK_NAME, **({"runtime_env": {"env_vars": env}} if env else {})}


def cluster_slots(ray: ModuleType, campaign: Campaign, artifacts: int) -> int:
    """Tasks run at once: the cluster's CPUs, at most the smallest judge limit and the
    artifacts (``usable_workers``); ConfigError for a cluster without CPUs."""
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < 1:
        raise ConfigError("--executor ray: the Ray cluster has no CPU to run jobs on (fix: "
                          "add a worker node, `ray start --address … --num-cpus N`)")
    return usable_workers(cpus, campaign, artifacts)


def _outcome(ray: ModuleType, ref: Any) -> TaskOutput:
    """A finished task's output; a failed task's error as a JuratError (exit 4)."""
    resume = "what completed is in the ledger; running the same command again resumes from it"
    try:
        output: TaskOutput = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause
        text = cause.diagnostics() if isinstance(cause, JuratError) else str(cause or exc)
        raise JuratError(f"{TASK_NAME}: {text}\n{resume}") from exc
    except ray.exceptions.RayError as exc:
        raise JuratError(f"{TASK_NAME} was lost {RETRIES + 1} times with its worker: "
                         f"{type(exc).__name__}: {exc}\n{resume}") from exc
    return output


def run_on_ray(campaign: Campaign, inventory: Inventory, options: RunOptions,
               key: PrivateKey, *, address: str | None, on_progress: OnProgress) -> Gathered:
    """Run every artifact's job on the Ray cluster at ``address`` (None: a local runtime,
    started now and stopped after); return what the run keeps, as ``Workers.gather`` does.

    Raises ConfigError when the cluster cannot be reached (nothing written yet), JuratError
    when a job fails (what completed is durable) and KeyboardInterrupt when interrupted
    (the tasks still running are cancelled).
    """
    if campaign.upstream is not None:
        # Its tasks would sign receipts without the upstream receipts their jobs are bound to.
        raise ConfigError(
            f"{campaign.source}: --executor ray does not run campaigns with [upstream] yet "
            "(fix: run them with --executor local)")
    ray = import_ray()
    connect_ray(ray, address)
    try:
        return _dispatch(ray, campaign, inventory, options, key, on_progress)
    finally:
        ray.shutdown()


def _dispatch(ray: ModuleType, campaign: Campaign, inventory: Inventory,
              options: RunOptions, key: PrivateKey, on_progress: OnProgress) -> Gathered:
    slots = cluster_slots(ray, campaign, inventory.count)
    in_flight = artifacts_in_flight(campaign.policy, inventory.first, campaign.intake, slots)
    size = batch_size(inventory.count, slots)
    # num_cpus=1: a worker node runs as many tasks as it has CPUs, each with one core for
    # its sandboxed checks. Only system failures are retried (retry_exceptions is off).
    job = ray.remote(num_cpus=1, max_retries=RETRIES)(run_task).options(
        **task_options([campaign]))
    campaign_ref = ray.put(campaign)
    pem = key_pem(key)
    url = worker_ledger_url(options.ledger_url)
    merged = Gathered(RunTally(campaign.policy), processes=slots)
    batches = _batches(still_as_checked(iter_placed(campaign, selection=options.selection)),
                       size)
    free = list(range(slots - 1, -1, -1))
    running: dict[Any, int] = {}
    try:
        exhausted = False
        while True:
            while free and not exhausted:
                batch = next(batches, None)
                if batch is None:
                    exhausted = True
                    break
                slot = free.pop()
                task = TaskInput(key_pem=pem, ledger_url=url, out_dir=str(options.out_dir),
                                 attempt=options.attempt, run_id=options.run_id,
                                 slot=slot, slots=slots,
                                 in_flight=in_flight, artifacts=batch)
                running[job.remote(campaign_ref, task)] = slot
            if not running:
                break
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                free.append(running.pop(ref))
                output = _outcome(ray, ref)
                for path, signed in output.receipts.items():
                    Path(path).write_bytes(signed)
                merged.merge(output.gathered)
                on_progress(len(output.receipts), output.samples, output.errors,
                            output.spend_usd, output.unpriced)
    except BaseException:
        # An interrupt or a failed job: stop the rest (what they recorded is durable).
        for ref in running:
            ray.cancel(ref, force=True)
        raise
    return merged
