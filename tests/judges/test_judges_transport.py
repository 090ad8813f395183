"""Judge calls over aiohttp (judges/_http.py) against raw, sometimes hostile, loopback
servers; and rate limiting.

Every exchange goes through ``exchange`` (the boundary where aiohttp's failures become
jurat's kinds) on a ``JudgeSession``, as a judge's calls do.
"""

from __future__ import annotations

import asyncio
import datetime
import gzip
import ipaddress
import os
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yarl

from jurat.errors import JudgeOutputError
from jurat.judges import EndpointLimiter, Engine, TokenBucket
from jurat.judges._anthropic import AnthropicJudge
from jurat.judges._http import USER_AGENT, Endpoint, JudgeSession, exchange
from jurat.judges._openai import OpenAICompatJudge
from jurat.judges._protocol import MAX_RESPONSE_BYTES, JudgeCall, Prompt, TransportFailure
from tests.support.builders import artifact, judge
from tests.support.clock import FakeClock

Handler = Callable[[bytes], list[bytes] | None]


async def serve(handler: Handler) -> tuple[asyncio.Server, int, list[bytes], list[int]]:
    """A raw server: ``handler(request head)`` returns chunks to write (a final empty chunk:
    close after writing), or None to close without answering. Returns the server, its
    port, every request's head and body as received, and one entry per connection."""
    requests: list[bytes] = []
    connections: list[int] = []

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), 0)
                requests.append(head + await reader.readexactly(length))
                chunks = handler(head)
                if chunks is None:
                    writer.close()
                    return
                for chunk in chunks:
                    writer.write(chunk)
                    await writer.drain()
                if chunks and chunks[-1] == b"":
                    writer.close()
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
        except asyncio.CancelledError:  # the test is over: its loop is closing
            writer.close()

    server = await asyncio.start_server(client, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], requests, connections


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    http = JudgeSession()
    yield await http.get()
    await http.aclose()


TIMEOUT = aiohttp.ClientTimeout(total=5, connect=5)


def post(session: aiohttp.ClientSession, port: int, *, path: str = "/v1/chat/completions",
         timeout: aiohttp.ClientTimeout = TIMEOUT) -> Awaitable[tuple[int, str | None, bytes]]:
    url = yarl.URL(f"http://127.0.0.1:{port}{path}")
    return exchange(session, Endpoint(url, {"Accept-Encoding": "identity"}, timeout, True), b"{}")


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


# -- what the old hand-written transport did, still true --------------------------------------


async def test_content_length_keep_alive_reuses_one_connection(
        session: aiohttp.ClientSession) -> None:
    server, port, _, conns = await serve(lambda head: [OK])
    async with server:
        for _ in range(3):
            assert await post(session, port) == (200, None, b"ok")
    assert len(conns) == 1


async def test_chunked_interim_and_split_writes(session: aiohttp.ClientSession) -> None:
    body = [
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n",
        b"5\r\npedia\r\n",
        b"0\r\nX-Trailer: 1\r\n\r\n",
    ]
    server, port, _, conns = await serve(lambda head: body)
    async with server:
        assert (await post(session, port))[2] == b"Wikipedia"
        assert (await post(session, port))[2] == b"Wikipedia"
    assert len(conns) == 1


async def test_body_until_close_and_connection_close(session: aiohttp.ClientSession) -> None:
    replies = iter([[b"HTTP/1.0 200 OK\r\n\r\nall of it", b""], None])
    server, port, _, conns = await serve(lambda head: next(replies))
    async with server:
        assert (await post(session, port))[2] == b"all of it"
        with pytest.raises(TransportFailure) as failed:
            await post(session, port)
    assert failed.value.kind == "connection"
    assert len(conns) == 2  # the read-until-close connection was not reused


async def test_an_announced_oversized_body_is_refused_before_it_is_read(
        session: aiohttp.ClientSession) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (MAX_RESPONSE_BYTES + 1)
    server, port, _, _ = await serve(lambda _: [head + b"x" * 1000])  # and then nothing
    async with server:
        with pytest.raises(JudgeOutputError, match="announced") as failed:
            await post(session, port, timeout=aiohttp.ClientTimeout(total=30))
    assert failed.value.kind == "oversized"


async def test_a_body_just_within_the_limit_is_read(session: aiohttp.ClientSession) -> None:
    body = b"x" * MAX_RESPONSE_BYTES
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (
        len(body), body)
    server, port, _, _ = await serve(lambda _: [chunked])
    async with server:
        assert (await post(session, port))[2] == body


async def test_a_closed_idle_connection_is_not_reused(session: aiohttp.ClientSession) -> None:
    server, port, requests, conns = await serve(lambda head: [OK, b""])
    async with server:
        for _ in range(3):
            assert (await post(session, port))[2] == b"ok"
            await asyncio.sleep(0.02)  # the server's close arrives while the connection idles
    assert len(conns) == 3 and len(requests) == 3


async def test_a_dropped_request_is_an_error_not_a_silent_resend(
        session: aiohttp.ClientSession) -> None:
    """aiohttp re-sends a request whose kept-alive connection dropped, but only for
    idempotent methods: a judge's POST fails once, and the engine counts it as an attempt
    (tests/judges/test_judges_engine.py, test_a_transport_retry_is_an_attempt_not_a_sample)."""
    answers = iter([[OK], None])
    server, port, requests, conns = await serve(lambda head: next(answers))
    async with server:
        assert (await post(session, port))[2] == b"ok"
        with pytest.raises(TransportFailure) as failed:
            await post(session, port)
    assert failed.value.kind == "connection"
    assert (len(requests), len(conns)) == (2, 1)  # sent once, on the kept-alive connection


async def test_refused_connection_is_a_connection_error(session: aiohttp.ClientSession) -> None:
    server, port, _, _ = await serve(lambda head: None)
    server.close()
    await server.wait_closed()
    with pytest.raises(TransportFailure) as failed:
        await post(session, port)
    assert failed.value.kind == "connection"


async def test_a_head_that_never_ends_is_refused(session: aiohttp.ClientSession) -> None:
    lines = [b"HTTP/1.1 200 OK\r\n"] + [b"X-%d: %s\r\n" % (i, b"v" * 100) for i in range(500)]
    server, port, _, _ = await serve(lambda _: lines)
    async with server:
        with pytest.raises(TransportFailure) as failed:
            await post(session, port)
    assert failed.value.kind == "connection"


# -- timeouts -------------------------------------------------------------------------------


async def test_the_connect_timeout() -> None:
    """A listener whose accept queue is full: the handshake never completes."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(8):
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(filler)
    http = JudgeSession()
    try:
        with pytest.raises(TransportFailure, match="timed out") as failed:
            await post(await http.get(), port, timeout=aiohttp.ClientTimeout(total=5, connect=0.2))
    finally:
        await http.aclose()
        for sock in [listener, *fillers]:
            sock.close()
    assert failed.value.kind == "timeout"


async def test_the_total_timeout_covers_a_trickling_body(session: aiohttp.ClientSession) -> None:
    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        try:
            for _ in range(100):
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(0.05)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(trickle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    start = loop.time()
    async with server:
        with pytest.raises(TransportFailure) as failed:
            await post(session, port, timeout=aiohttp.ClientTimeout(total=0.3, connect=0.3))
    assert failed.value.kind == "timeout" and loop.time() - start < 2


async def test_no_answer_at_all_is_a_timeout(session: aiohttp.ClientSession) -> None:
    server, port, _, _ = await serve(lambda head: [])
    async with server:
        with pytest.raises(TransportFailure) as failed:
            await post(session, port, timeout=aiohttp.ClientTimeout(total=0.2, connect=0.2))
    assert failed.value.kind == "timeout"


# -- what only the old transport's plain-http path had, now for every call --------------------


async def test_an_encoded_answer_is_refused_unread(session: aiohttp.ClientSession) -> None:
    """A small gzip body can expand to any size: identity is asked for, and an endpoint that
    compresses anyway is refused, never decoded (the engine records the failure as the
    sample's error once its retries run out)."""
    packed = gzip.compress(b"0" * 1_000_000)  # 1 MB out of about a kilobyte
    reply = (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
             % len(packed)) + packed
    server, port, requests, _ = await serve(lambda head: [reply])
    async with server:
        with pytest.raises(TransportFailure, match="gzip") as failed:
            await post(session, port)
    assert failed.value.kind == "connection"
    assert b"\r\nAccept-Encoding: identity\r\n" in requests[0]


async def test_retry_after_comes_back_with_the_status(session: aiohttp.ClientSession) -> None:
    slow = b"HTTP/1.1 429 Too Many\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nslow"
    server, port, _, _ = await serve(lambda head: [slow])
    async with server:
        assert await post(session, port) == (429, "7", b"slow")
        adapter = OpenAICompatJudge(judge(provider="openai-compat", model="m",
                                          base_url=f"http://127.0.0.1:{port}/v1"))
        with pytest.raises(TransportFailure) as failed:
            await adapter.complete(_call())
        await adapter.aclose()
    assert (failed.value.kind, failed.value.status, failed.value.retry_after) == (
        "rate_limited", 429, 7.0)


async def test_a_redirect_is_an_answer_never_followed(session: aiohttp.ClientSession) -> None:
    elsewhere, other, seen, _ = await serve(lambda head: [OK])
    moved = (b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:%d/steal\r\n"
             b"Content-Length: 0\r\n\r\n" % other)
    server, port, _, _ = await serve(lambda head: [moved])
    async with server, elsewhere:
        assert (await post(session, port))[0] == 307
    assert seen == []


async def test_a_cookie_is_never_sent_back(session: aiohttp.ClientSession) -> None:
    planted = (b"HTTP/1.1 200 OK\r\nSet-Cookie: sid=planted; Path=/\r\n"
               b"Set-Cookie: other=1; Domain=127.0.0.1\r\nContent-Length: 2\r\n\r\nok")
    server, port, requests, _ = await serve(lambda head: [planted])
    async with server:
        for _ in range(3):
            await post(session, port)
    assert len(requests) == 3
    assert all(b"cookie" not in request.lower() for request in requests)


async def test_proxy_variables_route_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    proxy, proxy_port, via_proxy, _ = await serve(lambda head: [OK])
    server, port, direct, _ = await serve(lambda head: [OK])
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy_port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    http = JudgeSession()
    async with proxy, server:
        assert (await post(await http.get(), port))[2] == b"ok"
    await http.aclose()
    assert (len(direct), via_proxy) == (1, [])


# -- hostile bodies: the limit holds while reading, and memory stays bounded ------------------


def _rss() -> int:
    """Resident set size in bytes, from /proc/self/statm."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


async def _peak_rss_growth(call: Awaitable[Any]) -> tuple[BaseException | None, int]:
    """Run ``call`` while sampling the RSS every few milliseconds: what it raised, and the
    highest RSS seen above the starting one."""
    start = peak = _rss()
    done = False

    async def sample() -> None:
        nonlocal peak
        while not done:
            peak = max(peak, _rss())
            await asyncio.sleep(0.002)

    sampler = asyncio.create_task(sample())
    try:
        await call
        raised: BaseException | None = None
    except BaseException as exc:  # noqa: BLE001 - returned to the test to assert on
        raised = exc
    done = True
    await sampler
    return raised, max(peak, _rss()) - start


async def hostile(opening: bytes, forever: bytes) -> tuple[asyncio.Server, int, list[int]]:
    """A server that answers every request with ``opening`` and then writes ``forever``
    until the client goes away; the bytes it managed to write, per connection."""
    written: list[int] = []

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(opening)
        written.append(len(opening))
        try:
            while True:
                writer.write(forever)
                written[-1] += len(forever)
                await writer.drain()
        except (ConnectionError, RuntimeError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(client, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], written


CHUNKED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
BLOCK = 256 * 1024
MB = 1024 * 1024


async def test_a_huge_announced_chunk_is_refused_at_the_limit(
        session: aiohttp.ClientSession) -> None:
    """The old parser waited for the whole announced chunk before checking its size: this
    server took a `jurat run` to 1.6 GB. The body is refused once it passes the limit."""
    server, port, written = await hostile(CHUNKED + b"FFFFFFFFFFFF\r\n", b"x" * BLOCK)
    async with server:
        raised, growth = await _peak_rss_growth(post(session, port))
    assert isinstance(raised, JudgeOutputError) and raised.kind == "oversized", raised
    assert written[0] > MAX_RESPONSE_BYTES  # it did stream past the limit
    assert growth < 100 * MB, growth


async def test_a_body_until_close_that_never_ends_is_refused_at_the_limit(
        session: aiohttp.ClientSession) -> None:
    server, port, written = await hostile(b"HTTP/1.0 200 OK\r\n\r\n", b"x" * BLOCK)
    async with server:
        raised, growth = await _peak_rss_growth(post(session, port))
    assert isinstance(raised, JudgeOutputError) and raised.kind == "oversized", raised
    assert written[0] > MAX_RESPONSE_BYTES and growth < 100 * MB


async def test_an_endless_chunk_size_line_is_refused_as_oversized(
        session: aiohttp.ClientSession) -> None:
    """The old parser buffered an unterminated chunk-size line, rescanning it on every read.
    llhttp parses it as a stream and refuses a size past 64 bits: larger than any limit."""
    server, port, _ = await hostile(CHUNKED, b"F" * BLOCK)
    async with server:
        raised, growth = await _peak_rss_growth(post(session, port))
    assert isinstance(raised, JudgeOutputError) and raised.kind == "oversized", raised
    assert growth < 100 * MB


async def test_an_endless_chunk_size_line_of_zeros_ends_at_the_timeout(
        session: aiohttp.ClientSession) -> None:
    """Leading zeros never overflow, so nothing refuses the line as too large; nothing of
    it is kept either, and the total timeout ends the call."""
    server, port, written = await hostile(CHUNKED + b"0", b"0" * BLOCK)
    async with server:
        raised, growth = await _peak_rss_growth(
            post(session, port, timeout=aiohttp.ClientTimeout(total=1.0, connect=1.0)))
    assert isinstance(raised, TransportFailure) and raised.kind == "timeout", raised
    assert written[0] > 10 * MB and growth < 100 * MB, (written, growth)


async def test_an_endless_chunk_extension_ends_at_the_timeout(
        session: aiohttp.ClientSession) -> None:
    server, port, written = await hostile(CHUNKED + b"1;", b"a" * BLOCK)
    async with server:
        raised, growth = await _peak_rss_growth(
            post(session, port, timeout=aiohttp.ClientTimeout(total=1.0, connect=1.0)))
    assert isinstance(raised, TransportFailure) and raised.kind == "timeout", raised
    assert written[0] > 10 * MB and growth < 100 * MB, (written, growth)


async def test_a_hostile_answer_is_an_oversized_error_vote() -> None:
    """End to end: the engine records the refusal as the sample's error, not retried."""
    from jurat.judges import run_samples
    from jurat.models import EvidenceBundle
    from tests.support.builders import gates, policy

    server, port, written = await hostile(CHUNKED + b"FFFFFFFFFFFF\r\n", b"x" * BLOCK)
    config = judge(provider="openai-compat", model="m", base_url=f"http://127.0.0.1:{port}/v1",
                   samples=1, retries=3)
    async with server, Engine(backoff_s=0.001) as engine:
        votes = await run_samples(policy("rubric", judges=config), artifact(), EvidenceBundle(),
                                  gates(), engine=engine)
    assert [(v.error, v.attempts, v.answer) for v in votes] == [("oversized", 1, None)]
    assert len(written) == 1


# -- the request bytes -------------------------------------------------------------------------


def _call() -> JudgeCall:
    prompt = Prompt(template_id="t", version="1", system="sys", user="hi")
    return JudgeCall(kind="text", prompt=prompt, temperature=0.0, max_tokens=5,
                     artifact=artifact())


@pytest.mark.parametrize(("provider", "path", "auth"), [
    ("openai-compat", b"/v1/chat/completions", b"Authorization: Bearer sk-test\r\n"),
    ("anthropic", b"/v1/messages", b"x-api-key: sk-test\r\nanthropic-version: 2023-06-01\r\n"),
])
async def test_the_request_bytes(monkeypatch: pytest.MonkeyPatch, provider: str, path: bytes,
                                 auth: bytes) -> None:
    """Byte for byte what a judge call puts on the wire: the provider's documented request
    and nothing else (no SDK headers, nothing from the environment)."""
    monkeypatch.setenv("JURAT_TEST_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-from-env")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
    server, port, requests, _ = await serve(lambda head: [OK])
    base = f"http://127.0.0.1:{port}" + ("/v1" if provider == "openai-compat" else "")
    cls = OpenAICompatJudge if provider == "openai-compat" else AnthropicJudge
    adapter = cls(judge(provider=provider, model="m", base_url=base, api_key_env="JURAT_TEST_KEY"))
    async with server:
        await adapter.complete(_call())
        await adapter.complete(_call())
    await adapter.aclose()
    body = (b'{"model": "m", "messages": [{"role": "system", "content": "sys"}, {"role": "user",'
            b' "content": "hi"}], "temperature": 0.0, "max_tokens": 5}'
            if provider == "openai-compat" else
            b'{"model": "m", "max_tokens": 5, "temperature": 0.0, "messages": [{"role": "user",'
            b' "content": "hi"}], "system": "sys"}')
    wanted = (b"POST " + path + b" HTTP/1.1\r\n"
              + b"Host: 127.0.0.1:%d\r\n" % port
              + b"Content-Type: application/json\r\n"
              b"Accept: application/json\r\n"
              b"Accept-Encoding: identity\r\n"
              b"User-Agent: " + USER_AGENT.encode() + b"\r\n" + auth
              + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert requests == [wanted, wanted]


# -- https, the session's lifetime -------------------------------------------------------------


def _self_signed(tmp: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context for 127.0.0.1 and a client context trusting only its certificate."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(1)
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.load_verify_locations(tmp / "cert.pem")
    return server, client


async def test_https_takes_the_same_path_and_limits(tmp_path: Path) -> None:
    server_tls, client_tls = _self_signed(tmp_path)
    big = CHUNKED + b"FFFFFFFFFFFF\r\n" + b"x" * (MAX_RESPONSE_BYTES + 1024)
    replies = iter([OK, OK, big])

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                await reader.readexactly(2)
                writer.write(next(replies))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, StopIteration,
                asyncio.CancelledError):
            writer.close()

    server = await asyncio.start_server(client, "127.0.0.1", 0, ssl=server_tls)
    port = server.sockets[0].getsockname()[1]
    url = yarl.URL(f"https://127.0.0.1:{port}/v1/chat/completions")
    trusting, default = JudgeSession(tls=client_tls), JudgeSession()
    async with server:
        # The system's trust store does not know this certificate: refused, nothing sent.
        with pytest.raises(TransportFailure, match="certificate") as untrusted:
            await exchange(await default.get(), Endpoint(url, {}, TIMEOUT, default.tls()), b"{}")
        assert untrusted.value.kind == "connection"
        session, endpoint = await trusting.get(), Endpoint(url, {}, TIMEOUT, trusting.tls())
        assert await exchange(session, endpoint, b"{}") == (200, None, b"ok")
        adapter = OpenAICompatJudge(judge(provider="openai-compat", model="m",
                                          base_url=f"https://127.0.0.1:{port}/v1"))
        adapter.share(trusting)  # as the engine does: the session's trust store is the judge's
        assert await adapter._post(b"{}") == b"ok"
        with pytest.raises(JudgeOutputError) as oversized:
            await exchange(session, endpoint, b"{}")
        assert oversized.value.kind == "oversized"
    await trusting.aclose()
    await default.aclose()


async def test_one_session_per_engine_closed_with_it() -> None:
    server, port, _, conns = await serve(lambda head: [OK])
    configs = [judge(id=name, provider="openai-compat", model="m",
                     base_url=f"http://127.0.0.1:{port}/v1") for name in ("A", "B")]
    async with server:
        async with Engine() as engine:
            adapters = [engine.judge(config) for config in configs]
            for adapter in adapters:
                assert isinstance(adapter, OpenAICompatJudge)
                await adapter._post(b"{}")
            session = await engine._http.get()
        assert session.closed
    assert len(conns) == 1  # both judges' calls went over the one kept-alive connection


@pytest.mark.filterwarnings("ignore::ResourceWarning")  # the first loop's unclosed sockets
def test_a_session_follows_the_event_loop() -> None:
    """A session closed in one ``asyncio.run`` opens again in the next; one left open in a
    loop that has ended is let go (its connections died with the loop), not reused."""
    http = JudgeSession()

    async def once(close: bool) -> tuple[int, aiohttp.ClientSession]:
        server, port, _, _ = await serve(lambda head: [OK])
        async with server:
            session = await http.get()
            status, _, _ = await post(session, port)
        if close:
            await http.aclose()
        return status, session

    first = asyncio.run(once(True))
    second = asyncio.run(once(False))
    third = asyncio.run(once(True))
    assert [status for status, _ in (first, second, third)] == [200, 200, 200]
    assert first[1].closed and second[1].closed and first[1] is not second[1] is not third[1]


# -- rate limits ----------------------------------------------------------------------------


async def test_token_bucket_paces_and_settles() -> None:
    clock = FakeClock()
    bucket = TokenBucket(60, clock=clock, sleep=clock.sleep)  # 1 per second, bucket of 10
    assert bucket.capacity == 10
    for _ in range(10):
        await bucket.acquire()
    assert clock.slept == []
    await bucket.acquire()
    assert clock.slept == [pytest.approx(1.0)]
    bucket.adjust(5)  # the endpoint reported more than was reserved
    await bucket.acquire()
    assert clock.now == pytest.approx(7.0)
    await bucket.acquire(1000)  # larger than the bucket: waits for a full bucket, not forever
    assert clock.now == pytest.approx(17.0)


async def test_endpoint_limiter_bounds_concurrency_and_tokens() -> None:
    clock = FakeClock()
    limiter = EndpointLimiter(2, rpm=None, tpm=600, clock=clock, sleep=clock.sleep)
    inside = 0
    peak = 0

    async def call() -> None:
        nonlocal inside, peak
        async with limiter.slot(40):
            inside += 1
            peak = max(peak, inside)
            await asyncio.sleep(0)
            inside -= 1
        limiter.settle(40, 60)

    await asyncio.gather(*(call() for _ in range(6)))
    assert peak == 2
    assert clock.now > 0  # 6 x 60 tokens > the 100-token bucket at 10 tokens/s
