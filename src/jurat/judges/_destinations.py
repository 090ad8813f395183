"""Where a judge sends artifact content, and whether the campaign allows it: the one check.

Threat model. A campaign's ``allowed_destinations`` says which endpoints may read its
artifacts (docs/design.md, "Trust boundaries"); a campaign file may be copied from a stranger,
and the process environment may hold variables set for other tools. Content must go to an
endpoint that jurat resolved and checked, and nowhere else. Three ways around a check are
closed here:

1. Two spellings of one endpoint compared in two places with two rules (a check that
   passes where the comparison is lax, a refusal or a request where it is strict). One
   normalisation, :func:`normalise_url`, serves intake, the engine and the adapters: scheme
   and host are case-insensitive, default ports are dropped, a trailing slash is
   insignificant, and the path is compared exactly (case and percent-encoding included).
2. An SDK filling a missing base URL in from the environment (``ANTHROPIC_BASE_URL``,
   ``OPENAI_BASE_URL``) after jurat allowed the judge by its provider name. jurat resolves
   every judge's endpoint itself (:func:`endpoint`: the configured ``base_url``, else the
   provider's documented default) and hands exactly that URL to the SDK, which then never
   consults the environment; the environment cannot widen a campaign's destinations.
3. URLs whose destination is hard to read the same way twice: credentials before the host
   (``http://allowed@evil``), backslashes, control characters, ``.``/``..`` path
   segments, queries and fragments, schemes other than http(s). They are refused, never
   interpreted.

A provider that is not known here fails closed: it has no endpoint, so it is never allowed.
Proxy settings in the environment (``HTTPS_PROXY``, ``ALL_PROXY``) are ignored too: the
judges' HTTP clients are built with ``trust_env=False`` (``judges/_http.py``). Out of
scope: name resolution (an allowed host name means whatever DNS says).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, unquote, urlsplit

from jurat.errors import DestinationError

if TYPE_CHECKING:
    from jurat.models import JudgeConfig, Policy

__all__ = [
    "DEFAULT_BASE_URLS",
    "LOCAL_DESTINATIONS",
    "PROVIDER_NAMES",
    "Destinations",
    "canonical_entry",
    "check_destinations",
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


def endpoint(config: JudgeConfig) -> str:
    """Where ``config`` sends artifact content: a local judge's name or a normalised URL.

    For the SDK providers this is also the base URL the adapter gives its SDK client.
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


class Destinations:
    """A campaign's ``allowed_destinations``, normalised once; ``check`` is the only gate."""

    def __init__(self, allowed: Iterable[str]) -> None:
        self.entries = tuple(allowed)
        try:
            self._allowed = frozenset(canonical_entry(e) for e in self.entries)
        except ValueError as exc:
            raise DestinationError(f"campaign.allowed_destinations: {exc}") from exc

    def allows(self, config: JudgeConfig) -> bool:
        """Whether ``config``'s endpoint is allowed (never raises for a bad config: False)."""
        try:
            return endpoint(config) in self._allowed
        except DestinationError:
            return False

    def check(self, config: JudgeConfig, *, field: str, source: str | None = None) -> None:
        """Raise DestinationError unless ``config``'s endpoint is allowed.

        ``field`` is the campaign field the judge sits at (``judges[0]``, ``subject``);
        ``source`` the campaign file, named first in the message when known.
        """
        where = f"{source}: " if source else ""
        where += f"field `{field}.{'base_url' if config.base_url else 'provider'}`: "
        try:
            target = endpoint(config)
        except DestinationError as exc:
            raise DestinationError(f"{where}{exc}") from exc
        if target in self._allowed:
            return
        how = "" if config.base_url or target in LOCAL_DESTINATIONS else (
            f" (no base_url: the {config.provider} provider's documented endpoint; "
            "base-URL environment variables are never read)"
        )
        raise DestinationError(
            f"{where}judge {config.id!r} would send artifact content to {target!r}{how}, which "
            f"is not in campaign.allowed_destinations {list(self.entries)} (fix: add "
            f"{target!r} to allowed_destinations if that endpoint is authorised to see this "
            "content, or give the judge an allowed base_url)"
        )

    def check_policy(self, policy: Policy, *, source: str | None = None) -> None:
        """Check every judge of the panel, then the criteria ``[subject]``."""
        for index, config in enumerate(policy.judges):
            self.check(config, field=f"judges[{index}]", source=source)
        if policy.subject is not None:
            self.check(policy.subject, field="subject", source=source)


def check_destinations(policy: Policy, *, source: str | None = None) -> None:
    """Refuse any judge (or subject) whose endpoint is not in ``allowed_destinations``."""
    Destinations(policy.allowed_destinations).check_policy(policy, source=source)
