"""Tokens and USD per phase (trigger, execution, judge), the judge's N visible (seed 001 §5).

The one place cost is computed: the runner's per-job cost and progress spend, the cost table
after a run and the HTML report's cost section all build ``PhaseCost`` rows here and add them
with ``summarise``. Multi-sampling multiplies only the judge phase, so the judge row shows how
many judged units (one per artifact × judge × criterion) and the mean samples per unit.
Prices come from each judge's configuration (USD per million tokens); where a price is unknown
the USD figure is null, never a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from pydantic import Field

from jurat.judges._protocol import RawResponse
from jurat.models import Frozen, JudgeConfig, Vote

__all__ = [
    "PHASES",
    "CostSummary",
    "Metered",
    "PhaseCost",
    "Price",
    "add_phases",
    "combine",
    "cost_summary",
    "format_cost_table",
    "judge_phase",
    "phase_cost",
    "summarise",
    "usd",
]

#: The phases in the order every table lists them; ``total`` follows.
PHASES = ("trigger", "execution", "judge")

_PER_TOKEN = 1_000_000


class Price(Frozen):
    """A judge's pinned prices; a None price is unknown, never zero."""

    in_per_mtok: float | None = None
    """USD per million input tokens."""
    out_per_mtok: float | None = None
    """USD per million output tokens."""

    @classmethod
    def of(cls, config: JudgeConfig | None) -> Price:
        """The configuration's prices; no configuration means no known price."""
        if config is None:
            return cls()
        return cls(in_per_mtok=config.price_in_per_mtok, out_per_mtok=config.price_out_per_mtok)

    def usd(self, input_tokens: int, output_tokens: int) -> float | None:
        """USD for the tokens; None when tokens were spent at an unknown price."""
        total = 0.0
        for tokens, price in ((input_tokens, self.in_per_mtok), (output_tokens, self.out_per_mtok)):
            if tokens:
                if price is None:
                    return None
                total += tokens * price / _PER_TOKEN
        return total


class PhaseCost(Frozen):
    """The cost of one phase."""

    phase: str
    """``trigger``, ``execution``, ``judge`` or ``total``."""
    calls: int = Field(0, ge=0)
    """Completed calls (judge phase: recorded samples, errors included)."""
    attempts: int = Field(0, ge=0)
    """Transport attempts, retries included."""
    input_tokens: int = Field(0, ge=0)
    """Input tokens the endpoints reported."""
    output_tokens: int = Field(0, ge=0)
    """Output tokens the endpoints reported."""
    usd: float | None = Field(0.0, ge=0)
    """Cost in USD, or None when any contributing price is unknown."""
    units: int | None = Field(None, ge=0)
    """Judge phase: judged units (artifact × judge × criterion)."""
    multiplier: float | None = Field(None, ge=0)
    """Judge phase: mean samples per unit, the N that multiplies this phase."""


class CostSummary(Frozen):
    """Every phase and their total."""

    phases: tuple[PhaseCost, ...]
    """Phases in the order of ``PHASES`` (those present)."""
    total: PhaseCost
    """Sum over the phases; USD is None when any phase's is."""

    def phase(self, name: str) -> PhaseCost | None:
        """The row of phase ``name``, or None when it was not recorded."""
        return next((p for p in self.phases if p.phase == name), None)


class Metered(Protocol):
    """What the judge phase reads from one sample: a ``Vote``, or a receipt's vote row."""

    @property
    def judge(self) -> str: ...
    @property
    def sample(self) -> int | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...


def usd(config: JudgeConfig | None, input_tokens: int, output_tokens: int) -> float | None:
    """USD for the tokens at the configuration's prices; None when a needed price is unknown."""
    return Price.of(config).usd(input_tokens, output_tokens)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def add_phases(phase: str, parts: Iterable[PhaseCost]) -> PhaseCost:
    """The rows of one phase added up (e.g. every job's execution); USD None if any is None.

    Only the judge phase counts units: they add up and its multiplier is recomputed from the
    sums. Every other phase, ``total`` included, has neither.
    """
    judge = phase == "judge"
    calls = attempts = tin = tout = units = 0
    cost: float | None = 0.0
    for p in parts:
        calls += p.calls
        attempts += p.attempts
        tin += p.input_tokens
        tout += p.output_tokens
        cost = _add(cost, p.usd)
        units += p.units or 0
    return PhaseCost(
        phase=phase,
        calls=calls,
        attempts=attempts,
        input_tokens=tin,
        output_tokens=tout,
        usd=cost,
        units=units if judge else None,
        multiplier=calls / units if judge and units else None,
    )


def summarise(phases: Iterable[PhaseCost]) -> CostSummary:
    """Rows of the same phase added up, ordered as ``PHASES``, and their total."""
    by_phase: dict[str, list[PhaseCost]] = {}
    for p in phases:
        by_phase.setdefault(p.phase, []).append(p)
    rank = {name: i for i, name in enumerate(PHASES)}
    ordered = sorted(by_phase, key=lambda name: rank.get(name, len(PHASES)))
    rows = tuple(
        parts[0] if len(parts) == 1 else add_phases(name, parts)
        for name, parts in ((n, by_phase[n]) for n in ordered)
    )
    return CostSummary(phases=rows, total=add_phases("total", rows))


def combine(summaries: Iterable[CostSummary]) -> CostSummary:
    """Many jobs' costs as one: each phase added up across the summaries."""
    return summarise(p for s in summaries for p in s.phases)


def phase_cost(phase: str, responses: Iterable[RawResponse], config: JudgeConfig) -> PhaseCost:
    """The cost of a non-judge phase (trigger or execution) from its responses."""
    summed = add_phases(
        phase,
        (
            PhaseCost(
                phase=phase,
                calls=1,
                attempts=raw.attempts,
                input_tokens=raw.usage.get("input_tokens", 0),
                output_tokens=raw.usage.get("output_tokens", 0),
            )
            for raw in responses
        ),
    )
    return summed.model_copy(update={"usd": usd(config, summed.input_tokens, summed.output_tokens)})


def judge_phase(samples: Iterable[Metered], prices: Mapping[str, Price]) -> PhaseCost:
    """The judge phase: one call per recorded sample, priced per judge (unknown judge: no price).

    Every judged unit (artifact × judge × criterion) has exactly one sample k = 0.
    """
    unknown = Price()
    return add_phases(
        "judge",
        (
            PhaseCost(
                phase="judge",
                calls=1,
                attempts=s.attempts,
                input_tokens=s.input_tokens,
                output_tokens=s.output_tokens,
                usd=prices.get(s.judge, unknown).usd(s.input_tokens, s.output_tokens),
                units=int(s.sample == 0),
            )
            for s in samples
        ),
    )


def cost_summary(
    votes: Sequence[Vote],
    judges: Sequence[JudgeConfig],
    extra_phases: Sequence[PhaseCost] = (),
) -> CostSummary:
    """Tokens and USD per phase; ``extra_phases`` are the trigger and execution phases."""
    prices = {j.id: Price.of(j) for j in judges}
    return summarise([*extra_phases, judge_phase(votes, prices)])


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
