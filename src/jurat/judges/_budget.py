"""Holding a run to the campaign's ``[budget]``: no call is sent that could cross the cap.

Before each attempt to a paid endpoint (models/_budget.py, ``METERED_PROVIDERS``) the
engine reserves the call's worst case: its input bound plus ``max_tokens`` output tokens,
at the judge's declared prices. The input bound is the prompt's UTF-8 bytes, the answer
schema's, and ``CALL_OVERHEAD`` tokens for the chat template and a provider's tool
preamble: a byte-level BPE token (OpenAI's, Anthropic's, Llama's, or SentencePiece with
byte fallback) covers at least one byte, so no prompt has more tokens than bytes. When the
settled spend, the reservations of the calls in flight and this reservation could cross a
cap, the call waits for the calls in flight to settle; if it still could with none in
flight, it is not sent, and neither is any call after it: the run stops (exit 4) and a
run under a raised cap resumes.

A call settles at what its endpoint reported; one without reported usage (a timeout, an
answer without a usage member) is charged its whole reservation, since it may have been
billed. So is an answer whose usage is no count at all (a negative, fractional, textual or
out-of-range number: the error vote ``bad_usage``, judges/_http.py): what an endpoint
reports can only add to the spend, never take from it, and a report that is no count
reaches the cap no later than an honest report would, which is at most the reservation
(a count within range is taken at its word: no cap can see an endpoint that bills more
than it reports). A response that
reported no usable count records the reservation it was charged as its usage (the
engine), so a later run, which counts the spend from the ledger, counts it too. The spend
therefore never falls below what the ledger records (seed 001 §5 costs are computed from
the recorded usage), and stays at or under the cap as long as no endpoint reports more
tokens than the bound.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from jurat.errors import BudgetExhausted
from jurat.judges._cost import Price
from jurat.judges._protocol import JudgeCall
from jurat.models import METERED_PROVIDERS, Budget, JudgeConfig, token_count

__all__ = ["CALL_OVERHEAD", "BudgetGuard", "Hold", "worst_case"]

#: Input tokens allowed on top of the prompt's bytes for the chat template, role markers and
#: a provider's own preamble (Anthropic documents about 300 tokens of tool-use system prompt).
CALL_OVERHEAD = 512


@dataclass(frozen=True)
class Hold:
    """One call's reservation."""

    usd: float
    input_tokens: int
    output_tokens: int
    price: Price

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    def usage(self) -> dict[str, int]:
        """The reservation as a vote's usage: what a call that reported none is charged."""
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


def worst_case(config: JudgeConfig, call: JudgeCall) -> Hold:
    """The most one attempt of ``call`` to ``config`` could cost (see the module)."""
    prompt = call.prompt
    schema = prompt.json_schema
    tokens_in = (len(prompt.system.encode("utf-8")) + len(prompt.user.encode("utf-8"))
                 + (len(json.dumps(schema).encode("utf-8")) if schema is not None else 0)
                 + CALL_OVERHEAD)
    price = Price.of(config)
    # A USD cap is refused at load for a paid judge without prices (models/_budget.py);
    # without a USD cap the money is not counted, only the tokens.
    usd = price.usd(tokens_in, call.max_tokens) or 0.0
    return Hold(usd=usd, input_tokens=tokens_in, output_tokens=call.max_tokens, price=price)


class BudgetGuard:
    """The campaign's caps for one run, starting from what the ledger already records.

    ``spent_usd`` and ``spent_tokens`` are what earlier runs recorded; this run's calls
    add to them as they settle. Belongs to one event loop (the run's engine).
    """

    def __init__(self, budget: Budget, *, spent_usd: float = 0.0, spent_tokens: int = 0
                 ) -> None:
        self.budget = budget
        self.recorded_usd = spent_usd
        """USD the ledger recorded before this run."""
        self.spent_usd = spent_usd
        """USD spent: the ledger's before this run, and this run's settled calls."""
        self.spent_tokens = spent_tokens
        """Tokens likewise."""
        self.sent = 0
        """Paid calls this run sent."""
        self.refused = 0
        """Calls not sent because of the cap."""
        self.stopped_by: str | None = None
        """``usd`` or ``tokens``: the cap that stopped the run; None while it goes on."""
        self._held_usd = 0.0
        self._held_tokens = 0
        self._in_flight = 0
        self._waiters: list[asyncio.Future[None]] = []

    def _crosses(self, hold: Hold) -> str | None:
        cap = self.budget
        if cap.usd is not None and self.spent_usd + self._held_usd + hold.usd > cap.usd:
            return "usd"
        if cap.tokens is not None and (
                self.spent_tokens + self._held_tokens + hold.tokens > cap.tokens):
            return "tokens"
        return None

    def _refuse(self) -> BudgetExhausted:
        self.refused += 1
        return BudgetExhausted(f"not sent: {self.stop_text()}")

    async def reserve(self, config: JudgeConfig, call: JudgeCall) -> Hold | None:
        """Reserve one attempt's worst case, waiting for calls in flight to settle when it
        does not fit beside them; None for a provider that is not paid for. Raises
        BudgetExhausted when it could cross a cap with nothing in flight, or once the run
        has stopped."""
        if config.provider not in METERED_PROVIDERS:
            return None
        hold = worst_case(config, call)
        while True:
            if self.stopped_by is not None:
                raise self._refuse()
            crossed = self._crosses(hold)
            if crossed is None:
                break
            if self._in_flight == 0:
                self.stopped_by = crossed
                self._wake()
                raise self._refuse()
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter
        self._held_usd += hold.usd
        self._held_tokens += hold.tokens
        self._in_flight += 1
        self.sent += 1
        return hold

    def settle(self, hold: Hold, usage: dict[str, int] | None) -> dict[str, int]:
        """The call is over: charge what its endpoint reported, or its whole reservation
        when it reported no usage (it may have been billed) or none that counts. Returns
        the usage charged."""
        self._held_usd -= hold.usd
        self._held_tokens -= hold.tokens
        self._in_flight -= 1
        tin, tout = (token_count(usage.get(key)) if usage else None
                     for key in ("input_tokens", "output_tokens"))
        if tin is not None and tout is not None:
            charged = {"input_tokens": tin, "output_tokens": tout}
            self.spent_usd += hold.price.usd(tin, tout) or 0.0
            self.spent_tokens += tin + tout
        else:
            charged = hold.usage()
            self.spent_usd += hold.usd
            self.spent_tokens += hold.tokens
        self._wake()
        return charged

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def stop_text(self) -> str:
        """What the run prints when the cap stopped it."""
        cap = self.budget
        if self.stopped_by == "tokens" or (self.stopped_by is None and cap.usd is None):
            assert cap.tokens is not None
            reached = (f"budget cap {cap.tokens:,} tokens reached: {self.spent_tokens:,} "
                       "tokens spent")
            key = "tokens"
        else:
            assert cap.usd is not None
            reached = f"budget cap ${cap.usd:.4f} reached: ${self.spent_usd:.4f} spent"
            key = "usd"
        calls = f"{self.refused} call{'' if self.refused == 1 else 's'} not sent"
        return f"{reached}, {calls}; raise [budget] {key} to resume"
