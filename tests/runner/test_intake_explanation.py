"""``[rubric] require_explanation`` at intake: an explanation counts only if a reader can
see a character of it (issue 36, item 6; models/_visible.py, the service's rule too:
tests/service/test_echo_free_refusals.py)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.campaign import load_campaign
from jurat.errors import CampaignError
from jurat.models._visible import BLANK_CHARACTERS
from jurat.runner import intake

CAMPAIGN = """\
[campaign]
id = "explained"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "r/1"
require_explanation = true
criteria = [{{ id = "correctness", weight = 1.0 }}]

[[judges]]
id = "s"
provider = "sim"

[[artifacts]]
id = "a1"
text = "def f(): return 1"
explanation = {explanation}
"""

INVISIBLE = st.one_of(
    st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me"],
                  exclude_characters="\x00"),
    st.sampled_from(sorted(BLANK_CHARACTERS)),
)
SEEN = st.characters(categories=["L", "N", "P", "S"]).filter(
    lambda c: c not in BLANK_CHARACTERS)


def _toml_string(text: str) -> str:
    """``text`` as a TOML basic string: controls, quote and backslash escaped, the rest
    (format characters, separators, marks) written as they are."""
    return '"' + "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c) == "Cc" or c in '"\\' else c
        for c in text) + '"'


def _campaign(root: Path, explanation: str) -> Path:
    path = root / "c.toml"
    path.write_text(CAMPAIGN.format(explanation=_toml_string(explanation)), encoding="utf-8")
    return path


@given(st.text(INVISIBLE, min_size=1, max_size=30))
def test_an_explanation_of_invisible_characters_is_refused(tmp_path_factory: pytest.
                                                           TempPathFactory, text: str) -> None:
    campaign = load_campaign(_campaign(tmp_path_factory.mktemp("c"), text))
    with pytest.raises(CampaignError, match="require_explanation") as info:
        intake(campaign)
    assert info.value.field == "artifacts[0].explanation"
    assert "only whitespace or invisible characters" in str(info.value)


@given(st.text(INVISIBLE, max_size=10), SEEN, st.text(INVISIBLE, max_size=10))
def test_one_visible_character_is_an_explanation(tmp_path_factory: pytest.TempPathFactory,
                                                 before: str, seen: str, after: str) -> None:
    campaign = load_campaign(_campaign(tmp_path_factory.mktemp("c"), before + seen + after))
    [artifact] = intake(campaign)
    assert artifact.explanation is not None
    assert artifact.explanation.chars == len(before + seen + after)


def test_the_reported_zero_width_explanation_is_refused(tmp_path: Path) -> None:
    campaign = load_campaign(_campaign(tmp_path, "\u200b\u200b\u200b"))
    with pytest.raises(CampaignError, match="invisible"):
        intake(campaign)
