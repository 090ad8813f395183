"""The one error a request can end in: an HTTP status with what was wrong and the fix.

Every refusal of the service is a ``ServiceRefusal``; the app (``_app.py``) turns it into a JSON
body (``ErrorOut``) in one place. Messages are written for whoever holds the token that
asked: they never quote reference material, another contributor's data, or exception
text from deeper layers (which may quote either); those go to the server's log.
"""

from __future__ import annotations

from jurat.errors import JuratError

__all__ = ["LEDGER_UNAVAILABLE", "RETRY_SOON", "ServiceRefusal"]


class ServiceRefusal(JuratError):
    """A request refused with ``status`` (4xx), naming the ``field`` and the ``fix``."""

    def __init__(self, status: int, message: str, *, field: str | None = None,
                 fix: str | None = None) -> None:
        self.status = status
        self.field = field
        self.fix = fix
        super().__init__(message)

    def diagnostics(self) -> str:
        """The message and, on a line of its own, the fix (for the command line)."""
        return str(self) + (f"\nfix: {self.fix}" if self.fix else "")

    def body(self) -> dict[str, str | None]:
        """The JSON body of the response."""
        return {"error": str(self), "field": self.field, "fix": self.fix}


#: What a request that the ledger could not serve gets (the database unreachable, its
#: session cut, a restart under way): 503 with ``Retry-After``, never a 500, and never
#: the driver's words (they name hosts and databases). Nothing was changed by it.
LEDGER_UNAVAILABLE = ServiceRefusal(
    503, "the ledger cannot be reached now", fix="retry in a moment; what was recorded stays")
RETRY_SOON: tuple[tuple[bytes, bytes], ...] = ((b"retry-after", b"1"),)
