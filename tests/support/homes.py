"""The session's private HOME and XDG directories (tests/conftest.py), and the user's own.

jurat reads ``$XDG_CONFIG_HOME/jurat`` (else ``~/.config/jurat``) for its default keys and
``$XDG_STATE_HOME/jurat`` (else ``~/.local/state/jurat``) for PostgreSQL checkpoints; the
tests point all of these at a temporary directory, so that no test reads or writes the
user's. Tools the tests install with (npm) get the user's own back: ``user_env()``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["HOMES", "private_homes", "user_env"]

HOMES: dict[str, str] = {
    "HOME": "home",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_STATE_HOME": "home/.local/state",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_DATA_HOME": "home/.local/share",
}

# The user's values, read when the test session imports this module (before any test).
_USER: dict[str, str | None] = {name: os.environ.get(name) for name in HOMES}


@contextmanager
def private_homes(root: Path) -> Iterator[Path]:
    """HOME and the XDG directories under ``root`` in ``os.environ`` (so in every process
    started meanwhile), restored on leaving; yields the new HOME."""
    saved = {name: os.environ.get(name) for name in HOMES}
    for name, relative in HOMES.items():
        path = root / relative
        path.mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(path)
    try:
        yield root / HOMES["HOME"]
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def user_env() -> dict[str, str]:
    """``os.environ`` with the user's own HOME and XDG directories."""
    env = dict(os.environ)
    for name, value in _USER.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env
