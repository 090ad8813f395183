"""Fixtures for the judges tests: a real loopback OpenAI-compatible server and small builders."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from jurat.canonical import canonical_json, sha256_digest
from jurat.judges import Engine
from jurat.models import (
    GATE_PYTHON_PARSE,
    GATE_TESTS_PASS,
    Artifact,
    CriteriaSuite,
    Criterion,
    EquivalencePolicy,
    GateOutcome,
    JudgeConfig,
    Policy,
)
from tests.support.fake_openai import FakeOpenAI
from tests.support.rubrics import SEED_RUBRIC

RUBRIC = SEED_RUBRIC

PASSING = (
    GateOutcome(id=GATE_PYTHON_PARSE, outcome="pass", required=True),
    GateOutcome(id=GATE_TESTS_PASS, outcome="pass", required=True),
)
FAILING = (
    GateOutcome(id=GATE_PYTHON_PARSE, outcome="pass", required=True),
    GateOutcome(id=GATE_TESTS_PASS, outcome="fail", required=True, detail="2 failed"),
)


def artifact(text: str = "def add(a, b):\n    return a + b\n", **kwargs: Any) -> Artifact:
    """A single artifact digested like intake does."""
    return Artifact(
        id=kwargs.pop("id", "c1"),
        sha256=sha256_digest(text),
        media_type="text/x-python",
        text=text,
        **kwargs,
    )


def pair(a: str, b: str, **kwargs: Any) -> Artifact:
    """A pair artifact (pairwise, equivalence); its digest covers both parts."""
    digest = sha256_digest(canonical_json({"a": sha256_digest(a), "b": sha256_digest(b)}))
    return Artifact(
        id=kwargs.pop("id", "p1"), sha256=digest, media_type="text/plain", a=a, b=b, **kwargs
    )


def judge(provider: str = "sim", **kwargs: Any) -> JudgeConfig:
    kwargs.setdefault("id", "A")
    return JudgeConfig(provider=provider, **kwargs)


def policy(kind: str, *judges: JudgeConfig, **kwargs: Any) -> Policy:
    """A policy of ``kind`` whose destinations allow every judge given."""
    tables: dict[str, Any] = {}
    if kind in ("rubric", "pairwise"):
        tables["rubric"] = kwargs.pop("rubric", RUBRIC)
    if kind == "criteria":
        tables["criteria"] = kwargs.pop(
            "criteria",
            CriteriaSuite(
                samples=3,
                blocker_samples=5,
                items=(
                    Criterion(id="cites-sources", text="Does it cite sources?", blocker=True),
                    Criterion(id="is-concise", text="Is it concise?"),
                ),
            ),
        )
    if kind == "equivalence":
        tables["equivalence"] = kwargs.pop(
            "equivalence", EquivalencePolicy(votes=3, min_agreement=2)
        )
    destinations = tuple({j.destination for j in judges})
    return Policy(
        id="t",
        kind=kind,  # type: ignore[arg-type]
        judges=judges,
        allowed_destinations=kwargs.pop("allowed_destinations", destinations),
        **tables,
        **kwargs,
    )


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
