"""A run under the campaign's ``[budget]`` (issue 29): the cap starts from what the ledger
records, the engine holds every paid call to it (judges/_budget.py), and a run it stops
ends as a failure part-way (exit 4) that a run under a raised cap resumes."""

from __future__ import annotations

from jurat.errors import BudgetExhausted, ConfigError
from jurat.judges import BudgetGuard, Engine, Price
from jurat.ledger import Ledger
from jurat.models import Campaign, token_count

__all__ = ["attach_budget", "check_budget_executor", "recorded_spend", "stopped_by_budget"]


def recorded_spend(ledger: Ledger, campaign: Campaign) -> tuple[float, int]:
    """USD and tokens the campaign's recorded calls cost, at its judges' declared prices:
    every recorded sample (its vote's usage), every recorded claim extraction and every
    recorded subject execution.

    A count is read only as ``token_count`` reads it (models/_echoed.py): a ledger written
    before usage was checked may hold a negative or absurd one, which adds nothing rather
    than taking from the spend or failing the run."""
    policy = campaign.policy
    prices = {judge.id: Price.of(judge) for judge in policy.judges}
    usd, tokens = 0.0, 0

    def add(price: Price | None, usage: object) -> None:
        nonlocal usd, tokens
        if not isinstance(usage, dict) or price is None:
            return
        tin, tout = (token_count(usage.get(key, 0)) or 0
                     for key in ("input_tokens", "output_tokens"))
        usd += price.usd(tin, tout) or 0.0
        tokens += tin + tout

    for entry in ledger.entries(kind="sample_recorded", campaign_id=campaign.id):
        vote = entry.payload.get("vote")
        if isinstance(vote, dict):
            add(prices.get(str(vote.get("judge"))), vote.get("usage"))
    for entry in ledger.entries(kind="claims_extracted", campaign_id=campaign.id):
        add(prices.get(str(entry.payload.get("judge"))), entry.payload.get("usage"))
    if policy.subject is not None:
        subject = Price.of(policy.subject)
        for entry in ledger.entries(kind="job_received", campaign_id=campaign.id):
            execution = entry.payload.get("execution")
            if isinstance(execution, dict):
                add(subject, execution.get("usage"))
    return usd, tokens


def attach_budget(campaign: Campaign, ledger: Ledger, engine: Engine) -> BudgetGuard | None:
    """Give ``engine`` the campaign's caps, counted from what the ledger records; None
    without ``[budget]`` (or when the engine already has its guard)."""
    if campaign.budget is None or engine.budget is not None:
        return None
    usd, tokens = recorded_spend(ledger, campaign)
    engine.budget = BudgetGuard(campaign.budget, spent_usd=usd, spent_tokens=tokens)
    return engine.budget


def stopped_by_budget(guard: BudgetGuard, artifacts: int, decided: int) -> BudgetExhausted:
    """The run's end when the cap stopped it: the cap, the spend, the calls not sent, and
    how many of the run's artifacts are left for the next run."""
    left = artifacts - decided
    return BudgetExhausted(
        f"{guard.stop_text()}: {left} of {artifacts} artifact{'' if artifacts == 1 else 's'} "
        f"{'has' if left == 1 else 'have'} no receipt yet; every sample drawn is recorded "
        "in the ledger, and the next run reuses each one and draws only the rest")


def check_budget_executor(campaign: Campaign, executor: str, workers: int | None) -> None:
    """One process holds the cap: ``--workers`` above 1 and ``--executor ray`` are refused
    for a campaign with ``[budget]`` (ConfigError, exit 3, before anything is sent)."""
    if campaign.budget is None:
        return
    if executor == "ray":
        raise ConfigError("--executor ray with [budget]: the cap is held by one process "
                          "(fix: --executor local, or remove [budget])")
    if workers is not None and workers > 1:
        raise ConfigError(f"--workers {workers} with [budget]: the cap is held by one "
                          "process (fix: drop --workers, or remove [budget])")
