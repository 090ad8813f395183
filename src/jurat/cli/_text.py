"""Text from outside (receipts, campaign values, error messages) made safe for a terminal.

A receipt or a campaign file can hold any characters: printed raw, a newline could forge
a line of output, an ANSI sequence rewrite the screen, Rich markup restyle it, and a
megabyte value flood it. Everything untrusted that a command prints passes ``shown``.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

__all__ = ["SHOWN_CHARS", "err_console", "shown"]

#: The default cap on one shown value.
SHOWN_CHARS = 300


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` as one printable line of at most ``limit`` characters, Rich-escaped.

    Control and other non-printable characters appear as their Python escapes (``\\n``,
    ``\\x1b``), never as themselves.
    """
    text = str(value)
    clean = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[: limit + 1])
    if len(text) > limit:
        clean = clean[:limit] + "..."
    return escape(clean)


def err_console() -> Console:
    """Standard error, lines never wrapped (a wrapped path or digest cannot be copied)."""
    return Console(emoji=False, stderr=True, soft_wrap=True, highlight=False)
