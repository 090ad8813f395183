"""`jurat …` in the test's own process, and the homes its default keys go to."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from jurat.cli import app


def invoke(*args: str) -> Result:
    """``jurat ARGS`` in this process; fails the test on any exception that is not an exit
    and on any traceback in the output, whatever the exit status."""
    result = CliRunner().invoke(app, list(args))
    exc = result.exception
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    assert "Traceback" not in result.output
    return result


def isolate_homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Default keys (signing, log) are created under these: never in the user's home."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
