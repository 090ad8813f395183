"""Campaign files load into frozen records; bad ones name file, field, line and fix."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from jurat import load_campaign
from jurat.errors import CampaignError, ConfigError, JuratError
from tests.support.builders import SEED_RUBRIC

GOOD = """\
[campaign]
id = "demo"
kind = "rubric"
allowed_destinations = ["sim"]

[rubric]
version = "code-review/1"
threshold = 0.75
hard_gates = ["python.parse", "tests.pass"]
criteria = [
  { id = "correctness",  weight = 0.45, minimum = 3 },
  { id = "reasoning",    weight = 0.25 },
  { id = "adherence",    weight = 0.20 },
  { id = "presentation", weight = 0.10 },
]

[[judges]]
id = "A"
provider = "sim"
samples = 5

[[artifacts]]
id = "c1"
text = "def f(): return 1"
truth = "accept"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text(text)
    return path


def test_good_campaign_loads_frozen(tmp_path: Path) -> None:
    c = load_campaign(write(tmp_path, GOOD))
    assert c.id == "demo" and c.policy.kind == "rubric"
    assert c.policy.risk_tier.votes == 3
    assert c.policy.rubric is not None and c.policy.rubric.criteria[0].minimum == 3
    assert c.policy.rubric == SEED_RUBRIC  # the builders' rubric is this file's
    with pytest.raises(pydantic.ValidationError):
        c.policy.rubric.threshold = 0.1  # type: ignore[misc]


def test_declared_tier(tmp_path: Path) -> None:
    text = GOOD.replace('kind = "rubric"', 'kind = "rubric"\nrisk_tier = { votes = 1, '
                        'min_agreement = 1.0 }')
    c = load_campaign(write(tmp_path, text))
    assert c.policy.risk_tier.votes == 1 and c.policy.risk_tier.name == "declared"


@pytest.mark.parametrize(
    ("change", "field", "line", "words"),
    [
        (('samples = 5', 'samplez = 5'), "judges[0].samplez", 20, "unknown key"),
        (('weight = 0.45', 'weight = 0.55'), "rubric.criteria", 10, "sum to 1"),
        (('provider = "sim"', 'provider = "gpt"'), "judges[0].provider", 19, "unknown provider"),
        (('weight = 0.10 }', 'weight = -0.10 }'), "rubric.criteria[3].weight", 14, "0"),
        (('kind = "rubric"', 'kind = "vibes"'), "campaign.kind", 3, "rubric"),
        (('id = "c1"', 'id = "c 1"'), "artifacts[0].id", 23, "only letters, digits"),
        (('threshold = 0.75', 'threshold = 1.75'), "rubric.threshold", 8, "1"),
    ],
)
def test_bad_field_is_named_with_line_and_fix(
    tmp_path: Path, change: tuple[str, str], field: str, line: int, words: str
) -> None:
    path = write(tmp_path, GOOD.replace(*change, 1))
    with pytest.raises(CampaignError) as info:
        load_campaign(path)
    err = info.value
    assert err.field == field
    assert err.line == line
    assert err.file == str(path)
    assert err.fix
    assert words in str(err)
    assert isinstance(err, ConfigError) and isinstance(err, JuratError)


def test_missing_rubric_table(tmp_path: Path) -> None:
    text = GOOD.split("[rubric]")[0] + "[[judges]]" + GOOD.split("[[judges]]")[1]
    with pytest.raises(CampaignError, match="needs a \\[rubric\\] table"):
        load_campaign(write(tmp_path, text))


def test_unknown_table_and_campaign_key(tmp_path: Path) -> None:
    with pytest.raises(CampaignError, match="unknown table") as info:
        load_campaign(write(tmp_path, GOOD + "\n[extra]\nx = 1\n"))
    assert info.value.line == 27
    with pytest.raises(CampaignError, match="unknown key 'colour'"):
        load_campaign(write(tmp_path, GOOD.replace('id = "demo"', 'id = "demo"\ncolour = 1')))


def test_unreadable_and_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(CampaignError, match="cannot read"):
        load_campaign(tmp_path / "nope.toml")
    with pytest.raises(CampaignError, match="not valid TOML") as info:
        load_campaign(write(tmp_path, GOOD.replace('id = "demo"', 'id = "demo')))
    assert info.value.line == 2


def test_rubric_ids_beyond_arcv_make_a_general_rubric(tmp_path: Path) -> None:
    # Issue 17: other ids are scored in the general schema (judges/_general.py) ...
    from jurat.judges._general import general_ids

    campaign = load_campaign(write(tmp_path, GOOD.replace('"reasoning"', '"vibes"')))
    assert campaign.policy.rubric is not None
    assert general_ids(campaign.policy.rubric) is not None
    assert general_ids(load_campaign(write(tmp_path, GOOD)).policy.rubric) is None
    # ... but an id one edit from an ARCV key is a typo, refused.
    with pytest.raises(CampaignError, match="ARCV"):
        load_campaign(write(tmp_path, GOOD.replace('"reasoning"', '"reasonin"')))


def test_reasoning_depth_example_loads() -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "reasoning-depth" / "campaign.toml"
    rubric = load_campaign(path).policy.rubric
    assert rubric is not None
    assert [c.id for c in rubric.criteria] == [
        "assumptions", "logical_validity", "mathematics", "complexity", "correction_quality",
        "calibration"]


def test_quickstart_campaigns_load() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
    for path in sorted(root.glob("*/campaign.toml")):
        campaign = load_campaign(path)
        assert campaign.artifacts or campaign.datasets, path
