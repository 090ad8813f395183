"""``jurat run``'s summary on the terminal: the table, the reasons, judge health, counts.

What it says is computed in ``runner/_summary.py``; this module only lays it out. Every
value that came from outside (artifact ids, contributors, test ids and assertion lines,
error kinds) passes ``shown``, so a hostile artifact or test cannot restyle or forge a
line. Lines marked ``›`` quote the campaign's tests: the operator's terminal is the one
place they appear (docs/receipt-format.md §11).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from jurat.cli._text import shown
from jurat.judges import BiasReading
from jurat.models import Campaign, MonitorBounds
from jurat.runner import JudgeHealth, RunTally
from jurat.style import terminal_markup

__all__ = ["print_summary"]

#: The longest evidence line shown; the receipt and `jurat check` have the rest.
_LINE_CHARS = 240


def print_summary(tally: RunTally, console: Console, campaign: Campaign, *,
                  show_hidden: bool = False) -> list[JudgeHealth]:
    """Print the summary of a run; returns the judges' health (the exit status reads it).

    A large run shows the rows ``tally`` kept (those with reasons first) and counts the
    rest; the counts below the table cover every artifact. Hidden-test lines (``Line.
    reference``: the tests' names, assertion lines, what the candidate did while it held
    their inputs) are printed only with ``show_hidden`` (``--show-hidden``): this
    output is often a public CI log (issue 36).
    """
    policy = campaign.policy
    rows = tally.rows
    table = Table(title=shown(f"campaign {campaign.id} ({policy.kind})"), show_lines=False)
    for col in ("artifact", "decision", "score", "agreement", "valid/samples", "gate failures",
                "cost", "review"):
        table.add_column(col)
    for row in rows:
        table.add_row(shown(row.artifact), terminal_markup(shown(row.outcome), row.tone),
                      *(shown(cell) for cell in (row.score, row.agreement, row.samples,
                                                 row.gates, row.cost, row.review)))
    console.print(table)
    if tally.rows_left_out:
        console.print(f"… and {tally.rows_left_out} more artifacts, not listed (those "
                      "with reasons are listed first): they are counted below, each has its "
                      "receipt, and `jurat report` shows them all", highlight=False)
    explained = [row for row in rows if row.reasons]
    if explained:
        withheld = 0 if show_hidden else sum(
            1 for row in explained for line in row.reasons if line.reference)
        quoting = show_hidden and any(line.reference for row in explained
                                      for line in row.reasons)
        lines = ["reasons, root cause first" + (
            " (› is hidden-test detail: shown here only, never in receipts, the board, "
            "telemetry or the report)" if quoting else "")]
        for row in explained:
            lines.append(f"  {shown(row.artifact)}  "
                         f"{terminal_markup(shown(row.outcome), row.tone)}")
            for line in row.reasons:
                if line.reference and not show_hidden:
                    continue
                mark = "› " if line.reference else ""
                indent = "    " + "  " * line.depth
                lines.append(indent + mark + shown(line.text, _LINE_CHARS))
        if withheld:
            lines.append(f"hidden-test detail withheld ({withheld} lines: which tests failed "
                         "and how): this output may be a public CI log; add "
                         "--show-hidden on the operator's own terminal to print it")
        # One print: a print per line cost a large run's summary a few hundredths of a second.
        console.print("\n".join(lines), highlight=False)
    health = tally.health()
    if health:
        _print_health(health, console)
    _print_bias(tally.bias_readings(), campaign.monitor, console)
    counts = tally.outcomes()
    console.print("outcomes: " + ", ".join(f"{word} {n}" for word, n in counts.items()),
                  highlight=False)
    by_who = tally.contributors()
    if set(by_who) != {"(none)"}:
        console.print("by contributor: " + "; ".join(
            f"{shown(who, 60)} " + ", ".join(f"{word} {n}" for word, n in words.items())
            for who, words in by_who.items()), highlight=False)
    return health


def _print_health(health: Sequence[JudgeHealth], console: Console) -> None:
    table = Table(title="judges", show_lines=False)
    for col in ("judge", "provider", "samples", "drawn now", "reused", "valid", "errors"):
        table.add_column(col)
    for h in health:
        judge = terminal_markup(shown(h.judge), "bad") if h.dead else shown(h.judge)
        table.add_row(judge, shown(h.provider), str(h.samples), str(h.drawn),
                      str(h.samples - h.drawn), h.valid_text(), shown(h.errors_text()))
    console.print(table)
    for h in health:
        if h.dead:
            console.print(
                f"[red]judge {shown(h.judge)} errored on every sample[/] ({h.samples} of "
                f"{h.samples}: {shown(h.errors_text())}): it cast no vote in any decision, "
                "so the others decided without it", highlight=False)


def _rate(value: float | None, of: str) -> str:
    return "-" if value is None else f"{value:.2f} ({of})"


def _print_bias(readings: Sequence[BiasReading], bounds: MonitorBounds,
                console: Console) -> None:
    """The live bias monitor (judges/_bias.py): one row per judge, then one line per alarm
    (a reading outside the campaign's ``[monitor]`` bounds). An alarm changes no decision."""
    if not readings:
        return
    table = Table(title="bias monitor", show_lines=False)
    for col in ("judge", "always-equivalent", "first-shown", "order consistency",
                "verbosity r"):
        table.add_column(col)
    for b in readings:
        o = b.order
        r = b.verbosity.r
        table.add_row(
            shown(b.judge),
            _rate(b.always_equivalent_rate, f"{b.equivalent}/{b.equivalence_answers}"),
            _rate(o.first_position_rate, f"{o.first_position}/{o.ab_answers}"),
            _rate(b.order_consistency, f"{o.consistent}/{o.items}"),
            "-" if r is None else f"{r:+.2f} (n {b.verbosity.n})")
    console.print(table)
    alarms = [alarm for b in readings for alarm in b.alarms(bounds)]
    for alarm in alarms:
        console.print(f"[yellow]bias alarm[/]: {shown(alarm.text)}", highlight=False)
    if alarms:
        return
    # Say the caveat only when it applied: a judge read on fewer answers than the bound.
    few = [b.judge for b in readings
           if max(b.equivalence_answers, b.order.ab_answers, b.verbosity.n) < bounds.min_votes]
    console.print("bias monitor: no alarm" + (
        f" ({', '.join(shown(j) for j in few)} read on fewer than {bounds.min_votes} answers, "
        "which raise none)" if few else ""), highlight=False)
