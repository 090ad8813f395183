"""The connection-level limits of `jurat serve`: uvicorn's h11 protocol with a request-head
deadline, a cap on open connections per client address, and a lingering close.

Threat model. Before a request's head is complete no ASGI code runs, so what a client can
do with an open socket is bounded here: it must deliver each request head within
``header_timeout_s`` of the connection's start or of the previous response (uvicorn itself
has no such deadline: a client that drips headers, or that drips the unread rest of a body
after its response, would hold the connection for ever), the head is at most
``max_header_bytes`` (h11), an idle connection is closed after ``keep_alive_s``, and one
address holds at most ``max_connections_per_address`` connections (over the cap: 503 and
closed, before anything is parsed).

A refusal sent while the client is still sending (413 or 401 before the body is read, 503
over the cap) would be lost if the socket were closed at once: closing a socket with
unread input makes the kernel send a reset, and a client still writing its body sees the
reset, not the answer. So such a connection is closed the way web servers close it
("lingering close"): the answer is sent, the write side shut, the input read and discarded
(never parsed or kept) until the client closes or ``LINGER_S`` passes.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from jurat.service._limits import ClientLimits

if TYPE_CHECKING:
    import uvicorn

__all__ = ["LINGER_S", "protocol_class", "server_config"]

#: How long the unread input of a refused connection is discarded before it is closed.
LINGER_S = 2.0


def _raw(status: int, reason: str, body: dict[str, Any] | None,
         extra: tuple[str, ...] = ()) -> bytes:
    data = json.dumps(body).encode() if body is not None else b""
    head = [f"HTTP/1.1 {status} {reason}", "connection: close",
            f"content-length: {len(data)}", *extra]
    if body is not None:
        head.append("content-type: application/json")
    return ("\r\n".join(head) + "\r\n\r\n").encode("ascii") + data


def protocol_class(limits: ClientLimits) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol under ``limits``; one class per server (it counts that
    server's connections per address)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    open_per_address: Counter[str] = Counter()
    cap = limits.max_connections_per_address
    busy = _raw(503, "Service Unavailable", {
        "error": f"this address already has {cap} open connections",
        "field": None, "fix": "close idle connections, or reuse one (keep-alive)"},
        ("retry-after: 1",))
    slow_head = _raw(408, "Request Timeout", {
        "error": f"the request head did not arrive within {limits.header_timeout_s:g} s",
        "field": None, "fix": "send the request line and headers at once"})

    class _Lingering:
        """The connection's transport, whose ``close`` lingers while input is unread."""

        _lingering: bool

        def __init__(self, transport: asyncio.Transport, owner: GuardedH11) -> None:
            self._transport, self._owner = transport, owner
            self._lingering = False

        def __getattr__(self, name: str) -> Any:
            return getattr(self._transport, name)

        def is_closing(self) -> bool:
            return self._lingering or self._transport.is_closing()

        def close(self) -> None:
            owner = self._owner
            if self._lingering or self._transport.is_closing():
                return
            unread = owner.refused or owner.conn.their_state is h11.SEND_BODY
            if not unread or not self._transport.can_write_eof():
                self._transport.close()
                return
            self._lingering = True
            owner.draining = True
            self._transport.write_eof()
            self._transport.resume_reading()
            owner.linger = owner.loop.call_later(LINGER_S, self._transport.close)

    class GuardedH11(H11Protocol):
        """H11Protocol with the limits of the module docstring."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self.refused = False
            self.draining = False
            self.linger: asyncio.TimerHandle | None = None
            self.head_timer: asyncio.TimerHandle | None = None
            self.address: str | None = None
            super().connection_made(_Lingering(transport, self))  # type: ignore[arg-type]
            address = self.client[0] if self.client else None
            if cap and address is not None:
                if open_per_address[address] >= cap:
                    self.refused = True
                    self.transport.write(busy)
                    self.transport.close()
                    return
                open_per_address[address] += 1
                self.address = address
            self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.address is not None:
                open_per_address[self.address] -= 1
                if open_per_address[self.address] <= 0:
                    del open_per_address[self.address]
                self.address = None
            for handle in (self.linger, self.head_timer):
                if handle is not None:
                    handle.cancel()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.draining:
                return  # the unread rest of a refused request: discarded, never parsed
            super().data_received(data)

        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not before and self.head_timer is not None:
                self.head_timer.cancel()  # a new request's head is in
                self.head_timer = None

        def on_response_complete(self) -> None:
            self._arm_head_timer()
            super().on_response_complete()

        def _arm_head_timer(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
            self.head_timer = self.loop.call_later(limits.header_timeout_s, self._slow_head)

        def _slow_head(self) -> None:
            self.head_timer = None
            if self.transport.is_closing():
                return
            if self.conn.our_state is h11.IDLE and self.conn.their_state is h11.IDLE:
                self.transport.write(slow_head)  # no response is owed: a bare 408 is safe
            self.refused = True
            self.transport.close()

    return GuardedH11


def server_config(app: Any, *, host: str, port: int, limits: ClientLimits,
                  **kwargs: Any) -> uvicorn.Config:
    """The uvicorn configuration serving ``app`` under ``limits``."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, http=protocol_class(limits),
                          timeout_keep_alive=limits.keep_alive_s,  # type: ignore[arg-type]
                          h11_max_incomplete_event_size=limits.max_header_bytes, **kwargs)
