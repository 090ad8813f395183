"""Deterministic stub judges (seed 002 §2) plus bias stubs for rubric and criteria tests.

Seed 002's six: ``always-equivalent``, ``always-different``, ``always-abstain``,
``parse-error``, ``raising``, ``numeric-simulated``. jurat's five more: ``always-accept``
(accept with top scores and ``hard_gates_pass: true`` whatever the gates say: a pathological
judge the validation and the fold must contain), ``always-reject``, ``always-yes``,
``always-no``, and ``always-first`` (pairwise: the candidate shown first, a position
bias the live monitor must flag). Their texts go through the same validator as any
model's answer.
"""

from __future__ import annotations

import json
import re

from jurat.judges._local import (
    LocalJudge,
    criterion_text,
    decision_text,
    equivalence_text,
    local,
)
from jurat.judges._protocol import CallKind, JudgeCall, RawResponse
from jurat.models import JudgeConfig

__all__ = ["StubJudge", "last_number"]

_EQUIVALENCE_ONLY = frozenset({"equivalence", "text"})
_SUPPORTS: dict[str, frozenset[str]] = {
    "always-equivalent": _EQUIVALENCE_ONLY,
    "always-different": _EQUIVALENCE_ONLY,
    "always-abstain": _EQUIVALENCE_ONLY,
    "numeric-simulated": _EQUIVALENCE_ONLY,
    "parse-error": frozenset({"rubric", "pairwise", "criterion", "equivalence", "text"}),
    "raising": frozenset({"rubric", "pairwise", "criterion", "equivalence", "text"}),
    "always-accept": frozenset({"rubric", "pairwise", "text"}),
    "always-reject": frozenset({"rubric", "pairwise", "text"}),
    "always-yes": frozenset({"criterion", "text"}),
    "always-no": frozenset({"criterion", "text"}),
    # Position bias (seed 000): prefers whichever candidate it is shown first.
    "always-first": frozenset({"pairwise", "text"}),
}

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_TOLERANCE = 1e-9


def last_number(text: str | None) -> str | None:
    """The last number in ``text`` (thousands separators dropped), as written; None if none."""
    if not text:
        return None
    found = _NUMBER.findall(text.replace(",", ""))
    return found[-1] if found else None


def _numeric(call: JudgeCall) -> str:
    # Seed 002 §1: the surface comparator the LLM judge replaces — the last number of each
    # answer compared with a tolerance; a missing number abstains.
    a, b = last_number(call.artifact.a), last_number(call.artifact.b)
    if a is None or b is None:
        return equivalence_text("ABSTAIN", "an answer has no number", a, b)
    same = abs(float(a) - float(b)) <= _TOLERANCE
    return equivalence_text("EQUIVALENT" if same else "DIFFERENT", "last numbers compared", a, b)


class StubJudge(LocalJudge):
    """One deterministic stub, ``stub:<name>``."""

    def __init__(self, config: JudgeConfig) -> None:
        super().__init__(config)
        self.name = config.provider.removeprefix("stub:")
        self._model = f"stub:{self.name}"

    def supports(self, kind: CallKind) -> bool:
        return kind in _SUPPORTS[self.name]

    async def complete(self, call: JudgeCall) -> RawResponse:
        name = self.name
        if name == "raising":
            raise RuntimeError("stub:raising raises on every call")
        if name == "parse-error":
            return local("I think both answers look fine to me!", self._model)
        if call.kind == "text":
            return local(f"{self._model} output", self._model)
        return local(self._text(call), self._model)

    def _text(self, call: JudgeCall) -> str:
        name = self.name
        if name == "numeric-simulated":
            return _numeric(call)
        if name.startswith("always-") and call.kind == "equivalence":
            return equivalence_text(name.removeprefix("always-").upper(), f"{self._model}")
        if name == "always-accept":
            return json.dumps(
                {
                    "artifact_sha256": call.artifact.sha256,
                    "preference": "A",
                    "scores": {"correctness": 5, "reasoning": 5, "adherence": 5, "presentation": 5},
                    "hard_gates_pass": True,
                    "disposition": "accept",
                    "evidence_indices": [0],
                    "explanation": "stub:always-accept accepts everything it sees.",
                }
            )
        if name == "always-first":
            # "A" as presented: the fold maps it back, so the canonical pick follows the order.
            return decision_text(call, good=True, preference="A",
                                 why="stub:always-first prefers the candidate shown first.")
        if name == "always-reject":
            return decision_text(
                call, good=False, preference="A", why="stub:always-reject rejects everything."
            )
        return criterion_text(name.removeprefix("always-"), f"{self._model} answers this always.")
