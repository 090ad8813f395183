"""The runner with the PostgreSQL ledger, on the real server at 127.0.0.1:5432."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from jurat.campaign import load_campaign
from jurat.cli import ExitCode
from jurat.ledger import open_ledger
from jurat.receipts import keygen, load_private_key, load_public_key, verify_bundle
from jurat.runner import Progress, RunOptions, run_campaign_async
from tests.support.postgres import PG_URL, drop_schema

from ._support import copy_example


def test_rubric_quickstart_on_postgres_resumes_without_resampling(tmp_path: Path) -> None:
    campaign = load_campaign(copy_example("rubric", tmp_path))
    priv, pub = keygen(tmp_path / "keys")
    schema = f"jurat_run_{uuid.uuid4().hex[:12]}"
    options = RunOptions(out_dir=tmp_path / "out", quiet=True)
    try:
        for _ in range(2):  # the second run must reuse every receipt
            ledger = open_ledger(PG_URL, schema=schema, checkpoint_path=tmp_path / "pg.cp")
            try:
                results = asyncio.run(run_campaign_async(
                    campaign, options, ledger=ledger, key=load_private_key(priv),
                    progress=Progress()))
                samples = sum(1 for _ in ledger.entries(kind="sample_recorded"))
                report = ledger.verify()
            finally:
                ledger.close()
            assert ExitCode.for_decisions(r.decision for r in results) == ExitCode.REJECT
            # 3 artifacts x 3 judges x 5 samples: c3 and c5 fail a required gate, and no
            # judge is asked about a veto.
            assert samples == 45 and report.tree_size > samples
        assert all(r.reused for r in results)
        key = load_public_key(pub)
        for r in results:
            assert verify_bundle(Path(r.receipt_path).read_bytes(), key).ok
    finally:
        drop_schema(schema)
