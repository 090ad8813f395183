"""`jurat token create` prints a revoke command that works as printed, from anywhere, and
`jurat token revoke` against a ledger that does not exist is an error that creates none."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from jurat.cli._token import revoke_hint
from jurat.service import TokenStore
from tests.support.cli import invoke


def _hint(stderr: str) -> list[str]:
    found = re.search(r"\(revoke: (jurat token revoke .+)\)$", stderr.strip(), re.S)
    assert found, stderr
    return shlex.split(found.group(1))


def test_the_printed_revoke_command_revokes_the_token_from_another_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = tmp_path / "a dir"
    made.mkdir()
    monkeypatch.chdir(made)
    # A relative path with a space in it: the hint makes it absolute and quotes it.
    created = invoke("token", "create", "--ledger", "sqlite:///serve db.db", "--campaign",
                     "c", "--role", "reviewer", "--subject", "rita", "--new-campaign")
    assert created.exit_code == 0, created.output
    token = created.stdout.strip().splitlines()[-1]
    argv = _hint(created.stderr)
    assert argv[:4] == ["jurat", "token", "revoke", "--ledger"]
    assert argv[4] == f"sqlite:///{made / 'serve db.db'}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    revoked = invoke(*argv[1:])
    assert revoked.exit_code == 0, revoked.output
    assert list(elsewhere.iterdir()) == []  # no ledger made where it was run
    with TokenStore(f"sqlite:///{made / 'serve db.db'}") as store:
        assert store.lookup(token) is None


def test_the_default_ledger_is_named_in_the_hint(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    created = invoke("token", "create", "--campaign", "c", "--role", "operator",
                     "--new-campaign")
    assert created.exit_code == 0, created.output
    assert _hint(created.stderr)[4] == f"sqlite:///{tmp_path / 'jurat.db'}"


def test_revoking_against_a_missing_ledger_is_exit_3_and_creates_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for args in ((), ("--ledger", "sqlite:///other.db")):
        result = invoke("token", "revoke", *args, "0123456789abcdef")
        assert result.exit_code == 3, result.output
        assert "no ledger at sqlite:///" in result.output, result.output
    assert list(tmp_path.iterdir()) == []


def test_a_password_is_never_printed_in_the_hint() -> None:
    hint = revoke_hint("postgresql://u:s3cret@db.example/jurat", "0123456789abcdef")
    assert "s3cret" not in hint and "put the password back" in hint
