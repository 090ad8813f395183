"""Whether the campaign allows where a judge sends artifact content: the one check.

Threat model. A campaign's ``allowed_destinations`` says which endpoints may read its
artifacts (docs/design.md, "Trust boundaries"); a campaign file may be copied from a stranger,
and the process environment may hold variables set for other tools. Content must go to an
endpoint that jurat resolved and checked, and nowhere else. Where a judge sends is resolved,
and every spelling of an endpoint normalised, by one rule kept with the records
(``models/_endpoints.py``: ``endpoint``, ``normalise_url``, ``canonical_entry``), so that
intake, the engine and the adapters compare what the campaign loader accepted; this module
holds the comparison. A missing base URL is never filled in from the environment
(``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``): ``endpoint`` gives the provider's documented
default, and the adapters send to exactly that URL.

A provider that is not known fails closed: it has no endpoint, so it is never allowed.
Proxy settings in the environment (``HTTPS_PROXY``, ``ALL_PROXY``) are ignored too: the
judges' HTTP clients are built with ``trust_env=False`` (``judges/_http.py``). Out of
scope: name resolution (an allowed host name means whatever DNS says).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from jurat.errors import DestinationError
from jurat.models._endpoints import LOCAL_DESTINATIONS, canonical_entry, endpoint, normalise_url

if TYPE_CHECKING:
    from jurat.models import JudgeConfig, Policy

#: The rule's own names (models/_endpoints.py) are handed on for the adapters and tests.
__all__ = [
    "LOCAL_DESTINATIONS",
    "Destinations",
    "canonical_entry",
    "check_destinations",
    "endpoint",
    "normalise_url",
]


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
