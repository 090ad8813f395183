"""What a record's semantic checks find: every problem, with where it is and how to fix it.

A semantic check (weights sum to 1, ids are unique, a truth label belongs to the kind) is a
plain function that returns *every* problem it finds. A model's validator raises them
together as one ``RecordProblems``; the campaign loader (``campaign/_load.py``) runs the same
functions on each part of a file that is valid on its own, so that a wrong field elsewhere
does not hide a problem, and reports them all at once (docs/campaign-format.md, "Errors").
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = [
    "Loc",
    "Problem",
    "RecordProblems",
    "close_match",
    "dotted",
    "duplicate_problems",
    "duplicates",
    "raise_problems",
]

Loc = tuple[str | int, ...]
"""A place in a record or a TOML file: keys, and indexes into arrays."""


class Problem(NamedTuple):
    """One thing wrong with a record."""

    loc: Loc
    """Where, relative to the record checked: ``("criteria",)``, ``("items", 2, "id")``."""
    message: str
    """What is wrong, in words a user reads: the value found, never library text."""
    fix: str
    """What to write instead."""


class RecordProblems(ValueError):  # noqa: N818 - it carries problems; pydantic wants a ValueError
    """Every problem a validator found. A ValueError because that is what pydantic turns into
    a validation error; the campaign loader unpacks ``problems`` from it."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__(
            "; ".join(f"{dotted(p.loc)}: {p.message}" if p.loc else p.message for p in problems)
        )


def raise_problems(problems: Sequence[Problem]) -> None:
    """Raise ``RecordProblems`` if there are any."""
    if problems:
        raise RecordProblems(problems)


#: Repeated ids listed one by one before the rest are counted.
_LISTED = 20


def duplicate_problems(ids: Sequence[str], table: str, what: str) -> list[Problem]:
    """One problem per repeated id, at its first repeat (``table[i].id``), naming the first.

    At most ``_LISTED`` are listed, then one problem counts the rest: a dataset campaign may
    repeat thousands of ids, and the first few say what went wrong. One pass.
    """
    first: dict[str, int] = {}
    reported: set[str] = set()
    problems: list[Problem] = []
    for index, value in enumerate(ids):
        if value not in first:
            first[value] = index
        elif value not in reported:
            reported.add(value)
            problems.append(Problem(
                (table, index, "id"),
                f"duplicate {what} id {value!r} (first at {table}[{first[value]}])",
                f"give each {what} its own id",
            ))
    if len(problems) > _LISTED:
        more = len(problems) - _LISTED
        problems = [*problems[:_LISTED], Problem(
            (table,), f"and {more} more duplicated {what} ids", f"give each {what} its own id")]
    return problems


def duplicates(ids: Iterable[str]) -> list[str]:
    """The ids that occur more than once, sorted; one pass (a campaign may hold 10^5 ids)."""
    return sorted(i for i, n in Counter(ids).items() if n > 1)


def close_match(word: str, known: Iterable[str]) -> str | None:
    """The known name closest to a misspelt one (``difflib``'s ratio at least 0.6), or None."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def dotted(loc: Loc) -> str:
    """``("judges", 0, "provider")`` as ``judges[0].provider``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
