"""A catalogue of bad answers from a real OpenAI-compatible server on 127.0.0.1.

Each entry scripts one HTTP exchange; the ``openai-compat`` adapter talks to the server
through the official SDK, the engine validates, and the fold decides. None may yield an
acceptance; each must yield its named error kind; a hang must end at the timeout.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from jurat.fold import decide
from jurat.judges import Engine, run_samples
from jurat.models import GATE_PYTHON_PARSE, EvidenceBundle, EvidenceItem, GateOutcome, RiskTier
from tests.support.builders import artifact, gate, gates, judge, policy
from tests.support.fake_openai import FakeOpenAI, Reply, arcv_decision, completion, reply_json

ART = artifact()
D = ART.sha256
TIMEOUT_S = 0.4
# The cases that must not time out get this instead, so a loaded machine cannot turn
# their named error into `timeout` (http-500 did once, on four workers over 2 cores).
ANSWERED_TIMEOUT_S = 30.0
# One substantive vote suffices under this tier, so a valid answer would accept: every
# rejection below is the validation's doing, not the tier's.
ONE_VOTE = RiskTier(votes=1, min_agreement=1.0)
BUNDLE = EvidenceBundle(
    items=(
        EvidenceItem(kind="artifact", tool="jurat", tool_version="0", sha256=D),
        EvidenceItem(
            kind="tests", tool="pytest", tool_version="8", sha256="e" * 64, excerpt="2 passed"
        ),
    )
)


def answer(**overrides: Any) -> Reply:
    return completion(json.dumps(arcv_decision(D, **overrides)))


def raw(content: str, **kwargs: Any) -> Reply:
    return completion(content, **kwargs)


def envelope(body: str) -> Reply:
    return Reply(body=body.encode())


GOOD = json.dumps(arcv_decision(D))
SCORES = {"correctness": 5, "reasoning": 4, "adherence": 4, "presentation": 4}

# (id, scripted replies, expected error kind, gates)
CATALOGUE: list[tuple[str, list[Reply], str, Sequence[GateOutcome]]] = [
    # transport: no answer was produced
    ("http-429", [reply_json({"error": "slow down"}, status=429)], "rate_limited", gates()),
    ("http-500", [reply_json({"error": "boom"}, status=500)], "http_5xx", gates()),
    ("http-502", [Reply(status=502, body=b"bad gateway")], "http_5xx", gates()),
    (
        "http-503-retry-after",
        [reply_json({"error": "busy"}, status=503, headers=(("retry-after", "0"),))],
        "http_5xx",
        gates(),
    ),
    ("http-401", [reply_json({"error": "who are you"}, status=401)], "unauthorized", gates()),
    ("http-404", [reply_json({"error": "no such model"}, status=404)], "http_4xx", gates()),
    # a 400 under structured output is asked once more without it, then final
    ("http-400", [reply_json({"error": "bad"}, status=400)] * 2, "http_4xx", gates()),
    ("hang", [Reply(hang=True)], "timeout", gates()),
    ("slow", [Reply(body=GOOD.encode(), delay_s=3 * TIMEOUT_S)], "timeout", gates()),
    ("slow-drip", [completion(GOOD, trickle_s=0.05)], "timeout", gates()),
    ("dropped-connection", [Reply(drop=True)], "connection", gates()),
    # the envelope
    ("empty-choices", [completion(GOOD, choices=[])], "empty_response", gates()),
    ("refusal", [completion(None, refusal="I can't help with that.")], "refused", gates()),
    ("refusal-with-text", [completion(GOOD, refusal="No.")], "refused", gates()),
    ("content-filter", [raw(GOOD, finish_reason="content_filter")], "refused", gates()),
    ("cut-at-max-tokens", [raw(GOOD[:60], finish_reason="length")], "truncated", gates()),
    ("html-200", [envelope("<html>502 Bad Gateway</html>")], "malformed_response", gates()),
    ("null-content", [completion(None)], "empty_response", gates()),
    ("blank-content", [completion("   \n")], "empty_response", gates()),
    (
        "two-choices",
        [
            completion(
                GOOD,
                choices=[
                    {"index": i, "message": {"role": "assistant", "content": GOOD}}
                    for i in range(2)
                ],
            )
        ],
        "malformed_response",
        gates(),
    ),
    (
        "content-parts-list",
        [
            completion(
                None,
                choices=[{"index": 0, "message": {"content": [{"type": "text", "text": GOOD}]}}],
            )
        ],
        "malformed_response",
        gates(),
    ),
    (
        "envelope-duplicate-choices",
        [
            envelope(
                '{"model":"m","choices":[{"index":0,"message":{"content":"{}"}}],'
                '"choices":[{"index":0,"message":{"content":' + json.dumps(GOOD) + "}}]}"
            )
        ],
        "duplicate_key",
        gates(),
    ),
    # the answer body
    ("truncated-json", [raw(GOOD[: len(GOOD) // 2])], "malformed_json", gates()),
    ("fenced-json", [raw(f"```json\n{GOOD}\n```")], "malformed_json", gates()),
    ("prose-then-json", [raw(f"Here is my decision: {GOOD}")], "malformed_json", gates()),
    ("two-objects", [raw(GOOD + GOOD)], "malformed_json", gates()),
    (
        "duplicate-disposition",
        [raw(GOOD[:-1] + ', "disposition": "accept"}')],
        "duplicate_key",
        gates(),
    ),
    (
        "reject-then-accept",
        [
            raw(
                GOOD.replace(
                    '"disposition": "accept"', '"disposition": "reject", "disposition": "accept"'
                )
            )
        ],
        "duplicate_key",
        gates(),
    ),
    (
        "nan-score",
        [raw(GOOD.replace('"correctness": 5', '"correctness": NaN'))],
        "non_finite_number",
        gates(),
    ),
    (
        "huge-number",
        [raw(GOOD.replace('"correctness": 5', '"correctness": 1e999'))],
        "non_finite_number",
        gates(),
    ),
    ("oversized", [answer(explanation="x" * 70_000)], "oversized", gates()),
    ("json-array", [raw(f"[{GOOD}]")], "schema_violation", gates()),
    ("json-string", [raw(json.dumps(GOOD))], "schema_violation", gates()),
    # the seed's schema
    ("extra-key", [answer(confidence=0.99)], "schema_violation", gates()),
    ("score-6", [answer(scores={**SCORES, "correctness": 6})], "schema_violation", gates()),
    ("score-0", [answer(scores={**SCORES, "presentation": 0})], "schema_violation", gates()),
    ("score-string", [answer(scores={**SCORES, "reasoning": "5"})], "schema_violation", gates()),
    ("score-fraction", [answer(scores={**SCORES, "reasoning": 4.5})], "schema_violation", gates()),
    ("score-boolean", [answer(scores={**SCORES, "adherence": True})], "schema_violation", gates()),
    (
        "missing-score",
        [answer(scores={"correctness": 5, "reasoning": 5, "adherence": 5})],
        "schema_violation",
        gates(),
    ),
    ("extra-score", [answer(scores={**SCORES, "style": 5})], "schema_violation", gates()),
    ("unknown-disposition", [answer(disposition="approve")], "schema_violation", gates()),
    ("disposition-case", [answer(disposition="ACCEPT")], "schema_violation", gates()),
    ("unknown-preference", [answer(preference="C")], "schema_violation", gates()),
    ("accept-gates-false", [answer(hard_gates_pass=False)], "schema_violation", gates()),
    ("accept-abstain", [answer(preference="abstain")], "schema_violation", gates()),
    ("gates-as-string", [answer(hard_gates_pass="true")], "schema_violation", gates()),
    (
        "missing-evidence",
        [raw(json.dumps({k: v for k, v in arcv_decision(D).items() if k != "evidence_indices"}))],
        "schema_violation",
        gates(),
    ),
    ("empty-evidence", [answer(evidence_indices=[])], "schema_violation", gates()),
    ("duplicate-evidence", [answer(evidence_indices=[0, 0])], "schema_violation", gates()),
    ("negative-evidence", [answer(evidence_indices=[-1])], "schema_violation", gates()),
    ("too-much-evidence", [answer(evidence_indices=list(range(33)))], "schema_violation", gates()),
    ("short-explanation", [answer(explanation="ok")], "schema_violation", gates()),
    ("digest-uppercase", [answer(artifact_sha256=D.upper())], "schema_violation", gates()),
    (
        "missing-digest",
        [raw(json.dumps({k: v for k, v in arcv_decision(D).items() if k != "artifact_sha256"}))],
        "schema_violation",
        gates(),
    ),
    # jurat's semantic checks
    ("wrong-digest", [answer(artifact_sha256="0" * 64)], "digest_mismatch", gates()),
    ("evidence-out-of-bundle", [answer(evidence_indices=[0, 2])], "bad_evidence_index", gates()),
    ("accept-failed-gates", [answer()], "accept_with_failed_gates", gates(False)),
    (
        "accept-missing-gate",
        [answer()],
        "accept_with_failed_gates",
        [gate(GATE_PYTHON_PARSE)],
    ),
    ("preference-b-single", [answer(preference="B")], "bad_preference", gates()),
]


def test_catalogue_is_large_and_named() -> None:
    ids = [case[0] for case in CATALOGUE]
    assert len(ids) >= 30
    assert len(set(ids)) == len(ids)


async def test_a_good_answer_accepts(fake: FakeOpenAI, engine: Engine) -> None:
    """The control: the same setup with a valid answer accepts, so rejections are real."""
    config = judge(provider="openai-compat", base_url=fake.url, model="m", samples=1, retries=0)
    pol = policy("rubric", judges=config, risk_tier=ONE_VOTE)
    fake.push(completion(GOOD))
    votes = await run_samples(pol, ART, BUNDLE, gates(), engine=engine)
    assert [v.error for v in votes] == [None]
    assert decide(pol, gates(), votes).disposition == "accept"


@pytest.mark.parametrize(
    ("replies", "kind", "outcomes"),
    [case[1:] for case in CATALOGUE],
    ids=[case[0] for case in CATALOGUE],
)
async def test_bad_answer_is_a_named_error_never_an_acceptance(
    fake: FakeOpenAI,
    engine: Engine,
    replies: list[Reply],
    kind: str,
    outcomes: Sequence[GateOutcome],
) -> None:
    config = judge(
        provider="openai-compat", base_url=fake.url, model="m", samples=1, retries=0,
        timeout_s=TIMEOUT_S if kind == "timeout" else ANSWERED_TIMEOUT_S,
    )
    pol = policy("rubric", judges=config, risk_tier=ONE_VOTE)
    fake.push(*replies)
    votes = await run_samples(pol, ART, BUNDLE, outcomes, engine=engine)
    assert len(votes) == 1
    vote = votes[0]
    # The named kind after the one attempt retries=0 allows; a hang, a slow answer and a
    # slow drip are cut off by the judge's timeout_s, so they are `timeout`.
    assert (vote.error, vote.answer, vote.attempts) == (kind, None, 1)
    assert decide(pol, outcomes, votes).disposition != "accept"
    assert fake.requests == len(replies)
