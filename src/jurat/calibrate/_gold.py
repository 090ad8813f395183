"""The gold file: one JSON object per line, ``{"id": <artifact id>, "label": <label>}``.

Labels are read per campaign kind (``GOLD_LABELS``); an equivalence label may also be a
JSON boolean (true = EQUIVALENT), which is how GSM8K's ``is_correct`` reads. A criteria
label is the expected verdict, as an artifact's ``truth`` gives it: ``"yes"`` or ``"no"``
for every criterion, or an object with one per criterion id (``criteria_gold``). Every line
is parsed by the one strict parser, and a bad line names the file, the line and the field.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from jurat.canonical import StrictJSONError, loads_strict
from jurat.errors import ConfigError
from jurat.models import Frozen

__all__ = ["GOLD_LABELS", "MAX_GOLD_BYTES", "Gold", "criteria_gold", "load_gold",
           "normalise_label"]

#: The labels a gold file may give, per campaign kind (the fold's own labels).
GOLD_LABELS: dict[str, tuple[str, ...]] = {
    "rubric": ("accept", "reject"),
    "pairwise": ("A", "B", "tie"),
    "equivalence": ("EQUIVALENT", "DIFFERENT"),
    "criteria": ("yes", "no"),
}

#: A gold file is read whole (it is the operator's own labels); past this it is refused.
MAX_GOLD_BYTES = 64 * 1024 * 1024


def normalise_label(kind: str, raw: object) -> str | None:
    """``raw`` as one of ``GOLD_LABELS[kind]`` (case-insensitive), or None."""
    if kind == "criteria" and isinstance(raw, bool):
        return "yes" if raw else "no"
    if kind == "equivalence" and isinstance(raw, bool):
        return "EQUIVALENT" if raw else "DIFFERENT"
    if not isinstance(raw, str):
        return None
    for label in GOLD_LABELS[kind]:
        if label.lower() == raw.strip().lower():
            return label
    return None


def criteria_gold(raw: object, criteria: tuple[str, ...]) -> dict[str, str] | str:
    """A criteria gold label as criterion id → ``yes``/``no``, or what is wrong with it.

    One verdict applies to every criterion; an object names its criteria (ids among
    ``criteria``; a criterion left out is not compared on that artifact).
    """
    if isinstance(raw, dict):
        unknown = sorted(set(raw) - set(criteria))
        if unknown:
            return f"criterion {unknown[0]!r} is not among [criteria] items {list(criteria)}"
        out: dict[str, str] = {}
        for criterion in criteria:
            if criterion in raw:
                label = normalise_label("criteria", raw[criterion])
                if label is None:
                    return f"criterion {criterion!r}: {raw[criterion]!r} is not yes or no"
                out[criterion] = label
        return out
    label = normalise_label("criteria", raw)
    if label is None:
        return f"{raw!r} is not yes or no (or an object of them per criterion id)"
    return dict.fromkeys(criteria, label)


class Gold(Frozen):
    """A gold file as read: its labels and the digest of exactly the bytes they came from."""

    labels: dict[str, object]
    """Artifact id → raw gold label, in file order (checked once the kind is known)."""
    sha256: str
    """SHA-256 of the file's bytes."""


def load_gold(path: Path) -> Gold:
    """The gold file's labels and digest, from one read of it.

    Raises ConfigError naming the file, line and field for anything else.
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_GOLD_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read gold file {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_GOLD_BYTES:
        raise ConfigError(f"{path}: gold file over {MAX_GOLD_BYTES} bytes "
                          "(fix: split it, one campaign's artifacts per file)")
    gold: dict[str, object] = {}
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = loads_strict(line)
        except StrictJSONError as exc:
            raise ConfigError(f"{where}: not a JSON object: {exc} "
                              '(fix: one {"id": …, "label": …} object per line)') from exc
        if not isinstance(row, dict):
            raise ConfigError(f'{where}: not a JSON object (fix: {{"id": …, "label": …}})')
        unknown = sorted(set(row) - {"id", "label"})
        if unknown:
            raise ConfigError(f"{where}: unknown field `{unknown[0]}` "
                              "(fix: a gold row has only `id` and `label`)")
        artifact, label = row.get("id"), row.get("label")
        if not isinstance(artifact, str) or not artifact:
            raise ConfigError(f"{where}: field `id` must be the artifact's id, a non-empty string")
        if not isinstance(label, str | bool | dict):
            raise ConfigError(f"{where}: field `label` must be a string (or a boolean for "
                              "equivalence, or an object of criterion id → yes/no for "
                              "criteria)")
        if artifact in gold:
            raise ConfigError(f"{where}: field `id`: {artifact!r} is labelled twice "
                              "(fix: one row per artifact)")
        gold[artifact] = label
    if not gold:
        raise ConfigError(f"{path}: no gold rows (fix: one {{\"id\", \"label\"}} object per line)")
    return Gold(labels=gold, sha256=hashlib.sha256(data).hexdigest())
