"""A granted settlement: its typed data is the registry's, and its signature recovers to the
signer's address with eth-account and with ethers v6 (npm, run by node), an independent
EIP-712 implementation. The settlement key appears nowhere but in its own file.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.signer.world import CONTRACT, RECIPIENT, World, jurat
from tests.support.npm import npm_packages

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("ethers_recover.js")
CACHE = REPO / ".venv" / "ethers-js"
ETHERS = "6.17.0"


@pytest.fixture(scope="session")
def ethers_js() -> Path:
    """node_modules with ethers, installed once into .venv/ethers-js and reused."""
    return npm_packages(CACHE, {"ethers": ETHERS})


def _granted(answer: dict[str, Any]) -> dict[str, Any]:
    assert set(answer) == {"typed_data", "signature", "signer"}, answer
    assert set(answer["typed_data"]) == {"types", "primaryType", "domain", "message"}
    return answer


def _recover_eth_account(answer: dict[str, Any]) -> str:
    from eth_account import Account
    from eth_account.messages import encode_typed_data

    message = encode_typed_data(full_message=answer["typed_data"])
    return str(Account.recover_message(message, signature=answer["signature"]))


def test_a_granted_settlement_recovers_with_eth_account_and_ethers(
    world: World, start_signer: Any, settlement: tuple[Path, str], ethers_js: Path,
    tmp_path: Path
) -> None:
    import base64
    import hashlib

    from eth_utils import keccak

    signer = start_signer()
    code, answer = signer.ask(world.receipt("ok1"), world.proof("ok1"))
    assert code == 0, answer
    _granted(answer)
    address = settlement[1]
    assert answer["signer"] == address
    typed = answer["typed_data"]
    assert typed["primaryType"] == "Settlement"
    assert typed["domain"] == {"name": "jurat-settlement", "version": "1", "chainId": "31337",
                               "verifyingContract": CONTRACT}
    payload = base64.b64decode(json.loads(world.receipt("ok1").read_bytes())[
        "dsseEnvelope"]["payload"])
    assert typed["message"] == {
        "campaign": "0x" + keccak(text="settle-rubric").hex(),
        "dataset": "0x" + keccak(text="humaneval-2026").hex(),
        "recipient": RECIPIENT,
        "amount": "1000000000000000000",
        "selector": "0xa9059cbb",
        "receipt": "0x" + hashlib.sha256(payload).hexdigest(),
        "nonce": "1",
        "deadline": typed["message"]["deadline"],
    }
    assert int(typed["message"]["deadline"]) > 0
    assert _recover_eth_account(answer) == address
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    env = {**os.environ, "NODE_PATH": str(ethers_js / "node_modules")}
    proc = subprocess.run(["node", str(SCRIPT), str(tmp_path / "answer.json")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == address
    # One edited field of the message, and neither recovers the signer any more.
    answer["typed_data"]["message"]["amount"] = "1000000000000000001"
    assert _recover_eth_account(answer) != address
    (tmp_path / "edited.json").write_text(json.dumps(answer))
    proc = subprocess.run(["node", str(SCRIPT), str(tmp_path / "edited.json")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() != address


def test_an_adjudicated_accept_is_granted_with_the_ledger(
    world: World, start_signer: Any, settlement: tuple[Path, str]
) -> None:
    signer = start_signer(ledger=True)
    code, answer = signer.ask(world.receipt("esc2"))
    assert code == 0, answer
    assert _recover_eth_account(_granted(answer)) == settlement[1]
    assert answer["typed_data"]["message"]["amount"] == "5"
    assert answer["typed_data"]["message"]["dataset"] == "0x" + "ab" * 32


def test_a_ship_is_granted(world: World, start_signer: Any) -> None:
    signer = start_signer()
    code, answer = signer.ask(world.receipt("ship"), world.proof("ship"))
    assert code == 0, answer
    assert answer["typed_data"]["domain"]["chainId"] == "1"
    assert answer["typed_data"]["message"]["selector"] == "0x12345678"


def _secret_forms(key_file: Path) -> list[bytes]:
    text = key_file.read_text().strip().lower()
    assert text.startswith("0x") and len(text) == 66
    raw = bytes.fromhex(text[2:])
    import base64

    return [text[2:].encode(), text[2:].upper().encode(), raw, base64.b64encode(raw)]


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def test_the_settlement_key_appears_in_no_file_and_no_other_process(
    world: World, start_signer: Any, settlement: tuple[Path, str], tmp_path: Path
) -> None:
    key_file = settlement[0]
    signer = start_signer(ledger=True)
    code, answer = signer.ask(world.receipt("sup"))
    assert code == 0, answer
    signer.ask(world.receipt("bad"))
    forms = _secret_forms(key_file)
    # The process's arguments and environment name the key's path, never its secret.
    assert signer.proc is not None
    pid = signer.proc.pid
    for name in ("environ", "cmdline"):
        data = Path(f"/proc/{pid}/{name}").read_bytes().lower()
        assert not any(form.lower() in data for form in forms), name
    assert str(key_file).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    signer.stop()
    # The ledger, receipts, proofs, checkpoints, the signer's state and log, its output.
    searched = _files(world.root) + _files(tmp_path) + [
        p for p in _files(key_file.parent.parent) if p != key_file]
    assert signer.state in searched
    for path in searched:
        data = path.read_bytes()
        assert not any(form in data or form.lower() in data.lower() for form in forms), path
    for text in signer.stderr + [json.dumps(answer)]:
        assert not any(form.decode("latin-1") in text for form in forms[:2])
    assert jurat("signer", "keygen", "--out", str(key_file.parent), cwd=tmp_path).returncode == 3
