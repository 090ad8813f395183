"""Bounded clients (issue 30): a real server on 127.0.0.1 with small limits. A bad token
is refused before any body byte is read, bodies over the cap are 413 (declared or
chunked), a token over its rate is 429 with Retry-After, a dripping client is cut off
while others are served, and one address holds at most its cap of connections."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jurat.ledger import open_ledger
from jurat.service._guard import RateLimiter
from jurat.service._limits import ClientLimits
from tests.service._live import closed_by_server, live_server, read_response
from tests.service._support import Env, artifact, wait_decided
from tests.support.cli import invoke

SUBMIT = "/v1/campaigns/text/jobs"


def _head(path: str, token: str, length: int, *, chunked: bool = False) -> bytes:
    size = "transfer-encoding: chunked" if chunked else f"content-length: {length}"
    return (f"POST {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n"
            f"content-type: application/json\r\n{size}\r\n\r\n").encode()


def test_a_bad_token_is_401_before_any_body_byte_is_read(env: Env) -> None:
    with live_server(env, ClientLimits(rate_per_s=0)) as live:
        # A gigabyte declared, nothing sent: the answer comes without waiting for it.
        with live.connect() as conn:
            conn.sendall(_head(SUBMIT, "jt_bogus", 1 << 30))
            status, headers, body = read_response(conn)
            assert status == 401 and headers["connection"] == "close", (status, headers)
            assert b"a valid Bearer token is required" in body
            assert closed_by_server(conn)
        # Thirty connections that each send a megabyte of a 13 MB body with a bogus token.
        conns = [live.connect() for _ in range(30)]
        try:
            for conn in conns:
                conn.sendall(_head(SUBMIT, "jt_" + "x" * 43, 13_000_000) + b"{" * 1_000_000)
            assert [read_response(conn)[0] for conn in conns] == [401] * 30
        finally:
            for conn in conns:
                conn.close()
        # A real token without the role is refused before the body too: 403, no parse.
        verifier = env.token("verifier")
        with live.connect() as conn:
            conn.sendall(_head(SUBMIT, verifier, 1 << 30))
            status, _, body = read_response(conn)
            assert status == 403 and b"cannot submit jobs" in body, body
        assert live.body_bytes == 0


def test_a_body_over_the_cap_is_413_declared_or_chunked(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    with live_server(env, ClientLimits(rate_per_s=0), max_body_bytes=4096) as live, \
            httpx.Client(base_url=live.url, timeout=30) as http:
        fits = http.post(SUBMIT, headers=alice, json=artifact("e1", "A short essay."))
        assert fits.status_code == 202, fits.text
        # Declared: refused from the head, whatever follows (8 MiB are sent regardless).
        big = http.post(SUBMIT, headers=alice, json=artifact("e2", "x" * (8 << 20)))
        assert big.status_code == 413 and big.headers["connection"] == "close", big.text
        assert big.json()["error"] == "the request body is larger than 4096 bytes"
        read_before = live.body_bytes

        # Chunked: counted as it arrives, refused at the first chunk over the cap.
        def chunks() -> Iterator[bytes]:
            yield b'{"artifact": {"id": "e3", "text": "'
            for _ in range(64):
                yield b"y" * 1024
            yield b'"}}'

        chunked = http.post(SUBMIT, headers={**alice, "content-type": "application/json"},
                            content=chunks())
        assert chunked.status_code == 413, chunked.text
        assert chunked.json()["field"] is None and "4096" in chunked.json()["error"]
        assert live.body_bytes - read_before <= 4096 + 65536  # never the whole 64 KiB
        # The refusal is not lost to a reset: the server shuts its side and discards what
        # the client still sends (a lingering close) instead of closing on unread input.
        with live.connect() as conn:
            conn.sendall(_head(SUBMIT, env.token("contributor", "text", "alice"), 1 << 30)
                         + b"z" * 300_000)
            status, headers, _ = read_response(conn)
            assert status == 413 and headers["connection"] == "close"
            conn.sendall(b"z" * 300_000)
            assert conn.recv(1) == b""  # end of stream, not ECONNRESET
        assert wait_decided(http, fits.json()["job_id"], alice)["status"] == "decided"
    with open_ledger(env.ledger_url) as ledger:
        received = [e for e in ledger.entries() if e.kind == "job_received"]
    assert len(received) == 1


def test_a_token_over_its_rate_is_429_with_retry_after(env: Env) -> None:
    alice, bob = env.auth("contributor", "text", "alice"), env.auth("contributor", "text", "bob")
    with live_server(env, ClientLimits(rate_per_s=0.2, rate_burst=3)) as live, \
            httpx.Client(base_url=live.url, timeout=30) as http:
        assert [http.get("/v1/campaigns", headers=alice).status_code
                for _ in range(3)] == [200] * 3
        over = http.get("/v1/campaigns", headers=alice)
        assert over.status_code == 429, over.text
        assert 1 <= int(over.headers["retry-after"]) <= 5
        assert "0.2 requests per second" in over.json()["error"]
        # A body is not read for a token over its rate; another token is not affected.
        refused = http.post(SUBMIT, headers=alice, json=artifact("e1", "An essay."))
        assert refused.status_code == 429
        assert http.get("/v1/campaigns", headers=bob).status_code == 200
        assert http.get("/healthz").status_code == 200  # no token, no bucket


def test_the_rate_limiter_refills_at_its_rate() -> None:
    now = [100.0]
    rates = RateLimiter(rate=2.0, burst=2, clock=lambda: now[0])
    assert [rates.take("a"), rates.take("a")] == [0.0, 0.0]
    assert rates.take("a") == pytest.approx(0.5)
    assert rates.take("b") == 0.0
    now[0] += 0.5
    assert rates.take("a") == 0.0 and rates.take("a") > 0
    now[0] += 60
    assert [rates.take("a") for _ in range(3)][:2] == [0.0, 0.0]  # refilled to the burst
    assert RateLimiter(rate=0, burst=1).take("a") == 0.0


def test_a_dripping_client_is_cut_off_while_another_is_served(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    limits = ClientLimits(rate_per_s=0, body_timeout_s=1.5, header_timeout_s=1.5)
    with live_server(env, limits) as live, \
            httpx.Client(base_url=live.url, timeout=30) as http:
        body_drip, head_drip = live.connect(), live.connect()
        stop = threading.Event()
        served: list[int] = []

        def drip() -> None:
            body_drip.sendall(_head(SUBMIT, env.token("contributor", "text", "alice"), 100))
            head_drip.sendall(b"GET /v1/campaigns HTTP/1.1\r\nhost: x\r\n")
            while not stop.is_set():
                for conn, byte in ((body_drip, b" "), (head_drip, b"x")):
                    try:
                        conn.sendall(byte)
                    except OSError:
                        pass
                time.sleep(0.2)

        dripper = threading.Thread(target=drip, daemon=True)
        dripper.start()
        try:
            # Served while both drip: a submission, decided.
            job = http.post(SUBMIT, headers=alice, json=artifact("e1", "An essay."))
            served.append(job.status_code)
            decided = wait_decided(http, job.json()["job_id"], alice)
            assert served == [202] and decided["status"] == "decided"
            status, headers, body = read_response(body_drip)
            assert status == 408 and headers["connection"] == "close", body
            assert b"did not arrive within 1.5 s" in body
            status, _, body = read_response(head_drip)
            assert status == 408 and b"request head" in body, body
            began = time.monotonic()
            assert closed_by_server(body_drip) and closed_by_server(head_drip)
            assert time.monotonic() - began < 10  # closed, not held while they drip
        finally:
            stop.set()
            dripper.join(timeout=10)
            body_drip.close()
            head_drip.close()


def test_one_address_holds_at_most_its_cap_of_connections(env: Env) -> None:
    alice = env.auth("contributor", "text", "alice")
    limits = ClientLimits(rate_per_s=0, max_connections_per_address=2, header_timeout_s=20)
    with live_server(env, limits) as live:
        idle = [live.connect(), live.connect()]
        with live.connect() as third:
            third.sendall(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            status, headers, body = read_response(third)
            assert status == 503 and headers["retry-after"] == "1", (status, body)
            assert b"already has 2 open connections" in body
            assert closed_by_server(third)
        idle.pop().close()
        deadline = time.monotonic() + 10
        while True:  # the server notices the close on its next turn of the loop
            with httpx.Client(base_url=live.url, timeout=10) as http:
                answer = http.get("/v1/campaigns", headers=alice)
            if answer.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert answer.status_code == 200, answer.text
        idle.pop().close()


def test_serve_refuses_a_limit_out_of_range(tmp_path: Path, env: Env) -> None:
    result = invoke("serve", str(env.campaigns["text"]), "--ledger", env.ledger_url,
                    "--key", str(env.key), "--log-key", str(env.log_key),
                    "--body-timeout", "0")
    assert result.exit_code == 3, result.output
    assert "--body-timeout 0.0: must be a positive number of seconds" in result.output
