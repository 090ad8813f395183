"""``jurat run`` against a counting loopback judge: vetoes cost nothing, the summary states
the evidence, root cause first, and nothing it quotes from the tests leaves the terminal.

The judge is ``tests/support/fake_openai.py``'s real OpenAI-compatible server on 127.0.0.1,
so "no judge was asked" is counted in requests that reached it, not in jurat's own words.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from jurat.canonical import sha256_digest
from tests.support.cli import invoke, isolate_homes
from tests.support.fake_openai import FakeOpenAI, echo_judge

from ._run_support import Run, block, row, run

CAMPAIGN = """\
[campaign]
id = "economy"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["{url}"]
{extra}

[rubric]
version = "r/1"
threshold = 0.5
hard_gates = ["python.parse", "python.imports", "tests.pass"]
criteria = [{{ id = "correctness", weight = 1.0 }}]

[checks.python]
version = "3.11"
{tests}

[[judges]]
id = "remote"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
samples = 3
timeout_s = 10
price_in_per_mtok = 1.0
price_out_per_mtok = 2.0
"""

#: What each candidate is, as the contest's artifacts.
SOURCES = {
    "good": "def add(a, b):\n    return a + b\n",
    "wrong": "def add(a, b):\n    return a - b\n",
    "broken": "def add(a, b)\n    return a + b\n",
    "hostile": "import subprocess\n\n\ndef add(a, b):\n    return a + b\n",
}
#: The hidden test: its assertion text is reference material.
TESTS = "from solution import add\n\n\ndef test_add() -> None:\n    assert add(2, 3) == 5\n"
ASSERTION = "assert add(2, 3) == 5"


def write_campaign(root: Path, url: str, names: tuple[str, ...], *, extra: str = "",
                   tests: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "test_solution.py").write_text(TESTS)
    text = CAMPAIGN.format(url=url, extra=extra,
                           tests='tests = "tests/test_solution.py"' if tests else "")
    for i, name in enumerate(names):
        (root / f"{name}.py").write_text(SOURCES[name])
        text += (f'\n[[artifacts]]\nid = "{name}"\npath = "{name}.py"\n'
                 f'contributor = "person{i}"\n')
    path = root / "campaign.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Run, FakeOpenAI]]:
    """The four candidates, run once: good, a failing test, no parse, a denied import."""
    root = tmp_path_factory.mktemp("contest")
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI(behaviour=echo_judge) as server:
        isolate_homes(root, mp)
        mp.setenv("FAKE_KEY", "sk-test")
        campaign = write_campaign(root, server.url, ("good", "wrong", "broken", "hostile"))
        yield run(root, campaign, server, "--telemetry", str(root / "t.ndjson"),
                  "--show-hidden"), server


def test_no_request_reaches_the_judge_for_a_vetoed_artifact(
    contest: tuple[Run, FakeOpenAI]
) -> None:
    result, _ = contest
    assert result.code == 2, result.out + result.err
    good = sha256_digest(SOURCES["good"])
    assert result.requests == [good] * 3  # 3 samples of the one artifact no gate vetoed
    assert result.samples() == 3
    assert "judge calls: 3 drawn in this run, 0 reused from the ledger" in result.out


@pytest.mark.parametrize(("artifact", "gates"), [
    ("wrong", "tests.pass"), ("broken", "python.parse"), ("hostile", "python.imports")])
def test_the_receipt_says_why_no_judge_was_asked_and_still_verifies(
    contest: tuple[Run, FakeOpenAI], artifact: str, gates: str
) -> None:
    result, _ = contest
    pred = result.predicate(artifact)
    assert pred["votes"] == []
    assert pred["inputs"]["judges_skipped"] == (
        f"required gate {gates} did not pass (a veto no judge can change)")
    assert pred["decision"]["disposition"] == "reject"
    assert "judge_after_veto" not in pred["campaign"]["policy"]
    receipt = result.dir / "out" / f"{artifact}.sigstore.json"
    verified = invoke("verify", str(receipt), "--key", str(result.dir / "keys" / "jurat.pub"))
    assert verified.exit_code == 0, verified.output
    assert "re-run fold" in verified.output and "0 independent votes" in verified.output


def test_a_judged_receipt_has_no_skip_field(contest: tuple[Run, FakeOpenAI]) -> None:
    result, _ = contest
    pred = result.predicate("good")
    assert "judges_skipped" not in pred["inputs"] and len(pred["votes"]) == 3
    assert pred["decision"]["disposition"] == "accept"


def test_a_vetoed_row_shows_no_score_or_agreement_of_judges_who_were_not_asked(
    contest: tuple[Run, FakeOpenAI]
) -> None:
    out = contest[0].out
    for artifact in ("wrong", "broken", "hostile"):
        cells = row(out, artifact)
        assert cells[1:5] == ["reject", "vetoed", "not asked", "-"], cells
        assert "independent votes agree" not in " ".join(block(out, artifact))
    assert row(out, "good")[1:5] == ["accept", "Q 1.0000", "1/1", "3/3"]
    # The root cause first, then the gates it made skip.
    assert row(out, "broken")[5] == "python.parse; skipped: python.imports, tests.pass"


def test_the_reasons_state_the_evidence_root_cause_first(
    contest: tuple[Run, FakeOpenAI]
) -> None:
    out = contest[0].out
    broken = block(out, "broken")
    assert broken[0].startswith("python.parse failed: line 1, column ")
    assert broken[1:] == [
        "python.imports skipped: python.parse failed",
        "tests.pass skipped: python.parse failed",
        "judges not asked: veto by python.parse",
    ]
    wrong = block(out, "wrong")
    assert wrong[:6] == [
        "tests.pass failed: did not pass",
        "› 1 of 1 tests did not pass: test #0",
        "› test_solution.py::test_add",
        f"› {ASSERTION}",
        "› E assert -1 == 5",
        "judges not asked: veto by tests.pass",
    ]
    hostile = block(out, "hostile")
    assert hostile[0] == "python.imports failed: denied subprocess (line 1)"
    assert "judges not asked: veto by python.imports" in hostile
    assert ("lint.ruff failed: 1 finding: F401 (1) (not required: reported, no veto)"
            in hostile)
    assert "outcomes: accept 1, reject 3, escalate 0" in out
    assert "by contributor: person0 accept 1; person1 reject 1; person2 reject 1; " \
           "person3 reject 1" in out


def test_what_quotes_the_tests_stays_on_the_operators_terminal(
    contest: tuple[Run, FakeOpenAI]
) -> None:
    result, server = contest
    assert ASSERTION in result.out  # the operator holds the tests
    for receipt in (result.dir / "out").glob("*.sigstore.json"):
        envelope = json.loads(receipt.read_bytes())["dsseEnvelope"]
        assert ASSERTION not in base64.b64decode(envelope["payload"]).decode()
    assert ASSERTION not in result.ledger_text()
    assert ASSERTION not in (result.dir / "t.ndjson").read_text()
    assert all(ASSERTION not in r.prompt for r in server.received)


def test_by_default_the_summary_withholds_the_hidden_tests_detail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CI log is public (issue 36): without --show-hidden, no test name, no
    assertion line, no candidate value and not which tests failed."""
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = write_campaign(tmp_path, server.url, ("wrong",))
        result = run(tmp_path, campaign, server)
    assert result.code == 2, result.out + result.err
    assert block(result.out, "wrong")[:2] == [
        "tests.pass failed: did not pass", "judges not asked: veto by tests.pass"]
    for hidden in (ASSERTION, "test_add", "test_solution.py", "test #0", "-1 == 5", "› "):
        assert hidden not in result.out + result.err, hidden
    assert "add --show-hidden" in result.out


def test_judge_after_veto_asks_and_marks_the_judges_overruled(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = write_campaign(tmp_path, server.url, ("good", "broken"),
                                  extra="judge_after_veto = true")
        result = run(tmp_path, campaign, server)
    assert result.code == 2, result.out + result.err
    assert sorted(str(d) for d in result.requests) == sorted(
        [sha256_digest(SOURCES["good"])] * 3 + [sha256_digest(SOURCES["broken"])] * 3)
    pred = result.predicate("broken")
    assert len(pred["votes"]) == 3 and "judges_skipped" not in pred["inputs"]
    assert pred["campaign"]["policy"]["judge_after_veto"] is True
    assert pred["decision"]["disposition"] == "reject"
    assert row(result.out, "broken")[2:4] == ["vetoed", "overruled"]
    # The judge said accept about code that does not parse: each answer is refused.
    assert block(result.out, "broken")[-1] == (
        "judges asked (judge_after_veto), overruled by the veto: none of their answers "
        "was valid")


def test_a_required_gate_that_did_not_run_escalates_and_the_judges_are_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeOpenAI(behaviour=echo_judge) as server:
        campaign = write_campaign(tmp_path, server.url, ("good",), tests=False)
        result = run(tmp_path, campaign, server)
    assert result.code == 1, result.out + result.err
    assert result.requests == [sha256_digest(SOURCES["good"])] * 3
    pred = result.predicate("good")
    assert pred["decision"]["disposition"] == "escalate"
    assert "judges_skipped" not in pred["inputs"]
    # The loopback judge answers accept, which the validator refuses while a required
    # gate has not passed: its answers are error votes, and the decision stays escalate.
    assert block(result.out, "good") == [
        "tests.pass skipped: no tests supplied",
        "judges: too few independent votes: 0 of 1 required"]
    assert row(result.out, "good")[5] == "skipped: tests.pass"
