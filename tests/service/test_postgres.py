"""The service on a PostgreSQL ledger: tokens, jobs, an adjudication, and a clean replay."""

from __future__ import annotations

import pytest

from jurat.ledger import open_ledger
from tests.service._support import GOOD, Env, artifact, client, wait_decided
from tests.support.cli import invoke
from tests.support.postgres import fresh_database


@pytest.mark.postgres
def test_the_service_on_postgresql(env: Env) -> None:
    with fresh_database() as url:
        env.ledger_url = url
        alice = env.auth("contributor", "text", "alice")
        coder = env.auth("contributor", "critical", "alice")
        rita = env.auth("reviewer", "critical", "rita")
        with client(env, ("text", "critical")) as http:
            jobs = [http.post("/v1/campaigns/text/jobs", json=artifact(f"e{n}", f"Text {n}."),
                              headers=alice).json()["job_id"] for n in range(10)]
            assert all(wait_decided(http, job, alice)["status"] == "decided" for job in jobs)
            job = http.post("/v1/campaigns/critical/jobs", headers=coder,
                            json=artifact("sq", GOOD, "text/x-python")).json()["job_id"]
            assert wait_decided(http, job, coder)["decision"]["disposition"] == "escalate"
            r = http.post(f"/v1/jobs/{job}/adjudication", headers=rita,
                          json={"disposition": "accept", "rationale": "Reviewed."})
            assert r.status_code == 202, r.text
        with open_ledger(url) as ledger:
            assert sum(1 for _ in ledger.entries(kind="receipt")) == 12
        replay = invoke("replay", url, "--key", str(env.pub))
        assert replay.exit_code == 0, replay.output
