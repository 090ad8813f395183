"""The budget guard (judges/_budget.py): worst cases bound a call, a call that does not fit
beside the calls in flight waits for them, one that could cross the cap alone is not sent,
and none is sent after it."""

from __future__ import annotations

import asyncio

import pytest

from jurat.errors import BudgetExhausted
from jurat.judges import CALL_OVERHEAD, BudgetGuard, worst_case
from jurat.judges._protocol import JudgeCall, Prompt
from jurat.models import Artifact, Budget, JudgeConfig

PAID = JudgeConfig(id="paid", provider="openai-compat", model="m", base_url="http://127.0.0.1:1",
                   max_tokens=100, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
CALL = JudgeCall(kind="text", prompt=Prompt(template_id="t", version="1", system="sys",
                                            user="é" * 100),
                 temperature=0.0, max_tokens=100,
                 artifact=Artifact(id="a", sha256="0" * 64, media_type="text/plain"))


def test_the_worst_case_counts_every_byte_of_the_prompt_and_max_tokens() -> None:
    hold = worst_case(PAID, CALL)
    tokens_in = 3 + 200 + CALL_OVERHEAD  # "é" is two UTF-8 bytes
    assert hold.tokens == tokens_in + 100
    assert hold.usd == pytest.approx(tokens_in * 1e-6 + 100 * 2e-6)


def test_a_call_waits_for_the_calls_in_flight_then_the_cap_stops_the_run() -> None:
    one = worst_case(PAID, CALL).tokens

    async def scenario() -> BudgetGuard:
        guard = BudgetGuard(Budget(tokens=one * 2 - 1))
        first = await guard.reserve(PAID, CALL)
        assert first is not None
        second = asyncio.ensure_future(guard.reserve(PAID, CALL))
        await asyncio.sleep(0)
        assert not second.done()  # two worst cases do not fit under the cap together
        guard.settle(first, {"input_tokens": 10, "output_tokens": 5})
        held = await second
        assert held is not None and guard.spent_tokens == 15
        guard.settle(held, None)  # no usage reported: charged its whole reservation
        assert guard.spent_tokens == 15 + one
        with pytest.raises(BudgetExhausted):
            await guard.reserve(PAID, CALL)  # 15 + one + one > cap, nothing in flight
        with pytest.raises(BudgetExhausted):
            await guard.reserve(PAID, CALL.model_copy(update={"max_tokens": 16}))
        return guard

    guard = asyncio.run(scenario())
    assert guard.stopped_by == "tokens" and guard.refused == 2 and guard.sent == 2
    assert guard.stop_text() == (f"budget cap {one * 2 - 1:,} tokens reached: "
                                 f"{15 + one:,} tokens spent, 2 calls not sent; raise "
                                 "[budget] tokens to resume")


def test_free_providers_are_not_counted() -> None:
    sim = JudgeConfig(id="s", provider="sim")

    async def scenario() -> None:
        guard = BudgetGuard(Budget(usd=1e-9), spent_usd=1.0)
        assert await guard.reserve(sim, CALL) is None

    asyncio.run(scenario())
