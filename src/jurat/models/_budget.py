"""The ``[budget]`` table: a cap on what a campaign may spend on paid model calls (issue 29).

Seed 001 §5 prices every phase; the cap turns the price into a limit. It bounds the
campaign's spend recorded in the ledger across runs, so a run that stops at the cap (exit
4) resumes under a raised one and draws only what is missing. The table is kept out of the
policy and its digest, like ``[intake]`` and ``[monitor]``: raising the cap must resume the
same campaign, not make it a changed live policy (issue 27). Enforced by ``jurat run``
(judges/_budget.py); the reservation rule is in docs/campaign-format.md, "[budget]".
"""

from __future__ import annotations

from pydantic import Field, model_validator

from jurat.models._base import Frozen
from jurat.models._judge import JudgeConfig
from jurat.models._problems import Loc, Problem, RecordProblems

__all__ = ["METERED_PROVIDERS", "Budget", "budget_problems"]

#: Providers whose calls are paid for: a call to sim, replay or a stub leaves the machine
#: for no endpoint and costs nothing, so the cap neither needs nor counts their prices.
METERED_PROVIDERS = frozenset({"openai-compat", "anthropic"})


class Budget(Frozen):
    """The caps; a call is not sent when its worst case could cross either."""

    usd: float | None = Field(None, gt=0)
    """USD the campaign's paid calls may cost in all, at the judges' declared prices."""
    tokens: int | None = Field(None, gt=0)
    """Input plus output tokens the campaign's paid calls may use in all."""

    @model_validator(mode="after")
    def _some_cap(self) -> Budget:
        if self.usd is None and self.tokens is None:
            raise RecordProblems([Problem(
                (), "[budget] sets no cap", "set usd = 5.0, tokens = 2000000, or both")])
        return self


def budget_problems(budget: Budget | None, judges: tuple[JudgeConfig, ...],
                    subject: JudgeConfig | None, *, served: bool) -> list[Problem]:
    """A cap jurat could not enforce is refused at load, never silently ignored.

    A USD cap needs both prices of every paid model the run may call (the panel and the
    ``[subject]``): a call at an unknown price has an unknown cost. ``jurat serve`` takes
    jobs one at a time from contributors and does not enforce a campaign-wide cap.
    """
    if budget is None:
        return []
    if served:
        return [Problem(("budget",), "jurat serve does not enforce [budget]; only jurat run "
                        "does", "remove [budget] from the served campaign")]
    if budget.usd is None:
        return []
    problems: list[Problem] = []
    places: list[tuple[Loc, JudgeConfig, str]] = [
        (("judges", index), judge, f"judge {judge.id!r}") for index, judge in enumerate(judges)]
    if subject is not None:
        places.append((("subject",), subject, "the [subject]"))
    for loc, config, name in places:
        if config.provider not in METERED_PROVIDERS:
            continue
        for key in ("price_in_per_mtok", "price_out_per_mtok"):
            if getattr(config, key) is None:
                problems.append(Problem(
                    (*loc, key),
                    f"{name} declares no {key}, so [budget] usd = {budget.usd:g} cannot be "
                    "enforced (a call at an unknown price has an unknown cost)",
                    f"declare prices on {name}: price_in_per_mtok and price_out_per_mtok in "
                    "USD per million tokens, or drop [budget] usd"))
    return problems
