"""``jurat serve``, ``token``, ``adjudicate``, ``signer`` and ``board``: the commands of a
contest run as a service. Thin wrappers, as in ``_app`` (its docstring says why the
command modules are imported inside them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurat.cli._errors import finish
from jurat.cli._typer import app, ledger_arg, signer_app, token_app

__all__: list[str] = []


@app.command()
def serve(
    campaigns: Annotated[list[Path], typer.Argument(help="The campaign TOML files to serve.")],
    ledger: Annotated[str | None, typer.Option(
        "--ledger", callback=ledger_arg, help="sqlite:///path, postgresql://…, or a SQLite "
        "file path (default sqlite:///jurat.db)")] = None,
    key: Annotated[Path | None, typer.Option(
        "--key", help="PEM private key (default: created once in the config dir)")] = None,
    log_key: Annotated[Path | None, typer.Option(
        "--log-key", help="Ed25519 key that signs checkpoints (default as for `jurat run`)")
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8080,
    executor: Annotated[str, typer.Option(
        "--executor", help="local, or ray (each job a Ray task; docs/scale.md).")] = "local",
    ray_address: Annotated[str | None, typer.Option(
        "--ray-address", help="The Ray cluster to join (default: start a local runtime).")]
    = None,
    board: Annotated[bool, typer.Option(
        "--board", help="Also serve the public board of every signed verdict at /board/, "
        "without a token (docs/board.md).")] = False,
    replica_id: Annotated[str | None, typer.Option(
        "--replica-id", help="This replica's name in the PostgreSQL ledger's job leases "
        "(default: the host name; docs/service.md, \"Replicas\").")] = None,
    lease_s: Annotated[float, typer.Option(
        # Range checked by serve_command: a range column beside a wrapped help line garbles it.
        "--lease-s", help="Seconds (1-3600) a job's lease lasts unless renewed: how long a "
        "dead replica's jobs wait for another (PostgreSQL ledger).")] = 30.0,
    max_body_bytes: Annotated[int | None, typer.Option(
        "--max-body-bytes", min=1, help="Request body cap, 413 above (default: what the "
        "largest artifact of the campaigns needs; docs/service.md, \"Limits\").")] = None,
    body_timeout: Annotated[float, typer.Option(
        "--body-timeout", help="Seconds to deliver a request's whole body (408).")] = 60.0,
    header_timeout: Annotated[float, typer.Option(
        "--header-timeout", help="Seconds to deliver a request's head (408).")] = 10.0,
    keep_alive_timeout: Annotated[float, typer.Option(
        "--keep-alive-timeout", help="Seconds an idle connection stays open.")] = 5.0,
    max_header_bytes: Annotated[int, typer.Option(
        "--max-header-bytes", help="Request line and headers at most (400).")] = 16384,
    rate_limit: Annotated[float, typer.Option(
        "--rate-limit", help="Requests per second per token, sustained (429); 0: none.")]
    = 20.0,
    rate_burst: Annotated[int, typer.Option(
        "--rate-burst", help="Requests per token at once before --rate-limit applies.")]
    = 100,
    max_connections_per_address: Annotated[int, typer.Option(
        "--max-connections-per-address", help="Open connections per client IP (503 "
        "above); 0: no cap (behind a proxy).")] = 100,
    allow_sim: Annotated[bool, typer.Option(
        "--allow-sim", help="Serve campaigns whose judges include sim (a demo): a submission "
        "carries no truth label, so sim votes are seeded coin flips. Without it such a "
        "campaign is refused (exit 3).")] = False,
) -> None:
    """Serve campaigns over HTTP (docs/service.md); exit 3 on a configuration error."""
    from jurat.cli._serve import serve_command
    from jurat.service._limits import ClientLimits

    finish(lambda: serve_command(campaigns, ledger_url=ledger, key_path=key, log_key=log_key,
                                 host=host, port=port, executor=executor,
                                 ray_address=ray_address, board=board,
                                 replica_id=replica_id, lease_s=lease_s,
                                 allow_sim=allow_sim, limits=ClientLimits(
                                     max_body_bytes=max_body_bytes,
                                     body_timeout_s=body_timeout,
                                     header_timeout_s=header_timeout,
                                     keep_alive_s=keep_alive_timeout,
                                     max_header_bytes=max_header_bytes,
                                     rate_per_s=rate_limit, rate_burst=rate_burst,
                                     max_connections_per_address=max_connections_per_address
                                 )))


@token_app.command("create")
def token_create(
    campaign: Annotated[str, typer.Option("--campaign", help="Campaign id, or '*' for all.")],
    role: Annotated[str, typer.Option(
        "--role", help="operator | contributor | reviewer | verifier")],
    ledger: Annotated[str | None, typer.Option(
        "--ledger", callback=ledger_arg, help="Ledger URL or SQLite file path.")] = None,
    subject: Annotated[str | None, typer.Option(
        "--subject", help="Who holds it (required for contributor).")] = None,
    new_campaign: Annotated[bool, typer.Option(
        "--new-campaign", help="The campaign is not served yet: create the token although "
        "the ledger knows no such campaign id (without it such an id exits 3).")] = False,
) -> None:
    """Create a token; it is printed once, alone on the last line, and only its hash kept."""
    from jurat.cli._token import token_create_command

    finish(lambda: token_create_command(ledger, campaign, role, subject,
                                        new_campaign=new_campaign))


@token_app.command("revoke")
def token_revoke(
    token: Annotated[str, typer.Argument(help="The token, or the id `create` printed.")],
    ledger: Annotated[str | None, typer.Option(
        "--ledger", callback=ledger_arg, help="Ledger URL or SQLite file path.")] = None,
) -> None:
    """Revoke a token."""
    from jurat.cli._token import token_revoke_command

    finish(lambda: token_revoke_command(ledger, token))


@app.command()
def adjudicate(
    ledger: Annotated[str, typer.Argument(callback=ledger_arg,
                                          help="Ledger URL or SQLite file path.")],
    job: Annotated[str, typer.Argument(help="The job id (the receipt's inputs.job_id).")],
    disposition: Annotated[str, typer.Option("--disposition", help="accept | reject")],
    rationale: Annotated[str, typer.Option("--rationale", help="Why (in the receipt).")],
    reviewer: Annotated[str, typer.Option("--reviewer", help="Who adjudicates.")],
    public_rationale: Annotated[bool, typer.Option(
        "--public-rationale", help="Show the rationale on the public board's page too "
        "(default: who and when only).")] = False,
    key: Annotated[Path | None, typer.Option("--key", help="PEM private key.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Where to write the receipt.")]
    = None,
    log_key: Annotated[Path | None, typer.Option(
        "--log-key", help="Ed25519 key that signs the ledger's checkpoint (default: "
        "<stem>-log.key beside --key, as for `jurat run`).")] = None,
    review_version: Annotated[int | None, typer.Option(
        "--review-version", min=1, help="The review version the reviewer read; a job whose "
        "current review is another is refused (exit 3), so a decision is never applied to "
        "material the reviewer did not see. Default: the current one.")] = None,
) -> None:
    """Settle an escalated decision: a new signed review version and its inclusion proof
    (exit 3 if refused)."""
    from jurat.cli._adjudicate import adjudicate_command

    finish(lambda: adjudicate_command(ledger, job, disposition=disposition,
                                      rationale=rationale, reviewer=reviewer, key_path=key,
                                      out=out, log_key=log_key,
                                      rationale_public=public_rationale,
                                      review_version=review_version))


@signer_app.command("keygen")
def signer_keygen(
    out: Annotated[Path, typer.Option("--out", help="Directory for settlement.key.")],
) -> None:
    """Write DIR/settlement.key (secp256k1, 0600); print its address on the last line."""
    from jurat.cli._signer import signer_keygen_command

    finish(lambda: signer_keygen_command(out))


@signer_app.command("serve")
def signer_serve(
    socket: Annotated[Path, typer.Option("--socket", help="Unix socket to listen on (0600).")],
    registry: Annotated[Path, typer.Option("--registry", help="The registry TOML.")],
    key: Annotated[Path, typer.Option("--key", help="settlement.key from `signer keygen`.")],
    state: Annotated[Path, typer.Option("--state", help="SQLite file: grants and the log.")],
    receipt_key: Annotated[list[Path] | None, typer.Option(
        "--receipt-key", help="An allowlisted receipt public key (repeat for several).")]
    = None,
    ledger: Annotated[str | None, typer.Option(
        "--ledger", callback=ledger_arg,
        help="Ask this ledger (URL or SQLite file) whether a review is current (else: proofs).")]
    = None,
    log_key: Annotated[list[Path] | None, typer.Option(
        "--log-key", help="Log public key(s) that check proofs' checkpoints (default: "
        "<stem>-log.pub beside each --receipt-key).")] = None,
    request_timeout: Annotated[float, typer.Option(
        "--request-timeout", help="Seconds to deliver a whole request line (from the "
        "connection's start or the previous answer).")] = 10.0,
    max_clients: Annotated[int, typer.Option(
        "--max-clients", help="Connections read at once; another is refused.")] = 16,
    max_request_bytes: Annotated[int | None, typer.Option(
        "--max-request-bytes", help="A request line at most (default and maximum: 48 MiB).")]
    = None,
) -> None:
    """Serve settlement requests on a Unix socket until SIGTERM (docs/signer.md)."""
    from jurat.cli._signer import signer_serve_command
    from jurat.signer import MAX_REQUEST_BYTES, SocketLimits

    finish(lambda: signer_serve_command(
        socket_path=socket, registry_path=registry, key_path=key,
        receipt_keys=receipt_key or [], state_path=state, ledger_url=ledger,
        log_keys=log_key or [], limits=SocketLimits(
            request_timeout_s=request_timeout, max_clients=max_clients,
            max_request_bytes=max_request_bytes or MAX_REQUEST_BYTES)))


@signer_app.command("request")
def signer_request(
    receipt: Annotated[Path, typer.Argument(help="The receipt (.sigstore.json).")],
    socket: Annotated[Path, typer.Option("--socket", help="The signer's Unix socket.")],
    proof: Annotated[Path | None, typer.Option(
        "--proof", help="The receipt's inclusion proof (.proof.json).")] = None,
) -> None:
    """Ask the signer to authorise a receipt; one JSON line: 0 granted, 1 refused."""
    from jurat.cli._signer import signer_request_command

    finish(lambda: signer_request_command(receipt, socket_path=socket, proof=proof))


@app.command()
def board(
    ledger: Annotated[str, typer.Argument(
        callback=ledger_arg, help="Ledger URL (sqlite:///path or postgresql://…) or SQLite "
        "file path.")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the static site.")],
    key: Annotated[Path | None, typer.Option(
        "--key", help="The receipts' public key, published beside them (default: jurat.pub "
        "in the config dir).")] = None,
    log_key: Annotated[Path | None, typer.Option(
        "--log-key", help="The log's public key, published beside the checkpoint (default: "
        "<stem>-log.pub beside --key).")] = None,
    title: Annotated[str, typer.Option("--title", help="The page's title.")] = "jurat board",
) -> None:
    """Write the public board: every signed verdict, its files and how to verify it."""
    from jurat.cli._board import board_command

    finish(lambda: board_command(ledger, out, key=key, log_key=log_key, title=title))
