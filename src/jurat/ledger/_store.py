"""The Ledger: appending entries, finding receipts, checkpoints and proofs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import Connection, select
from sqlalchemy.exc import SQLAlchemyError

from jurat.errors import LedgerError, TamperError
from jurat.ledger._append import AppendRequest, Tip, append_batch, prepare
from jurat.ledger._backend import Backend, default_checkpoint_path
from jurat.ledger._checkpoint import Precheck, precheck, sign_checkpoint
from jurat.ledger._current import current_receipt
from jurat.ledger._entry import entry_from_row
from jurat.ledger._export import bundle_bytes, export_directory, tile_bytes
from jurat.ledger._group import GroupCommit, ThreadCommitter
from jurat.ledger._hold import hold_campaign
from jurat.ledger._jobs import decode_receipt, receipt_payload
from jurat.ledger._migrate import widen_kinds
from jurat.ledger._models import (
    CampaignHistory,
    Checkpoint,
    ConsistencyProof,
    CurrentReceipt,
    Entry,
    EntryProof,
    InclusionProof,
    LedgerReport,
    ReviewSlot,
)
from jurat.ledger._note import LogSigner, parse_unverified_checkpoint
from jurat.ledger._proofs import (
    TreeIncomplete,
    prove_against,
    prove_consistency,
    prove_inclusion,
    prove_latest,
)
from jurat.ledger._queries import receipt_row, slot_after
from jurat.ledger._tiles import TILE_WIDTH, Tile
from jurat.ledger._treestore import sync_to_entries
from jurat.ledger._verify import verify_ledger

__all__ = ["Ledger", "open_ledger"]

_BATCH = 1000
_T = TypeVar("_T")


@contextmanager
def _db(action: str) -> Iterator[None]:
    """Turn driver and SQLAlchemy errors into LedgerError at the boundary."""
    try:
        yield
    except SQLAlchemyError as exc:
        detail = getattr(exc, "orig", None) or exc
        raise LedgerError(f"{action} failed: {detail}") from exc


def open_ledger(
    url: str | None = None,
    *,
    checkpoint_path: str | os.PathLike[str] | None = None,
    create: bool = True,
    prefix: str = "jurat_",
    schema: str | None = None,
) -> Ledger:
    """Open (and by default create) the ledger at ``url``.

    ``url`` is ``sqlite:///path.db`` or ``postgresql://…``; None means
    ``sqlite:///jurat.db`` in the working directory. ``checkpoint_path`` is
    the checkpoint file kept outside the database (default: next to a SQLite
    file, under ``$XDG_STATE_HOME/jurat`` for PostgreSQL). With
    ``create=False`` a missing ledger is a :class:`LedgerError`, not a new one.
    ``prefix`` and ``schema`` (PostgreSQL) let several ledgers share a database.

    A ledger written before the Merkle tree's nodes were stored is migrated
    here, once: the table is created and filled from the stored leaf hashes
    (about 2 nodes per entry; see docs/ledger-format.md, "Migration"). A writer's
    open (``create=True``) also widens an entries table whose kind constraint predates
    a kind of ``ENTRY_KINDS`` (``_migrate``); a reader's leaves it as it is.
    """
    backend = Backend(url, prefix=prefix, schema=schema)
    migrate = False
    try:
        if backend.exists():
            backend.check_format()
            if not backend.exists("tree"):
                with _db("adding the Merkle tree table"):
                    backend.install()
                migrate = True
            if create:
                with _db("widening the entry kinds the ledger admits"):
                    widen_kinds(backend)
        elif create:
            with _db("creating the ledger"):
                backend.install()
        else:
            raise LedgerError(f"no ledger at {backend.display_url()}")
    except BaseException:
        backend.dispose()
        raise
    path = (
        Path(checkpoint_path)
        if checkpoint_path is not None
        else default_checkpoint_path(backend.url, prefix=prefix, schema=schema)
    )
    ledger = Ledger(backend, checkpoint_path=path)
    if migrate:
        try:
            ledger._sync_tree()
        except BaseException:
            ledger.close()
            raise
    return ledger


class Ledger:
    """An append-only, hash-chained journal with a Merkle log over its entries.

    Safe to share between threads; several processes may append to the same
    database, serialised by the database's write lock.
    """

    def __init__(self, backend: Backend, *, checkpoint_path: Path) -> None:
        self._backend = backend
        self._t = backend.tables
        self._sql = backend.commit_sql
        self._tip: Tip | None = None
        self.checkpoint_path = checkpoint_path

    # -- lifecycle -------------------------------------------------------

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._backend.name

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return self._backend.display_url()

    def hold_campaign(
        self, campaign_id: str, *, holder: str, shared: bool = False
    ) -> AbstractContextManager[None]:
        """Hold the campaign as its one writer (``shared``: one of its servers) until the
        block ends; ConfigError naming the holder when another has it (ledger/_hold.py)."""
        return hold_campaign(self._backend, campaign_id, holder=holder, shared=shared)

    def close(self) -> None:
        """Release every database connection."""
        self._backend.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- appending -------------------------------------------------------

    def append(
        self,
        kind: str,
        job_id: str,
        payload: dict[str, Any],
        *,
        campaign_id: str | None = None,
        artifact_id: str | None = None,
    ) -> Entry:
        """Append one entry and commit it durably; return it as stored.

        A ``receipt`` payload (see :func:`receipt_payload`) must carry the
        review version the ledger expects for its (campaign, artifact): 1, or
        the previous receipt's version + 1 with ``supersedes`` its sha256. A
        ``supersession`` entry is then written just before it, in the same
        transaction. Appending the same receipt for a job again returns the
        stored entry; a different receipt for a job that has one is refused.

        One transaction per call; from asyncio, :meth:`group_commit` lets
        concurrent appends share one.
        """
        request = prepare(kind, job_id, payload, campaign_id=campaign_id, artifact_id=artifact_id)
        (result,) = self._commit([request])
        if isinstance(result, LedgerError):
            raise result
        return result

    def append_many(self, items: Sequence[dict[str, Any]]) -> list[Entry]:
        """Append several entries in one transaction: all of them commit, or none.

        Each item holds :meth:`append`'s arguments by name (``kind``,
        ``job_id``, ``payload``, optionally ``campaign_id`` and
        ``artifact_id``). For bulk loads; one refused item refuses them all.
        """
        requests = [prepare(**item) for item in items]
        with _db("appending to the ledger"), self._backend.write() as conn:
            results, tip = append_batch(conn, self._t, self._sql, requests, self._tip)
            for result in results:
                if isinstance(result, LedgerError):
                    raise result
        self._tip = tip
        return [r for r in results if isinstance(r, Entry)]

    def group_commit(self, *, max_batch: int = 1024) -> GroupCommit:
        """Durable appends for concurrent asyncio tasks, sharing transactions.

        ``async with ledger.group_commit() as log: await log.append(...)``:
        appends that arrive while a commit is in progress go into the next
        transaction together; each caller resumes once its entry is
        committed, and the commit runs on a worker thread, never on the event
        loop. See :class:`GroupCommit`.
        """
        return GroupCommit(ThreadCommitter(self), max_batch=max_batch)

    def _commit(
        self, requests: list[AppendRequest], *, payloads: bool = True
    ) -> list[Entry | LedgerError]:
        """One write transaction for ``requests``; each gets its entry or its own refusal
        (``payloads``: see ``append_batch``)."""
        with _db("appending to the ledger"), self._backend.write() as conn:
            results, tip = append_batch(
                conn, self._t, self._sql, requests, self._tip, payloads=payloads
            )
        # Only now, committed, may the next batch start from this tail (see Tip).
        self._tip = tip
        return results

    def append_receipt(
        self,
        job_id: str,
        receipt: bytes,
        *,
        campaign_id: str,
        artifact_id: str,
        review: ReviewSlot,
        extra: dict[str, Any] | None = None,
    ) -> Entry:
        """Append a receipt whose bytes were signed for ``review`` (from :meth:`next_review`)."""
        payload = receipt_payload(
            receipt, review_version=review.version, supersedes=review.supersedes, extra=extra
        )
        return self.append(
            "receipt", job_id, payload, campaign_id=campaign_id, artifact_id=artifact_id
        )

    # -- reading ---------------------------------------------------------

    def size(self) -> int:
        """Number of entries (the next ``seq``)."""
        e = self._t.entries
        with _db("reading the ledger"), self._backend.read() as conn:
            tail = conn.execute(select(e.c.seq).order_by(e.c.seq.desc()).limit(1)).first()
        return 0 if tail is None else int(tail.seq) + 1

    def entry(self, seq: int) -> Entry:
        """The entry at ``seq``; :class:`LedgerError` if there is none."""
        with _db("reading the ledger"), self._backend.read() as conn, self._sql.cursor(
                conn) as cur:
            rows = self._sql.select_entries(cur, {"seq": seq}, after=-1, limit=1)
        if not rows:
            raise LedgerError(f"no entry with seq {seq}")
        return entry_from_row(rows[0])

    def entries(
        self,
        *,
        job_id: str | None = None,
        kind: str | None = None,
        after_seq: int | None = None,
        campaign_id: str | None = None,
        artifact_id: str | None = None,
    ) -> Iterator[Entry]:
        """Entries in ``seq`` order, filtered; each row's hashes are checked as it is read.

        Reads in batches, each in its own short transaction, so an abandoned
        iterator holds no connection.
        """
        # Plain SQL on the driver's cursor, made once per set of filters (``_commitsql``).
        given = {"job_id": job_id, "kind": kind, "campaign_id": campaign_id,
                 "artifact_id": artifact_id}
        equal = {name: value for name, value in given.items() if value is not None}
        cursor = -1 if after_seq is None else after_seq
        while True:
            with _db("reading the ledger"), self._backend.read() as conn, self._sql.cursor(
                    conn) as cur:
                rows = self._sql.select_entries(cur, equal, after=cursor, limit=_BATCH)
            for row in rows:
                yield entry_from_row(row)
            if len(rows) < _BATCH:
                return
            cursor = int(rows[-1]["seq"])

    def samples_for_job(self, job_id: str) -> list[dict[str, Any]]:
        """Payloads of the job's ``sample_recorded`` entries, in order: what a resume replays."""
        return [entry.payload for entry in self.entries(job_id=job_id, kind="sample_recorded")]

    def receipt_for_job(self, job_id: str) -> bytes | None:
        """The receipt already recorded for ``job_id``, so a resubmitted job returns it."""
        with _db("reading the ledger"), self._backend.read() as conn:
            row = receipt_row(conn, self._t.entries, job_id=job_id)
        if row is None:
            return None
        entry = entry_from_row(row._mapping)
        return decode_receipt(entry.payload, seq=entry.seq)

    def latest_receipt(self, campaign_id: str, artifact_id: str) -> tuple[Entry, bytes] | None:
        """The newest receipt for an artifact of a campaign, with its bytes.

        The index's answer, the row it finds checked against its own hashes: a newer row
        edited so that it no longer answers the query is not found. A reader that pays on
        the answer asks :meth:`current_receipt`."""
        with _db("reading the ledger"), self._backend.read() as conn:
            row = receipt_row(conn, self._t.entries, subject=(campaign_id, artifact_id))
        if row is None:
            return None
        entry = entry_from_row(row._mapping)
        return entry, decode_receipt(entry.payload, seq=entry.seq)

    def current_receipt(
        self, campaign_id: str, artifact_id: str, log_keys: Sequence[Ed25519PublicKey | str]
    ) -> CurrentReceipt | None:
        """:meth:`latest_receipt` for a reader that pays on the answer: every entry from that
        receipt to the tail checked against its hashes, its chain link and the latest
        checkpoint, which one of ``log_keys`` must have signed (see ``_current``). Raises
        TamperError naming the first entry or checkpoint that does not hold.

        One read transaction; costs one pass over the entries appended since the receipt.
        """
        with _db("reading the ledger"), self._backend.read() as conn:
            return current_receipt(conn, self._t, campaign_id, artifact_id, log_keys)

    def next_review(self, campaign_id: str, artifact_id: str) -> ReviewSlot:
        """The review version and ``supersedes`` digest a new receipt must be signed with.

        Another writer may take the slot first; :meth:`append` then refuses
        the receipt rather than fork the review history.
        """
        with _db("reading the ledger"), self._backend.read() as conn, self._sql.cursor(
                conn) as cur:
            row = self._sql.newest_receipt(cur, campaign_id, artifact_id)
        return ReviewSlot(version=1) if row is None else slot_after(entry_from_row(row))

    def campaign_history(self, campaign_id: str) -> CampaignHistory:
        """Which jobs of a campaign have entries and which artifacts have receipts.

        One read for a whole run: a job in neither set has nothing to resume, so the
        runner skips its per-job reads (a fresh campaign of 10^5 artifacts saves 2 x 10^5
        queries). It is a snapshot: a writer that takes a review slot after it is caught
        by the append, which checks the slot inside its transaction.
        """
        e = self._t.entries
        with _db("reading the ledger"), self._backend.read() as conn:
            jobs = conn.execute(
                select(e.c.job_id).where(e.c.campaign_id == campaign_id).distinct()
            ).scalars()
            job_ids = frozenset(str(job) for job in jobs)
            receipted = conn.execute(
                select(e.c.artifact_id)
                .where(e.c.campaign_id == campaign_id, e.c.kind == "receipt")
                .distinct()
            ).scalars()
            artifacts = frozenset(str(artifact) for artifact in receipted)
        return CampaignHistory(jobs=job_ids, receipted=artifacts)

    def receipts(self, *, campaign_id: str | None = None) -> Iterator[tuple[Entry, bytes]]:
        """Every receipt entry with its bytes, in order: what ``jurat replay`` re-derives."""
        for entry in self.entries(kind="receipt", campaign_id=campaign_id):
            yield entry, decode_receipt(entry.payload, seq=entry.seq)

    # -- checkpoints and proofs -----------------------------------------

    def checkpoints(self) -> list[Checkpoint]:
        """Checkpoints stored in the database, oldest first (signatures not checked)."""
        c = self._t.checkpoints
        with _db("reading checkpoints"), self._backend.read() as conn:
            rows = conn.execute(select(c.c.note).order_by(c.c.id)).all()
        return [parse_unverified_checkpoint(row.note) for row in rows]

    def latest_checkpoint(self) -> Checkpoint | None:
        """The newest checkpoint stored in the database (signature not checked), or None."""
        c = self._t.checkpoints
        with _db("reading checkpoints"), self._backend.read() as conn:
            row = conn.execute(select(c.c.note).order_by(c.c.id.desc()).limit(1)).first()
        return None if row is None else parse_unverified_checkpoint(row.note)

    def checkpoint(self, signer: LogSigner, *, checked: Precheck | None = None) -> str:
        """Sign the current tree head, store it, write it to the checkpoint file; return the note.

        Refuses (TamperError) when the database no longer reaches the last
        stored or external checkpoint, so a restored or rewritten database is
        never re-signed. ``checked``: a :meth:`precheck` of this ledger, whose
        entries are then not read again.
        """
        with _db("writing a checkpoint"), self._backend.write() as conn:
            return sign_checkpoint(conn, self._t, signer, self.checkpoint_path, checked)

    def precheck(self, prior: Precheck | None = None) -> Precheck | None:
        """Check the entries the next :meth:`checkpoint` will sign, those appended since
        the last one (or since ``prior``), while other writers may still append: a run's
        parent process does this while its workers run, so that the checkpoint at the end
        reads only the last few. None when they cannot be checked now (the tree being
        rebuilt under a concurrent writer, or anything wrong): the checkpoint then checks
        every entry itself, and refuses what is wrong.
        """
        try:
            with self._backend.read() as conn:
                return precheck(conn, self._t, prior)
        except (LedgerError, SQLAlchemyError):
            return None

    def inclusion_proof(self, seq: int, tree_size: int | None = None) -> InclusionProof:
        """RFC 9162 inclusion proof of entry ``seq`` in the tree of ``tree_size`` (default: all).

        O(log n) reads of the stored tree.
        """
        return self._read_tree(
            "building an inclusion proof",
            lambda conn: prove_inclusion(conn, self._t, seq, tree_size),
        )

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> ConsistencyProof:
        """RFC 9162 consistency proof from ``old_size`` to ``new_size`` (default: all).

        O(log n) reads of the stored tree.
        """
        return self._read_tree(
            "building a consistency proof",
            lambda conn: prove_consistency(conn, self._t, old_size, new_size),
        )

    def prove_entry(self, seq: int) -> EntryProof:
        """Entry ``seq`` with its inclusion proof in the latest stored checkpoint covering it."""
        return self._read_tree(
            "building an inclusion proof", lambda conn: prove_latest(conn, self._t, seq)
        )

    def prove_entries(
        self, seqs: Sequence[int], checkpoint: Checkpoint | str | None = None
    ) -> list[EntryProof]:
        """Each entry of ``seqs`` with its inclusion proof in one checkpoint, in order.

        ``checkpoint`` is the note :meth:`checkpoint` returned (or its
        parsed :class:`Checkpoint`); None means the latest stored one. Sign
        one checkpoint after a run, then prove every receipt of the run
        against it: the stored tree is read once for all of them, O(k log n)
        for k entries. Raises TamperError when the ledger no longer reaches
        the checkpoint's root.
        """
        anchor, wanted = self._anchor(checkpoint), list(seqs)
        return self._read_tree(
            "building inclusion proofs", lambda conn: prove_against(conn, self._t, wanted, anchor)
        )

    def _anchor(self, checkpoint: Checkpoint | str | None) -> Checkpoint:
        if isinstance(checkpoint, Checkpoint):
            return checkpoint
        if isinstance(checkpoint, str):
            return parse_unverified_checkpoint(checkpoint)
        stored = self.checkpoints()
        if not stored:
            raise LedgerError("no checkpoint yet; run `jurat log checkpoint`")
        return stored[-1]

    def _read_tree(self, action: str, build: Callable[[Connection], _T]) -> _T:
        """Run ``build(conn)`` in a read transaction; if the tree is behind, complete it once."""
        try:
            with _db(action), self._backend.read() as conn:
                return build(conn)
        except TreeIncomplete:
            # Entries appended by an older jurat have no nodes yet.
            self._sync_tree()
        try:
            with _db(action), self._backend.read() as conn:
                return build(conn)
        except TreeIncomplete as exc:
            raise TamperError(f"{exc}: the Merkle tree table was edited") from exc

    def _sync_tree(self) -> None:
        """Bring the stored tree level with the entries (the migration, or catching up)."""
        with _db("building the Merkle tree"), self._backend.write() as conn:
            sync_to_entries(conn, self._t)

    # -- tiles -------------------------------------------------------------

    def tile(self, tile: Tile) -> bytes:
        """The bytes of a C2SP tlog tile: its hashes concatenated (see ``_tiles``)."""
        return self._read_tree("reading a tile", lambda conn: tile_bytes(conn, self._t, tile))

    def entry_bundle(self, index: int, width: int = TILE_WIDTH) -> bytes:
        """The C2SP entry bundle ``tile/entries/<index>[.p/<width>]``: each leaf's entry bytes."""
        return bundle_bytes(self.entries(after_seq=index * TILE_WIDTH - 1), index, width)

    def export_tiles(
        self, directory: str | os.PathLike[str], checkpoint: Checkpoint | str | None = None
    ) -> int:
        """Write a checkpoint (default: the latest), and every tile and entry bundle of its size.

        The layout under ``directory`` is C2SP tlog-tiles', so a static file
        server over it serves the log to tlog-tiles clients. Full tiles
        already there are kept (they never change). Returns files written.
        """
        anchor = self._anchor(checkpoint)
        self.prove_entries([], anchor)  # the stored tree reaches its root, or TamperError
        return export_directory(Path(directory), anchor, self.tile, self.entry_bundle)

    # -- verification ----------------------------------------------------

    def verify(self, *, public_key: Ed25519PublicKey | str | None = None) -> LedgerReport:
        """Recompute everything from the stored bytes; see :func:`verify_ledger` for the steps.

        Raises :class:`TamperError` naming the first bad sequence number.
        With ``public_key`` (Ed25519 key or C2SP verifier key string) every
        checkpoint signature is checked too.
        """
        with _db("verifying the ledger"), self._backend.read() as conn:
            return verify_ledger(
                conn,
                self._t,
                backend=self.backend,
                checkpoint_path=self.checkpoint_path,
                public_key=public_key,
            )
