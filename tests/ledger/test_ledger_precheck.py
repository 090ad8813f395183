"""``Ledger.precheck``: entries checked while writers still append, then signed without
being read again (ledger/_checkpoint.py)."""

from __future__ import annotations

from collections.abc import Callable

from jurat.ledger import Ledger, LogSigner
from jurat.ledger._note import parse_unverified_checkpoint
from tests.ledger.conftest import Target
from tests.ledger.test_ledger_tamper import _rewrite


def _append(ledger: Ledger, start: int, n: int) -> None:
    for i in range(start, start + n):
        ledger.append("sample_recorded", f"job-{i}", {"i": i}, campaign_id="c",
                      artifact_id=f"a{i}")


def _signed(note: str) -> tuple[int, str]:
    checkpoint = parse_unverified_checkpoint(note)
    return checkpoint.tree_size, checkpoint.root_hash


def test_a_precheck_signs_the_root_a_full_check_signs(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(7) as ledger:
        ledger.checkpoint(signer)
        _append(ledger, 7, 9)
        checked = ledger.precheck()
        assert checked is not None and (checked.since, checked.size) == (7, 16)
        # Appended after the precheck: read and checked by the checkpoint itself.
        _append(ledger, 16, 5)
        checked = ledger.precheck(checked)
        assert checked is not None and checked.size == 21
        _append(ledger, 21, 3)
        with_precheck = _signed(ledger.checkpoint(signer, checked=checked))
    with target.open() as again:
        assert _signed(again.checkpoint(signer)) == with_precheck == (24, again.verify().root_hash)
        assert again.verify().tree_size == 24


def test_a_precheck_from_before_another_checkpoint_is_not_used(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(5) as ledger:
        stale = ledger.precheck()
        assert stale is not None and stale.since == 0
        ledger.checkpoint(signer)
        _append(ledger, 5, 4)
        assert not stale.continues(5, stale.epoch, list(stale.base), 9)
        assert _signed(ledger.checkpoint(signer, checked=stale))[0] == 9
        assert ledger.verify().tree_size == 9


def test_an_entry_rewritten_before_the_precheck_is_not_vouched_for(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(10) as ledger:
        ledger.checkpoint(signer)
        _append(ledger, 10, 6)
    _rewrite(target, 12, lambda p: p.update(i=999))
    with target.open() as ledger:
        # The entries no longer match the stored tree: the precheck does not vouch for
        # them, and the checkpoint checks every entry itself, as without one.
        assert ledger.precheck() is None


def test_an_entry_rewritten_after_the_precheck_is_signed_only_as_stored(
    target: Target, filled: Callable[[int], Ledger], signer: LogSigner
) -> None:
    with filled(10) as ledger:
        ledger.checkpoint(signer)
        _append(ledger, 10, 6)
        checked = ledger.precheck()
        assert checked is not None
    _rewrite(target, 12, lambda p: p.update(i=999))
    with target.open() as ledger:
        note = ledger.checkpoint(signer, checked=checked)
        # Signed over what the ledger holds now (its tree rebuilt from the rewritten
        # entries, which verification reports), never over the leaves checked before.
        report = ledger.verify()
        assert _signed(note) == (report.tree_size, report.root_hash)
        assert any("rebuilt" in warning for warning in report.warnings)
