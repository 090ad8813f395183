"""One writer per campaign and ledger: the lock a run holds while it draws samples.

Two ``jurat run`` processes on one campaign and ledger would each see the other's jobs as
unstarted and draw their samples twice (and pay for them twice), then fail on each
other's receipts. So a run holds its campaign exclusively for as long as it runs, and a
``jurat serve`` holds each served campaign shared (replicas may share it; a run may not
start beside them, nor they beside a run). A holder that dies releases the lock with its
process: a file lock (SQLite, ``<db>-campaign-<digest>.lock`` beside the database) or a
PostgreSQL session advisory lock on a connection held open for the run.

Refusing is immediate (no waiting): the second process exits 3 naming the holder.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError, OperationalError

from jurat.errors import ConfigError, LedgerError

if TYPE_CHECKING:
    from jurat.ledger._backend import Backend

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = ["holder_text", "hold_campaign"]

log = logging.getLogger("jurat.ledger")

_HOLDER_CHARS = 60  # PostgreSQL keeps application_name to 63 bytes


def holder_text(command: str) -> str:
    """Who holds a lock, as the refusal names it: command, pid, host, since when."""
    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return f"{command} pid {os.getpid()} on {socket.gethostname()} since {since}"


def _key(backend: Backend, campaign_id: str) -> str:
    scope = f"{backend.schema or ''}/{backend.prefix}/{campaign_id}"
    return hashlib.sha256(scope.encode("utf-8")).hexdigest()


def _refused(campaign_id: str, holder: str, shared: bool) -> ConfigError:
    what = "serve it" if shared else "run it"
    return ConfigError(
        f"campaign {campaign_id!r} is held on this ledger by {holder or 'another process'}: "
        f"two writers would draw the same samples twice (fix: wait for it to end, then "
        f"{what} again; a run resumes what was recorded)"
    )


@contextmanager
def hold_campaign(
    backend: Backend, campaign_id: str, *, holder: str, shared: bool = False
) -> Iterator[None]:
    """Hold ``campaign_id`` on this ledger (exclusively, or ``shared`` with other servers)
    until the block ends; ConfigError (exit 3) naming the holder when another has it."""
    key = _key(backend, campaign_id)
    if backend.name == "sqlite":
        with _file_lock(backend, key, campaign_id, holder=holder, shared=shared):
            yield
    else:
        with _advisory_lock(backend, key, campaign_id, holder=holder, shared=shared):
            yield


@contextmanager
def _file_lock(
    backend: Backend, key: str, campaign_id: str, *, holder: str, shared: bool
) -> Iterator[None]:
    database = backend.url.database
    if fcntl is None or not database or database == ":memory:":
        yield  # one process, or no file locks here: nothing to share the ledger with
        return
    path = f"{database}-campaign-{key[:16]}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _refused(campaign_id, os.pread(fd, 512, 0).decode("utf-8", "replace")
                           .strip(), shared) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode("utf-8") + b"\n", 0)
        yield
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def _advisory_lock(
    backend: Backend, key: str, campaign_id: str, *, holder: str, shared: bool
) -> Iterator[None]:
    held = _AdvisoryHold(backend, key, campaign_id, holder=holder, shared=shared)
    held.take()
    backend.write_guards.append(held.check)
    try:
        yield
    finally:
        backend.write_guards.remove(held.check)
        held.release()


class _AdvisoryHold:
    """A PostgreSQL session advisory lock, kept while its session lives and taken again
    when the session was cut.

    The lock lives and dies with its connection: a restarted server, or an administrator's
    ``pg_terminate_backend``, ends the session and frees the lock without a word, and a
    second `jurat run` could then start beside this one and draw the same samples. So
    every write transaction first checks the session (``check``, one ``SELECT 1`` at most
    every ``CHECK_S`` seconds), takes the lock again on a new connection when the session
    is gone, and refuses the write (LedgerError naming the new holder) when another
    process holds it now. A server that cannot be reached leaves the check to the next
    write: the write itself fails then.
    """

    CHECK_S = 1.0

    def __init__(self, backend: Backend, key: str, campaign_id: str, *, holder: str,
                 shared: bool) -> None:
        self.backend, self.campaign_id, self.holder, self.shared = (
            backend, campaign_id, holder, shared)
        self.number = int.from_bytes(bytes.fromhex(key[:16]), "big", signed=True)
        self._conn: Connection | None = None
        self._checked = 0.0
        self._lock = threading.Lock()

    def take(self) -> None:
        """Take the lock on a new connection; ConfigError naming the holder if refused."""
        take = "pg_try_advisory_lock_shared" if self.shared else "pg_try_advisory_lock"
        conn = self.backend.engine.connect()
        try:
            conn.execute(text("SELECT set_config('application_name', :name, false)"),
                         {"name": f"jurat {self.holder}"[:_HOLDER_CHARS]})
            if not conn.execute(text(f"SELECT {take}(:k)"), {"k": self.number}).scalar():
                raise _refused(self.campaign_id, _pg_holder(conn, self.number), self.shared)
            conn.commit()
        except BaseException:
            conn.close()
            raise
        self._conn, self._checked = conn, time.monotonic()

    def check(self) -> None:
        """Before a write: the session still holds the lock, or holds it again."""
        with self._lock:
            if time.monotonic() - self._checked < self.CHECK_S and self._conn is not None:
                return
            if self._conn is not None:
                try:
                    self._conn.execute(text("SELECT 1")).close()
                    self._conn.commit()
                    self._checked = time.monotonic()
                    return
                except DBAPIError:
                    self._drop()
            try:
                self.take()
            except OperationalError:
                return  # the server is out of reach: the write fails too, and checks again
            except ConfigError as exc:
                # A failure of the run (exit 4), not of its input: what was recorded stays.
                raise LedgerError(
                    f"the database session holding campaign {self.campaign_id!r} was cut, "
                    f"and meanwhile {exc}") from exc
            log.warning("the session holding campaign %r on the ledger was cut; its hold is "
                        "taken again", self.campaign_id)

    def release(self) -> None:
        """Give the lock back; a session already ended took it with it."""
        with self._lock:
            if self._conn is None:
                return
            release = "pg_advisory_unlock_shared" if self.shared else "pg_advisory_unlock"
            try:
                self._conn.execute(text(f"SELECT {release}(:k)"), {"k": self.number})
                self._conn.commit()
            except DBAPIError:
                pass  # the session is gone, and its lock with it
            self._drop()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except DBAPIError:
                pass  # closing a connection whose session the server already ended


def _pg_holder(conn: object, number: int) -> str:
    # The advisory key is split into classid (high 32 bits) and objid (low 32 bits).
    high, low = (number >> 32) & 0xFFFFFFFF, number & 0xFFFFFFFF
    row = conn.execute(  # type: ignore[attr-defined]
        text(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a "
            "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
            "AND l.classid = :high AND l.objid = :low LIMIT 1"
        ),
        {"high": high, "low": low},
    ).first()
    name = str(row[0]) if row is not None and row[0] else ""
    return name.removeprefix("jurat ")
