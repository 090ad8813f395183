"""Datasets: files of artifacts, one per row (docs/campaign-format.md, "[[datasets]]").

A campaign names them with ``[[datasets]] path = "items.jsonl"`` (or ``.csv``); each row
holds the keys of an ``[[artifacts]]`` entry. This module holds the record; turning one
row's values into an ``ArtifactSpec`` is the campaign loader's (``campaign/_rows.py``), and
reading a dataset, inside the campaign directory and a line at a time, the runner's
(``runner/_datasets.py``).
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field, model_validator

from jurat.models._base import Frozen
from jurat.models._problems import Problem, raise_problems

__all__ = ["DATASET_FORMATS", "DatasetSpec"]

#: File suffixes (in any case) and the format each names.
DATASET_FORMATS: dict[str, Literal["jsonl", "csv"]] = {".jsonl": "jsonl", ".csv": "csv"}


class DatasetSpec(Frozen):
    """One ``[[datasets]]`` entry: a file whose rows are artifacts."""

    path: str = Field(min_length=1)
    """The file, relative to the campaign file and inside its directory: ``.jsonl`` (one JSON
    object per line) or ``.csv`` (a header row naming the keys)."""

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
        return self
