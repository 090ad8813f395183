"""The seed 000 example rubric, shared by the tests that need a realistic one."""

from __future__ import annotations

from jurat.models import Criterion, Rubric

#: Weights [0.45, 0.25, 0.20, 0.10], a minimum on correctness, the two usual hard gates.
SEED_RUBRIC = Rubric(
    version="code-review/1",
    threshold=0.75,
    hard_gates=("python.parse", "tests.pass"),
    criteria=(
        Criterion(id="correctness", weight=0.45, minimum=3),
        Criterion(id="reasoning", weight=0.25),
        Criterion(id="adherence", weight=0.20),
        Criterion(id="presentation", weight=0.10),
    ),
)
