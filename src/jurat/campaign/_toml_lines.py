"""The line of every table, key and array entry in a TOML text, for messages that name one.

``tomllib`` returns values without positions, so the campaign loader reads the text again
with this small scanner. It runs only on text ``tomllib`` has already accepted, which keeps
it simple: strings and comments are blanked out first (so a ``[`` or ``=`` inside a string
is never read as syntax), then headers, keys and the entries of arrays that span several
lines (``criteria = [`` with one ``{ … }`` per line) are numbered. A place it cannot see (a
quoted key, an entry inside a one-line array) falls back to the nearest enclosing place
that it can: the key's line, else its table's header.
"""

from __future__ import annotations

from dataclasses import dataclass

from jurat.models._problems import Loc

__all__ = ["TomlLines"]


@dataclass
class _Open:
    """An array or inline table still open at the end of a line."""

    bracket: str
    path: Loc | None
    """Where its entries are (None: inside an inline table, not numbered)."""
    entries: int = 0
    expecting: bool = True


class TomlLines:
    """Lines (1-based) of the places in one TOML text; see the module docstring."""

    def __init__(self, text: str) -> None:
        self._text: str | None = text
        self._at: dict[Loc, int] = {}
        self._headers: dict[Loc, str] = {}
        self._arrays: dict[tuple[str, ...], int] = {}
        self._table: Loc = ()
        self._open: list[_Open] = []

    def _index(self) -> None:
        """Read the text on first use: a campaign that loads cleanly never needs its lines."""
        if self._text is None:
            return
        text, self._text = self._text, None
        raw = text.split("\n")
        for number, line in enumerate(_blanked(text), start=1):
            self._read(line, raw[number - 1] if number <= len(raw) else "", number)

    def line(self, loc: Loc) -> int | None:
        """The line of ``loc``, or of the nearest enclosing place found; None if none is."""
        self._index()
        for size in range(len(loc), 0, -1):
            found = self._at.get(loc[:size])
            if found is not None:
                return found
        return None

    def header(self, prefix: Loc) -> str | None:
        """The first table header whose path starts with ``prefix``, as written."""
        self._index()
        for path, written in self._headers.items():
            if tuple(p for p in path if not isinstance(p, int))[: len(prefix)] == prefix:
                return written
        return None

    def _read(self, line: str, raw: str, number: int) -> None:
        if self._open:
            self._value(line, None, number)
            return
        text = line.strip()
        if text.startswith("["):
            self._header(text, raw, number)
        elif "=" in text:
            key, _, value = text.partition("=")
            path = (*self._table, *(part.strip() for part in key.split(".")))
            for size in range(len(self._table) + 1, len(path)):
                self._at.setdefault(path[:size], number)
            self._at[path] = number
            self._value(value, path, number)

    def _header(self, text: str, raw: str, number: int) -> None:
        array = text.startswith("[[")
        inner = text[2 : text.index("]]")] if array else text[1 : text.index("]")]
        parts = [part.strip() for part in inner.split(".")]
        path: list[str | int] = []
        for size in range(1, len(parts) + 1):
            logical = tuple(parts[:size])
            path.append(parts[size - 1])
            if array and size == len(parts):
                index = self._arrays.get(logical, 0)
                self._arrays[logical] = index + 1
                path.append(index)
            elif logical in self._arrays:
                path.append(self._arrays[logical] - 1)
        self._table = tuple(path)
        for size in range(1, len(path)):
            self._at.setdefault(self._table[:size], number)
        self._at[self._table] = number
        self._headers[self._table] = raw.split("#", 1)[0].strip()

    def _value(self, text: str, path: Loc | None, number: int) -> None:
        """Follow brackets through a value; number the entries of arrays as they start."""
        for char in text:
            if char.isspace():
                continue
            top = self._open[-1] if self._open else None
            if top is None:
                if char in "[{":
                    self._open.append(_Open(char, path))
                continue
            if top.bracket == "[" and top.expecting and char not in ",]":
                entry = (*top.path, top.entries) if top.path is not None else None
                if entry is not None:
                    self._at[entry] = number
                top.entries += 1
                top.expecting = False
                if char in "[{":
                    self._open.append(_Open(char, entry))
            elif char == ",":
                top.expecting = top.bracket == "["
            elif char in "]}":
                self._open.pop()
            elif char in "[{":
                self._open.append(_Open(char, None))


def _blanked(text: str) -> list[str]:
    """The text's lines with comments removed and every string replaced by one ``"``."""
    lines: list[str] = []
    out: list[str] = []
    quote = ""  # the delimiter of the string being skipped: ", ', \"\"\" or '''
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char == "\n":
            lines.append("".join(out))
            out = []
            if len(quote) == 1:
                quote = ""  # a one-line string cannot span lines (tomllib refused it)
            i += 1
        elif not quote:
            if char == "#":
                newline = text.find("\n", i)
                i = end if newline < 0 else newline
            elif char in "\"'":
                quote = char * 3 if text.startswith(char * 3, i) else char
                out.append('"')
                i += len(quote)
            else:
                out.append(char)
                i += 1
        elif char == "\\" and quote[0] == '"':
            # An escape: skip the escaped character, but never a line break (counted above).
            i += 1 if text.startswith("\n", i + 1) else 2
        elif text.startswith(quote, i):
            run = i
            while run < end and text[run] == quote[0]:
                run += 1
            # A multi-line string may end with up to two quotes of its own before the delimiter.
            i = run if len(quote) == 3 else i + 1
            quote = ""
        else:
            i += 1
    lines.append("".join(out))
    return lines
