"""Job leases on a PostgreSQL ledger: which replica of `jurat serve` runs which job.

Several `jurat serve` processes (replicas) may serve the same campaigns on one PostgreSQL
ledger (docs/service.md, "Replicas"). Each job the service accepts has a row in the
``<prefix>leases`` table: the job id, its campaign, the replica that runs it (``owner``),
when its lease expires (``expires_at``, seconds on the *database's* clock, so replicas on
machines whose clocks disagree still agree on expiry) and its ``state``: ``open`` (to be
run, or running under the lease), ``done`` (it has a receipt), ``failed`` (its evaluation
failed; a resubmission opens it again).

* The row is inserted in the same transaction as the job's ``job_received`` entry
  (``FencedCommitter``): a job the ledger accepted always has a lease to expire, and a
  second replica recording the same job finds the row and appends nothing.
* The owner renews its leases while their jobs run; a replica that dies stops renewing,
  and once a lease has expired any replica takes it over (``take``: ``UPDATE … WHERE
  job_id IN (SELECT … FOR UPDATE SKIP LOCKED)``) and resumes the job from what the ledger
  recorded, never drawing a recorded sample again (runner/_run.py).
* Every append of a leased job's entries (its samples, decision, receipt) checks, in the
  ledger's write transaction, that this replica still holds the lease (``SELECT … FOR
  SHARE``): a replica that stalled past its lease and wakes up records nothing more, and
  the replica that took the job over reads, after taking it, everything the stalled one
  recorded before. That makes "one sample key, one draw recorded" hold across replicas.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import SQLAlchemyError

from jurat.errors import LedgerError
from jurat.ledger._append import AppendRequest, append_batch
from jurat.ledger._group import GroupCommit

if TYPE_CHECKING:
    from jurat.ledger._store import Ledger

__all__ = ["AlreadyRecorded", "DuplicateSample", "FencedCommitter", "LeaseLost", "Leases"]

_NOW = "extract(epoch from clock_timestamp())"
# psycopg sends a list as an array of unknown type; these say which.
_JOBS = "CAST(:jobs AS text[])"
_CAMPAIGNS = "CAST(:campaigns AS text[])"
_C = "CAST(:c AS text[])"


class AlreadyRecorded(LedgerError):
    """Another replica recorded this job first: its ``job_received`` is not appended again."""


class LeaseLost(LedgerError):
    """This replica's lease on the job expired and another took it over: nothing appended."""


class DuplicateSample(LedgerError):
    """The job already has a vote for this (judge, criterion, sample): not recorded twice."""


def _db(action: str) -> Any:
    from jurat.ledger._store import _db as convert

    return convert(action)


class Leases:
    """The lease table of one ledger, as one replica (``owner``) sees it."""

    def __init__(self, ledger: Ledger, owner: str, ttl: float) -> None:
        backend = ledger._backend
        if backend.name != "postgresql":
            raise LedgerError("job leases need a PostgreSQL ledger")
        if ttl <= 0:
            raise LedgerError("a lease's time to live must be positive")
        self._backend = backend
        self.owner = owner
        self.ttl = float(ttl)
        self.table = backend.qualified("leases")

    def install(self) -> None:
        """Create the table if missing; idempotent, safe for replicas starting together."""
        index = f'"{self._backend.prefix}leases_open"'
        key = int.from_bytes(hashlib.sha256(f"leases:{self.table}".encode()).digest()[:8],
                             "big", signed=True)
        with _db("creating the lease table"), self._backend.engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
            conn.exec_driver_sql(
                f"CREATE TABLE IF NOT EXISTS {self.table} ("
                "job_id text PRIMARY KEY, campaign_id text NOT NULL, owner text NOT NULL, "
                "state text NOT NULL, expires_at double precision NOT NULL, "
                "takeovers integer NOT NULL DEFAULT 0)")
            conn.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS {index} ON {self.table} "
                                 "(state, expires_at)")

    # -- in the ledger's write transaction ---------------------------------------------

    def record(self, conn: Connection, jobs: dict[str, str]) -> set[str]:
        """Lease ``jobs`` (job id -> campaign) to this replica; the ids that were new (a
        job that has a row already is another replica's, or was recorded before)."""
        rows = conn.execute(text(
            f"INSERT INTO {self.table} (job_id, campaign_id, owner, state, expires_at) "
            f"SELECT j, c, :me, 'open', {_NOW} + :ttl "
            f"FROM unnest({_JOBS}, {_CAMPAIGNS}) AS t(j, c) "
            "ON CONFLICT (job_id) DO NOTHING RETURNING job_id"),
            {"me": self.owner, "ttl": self.ttl, "jobs": list(jobs), "campaigns": list(
                jobs.values())})
        return {str(r[0]) for r in rows}

    def held(self, conn: Connection, jobs: Collection[str]) -> set[str]:
        """Which of ``jobs`` this replica still leases; the rows are share-locked until the
        transaction ends, so no takeover can slip between this check and the commit."""
        rows = conn.execute(text(
            f"SELECT job_id FROM {self.table} WHERE owner = :me AND state = 'open' "
            f"AND job_id = ANY({_JOBS}) FOR SHARE"), {"me": self.owner, "jobs": list(jobs)})
        return {str(r[0]) for r in rows}

    def sample_keys(self, conn: Connection, jobs: Collection[str]) -> set[tuple[str, ...]]:
        """(job, judge, criterion, sample) of every vote recorded for ``jobs``."""
        entries = self._backend.qualified("entries")
        vote = "convert_from(payload, 'UTF8')::jsonb -> 'vote'"
        rows = conn.execute(text(
            f"SELECT job_id, {vote} ->> 'judge', {vote} ->> 'criterion', {vote} ->> 'sample' "
            f"FROM {entries} WHERE kind = 'sample_recorded' AND job_id = ANY({_JOBS})"),
            {"jobs": list(jobs)})
        return {(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows}

    # -- on their own ---------------------------------------------------------------------

    def _run(self, action: str, sql: str, params: dict[str, Any]) -> list[str]:
        with _db(action), self._backend.engine.begin() as conn:
            return [str(r[0]) for r in conn.execute(text(sql), params)]

    def seed(self, jobs: dict[str, str]) -> None:
        """Give each undecided job of the ledger that has no lease row (recorded before
        leases, or by a version without them) an expired one, so that some replica runs it."""
        if jobs:
            self._run("seeding job leases",
                      f"INSERT INTO {self.table} (job_id, campaign_id, owner, state, expires_at) "
                      f"SELECT j, c, '', 'open', 0 FROM unnest({_JOBS}, {_CAMPAIGNS}) AS t(j, c) "
                      "ON CONFLICT (job_id) DO NOTHING RETURNING job_id",
                      {"jobs": list(jobs), "campaigns": list(jobs.values())})

    def take(self, campaigns: Collection[str], limit: int) -> list[str]:
        """Take over up to ``limit`` open jobs of ``campaigns`` whose lease has expired."""
        if limit <= 0 or not campaigns:
            return []
        return self._run(
            "taking over expired job leases",
            f"UPDATE {self.table} SET owner = :me, expires_at = {_NOW} + :ttl, "
            "takeovers = takeovers + 1 WHERE job_id IN ("
            f"SELECT job_id FROM {self.table} WHERE state = 'open' AND expires_at < {_NOW} "
            f"AND campaign_id = ANY({_CAMPAIGNS}) ORDER BY expires_at LIMIT :n "
            "FOR UPDATE SKIP LOCKED) RETURNING job_id",
            {"me": self.owner, "ttl": self.ttl, "campaigns": list(campaigns), "n": limit})

    def renew(self, jobs: Collection[str]) -> set[str]:
        """Extend this replica's leases on ``jobs``; the ids it still held (the others were
        taken over, and their jobs must stop)."""
        if not jobs:
            return set()
        return set(self._run(
            "renewing job leases",
            f"UPDATE {self.table} SET expires_at = {_NOW} + :ttl WHERE owner = :me "
            f"AND state = 'open' AND job_id = ANY({_JOBS}) RETURNING job_id",
            {"me": self.owner, "ttl": self.ttl, "jobs": list(jobs)}))

    def settle(self, done: Iterable[str], failed: Iterable[str],
               retry: Iterable[str], retry_s: float) -> None:
        """Close this replica's leases: ``done`` (a receipt), ``failed`` (the evaluation
        failed), ``retry`` (the ledger failed: open again for anyone after ``retry_s``)."""
        with _db("settling job leases"), self._backend.engine.begin() as conn:
            for state, jobs in (("done", list(done)), ("failed", list(failed))):
                if jobs:
                    conn.execute(text(f"UPDATE {self.table} SET state = :s WHERE owner = :me "
                                      f"AND job_id = ANY({_JOBS})"),
                                 {"s": state, "me": self.owner, "jobs": jobs})
            again = list(retry)
            if again:
                conn.execute(text(f"UPDATE {self.table} SET expires_at = {_NOW} + :d "
                                  "WHERE owner = :me AND state = 'open' "
                                  f"AND job_id = ANY({_JOBS})"),
                             {"d": retry_s, "me": self.owner, "jobs": again})

    def reopen(self, job_id: str) -> bool:
        """Open a failed job again (it was submitted again), for any replica to take."""
        return bool(self._run(
            "opening a failed job again",
            f"UPDATE {self.table} SET state = 'open', expires_at = 0 WHERE job_id = :j "
            "AND state = 'failed' RETURNING job_id", {"j": job_id}))

    def reopen_failed(self, campaigns: Collection[str]) -> None:
        """A replica's start runs failed jobs again, as one server's start always has."""
        self._run("opening failed jobs again",
                  f"UPDATE {self.table} SET state = 'open', expires_at = 0 "
                  f"WHERE state = 'failed' AND campaign_id = ANY({_C}) RETURNING job_id",
                  {"c": list(campaigns)})

    def states(self, jobs: Collection[str]) -> dict[str, str]:
        """The lease state of each of ``jobs`` that has a row."""
        with _db("reading job leases"), self._backend.engine.begin() as conn:
            rows = conn.execute(text(f"SELECT job_id, state FROM {self.table} "
                                     f"WHERE job_id = ANY({_JOBS})"), {"jobs": list(jobs)})
            return {str(r[0]): str(r[1]) for r in rows}

    def try_signing(self) -> Any:
        """A connection holding the checkpoint signer's advisory lock, or None when another
        replica holds it: checkpoints are signed by one replica at a time."""
        key = int.from_bytes(hashlib.sha256(f"checkpoint:{self.table}".encode()).digest()[:8],
                             "big", signed=True)
        try:
            conn = self._backend.engine.connect()
        except SQLAlchemyError as exc:
            raise LedgerError(f"cannot reach the ledger to sign a checkpoint: {exc}") from exc
        try:
            if conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar():
                conn.commit()
                return _SignerTurn(conn, key)
        except SQLAlchemyError as exc:
            conn.close()
            raise LedgerError(f"cannot take the checkpoint lock: {exc}") from exc
        conn.close()
        return None


class _SignerTurn:
    """The checkpoint lock, held until the block ends."""

    def __init__(self, conn: Connection, key: int) -> None:
        self._conn, self._key = conn, key

    def __enter__(self) -> _SignerTurn:
        return self

    def __exit__(self, *_: object) -> None:
        try:
            self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
            self._conn.commit()
        except SQLAlchemyError:
            pass  # a lost connection released the lock with its session
        finally:
            self._conn.close()


class FencedCommitter:
    """``ThreadCommitter`` for a replica: in each batch's write transaction, leases the new
    jobs it records and refuses the entries of leased jobs this replica no longer holds."""

    def __init__(self, ledger: Ledger, leases: Leases) -> None:
        self._ledger = ledger
        self.leases = leases
        self.new: dict[str, str] = {}
        """Jobs being submitted here (job id -> campaign): leased with their ``job_received``."""
        self.fenced: set[str] = set()
        """Jobs this replica ran under a lease: each of their appends checks the lease."""
        self.live: set[str] = set()
        """Those of ``fenced`` it still leases: the appends of the others are refused here
        (a job that failed may have had appends in flight)."""
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="jurat-ledger-commit")

    def group_commit(self, *, max_batch: int = 1024) -> GroupCommit:
        """The group commit of a replica's service."""
        return GroupCommit(self, max_batch=max_batch)

    async def commit(self, requests: list[AppendRequest]) -> list[Any]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._commit, requests)

    async def aclose(self) -> None:
        self._executor.shutdown(wait=True)

    def _commit(self, requests: list[AppendRequest]) -> list[Any]:
        ledger = self._ledger
        new = {r.job_id: self.new[r.job_id] for r in requests
               if r.kind == "job_received" and r.job_id in self.new}
        fenced = {r.job_id for r in requests if r.job_id in self.fenced and r.job_id not in new}
        live = fenced & self.live
        with _db("appending to the ledger"), ledger._backend.write() as conn:
            recorded = self.leases.record(conn, new) if new else set()
            held = self.leases.held(conn, live) if live else set()
            refused: dict[int, LedgerError] = {}
            for i, r in enumerate(requests):
                if r.job_id in new and r.job_id not in recorded:
                    refused[i] = AlreadyRecorded(f"job {r.job_id} was recorded by another "
                                                 "replica")
                elif r.job_id in fenced and r.job_id not in held:
                    refused[i] = LeaseLost(f"job {r.job_id}: this replica's lease is gone")
            self._refuse_duplicates(conn, requests, refused)
            kept = [r for i, r in enumerate(requests) if i not in refused]
            results, tip = append_batch(conn, ledger._t, ledger._sql, kept, ledger._tip)
        ledger._tip = tip
        placed = iter(results)  # in the order of ``kept``
        return [refused[i] if i in refused else next(placed) for i in range(len(requests))]

    def _refuse_duplicates(self, conn: Connection, requests: list[AppendRequest],
                           refused: dict[int, LedgerError]) -> None:
        """Refuse a vote whose (judge, criterion, sample) the job has recorded: whatever
        ran it twice (a lease taken over from a replica that was only slow, a job's
        stray append after it failed), the ledger keeps one draw per sample key."""
        votes = [(i, r) for i, r in enumerate(requests)
                 if r.kind == "sample_recorded" and i not in refused]
        if not votes:
            return
        stored = self.leases.sample_keys(conn, {r.job_id for _, r in votes})
        for i, r in votes:
            vote = json.loads(r.data).get("vote", {})
            key = (r.job_id, str(vote.get("judge")), str(vote.get("criterion")),
                   str(vote.get("sample")))
            if key in stored:
                refused[i] = DuplicateSample(f"job {r.job_id} already has vote {key[1:]}")
            stored.add(key)
