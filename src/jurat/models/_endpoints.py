"""Where a judge sends artifact content: the one spelling of an endpoint.

Threat model. A campaign's ``allowed_destinations`` says which endpoints may read its
artifacts (docs/design.md, "Trust boundaries"), and a campaign file may be copied from a
stranger. The check that content goes nowhere else is ``judges/_destinations.py``; this
module is what it compares, kept with the records so that the campaign loader, intake, the
engine, the adapters and grounding's retrieval policy all read an endpoint the same way:

1. Two spellings of one endpoint compared with two rules (a check that passes where the
   comparison is lax, a refusal or a request where it is strict). One normalisation,
   :func:`normalise_url`: scheme and host are case-insensitive, default ports are dropped,
   a trailing slash is insignificant, and the path is compared exactly (case and
   percent-encoding included).
2. A missing base URL filled in from the environment (``ANTHROPIC_BASE_URL``,
   ``OPENAI_BASE_URL``) after the judge was allowed by its provider name. jurat resolves
   every judge's endpoint itself (:func:`endpoint`: the configured ``base_url``, else the
   provider's documented default), and that URL is the one the adapter uses.
3. URLs whose destination is hard to read the same way twice: credentials before the host
   (``http://allowed@evil``), backslashes, control characters, ``.``/``..`` path
   segments, queries and fragments, schemes other than http(s). They are refused, never
   interpreted.

A provider that is not known here fails closed: it has no endpoint, so it is never allowed.
Out of scope: name resolution (an allowed host name means whatever DNS says).
"""

from __future__ import annotations

import functools
from typing import Protocol
from urllib.parse import SplitResult, unquote, urlsplit

from jurat.errors import DestinationError

__all__ = [
    "DEFAULT_BASE_URLS",
    "LOCAL_DESTINATIONS",
    "PROVIDER_NAMES",
    "canonical_entry",
    "endpoint",
    "normalise_url",
]

#: Judges that run in this process and send content nowhere; listed by these names.
LOCAL_DESTINATIONS = ("sim", "stub", "replay")

#: The endpoint each SDK provider uses when the campaign names no ``base_url``: the SDKs'
#: documented defaults, passed to them explicitly so that they read no environment variable.
DEFAULT_BASE_URLS = {
    "openai-compat": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}

#: Provider names an ``allowed_destinations`` entry may use for the provider's own endpoint.
PROVIDER_NAMES = {"anthropic": DEFAULT_BASE_URLS["anthropic"]}

_DEFAULT_PORTS = {"http": 80, "https": 443}


@functools.lru_cache(maxsize=1024)  # asked again for every call a run sends
def normalise_url(url: str) -> str:
    """The one spelling of an endpoint base URL; ValueError naming what is wrong with it.

    ``scheme://host[:port]/path`` with scheme and host lower-cased, the scheme's default
    port dropped and trailing slashes removed; the path is kept exactly as written.
    """
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F or ch == "\\" for ch in url):
        raise ValueError(f"{url!r} contains whitespace, control characters or backslashes")
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # e.g. an unclosed IPv6 bracket
        raise ValueError(f"{url!r} is not a URL: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"{url!r}: the scheme must be http or https")
    if "@" in parts.netloc:
        raise ValueError(f"{url!r} carries credentials before the host; remove `user@`")
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise ValueError(f"{url!r}: a base URL takes no query or fragment")
    host = _host(parts, url)
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{url!r}: the port must be a number from 1 to 65535") from exc
    if port == 0:
        raise ValueError(f"{url!r}: the port must be a number from 1 to 65535")
    path = parts.path.rstrip("/")
    if any(unquote(segment) in (".", "..") for segment in path.split("/")):
        raise ValueError(f"{url!r}: the path has '.' or '..' segments")
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return f"{scheme}://{netloc}{path}"


def _host(parts: SplitResult, url: str) -> str:
    host = parts.hostname  # lower-cased, IPv6 brackets removed
    if not host:
        raise ValueError(f"{url!r} has no host")
    return f"[{host}]" if ":" in host else host


def canonical_entry(entry: str) -> str:
    """An ``allowed_destinations`` entry as :func:`endpoint` spells destinations.

    A local judge's name, a provider name (its documented endpoint), or a base URL.
    """
    name = entry.lower()
    if name in LOCAL_DESTINATIONS:
        return name
    if name in PROVIDER_NAMES:
        return PROVIDER_NAMES[name]
    try:
        return normalise_url(entry)
    except ValueError as exc:
        raise ValueError(
            f"{exc}; an entry is an http(s) base URL, a provider name "
            f"{sorted(PROVIDER_NAMES)} or a local judge {list(LOCAL_DESTINATIONS)}"
        ) from exc


class Configured(Protocol):
    """What :func:`endpoint` reads of a judge configuration (``JudgeConfig``)."""

    @property
    def id(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def base_url(self) -> str | None: ...


def endpoint(config: Configured) -> str:
    """Where ``config`` sends artifact content: a local judge's name or a normalised URL.

    For the SDK providers this is also the base URL the adapter sends to.
    Raises DestinationError for a provider with no known endpoint or an unusable base_url.
    """
    provider = config.provider
    if provider.startswith("stub:"):
        return "stub"
    if provider in ("sim", "replay"):
        return provider
    default = DEFAULT_BASE_URLS.get(provider)
    if default is None:
        raise DestinationError(
            f"judge {config.id!r}: provider {provider!r} has no known endpoint; it cannot be "
            "allowed (fix: use openai-compat with an explicit base_url)"
        )
    try:
        return normalise_url(config.base_url or default)
    except ValueError as exc:
        raise DestinationError(f"judge {config.id!r}: base_url {exc}") from exc
