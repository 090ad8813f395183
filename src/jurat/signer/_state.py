"""The signer's durable state and its own append-only decision log (one SQLite file).

Three tables in the ``--state`` file (docs/signer.md, "State and log"):

``decisions``  every request's outcome, granted or refused, in order: the signer's own
               append-only log. Triggers refuse UPDATE and DELETE, and each row carries the
               SHA-256 of the previous row's hash and its own fields, so a row edited or
               removed by hand breaks the chain (``verify_log``).
``grants``     one row per authorisation, keyed by the DSSE payload's SHA-256 (the
               settlement's ``receipt``) and unique by receipt digest, nonce and (campaign,
               settlement key): the ``replay`` check reads it. Each row holds the artifact's
               digest and the task's, so one piece of work is paid once whatever id it was
               submitted under. Also append-only.
``reviews``    the review versions the signer has seen in authenticated receipts, so that
               without ``--ledger`` it still refuses a receipt it knows to be superseded.

The file's schema version is SQLite's ``user_version``: 0 for a file written before the
grants held digests, 1 now. Opening an older file upgrades it in place, in one
transaction (``_UPGRADES``): the new columns are added, and the grants it already holds
keep NULL digests (the receipts they paid were never kept, so for them only the receipt,
payload and artifact-id rules still hold). A file from a newer signer is refused.

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

__all__ = ["SCHEMA_VERSION", "Decided", "Grant", "SeenReview", "SignerState"]

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
#: The schema version this signer writes (``PRAGMA user_version``).
SCHEMA_VERSION = 1
#: Version -> the statements that upgrade the version before it (``_SCHEMA`` is version 0).
_UPGRADES = {
    1: (
        # The digests of the work a grant paid for (NULL in grants made before version 1).
        "ALTER TABLE grants ADD COLUMN artifact_sha256 TEXT",
        "ALTER TABLE grants ADD COLUMN task_sha256 TEXT",
        "ALTER TABLE grants ADD COLUMN settle_key TEXT",
        "CREATE INDEX grants_work ON grants (campaign_id, artifact_sha256)",
        # The last guard of one settlement per piece of work, as the registry declares it
        # (NULLs, the grants of version 0, are distinct for SQLite).
        "CREATE UNIQUE INDEX grants_once ON grants (campaign_id, settle_key)",
    ),
}
_APPEND_ONLY = ("decisions", "grants", "reviews")
_GRANT_COLUMNS = ("payload_sha256, receipt_sha256, campaign_id, artifact_id, review_version, "
                  "nonce, artifact_sha256, task_sha256, settle_key")


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
    artifact_sha256: str | None
    """The work paid for: ``predicate.inputs.work.sha256`` (the artifact modulo what the
    campaign says is not new work, issue 37), ``predicate.artifact.sha256`` for a receipt
    without it. None only in a grant made before schema version 1."""
    task_sha256: str | None
    """The digest of ``predicate.inputs.task.id`` (``_checks.task_digest``). None only in a
    grant made before schema version 1."""
    settle_key: str | None
    """What this campaign pays once (``_checks.settle_key``), unique per campaign. None
    only in a grant made before schema version 1."""


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
            try:
                self._prepare()
            except BaseException:
                self._db.close()  # a file this signer refuses is not held open
                raise
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open signer state {path}: {exc}") from exc
        self.path.chmod(0o600)

    def _prepare(self) -> None:
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        self._upgrade()
        for table in _APPEND_ONLY:
            for op in ("UPDATE", "DELETE"):
                self._db.execute(
                    f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON "
                    f"{table} BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
                )

    def _upgrade(self) -> None:
        """Bring an older file to ``SCHEMA_VERSION``, one version per transaction (the
        version is read under the write lock, so two signers opening it never both
        upgrade)."""
        while True:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                (version,) = self._db.execute("PRAGMA user_version").fetchone()
                if version > SCHEMA_VERSION:
                    raise ConfigError(
                        f"signer state {self.path} has schema version {version}, newer than "
                        f"this signer's {SCHEMA_VERSION} (fix: run the jurat that wrote it, "
                        "or start from a new --state file)")
                if version == SCHEMA_VERSION:
                    self._db.execute("COMMIT")
                    return
                for statement in _UPGRADES[version + 1]:
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {version + 1}")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

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
            f"SELECT {_GRANT_COLUMNS} FROM grants WHERE payload_sha256 = ? OR "
            "receipt_sha256 = ? LIMIT 1",
            (payload_sha256, receipt_sha256),
        ).fetchone()
        return _grant(row)

    def grant_for_work(self, campaign_id: str, artifact_sha256: str,
                       task_sha256: str | None = None) -> Grant | None:
        """The first grant already given in this campaign for these artifact bytes (and,
        with ``task_sha256``, for this task), if any, by any receipt under any id.

        Read by columns rather than by ``settle_key``, so that a campaign whose registry
        entry changed how it settles still finds what it paid under the old rule."""
        query = (f"SELECT {_GRANT_COLUMNS} FROM grants WHERE campaign_id = ? AND "
                 "artifact_sha256 = ?")
        args: tuple[str, ...] = (campaign_id, artifact_sha256)
        if task_sha256 is not None:
            query, args = query + " AND task_sha256 = ?", (*args, task_sha256)
        row = self._db.execute(query + " ORDER BY nonce LIMIT 1", args).fetchone()
        return _grant(row)

    def grant_for_artifact(self, campaign_id: str, artifact_id: str) -> Grant | None:
        """A grant already given for any review of this (campaign, artifact), if any."""
        row = self._db.execute(
            f"SELECT {_GRANT_COLUMNS} FROM grants WHERE campaign_id = ? AND artifact_id = ? "
            "ORDER BY nonce LIMIT 1",
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
        receipt, nonce or piece of work (the UNIQUE constraints: the last guard of the
        ``replay`` check).
        """
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                seq = self._append(decided)
                if grant is not None:
                    self._db.execute(
                        f"INSERT INTO grants ({_GRANT_COLUMNS}, decision_seq) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (grant.payload_sha256, grant.receipt_sha256, grant.campaign_id,
                         grant.artifact_id, grant.review_version, grant.nonce,
                         grant.artifact_sha256, grant.task_sha256, grant.settle_key, seq),
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
                 review_version=int(str(row[4])), nonce=int(str(row[5])),
                 artifact_sha256=_optional(row[6]), task_sha256=_optional(row[7]),
                 settle_key=_optional(row[8]))


def _optional(value: object) -> str | None:
    return None if value is None else str(value)
