"""The signer's Unix socket: one JSON object per line each way, mode 0600.

The socket is the signer's only door. It is created under a umask that leaves it 0600
from the moment it exists (no window in which another user could connect), then chmod'ed
again for file systems that ignore the umask.

Threat model (a client that is slow, stuck or hostile). Connections are read concurrently,
each on its own thread, at most ``max_clients`` at once (another is answered a refusal
and closed), and each request line must arrive whole within ``request_timeout_s`` of the
connection's start or of the previous answer: a client that sends ``{`` and then a space
every few seconds is answered a refusal and closed at the deadline, while every other
connection is served. A line longer than ``max_request_bytes`` is refused (check 1) and
the connection closed. Reading is concurrent; deciding is not: every line goes through
``Signer.handle`` under one lock, so two requests never race through the ``replay`` check
and its grant, and the decision log stays in one order.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jurat.errors import ConfigError, ExecutionError
from jurat.signer._checks import MAX_REQUEST_BYTES
from jurat.signer._signer import Signer

__all__ = ["SocketLimits", "request_signature", "serve_socket"]

#: How often the accept loop looks at the stop flag.
_POLL_S = 0.25
_CHUNK = 1 << 20


@dataclass(frozen=True)
class SocketLimits:
    """What one client of the signer may hold; each field is a `jurat signer serve` option."""

    request_timeout_s: float = 10.0
    """--request-timeout: seconds to deliver a whole request line, from the connection's
    start or the previous answer (an idle connection is closed after it too)."""
    max_clients: int = 16
    """--max-clients: connections read at once; another is refused and closed."""
    max_request_bytes: int = MAX_REQUEST_BYTES
    """--max-request-bytes: a request line at most (check 1); at most the protocol's 48 MiB."""

    def __post_init__(self) -> None:
        if not 0 < self.request_timeout_s < 86400:
            raise ConfigError(f"--request-timeout {self.request_timeout_s}: must be a positive "
                              "number of seconds (fix: e.g. --request-timeout 10)")
        if self.max_clients < 1:
            raise ConfigError(f"--max-clients {self.max_clients}: must be at least 1")
        if not 1024 <= self.max_request_bytes <= MAX_REQUEST_BYTES:
            raise ConfigError(f"--max-request-bytes {self.max_request_bytes}: must be from "
                              f"1024 to {MAX_REQUEST_BYTES} (a 16 MiB receipt and a 32 MiB "
                              "proof)")


def _answer(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def _clear_stale(path: Path) -> None:
    """Remove a socket file no signer listens on; refuse anything else at that path."""
    if not path.exists() and not path.is_symlink():
        return
    if not stat.S_ISSOCK(path.lstat().st_mode):
        raise ConfigError(f"{path} exists and is not a socket; refusing to replace it")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        path.unlink()  # nobody listens: left over from a signer that died
        return
    finally:
        probe.close()
    raise ConfigError(f"another signer is listening on {path}")


def _bind(path: Path) -> socket.socket:
    _clear_stale(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        server.bind(str(path))
    except OSError as exc:
        server.close()
        raise ConfigError(f"cannot listen on {path}: {exc.strerror or exc}") from exc
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    server.listen(64)
    server.settimeout(_POLL_S)
    return server


class _Late(Exception):
    pass


class _Lines:
    """Request lines off one connection, each within its deadline and the length cap."""

    def __init__(self, conn: socket.socket, limits: SocketLimits) -> None:
        self.conn, self.limits = conn, limits
        self._buffer = bytearray()
        self._scanned = 0  # no newline before this offset of the buffer

    def next(self) -> bytes | None:
        """The next line (without its newline; at the end of the stream, what is left);
        None once the stream ended. A line over the cap is returned cut at cap + 1 bytes;
        ``_Late`` when the deadline passes first."""
        deadline = time.monotonic() + self.limits.request_timeout_s
        cap = self.limits.max_request_bytes
        while True:
            at = self._buffer.find(b"\n", self._scanned)
            if at >= 0:
                line = bytes(self._buffer[:at])
                del self._buffer[:at + 1]
                self._scanned = 0
                return line.rstrip(b"\r")
            self._scanned = len(self._buffer)
            if len(self._buffer) > cap:
                return bytes(self._buffer[:cap + 1])
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Late
            self.conn.settimeout(remaining)
            try:
                chunk = self.conn.recv(_CHUNK)
            except TimeoutError as exc:
                raise _Late from exc
            if not chunk:
                rest = bytes(self._buffer)
                self._buffer.clear()
                return rest or None
            self._buffer += chunk


class _Decider:
    """``Signer.handle`` one line at a time, and not at all once the signer stops."""

    def __init__(self, signer: Signer, limits: SocketLimits) -> None:
        self.signer, self.limits = signer, limits
        self._lock = threading.Lock()
        self._stopped = False

    def decide(self, line: bytes) -> dict[str, Any]:
        with self._lock:
            if self._stopped:
                return {"refused": "request", "reason": "the signer is stopping; retry"}
            if len(line) > self.limits.max_request_bytes:
                return self.signer.refuse_request(
                    f"the request line is longer than {self.limits.max_request_bytes} bytes")
            return self.signer.handle(line)

    def stop(self) -> None:
        """Wait for the decision under way (its grant recorded), then take no more."""
        with self._lock:
            self._stopped = True


def _serve_client(conn: socket.socket, decider: _Decider, limits: SocketLimits) -> None:
    with conn:
        lines = _Lines(conn, limits)
        while True:
            try:
                line = lines.next()
            except _Late:
                conn.sendall(_answer({"refused": "request", "reason": (
                    f"the request line did not arrive within {limits.request_timeout_s:g} s "
                    "(send it at once, ending with a newline)")}))
                return
            if line is None:
                return
            conn.sendall(_answer(decider.decide(line)))
            if len(line) > limits.max_request_bytes:
                return


def serve_socket(signer: Signer, path: Path, stop: threading.Event,
                 limits: SocketLimits | None = None) -> None:
    """Answer requests on the socket at ``path`` until ``stop`` is set; remove it after."""
    limits = limits or SocketLimits()
    path = Path(path)
    server = _bind(path)
    decider = _Decider(signer, limits)
    slots = threading.BoundedSemaphore(limits.max_clients)
    busy = _answer({"refused": "request", "reason": (
        f"the signer is reading {limits.max_clients} connections already; retry")})

    def client(conn: socket.socket) -> None:
        try:
            _serve_client(conn, decider, limits)
        except OSError:
            pass  # a client that went away: its thread ends, the others go on
        finally:
            slots.release()

    try:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            if not slots.acquire(blocking=False):
                with conn:
                    conn.settimeout(1.0)
                    try:
                        conn.sendall(busy)
                    except OSError:
                        pass
                continue
            threading.Thread(target=client, args=(conn,), name="jurat-signer-client",
                             daemon=True).start()
    finally:
        server.close()
        path.unlink(missing_ok=True)
        # A decision under way finishes (its grant recorded) before the caller closes the
        # state; a reader still waiting for its line is a daemon, cut off with the process.
        decider.stop()


def request_signature(path: Path, request: dict[str, Any], *,
                      timeout_s: float = 120.0) -> dict[str, Any]:
    """Send one request to the signer at ``path`` and return its answer.

    Raises ExecutionError when the signer cannot be reached or answers something else.
    """
    line = json.dumps(request, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout_s)
            conn.connect(str(path))
            conn.sendall(line + b"\n")
            with conn.makefile("rb") as reader:
                answer = reader.readline(1 << 20)
    except OSError as exc:
        raise ExecutionError(f"cannot reach the signer at {path}: {exc.strerror or exc}") from exc
    try:
        doc = json.loads(answer)
    except ValueError as exc:
        raise ExecutionError(f"the signer at {path} answered something other than JSON") from exc
    if not isinstance(doc, dict):
        raise ExecutionError(f"the signer at {path} answered something other than an object")
    return doc
