"""One replica of `jurat serve` among several on a PostgreSQL ledger (docs/service.md,
"Replicas").

The service (``_service.py``) asks this module three things: whether it may run a job
(it holds the job's lease: ``owned``), what to do when a job ends (``settled``), and which
jobs other replicas left (``_tick``, which takes over expired leases and starts them).
The leases themselves are in the ledger's database (ledger/_lease.py): a job accepted by
any replica is in the ledger with its lease before the 202 is sent, so a replica that dies
leaves nothing only it knew about.

Every ``tick_s`` seconds a replica settles the leases of the jobs it finished, renews the
leases it holds (``ttl/3`` apart) and stops any job whose lease another replica took, and
takes over as many expired leases as it has free slots.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

from jurat.errors import JuratError, LedgerError
from jurat.ledger import GroupCommit, Ledger
from jurat.ledger._lease import AlreadyRecorded, FencedCommitter, LeaseLost, Leases

__all__ = ["LEASE_TTL_S", "AlreadyRecorded", "LeaseLost", "Replica", "replica_id"]

log = logging.getLogger("jurat.service")

#: Seconds a lease lasts unless renewed: how long a dead replica's jobs wait.
LEASE_TTL_S = 30.0
#: Seconds between a replica's looks at the lease table.
TICK_S = 0.5
#: Seconds before a job the ledger failed (connection lost) is open to any replica again.
RETRY_S = 1.0


def replica_id(name: str | None = None) -> str:
    """The owner a replica writes in its leases: ``name`` (default: the host) with the pid
    and a random part, so that two processes never share one, even started with one name."""
    base = name or socket.gethostname()
    return f"{base}/{os.getpid()}-{secrets.token_hex(3)}"[:120]


@dataclass
class Replica:
    """The lease side of one replica's service."""

    ledger: Ledger
    owner: str
    ttl: float = LEASE_TTL_S
    tick_s: float = TICK_S
    leases: Leases = field(init=False)
    committer: FencedCommitter = field(init=False)
    owned: dict[str, asyncio.Task[None] | None] = field(default_factory=dict)
    """Jobs leased to this replica and not yet settled, with the task running each."""
    _done: set[str] = field(default_factory=set)
    _failed: set[str] = field(default_factory=set)
    _retry: set[str] = field(default_factory=set)
    _renewed: float = 0.0

    def __post_init__(self) -> None:
        self.leases = Leases(self.ledger, self.owner, self.ttl)
        self.committer = FencedCommitter(self.ledger, self.leases)

    def open(self, undecided: dict[str, str], campaigns: list[str]) -> None:
        """Create the table, give the ledger's undecided jobs that have none a lease any
        replica may take, and open the failed ones again (a start runs them again)."""
        self.leases.install()
        self.leases.seed(undecided)
        self.leases.reopen_failed(campaigns)

    def group_commit(self) -> GroupCommit:
        return self.committer.group_commit()

    # -- a job's life ------------------------------------------------------------------

    def submitting(self, job_id: str, campaign_id: str) -> None:
        """The job's ``job_received`` about to be appended: lease it with that entry."""
        self.committer.new[job_id] = campaign_id

    def recorded(self, job_id: str, leased: bool) -> None:
        """Its append returned: leased here (``leased``) or not (another had it, or the
        append failed)."""
        self.committer.new.pop(job_id, None)
        if leased:
            self.own(job_id)

    def own(self, job_id: str) -> None:
        self.owned.setdefault(job_id, None)
        self.committer.fenced.add(job_id)
        self.committer.live.add(job_id)

    def running(self, job_id: str, task: asyncio.Task[None]) -> None:
        if job_id in self.owned:
            self.owned[job_id] = task

    def settled(self, job_id: str, outcome: str) -> None:
        """The job ended here: ``done``, ``failed``, or ``retry`` (the ledger failed under
        it: any replica resumes it shortly)."""
        if self.owned.pop(job_id, "gone") == "gone":
            return
        self.committer.live.discard(job_id)
        {"done": self._done, "failed": self._failed, "retry": self._retry}[outcome].add(job_id)

    # -- the loop ----------------------------------------------------------------------

    async def run(self, campaigns: list[str], free: Callable[[], int],
                  start: Callable[[str], None]) -> None:
        """Keep the leases until cancelled; ``start(job_id)`` runs a job taken over."""
        while True:
            try:
                await self._tick(campaigns, free, start)
            except JuratError:
                # The database is unreachable: the leases run out as for a dead replica,
                # and the fence keeps anything this one still does out of the ledger.
                log.warning("the lease table could not be read; trying again", exc_info=True)
            await asyncio.sleep(self.tick_s)

    async def _tick(self, campaigns: list[str], free: Callable[[], int],
                    start: Callable[[str], None]) -> None:
        loop = asyncio.get_running_loop()
        if self._done or self._failed or self._retry:
            done, failed, retry = self._done, self._failed, self._retry
            self._done, self._failed, self._retry = set(), set(), set()
            try:
                await asyncio.to_thread(self.leases.settle, done, failed, retry, RETRY_S)
            except BaseException:
                self._done |= done
                self._failed |= failed
                self._retry |= retry
                raise
        if self.owned and loop.time() - self._renewed >= self.ttl / 3:
            mine = list(self.owned)
            held = await asyncio.to_thread(self.leases.renew, mine)
            self._renewed = loop.time()
            for job_id in mine:
                if job_id not in held and job_id in self.owned:
                    log.warning("job %s: another replica took its lease; stopping it here",
                                job_id)
                    task = self.owned.pop(job_id)
                    self.committer.live.discard(job_id)
                    if task is not None:
                        task.cancel()
        room = free() - len(self.owned)
        if room > 0:
            for job_id in await asyncio.to_thread(self.leases.take, campaigns, room):
                if job_id not in self.owned:
                    self.own(job_id)
                    start(job_id)

    def reopen(self, job_id: str) -> None:
        """A failed job submitted again: open its lease for any replica."""
        try:
            self.leases.reopen(job_id)
        except LedgerError:
            log.warning("job %s could not be opened again", job_id, exc_info=True)

    def sign_checkpoint(self, sign: Callable[[], object]) -> bool:
        """Sign a checkpoint (``sign``) if receipts were added since the last one, unless
        another replica is signing: one replica at a time, whichever takes the lock. Runs
        on a worker thread."""
        turn = self.leases.try_signing()
        if turn is None:
            return False
        with turn:
            latest = self.ledger.latest_checkpoint()
            if self.ledger.size() <= (latest.tree_size if latest is not None else 0):
                return False
            sign()
            return True
