"""How large the heaviest scenario tests run: ``JURAT_TEST_SCALE``.

``make test`` must run every test in ten minutes on a 2-core machine (issue 26), so the
scenario tests whose cost grows with a count (SIGKILL rounds, artifacts of a whole run,
HumanEval problems) run a smaller count by default: each still asserts the same property
on every round or item it runs. ``JURAT_TEST_SCALE=full`` runs the counts the issues
measured (README, "Development"). Property tests that set their own example counts
scale them with the Hypothesis profile instead (``examples``; tests/conftest.py).
"""

from __future__ import annotations

import os

from hypothesis import settings

__all__ = ["FULL", "examples", "scaled"]

FULL = os.environ.get("JURAT_TEST_SCALE", "").strip().lower() == "full"
"""True when ``JURAT_TEST_SCALE=full``: the scenario tests run their issue-sized counts."""


def scaled(default: int, full: int) -> int:
    """``full`` under ``JURAT_TEST_SCALE=full``, else ``default``."""
    return full if FULL else default


def examples(ci: int) -> int:
    """An example count written for the ``ci`` profile (200 examples), scaled to the
    profile loaded (``dev``: 50, a quarter); read when a test module is imported, after
    tests/conftest.py has loaded the profile."""
    return max(1, ci * settings.default.max_examples // 200)
