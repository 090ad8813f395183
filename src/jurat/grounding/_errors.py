"""The one error a retrieval raises: a refusal with a named reason (docs/grounding.md)."""

from __future__ import annotations

from typing import Literal, get_args

from jurat.errors import JuratError

__all__ = ["REASONS", "RefusalReason", "RetrievalRefused"]

RefusalReason = Literal[
    "scheme",
    "credentials",
    "bad-url",
    "not-allowlisted",
    "private-address",
    "unresolvable",
    "redirect-to-forbidden",
    "too-many-redirects",
    "too-large",
    "timeout",
    "content-type",
    "content-encoding",
    "status",
    "connect",
    "tls",
    "protocol",
]
"""Why a retrieval was refused or cut; each is a rule of docs/grounding.md."""

REASONS: tuple[RefusalReason, ...] = get_args(RefusalReason)


class RetrievalRefused(JuratError):
    """A retrieval refused or cut by a rule; nothing of the refused response is returned.

    ``reason`` names the rule, ``url`` the URL it refused. For ``redirect-to-forbidden``,
    ``cause`` is the rule the redirect target broke (``private-address``, ``scheme``, ...).
    """

    def __init__(
        self,
        reason: RefusalReason,
        message: str,
        *,
        url: str,
        cause: RefusalReason | None = None,
    ) -> None:
        self.reason: RefusalReason = reason
        self.url = url
        self.cause: RefusalReason | None = cause
        super().__init__(f"retrieval refused ({reason}): {url!r}: {message}")
