"""``jurat log`` (``log_command``) and its exit codes: 0 ok, 1 verification failed (or the
checkpoints' signatures not checked), 3 bad input (a key that cannot sign this ledger)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from jurat.cli._ledger import log_command
from jurat.ledger import load_log_key, load_or_create_log_key, log_keygen, verify_entry_proof

from .conftest import Target


def _consoles() -> tuple[Console, io.StringIO, Console, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Console(file=out, width=200), out, Console(file=err, width=200), err


def test_checkpoint_prove_verify_round_trip(sqlite_target: Target, tmp_path: Path) -> None:
    key, pub = log_keygen(tmp_path / "keys")
    with sqlite_target.open() as ledger:
        for i in range(5):
            ledger.append("decision", f"j{i}", {"i": i})
    o, out, e, err = _consoles()
    url = sqlite_target.url
    assert log_command("checkpoint", url, key_path=key, out=o, err=e) == 0
    assert out.getvalue() == sqlite_target.checkpoint_path.read_text()
    assert f"signed with log key {key} (existing); check it with --log-key {pub}" in (
        err.getvalue().replace("\n", ""))
    o, out, e, err = _consoles()
    assert log_command("prove", url, 3, out=o, err=e) == 0
    entry = verify_entry_proof(out.getvalue(), load_log_key(key).public_key)
    assert entry.seq == 3
    o, out, e, err = _consoles()
    assert log_command("prove", url, old_size=2, out=o, err=e) == 0
    assert json.loads(out.getvalue())["new_size"] == 5
    o, out, e, err = _consoles()
    assert log_command("verify", url, key_path=pub, out=o, err=e) == 0
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
    assert log_command("checkpoint", url, key_path=tmp_path / "absent.key", out=o, err=e) == 3


def _filled(target: Target) -> str:
    with target.open() as ledger:
        for i in range(3):
            ledger.append("decision", f"j{i}", {"i": i})
    return target.url


def test_verify_without_the_log_key_is_not_ok(sqlite_target: Target, tmp_path: Path) -> None:
    """An unchecked checkpoint is never "ok": the chain held, but nothing shows who signed."""
    url = _filled(sqlite_target)
    key, pub = log_keygen(tmp_path / "keys")
    o, out, e, err = _consoles()
    assert log_command("checkpoint", url, key_path=key, out=o, err=e) == 0
    o, out, e, err = _consoles()
    assert log_command("verify", url, out=o, err=e) == 1  # no default jurat-log.pub here
    said = err.getvalue().replace("\n", "")
    assert "not verified" in said and "signature was NOT checked" in said
    assert "fix: pass --log-key DIR/jurat-log.pub" in said
    # Giving the private key where the public one goes says which file to pass instead.
    o, out, e, err = _consoles()
    assert log_command("verify", url, key_path=key, out=o, err=e) == 3
    assert "holds a private key" in err.getvalue() and "jurat-log.pub" in err.getvalue()


def test_a_ledger_without_checkpoints_verifies_without_a_key(sqlite_target: Target) -> None:
    o, out, e, err = _consoles()
    assert log_command("verify", _filled(sqlite_target), out=o, err=e) == 0


def test_another_log_key_is_refused_with_the_one_the_ledger_needs(
    sqlite_target: Target, tmp_path: Path
) -> None:
    url = _filled(sqlite_target)
    first, _ = log_keygen(tmp_path / "first")
    second, _ = log_keygen(tmp_path / "second")
    o, out, e, err = _consoles()
    assert log_command("checkpoint", url, key_path=first, out=o, err=e) == 0
    origin = load_log_key(first).origin
    o, out, e, err = _consoles()
    assert log_command("checkpoint", url, key_path=second, out=o, err=e) == 3
    said = err.getvalue().replace("\n", "")
    assert f"checkpoints are signed as '{origin}'" in said and "use the same log key" in said
    assert f"its public half names {origin}" in said


def test_the_legacy_hidden_log_key_is_named_when_it_is_the_one(
    sqlite_target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ledger checkpointed with the old hidden ``~/.config/jurat/log.key`` stays usable:
    the refusal names that key, and passing it works (its public half is written then)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    legacy = tmp_path / "cfg" / "jurat" / "log.key"
    url = _filled(sqlite_target)
    with sqlite_target.open() as ledger:
        ledger.checkpoint(load_or_create_log_key(legacy))  # as jurat did before
    (tmp_path / "cfg" / "jurat" / "log.pub").unlink()  # the old jurat wrote no public half
    o, out, e, err = _consoles()
    # The default log key (jurat-log.key in the config dir) is absent: it is not created.
    assert log_command("checkpoint", url, out=o, err=e) == 3
    said = err.getvalue().replace("\n", "")
    assert f"pass --log-key {legacy}: it signed them" in said
    assert not (tmp_path / "cfg" / "jurat" / "jurat-log.key").exists()
    o, out, e, err = _consoles()
    assert log_command("checkpoint", url, key_path=legacy, out=o, err=e) == 0
    pub = legacy.with_suffix(".pub")
    assert pub.read_text().startswith(load_log_key(legacy).origin + "+")
    o, out, e, err = _consoles()
    assert log_command("verify", url, key_path=pub, out=o, err=e) == 0
    checked = re.search(r"signatures checked\s+│ (\d+)", out.getvalue())
    assert checked is not None and int(checked.group(1)) >= 2  # both checkpoints, signed


def test_the_default_log_key_is_created_once_for_a_new_log(
    sqlite_target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    url = _filled(sqlite_target)
    o, out, e, err = _consoles()
    assert log_command("checkpoint", url, out=o, err=e) == 0
    key = tmp_path / "cfg" / "jurat" / "jurat-log.key"
    assert "(created just now)" in err.getvalue()
    assert (key.with_suffix(".pub")).read_text().startswith(load_log_key(key).origin)
    o, out, e, err = _consoles()
    assert log_command("verify", url, out=o, err=e) == 0  # the default jurat-log.pub
