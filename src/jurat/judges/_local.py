"""What local judges (sim, stubs, replay) share: the judge shell, and answer texts.

The answer texts go through the same parser as any model's.
"""

from __future__ import annotations

import json

from jurat.judges._protocol import CallKind, JudgeCall, RawResponse
from jurat.models import JudgeConfig

_TOP = {"correctness": 5, "reasoning": 5, "adherence": 5, "presentation": 5}
_LOW = {"correctness": 1, "reasoning": 2, "adherence": 2, "presentation": 2}


def decision_text(call: JudgeCall, *, good: bool, preference: str, why: str) -> str:
    """An ARCV decision that a validator accepts: right digest, valid index, honest gates.

    ``good`` means the judged candidate meets the rubric; acceptance still requires that
    every hard gate passed, because a well-behaved judge does not claim otherwise.
    """
    accept = good and call.gates_pass and preference != "abstain"
    answer = {
        "artifact_sha256": call.artifact.sha256,
        "preference": preference,
        "scores": _scores(call, good),
        "hard_gates_pass": call.gates_pass,
        "disposition": "accept" if accept else "reject",
        "evidence_indices": [0],
        "explanation": why,
    }
    return json.dumps(answer)


def _scores(call: JudgeCall, good: bool) -> dict[str, int]:
    """The ARCV four, or a general rubric's ids read from the schema the prompt sent (as a
    model reads it, judges/_general.py): 5 each when good, else 1 for the first, 2 after."""
    schema = call.prompt.json_schema or {}
    scores = schema.get("properties", {}).get("scores", {})
    ids = scores.get("required") if isinstance(scores, dict) else None
    if not isinstance(ids, list) or set(ids) <= set(_TOP):
        return _TOP if good else _LOW
    return {cid: 5 if good else (1 if i == 0 else 2) for i, cid in enumerate(ids)}


def criterion_text(verdict: str, why: str) -> str:
    """A binary criterion answer."""
    return json.dumps({"verdict": verdict, "explanation": why})


def equivalence_text(decision: str, why: str, a: str | None = None, b: str | None = None) -> str:
    """Seed 002 §4's line format."""
    return (
        f"DECISION: {decision}\nREASON: {why}\n"
        f"NUMERIC_A: {a if a is not None else 'NULL'}\nNUMERIC_B: {b if b is not None else 'NULL'}"
    )


def local(text: str, model: str) -> RawResponse:
    """A response from a judge that runs in-process (no tokens spent, no fingerprint)."""
    return RawResponse(text=text, finish="stop", returned_model=model)


class LocalJudge:
    """A judge that answers in-process: no key to check, no connection to open or close."""

    reproducible = True

    def __init__(self, config: JudgeConfig) -> None:
        self._config = config

    @property
    def config(self) -> JudgeConfig:
        return self._config

    def preflight(self) -> None:
        return None

    def supports(self, kind: CallKind) -> bool:
        return True

    async def aclose(self) -> None:
        return None
