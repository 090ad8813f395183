"""Spaced dispatch (``[[judges]] spacing_ms``): one item's samples sent apart in time.

Seed 001 ("Vote correlation is real and unquantified"): samples of one item sent in one
burst may be co-batched by the serving stack, which correlates their errors. Spacing is the
operator's trade of latency for independence: within one artifact's job, the first attempt
of each sample of one (judge, criterion) is dispatched at least ``spacing`` after the
previous one's. It is not a throttle: other judges, criteria and artifacts are not held
back, and a transport retry (another attempt of the same sample) keeps its own backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

__all__ = ["Dispatched", "Spacing", "spacing_of"]

Dispatched = Callable[[float], None]
"""Called with the clock's reading when the sample's first attempt is sent."""


def spacing_of(configured: int | None, override: int | None) -> float:
    """Seconds between one group's samples: ``override`` (ms) when given, else the judge's."""
    ms = override if override is not None else configured
    return (ms or 0) / 1000


class Spacing:
    """The dispatch turns of one (judge, criterion) of one artifact: one at a time, spaced.

    A sample takes its turn (``turn``), waits until ``spacing`` has passed since the last
    dispatch of the group, and gives the turn up when it is sent (the ``Dispatched``
    callback), not when it is answered, so spacing bounds the gap between sends only. A
    sample that is never sent (a budget refusal, an open breaker) gives the turn up unsent.
    """

    def __init__(self, spacing: float, clock: Callable[[], float],
                 sleep: Callable[[float], Awaitable[None]]) -> None:
        self.spacing = spacing
        self._clock = clock
        self._sleep = sleep
        self._lock = asyncio.Lock()  # FIFO: samples are sent in the order they ask
        self._last: float | None = None

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[Dispatched]:
        """Hold the group's turn until the callback reports the dispatch (or the block ends)."""
        await self._lock.acquire()
        released = False

        def dispatched(at: float) -> None:
            nonlocal released
            self._last = at
            if not released:
                released = True
                self._lock.release()

        try:
            if self._last is not None:
                wait = self._last + self.spacing - self._clock()
                if wait > 0:
                    await self._sleep(wait)
            yield dispatched
        finally:
            if not released:
                released = True
                self._lock.release()
