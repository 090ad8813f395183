"""The judge engine is owned by whoever opens it: one per run, closed when the run ends.

No module-level registry remains (httpx's ``_client.py`` pattern: state in a closable
object used with ``async with``); ``run_samples`` without an engine opens and closes its own.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jurat import judges
from jurat.campaign import load_campaign
from jurat.errors import LedgerError
from jurat.judges import Engine, _engine, run_samples
from jurat.ledger import Ledger, open_ledger
from jurat.models import (
    Artifact,
    CriteriaSuite,
    Criterion,
    EvidenceBundle,
    JudgeConfig,
    Policy,
)
from jurat.receipts import keygen, load_private_key
from jurat.runner import Progress, RunOptions, run_campaign_async

CAMPAIGN = """\
[campaign]
id = "engine"
kind = "criteria"
allowed_destinations = ["stub"]

[criteria]
samples = 3
blocker_samples = 3
items = [{ id = "polite", text = "Is the reply polite?", blocker = true }]

[[judges]]
id = "c"
provider = "stub:always-yes"

[[artifacts]]
id = "r1"
text = "Thank you."

[[artifacts]]
id = "r2"
text = "Thanks again."
"""


class _Counted(Engine):
    opened: list[_Counted] = []
    closed: list[_Counted] = []

    def __init__(self) -> None:
        super().__init__()
        _Counted.opened.append(self)

    async def aclose(self) -> None:
        _Counted.closed.append(self)
        await super().aclose()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> type[_Counted]:
    _Counted.opened, _Counted.closed = [], []
    monkeypatch.setattr("jurat.runner._run.Engine", _Counted)
    monkeypatch.setattr("jurat.judges._calls.Engine", _Counted)
    return _Counted


def _run(tmp_path: Path, ledger: Ledger) -> None:
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    priv, _ = keygen(tmp_path / "keys")
    asyncio.run(run_campaign_async(
        load_campaign(tmp_path / "c.toml"), RunOptions(out_dir=tmp_path / "out", quiet=True),
        ledger=ledger, key=load_private_key(priv), progress=Progress()))


def test_no_module_level_engine() -> None:
    assert not hasattr(_engine, "_ENGINES") and not hasattr(_engine, "default_engine")
    assert "default_engine" not in judges.__all__


def test_a_run_opens_one_engine_and_closes_it(tmp_path: Path, counted: type[_Counted]) -> None:
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        _run(tmp_path, ledger)
    assert len(counted.opened) == 1 and counted.closed == counted.opened


def test_a_failed_run_still_closes_its_engine(
    tmp_path: Path, counted: type[_Counted], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise LedgerError("refused (injected)")

    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        # The ledger fails when the job asks for its receipt's review slot (asked per job
        # when the run has no campaign history to say there is nothing to supersede).
        monkeypatch.setattr(ledger, "campaign_history", lambda _campaign: None)
        monkeypatch.setattr(ledger, "next_review", refuse)
        with pytest.raises(LedgerError, match="injected"):
            _run(tmp_path, ledger)
    assert len(counted.opened) == 1 and counted.closed == counted.opened


async def test_run_samples_without_an_engine_closes_its_own(counted: type[_Counted]) -> None:
    judge = JudgeConfig(id="c", provider="stub:always-yes", samples=1)
    policy = Policy(id="p", kind="criteria", judges=(judge,), criteria=CriteriaSuite(
        samples=1, blocker_samples=1, items=(Criterion(id="x", text="?", blocker=True),)))
    artifact = Artifact(id="a", sha256="0" * 64, media_type="text/plain", text="hi")
    votes = await run_samples(policy, artifact, EvidenceBundle(items=()), [])
    assert len(votes) == 1
    assert len(counted.opened) == 1 and counted.closed == counted.opened
    given = Engine()
    await run_samples(policy, artifact, EvidenceBundle(items=()), [], engine=given)
    assert len(counted.opened) == 1  # the caller's engine: used, not opened or closed here
