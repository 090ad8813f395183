"""A catalogue of bad answers from a real OpenAI-compatible server on 127.0.0.1.

Each entry scripts one HTTP exchange; the ``openai-compat`` adapter talks to the server
through the official SDK, the engine validates, and the fold decides. None may yield an
acceptance; each must yield its named error kind; a hang must end at the timeout.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from jurat.fold import decide
from jurat.judges import Engine, run_samples
from jurat.models import GATE_PYTHON_PARSE, EvidenceBundle, EvidenceItem, GateOutcome, RiskTier
from tests.judges.conftest import FAILING, PASSING, artifact, judge, policy
from tests.support.fake_openai import FakeOpenAI, Reply, arcv_decision, completion, reply_json

ART = artifact()
D = ART.sha256
TIMEOUT_S = 0.4
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
CATALOGUE: list[tuple[str, list[Reply], str, tuple[GateOutcome, ...]]] = [
    # transport: no answer was produced
    ("http-429", [reply_json({"error": "slow down"}, status=429)], "rate_limited", PASSING),
    ("http-500", [reply_json({"error": "boom"}, status=500)], "http_5xx", PASSING),
    ("http-502", [Reply(status=502, body=b"bad gateway")], "http_5xx", PASSING),
    (
        "http-503-retry-after",
        [reply_json({"error": "busy"}, status=503, headers=(("retry-after", "0"),))],
        "http_5xx",
        PASSING,
    ),
    ("http-401", [reply_json({"error": "who are you"}, status=401)], "unauthorized", PASSING),
    ("http-404", [reply_json({"error": "no such model"}, status=404)], "http_4xx", PASSING),
    # a 400 under structured output is asked once more without it, then final
    ("http-400", [reply_json({"error": "bad"}, status=400)] * 2, "http_4xx", PASSING),
    ("hang", [Reply(hang=True)], "timeout", PASSING),
    ("slow", [Reply(body=GOOD.encode(), delay_s=3 * TIMEOUT_S)], "timeout", PASSING),
    ("slow-drip", [completion(GOOD, trickle_s=0.05)], "timeout", PASSING),
    ("dropped-connection", [Reply(drop=True)], "connection", PASSING),
    # the envelope
    ("empty-choices", [completion(GOOD, choices=[])], "empty_response", PASSING),
    ("refusal", [completion(None, refusal="I can't help with that.")], "refused", PASSING),
    ("refusal-with-text", [completion(GOOD, refusal="No.")], "refused", PASSING),
    ("content-filter", [raw(GOOD, finish_reason="content_filter")], "refused", PASSING),
    ("cut-at-max-tokens", [raw(GOOD[:60], finish_reason="length")], "truncated", PASSING),
    ("html-200", [envelope("<html>502 Bad Gateway</html>")], "malformed_response", PASSING),
    ("null-content", [completion(None)], "empty_response", PASSING),
    ("blank-content", [completion("   \n")], "empty_response", PASSING),
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
        PASSING,
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
        PASSING,
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
        PASSING,
    ),
    # the answer body
    ("truncated-json", [raw(GOOD[: len(GOOD) // 2])], "malformed_json", PASSING),
    ("fenced-json", [raw(f"```json\n{GOOD}\n```")], "malformed_json", PASSING),
    ("prose-then-json", [raw(f"Here is my decision: {GOOD}")], "malformed_json", PASSING),
    ("two-objects", [raw(GOOD + GOOD)], "malformed_json", PASSING),
    (
        "duplicate-disposition",
        [raw(GOOD[:-1] + ', "disposition": "accept"}')],
        "duplicate_key",
        PASSING,
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
        PASSING,
    ),
    (
        "nan-score",
        [raw(GOOD.replace('"correctness": 5', '"correctness": NaN'))],
        "non_finite_number",
        PASSING,
    ),
    (
        "huge-number",
        [raw(GOOD.replace('"correctness": 5', '"correctness": 1e999'))],
        "non_finite_number",
        PASSING,
    ),
    ("oversized", [answer(explanation="x" * 70_000)], "oversized", PASSING),
    ("json-array", [raw(f"[{GOOD}]")], "schema_violation", PASSING),
    ("json-string", [raw(json.dumps(GOOD))], "schema_violation", PASSING),
    # the seed's schema
    ("extra-key", [answer(confidence=0.99)], "schema_violation", PASSING),
    ("score-6", [answer(scores={**SCORES, "correctness": 6})], "schema_violation", PASSING),
    ("score-0", [answer(scores={**SCORES, "presentation": 0})], "schema_violation", PASSING),
    ("score-string", [answer(scores={**SCORES, "reasoning": "5"})], "schema_violation", PASSING),
    ("score-fraction", [answer(scores={**SCORES, "reasoning": 4.5})], "schema_violation", PASSING),
    ("score-boolean", [answer(scores={**SCORES, "adherence": True})], "schema_violation", PASSING),
    (
        "missing-score",
        [answer(scores={"correctness": 5, "reasoning": 5, "adherence": 5})],
        "schema_violation",
        PASSING,
    ),
    ("extra-score", [answer(scores={**SCORES, "style": 5})], "schema_violation", PASSING),
    ("unknown-disposition", [answer(disposition="approve")], "schema_violation", PASSING),
    ("disposition-case", [answer(disposition="ACCEPT")], "schema_violation", PASSING),
    ("unknown-preference", [answer(preference="C")], "schema_violation", PASSING),
    ("accept-gates-false", [answer(hard_gates_pass=False)], "schema_violation", PASSING),
    ("accept-abstain", [answer(preference="abstain")], "schema_violation", PASSING),
    ("gates-as-string", [answer(hard_gates_pass="true")], "schema_violation", PASSING),
    (
        "missing-evidence",
        [raw(json.dumps({k: v for k, v in arcv_decision(D).items() if k != "evidence_indices"}))],
        "schema_violation",
        PASSING,
    ),
    ("empty-evidence", [answer(evidence_indices=[])], "schema_violation", PASSING),
    ("duplicate-evidence", [answer(evidence_indices=[0, 0])], "schema_violation", PASSING),
    ("negative-evidence", [answer(evidence_indices=[-1])], "schema_violation", PASSING),
    ("too-much-evidence", [answer(evidence_indices=list(range(33)))], "schema_violation", PASSING),
    ("short-explanation", [answer(explanation="ok")], "schema_violation", PASSING),
    ("digest-uppercase", [answer(artifact_sha256=D.upper())], "schema_violation", PASSING),
    (
        "missing-digest",
        [raw(json.dumps({k: v for k, v in arcv_decision(D).items() if k != "artifact_sha256"}))],
        "schema_violation",
        PASSING,
    ),
    # jurat's semantic checks
    ("wrong-digest", [answer(artifact_sha256="0" * 64)], "digest_mismatch", PASSING),
    ("evidence-out-of-bundle", [answer(evidence_indices=[0, 2])], "bad_evidence_index", PASSING),
    ("accept-failed-gates", [answer()], "accept_with_failed_gates", FAILING),
    (
        "accept-missing-gate",
        [answer()],
        "accept_with_failed_gates",
        (GateOutcome(id=GATE_PYTHON_PARSE, outcome="pass", required=True),),
    ),
    ("preference-b-single", [answer(preference="B")], "bad_preference", PASSING),
]


def test_catalogue_is_large_and_named() -> None:
    ids = [case[0] for case in CATALOGUE]
    assert len(ids) >= 30
    assert len(set(ids)) == len(ids)


async def test_a_good_answer_accepts(fake: FakeOpenAI, engine: Engine) -> None:
    """The control: the same setup with a valid answer accepts, so rejections are real."""
    config = judge("openai-compat", base_url=fake.url, model="m", samples=1, retries=0)
    pol = policy("rubric", config, risk_tier=ONE_VOTE)
    fake.push(completion(GOOD))
    votes = await run_samples(pol, ART, BUNDLE, PASSING, engine=engine)
    assert [v.error for v in votes] == [None]
    assert decide(pol, PASSING, votes).disposition == "accept"


@pytest.mark.parametrize(
    ("replies", "kind", "gates"),
    [case[1:] for case in CATALOGUE],
    ids=[case[0] for case in CATALOGUE],
)
async def test_bad_answer_is_a_named_error_never_an_acceptance(
    fake: FakeOpenAI,
    engine: Engine,
    replies: list[Reply],
    kind: str,
    gates: tuple[GateOutcome, ...],
) -> None:
    config = judge(
        "openai-compat", base_url=fake.url, model="m", samples=1, retries=0, timeout_s=TIMEOUT_S
    )
    pol = policy("rubric", config, risk_tier=ONE_VOTE)
    fake.push(*replies)
    began = time.monotonic()
    votes = await run_samples(pol, ART, BUNDLE, gates, engine=engine)
    elapsed = time.monotonic() - began
    assert len(votes) == 1
    vote = votes[0]
    assert (vote.error, vote.answer) == (kind, None)
    assert decide(pol, gates, votes).disposition != "accept"
    assert fake.requests == len(replies)
    if kind == "timeout":
        # A hang ends at the timeout: not before it, and not long after it.
        assert TIMEOUT_S * 1000 - 20 <= vote.latency_ms <= TIMEOUT_S * 1000 + 400
        assert elapsed < TIMEOUT_S + 1.0
