"""An outage is not a judgment (issue 27): a judge that answered none of a job's samples
leaves the job incomplete (no receipt, exit 4), the samples without an answer are
journalled as ``transport_failed`` and never recorded as votes, the same command run again
asks exactly those, and a judge whose first calls all fail stops being called.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from jurat.judges import BREAKER_CALLS
from jurat.ledger import open_ledger
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, echo_judge

from ._run_support import run

CAMPAIGN = """\
[campaign]
id = "outage"
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
api_key_env = "FAKE_KEY"
samples = 2
retries = {retries}
timeout_s = 10
max_concurrency = 2
"""

LOCAL = """
[[judges]]
id = "local"
provider = "stub:always-accept"
samples = 1
"""

ARTIFACT = """
[[artifacts]]
id = "a{i}"
text = "def f{i}():\\n    return {i}\\n"
contributor = "c{i}"
"""


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")


def _down(_: FakeRequest) -> Reply:
    return Reply(status=503, body=b'{"error": {"message": "upstream down"}}')


class Switch:
    """A judge endpoint that can go down and come back on the same port (same policy)."""

    def __init__(self) -> None:
        self.now: Callable[[FakeRequest], Reply | dict[str, object]] = _down

    def __call__(self, request: FakeRequest) -> Reply | dict[str, object]:
        return self.now(request)


def write(tmp: Path, url: str, *, artifacts: int, retries: int = 0, local: bool = True
          ) -> Path:
    path = tmp / "campaign.toml"
    text = CAMPAIGN.format(url=url, retries=retries, local=LOCAL if local else "")
    path.write_text(text + "".join(ARTIFACT.format(i=i) for i in range(1, artifacts + 1)))
    return path


def kinds(root: Path) -> dict[str, int]:
    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        found: dict[str, int] = {}
        for entry in ledger.entries():
            found[entry.kind] = found.get(entry.kind, 0) + 1
        return found


def remote_votes(root: Path) -> list[dict[str, object]]:
    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        return [e.payload["vote"] for e in ledger.entries(kind="sample_recorded")
                if e.payload["vote"]["judge"] == "remote"]


def test_a_judge_down_for_one_run_and_up_for_the_next_signs_no_outage(tmp_path: Path
                                                                      ) -> None:
    switch = Switch()
    with FakeOpenAI(behaviour=switch) as server:
        path = write(tmp_path, server.url, artifacts=2)
        first = run(tmp_path, path, server)
        # Incomplete, not a judgment: exit 4, the judge named, nothing signed.
        assert first.code == 4, first.out + first.err
        said = " ".join((first.out + first.err).split())
        assert "judge remote got no answer for any of its 2 samples (http_5xx 2)" in said
        assert "run the same command again" in said
        assert not list((tmp_path / "out").glob("*.sigstore.json"))
        journal = kinds(tmp_path)
        assert journal.get("receipt", 0) == 0 and journal.get("decision", 0) == 0
        failed = journal["transport_failed"]
        assert 2 <= failed <= len(first.requests)  # each sample without an answer, once
        assert remote_votes(tmp_path) == []  # never recorded as a vote

        switch.now = echo_judge
        second = run(tmp_path, path, server)
    assert second.code == 0, second.out + second.err
    # Every job completes with the judge's real answers: no WARN from the outage.
    for artifact in ("a1", "a2"):
        predicate = second.predicate(artifact)
        assert predicate["decision"]["disposition"] == "accept"
        remote = [v for v in predicate["votes"] if v["judge"] == "remote"]
        assert len(remote) == 2 and all(v["error"] is None for v in remote)
    assert len(second.requests) == 4  # both artifacts' samples, each asked once now
    assert len(remote_votes(tmp_path)) == 4
    assert kinds(tmp_path)["receipt"] == 2


def test_a_judge_that_answered_some_samples_keeps_seed_001s_unsure_vote(tmp_path: Path
                                                                       ) -> None:
    answered: list[int] = []

    def flaky(request: FakeRequest) -> Reply | dict[str, object]:
        answered.append(1)
        return echo_judge(request) if len(answered) % 2 else _down(request)

    with FakeOpenAI(behaviour=flaky) as server:
        path = write(tmp_path, server.url, artifacts=1, local=False)
        result = run(tmp_path, path, server)
    assert result.code in (0, 1), result.out + result.err  # decided, with an unsure vote
    votes = result.predicate("a1")["votes"]
    assert sorted(str(v["error"]) for v in votes) == ["None", "http_5xx"]
    journal = kinds(tmp_path)
    assert journal["transport_failed"] == 1 and journal["receipt"] == 1
    assert len(remote_votes(tmp_path)) == 2  # the errored sample is a vote after all


def test_a_judge_whose_first_calls_all_fail_stops_being_called(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Retries with no wait, so the test measures calls, not backoff.
    monkeypatch.setattr("jurat.judges._engine.Engine._backoff", lambda *_: 0.0)
    with FakeOpenAI(behaviour=_down) as server:
        path = write(tmp_path, server.url, artifacts=8, retries=3, local=False)
        # One process: each worker process of a run has a breaker of its own.
        result = run(tmp_path, path, server, "--workers", "1")
    assert result.code == 4, result.out + result.err
    # 8 artifacts x 2 samples x 4 attempts = 64 calls without the breaker; with it, the
    # first BREAKER_CALLS and at most the 2 already in flight (max_concurrency = 2).
    assert BREAKER_CALLS <= len(result.requests) <= BREAKER_CALLS + 2
    said = " ".join((result.out + result.err).split())
    found = re.search(r"judge remote got no answer to its first (\d+) calls", said)
    assert found and BREAKER_CALLS <= int(found.group(1)) <= len(result.requests), said
    assert not list((tmp_path / "out").glob("*.sigstore.json"))


def test_an_all_malformed_panel_is_an_evaluation_failure_not_a_disagreement(
        tmp_path: Path) -> None:
    def malformed(_: FakeRequest) -> Reply:
        return Reply(body=b'{"choices": [{"message": {"content": "not json"}}]}')

    with FakeOpenAI(behaviour=malformed) as server:
        path = write(tmp_path, server.url, artifacts=1, local=False)
        result = run(tmp_path, path, server)
    # The judge answered (badly): a decision, escalated, journalled by what caused it.
    assert result.code == 1, result.out + result.err
    assert result.predicate("a1")["decision"]["disposition"] == "escalate"
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        assert not list(ledger.entries(kind="unresolved_disagreement"))
        (entry,) = ledger.entries(kind="evaluation_failed")
    assert entry.payload["escalated"] is True
    assert sum(entry.payload["errors"].values()) == 2
