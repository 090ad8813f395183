"""``jurat run CAMPAIGN.toml``: open what the run needs, run it with a progress bar, print.

Exit statuses (``ExitCode``): the decisions' (0 / 1 / 2); 3 when the campaign, the key or
the ledger cannot be read (nothing evaluated, nothing written); 4 when the run fails
part-way (the error's own status: a JuratError's ``exit_code``); 130 interrupted.
"""

from __future__ import annotations

import asyncio
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._text import err_console
from jurat.errors import JuratError
from jurat.judges import SampleTelemetry, combine, format_cost_table
from jurat.ledger import Ledger, load_or_create_log_key, open_ledger
from jurat.models import Campaign, load_campaign
from jurat.receipts import (
    PrivateKey,
    load_or_create_default_key,
    load_private_key,
    proof_path_for,
)
from jurat.runner import JobResult, RunOptions, intake, run_campaign_async
from jurat.runner import Progress as Counters
from jurat.runner._summary import print_summary, wide_console

__all__ = ["run_command"]


def _signing_key(options: RunOptions) -> tuple[PrivateKey, Path, bool]:
    """The key, its path, and whether it was created just now."""
    if options.key_path is not None:
        return load_private_key(options.key_path), options.key_path, False
    return load_or_create_default_key()


def run_command(campaign_path: Path, options: RunOptions) -> ExitCode:
    """Evaluate a campaign; input errors exit 3 before any ledger entry is written."""
    console = err_console()
    try:
        campaign = load_campaign(campaign_path)
        intake(campaign)  # refuses bad artifacts and destinations before the ledger opens
        key, key_path, created = _signing_key(options)
        ledger = open_ledger(options.ledger_url)
    except JuratError as exc:
        # Nothing was evaluated or written: whatever failed was the run's input.
        return print_error(exc, code=ExitCode.INPUT)
    if created:
        console.print(f"created a signing key at {key_path} (public key beside it)",
                      markup=False)
    with ExitStack() as stack:
        stack.enter_context(ledger)
        telemetry = None
        if options.telemetry_path is not None:
            telemetry = SampleTelemetry(options.telemetry_path)
            stack.callback(telemetry.close)
        # A JuratError from here on stopped the run part-way: it leaves through
        # ``finish``, exit 4 unless it is an input error (never 1, escalate/warn).
        try:
            results = _run(campaign, options, ledger, key, telemetry, console)
            proofs = _checkpoint_and_proofs(ledger, campaign.id, results)
        except KeyboardInterrupt:
            console.print("[yellow]interrupted[/]: completed samples are in the ledger; "
                          "run the same command again to resume without resampling")
            return ExitCode.INTERRUPTED
        out = wide_console()
        print_summary(results, out, f"campaign {campaign.id} ({campaign.policy.kind})")
        out.print(_cost_table(results), highlight=False)
        out.print(f"receipts: {options.out_dir}/  ledger: {ledger.url}  checkpoint: {proofs}")
        if results:
            out.print(f"verify:   jurat verify {results[0].receipt_path} --key "
                      f"{key_path.with_suffix('.pub')}")
    return ExitCode.for_decisions(r.decision for r in results)


def _run(campaign: Campaign, options: RunOptions, ledger: Ledger, key: PrivateKey,
         telemetry: SampleTelemetry | None, console: Console) -> list[JobResult]:
    """The run under a progress bar: artifacts done, samples, errors and spend so far."""
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("samples {task.fields[samples]}  errors {task.fields[errors]}"),
        TextColumn("spend ${task.fields[spend]:.4f}"), TimeElapsedColumn(),
        console=console, disable=options.quiet, transient=False,
    ) as bar:
        task = bar.add_task(campaign.id, total=len(campaign.artifacts), samples=0, errors=0,
                            spend=0.0)
        counters = Counters()

        def refresh() -> None:
            bar.update(task, samples=counters.samples, errors=counters.errors,
                       spend=counters.spend_usd)

        counters.on_change = refresh
        results = asyncio.run(run_campaign_async(
            campaign, options, ledger=ledger, key=key, progress=counters, telemetry=telemetry))
        bar.advance(task, len(results))
    return results


def _cost_table(results: list[JobResult]) -> str:
    """Cost per phase over the whole run (seed 001 §5: the judge's N-multiplier visible)."""
    return format_cost_table(combine(r.cost for r in results))


def _checkpoint_and_proofs(ledger: Ledger, campaign_id: str, results: list[JobResult]) -> str:
    """Sign a checkpoint and keep each receipt's inclusion proof beside it (it comes later)."""
    ledger.checkpoint(load_or_create_log_key())
    for r in results:
        latest = ledger.latest_receipt(campaign_id, r.artifact.id)
        if latest is None:
            continue
        proof = ledger.prove_entry(latest[0].seq)
        proof_path_for(Path(r.receipt_path)).write_text(proof.model_dump_json(indent=2))
    return str(ledger.checkpoint_path)
