"""A campaign that requires qualification (issue 31): `jurat run` refuses a judge without
a record in its ledger (exit 3, nothing sent), runs after `jurat qualify --ledger` stored a
passing one, and its receipts cite the record; `jurat verify` re-derives the record's
figures; a failing, foreign or stale record is refused, each saying why."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from jurat.campaign import load_campaign
from jurat.errors import ConfigError
from jurat.ledger import open_ledger
from jurat.qualify._require import RECORD_KIND, refuse_unqualified
from jurat.receipts import load_public_key
from jurat.receipts._bundle import parse_bundle
from tests.support.cli import invoke, isolate_homes

ITEMS = "".join(
    f'[[artifacts]]\nid = "q{i}"\ntext = "answer {i}"\ntruth = "{"yes" if i % 2 else "no"}"\n\n'
    for i in range(8))
JUDGE = """
[[judges]]
id = "{id}"
provider = "sim"
reliability = {reliability}
seed = 5
samples = {samples}
{qualification}
"""
HEAD = """\
[campaign]
id = "{id}"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
samples = 1
blocker_samples = 5
items = [{{ id = "correct", text = "Is the final answer correct?", blocker = true }}]
"""
RUN_ITEMS = ('[[artifacts]]\nid = "r1"\ntext = "four"\ntruth = "yes"\n\n'
             '[[artifacts]]\nid = "r2"\ntext = "five"\ntruth = "yes"\n')


@pytest.fixture(autouse=True)
def _homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


def _campaign(path: Path, *, id: str, items: str, reliability: float = 1.0,
              record: str | None = None, judge: str = "sim-1") -> Path:
    required = (f'qualification = {{ record = "{record}", max_age_days = 30 }}'
                if record else "")
    path.write_text(HEAD.format(id=id) + JUDGE.format(
        id=judge, reliability=reliability, samples=1, qualification=required) + "\n" + items)
    return path


def _qualify(tmp_path: Path, name: str, reliability: float) -> str:
    campaign = _campaign(tmp_path / f"{name}.toml", id=name, items=ITEMS,
                         reliability=reliability, judge="qualified-as")
    done = invoke("qualify", str(campaign), "--samples", "3", "--windows", "2",
                  "--spacing-ms", "0", "--pause", "0", "--key", str(tmp_path / "k" / "jurat.key"),
                  "--ledger", str(tmp_path / "l.db"), "--record", str(tmp_path / f"{name}.rec"))
    assert done.exit_code == 0, done.output
    found = re.search(r"qualification record: (sha256:[0-9a-f]{64}) .*; stored in ", done.output)
    assert found, done.output
    return found.group(1)


def _run(tmp_path: Path, campaign: Path) -> tuple[int, str]:
    done = invoke("run", str(campaign), "--out", str(tmp_path / f"out-{campaign.stem}"),
                  "--ledger", str(tmp_path / "l.db"), "--key", str(tmp_path / "k" / "jurat.key"))
    return done.exit_code, done.stdout + done.stderr


def test_run_requires_a_passing_record_and_its_receipts_cite_it(tmp_path: Path) -> None:
    assert invoke("keygen", "--out", str(tmp_path / "k")).exit_code == 0
    missing = "sha256:" + "ab" * 32
    code, out = _run(tmp_path, _campaign(tmp_path / "first.toml", id="first",
                                         items=RUN_ITEMS, record=missing))
    assert code == 3, out
    assert f"judges[0].qualification.record: judge 'sim-1' requires qualification record " \
           f"{missing}, which the ledger" in out and "jurat qualify" in out, out
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        assert not list(ledger.entries(kind="sample_recorded"))  # nothing sent

    digest = _qualify(tmp_path, "qual-good", 1.0)
    # Another id and sample count than the qualification's: the same judge all the same.
    campaign = _campaign(tmp_path / "gated.toml", id="gated", items=RUN_ITEMS, record=digest)
    code, out = _run(tmp_path, campaign)
    assert code == 0, out
    assert f"judge sim-1: qualified by {digest}" in out
    statement = json.loads(parse_bundle((tmp_path / "out-gated" / "r1.sigstore.json")
                                        .read_bytes()).payload)
    judge = statement["predicate"]["campaign"]["policy"]["judges"][0]
    assert judge["qualification"] == {"record": digest, "max_age_days": 30}
    # The record verifies offline, every figure re-derived from its signed samples.
    done = invoke("verify", str(tmp_path / "qual-good.rec"), "--key",
                  str(tmp_path / "k" / "jurat.pub"))
    assert done.exit_code == 0, done.output
    assert "every figure re-derived from the signed samples" in done.output
    assert f"sha256:{digest.removeprefix('sha256:')}" in done.output
    # Stale: the same record 31 days on.
    policy = load_campaign(campaign).policy
    key = load_public_key(tmp_path / "k" / "jurat.pub")
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        assert len(list(ledger.entries(kind=RECORD_KIND))) == 1
        with pytest.raises(ConfigError, match="days old, over max_age_days = 30"):
            refuse_unqualified(policy, ledger, key, now=time.time() + 31 * 86400)


def test_a_failing_or_foreign_record_is_refused(tmp_path: Path) -> None:
    assert invoke("keygen", "--out", str(tmp_path / "k")).exit_code == 0
    poor = _qualify(tmp_path, "qual-poor", 0.55)
    code, out = _run(tmp_path, _campaign(tmp_path / "poor.toml", id="poor", items=RUN_ITEMS,
                                         reliability=0.55, record=poor))
    assert code == 3 and "did not pass qualification" in out, out
    assert "kappa against gold" in out or "implied false-block rate" in out, out
    # A record of another configuration (reliability differs) does not qualify this judge.
    good = _qualify(tmp_path, "qual-good", 1.0)
    code, out = _run(tmp_path, _campaign(tmp_path / "other.toml", id="other",
                                         items=RUN_ITEMS, reliability=0.9, record=good))
    assert code == 3 and "did not qualify judge 'sim-1' as configured here" in out, out
    # A record signed with another key does not verify with the run's.
    assert invoke("keygen", "--out", str(tmp_path / "k2")).exit_code == 0
    done = invoke("verify", str(tmp_path / "qual-good.rec"), "--key",
                  str(tmp_path / "k2" / "jurat.pub"))
    assert done.exit_code == 1 and "does not verify" in done.output, done.output
