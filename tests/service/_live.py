"""A real `jurat serve` app under uvicorn on 127.0.0.1, in a thread of the test process,
with the connection protocol and limits `jurat serve` uses (``_conn.server_config``), and
a count of the body bytes the server handed to the app."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jurat.campaign import load_campaign
from jurat.ledger import load_log_key, open_ledger
from jurat.receipts import load_private_key
from jurat.service import Service, TokenStore
from jurat.service._app import create_app
from jurat.service._conn import server_config
from jurat.service._limits import ClientLimits
from tests.service._support import Env, free_port


@dataclass
class Live:
    """The server's address and what its app read."""

    host: str
    port: int
    body_bytes: int = 0
    """Request body bytes uvicorn passed to the app (the guard and the routes)."""

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def connect(self, timeout: float = 15.0) -> socket.socket:
        return socket.create_connection((self.host, self.port), timeout=timeout)


def read_response(conn: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response off ``conn`` (status, lower-cased headers, body): read until
    the head and ``content-length`` bytes of body, or the end of the stream."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response head: {data[:200]!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    want = int(headers.get("content-length", "0"))
    while len(body) < want:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body


def closed_by_server(conn: socket.socket) -> bool:
    """Whether the server ended the stream (EOF or reset) within the socket's timeout."""
    try:
        while conn.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return True


@contextlib.contextmanager
def live_server(env: Env, limits: ClientLimits, names: tuple[str, ...] = ("text",),
                max_body_bytes: int | None = None) -> Iterator[Live]:
    """Serve ``names`` of ``env`` under ``limits`` until the block ends."""
    import uvicorn

    campaigns = [load_campaign(env.campaigns[n], served=True) for n in names]
    ledger = open_ledger(env.ledger_url)
    tokens = TokenStore(env.ledger_url)
    signer = load_log_key(env.log_key)
    key = load_private_key(env.key)
    kwargs: dict[str, Any] = {} if max_body_bytes is None else {"max_body_bytes": max_body_bytes}
    app = create_app(lambda: Service(campaigns, ledger=ledger, key=key, log_signer=signer,
                                     checkpoint_interval=0.2), tokens, limits=limits, **kwargs)
    live = Live("127.0.0.1", free_port())

    async def counted(scope: Any, receive: Any, send: Any) -> None:
        async def counting() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                live.body_bytes += len(message.get("body", b""))
            return message

        await app(scope, counting, send)

    server = uvicorn.Server(server_config(counted, host=live.host, port=live.port,
                                          limits=limits, log_level="warning",
                                          lifespan="on", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        yield live
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        tokens.close()
        ledger.close()
