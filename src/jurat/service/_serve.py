"""`jurat serve`: open the ledger and keys, build the app, run uvicorn until stopped."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jurat.campaign import load_campaign
from jurat.errors import ConfigError
from jurat.ledger import Ledger, LogSigner
from jurat.models import Campaign
from jurat.receipts import PrivateKey
from jurat.runner import RayJobs, tuned_for_jobs
from jurat.service._board import BoardCache
from jurat.service._deps import require_serve
from jurat.service._limits import ClientLimits, body_limit
from jurat.service._service import CHECKPOINT_INTERVAL_S, Service
from jurat.service._tokens import TokenStore

__all__ = ["load_served", "serve_forever"]


def load_served(paths: Sequence[Path]) -> list[Campaign]:
    """The campaign files to serve (they may list no artifacts; any they list are not run)."""
    if not paths:
        raise ConfigError("name at least one campaign file (fix: jurat serve campaign.toml)")
    return [load_campaign(path, served=True) for path in paths]


def serve_forever(campaigns: Sequence[Campaign], *, ledger: Ledger, ledger_url: str | None,
                  key: PrivateKey, log_signer: LogSigner, host: str, port: int,
                  checkpoint_interval: float = CHECKPOINT_INTERVAL_S,
                  ready: Any = None, ray: RayJobs | None = None, board: bool = False,
                  replica_id: str | None = None, lease_s: float = 30.0,
                  limits: ClientLimits | None = None) -> None:
    """Serve until interrupted. The ledger and keys are the caller's (it closes them);
    ``ray``: run the jobs on a Ray cluster (opened and closed by the service); ``board``:
    also serve the public board at ``/board/`` (``_board``); ``limits``: what one client
    may cost (``_guard``, ``_conn``; the defaults when None)."""
    require_serve()
    import uvicorn

    from jurat.service._app import create_app
    from jurat.service._conn import server_config

    limits = limits or ClientLimits()

    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    public = BoardCache(ledger, key, log_signer) if board else None
    with contextlib.closing(TokenStore(ledger_url)) as tokens:
        biggest = max(c.intake.max_artifact_bytes for c in campaigns)
        app = create_app(lambda: Service(campaigns, ledger=ledger, key=key,
                                         log_signer=log_signer,
                                         checkpoint_interval=checkpoint_interval,
                                         ray=ray, replica_name=replica_id,
                                         lease_ttl=lease_s), tokens,
                         max_body_bytes=limits.max_body_bytes or body_limit(biggest),
                         board=public, limits=limits)
        config = server_config(app, host=host, port=port, limits=limits,
                               log_level="warning", lifespan="on", access_log=False)
        server = uvicorn.Server(config)
        if ready is not None:
            ready()
        try:
            # As `jurat run` runs its jobs (runner/_shards.py): the ledger's commit thread
            # wins the GIL back from the event loop within 0.5 ms, not 5 ms, at each SQLite
            # or driver call; the collector scans less often and skips what start-up made.
            with tuned_for_jobs():
                server.run()
        finally:
            if public is not None:
                public.close()
