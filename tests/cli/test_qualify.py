"""``jurat qualify``: a sim panel qualified in-process, its figures and its signed record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jurat.cli import ExitCode
from jurat.qualify._record import verify_record
from jurat.receipts import load_public_key
from tests.support.cli import invoke, isolate_homes

ARTIFACTS = "".join(
    f'[[artifacts]]\nid = "a{i}"\ntext = "answer {i}"\ntruth = "{"yes" if i % 2 else "no"}"\n\n'
    for i in range(6))
CAMPAIGN = f"""\
[campaign]
id = "qual"
kind = "criteria"
allowed_destinations = ["sim"]

[criteria]
samples = 1
blocker_samples = 5
items = [{{ id = "correct", text = "Is the final answer correct?", blocker = true }}]

[[judges]]
id = "sim-1"
provider = "sim"
reliability = 0.85
correlation = 0.3
seed = 3
samples = 1

{ARTIFACTS}"""


@pytest.fixture(autouse=True)
def _homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


def test_qualify_measures_signs_and_the_record_rederives(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    assert invoke("keygen", "--out", str(tmp_path / "keys")).exit_code == 0
    out, record = tmp_path / "q.json", tmp_path / "q.sigstore.json"
    result = invoke("qualify", str(tmp_path / "c.toml"), "--samples", "3", "--windows", "2",
                    "--spacing-ms", "1", "--pause", "0", "--json", str(out),
                    "--record", str(record), "--key", str(tmp_path / "keys" / "jurat.key"))
    assert result.exit_code == ExitCode.OK, result.output
    assert "rho (all samples)" in result.output and "qualification record: sha256:" in result.output
    figures = json.loads(out.read_text())["judges"][0]
    # 6 items x 2 windows x (burst + spaced) x 3 samples, scored against the truth labels.
    assert figures["samples"] == 72 and figures["items"] == 6
    assert figures["reference"] == "gold" and figures["kappa"]["value"] is not None
    assert figures["retest"] is not None and figures["drift"] is not None
    assert figures["campaign_samples"] == 5 and figures["false_block"]["threshold"] == 4
    public = load_public_key(tmp_path / "keys" / "jurat.pub")
    assert verify_record(record.read_bytes(), public)[-1].startswith("4. every figure")


def test_a_tampered_figure_does_not_rederive(tmp_path: Path) -> None:
    from jurat.canonical import canonical_json
    from jurat.errors import VerificationError
    from jurat.qualify._record import sign_record
    from jurat.receipts._bundle import parse_bundle

    (tmp_path / "c.toml").write_text(CAMPAIGN)
    assert invoke("keygen", "--out", str(tmp_path / "keys")).exit_code == 0
    key = tmp_path / "keys" / "jurat.key"
    record = tmp_path / "q.sigstore.json"
    assert invoke("qualify", str(tmp_path / "c.toml"), "--samples", "2", "--spacing-ms", "0",
                  "--pause", "0", "--record", str(record), "--key", str(key)).exit_code == 0
    statement = json.loads(parse_bundle(record.read_bytes()).payload)
    statement["predicate"]["figures"][0]["rho"]["value"] = 0.0
    forged, _ = sign_record(statement, key)  # signed by the right key, figures forged
    public = load_public_key(tmp_path / "keys" / "jurat.pub")
    with pytest.raises(VerificationError, match="do not re-derive"):
        verify_record(forged, public)
    assert canonical_json(statement)  # the forged statement is well-formed JSON


def test_a_deeply_nested_record_is_refused_not_a_crash(tmp_path: Path) -> None:
    """A signed record whose payload nests 100,000 levels deep: `jurat verify` reads it with
    the strict parser's depth bound and exits 1 (a recursive parse would overflow the
    stack and kill the process)."""
    from jurat.qualify._record import PREDICATE_TYPE
    from jurat.receipts import load_private_key
    from jurat.receipts._bundle import sign_payload

    assert invoke("keygen", "--out", str(tmp_path / "keys")).exit_code == 0
    deep = b"[" * 100_000 + b"]" * 100_000
    payload = (b'{"_type": "https://in-toto.io/Statement/v1", "predicateType": "'
               + PREDICATE_TYPE.encode() + b'", "predicate": ' + deep + b"}")
    record = tmp_path / "deep.sigstore.json"
    record.write_bytes(sign_payload(payload, load_private_key(tmp_path / "keys" / "jurat.key")))
    done = invoke("verify", str(record), "--key", str(tmp_path / "keys" / "jurat.pub"))
    assert done.exit_code == 1, done.output
