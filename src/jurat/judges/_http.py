"""What the two SDK adapters share.

The judge shell around an SDK client (API key, one client per event loop, the raw POST,
closing), the httpx2 client under it, the strict reading of a provider's envelope and the
mapping of failures to kinds.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from jurat.errors import ConfigError, JudgeOutputError
from jurat.judges._protocol import MAX_RESPONSE_BYTES, CallKind, RawResponse, TransportFailure
from jurat.judges._validate import strict_loads
from jurat.models import JudgeConfig

if TYPE_CHECKING:
    import httpx2

    from jurat.judges._transport import PlainHTTPTransport, Post

__all__ = [
    "SDKJudge",
    "http_client",
    "load_envelope",
    "status_error",
    "usage_of",
]

# Uncompressed answers only: the body-size limit then bounds what is read, where a small
# compressed body could expand to any size (httpx2 asks for gzip and decodes unbounded).
_JSON_HEADERS = {"content-type": "application/json", "accept-encoding": "identity"}


class SDKJudge:
    """A judge configured through an official SDK's async client: the SDK resolves the URL
    and the headers (auth, API version, user agent), jurat serialises the body and posts it
    with the httpx2 client it gave the SDK, and parses the raw response itself.

    Subclasses name the endpoint's ``_path`` and supply ``_new_client`` and ``_api_key``.
    """

    reproducible = False
    _path: str

    def __init__(self, config: JudgeConfig, base_url: str | None) -> None:
        self._config = config
        self._base_url = base_url
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._send: Post
        """POSTs a body to the endpoint with the headers and timeouts resolved once, per
        client (``_sender``)."""

    @property
    def config(self) -> JudgeConfig:
        return self._config

    def supports(self, kind: CallKind) -> bool:
        return True

    def preflight(self) -> None:
        self._api_key()

    def _new_client(self, **options: Any) -> Any:
        raise NotImplementedError

    def _api_key(self) -> str:
        raise NotImplementedError

    def _key_from(self, env: str, what: str) -> str:
        value = os.environ.get(env, "")
        if not value:
            raise ConfigError(
                f"judge {self._config.id}: the environment variable {env} (api_key_env) "
                f"is not set; export the {what} there"
            )
        return value

    def _client_for_loop(self) -> Any:
        # An httpx2 client's connections belong to the loop that opened them.
        loop = asyncio.get_running_loop()
        if self._client is not None and self._loop is loop:
            return self._client
        config = self._config
        http, plain = http_client(config, self._base_url)
        self._client = self._new_client(
            api_key=self._api_key(),
            base_url=self._base_url,
            max_retries=0,  # jurat retries, and records every attempt of the sample
            timeout=config.timeout_s,
            http_client=http,
        )
        # The SDK says where and with which headers (auth, version, user agent); the
        # exchange itself goes through the httpx2 client jurat built and gave it. Its
        # per-request path (options models, deep-copied defaults, URL parsing) cost more
        # CPU than the exchange (bench/README.md, "Whole runs"), and its only other work
        # here, retries, is off: jurat retries and records every attempt.
        headers: dict[str, str] = {}
        for name, value in [*self._client.default_headers.items(),
                            *self._client.auth_headers.items(), *_JSON_HEADERS.items()]:
            if isinstance(value, str):  # not the SDK's Omit
                headers[name.lower()] = value  # one spelling: no header sent twice
        url = str(self._client.base_url).rstrip("/") + self._path
        # The client's URL joining and header merging, done once: per request they cost
        # as much CPU as jurat's transport spends on the whole exchange.
        template = http.build_request("POST", url, headers=headers)
        self._send = plain.poster(template) if plain is not None else _sender(http, template)
        self._loop = loop
        return self._client

    async def _post(self, client: Any, content: bytes) -> bytes:
        """POST ``content`` to ``_path``; the raw response body, or a named failure.

        Failures read as the SDK reads them: a timeout, a status outside 2xx (with its
        ``retry-after``), anything else a failed connection; an oversized body is an
        unusable answer.
        """
        import httpx2

        from jurat.judges._transport import ResponseTooLarge

        try:
            status, retry_after, raw = await self._send(content)
        except httpx2.TimeoutException as exc:
            raise TransportFailure("the request timed out", kind="timeout") from exc
        except ResponseTooLarge as exc:
            raise JudgeOutputError(str(exc), kind="oversized") from exc
        except Exception as exc:  # noqa: BLE001 - as the SDKs do: any other failure is the connection's
            raise TransportFailure(f"connection failed: {exc}", kind="connection") from exc
        if not 200 <= status < 300:
            text = raw[:300].decode("utf-8", "replace")
            raise status_error(status, f"HTTP {status}: {text}", retry_after)
        return raw

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()


def load_envelope(body: bytes) -> dict[str, Any] | RawResponse:
    """The provider's envelope as a JSON object, parsed strictly, or the error response."""
    try:
        data = strict_loads(body, limit=MAX_RESPONSE_BYTES)
    except JudgeOutputError as exc:
        # Unparseable JSON here is the provider's envelope, not the judge's answer.
        kind = "malformed_response" if exc.kind == "malformed_json" else exc.kind
        return RawResponse(text=None, envelope_error=kind)
    if not isinstance(data, dict):
        return RawResponse(text=None, envelope_error="malformed_response")
    return data


def http_client(config: JudgeConfig, base_url: str | None
                ) -> tuple[httpx2.AsyncClient, PlainHTTPTransport | None]:
    """The SDK's httpx2 client, and jurat's lean transport under it for plain http (None
    for https, which keeps httpx2's transport: TLS, proxies, HTTP/2).

    ``trust_env=False``: the environment must not route artifact content anywhere the
    destination check did not see (``HTTPS_PROXY``, ``ALL_PROXY``, ``.netrc``
    credentials); redirects stay off (httpx2's default), so a judge endpoint cannot send
    jurat to another host either.
    """
    import httpx2

    if base_url is not None and base_url.startswith("http://"):
        from jurat.judges._transport import PlainHTTPTransport

        transport = PlainHTTPTransport()
        client = httpx2.AsyncClient(transport=transport, timeout=config.timeout_s,
                                    trust_env=False)
        return client, transport
    limits = httpx2.Limits(
        max_connections=config.max_concurrency, max_keepalive_connections=config.max_concurrency
    )
    return httpx2.AsyncClient(limits=limits, timeout=config.timeout_s, trust_env=False), None


def _sender(http: httpx2.AsyncClient, template: httpx2.Request) -> Post:
    """POSTs through ``http``'s own ``send``, each with ``template``'s URL, headers (but
    its Content-Length) and timeouts; the answer is read up to ``MAX_RESPONSE_BYTES`` bytes
    (else ``ResponseTooLarge``) and refused if encoded (``refuse_encoded``).

    Plain-http endpoints use their transport's ``poster`` instead (``http_client`` returns
    it; closing the client still closes it): the client's send adds nothing a judge call
    uses there (no auth flow, redirects, hooks or cookies: the template carries the
    headers and timeouts) and, with a ``Request`` and ``Response`` per call, cost more CPU
    than the transport's whole exchange (bench/README.md, "Whole runs").
    """
    import httpx2

    from jurat.judges._transport import ResponseTooLarge, refuse_encoded

    fixed = httpx2.Headers([(name, value) for name, value in template.headers.multi_items()
                            if name != "content-length"])

    async def post(body: bytes) -> tuple[int, str | None, bytes]:
        request = httpx2.Request("POST", template.url, headers=fixed, content=body,
                                 extensions=dict(template.extensions))
        response = await http.send(request, stream=True)
        try:
            refuse_encoded(response.headers.get("content-encoding"))
            raw = bytearray()
            # Bytes as sent: an encoded answer was refused just above.
            async for chunk in response.aiter_bytes():
                raw += chunk
                if len(raw) > MAX_RESPONSE_BYTES:
                    raise ResponseTooLarge(f"response body exceeds {MAX_RESPONSE_BYTES} bytes")
        finally:
            await response.aclose()
        return response.status_code, response.headers.get("retry-after"), bytes(raw)

    return post


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


def usage_of(envelope: dict[str, Any], input_key: str, output_key: str) -> dict[str, int]:
    """Token usage as ``input_tokens``/``output_tokens``, keeping only integer counts."""
    usage = envelope.get("usage")
    if not isinstance(usage, dict):
        return {}
    out = {}
    for name, key in (("input_tokens", input_key), ("output_tokens", output_key)):
        value = usage.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out
