"""``[budget]`` at load (issue 29): a cap jurat cannot enforce is refused by name, and the
cap is not part of the policy, so raising it keeps the campaign's policy digest."""

from __future__ import annotations

from typing import Any

import pytest

from jurat.campaign import campaign_from_dict
from jurat.errors import CampaignError, CampaignErrors
from jurat.models import policy_digest


def _data(budget: dict[str, Any] | None, **judge: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "campaign": {"id": "b", "kind": "equivalence",
                     "allowed_destinations": ["sim", "https://api.example.com/v1"]},
        "equivalence": {"votes": 1},
        "judges": [{"id": "free", "provider": "sim"},
                   {"id": "paid", "provider": "openai-compat", "model": "m",
                    "base_url": "https://api.example.com/v1", "api_key_env": "K", **judge}],
        "artifacts": [{"id": "p1", "a": "1", "b": "1"}],
    }
    if budget is not None:
        data["budget"] = budget
    return data


def _problems(data: dict[str, Any], *, served: bool = False) -> list[tuple[str, str, str]]:
    with pytest.raises((CampaignError, CampaignErrors)) as info:
        campaign_from_dict(data, served=served)
    error = info.value
    found = error.problems if isinstance(error, CampaignErrors) else (error,)
    return [(p.field or "", str(p.message), str(p.fix)) for p in found]


def test_a_usd_cap_needs_the_prices_of_every_paid_judge() -> None:
    problems = _problems(_data({"usd": 2.0}, price_in_per_mtok=1.0))
    assert [(field, message) for field, message, _ in problems] == [
        ("judges[1].price_out_per_mtok",
         "judge 'paid' declares no price_out_per_mtok, so [budget] usd = 2 cannot be "
         "enforced (a call at an unknown price has an unknown cost)")]
    assert "declare prices on judge 'paid'" in problems[0][2]


def test_a_token_cap_needs_no_prices_and_the_free_judge_none_either() -> None:
    campaign = campaign_from_dict(_data({"tokens": 1000}))
    assert campaign.budget is not None and campaign.budget.tokens == 1000


def test_an_empty_budget_and_an_unknown_key_are_refused() -> None:
    assert any("sets no cap" in message for _, message, _ in _problems(_data({})))
    assert any(field == "budget.dollars" for field, _, _ in _problems(_data({"dollars": 1})))


def test_a_served_campaign_refuses_a_budget() -> None:
    problems = _problems(_data({"tokens": 1000}), served=True)
    assert [(field, fix) for field, _, fix in problems] == [
        ("budget", "remove [budget] from the served campaign")]


def test_the_cap_is_not_in_the_policy_digest() -> None:
    prices = {"price_in_per_mtok": 1.0, "price_out_per_mtok": 2.0}
    low = campaign_from_dict(_data({"usd": 1.0}, **prices))
    high = campaign_from_dict(_data({"usd": 50.0, "tokens": 10**7}, **prices))
    none = campaign_from_dict(_data(None, **prices))
    assert policy_digest(low.policy) == policy_digest(high.policy) == policy_digest(none.policy)
