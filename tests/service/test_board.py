"""``jurat serve --board``: the public board at /board/, with no token, rebuilt as
checkpoints are signed; only the page and its listed files are reachable."""

from __future__ import annotations

import re
import time

import httpx
from fastapi.testclient import TestClient

from jurat.receipts import load_public_key, verify_bundle
from tests.service._support import Env, artifact, client, subprocess_server, wait_decided

_RECEIPT = re.compile(r'href="files/([^"]+\.sigstore\.json)"')
_PROOF = re.compile(r'href="files/([^"]+\.sigstore\.json)\.proof\.json"')


def _board_listing(http: TestClient | httpx.Client, want: int, timeout: float = 60) -> str:
    """The board page once ``want`` receipts have their proof on it: a receipt is listed as
    soon as it is in the ledger, its proof once a signed checkpoint covers it."""
    deadline = time.monotonic() + timeout
    while True:
        page = http.get("/board/")
        assert page.status_code == 200, page.text
        if len(set(_PROOF.findall(page.text))) >= want or time.monotonic() > deadline:
            return page.text
        time.sleep(0.1)


def test_the_board_lists_each_verdict_and_its_receipt_verifies(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with client(env, ("text",), board=True) as http:
        job = http.post("/v1/campaigns/text/jobs", headers=alice,
                        json=artifact("e1", "An essay.")).json()["job_id"]
        assert wait_decided(http, job, alice)["status"] == "decided"
        page = _board_listing(http, 1)
        response = http.get("/board/")
        assert response.headers["content-security-policy"].startswith("default-src 'none'")
        names = sorted(set(_RECEIPT.findall(page)))
        assert len(names) == 1 and "e1" in names[0]
        signed = http.get(f"/board/files/{names[0]}")  # no token: the board is public
        assert signed.status_code == 200
        assert verify_bundle(signed.content, load_public_key(env.pub)).ok
        assert http.get(f"/board/files/{names[0]}.proof.json").status_code == 200
        assert http.get("/board/files/checkpoint.txt").status_code == 200
        # A second verdict appears once a later checkpoint covers it: the board is rebuilt.
        second = http.post("/v1/campaigns/text/jobs", headers=alice,
                           json=artifact("e2", "Another essay.")).json()["job_id"]
        assert wait_decided(http, second, alice)["status"] == "decided"
        assert len(set(_RECEIPT.findall(_board_listing(http, 2)))) == 2


def test_only_the_page_and_its_files_are_reachable(env: Env) -> None:
    with client(env, ("text",), board=True) as http:
        for path in ("/board/files/../../l.db", "/board/files/%2e%2e/index.html",
                     "/board/l.db", "/board/files/", "/board/files/.hidden",
                     "/board/files/nope.sigstore.json"):
            response = http.get(path)
            assert response.status_code == 404, (path, response.status_code)
            assert b"SQLite" not in response.content
        # Everything else still needs a token.
        assert http.get("/v1/campaigns").status_code == 401


def test_without_the_option_there_is_no_board(env: Env) -> None:
    with client(env, ("text",)) as http:
        assert http.get("/board/").status_code == 404


def test_jurat_serve_board_serves_it(env: Env) -> None:
    with subprocess_server(env, ("text",), "--board") as (_, url), \
            httpx.Client(base_url=url) as http:
        page = http.get("/board/")
        assert page.status_code == 200 and "<table" in page.text
        assert http.get("/board", follow_redirects=True).status_code == 200
