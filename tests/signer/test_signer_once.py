"""One settlement per piece of work: identical bytes through a real `jurat serve`, then a real
`jurat signer`.

Contributors choose their artifact ids, so the signer's one-settlement rule is keyed on the
artifact's digest: the same bytes under another id, from another contributor, or submitted
again are one settlement. A registry campaign that declares ``settle_once_per =
"task_artifact"`` settles the same bytes once per task instead (short answers to different
questions may be identical). The service marks the later jobs as duplicates of the first,
for the operator and the reviewer only.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service._support import Env, make_env, subprocess_server, wait_decided
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


@dataclass(frozen=True)
class Served:
    """A running `jurat serve` whose jobs are decided and covered by a checkpoint."""

    env: Env
    url: str
    registry: Path
    jobs: dict[str, str]
    """Artifact id -> job id."""

    def receipt(self, artifact: str) -> Path:
        return self.env.root / f"{artifact}.sigstore.json"

    def proof(self, artifact: str) -> Path:
        return self.env.root / f"{artifact}.sigstore.json.proof.json"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("once")
    env = make_env(root)
    for cid in ("pay", "short"):
        env.campaigns[cid] = root / f"{cid}.toml"
        env.campaigns[cid].write_text(_CAMPAIGN.format(id=cid))
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
            served.receipt(aid).write_bytes(
                http.get(f"/v1/jobs/{job}/receipt", headers=operator).content)
            for _ in range(600):  # the server signs a checkpoint every two seconds
                proof = http.get(f"/v1/jobs/{job}/proof", headers=operator)
                if proof.status_code == 200:
                    break
                time.sleep(0.05)
            assert proof.status_code == 200, proof.text
            served.proof(aid).write_text(proof.text)
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
    for code, answer in answers[1:]:
        assert code == 1
        reason = _refused(answer, "replay")
        assert reason.startswith("duplicate") and "nonce 1" in reason, reason
        # The first grant is named by its nonce, never by another contributor's artifact id.
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
    assert reason.startswith("duplicate") and "nonce 1" in reason, reason


def test_the_duplicate_is_marked_for_the_operator_and_reviewer_only(served: Served) -> None:
    env, jobs = served.env, served.jobs
    with httpx.Client(base_url=served.url) as http:
        def view(job: str, headers: dict[str, str]) -> dict[str, Any]:
            answer = http.get(f"/v1/jobs/{job}", headers=headers)
            assert answer.status_code == 200, answer.text
            body: dict[str, Any] = answer.json()
            return body

        for reader in (env.auth("operator"), env.auth("reviewer", "*", "rita")):
            assert view(jobs["pay1"], reader)["duplicate_of"] is None
            assert view(jobs["pay2"], reader)["duplicate_of"] == jobs["pay1"]
            assert view(jobs["pay3"], reader)["duplicate_of"] == jobs["pay1"]
            # Per campaign: the same bytes in another campaign are not a duplicate of these.
            assert view(jobs["q1"], reader)["duplicate_of"] is None
        # A contributor never learns another job's id, not even its own job's first copy.
        for aid, who in (("pay2", "alice"), ("pay3", "bob")):
            mine = view(jobs[aid], env.auth("contributor", "pay", who))
            assert mine.get("duplicate_of") is None
            assert jobs["pay1"] not in json.dumps(mine)
