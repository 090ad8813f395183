"""The progress bar of ``jurat run``: artifacts done of the total, samples of those planned,
errors, rate, spend (``unknown`` once a sample had no price) and the time left.

``campaign ━━━ 2/6 samples 12/≤36 3.1/s errors 0 spend unknown eta 0:00:08``:
the planned samples are the most the jobs can draw (``planned_per_artifact`` × artifacts);
a veto, a deterministic settlement, curtailment or a resumed job draws fewer, hence ``≤``.
The time left is read from the artifacts finished so far, or, before the first finishes,
from the samples drawn against those planned; once every artifact is done, the time taken.
"""

from __future__ import annotations

from datetime import timedelta

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
)
from rich.text import Text

__all__ = ["run_bar", "spend_text"]


def spend_text(usd: float, unpriced: int) -> str:
    """``$0.0123``, or ``unknown`` once a sample was drawn at an unknown price."""
    return "unknown" if unpriced else f"${usd:.4f}"


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    return str(timedelta(seconds=max(0, int(seconds))))


class _Counts(ProgressColumn):
    """Samples of those planned, errors, rate, spend and the time left."""

    def render(self, task: Task) -> Text:
        f = task.fields
        samples: int = f["samples"]
        planned: int | None = f["planned"]
        elapsed = task.elapsed or 0.0
        rate = samples / elapsed if elapsed > 0 else None
        left: float | None = None
        if task.total and task.completed:
            left = elapsed / task.completed * (task.total - task.completed)
        elif planned and samples and rate:
            left = max(0, planned - samples) / rate
        shown = f"samples {samples}" + (f"/≤{planned}" if planned is not None else "")
        speed = "-" if rate is None else f"{rate:.1f}"
        time = f"took {_clock(elapsed)}" if task.finished else f"eta {_clock(left)}"
        return Text(f"{shown} {speed}/s errors {f['errors']} spend "
                    f"{spend_text(f['spend'], f['unpriced'])} {time}")


def run_bar(console: Console, *, disable: bool) -> Progress:
    """The bar; add its task with the fields samples, errors, spend, unpriced, planned."""
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(bar_width=8), MofNCompleteColumn(),
        _Counts(),
        console=console, disable=disable, transient=False,
    )
