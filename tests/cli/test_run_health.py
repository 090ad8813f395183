"""``jurat run``'s judges: a judge whose every answer was unusable makes the run exit 1 and
is named;
a judge that cannot be used exits 3 before anything is sent or written; a rerun counts
what it drew apart from what it reused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jurat.errors import LedgerError
from jurat.ledger import GroupCommit
from tests.support.fake_openai import FakeOpenAI, Reply, echo_judge

from ._run_support import row, run

PANEL = """\
[campaign]
id = "health"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["{url}", "stub"]

[rubric]
version = "r/1"
threshold = 0.5
criteria = [{{ id = "correctness", weight = 1.0 }}]
{local}
[[judges]]
id = "remote"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "{key}"
samples = {samples}
retries = 0
timeout_s = 10
price_in_per_mtok = 1.0
price_out_per_mtok = 2.0

[[artifacts]]
id = "a1"
text = "def f():\\n    return 1\\n"
contributor = "alice"
"""

LOCAL = """
[[judges]]
id = "local"
provider = "stub:always-accept"
samples = 2
"""

SECOND = """
[[artifacts]]
id = "a2"
text = "def g():\\n    return 2\\n"
contributor = "bob"
"""


def campaign(tmp: Path, url: str, *, local: bool = False, two: bool = False,
             key: str = "FAKE_KEY", samples: int = 3) -> Path:
    path = tmp / "campaign.toml"
    text = PANEL.format(url=url, local=LOCAL if local else "", key=key, samples=samples)
    path.write_text(text + (SECOND if two else ""))
    return path


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")


def _malformed(_: object) -> Reply:
    return Reply(body=b'{"choices": [{"message": {"content": "not json"}}]}')


def test_a_judge_that_errored_on_every_sample_makes_the_run_exit_1(tmp_path: Path) -> None:
    # It answered every call, badly: evaluation failures, unsure votes (seed 001). A judge
    # that got no answer at all leaves its jobs incomplete instead (test_run_outage.py).
    with FakeOpenAI(behaviour=_malformed) as server:
        path = campaign(tmp_path, server.url, local=True, two=True, samples=2)
        result = run(tmp_path, path, server)
        assert len(result.requests) == 4  # 2 artifacts x 2 samples, no retry
    # The stub judge decided both: accept, which alone would exit 0.
    assert [result.predicate(a)["decision"]["disposition"] for a in ("a1", "a2")] == [
        "accept", "accept"]
    assert result.code == 1, result.out + result.err
    out = " ".join(result.out.split())
    assert ("judge remote errored on every sample (4 of 4: malformed_json 4): it cast no vote "
            "in any decision, so the others decided without it") in out
    assert ("exit status 1: judge remote errored on every sample, so the decisions lack its "
            "votes; the decisions alone would exit 0") in out
    health = {cells[0]: cells for cells in (row(result.out, j) for j in ("local", "remote"))}
    assert health["local"][1:] == ["stub:always-accept", "4", "4", "0", "4/4 (100%)", "-"]
    assert health["remote"][1:] == ["openai-compat", "4", "4", "0", "0/4 (0%)",
                                    "malformed_json 4"]
    # A rerun reuses both receipts, and says the same about the judge.
    again = run(tmp_path, path, None)
    assert again.code == 1
    assert "judge calls: 0 drawn in this run, 8 reused from the ledger" in again.out


def test_judges_that_answered_keep_the_decisions_exit_status(tmp_path: Path) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        result = run(tmp_path, campaign(tmp_path, server.url, local=True), server)
    assert result.code == 0, result.out + result.err
    assert "errored on every sample" not in result.out
    assert "exit status 0: every decision final" in result.out
    assert "outcomes: accept 1, reject 0, escalate 0" in result.out
    assert "by contributor: alice accept 1" in result.out


REPLAY = """\
[campaign]
id = "replayed"
kind = "rubric"
risk_tier = { votes = 1, min_agreement = 1.0 }
allowed_destinations = ["replay"]

[rubric]
version = "r/1"
criteria = [{ id = "correctness", weight = 1.0 }]

[[judges]]
id = "recorded"
provider = "replay"
replay_file = "recording.ndjson"

[[artifacts]]
id = "a1"
text = "x"
"""

SUBJECT = """\
[campaign]
id = "subject"
kind = "criteria"
allowed_destinations = ["{url}", "stub"]

[criteria]
samples = 1
blocker_samples = 1
items = [{{ id = "polite", text = "Is the reply polite?", blocker = true }}]

[subject]
provider = "openai-compat"
base_url = "{url}"
model = "fake-subject"
api_key_env = "NO_SUCH_KEY"
prompt = "Reply to: {{input}}"

[[judges]]
id = "j"
provider = "stub:always-yes"

[[artifacts]]
id = "case1"
input = "Where is my parcel?"
"""


@pytest.mark.parametrize(("case", "words"), [
    ("api-key", ["judge remote", "NO_SUCH_KEY", "is not set"]),
    ("replay-file", ["recording.ndjson:1: not a replay record"]),
    ("subject-key", ["NO_SUCH_KEY", "is not set"]),
    ("stub-kind", ["judge local (stub:always-yes) cannot judge rubric"]),
])
def test_a_judge_that_cannot_be_used_exits_3_before_anything_is_sent_or_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, words: list[str]
) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        path = tmp_path / "campaign.toml"
        if case == "api-key":
            campaign(tmp_path, server.url, local=True, two=True, key="NO_SUCH_KEY")
        elif case == "replay-file":
            path.write_text(REPLAY)
            (tmp_path / "recording.ndjson").write_text("this is not a recording\n")
            monkeypatch.chdir(tmp_path)  # a replay file is read from the working directory
        elif case == "subject-key":
            path.write_text(SUBJECT.format(url=server.url))
        else:
            campaign(tmp_path, server.url, local=True)
            path.write_text(path.read_text().replace("stub:always-accept", "stub:always-yes"))
        result = run(tmp_path, path, server)
        assert server.requests == 0
    assert result.code == 3, result.out + result.err
    message = " ".join(result.err.split())
    for word in words:
        assert word in message, message
    assert not result.has_ledger()  # not even opened: no file, so no entries
    out = tmp_path / "out"
    assert not out.exists() or not any(out.iterdir())


def test_a_rerun_counts_drawn_and_reused_calls_apart(tmp_path: Path) -> None:
    with FakeOpenAI(behaviour=echo_judge) as server:
        path = campaign(tmp_path, server.url)
        first = run(tmp_path, path, server)
        second = run(tmp_path, path, server)
        assert server.requests == 3
    assert first.code == second.code == 0, first.out + second.out
    assert "judge calls: 3 drawn in this run, 0 reused from the ledger" in first.out
    assert "judge calls: 0 drawn in this run, 3 reused from the ledger" in second.out
    # 3 x 120 tokens in at $1/M and 3 x 40 out at $2/M: $0.0006, spent once.
    assert _cost_rows(first.out) == [("judge", "3", "0.0006"), ("total", "3", "0.0006")]
    assert _cost_rows(second.out) == [
        ("judge", "0", "0.0000"), ("total", "0", "0.0000"),
        ("judge", "3", "0.0006"), ("total", "3", "0.0006")]
    assert "reused, not spent again" in second.out
    assert row(second.out, "a1")[6:] == ["$0.0000", "v1 (reused)"]
    assert row(first.out, "a1")[6:] == ["$0.0006", "v1"]


def test_a_resumed_job_counts_its_recorded_samples_as_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise LedgerError("disk full while appending the receipt (injected)")

    with FakeOpenAI(behaviour=echo_judge) as server:
        path = campaign(tmp_path, server.url)
        with monkeypatch.context() as patch:
            # A run writes its receipts through the ledger's group commit (runner/_run.py).
            patch.setattr(GroupCommit, "append_receipt", refuse)
            failed = run(tmp_path, path, server)
        assert failed.code == 4, failed.out + failed.err
        assert failed.samples() == 3
        resumed = run(tmp_path, path, server)
        assert server.requests == 3  # the recorded samples were not drawn again
    assert resumed.code == 0, resumed.out + resumed.err
    assert "judge calls: 0 drawn in this run, 3 reused from the ledger" in resumed.out
    assert row(resumed.out, "a1")[6:] == ["$0.0000", "v1"]  # a new receipt, no new spend


def _cost_rows(out: str) -> list[tuple[str, str, str]]:
    """(phase, calls, USD) of every cost table row in the output."""
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] in ("judge", "total") and len(parts) >= 6 and parts[1].isdigit():
            rows.append((parts[0], parts[1], parts[5]))
    return rows
