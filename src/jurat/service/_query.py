"""Query parameters that are applied or refused, never ignored.

FastAPI ignores a query parameter a route does not declare, and keeps the last of a
repeated one: ``?status=escalate`` on a route without ``status``, or ``?limit=5&limit=9``,
would quietly answer something else than was asked. Every ``/v1`` route declares the
names it takes (``query_guard``); any other name, or a name given twice, is a 422 naming
the names the route takes. A name the route does not take is the caller's text, and like
a body key the schema does not have it is called ``<unknown key>``, never repeated
(docs/service.md, "What contributors can see"); a repeated name is one of the route's.
"""

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Request

from jurat.service._errors import ServiceRefusal
from jurat.service._tokens import Principal

__all__ = ["guarded", "query_guard"]


def query_guard(principal: Callable[..., Any], *names: str
                ) -> Callable[..., Awaitable[None]]:
    """A dependency refusing any query parameter but ``names`` (422). It depends on
    ``principal`` (FastAPI resolves it once per request), so a request without a valid
    token is a 401 before its parameters are looked at."""
    allowed = frozenset(names)
    takes = (f"this endpoint takes {', '.join(sorted(allowed))}" if allowed
             else "this endpoint takes no query parameters")

    # No ``from __future__ import annotations`` here: FastAPI reads this signature, and a
    # string annotation could not see ``principal``, a local. Async: it only reads the
    # query string, so FastAPI runs it on the event loop, not on a worker thread.
    async def check(request: Request, _: Annotated[Principal, Depends(principal)]) -> None:
        counts: Counter[str] = Counter(key for key, _ in request.query_params.multi_items())
        for key, seen in counts.items():
            if key not in allowed:
                raise ServiceRefusal(422, "<unknown key>: unknown query parameter",
                                     field="<unknown key>", fix=f"remove it; {takes}")
            if seen > 1:
                raise ServiceRefusal(422, f"query parameter {key} is given {seen} times",
                                     field=key, fix="give it once")

    return check


def guarded(principal: Callable[..., Any], *names: str) -> list[Any]:
    """``dependencies=`` for a route taking the query parameters ``names``."""
    return [Depends(query_guard(principal, *names))]
