"""The latest receipt of an artifact, read the way a reader that pays on it may trust it.

``Ledger.latest_receipt`` answers from the (campaign, artifact) index and checks the one
row it finds against that row's own hashes. A newer review edited behind the ledger's back
(triggers dropped, its artifact id or kind changed, no hash recomputed) no longer answers
that query, so it is not found at all and the review it superseded comes back as the
latest: ``jurat log verify`` would refuse the ledger, the read does not notice.
``current_receipt`` does not take the index's word for what is absent:

1. the latest checkpoint stored in the ledger must be signed by one of the given log keys
   (``parse_checkpoint``);
2. from the receipt the index names (or the checkpoint's size, if that is lower) to the
   tail, every entry must match its own hashes and link to the one before it
   (``chained_rows``, as a checkpoint checks what it signs), so an edited row anywhere
   after the receipt is refused, whatever it claims to be about;
3. those leaves, on the stored tree's compact range of the entries before them, must give
   the signed root at the checkpoint's size: the entries a signature covers are the ones
   that were signed (a forged stored node cannot help, it would change the root);
4. the answer is the last receipt of (campaign, artifact) among the checked entries, with
   the signed checkpoint's size, so the caller knows whether that checkpoint covers it.

Entries appended after the last signed checkpoint are checked by step 2 alone, which an
editor who also recomputes their hashes defeats: no signature covers them yet. What such
an entry may mean is the caller's rule (the settlement signer: it may supersede, it never
grants; docs/signer.md). The cost is one pass over the entries since the receipt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import Connection, select

from jurat.errors import TamperError
from jurat.ledger._checkpoint import chained_rows, stored_frontier
from jurat.ledger._entry import entry_from_row
from jurat.ledger._jobs import decode_receipt
from jurat.ledger._merkle import CompactRange
from jurat.ledger._models import Checkpoint, CurrentReceipt
from jurat.ledger._note import parse_checkpoint
from jurat.ledger._queries import receipt_row
from jurat.ledger._treestore import current_epoch

if TYPE_CHECKING:
    from jurat.ledger._backend import Tables

__all__ = ["current_receipt"]


def _signed_checkpoint(conn: Connection, tables: Tables,
                       log_keys: Sequence[Ed25519PublicKey | str]) -> Checkpoint | None:
    """Step 1: the latest stored checkpoint, as signed by one of ``log_keys``; None if the
    ledger has none. One that no key verifies is refused, never passed over for an older
    one: a checkpoint row nobody signed is itself an edit."""
    c = tables.checkpoints
    row = conn.execute(select(c.c.id, c.c.note).order_by(c.c.id.desc()).limit(1)).first()
    if row is None:
        return None
    problems = []
    for key in log_keys:
        try:
            return parse_checkpoint(str(row.note), key)
        except TamperError as exc:
            problems.append(str(exc))
    raise TamperError(f"checkpoint {row.id} is not signed by the given log key(s): "
                      f"{'; '.join(problems) or 'no log key given'}")


def current_receipt(conn: Connection, tables: Tables, campaign_id: str, artifact_id: str,
                    log_keys: Sequence[Ed25519PublicKey | str]) -> CurrentReceipt | None:
    """The latest receipt of (campaign, artifact), checked as the module docstring says;
    None when the ledger holds none. Raises TamperError naming the first entry or
    checkpoint that does not hold."""
    named = receipt_row(conn, tables.entries, subject=(campaign_id, artifact_id))
    if named is None:
        return None
    checkpoint = _signed_checkpoint(conn, tables, log_keys)
    signed = 0 if checkpoint is None else checkpoint.tree_size
    # Step 2 starts at the named receipt, or earlier when it is past the checkpoint: the
    # entries a signed root covers are then walked too, for step 3.
    start = min(int(named.seq), signed)
    epoch = current_epoch(conn, tables.tree)
    rng = CompactRange.resume(start, stored_frontier(conn, tables, epoch, start))

    def reached() -> None:
        # Step 3, once the leaves reach the signed size.
        if checkpoint is None or rng.size != signed:
            return
        if rng.root().hex() != checkpoint.root_hash:
            raise TamperError(f"seq {start}..{signed - 1}: the entries differ from the ones "
                              f"the checkpoint signed at tree size {signed} commits to "
                              "(history rewritten)")

    reached()
    latest = None
    for row in chained_rows(conn, tables, start):
        if int(row.seq) != rng.size:
            raise TamperError(f"seq {rng.size}: entry missing")
        if (row.kind, row.campaign_id, row.artifact_id) == ("receipt", campaign_id, artifact_id):
            latest = row
        rng.append(bytes.fromhex(row.leaf_hash))
        reached()
    if rng.size < signed:
        raise TamperError(f"seq {rng.size}: the checkpoint signed at tree size {signed} commits "
                          f"to more entries than the ledger has: truncated")
    if latest is None:
        return None
    entry = entry_from_row(latest._mapping)
    return CurrentReceipt(entry=entry, receipt=decode_receipt(entry.payload, seq=entry.seq),
                          checkpoint_size=signed)
