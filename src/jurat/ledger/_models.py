"""Frozen records the ledger hands out: entries, proofs, checkpoints, reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

from pydantic import Field

from jurat.models._base import Frozen

__all__ = [
    "ENTRY_KINDS",
    "Checkpoint",
    "ConsistencyProof",
    "CurrentReceipt",
    "Entry",
    "EntryKind",
    "EntryProof",
    "InclusionProof",
    "LedgerReport",
    "ReviewSlot",
]

EntryKind = Literal[
    "job_received",
    "sample_recorded",
    "claims_extracted",
    "checks_recorded",
    "work_claimed",
    "transport_retry",
    "transport_failed",
    "evaluation_failed",
    "unresolved_disagreement",
    "decision",
    "receipt",
    "supersession",
    "qualification_record",
]
ENTRY_KINDS: tuple[str, ...] = get_args(EntryKind)

_HEX64 = r"^[0-9a-f]{64}$"
Hex32 = Annotated[str, Field(pattern=_HEX64)]


class Entry(Frozen):
    """One journal entry, as stored and as hashed into the Merkle tree."""

    seq: int = Field(ge=0)
    """Position in the journal, gap-free from 0; also the Merkle leaf index."""
    kind: EntryKind
    """What happened; transport retries, evaluation failures and unresolved
    disagreement are separate kinds so they stay distinguishable."""
    job_id: str
    """The idempotent job this entry belongs to (see ``job_id()``)."""
    campaign_id: str | None = None
    """Campaign the entry belongs to, when it has one."""
    artifact_id: str | None = None
    """Artifact the entry belongs to, when it has one."""
    payload: dict[str, Any]
    """The payload; stored byte-exact as RFC 8785 canonical JSON."""
    payload_sha256: str = Field(pattern=_HEX64)
    """sha256 of the canonical payload bytes; this, not the payload, is in the leaf."""
    recorded_at: str
    """UTC time the entry was committed (RFC 3339, microseconds, ``Z``)."""
    prev_hash: str = Field(pattern=_HEX64)
    """``entry_hash`` of entry ``seq - 1``; 64 zeros for the first entry."""
    entry_hash: str = Field(pattern=_HEX64)
    """sha256 of the entry bytes (see ``entry_bytes()``); the chain link."""
    leaf_hash: str = Field(pattern=_HEX64)
    """RFC 9162 leaf hash: sha256(0x00 || entry bytes)."""


class CurrentReceipt(Frozen):
    """The latest receipt of an artifact, its entries checked up to a checkpoint signed by
    the log key (``Ledger.current_receipt``)."""

    entry: Entry
    """The receipt's entry, payload included; its hashes and chain link checked."""
    receipt: bytes
    """The receipt's bytes, as the entry holds them."""
    checkpoint_size: int = Field(ge=0)
    """Tree size of the latest stored checkpoint signed by the log key; 0 when there is
    none."""

    @property
    def covered(self) -> bool:
        """Whether that signed checkpoint covers the entry: else only its own hashes vouch
        for it, which whoever can write the database can recompute."""
        return self.entry.seq < self.checkpoint_size


class ReviewSlot(Frozen):
    """The review version a new receipt for a (campaign, artifact) must carry."""

    version: int = Field(ge=1)
    """1 for the first receipt of an artifact, previous + 1 afterwards."""
    supersedes: str | None = None
    """sha256 of the previous receipt's bytes, or None for version 1."""
    previous_seq: int | None = None
    """Journal position of the receipt being superseded, if any."""


@dataclass(frozen=True)
class CampaignHistory:
    """What a campaign already has in the ledger (``Ledger.campaign_history``)."""

    jobs: frozenset[str]
    """Job ids with at least one entry."""
    receipted: frozenset[str]
    """Artifact ids with at least one receipt."""


class InclusionProof(Frozen):
    """RFC 9162 inclusion proof of one leaf in a tree of a given size."""

    leaf_index: int = Field(ge=0)
    """Index of the leaf (the entry's ``seq``)."""
    tree_size: int = Field(ge=1)
    """Size of the tree the proof is for."""
    leaf_hash: str = Field(pattern=_HEX64)
    """The leaf hash being proven (hex)."""
    root_hash: str = Field(pattern=_HEX64)
    """The tree head at ``tree_size`` the proof leads to (hex)."""
    hashes: tuple[Hex32, ...]
    """Audit path, leaf side first (hex), as RFC 9162 §2.1.3.1 orders it."""


class ConsistencyProof(Frozen):
    """RFC 9162 consistency proof between two sizes of the same log."""

    old_size: int = Field(ge=1)
    """Size of the older tree."""
    new_size: int = Field(ge=1)
    """Size of the newer tree."""
    old_root: str = Field(pattern=_HEX64)
    """Tree head at ``old_size`` (hex)."""
    new_root: str = Field(pattern=_HEX64)
    """Tree head at ``new_size`` (hex)."""
    hashes: tuple[Hex32, ...]
    """Proof nodes (hex), in RFC 9162 §2.1.4.1 order."""


class Checkpoint(Frozen):
    """A C2SP tlog-checkpoint: a signed note committing to a tree size and head."""

    origin: str
    """The log's origin line, which identifies it."""
    tree_size: int = Field(ge=0)
    """Number of entries the checkpoint commits to."""
    root_hash: str = Field(pattern=_HEX64)
    """Tree head at ``tree_size`` (hex; the note itself carries base64)."""
    extensions: tuple[str, ...] = ()
    """Extra body lines after the root hash, kept verbatim."""
    note: str
    """The whole signed note text, exactly as signed and stored."""
    key_name: str | None = None
    """Name of the key whose signature was verified; None if not verified."""
    key_id: str | None = None
    """4-byte C2SP key ID of that key (hex); None if not verified."""


class EntryProof(Frozen):
    """Everything an offline verifier needs to check one entry is in the log."""

    entry: Entry
    """The entry, payload included."""
    proof: InclusionProof
    """Inclusion of the entry's leaf in the checkpointed tree."""
    checkpoint: str
    """Signed checkpoint note whose tree size and root the proof reaches."""


class LedgerReport(Frozen):
    """What ``Ledger.verify()`` checked; returned only when every check held."""

    backend: str
    """``sqlite`` or ``postgresql``."""
    tree_size: int
    """Number of entries verified (seq 0 .. tree_size - 1)."""
    root_hash: str
    """Recomputed Merkle tree head (hex)."""
    head_hash: str
    """``entry_hash`` of the last entry (64 zeros when empty)."""
    kinds: dict[str, int]
    """Entries per kind."""
    checkpoints_checked: int
    """Checkpoints stored in the database whose roots were recomputed."""
    signatures_checked: int
    """Checkpoint signatures verified against the given public key."""
    external_checkpoint: str | None
    """Path of the checkpoint file kept outside the database, if configured."""
    external_tree_size: int | None
    """Tree size that external checkpoint commits to, when it exists."""
    warnings: tuple[str, ...] = ()
    """Conditions that are not tampering but weaken the guarantee."""
