"""Requests the schema admits but jurat cannot use: each is a 4xx naming the field and the
fix (``ErrorOut``), never a 500, and nothing is recorded (issue 25)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from jurat.ledger import open_ledger
from jurat.receipts import MAX_DEPTH, keygen
from tests.service._support import TEXT, Env, client

#: JSON's escape for half of a surrogate pair: valid JSON, but no Unicode text.
LONE = "\\ud800"


def _post(http: TestClient, path: str, body: str, headers: dict[str, str]) -> Any:
    return http.post(path, content=body.encode(), headers={
        **headers, "Content-Type": "application/json"})


def _nothing_recorded(env: Env) -> None:
    with open_ledger(env.ledger_url) as ledger:
        assert list(ledger.entries(kind="job_received")) == []


def _refused(response: Any, status: int, field: str | None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["field"] == field, body
    assert body["error"] and body["fix"], body
    return body


def test_content_base64_with_a_character_outside_ascii_is_refused(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        r = _post(http, "/v1/campaigns/text/jobs",
                  '{"artifact": {"id": "e1", "content_base64": "YWJj\\u00e9ZA=="}}', alice)
        body = _refused(r, 422, "artifact.content_base64")
        assert "character 4" in body["error"] and "base64" in body["fix"]
    _nothing_recorded(env)


@pytest.mark.parametrize(("template", "field"), [
    ('{{"artifact": {{"id": "e1", "text": "{s}"}}}}', "artifact.text"),
    ('{{"artifact": {{"id": "e1", "text": "ok {s} ok"}}}}', "artifact.text"),
    ('{{"artifact": {{"id": "e1", "text": "x", "media_type": "text/{s}"}}}}',
     "artifact.media_type"),
    ('{{"artifact": {{"id": "e1", "text": "x", "task": "{s}"}}}}', "artifact.task"),
    ('{{"artifact": {{"id": "{s}", "text": "x"}}}}', "artifact.id"),
    ('{{"artifact": {{"id": "e1", "text": "x"}}, "assignment": "{s}"}}', "assignment"),
])
def test_a_lone_surrogate_in_a_text_field_is_refused(env: Env, template: str,
                                                     field: str) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        r = _post(http, "/v1/campaigns/text/jobs", template.format(s=LONE), alice)
        body = _refused(r, 422, field)
        assert "surrogate" in body["error"], body
        # A whole pair (U+1F600) is text, and is taken.
        if field == "artifact.text":
            ok = _post(http, "/v1/campaigns/text/jobs",
                       template.format(s="\\ud83d\\ude00"), alice)
            assert ok.status_code == 202, ok.text


def test_a_lone_surrogate_in_a_rationale_is_refused(env: Env) -> None:
    rita = env.auth("reviewer", "critical", "rita")
    alice = env.auth("contributor", "critical", "alice")
    with client(env, ("critical",)) as http:
        # A job that exists: the guard refuses one that does not (404) before any body
        # byte is read (service/_guard.py), so the rationale is parsed only for a real one.
        made = http.post("/v1/campaigns/critical/jobs", headers=alice,
                         json={"artifact": {"id": "s1", "text": "an answer"}})
        assert made.status_code == 202, made.text
        job = made.json()["job_id"]
        r = _post(http, f"/v1/jobs/{job}/adjudication",
                  f'{{"disposition": "accept", "rationale": "fine {LONE}"}}', rita)
        assert "surrogate" in _refused(r, 422, "rationale")["error"]


def _upstream(env: Env) -> None:
    keygen(env.root / "stage1")
    path = env.root / "up.toml"
    path.write_text(TEXT.format(samples=1, latency=0).replace('id = "text"', 'id = "up"')
                    + '\n[upstream]\nkeys = [{path = "stage1/jurat.pub", stage = "stage1"}]\n')
    env.campaigns["up"] = path


def test_an_upstream_receipt_nested_too_deep_is_refused(env: Env) -> None:
    _upstream(env)
    alice = env.auth("contributor", "up", "alice")

    def nested(depth: int) -> str:
        # ``depth`` arrays and objects in all: the bundle's object, then arrays.
        return json.dumps({"artifact": {"id": "e1", "text": "x"}, "upstream_receipts": [
            {"a": json.loads("[" * (depth - 1) + "]" * (depth - 1))}]})

    with client(env, ("up",)) as http:
        # Deep enough for the canonical serialiser to run out of stack: refused up front.
        for depth in (MAX_DEPTH + 1, 900):
            r = _post(http, "/v1/campaigns/up/jobs", nested(depth), alice)
            body = _refused(r, 422, "upstream_receipts[0]")
            assert f"deeper than {MAX_DEPTH}" in body["error"], body
        # At the limit it is read, and refused for what it is: not a bundle.
        r = _post(http, "/v1/campaigns/up/jobs", nested(MAX_DEPTH), alice)
        body = _refused(r, 422, "upstream_receipts[0]")
        assert "Sigstore bundle" in body["error"], body
    _nothing_recorded(env)


@pytest.mark.parametrize("body", ['{"artifact": {"id": "e1", "text": "x"}} trailing',
                                  '{"artifact": ', "[1, 2,]"])
def test_a_body_that_is_not_json_is_a_400_that_names_no_field(env: Env, body: str) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",)) as http:
        r = _post(http, "/v1/campaigns/text/jobs", body, alice)
        refused = _refused(r, 400, None)
        assert refused["error"].startswith("the request body is not JSON"), refused
    _nothing_recorded(env)
