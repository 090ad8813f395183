"""Loading refuses what intake must never read: escaping paths, bad endpoints, huge inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jurat import load_campaign
from jurat.campaign import campaign_from_dict
from jurat.errors import CampaignError, CampaignErrors
from jurat.models._artifact import MAX_ARTIFACT_BYTES, MAX_TESTS_BYTES

from .test_load import GOOD, write


def _data(artifacts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "campaign": {"id": "big", "kind": "equivalence", "allowed_destinations": ["sim"]},
        "equivalence": {"votes": 1},
        "artifacts": artifacts,
    }


def test_duplicate_ids_among_100k_artifacts_are_all_reported() -> None:
    # The old check counted each id over the whole list: 10^10 steps, it never returned.
    artifacts = [{"id": f"a{i}", "a": "1", "b": "1"} for i in range(100_000)]
    artifacts += [{"id": "a7", "a": "2", "b": "2"}, {"id": "a99999", "a": "3", "b": "3"},
                  {"id": "a7", "a": "4", "b": "4"}]
    with pytest.raises(CampaignErrors) as info:
        campaign_from_dict(_data(artifacts))
    assert [(p.field, p.message) for p in info.value.problems] == [
        ("artifacts[100000].id", "duplicate artifact id 'a7' (first at artifacts[7])"),
        ("artifacts[100001].id", "duplicate artifact id 'a99999' (first at artifacts[99999])"),
    ]


def test_100k_unique_artifacts_load() -> None:
    artifacts = [{"id": f"a{i}", "a": "1", "b": "1"} for i in range(100_000)]
    assert len(campaign_from_dict(_data(artifacts)).artifacts) == 100_000


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (('text = "def f(): return 1"', 'path = "../x.py"'), "artifacts[0].path", "'..'"),
        (('text = "def f(): return 1"', 'path = "/etc/passwd"'), "artifacts[0].path",
         "absolute"),
        (('text = "def f(): return 1"', 'path = "a/../../x.py"'), "artifacts[0].path", "'..'"),
        (('text = "def f(): return 1"', 'b = "x"\na_path = "../a"'), "artifacts[0].a_path",
         "'..'"),
        (('text = "def f(): return 1"', 'text = "x"\ntests = "/t.py"'), "artifacts[0].tests",
         "absolute"),
        (('[[judges]]', '[checks.python]\ntests = "../t.py"\n\n[[judges]]'),
         "checks.python.tests", "'..'"),
        (('samples = 5', 'samples = 5\nreplay_file = "/tmp/r.ndjson"'), "judges[0].replay_file",
         "absolute"),
        (('text = "def f(): return 1"', 'path = ""'), "artifacts[0].path", "empty"),
    ],
)
def test_paths_leading_outside_are_named_with_line_and_fix(
    tmp_path: Path, change: tuple[str, str], field: str, words: str
) -> None:
    text = GOOD.replace(*change, 1)
    lines = text.splitlines()
    key = field.rsplit(".", 1)[1] + " ="
    line = 1 + next(i for i, ln in enumerate(lines) if ln.startswith(key) and ln in change[1])
    with pytest.raises(CampaignError) as info:
        load_campaign(write(tmp_path, text))
    error = info.value
    assert (error.field, error.line) == (field, line), str(error)
    assert words in str(error) and "campaign file's directory" in str(error)
    assert error.fix is not None and "relative to the campaign file" in error.fix


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (('provider = "sim"', 'provider = "openai-compat"\nbase_url = "file:///etc/passwd"'),
         "judges[0].base_url", "http or https"),
        (('provider = "sim"', 'provider = "openai-compat"\nbase_url = "http://a@b/v1"'),
         "judges[0].base_url", "credentials"),
        (('["sim"]', '["sim", "ftp://x"]'), "campaign.allowed_destinations", "http or https"),
        (('["sim"]', '["sim", "openai"]'), "campaign.allowed_destinations", "provider name"),
    ],
)
def test_unusable_endpoints_are_refused_at_load(
    tmp_path: Path, change: tuple[str, str], field: str, words: str
) -> None:
    with pytest.raises(CampaignError) as info:
        load_campaign(write(tmp_path, GOOD.replace(*change, 1)))
    assert info.value.field == field and words in str(info.value)
    assert info.value.line is not None


def test_intake_caps_default_and_ceiling(tmp_path: Path) -> None:
    campaign = load_campaign(write(tmp_path, GOOD))
    assert campaign.intake.max_artifact_bytes == MAX_ARTIFACT_BYTES == 4 * 1024 * 1024
    assert campaign.intake.max_tests_bytes == MAX_TESTS_BYTES == 1024 * 1024
    raised = GOOD + "\n[intake]\nmax_artifact_bytes = 33554432\nmax_tests_bytes = 10\n"
    campaign = load_campaign(write(tmp_path, raised))
    assert (campaign.intake.max_artifact_bytes, campaign.intake.max_tests_bytes) == (
        32 * 1024 * 1024, 10)
    with pytest.raises(CampaignError, match="must be from 1 to 8388608, got 8388609") as info:
        load_campaign(write(tmp_path, GOOD + "\n[intake]\nmax_tests_bytes = 8388609\n"))
    assert info.value.field == "intake.max_tests_bytes"
    assert info.value.line == 28
    assert info.value.fix == "max_tests_bytes = a whole number from 1 to 8388608 (the default " \
        "is 1048576)"


def test_an_oversized_campaign_file_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jurat.campaign._files.MAX_CAMPAIGN_BYTES", len(GOOD) - 1)
    with pytest.raises(CampaignError, match="larger than"):
        load_campaign(write(tmp_path, GOOD))
    monkeypatch.setattr("jurat.campaign._files.MAX_CAMPAIGN_BYTES", len(GOOD))
    assert load_campaign(write(tmp_path, GOOD)).id == "demo"


def test_a_campaign_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "campaign.toml"
    path.write_bytes(GOOD.encode() + b"\n# \xff\n")
    with pytest.raises(CampaignError, match="not UTF-8"):
        load_campaign(path)
