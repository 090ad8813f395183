"""One job at a time as a Ray task, for a long-running caller (``jurat serve --executor ray``).

The service decides what runs and when (its queue, its per-campaign slots, its job ids);
this only moves each job's run onto the cluster: the same ``jurat_job`` task as a
``jurat run`` batch (runner/_ray_task.py), with one artifact and the service's job id
and receipt inputs. Judge limits hold across the cluster as in runner/_ray.py: at most
``slots`` jobs run at once, each with a distinct slot's part of every judge's limits,
the slot held until the job's task has ended. A task lost with its worker runs again
and resumes from the ledger.
"""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any

from pydantic import JsonValue

from jurat.errors import JuratError
from jurat.models import Artifact, Campaign
from jurat.receipts import PrivateKey
from jurat.runner._ray import (
    RETRIES,
    TASK_NAME,
    cluster_slots,
    connect_ray,
    import_ray,
    task_options,
    worker_ledger_url,
)
from jurat.runner._ray_task import TaskInput, TaskOutput, key_pem, run_task
from jurat.runner._run import artifacts_in_flight

__all__ = ["RayJobs"]


class RayJobs:
    """Jobs of several campaigns on one Ray cluster; ``open`` in the event loop that will
    ``run_one``, ``close`` when done."""

    def __init__(self, campaigns: list[Campaign], *, address: str | None,
                 ledger_url: str | None, key: PrivateKey, out_dir: str) -> None:
        self._campaigns = campaigns
        self._address = address
        self._url = worker_ledger_url(ledger_url)
        self._pem = key_pem(key)
        self._out_dir = out_dir
        self._ray: ModuleType | None = None
        self._job: Any = None
        self._refs: dict[str, Any] = {}
        self._free: asyncio.Queue[int] | None = None
        self.slots = 0

    def open(self) -> None:
        """Start or join the cluster; ConfigError when it cannot be reached."""
        ray = import_ray()
        connect_ray(ray, self._address)
        self._ray = ray
        self.slots = min(cluster_slots(ray, campaign, 1 << 30) for campaign in self._campaigns)
        self._free = asyncio.Queue()
        for slot in range(self.slots):
            self._free.put_nowait(slot)
        self._job = ray.remote(num_cpus=1, max_retries=RETRIES)(run_task).options(
            **task_options(self._campaigns))
        self._refs = {c.id: ray.put(c) for c in self._campaigns}

    def close(self) -> None:
        """Leave the cluster (a local runtime stops)."""
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None

    async def run_one(self, campaign: Campaign, artifact: Artifact, *, job: str,
                      inputs: dict[str, JsonValue]) -> tuple[int, int | None]:
        """Run one job on the cluster; its (review version, receipt entry). Raises
        JuratError when the job failed or its task was lost ``RETRIES`` + 1 times."""
        ray, free = self._ray, self._free
        if ray is None or free is None:
            raise JuratError("the Ray executor is not open")
        slot = await free.get()
        try:
            task = TaskInput(
                key_pem=self._pem, ledger_url=self._url, out_dir=self._out_dir, attempt=1,
                slot=slot, slots=self.slots,
                in_flight=artifacts_in_flight(campaign.policy, None, campaign.intake,
                                              self.slots),
                artifacts=((0, artifact),), job=job, inputs=inputs)
            ref = self._job.remote(self._refs[campaign.id], task)
            try:
                output: TaskOutput = await ref
            except ray.exceptions.RayTaskError as exc:
                cause = exc.cause
                text = cause.diagnostics() if isinstance(cause, JuratError) else str(cause)
                raise JuratError(f"{TASK_NAME}: {text}") from exc
            except ray.exceptions.RayError as exc:
                raise JuratError(f"{TASK_NAME} was lost {RETRIES + 1} times with its worker: "
                                 f"{type(exc).__name__}: {exc}") from exc
        finally:
            free.put_nowait(slot)
        (review,) = output.reviews
        return review
