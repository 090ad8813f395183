"""Fixtures for the service's tests: a private config home, an environment per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service._support import Env, make_env
from tests.support.cli import isolate_homes


@pytest.fixture(autouse=True)
def _homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


@pytest.fixture
def env(tmp_path: Path) -> Env:
    return make_env(tmp_path)
