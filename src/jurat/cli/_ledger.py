"""``jurat log checkpoint|prove|verify``: the ledger's log, as exit statuses.

Exit 0 done; 1 the log did not verify (``TamperError``), or it has checkpoints whose
signatures were not checked (no log public key: an unchecked checkpoint is never "ok");
3 bad input: an unknown action, a missing ledger, an entry or tree size the log does not
have, an unreadable key, a log key that did not sign the ledger's checkpoints.

The log key is the one ``cli/_keys.py`` chooses: ``--log-key``, else the default
``jurat-log.key`` (to sign) or ``jurat-log.pub`` (to check) in the configuration
directory, beside the default signing key.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.table import Table

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._keys import (
    choose_log_key,
    choose_log_public,
    missing_log_public,
    open_log_signer,
    read_log_public,
)
from jurat.errors import ConfigError, LedgerError, TamperError
from jurat.ledger import LedgerReport, open_ledger

__all__ = ["LOG_ACTIONS", "log_command"]

LOG_ACTIONS = ("checkpoint", "prove", "verify")


def log_command(
    action: str,
    ledger_url: str | None,
    seq: int | None = None,
    *,
    key_path: str | os.PathLike[str] | None = None,
    checkpoint_path: str | os.PathLike[str] | None = None,
    old_size: int | None = None,
    new_size: int | None = None,
    out: Console | None = None,
    err: Console | None = None,
) -> ExitCode:
    """Run one ``jurat log`` action; return OK, ESCALATE (did not verify) or INPUT.

    * ``checkpoint``: sign the current tree head with the log key ``key_path`` (default:
      ``jurat-log.key`` in the configuration directory, created there once for a ledger
      with no checkpoint yet); print the note.
    * ``prove``: with ``seq``, print the entry, its inclusion proof and the
      covering checkpoint as JSON (check it with ``verify_entry_proof``); with
      ``old_size``, print a consistency proof to ``new_size`` (default: now).
    * ``verify``: recompute the whole ledger; check the checkpoints' signatures with the
      log public key ``key_path`` (default: ``jurat-log.pub`` in the configuration
      directory, when it exists). Checkpoints whose signatures were not checked make it
      exit 1, saying so and how to fix it.
    """
    out = out or Console(emoji=False)
    err = err or Console(emoji=False, stderr=True)
    if action not in LOG_ACTIONS:
        problem = ConfigError(
            f"unknown log action {action!r} (expected one of {', '.join(LOG_ACTIONS)})"
        )
        return print_error(problem, console=err)
    given = None if key_path is None else Path(key_path)
    try:
        with open_ledger(ledger_url, checkpoint_path=checkpoint_path, create=False) as ledger:
            if action == "checkpoint":
                log_key = open_log_signer(choose_log_key(given, None), ledger)
                note = ledger.checkpoint(log_key.signer)
                out.out(note, end="", highlight=False)
                err.print(f"checkpoint written to {ledger.checkpoint_path}", markup=False,
                          highlight=False)
                made = "created just now" if log_key.created else "existing"
                err.print(f"signed with log key {log_key.path} ({made}); check it with "
                          f"--log-key {log_key.public_path or log_key.signer.verifier_key()}",
                          markup=False, highlight=False)
            elif action == "prove":
                if old_size is not None:
                    doc = ledger.consistency_proof(old_size, new_size).model_dump_json(indent=2)
                elif seq is not None:
                    doc = ledger.prove_entry(seq).model_dump_json(indent=2)
                else:
                    problem = ConfigError("prove needs an entry seq or an old tree size")
                    return print_error(problem, console=err)
                out.out(doc, highlight=False)
            else:
                choice = choose_log_public(given, None)
                verifier = read_log_public(choice)
                report = ledger.verify(public_key=verifier)
                _print_report(out, report)
                if verifier is None and (report.checkpoints_checked or
                                         report.external_tree_size is not None):
                    # The chain and the roots held, but nothing shows who signed them.
                    err.print(f"[bold red]not verified[/]: {missing_log_public(choice)}",
                              highlight=False)
                    return ExitCode.ESCALATE
    except TamperError as exc:
        # The log was read and does not hold: this command's outcome, not an input error.
        err.print("[bold red]ledger verification failed[/]")
        return print_error(exc, code=ExitCode.ESCALATE, console=err)
    except (LedgerError, ConfigError) as exc:
        # A ledger, entry or key that is not there: nothing was checked.
        return print_error(exc, code=ExitCode.INPUT, console=err)
    return ExitCode.OK


def _print_report(out: Console, report: LedgerReport) -> None:
    table = Table(title="ledger verified", show_header=False)
    table.add_column("check", no_wrap=True)
    # Hashes are for copying and comparing: fold them, never cut them.
    table.add_column("value", overflow="fold")
    table.add_row("backend", report.backend)
    table.add_row("entries", str(report.tree_size))
    table.add_row("root hash", report.root_hash)
    table.add_row("head hash", report.head_hash)
    table.add_row("by kind", ", ".join(f"{k}={n}" for k, n in report.kinds.items()) or "-")
    table.add_row("stored checkpoints", str(report.checkpoints_checked))
    table.add_row("signatures checked", str(report.signatures_checked))
    external = report.external_checkpoint or "-"
    if report.external_tree_size is not None:
        external += f" (size {report.external_tree_size})"
    table.add_row("external checkpoint", external)
    out.print(table)
    for warning in report.warnings:
        out.print(f"[yellow]warning:[/] {warning}", highlight=False)
