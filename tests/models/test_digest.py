"""A record's digest is computed once and kept with the record, never with another one."""

from __future__ import annotations

import copy
import pickle

import pytest

from jurat.canonical import digest_json
from jurat.models import JudgeConfig, policy_digest, record_digest
from tests.support.builders import policy


def test_the_digest_is_computed_once_per_record(monkeypatch: pytest.MonkeyPatch) -> None:
    pinned = policy("rubric")
    calls: list[object] = []

    def counted(obj: object) -> str:
        calls.append(obj)
        return digest_json(obj)

    monkeypatch.setattr("jurat.models._base.digest_json", counted)
    first = policy_digest(pinned)
    assert policy_digest(pinned) == record_digest(pinned) == first == digest_json(pinned)
    assert calls == [pinned]


def test_a_copy_with_an_update_digests_afresh_and_equality_ignores_the_digest() -> None:
    judge = JudgeConfig(id="a", provider="sim", seed=1)
    before = record_digest(judge)
    other = judge.model_copy(update={"seed": 2})
    assert record_digest(other) == digest_json(other) != before
    assert record_digest(judge.model_copy()) == before
    assert record_digest(copy.deepcopy(judge)) == before
    assert judge == JudgeConfig(id="a", provider="sim", seed=1)
    assert hash(judge) == hash(JudgeConfig(id="a", provider="sim", seed=1))
    assert "_sha256" not in judge.model_dump()
    assert record_digest(pickle.loads(pickle.dumps(judge))) == before
