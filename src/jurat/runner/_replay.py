"""`jurat replay` and `jurat report`: read receipts back from a ledger (or a directory).

Replay runs the receipt verifier's numbered steps on every receipt in the ledger:
all seven with ``--key``; without it, every step but the signature (step 3), and it
says so and exits 4, never 0, because nobody was shown to have signed anything
(docs/receipt-format.md §7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from jurat.errors import IntakeError, JuratError
from jurat.runner._summary import wide_console

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 3
#: Every decision re-derives, but no signature was checked (no ``--key``): not a pass.
EXIT_UNSIGNED = 4
_CELL_CHARS = 60


def ledger_url(value: str) -> str:
    """Accept a URL or a bare SQLite file path."""
    return value if "://" in value else f"sqlite:///{value}"


def receipts_in_ledger(ledger: Any) -> list[tuple[Any, bytes]]:
    """Every receipt entry with its signed bundle bytes, in log order."""
    return list(ledger.receipts())


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cell(value: Any, limit: int = _CELL_CHARS) -> str:
    """Receipt text for the console: printable, short, no Rich markup."""
    text = "".join(c if c.isprintable() else "?" for c in str(value)[: limit + 1])
    return escape(text if len(text) <= limit else text[:limit] + "...")


def replay_main(url: str, key_path: Path | None) -> int:
    """Verify the log, then every receipt in it; exit 0 all hold, 1 any failure, 3 input,
    4 all hold but no signature was checked (no key given)."""
    from jurat.ledger import open_ledger
    from jurat.receipts import load_public_key

    console = wide_console()
    try:
        key = load_public_key(key_path) if key_path else None
        # A reading command: a mistyped path is an error, never a new empty ledger.
        ledger = open_ledger(ledger_url(url), create=False)
    except JuratError as exc:
        Console(stderr=True, soft_wrap=True).print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_CONFIG
    if key is None:
        console.print(
            "[yellow]signatures: NOT checked[/] (no --key given): this replay can show that "
            "the recorded decisions re-derive, not that anyone signed them; pass --key PUB",
            soft_wrap=True,
        )
    try:
        failures = _replay(console, ledger, key)
    finally:
        ledger.close()
    if failures:
        console.print(f"[red]{failures} failure(s)[/]: see the rows marked NO")
        return EXIT_FAILED
    if key is None:
        console.print(
            "all decisions re-derive; [yellow]no signature was checked[/] (exit "
            f"{EXIT_UNSIGNED}): pass --key PUB to check them",
            soft_wrap=True,
        )
        return EXIT_UNSIGNED
    console.print("all decisions re-derive and every receipt's signature verifies")
    return EXIT_OK


def _replay(console: Console, ledger: Any, key: Any) -> int:
    """Print the log check and one row per receipt; return the number of failures."""
    from jurat.receipts import rederive_bundle, verify_bundle

    failures = 0
    try:
        report = ledger.verify()
        console.print(f"1. log: {report.tree_size} entries, hash chain and Merkle root hold")
    except JuratError as exc:
        console.print(f"[red]1. log: FAILED[/] {escape(str(exc))}")
        failures += 1
    try:
        receipts = receipts_in_ledger(ledger)
    except JuratError as exc:
        console.print(f"[red]2. receipts: FAILED[/] {escape(str(exc))}")
        return failures + 1
    table = Table(title="re-derived decisions")
    for col in ("seq", "artifact", "review", "recorded", "re-derived", "signature", "ok"):
        table.add_column(col)
    problems: list[str] = []
    seen: dict[tuple[str, int], int] = {}
    for entry, signed in receipts:
        report = verify_bundle(signed, key) if key is not None else rederive_bundle(signed)
        predicate = _d(_d(report.statement).get("predicate"))
        version = _d(predicate.get("review")).get("version")
        ok = report.ok if key is not None else report.held
        failed = report.failed
        if failed is not None:
            problems.append(f"seq {entry.seq}: step {failed.number} ({failed.name}): "
                            f"{failed.detail}")
        if isinstance(version, int):
            # DESIGN.md: each (job, review version) ends with exactly one receipt.
            earlier = seen.setdefault((entry.job_id, version), entry.seq)
            if earlier != entry.seq:
                ok = False
                problems.append(f"seq {entry.seq}: a second receipt for job {entry.job_id} "
                                f"review {version} (the first is seq {earlier})")
        failures += not ok
        derived = (_cell(_word(report.decision.model_dump(mode="json"))) if report.decision
                   else f"[red]step {failed.number}[/]" if failed else "?")
        # Before step 4 the receipt names no artifact: show the ledger's, in parentheses.
        artifact = report.artifact_id or f"({entry.artifact_id})"
        table.add_row(
            str(entry.seq), _cell(artifact), "-" if version is None else _cell(version),
            _cell(_word(_d(predicate.get("decision")))), derived,
            _signature(report, key is not None), "[green]yes[/]" if ok else "[red]NO[/]",
        )
    console.print(table)
    for line in problems:
        console.print(f"[red]FAIL[/] {_cell(line, 300)}", soft_wrap=True)
    return failures


def _signature(report: Any, checked: bool) -> str:
    if not checked:
        return "[yellow]not checked[/]"
    step = next((s for s in report.steps if s.number == 3), None)
    if step is None:
        return "-"  # an earlier step failed: there was no signature to check
    return "ok" if step.ok else "[red]BAD[/]"


def _word(decision: dict[str, Any]) -> str:
    for key in ("disposition", "rollout"):
        if decision.get(key):
            return str(decision[key])
    if decision.get("kind") == "equivalence":
        return str(decision.get("equivalent"))
    return "?"


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
        if key_path is not None:
            receipts = [{**r, "key_path": str(key_path)} for r in receipts]
        page = render_report(receipts)
    except JuratError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return EXIT_CONFIG
    try:
        html.write_text(page, encoding="utf-8")
    except OSError as exc:
        console.print(f"[red]error:[/] cannot write {escape(str(html))}: {exc.strerror or exc}")
        return EXIT_CONFIG
    console.print(f"report: {html} ({len(receipts)} receipts)")
    return 0


def _receipts_from_ledger(url: str) -> list[dict[str, Any]]:
    """The latest receipt of each (campaign, artifact), decoded (bounded, not verified)."""
    from jurat.ledger import open_ledger
    from jurat.receipts import read_statement

    ledger = open_ledger(ledger_url(url), create=False)
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        for entry, signed in receipts_in_ledger(ledger):
            try:
                statement = read_statement(signed)
            except JuratError as exc:
                raise IntakeError(f"ledger entry {entry.seq}: not a jurat receipt: {exc}") from exc
            pred = statement["predicate"]
            campaign = str(_d(pred.get("campaign")).get("id"))
            artifact = str(_d(pred.get("artifact")).get("id", f"seq-{entry.seq}"))
            latest[(campaign, artifact)] = {
                "statement": statement, "receipt_path": f"{artifact}.sigstore.json",
                "key_path": None,
            }
    finally:
        ledger.close()
    return list(latest.values())
