"""``jurat calibrate RECEIPTS… --gold FILE [--key PUB] [--out FILE] [--json]``.

Exit 0 every rater was compared and none is flagged; 1 a rater is flagged (constant, or
no better than chance), or a receipt did not verify (the artifacts settled without a
judge are shown apart and never flag the panel); 3 a receipt, the key or the gold
file could not be read or does not fit the campaign.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from jurat.calibrate import Agreement, CalibrationReport, Interval, calibrate
from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._verify import receipt_paths
from jurat.errors import ConfigError, JuratError, VerificationError
from jurat.receipts import default_public_key_path, load_public_key
from jurat.runner import wide_console

__all__ = ["calibrate_command"]


def _interval(x: Interval) -> str:
    if x.value is None:
        return "undefined"
    # + 0.0 turns -0.0 (a zero-width interval's rounding) into 0.0.
    if x.low is None or x.high is None:
        return f"{x.value + 0.0:.3f}"
    return f"{x.value + 0.0:.3f} [{x.low + 0.0:.3f}, {x.high + 0.0:.3f}]"


def _share(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _table(report: CalibrationReport) -> Table:
    table = Table(title=f"{report.campaign_id} ({report.kind}) against gold: "
                        f"{len(report.receipts)} artifacts")
    for column in ("rater", "items", "not asked", "coverage", "accuracy",
                   "Cohen's kappa [95%]", "Krippendorff's alpha [95%]", "flags"):
        table.add_column(column)
    for r in report.raters:
        _row(table, r)
    if report.settled is not None:
        # The pipeline's settlements (no judge asked): shown, never any judge's figure.
        table.add_section()
        _row(table, report.settled, note="not a judge's; not in the exit status")
    return table


def _name(r: Agreement) -> str:
    return r.rater if r.criterion is None else f"{r.rater} / {r.criterion}"


def _row(table: Table, r: Agreement, *, note: str = "") -> None:
    flags = "; ".join((*r.flags, note) if note else r.flags)
    table.add_row(escape(_name(r)), str(r.items), str(r.not_asked), _share(r.coverage),
                  _share(r.accuracy), _interval(r.kappa), _interval(r.alpha),
                  escape(flags) or "-")


def calibrate_command(receipts: Sequence[Path], gold: Path, key: Path | None,
                      out: Path | None, as_json: bool) -> ExitCode:
    """Compare verified receipts with gold labels; see the module for the exit status."""
    console = wide_console()
    try:
        public_key = load_public_key(key or default_public_key_path())
        report = calibrate(receipt_paths(receipts), gold, public_key)
    except VerificationError as exc:
        return print_error(exc, code=ExitCode.ESCALATE)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    text = json.dumps(report.model_dump(mode="json"), indent=2) + "\n"
    if out is not None:
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            return print_error(ConfigError(f"cannot write {out}: {exc.strerror or exc}"))
    if as_json:
        print(text, end="")
    else:
        console.print(_table(report))
        for r in (*report.raters, *([report.settled] if report.settled else [])):
            rows = " | ".join(f"{c}: {list(row)}" for c, row in zip(r.categories, r.confusion,
                                                                    strict=True))
            console.print(f"confusion {escape(_name(r))} (gold row: rater columns "
                          f"{list(r.categories)}): {escape(rows)}")
        for why, count in report.settled_by.items():
            console.print(f"{count} artifacts settled without a judge: {escape(why)} "
                          "(not compared for any judge)")
        if report.unlabelled:
            console.print(f"{len(report.unlabelled)} artifacts have no gold label "
                          "(not compared)")
        if report.without_receipt:
            console.print(f"{report.without_receipt} gold rows have no receipt (not compared)")
        if out is not None:
            console.print(f"report: {escape(str(out))}")
    flagged = list(dict.fromkeys(_name(r) for r in report.raters if r.flags))
    if flagged and not as_json:
        console.print(f"[red]flagged[/]: {escape(', '.join(flagged))}")
    return ExitCode.ESCALATE if flagged else ExitCode.OK
