"""The N-sample engine against a real loopback server: plan, resume, retries, limits, timeouts."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from jurat.errors import ConfigError, DestinationError, TransportError
from jurat.fold import decide
from jurat.judges import (
    EndpointLimiter,
    Engine,
    SampleTelemetry,
    complete_text,
    judge_bundle,
    judge_pins,
    plan_samples,
    presentation_order,
    run_samples,
)
from jurat.judges._http import USER_AGENT
from jurat.models import EvidenceBundle, EvidenceItem, JudgeConfig, Vote
from tests.support.builders import artifact, criteria_suite, gates, judge, pair, policy, vote
from tests.support.clock import FakeClock
from tests.support.fake_openai import (
    FakeOpenAI,
    FakeRequest,
    Reply,
    arcv_decision,
    completion,
    reply_json,
)

ART = artifact()
EMPTY = EvidenceBundle()
#: Blocker ``c1`` sampled 5 times, non-blocker ``c2`` 3 times.
SUITE = criteria_suite(3, blocker_samples=5)


def remote(fake: FakeOpenAI, **kwargs: Any) -> JudgeConfig:
    """A judge on the loopback server (a self-hosted base URL: no API key needed)."""
    kwargs.setdefault("model", "judge-model")
    kwargs.setdefault("timeout_s", 5)
    return judge(provider="openai-compat", base_url=fake.url, **kwargs)


# -- the plan -----------------------------------------------------------------------------


def test_plan_is_fixed_by_the_policy_before_dispatch() -> None:
    a, b = judge(id="A", samples=3), judge(id="B", samples=2)
    rubric = plan_samples(policy("rubric", judges=(a, b)), ART)
    assert [(p.judge.id, p.criterion, p.sample) for p in rubric] == [
        ("A", "rubric", 0),
        ("A", "rubric", 1),
        ("A", "rubric", 2),
        ("B", "rubric", 0),
        ("B", "rubric", 1),
    ]
    criteria = plan_samples(policy("criteria", judges=a, criteria=SUITE), ART)
    counts = Counter(p.criterion for p in criteria)
    assert counts == {"c1": 5, "c2": 3}  # blocker_samples vs samples
    assert [p.criterion for p in criteria][:5] == ["c1"] * 5
    equivalence = plan_samples(policy("equivalence", judges=a, samples=3), pair("1", "2"))
    assert [p.of for p in equivalence] == [3, 3, 3]  # policy.equivalence.votes, not judge.samples


def test_pairwise_orders_are_seeded_recorded_and_balanced() -> None:
    p = pair("first answer", "second answer")
    plan = plan_samples(policy("pairwise", judges=judge(samples=40, seed=5)), p)
    orders = [s.order for s in plan]
    assert orders == [presentation_order(5, p.sha256, k) for k in range(40)]
    assert orders == [
        s.order for s in plan_samples(policy("pairwise", judges=judge(samples=40, seed=5)), p)
    ]
    assert 10 <= orders.count("AB") <= 30
    other = plan_samples(policy("pairwise", judges=judge(samples=40, seed=6)), p)
    assert [s.order for s in other] != orders


def test_judge_bundle_puts_the_artifact_first() -> None:
    built = judge_bundle(ART, EMPTY)
    assert [(i.kind, i.sha256) for i in built.items] == [("artifact", ART.sha256)]
    wrong = EvidenceBundle(
        items=(EvidenceItem(kind="tests", tool="pytest", tool_version="8", sha256="0" * 64),)
    )
    with pytest.raises(ConfigError, match="item 0 must be the artifact"):
        judge_bundle(ART, wrong)


# -- dispatch, retries, resume ------------------------------------------------------------


async def test_votes_come_back_in_dispatch_order_with_pins(
    fake: FakeOpenAI, engine: Engine
) -> None:
    pol = policy("rubric", judges=(remote(fake, id="A", samples=3), judge("S", samples=2)))
    seen: list[Vote] = []
    votes = await run_samples(pol, ART, EMPTY, gates(), on_vote=seen.append, engine=engine)
    assert [(v.judge, v.sample) for v in votes] == [
        ("A", 0),
        ("A", 1),
        ("A", 2),
        ("S", 0),
        ("S", 1),
    ]
    assert sorted(seen, key=lambda v: (v.judge, v.sample)) == votes
    first = votes[0]
    assert first.error is None and first.answer is not None
    assert first.prompt_id == "jurat/judge-decision@2"
    assert (first.returned_model, first.system_fingerprint) == ("fake-model-2026", "fp_fake")
    assert first.usage == {"input_tokens": 120, "output_tokens": 40}
    sent = fake.received[0].json()
    assert (sent["model"], sent["temperature"], sent["max_tokens"]) == ("judge-model", 0.0, 1024)
    assert sent["response_format"]["json_schema"]["name"] == "arcv_judge_decision_v1"
    assert fake.requests == 3
    pins = judge_pins(pol)
    assert pins[0]["prompt_id"] == "jurat/judge-decision@2"
    assert pins[0]["schema_id"] == "arcv-judge-decision/v1"
    assert pins[0]["decoding"]["temperature"] == 0.0


async def test_an_endpoint_cannot_plant_state_in_later_calls(
    fake: FakeOpenAI, engine: Engine
) -> None:
    """A cookie the endpoint sets is never sent back (the session keeps none), while the
    request's own headers (auth, user agent) are sent every time."""
    pol = policy("rubric", judges=remote(fake, samples=3, max_concurrency=1))
    fake.push(lambda request: completion(
        json.dumps(arcv_decision(request.digest)),
        headers=(("content-type", "application/json"), ("set-cookie", "sid=planted; Path=/"))))
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert len(votes) == 3 and fake.requests == 3
    sent = [request.headers for request in fake.received]
    assert all("cookie" not in headers for headers in sent)
    assert all(headers["authorization"] == "Bearer no-key" for headers in sent)
    assert all(headers["content-type"] == "application/json" for headers in sent)
    assert all(headers["user-agent"] == USER_AGENT for headers in sent)


async def test_an_answer_compressed_unasked_is_an_error_vote(
    fake: FakeOpenAI, engine: Engine
) -> None:
    """A plain-http judge asks for an uncompressed answer; a gzip one is not decoded (it
    could expand to any size) and ends as the sample's error, never as its answer."""
    pol = policy("rubric", judges=remote(fake, samples=1, retries=0))
    body = gzip.compress(json.dumps(arcv_decision(None)).encode())
    fake.push(Reply(body=body, headers=(("content-type", "application/json"),
                                        ("content-encoding", "gzip"))))
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert [(v.answer, v.error) for v in votes] == [(None, "connection")]
    assert fake.received[0].headers["accept-encoding"] == "identity"


async def test_a_transport_retry_is_an_attempt_not_a_sample(
    fake: FakeOpenAI, engine: Engine
) -> None:
    pol = policy("rubric", judges=remote(fake, samples=1, retries=3))
    fake.push(reply_json({"e": 1}, status=429), Reply(status=503, body=b"x"), Reply(drop=True))
    retries: list[tuple[str, int, str]] = []
    votes = await run_samples(
        pol, ART, EMPTY, gates(), engine=engine, on_retry=lambda *a: retries.append(a)
    )
    assert len(votes) == 1
    assert (votes[0].error, votes[0].attempts) == (None, 4)
    assert fake.requests == 4
    assert retries == [
        ("A/rubric/0", 1, "rate_limited"),
        ("A/rubric/0", 2, "http_5xx"),
        ("A/rubric/0", 3, "connection"),
    ]


async def test_retries_run_out_into_one_error_vote(fake: FakeOpenAI, engine: Engine) -> None:
    pol = policy("rubric", judges=remote(fake, samples=1, retries=2))
    fake.push(*[reply_json({"e": 1}, status=500)] * 3)
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert [(v.sample, v.error, v.attempts, v.answer) for v in votes] == [(0, "http_5xx", 3, None)]
    assert fake.requests == 3


async def test_answers_and_final_errors_are_never_retried(fake: FakeOpenAI, engine: Engine) -> None:
    pol = policy("rubric", judges=remote(fake, samples=1, retries=5))
    fake.push(completion("not json at all"))
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert (votes[0].error, votes[0].attempts, fake.requests) == ("malformed_json", 1, 1)
    fake.push(reply_json({"e": "key"}, status=401))
    votes = await run_samples(
        policy("rubric", judges=remote(fake, id="B", samples=1, retries=5)),
        ART,
        EMPTY,
        gates(),
        engine=engine,
    )
    assert (votes[0].error, votes[0].attempts, fake.requests) == ("unauthorized", 1, 2)


async def test_retry_after_is_honoured(fake: FakeOpenAI) -> None:
    clock = FakeClock()
    engine = Engine(sleep=clock.sleep, backoff_s=0.25)
    fake.push(
        reply_json({"e": 1}, status=429, headers=(("retry-after", "7"),)), reply_json({}, 500)
    )
    pol = policy("rubric", judges=remote(fake, samples=1))
    await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    await engine.aclose()
    assert clock.slept[0] == 7.0
    assert 0.25 <= clock.slept[1] <= 0.5  # exponential backoff with jitter on the second retry


async def test_resume_never_resamples(fake: FakeOpenAI, engine: Engine) -> None:
    pol = policy("pairwise", judges=remote(fake, samples=4))
    p = pair("answer one", "answer two")
    first = await run_samples(pol, p, EMPTY, gates(), engine=engine)
    assert fake.requests == 4
    again = await run_samples(pol, p, EMPTY, gates(), existing=first, engine=engine)
    assert again == first and fake.requests == 4
    half = await run_samples(pol, p, EMPTY, gates(), existing=first[:2], engine=engine)
    assert half[:2] == first[:2] and fake.requests == 6
    assert [v.order for v in half] == [v.order for v in first]


async def test_an_errored_sample_is_final_too(fake: FakeOpenAI, engine: Engine) -> None:
    pol = policy("rubric", judges=remote(fake, samples=2, retries=0))
    fake.push(reply_json({}, status=500))
    first = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert sum(1 for v in first if v.error == "http_5xx") == 1
    again = await run_samples(pol, ART, EMPTY, gates(), existing=first, engine=engine)
    assert again == first and fake.requests == 2


async def test_recorded_votes_outside_the_plan_are_refused(engine: Engine) -> None:
    pol = policy("rubric", judges=judge(samples=2))
    stray = vote("A", 5, None)
    with pytest.raises(ConfigError, match="not in this policy's sample plan"):
        await run_samples(pol, ART, EMPTY, gates(), existing=[stray], engine=engine)
    twice = [vote("A", 0, None)] * 2
    with pytest.raises(ConfigError, match="twice"):
        await run_samples(pol, ART, EMPTY, gates(), existing=twice, engine=engine)
    p = pair("a", "b")
    pw = policy("pairwise", judges=judge(samples=1))
    flipped = "BA" if plan_samples(pw, p)[0].order == "AB" else "AB"
    with pytest.raises(ConfigError, match="presented"):
        await run_samples(
            pw,
            p,
            EMPTY,
            gates(),
            existing=[vote("A", 0, None, "pairwise", order=flipped)],
            engine=engine,
        )


# -- limits and timeouts --------------------------------------------------------------------


def _in_flight_probe(fake: FakeOpenAI, delay: float) -> list[int]:
    """Make the server record how many requests it holds at once."""
    state = {"now": 0}  # the server's loop is single-threaded: no lock needed
    peaks: list[int] = []

    def behaviour(request: FakeRequest) -> Reply:
        from tests.support.fake_openai import echo_judge

        state["now"] += 1
        peaks.append(state["now"])
        reply = echo_judge(request)
        assert isinstance(reply, Reply)

        def done() -> None:
            state["now"] -= 1

        asyncio.get_running_loop().call_later(delay, done)
        return Reply(status=reply.status, body=reply.body, delay_s=delay)

    fake.behaviour = behaviour
    return peaks


async def test_concurrency_is_bounded_per_endpoint(fake: FakeOpenAI, engine: Engine) -> None:
    peaks = _in_flight_probe(fake, 0.05)
    pol = policy("rubric", judges=remote(fake, samples=12, max_concurrency=3))
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert all(v.error is None for v in votes)
    assert max(peaks) == 3


async def test_concurrency_is_bounded_overall(fake: FakeOpenAI) -> None:
    peaks = _in_flight_probe(fake, 0.05)
    engine = Engine(max_concurrency=2)
    pol = policy(
        "rubric", judges=(remote(fake, id="A", samples=4), remote(fake, id="B", samples=4, seed=1))
    )
    await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    await engine.aclose()
    assert max(peaks) == 2


class PacedEngine(Engine):
    """An engine whose endpoint limiters pace on a fake clock: ``Engine.limiter`` builds them
    on the wall clock, so this one builds its own, one per destination."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(backoff_s=0.001, backoff_max_s=0.01)
        self.pace_clock = clock
        self.paced: dict[str, EndpointLimiter] = {}

    def limiter(self, config: JudgeConfig) -> EndpointLimiter:
        if config.destination not in self.paced:
            self.paced[config.destination] = EndpointLimiter(
                config.max_concurrency, rpm=config.rpm, tpm=config.tpm,
                clock=self.pace_clock, sleep=self.pace_clock.sleep,
            )
        return self.paced[config.destination]


async def test_requests_per_minute_pace_the_endpoint(fake: FakeOpenAI) -> None:
    # 120 rpm = 2 requests/s with a 10-second bucket of 20: the first 20 go at once, then
    # one every half second.
    clock = FakeClock()
    engine = PacedEngine(clock)
    pol = policy("rubric", judges=remote(fake, samples=23, rpm=120))
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine, clock=clock)
    await engine.aclose()
    assert clock.slept == pytest.approx([0.5] * 3)
    assert [v.dispatch_ms for v in votes] == [0] * 20 + [500, 1000, 1500]
    assert fake.requests == 23 and all(v.error is None for v in votes)


async def test_a_hang_ends_at_the_timeout_and_other_samples_finish(
    fake: FakeOpenAI, engine: Engine
) -> None:
    # 1.5 s: the two answered samples must finish inside it on a loaded machine too.
    pol = policy("rubric", judges=remote(fake, samples=3, timeout_s=1.5, retries=0))
    fake.push(Reply(hang=True))
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert sorted(str(v.error) for v in votes) == ["None", "None", "timeout"]
    assert [v.attempts for v in votes] == [1, 1, 1] and fake.requests == 3


async def test_timeouts_are_retried_as_attempts(fake: FakeOpenAI, engine: Engine) -> None:
    pol = policy("rubric", judges=remote(fake, samples=1, timeout_s=1.5, retries=1))
    fake.push(Reply(hang=True))
    votes = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert (votes[0].error, votes[0].attempts, fake.requests) == (None, 2, 2)


# -- configuration is refused before any request ---------------------------------------------


async def test_missing_api_key_is_a_config_error_before_any_request(
    fake: FakeOpenAI, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JURAT_TEST_KEY", raising=False)
    pol = policy("rubric", judges=(judge("S"), remote(fake, api_key_env="JURAT_TEST_KEY")))
    with pytest.raises(ConfigError, match="JURAT_TEST_KEY"):
        await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert fake.requests == 0
    monkeypatch.setenv("JURAT_TEST_KEY", "sk-test-123")
    await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert fake.received[-1].headers["authorization"] == "Bearer sk-test-123"


async def test_hosted_endpoint_without_key_env_is_refused(engine: Engine) -> None:
    hosted = judge(provider="openai-compat", model="gpt-x", api_key_env=None)
    pol = policy("rubric", judges=hosted)
    with pytest.raises(ConfigError, match="api_key_env"):
        await run_samples(pol, ART, EMPTY, gates(), engine=engine)


async def test_destinations_are_enforced(fake: FakeOpenAI, engine: Engine) -> None:
    pol = policy(
        "rubric", judges=remote(fake), allowed_destinations=("sim", "http://127.0.0.1:1/v1")
    )
    with pytest.raises(DestinationError, match=fake.url):
        await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert fake.requests == 0


async def test_a_stub_asked_the_wrong_kind_is_refused(engine: Engine) -> None:
    pol = policy("rubric", judges=judge(provider="stub:always-yes"))
    with pytest.raises(ConfigError, match="cannot judge rubric"):
        await run_samples(pol, ART, EMPTY, gates(), engine=engine)


async def test_an_on_vote_failure_stops_the_job(engine: Engine) -> None:
    def explode(recorded: Vote) -> None:
        raise OSError("ledger is full")

    with pytest.raises(OSError, match="ledger is full"):
        await run_samples(
            policy("rubric", judges=judge(samples=3)), ART, EMPTY, gates(), on_vote=explode,
            engine=engine,
        )


# -- the execution phase and telemetry -------------------------------------------------------


async def test_complete_text_pins_the_execution_temperature(
    fake: FakeOpenAI, engine: Engine
) -> None:
    fake.push(reply_json({}, status=503), completion("the skill's output"))
    config = remote(fake, retries=2)
    raw = await complete_text(config, "Summarise the costs.", temperature=0.0, engine=engine)
    assert (raw.text, raw.attempts, raw.returned_model) == (
        "the skill's output",
        2,
        "fake-model-2026",
    )
    sent = fake.received[-1].json()
    assert sent["temperature"] == 0.0 and "response_format" not in sent
    assert sent["messages"] == [{"role": "user", "content": "Summarise the costs."}]
    fake.push(*[reply_json({}, status=500)] * 3)
    with pytest.raises(TransportError, match="HTTP 500") as info:
        await complete_text(config, "again", temperature=0.0, engine=engine)
    assert info.value.kind == "http_5xx"


async def test_one_telemetry_event_per_sample(tmp_path: Path, engine: Engine) -> None:
    path = tmp_path / "events.ndjson"
    telemetry = SampleTelemetry(path)
    pol = policy("criteria", judges=judge(samples=1, reliability=1.0), criteria=SUITE)
    art = artifact(truth={"c1": "no", "c2": "yes"})
    votes = await run_samples(pol, art, EMPTY, (), telemetry=telemetry, engine=engine)
    telemetry.close()
    events = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(events) == len(votes) == 8
    blocker = [e for e in events if e["criterion"] == "c1"]
    assert sorted(e["sample"] for e in blocker) == [1, 2, 3, 4, 5]
    assert {(e["event"], e["of"], e["verdict"], e["agreement_so_far"]) for e in blocker} == {
        ("judge.sample", 5, "no", 1.0)
    }
    assert all(e["error"] is None and e["dispatch_ms"] >= 0 for e in events)
    assert decide(pol, (), votes).rollout == "BLOCK"


async def test_structured_output_falls_back_once_and_remembers(
    fake: FakeOpenAI, engine: Engine
) -> None:
    fake.push(reply_json({"error": "response_format is not supported"}, status=400))
    pol = policy("rubric", judges=remote(fake, samples=1))
    first = await run_samples(pol, ART, EMPTY, gates(), engine=engine)
    assert (first[0].error, first[0].attempts) == (None, 1)
    second = await run_samples(pol, artifact("other"), EMPTY, gates(), engine=engine)
    assert second[0].error is None
    sent = [r.json() for r in fake.received]
    assert ["response_format" in body for body in sent] == [True, False, False]


async def test_structured_output_can_be_switched_off(fake: FakeOpenAI, engine: Engine) -> None:
    pol = policy("criteria", judges=remote(fake, structured_output=False))
    votes = await run_samples(pol, ART, EMPTY, (), engine=engine)
    assert {v.error for v in votes} == {None}
    assert all("response_format" not in r.json() for r in fake.received)


async def test_complete_text_with_local_subjects(engine: Engine) -> None:
    sim = await complete_text(judge(seed=1), "prompt", temperature=0.0, engine=engine)
    again = await complete_text(judge(seed=1), "prompt", temperature=0.0, engine=engine)
    assert sim.text == again.text and sim.text is not None and sim.text.startswith("sim output")
    stub = await complete_text(
        judge(provider="stub:always-yes"), "p", temperature=0.0, engine=engine
    )
    assert stub.text == "stub:always-yes output"
