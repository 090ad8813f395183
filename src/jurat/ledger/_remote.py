"""One process writes the ledger for a run's worker processes (``jurat run --workers N``).

A worker's jobs append through a ``GroupCommit`` as in one process, but its committer
(``RemoteCommitter``) sends each batch over a socket to the run's parent, whose
``AppendServer`` commits the batches of every worker that are waiting in one transaction
and answers each worker with its entries. A worker's append still returns only once its
entry is committed (durable), so a vote is recorded before its fold exactly as before.

Why a writer process instead of a commit thread in every worker (bench/README.md, "Whole
runs"): a thread in the worker contends for the worker's interpreter lock with its event
loop (tens of lock handoffs per judge call), and two workers writing one database take
turns on its write lock, each reading back the Merkle frontier the other moved. The parent
has nothing else to do while the workers run; as the only writer, it keeps the frontier
from its own last commit and writes every worker's waiting appends in one transaction.

The socket is a ``socketpair`` made before the fork: both ends belong to one run of this
program, so the frames are pickles (nothing from outside reaches them). A frame is a
4-byte big-endian length, then the pickle: a list of ``AppendRequest`` one way, and one
answer per request the other (the entry without its payload, which the worker has, or the
refusal's message).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import pickle
import socket
from typing import TYPE_CHECKING, Any, cast

from jurat.errors import LedgerError
from jurat.ledger._append import AppendRequest
from jurat.ledger._group import GroupCommit, _batch_failed
from jurat.ledger._models import Entry, EntryKind

if TYPE_CHECKING:
    from jurat.ledger._store import Ledger

__all__ = ["AppendServer", "RemoteCommitter", "remote_group_commit"]

_HEADER = 4
#: An answer: the entry's fields but its payload, then its payload as JSON when it is not
#: the request's (a receipt the ledger already had); or a refusal's message.
_Answer = tuple[int, str, str, str | None, str | None, str, str, str, str, str, bytes | None] | str


def _frame(value: Any) -> bytes:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return len(body).to_bytes(_HEADER, "big") + body


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("the other end closed its ledger channel")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _answer(request: AppendRequest, result: Entry | LedgerError) -> _Answer:
    if isinstance(result, LedgerError):
        return str(result)
    # Only a receipt can be answered with an entry stored before (the same receipt again,
    # ``_append``); every other request's entry was placed from its own bytes.
    placed = (request.receipt is None
              or result.payload_sha256 == hashlib.sha256(request.data).hexdigest())
    data = None if placed else json.dumps(result.payload, separators=(",", ":")).encode()
    return (result.seq, result.kind, result.job_id, result.campaign_id, result.artifact_id,
            result.payload_sha256, result.recorded_at, result.prev_hash, result.entry_hash,
            result.leaf_hash, data)


def _entry(request: AppendRequest, answer: _Answer) -> Entry | LedgerError:
    if isinstance(answer, str):
        return LedgerError(answer)
    seq, kind, job, campaign, artifact, payload_sha256, at, prev, entry_hash, leaf, data = answer
    # Built from bytes this process made canonical and the writer hashed, as the writer
    # builds its own (``_append``): nothing to check again.
    return Entry.model_construct(
        seq=seq, kind=cast(EntryKind, kind), job_id=job, campaign_id=campaign,
        artifact_id=artifact, payload=json.loads(request.data if data is None else data),
        payload_sha256=payload_sha256, recorded_at=at, prev_hash=prev, entry_hash=entry_hash,
        leaf_hash=leaf,
    )


class AppendServer:
    """The writing end: commits what the workers' ``RemoteCommitter``s send, in this process.

    ``channel()`` before forking each worker (the worker keeps the socket it returns; this
    process closes its copy after the fork); then, whenever ``sockets`` are readable,
    ``serve`` them. Single-threaded: call it from one thread.
    """

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._ours: list[socket.socket] = []
        self.batches = 0
        """Transactions committed so far."""

    def channel(self) -> socket.socket:
        """A new worker's end of a channel to this writer."""
        ours, theirs = socket.socketpair()
        self._ours.append(ours)
        return theirs

    @property
    def sockets(self) -> list[socket.socket]:
        """The channels still open, to wait on."""
        return list(self._ours)

    def serve(self, ready: list[socket.socket]) -> None:
        """Read one batch from each ready channel, commit them all in one transaction, and
        answer each. A channel whose worker has gone is closed and dropped; its batch, if
        it had sent one whole, is still committed, as a commit thread's would be."""
        batches: list[tuple[socket.socket, list[AppendRequest]]] = []
        for sock in ready:
            try:
                size = int.from_bytes(_recv_exact(sock, _HEADER), "big")
                batches.append((sock, pickle.loads(_recv_exact(sock, size))))
            except (EOFError, OSError):
                self._drop(sock)
        requests = [request for _, part in batches for request in part]
        if not requests:
            return
        try:
            # The workers have the payloads' bytes: none is read back here.
            results: list[Entry | LedgerError] = self._ledger._commit(requests, payloads=False)
        except Exception as exc:  # noqa: BLE001 - the whole batch failed; each worker is told
            results = [_batch_failed(exc)] * len(requests)
        self.batches += 1
        done = 0
        for sock, part in batches:
            answers = [_answer(request, result) for request, result
                       in zip(part, results[done:done + len(part)], strict=True)]
            done += len(part)
            try:
                sock.sendall(_frame(answers))
            except OSError:
                self._drop(sock)

    def _drop(self, sock: socket.socket) -> None:
        if sock in self._ours:
            self._ours.remove(sock)
        sock.close()

    def close(self) -> None:
        """Close every channel."""
        for sock in list(self._ours):
            self._drop(sock)


class RemoteCommitter:
    """The worker's end: each batch goes to the ``AppendServer`` and back (a ``Committer``)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def commit(self, requests: list[AppendRequest]) -> list[Entry | LedgerError]:
        if self._streams is None:
            # Opened in the event loop that commits: streams belong to one loop.
            self._streams = await asyncio.open_connection(sock=self._sock)
        reader, writer = self._streams
        try:
            writer.write(_frame(requests))
            await writer.drain()
            size = int.from_bytes(await reader.readexactly(_HEADER), "big")
            answers: list[_Answer] = pickle.loads(await reader.readexactly(size))
        except (asyncio.IncompleteReadError, OSError) as exc:
            raise LedgerError(
                "the run's ledger writer (its parent process) stopped; this batch may or may "
                "not be in the ledger"
            ) from exc
        return [_entry(request, answer) for request, answer in zip(requests, answers, strict=True)]

    async def aclose(self) -> None:
        if self._streams is None:
            self._sock.close()
            return
        _, writer = self._streams
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass  # the writer had already gone


def remote_group_commit(sock: socket.socket, *, max_batch: int = 1024) -> GroupCommit:
    """A group commit whose batches the ``AppendServer`` at the other end of ``sock``
    commits: ``async with remote_group_commit(sock) as log: await log.append(...)``."""
    return GroupCommit(RemoteCommitter(sock), max_batch=max_batch)
