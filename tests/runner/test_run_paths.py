"""`jurat run` reads nothing outside the campaign's directory and nothing over the caps.

Every refusal is checked end to end: exit 3, not one request at the loopback judge that
would have received the content, and no ledger entry.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.fake_openai import FakeOpenAI, echo_judge

from ._support import entries, jurat, keys

SECRET = "TOP-SECRET-MARKER-7f3a"

CAMPAIGN = """\
[campaign]
id = "paths"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["{url}"]
{intake}
[rubric]
version = "r/1"
threshold = 0.5
criteria = [{{ id = "correctness", weight = 1.0 }}]
{checks}
[[judges]]
id = "remote"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
samples = 3
timeout_s = 10
{judges}
[[artifacts]]
id = "a1"
{artifact}
"""


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(behaviour=echo_judge) as fake:
        yield fake


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """tmp/secret.txt and tmp/outside/ hold what must never be read; tmp/camp/ the campaign."""
    (tmp_path / "secret.txt").write_text(SECRET)
    (tmp_path / "secret_test.py").write_text(f"def test_x():\n    assert '{SECRET}'\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text(f"# {SECRET}\n")
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / "ok.py").write_text("def f():\n    return 1\n")
    return camp


def _campaign(camp: Path, url: str, artifact: str, *, intake: str = "", checks: str = "",
              judges: str = "") -> Path:
    path = camp / "c.toml"
    path.write_text(CAMPAIGN.format(url=url, artifact=artifact, intake=intake, checks=checks,
                                    judges=judges))
    return path


def _run(camp: Path, campaign: Path) -> tuple[int, str]:
    work = camp.parent
    key, _ = keys(work)
    r = jurat("run", str(campaign), "--out", str(work / "out"), "--ledger",
              f"sqlite:///{work / 'l.db'}", "--key", str(key), "--quiet", cwd=work,
              env={"FAKE_KEY": "sk-test"})
    return r.returncode, " ".join((r.stdout + r.stderr).split())


def _refused(camp: Path, campaign: Path, server: FakeOpenAI, *words: str) -> str:
    code, out = _run(camp, campaign)
    assert code == 3, out
    assert server.requests == 0, out
    assert entries(camp.parent / "l.db") == []
    assert SECRET not in out
    assert "c.toml" in out and "fix:" in out
    for word in words:
        assert word in out, out
    return out


def _symlink(link: Path, target: str | Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)


ESCAPES: dict[str, tuple[Callable[[Path], str], str]] = {
    "dot-dot": (lambda camp: 'path = "../secret.txt"', "artifacts[0].path"),
    "absolute": (lambda camp: f'path = "{camp.parent / "secret.txt"}"', "artifacts[0].path"),
    "symlink-to-outside": (
        lambda camp: (_symlink(camp / "link.py", camp.parent / "secret.txt"),
                      'path = "link.py"')[1],
        "artifacts[0].path"),
    "relative-symlink-inside-pointing-out": (
        lambda camp: (_symlink(camp / "inner" / "link.py", "../../secret.txt"),
                      'path = "inner/link.py"')[1],
        "artifacts[0].path"),
    "symlinked-directory": (
        lambda camp: (_symlink(camp / "sub", camp.parent / "outside"),
                      'path = "sub/secret.py"')[1],
        "artifacts[0].path"),
    "pair-part": (lambda camp: 'a_path = "../secret.txt"\nb = "x"', "artifacts[0].a_path"),
    "artifact-tests-symlink": (
        lambda camp: (_symlink(camp / "test_link.py", camp.parent / "secret_test.py"),
                      'path = "ok.py"\ntests = "test_link.py"')[1],
        "artifacts[0].tests"),
}


@pytest.mark.parametrize("case", sorted(ESCAPES))
def test_a_path_leading_outside_is_refused_before_any_request(
    layout: Path, server: FakeOpenAI, case: str
) -> None:
    make, field = ESCAPES[case]
    campaign = _campaign(layout, server.url, make(layout))
    _refused(layout, campaign, server, field, "campaign file's directory")


def test_a_tests_file_escaping_through_checks_python_is_refused(
    layout: Path, server: FakeOpenAI
) -> None:
    checks = '[checks.python]\ntests = "../secret_test.py"\n'
    campaign = _campaign(layout, server.url, 'path = "ok.py"', checks=checks)
    _refused(layout, campaign, server, "checks.python.tests", "'..'")


def test_a_tests_directory_symlinked_outside_is_refused(layout: Path, server: FakeOpenAI) -> None:
    _symlink(layout / "tests", layout.parent)
    checks = '[checks.python]\ntests = "tests/secret_test.py"\n'
    campaign = _campaign(layout, server.url, 'path = "ok.py"', checks=checks)
    _refused(layout, campaign, server, "checks.python.tests", "outside")


def test_a_replay_file_outside_is_refused(layout: Path, server: FakeOpenAI) -> None:
    replay = '[[judges]]\nid = "rec"\nprovider = "replay"\nreplay_file = "../secret.txt"\n'
    campaign = _campaign(layout, server.url, 'path = "ok.py"', judges=replay)
    _refused(layout, campaign, server, "judges[1].replay_file")


def test_a_symlink_that_stays_inside_is_followed(layout: Path, server: FakeOpenAI) -> None:
    _symlink(layout / "alias" / "ok.py", "../ok.py")
    campaign = _campaign(layout, server.url, 'path = "alias/ok.py"')
    code, out = _run(layout, campaign)
    assert code == 0, out
    assert server.requests == 3
    assert b"return 1" in server.received[0].body


CAP = "[intake]\nmax_artifact_bytes = 1000\nmax_tests_bytes = 100\n"


def test_an_artifact_file_over_the_cap_is_refused(layout: Path, server: FakeOpenAI) -> None:
    (layout / "big.py").write_text("#" * 1001)
    campaign = _campaign(layout, server.url, 'path = "big.py"', intake=CAP)
    _refused(layout, campaign, server, "artifacts[0].path", "'a1'", "cap of 1000 bytes",
             "max_artifact_bytes")


def test_an_artifact_at_the_cap_is_read(layout: Path, server: FakeOpenAI) -> None:
    (layout / "edge.py").write_text("#" * 1000)
    campaign = _campaign(layout, server.url, 'path = "edge.py"', intake=CAP)
    code, out = _run(layout, campaign)
    assert code in (0, 1), out
    assert server.requests == 3


def test_inline_text_over_the_cap_is_refused(layout: Path, server: FakeOpenAI) -> None:
    campaign = _campaign(layout, server.url, f'text = "{"x" * 1001}"', intake=CAP)
    _refused(layout, campaign, server, "artifacts[0].text", "cap of 1000 bytes")


def test_a_tests_file_over_the_cap_is_refused(layout: Path, server: FakeOpenAI) -> None:
    (layout / "test_big.py").write_text("#" * 101)
    checks = '[checks.python]\ntests = "test_big.py"\n'
    campaign = _campaign(layout, server.url, 'path = "ok.py"', intake=CAP, checks=checks)
    _refused(layout, campaign, server, "checks.python.tests", "cap of 100 bytes",
             "max_tests_bytes")


def test_the_default_cap_refuses_a_large_artifact(layout: Path, server: FakeOpenAI) -> None:
    with (layout / "huge.txt").open("wb") as handle:
        handle.truncate(4 * 1024 * 1024 + 1)  # sparse: the size is what matters
    campaign = _campaign(layout, server.url, 'path = "huge.txt"')
    _refused(layout, campaign, server, "artifacts[0].path", "cap of 4194304 bytes")


def test_a_cap_above_the_ceiling_is_refused(layout: Path, server: FakeOpenAI) -> None:
    intake = "[intake]\nmax_artifact_bytes = 1073741824\n"
    campaign = _campaign(layout, server.url, 'path = "ok.py"', intake=intake)
    _refused(layout, campaign, server, "intake.max_artifact_bytes")
