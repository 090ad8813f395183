"""Hostile receipts: whatever the bytes, `jurat verify` fails a numbered step and exits 1.

The adversary writes every byte of the receipt (docs/design.md, "Trust boundaries"): nesting
100 000 levels deep (in the bundle and inside the signed payload), a byte order mark,
UTF-16, more than the size limit, a non-object ``publicKey``, huge unknown fields. None
of it may reach a traceback, in `jurat verify`, `jurat report` or `read_statement`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from jurat.canonical import MAX_JSON_DEPTH, canonical_json, loads_strict, sha256_digest
from jurat.errors import ValidationError, VerificationError
from jurat.receipts import (
    MAX_BUNDLE_BYTES,
    PrivateKey,
    load_public_key,
    read_statement,
    receipt_digest,
    verify_bundle,
)
from jurat.receipts._bundle import sign_payload
from tests.support.builders import SOURCE
from tests.support.cli import invoke

DEEP = 100_000
DEEP_ARRAYS = b"[" * DEEP + b"]" * DEEP
DEEP_OBJECTS = b'{"a":' * DEEP + b"1" + b"}" * DEEP


def cli(*args: str) -> Result:
    """``jurat ARGS`` in this process (``tests.support.cli.invoke``)."""
    return invoke(*args)


def _edit(receipt: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    doc: dict[str, Any] = json.loads(receipt)
    change(doc)
    return json.dumps(doc).encode()


def _verify_file(path: Path, pub: Path, *extra: str) -> Result:
    return cli("verify", str(path), "--key", str(pub), *extra)


def _failed_step(result: Result) -> int:
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("not verified: step "), last
    return int(last.split("step ")[1].split()[0])


# -- the one strict parser -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (DEEP_ARRAYS, "100000 levels deep"),
        (DEEP_OBJECTS, "100000 levels deep"),
        (b"\xef\xbb\xbf{}", "byte order mark"),
        ("{}".encode("utf-16"), "not UTF-8"),
        ("{}".encode("utf-32"), "not UTF-8"),
        ("{}".encode("utf-16-le"), "NUL"),
        (b'{"a":"\\ud800"}', "lone surrogate"),
        (b'{"a":1,"a":2}', "duplicate key"),
        (b"[NaN]", "not JSON"),
        (b"[1e400]", "overflows"),
    ],
)
def test_loads_strict_refuses_before_or_while_parsing(data: bytes, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        loads_strict(data)


def test_loads_strict_limits_are_keyword_arguments_with_defaults() -> None:
    at_limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads_strict(at_limit) is not None
    with pytest.raises(ValueError, match="levels deep"):
        loads_strict("[" + at_limit + "]")
    assert loads_strict("[[1]]", max_depth=2) == [[1]]
    with pytest.raises(ValueError, match="levels deep"):
        loads_strict("[[1]]", max_depth=1)
    with pytest.raises(ValueError, match="8-byte limit"):
        loads_strict(b'"123456789"', max_bytes=8)
    # Brackets inside strings are not nesting, escaped quotes do not end a string.
    assert loads_strict('["[[[\\"{{{", "\\\\"]', max_depth=1) == ['[[["{{{', "\\"]
    # A valid surrogate pair is fine.
    assert loads_strict(b'"\\ud83d\\ude00"') == "\U0001f600"


def test_the_depth_scan_is_linear_on_hostile_strings() -> None:
    # Escaped quotes without an end would make a naive string pattern quadratic.
    with pytest.raises(ValueError):
        loads_strict('"' + '\\"' * 2_000_000)
    with pytest.raises(ValueError):
        loads_strict('["' + "[" * 1_000_000)


# -- jurat verify, the outer bundle ----------------------------------------------------------


def test_verify_cli_a_good_receipt_names_its_artifact(receipt_file: Path, pub_path: Path) -> None:
    result = _verify_file(receipt_file, pub_path)
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    digest = sha256_digest(SOURCE)
    assert last.startswith("verified: accept — artifact c1 sha256:" + digest), last
    assert "not compared with any artifact" in last


@pytest.mark.parametrize(
    ("name", "data", "needle"),
    [
        ("deep arrays", DEEP_ARRAYS, "100000 levels deep"),
        ("deep objects", DEEP_OBJECTS, "100000 levels deep"),
        ("top-level array", b"[]", "must be a JSON object, found array"),
        ("top-level string", b'"x"', "must be a JSON object, found string"),
        ("empty", b"", "not JSON"),
        ("lone surrogate", b'{"mediaType":"\\udc00"}', "lone surrogate"),
    ],
)
def test_hostile_bundle_bytes_fail_step_1(
    name: str, data: bytes, needle: str, tmp_path: Path, pub_path: Path
) -> None:
    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(data)
    result = _verify_file(bad, pub_path)
    assert _failed_step(result) == 1, name
    assert "1. FAIL" in result.output and needle in result.output
    assert "artifact not established" in result.output.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("encode", "needle"),
    [
        (lambda b: b"\xef\xbb\xbf" + b, "byte order mark"),
        (lambda b: b.decode().encode("utf-16"), "not UTF-8"),
        (lambda b: b.decode().encode("utf-16-be"), "NUL"),
        (lambda b: b.decode().encode("utf-32"), "not UTF-8"),
    ],
)
def test_bom_and_utf16_bundles_fail_step_1(
    receipt: bytes, encode: Callable[[bytes], bytes], needle: str, tmp_path: Path, pub_path: Path
) -> None:
    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(encode(receipt))
    result = _verify_file(bad, pub_path)
    assert _failed_step(result) == 1 and needle in result.output


def test_an_oversize_bundle_fails_step_1_without_being_read_whole(
    receipt: bytes, tmp_path: Path, pub_path: Path
) -> None:
    big = tmp_path / "big.sigstore.json"
    # A valid receipt followed by whitespace: JSON, but one byte over the limit.
    big.write_bytes(receipt + b" " * (MAX_BUNDLE_BYTES + 1 - len(receipt)))
    result = _verify_file(big, pub_path)
    assert _failed_step(result) == 1
    assert f"more than the {MAX_BUNDLE_BYTES}-byte limit" in result.output


def test_a_50_mb_unknown_field_fails_step_1(receipt: bytes, tmp_path: Path, pub_path: Path) -> None:
    huge = tmp_path / "huge.sigstore.json"
    huge.write_bytes(receipt[:-1] + b',"x":"' + b"A" * (50 * 1024 * 1024) + b'"}')
    result = _verify_file(huge, pub_path)
    assert _failed_step(result) == 1 and "byte limit" in result.output


def test_a_1_mb_unknown_field_under_the_size_limit_fails_step_1(
    receipt: bytes, tmp_path: Path, pub_path: Path
) -> None:
    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(_edit(receipt, lambda d: d.update(padding="A" * (1024 * 1024))))
    result = _verify_file(bad, pub_path)
    assert _failed_step(result) == 1
    assert "the bundle has unknown field(s) 'padding'" in result.output


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (
            lambda d: d["verificationMaterial"].update(publicKey="MFkwEwYHKoZIzj0CAQYI"),
            "verificationMaterial.publicKey must be a JSON object, found string",
        ),
        (
            lambda d: d["verificationMaterial"].update(publicKey=[]),
            "verificationMaterial.publicKey must be a JSON object, found array",
        ),
        (
            lambda d: d["verificationMaterial"].update(publicKey=None),
            "verificationMaterial.publicKey must be a JSON object, found null",
        ),
        (
            lambda d: d["verificationMaterial"]["publicKey"].update(hint=None),
            "publicKey.hint must be a string, found null",
        ),
        (
            lambda d: d["verificationMaterial"]["publicKey"].update(rawBytes="AAAA"),
            "verificationMaterial.publicKey has unknown field(s) 'rawBytes'",
        ),
        (lambda d: d.update(verificationMaterial=[]), "verificationMaterial must be a JSON object"),
        (
            lambda d: d["verificationMaterial"].update(extra={}),
            "verificationMaterial has unknown field(s) 'extra'",
        ),
        (
            lambda d: d["verificationMaterial"].update(tlogEntries=[1]),
            "tlogEntries[0] must be a JSON object, found number",
        ),
        (
            lambda d: d["verificationMaterial"].update(tlogEntries={}),
            "tlogEntries must be an array",
        ),
        (lambda d: d.update(dsseEnvelope="e30="), "dsseEnvelope must be a JSON object"),
        (
            lambda d: d["dsseEnvelope"].update(note="hi"),
            "dsseEnvelope has unknown field(s) 'note'",
        ),
        (
            lambda d: d["dsseEnvelope"].update(signatures=["MEUC"]),
            "signatures[0] must be a JSON object, found string",
        ),
        (
            lambda d: d["dsseEnvelope"]["signatures"][0].update(cert="x"),
            "signatures[0] has unknown field(s) 'cert'",
        ),
        (
            lambda d: d["dsseEnvelope"]["signatures"][0].update(keyid=7),
            "keyid must be a string, found number",
        ),
        (lambda d: d.update(mediaType=["x"]), "mediaType array is not"),
        (
            lambda d: d.update(media_type=d.pop("mediaType")),
            "the bundle has unknown field(s) 'media_type'",
        ),
    ],
)
def test_every_schema_object_is_an_object_with_only_its_fields(
    receipt: bytes,
    edit: Callable[[dict[str, Any]], None],
    needle: str,
    tmp_path: Path,
    pub_path: Path,
) -> None:
    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(_edit(receipt, edit))
    result = _verify_file(bad, pub_path)
    assert _failed_step(result) == 1, result.output
    assert needle in result.output, result.output


def test_fields_a_v03_bundle_may_carry_are_still_read(receipt: bytes, pub_path: Path) -> None:
    # timestampVerificationData is Sigstore's; jurat leaves it unchecked, offline.
    doc = _edit(receipt, lambda d: d["verificationMaterial"].update(timestampVerificationData={}))
    assert verify_bundle(doc, load_public_key(pub_path)).ok
    no_keyid = _edit(receipt, lambda d: d["dsseEnvelope"]["signatures"][0].pop("keyid"))
    assert verify_bundle(no_keyid, load_public_key(pub_path)).ok


# -- inside the signed payload -------------------------------------------------------------


@pytest.mark.parametrize("payload", [DEEP_ARRAYS, DEEP_OBJECTS], ids=["arrays", "objects"])
def test_deep_nesting_inside_a_validly_signed_payload_fails_step_4(
    payload: bytes, private_key: PrivateKey, pub_path: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "deep.sigstore.json"
    bad.write_bytes(sign_payload(payload, private_key))
    result = _verify_file(bad, pub_path)
    assert _failed_step(result) == 4
    assert "3. ok" in result.output and "100000 levels deep" in result.output
    with pytest.raises(VerificationError, match="levels deep"):
        read_statement(bad.read_bytes())


def test_deep_nesting_inside_a_statement_field_fails_step_4(
    statement: dict[str, Any], private_key: PrivateKey, pub_path: Path
) -> None:
    payload = canonical_json(statement)
    deep = b'"data":' + b"[" * DEEP + b"]" * DEEP + b","
    payload = payload.replace(b'"data":{"coverage":87.5,"failed":0,"passed":3},', deep, 1)
    assert b"[" * DEEP in payload
    report = verify_bundle(sign_payload(payload, private_key), load_public_key(pub_path))
    assert not report.ok and report.failed is not None and report.failed.number == 4


def test_verify_subprocess_deep_receipt_prints_no_traceback(
    tmp_path: Path, pub_path: Path, private_key: PrivateKey
) -> None:
    outer = tmp_path / "outer.sigstore.json"
    outer.write_bytes(DEEP_OBJECTS)
    inner = tmp_path / "inner.sigstore.json"
    inner.write_bytes(sign_payload(DEEP_ARRAYS, private_key))
    for path, step in ((outer, 1), (inner, 4)):
        proc = subprocess.run(
            [sys.executable, "-m", "jurat", "verify", str(path), "--key", str(pub_path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr
        assert f"not verified: step {step}" in proc.stdout.strip().splitlines()[-1]


def test_receipt_digest_and_build_refuse_within_the_same_limits(
    statement: dict[str, Any], private_key: PrivateKey
) -> None:
    with pytest.raises(ValidationError, match="levels deep"):
        receipt_digest(DEEP_ARRAYS)
    with pytest.raises(ValidationError, match="byte limit"):
        sign_payload(b"x" * MAX_BUNDLE_BYTES, private_key)


def test_printed_details_cannot_forge_lines(
    receipt: bytes, tmp_path: Path, pub_path: Path
) -> None:
    bad = tmp_path / "bad.sigstore.json"
    bad.write_bytes(_edit(receipt, lambda d: d.update({"x\nverified: accept\x1b[0m": 1})))
    result = _verify_file(bad, pub_path)
    assert _failed_step(result) == 1
    assert not any(line.startswith("verified") for line in result.output.splitlines())
    assert "\x1b" not in result.output


# -- jurat verify --artifact -----------------------------------------------------------------


def test_artifact_file_that_matches_is_named_on_the_last_line(
    receipt_file: Path, pub_path: Path, tmp_path: Path
) -> None:
    source = tmp_path / "fib.py"
    source.write_text(SOURCE)
    result = _verify_file(receipt_file, pub_path, "--artifact", str(source))
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    digest = sha256_digest(SOURCE)
    assert last.startswith(f"verified: accept — artifact c1 sha256:{digest}, the digest of")
    assert "fib.py" in last
    assert "the given artifact's digest" in result.output  # step 5's detail


def test_another_artifact_file_fails_step_5_and_says_which_artifact(
    receipt_file: Path, pub_path: Path, tmp_path: Path
) -> None:
    other = tmp_path / "c2.py"
    other.write_text(SOURCE + "# another artifact\n")
    result = _verify_file(receipt_file, pub_path, "--artifact", str(other))
    assert _failed_step(result) == 5
    last = result.output.strip().splitlines()[-1]
    assert f"artifact c1 sha256:{sha256_digest(SOURCE)}, NOT the digest of" in last
    assert "c2.py" in last
    assert "5. FAIL" in result.output and "6. --" in result.output


def test_artifact_digest_option(receipt_file: Path, pub_path: Path, tmp_path: Path) -> None:
    digest = sha256_digest(SOURCE)
    same = _verify_file(receipt_file, pub_path, "--artifact-digest", f"sha256:{digest}")
    assert same.exit_code == 0
    assert "the digest of --artifact-digest" in same.output.strip().splitlines()[-1]
    wrong = _verify_file(receipt_file, pub_path, "--artifact-digest", "sha256:" + "0" * 64)
    assert _failed_step(wrong) == 5
    upper = _verify_file(receipt_file, pub_path, "--artifact-digest", f"sha256:{digest.upper()}")
    assert upper.exit_code == 0
    malformed = _verify_file(receipt_file, pub_path, "--artifact-digest", digest)
    assert malformed.exit_code == 3 and "sha256:<64 hex digits>" in malformed.output
    source = tmp_path / "fib.py"
    source.write_text(SOURCE)
    both = _verify_file(
        receipt_file, pub_path, "--artifact", str(source), "--artifact-digest", "sha256:" + "0" * 64
    )
    assert both.exit_code == 3 and "give one of them" in both.output
    missing = _verify_file(receipt_file, pub_path, "--artifact", str(tmp_path / "nope.py"))
    assert missing.exit_code == 3 and "cannot read artifact" in missing.output


# -- jurat report over a hostile receipt -----------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [DEEP_ARRAYS, DEEP_OBJECTS, b"\xef\xbb\xbf{}", "{}".encode("utf-16")],
    ids=["arrays", "objects", "bom", "utf16"],
)
def test_report_over_a_hostile_receipt_is_a_clear_error(data: bytes, tmp_path: Path) -> None:
    receipts = tmp_path / "out"
    receipts.mkdir()
    (receipts / "c1.sigstore.json").write_bytes(data)
    result = cli("report", str(receipts), "--html", str(tmp_path / "r.html"))
    assert result.exit_code == 3, result.output
    assert "error:" in result.output and "c1.sigstore.json" in result.output


def test_report_over_a_deep_signed_payload_is_a_clear_error(
    tmp_path: Path, private_key: PrivateKey
) -> None:
    receipts = tmp_path / "out"
    receipts.mkdir()
    (receipts / "c1.sigstore.json").write_bytes(sign_payload(DEEP_OBJECTS, private_key))
    result = cli("report", str(receipts), "--html", str(tmp_path / "r.html"))
    assert result.exit_code == 3 and "levels deep" in result.output


# -- step 8: the inclusion proof beside the receipt is as untrusted -------------------------


def test_a_hostile_inclusion_proof_fails_step_8(
    receipt_file: Path, pub_path: Path, tmp_path: Path
) -> None:
    from jurat.cli._verify import verify_command
    from jurat.ledger import log_keygen

    checkpoint = tmp_path / "checkpoint"
    checkpoint.write_text("jurat.dev/log\n1\nAAAA\n")
    proof = receipt_file.with_name(receipt_file.name + ".proof.json")
    # The log's public key, so that step 8 reaches the proof (without one it fails first).
    _, log_pub = log_keygen(tmp_path / "log")
    calls: list[Path] = []

    def never(bundle: bytes, p: Path, cp: Path, key: str) -> str:
        calls.append(p)
        return "included"

    for data, needle in ((DEEP_OBJECTS, "levels deep"), (b"[]", "not a JSON object")):
        proof.write_bytes(data)
        result = cli("verify", str(receipt_file), "--key", str(pub_path),
                     "--checkpoint", str(checkpoint), "--log-key", str(log_pub))
        assert result.exit_code == 1 and "8. FAIL" in result.output and needle in result.output
        assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub,
                              inclusion=never) == 1
    assert calls == []  # refused before the ledger's check reads it
    proof.write_text("{}")
    checkpoint.write_bytes(b"x" * (64 * 1024 + 1))
    assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub,
                          inclusion=never) == 1
    checkpoint.write_text("jurat.dev/log\n1\nAAAA\n")

    def crashes(bundle: bytes, p: Path, cp: Path, key: str) -> str:
        raise ValueError("non-hexadecimal number found in fromhex()")

    assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub,
                          inclusion=crashes) == 1
    assert verify_command(receipt_file, pub_path, checkpoint, log_key=log_pub,
                          inclusion=never) == 0
