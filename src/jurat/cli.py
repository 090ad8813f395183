"""`jurat …`: the command line. Exit codes are part of the contract (DESIGN.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="jurat", no_args_is_help=True, add_completion=False,
    help="Turn noisy LLM judgments into signed, replayable verdicts.",
)
log_app = typer.Typer(no_args_is_help=True, help="Checkpoints and proofs of the ledger's log.")
app.add_typer(log_app, name="log")


@app.command()
def run(
    campaign: Annotated[Path, typer.Argument(help="The campaign TOML file.")],
    out: Annotated[Path, typer.Option("--out", help="Directory for receipts.")] = Path("receipts"),
    ledger: Annotated[str | None, typer.Option(
        "--ledger", help="sqlite:///path or postgresql://… (default sqlite:///jurat.db)")] = None,
    key: Annotated[Path | None, typer.Option(
        "--key", help="PEM private key (default: created once in the config dir)")] = None,
    telemetry: Annotated[Path | None, typer.Option(
        "--telemetry", help="Write one judge.sample event per sample to this NDJSON file.")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    """Evaluate a campaign: exit 0 accepted/shipped, 1 escalate/warn, 2 reject/block, 3 input."""
    from jurat.runner import RunOptions
    from jurat.runner._commands import run_main

    raise typer.Exit(run_main(campaign, RunOptions(
        out_dir=out, ledger_url=ledger, key_path=key, telemetry_path=telemetry, quiet=quiet)))


@app.command()
def keygen(out: Annotated[Path, typer.Option("--out", help="Directory for the key pair.")]) -> None:
    """Write jurat.key (PKCS#8, 0600) and jurat.pub (SPKI); refuses to overwrite."""
    from jurat.receipts import keygen_main

    raise typer.Exit(keygen_main(out))


@app.command()
def verify(
    receipt: Annotated[Path, typer.Argument(help="A .sigstore.json receipt.")],
    key: Annotated[Path | None, typer.Option("--key", help="PEM public key.")] = None,
    artifact: Annotated[Path | None, typer.Option(
        "--artifact", help="The artifact file the receipt must be about (its sha256 is "
        "compared with the statement's subject).")] = None,
    artifact_digest: Annotated[str | None, typer.Option(
        "--artifact-digest", help="sha256:<hex> the statement's subject must have.")] = None,
    checkpoint: Annotated[Path | None, typer.Option(
        "--checkpoint", help="A signed checkpoint; also checks the inclusion proof.")] = None,
) -> None:
    """Verify a receipt offline in numbered steps: signature, subject, re-derivation.

    The last line names the artifact the receipt is about. Exit 0 every step held,
    1 a step failed, 3 the receipt, key or artifact could not be read.
    """
    from jurat.receipts import verify_main

    raise typer.Exit(verify_main(
        receipt, key, checkpoint, artifact=artifact, artifact_digest=artifact_digest))


@app.command()
def replay(
    ledger: Annotated[str, typer.Argument(help="Ledger URL or SQLite file path.")],
    key: Annotated[Path | None, typer.Option(
        "--key", help="PEM public key: check every receipt's signature with it.")] = None,
) -> None:
    """Re-derive every decision in a ledger and check each receipt's signature with --key.

    Exit 0 all hold, 1 any failure, 3 input error, 4 every decision re-derives but no
    signature was checked (no --key given): not a pass.
    """
    from jurat.runner._replay import replay_main

    raise typer.Exit(replay_main(ledger, key))


@app.command()
def check(
    candidate: Annotated[Path, typer.Argument(help="The Python candidate.")],
    tests: Annotated[Path | None, typer.Option("--tests", help="pytest file.")] = None,
    limits: Annotated[str | None, typer.Option(
        "--limits", help="e.g. wall_s=5,memory_mb=256")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Run the deterministic checks alone; exit 0 pass, 2 a required gate failed, 3 input."""
    from jurat.checks import check_main

    raise typer.Exit(check_main(candidate, tests, limits, as_json))


@app.command()
def selftest(
    campaign: Annotated[Path | None, typer.Argument(
        help="Campaign whose judges to test (default: the built-in stub and sim panel).")] = None,
    judge: Annotated[list[str] | None, typer.Option(
        "--judge", help="Provider to test, e.g. sim or stub:always-equivalent.")] = None,
) -> None:
    """Negative controls, canaries and the bias monitor; exit 1 when a judge fails."""
    from jurat.runner._selftest import selftest_main

    raise typer.Exit(selftest_main(campaign, judge or []))


@app.command()
def report(
    ledger: Annotated[str, typer.Argument(help="Ledger URL, SQLite file, or receipts dir.")],
    html: Annotated[Path, typer.Option("--html", help="Where to write the report.")],
    key: Annotated[Path | None, typer.Option("--key", help="Public key for verify commands.")]
    = None,
) -> None:
    """A self-contained HTML report: decisions, votes, agreement, convergence, cost."""
    from jurat.runner._replay import report_main

    raise typer.Exit(report_main(ledger, html, key))


@log_app.command("checkpoint")
def log_checkpoint(ledger: Annotated[str, typer.Argument(help="Ledger URL.")]) -> None:
    """Sign and store a checkpoint of the log (C2SP signed note)."""
    from jurat.ledger import log_main

    raise typer.Exit(log_main("checkpoint", ledger, None))


@log_app.command("prove")
def log_prove(
    ledger: Annotated[str, typer.Argument(help="Ledger URL.")],
    seq: Annotated[int, typer.Argument(help="Entry sequence number.")],
) -> None:
    """Print the inclusion proof of an entry against the latest checkpoint."""
    from jurat.ledger import log_main

    raise typer.Exit(log_main("prove", ledger, seq))


@log_app.command("verify")
def log_verify(ledger: Annotated[str, typer.Argument(help="Ledger URL.")]) -> None:
    """Verify hash chain, sequence, Merkle root and checkpoints of the whole log."""
    from jurat.ledger import log_main

    raise typer.Exit(log_main("verify", ledger, None))


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
