"""`GET /v1/jobs/{job_id}?wait=S`: the answer comes as soon as the job has its receipt,
woken by the run that finished it, not after the wait and not by polling.

The job's run is held at a gate the test opens, and the wait is known to have started
(the service's ``wait_settled`` was entered) before the gate opens; so a response that
shows the receipt was woken by the job, never answered before it was decided.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.testclient import TestClient

import jurat.service._service as service_module
from jurat.ledger import open_ledger
from jurat.runner import JobRunner
from jurat.service import Service
from tests.service._support import Env, artifact, client


@dataclass
class Gate:
    """Holds every job's run until ``open()``; says when a long-poll has begun."""

    waiting: threading.Event = field(default_factory=threading.Event)
    running: threading.Event = field(default_factory=threading.Event)
    held: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = field(default_factory=list)

    def open(self) -> None:
        for loop, event in self.held:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    gate = Gate()
    run_one = JobRunner.run_one
    wait_settled = Service.wait_settled

    async def held_run(self: JobRunner, *args: Any, **kwargs: Any) -> Any:
        event = asyncio.Event()
        gate.held.append((asyncio.get_running_loop(), event))
        gate.running.set()
        await event.wait()
        return await run_one(self, *args, **kwargs)

    async def noted_wait(self: Service, state: Any, seconds: float) -> None:
        gate.waiting.set()
        await wait_settled(self, state, seconds)

    # Only the finishing run can wake a wait here (test 3 brings the ledger reads back).
    monkeypatch.setattr(service_module, "FALLBACK_POLL_S", 3600.0)
    monkeypatch.setattr(JobRunner, "run_one", held_run)
    monkeypatch.setattr(Service, "wait_settled", noted_wait)
    yield gate
    gate.open()  # nothing stays held when a test fails


def _submit(http: TestClient, headers: dict[str, str], gate: Gate) -> str:
    r = http.post("/v1/campaigns/text/jobs", headers=headers, json=artifact("e1", "Essay."))
    assert r.status_code == 202, r.text
    assert gate.running.wait(30), "the job never started"
    return str(r.json()["job_id"])


def test_the_long_poll_answers_as_soon_as_the_receipt_exists(env: Env, gate: Gate) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http, concurrent.futures.ThreadPoolExecutor(1) as pool:
        job = _submit(http, alice, gate)
        assert http.get(f"/v1/jobs/{job}", headers=alice).json()["status"] == "running"
        polled = pool.submit(http.get, f"/v1/jobs/{job}?wait=60", headers=alice)
        assert gate.waiting.wait(30), "the long-poll never began"
        assert not polled.done()  # the job is held: nothing to answer yet
        gate.open()
        # A wait that only ended at its 60 s would miss this; the job is decided at once.
        body = polled.result(timeout=30).json()
        assert body["status"] == "decided" and body["review_version"] == 1, body
        assert http.get(f"/v1/jobs/{job}/receipt", headers=alice).status_code == 200


def test_a_long_poll_that_times_out_gives_the_job_as_it_is(env: Env, gate: Gate) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        job = _submit(http, alice, gate)
        body = http.get(f"/v1/jobs/{job}?wait=0.05", headers=alice).json()
        assert body["status"] == "running" and body["decision"] is None, body
        # Another contributor's long-poll is the same 404 as for any job it may not read.
        other = http.get(f"/v1/jobs/{job}?wait=60", headers=env.auth("contributor", "text",
                                                                      "bob"))
        assert other.status_code == 404
        gate.open()
        assert http.get(f"/v1/jobs/{job}?wait=60", headers=alice).json()["status"] == "decided"


def test_a_receipt_another_server_recorded_ends_the_wait(env: Env, gate: Gate,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """Servers may share a ledger: the wait reads it now and then (``FALLBACK_POLL_S``)
    for a receipt made elsewhere, here stood in for by a receipt already in the ledger."""
    alice = env.auth("contributor", "text", "alice")
    monkeypatch.setattr(service_module, "FALLBACK_POLL_S", 0.05)
    with client(env, ("text",)) as http:
        done = http.post("/v1/campaigns/text/jobs", headers=alice,
                         json=artifact("e0", "Done."))
        gate.running.wait(30)
        gate.open()
        decided = http.get(f"/v1/jobs/{done.json()['job_id']}?wait=60", headers=alice).json()
        assert decided["status"] == "decided"
        gate.running.clear()
        gate.held.clear()
        job = _submit(http, alice, gate)  # held for good: only the ledger can decide it
        with open_ledger(env.ledger_url) as ledger:
            elsewhere = {job: [(1, next(ledger.entries(kind="receipt")).seq)]}
        monkeypatch.setattr(Service, "_receipts_of", lambda self, j: elsewhere.get(j, []))
        body = http.get(f"/v1/jobs/{job}?wait=60", headers=alice).json()
        assert body["status"] == "decided" and body["review_version"] == 1, body
