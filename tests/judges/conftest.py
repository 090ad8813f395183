"""Fixtures for the judges tests: a real loopback OpenAI-compatible server and an engine.

Records (artifacts, judges, policies, gates, votes) come from ``tests/support/builders.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from jurat.judges import Engine
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A loopback OpenAI-compatible server, well-behaved unless a test scripts it."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    """An engine with millisecond backoff, closed after the test."""
    eng = Engine(backoff_s=0.001, backoff_max_s=0.01)
    yield eng
    await eng.aclose()
