"""``jurat replay LEDGER [--key PUB]``: print a ledger's replay (``jurat.runner.replay_ledger``).

Exit 0 the log and every receipt held, signatures included; 1 anything failed, or no
``--key`` was given, so no signature was checked and not everything was shown to hold
(docs/receipt-format.md §7); 3 the ledger or key could not be opened (a missing ledger
is not created).
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import shown
from jurat.errors import JuratError
from jurat.ledger import open_ledger
from jurat.receipts import load_public_key
from jurat.runner import Replay, ReplayedReceipt, ledger_url, replay_ledger, wide_console

__all__ = ["replay_command"]

#: Receipt text in a table cell is cut here.
_CELL_CHARS = 60


def replay_command(url: str, key_path: Path | None) -> ExitCode:
    """Replay the ledger at ``url`` (a URL or a SQLite file) and print it; see the module."""
    console = wide_console()
    try:
        key = load_public_key(key_path) if key_path else None
        # A reading command: a mistyped path is an error, never a new empty ledger.
        ledger = open_ledger(ledger_url(url), create=False)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    if key is None:
        console.print(
            "[yellow]signatures: NOT checked[/] (no --key given): this replay can show that "
            "the recorded decisions re-derive, not that anyone signed them; pass --key PUB",
            soft_wrap=True,
        )
    with ledger:
        replay = replay_ledger(ledger, key)
    _print(console, replay)
    if replay.failures:
        console.print(f"[red]{replay.failures} failure(s)[/]: see the rows marked NO")
        return ExitCode.ESCALATE
    if not replay.signatures_checked:
        console.print(
            "all decisions re-derive; [yellow]no signature was checked[/] (exit "
            f"{int(ExitCode.ESCALATE)}, not everything was checked): pass --key PUB to "
            "check them",
            soft_wrap=True,
        )
        return ExitCode.ESCALATE
    console.print("all decisions re-derive and every receipt's signature verifies")
    return ExitCode.OK


def _print(console: Console, replay: Replay) -> None:
    """The log check, then one row per receipt and one line per problem."""
    if replay.log is not None:
        console.print(f"1. log: {replay.log.tree_size} entries, hash chain and Merkle root hold")
    else:
        console.print(f"[red]1. log: FAILED[/] {shown(replay.log_error)}")
    if replay.receipts_error is not None:
        console.print(f"[red]2. receipts: FAILED[/] {shown(replay.receipts_error)}")
        return
    table = Table(title="re-derived decisions")
    for col in ("seq", "artifact", "review", "recorded", "re-derived", "signature", "ok"):
        table.add_column(col)
    for row in replay.receipts:
        table.add_row(*_cells(row, replay.signatures_checked))
    console.print(table)
    for row in replay.receipts:
        for line in row.problems:
            console.print(f"[red]FAIL[/] {shown(line)}", soft_wrap=True)


def _cells(row: ReplayedReceipt, checked: bool) -> tuple[str, ...]:
    report = row.report
    failed = report.failed
    if row.derived is not None:
        derived = shown(row.derived, _CELL_CHARS)
    else:
        derived = f"[red]step {failed.number}[/]" if failed else "?"
    # Before step 4 the receipt names no artifact: show the ledger's, in parentheses.
    artifact = report.artifact_id or f"({row.entry.artifact_id})"
    review = "-" if row.review_version is None else str(row.review_version)
    return (
        str(row.entry.seq), shown(artifact, _CELL_CHARS), review,
        shown(row.recorded, _CELL_CHARS), derived, _signature(row, checked),
        "[green]yes[/]" if row.ok else "[red]NO[/]",
    )


def _signature(row: ReplayedReceipt, checked: bool) -> str:
    if not checked:
        return "[yellow]not checked[/]"
    held = row.signature_ok
    if held is None:
        return "-"  # an earlier step failed: there was no signature to check
    return "ok" if held else "[red]BAD[/]"
