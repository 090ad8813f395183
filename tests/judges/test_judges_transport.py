"""jurat's lean HTTP/1.1 transport and rate limiting."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator, Callable

import httpx2
import pytest

from jurat.judges import EndpointLimiter, TokenBucket
from jurat.judges._http import _sender
from jurat.judges._transport import PlainHTTPTransport, ResponseTooLarge
from tests.support.clock import FakeClock


async def serve(
    handler: Callable[[bytes], list[bytes] | None],
) -> tuple[asyncio.Server, int, list[int]]:
    """A raw server: ``handler(request head)`` returns chunks to write (a final empty chunk:
    close after writing), or None to close without answering."""
    connections: list[int] = []

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(
                    next(
                        (
                            line.split(b":")[1]
                            for line in head.split(b"\r\n")
                            if line.lower().startswith(b"content-length")
                        ),
                        b"0",
                    )
                )
                await reader.readexactly(length)
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

    server = await asyncio.start_server(client, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], connections


@pytest.fixture
async def client() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=PlainHTTPTransport(max_body=1024), timeout=2) as c:
        yield c


async def test_content_length_keep_alive_reuses_one_connection(client: httpx2.AsyncClient) -> None:
    server, port, conns = await serve(
        lambda head: [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]
    )
    async with server:
        for _ in range(3):
            response = await client.post(f"http://127.0.0.1:{port}/v1/x", content=b"{}")
            assert (response.status_code, response.content) == (200, b"ok")
    assert len(conns) == 1


class _Foreign:
    """A transport as uvloop's are (the loop of Ray's workers and of uvicorn when uvloop is
    installed): asyncio.Transport's methods, without subclassing it."""

    def __init__(self, inner: asyncio.BaseTransport) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


async def test_a_transport_that_only_behaves_like_asyncio_s_is_used(
        client: httpx2.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = asyncio.get_running_loop()
    real = loop.create_connection
    handed: list[object] = []

    async def create_connection(factory: Callable[[], asyncio.Protocol], *args: object,
                                **kwargs: object) -> tuple[object, asyncio.Protocol]:
        def foreign() -> asyncio.Protocol:
            protocol = factory()
            made = protocol.connection_made

            def connection_made(transport: asyncio.BaseTransport) -> None:
                handed.append(_Foreign(transport))
                made(handed[-1])  # type: ignore[arg-type]

            protocol.connection_made = connection_made  # type: ignore[method-assign]
            return protocol

        return await real(foreign, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loop, "create_connection", create_connection)
    server, port, _ = await serve(lambda head: [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"])
    async with server:
        response = await client.post(f"http://127.0.0.1:{port}/v1/x", content=b"{}")
    assert (response.status_code, response.content) == (200, b"ok")
    assert len(handed) == 1 and not isinstance(handed[0], asyncio.Transport)


async def test_chunked_interim_and_split_writes(client: httpx2.AsyncClient) -> None:
    body = [
        b"HTTP/1.1 100 Continue\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nWiki\r\n",
        b"5\r\npedia\r\n",
        b"0\r\nX-Trailer: 1\r\n\r\n",
    ]
    server, port, _ = await serve(lambda head: body)
    async with server:
        response = await client.post(f"http://127.0.0.1:{port}/", content=b"")
        assert response.content == b"Wikipedia"
        again = await client.post(f"http://127.0.0.1:{port}/", content=b"")
        assert again.content == b"Wikipedia"


async def test_body_until_close_and_connection_close(client: httpx2.AsyncClient) -> None:
    replies = iter([[b"HTTP/1.0 200 OK\r\n\r\nall of it", b""], None])
    server, port, conns = await serve(lambda head: next(replies))
    async with server:
        response = await client.post(f"http://127.0.0.1:{port}/", content=b"")
        assert response.content == b"all of it"
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.post(f"http://127.0.0.1:{port}/", content=b"")
    assert len(conns) == 2  # the read-until-close connection was not reused


async def test_oversized_bodies_are_refused(client: httpx2.AsyncClient) -> None:
    server, port, _ = await serve(
        lambda head: [b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b"x" * 5000]
    )
    async with server:
        with pytest.raises(ResponseTooLarge):
            await client.post(f"http://127.0.0.1:{port}/", content=b"")


async def test_a_closed_idle_connection_is_not_reused(client: httpx2.AsyncClient) -> None:
    server, port, conns = await serve(
        lambda head: [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", b""]
    )
    async with server:
        for _ in range(3):
            response = await client.post(f"http://127.0.0.1:{port}/", content=b"")
            assert response.content == b"ok"
            await asyncio.sleep(0.02)  # the server's close arrives while the connection idles
    assert len(conns) == 3


async def test_a_dropped_request_is_an_error_not_a_silent_resend(
    client: httpx2.AsyncClient,
) -> None:
    answers = iter([[b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"], None])
    server, port, conns = await serve(lambda head: next(answers))
    async with server:
        assert (await client.post(f"http://127.0.0.1:{port}/", content=b"")).content == b"ok"
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.post(f"http://127.0.0.1:{port}/", content=b"")
    assert len(conns) == 1  # the engine retries it as a recorded attempt; the transport does not


async def test_https_is_left_to_httpx2() -> None:
    transport = PlainHTTPTransport()
    with pytest.raises(httpx2.UnsupportedProtocol):
        await transport.handle_async_request(httpx2.Request("POST", "https://example.invalid/"))


async def test_refused_connection_is_a_connect_error(client: httpx2.AsyncClient) -> None:
    server, port, _ = await serve(lambda head: None)
    server.close()
    await server.wait_closed()
    with pytest.raises(httpx2.ConnectError):
        await client.post(f"http://127.0.0.1:{port}/", content=b"")


async def test_a_poster_writes_what_the_client_writes(client: httpx2.AsyncClient) -> None:
    """``poster`` (what judge calls use) puts the client's bytes on the wire over this
    transport, Content-Length included, but for asking for an uncompressed answer; and it
    reads the same answer."""
    heads: list[bytes] = []

    def answer(head: bytes) -> list[bytes]:
        heads.append(head)
        return [b"HTTP/1.1 429 Too Many\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nslow"]

    server, port, conns = await serve(answer)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    transport = PlainHTTPTransport(max_body=1024)
    async with server:
        response = await client.post(url, headers={"authorization": "Bearer k"},
                                     content=b'{"a":1}')
        post = transport.poster(client.build_request("POST", url,
                                                     headers={"authorization": "Bearer k"}))
        assert await post(b'{"a":1}') == (429, "7", b"slow")
        assert await post(b"{}") == (429, "7", b"slow")  # one connection, kept alive
        await transport.aclose()
    assert (response.status_code, response.headers["retry-after"]) == (429, "7")
    wanted = response.request.headers["accept-encoding"].encode()
    assert wanted != b"identity"
    assert heads[1] != heads[0]
    assert heads[1] == heads[0].replace(b"Accept-Encoding: " + wanted,
                                        b"Accept-Encoding: identity")
    assert b"\r\nContent-Length: 7\r\n" in heads[1]
    assert b"\r\nContent-Length: 2\r\n" in heads[2]
    assert heads[0].count(b"Content-Length") == 1
    assert len(conns) == 2  # the client's connection and the poster's


async def test_a_poster_refuses_an_encoded_answer_it_did_not_ask_for(
        client: httpx2.AsyncClient) -> None:
    """A small gzip body can expand to any size: the poster asks for identity, and an
    endpoint that compresses anyway is refused, never decoded (the engine records the
    failure as the sample's error once its retries run out)."""
    packed = gzip.compress(b"0" * 1_000_000)  # 1 MB out of about a kilobyte
    reply = (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n"
             % len(packed)) + packed
    server, port, _ = await serve(lambda head: [reply])
    transport = PlainHTTPTransport(max_body=4096)
    async with server:
        post = transport.poster(client.build_request("POST", f"http://127.0.0.1:{port}/"))
        with pytest.raises(httpx2.DecodingError, match="gzip"):
            await post(b"{}")
        await transport.aclose()


async def test_an_https_answer_is_read_within_the_limit_and_never_decoded() -> None:
    """The httpx2 client's path (https endpoints) reads at most the envelope limit and
    refuses an encoded answer, as the plain-http poster does."""
    answers = iter([
        httpx2.Response(429, headers={"retry-after": "3"}, content=b"slow"),
        httpx2.Response(200, content=b"x" * (9 * 1024 * 1024)),
        httpx2.Response(200, headers={"content-encoding": "gzip"},
                        content=gzip.compress(b"0" * 1_000_000)),
    ])
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(lambda r: next(answers))) as c:
        post = _sender(c, c.build_request("POST", "https://judge.invalid/v1/chat/completions"))
        assert await post(b"{}") == (429, "3", b"slow")
        with pytest.raises(ResponseTooLarge, match="exceeds"):
            await post(b"{}")
        with pytest.raises(httpx2.DecodingError, match="gzip"):
            await post(b"{}")


async def test_a_poster_fails_as_the_transport_does() -> None:
    """A timeout, a dropped request and an oversized answer raise what a client over the
    transport raises, so a judge call names the same failure either way."""
    answers = iter([[], None, [b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + b"x" * 5000]])
    server, port, _ = await serve(lambda head: next(answers))
    transport = PlainHTTPTransport(max_body=1024)
    async with server, httpx2.AsyncClient(timeout=0.2) as plain:
        post = transport.poster(plain.build_request("POST", f"http://127.0.0.1:{port}/"))
        with pytest.raises(httpx2.ReadTimeout):
            await post(b"")  # nothing written back within the read timeout
        with pytest.raises(httpx2.RemoteProtocolError):
            await post(b"")
        with pytest.raises(ResponseTooLarge):
            await post(b"")
        await transport.aclose()


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
