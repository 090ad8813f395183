"""A new run evaluates the subject again (issue 27): with a ``[subject]``, each `jurat run`
executes it afresh and judges only the outputs that changed (their receipts supersede the
old ones); `--resume RUN_ID` resumes an interrupted run without executing anything it
executed; an unknown run id exits 3.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from jurat.ledger import decode_receipt, open_ledger
from jurat.receipts import read_statement
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion

from ._run_support import Run, run

CAMPAIGN = """\
[campaign]
id = "regress"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 2
blocker_samples = 2
items = [{{ id = "polite", text = "Is the reply polite?", blocker = true }}]

[subject]
provider = "openai-compat"
base_url = "{url}"
model = "fake-subject"
api_key_env = "FAKE_KEY"
prompt = "Reply to the customer: {{input}}"

[[judges]]
id = "j"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
retries = 0
timeout_s = 10
"""

ARTIFACT = """
[[artifacts]]
id = "{q}"
input = "question {q}?"
"""

QUESTIONS = ("q1", "q2", "q3", "q4")
SAMPLES = 2
_ASKED = re.compile(r"question (q\d)\?")
_ANSWERED = re.compile(r"\[(q\d)\]")


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")


def polite(q: str) -> str:
    return f"[{q}] Your parcel is on its way. Kind regards"


def rude(q: str) -> str:
    return f"[{q}] Figure it out yourself."


class Model:
    """The subject (answers per input, changeable between runs) and a judge that says yes
    exactly when the reply ends politely, on one loopback server; each call is counted by
    the question it is about."""

    def __init__(self) -> None:
        self.answers = {q: polite(q) for q in QUESTIONS}
        self.judge_down: set[str] = set()
        self.executed: Counter[str] = Counter()
        self.judged: Counter[str] = Counter()

    def __call__(self, request: FakeRequest) -> Reply | dict[str, Any]:
        prompt = request.prompt
        if request.json()["model"] == "fake-subject":
            asked = _ASKED.search(prompt)
            assert asked is not None, prompt
            self.executed[asked.group(1)] += 1
            return completion(self.answers[asked.group(1)])
        answered = _ANSWERED.search(prompt)
        assert answered is not None, prompt
        q = answered.group(1)
        self.judged[q] += 1
        if q in self.judge_down:
            return Reply(status=503, body=b'{"error": {"message": "upstream down"}}')
        verdict = "yes" if "Kind regards" in prompt else "no"
        return completion(json.dumps({"verdict": verdict, "explanation": "Read the reply."}))

    def reset(self) -> None:
        self.executed.clear()
        self.judged.clear()


def write(tmp: Path, url: str) -> Path:
    path = tmp / "campaign.toml"
    path.write_text(CAMPAIGN.format(url=url) + "".join(ARTIFACT.format(q=q) for q in QUESTIONS))
    return path


def receipts(tmp: Path, q: str) -> list[dict[str, Any]]:
    """The ``receipt`` entries' payloads for artifact ``q``, in ledger order."""
    with open_ledger(f"sqlite:///{tmp / 'l.db'}", create=False) as ledger:
        return [e.payload for e in ledger.entries(kind="receipt", campaign_id="regress",
                                                  artifact_id=q)]


def run_id(result: Run) -> str:
    found = re.search(r"run id: ([0-9a-f]{16})", result.err)
    assert found is not None, result.err
    return found.group(1)


def test_a_rerun_executes_the_subject_again_and_judges_exactly_the_changed_outputs(
    tmp_path: Path,
) -> None:
    model = Model()
    with FakeOpenAI(behaviour=model) as server:
        path = write(tmp_path, server.url)
        first = run(tmp_path, path, server)
        assert first.code == 0, first.out + first.err
        assert model.executed == {q: 1 for q in QUESTIONS}
        assert model.judged == {q: SAMPLES for q in QUESTIONS}
        before = {q: (tmp_path / "out" / f"{q}.sigstore.json").read_bytes() for q in QUESTIONS}

        # The subject changes behind the same model name, for two of the four inputs.
        model.answers["q2"], model.answers["q4"] = rude("q2"), rude("q4")
        model.reset()
        second = run(tmp_path, path, server)
        assert second.code == 2, second.out + second.err  # the regression blocks
        assert model.executed == {q: 1 for q in QUESTIONS}  # every input executed again
        assert model.judged == {"q2": SAMPLES, "q4": SAMPLES}  # only the changed outputs
        assert (f"judge calls: {2 * SAMPLES} drawn in this run, {2 * SAMPLES} reused from "
                "the ledger") in second.out
        assert run_id(first) != run_id(second)

        # And back: q2's first output again reuses its votes (no judge call) in a new
        # review superseding the BLOCK.
        model.answers["q2"] = polite("q2")
        model.reset()
        third = run(tmp_path, path, server)
        assert third.code == 2, third.out + third.err  # q4 still blocks
        assert model.executed == {q: 1 for q in QUESTIONS}
        assert model.judged == {}
        assert f"judge calls: 0 drawn in this run, {4 * SAMPLES} reused" in third.out
    for q in ("q1", "q3"):
        assert (tmp_path / "out" / f"{q}.sigstore.json").read_bytes() == before[q]
        assert [r["review_version"] for r in receipts(tmp_path, q)] == [1]
        assert third.predicate(q)["decision"]["rollout"] == "SHIP"
    q4 = receipts(tmp_path, "q4")
    assert [r["review_version"] for r in q4] == [1, 2]
    assert q4[1]["supersedes"] == q4[0]["receipt_sha256"]
    assert second.predicate("q4")["decision"]["rollout"] == "BLOCK"
    assert second.predicate("q4")["review"]["version"] == 2
    q2 = receipts(tmp_path, "q2")
    assert [r["review_version"] for r in q2] == [1, 2, 3]
    assert q2[2]["supersedes"] == q2[1]["receipt_sha256"]
    latest = third.predicate("q2")
    assert latest["decision"]["rollout"] == "SHIP" and latest["review"]["version"] == 3
    # The v3 review rests on the votes drawn for v1: the same output, judged once.
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        v1 = next(ledger.entries(kind="receipt", artifact_id="q2"))
    first_votes = read_statement(decode_receipt(v1.payload, seq=v1.seq))["predicate"]["votes"]
    assert latest["votes"] == first_votes


def test_a_resumed_run_executes_nothing_the_interrupted_run_executed(tmp_path: Path) -> None:
    model = Model()
    model.judge_down = {"q3"}
    with FakeOpenAI(behaviour=model) as server:
        path = write(tmp_path, server.url)
        broken = run(tmp_path, path, server)
        assert broken.code == 4, broken.out + broken.err
        assert "q3" in broken.err and "no answer" in broken.err
        rid = run_id(broken)
        assert f"add --resume {rid}" in " ".join((broken.out + broken.err).split())
        with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
            recorded = {e.artifact_id for e in ledger.entries(kind="job_received")
                        if e.payload.get("run_id") == rid and "execution" in e.payload}
        assert "q3" in recorded
        # What it recorded it executed (a call cancelled before its record is not resumed).
        assert recorded <= set(model.executed)
        model.judge_down.clear()
        model.reset()
        resumed = run(tmp_path, path, server, "--resume", rid)
        assert resumed.code == 0, resumed.out + resumed.err
        assert run_id(resumed) == rid and "resumed" in resumed.err
        # Nothing the interrupted run executed is executed again; the rest once.
        assert set(model.executed) == set(QUESTIONS) - recorded
        assert all(n == 1 for n in model.executed.values())
        assert model.judged["q3"] == SAMPLES  # its samples without an answer, asked again
    for q in QUESTIONS:
        assert resumed.predicate(q)["decision"]["rollout"] == "SHIP"
        assert [r["review_version"] for r in receipts(tmp_path, q)] == [1]


def test_resume_with_an_unknown_run_id_exits_3_and_writes_nothing(tmp_path: Path) -> None:
    model = Model()
    with FakeOpenAI(behaviour=model) as server:
        path = write(tmp_path, server.url)
        assert run(tmp_path, path, server).code == 0
        with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
            size = ledger.size()
        model.reset()
        refused = run(tmp_path, path, server, "--resume", "0123456789abcdef")
        assert server.requests == len(QUESTIONS) * (1 + SAMPLES)  # nothing sent
    assert refused.code == 3, refused.out + refused.err
    message = " ".join(refused.err.split())
    assert "--resume '0123456789abcdef'" in message and "campaign 'regress'" in message
    assert "(fix: give the run id the interrupted run printed" in message
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}", create=False) as ledger:
        assert ledger.size() == size


def test_resume_of_a_campaign_without_a_subject_exits_3_and_sends_nothing(
    tmp_path: Path,
) -> None:
    model = Model()
    with FakeOpenAI(behaviour=model) as server:
        head, _, tail = CAMPAIGN.format(url=server.url).partition("[subject]")
        judges = tail[tail.index("[[judges]]"):]
        path = tmp_path / "campaign.toml"
        path.write_text(head + judges + f'\n[[artifacts]]\nid = "q1"\ntext = "{polite("q1")}"\n')
        first = run(tmp_path, path, server)
        assert first.code == 0, first.out + first.err
        assert "run id:" not in first.err  # no subject, no run id: as before issue 27
        refused = run(tmp_path, path, server, "--resume", "0123456789abcdef")
        assert server.requests == SAMPLES  # the first run's judge calls only
    assert refused.code == 3, refused.out + refused.err
    message = " ".join(refused.err.split())
    assert "--resume: campaign 'regress' has no [subject]" in message
    assert "(fix: drop --resume;" in message


def test_a_subject_down_signs_nothing_and_the_next_run_executes_it(tmp_path: Path) -> None:
    """An outage of the subject is not an output: no BLOCK is signed for it (issue 27's
    rule for judges, applied to the [subject]); the next run executes it and decides."""
    model = Model()
    down = {"q2"}

    def behaviour(request: FakeRequest) -> Reply | dict[str, Any]:
        asked = _ASKED.search(request.prompt)
        if request.json()["model"] == "fake-subject" and asked and asked.group(1) in down:
            model.executed[asked.group(1)] += 1
            return Reply(status=503, body=b'{"error": {"message": "upstream down"}}')
        return model(request)

    with FakeOpenAI(behaviour=behaviour) as server:
        path = write(tmp_path, server.url)
        broken = run(tmp_path, path, server)
        assert broken.code == 4, broken.out + broken.err
        assert "the subject got no answer" in broken.err and "'q2'" in broken.err
        assert receipts(tmp_path, "q2") == []  # no BLOCK signed from the outage
        assert model.judged["q2"] == 0
        down.clear()
        model.reset()
        again = run(tmp_path, path, server)
        assert again.code == 0, again.out + again.err
        assert model.executed["q2"] == 1
    assert again.predicate("q2")["decision"]["rollout"] == "SHIP"
    assert [r["review_version"] for r in receipts(tmp_path, "q2")] == [1]
