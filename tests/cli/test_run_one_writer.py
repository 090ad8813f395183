"""Two ``jurat run`` processes started together on one campaign and ledger record exactly
the samples one run records (issue 27): the second exits 3 naming the holder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from jurat.ledger import open_ledger
from tests.support.cli import invoke

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "rubric"


def _samples(db: Path) -> int:
    with open_ledger(f"sqlite:///{db}", create=False) as ledger:
        return sum(1 for _ in ledger.entries(kind="sample_recorded"))


def _start(campaign: Path, out: Path, db: Path, key: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "jurat", "run", str(campaign), "--out", str(out), "--ledger",
         f"sqlite:///{db}", "--key", str(key), "--quiet", "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def test_two_runs_started_together_draw_each_sample_once(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert invoke("keygen", "--out", str(keys)).exit_code == 0
    shutil.copytree(QUICKSTART, tmp_path / "rubric")
    campaign = tmp_path / "rubric" / "campaign.toml"
    alone = _start(campaign, tmp_path / "alone", tmp_path / "alone.db", keys / "jurat.key")
    alone.communicate(timeout=300)
    planned = _samples(tmp_path / "alone.db")
    assert planned > 0

    db = tmp_path / "l.db"
    runs = [_start(campaign, tmp_path / f"out{i}", db, keys / "jurat.key") for i in (1, 2)]
    ended = [(run.wait(timeout=300), run.communicate()) for run in runs]
    codes = sorted(code for code, _ in ended)
    assert codes[0] in (0, 1, 2) and codes[1] in (0, 1, 2, 3), ended
    # Both start at once and the run lasts seconds past its preflight: they overlap.
    (refused,) = [err for code, (_, err) in ended if code == 3]
    assert "is held on this ledger by jurat run pid" in refused, refused
    assert _samples(db) == planned


def test_serve_on_a_campaign_a_run_holds_exits_3_naming_the_holder(tmp_path: Path) -> None:
    """`jurat serve` against a ledger on which `jurat run` holds the campaign is refused
    before it serves or writes anything (exit 3, the holder named)."""
    keys = tmp_path / "keys"
    assert invoke("keygen", "--out", str(keys)).exit_code == 0
    shutil.copytree(QUICKSTART, tmp_path / "rubric")
    campaign = tmp_path / "rubric" / "campaign.toml"
    # Judges that take two minutes a call keep the run holding the campaign, past its first
    # job_received, for as long as serve takes to start on a loaded machine.
    campaign.write_text(campaign.read_text().replace(
        '\nprovider = "sim"\n', '\nprovider = "sim"\nlatency_ms = 120000\n'))
    db = tmp_path / "l.db"
    running = _start(campaign, tmp_path / "out", db, keys / "jurat.key")
    try:
        deadline = time.monotonic() + 120
        while not (db.exists() and _received(db)) and time.monotonic() < deadline:
            assert running.poll() is None, running.communicate()
            time.sleep(0.1)
        served = subprocess.run(
            [sys.executable, "-m", "jurat", "serve", str(campaign), "--ledger",
             f"sqlite:///{db}", "--key", str(keys / "jurat.key"), "--port", "0",
             "--allow-sim"],
            capture_output=True, text=True, timeout=100, env=dict(os.environ))
        assert running.poll() is None, "the run ended before serve started"
    finally:
        running.kill()
        running.communicate()
    assert served.returncode == 3, served.stdout + served.stderr
    assert "held on this ledger by jurat run pid" in served.stderr, served.stderr


def _received(db: Path) -> int:
    try:
        with open_ledger(f"sqlite:///{db}", create=False) as ledger:
            return sum(1 for _ in ledger.entries(kind="job_received"))
    except Exception:  # noqa: BLE001 - the run may not have made its tables yet
        return 0
