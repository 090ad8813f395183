"""Criteria campaigns against gold: one rater per (judge, criterion), seed 001 §1.

A judge's label on a criterion is the verdict the fold recorded for that (judge,
criterion) (``decision.criteria``, re-derived when the receipt was verified): ``yes`` or
``no``, and ``unsure`` (a tie, errored samples) is undecided. Gold is the expected verdict
per criterion (``criteria_gold``). There is no folded per-criterion label to compare beside
the judges: the rollout (SHIP / WARN / BLOCK) reads every criterion at once, so it has no
``decision`` rater. An artifact no judge was asked about (a veto) is counted as not asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from jurat.calibrate._agreement import Agreement, agreement
from jurat.calibrate._gold import GOLD_LABELS, criteria_gold
from jurat.calibrate._labels import asked
from jurat.errors import ConfigError
from jurat.receipts import Statement

__all__ = ["criteria_raters", "read_criteria_gold"]


def read_criteria_gold(raw: Mapping[str, object], criteria: tuple[str, ...],
                       gold_path: Path) -> dict[str, dict[str, str]]:
    """Artifact id → criterion id → gold verdict; a bad label names the artifact."""
    gold: dict[str, dict[str, str]] = {}
    for artifact, label in raw.items():
        read = criteria_gold(label, criteria)
        if isinstance(read, str):
            raise ConfigError(f"{gold_path}: artifact {artifact!r}: field `label`: {read} "
                              '(fix: "yes", "no", or {"<criterion id>": "yes", …})')
        gold[artifact] = read
    return gold


def _verdict(statement: Statement, judge: str, criterion: str) -> str | None:
    for outcome in statement.predicate.decision.criteria:
        if outcome.judge == judge and outcome.criterion_id == criterion:
            return outcome.verdict if outcome.verdict in ("yes", "no") else None
    return None  # not evaluated (no samples recorded): undecided, never dropped


def criteria_raters(statements: Mapping[str, Statement], compared: Sequence[str],
                    gold: Mapping[str, Mapping[str, str]], judges: Sequence[str],
                    criteria: Sequence[str]) -> tuple[Agreement, ...]:
    """Every (judge, criterion) against gold, on the artifacts it was asked about."""
    raters: list[Agreement] = []
    for judge in judges:
        for criterion in criteria:
            rows = [a for a in compared if criterion in gold[a]]
            judged = [a for a in rows if asked(statements[a], judge)]
            raters.append(agreement(
                judge, GOLD_LABELS["criteria"], [gold[a][criterion] for a in judged],
                [_verdict(statements[a], judge, criterion) for a in judged],
                not_asked=len(rows) - len(judged),
            ).model_copy(update={"criterion": criterion}))
    return tuple(raters)
