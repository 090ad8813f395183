"""The anthropic adapter (the documented Messages API request) against the loopback server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jurat.errors import ConfigError
from jurat.judges import Engine, run_samples
from jurat.models import EvidenceBundle, JudgeConfig
from tests.support.builders import artifact, gates, judge, pair, policy
from tests.support.fake_openai import (
    FakeOpenAI,
    Reply,
    anthropic_message,
    arcv_decision,
    reply_json,
)

ART = artifact()
EMPTY = EvidenceBundle()


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JURAT_TEST_ANTHROPIC", "sk-ant-test")


def claude(fake: FakeOpenAI, **kwargs: Any) -> JudgeConfig:
    kwargs.setdefault("samples", 1)
    return judge(
        provider="anthropic",
        model="claude-test",
        base_url=fake.root,
        api_key_env="JURAT_TEST_ANTHROPIC",
        timeout_s=2,
        **kwargs,
    )


def tool_call(body: str | dict[str, Any], **kwargs: Any) -> Reply:
    """A tool_use block; a string input is spliced in raw (to carry duplicate keys)."""
    if isinstance(body, dict):
        return anthropic_message(
            [{"type": "tool_use", "id": "t", "name": "arcv_judge_decision_v1", "input": body}],
            **kwargs,
        )
    envelope = json.dumps(
        {
            "id": "m",
            "type": "message",
            "role": "assistant",
            "model": "claude-test-20261101",
            "content": [
                {"type": "tool_use", "id": "t", "name": "arcv_judge_decision_v1", "input": "@"}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }
    ).replace('"@"', body)
    return Reply(body=envelope.encode())


async def run(fake: FakeOpenAI, *replies: Reply, **kwargs: Any) -> list[Any]:
    fake.push(*replies)
    engine = Engine(backoff_s=0.001)
    try:
        return await run_samples(
            policy("rubric", judges=claude(fake, **kwargs)), ART, EMPTY, gates(), engine=engine
        )
    finally:
        await engine.aclose()


async def test_forced_tool_call_is_validated(fake: FakeOpenAI) -> None:
    votes = await run(fake, tool_call(arcv_decision(ART.sha256)))
    vote = votes[0]
    assert vote.error is None and vote.answer is not None
    assert vote.answer["disposition"] == "accept"
    assert vote.returned_model == "claude-fake-1"
    assert vote.usage == {"input_tokens": 120, "output_tokens": 40}
    sent = fake.received[0]
    assert sent.path == "/v1/messages"
    # the Messages API's documented headers: the key in x-api-key, never as a bearer token
    assert (sent.headers["x-api-key"], sent.headers["anthropic-version"]) == (
        "sk-ant-test", "2023-06-01")
    assert "authorization" not in sent.headers
    body = sent.json()
    assert body["tool_choice"] == {"type": "tool", "name": "arcv_judge_decision_v1"}
    assert body["tools"][0]["input_schema"]["required"][0] == "artifact_sha256"
    assert "allOf" not in body["tools"][0]["input_schema"]  # grammar engines refuse it
    assert body["temperature"] == 0.0 and body["system"].startswith("You are one judge")


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (tool_call('{"disposition": "reject", "disposition": "accept"}'), "duplicate_key"),
        (tool_call(arcv_decision("0" * 64)), "digest_mismatch"),
        (tool_call(arcv_decision(None, scores={"correctness": 9})), "schema_violation"),
        (
            anthropic_message([{"type": "text", "text": "I'd rather not."}], stop_reason="refusal"),
            "refused",
        ),
        (
            anthropic_message([{"type": "text", "text": "{}"}], stop_reason="end_turn"),
            "no_tool_call",
        ),
        (tool_call(arcv_decision(ART.sha256), stop_reason="max_tokens"), "truncated"),
        (reply_json({"type": "error"}, status=400), "http_4xx"),
        (reply_json({"type": "error"}, status=401), "unauthorized"),
        (Reply(body=b"not json"), "malformed_response"),
    ],
)
async def test_bad_answers_are_named_errors(fake: FakeOpenAI, reply: Reply, kind: str) -> None:
    votes = await run(fake, reply, retries=0)
    assert (votes[0].error, votes[0].answer) == (kind, None)


async def test_overload_is_retried_as_attempts(fake: FakeOpenAI) -> None:
    votes = await run(
        fake,
        reply_json({"type": "error"}, status=529),
        reply_json({"type": "error"}, status=429),
        tool_call(arcv_decision(ART.sha256)),
        retries=2,
    )
    assert (votes[0].error, votes[0].attempts, fake.requests) == (None, 3, 3)


async def test_equivalence_uses_text_blocks(fake: FakeOpenAI) -> None:
    text = "DECISION: DIFFERENT\nREASON: 3 is not 4\nNUMERIC_A: 3\nNUMERIC_B: 4"
    fake.push(anthropic_message([{"type": "text", "text": text}], stop_reason="end_turn"))
    engine = Engine()
    pol = policy("equivalence", judges=claude(fake), samples=1)
    votes = await run_samples(pol, pair("3", "4"), EMPTY, (), engine=engine)
    await engine.aclose()
    assert votes[0].answer is not None and votes[0].answer["decision"] == "DIFFERENT"
    assert "tools" not in fake.received[0].json()


async def test_missing_key_is_refused_before_any_request(
    fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JURAT_TEST_ANTHROPIC")
    with pytest.raises(ConfigError, match="JURAT_TEST_ANTHROPIC"):
        await run(fake)
    assert fake.requests == 0
