"""What the signer refuses before it listens: its registry, its key, and their files."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from jurat.errors import ConfigError
from jurat.signer import checksum_address, keygen_settlement, load_registry, load_settlement_key
from tests.signer.world import CONTRACT, REGISTRY, World, jurat


def test_the_registry_is_read_and_normalised(tmp_path: Path) -> None:
    path = tmp_path / "r.toml"
    path.write_text(REGISTRY)
    registry = load_registry(path)
    entry = registry.find("settle-rubric")
    assert entry is not None and entry.contract == CONTRACT
    assert entry.recipient("alice") == "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
    assert registry.find("unlisted") is None
    # One settlement per artifact digest unless a campaign declares it per task.
    assert entry.settle_once_per == "artifact"


@pytest.mark.parametrize("edit, message", [
    (("0xa9059cbb", "0xa9059c"), "selector"),
    (('reward = "5"', 'reward = "-5"'), "reward"),
    (('reward = "5"', 'reward = "1e3"'), "reward"),
    ((CONTRACT, CONTRACT[:-1] + "4"), "checksum"),
    (("[recipients]", "[recipient]"), "unknown top-level"),
    (('reward = "5"', 'reward = "5"\nsettle_once_per = "contributor"'), "settle_once_per"),
])
def test_a_malformed_registry_refuses_to_start(tmp_path: Path, edit: tuple[str, str],
                                               message: str) -> None:
    path = tmp_path / "r.toml"
    assert edit[0] in REGISTRY
    path.write_text(REGISTRY.replace(edit[0], edit[1], 1))
    with pytest.raises(ConfigError, match=message):
        load_registry(path)


def test_checksum_address_refuses_a_wrong_mixed_case_checksum() -> None:
    assert checksum_address(CONTRACT.lower()) == CONTRACT
    with pytest.raises(ValueError, match="checksum"):
        checksum_address(CONTRACT.swapcase().replace("0X", "0x"))


def test_keygen_writes_a_0600_key_once_and_its_address(tmp_path: Path) -> None:
    path, address = keygen_settlement(tmp_path / "k")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_settlement_key(path).address == address
    assert "0x" not in repr(load_settlement_key(path)).replace(address, "")
    with pytest.raises(ConfigError, match="refusing to overwrite"):
        keygen_settlement(tmp_path / "k")
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_settlement_key(path)


def test_the_socket_is_0600_and_bad_configuration_exits_3(
    world: World, start_signer: Any, settlement: tuple[Path, str], tmp_path: Path
) -> None:
    signer = start_signer()
    assert stat.S_IMODE(os.stat(signer.socket).st_mode) == 0o600
    # Another signer on the same socket is refused; so is a missing receipt key.
    done = jurat("signer", "serve", *signer.args, cwd=tmp_path)
    assert done.returncode == 3 and "another signer" in done.stderr
    args = ["--socket", str(tmp_path / "x.sock"), "--registry", str(world.registry), "--key",
            str(settlement[0]), "--state", str(tmp_path / "x.db")]
    done = jurat("signer", "serve", *args, cwd=tmp_path)
    assert done.returncode == 3 and "--receipt-key" in done.stderr


def test_a_state_file_of_schema_0_is_upgraded_and_keeps_its_grants(tmp_path: Path) -> None:
    import sqlite3

    from jurat.errors import TamperError
    from jurat.signer import Decided, Grant, SignerState
    from jurat.signer._state import _SCHEMA, SCHEMA_VERSION

    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(_SCHEMA)  # the tables as a signer before digests wrote them
    old.execute("INSERT INTO grants VALUES (?, ?, 'c', 'a1', 1, 1, 0)", ("p" * 64, "r" * 64))
    old.commit()
    old.close()
    with SignerState(path) as state:
        earlier = state.grant_for("p" * 64, "x")
        assert earlier is not None and earlier.nonce == 1 and earlier.artifact_sha256 is None
        assert state.grant_for_artifact("c", "a1") == earlier
        work = {"artifact_sha256": "d" * 64, "task_sha256": "t" * 64, "settle_key": "d" * 64}
        state.record(Decided(outcome="granted"), Grant(
            payload_sha256="q" * 64, receipt_sha256="s" * 64, campaign_id="c",
            artifact_id="a2", review_version=1, nonce=2, **work))
        found = state.grant_for_work("c", "d" * 64)
        assert found is not None and found.nonce == 2 and found.settle_key == "d" * 64
        assert state.grant_for_work("c", "d" * 64, "u" * 64) is None
        assert state.grant_for_work("other", "d" * 64) is None
        # The last guard: a second grant for the same work in the campaign is refused.
        with pytest.raises(TamperError, match="second grant"):
            state.record(Decided(outcome="granted"), Grant(
                payload_sha256="v" * 64, receipt_sha256="w" * 64, campaign_id="c",
                artifact_id="a3", review_version=1, nonce=3, **work))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(ConfigError, match="newer"):
        SignerState(path)
