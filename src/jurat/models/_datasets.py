"""Datasets: files of artifacts, one per row (docs/campaign-format.md, "[[datasets]]").

A campaign names them with ``[[datasets]] path = "items.jsonl"`` (or ``.csv``); each row
holds the keys of an ``[[artifacts]]`` entry, under their own names or under the file's
names that ``fields`` maps them from (``fields = { id = "qid", text = "answer" }``, as
inspect's FieldSpec does); ``extra`` says what becomes of the other columns. This module
holds the record; turning one row's values into an ``ArtifactSpec`` is the campaign
loader's (``campaign/_rows.py``), and reading a dataset, inside the campaign directory and
a line at a time, the runner's (``runner/_datasets.py``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import Field, model_validator

from jurat.models._artifact import ArtifactSpec
from jurat.models._base import Frozen
from jurat.models._problems import Problem, close_match, raise_problems

__all__ = ["DATASET_FORMATS", "ROW_KEYS", "DatasetSpec"]

#: File suffixes (in any case) and the format each names.
DATASET_FORMATS: dict[str, Literal["jsonl", "csv"]] = {".jsonl": "jsonl", ".csv": "csv"}
#: A row's keys: those of an ``[[artifacts]]`` entry.
ROW_KEYS = tuple(ArtifactSpec.model_fields)


class DatasetSpec(Frozen):
    """One ``[[datasets]]`` entry: a file whose rows are artifacts."""

    path: str = Field(min_length=1)
    """The file, relative to the campaign file and inside its directory: ``.jsonl`` (one JSON
    object per line) or ``.csv`` (a header row naming the keys)."""
    fields: dict[str, Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=dict)
    """Which of the file's columns (CSV) or keys (JSON Lines) holds each row key, by row key:
    ``{ id = "qid", text = "model_output", input = "question", target = "answer" }``. A row
    key not named here is read from the column of its own name, unless another key is mapped
    from that column."""
    extra: Literal["keep", "ignore", "refuse"] = "keep"
    """What becomes of a column no row key is read from: ``keep`` it as the artifact's
    metadata (never shown to a judge nor written to a receipt), ``ignore`` it, or ``refuse``
    the file (exit 3 naming the column)."""

    @property
    def format(self) -> Literal["jsonl", "csv"]:
        """``jsonl`` or ``csv``, from the file's suffix."""
        return DATASET_FORMATS[PurePosixPath(self.path).suffix.lower()]

    @model_validator(mode="after")
    def _known_format(self) -> DatasetSpec:
        if PurePosixPath(self.path).suffix.lower() not in DATASET_FORMATS:
            raise_problems([Problem(
                ("path",), f"{self.path!r} is not a .jsonl or .csv file",
                'name a JSON Lines file (path = "items.jsonl", one object per line) or a CSV '
                'file with a header row (path = "items.csv")')])
        problems = []
        for key in self.fields:
            if key not in ROW_KEYS:
                guess = close_match(key, ROW_KEYS)
                problems.append(Problem(
                    ("fields", key), f"unknown row key {key!r} in fields" + (
                        f"; did you mean {guess!r}?" if guess else ""),
                    f"rename it to {guess}" if guess else
                    'map a key of [[artifacts]] to the file\'s column: fields = { id = "qid", '
                    f'text = "answer" }} (the keys: {", ".join(ROW_KEYS)})'))
        raise_problems(problems)
        return self
