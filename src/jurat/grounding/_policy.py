"""The retrieval policy (allowlisted origins and limits) and the URL rule (docs/grounding.md).

Threat model. The URL to fetch comes from a candidate or a redirect, i.e. from an
adversary. It is read once, by one parser, and spelled the way the judges' destination
check spells endpoints (:func:`jurat.models._endpoints.normalise_url`: one normalisation
for every allowlist jurat keeps). Only http and https are fetched; credentials before the
host, control characters, backslashes and ``.``/``..`` segments are refused, never
interpreted. An origin is scheme, host and port: ``https://a.example`` does not allow
``http://a.example`` or ``https://a.example:8443``.
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, field_validator

from jurat.grounding._errors import RetrievalRefused
from jurat.models import Frozen
from jurat.models._endpoints import normalise_url

__all__ = ["DEFAULT_CONTENT_TYPES", "Origin", "RetrievalPolicy", "Target", "check_url"]

#: Media types a capture may have unless the policy says otherwise: text a judge can read.
DEFAULT_CONTENT_TYPES = ("text/plain", "text/html", "application/json")

_SCHEMES = ("http", "https")


def _origin_of(normalised: str) -> str:
    scheme, rest = normalised.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


class Origin(Frozen):
    """One allowlisted origin: where evidence may be fetched from."""

    url: str
    """``scheme://host[:port]``, normalised (lower-case, default port dropped); no path."""
    allow_private: bool = False
    """Let this origin (and no other) resolve to loopback, private, CGNAT or link-local
    addresses: an intranet source, or the tests' loopback servers. Never unspecified,
    multicast or reserved addresses."""

    @field_validator("url")
    @classmethod
    def _normalised_origin(cls, value: str) -> str:
        normalised = normalise_url(value)  # ValueError names the problem
        origin = _origin_of(normalised)
        if normalised != origin:
            raise ValueError(f"{value!r}: an origin is scheme://host[:port], without a path")
        return origin


class RetrievalPolicy(Frozen):
    """What one retrieval may fetch, and how much of it."""

    origins: tuple[Origin, ...]
    """The allowlist; a URL whose origin is not here is never resolved or fetched."""
    max_bytes: int = Field(default=2 * 1024 * 1024, gt=0)
    """Body size cap: reading stops at ``max_bytes + 1`` and the response is refused."""
    timeout_s: float = Field(default=10.0, gt=0)
    """Total time for the whole retrieval, redirects included."""
    max_redirects: int = Field(default=5, ge=0)
    """Redirects followed (each re-checked) before the retrieval is refused."""
    content_types: tuple[str, ...] = DEFAULT_CONTENT_TYPES
    """Media types accepted (parameters such as ``charset`` ignored), lower-case."""

    @field_validator("content_types")
    @classmethod
    def _lower(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(v.strip().lower() for v in value)

    def origin(self, url: str) -> Origin | None:
        """The allowlisted origin of a URL :func:`check_url` accepted, else None."""
        for origin in self.origins:
            if origin.url == url:
                return origin
        return None


class Target(NamedTuple):
    """A URL that passed the URL rule, with the parts the transport connects by."""

    url: str
    """The URL as requested (normalised scheme and host; path and query as written)."""
    origin: Origin
    """The allowlisted origin it belongs to."""
    host: str
    """Host name or IP literal, lower-case, without IPv6 brackets."""
    port: int
    """The port, the scheme's default filled in."""


def check_url(url: str, policy: RetrievalPolicy) -> Target:
    """The URL rule: scheme, credentials, spelling and allowlist; RetrievalRefused otherwise."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise RetrievalRefused("bad-url", str(exc), url=url) from exc
    if parts.scheme.lower() not in _SCHEMES:
        raise RetrievalRefused("scheme", "only http and https are fetched", url=url)
    if "@" in parts.netloc:
        raise RetrievalRefused("credentials", "credentials before the host", url=url)
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in parts.query):
        raise RetrievalRefused("bad-url", "whitespace or control characters", url=url)
    try:
        normalised = normalise_url(urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")))
    except ValueError as exc:
        raise RetrievalRefused("bad-url", str(exc), url=url) from exc
    host = parts.hostname or ""
    if not host.isascii():
        # IDNA would re-spell it between the allowlist and the wire; refuse, never guess.
        # Before the allowlist, so a redirect to ``http://ｂ.test/`` is named for what it is.
        raise RetrievalRefused("bad-url", "non-ASCII host names are not fetched", url=url)
    origin_url = _origin_of(normalised)
    origin = policy.origin(origin_url)
    if origin is None:
        raise RetrievalRefused(
            "not-allowlisted", f"origin {origin_url!r} is not in the allowlist", url=url
        )
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    return Target(url=f"{origin_url}{path}{query}", origin=origin, host=host, port=port)
