"""Every refusal of `jurat signer serve`, one test each, against a real signer process.

Each test starts its own signer (its own state file), so no test's grant is another's
replay. The receipts come from `jurat run` (tests/signer/world.py); the hostile ones are
made here from them: a flipped signature byte, another key's signature, a predicate edited
and re-signed by the allowlisted key.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from jurat.canonical import canonical_json
from jurat.receipts import load_private_key
from jurat.receipts._bundle import sign_payload
from tests.signer.world import World, jurat


def _bundle(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_bytes())
    return doc


def _payload(bundle: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    return doc


def _refused(answer: dict[str, Any], check: str) -> str:
    assert set(answer) == {"refused", "reason"}, answer
    assert answer["refused"] == check, answer
    reason: str = answer["reason"]
    return reason


def test_forged_signature_is_refused_by_signature(world: World, start_signer: Any) -> None:
    bundle = _bundle(world.receipt("ok1"))
    sig = bytearray(base64.b64decode(bundle["dsseEnvelope"]["signatures"][0]["sig"]))
    sig[-1] ^= 0x01
    bundle["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    signer = start_signer()
    reason = _refused(signer.send({"receipt": bundle, "proof": json.loads(
        world.proof("ok1").read_text())}), "signature")
    assert "allowlisted" in reason


def test_a_valid_receipt_from_a_key_not_on_the_allowlist_is_refused(
    world: World, start_signer: Any, tmp_path: Path
) -> None:
    jurat("keygen", "--out", str(tmp_path / "other"), cwd=tmp_path, check_codes=(0,))
    other = load_private_key(tmp_path / "other" / "jurat.key")
    payload = base64.b64decode(_bundle(world.receipt("ok1"))["dsseEnvelope"]["payload"])
    resigned = tmp_path / "ok1-other.sigstore.json"
    resigned.write_bytes(sign_payload(payload, other))
    # The receipt is valid under its own key: `jurat verify` says so.
    assert jurat("verify", str(resigned), "--key", str(tmp_path / "other" / "jurat.pub"),
                 cwd=tmp_path).returncode == 0
    signer = start_signer()
    code, answer = signer.ask(resigned, world.proof("ok1"))
    assert code == 1
    _refused(answer, "signature")


def test_a_tampered_predicate_resigned_by_an_allowlisted_key_fails_rederivation(
    world: World, start_signer: Any, tmp_path: Path
) -> None:
    statement = _payload(_bundle(world.receipt("bad")))
    assert statement["predicate"]["decision"]["disposition"] == "reject"
    statement["predicate"]["decision"]["disposition"] = "accept"
    key = load_private_key(world.keys / "jurat.key")
    forged = tmp_path / "bad-accept.sigstore.json"
    forged.write_bytes(sign_payload(canonical_json(statement), key))
    signer = start_signer()
    code, answer = signer.ask(forged)
    assert code == 1
    reason = _refused(answer, "rederivation")
    assert "step 7" in reason


@pytest.mark.parametrize("artifact, word", [
    ("bad", "reject"), ("esc", "escalate"), ("warn", "WARN"), ("block", "BLOCK"),
])
def test_a_decision_that_does_not_accept_is_refused(
    world: World, start_signer: Any, artifact: str, word: str
) -> None:
    signer = start_signer()
    code, answer = signer.ask(world.receipt(artifact), world.proof(artifact))
    assert code == 1
    assert word in _refused(answer, "decision")


def test_a_campaign_not_in_the_registry_is_refused(world: World, start_signer: Any) -> None:
    signer = start_signer()
    code, answer = signer.ask(world.receipt("stray"), world.proof("stray"))
    assert code == 1
    assert "unlisted" in _refused(answer, "campaign")


def test_a_superseded_review_is_refused_by_the_ledger(world: World, start_signer: Any) -> None:
    signer = start_signer(ledger=True)
    code, answer = signer.ask(world.sup_v1)
    assert code == 1
    assert "superseded" in _refused(answer, "review")
    # The current review of the same artifact is granted.
    code, answer = signer.ask(world.receipt("sup"))
    assert code == 0, answer


def test_without_a_ledger_a_review_the_signer_has_seen_superseded_is_refused(
    world: World, start_signer: Any
) -> None:
    signer = start_signer()
    # v1's own proof holds (it is in the log), but v2, once seen, supersedes it.
    code, answer = signer.ask(world.receipt("sup"), world.proof("sup"))
    assert code == 0, answer
    code, answer = signer.ask(world.sup_v1, world.sup_v1.with_name("sup.sigstore.json.proof.json"))
    assert code == 1
    assert "superseded" in _refused(answer, "review")


def test_without_a_ledger_a_proof_is_required(world: World, start_signer: Any) -> None:
    signer = start_signer()
    code, answer = signer.ask(world.receipt("ok1"))
    assert code == 1
    assert "proof" in _refused(answer, "review")


def test_a_proof_of_another_receipt_is_refused(world: World, start_signer: Any) -> None:
    signer = start_signer()
    code, answer = signer.ask(world.receipt("ok1"), world.proof("ok2"))
    assert code == 1
    assert "not this receipt" in _refused(answer, "review")


def test_the_same_receipt_twice_is_refused_also_after_a_restart(
    world: World, start_signer: Any
) -> None:
    signer = start_signer()
    code, first = signer.ask(world.receipt("ok1"), world.proof("ok1"))
    assert code == 0, first
    code, again = signer.ask(world.receipt("ok1"), world.proof("ok1"))
    assert code == 1
    assert "already authorised" in _refused(again, "replay")
    signer.stop()
    restarted = start_signer(state=signer.state)
    code, after = restarted.ask(world.receipt("ok1"), world.proof("ok1"))
    assert code == 1
    assert "already authorised" in _refused(after, "replay")


@pytest.mark.parametrize("extra", [
    {"calldata": "0xa9059cbb" + "00" * 64},
    {"amount": "1000000000000000000000"},
    {"destination": "0x000000000000000000000000000000000000dEaD"},
])
def test_a_request_carrying_anything_but_a_receipt_and_proof_is_refused(
    world: World, start_signer: Any, extra: dict[str, str]
) -> None:
    signer = start_signer()
    request = {"receipt": _bundle(world.receipt("ok1")),
               "proof": json.loads(world.proof("ok1").read_text()), **extra}
    reason = _refused(signer.send(request), "request")
    assert next(iter(extra)) in reason
    # Nothing was granted: the clean request afterwards still is.
    code, answer = signer.ask(world.receipt("ok1"), world.proof("ok1"))
    assert code == 0, answer


def test_a_line_that_is_not_a_request_is_refused(world: World, start_signer: Any) -> None:
    signer = start_signer()
    for line in (b"not json", b"[1, 2]", b'{"receipt": "a string"}', b'{"a": 1, "a": 2}'):
        _refused(signer.send(line), "request")


def test_every_decision_is_in_the_signers_append_only_log(
    world: World, start_signer: Any
) -> None:
    from jurat.signer import SignerState

    signer = start_signer()
    signer.ask(world.receipt("ok1"), world.proof("ok1"))
    signer.ask(world.receipt("bad"), world.proof("bad"))
    signer.send(b"junk")
    signer.stop()
    with SignerState(signer.state) as state:
        log = state.log()
    assert [(d.outcome, d.check) for _, _, d in log] == [
        ("granted", None), ("refused", "decision"), ("refused", "request")]
    assert log[0][2].signature and log[0][2].nonce == "1"
    db = sqlite3.connect(signer.state)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("DELETE FROM decisions")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE grants SET nonce = 9")
    db.close()


def _ledger_copy(world: World, tmp_path: Path) -> Path:
    """A copy of the world's ledger (SQLite's backup: a consistent snapshot), to edit."""
    copy = tmp_path / "copy.db"
    source, target = sqlite3.connect(world.ledger), sqlite3.connect(copy)
    source.backup(target)
    source.close()
    target.close()
    return copy


@pytest.mark.parametrize("column, value", [("artifact_id", "sup-elsewhere"),
                                           ("kind", "decision")])
def test_a_superseding_review_edited_in_the_ledger_does_not_revive_the_superseded_one(
    world: World, start_signer: Any, tmp_path: Path, column: str, value: str
) -> None:
    copy = _ledger_copy(world, tmp_path)
    db = sqlite3.connect(copy)
    # Behind the ledger's back: its triggers dropped, one column of v2's row changed, no
    # hash recomputed. The row no longer answers "the latest review of sup".
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        db.execute(f'DROP TRIGGER "{name}"')
    (seq,) = db.execute("SELECT MAX(seq) FROM jurat_entries WHERE kind = 'receipt' AND "
                        "campaign_id = 'settle-rubric' AND artifact_id = 'sup'").fetchone()
    db.execute(f"UPDATE jurat_entries SET {column} = ? WHERE seq = ?", (value, seq))
    db.commit()
    db.close()
    url = f"sqlite:///{copy}"
    assert jurat("log", "verify", url, "--key", str(world.keys / "jurat-log.pub"),
                 cwd=tmp_path).returncode != 0
    signer = start_signer(ledger=url)
    code, answer = signer.ask(world.sup_v1)
    assert code == 1
    reason = _refused(answer, "review")
    assert "ledger" in reason and f"seq {seq}" in reason, reason


def test_a_review_newer_than_the_last_checkpoint_supersedes_but_is_granted_only_once_covered(
    world: World, start_signer: Any, tmp_path: Path
) -> None:
    copy = _ledger_copy(world, tmp_path)
    db = sqlite3.connect(copy)
    # The last checkpoint (signed at the end of the run that added sup v2) removed: v2's row
    # is now past every signed checkpoint, v1's still under one.
    db.execute('DROP TRIGGER IF EXISTS "jurat_checkpoints_no_delete"')
    (last,) = db.execute("SELECT MAX(id) FROM jurat_checkpoints").fetchone()
    db.execute("DELETE FROM jurat_checkpoints WHERE id = ?", (last,))
    db.commit()
    db.close()
    url = f"sqlite:///{copy}"
    signer = start_signer(ledger=url)
    # A newer review still supersedes, covered or not...
    code, answer = signer.ask(world.sup_v1)
    assert code == 1
    assert "superseded" in _refused(answer, "review")
    # ...but a row no signed checkpoint covers is never a reason to grant.
    code, answer = signer.ask(world.receipt("sup"))
    assert code == 1
    reason = _refused(answer, "review")
    assert "ledger" in reason and "checkpoint" in reason, reason
    jurat("log", "checkpoint", url, "--log-key", str(world.keys / "jurat-log.key"),
          cwd=tmp_path, check_codes=(0,))
    code, answer = signer.ask(world.receipt("sup"))
    assert code == 0, answer
