"""Replay: check a ledger's log, then every receipt in it through the verifier's steps.

With a public key all seven steps run on each receipt; without one, every step but the
signature (step 3), so a replay without a key never holds (docs/receipt-format.md §7).
More than one receipt for one (job, review version) fails the later one
(docs/design.md, "Contracts that others rely on").
"""

from __future__ import annotations

from pydantic import Field

from jurat.errors import JuratError
from jurat.ledger import Entry, Ledger, LedgerReport, ledger_url
from jurat.models import Decision, Frozen
from jurat.receipts import STEPS, PublicKey, VerifyReport, rederive_bundle, verify_bundle

__all__ = ["Replay", "ReplayedReceipt", "ledger_url", "replay_ledger"]

#: The verifier's signature step, which a replay without a key does not run.
SIGNATURE_STEP = STEPS.index("verify signature") + 1


def decision_word(decision: Decision | None) -> str:
    """The word naming a decision (``Decision.outcome``), or ``?``."""
    word = decision.outcome if decision is not None else None
    return word or "?"


class ReplayedReceipt(Frozen):
    """One receipt of the ledger, through the verifier's steps."""

    entry: Entry
    """The ledger's receipt entry."""
    report: VerifyReport
    """The verifier's steps (without a key: every step but the signature)."""
    review_version: int | None
    """``predicate.review.version`` as the receipt records it, once step 4 read it."""
    recorded: str
    """The decision word the receipt records, or ``?`` before step 4 read it."""
    derived: str | None
    """The decision word the fold re-derives, once step 6 held."""
    ok: bool
    """Every step that ran held, the signature among them when a key was given, and no
    earlier receipt of the ledger has the same (job, review version)."""
    problems: tuple[str, ...] = ()
    """Why it failed, one line each."""

    @property
    def signature_ok(self) -> bool | None:
        """Whether step 3 held; None when it did not run (no key, or an earlier step failed)."""
        step = next((s for s in self.report.steps if s.number == SIGNATURE_STEP), None)
        return None if step is None else step.ok


class Replay(Frozen):
    """A ledger replayed: its log, then each receipt."""

    signatures_checked: bool
    """Whether a public key was given, so that step 3 ran on every receipt."""
    log: LedgerReport | None = None
    """The log's check (hash chain, sequence, Merkle root) when it held."""
    log_error: str | None = None
    """Why the log's check failed."""
    receipts_error: str | None = None
    """Why the receipts could not be read from the ledger (then ``receipts`` is empty)."""
    receipts: tuple[ReplayedReceipt, ...] = Field(default=())
    """Every receipt entry, in log order."""

    @property
    def failures(self) -> int:
        """The log, the receipt listing and every receipt that did not hold."""
        return (
            (self.log_error is not None)
            + (self.receipts_error is not None)
            + sum(not r.ok for r in self.receipts)
        )


def _replayed(
    entry: Entry, signed: bytes, key: PublicKey | None, seen: dict[tuple[str, int], int]
) -> ReplayedReceipt:
    report = verify_bundle(signed, key) if key is not None else rederive_bundle(signed)
    predicate = report.statement.predicate if report.statement is not None else None
    ok = report.ok if key is not None else report.held
    problems: list[str] = []
    failed = report.failed
    if failed is not None:
        problems.append(f"seq {entry.seq}: step {failed.number} ({failed.name}): {failed.detail}")
    review_version = predicate.review.version if predicate is not None else None
    if review_version is not None:
        earlier = seen.setdefault((entry.job_id, review_version), entry.seq)
        if earlier != entry.seq:
            ok = False
            problems.append(f"seq {entry.seq}: a second receipt for job {entry.job_id} "
                            f"review {review_version} (the first is seq {earlier})")
    return ReplayedReceipt(
        entry=entry, report=report, review_version=review_version,
        recorded=decision_word(predicate.decision if predicate is not None else None),
        derived=decision_word(report.decision) if report.decision is not None else None,
        ok=ok,
        problems=tuple(problems),
    )


def replay_ledger(ledger: Ledger, key: PublicKey | None) -> Replay:
    """Check the log, then every receipt; a failure anywhere is recorded, never raised."""
    log: LedgerReport | None = None
    log_error: str | None = None
    try:
        log = ledger.verify()
    except JuratError as exc:
        log_error = str(exc)
    try:
        receipts = list(ledger.receipts())
    except JuratError as exc:
        return Replay(signatures_checked=key is not None, log=log, log_error=log_error,
                      receipts_error=str(exc))
    seen: dict[tuple[str, int], int] = {}
    return Replay(
        signatures_checked=key is not None, log=log, log_error=log_error,
        receipts=tuple(_replayed(entry, signed, key, seen) for entry, signed in receipts),
    )
