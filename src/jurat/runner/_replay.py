"""`jurat replay` and `jurat report`: read receipts back from a ledger (or a directory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jurat.errors import JuratError
from jurat.runner._summary import wide_console

EXIT_CONFIG = 3


def ledger_url(value: str) -> str:
    """Accept a URL or a bare SQLite file path."""
    return value if "://" in value else f"sqlite:///{value}"


def receipts_in_ledger(ledger: Any) -> list[tuple[Any, bytes]]:
    """Every receipt entry with its signed bundle bytes, in log order."""
    return list(ledger.receipts())


def replay_main(url: str, key_path: Path | None) -> int:
    """Verify the log, then re-derive every recorded decision; exit 1 on any mismatch."""
    from jurat.ledger import open_ledger
    from jurat.receipts import load_public_key, read_statement, rederive, verify_bundle
    
    console = wide_console()
    try:
        ledger = open_ledger(ledger_url(url))
        key = load_public_key(key_path) if key_path else None
    except JuratError as exc:
        Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_CONFIG
    failures = 0
    try:
        report = ledger.verify()
        console.print(f"1. log: {report.tree_size} entries, hash chain and Merkle root hold")
    except JuratError as exc:
        console.print(f"[red]1. log: FAILED[/] {exc}")
        failures += 1
    table = Table(title="re-derived decisions")
    for col in ("seq", "artifact", "review", "recorded", "re-derived", "signature", "ok"):
        table.add_column(col)
    for entry, signed in receipts_in_ledger(ledger):
        statement = read_statement(signed)
        recorded = statement["predicate"]["decision"]
        try:
            derived = rederive(statement).model_dump(mode="json")
            same = derived == recorded
        except JuratError as exc:
            derived, same = {"error": str(exc)}, False
        sig = "-"
        if key is not None:
            sig = "ok" if verify_bundle(signed, key).ok else "BAD"
        ok = same and sig != "BAD"
        failures += not ok
        table.add_row(str(entry.seq), statement["predicate"]["artifact"]["id"],
                      str(statement["predicate"]["review"]["version"]), _word(recorded),
                      _word(derived), sig, "[green]yes[/]" if ok else "[red]NO[/]")
    console.print(table)
    ledger.close()
    console.print("all decisions re-derive" if not failures else f"[red]{failures} mismatch(es)[/]")
    return 0 if not failures else 1


def _word(decision: dict[str, Any]) -> str:
    for key in ("disposition", "rollout"):
        if decision.get(key):
            return str(decision[key])
    if decision.get("kind") == "equivalence":
        return str(decision.get("equivalent"))
    return str(decision.get("error", "?"))


def report_main(source: str, html: Path, key_path: Path | None) -> int:
    """Render the HTML report from a ledger or a directory of receipts."""
    from jurat.service import load_receipt_files, render_report

    console = Console(stderr=True, soft_wrap=True)
    path = Path(source)
    try:
        if path.is_dir():
            receipts = load_receipt_files(path)
        else:
            receipts = _receipts_from_ledger(source)
    except JuratError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_CONFIG
    if key_path is not None:
        receipts = [{**r, "key_path": str(key_path)} for r in receipts]
    html.write_text(render_report(receipts), encoding="utf-8")
    console.print(f"report: {html} ({len(receipts)} receipts)")
    return 0


def _receipts_from_ledger(url: str) -> list[dict[str, Any]]:
    from jurat.ledger import open_ledger
    from jurat.receipts import read_statement

    ledger = open_ledger(ledger_url(url))
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for _entry, signed in receipts_in_ledger(ledger):
        statement = read_statement(signed)
        pred = statement["predicate"]
        latest[(pred["campaign"]["id"], pred["artifact"]["id"])] = {
            "statement": statement, "receipt_path": f"{pred['artifact']['id']}.sigstore.json",
            "key_path": None,
        }
    ledger.close()
    return list(latest.values())
