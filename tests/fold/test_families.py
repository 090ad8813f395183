"""Independent witnesses by model family (``jurat.fold/v2``, docs/receipt-format.md §8.7).

Seed 000: "multiple calls to one model are not independent witnesses"; the risk tier's
independent substantive votes count model families, and v1 receipts keep re-deriving with v1.
"""

from __future__ import annotations

import pytest

from jurat.canonical import canonical_json
from jurat.fold import FOLD_RULE, FOLD_RULE_V1, decide
from jurat.models import JudgeConfig, policy_digest
from tests.support.builders import (
    SEED_SCORES,
    arcv,
    gates,
    judge,
    policy,
    vote,
    votes_by_judge,
)

GOOD = arcv(SEED_SCORES)
ONE_MODEL = tuple(
    judge(name, "openai-compat", model="qwen2.5-7b-instruct", base_url=f"http://10.0.0.{i}/v1")
    for i, name in enumerate("ABC")
)
THREE_MODELS = tuple(
    judge(name, "openai-compat", model=model, base_url="http://10.0.0.1/v1")
    for name, model in zip("ABC", ("qwen2.5-7b-instruct", "llama-3.1-8b", "mistral-7b"),
                           strict=True)
)


def _votes() -> list:
    return votes_by_judge({name: [GOOD] * 5 for name in "ABC"})


def test_three_judges_on_one_model_family_escalate_at_the_standard_tier() -> None:
    d = decide(policy(judges=ONE_MODEL), gates(), _votes())
    assert FOLD_RULE == "jurat.fold/v2" and d.fold_rule == FOLD_RULE
    assert d.disposition == "escalate"
    assert d.independent_votes == 3 and d.independent_families == 1
    assert d.reasons == (
        "3 votes from 1 model family; the standard tier needs 3 independent families",
    )


def test_three_model_families_accept() -> None:
    d = decide(policy(judges=THREE_MODELS), gates(), _votes())
    assert d.disposition == "accept"
    assert d.independent_votes == 3 and d.independent_families == 3
    assert d.reasons == ("3/3 independent votes agree",)


def test_declared_family_overrides_the_derived_one() -> None:
    # Three sim judges with distinct seeds are three families, unless declared one family.
    sims = tuple(judge(n, "sim", seed=i) for i, n in enumerate("ABC"))
    assert decide(policy(judges=sims), gates(), _votes()).disposition == "accept"
    same = tuple(j.model_copy(update={"model_family": "qwen2.5"}) for j in sims)
    d = decide(policy(judges=same), gates(), _votes())
    assert d.disposition == "escalate" and d.independent_families == 1
    two = (*same[:2], sims[2])
    d = decide(policy(judges=two), gates(), _votes())
    assert d.independent_families == 2
    assert d.reasons == (
        "3 votes from 2 model families; the standard tier needs 3 independent families",
    )


def test_pairwise_counts_families_of_the_judges_that_voted() -> None:
    votes = votes_by_judge({n: [arcv(SEED_SCORES, preference="A")] * 5 for n in "ABC"},
                           "pairwise")
    one = decide(policy("pairwise", judges=ONE_MODEL), gates(), votes)
    assert one.disposition == "escalate" and one.independent_families == 1
    assert "1 model family" in one.reasons[0]
    three = decide(policy("pairwise", judges=THREE_MODELS), gates(), votes)
    assert three.disposition == "accept" and three.independent_families == 3


def test_a_family_without_a_substantive_vote_is_not_counted() -> None:
    votes = votes_by_judge({"A": [GOOD] * 5, "B": [GOOD] * 5, "C": [None] * 5})
    d = decide(policy(judges=THREE_MODELS), gates(), votes)
    assert d.independent_votes == 2 and d.independent_families == 2
    assert d.reasons == ("too few independent votes: 2 of 3 required",)


def test_v1_receipts_rederive_with_v1_byte_for_byte() -> None:
    # A receipt that names jurat.fold/v1 re-derives with v1: judges count, no family field,
    # the same normal form (hence the same payload bytes) as before v2 existed.
    d = decide(policy(judges=ONE_MODEL), gates(), _votes(), rule=FOLD_RULE_V1)
    assert d.fold_rule == FOLD_RULE_V1 and d.disposition == "accept"
    dumped = d.model_dump(mode="json")
    assert "independent_families" not in dumped and "curtailment" not in dumped
    assert b"independent_families" not in canonical_json(dumped)


def test_v1_criteria_decision_has_no_curtailment_fields() -> None:
    p = policy("criteria", judges=1)
    votes = [vote("J0", k, {"verdict": "yes", "explanation": "ok"}, "c1") for k in range(3)]
    v1 = decide(p, gates(), votes, rule=FOLD_RULE_V1).model_dump(mode="json")
    assert "curtailment" not in v1
    assert all("drawn" not in c for c in v1["criteria"])
    assert "error:missing" in v1["criteria"][0]["sample_verdicts"]


def test_unset_model_family_keeps_the_policy_digest() -> None:
    base = policy(judges=THREE_MODELS)
    assert "model_family" not in base.judges[0].model_dump(mode="json")
    declared = base.model_copy(update={"judges": tuple(
        j.model_copy(update={"model_family": "x"}) for j in base.judges)})
    assert declared.judges[0].model_dump(mode="json")["model_family"] == "x"
    assert policy_digest(declared) != policy_digest(base)


@pytest.mark.parametrize(
    ("config", "family"),
    [
        (JudgeConfig(id="a", provider="openai-compat", model="m"), "openai-compat:m"),
        (JudgeConfig(id="a", provider="anthropic", model="claude"), "anthropic:claude"),
        (JudgeConfig(id="a", provider="sim", seed=3), "sim::seed=3"),
        (JudgeConfig(id="a", provider="sim", model="x", seed=3), "sim:x:seed=3"),
        (JudgeConfig(id="a", provider="stub:always-yes"), "stub:always-yes:id=a"),
        (JudgeConfig(id="a", provider="replay"), "replay:id=a"),
        (JudgeConfig(id="a", provider="sim", model_family="qwen"), "qwen"),
    ],
)
def test_derived_families(config: JudgeConfig, family: str) -> None:
    assert config.family == family
