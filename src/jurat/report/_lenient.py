"""Lenient readers of receipt JSON: a value of the wrong type reads as "not given".

The report must still render a receipt from an older or newer jurat, or a hand-edited one,
so it never trusts a field's type: each reader returns the value when it has the expected
type and an empty or None value otherwise, and the page shows a dash.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["as_float", "as_int", "as_list", "as_object", "as_text"]


def as_object(value: Any) -> dict[str, Any]:
    """A JSON object, or an empty one."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> Sequence[Any]:
    """A JSON array, or an empty one."""
    return value if isinstance(value, list | tuple) else []


def as_text(value: Any, default: str = "—") -> str:
    """Any value as text; ``default`` (a dash) for a missing one."""
    return default if value is None else str(value)


def as_int(value: Any) -> int | None:
    """An integer (never a bool), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_float(value: Any) -> float | None:
    """A finite number as a float, or None."""
    # Python's json reads NaN and Infinity; a chart cannot place them, so they are "not given".
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)
