"""A dataset row as an ``[[artifacts]]`` entry (docs/campaign-format.md, "[[datasets]]").

Each row of a ``[[datasets]]`` file holds the keys of an ``[[artifacts]]`` entry. This
module turns one row's values into an ``ArtifactSpec``, or into the problems it has, each
naming the row's key and the fix, in the campaign loader's words (``campaign/_translate.py``).
It does no I/O: reading a dataset, inside the campaign directory and a line at a time, is
the runner's (``runner/_datasets.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pydantic

from jurat.campaign._translate import translate
from jurat.models._artifact import ArtifactSpec
from jurat.models._campaign import truth_problems
from jurat.models._problems import Problem, close_match

__all__ = ["ROW_KEYS", "csv_header_problems", "csv_row_values", "row_spec"]

#: A row's keys: those of an ``[[artifacts]]`` entry.
ROW_KEYS = tuple(ArtifactSpec.model_fields)


def row_spec(
    values: Mapping[str, Any], *, kind: str, criterion_ids: Sequence[str] | None
) -> ArtifactSpec | list[Problem]:
    """One row's values as an ``ArtifactSpec``, or every problem they have.

    The same checks as an ``[[artifacts]]`` entry: its keys and types, one source, and a
    ``truth`` label of the campaign's ``kind`` (``criterion_ids``: the ``[criteria]`` item
    ids, for a table of labels). Each problem's place is the row's key (``("truth",)``).
    """
    try:
        spec = ArtifactSpec.model_validate(values)
    except pydantic.ValidationError as exc:
        # Translated as the entry it stands for, then re-placed in the row.
        found = translate(exc, {"artifacts": [dict(values)]}, at=("artifacts", 0))
        return [Problem(f.loc[2:], _in_row(f.message), _in_row(f.fix)) for f in found]
    problems = truth_problems(kind, criterion_ids, [spec.truth])
    if problems:
        return [Problem(p.loc[2:], p.message, p.fix) for p in problems]
    return spec


def _in_row(text: str) -> str:
    # The loader's words name the table an entry is written in; a row is not one.
    return text.replace("in [[artifacts]]", "in a dataset row")


def csv_header_problems(header: Sequence[str]) -> list[Problem]:
    """The header row names each key once, and only keys an ``[[artifacts]]`` entry takes."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for name in header:
        if name in seen:
            problems.append(Problem((name,), f"column {name!r} appears twice in the header",
                                    "name each column once"))
        seen.add(name)
        if name not in ROW_KEYS:
            guess = close_match(name, ROW_KEYS)
            problems.append(Problem(
                (name,), f"unknown column {name!r}" + (
                    f"; did you mean {guess!r}?" if guess else ""),
                f"rename it to {guess}" if guess else
                f"remove it; a row takes the keys of [[artifacts]]: {', '.join(ROW_KEYS)}"))
    if "id" not in seen:
        problems.append(Problem(("id",), "the header has no id column",
                                "add an id column: every artifact needs its own id"))
    return problems


def csv_row_values(header: Sequence[str], cells: Sequence[str]) -> dict[str, str] | Problem:
    """A CSV row as a row's values: an empty cell leaves its key out (TOML has no null)."""
    if len(cells) != len(header):
        return Problem((), f"the row has {len(cells)} cells, the header {len(header)}",
                       "give every row one cell per header column (quote cells holding commas "
                       "or line breaks)")
    return {name: cell for name, cell in zip(header, cells, strict=True) if cell != ""}
