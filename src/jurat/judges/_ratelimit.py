"""Per-endpoint pacing: calls in flight, requests per minute and tokens per minute.

Free tiers rate-limit bursts and hosted endpoints can hang (seed 001, "What honesty costs"),
so every endpoint gets a concurrency bound and, when declared, two token buckets. A bucket
holds at most ten seconds of its rate, so a burst cannot spend a whole minute's allowance
at once; a request larger than the bucket waits for a full bucket rather than forever.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable

__all__ = ["EndpointLimiter", "TokenBucket"]

_BURST_S = 10.0


class TokenBucket:
    """A token bucket refilled continuously at ``per_minute / 60`` per second."""

    def __init__(
        self,
        per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, math.ceil(self.rate * _BURST_S))
        self.level = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._stamp) * self.rate)
        self._stamp = now

    async def acquire(self, amount: float = 1.0) -> None:
        """Wait until ``amount`` (capped at the capacity) is available, then take it."""
        amount = min(float(amount), self.capacity)
        async with self._lock:  # first come, first served
            self._refill()
            while self.level < amount:
                await self._sleep((amount - self.level) / self.rate)
                self._refill()
            self.level -= amount

    def adjust(self, amount: float) -> None:
        """Charge (positive) or refund (negative) after the fact; the level may go negative."""
        self._refill()
        self.level = min(self.capacity, self.level - amount)


class EndpointLimiter:
    """Concurrency plus optional request and token buckets for one endpoint."""

    def __init__(
        self,
        concurrency: int,
        *,
        rpm: int | None = None,
        tpm: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.semaphore = asyncio.Semaphore(concurrency)
        self.requests = TokenBucket(rpm, clock=clock, sleep=sleep) if rpm else None
        self.tokens = TokenBucket(tpm, clock=clock, sleep=sleep) if tpm else None

    def slot(self, estimated_tokens: int) -> _Slot:
        """Hold one call slot (``async with``); the rate buckets are paid before the call
        is sent."""
        return _Slot(self, estimated_tokens)

    def settle(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        """Correct the token bucket with what the endpoint reported it used."""
        if self.tokens is not None and actual_tokens is not None:
            self.tokens.adjust(actual_tokens - min(estimated_tokens, self.tokens.capacity))


class _Slot:
    """One call slot of an ``EndpointLimiter``, held for an ``async with`` block.

    A class, not ``@asynccontextmanager``: every judge call takes one, and the generator
    machinery cost more than the semaphore it wraps.
    """

    __slots__ = ("_limiter", "_tokens")

    def __init__(self, limiter: EndpointLimiter, estimated_tokens: int) -> None:
        self._limiter = limiter
        self._tokens = estimated_tokens

    async def __aenter__(self) -> None:
        limiter = self._limiter
        await limiter.semaphore.acquire()
        try:
            if limiter.requests is not None:
                await limiter.requests.acquire(1)
            if limiter.tokens is not None:
                await limiter.tokens.acquire(self._tokens)
        except BaseException:
            limiter.semaphore.release()
            raise

    async def __aexit__(self, *exc: object) -> None:
        self._limiter.semaphore.release()
