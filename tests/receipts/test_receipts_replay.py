"""`jurat replay`: every receipt in a ledger through the verifier's steps; no key, no pass.

Without ``--key`` no signature is checked, and replay says so and exits 1 (not everything
was shown to hold), never 0.
A hostile receipt in the ledger is a failed row, never a traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import Result

from jurat.ledger import open_ledger
from jurat.receipts import PrivateKey, keygen
from jurat.receipts._bundle import sign_payload
from tests.support.cli import invoke, isolate_homes

DEEP = 100_000


@pytest.fixture(autouse=True)
def _config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


def cli(*args: str) -> Result:
    """``jurat ARGS`` in this process (``tests.support.cli.invoke``)."""
    return invoke(*args)


def _ledger(path: Path, *receipts: tuple[str, bytes]) -> str:
    """A SQLite ledger holding ``receipts`` as (artifact id, bundle bytes), one job each."""
    url = f"sqlite:///{path}"
    ledger = open_ledger(url)
    try:
        for artifact, data in receipts:
            slot = ledger.next_review("demo-2026-11", artifact)
            ledger.append_receipt(
                f"job-{artifact}", data, campaign_id="demo-2026-11", artifact_id=artifact,
                review=slot,
            )
    finally:
        ledger.close()
    return url


def test_replay_with_the_key_exits_0(receipt: bytes, pub_path: Path, tmp_path: Path) -> None:
    url = _ledger(tmp_path / "l.db", ("c1", receipt))
    result = cli("replay", url, "--key", str(pub_path))
    assert result.exit_code == 0, result.output
    assert "all decisions re-derive" in result.output
    assert "every receipt's signature verifies" in result.output
    assert "NOT checked" not in result.output


def test_replay_without_a_key_says_so_and_does_not_exit_0(
    receipt: bytes, tmp_path: Path
) -> None:
    url = _ledger(tmp_path / "l.db", ("c1", receipt))
    result = cli("replay", url)
    assert result.exit_code == 1, result.output
    assert "signatures: NOT checked (no --key given)" in result.output
    assert "no signature was checked" in result.output.strip().splitlines()[-1]
    assert "not checked" in result.output  # the signature column


def test_replay_without_a_key_still_fails_a_mismatch(
    receipt: bytes, private_key: PrivateKey, tmp_path: Path
) -> None:
    forged = sign_payload(b"[" * DEEP + b"]" * DEEP, private_key)
    url = _ledger(tmp_path / "l.db", ("c1", receipt), ("c2", forged))
    result = cli("replay", url)
    assert result.exit_code == 1, result.output
    assert "step 4 (parse statement)" in result.output and "levels deep" in result.output


def test_replay_with_another_key_fails_every_signature(
    receipt: bytes, tmp_path: Path
) -> None:
    _, other = keygen(tmp_path / "other")
    url = _ledger(tmp_path / "l.db", ("c1", receipt))
    result = cli("replay", url, "--key", str(other))
    assert result.exit_code == 1, result.output
    assert "BAD" in result.output and "step 3 (verify signature)" in result.output


@pytest.mark.parametrize(
    "data",
    [b"[" * DEEP + b"]" * DEEP, b'{"a":' * DEEP + b"1" + b"}" * DEEP, b"\xef\xbb\xbf{}", b""],
    ids=["arrays", "objects", "bom", "empty"],
)
def test_a_hostile_receipt_in_the_ledger_is_a_failed_row(
    data: bytes, receipt: bytes, pub_path: Path, tmp_path: Path
) -> None:
    url = _ledger(tmp_path / "l.db", ("c1", receipt), ("evil", data))
    result = cli("replay", url, "--key", str(pub_path))
    assert result.exit_code == 1, result.output
    assert "step 1 (parse envelope)" in result.output
    assert "1 failure(s)" in result.output
    # The report reads the same ledger: a clear error naming the entry, no traceback.
    report = cli("report", url, "--html", str(tmp_path / "r.html"))
    assert report.exit_code == 3, report.output
    assert "ledger entry 1: not a jurat receipt" in report.output


def test_replay_and_report_do_not_create_a_missing_ledger(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    assert cli("replay", str(missing)).exit_code == 3
    assert cli("report", str(missing), "--html", str(tmp_path / "r.html")).exit_code == 3
    assert not missing.exists()


def test_replay_with_an_unreadable_key_is_an_input_error(receipt: bytes, tmp_path: Path) -> None:
    url = _ledger(tmp_path / "l.db", ("c1", receipt))
    result = cli("replay", url, "--key", str(tmp_path / "nope.pub"))
    assert result.exit_code == 3
