"""Append-only journal with a Merkle transparency log and signed checkpoints.

Every step of an evaluation is an :class:`Entry` of one kind —
``job_received``, ``sample_recorded``, ``claims_extracted`` (a claim
extraction's whole answer, docs/grounding.md), ``transport_retry``,
``evaluation_failed``, ``unresolved_disagreement``, ``decision``,
``receipt``, ``supersession`` — so transport retries, evaluation failures
and unresolved disagreement stay distinguishable (seed 000).

Append-only is an invariant, not a convention (seed 001): database triggers
refuse UPDATE, DELETE and TRUNCATE and any INSERT that would leave a gap or
fork; each entry carries the hash of the previous one; an RFC 9162 Merkle
tree over the entry bytes is committed to by C2SP signed checkpoints, one
copy of which is kept outside the database so a restored older copy is
caught. :meth:`Ledger.verify` recomputes all of it.

Entry bytes are the canonical JSON of the entry's fields with the payload's
sha256 rather than the payload itself (see ``_entry``); the payload is
stored byte-exact beside it.

At scale (docs/ledger-format.md has the layout; bench/README.md the numbers):

* The Merkle tree's nodes are stored as entries are appended (``_tree``),
  so :meth:`Ledger.inclusion_proof`, :meth:`Ledger.consistency_proof`,
  :meth:`Ledger.prove_entry` and an append each read O(log n) hashes. They
  are laid out as C2SP tlog-tiles (``_tiles``): :meth:`Ledger.tile`,
  :meth:`Ledger.entry_bundle` and :meth:`Ledger.export_tiles` hand them to
  tlog-tiles tooling.
* After a run, sign one checkpoint and prove every receipt against it::

      note = ledger.checkpoint(signer)
      proofs = ledger.prove_entries([entry.seq for entry in receipts], note)

  ``prove_entries(seqs, checkpoint=None) -> list[EntryProof]`` reads each
  stored node once for the whole list: O(k log n) for k entries.
* From asyncio, appends that arrive together share one transaction::

      async with ledger.group_commit() as log:
          entry = await log.append(kind, job_id, payload, campaign_id=..., artifact_id=...)

  Each ``await`` returns once its entry is committed (durable); the commit
  runs on a worker thread, so the event loop never waits on fsync.
  :meth:`Ledger.append` (one transaction per call) is unchanged, and
  :meth:`Ledger.append_many` commits a list in one transaction.
* A run's worker processes append through ``remote_group_commit(sock)``: the
  parent's ``AppendServer`` commits every worker's waiting batches in one
  transaction, so the workers run no commit thread (``_remote``).
"""

from jurat.ledger._checkpoint import Precheck
from jurat.ledger._group import GroupCommit
from jurat.ledger._hold import holder_text
from jurat.ledger._jobs import decode_receipt, job_id, receipt_payload
from jurat.ledger._logkey import (
    LOG_KEY_NAME,
    LOG_PUBLIC_NAME,
    default_log_key_path,
    default_log_public_path,
    legacy_log_key_path,
    load_log_key,
    load_log_verifier,
    load_or_create_log_key,
    log_key_beside,
    log_keygen,
    log_public_beside,
    log_public_path,
    needed_log_key,
    write_log_public,
    wrong_log_key,
)
from jurat.ledger._merkle import leaf_hash, verify_consistency, verify_inclusion
from jurat.ledger._models import (
    ENTRY_KINDS,
    CampaignHistory,
    Checkpoint,
    ConsistencyProof,
    CurrentReceipt,
    Entry,
    EntryKind,
    EntryProof,
    InclusionProof,
    LedgerReport,
    ReviewSlot,
)
from jurat.ledger._note import LogSigner, parse_checkpoint
from jurat.ledger._remote import AppendServer, remote_group_commit
from jurat.ledger._store import Ledger, open_ledger
from jurat.ledger._tiles import TILE_WIDTH, Tile, tile_path, tiles_for_size
from jurat.ledger._url import ledger_url
from jurat.ledger._verify import verify_entry_proof, verify_receipt_inclusion

__all__ = [
    "holder_text",
    "ENTRY_KINDS",
    "AppendServer",
    "Checkpoint",
    "ConsistencyProof",
    "CurrentReceipt",
    "Entry",
    "EntryKind",
    "EntryProof",
    "GroupCommit",
    "InclusionProof",
    "LOG_KEY_NAME",
    "LOG_PUBLIC_NAME",
    "Ledger",
    "LedgerReport",
    "LogSigner",
    "Precheck",
    "CampaignHistory",
    "ReviewSlot",
    "TILE_WIDTH",
    "Tile",
    "decode_receipt",
    "default_log_key_path",
    "default_log_public_path",
    "job_id",
    "leaf_hash",
    "legacy_log_key_path",
    "load_log_key",
    "load_log_verifier",
    "load_or_create_log_key",
    "log_key_beside",
    "log_keygen",
    "log_public_beside",
    "log_public_path",
    "needed_log_key",
    "ledger_url",
    "open_ledger",
    "parse_checkpoint",
    "receipt_payload",
    "remote_group_commit",
    "tile_path",
    "tiles_for_size",
    "verify_consistency",
    "verify_entry_proof",
    "verify_inclusion",
    "verify_receipt_inclusion",
    "write_log_public",
    "wrong_log_key",
]
