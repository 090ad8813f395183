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


@pytest.mark.parametrize("edit, message", [
    (("0xa9059cbb", "0xa9059c"), "selector"),
    (('reward = "5"', 'reward = "-5"'), "reward"),
    (('reward = "5"', 'reward = "1e3"'), "reward"),
    ((CONTRACT, CONTRACT[:-1] + "4"), "checksum"),
    (("[recipients]", "[recipient]"), "unknown top-level"),
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
