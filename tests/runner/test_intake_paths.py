"""Intake opens campaign files safely: non-regular files, and a directory swapped mid-read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from jurat.campaign import load_campaign
from jurat.errors import CampaignError
from jurat.runner import intake

CAMPAIGN = """\
[campaign]
id = "intake"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "r/1"
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "s"
provider = "sim"

[[artifacts]]
id = "a1"
path = "sub/a.py"
"""


@pytest.fixture
def camp(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "a.py").write_text("SECRET = 1\n")
    camp = tmp_path / "camp"
    (camp / "sub").mkdir(parents=True)
    (camp / "sub" / "a.py").write_text("x = 1\n")
    (camp / "c.toml").write_text(CAMPAIGN)
    return camp


def test_a_regular_file_inside_is_read(camp: Path) -> None:
    [artifact] = intake(load_campaign(camp / "c.toml"))
    assert artifact.text == "x = 1\n"


def test_a_fifo_is_refused_without_blocking(camp: Path) -> None:
    (camp / "sub" / "a.py").unlink()
    os.mkfifo(camp / "sub" / "a.py")
    with pytest.raises(CampaignError, match="not a regular file") as info:
        intake(load_campaign(camp / "c.toml"))
    assert info.value.field == "artifacts[0].path"


def test_a_directory_swapped_for_a_symlink_after_the_check_is_caught(
    camp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path is checked, then a directory on it becomes a symlink to outside, then opened."""
    real_open = os.open

    def swap_then_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(os.path.join("sub", "a.py")) and (camp / "sub").is_dir():
            shutil.rmtree(camp / "sub")
            os.symlink(camp.parent / "outside", camp / "sub")
        return real_open(path, flags, *args, **kwargs)

    campaign = load_campaign(camp / "c.toml")
    monkeypatch.setattr("jurat.campaign._files.os.open", swap_then_open)
    with pytest.raises(CampaignError, match="outside the campaign directory when opened"):
        intake(campaign)


def test_without_proc_the_swap_is_caught_by_resolving_again(
    camp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_readlink = os.readlink

    def no_proc(path: Any, *args: Any, **kwargs: Any) -> str:
        if str(path).startswith("/proc/self/fd/"):
            raise FileNotFoundError(path)
        return real_readlink(path, *args, **kwargs)

    monkeypatch.setattr("jurat.campaign._files.os.readlink", no_proc)
    assert intake(load_campaign(camp / "c.toml"))[0].text == "x = 1\n"
    test_a_directory_swapped_for_a_symlink_after_the_check_is_caught(camp, monkeypatch)


def test_the_last_component_swapped_for_a_symlink_is_not_followed(
    camp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_open = os.open

    def swap_then_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        target = camp / "sub" / "a.py"
        if str(path).endswith(os.path.join("sub", "a.py")) and not target.is_symlink():
            target.unlink()
            os.symlink(camp.parent / "outside" / "a.py", target)
        return real_open(path, flags, *args, **kwargs)

    campaign = load_campaign(camp / "c.toml")
    monkeypatch.setattr("jurat.campaign._files.os.open", swap_then_open)
    with pytest.raises(CampaignError, match="cannot read 'sub/a.py'"):
        intake(campaign)


def test_tests_files_are_read_once_per_campaign(
    camp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (camp / "test_a.py").write_text("def test_a():\n    pass\n")
    text = CAMPAIGN.replace("[[judges]]", '[checks.python]\ntests = "test_a.py"\n\n[[judges]]')
    text += '\n[[artifacts]]\nid = "a2"\npath = "sub/a.py"\n'
    (camp / "c.toml").write_text(text)
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr("jurat.campaign._files.os.open", counting_open)
    artifacts = intake(load_campaign(camp / "c.toml"))
    assert [a.tests for a in artifacts] == [{"test_a.py": "def test_a():\n    pass\n"}] * 2
    assert sum(p.endswith("test_a.py") for p in opened) == 1
