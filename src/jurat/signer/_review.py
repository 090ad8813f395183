"""Check 6, ``review``: the receipt is the current review of its artifact, not superseded.

With ``--ledger`` the ledger is asked, and not simply believed: its latest receipt for
(campaign, artifact) (the slot ``jurat run`` and ``jurat serve`` take review versions from)
must be this receipt, byte for byte by digest, read by ``Ledger.current_receipt``, which
checks every entry from that receipt to the tail (its hashes, its chain link) and the
entries up to the latest checkpoint against that checkpoint's root, signed by one of the
signer's log keys. So a newer review edited behind the ledger's back (triggers dropped, a
column changed so that it no longer answers the query) is a refusal naming the ledger, not
a grant for the review it superseded. Entries past the last signed checkpoint: a newer
review there still supersedes (it can only refuse), but this receipt's own entry must be
covered by the signed checkpoint, since an unsigned row is never a reason to grant. A
receipt the ledger does not hold, a ledger that does not verify or cannot be read, or no
log key, is refused: the check fails closed.

Without ``--ledger`` the request must carry the receipt's inclusion proof
(docs/receipt-format.md §12), checked in steps:

1. the proof's checkpoint is signed by a log key the signer was started with;
2. the entry, its hashes and its audit path reach that checkpoint's root
   (``jurat.ledger.verify_entry_proof``);
3. the entry is a ``receipt`` entry for exactly this receipt, at its review version;
4. no review the signer has seen in an authenticated receipt supersedes it (a higher
   version of the same artifact, or one whose ``supersedes`` is this receipt).

What this shows, and what it cannot: the receipt was appended to the log the log key
commits to, and it is not superseded by any review the signer knows about. An inclusion
proof cannot show that no newer review exists elsewhere in the log, so a signer that must
refuse every superseded receipt runs with ``--ledger`` (docs/signer.md, "Threat model").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from jurat.errors import JuratError
from jurat.ledger import Entry, Ledger, decode_receipt, verify_entry_proof
from jurat.signer._checks import Authentic, Request, SignerRefusal
from jurat.signer._state import SignerState

__all__ = ["check_review"]


def check_review(receipt: Authentic, request: Request, *, ledger: Ledger | None,
                 log_keys: Sequence[str], state: SignerState) -> str:
    """Check 6; returns how currency was established."""
    if ledger is not None:
        return _by_ledger(receipt, request, ledger, log_keys)
    return _by_proof(receipt, request, log_keys, state)


def _by_ledger(receipt: Authentic, request: Request, ledger: Ledger,
               log_keys: Sequence[str]) -> str:
    if not log_keys:
        raise SignerRefusal("review", "no log public key to check the ledger's checkpoints with, "
                            "so no ledger row can be trusted (fix: start the signer with --log-key "
                            "jurat-log.pub)")
    try:
        current = ledger.current_receipt(receipt.campaign_id, receipt.artifact_id, log_keys)
    except JuratError as exc:
        raise SignerRefusal(
            "review", f"the ledger does not verify, so none of its rows is trusted: "
            f"{exc}") from exc
    if current is None:
        raise SignerRefusal(
            "review", "the ledger holds no receipt for artifact "
            f"{receipt.artifact_id[:200]!r} of campaign {receipt.campaign_id[:200]!r}")
    entry = current.entry
    latest = entry.payload.get("receipt_sha256")
    if latest != request.receipt_sha256:
        # A newer review supersedes whether or not a signed checkpoint covers it yet: it
        # can only refuse.
        version = entry.payload.get("review_version")
        if version == receipt.review_version:
            raise SignerRefusal("review", f"the ledger holds another receipt (sha256:{latest}) for "
                                f"review v{version} of {receipt.artifact_id[:200]!r}")
        raise SignerRefusal(
            "review", f"superseded: the ledger's current review of "
            f"{receipt.artifact_id[:200]!r} is v{version} (receipt sha256:{latest}), "
            f"this receipt is v{receipt.review_version}")
    if not current.covered:
        raise SignerRefusal("review", f"this receipt's ledger entry (seq {entry.seq}) is past the "
                            "last checkpoint signed by the log key (tree size "
                            f"{current.checkpoint_size}), and an entry no signed checkpoint covers "
                            "is never a reason to grant (fix: ask again after the next checkpoint: "
                            "`jurat serve` signs one every few seconds, `jurat log checkpoint` "
                            "signs one now)")
    return (f"the ledger's current review (v{receipt.review_version}, seq {entry.seq}, under "
            f"the checkpoint signed at tree size {current.checkpoint_size})")


def _proven_entry(proof: dict[str, Any], log_keys: Sequence[str]) -> Entry:
    """Steps 1 and 2: the first log key under which the proof holds gives its entry."""
    if not log_keys:
        raise SignerRefusal(
            "review", "no log public key to check the proof's checkpoint with (fix: "
            "start the signer with --log-key jurat-log.pub, or with --ledger)")
    problems = []
    for key in log_keys:
        try:
            return verify_entry_proof(proof, key)
        except JuratError as exc:
            problems.append(str(exc))
        except Exception as exc:
            # The proof is as untrusted as the receipt: whatever it provokes is a refusal.
            problems.append(f"unexpected {type(exc).__name__}: {exc}")
    raise SignerRefusal("review", "the inclusion proof does not hold under the signer's log "
                        f"key(s): {'; '.join(p[:300] for p in problems)}")


def _by_proof(receipt: Authentic, request: Request, log_keys: Sequence[str],
              state: SignerState) -> str:
    if request.proof is None:
        raise SignerRefusal("review", "no proof: without --ledger the signer needs the receipt's "
                            "inclusion proof against a signed checkpoint (jurat signer request "
                            "RECEIPT --proof RECEIPT.proof.json)")
    entry = _proven_entry(request.proof, log_keys)
    # Step 3: the proven entry is this receipt, at the version it claims.
    try:
        same = (entry.kind == "receipt"
                and decode_receipt(entry.payload, seq=entry.seq) == request.bundle)
    except JuratError:
        same = False
    if not same:
        raise SignerRefusal(
            "review", f"the proof is for ledger entry {entry.seq}, which is not this "
            "receipt")
    if entry.payload.get("review_version") != receipt.review_version:
        raise SignerRefusal("review", "the ledger entry's review version is not the receipt's")
    # Step 4: nothing the signer has seen supersedes it.
    newer = state.newer_review(receipt.campaign_id, receipt.artifact_id,
                               receipt.review_version, request.receipt_sha256)
    if newer is not None:
        raise SignerRefusal(
            "review", f"superseded: review v{newer.version} of "
            f"{receipt.artifact_id[:200]!r} (receipt sha256:{newer.receipt_sha256}) "
            f"supersedes this v{receipt.review_version}")
    return (f"in the log at seq {entry.seq} under a signed checkpoint; no newer review seen "
            f"(v{receipt.review_version})")
