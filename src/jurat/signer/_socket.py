"""The signer's Unix socket: one JSON object per line each way, mode 0600.

The socket is the signer's only door. It is created under a umask that leaves it 0600
from the moment it exists (no window in which another user could connect), then chmod'ed
again for file systems that ignore the umask. Connections are served one at a time, each
line answered before the next is read, so two requests never race through the ``replay``
check. A line longer than the request limit is refused and the connection closed; a silent
client is dropped after a timeout, so it cannot hold the signer.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any

from jurat.errors import ConfigError, ExecutionError
from jurat.signer._checks import MAX_REQUEST_BYTES
from jurat.signer._signer import Signer

__all__ = ["request_signature", "serve_socket"]

#: How long a connected client may stay silent before it is dropped.
_CLIENT_TIMEOUT_S = 60.0
#: How often the accept loop looks at the stop flag.
_POLL_S = 0.25


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
    server.listen(16)
    server.settimeout(_POLL_S)
    return server


def _serve_client(conn: socket.socket, signer: Signer) -> None:
    conn.settimeout(_CLIENT_TIMEOUT_S)
    with conn, conn.makefile("rb") as reader:
        while True:
            line = reader.readline(MAX_REQUEST_BYTES + 2)
            if not line:
                return
            if not line.endswith(b"\n") and len(line) > MAX_REQUEST_BYTES:
                conn.sendall(_answer(signer.handle(line)))  # refused by check 1: too large
                return
            conn.sendall(_answer(signer.handle(line.rstrip(b"\r\n"))))


def serve_socket(signer: Signer, path: Path, stop: threading.Event) -> None:
    """Answer requests on the socket at ``path`` until ``stop`` is set; remove it after."""
    path = Path(path)
    server = _bind(path)
    try:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            try:
                _serve_client(conn, signer)
            except OSError:
                continue  # a client that went away or stalled: the next one is served
    finally:
        server.close()
        path.unlink(missing_ok=True)


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
