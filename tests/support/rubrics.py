"""Kept only for ``tests/judges/conftest.py``; new code imports ``tests.support.builders``.

Delete this file once ``tests/judges`` imports ``SEED_RUBRIC`` from the builders.
"""

from tests.support.builders import SEED_RUBRIC

__all__ = ["SEED_RUBRIC"]
