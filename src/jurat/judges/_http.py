"""What the two SDK adapters share: their httpx2 client and the mapping of failures to kinds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from jurat.errors import JudgeOutputError
from jurat.judges._protocol import TransportFailure
from jurat.models import JudgeConfig

if TYPE_CHECKING:
    import httpx2

__all__ = ["connection_failure", "http_client", "status_error", "usage_of"]


def http_client(config: JudgeConfig, base_url: str | None) -> httpx2.AsyncClient:
    """The SDK's httpx2 client: jurat's lean transport for plain http, httpx2's for https."""
    import httpx2

    if base_url is not None and base_url.startswith("http://"):
        from jurat.judges._transport import PlainHTTPTransport

        return httpx2.AsyncClient(transport=PlainHTTPTransport(), timeout=config.timeout_s)
    limits = httpx2.Limits(
        max_connections=config.max_concurrency, max_keepalive_connections=config.max_concurrency
    )
    return httpx2.AsyncClient(limits=limits, timeout=config.timeout_s)


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


def connection_failure(exc: BaseException) -> Exception:
    """A failed exchange: an oversized body is an (unusable) answer, anything else no answer."""
    from jurat.judges._transport import ResponseTooLarge

    if isinstance(exc.__cause__, ResponseTooLarge):
        return JudgeOutputError(str(exc.__cause__), kind="oversized")
    return TransportFailure(f"connection failed: {exc}", kind="connection")


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
