"""A log key is not a receipt-signing key (issue 27): ``jurat run --key jurat-log.key``
exits 3 before the ledger or any receipt exists, naming the fix."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli import invoke

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "rubric"


def test_the_log_key_is_refused_as_the_receipt_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert invoke("keygen", "--out", str(keys)).exit_code == 0
    shutil.copytree(QUICKSTART, tmp_path / "rubric")
    ledger = tmp_path / "l.db"
    r = invoke("run", str(tmp_path / "rubric" / "campaign.toml"), "--out", str(tmp_path / "out"),
               "--ledger", f"sqlite:///{ledger}", "--key", str(keys / "jurat-log.key"),
               "--quiet")
    assert r.exit_code == 3, r.stdout + r.stderr
    assert "is a log key" in r.stderr and "jurat.key, not jurat-log.key" in r.stderr
    assert not ledger.exists() and not (keys / "jurat-log-log.key").exists()
    # The receipt key still runs.
    ok = invoke("run", str(tmp_path / "rubric" / "campaign.toml"), "--out", str(tmp_path / "out"),
                "--ledger", f"sqlite:///{ledger}", "--key", str(keys / "jurat.key"), "--quiet")
    assert ok.exit_code in (0, 1, 2), ok.stderr


def test_the_chosen_log_key_is_refused_as_the_receipt_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert invoke("keygen", "--out", str(keys)).exit_code == 0
    shutil.copytree(QUICKSTART, tmp_path / "rubric")
    lonely = tmp_path / "lonely.key"  # no public half beside it
    shutil.copy(keys / "jurat-log.key", lonely)
    lonely.chmod(0o600)
    r = invoke("run", str(tmp_path / "rubric" / "campaign.toml"), "--out", str(tmp_path / "out"),
               "--ledger", f"sqlite:///{tmp_path / 'l.db'}", "--key", str(lonely),
               "--log-key", str(keys / "jurat-log.key"), "--quiet")
    assert r.exit_code == 3, r.stdout + r.stderr
    assert "is the log key (--log-key)" in r.stderr
