"""One settlement per piece of work: identical bytes through a real `jurat serve`, then a real
`jurat signer`.

Contributors choose their artifact ids, so the signer's one-settlement rule is keyed on the
work's digest (issue 37: the artifact modulo what the campaign says is not new work): the
same work under another id or submitted again is one settlement, and another
contributor's copy is never settled (its receipt names the first job). A registry campaign
that declares ``settle_once_per = "task_artifact"`` settles the same work once per task of
the campaign's ``[[tasks]]`` instead (short answers to different questions may be
identical). Every role that may read a job sees its duplicate mark, as its receipt says it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.service._support import make_env, subprocess_server, wait_decided
from tests.signer._served import Served
from tests.signer.world import CONTRACT, RECIPIENT

_BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
#: One stand-in judge that accepts, so every job ends in an accept the signer may pay.
_CAMPAIGN = """\
[campaign]
id = "{id}"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["stub"]

[rubric]
version = "r/1"
hard_gates = []
criteria = [ {{ id = "correctness", weight = 1.0 }} ]

[[judges]]
id = "A"
provider = "stub:always-accept"
samples = 1
"""
#: The tasks of the campaign settled per task: a task is one of them, never a free label.
_TASKS = """
[[tasks]]
id = "t1"
statement = "What is six times seven?"

[[tasks]]
id = "t2"
statement = "What is forty-two?"
"""
_REGISTRY = f"""
[recipients]
alice = "{RECIPIENT}"
bob = "{_BOB}"

[[campaigns]]
id = "pay"
chain_id = 31337
contract = "{CONTRACT}"
selector = "0xa9059cbb"
dataset = "pay-2026"
reward = "10"

[[campaigns]]
id = "short"
chain_id = 31337
contract = "{CONTRACT}"
selector = "0xa9059cbb"
dataset = "short-2026"
reward = "3"
settle_once_per = "task_artifact"
"""
_SAME = "The answer is 42."
#: (campaign, contributor, artifact id, task): every one with the bytes ``_SAME``.
_JOBS = (
    ("pay", "alice", "pay1", None),
    ("pay", "alice", "pay2", None),
    ("pay", "bob", "pay3", None),
    ("short", "alice", "q1", "t1"),
    ("short", "alice", "q2", "t2"),
    ("short", "bob", "q3", "t1"),
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("once")
    env = make_env(root)
    for cid in ("pay", "short"):
        env.campaigns[cid] = root / f"{cid}.toml"
        env.campaigns[cid].write_text(_CAMPAIGN.format(id=cid) + (_TASKS if cid == "short"
                                                                   else ""))
    registry = root / "registry.toml"
    registry.write_text(_REGISTRY)
    with subprocess_server(env, ("pay", "short")) as (_, url), httpx.Client(base_url=url) as http:
        jobs: dict[str, str] = {}
        for cid, who, aid, task in _JOBS:
            body: dict[str, Any] = {"artifact": {"id": aid, "text": _SAME}}
            if task is not None:
                body["artifact"]["task"] = task
            answer = http.post(f"/v1/campaigns/{cid}/jobs", json=body,
                               headers=env.auth("contributor", cid, who))
            assert answer.status_code == 202, answer.text
            jobs[aid] = answer.json()["job_id"]
        served = Served(env=env, url=url, registry=registry, jobs=jobs)
        operator = env.auth("operator")
        for aid, job in jobs.items():
            assert wait_decided(http, job, operator)["decision"]["disposition"] == "accept"
            served.save(http, aid, operator)
        yield served


def _refused(answer: dict[str, Any], check: str) -> str:
    assert set(answer) == {"refused", "reason"}, answer
    assert answer["refused"] == check, answer
    reason: str = answer["reason"]
    return reason


def _nonce(answer: dict[str, Any]) -> str:
    assert "typed_data" in answer, answer
    nonce: str = answer["typed_data"]["message"]["nonce"]
    return nonce


def test_three_ids_with_the_same_bytes_get_one_settlement(served: Served, start_signer: Any
                                                         ) -> None:
    signer = start_signer(ledger=served.env.ledger_url, registry=served.registry,
                          receipt_keys=[served.env.pub])
    answers = [signer.ask(served.receipt(aid)) for aid in ("pay1", "pay2", "pay3")]
    assert answers[0][0] == 0 and _nonce(answers[0][1]) == "1"
    # Alice's own second submission: her work, already paid once.
    code, again = answers[1]
    reason = _refused(again, "replay")
    assert code == 1 and reason.startswith("duplicate") and "nonce 1" in reason, reason
    # Bob's copy: the first submitter owns the work, named by its job, never its artifact id.
    code, copy = answers[2]
    reason = _refused(copy, "replay")
    assert code == 1 and f"first submitted as job {served.jobs['pay1']}" in reason, reason
    assert "pay1" not in reason
    # The same receipt again is answered as before: already authorised.
    code, again = signer.ask(served.receipt("pay1"))
    assert code == 1 and "already authorised (nonce 1)" in _refused(again, "replay")


def test_a_campaign_settled_per_task_pays_the_same_bytes_once_per_task(
    served: Served, start_signer: Any
) -> None:
    signer = start_signer(registry=served.registry, receipt_keys=[served.env.pub])
    code, first = signer.ask(served.receipt("q1"), served.proof("q1"))
    assert code == 0 and _nonce(first) == "1"
    code, other_task = signer.ask(served.receipt("q2"), served.proof("q2"))
    assert code == 0 and _nonce(other_task) == "2"
    code, same_task = signer.ask(served.receipt("q3"), served.proof("q3"))
    assert code == 1
    reason = _refused(same_task, "replay")
    assert f"first submitted as job {served.jobs['q1']}" in reason, reason


def test_the_duplicate_is_marked_in_every_view_and_in_the_receipt(served: Served) -> None:
    env, jobs = served.env, served.jobs
    with httpx.Client(base_url=served.url) as http:
        def view(job: str, headers: dict[str, str]) -> dict[str, Any]:
            answer = http.get(f"/v1/jobs/{job}", headers=headers)
            assert answer.status_code == 200, answer.text
            body: dict[str, Any] = answer.json()
            return body

        for reader in (env.auth("operator"), env.auth("reviewer", "*", "rita")):
            assert view(jobs["pay1"], reader)["duplicate_of"] is None
            # Alice's own resubmission is her work, not a copy.
            assert view(jobs["pay2"], reader)["duplicate_of"] is None
            assert view(jobs["pay3"], reader)["duplicate_of"] == jobs["pay1"]
            # Per campaign: the same bytes in another campaign are not a duplicate of these.
            assert view(jobs["q1"], reader)["duplicate_of"] is None
            assert view(jobs["q3"], reader)["duplicate_of"] == jobs["q1"]
        # Bob is told whose work his copies, as his receipt tells him.
        mine = view(jobs["pay3"], env.auth("contributor", "pay", "bob"))
        assert mine["duplicate_of"] == jobs["pay1"]
        from jurat.receipts import read_statement

        inputs = read_statement(served.receipt("pay3").read_bytes())["predicate"]["inputs"]
        assert inputs["duplicate_of"] == jobs["pay1"]
        assert inputs["work"]["rule"] == "jurat.work/v1/text"
        first = read_statement(served.receipt("pay1").read_bytes())["predicate"]["inputs"]
        assert "duplicate_of" not in first and first["work"] == inputs["work"]
