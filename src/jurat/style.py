"""Colours of the decision tones: the one place the HTML report and the terminal read them.

What a decision word means (its ``Tone``) is decided in ``jurat.models`` (``tone_of``); this
module only says how each tone looks, on a page and in a terminal.
"""

from __future__ import annotations

from typing import Final

from jurat.models import Tone

__all__ = ["TONE_HEX", "TONE_TERMINAL", "terminal_markup"]

#: CSS colours of the HTML report (badges carry white text on them).
TONE_HEX: Final[dict[Tone, str]] = {
    "good": "#1a7f37",
    "bad": "#c62828",
    "hold": "#b26a00",
    "none": "#59636e",
}

#: Rich colour names for terminal tables; ``none`` stays unstyled.
TONE_TERMINAL: Final[dict[Tone, str]] = {
    "good": "green",
    "bad": "red",
    "hold": "yellow",
    "none": "",
}


def terminal_markup(text: str, tone: Tone) -> str:
    """``text`` in its tone's colour as Rich markup (the caller escapes ``text``)."""
    colour = TONE_TERMINAL[tone]
    return f"[{colour}]{text}[/]" if colour else text
