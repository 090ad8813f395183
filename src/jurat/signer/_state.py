"""The signer's durable state and its own append-only decision log (one SQLite file).

Three tables in the ``--state`` file (docs/signer.md, "State and log"):

``decisions``  every request's outcome, granted or refused, in order: the signer's own
               append-only log. Triggers refuse UPDATE and DELETE, and each row carries the
               SHA-256 of the previous row's hash and its own fields, so a row edited or
               removed by hand breaks the chain (``verify_log``).
``grants``     one row per authorisation, keyed by the DSSE payload's SHA-256 (the
               settlement's ``receipt``) and unique by receipt digest and nonce: the
               ``replay`` check reads it. Also append-only.
``reviews``    the review versions the signer has seen in authenticated receipts, so that
               without ``--ledger`` it still refuses a receipt it knows to be superseded.

The grant and its log row commit in one transaction, with ``synchronous=FULL``, before the
signature is returned: a crash can lose an answer, never create a second authorisation.
Nothing secret is written here: the settlement key stays in the signer's memory.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path
from types import TracebackType

from jurat.canonical import canonical_json
from jurat.errors import ConfigError, TamperError
from jurat.models import Frozen

__all__ = ["Decided", "Grant", "SeenReview", "SignerState"]

_ZERO = "0" * 64
_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
  seq INTEGER PRIMARY KEY, at TEXT NOT NULL, outcome TEXT NOT NULL, check_name TEXT,
  reason TEXT, receipt_sha256 TEXT, payload_sha256 TEXT, campaign_id TEXT, artifact_id TEXT,
  review_version INTEGER, nonce TEXT, signature TEXT, prev_hash TEXT NOT NULL,
  entry_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS grants (
  payload_sha256 TEXT PRIMARY KEY, receipt_sha256 TEXT NOT NULL UNIQUE,
  campaign_id TEXT NOT NULL, artifact_id TEXT NOT NULL, review_version INTEGER NOT NULL,
  nonce INTEGER NOT NULL UNIQUE, decision_seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS reviews (
  receipt_sha256 TEXT PRIMARY KEY, campaign_id TEXT NOT NULL, artifact_id TEXT NOT NULL,
  version INTEGER NOT NULL, supersedes TEXT);
CREATE INDEX IF NOT EXISTS reviews_subject ON reviews (campaign_id, artifact_id, version);
CREATE INDEX IF NOT EXISTS grants_subject ON grants (campaign_id, artifact_id);
"""
_APPEND_ONLY = ("decisions", "grants", "reviews")


class Grant(Frozen):
    """An authorisation the signer gave."""

    payload_sha256: str
    """SHA-256 of the receipt's DSSE payload: the settlement's ``receipt``."""
    receipt_sha256: str
    """The receipt digest (docs/receipt-format.md §2.1)."""
    campaign_id: str
    """Campaign id."""
    artifact_id: str
    """Artifact id."""
    review_version: int
    """The receipt's review version."""
    nonce: int
    """The settlement's nonce: 1 for the signer's first grant, then one more each time."""


class SeenReview(Frozen):
    """A review version the signer has seen in an authenticated receipt."""

    version: int
    """Its review version."""
    receipt_sha256: str
    """Its receipt digest."""


class Decided(Frozen):
    """One row of the decision log, as written."""

    outcome: str
    """``granted`` or ``refused``."""
    check: str | None = None
    """The refused check's name; None when granted."""
    reason: str | None = None
    """Why it was refused."""
    receipt_sha256: str | None = None
    """The receipt digest, once the request held a receipt."""
    payload_sha256: str | None = None
    """The DSSE payload's SHA-256, once the signature held."""
    campaign_id: str | None = None
    """Campaign id, once the statement was read."""
    artifact_id: str | None = None
    """Artifact id, once the statement was read."""
    review_version: int | None = None
    """Review version, once the statement was read."""
    nonce: str | None = None
    """The settlement's nonce, when granted."""
    signature: str | None = None
    """The EIP-712 signature, when granted."""


class SignerState:
    """The ``--state`` SQLite file; opened by ``jurat signer serve``, closed by it."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            for table in _APPEND_ONLY:
                for op in ("UPDATE", "DELETE"):
                    self._db.execute(
                        f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON "
                        f"{table} BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
                    )
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open signer state {path}: {exc}") from exc
        self.path.chmod(0o600)

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def __enter__(self) -> SignerState:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- reads -------------------------------------------------------------------------

    def grant_for(self, payload_sha256: str, receipt_sha256: str) -> Grant | None:
        """The grant already given for this payload or this receipt, if any."""
        row = self._db.execute(
            "SELECT payload_sha256, receipt_sha256, campaign_id, artifact_id, review_version, "
            "nonce FROM grants WHERE payload_sha256 = ? OR receipt_sha256 = ? LIMIT 1",
            (payload_sha256, receipt_sha256),
        ).fetchone()
        return _grant(row)

    def grant_for_artifact(self, campaign_id: str, artifact_id: str) -> Grant | None:
        """A grant already given for any review of this (campaign, artifact), if any."""
        row = self._db.execute(
            "SELECT payload_sha256, receipt_sha256, campaign_id, artifact_id, review_version, "
            "nonce FROM grants WHERE campaign_id = ? AND artifact_id = ? ORDER BY nonce LIMIT 1",
            (campaign_id, artifact_id),
        ).fetchone()
        return _grant(row)

    def newer_review(self, campaign_id: str, artifact_id: str, version: int,
                     receipt_sha256: str) -> SeenReview | None:
        """A seen review of the same artifact that supersedes this one, if any: a higher
        version, or one whose ``supersedes`` names this receipt."""
        row = self._db.execute(
            "SELECT version, receipt_sha256 FROM reviews WHERE campaign_id = ? AND "
            "artifact_id = ? AND (version > ? OR supersedes = ?) ORDER BY version DESC LIMIT 1",
            (campaign_id, artifact_id, version, receipt_sha256),
        ).fetchone()
        return None if row is None else SeenReview(version=row[0], receipt_sha256=row[1])

    def next_nonce(self) -> int:
        """The nonce the next grant gets."""
        (last,) = self._db.execute("SELECT COALESCE(MAX(nonce), 0) FROM grants").fetchone()
        return int(last) + 1

    # -- writes ------------------------------------------------------------------------

    def note_review(self, campaign_id: str, artifact_id: str, version: int,
                    receipt_sha256: str, supersedes: str | None) -> None:
        """Remember an authenticated receipt's review (idempotent)."""
        self._db.execute(
            "INSERT OR IGNORE INTO reviews VALUES (?, ?, ?, ?, ?)",
            (receipt_sha256, campaign_id, artifact_id, version, supersedes),
        )

    def record(self, decided: Decided, grant: Grant | None = None) -> int:
        """Append the decision (and its grant) in one durable transaction; return its seq.

        Raises TamperError when the grant would be a second one for the same payload,
        receipt or nonce (the UNIQUE constraints: the last guard of the ``replay`` check).
        """
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                seq = self._append(decided)
                if grant is not None:
                    self._db.execute(
                        "INSERT INTO grants VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (grant.payload_sha256, grant.receipt_sha256, grant.campaign_id,
                         grant.artifact_id, grant.review_version, grant.nonce, seq),
                    )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.IntegrityError as exc:
            raise TamperError(f"signer state refused a second grant: {exc}") from exc
        return seq

    def _append(self, decided: Decided) -> int:
        row = self._db.execute(
            "SELECT seq, entry_hash FROM decisions ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        seq, prev = (0, _ZERO) if row is None else (int(row[0]) + 1, str(row[1]))
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        fields = decided.model_dump(mode="json")
        entry_hash = _row_hash(seq, at, fields, prev)
        self._db.execute(
            "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (seq, at, decided.outcome, decided.check, decided.reason, decided.receipt_sha256,
             decided.payload_sha256, decided.campaign_id, decided.artifact_id,
             decided.review_version, decided.nonce, decided.signature, prev, entry_hash),
        )
        return seq

    def log(self) -> list[tuple[int, str, Decided]]:
        """Every decision, in order, as (seq, time, decision), the hash chain checked.

        Raises TamperError naming the first row whose hash or link does not hold.
        """
        out, prev = [], _ZERO
        for row in self._db.execute("SELECT * FROM decisions ORDER BY seq"):
            seq, at = int(row[0]), str(row[1])
            decided = Decided(
                outcome=row[2], check=row[3], reason=row[4], receipt_sha256=row[5],
                payload_sha256=row[6], campaign_id=row[7], artifact_id=row[8],
                review_version=row[9], nonce=row[10], signature=row[11],
            )
            if row[12] != prev or row[13] != _row_hash(seq, at, decided.model_dump(mode="json"),
                                                        prev):
                raise TamperError(f"signer log row {seq}: hash chain broken (row edited)")
            prev = str(row[13])
            out.append((seq, at, decided))
        return out


def _row_hash(seq: int, at: str, fields: dict[str, object], prev: str) -> str:
    doc = {"format": "jurat.signer.decision/v1", "seq": seq, "at": at, **fields, "prev": prev}
    return hashlib.sha256(canonical_json(doc)).hexdigest()


def _grant(row: tuple[object, ...] | None) -> Grant | None:
    if row is None:
        return None
    return Grant(payload_sha256=str(row[0]), receipt_sha256=str(row[1]),
                 campaign_id=str(row[2]), artifact_id=str(row[3]),
                 review_version=int(str(row[4])), nonce=int(str(row[5])))
