"""One key story: the log key that signs checkpoints is chosen explicitly, lives beside the
signing key, has its public half exported, and checks ``jurat verify --checkpoint``.

docs/receipt-format.md §4.2 (the key files) and §7 step 8; cli/_keys.py.
"""

from __future__ import annotations

import stat
from pathlib import Path

from jurat.cli import ExitCode
from jurat.ledger import load_log_key, load_or_create_log_key, open_ledger, parse_checkpoint

from .conftest import CRITERIA, campaign, jurat

KEY_FILES = ("jurat.key", "jurat.pub", "jurat-log.key", "jurat-log.pub")


def _said(result: object) -> str:
    """Everything a command printed, on one line (Rich wraps long lines)."""
    output = getattr(result, "output", "")
    return " ".join(str(output).split())


def _run(tmp_path: Path, *extra: str, name: str = "keyed") -> tuple[int, str]:
    path = tmp_path / f"{name}.toml"
    if not path.exists():
        path = campaign(tmp_path, CRITERIA, name, "always-yes")
    result = jurat("run", str(path), "--out", str(tmp_path / "out"), "--ledger",
                   f"sqlite:///{tmp_path / 'ledger.db'}", "--quiet", *extra)
    return result.exit_code, _said(result)


def _entries(tmp_path: Path) -> int:
    db = tmp_path / "ledger.db"
    if not db.exists():
        return 0
    with open_ledger(f"sqlite:///{db}", create=False) as ledger:
        return ledger.size()


def test_keygen_writes_both_pairs_and_refuses_to_overwrite_any(tmp_path: Path) -> None:
    out = tmp_path / "keys"
    made = jurat("keygen", "--out", str(out))
    assert made.exit_code == ExitCode.OK, made.output
    for name in KEY_FILES:
        mode = stat.S_IMODE((out / name).stat().st_mode)
        assert mode == (0o600 if name.endswith(".key") else 0o644), name
    said = _said(made)
    assert f"log key: {out / 'jurat-log.key'}" in said
    assert f"log public: {out / 'jurat-log.pub'} (C2SP verifier key" in said
    signer = load_log_key(out / "jurat-log.key")
    assert (out / "jurat-log.pub").read_text() == signer.verifier_key() + "\n"
    # Any one of the four present: refused, and nothing else is written.
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "jurat-log.pub").write_text("someone's\n")
    again = jurat("keygen", "--out", str(lone))
    assert again.exit_code == ExitCode.INPUT
    assert f"refusing to overwrite existing key file {lone / 'jurat-log.pub'}" in _said(again)
    assert sorted(p.name for p in lone.iterdir()) == ["jurat-log.pub"]


def test_run_signs_checkpoints_with_the_log_key_beside_key_and_nothing_hidden(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "keys"
    assert jurat("keygen", "--out", str(keys)).exit_code == 0
    code, said = _run(tmp_path, "--key", str(keys / "jurat.key"))
    assert code == ExitCode.OK, said
    # No key was created in the configuration directory: the run used the named ones.
    assert not (tmp_path / "cfg" / "jurat").exists()
    note = (tmp_path / "ledger.db.checkpoint").read_text()
    parse_checkpoint(note, (keys / "jurat-log.pub").read_text().strip())  # raises if not
    assert (f"--checkpoint {tmp_path / 'ledger.db.checkpoint'} --log-key "
            f"{keys / 'jurat-log.pub'}") in said


def test_verify_checkpoint_with_log_key_checks_its_signature(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert jurat("keygen", "--out", str(keys)).exit_code == 0
    assert _run(tmp_path, "--key", str(keys / "jurat.key"))[0] == ExitCode.OK
    receipt = str(tmp_path / "out" / "r1.sigstore.json")
    checkpoint = str(tmp_path / "ledger.db.checkpoint")
    ok = jurat("verify", receipt, "--key", str(keys / "jurat.pub"), "--checkpoint", checkpoint,
               "--log-key", str(keys / "jurat-log.pub"))
    assert ok.exit_code == ExitCode.OK, ok.output
    assert "8. ok check inclusion proof" in _said(ok)
    assert "checkpoint signature checked" in _said(ok)
    # The log key beside --key is the default: the same without --log-key.
    beside = jurat("verify", receipt, "--key", str(keys / "jurat.pub"), "--checkpoint",
                   checkpoint)
    assert beside.exit_code == ExitCode.OK, beside.output
    assert f"log key: {keys / 'jurat-log.pub'} (beside --key)" in _said(beside)
    # Another log's key: the checkpoint carries no signature by it.
    assert jurat("keygen", "--out", str(tmp_path / "other")).exit_code == 0
    other = jurat("verify", receipt, "--key", str(keys / "jurat.pub"), "--checkpoint",
                  checkpoint, "--log-key", str(tmp_path / "other" / "jurat-log.pub"))
    assert other.exit_code == ExitCode.ESCALATE
    assert "8. FAIL check inclusion proof checkpoint carries no signature by the given log " \
           "key" in _said(other)


def test_an_unchecked_checkpoint_is_a_failed_step_with_the_fix(tmp_path: Path) -> None:
    """The receipt's public key alone (no log key beside it, none given): step 8 fails,
    exit 1, and the output says how to fix it; it is never "ok"."""
    keys = tmp_path / "keys"
    assert jurat("keygen", "--out", str(keys)).exit_code == 0
    assert _run(tmp_path, "--key", str(keys / "jurat.key"))[0] == ExitCode.OK
    lone = tmp_path / "pub-only"
    lone.mkdir()
    (lone / "jurat.pub").write_bytes((keys / "jurat.pub").read_bytes())
    result = jurat("verify", str(tmp_path / "out" / "r1.sigstore.json"), "--key",
                   str(lone / "jurat.pub"), "--checkpoint", str(tmp_path / "ledger.db.checkpoint"))
    assert result.exit_code == ExitCode.ESCALATE
    said = _said(result)
    assert "8. FAIL check inclusion proof the checkpoint's signature was NOT checked" in said
    assert f"no log public key at {lone / 'jurat-log.pub'} (beside --key)" in said
    assert "fix: pass --log-key DIR/jurat-log.pub" in said
    assert "not verified: step 8 (check inclusion proof) failed" in said
    assert "ok" not in said.split("8. ")[1].split()[0]


def test_run_with_a_missing_log_key_exits_3_and_writes_nothing(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert jurat("keygen", "--out", str(keys)).exit_code == 0
    code, said = _run(tmp_path, "--key", str(keys / "jurat.key"), "--log-key",
                      str(tmp_path / "nope.key"))
    assert code == ExitCode.INPUT, said
    assert f"--log-key: cannot read log key {tmp_path / 'nope.key'}" in said
    assert "fix: `jurat keygen --out DIR` writes DIR/jurat-log.key" in said
    assert not (tmp_path / "ledger.db").exists()
    # The receipt-signing key is not a log key.
    code, said = _run(tmp_path, "--key", str(keys / "jurat.key"), "--log-key",
                      str(keys / "jurat.key"))
    assert code == ExitCode.INPUT and "is not an Ed25519 key" in said


def test_reusing_a_ledger_with_another_log_key_exits_3_before_the_run(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for keys in (first, second):
        assert jurat("keygen", "--out", str(keys)).exit_code == 0
    assert _run(tmp_path, "--key", str(first / "jurat.key"))[0] == ExitCode.OK
    before = _entries(tmp_path)
    origin = load_log_key(first / "jurat-log.key").origin
    code, said = _run(tmp_path, "--key", str(second / "jurat.key"))
    assert code == ExitCode.INPUT, said
    assert f"this ledger's checkpoints are signed as '{origin}'" in said
    assert f"the log key {second / 'jurat-log.key'} signs as" in said
    assert "use the same log key" in said and f"its public half names {origin}" in said
    assert _entries(tmp_path) == before  # refused before anything was appended
    # The same ledger with another signing key but the log key that signed it: fine once
    # the receipt key is rotated explicitly (tests/cli/test_run_keys.py).
    code, said = _run(tmp_path, "--key", str(second / "jurat.key"), "--log-key",
                      str(first / "jurat-log.key"), "--rotate-key")
    assert code == ExitCode.OK, said


def test_a_ledger_checkpointed_with_the_old_hidden_key_says_which_key_it_needs(
    tmp_path: Path,
) -> None:
    """Before the log key was explicit, jurat signed with ``$XDG_CONFIG_HOME/jurat/log.key``.
    Such a ledger stays usable: the refusal names that file, and passing it works."""
    keys = tmp_path / "keys"
    assert jurat("keygen", "--out", str(keys)).exit_code == 0
    (keys / "jurat-log.key").unlink()
    (keys / "jurat-log.pub").unlink()  # a key directory from before: signing pair only
    legacy = tmp_path / "cfg" / "jurat" / "log.key"
    signer = load_or_create_log_key(legacy)
    legacy.with_suffix(".pub").unlink()  # the old jurat exported no public half
    with open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}",
                     checkpoint_path=tmp_path / "ledger.db.checkpoint") as ledger:
        ledger.append("decision", "old", {})
        ledger.checkpoint(signer)
    code, said = _run(tmp_path, "--key", str(keys / "jurat.key"))
    assert code == ExitCode.INPUT, said
    assert f"there is no log key at {keys / 'jurat-log.key'} (beside --key)" in said
    assert f"checkpoints are signed as '{signer.origin}'" in said
    assert f"pass --log-key {legacy}: it signed them" in said
    assert f"or move it to {keys / 'jurat-log.key'}" in said
    assert not (keys / "jurat-log.key").exists()  # no new key for a log that has one
    code, said = _run(tmp_path, "--key", str(keys / "jurat.key"), "--log-key", str(legacy))
    assert code == ExitCode.OK, said
    # Its public half is exported now, and checks the new checkpoint.
    public = legacy.with_suffix(".pub")
    assert public.read_text() == signer.verifier_key() + "\n"
    verified = jurat("verify", str(tmp_path / "out" / "r1.sigstore.json"), "--key",
                     str(keys / "jurat.pub"), "--checkpoint",
                     str(tmp_path / "ledger.db.checkpoint"), "--log-key", str(public))
    assert verified.exit_code == ExitCode.OK, verified.output


def test_without_key_both_default_keys_sit_in_the_config_dir(tmp_path: Path) -> None:
    code, said = _run(tmp_path)
    assert code == ExitCode.OK, said
    home = tmp_path / "cfg" / "jurat"
    assert sorted(p.name for p in home.iterdir()) == sorted(KEY_FILES)
    assert f"created a log key at {home / 'jurat-log.key'}" in said
    # verify defaults to the same place: receipt key and log key.
    result = jurat("verify", str(tmp_path / "out" / "r1.sigstore.json"), "--checkpoint",
                   str(tmp_path / "ledger.db.checkpoint"))
    assert result.exit_code == ExitCode.OK, result.output
    assert f"log key: {home / 'jurat-log.pub'} (the default)" in _said(result)
    # A second run reuses them; nothing is created again.
    code, said = _run(tmp_path)
    assert code == ExitCode.OK and "created" not in said
