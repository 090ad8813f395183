"""Recorded responses replay into the same votes; cost per phase; telemetry events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter

from jurat.errors import ConfigError
from jurat.judges import (
    Engine,
    PhaseCost,
    RawResponse,
    ReplayRecorder,
    SampleTelemetry,
    cost_summary,
    format_cost_table,
    phase_cost,
    run_samples,
)
from jurat.models import EvidenceBundle, Vote
from tests.support.builders import (
    arcv,
    artifact,
    criterion_answer,
    gates,
    judge,
    pair,
    policy,
    vote,
)
from tests.support.fake_openai import FakeOpenAI, completion, reply_json

EMPTY = EvidenceBundle()


def _without_timing(votes: list[Vote]) -> list[Vote]:
    return [v.model_copy(update={"dispatch_ms": 0, "latency_ms": 0}) for v in votes]


async def test_replay_reproduces_the_recorded_votes(fake: FakeOpenAI, tmp_path: Path) -> None:
    path = tmp_path / "raw.ndjson"
    live = judge("J", "openai-compat", base_url=fake.url, model="m", samples=4, seed=3)
    fake.push(reply_json({}, status=503), completion("{broken"))
    recording = Engine(recorder=ReplayRecorder(path), backoff_s=0.001)
    p = pair("first", "second")
    recorded = await run_samples(
        policy("pairwise", judges=live), p, EMPTY, gates(), engine=recording
    )
    await recording.aclose()
    assert fake.requests == 5
    assert sorted(str(v.error) for v in recorded).count("malformed_json") == 1
    assert max(v.attempts for v in recorded) == 2
    assert len(path.read_text().splitlines()) == 5  # one line per attempt

    replay = judge("J", "replay", samples=4, seed=3, replay_file=str(path))
    replayed = await run_samples(
        policy("pairwise", judges=replay), p, EMPTY, gates(), engine=Engine(backoff_s=0.001)
    )
    assert fake.requests == 5  # nothing went to the network
    assert _without_timing(replayed) == _without_timing(recorded)


async def test_replay_without_a_recording_is_an_error_vote(tmp_path: Path) -> None:
    path = tmp_path / "empty.ndjson"
    path.write_text("")
    pol = policy("rubric", judges=judge(provider="replay", samples=1, replay_file=str(path)))
    votes = await run_samples(pol, artifact(), EMPTY, gates(), engine=Engine())
    assert votes[0].error == "replay_missing"
    nowhere = judge(provider="replay", replay_file=str(tmp_path / "nope.ndjson"))
    missing = policy("rubric", judges=nowhere)
    with pytest.raises(ConfigError, match="cannot read"):
        await run_samples(missing, artifact(), EMPTY, gates(), engine=Engine())


def test_cost_per_phase_with_the_judge_multiplier() -> None:
    priced = judge(
        "P",
        "openai-compat",
        base_url="http://x/v1",
        price_in_per_mtok=0.27,
        price_out_per_mtok=1.10,
    )
    votes = [
        vote(
            "P", k, criterion_answer("yes"), c,
            usage={"input_tokens": 1000, "output_tokens": 200}, attempts=1 + (k == 0),
        )
        for c in ("a", "b")
        for k in range(5)
    ]
    execution = phase_cost(
        "execution",
        [RawResponse(text="out", usage={"input_tokens": 500, "output_tokens": 1000}, attempts=1)]
        * 2,
        priced,
    )
    trigger = PhaseCost(
        phase="trigger", calls=1, attempts=1, input_tokens=100, output_tokens=10, usd=0.0
    )
    summary = cost_summary(votes, [priced], [execution, trigger])
    assert [p.phase for p in summary.phases] == ["trigger", "execution", "judge"]
    judge_phase = summary.phases[-1]
    assert (judge_phase.calls, judge_phase.attempts, judge_phase.units, judge_phase.multiplier) == (
        10,
        12,
        2,
        5.0,
    )
    assert judge_phase.usd == pytest.approx(10 * (1000 * 0.27 + 200 * 1.10) / 1e6)
    assert execution.usd == pytest.approx((1000 * 0.27 + 2000 * 1.10) / 1e6)
    assert summary.total.input_tokens == 10_000 + 1000 + 100
    assert summary.total.usd == pytest.approx(judge_phase.usd + execution.usd)
    table = format_cost_table(summary)
    assert "N = 5 x 2 units" in table and table.splitlines()[-1].startswith("total")


def test_unknown_prices_give_null_not_zero() -> None:
    unpriced = judge("U", "openai-compat", base_url="http://x/v1")
    votes = [vote("U", 0, arcv(), usage={"input_tokens": 5})]
    summary = cost_summary(votes, [unpriced])
    assert summary.phases[-1].usd is None and summary.total.usd is None
    # no tokens spent (a sim, or only errors): zero is known exactly
    assert (
        cost_summary([vote("U", 0, None, error="timeout")], [unpriced]).total.usd == 0.0
    )


async def test_telemetry_events_go_through_opentelemetry(tmp_path: Path) -> None:
    exporter = InMemoryLogRecordExporter()
    path = tmp_path / "t" / "events.ndjson"
    telemetry = SampleTelemetry(path, exporter=exporter)
    pol = policy(
        "rubric",
        judges=(
            judge("E", "stub:parse-error", samples=2),
            judge("S", samples=3, reliability=1.0),
        ),
    )
    await run_samples(
        pol, artifact(truth="accept"), EMPTY, gates(), telemetry=telemetry, engine=Engine()
    )
    telemetry.close()
    records = exporter.get_finished_logs()
    assert len(records) == 5
    assert {r.log_record.event_name for r in records} == {"judge.sample"}
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    errors = [line for line in lines if line["judge"] == "E"]
    assert {(e["verdict"], e["error"], e["of"]) for e in errors} == {("error", "malformed_json", 2)}
    assert {e["agreement_so_far"] for e in lines if e["judge"] == "S"} == {1.0}
    assert all("text" not in e and "prompt" not in e for e in lines)


def test_agreement_so_far_tracks_each_criterion() -> None:
    telemetry = SampleTelemetry()
    shares = []
    for k, verdict in enumerate(["no", "no", "yes", "no"]):
        sample = vote("A", k, criterion_answer(verdict), "c")
        shares.append(telemetry.sample("x", sample, of=4, label=verdict)["agreement_so_far"])
    assert shares == [1.0, 1.0, pytest.approx(2 / 3, abs=1e-6), 0.75]
    errored = vote("A", 0, None, "c", error="timeout")
    other = telemetry.sample("y", errored, of=4, label="unsure")
    assert other["agreement_so_far"] == 1.0  # another artifact starts its own tally
    telemetry.close()


async def test_slow_drip_bodies_cannot_outlast_the_timeout(fake: FakeOpenAI) -> None:
    fake.push(
        completion("DECISION: EQUIVALENT\nREASON: r\nNUMERIC_A: 1\nNUMERIC_B: 1", trickle_s=0.05)
    )
    # 1.2 s: the two plain answers finish inside it on a loaded machine too; the drip
    # (about 60 characters at 50 ms) does not.
    config = judge(provider="openai-compat", base_url=fake.url, model="m", timeout_s=1.2,
                   retries=0)
    pol = policy("equivalence", judges=config, samples=3)
    engine = Engine()
    votes = await run_samples(pol, pair("1", "1"), EMPTY, (), engine=engine)
    await engine.aclose()
    assert sorted(str(v.error) for v in votes) == ["None", "None", "timeout"]
