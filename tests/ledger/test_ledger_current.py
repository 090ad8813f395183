"""``Ledger.current_receipt``: the latest receipt of an artifact, not taken on the index's
word. Every entry from it to the tail is checked, and those up to the latest checkpoint
against that checkpoint's signed root, so a newer review edited behind the ledger's back is
an error naming it rather than a silent return of the review it superseded."""

from __future__ import annotations

import pytest

from jurat.errors import TamperError
from jurat.ledger import Ledger, LogSigner, load_or_create_log_key

from .conftest import Target


def _receipt(ledger: Ledger, job: str, data: bytes, artifact: str = "a1") -> int:
    slot = ledger.next_review("camp", artifact)
    return ledger.append_receipt(job, data, campaign_id="camp", artifact_id=artifact,
                                 review=slot).seq


def _fill(ledger: Ledger, n: int) -> None:
    for i in range(n):
        ledger.append("sample_recorded", f"job-{i}", {"i": i}, campaign_id="camp",
                      artifact_id="a0")


def test_the_current_receipt_and_whether_a_signed_checkpoint_covers_it(
    target: Target, signer: LogSigner
) -> None:
    key = [signer.verifier_key()]
    with target.open() as ledger:
        assert ledger.current_receipt("camp", "a1", key) is None
        _fill(ledger, 5)
        v1 = _receipt(ledger, "job-v1", b"review one")
        _fill(ledger, 3)
        ledger.checkpoint(signer)
        current = ledger.current_receipt("camp", "a1", key)
        assert current is not None and current.entry.seq == v1 and current.covered
        assert current.receipt == b"review one" and current.checkpoint_size == ledger.size()
        # A newer review past the checkpoint is the current one, and says it is not covered.
        v2 = _receipt(ledger, "job-v2", b"review two")
        current = ledger.current_receipt("camp", "a1", key)
        assert current is not None and current.entry.seq == v2 and not current.covered
        assert current.entry.payload["review_version"] == 2


@pytest.mark.parametrize("column, value", [("artifact_id", "'elsewhere'"),
                                           ("kind", "'decision'"),
                                           ("campaign_id", "'other'")])
def test_a_newer_review_edited_so_that_the_index_misses_it_is_caught(
    target: Target, signer: LogSigner, column: str, value: str
) -> None:
    key = [signer.verifier_key()]
    with target.open() as ledger:
        _fill(ledger, 4)
        _receipt(ledger, "job-v1", b"review one")
        v2 = _receipt(ledger, "job-v2", b"review two")
        _fill(ledger, 2)
        ledger.checkpoint(signer)
    target.tamper(f"UPDATE {target.table('entries')} SET {column} = {value} WHERE seq = {v2}")
    with target.open() as ledger:
        # What the index answers: the superseded review, its own row intact.
        latest = ledger.latest_receipt("camp", "a1")
        assert latest is not None and latest[1] == b"review one"
        with pytest.raises(TamperError, match=f"^seq {v2}: "):
            ledger.current_receipt("camp", "a1", key)


def test_a_checkpoint_the_log_key_did_not_sign_is_refused(target: Target,
                                                          signer: LogSigner) -> None:
    with target.open() as ledger:
        _receipt(ledger, "job-v1", b"review one")
        ledger.checkpoint(signer)
        other = load_or_create_log_key(target.tmp / "other" / "log.key")
        with pytest.raises(TamperError, match="not signed by the given log key"):
            ledger.current_receipt("camp", "a1", [other.verifier_key()])


def test_a_stored_tree_node_that_does_not_reach_the_signed_root_is_refused(
    sqlite_target: Target, signer: LogSigner
) -> None:
    with sqlite_target.open() as ledger:
        _fill(ledger, 8)
        _receipt(ledger, "job-v1", b"review one")
        ledger.checkpoint(signer)
    # Node (3, 0), the hash of entries 0..7: the compact range below the receipt.
    sqlite_target.tamper(f"UPDATE {sqlite_target.table('tree')} SET hash = zeroblob(32) "
                         f"WHERE node = {3 << 48}")
    with sqlite_target.open() as ledger, pytest.raises(TamperError, match="history rewritten"):
        ledger.current_receipt("camp", "a1", [signer.verifier_key()])


def test_a_ledger_truncated_below_its_checkpoint_is_refused(target: Target,
                                                            signer: LogSigner) -> None:
    with target.open() as ledger:
        _receipt(ledger, "job-v1", b"review one")
        _fill(ledger, 3)
        ledger.checkpoint(signer)
    target.tamper(f"DELETE FROM {target.table('entries')} WHERE seq >= 2")
    with target.open() as ledger, pytest.raises(TamperError, match="truncated"):
        ledger.current_receipt("camp", "a1", [signer.verifier_key()])
