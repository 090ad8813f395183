"""Who gets paid (issue 37): one piece of work, one payment, to its first submitter, through
a real `jurat serve` and a real `jurat signer`, whatever order the decisions arrive and the
settlements are asked in.

Alice submits a solution first. Bob and Carol then submit copies of it: identical, with
the whitespace changed, with comments added, with the locals renamed (the campaign's
``same_work = "python-ast"`` makes all four the same work). Every job escalates (the
campaign's tier requires adjudication), and the reviewer accepts the copies *before*
Alice's job, so the copies are decided first. Each copy's receipt names Alice's job
(``inputs.duplicate_of``), and the signer refuses it, naming that job, whether asked
before or after Alice's settlement; Alice is paid once.

A campaign without ``[[tasks]]`` refuses a submission that names a task, so the same answer
sent as q1, q2 and q3 cannot be three settlements; the same contributor's three copies
under three ids are one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jurat.receipts import read_statement
from tests.service._support import make_env, subprocess_server, wait_decided
from tests.signer._served import Served
from tests.signer.world import CONTRACT, RECIPIENT

_BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC"
_CAROL = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
def _campaign(cid: str, tier: str, extra: str = "") -> str:
    """A rubric campaign whose one stand-in judge always accepts."""
    return f"""\
[campaign]
id = "{cid}"
kind = "rubric"
risk_tier = {tier}
allowed_destinations = ["stub"]
{extra}
[rubric]
version = "r/1"
hard_gates = []
criteria = [ {{ id = "correctness", weight = 1.0 }} ]

[[judges]]
id = "A"
provider = "stub:always-accept"
samples = 1
"""


#: Every job escalates (the tier requires adjudication); Python copies are the same work
#: modulo formatting, comments, docstrings and local names.
_CONTEST = _campaign("contest", "{ votes = 1, min_agreement = 1.0, adjudication = true }",
                     'same_work = "python-ast"\n')
_ANSWERS = _campaign("answers", "{ votes = 1, min_agreement = 1.0 }")
_REGISTRY = f"""
[recipients]
alice = "{RECIPIENT}"
bob = "{_BOB}"
carol = "{_CAROL}"

[[campaigns]]
id = "contest"
chain_id = 31337
contract = "{CONTRACT}"
selector = "0xa9059cbb"
dataset = "contest-2026"
reward = "10"

[[campaigns]]
id = "answers"
chain_id = 31337
contract = "{CONTRACT}"
selector = "0xa9059cbb"
dataset = "answers-2026"
reward = "1"
"""
ORIGINAL = '''def median(values):
    """The middle value."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle]
'''
#: (contributor, artifact id, text): Alice first, then the copies.
SUBMISSIONS = (
    ("alice", "a1", ORIGINAL),
    ("bob", "b-identical", ORIGINAL),
    ("carol", "c-whitespace", ORIGINAL.replace("    ", "  ").replace("//", " // ") + "\n\n"),
    ("bob", "b-comments", ORIGINAL.replace("    ordered", "    # sort first\n    ordered")),
    ("carol", "c-renamed", ORIGINAL.replace("values", "xs").replace("ordered", "s")
     .replace("middle", "m")),
)
#: The reviewer's order: every copy before Alice's job.
ADJUDICATION_ORDER = ("c-renamed", "b-identical", "c-whitespace", "b-comments", "a1")


@pytest.fixture(scope="module")
def contest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("first")
    env = make_env(root)
    for cid, text in (("contest", _CONTEST), ("answers", _ANSWERS)):
        env.campaigns[cid] = root / f"{cid}.toml"
        env.campaigns[cid].write_text(text)
    registry = root / "registry.toml"
    registry.write_text(_REGISTRY)
    rita = env.auth("reviewer", "*", "rita")
    operator = env.auth("operator")
    with subprocess_server(env, ("contest", "answers")) as (_, url), \
            httpx.Client(base_url=url, timeout=60) as http:
        jobs: dict[str, str] = {}
        for who, aid, text in SUBMISSIONS:
            answer = http.post("/v1/campaigns/contest/jobs", headers=env.auth(
                "contributor", "contest", who), json={"artifact": {
                    "id": aid, "text": text, "media_type": "text/x-python"}})
            assert answer.status_code == 202, answer.text
            jobs[aid] = answer.json()["job_id"]
        for aid in jobs:
            state = wait_decided(http, jobs[aid], operator)
            assert state["decision"]["disposition"] == "escalate", state
        for aid in ADJUDICATION_ORDER:
            done = http.post(f"/v1/jobs/{jobs[aid]}/adjudication", headers=rita, json={
                "disposition": "accept", "rationale": "Correct median of the values."})
            assert done.status_code == 202, done.text
        for aid in ("one", "two", "three"):
            answer = http.post("/v1/campaigns/answers/jobs", headers=env.auth(
                "contributor", "answers", "alice"), json={"artifact": {"id": aid,
                                                                       "text": "42"}})
            assert answer.status_code == 202, answer.text
            jobs[aid] = answer.json()["job_id"]
        contest_ = Served(env=env, url=url, registry=registry, jobs=jobs)
        for aid in jobs:
            deadline = time.monotonic() + 120
            while wait_decided(http, jobs[aid], operator).get("review_version") != (
                    2 if aid in ADJUDICATION_ORDER else 1):
                assert time.monotonic() < deadline, aid
                time.sleep(0.1)
            contest_.save(http, aid, operator)
        yield contest_


def _inputs(contest: Served, aid: str) -> dict[str, Any]:
    inputs: dict[str, Any] = read_statement(contest.receipt(aid).read_bytes())["predicate"][
        "inputs"]
    return inputs


def test_every_copy_names_the_first_submission_in_its_receipt(contest: Served) -> None:
    first = _inputs(contest, "a1")
    assert "duplicate_of" not in first and first["work"]["rule"] == "jurat.work/v1/python-ast"
    for _, aid, _ in SUBMISSIONS[1:]:
        inputs = _inputs(contest, aid)
        assert inputs["duplicate_of"] == contest.jobs["a1"], aid
        assert inputs["work"] == first["work"], aid


def test_every_view_marks_the_copies(contest: Served) -> None:
    env = contest.env
    with httpx.Client(base_url=contest.url) as http:
        for who, aid, _ in SUBMISSIONS:
            job = contest.jobs[aid]
            expected = None if aid == "a1" else contest.jobs["a1"]
            for headers in (env.auth("contributor", "contest", who), env.auth("operator")):
                assert http.get(f"/v1/jobs/{job}", headers=headers).json()[
                    "duplicate_of"] == expected, aid


@pytest.mark.parametrize("order", [
    ("b-identical", "c-renamed", "a1", "c-whitespace", "b-comments"),
    ("a1", "b-comments", "c-whitespace", "c-renamed", "b-identical"),
], ids=["copies-first", "first-first"])
def test_the_first_submitter_is_paid_once_and_no_copy_is(contest: Served, start_signer: Any,
                                                        order: tuple[str, ...]) -> None:
    signer = start_signer(registry=contest.registry, receipt_keys=[contest.env.pub])
    granted = []
    for aid in order:
        code, answer = contest.ask(signer, aid)
        if aid == "a1":
            assert code == 0 and "typed_data" in answer, answer
            granted.append(aid)
            continue
        assert code == 1 and answer["refused"] == "replay", (aid, answer)
        assert f"first submitted as job {contest.jobs['a1']}" in answer["reason"], answer
    assert granted == ["a1"]


def test_a_campaign_without_tasks_refuses_a_task_and_pays_one_answer_once(
        contest: Served, start_signer: Any) -> None:
    env = contest.env
    with httpx.Client(base_url=contest.url) as http:
        for task in ("q1", "q2", "q3"):
            answer = http.post("/v1/campaigns/answers/jobs", headers=env.auth(
                "contributor", "answers", "alice"), json={"artifact": {
                    "id": f"t-{task}", "text": "42", "task": task}})
            assert answer.status_code == 422 and answer.json()["field"] == "artifact.task"
    signer = start_signer(registry=contest.registry, receipt_keys=[contest.env.pub])
    codes = [contest.ask(signer, aid)[0] for aid in ("one", "two", "three")]
    assert codes == [0, 1, 1]
