"""Who may do what: each refusal has the right status and carries no data."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from jurat.service import TokenStore
from tests.service._support import Env, artifact, client, wait_decided


def _no_data(response: Any, *secrets: str) -> None:
    """A refusal: an error body, none of the job's data."""
    body = response.json()
    assert set(body) <= {"error", "field", "fix", "detail"}, body
    for secret in secrets:
        assert secret not in response.text


def _decided_job(http: TestClient, env: Env) -> str:
    alice = env.auth("contributor", "text", "alice")
    r = http.post("/v1/campaigns/text/jobs", json=artifact("e1", "Alice's own essay."),
                  headers=alice)
    job = str(r.json()["job_id"])
    assert wait_decided(http, job, alice)["status"] == "decided"
    return job


def test_no_token_and_a_bad_token_are_401(env: Env) -> None:
    with client(env, ("text",)) as http:
        job = _decided_job(http, env)
        for headers in ({}, {"Authorization": "Bearer jt_nonsense"},
                        {"Authorization": "Basic YWxpY2U6cHc="}):
            for path in ("/v1/campaigns", f"/v1/jobs/{job}", f"/v1/jobs/{job}/receipt",
                         "/v1/checkpoint"):
                r = http.get(path, headers=headers)
                assert r.status_code == 401, (path, headers, r.text)
                _no_data(r, "Alice's own essay", "alice:e1")
        assert http.get("/healthz").status_code == 200


def test_a_revoked_token_is_401(env: Env) -> None:
    with client(env, ("text",)) as http:
        job = _decided_job(http, env)
        alice = env.auth("contributor", "text", "alice")
        assert http.get(f"/v1/jobs/{job}", headers=alice).status_code == 200
        with TokenStore(env.ledger_url) as store:
            store.revoke(env.token("contributor", "text", "alice"))
        r = http.get(f"/v1/jobs/{job}", headers=alice)
        assert r.status_code == 401
        _no_data(r, "alice:e1")
        r = http.post("/v1/campaigns/text/jobs", json=artifact("e2", "More."), headers=alice)
        assert r.status_code == 401


def test_a_token_of_another_campaign_sees_nothing(env: Env) -> None:
    with client(env, ("text", "code")) as http:
        job = _decided_job(http, env)
        for role, subject in (("contributor", "alice"), ("operator", None),
                              ("reviewer", None), ("verifier", None)):
            other = env.auth(role, "code", subject)
            r = http.get(f"/v1/jobs/{job}", headers=other)
            assert r.status_code in (403, 404), (role, r.text)
            _no_data(r, "alice:e1")
            r = http.get(f"/v1/jobs/{job}/receipt", headers=other)
            assert r.status_code in (403, 404), (role, r.text)
            campaigns = http.get("/v1/campaigns", headers=other).json()["campaigns"]
            assert [c["id"] for c in campaigns] == ["code"]
        r = http.post("/v1/campaigns/text/jobs", json=artifact("x", "y"),
                      headers=env.auth("contributor", "code", "alice"))
        assert r.status_code == 404
        r = http.get("/v1/campaigns/text/decisions", headers=env.auth("verifier", "code"))
        assert r.status_code == 404


def test_a_contributor_reads_only_its_own_jobs(env: Env) -> None:
    with client(env, ("text",)) as http:
        job = _decided_job(http, env)
        bob = env.auth("contributor", "text", "bob")
        for path in (f"/v1/jobs/{job}", f"/v1/jobs/{job}/receipt", f"/v1/jobs/{job}/proof",
                     f"/v1/jobs/{job}/receipt?version=1"):
            r = http.get(path, headers=bob)
            assert r.status_code == 404, (path, r.text)
            _no_data(r, "alice:e1", "Alice's own essay")
        r = http.get("/v1/campaigns/text/decisions", headers=bob)
        assert r.status_code == 403
        _no_data(r, "alice:e1")
        r = http.post(f"/v1/jobs/{job}/adjudication", headers=bob,
                      json={"disposition": "accept", "rationale": "mine now"})
        assert r.status_code == 403


def test_a_contributor_cannot_submit_as_someone_else(env: Env) -> None:
    with client(env, ("text",)) as http:
        body = {**artifact("e1", "Text."), "contributor": "alice"}
        r = http.post("/v1/campaigns/text/jobs", json=body,
                      headers=env.auth("contributor", "text", "bob"))
        assert r.status_code == 403 and r.json()["field"] == "contributor"


def test_a_verifier_cannot_submit_and_reads_receipts_only(env: Env) -> None:
    with client(env, ("text",)) as http:
        job = _decided_job(http, env)
        verifier = env.auth("verifier", "text")
        r = http.post("/v1/campaigns/text/jobs", json=artifact("v1", "From a verifier."),
                      headers=verifier)
        assert r.status_code == 403
        _no_data(r)
        assert http.get(f"/v1/jobs/{job}", headers=verifier).status_code == 403
        assert http.get(f"/v1/jobs/{job}/receipt", headers=verifier).status_code == 200
        page = http.get("/v1/campaigns/text/decisions", headers=verifier).json()
        assert [d["job_id"] for d in page["decisions"]] == [job] and page["next"] is None
        r = http.post(f"/v1/jobs/{job}/adjudication", headers=verifier,
                      json={"disposition": "accept", "rationale": "looks fine"})
        assert r.status_code == 403
