"""The ledger is the durable queue: a real `jurat serve`, SIGKILLed with 50 jobs in flight
and started again, decides every job once, without drawing a recorded sample again."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

import httpx
import pytest

from jurat.ledger import open_ledger
from tests.service._support import artifact, make_env, subprocess_server, wait_decided
from tests.support.cli import invoke


@pytest.mark.slow
def test_sigkill_with_50_jobs_in_flight_then_restart(tmp_path: Path) -> None:
    env = make_env(tmp_path, samples=3, latency=1500)
    token = env.auth("contributor", "text", "alice")
    with subprocess_server(env, ("text",)) as (proc, url), httpx.Client(base_url=url) as http:
        jobs = []
        for n in range(50):
            r = http.post("/v1/campaigns/text/jobs", json=artifact(f"e{n}", f"Essay {n}."),
                          headers=token)
            assert r.status_code == 202, r.text
            jobs.append(r.json()["job_id"])
        states = Counter(http.get(f"/v1/jobs/{j}", headers=token).json()["status"]
                         for j in jobs)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert states["decided"] < 50, states  # the kill did catch jobs in flight
    with open_ledger(env.ledger_url) as ledger:
        before = Counter(e.kind for e in ledger.entries())
    assert before["job_received"] == 50 and before["receipt"] < 50, before
    with subprocess_server(env, ("text",)) as (proc, url), httpx.Client(base_url=url) as http:
        for job in jobs:
            state = wait_decided(http, job, token)
            assert state["status"] == "decided", state
        # A submission after the restart is still the same job.
        again = http.post("/v1/campaigns/text/jobs", json=artifact("e0", "Essay 0."),
                          headers=token)
        assert again.json()["job_id"] == jobs[0]
    with open_ledger(env.ledger_url) as ledger:
        receipts = Counter(e.job_id for e in ledger.entries(kind="receipt"))
        samples = Counter((e.job_id, e.payload["vote"]["judge"], e.payload["vote"]["sample"])
                          for e in ledger.entries(kind="sample_recorded"))
        received = sum(1 for _ in ledger.entries(kind="job_received"))
    assert received == 50
    assert sorted(receipts) == sorted(jobs) and set(receipts.values()) == {1}
    assert len(samples) == 50 * 3 * 3 and set(samples.values()) == {1}  # none drawn twice
    replay = invoke("replay", env.ledger_url, "--key", str(env.pub))
    assert replay.exit_code == 0, replay.output
