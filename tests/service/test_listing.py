"""`GET /v1/jobs`: the reviewer's escalation queue, a contributor's own jobs, and query
parameters that are applied or refused (422), never ignored."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.service._support import GOOD, MARKER, Env, artifact, client


def _submit(http: TestClient, headers: dict[str, str], name: str, text: str,
            media_type: str = "text/x-python") -> str:
    r = http.post("/v1/campaigns/critical/jobs", headers=headers,
                  json=artifact(name, text, media_type))
    assert r.status_code == 202, r.text
    job = str(r.json()["job_id"])
    # The long-poll answers once the job is decided (test_long_poll.py has its timing).
    body = http.get(f"/v1/jobs/{job}?wait=60", headers=headers).json()
    assert body["status"] == "decided", body
    return job


def _ids(page: dict[str, Any]) -> list[str]:
    return [row["job_id"] for row in page["jobs"]]


def test_a_reviewer_finds_escalations_in_its_queue_and_adjudicates_from_there(
        env: Env) -> None:
    alice = env.auth("contributor", "critical", "alice")
    bob = env.auth("contributor", "critical", "bob")
    rita = env.auth("reviewer", "critical", "rita")
    with client(env, ("critical", "text")) as http:
        # Code sent as plain text escalates (the tests have no outcome): no sandbox run.
        first = _submit(http, alice, "p1", GOOD, "text/plain")
        second = _submit(http, bob, "p2", GOOD, "text/plain")
        queue = http.get("/v1/jobs?disposition=escalate", headers=rita)
        assert queue.status_code == 200, queue.text
        rows = queue.json()["jobs"]
        # Oldest first; nothing is decided otherwise yet.
        assert _ids(queue.json()) == [first, second] and queue.json()["next"] is None
        assert all(r["decision"]["disposition"] == "escalate" for r in rows)
        assert _ids(http.get("/v1/jobs?disposition=reject", headers=rita).json()) == []
        # Paged with the decisions listing's cursor.
        page = http.get("/v1/jobs?disposition=escalate&limit=1", headers=rita).json()
        assert _ids(page) == [first] and page["next"]
        rest = http.get(f"/v1/jobs?disposition=escalate&limit=1&cursor={page['next']}",
                        headers=rita).json()
        assert _ids(rest) == [second] and rest["next"] is None
        # The reviewer settles the oldest straight from the queue: its latest review is
        # now a reject, so it leaves the queue.
        oldest = rows[0]["job_id"]
        r = http.post(f"/v1/jobs/{oldest}/adjudication", headers=rita,
                      json={"disposition": "reject", "rationale": "No test evidence."})
        assert r.status_code == 202, r.text
        assert _ids(http.get("/v1/jobs?disposition=escalate", headers=rita).json()) == [second]
        settled = http.get("/v1/jobs?disposition=reject&campaign_id=critical",
                           headers=rita).json()
        assert _ids(settled) == [first]
        assert settled["jobs"][0]["review_version"] == 2
        # A verifier reads receipts, not jobs.
        assert http.get("/v1/jobs", headers=env.auth("verifier")).status_code == 403


def test_a_contributor_lists_its_own_jobs_and_never_another_s(env: Env) -> None:
    alice = env.auth("contributor", "*", "alice")
    bob = env.auth("contributor", "*", "bob")
    with client(env, ("critical", "text")) as http:
        a1 = _submit(http, alice, "a1", GOOD, "text/plain")
        b1 = _submit(http, bob, "b1", GOOD, "text/plain")
        r = http.post("/v1/campaigns/text/jobs", headers=alice, json=artifact("a2", "Essay."))
        a2 = r.json()["job_id"]
        http.get(f"/v1/jobs/{a2}?wait=60", headers=alice)
        # Bob sends Alice's bytes again: his jobs copy her work, and every view says so
        # (issue 37: a copy is told whose work it copies, by its job id only, and is never
        # paid); Alice learns nothing of his jobs.
        b2 = _submit(http, bob, "b2", GOOD, "text/plain")
        mine = http.get("/v1/jobs", headers=alice)
        assert mine.status_code == 200, mine.text
        assert _ids(mine.json()) == [a1, a2]
        assert b1 not in mine.text and b2 not in mine.text and "bob" not in mine.text
        theirs = http.get("/v1/jobs", headers=bob).json()
        assert _ids(theirs) == [b1, b2]
        assert [row["duplicate_of"] for row in theirs["jobs"]] == [a1, a1]
        assert "alice" not in str(theirs) and MARKER not in str(theirs)
        # Filters apply within its own jobs.
        assert _ids(http.get("/v1/jobs?campaign_id=text", headers=alice).json()) == [a2]
        assert _ids(http.get("/v1/jobs?campaign_id=critical&disposition=escalate",
                             headers=alice).json()) == [a1]
        # The operator sees everyone's, and the duplicate mark.
        every = http.get("/v1/jobs?campaign_id=critical", headers=env.auth("operator")).json()
        assert _ids(every) == [a1, b1, b2]
        assert [row["duplicate_of"] for row in every["jobs"]] == [None, a1, a1]
        # A contributor token of one campaign lists nothing of another.
        scoped = env.auth("contributor", "text", "alice")
        assert _ids(http.get("/v1/jobs", headers=scoped).json()) == [a2]


@pytest.mark.parametrize(("query", "field", "words"), [
    # A disposition is not a status: refused with the statuses there are.
    ("/v1/jobs?status=escalate", "status",
     "'queued', 'running', 'decided', 'failed' or 'superseded'"),
    ("/v1/jobs?status=escalate", "status", "?disposition=escalate"),
    ("/v1/jobs?disposition=maybe", "disposition", "'accept', 'reject' or 'escalate'"),
    ("/v1/jobs?state=decided", "<unknown key>",
     "campaign_id, cursor, disposition, limit, status"),
    ("/v1/jobs?status=decided&status=queued", "status", "give it once"),
    ("/v1/jobs?limit=0", "limit", "greater than or equal to 1"),
    ("/v1/jobs?campaign_id=elsewhere", "campaign_id", "one of: critical"),
    ("/v1/campaigns/critical/decisions?status=escalate", "<unknown key>", "cursor, limit"),
    ("/v1/campaigns?kind=rubric", "<unknown key>", "takes no query parameters"),
    ("/v1/jobs/0123?wait=0", "wait", "greater than 0"),
    ("/v1/jobs/0123?wait=61", "wait", "less than or equal to 60"),
    ("/v1/jobs/0123?wait=nan", "wait", "wait: Input should be"),
    ("/v1/jobs/0123?timeout=5", "<unknown key>", "takes wait"),
    ("/v1/jobs/0123/receipt?v=1", "<unknown key>", "takes version"),
])
def test_an_unknown_or_invalid_query_parameter_is_a_422_naming_it(
        env: Env, query: str, field: str, words: str) -> None:
    with client(env, ("critical",)) as http:
        r = http.get(query, headers=env.auth("operator"))
        assert r.status_code == 422, r.text
        body = r.json()
        assert body["field"] == field, body
        assert words in body["error"] + " " + body["fix"], body


def test_an_unknown_query_parameter_is_never_repeated(env: Env) -> None:
    with client(env, ("critical",)) as http:
        for name in ("<script>x", "statvs"):
            r = http.get("/v1/jobs", params={name: "1"}, headers=env.auth("operator"))
            assert r.status_code == 422 and r.json()["field"] == "<unknown key>"
            assert name not in r.text, r.text
        # Without a token it is a 401 first: the parameters of nobody's request are read.
        assert http.get("/v1/jobs?state=x").status_code == 401
