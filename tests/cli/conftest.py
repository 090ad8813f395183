"""Fixtures for the command line's tests: a private config/state home, tiny campaigns."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import Result

from tests.support.cli import invoke, isolate_homes


@pytest.fixture(autouse=True)
def _homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_homes(tmp_path, monkeypatch)


def jurat(*args: str) -> Result:
    """``jurat ARGS`` in this process (``tests.support.cli.invoke``)."""
    return invoke(*args)


EQUIVALENCE = """\
[campaign]
id = "cli-{name}"
kind = "equivalence"
allowed_destinations = ["stub"]

[equivalence]
votes = 1
min_agreement = 1
deterministic_first = false

[[judges]]
id = "eq"
provider = "stub:{stub}"

[[artifacts]]
id = "p1"
a = "The answer is 12."
b = "12"
"""

CRITERIA = """\
[campaign]
id = "cli-{name}"
kind = "criteria"
allowed_destinations = ["stub"]

[criteria]
samples = 1
blocker_samples = 1
items = [{{ id = "polite", text = "Is the reply polite?", blocker = true }}]

[[judges]]
id = "c"
provider = "stub:{stub}"

[[artifacts]]
id = "r1"
text = "Thank you for writing."
"""


def campaign(tmp_path: Path, template: str, name: str, stub: str) -> Path:
    """A one-artifact campaign file judged by one stub."""
    path = tmp_path / f"{name}.toml"
    path.write_text(template.format(name=name, stub=stub))
    return path


@pytest.fixture
def signing_key(tmp_path: Path) -> tuple[Path, Path]:
    """A key pair made by ``jurat keygen``: (private, public)."""
    out = tmp_path / "keys"
    assert jurat("keygen", "--out", str(out)).exit_code == 0
    return out / "jurat.key", out / "jurat.pub"
