"""Submitting, reading and idempotency through the HTTP oracle."""

from __future__ import annotations

import concurrent.futures

from jurat.ledger import open_ledger
from jurat.receipts import load_public_key, verify_bundle
from tests.service._support import Env, artifact, client, wait_decided


def test_a_job_is_decided_and_its_receipt_verifies(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        r = http.post("/v1/campaigns/text/jobs", headers=alice,
                      json={**artifact("e1", "An essay."), "assignment": "week-1"})
        assert r.status_code == 202, r.text
        job = r.json()["job_id"]
        body = wait_decided(http, job, alice)
        assert body["status"] == "decided" and body["review_version"] == 1
        assert body["artifact_id"] == "e1" and body["campaign_id"] == "text"
        assert body["decision"]["disposition"] in ("accept", "reject", "escalate")
        signed = http.get(f"/v1/jobs/{job}/receipt", headers=alice).content
    report = verify_bundle(signed, load_public_key(env.pub))
    assert report.ok, report
    from jurat.receipts import read_statement

    predicate = read_statement(signed)["predicate"]
    assert predicate["artifact"]["id"] == "alice:e1"
    assert predicate["inputs"]["contributor"] == "alice"
    assert predicate["inputs"]["job_id"] == job
    assert predicate["inputs"]["assignment"] == "week-1"
    assert predicate["inputs"]["upstream_receipts"] == []


def test_the_same_body_twice_is_one_job_and_no_new_samples(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        first = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "Once."), headers=alice)
        job = first.json()["job_id"]
        wait_decided(http, job, alice)
        with open_ledger(env.ledger_url) as ledger:
            samples = sum(1 for _ in ledger.entries(kind="sample_recorded"))
        again = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "Once."), headers=alice)
        assert again.status_code == 202 and again.json()["job_id"] == job
        assert again.json()["status"] == "decided"
    with open_ledger(env.ledger_url) as ledger:
        assert sum(1 for _ in ledger.entries(kind="sample_recorded")) == samples
        assert sum(1 for _ in ledger.entries(kind="job_received")) == 1
        assert sum(1 for _ in ledger.entries(kind="receipt")) == 1


def test_two_contributors_with_the_same_text_and_id_get_separate_jobs(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    bob = env.auth("contributor", "text", "bob")
    with client(env, ("text",)) as http:
        a = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "Same."), headers=alice)
        b = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "Same."), headers=bob)
        assert a.json()["job_id"] != b.json()["job_id"]
        for job, who in ((a.json()["job_id"], alice), (b.json()["job_id"], bob)):
            assert wait_decided(http, job, who)["review_version"] == 1


def test_200_concurrent_submissions_from_4_clients(env: Env) -> None:
    tokens = [env.auth("contributor", "text", f"c{i}") for i in range(4)]
    with client(env, ("text",)) as http:
        def submit(n: int) -> str:
            who = tokens[n % 4]
            r = http.post("/v1/campaigns/text/jobs", json=artifact(f"e{n}", f"Essay {n}."),
                          headers=who)
            assert r.status_code == 202, r.text
            return str(r.json()["job_id"])

        # Each body is sent twice, from two threads at once: still one job each.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            jobs = list(pool.map(submit, [n for n in range(200) for _ in (0, 1)]))
        assert len(set(jobs)) == 200
        for n, job in enumerate(jobs[::2]):
            assert wait_decided(http, job, tokens[n % 4])["status"] == "decided"
    with open_ledger(env.ledger_url) as ledger:
        receipts = list(ledger.entries(kind="receipt"))
        received = list(ledger.entries(kind="job_received"))
    assert len(received) == 200 and len(receipts) == 200
    assert len({e.job_id for e in receipts}) == 200


def test_a_receipt_its_proof_and_the_checkpoint_verify_offline(env: Env, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import time

    from tests.support.cli import invoke

    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",), checkpoint_interval=0.1) as http:
        job = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "Proven."),
                        headers=alice).json()["job_id"]
        wait_decided(http, job, alice)
        for _ in range(100):
            proof = http.get(f"/v1/jobs/{job}/proof", headers=alice)
            if proof.status_code == 200:
                break
            assert proof.status_code == 409, proof.text
            time.sleep(0.05)
        receipt = tmp_path / "e1.sigstore.json"
        receipt.write_bytes(http.get(f"/v1/jobs/{job}/receipt", headers=alice).content)
        (tmp_path / "e1.sigstore.json.proof.json").write_text(proof.text)
        checkpoint = tmp_path / "checkpoint"
        checkpoint.write_text(http.get("/v1/checkpoint", headers=alice).json()["note"])
    result = invoke("verify", str(receipt), "--key", str(env.pub), "--checkpoint",
                    str(checkpoint), "--log-key", str(env.log_key.with_suffix(".pub")))
    assert result.exit_code == 0, result.output


def test_a_body_larger_than_the_cap_is_413_before_it_is_read(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        r = http.post("/v1/campaigns/text/jobs", headers=alice,
                      json=artifact("big", "x" * (8 * 1024 * 1024)))
        assert r.status_code == 413, r.text[:200]
        r = http.post("/v1/campaigns/text/jobs", headers=alice,
                      json=artifact("big", "x" * (4 * 1024 * 1024 + 10)))
        assert r.status_code == 413 and r.json()["field"] == "artifact.text", r.text[:200]
    with open_ledger(env.ledger_url) as ledger:
        assert list(ledger.entries()) == []


def test_resubmitting_an_artifact_id_with_new_content_chains_review_versions(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        jobs = [http.post("/v1/campaigns/text/jobs", json=artifact("e1", f"Draft {n}."),
                          headers=alice).json()["job_id"] for n in range(3)]
        versions = sorted(wait_decided(http, job, alice)["review_version"] for job in jobs)
    assert versions == [1, 2, 3]
    with open_ledger(env.ledger_url) as ledger:
        assert not list(ledger.entries(kind="evaluation_failed"))


def test_a_failed_job_runs_again_when_resubmitted(env: Env, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from jurat.errors import SandboxError
    from jurat.runner import JobRunner

    real = JobRunner.run_one
    calls = []

    async def flaky(self, artifact, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(artifact.id)
        if len(calls) == 1:
            raise SandboxError("the sandbox could not start")
        return await real(self, artifact, **kwargs)

    monkeypatch.setattr(JobRunner, "run_one", flaky)
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        body = artifact("e1", "Retried.")
        job = http.post("/v1/campaigns/text/jobs", json=body, headers=alice).json()["job_id"]
        failed = wait_decided(http, job, alice)
        assert failed["status"] == "failed" and "sandbox" not in str(failed)
        again = http.post("/v1/campaigns/text/jobs", json=body, headers=alice).json()
        assert again["job_id"] == job
        assert wait_decided(http, job, alice)["status"] == "decided"
    assert len(calls) == 2
