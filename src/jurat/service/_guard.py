"""The service's front door: who may send a body, how much, how fast, how often.

Threat model. Anyone who can reach the port can open connections and send bytes; only a
token holder may make the server read a body, and even a token holder may not make it read
more than the cap, slower than the deadline, or more often than the token's rate. So, in
this order and before any body byte is read (``Guard``, an ASGI middleware in front of
every route):

1. a ``/v1`` request without a valid Bearer token is a 401 and the connection is closed;
2. a token over its rate (a token bucket per token id) is a 429 with ``Retry-After``;
3. what the token may not do whatever its body says (submit without a submitting role or
   to a campaign outside its scope, adjudicate without the reviewer role) is refused with
   the route's own 403 / 404 (``precheck``);
4. a ``Content-Length`` over the cap is a 413 at once; a body sent in chunks is counted as
   it arrives and refused (413) at the first byte over;
5. the body must arrive whole within the body deadline (408), however slowly it drips.

A refusal the guard makes closes the connection (``Connection: close``): the unread rest
of a body is never parsed as a next request. The connection-level limits (request-head
deadline, keep-alive, header size, connections per client address) are ``_conn``'s.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

import anyio
from starlette.exceptions import HTTPException

from jurat.errors import LedgerError
from jurat.service._errors import LEDGER_UNAVAILABLE, RETRY_SOON, ServiceRefusal
from jurat.service._limits import ClientLimits
from jurat.service._tokens import Principal, TokenStore

if TYPE_CHECKING:
    from jurat.service._service import Service

__all__ = ["PRINCIPAL_KEY", "Guard", "Precheck", "RateLimiter",
           "service_precheck"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
#: Refuses (raises ServiceRefusal) what ``principal`` may not do to ``(method, path)``.
Precheck = Callable[[Principal, str, str], None]

#: Where the guard leaves the request's principal in the ASGI scope for the routes.
PRINCIPAL_KEY = "jurat.principal"
_BEARER = re.compile(rb"^[Bb]earer +(\S+) *$")
_SUBMIT = re.compile(r"^/v1/campaigns/([^/]+)/jobs/?$")
_ADJUDICATE = re.compile(r"^/v1/jobs/([^/]+)/adjudication/?$")
_UNAUTHORIZED = ServiceRefusal(401, "a valid Bearer token is required",
                               fix="send Authorization: Bearer <token from `jurat token create`>")


class RateLimiter:
    """A token bucket per key: ``burst`` requests at once, refilled at ``rate`` per second.
    In-process: each replica counts its own requests (docs/service.md, "Limits")."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> float:
        """0 if ``key`` may make a request now (and count it), else the seconds to wait."""
        if self.rate == 0:
            return 0.0
        now = self._clock()
        level, then = self._buckets.get(key, (float(self.burst), now))
        level = min(float(self.burst), level + (now - then) * self.rate)
        if level >= 1:
            self._buckets[key] = (level - 1, now)
            return 0.0
        self._buckets[key] = (level, now)
        return (1 - level) / self.rate


def service_precheck(service: Callable[[], Service]) -> Precheck:
    """The refusals of the two routes that take a body that need only the token and the
    path, as those routes make them (``Service.submit``, ``Service.adjudicate``)."""

    def check(who: Principal, method: str, path: str) -> None:
        if method != "POST":
            return
        if found := _SUBMIT.match(path):
            if who.role not in ("operator", "contributor"):
                raise ServiceRefusal(403, f"a {who.role} token cannot submit jobs",
                                     fix="use a contributor or operator token")
            service().campaign_for(who, found.group(1))
        elif found := _ADJUDICATE.match(path):
            service().job_for(who, found.group(1), roles=("reviewer",), owner=False)

    return check


class _Tripped(HTTPException):
    """A limit tripped while the app read the body. An HTTPException, so that FastAPI lets
    it through as it is (any other error there becomes its own 400); the guard answers."""

    def __init__(self, refusal: ServiceRefusal) -> None:
        super().__init__(status_code=refusal.status, detail=str(refusal))
        self.refusal = refusal


def _authorization(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            found = _BEARER.match(value)
            return found.group(1).decode("latin-1") if found else None
    return None


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


async def refuse(send: Send, refusal: ServiceRefusal, *,
                 headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """Answer ``refusal`` as the app's refusals are (``ErrorOut``) and close."""
    body = json.dumps(refusal.body()).encode()
    extra = ((b"www-authenticate", b"Bearer"),) if refusal.status == 401 else ()
    await send({"type": "http.response.start", "status": refusal.status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), *extra, *headers]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: authentication, rate, precheck, body cap and body deadline, in that
    order, before the app reads a byte of the body (module docstring)."""

    def __init__(self, app: ASGIApp, *, tokens: TokenStore, limits: ClientLimits,
                 max_body_bytes: int, precheck: Precheck | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self.tokens, self.limits = app, tokens, limits
        self.max_body_bytes, self.precheck, self._clock = max_body_bytes, precheck, clock
        self.rates = RateLimiter(limits.rate_per_s, limits.rate_burst, clock)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = self._clock()
        if str(scope.get("path", "")).startswith("/v1/"):
            refused = await self._admit(scope)
            if refused is not None:
                await refuse(send, refused[0], headers=refused[1])
                return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            await refuse(send, self._too_large())
            return
        await self._run(scope, receive, send, deadline=began + self.limits.body_timeout_s)

    async def _admit(self, scope: Scope
                     ) -> tuple[ServiceRefusal, tuple[tuple[bytes, bytes], ...]] | None:
        token = _authorization(scope)
        # A plain lookup in the token table; on a worker thread, as FastAPI ran it before.
        try:
            who = await anyio.to_thread.run_sync(self.tokens.lookup, token) if token else None
        except LedgerError:
            return LEDGER_UNAVAILABLE, RETRY_SOON
        if who is None:
            return _UNAUTHORIZED, ()
        wait = self.rates.take(who.token_id)
        if wait > 0:
            rate = self.limits.rate_per_s
            return ServiceRefusal(
                429, f"this token is over its rate of {rate:g} requests per second",
                fix=f"retry after {math.ceil(wait)} s; spread requests out (GET "
                    "/v1/jobs/{job_id}?wait=60 waits for a decision in one request)"
            ), ((b"retry-after", str(math.ceil(wait)).encode()),)
        if self.precheck is not None:
            try:
                self.precheck(who, str(scope.get("method", "")), str(scope["path"]))
            except ServiceRefusal as exc:
                return exc, ()
        scope[PRINCIPAL_KEY] = who
        return None

    def _too_large(self) -> ServiceRefusal:
        return ServiceRefusal(413, f"the request body is larger than {self.max_body_bytes} "
                              "bytes", fix="submit a smaller artifact")

    async def _run(self, scope: Scope, receive: Receive, send: Send, *, deadline: float
                   ) -> None:
        seen = 0
        complete = False
        tripped: ServiceRefusal | None = None
        started = False

        async def bounded() -> Message:
            nonlocal seen, complete, tripped
            if complete:  # past the body: waiting for a disconnect has no deadline
                return await receive()
            message: Message | None = None
            with anyio.move_on_after(max(0.0, deadline - self._clock())):
                message = await receive()
            if message is None:
                tripped = ServiceRefusal(
                    408, f"the request body did not arrive within "
                         f"{self.limits.body_timeout_s:g} s", fix="send the body at once")
                raise _Tripped(tripped)
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                complete = not message.get("more_body", False)
                if seen > self.max_body_bytes:
                    tripped = self._too_large()
                    raise _Tripped(tripped)
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if tripped is not None:
                return  # the app's answer to the limit it hit; the guard's goes instead
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, bounded, tracked)
        except _Tripped:
            pass
        if tripped is not None and not started:
            await refuse(send, tripped)
