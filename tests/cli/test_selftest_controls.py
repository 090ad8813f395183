"""A negative-control group passes only when every pair gives its answer (seed 002 §6):
a judge right on 3 of a group's 4 obvious pairs fails that control, and the selftest
exits 1 naming it (issue 27: "negative controls pass only when every pair gives the
expected answer")."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurat.cli import ExitCode
from jurat.runner._selftest import ABSTAIN, IDENTITY, MISMATCH
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion

from .conftest import jurat

CAMPAIGN = """\
[campaign]
id = "eq"
kind = "equivalence"
allowed_destinations = ["{url}"]

[[judges]]
id = "remote"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
samples = 1
timeout_s = 10

[[artifacts]]
id = "p1"
a = "1"
b = "1"
"""

_BLOCK = re.compile(r"<<<ANSWER ([AB]) (\S+)>>>\n(.*?)\n<<<END ANSWER \1 \2>>>", re.S)
#: What a careful judge answers for each control pair.
EXPECTED = {**{pair: "EQUIVALENT" for pair in IDENTITY},
            **{pair: "DIFFERENT" for pair in MISMATCH},
            **{pair: "ABSTAIN" for pair in ABSTAIN}}


def judge_missing(miss: tuple[str, str] | None) -> object:
    """A judge right on every control pair but ``miss``, which it calls EQUIVALENT."""

    def answer(request: FakeRequest) -> Reply | dict[str, object]:
        blocks = {label: text for label, _, text in _BLOCK.findall(request.prompt)}
        pair = (blocks.get("A", ""), blocks.get("B", ""))
        decision = "EQUIVALENT" if pair == miss else EXPECTED.get(pair, "ABSTAIN")
        return completion(f"DECISION: {decision}\nREASON: compared\nNUMERIC_A: NULL\n"
                          "NUMERIC_B: NULL")

    return answer


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("FAKE_KEY", "test-key")
    yield


def _selftest(tmp_path: Path, miss: tuple[str, str] | None) -> tuple[int, str]:
    with FakeOpenAI(behaviour=judge_missing(miss)) as server:  # type: ignore[arg-type]
        path = tmp_path / "eq.toml"
        path.write_text(CAMPAIGN.format(url=server.url))
        result = jurat("selftest", str(path))
        assert len(server.received) == len(EXPECTED)  # every control pair asked once
    return result.exit_code, " ".join(result.output.split())


def test_a_judge_right_on_every_control_pair_passes(tmp_path: Path) -> None:
    code, said = _selftest(tmp_path, None)
    assert code == ExitCode.OK, said
    assert "mismatch → DIFFERENT │ pass │ 4/4 as expected" in said


def test_one_missed_pair_of_four_fails_its_control(tmp_path: Path) -> None:
    code, said = _selftest(tmp_path, MISMATCH[1])
    assert code == ExitCode.ESCALATE, said  # 3 of 4 passed at 0.75 before issue 27
    assert "mismatch → DIFFERENT │ FAIL │ 3/4 as expected" in said
    assert "identity → EQUIVALENT │ pass" in said
