"""A dataset row as an ``[[artifacts]]`` entry (docs/campaign-format.md, "[[datasets]]").

Each row of a ``[[datasets]]`` file holds the keys of an ``[[artifacts]]`` entry, under
their own names or the file's names its ``fields`` maps them from (``RowMap``). This module
turns one row's values into an ``ArtifactSpec`` and the row's other columns (``extra``:
kept as metadata, ignored or refused), or into the problems it has, each naming the file's
column and a fix written in the file's own format (a JSON Lines row gets ``"qid": "c1"``,
never the TOML ``id = "c1"``; a CSV row the column). It does no I/O: reading a dataset,
inside the campaign directory and a line at a time, is the runner's (``runner/_datasets.py``).

Issue 29: a Hugging Face export (``question,answer,model_output,id,split``) maps its
columns instead of being converted by a script, and an integer id or task in a JSON Lines
row (``"id": 17``) is its decimal text (``"17"``); a bool or a float is still refused.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic

from jurat.campaign._translate import translate
from jurat.models._artifact import ArtifactSpec
from jurat.models._campaign import truth_problems
from jurat.models._datasets import ROW_KEYS, DatasetSpec
from jurat.models._problems import Problem, close_match

__all__ = ["ROW_KEYS", "RowMap", "RowValues", "csv_header_problems", "csv_row_values",
           "row_spec"]

#: Row keys whose JSON integer is taken as its decimal text: identifiers, which datasets
#: often number (a bool is not an integer here, nor is 1.0).
_NUMBERED = ("id", "task")
#: How close a kept column's name must be to a missing row key to be taken for its typo.
_TYPO = 0.75
#: ``key = `` in a fix the loader wrote for a campaign file (TOML).
_ASSIGNMENT = re.compile(r'(?<![\w"])([a-z_][a-z0-9_]*) = ')


@dataclass(frozen=True)
class RowValues:
    """One row read through its dataset's ``RowMap``."""

    spec: ArtifactSpec
    """The ``[[artifacts]]`` entry it holds."""
    metadata: dict[str, str] = field(default_factory=dict)
    """Its extra columns as text, when the dataset keeps them (``extra = "keep"``)."""


@dataclass(frozen=True)
class RowMap:
    """How one dataset's columns (CSV) or keys (JSON Lines) become a row's keys."""

    format: Literal["jsonl", "csv"]
    extra: Literal["keep", "ignore", "refuse"]
    keys: dict[str, tuple[str, ...]]
    """The row keys each of the file's columns is read as."""
    columns: dict[str, str]
    """The file's column for each row key (for messages)."""
    guarded: bool = False
    """``extra`` was left to its default: a column named like a row key the row lacks
    (``targte``, ``truht``) is refused as its typo rather than kept or ignored, so that a
    misspelt reference or label never goes silently unused."""

    @classmethod
    def of(cls, dataset: DatasetSpec | None = None) -> RowMap:
        """The map of ``dataset`` (None: a JSON Lines file without ``fields``)."""
        fields = dataset.fields if dataset is not None else {}
        keys: dict[str, tuple[str, ...]] = {}
        for key, column in fields.items():
            keys[column] = (*keys.get(column, ()), key)
        for key in ROW_KEYS:
            # A key read from its own column, unless mapped elsewhere or its column is
            # another key's source (fields = { text = "id", id = "qid" }).
            if key not in fields and key not in keys:
                keys[key] = (key,)
        columns = {key: column for column, mapped in keys.items() for key in mapped}
        return cls(format=dataset.format if dataset is not None else "jsonl",
                   extra=dataset.extra if dataset is not None else "refuse",
                   keys=keys, columns=columns,
                   guarded=dataset is not None and "extra" not in dataset.model_fields_set)

    def column(self, key: str) -> str:
        """The file's name of row key ``key``."""
        return self.columns.get(key, key)

    def extra_problems(self, names: Sequence[str], present: Sequence[str]) -> list[Problem]:
        """The problems of the columns no key is read from (``names``), given the columns
        the row or header has (``present``): every one if the dataset refuses them, else
        (``guarded``) those named like a row key the row lacks."""
        if self.extra == "refuse":
            return [self._unknown(name, close_match(name, list(self.keys))) for name in names]
        if not self.guarded:
            return []
        have = {key for name in present for key in self.keys.get(name, ())}
        missing = [key for key in ROW_KEYS if key not in have]
        found = []
        for name in names:
            guess = difflib.get_close_matches(name, missing, n=1, cutoff=_TYPO)
            if guess:
                found.append(self._unknown(name, guess[0]))
        return found

    def _unknown(self, name: str, guess: str | None) -> Problem:
        what = "column" if self.format == "csv" else "key"
        where = "in the header" if self.format == "csv" else "in a dataset row"
        return Problem(
            (name,), f"unknown {what} {name!r} {where}" + (
                f"; did you mean {guess!r}?" if guess else ""),
            (f"rename it to {guess}, or map it: " if guess else "map it to a row key: ")
            + f'[[datasets]] fields = {{ {guess or "text"} = "{name}" }}; or keep the '
            'columns no key is read from as metadata with extra = "keep", or drop them with '
            'extra = "ignore"')

    def split(self, values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """The row's values by row key, and its extra columns by name."""
        row: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for name, value in values.items():
            mapped = self.keys.get(name)
            if mapped is None:
                extra[name] = value
                continue
            for key in mapped:
                numbered = key in _NUMBERED and type(value) is int  # not a bool
                row[key] = str(value) if numbered else value
        return row, extra

    def fix(self, text: str) -> str:
        """A loader's fix in this file's words: ``key = …`` becomes ``"column": …`` (JSON
        Lines) or ``column 'column': …`` (CSV)."""
        if self.format == "csv":
            return _ASSIGNMENT.sub(lambda m: f"column {self.column(m[1])!r}: ", text)
        return _ASSIGNMENT.sub(lambda m: f'"{self.column(m[1])}": ', text)


def row_spec(
    values: Mapping[str, Any], *, kind: str, criterion_ids: Sequence[str] | None,
    rows: RowMap | None = None,
) -> RowValues | list[Problem]:
    """One row's values as an ``ArtifactSpec`` and its metadata, or every problem they have.

    The same checks as an ``[[artifacts]]`` entry: its keys and types, one source, and a
    ``truth`` label of the campaign's ``kind`` (``criterion_ids``: the ``[criteria]`` item
    ids, for a table of labels). Each problem's place is the file's column (``("label",)``
    for ``truth`` read from ``label``), its fix written for the file's format. ``rows``: the
    dataset's map (default: a JSON Lines file without ``fields`` refusing other keys).
    """
    rows = rows or RowMap.of()
    row, extra = rows.split(values)
    # A CSV file's columns are checked once, at its header (``csv_header_problems``).
    refused = rows.extra_problems(list(extra), list(values)) if rows.format == "jsonl" else []
    if refused:
        return refused
    try:
        spec = ArtifactSpec.model_validate(row)
    except pydantic.ValidationError as exc:
        # Translated as the entry it stands for, then re-placed in the row.
        found = translate(exc, {"artifacts": [dict(row)]}, at=("artifacts", 0))
        return [_placed(rows, Problem(f.loc[2:], _in_row(f.message), _in_row(f.fix)))
                for f in found]
    problems = truth_problems(kind, criterion_ids, [spec.truth])
    if problems:
        return [_placed(rows, Problem(p.loc[2:], p.message, p.fix)) for p in problems]
    kept = {name: _text(value) for name, value in extra.items()} if rows.extra == "keep" else {}
    return RowValues(spec, kept)


def _placed(rows: RowMap, problem: Problem) -> Problem:
    """``problem`` at the file's column, with its fix in the file's words."""
    loc = problem.loc
    if loc and isinstance(loc[0], str):
        loc = (rows.column(loc[0]), *loc[1:])
    return Problem(loc, problem.message, rows.fix(problem.fix))


def _text(value: Any) -> str:
    """A kept column's value as text: a string as it is, anything else as its JSON."""
    if isinstance(value, str):
        return value
    from jurat.canonical import canonical_json

    return canonical_json(value).decode("utf-8")


def _in_row(text: str) -> str:
    # The loader's words name the table an entry is written in; a row is not one.
    return text.replace("in [[artifacts]]", "in a dataset row")


def csv_header_problems(header: Sequence[str], rows: RowMap | None = None) -> list[Problem]:
    """The header row names each column once, every column ``fields`` maps a key from, an
    id column, and (``extra = "refuse"``) only columns a key is read from."""
    rows = rows or dataclasses.replace(RowMap.of(), format="csv")
    problems: list[Problem] = []
    seen: set[str] = set()
    for name in header:
        if name in seen:
            problems.append(Problem((name,), f"column {name!r} appears twice in the header",
                                    "name each column once"))
        seen.add(name)
    problems += rows.extra_problems([name for name in header if name not in rows.keys], header)
    for key, column in rows.columns.items():
        if key != "id" and column != key and column not in seen:  # id: the check below
            problems.append(Problem(
                ("fields", key), f"fields maps {key} from column {column!r}, which the header "
                f"lacks (it has {', '.join(header)})",
                f"name one of the header's columns: fields = {{ {key} = \"…\" }}"))
    if rows.column("id") not in seen:
        id_column = rows.column("id")
        problems.append(Problem(("id",), f"the header has no {id_column} column",
                                f"add an {id_column} column: every artifact needs its own id"
                                + ("" if id_column != "id" else
                                   ', or map another column: fields = { id = "qid" }')))
    return problems


def csv_row_values(header: Sequence[str], cells: Sequence[str]) -> dict[str, str] | Problem:
    """A CSV row as a row's values: an empty cell leaves its key out (TOML has no null)."""
    if len(cells) != len(header):
        return Problem((), f"the row has {len(cells)} cells, the header {len(header)}",
                       "give every row one cell per header column (quote cells holding commas "
                       "or line breaks)")
    return {name: cell for name, cell in zip(header, cells, strict=True) if cell != ""}
