"""The retrieval transport: one GET of allowlisted evidence, every hop checked and pinned.

Threat model (docs/grounding.md, "Retrieval"). The URL comes from a candidate or from a
page, i.e. from an adversary who wants jurat's network position: cloud metadata, loopback
services, private infrastructure, local files; or who wants to exhaust it (huge or endless
bodies, slow drips). Each hop of a retrieval passes, in order:

1. the URL rule (``_policy.check_url``): http(s) only, no credentials, allowlisted origin;
2. the address rule (``_addresses.permitted``): the name is resolved once, by an injectable
   resolver, and every address it yields must be allowed for that origin;
3. a connection pinned to the first of those addresses: the network backend below hands
   httpcore a socket to that IP whatever the name resolves to by then, so a second DNS
   answer (rebinding) is never consulted; the request keeps the name in its Host header
   and httpcore's TLS handshake uses the name for SNI and certificate verification;
4. response rules: a redirect is a new hop (rules 1-3 again, a bounded number of times),
   anything else must be 2xx, an accepted media type, identity-encoded (a compressed body
   could expand past the cap) and at most ``max_bytes`` long: reading stops at the first
   chunk past the cap.

One clock bounds the whole retrieval. The client ignores the environment's proxies and
certificates settings (``trust_env=False``): a proxy would make the pinned address moot.

Why a transport of our own: httpx's ``AsyncHTTPTransport`` takes no network backend, and
the pin must sit below TLS (connect to the IP, handshake with the name). httpcore's
``AsyncConnectionPool`` takes one, so the class below is only the request/response glue
between httpx and that pool, with httpcore's errors converted in one place.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
import ssl
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from datetime import UTC, datetime
from typing import NamedTuple
from urllib.parse import urljoin

import httpcore
import httpx

from jurat.grounding._addresses import IPAddress, parse_ip, permitted
from jurat.grounding._errors import RefusalReason, RetrievalRefused
from jurat.grounding._policy import RetrievalPolicy, Target, check_url
from jurat.models import Frozen, echoed

__all__ = ["Capture", "Fetcher", "Resolver", "Retrieved", "system_resolver"]

Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``(host, port) -> addresses``: how a name becomes IPs. Injectable so tests can point a
name at a private address without touching the system's resolver."""

_REDIRECTS = frozenset({301, 302, 303, 307, 308})


async def system_resolver(host: str, port: int) -> list[str]:
    """The system's ``getaddrinfo`` (run off the event loop), TCP addresses only."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class Capture(Frozen):
    """What was retrieved, recorded so every judge sees, and verify names, the same bytes."""

    source_url: str
    """The URL asked for, as written."""
    final_url: str
    """The URL the body came from, after redirects."""
    redirects: tuple[str, ...]
    """Every redirect target followed, in order."""
    address: str
    """The IP address the final connection was pinned to."""
    retrieved_at: str
    """When the body was complete: RFC 3339, UTC."""
    status: int
    """The final HTTP status (always 2xx: anything else is refused)."""
    content_type: str
    """The response's media type as checked: the Content-Type header's type and subtype,
    lower-case, one of the policy's ``content_types``; never the header as sent, whose
    parameters are the server's own text."""
    byte_length: int
    """Body length in bytes (at most the policy's ``max_bytes``)."""
    sha256: str
    """Hex SHA-256 of the body: the evidence digest."""


class Retrieved(NamedTuple):
    """A capture and the body it describes."""

    capture: Capture
    body: bytes


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects only to (host, port), and there only to the pinned address."""

    def __init__(self, host: str, port: int, address: IPAddress) -> None:
        self._host, self._port, self._address = host, port, str(address)
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        if (host.lower(), port) != (self._host, self._port):
            # Unreachable through Fetcher (one backend per hop); refuse rather than resolve.
            raise httpcore.ConnectError(f"{host}:{port} is not the pinned origin")
        return await self._inner.connect_tcp(
            self._address, port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are never used for retrieval")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@contextlib.contextmanager
def _converted(url: str) -> Iterator[None]:
    """httpcore's errors as refusals: the one place they are translated."""
    try:
        yield
    except httpcore.TimeoutException as exc:
        raise RetrievalRefused("timeout", str(exc) or type(exc).__name__, url=url) from exc
    except httpcore.ConnectError as exc:
        # httpcore reports a failed handshake (wrong name, untrusted certificate) as a
        # connect error wrapping the ssl error (its pool re-raises ``from None``, so the
        # ssl error is the context rather than the cause).
        origin = exc.__cause__ or exc.__context__
        reason: RefusalReason = "tls" if isinstance(origin, ssl.SSLError) else "connect"
        raise RetrievalRefused(reason, str(exc) or type(exc).__name__, url=url) from exc
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
        raise RetrievalRefused("protocol", str(exc) or type(exc).__name__, url=url) from exc


class _Body(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes], url: str) -> None:
        self._stream, self._url = stream, url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _converted(self._url):
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            with _converted(self._url):
                await close()


class _PinnedTransport(httpx.AsyncBaseTransport):
    """httpx in front of an httpcore pool that connects through a :class:`_PinnedBackend`."""

    def __init__(self, backend: _PinnedBackend, ssl_context: ssl.SSLContext | None) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            # certifi's roots unless the caller trusts others; never SSL_CERT_FILE & co.
            ssl_context=ssl_context or httpx.create_ssl_context(trust_env=False),
            max_connections=1,
            http1=True,
            http2=False,
            retries=0,
            network_backend=backend,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            extensions=request.extensions,
        )
        with _converted(url):
            response = await self._pool.handle_async_request(core)
        assert isinstance(response.stream, AsyncIterable)  # an async pool's stream is async
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_Body(response.stream, url),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def _check_location(url: str, location: str, policy: RetrievalPolicy) -> None:
    """A redirect target that breaks the URL rule: ``redirect-to-forbidden`` with the rule
    it broke as ``cause``, as ``Fetcher._follow`` refuses the next hop."""
    try:
        target = urljoin(url, location)
    except ValueError as exc:
        raise RetrievalRefused("redirect-to-forbidden", f"Location {location!r}: {exc}",
                               url=location, cause="bad-url") from exc
    try:
        check_url(target, policy)
    except RetrievalRefused as exc:
        raise RetrievalRefused("redirect-to-forbidden", str(exc), url=target,
                               cause=exc.reason) from exc


class Fetcher:
    """Retrieves evidence under one :class:`RetrievalPolicy`; :meth:`fetch` is the only door."""

    def __init__(
        self,
        policy: RetrievalPolicy,
        *,
        resolver: Resolver = system_resolver,
        clock: Callable[[], datetime] = _utcnow,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        """``resolver`` and ``clock`` are injectable for tests; ``ssl_context`` for a private
        certificate authority (an intranet source, the tests' TLS server)."""
        self.policy = policy
        self._resolver = resolver
        self._clock = clock
        self._ssl_context = ssl_context

    async def fetch(self, url: str) -> Retrieved:
        """GET ``url`` under the policy; RetrievalRefused (with its reason) otherwise."""
        try:
            async with asyncio.timeout(self.policy.timeout_s):
                return await self._follow(url)
        except TimeoutError as exc:
            raise RetrievalRefused(
                "timeout", f"not complete within {self.policy.timeout_s} s", url=url
            ) from exc

    async def _follow(self, url: str) -> Retrieved:
        current, redirects = url, list[str]()
        answers: dict[str, list[IPAddress]] = {}  # one resolution per name per retrieval
        for hop in range(self.policy.max_redirects + 1):
            try:
                target = check_url(current, self.policy)
                address = await self._pin(target, answers)
            except RetrievalRefused as exc:
                if hop == 0:
                    raise
                raise RetrievalRefused(
                    "redirect-to-forbidden", str(exc), url=current, cause=exc.reason
                ) from exc
            location = await self._get(target, address, url, tuple(redirects))
            if isinstance(location, Retrieved):
                return location
            current = location
            redirects.append(current)
        raise RetrievalRefused(
            "too-many-redirects", f"more than {self.policy.max_redirects} redirects", url=url
        )

    async def _pin(self, target: Target, answers: dict[str, list[IPAddress]]) -> IPAddress:
        """Resolve once and check every address; the first is the one connected to."""
        addresses = answers.get(target.host)
        if addresses is None:
            addresses = answers[target.host] = await self._resolve(target)
        for address in addresses:
            # Every answer, not only the first: a mixed answer is a rebinding attempt.
            forbidden = permitted(address, allow_private=target.origin.allow_private)
            if forbidden is not None:
                raise RetrievalRefused(
                    "private-address",
                    f"{target.host!r} resolves to {address} ({forbidden})",
                    url=target.url,
                )
        return addresses[0]

    async def _resolve(self, target: Target) -> list[IPAddress]:
        literal = parse_ip(target.host)
        if literal is not None:
            return [literal]
        try:
            answers = await self._resolver(target.host, target.port)
        except OSError as exc:
            raise RetrievalRefused("unresolvable", str(exc), url=target.url) from exc
        parsed = [parse_ip(answer) for answer in answers]
        addresses = [a for a in parsed if a is not None]
        if not addresses or len(addresses) != len(parsed):
            raise RetrievalRefused(
                "unresolvable", f"{target.host!r} gave no usable address", url=target.url
            )
        return addresses

    async def _get(
        self, target: Target, address: IPAddress, source: str, redirects: tuple[str, ...]
    ) -> Retrieved | str:
        """One pinned GET: the body as a Retrieved, or the next hop's URL for a redirect."""
        policy = self.policy
        transport = _PinnedTransport(
            _PinnedBackend(target.host, target.port, address), self._ssl_context
        )
        async def location_rule(response: httpx.Response) -> None:
            # httpx parses a redirect's Location before it returns the response, and raises
            # a bare RemoteProtocolError for one it cannot parse (a non-ASCII host, two
            # ports): the URL rule judges it first, so the refusal has its name.
            location = response.headers.get("location") if response.has_redirect_location \
                else None
            if location:
                _check_location(target.url, location, policy)

        async with httpx.AsyncClient(
            transport=transport,
            trust_env=False,
            follow_redirects=False,
            event_hooks={"response": [location_rule]},
            timeout=httpx.Timeout(policy.timeout_s),
            headers={"accept-encoding": "identity", "accept": ", ".join(policy.content_types)},
        ) as client:
            try:
                request = client.build_request("GET", target.url)
            except httpx.InvalidURL as exc:
                raise RetrievalRefused("bad-url", str(exc), url=target.url) from exc
            response = await client.send(request, stream=True)
            try:
                if response.status_code in _REDIRECTS:
                    location = str(response.headers.get("location", ""))
                    if not location:
                        raise RetrievalRefused("status", "redirect, no Location", url=target.url)
                    return urljoin(target.url, location)
                content_type = self._check_head(response, target.url)
                body = await self._read(response, target.url)
            finally:
                await response.aclose()
        capture = Capture(
            source_url=source,
            final_url=target.url,
            redirects=redirects,
            address=str(address),
            retrieved_at=self._clock().astimezone(UTC).isoformat().replace("+00:00", "Z"),
            status=response.status_code,
            content_type=content_type,
            byte_length=len(body),
            sha256=hashlib.sha256(body).hexdigest(),
        )
        return Retrieved(capture, body)

    def _check_head(self, response: httpx.Response, url: str) -> str:
        """Status, media type, encoding and declared length, before a byte of body is read;
        the media type as checked (an entry of the policy's list, never the header)."""
        policy = self.policy
        if not 200 <= response.status_code < 300:
            raise RetrievalRefused("status", f"HTTP {response.status_code}", url=url)
        content_type = str(response.headers.get("content-type", ""))
        media = content_type.split(";", 1)[0].strip().lower()
        if media not in policy.content_types:
            # The server's header is its own text: named only as a token or its digest.
            raise RetrievalRefused(
                "content-type",
                f"media type {echoed(media) if media else '(none)'} is not in "
                f"{list(policy.content_types)}",
                url=url)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise RetrievalRefused("content-encoding", f"{echoed(encoding)} body refused",
                                  url=url)
        declared = response.headers.get("content-length")
        # ASCII digits only ("²".isdigit() holds, and int() refuses it), and few enough
        # for int() to read (it refuses more than 4,300 digits).
        if declared is not None and not (declared.isascii() and declared.isdigit()):
            raise RetrievalRefused("protocol", f"Content-Length {echoed(declared)}", url=url)
        if declared is not None and (len(declared) > 18 or int(declared) > policy.max_bytes):
            raise RetrievalRefused(
                "too-large", f"declared length {echoed(declared)} exceeds {policy.max_bytes}",
                url=url
            )
        return media

    async def _read(self, response: httpx.Response, url: str) -> bytes:
        """The body, streamed; refused at the first chunk that takes it past the cap."""
        cap = self.policy.max_bytes
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > cap:
                raise RetrievalRefused("too-large", f"body exceeds {cap} bytes", url=url)
        return bytes(body)
