"""Log keys, the C2SP signed-note checkpoint format, URLs and job ids."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from jurat.errors import ConfigError, DependencyError, LedgerError, TamperError, ValidationError
from jurat.ledger import (
    LogSigner,
    default_log_key_path,
    job_id,
    load_log_key,
    load_or_create_log_key,
    open_ledger,
    parse_checkpoint,
)
from jurat.ledger._note import checkpoint_body, public_key_from_verifier

ROOT = hashlib.sha256(b"root").digest()


def test_log_key_is_pkcs8_pem_mode_0600_and_reloads(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "log.key"
    signer = load_or_create_log_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    pem = path.read_bytes()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")
    key = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(key, Ed25519PrivateKey)
    again = load_or_create_log_key(path)
    assert again.public_bytes == signer.public_bytes
    assert (
        signer.origin == f"jurat.local/log/{hashlib.sha256(signer.public_bytes).hexdigest()[:16]}"
    )
    assert not list(path.parent.glob(".*tmp"))


def test_log_key_refuses_loose_permissions_and_junk(tmp_path: Path) -> None:
    path = tmp_path / "log.key"
    load_or_create_log_key(path)
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_log_key(path)
    junk = tmp_path / "junk.key"
    junk.write_bytes(b"not a key")
    os.chmod(junk, 0o600)
    with pytest.raises(ConfigError, match="PKCS#8"):
        load_log_key(junk)
    with pytest.raises(ConfigError, match="cannot read"):
        load_log_key(tmp_path / "missing.key")


def test_default_key_location_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default log key sits beside the default signing key (``jurat-log.key`` beside
    ``jurat.key``), with its public half ``jurat-log.pub``."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert default_log_key_path() == tmp_path / "xdg" / "jurat" / "jurat-log.key"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = tmp_path / "home" / ".config" / "jurat"
    assert default_log_key_path() == home / "jurat-log.key"
    signer = load_or_create_log_key()
    assert (home / "jurat-log.key").exists()
    assert (home / "jurat-log.pub").read_text() == signer.verifier_key() + "\n"
    assert load_log_key().public_bytes == signer.public_bytes


def test_note_layout_and_key_id_follow_c2sp() -> None:
    key = Ed25519PrivateKey.generate()
    signer = LogSigner(key, name="example.com/log")
    note = signer.sign_note(checkpoint_body("example.com/log", 42, ROOT, ("ext line",)))
    body, sig_block = note.split("\n\n")
    assert body.split("\n") == [
        "example.com/log",
        "42",
        base64.b64encode(ROOT).decode(),
        "ext line",
    ]
    assert sig_block.startswith("\u2014 example.com/log ") and sig_block.endswith("\n")
    blob = base64.b64decode(sig_block.rstrip("\n").split(" ")[-1])
    public = signer.public_bytes
    expected_id = hashlib.sha256(b"example.com/log\n\x01" + public).digest()[:4]
    assert blob[:4] == expected_id
    key.public_key().verify(blob[4:], (body + "\n").encode())
    vkey = signer.verifier_key()
    encoded = base64.b64encode(b"\x01" + public).decode()
    assert vkey == f"example.com/log+{expected_id.hex()}+{encoded}"
    assert public_key_from_verifier(vkey)[0] == "example.com/log"
    cp = parse_checkpoint(note, vkey, origin="example.com/log")
    assert (cp.tree_size, cp.root_hash, cp.extensions) == (42, ROOT.hex(), ("ext line",))
    assert cp.key_id == expected_id.hex()


def test_checkpoint_parsing_is_strict() -> None:
    signer = LogSigner(Ed25519PrivateKey.generate(), name="example.com/log")
    good = signer.sign_note(checkpoint_body("example.com/log", 7, ROOT))
    parse_checkpoint(good, signer.public_key)
    other = LogSigner(Ed25519PrivateKey.generate(), name="example.com/log")
    bad_notes = {
        "other key": other.sign_note(checkpoint_body("example.com/log", 7, ROOT)),
        "size edited": good.replace("\n7\n", "\n8\n", 1),
        "leading zero": signer.sign_note("example.com/log\n07\n" + good.split("\n")[2] + "\n"),
        "no signature": good.split("\n\n")[0] + "\n",
        "short root": signer.sign_note("example.com/log\n7\nAAAA\n"),
        "cr": good.replace("\n", "\r\n"),
    }
    for label, note in bad_notes.items():
        with pytest.raises(TamperError):
            parse_checkpoint(note, signer.public_key)
        assert label
    with pytest.raises(TamperError, match="origin"):
        parse_checkpoint(good, signer.public_key, origin="elsewhere")
    # A witness cosignature from another key does not get in the way.
    cosigned = good + other.sign_note(good.split("\n\n")[0] + "\n").split("\n\n")[1]
    assert parse_checkpoint(cosigned, signer.public_key).tree_size == 7
    assert parse_checkpoint(cosigned, other.verifier_key()).tree_size == 7
    for name in ("has space", "has+plus", "tab\there"):
        with pytest.raises(ConfigError):
            LogSigner(Ed25519PrivateKey.generate(), name=name)


def test_ledger_urls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open_ledger(None) as ledger:
        assert ledger.backend == "sqlite"
        assert ledger.checkpoint_path == Path("jurat.db.checkpoint")
    assert (tmp_path / "jurat.db").exists()
    for url in ("sqlite://", "sqlite:///:memory:", "mysql://x/y", "postgresql+asyncpg://x/y", "::"):
        with pytest.raises(ConfigError):
            open_ledger(url)
    with pytest.raises(LedgerError, match="no ledger"):
        open_ledger(f"sqlite:///{tmp_path / 'absent.db'}", create=False)
    assert not (tmp_path / "absent.db").exists()
    with pytest.raises(ConfigError, match="prefix"):
        open_ledger(None, prefix="x; DROP TABLE")
    with pytest.raises(ConfigError, match="schemas"):
        open_ledger(None, schema="s")


def test_missing_postgres_driver_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(DependencyError, match=r"pip install 'jurat\[postgres\]'"):
        open_ledger("postgres://postgres@127.0.0.1:5432/test")


def test_job_id_is_the_digest_of_its_five_bindings() -> None:
    art, pol = hashlib.sha256(b"a").hexdigest(), hashlib.sha256(b"p").hexdigest()
    base = job_id(art, "task/1", pol, "eval/1", 0)
    assert base == job_id(art, "task/1", pol, "eval/1", 0)
    canonical = (
        f'{{"artifact_sha256":"{art}","attempt":0,"evaluator_version":"eval/1",'
        f'"policy_sha256":"{pol}","task_version":"task/1"}}'
    )
    expected = hashlib.sha256(canonical.encode()).hexdigest()
    assert base == expected
    variants = {
        job_id(hashlib.sha256(b"b").hexdigest(), "task/1", pol, "eval/1", 0),
        job_id(art, "task/2", pol, "eval/1", 0),
        job_id(art, "task/1", hashlib.sha256(b"q").hexdigest(), "eval/1", 0),
        job_id(art, "task/1", pol, "eval/2", 0),
        job_id(art, "task/1", pol, "eval/1", 1),
    }
    assert len(variants) == 5 and base not in variants
    for bad in (("XYZ", "t", pol, "e", 0), (art, "", pol, "e", 0), (art, "t", pol, "e", -1)):
        with pytest.raises(ValidationError):
            job_id(*bad)  # type: ignore[arg-type]
