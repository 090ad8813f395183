"""A judge endpoint's token usage is a number it chooses (issue 36, item 3).

The reported attack, end to end: a loopback OpenAI-compatible judge that reports negative
token usage drove a ``[budget]`` token cap's spend negative, so a run that an honest judge
stops after 2 calls went on to all 40 planned ones and then ended in an internal pydantic
error. A count that is not a non-negative integer of at most ``MAX_TOKEN_COUNT`` now makes
the sample an error vote of kind ``bad_usage``, charged its whole reservation, so a judge
that reports such counts reaches the cap no later than an honest one (whose reports are at
most the reservation), and the run ends at the cap (exit 4).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.judges import BudgetGuard
from jurat.judges._anthropic import parse_message
from jurat.judges._openai import parse_chat_completion
from jurat.judges._protocol import JudgeCall, Prompt
from jurat.ledger import open_ledger
from jurat.models import Artifact, Budget, JudgeConfig
from jurat.models._echoed import MAX_TOKEN_COUNT
from tests.support.cli import invoke
from tests.support.fake_openai import FakeOpenAI, FakeRequest, Reply, completion

#: Calls the campaign plans: 4 artifacts x 10 samples of one criterion.
PLANNED = 40
#: The judge's max_tokens: each call's worst case is its prompt's bytes, 512 and this.
MAX_TOKENS = 60_000
#: What the honest judge reports: no more than any call's worst case (> 60,512 tokens).
HONEST = {"prompt_tokens": 500, "completion_tokens": 59_500, "total_tokens": 60_000}
#: Two honest calls fit (60,000 + a worst case), a third does not (120,000 + a worst case):
#: the cap stops the honest judge after exactly 2 calls, whatever the prompt's few kB.
CAP = 160_000

CAMPAIGN = """\
[campaign]
id = "hostile-usage"
kind = "criteria"
allowed_destinations = ["{url}"]

[criteria]
samples = 10
blocker_samples = 10
items = [{{ id = "polite", text = "Is the reply polite?", blocker = false }}]

[budget]
tokens = {cap}

[[judges]]
id = "paid"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
api_key_env = "FAKE_KEY"
max_tokens = {max_tokens}
retries = 0
timeout_s = 10
"""

_VERDICT = json.dumps({"verdict": "yes", "explanation": "The reply thanks the reader."})


def judge(usage: dict[str, Any]) -> Callable[[FakeRequest], Reply]:
    def answer(request: FakeRequest) -> Reply:
        return completion(_VERDICT, usage=usage)

    return answer


@pytest.fixture(scope="module", autouse=True)
def _api_key() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FAKE_KEY", "sk-test")
        yield


@pytest.fixture(scope="module")
def keypair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    keys = tmp_path_factory.mktemp("keys")
    assert invoke("keygen", "--out", str(keys)).exit_code == 0
    return keys / "jurat.key"


@pytest.fixture(scope="module")
def honest_calls(tmp_path_factory: pytest.TempPathFactory, keypair: Path) -> int:
    """How many calls the cap lets an honest judge make: exactly 2."""
    code, err, calls, votes = capped_run(tmp_path_factory.mktemp("honest") / "run", keypair,
                                         HONEST)
    assert code == 4, err
    assert calls == 2 and len(votes) == 2
    assert all(v["error"] is None for v in votes)
    return calls


def capped_run(root: Path, key: Path, usage: dict[str, Any], *, runs: int = 1
               ) -> tuple[int, str, int, list[Any]]:
    """``jurat run`` of the capped campaign against a judge that reports ``usage``, ``runs``
    times over one ledger: the last exit code and stderr, the calls that reached the judge
    in the last run and the recorded votes."""
    root.mkdir()
    with FakeOpenAI(behaviour=judge(usage)) as server:
        text = CAMPAIGN.format(url=server.url, cap=CAP, max_tokens=MAX_TOKENS)
        for i in range(4):
            text += f'\n[[artifacts]]\nid = "r{i}"\ntext = "Thank you kindly, reply {i}."\n'
        campaign = root / "campaign.toml"
        campaign.write_text(text)
        for _ in range(runs):
            before = len(server.received)
            result = invoke("run", str(campaign), "--out", str(root / "out"), "--ledger",
                            f"sqlite:///{root / 'l.db'}", "--key", str(key), "--quiet")
        calls = len(server.received) - before
    with open_ledger(f"sqlite:///{root / 'l.db'}", create=False) as ledger:
        votes = [e.payload["vote"] for e in ledger.entries(kind="sample_recorded")]
    return result.exit_code, result.stderr, calls, votes


@pytest.mark.parametrize("hostile", [
    {"prompt_tokens": -1_000_000, "completion_tokens": 40},
    {"prompt_tokens": 120, "completion_tokens": -10**12},
    {"prompt_tokens": 10**18, "completion_tokens": 40},
    {"prompt_tokens": "120", "completion_tokens": 40},
    {"prompt_tokens": 120.5, "completion_tokens": 40},
    {"prompt_tokens": True, "completion_tokens": 40},
    ["not", "an", "object"],
], ids=["negative-in", "negative-out", "past-the-bound", "string", "float", "bool", "list"])
def test_a_judge_reporting_bad_usage_is_stopped_no_later_than_an_honest_one(
    tmp_path: Path, keypair: Path, honest_calls: int, hostile: Any
) -> None:
    code, err, calls, votes = capped_run(tmp_path / "hostile", keypair, hostile)
    # The run ends at the cap, as the honest one did: no internal error, no 40 calls.
    assert code == 4, err
    assert "budget cap 160,000 tokens reached" in " ".join(err.split())
    assert "internal" not in err.lower() and "validation error" not in err.lower()
    assert 0 < calls <= honest_calls < PLANNED
    # Each such sample is an error vote of its kind, recorded with the reservation it was
    # charged, so a later run counts it from the ledger as this one did.
    assert [v["error"] for v in votes] == ["bad_usage"] * calls
    for vote in votes:
        usage = vote["usage"]
        assert set(usage) == {"input_tokens", "output_tokens"}
        assert usage["output_tokens"] == MAX_TOKENS
        assert 512 < usage["input_tokens"] < MAX_TOKEN_COUNT


def test_a_later_run_counts_the_charged_reservations(tmp_path: Path, keypair: Path) -> None:
    """The cap holds across runs: the same command again, under the same cap, sends
    nothing more, because the ledger holds what the hostile calls were charged."""
    hostile = {"prompt_tokens": -1_000_000, "completion_tokens": 40}
    code, err, calls, votes = capped_run(tmp_path / "run", keypair, hostile, runs=2)
    assert code == 4, err
    assert "budget cap 160,000 tokens reached" in " ".join(err.split())
    assert calls == 0 and 0 < len(votes) <= 2


# -- the parsers: every count a judge reports is checked ---------------------------------------

_COUNT = st.one_of(
    st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
    st.text(max_size=8), st.none(), st.lists(st.integers(), max_size=2))


@given(tokens_in=_COUNT, tokens_out=_COUNT)
def test_usage_is_recorded_only_as_bounded_non_negative_integers(tokens_in: Any,
                                                                 tokens_out: Any) -> None:
    def valid(value: Any) -> bool:
        return type(value) is int and 0 <= value <= MAX_TOKEN_COUNT

    openai = parse_chat_completion(json.dumps({
        "model": "m", "choices": [{"message": {"content": "x"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out}}).encode())
    anthropic = parse_message(json.dumps({
        "model": "m", "content": [{"type": "text", "text": "x"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}).encode(), None)
    for raw in (openai, anthropic):
        assert all(type(v) is int and 0 <= v <= MAX_TOKEN_COUNT for v in raw.usage.values())
        # null is "not reported"; anything else that is not a valid count is bad_usage.
        bad = [v for v in (tokens_in, tokens_out) if v is not None and not valid(v)]
        if bad:
            assert raw.envelope_error == "bad_usage" and raw.text is None
            assert raw.usage == {}
        else:
            assert raw.envelope_error is None and raw.text == "x"
            expected = {k: v for k, v in (("input_tokens", tokens_in),
                                          ("output_tokens", tokens_out)) if v is not None}
            assert raw.usage == expected


# -- the guard: whatever it is handed, the spend never decreases ---------------------------------

PAID = JudgeConfig(id="paid", provider="openai-compat", model="m", base_url="http://127.0.0.1:1",
                   max_tokens=100, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
CALL = JudgeCall(kind="text", prompt=Prompt(template_id="t", version="1", user="u" * 50),
                 temperature=0.0, max_tokens=100,
                 artifact=Artifact(id="a", sha256="0" * 64, media_type="text/plain"))


@given(st.lists(st.one_of(st.none(), st.dictionaries(
    st.sampled_from(["input_tokens", "output_tokens", "total_tokens"]), _COUNT, max_size=3)),
    min_size=1, max_size=6))
def test_the_spend_never_decreases_and_a_non_count_costs_the_reservation(
    reports: list[dict[str, Any] | None]
) -> None:
    async def scenario() -> None:
        guard = BudgetGuard(Budget(tokens=10**12, usd=10**6))
        for usage in reports:
            before = (guard.spent_tokens, guard.spent_usd)
            hold = await guard.reserve(PAID, CALL)
            assert hold is not None
            charged = guard.settle(hold, usage)
            assert guard.spent_tokens >= before[0] and guard.spent_usd >= before[1]
            assert all(0 <= v <= MAX_TOKEN_COUNT for v in charged.values())
            counted = usage is not None and all(
                type(usage.get(k)) is int and 0 <= usage[k] <= MAX_TOKEN_COUNT
                for k in ("input_tokens", "output_tokens"))
            if not counted:
                assert charged == hold.usage()
                assert guard.spent_tokens - before[0] == hold.tokens

    asyncio.run(scenario())
