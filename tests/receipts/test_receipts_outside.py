"""Two outside verifiers accept the same receipt, and reject one tampered payload byte.

Neither calls jurat's verifier: sigstore-js (the npm packages, offline, public key, an
empty trusted root and zero tlog/ctlog/timestamp thresholds) and ``openssl dgst`` over
the PAE bytes rebuilt here from docs/receipt-format.md alone (json, base64, nothing
from jurat).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.npm import npm_packages

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "receipt-format.md"
SCRIPT = Path(__file__).with_name("sigstore_verify.js")
CACHE = REPO / ".venv" / "sigstore-js"
PACKAGES = {"@sigstore/verify": "3.1.1", "@sigstore/bundle": "4.0.0"}


@pytest.fixture(scope="session")
def sigstore_js() -> Path:
    """node_modules with sigstore-js, installed once into .venv/sigstore-js and reused."""
    return npm_packages(CACHE, PACKAGES)


def _sigstore_js(root: Path, bundle: Path, pub: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NODE_PATH": str(root / "node_modules")}
    return subprocess.run(
        ["node", str(SCRIPT), str(bundle), str(pub)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _tamper_one_payload_byte(receipt: bytes) -> bytes:
    doc = json.loads(receipt)
    payload = bytearray(base64.b64decode(doc["dsseEnvelope"]["payload"]))
    at = payload.index(b'"disposition":"accept"') + len(b'"disposition":"')
    payload[at] = ord("A")  # accept -> Accept: one byte
    doc["dsseEnvelope"]["payload"] = base64.b64encode(bytes(payload)).decode()
    return json.dumps(doc).encode()


def test_sigstore_js_verifies_the_receipt(
    sigstore_js: Path, receipt_file: Path, pub_path: Path
) -> None:
    proc = _sigstore_js(sigstore_js, receipt_file, pub_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "verified" in proc.stdout


def test_sigstore_js_rejects_one_tampered_payload_byte(
    sigstore_js: Path, receipt: bytes, pub_path: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(_tamper_one_payload_byte(receipt))
    proc = _sigstore_js(sigstore_js, bad, pub_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SIGNATURE_ERROR" in proc.stdout


def test_sigstore_js_rejects_another_key(
    sigstore_js: Path, receipt_file: Path, tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    other = tmp_path / "other.pub"
    other.write_bytes(
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    assert _sigstore_js(sigstore_js, receipt_file, other).returncode == 1


# -- openssl, from the document alone ------------------------------------------------------


def _pae_per_doc(payload_type: str, payload: bytes) -> bytes:
    # docs/receipt-format.md, "Pre-authentication encoding".
    t = payload_type.encode("utf-8")
    return (
        b"DSSEv1 "
        + str(len(t)).encode()
        + b" "
        + t
        + b" "
        + str(len(payload)).encode()
        + b" "
        + payload
    )


def _openssl_verify(receipt: bytes, pub: Path, work: Path) -> subprocess.CompletedProcess[str]:
    doc = json.loads(receipt)
    env = doc["dsseEnvelope"]
    assert len(env["signatures"]) == 1
    payload = base64.b64decode(env["payload"], validate=True)
    (work / "pae.bin").write_bytes(_pae_per_doc(env["payloadType"], payload))
    (work / "sig.der").write_bytes(base64.b64decode(env["signatures"][0]["sig"], validate=True))
    openssl = shutil.which("openssl")
    if not openssl:
        pytest.fail("the outside-verifier test needs openssl on PATH")
    return subprocess.run(
        [
            openssl,
            "dgst",
            "-sha256",
            "-verify",
            str(pub),
            "-signature",
            str(work / "sig.der"),
            str(work / "pae.bin"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_openssl_verifies_pae_rebuilt_from_the_doc(
    receipt: bytes, pub_path: Path, tmp_path: Path
) -> None:
    proc = _openssl_verify(receipt, pub_path, tmp_path)
    assert proc.returncode == 0 and "Verified OK" in proc.stdout, proc.stdout + proc.stderr


def test_openssl_rejects_one_tampered_payload_byte(
    receipt: bytes, pub_path: Path, tmp_path: Path
) -> None:
    proc = _openssl_verify(_tamper_one_payload_byte(receipt), pub_path, tmp_path)
    assert proc.returncode != 0 and "Verification failure" in proc.stdout + proc.stderr


def test_the_docs_pae_example_is_what_the_formula_gives() -> None:
    text = DOC.read_text(encoding="utf-8")
    example = 'DSSEv1 28 application/vnd.in-toto+json 7 {"a":1}'
    assert example in text
    assert _pae_per_doc("application/vnd.in-toto+json", b'{"a":1}') == example.encode()
    hexdump = re.search(r"```text\n(44 53 53 45 [0-9a-f \n]+)```", text)
    assert hexdump is not None
    assert bytes.fromhex(hexdump.group(1).replace("\n", " ")) == example.encode()


def test_the_docs_shell_recipe_verifies_and_rejects(
    receipt: bytes, pub_path: Path, tmp_path: Path
) -> None:
    if not shutil.which("jq"):
        pytest.fail("jq is not installed; the doc's recipe uses it (make test installs it)")
    recipe = re.search(r"```sh\n# verify-with-openssl\n(.*?)```", DOC.read_text(), re.S)
    assert recipe is not None, "the doc's openssl recipe is missing"
    script = tmp_path / "verify.sh"
    script.write_text("set -eu\n" + recipe.group(1))
    (tmp_path / "jurat.pub").write_bytes(pub_path.read_bytes())
    good, bad = tmp_path / "good.sigstore.json", tmp_path / "bad.sigstore.json"
    good.write_bytes(receipt)
    bad.write_bytes(_tamper_one_payload_byte(receipt))
    ok = subprocess.run(
        ["bash", str(script), str(good)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0 and "Verified OK" in ok.stdout, ok.stdout + ok.stderr
    ko = subprocess.run(
        ["bash", str(script), str(bad)], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert ko.returncode != 0
