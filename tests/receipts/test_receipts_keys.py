"""Key pairs: keygen files and modes, refusal to overwrite, loading, the default key."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from jurat.cli._verify import keygen_command
from jurat.errors import ConfigError
from jurat.receipts import (
    default_key_path,
    default_public_key_path,
    keygen,
    load_or_create_default_key,
    load_private_key,
    load_public_key,
    public_key_hint,
    sign_statement,
    verify_bundle,
)
from jurat.receipts._keys import private_key_pem, public_key_der, public_key_pem
from jurat.receipts._statement import parse_statement
from tests.support.builders import rubric_case, statement_for


def test_keygen_writes_pkcs8_0600_and_spki(tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path / "k")
    assert (priv.name, pub.name) == ("jurat.key", "jurat.pub")
    assert stat.S_IMODE(priv.stat().st_mode) == 0o600
    assert priv.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert pub.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    key = load_private_key(priv)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"
    assert public_key_der(load_public_key(pub)) == public_key_der(key.public_key())


def test_keygen_refuses_to_overwrite(tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path)
    before = priv.read_bytes()
    with pytest.raises(ConfigError, match="refusing to overwrite"):
        keygen(tmp_path)
    assert priv.read_bytes() == before
    pub.unlink()  # even half a pair is never overwritten
    with pytest.raises(ConfigError, match="refusing to overwrite"):
        keygen(tmp_path)
    assert priv.read_bytes() == before


def test_keygen_main_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert keygen_command(tmp_path) == 0
    out = capsys.readouterr().out
    assert "jurat.key" in out and "0600" in out and "key hint" in out
    assert keygen_command(tmp_path) == 3
    assert "refusing to overwrite" in capsys.readouterr().err


def test_hint_is_base64_sha256_of_der(tmp_path: Path) -> None:
    import base64
    import hashlib

    _, pub = keygen(tmp_path)
    key = load_public_key(pub)
    der = public_key_der(key)
    assert public_key_hint(key) == base64.b64encode(hashlib.sha256(der).digest()).decode()


def test_loading_refuses_wrong_files(tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path)
    with pytest.raises(ConfigError, match="private key"):
        load_public_key(priv)
    with pytest.raises(ConfigError, match="not a PEM private key"):
        load_private_key(pub)
    with pytest.raises(ConfigError, match="cannot read"):
        load_private_key(tmp_path / "missing.key")
    p384 = tmp_path / "p384.key"
    p384.write_bytes(private_key_pem(ec.generate_private_key(ec.SECP384R1())))
    with pytest.raises(ConfigError, match="P-256"):
        load_private_key(p384)


def test_default_key_is_created_once_under_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert default_key_path() == tmp_path / "cfg" / "jurat" / "jurat.key"
    assert default_public_key_path() == tmp_path / "cfg" / "jurat" / "jurat.pub"
    key, path, created = load_or_create_default_key()
    assert created and path == default_key_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again, path2, created2 = load_or_create_default_key()
    assert not created2 and path2 == path
    assert public_key_der(again.public_key()) == public_key_der(key.public_key())


def test_default_key_falls_back_to_dot_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_key_path() == tmp_path / ".config" / "jurat" / "jurat.key"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/ignored")
    assert default_key_path() == tmp_path / ".config" / "jurat" / "jurat.key"


def test_ed25519_is_optional_and_verifies(tmp_path: Path) -> None:
    priv, pub = keygen(tmp_path, algorithm="ed25519")
    key = load_private_key(priv)
    assert isinstance(key, ed25519.Ed25519PrivateKey)
    bundle = sign_statement(parse_statement(statement_for(*rubric_case())), key)
    report = verify_bundle(bundle, load_public_key(pub))
    assert report.ok, report.failed
    assert "ed25519" in report.steps[2].detail
    assert verify_bundle(bundle, public_key_pem(load_public_key(pub))).ok
