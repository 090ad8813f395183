"""Judge calls over HTTP: one aiohttp session per engine, the providers' documented requests,
answers read within fixed limits.

Threat model. A judge's endpoint is one the campaign allowed (judges/_destinations.py), not
one jurat trusts: every byte it sends back is untrusted input to jurat's process, and so is
everything the network between them can do to a plain-``http://`` exchange. Bounded here:

- **Where a request goes.** Only to the URL jurat resolved and allowed (``endpoint``), for
  ``http://`` and ``https://`` alike. A 3xx is an answer, never followed
  (``allow_redirects=False``); proxies, ``.netrc`` and the TLS trust store's variables in the
  environment are never read (``trust_env=False``, ``tls_context``); no cookie is kept
  (``DummyCookieJar``), so an endpoint cannot plant state that later calls send back; no
  header comes from an SDK or the environment (the request is the provider's documented one,
  built here). A request is never re-sent behind jurat's back: aiohttp re-sends a request
  whose keep-alive connection dropped only for idempotent methods, never a POST, so a
  dropped call fails here and the engine retries it as a recorded attempt.
- **The response head.** aiohttp's parser takes at most ``MAX_LINE`` bytes for the status
  line and each header line and ``MAX_HEADERS`` headers; anything longer or more is a
  failed exchange.
- **The body: at most ``MAX_RESPONSE_BYTES``, counted while it is read.** A Content-Length
  above the limit is refused before a byte of the body is read; a chunked or
  read-until-close body is read in pieces and refused as soon as it passes the limit,
  whatever size its chunks announce. Chunk-size lines are parsed as a stream (llhttp keeps
  none of them), and one whose size does not fit 64 bits is refused as oversized too. An
  encoded body is refused unread: the answer is asked for uncompressed
  (``Accept-Encoding: identity``) and never decoded (``auto_decompress=False``), since a
  kilobyte of gzip can expand to any size.
- **Time.** Every exchange has a connect and a total timeout (the judge's ``timeout_s``),
  and the total covers reading the body; a server that streams bytes that never end (an
  endless run of zeros in a chunk-size line, a body that trickles) ends there.
- **What the bytes become.** The body goes to ``load_envelope`` (strict JSON: duplicate
  keys, NaN and oversized documents refused) and then to the provider's envelope parser;
  what the envelope says about the answer is recorded only in the shapes of
  models/_echoed.py (model ids, fingerprints and finish reasons as tokens or digests,
  token counts within range, else the sample is ``bad_usage``);
  an aiohttp failure becomes one of jurat's transport error kinds at this boundary
  (``exchange``), never an exception the engine does not know.

Out of scope: name resolution (an allowed host name means whatever DNS says) and what an
allowed endpoint does with the content it is sent.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, NamedTuple

from jurat._version import __version__
from jurat.errors import ConfigError, JudgeOutputError
from jurat.judges._debug import RAW_CAP
from jurat.judges._protocol import MAX_RESPONSE_BYTES, CallKind, RawResponse, TransportFailure
from jurat.judges._validate import strict_loads
from jurat.models import JudgeConfig, token_count

if TYPE_CHECKING:
    import aiohttp
    import yarl

__all__ = [
    "MAX_HEADERS",
    "MAX_LINE",
    "USER_AGENT",
    "Endpoint",
    "HTTPJudge",
    "JudgeSession",
    "exchange",
    "load_envelope",
    "status_error",
    "unusable",
    "usage_of",
]

#: The longest status or header line, and the most headers, a response head may have.
MAX_LINE = 8190
MAX_HEADERS = 128

#: What jurat calls itself on the wire.
USER_AGENT = f"jurat/{__version__}"

#: The headers every judge request carries, before the provider's own.
BASE_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    # Uncompressed answers only: the body limit then bounds what is read.
    "Accept-Encoding": "identity",
    "User-Agent": USER_AGENT,
}


class Endpoint(NamedTuple):
    """Everything of a judge's requests but the body, built once per judge."""

    url: yarl.URL
    headers: dict[str, str]
    timeout: aiohttp.ClientTimeout
    tls: ssl.SSLContext | bool
    """The certificates an ``https://`` endpoint is checked against (True: plain http)."""


class JudgeSession:
    """The one ``aiohttp.ClientSession`` an engine's judges share.

    Opened on first use, in the running event loop (an engine may be built before its
    loop runs), entered with ``async with`` on an exit stack this object owns, and closed
    by ``aclose`` (``Engine.aclose``, which ``async with Engine()`` calls). A judge used
    without an engine owns one of its own. Connections are not limited here: the engine
    bounds the calls in flight, overall and per endpoint, and each call holds one
    connection. ``tls`` replaces the default trust store (``tls_context``; tests).
    """

    def __init__(self, *, tls: ssl.SSLContext | None = None) -> None:
        self._tls = tls
        self._session: aiohttp.ClientSession | None = None
        self._stack: AsyncExitStack | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def get(self) -> aiohttp.ClientSession:
        """The session of the running loop, opened if need be."""
        loop = asyncio.get_running_loop()
        session = self._session
        if session is not None and self._loop is loop:
            return session
        if session is not None:
            # Opened in another, earlier loop, whose connections cannot be used (or closed
            # cleanly) from this one: let the session go without touching them.
            session.detach()
            self._session = self._stack = None
        import aiohttp

        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0),
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
            auto_decompress=False,
            max_line_size=MAX_LINE,
            max_field_size=MAX_LINE,
            max_headers=MAX_HEADERS,
        )
        # Set before the first await: the calls that start together share this one.
        self._session, self._stack, self._loop = session, AsyncExitStack(), loop
        await self._stack.enter_async_context(session)
        return session

    def tls(self) -> ssl.SSLContext:
        """What ``https://`` endpoints' certificates are checked against."""
        return self._tls or tls_context()

    async def aclose(self) -> None:
        """Close the session and its connections; the next ``get`` opens a new one."""
        stack, self._stack, self._session = self._stack, None, None
        if stack is not None:
            await stack.aclose()


@functools.cache
def tls_context() -> ssl.SSLContext:
    """Verify certificates and host names against the interpreter's compiled-in trust
    store, without reading ``SSL_CERT_FILE``/``SSL_CERT_DIR`` (as httpx's client with
    ``trust_env=False`` did before); certifi's bundle where the system has none. Built
    once per process, at the first ``https://`` judge (it reads the store from disk)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    paths = ssl.get_default_verify_paths()
    cafile = paths.openssl_cafile if os.path.isfile(paths.openssl_cafile) else None
    capath = paths.openssl_capath if os.path.isdir(paths.openssl_capath) else None
    if cafile is None and capath is None:
        try:
            import certifi
        except ImportError:  # pragma: no cover - certifi comes with the SDKs
            return context
        cafile = certifi.where()
    context.load_verify_locations(cafile, capath)
    return context


async def exchange(session: aiohttp.ClientSession, endpoint: Endpoint, body: bytes,
                   ) -> tuple[int, str | None, bytes]:
    """POST ``body`` to ``endpoint``: the status, the ``Retry-After`` header and the body.

    Raises TransportFailure (``timeout`` or ``connection``: no answer was produced) or
    JudgeOutputError (``oversized``: an answer too large to read); see the module
    docstring for what is bounded.
    """
    import aiohttp

    try:
        async with session.post(endpoint.url, data=body, headers=endpoint.headers,
                                timeout=endpoint.timeout, ssl=endpoint.tls,
                                allow_redirects=False) as response:
            encoding = response.headers.get("Content-Encoding")
            if encoding is not None and encoding.strip().lower() != "identity":
                raise TransportFailure(
                    f"the answer is encoded {encoding!r}, which was not asked for "
                    "(Accept-Encoding: identity)", kind="connection")
            length = response.content_length
            if length is not None and length > MAX_RESPONSE_BYTES:
                raise _oversized(f"announced as {length} bytes")
            if length is not None:
                raw = await response.read()  # the parser stops at Content-Length
            else:
                raw = await _read_capped(response.content)
            return response.status, response.headers.get("Retry-After"), raw
    except (TransportFailure, JudgeOutputError):
        raise
    except (aiohttp.ServerTimeoutError, TimeoutError) as exc:
        raise TransportFailure("the request timed out", kind="timeout") from exc
    except (aiohttp.ClientError, OSError) as exc:
        if _size_overflow(exc):
            raise _oversized("a chunk announced larger than 64 bits can count") from exc
        raise TransportFailure(f"connection failed: {exc}"[:300], kind="connection") from exc


async def _read_capped(content: aiohttp.StreamReader) -> bytes:
    """A body of no announced length (chunked, or until the connection closes), read as it
    arrives and refused once it passes ``MAX_RESPONSE_BYTES``."""
    raw = bytearray()
    while chunk := await content.readany():
        raw += chunk
        if len(raw) > MAX_RESPONSE_BYTES:
            raise _oversized("and still streaming")
    return bytes(raw)


def _oversized(detail: str) -> JudgeOutputError:
    return JudgeOutputError(f"response body exceeds {MAX_RESPONSE_BYTES} bytes ({detail})",
                            kind="oversized")


def _size_overflow(exc: BaseException) -> bool:
    """Whether aiohttp's parser (llhttp) refused a chunk size too large for 64 bits: a
    body larger than any limit. It says so only in its message, in the exception or the
    one it wraps (tests/judges/test_judges_transport.py holds this to the pinned aiohttp)."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return False
        if "Chunk size overflow" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class HTTPJudge:
    """A judge behind an HTTP endpoint: jurat builds the provider's documented request,
    POSTs it through the engine's ``JudgeSession`` and parses the raw answer itself.

    Subclasses name the endpoint's ``_path`` and supply ``_auth_headers`` (from
    ``_api_key``).
    """

    reproducible = False
    _path: str

    def __init__(self, config: JudgeConfig, base_url: str) -> None:
        # Imported with the adapter, not at its first call: a run builds its adapters in
        # the parent (preflight) before its worker processes fork, so the workers inherit
        # aiohttp, and the collector's freeze (runner/_shards.py) leaves it out of its
        # scans, instead of each worker importing it on its first call.
        import aiohttp  # noqa: F401
        import yarl  # noqa: F401

        self._config = config
        self._base_url = base_url
        self._http = JudgeSession()
        self._owns_http = True
        self._endpoint: Endpoint | None = None

    @property
    def config(self) -> JudgeConfig:
        return self._config

    def supports(self, kind: CallKind) -> bool:
        return True

    def preflight(self) -> None:
        self._api_key()

    def share(self, http: JudgeSession) -> None:
        """Call through ``http`` (the engine's session) instead of a session of its own."""
        self._http, self._owns_http = http, False

    def _api_key(self) -> str:
        raise NotImplementedError

    def _auth_headers(self) -> dict[str, str]:
        raise NotImplementedError

    def _key_from(self, env: str, what: str) -> str:
        value = os.environ.get(env, "")
        if not value:
            raise ConfigError(
                f"judge {self._config.id}: the environment variable {env} (api_key_env) "
                f"is not set; export the {what} there"
            )
        return value

    def _prepared(self) -> Endpoint:
        """The URL, headers, timeouts and trust store of every request, built on the first
        call."""
        if self._endpoint is None:
            import aiohttp
            import yarl

            timeout = self._config.timeout_s
            # encoded=True: the URL as jurat normalised and allowed it, never re-quoted.
            url = yarl.URL(self._base_url + self._path, encoded=True)
            self._endpoint = Endpoint(
                url, {**BASE_HEADERS, **self._auth_headers()},
                aiohttp.ClientTimeout(total=timeout, connect=timeout),
                self._http.tls() if url.scheme == "https" else True)
        return self._endpoint

    async def _post(self, content: bytes) -> bytes:
        """POST ``content`` to the endpoint: the raw body of a 2xx answer; a status outside
        2xx is a TransportFailure of its kind (``status_error``, with its Retry-After)."""
        endpoint = self._prepared()
        session = await self._http.get()
        status, retry_after, raw = await exchange(session, endpoint, content)
        if not 200 <= status < 300:
            text = raw[:300].decode("utf-8", "replace")
            raise status_error(status, f"HTTP {status}: {text}", retry_after)
        return raw

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()


def load_envelope(body: bytes) -> dict[str, Any] | RawResponse:
    """The provider's envelope as a JSON object, parsed strictly, or the error response."""
    try:
        data = strict_loads(body, limit=MAX_RESPONSE_BYTES)
    except JudgeOutputError as exc:
        # Unparseable JSON here is the provider's envelope, not the judge's answer.
        kind = "malformed_response" if exc.kind == "malformed_json" else exc.kind
        return unusable(body, kind, "(root)")
    if not isinstance(data, dict):
        return unusable(body, "malformed_response", "(root)")
    return data


def unusable(body: bytes, kind: str, path: str, **meta: Any) -> RawResponse:
    """The response to an envelope that carried no usable answer: its error ``kind``, the
    ``path`` of the member at fault, and the body itself, capped, since an answer in prose
    or cut off mid-JSON is exactly what the operator needs to see (judges/_debug.py)."""
    # Cut before decoding: the body may be megabytes; "replace" keeps a cut character
    # and any bytes that are not UTF-8 visible as U+FFFD instead of failing.
    text = body[:RAW_CAP].decode("utf-8", "replace")
    return RawResponse(text=None, envelope_error=kind, envelope_path=path,
                       envelope_body=text, envelope_bytes=len(body), **meta)


def status_error(status: int, message: str, retry_after: str | None) -> TransportFailure:
    """An HTTP status that carried no answer, as a named transport error kind."""
    wait: float | None = None
    if retry_after:
        try:
            wait = max(0.0, float(retry_after))
        except ValueError:
            wait = None  # an HTTP-date: fall back to jurat's own backoff
    if status == 429:
        kind = "rate_limited"
    elif status >= 500:
        kind = "http_5xx"
    elif status == 408:
        kind = "timeout"
    elif status in (401, 403):
        kind = "unauthorized"
    else:
        kind = "http_4xx"
    return TransportFailure(message[:300], kind=kind, status=status, retry_after=wait)


def usage_of(envelope: dict[str, Any], input_key: str, output_key: str
             ) -> tuple[dict[str, int], str | None]:
    """Token usage as ``input_tokens``/``output_tokens``, and the path of the member at
    fault when a count is reported but is no count (models/_echoed.py ``token_count``: a
    negative, fractional, boolean, textual or out-of-range one): the adapters then make
    the response ``bad_usage``, never a smaller bill. A missing or null member is not
    reported, which the ``[budget]`` charges as its whole reservation (judges/_budget.py).
    """
    usage = envelope.get("usage")
    if usage is None:
        return {}, None
    if not isinstance(usage, dict):
        return {}, "usage"
    out = {}
    for name, key in (("input_tokens", input_key), ("output_tokens", output_key)):
        value = usage.get(key)
        if value is None:
            continue
        count = token_count(value)
        if count is None:
            return {}, f"usage/{key}"
        out[name] = count
    return out, None
