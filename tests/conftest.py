"""Shared test settings: Hypothesis profiles, private homes, markers, the order of files.

- Hypothesis: the profile is ``$HYPOTHESIS_PROFILE`` if set, else ``ci`` (200 examples)
  when ``CI`` is true (CI sets ``CI=true``), else ``dev`` (50 examples).
- Homes: for the whole session HOME and the XDG directories point into the session's
  temporary directory (tests/support/homes.py), so no test, nor any process a test
  starts (they inherit ``os.environ``), reads or writes the user's ``~/.config/jurat`` or
  ``~/.local/state/jurat``.
- Markers (registered in pyproject.toml): ``ray``, ``postgres``, ``sandbox``, ``browser``,
  ``npm`` and ``slow`` are applied here from the rules in ``tests/support/marks.py``, so
  ``pytest -m "not slow and not browser and not ray"`` is a fast subset.
- Order: the longest files first (``tests/support/marks.py``), so that on several xdist
  workers (``make test`` runs two per core, each file whole on one worker) no long file
  starts last.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.support.homes import private_homes
from tests.support.marks import apply_marks

_HYPOTHESIS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("ci", max_examples=200, **_HYPOTHESIS)  # type: ignore[arg-type]
settings.register_profile("dev", max_examples=50, **_HYPOTHESIS)  # type: ignore[arg-type]


def _profile() -> str:
    chosen = os.environ.get("HYPOTHESIS_PROFILE", "")
    if chosen:
        return chosen
    return "ci" if os.environ.get("CI", "").lower() in ("true", "1", "yes") else "dev"


settings.load_profile(_profile())


@pytest.fixture(scope="session", autouse=True)
def _private_homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """HOME and the XDG directories in a temporary directory for the whole session
    (tests/support/homes.py): jurat's default keys and PostgreSQL checkpoints land there,
    never in the user's ``~/.config/jurat`` or ``~/.local/state/jurat``. Tests that need
    a home of their own still set one (tests/support/cli.py)."""
    with private_homes(tmp_path_factory.mktemp("homes")) as home:
        yield home


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: before the plugins' own hooks (xdist's) read the items.
    apply_marks(config, items)
