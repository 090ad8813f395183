"""What one client may cost `jurat serve` (``ClientLimits``, enforced by ``_guard`` and
``_conn``), and the request body cap: what the largest legitimate job can need.

Without it, uvicorn reads any body whole and pydantic parses it: one request of a few
gigabytes would take the server's memory. The cap is the campaign's intake cap on an
artifact, base64-encoded, plus room for the JSON around it and upstream receipts
(``UPSTREAM_BYTES`` each). ``_guard.Guard`` enforces it while the body is read: a body that
declares more (``Content-Length``) or sends more is answered 413 before it is parsed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from jurat.errors import ConfigError
from jurat.runner import UPSTREAM_BYTES

__all__ = ["UPSTREAM_BYTES", "ClientLimits", "body_limit"]

_OVERHEAD = 64 * 1024


def body_limit(max_artifact_bytes: int, upstream: int = 8) -> int:
    """The cap for an artifact of ``max_artifact_bytes`` and ``upstream`` receipts."""
    return -(-max_artifact_bytes * 4 // 3) + upstream * UPSTREAM_BYTES + _OVERHEAD


@dataclass(frozen=True)
class ClientLimits:
    """What one client may cost the service; every field is a `jurat serve` option."""

    max_body_bytes: int | None = None
    """--max-body-bytes: the request body cap (413); None: what the largest artifact of the
    served campaigns needs (``_limits.body_limit``)."""
    body_timeout_s: float = 60.0
    """--body-timeout: seconds from a request's head to the last byte of its body (408)."""
    header_timeout_s: float = 10.0
    """--header-timeout: seconds to deliver a request's head, from the connection's start
    or the previous response (408 and closed)."""
    keep_alive_s: float = 5.0
    """--keep-alive-timeout: an idle connection between requests is closed after this."""
    max_header_bytes: int = 16 * 1024
    """--max-header-bytes: the request line and headers together (h11; 400 above)."""
    rate_per_s: float = 20.0
    """--rate-limit: requests per second per token, sustained (429); 0: no limit."""
    rate_burst: int = 100
    """--rate-burst: requests a token may make at once before the rate applies."""
    max_connections_per_address: int = 100
    """--max-connections-per-address: open connections per client IP (503 above); 0: no
    cap (behind a reverse proxy every client has the proxy's address)."""

    def __post_init__(self) -> None:
        for name, value, option in (
                ("body_timeout_s", self.body_timeout_s, "--body-timeout"),
                ("header_timeout_s", self.header_timeout_s, "--header-timeout"),
                ("keep_alive_s", self.keep_alive_s, "--keep-alive-timeout")):
            if not value > 0 or math.isinf(value):
                raise ConfigError(f"{option} {value}: must be a positive number of seconds "
                                  f"(fix: e.g. {option} {getattr(ClientLimits, name)})")
        if self.max_body_bytes is not None and self.max_body_bytes < 1:
            raise ConfigError(f"--max-body-bytes {self.max_body_bytes}: must be at least 1")
        if self.max_header_bytes < 1024:
            raise ConfigError(f"--max-header-bytes {self.max_header_bytes}: must be at least "
                              "1024 (fix: the default, 16384)")
        if not self.rate_per_s >= 0 or math.isinf(self.rate_per_s):
            raise ConfigError(f"--rate-limit {self.rate_per_s}: must be 0 (no limit) or a "
                              "positive number of requests per second")
        if self.rate_burst < 1:
            raise ConfigError(f"--rate-burst {self.rate_burst}: must be at least 1")
        if self.max_connections_per_address < 0:
            raise ConfigError(f"--max-connections-per-address "
                              f"{self.max_connections_per_address}: must be 0 (no cap) or more")
