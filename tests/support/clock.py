"""A fake clock for everything in jurat that takes ``clock=`` and ``sleep=``.

Time moves only when someone sleeps, by exactly what they asked for, and sleeping never
yields to the event loop: each sleeper sees precisely its own wait. Tests assert the waits
(``slept``) and the times recorded with the clock (``dispatch_ms``, ``latency_ms``), never
the wall clock; speed is measured in ``bench/``.
"""

from __future__ import annotations


class FakeClock:
    """Pass the instance as ``clock=`` and its ``sleep`` as ``sleep=``."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
