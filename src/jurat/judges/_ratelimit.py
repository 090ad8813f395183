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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

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

    @asynccontextmanager
    async def slot(self, estimated_tokens: int) -> AsyncIterator[None]:
        """Hold one call slot; the rate buckets are paid before the call is sent."""
        async with self.semaphore:
            if self.requests is not None:
                await self.requests.acquire(1)
            if self.tokens is not None:
                await self.tokens.acquire(estimated_tokens)
            yield

    def settle(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        """Correct the token bucket with what the endpoint reported it used."""
        if self.tokens is not None and actual_tokens is not None:
            self.tokens.adjust(actual_tokens - min(estimated_tokens, self.tokens.capacity))
