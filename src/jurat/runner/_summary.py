"""The summary table printed after a run."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from jurat.models import Decision, tone_of
from jurat.runner._job import JobResult
from jurat.style import terminal_markup


def wide_console() -> Console:
    """Piped output (CI logs, files) gets a table wide enough to read, not 80 columns."""
    return Console() if Console().is_terminal else Console(width=140)


def outcome_text(d: Decision) -> str:
    """The decision word per kind (``Decision.outcome``), ``?`` when it is missing."""
    return d.outcome or "?"


def score_text(d: Decision) -> str:
    """Q for rubric kinds, pass fraction for criteria, the label otherwise."""
    if d.q is not None:
        return f"Q {d.q:.4f}"
    if d.kind == "criteria" and d.criteria:
        passed = sum(1 for c in d.criteria if c.gate == "pass")
        return f"{passed}/{len(d.criteria)} pass"
    return d.label or "-"


def agreement_text(d: Decision) -> str:
    if d.kind == "criteria" and d.criteria:
        low = min(d.criteria, key=lambda c: c.agreement)
        return f"min {low.agreement_votes}"
    return d.agreement_votes or "-"


def print_summary(results: Sequence[JobResult], console: Console, title: str) -> None:
    """Per artifact: decision, Q or pass fraction, agreement, valid/samples, gates, cost."""
    table = Table(title=title, show_lines=False)
    for col in ("artifact", "decision", "score", "agreement", "valid/samples", "gate failures",
                "cost", "review"):
        table.add_column(col)
    for r in results:
        d = r.decision
        usd = r.cost.total.usd
        table.add_row(
            r.artifact.id, terminal_markup(outcome_text(d), tone_of(d.outcome)), score_text(d),
            agreement_text(d), f"{d.valid_samples}/{d.samples}",
            ", ".join(d.gates_failed) or "-",
            "unknown" if usd is None else f"${usd:.4f}",
            f"v{r.review_version}" + (" (reused)" if r.reused else ""),
        )
    console.print(table)
