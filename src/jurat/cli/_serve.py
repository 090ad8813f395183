"""``jurat serve CAMPAIGN.toml…``: the HTTP oracle (service/, docs/service.md)."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from jurat.cli._errors import print_error
from jurat.cli._exit import ExitCode
from jurat.cli._keys import check_log_key, choose_log_key, open_log_signer
from jurat.cli._text import err_console
from jurat.errors import ConfigError, JuratError

if TYPE_CHECKING:
    from jurat.service._limits import ClientLimits

__all__ = ["serve_command"]


def serve_command(campaigns: list[Path], *, ledger_url: str | None, key_path: Path | None,
                  log_key: Path | None, host: str, port: int, executor: str,
                  ray_address: str | None, board: bool = False,
                  replica_id: str | None = None, lease_s: float = 30.0,
                  limits: ClientLimits | None = None, allow_sim: bool = False) -> ExitCode:
    """Serve until interrupted; configuration errors exit 3 before anything is written.
    ``allow_sim``: serve campaigns judged by ``sim`` judges, which a submission's missing
    ``truth`` reduces to seeded coin flips (``check_campaigns``): a demo, never a contest."""
    from jurat.ledger import holder_text, open_ledger
    from jurat.receipts import load_or_create_default_key, load_private_key
    from jurat.runner import RayJobs, RunOptions, check_ray_options, import_ray
    from jurat.service import load_served, serve_forever
    from jurat.service._deps import require_serve
    from jurat.service._submission import check_campaigns
    from jurat.service._test_lines import reference_lines

    console = err_console()
    try:
        require_serve()
        if executor not in ("local", "ray"):
            raise ConfigError(f"--executor {executor}: unknown executor (fix: local or ray)")
        if not 1.0 <= lease_s <= 3600.0:
            raise ConfigError(f"--lease-s {lease_s}: must be from 1 to 3600 seconds (fix: the "
                              "default, 30)")
        if executor == "local" and ray_address is not None:
            raise ConfigError("--ray-address without --executor ray (fix: add --executor ray)")
        if executor == "ray":
            import_ray()  # the extra is installed, or exit 3 saying how to install it
            check_ray_options(RunOptions(out_dir=Path("."), ledger_url=ledger_url),
                              ray_address)
        served = load_served(campaigns)
        if key_path is not None:
            key = load_private_key(key_path)
        else:
            key, key_path, created = load_or_create_default_key()
            if created:
                console.print(f"created a signing key at {key_path}", markup=False)
        choice = choose_log_key(log_key, key_path)
        check_log_key(choice)
        ledger = open_ledger(ledger_url)
    except JuratError as exc:
        return print_error(exc, code=ExitCode.INPUT)
    with ledger, contextlib.ExitStack() as held:
        try:
            signer = open_log_signer(choice, ledger)
            check_campaigns(served, ledger, allow_sim=allow_sim)
            from jurat.qualify._require import refuse_unqualified

            for campaign in served:  # required qualifications, as `jurat run` checks them
                for line in refuse_unqualified(campaign.policy, ledger, key.public_key()):
                    console.print(line, markup=False, highlight=False, soft_wrap=True)
            # Shared with other servers of these campaigns, never beside a `jurat run`; on
            # SQLite one server alone: replicas take job leases in PostgreSQL.
            replicas = ledger.backend == "postgresql"
            for campaign in served:
                try:
                    held.enter_context(ledger.hold_campaign(
                        campaign.id, holder=holder_text("jurat serve"), shared=replicas))
                except ConfigError as exc:
                    if replicas:
                        raise
                    raise ConfigError(f"{exc} (a SQLite ledger is served by one "
                                      "`jurat serve` only; replicas need a PostgreSQL ledger: "
                                      "docs/service.md, \"Replicas\")") from exc
            # The service reads the hidden tests as it starts. Reading them here first makes
            # a file intake refuses (outside the directory, over the cap) an exit 3 with
            # jurat's message, not a server that announces itself and then fails to start.
            for campaign in served:
                reference_lines(campaign)
        except ConfigError as exc:
            return print_error(exc, code=ExitCode.INPUT)
        url = f"http://{host}:{port}"
        simulated = [c.id for c in served if any(j.provider == "sim" for j in c.policy.judges)]
        if simulated:  # only with --allow-sim: check_campaigns refused them otherwise
            console.print(f"--allow-sim: the sim judges of {', '.join(simulated)} have no truth "
                          "label to vote for in a submitted job; their votes are seeded coin "
                          "flips, not judgments of the work", markup=False, highlight=False)
        # The receipts' files are not the service's (it serves them from the ledger): the
        # tasks' copies go nowhere but a scratch directory on each worker.
        ray = RayJobs(served, address=ray_address, ledger_url=ledger_url, key=key,
                      out_dir=tempfile.gettempdir()) if executor == "ray" else None
        try:
            serve_forever(served, ledger=ledger, ledger_url=ledger_url, key=key,
                          log_signer=signer.signer, host=host, port=port, ray=ray,
                          board=board, replica_id=replica_id, lease_s=lease_s,
                          limits=limits,
                          ready=lambda: console.print(
                              f"serving {', '.join(c.id for c in served)} on {url} "
                              f"(ledger {ledger.url}; OpenAPI at {url}/openapi.json)",
                              markup=False, highlight=False))
        except ConfigError as exc:
            return print_error(exc, code=ExitCode.INPUT)
    return ExitCode.OK
