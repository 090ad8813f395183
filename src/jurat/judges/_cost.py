"""Tokens and USD per phase (trigger, execution, judge), the judge's N visible (seed 001 §5).

Multi-sampling multiplies only the judge phase, so the judge line shows how many judged
units (one per artifact × judge × criterion) and the mean samples per unit. Prices come
from each judge's configuration (USD per million tokens); where a price is unknown the
USD figure is null, never a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from jurat.judges._protocol import RawResponse
from jurat.models import Frozen, JudgeConfig, Vote

__all__ = ["CostSummary", "PhaseCost", "cost_summary", "format_cost_table", "phase_cost", "usd"]

_PER_TOKEN = 1_000_000


class PhaseCost(Frozen):
    """The cost of one phase."""

    phase: str
    """``trigger``, ``execution``, ``judge`` or ``total``."""
    calls: int = 0
    """Completed calls (judge phase: recorded samples, errors included)."""
    attempts: int = 0
    """Transport attempts, retries included."""
    input_tokens: int = 0
    """Input tokens the endpoints reported."""
    output_tokens: int = 0
    """Output tokens the endpoints reported."""
    usd: float | None = 0.0
    """Cost in USD, or None when any contributing price is unknown."""
    units: int | None = None
    """Judge phase: judged units (artifact × judge × criterion)."""
    multiplier: float | None = None
    """Judge phase: mean samples per unit, the N that multiplies this phase."""


class CostSummary(Frozen):
    """Every phase and their total."""

    phases: tuple[PhaseCost, ...]
    """Phases in the order trigger, execution, judge (those present)."""
    total: PhaseCost
    """Sum over the phases; USD is None when any phase's is."""


def usd(config: JudgeConfig | None, input_tokens: int, output_tokens: int) -> float | None:
    """USD for the tokens at the configuration's prices; None when a needed price is unknown."""
    if input_tokens == 0 and output_tokens == 0:
        return 0.0
    if config is None:
        return None
    total = 0.0
    for tokens, price in (
        (input_tokens, config.price_in_per_mtok),
        (output_tokens, config.price_out_per_mtok),
    ):
        if tokens:
            if price is None:
                return None
            total += tokens * price / _PER_TOKEN
    return total


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def phase_cost(phase: str, responses: Iterable[RawResponse], config: JudgeConfig) -> PhaseCost:
    """The cost of a non-judge phase (trigger or execution) from its responses."""
    calls = attempts = tin = tout = 0
    for raw in responses:
        calls += 1
        attempts += raw.attempts
        tin += raw.usage.get("input_tokens", 0)
        tout += raw.usage.get("output_tokens", 0)
    return PhaseCost(
        phase=phase,
        calls=calls,
        attempts=attempts,
        input_tokens=tin,
        output_tokens=tout,
        usd=usd(config, tin, tout),
    )


def cost_summary(
    votes: Sequence[Vote],
    judges: Sequence[JudgeConfig],
    extra_phases: Sequence[PhaseCost] = (),
) -> CostSummary:
    """Tokens and USD per phase; ``extra_phases`` are the trigger and execution phases."""
    by_id = {j.id: j for j in judges}
    tin = tout = attempts = 0
    cost: float | None = 0.0
    for vote in votes:
        vin = vote.usage.get("input_tokens", 0)
        vout = vote.usage.get("output_tokens", 0)
        tin += vin
        tout += vout
        attempts += vote.attempts
        cost = _add(cost, usd(by_id.get(vote.judge), vin, vout))
    units = sum(1 for v in votes if v.sample == 0)  # every unit has exactly one sample k = 0
    judge = PhaseCost(
        phase="judge",
        calls=len(votes),
        attempts=attempts,
        input_tokens=tin,
        output_tokens=tout,
        usd=cost,
        units=units,
        multiplier=len(votes) / units if units else None,
    )
    order = {"trigger": 0, "execution": 1}
    phases = tuple(sorted(extra_phases, key=lambda p: order.get(p.phase, 2))) + (judge,)
    total_usd: float | None = 0.0
    for p in phases:
        total_usd = _add(total_usd, p.usd)
    total = PhaseCost(
        phase="total",
        calls=sum(p.calls for p in phases),
        attempts=sum(p.attempts for p in phases),
        input_tokens=sum(p.input_tokens for p in phases),
        output_tokens=sum(p.output_tokens for p in phases),
        usd=total_usd,
    )
    return CostSummary(phases=phases, total=total)


def format_cost_table(summary: CostSummary) -> str:
    """A plain-text table, one line per phase, the judge's multiplier spelled out."""
    head = (
        f"{'phase':<10} {'calls':>7} {'attempts':>8} {'in tokens':>11} "
        f"{'out tokens':>11} {'USD':>10}"
    )
    lines = [head, "-" * len(head)]
    for p in (*summary.phases, summary.total):
        money = "unknown" if p.usd is None else f"{p.usd:.4f}"
        line = (
            f"{p.phase:<10} {p.calls:>7} {p.attempts:>8} {p.input_tokens:>11,} "
            f"{p.output_tokens:>11,} {money:>10}"
        )
        if p.phase == "judge" and p.units:
            line += f"   N = {p.multiplier:.3g} x {p.units} units (the only phase that multiplies)"
        if p.phase == "total":
            lines.append("-" * len(head))
        lines.append(line)
    return "\n".join(lines)
