"""``jurat selftest CAMPAIGN``: the campaign's panel, only its kind's controls, requests only
to its ``allowed_destinations``; "not applicable" is "n/a", never "pass"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jurat.cli import ExitCode
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, arcv_decision, completion

from .conftest import jurat

REMOTE = """\
[campaign]
id = "remote"
kind = "rubric"
allowed_destinations = [{allowed}]

[rubric]
version = "remote/1"
criteria = [{{ id = "correctness", weight = 1.0 }}]

[[judges]]
id = "remote"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
samples = 1
timeout_s = 10

[[artifacts]]
id = "a1"
text = "x"
"""


def careful_judge(request: FakeRequest) -> Reply | dict[str, Any]:
    """Accepts correct code, rejects the selftest's subtracting ``add``."""
    if "return a - b" in request.prompt:
        answer = arcv_decision(request.digest, disposition="reject", preference="B",
                               hard_gates_pass=True, scores={
                                   "correctness": 1, "reasoning": 1, "adherence": 2,
                                   "presentation": 3},
                               explanation="It subtracts where it should add: wrong.")
    else:
        answer = arcv_decision(request.digest)
    return completion(json.dumps(answer))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv("FAKE_KEY", "test-key")
    with FakeOpenAI(behaviour=careful_judge) as fake:
        yield fake


def _said(result: object) -> str:
    return " ".join(str(getattr(result, "output", "")).split())


def _campaign(tmp_path: Path, server: FakeOpenAI, allowed: str) -> Path:
    path = tmp_path / "remote.toml"
    path.write_text(REMOTE.format(url=server.url, allowed=allowed))
    return path


def test_a_real_judge_allowed_by_the_campaign_is_self_tested(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    result = jurat("selftest", str(_campaign(tmp_path, server, f'"{server.url}"')))
    assert result.exit_code == ExitCode.OK, result.output
    assert len(server.received) >= 2  # the two rubric canaries reached the endpoint
    said = _said(result)
    assert "testing campaign remote (rubric): its rubric controls" in said
    assert "canary: correct code accepted │ pass" in said
    assert "bias: always-accept (broken code) │ pass" in said
    # Only the rubric controls: no equivalence, criteria or pairwise rows.
    for other in ("EQUIVALENT", "ABSTAIN", "SHIP", "position", "verbosity"):
        assert other not in said, other
    assert said.endswith("all applicable controls pass")


def test_a_judge_outside_allowed_destinations_exits_3_and_sends_nothing(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    result = jurat("selftest", str(_campaign(tmp_path, server, '"sim"')))
    assert result.exit_code == ExitCode.INPUT, result.output
    assert server.received == []
    said = _said(result)
    assert "field `judges[0].base_url`" in said
    assert "which is not in campaign.allowed_destinations ['sim']" in said
    assert "fix: add" in said


def test_a_missing_api_key_exits_3_and_sends_nothing(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_KEY")
    result = jurat("selftest", str(_campaign(tmp_path, server, f'"{server.url}"')))
    assert result.exit_code == ExitCode.INPUT, result.output
    assert server.received == []
    assert "FAKE_KEY" in _said(result)


def test_an_always_accepting_remote_judge_fails_its_rubric_canary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "test-key")
    with FakeOpenAI(behaviour=lambda r: completion(json.dumps(arcv_decision(r.digest)))) as fake:
        result = jurat("selftest", str(_campaign(tmp_path, fake, f'"{fake.url}"')))
    assert result.exit_code == ExitCode.ESCALATE, result.output
    said = _said(result)
    assert "bias: always-accept (broken code) │ FAIL" in said
    assert "1 control(s) failed" in said


def test_not_applicable_is_shown_as_na_never_pass() -> None:
    """An equivalence stub answers no rubric, criterion or pairwise prompt."""
    result = jurat("selftest", "--judge", "stub:numeric-simulated")
    said = _said(result)
    for kind in ("rubric", "criterion", "pairwise"):
        assert f"{kind} controls │ n/a │ this judge does not" in said
        assert f"{kind} controls │ pass" not in said
    assert "(3 not applicable)" in said
    assert result.exit_code == ExitCode.OK, result.output


def test_a_rubric_panel_is_not_failed_on_equivalence_controls(tmp_path: Path) -> None:
    """A rubric campaign judged by a stub that accepts everything fails its rubric canary,
    and nothing else: no equivalence control is run on it."""
    path = tmp_path / "rubric.toml"
    path.write_text("""\
[campaign]
id = "r"
kind = "rubric"
allowed_destinations = ["stub"]

[rubric]
version = "r/1"
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "yes-man"
provider = "stub:always-accept"

[[artifacts]]
id = "a1"
text = "x"
""")
    result = jurat("selftest", str(path))
    said = _said(result)
    assert result.exit_code == ExitCode.ESCALATE, result.output
    assert "bias: always-accept (broken code) │ FAIL" in said
    assert "EQUIVALENT" not in said and "equivalence" not in said


def test_a_judge_no_control_applies_to_is_not_a_pass(tmp_path: Path) -> None:
    path = tmp_path / "eq-stub-on-rubric.toml"
    path.write_text("""\
[campaign]
id = "mismatch"
kind = "criteria"
allowed_destinations = ["stub"]

[criteria]
samples = 1
blocker_samples = 1
items = [{ id = "polite", text = "Is the reply polite?", blocker = true }]

[[judges]]
id = "eq"
provider = "stub:always-equivalent"

[[artifacts]]
id = "r1"
text = "Thank you."
""")
    result = jurat("selftest", str(path))
    said = _said(result)
    assert "criterion controls │ n/a" in said
    assert "no control applies to eq" in said and "all applicable controls pass" not in said
    assert result.exit_code == ExitCode.ESCALATE
