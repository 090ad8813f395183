"""Issue 29: a job binds the question a given output answers (its input), and nothing new
for any artifact jobs were made for before, so a ledger written by an earlier jurat resumes
without drawing a sample (runner/_job.py ``question_binding``); the one exception, by
design, is an artifact with a target, whose job binds the target's keyed digest since
issue 36.

The pinned ids were computed by the jurat before issue 29 (commit 39ac835) for the same
records, with the evaluator pinned to jurat/0.1.0 as that jurat wrote it.
"""

from __future__ import annotations

import hashlib

import pytest

import jurat.runner._job as job_module
from jurat.canonical import digest_json, keyed_digest
from jurat.errors import JuratError
from jurat.models import Artifact, Untrusted
from jurat.runner._job import job_identity
from tests.support.builders import policy


def _h(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_PLAIN = {"media_type": "text/plain"}
BEFORE = {
    "375ba6fda8efdddd6f1003928c8807fc16f37550c7e07c7e3d953201c234b925":
        Artifact(id="a", sha256=_h("x"), text="x", **_PLAIN),
    "1a7f5885d5319bdb7f7f3cefe3ee3e3cc6dbe7e52d29af346e23e0e96d14c9f2":
        Artifact(id="b", sha256=_h("x"), text="x", task="greet", task_statement="Say hi",
                 **_PLAIN),
    "88f4ba98bedf0afecd6091f1e53b94ff9c4d6dcc0da60642df2964062444f5ca":
        Artifact(id="c", sha256=_h("x"), text="x",
                 explanation=Untrusted("because", "contributor"), **_PLAIN),
    # A [subject]'s artifact: its digest is its input's.
    "499d0d073d1e3d7675c91beeb1bbcfc92b6937149eb61b14b707fb7d1fe0d26d":
        Artifact(id="e", sha256=_h("q"), text="", input="q", **_PLAIN),
}


@pytest.fixture(autouse=True)
def _evaluator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_module, "__version__", "0.1.0")


def _job(artifact: Artifact) -> str:
    return job_identity("ab" * 32, artifact, policy("criteria"), 1)


def test_jobs_made_before_keep_their_ids() -> None:
    for expected, artifact in BEFORE.items():
        assert _job(artifact) == expected, artifact.id
    # A bare task id (no [[tasks]] statement) is a label: bound as before, i.e. not at all.
    labelled = Artifact(id="f", sha256=_h("x"), text="x", task="gsm8k/0", **_PLAIN)
    assert _job(labelled) == next(iter(BEFORE))


def test_one_answer_to_two_questions_is_two_jobs() -> None:
    first = Artifact(id="q1", sha256=_h("4"), text="4", input="What is 2 plus 2?", **_PLAIN)
    second = first.model_copy(update={"id": "q2", "input": "What is 3 plus 2?"})
    plain = Artifact(id="p", sha256=_h("4"), text="4", **_PLAIN)
    assert len({_job(first), _job(second), _job(plain)}) == 3
    # The same question and answer under another id is the same job: a true duplicate.
    assert _job(first.model_copy(update={"id": "q1-copy"})) == _job(first)


#: Before issue 36, the job of an artifact with a target bound the target's plain sha256:
#: the id below, for the target "ref", with the evaluator of ``BEFORE``.
PLAIN_TARGET_JOB = "bf8f0f07c643575e36cdbffb1d439440538648db71e89526922d29a1a4b9a6ae"


def test_a_target_is_bound_by_its_keyed_digest_only() -> None:
    """Issue 36: a job id is in every receipt, so it binds the target's keyed digest; the
    id of before, built on its plain digest, is what a guess of the target recomputes."""
    keyed = keyed_digest(b"k" * 32, "ref")
    with_target = Artifact(id="d", sha256=_h("x"), text="x", target=Untrusted("ref", "reference"),
                           reference_hmac=keyed, **_PLAIN)
    base = next(iter(BEFORE))  # the same artifact without a target
    assert _job(with_target) == digest_json({"job": base, "target": keyed})
    assert _job(with_target) != PLAIN_TARGET_JOB
    assert digest_json({"job": base, "target": "sha256:" + _h("ref")}) == PLAIN_TARGET_JOB
    # Another key is another job; a target whose keyed digest intake never computed is none.
    other = with_target.model_copy(update={"reference_hmac": keyed_digest(b"o" * 32, "ref")})
    assert _job(other) != _job(with_target)
    with pytest.raises(JuratError, match="no keyed digest"):
        _job(with_target.model_copy(update={"reference_hmac": None}))
