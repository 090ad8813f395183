"""A lean HTTP/1.1 transport for the official SDKs' ``httpx2`` client, plain-http endpoints only.

Imported only when an adapter builds its client (httpx2 comes with the SDKs).

Why it exists: on loopback and LAN inference servers (vLLM, Ollama, llama.cpp's server)
the default connection pool costs more CPU per call than everything else jurat does:
it polls every pooled socket for expiry on each request, so the cost grows with the pool
(bench/orchestration.py measures it). This transport keeps one idle stack per origin and
parses responses with an ``asyncio.Protocol``. The SDK still gives every request its URL,
auth and headers, and the httpx2 client its timeouts (``judges/_http.py``), which calls
this transport directly; https endpoints keep httpx2's own transport (TLS, proxies,
HTTP/2).

Supports keep-alive, Content-Length, chunked and read-until-close bodies, 1xx interim
responses, a body-size limit, and the request's connect/read timeouts.
"""

from __future__ import annotations

import asyncio
import select
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

import httpx2

from jurat.judges._protocol import MAX_RESPONSE_BYTES

__all__ = ["PlainHTTPTransport", "Post", "ResponseTooLarge", "refuse_encoded"]

_MAX_HEAD = 64 * 1024


class ResponseTooLarge(Exception):
    """The response body exceeded the transport's limit (an answer, not a transport failure)."""


class _Closed(Exception):
    """The server closed the connection before a complete response."""

    def __init__(self) -> None:
        super().__init__("server closed the connection before a complete response")


#: POSTs one body: the response's status, its ``retry-after`` header, and its body.
Post = Callable[[bytes], Awaitable[tuple[int, str | None, bytes]]]


class _Response:
    __slots__ = ("body", "headers", "keep_alive", "status")

    def __init__(
        self, status: int, headers: list[tuple[bytes, bytes]], body: bytes, keep_alive: bool
    ) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.keep_alive = keep_alive


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one request in flight at a time."""

    def __init__(self, max_body: int) -> None:
        self.max_body = max_body
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.buffer = bytearray()
        self.waiter: asyncio.Future[_Response] | None = None
        self._reset()

    def _reset(self) -> None:
        self.state = "head"
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.need = 0
        self.body = bytearray()
        self.keep_alive = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not an isinstance check: uvloop's transports (the loop Ray's workers and uvicorn
        # run when uvloop is installed) implement asyncio.Transport without subclassing it,
        # and the check failed every call there as a connection error.
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.state == "until_close" and self.waiter is not None:
            self._finish(keep_alive=False)
        self._fail(_Closed())

    def eof_received(self) -> bool:
        return False

    def send(self, data: bytes) -> asyncio.Future[_Response]:
        assert self.transport is not None
        self._reset()
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self.waiter

    def usable(self) -> bool:
        """An idle connection is reusable unless closed or readable (EOF or stray bytes).

        The server may have closed it while the loop was busy; one zero-timeout poll catches
        that before a request is written into a dead connection.
        """
        if self.closed or self.transport is None or self.transport.is_closing():
            return False
        sock = self.transport.get_extra_info("socket")
        if sock is None:
            return False
        readable, _, _ = select.select([sock.fileno()], [], [], 0)
        return not readable

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def _fail(self, exc: BaseException) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _finish(self, *, keep_alive: bool) -> None:
        waiter, self.waiter = self.waiter, None
        response = _Response(self.status, self.headers, bytes(self.body), keep_alive)
        self.state = "done"
        if waiter is not None and not waiter.done():
            waiter.set_result(response)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        try:
            self._parse()
        except (ValueError, ResponseTooLarge) as exc:
            self._fail(exc)
            self.abort()

    def _parse(self) -> None:
        while True:
            state = self.state
            if state == "head":
                if not self._head():
                    return
            elif state == "length":
                if len(self.buffer) < self.need:
                    return
                self.body += self.buffer[: self.need]
                del self.buffer[: self.need]
                self._finish(keep_alive=self.keep_alive)
            elif state == "chunk_size":
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    return
                size = int(bytes(self.buffer[:end]).split(b";")[0].strip(), 16)
                del self.buffer[: end + 2]
                self.need = size
                self.state = "chunk_data" if size else "trailer"
            elif state == "chunk_data":
                if len(self.buffer) < self.need + 2:
                    return
                self.body += self.buffer[: self.need]
                del self.buffer[: self.need + 2]
                self._grow(0)
                self.state = "chunk_size"
            elif state == "trailer":
                end = self.buffer.find(b"\r\n")
                if end < 0:
                    return
                del self.buffer[: end + 2]
                if end == 0:
                    self._finish(keep_alive=self.keep_alive)
            elif state == "until_close":
                self.body += self.buffer
                self.buffer.clear()
                self._grow(0)
                return
            else:  # "done": bytes after a complete response mean the connection is unusable
                if self.buffer:
                    self.keep_alive = False
                return

    def _grow(self, extra: int) -> None:
        if len(self.body) + extra > self.max_body:
            raise ResponseTooLarge(f"response body exceeds {self.max_body} bytes")

    def _head(self) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > _MAX_HEAD:
                raise ValueError("response head too large")
            return False
        lines = bytes(self.buffer[:end]).split(b"\r\n")
        del self.buffer[: end + 4]
        version, _, rest = lines[0].partition(b" ")
        status = int(rest[:3])
        if 100 <= status < 200:
            return True  # interim response: parse the next head
        headers = []
        length: int | None = None
        chunked = False
        connection = b""
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name, value = name.strip(), value.strip()
            headers.append((name, value))
            lower = name.lower()
            if lower == b"content-length":
                length = int(value)
            elif lower == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif lower == b"connection":
                connection = value.lower()
        self.status = status
        self.headers = headers
        self.keep_alive = (
            connection != b"close" if version == b"HTTP/1.1" else connection == b"keep-alive"
        )
        if chunked:
            self.state = "chunk_size"
        elif length is not None:
            self._grow(length)
            self.need = length
            self.state = "length"
        elif status in (204, 304):
            self.need = 0
            self.state = "length"
        else:
            self.keep_alive = False
            self.state = "until_close"
        return True


class PlainHTTPTransport(httpx2.AsyncBaseTransport):
    """See the module docstring."""

    def __init__(self, *, max_body: int = MAX_RESPONSE_BYTES) -> None:
        self.max_body = max_body
        self.idle: defaultdict[tuple[str, int], list[_Connection]] = defaultdict(list)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        origin = _origin(request.url)
        body = await request.aread()
        head = _head(request.method, request.url, request.headers.raw)
        try:
            response = await self._exchange(origin, head + b"\r\n" + body,
                                            request.extensions.get("timeout", {}))
        except httpx2.RequestError as exc:
            exc.request = request
            raise
        return httpx2.Response(
            response.status,
            headers=response.headers,
            stream=httpx2.ByteStream(response.body),
            request=request,
        )

    def poster(self, template: httpx2.Request) -> Post:
        """POSTs to ``template``'s URL with its headers and timeouts, each with its own body.

        The bytes ``handle_async_request`` sends for the same request but one header
        (``Accept-Encoding: identity``), without an httpx2 ``Request`` and ``Response`` for
        each: building and reading those cost judge calls more CPU than this transport's
        whole exchange (bench/README.md, "Whole runs"). Errors are
        ``handle_async_request``'s, and ``httpx2.DecodingError`` for an encoded answer.
        """
        origin = _origin(template.url)
        timeouts: dict[str, Any] = template.extensions.get("timeout", {})
        # The answer is asked for uncompressed: the body-size limit then bounds what is
        # read, and a small compressed body cannot expand to any size (httpx2's client
        # asks for gzip and decodes without a bound).
        fixed = [(name, b"identity" if name.lower() == b"accept-encoding" else value)
                 for name, value in template.headers.raw if name.lower() != b"content-length"]
        head = _head("POST", template.url, fixed)

        async def post(body: bytes) -> tuple[int, str | None, bytes]:
            length = b"Content-Length: %d\r\n\r\n" % len(body)
            response = await self._exchange(origin, head + length + body, timeouts)
            retry_after = None
            for name, value in response.headers:
                lower = name.lower()
                if lower == b"retry-after":
                    retry_after = value.decode("latin-1")
                elif lower == b"content-encoding":
                    refuse_encoded(value.decode("latin-1"))
            return response.status, retry_after, response.body

        return post

    async def _exchange(self, origin: tuple[str, int], data: bytes,
                        timeouts: dict[str, Any]) -> _Response:
        """Write one request's bytes on a connection to ``origin`` and read its response."""
        conn = await self._checkout(origin, timeouts.get("connect"))
        try:
            async with asyncio.timeout(timeouts.get("read")):
                response = await conn.send(data)
        except _Closed as exc:
            # Never re-sent here: the engine retries it as a recorded attempt of the sample.
            conn.abort()
            raise httpx2.RemoteProtocolError(str(exc)) from exc
        except TimeoutError as exc:
            conn.abort()
            raise httpx2.ReadTimeout("no complete response in time") from exc
        except ValueError as exc:
            conn.abort()
            raise httpx2.RemoteProtocolError(str(exc)) from exc
        except BaseException:
            conn.abort()  # cancelled or failed mid-response: the connection is unusable
            raise
        if response.keep_alive and not conn.closed:
            self.idle[origin].append(conn)
        else:
            conn.abort()
        return response

    async def _checkout(
        self, origin: tuple[str, int], connect_timeout: float | None
    ) -> _Connection:
        pool = self.idle[origin]
        while pool:
            conn = pool.pop()
            if conn.usable():
                return conn
            conn.abort()
        loop = asyncio.get_running_loop()
        max_body = self.max_body
        try:
            async with asyncio.timeout(connect_timeout):
                _, conn = await loop.create_connection(
                    lambda: _Connection(max_body), origin[0], origin[1]
                )
        except TimeoutError as exc:
            raise httpx2.ConnectTimeout(f"connect to {origin} timed out") from exc
        except OSError as exc:
            raise httpx2.ConnectError(f"connect to {origin}: {exc}") from exc
        return conn

    async def aclose(self) -> None:
        for pool in self.idle.values():
            for conn in pool:
                conn.abort()
        self.idle.clear()


def _origin(url: httpx2.URL) -> tuple[str, int]:
    if url.scheme != "http":
        raise httpx2.UnsupportedProtocol(f"plain http only, got {url.scheme!r}")
    return url.host, url.port or 80


def _head(method: str, url: httpx2.URL, headers: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The request line and header lines, each ending in CRLF (the blank line not yet)."""
    lines = [f"{method} {url.raw_path.decode('ascii')} HTTP/1.1".encode("ascii")]
    lines.extend(name + b": " + value for name, value in headers)
    return b"\r\n".join(lines) + b"\r\n"


def refuse_encoded(content_encoding: str | None) -> None:
    """Raise ``httpx2.DecodingError`` for an answer encoded other than ``identity``: judge
    calls ask for it uncompressed, so that a body-size limit bounds what is read."""
    if content_encoding is not None and content_encoding.strip().lower() != "identity":
        raise httpx2.DecodingError(
            f"the answer is encoded {content_encoding!r}, which was not asked for "
            "(Accept-Encoding: identity)")
