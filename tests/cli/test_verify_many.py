"""``jurat verify PATH…``: several receipts or a directory, one line each, a summary, and
``--artifact`` naming the receipts about that artifact (docs/receipt-format.md §7)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from jurat.cli import ExitCode

from .conftest import jurat

THREE = """\
[campaign]
id = "many"
kind = "criteria"
allowed_destinations = ["stub"]

[criteria]
samples = 1
blocker_samples = 1
items = [{ id = "polite", text = "Is the reply polite?", blocker = true }]

[[judges]]
id = "c"
provider = "stub:always-yes"

[[artifacts]]
id = "r1"
text = "Thank you for writing."

[[artifacts]]
id = "r2"
text = "We will reply soon."

[[artifacts]]
id = "r3"
text = "Your parcel is on its way."
"""


def _said(result: object) -> str:
    return " ".join(str(getattr(result, "output", "")).split())


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """Three receipts (and their proofs) in ``out``, keys in ``keys``."""
    assert jurat("keygen", "--out", str(tmp_path / "keys")).exit_code == 0
    path = tmp_path / "many.toml"
    path.write_text(THREE)
    result = jurat("run", str(path), "--out", str(tmp_path / "out"), "--ledger",
                   f"sqlite:///{tmp_path / 'ledger.db'}", "--key",
                   str(tmp_path / "keys" / "jurat.key"), "--quiet")
    assert result.exit_code == ExitCode.OK, result.output
    return tmp_path


def _verify(tmp: Path, *args: str) -> tuple[int, str]:
    result = jurat("verify", *args, "--key", str(tmp / "keys" / "jurat.pub"))
    return result.exit_code, _said(result)


def test_a_directory_verifies_every_receipt_not_the_proofs(run: Path) -> None:
    out = run / "out"
    assert len(list(out.glob("*.proof.json"))) == 3  # beside the receipts, not counted
    code, said = _verify(run, str(out))
    assert code == ExitCode.OK, said
    assert "verifying 3 receipts" in said
    for name in ("r1", "r2", "r3"):
        assert f"verified: {out / f'{name}.sigstore.json'}: SHIP — artifact {name} sha256:" in said
    assert said.endswith("3 verified, 0 failed (3 receipts)")


def test_one_tampered_receipt_fails_the_whole_command_and_is_named(run: Path) -> None:
    out = run / "out"
    bad = out / "r2.sigstore.json"
    doc = json.loads(bad.read_text())
    payload = bytearray(base64.b64decode(doc["dsseEnvelope"]["payload"]))
    payload[payload.index(b'"SHIP"') + 1] = ord("W")  # the recorded rollout, edited
    doc["dsseEnvelope"]["payload"] = base64.b64encode(bytes(payload)).decode()
    bad.write_text(json.dumps(doc))
    code, said = _verify(run, str(out / "r1.sigstore.json"), str(bad),
                         str(out / "r3.sigstore.json"))
    assert code == ExitCode.ESCALATE, said
    assert f"not verified: {bad}: step 3 (verify signature) failed:" in said
    assert "artifact not established (no signed statement was read)" in said
    assert said.endswith("2 verified, 1 failed (3 receipts)")


def test_artifact_with_several_receipts_names_the_one_about_it(run: Path) -> None:
    out = run / "out"
    held = run / "r2.txt"
    held.write_text("We will reply soon.")  # the bytes artifact r2 was digested from
    code, said = _verify(run, str(out), "--artifact", str(held))
    assert code == ExitCode.OK, said
    assert "artifact r2 sha256:" in said and f", the digest of --artifact {held}" in said
    assert said.count("the digest of --artifact") == 1
    assert said.endswith(f"3 verified, 0 failed (3 receipts); about --artifact {held}: "
                         f"{out / 'r2.sigstore.json'}")
    # An artifact none of them is about: every receipt holds, the command does not.
    stranger = run / "other.txt"
    stranger.write_text("not one of them")
    code, said = _verify(run, str(out), "--artifact", str(stranger))
    assert code == ExitCode.ESCALATE, said
    assert said.endswith(f"3 verified, 0 failed (3 receipts); none of them is about "
                         f"--artifact {stranger}")


def test_several_receipts_with_a_checkpoint_check_each_inclusion(run: Path) -> None:
    code, said = _verify(run, str(run / "out"), "--checkpoint",
                         str(run / "ledger.db.checkpoint"))
    assert code == ExitCode.OK, said
    assert said.count("; in the log under --checkpoint") == 3
    (run / "out" / "r3.sigstore.json.proof.json").unlink()
    code, said = _verify(run, str(run / "out"), "--checkpoint",
                         str(run / "ledger.db.checkpoint"))
    assert code == ExitCode.ESCALATE, said
    assert "step 8 (check inclusion proof) failed: no inclusion proof at" in said
    # An empty proof is what a run leaves until its checkpoint is signed.
    (run / "out" / "r3.sigstore.json.proof.json").write_bytes(b"")
    code, said = _verify(run, str(run / "out"), "--checkpoint",
                         str(run / "ledger.db.checkpoint"))
    assert code == ExitCode.ESCALATE, said
    assert "is empty: the run that wrote this receipt did not finish" in said


def test_paths_that_name_no_receipt_exit_3(run: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, said = _verify(run, str(empty))
    assert code == ExitCode.INPUT
    assert f"{empty}: no *.sigstore.json receipt in this directory" in said
    code, said = _verify(run, str(run / "out"), str(tmp_path / "missing.sigstore.json"))
    assert code == ExitCode.INPUT
    assert "No such file or directory" in said and "verified" not in said
