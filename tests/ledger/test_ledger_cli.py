"""``jurat log`` (``log_command``) and its exit codes: 0 ok, 1 verification failed, 3 bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from jurat.cli._ledger import log_command
from jurat.ledger import load_log_key, verify_entry_proof

from .conftest import Target


def _consoles() -> tuple[Console, io.StringIO, Console, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Console(file=out, width=200), out, Console(file=err, width=200), err


def test_checkpoint_prove_verify_round_trip(sqlite_target: Target, tmp_path: Path) -> None:
    key = tmp_path / "log.key"
    with sqlite_target.open() as ledger:
        for i in range(5):
            ledger.append("decision", f"j{i}", {"i": i})
    o, out, e, err = _consoles()
    url = sqlite_target.url
    assert log_command("checkpoint", url, key_path=key, out=o, err=e) == 0
    assert out.getvalue() == sqlite_target.checkpoint_path.read_text()
    o, out, e, err = _consoles()
    assert log_command("prove", url, 3, out=o, err=e) == 0
    entry = verify_entry_proof(out.getvalue(), load_log_key(key).public_key)
    assert entry.seq == 3
    o, out, e, err = _consoles()
    assert log_command("prove", url, old_size=2, out=o, err=e) == 0
    assert json.loads(out.getvalue())["new_size"] == 5
    o, out, e, err = _consoles()
    assert log_command("verify", url, key_path=key, out=o, err=e) == 0
    text = out.getvalue()
    assert "ledger verified" in text and "signatures checked" in text and "warning" not in text


def test_verification_failure_exits_1(sqlite_target: Target, tmp_path: Path) -> None:
    with sqlite_target.open() as ledger:
        for i in range(5):
            ledger.append("decision", f"j{i}", {"i": i})
    sqlite_target.tamper(f"DELETE FROM {sqlite_target.table('entries')} WHERE seq = 2")
    o, out, e, err = _consoles()
    assert log_command("verify", sqlite_target.url, key_path=None, out=o, err=e) == 1
    assert "seq 2: entry missing" in err.getvalue()


def test_bad_input_exits_3(sqlite_target: Target, tmp_path: Path) -> None:
    o, _, e, err = _consoles()
    missing = f"sqlite:///{tmp_path / 'nope.db'}"
    assert log_command("verify", missing, out=o, err=e) == 3
    assert "no ledger" in err.getvalue()
    assert not (tmp_path / "nope.db").exists()
    with sqlite_target.open() as ledger:
        ledger.append("decision", "j", {})
    url = sqlite_target.url
    assert log_command("explode", url, out=o, err=e) == 3
    assert log_command("prove", url, out=o, err=e) == 3
    assert log_command("prove", url, 0, out=o, err=e) == 3  # no checkpoint covers it yet
    assert log_command("prove", url, 99, out=o, err=e) == 3
    assert log_command("verify", "mysql://x/y", out=o, err=e) == 3
    bad_key = tmp_path / "bad.key"
    bad_key.write_text("junk")
    assert log_command("verify", url, key_path=bad_key, out=o, err=e) == 3
