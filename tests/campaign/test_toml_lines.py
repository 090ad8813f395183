"""The TOML line index that gives campaign problems their line, and intake's use of it."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from jurat.campaign import campaign_line, load_campaign
from jurat.campaign._toml_lines import TomlLines
from jurat.errors import CampaignError, CampaignErrors, ConfigError
from jurat.runner import intake

from .test_load_errors import RUBRIC, changed, line_of, write

TRICKY = '''\
a = """x [y]
z = 3 # not a key
\\\\"""
[[t]]
b = [ "a", # a comment ]
  "b" ]
[t.sub]
c = 1
[[t]]
q = { a = [1,
]}
r = \'\'\'
[[t]]\'\'\'
crit = [
  { id = "x", w = [1, 2] },
  { id = "y" },
]
"s.t" = 1
'''


def test_lines_of_tables_keys_and_entries_ignore_strings_and_comments() -> None:
    tomllib.loads(TRICKY)  # the index reads only text tomllib accepts
    lines = TomlLines(TRICKY)
    assert lines.line(("a",)) == 1
    assert lines.line(("z",)) is None  # inside a string
    assert lines.line(("t", 0)) == 4 and lines.line(("t", 1)) == 9
    assert lines.line(("t", 0, "b", 1)) == 6
    assert lines.line(("t", 0, "sub", "c")) == 8
    assert lines.line(("t", 1, "r")) == 12
    assert lines.line(("t", 1, "crit", 1, "id")) == 16  # falls back to the entry's line
    assert lines.line(("t", 2)) == 4  # no third [[t]]: the nearest place found, the array
    assert lines.line(("t", 1, "nothing", "here")) == 9  # falls back to the table header
    assert lines.header(("t", "sub")) == "[t.sub]"


def test_campaign_line_reads_a_field_as_intake_names_it(tmp_path: Path) -> None:
    path = write(tmp_path, RUBRIC)
    last_tests = len(RUBRIC.splitlines()) - 1  # bob's own tests, the line before his truth
    assert campaign_line(str(path), "artifacts[1].tests") == last_tests
    assert campaign_line(str(path), "checks.python.tests") == line_of(RUBRIC, "tests = ")
    assert campaign_line(str(tmp_path / "gone.toml"), "artifacts[0].path") is None
    assert campaign_line(None, "artifacts[0].path") is None


def test_an_intake_refusal_names_the_line_of_the_key(tmp_path: Path) -> None:
    camp = tmp_path / "camp"
    camp.mkdir()
    text = changed(RUBRIC, ('path = "submissions/bob.py"', 'path = "link.py"'))
    path = write(camp, text)
    (tmp_path / "secret.py").write_text("SECRET = 1\n")
    os.symlink(tmp_path / "secret.py", camp / "link.py")
    campaign = load_campaign(path)
    with pytest.raises(CampaignError) as info:
        intake(campaign)
    assert (info.value.field, info.value.line) == ("artifacts[1].path", line_of(text, "link.py"))
    assert "leads outside the campaign directory" in info.value.message


def test_several_problems_are_one_error_of_the_campaign_family() -> None:
    one = CampaignError("a", file="c.toml", line=3, field="x", fix="do a")
    two = CampaignError("b", file="c.toml", line=9, field="y")
    error = CampaignErrors([one, two])
    assert isinstance(error, CampaignError) and isinstance(error, ConfigError)
    assert error.exit_code == 3 and error.problems == (one, two)
    assert error.diagnostics().splitlines() == [
        "c.toml: 2 problems, listed by line",
        "[1] c.toml:3: field `x`: a",
        "    fix: do a",
        "[2] c.toml:9: field `y`: b",
    ]
    assert str(error) == error.diagnostics()
