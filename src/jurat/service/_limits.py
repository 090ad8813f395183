"""A cap on request bodies, enforced while they are read (a contributor controls them).

Without it, uvicorn reads any body whole and pydantic parses it: one request of a few
gigabytes would take the server's memory. The cap is what the largest legitimate job can
need: the campaign's intake cap on an artifact, base64-encoded, plus room for the JSON
around it and upstream receipts (``UPSTREAM_BYTES`` each). A body that declares more
(``Content-Length``) or sends more is answered 413 before it is parsed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from jurat.runner import UPSTREAM_BYTES

__all__ = ["UPSTREAM_BYTES", "BodyLimit", "body_limit"]

_OVERHEAD = 64 * 1024

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def body_limit(max_artifact_bytes: int, upstream: int = 8) -> int:
    """The cap for an artifact of ``max_artifact_bytes`` and ``upstream`` receipts."""
    return -(-max_artifact_bytes * 4 // 3) + upstream * UPSTREAM_BYTES + _OVERHEAD


class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: 413 for a request body larger than ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and value.isdigit() and int(value) > self.limit:
                await self._refuse(send)
                return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _TooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps({"error": f"the request body is larger than {self.limit} bytes",
                           "field": None, "fix": "submit a smaller artifact"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
