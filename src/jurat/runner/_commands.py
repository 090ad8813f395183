"""`jurat run`: what the CLI calls, returning exit codes (`jurat replay` is in ``_replay``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from jurat.errors import ConfigError, JuratError
from jurat.models import load_campaign
from jurat.runner._intake import intake
from jurat.runner._job import Progress as Counters
from jurat.runner._run import RunOptions, exit_code, run_campaign_async
from jurat.runner._summary import print_summary, wide_console

EXIT_CONFIG = 3


def _err(console: Console, exc: Exception) -> int:
    console.print(f"[red]error:[/] {escape(str(exc))}", markup=True, highlight=False)
    return EXIT_CONFIG


def run_main(campaign_path: Path, options: RunOptions) -> int:
    """Evaluate a campaign. Configuration errors exit 3 before any ledger entry is written."""
    console = Console(stderr=True, soft_wrap=True)
    out = wide_console()
    try:
        campaign = load_campaign(campaign_path)
        intake(campaign)  # refuses bad artifacts and destinations before the ledger opens
    except ConfigError as exc:
        return _err(console, exc)
    except JuratError as exc:
        return _err(console, exc)
    from jurat.ledger import open_ledger
    from jurat.receipts import load_or_create_default_key, load_private_key

    try:
        if options.key_path is not None:
            key, key_path, created = load_private_key(options.key_path), options.key_path, False
        else:
            key, key_path, created = load_or_create_default_key()
        ledger = open_ledger(options.ledger_url)
    except JuratError as exc:
        return _err(console, exc)
    if created:
        console.print(f"created a signing key at {key_path} (public key beside it)")
    telemetry = None
    if options.telemetry_path is not None:
        from jurat.judges import SampleTelemetry

        telemetry = SampleTelemetry(options.telemetry_path)
    total = len(campaign.artifacts)
    try:
        with Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("samples {task.fields[samples]}  errors {task.fields[errors]}"),
            TextColumn("spend ${task.fields[spend]:.4f}"), TimeElapsedColumn(),
            console=console, disable=options.quiet, transient=False,
        ) as bar:
            task = bar.add_task(campaign.id, total=total, samples=0, errors=0, spend=0.0)
            counters = Counters()

            def refresh() -> None:
                bar.update(task, samples=counters.samples, errors=counters.errors,
                           spend=counters.spend_usd)

            counters.on_change = refresh
            results = asyncio.run(_run_with_progress(
                campaign, options, ledger, key, counters, telemetry,
                lambda: bar.advance(task)))
        proofs = _checkpoint_and_proofs(ledger, campaign.id, results)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: completed samples are in the ledger; "
                      "run the same command again to resume without resampling")
        ledger.close()
        return 130
    except JuratError as exc:
        ledger.close()
        console.print(f"[red]error:[/] {escape(str(exc))}")
        return 1
    finally:
        if telemetry is not None:
            telemetry.close()
    print_summary(results, out, f"campaign {campaign.id} ({campaign.policy.kind})")
    out.print(_cost_table(campaign, results), highlight=False)
    out.print(f"receipts: {options.out_dir}/  ledger: {ledger.url}  checkpoint: {proofs}")
    out.print(f"verify:   jurat verify {results[0].receipt_path} --key "
              f"{Path(str(key_path)).with_suffix('.pub')}")
    ledger.close()
    return exit_code([r.decision for r in results])


async def _run_with_progress(campaign: Any, options: RunOptions, ledger: Any, key: Any,
                             counters: Counters, telemetry: Any, advance: Any) -> list[Any]:
    results = await run_campaign_async(campaign, options, ledger=ledger, key=key,
                                       progress=counters, telemetry=telemetry)
    for _ in results:
        advance()
    return results


def _cost_table(campaign: Any, results: list[Any]) -> str:
    """Cost per phase over the whole run (seed 001 §5: the judge's N-multiplier visible)."""
    from jurat.judges import PhaseCost, cost_summary, format_cost_table

    execution = [p for r in results if r.cost.get("summary") is not None
                 for p in r.cost["summary"].phases if p.phase == "execution"]
    extra = []
    if execution:
        usd = None if any(p.usd is None for p in execution) else sum(
            p.usd or 0.0 for p in execution)
        extra.append(PhaseCost(
            phase="execution", calls=sum(p.calls for p in execution),
            attempts=sum(p.attempts for p in execution),
            input_tokens=sum(p.input_tokens for p in execution),
            output_tokens=sum(p.output_tokens for p in execution), usd=usd))
    votes = [v for r in results for v in r.votes]
    return format_cost_table(cost_summary(votes, campaign.policy.judges, extra))


def _checkpoint_and_proofs(ledger: Any, campaign_id: str, results: list[Any]) -> str:
    """Sign a checkpoint and keep each receipt's inclusion proof beside it (it comes later)."""
    from jurat.ledger import load_or_create_log_key

    ledger.checkpoint(load_or_create_log_key())
    for r in results:
        latest = ledger.latest_receipt(campaign_id, r.artifact.id)
        if latest is None:
            continue
        proof = ledger.prove_entry(latest[0].seq)
        Path(r.receipt_path + ".proof.json").write_text(proof.model_dump_json(indent=2))
    return str(ledger.checkpoint_path)
