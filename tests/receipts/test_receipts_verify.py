"""jurat's verifier: the seven numbered steps, each failure mode, and `jurat verify`."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jurat.canonical import canonical_json, sha256_digest
from jurat.cli._verify import verify_command
from jurat.errors import TamperError
from jurat.ledger import log_keygen
from jurat.receipts import (
    STEPS,
    PrivateKey,
    keygen,
    load_private_key,
    load_public_key,
    pae,
    receipt_digest,
    verify_bundle,
)
from jurat.receipts._bundle import sign_payload
from tests.support.builders import artifact


def _bundle(receipt: bytes) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(receipt)
    return doc


def _payload(doc: dict[str, Any]) -> bytes:
    return base64.b64decode(doc["dsseEnvelope"]["payload"])


def _resigned(
    statement: dict[str, Any], key: PrivateKey, mutate: Callable[[dict[str, Any]], None]
) -> bytes:
    changed = copy.deepcopy(statement)
    mutate(changed)
    return sign_payload(canonical_json(changed), key)


def _failed_at(report: Any) -> int:
    assert not report.ok
    assert report.failed is report.steps[-1]
    return int(report.failed.number)


def test_a_good_receipt_passes_all_seven_steps(receipt: bytes, pub_path: Path) -> None:
    report = verify_bundle(receipt, load_public_key(pub_path))
    assert report.ok, report.failed
    assert [(s.number, s.name) for s in report.steps] == list(enumerate(STEPS, start=1))
    assert all(s.ok for s in report.steps)
    assert report.decision is not None and report.decision.disposition == "accept"
    assert report.statement is not None and report.statement.subject[0].name == "c1"


def test_bundle_is_sigstore_v03_with_one_dsse_signature(receipt: bytes, pub_path: Path) -> None:
    doc = _bundle(receipt)
    assert doc["mediaType"] == "application/vnd.dev.sigstore.bundle.v0.3+json"
    assert doc["verificationMaterial"]["tlogEntries"] == []
    assert doc["verificationMaterial"]["publicKey"]["hint"]
    env = doc["dsseEnvelope"]
    assert env["payloadType"] == "application/vnd.in-toto+json"
    assert len(env["signatures"]) == 1
    assert canonical_json(json.loads(_payload(doc))) == _payload(doc)
    # Written canonical, so the receipt digest is the sha256 of the file.
    assert receipt == canonical_json(doc)
    assert receipt_digest(receipt) == sha256_digest(receipt)
    assert receipt_digest(json.dumps(doc, indent=2).encode()) == sha256_digest(receipt)


def test_wrong_key_fails_step_3(receipt: bytes, tmp_path: Path) -> None:
    _, other = keygen(tmp_path)
    report = verify_bundle(receipt, load_public_key(other))
    assert _failed_at(report) == 3
    assert "does not verify" in report.failed.detail  # type: ignore[union-attr]


def test_one_tampered_payload_byte_fails_step_3(receipt: bytes, pub_path: Path) -> None:
    doc = _bundle(receipt)
    payload = bytearray(_payload(doc))
    at = payload.index(b'"disposition":"accept"') + len('"disposition":"')
    payload[at : at + 6] = b"reject"[:6]
    doc["dsseEnvelope"]["payload"] = base64.b64encode(bytes(payload)).decode()
    report = verify_bundle(json.dumps(doc).encode(), load_public_key(pub_path))
    assert _failed_at(report) == 3


def test_tampered_vote_resigned_fails_rederivation(
    statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    def lower_score(st: dict[str, Any]) -> None:
        vote = next(v for v in st["predicate"]["votes"] if v["judge"] == "C" and v["answer"])
        vote["answer"]["scores"]["correctness"] = 1

    report = verify_bundle(
        _resigned(statement, private_key, lower_score), load_public_key(pub_path)
    )
    assert [s.ok for s in report.steps] == [True] * 6 + [False]
    assert "decision.agreement_votes: recorded '3/3', re-derived '2/3'" in report.failed.detail  # type: ignore[union-attr]


def test_wrong_subject_digest_resigned_fails_step_5(
    statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    def other_subject(st: dict[str, Any]) -> None:
        st["subject"][0]["digest"]["sha256"] = "f" * 64

    report = verify_bundle(
        _resigned(statement, private_key, other_subject), load_public_key(pub_path)
    )
    assert _failed_at(report) == 5


def test_expected_artifact_digest_is_checked(receipt: bytes, pub_path: Path) -> None:
    key = load_public_key(pub_path)
    assert _failed_at(verify_bundle(receipt, key, artifact_sha256="e" * 64)) == 5
    assert verify_bundle(receipt, key, artifact_sha256=artifact().sha256).ok


def test_wrong_payload_type_fails_step_2(
    statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    bundle = sign_payload(canonical_json(statement), private_key, payload_type="application/json")
    assert _failed_at(verify_bundle(bundle, load_public_key(pub_path))) == 2


def test_two_signatures_fail_step_1(receipt: bytes, pub_path: Path) -> None:
    doc = _bundle(receipt)
    sigs = doc["dsseEnvelope"]["signatures"]
    sigs.append(dict(sigs[0]))
    report = verify_bundle(json.dumps(doc).encode(), load_public_key(pub_path))
    assert _failed_at(report) == 1
    assert "exactly one signature" in report.failed.detail  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("edit", "step"),
    [
        (lambda d: d.update(mediaType="application/vnd.dev.sigstore.bundle.v0.1+json"), 1),
        (lambda d: d["dsseEnvelope"].update(payload="not base64!"), 1),
        (lambda d: d["dsseEnvelope"].update(signatures=[]), 1),
        (lambda d: d.pop("dsseEnvelope"), 1),
        (lambda d: d["verificationMaterial"].update(certificate={"rawBytes": "AAAA"}), 1),
        (lambda d: d["verificationMaterial"]["publicKey"].update(hint="x" * 44), 3),
    ],
)
def test_malformed_bundles_fail_early(
    receipt: bytes, pub_path: Path, edit: Callable[[dict[str, Any]], None], step: int
) -> None:
    doc = _bundle(receipt)
    edit(doc)
    assert _failed_at(verify_bundle(json.dumps(doc).encode(), load_public_key(pub_path))) == step


def test_not_json_fails_step_1(pub_path: Path) -> None:
    assert _failed_at(verify_bundle(b"\x00garbage", load_public_key(pub_path))) == 1


def test_certificate_bundle_says_keyless_needs_sigstore(receipt: bytes, pub_path: Path) -> None:
    doc = _bundle(receipt)
    doc["verificationMaterial"] = {"certificate": {"rawBytes": "MIIB"}, "tlogEntries": []}
    report = verify_bundle(json.dumps(doc).encode(), load_public_key(pub_path))
    assert _failed_at(report) == 3
    assert "pip install sigstore" in report.failed.detail  # type: ignore[union-attr]


def _sign_raw(payload: bytes, key: PrivateKey) -> bytes:
    return sign_payload(payload, key)


def test_non_canonical_payload_fails_step_4(
    statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    pretty = json.dumps(statement, indent=1).encode()
    report = verify_bundle(_sign_raw(pretty, private_key), load_public_key(pub_path))
    assert _failed_at(report) == 4 and "canonical" in report.failed.detail  # type: ignore[union-attr]


def test_duplicate_keys_fail_step_4(
    statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    payload = canonical_json(statement)
    doubled = payload.replace(b'{"_type":', b'{"_type":"x","_type":', 1)
    report = verify_bundle(_sign_raw(doubled, private_key), load_public_key(pub_path))
    assert _failed_at(report) == 4 and "duplicate" in report.failed.detail  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda st: st["predicate"].update(extra=1),
        lambda st: st["predicate"]["votes"][0].pop("usage"),
        lambda st: st["predicate"]["votes"][0].update(sample="0"),
        lambda st: st.update(predicateType="https://example.com/other"),
        lambda st: st["predicate"].update(replay_fidelity_level="RF-3"),
    ],
)
def test_schema_violations_resigned_fail_step_4(
    statement: dict[str, Any],
    private_key: PrivateKey,
    pub_path: Path,
    mutate: Callable[[dict[str, Any]], None],
) -> None:
    bundle = _resigned(statement, private_key, mutate)
    assert _failed_at(verify_bundle(bundle, load_public_key(pub_path))) == 4


@pytest.mark.parametrize(
    "mutate",
    [
        lambda st: st["predicate"].update(fold_rule="jurat.fold/v9"),
        lambda st: st["predicate"]["votes"][0]["answer"].pop("scores"),
        lambda st: st["predicate"]["votes"][0].update(judge="Z"),
    ],
)
def test_inputs_the_fold_refuses_fail_step_6_without_raising(
    statement: dict[str, Any],
    private_key: PrivateKey,
    pub_path: Path,
    mutate: Callable[[dict[str, Any]], None],
) -> None:
    bundle = _resigned(statement, private_key, mutate)
    assert _failed_at(verify_bundle(bundle, load_public_key(pub_path))) == 6


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (
            lambda st: st["predicate"]["campaign"]["policy"]["rubric"].update(threshold=0.9),
            "policy_sha256",
        ),
        (lambda st: st["predicate"].update(replay_fidelity_level="RF-1"), "replay_fidelity"),
        (lambda st: st["predicate"]["judges"][0]["decoding"].update(temperature=0.7), "judges[A]"),
        (lambda st: st["predicate"]["decision"].update(q_bp=9000), "decision.q_bp"),
        (lambda st: st["predicate"]["decision"].update(reasons=["trust me"]), "decision.reasons"),
    ],
)
def test_derived_fields_that_disagree_fail_step_7(
    statement: dict[str, Any],
    private_key: PrivateKey,
    pub_path: Path,
    mutate: Callable[[dict[str, Any]], None],
    needle: str,
) -> None:
    report = verify_bundle(_resigned(statement, private_key, mutate), load_public_key(pub_path))
    assert _failed_at(report) == 7 and needle in report.failed.detail  # type: ignore[union-attr]


def test_float_fields_tolerate_last_ulp_but_exact_fields_do_not(
    statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    def nudge(st: dict[str, Any]) -> None:
        st["predicate"]["decision"]["q"] = 0.8625000000000001

    assert verify_bundle(_resigned(statement, private_key, nudge), load_public_key(pub_path)).ok


def test_signature_is_over_pae_not_the_payload(receipt: bytes, pub_path: Path) -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    doc = _bundle(receipt)
    sig = base64.b64decode(doc["dsseEnvelope"]["signatures"][0]["sig"])
    key = load_public_key(pub_path)
    assert isinstance(key, ec.EllipticCurvePublicKey)
    key.verify(sig, pae("application/vnd.in-toto+json", _payload(doc)), ec.ECDSA(hashes.SHA256()))


# -- jurat verify -----------------------------------------------------------------------


def test_verify_main_prints_numbered_steps_and_exits_0(
    receipt_file: Path, pub_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert verify_command(receipt_file, pub_path) == 0
    out = capsys.readouterr().out
    for number, name in enumerate(STEPS, start=1):
        assert f"{number}. ok" in out and name in out
    assert "verified" in out and "accept" in out


def test_verify_main_exits_1_and_names_the_failed_step(
    receipt_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, other = keygen(tmp_path / "other")
    assert verify_command(receipt_file, other) == 1
    out = capsys.readouterr().out
    assert "3. FAIL" in out and "4. --" in out and "not run" in out
    assert "step 3 (verify signature) failed" in out


def test_verify_main_uses_the_default_key_and_says_so(
    receipt_file: Path,
    key_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert verify_command(receipt_file, None) == 3  # no default key yet: input error
    assert "default key" in capsys.readouterr().out
    default = tmp_path / "cfg" / "jurat"
    default.mkdir(parents=True)
    (default / "jurat.pub").write_bytes((key_dir / "jurat.pub").read_bytes())
    assert verify_command(receipt_file, None) == 0
    assert "the default key" in capsys.readouterr().out


def test_verify_main_input_errors_exit_3(tmp_path: Path, pub_path: Path) -> None:
    assert verify_command(tmp_path / "missing.json", pub_path) == 3
    assert verify_command(tmp_path / "missing.json", tmp_path / "nokey.pub") == 3


def test_step_8_inclusion_hook(
    receipt_file: Path, pub_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoint = tmp_path / "checkpoint.json"
    checkpoint.write_text("{}")
    _, log_pub = log_keygen(tmp_path / "log")
    verifier = log_pub.read_text().strip()
    # Asked for, with the log key, but no proof beside the receipt.
    assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub) == 1
    assert "no inclusion proof" in capsys.readouterr().out
    proof = receipt_file.with_name("c1.sigstore.json.proof.json")
    proof.write_text("{}")
    seen: list[tuple[bytes, Path, Path, str]] = []

    def holds(bundle: bytes, p: Path, cp: Path, key: str) -> str:
        seen.append((bundle, p, cp, key))
        return "leaf 4 of 9 under root abc; checkpoint signature checked"

    assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub,
                          inclusion=holds) == 0
    assert seen == [(receipt_file.read_bytes(), proof, checkpoint, verifier)]
    assert "8. ok" in capsys.readouterr().out

    def broken(bundle: bytes, p: Path, cp: Path, key: str) -> str:
        raise TamperError("root mismatch")

    assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub,
                          inclusion=broken) == 1
    assert "root mismatch" in capsys.readouterr().out
    # By default the ledger's check runs: this "{}" proof is refused, and step 8 fails.
    assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub) == 1
    assert "8. FAIL" in capsys.readouterr().out


def test_step_8_without_the_log_key_fails_and_says_how_to_fix_it(
    receipt_file: Path, pub_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unchecked checkpoint is never "ok": even a proof that holds fails step 8 when no
    log public key is found (none beside --key, none given), and the check is not run."""
    checkpoint = tmp_path / "checkpoint"
    checkpoint.write_text("x")
    receipt_file.with_name("c1.sigstore.json.proof.json").write_text("{}")
    called: list[str] = []

    def holds(bundle: bytes, p: Path, cp: Path, key: str) -> str:
        called.append(key)
        return "held"

    assert verify_command(receipt_file, pub_path, checkpoint, inclusion=holds) == 1
    out = capsys.readouterr().out.replace("\n", "")
    beside = pub_path.with_name("jurat-log.pub")
    assert f"log key: none at {beside} (beside --key)" in out
    assert "8. FAIL check inclusion proof" in out
    assert "signature was NOT checked" in out and "fix: pass --log-key DIR/jurat-log.pub" in out
    assert "not verified: step 8 (check inclusion proof) failed" in out
    assert called == []
    # The log key beside --key is found without --log-key.
    _, log_pub = log_keygen(tmp_path / "elsewhere")
    beside.write_bytes(log_pub.read_bytes())
    assert verify_command(receipt_file, pub_path, checkpoint, inclusion=holds) == 0
    assert f"log key: {beside} (beside --key)" in capsys.readouterr().out.replace("\n", "")


def test_log_key_errors_exit_3(
    receipt_file: Path, pub_path: Path, key_dir: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    checkpoint = tmp_path / "checkpoint"
    checkpoint.write_text("x")
    # --log-key without --checkpoint: nothing to check it against.
    assert verify_command(receipt_file, pub_path, log_key=pub_path) == 3
    assert "give --checkpoint CP" in capsys.readouterr().err.replace("\n", "")
    # The receipt's public key (P-256 PEM) is not a log key.
    assert verify_command(receipt_file, pub_path, checkpoint, log_key=pub_path) == 3
    assert "not an Ed25519 key" in capsys.readouterr().err.replace("\n", "")
    # A private log key where its public half belongs.
    private, _ = log_keygen(tmp_path / "log")
    assert verify_command(receipt_file, pub_path, checkpoint, log_key=private) == 3
    assert "holds a private key" in capsys.readouterr().err
    assert verify_command(receipt_file, pub_path, checkpoint,
                          log_key=tmp_path / "missing.pub") == 3
    assert "cannot read log public key" in capsys.readouterr().err.replace("\n", "")


def test_a_tampered_receipt_file_exits_nonzero(
    statement: dict[str, Any], key_dir: Path, pub_path: Path, tmp_path: Path
) -> None:
    key = load_private_key(key_dir / "jurat.key")

    def flip(st: dict[str, Any]) -> None:
        # Judge A's samples all drop to 1 for correctness: A now rejects.
        for vote in st["predicate"]["votes"]:
            if vote["judge"] == "A":
                vote["answer"]["scores"]["correctness"] = 1

    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(_resigned(statement, key, flip))
    assert verify_command(bad, pub_path) == 1
