"""Seed 002's stub judges, its negative controls and falsification conditions, and bias stubs."""

from __future__ import annotations

import sys

import pytest

from jurat.fold import decide
from jurat.judges import Engine, make_judge, run_samples
from jurat.judges._stubs import last_number
from jurat.models import STUB_NAMES, EquivalencePolicy, EvidenceBundle
from tests.support.builders import artifact, gates, judge, pair, policy
from tests.support.fake_openai import FakeOpenAI, completion

EMPTY = EvidenceBundle()


async def equivalence(
    stub: str, a: str, b: str, **settings: object
) -> tuple[object, list[str | None]]:
    eq = EquivalencePolicy(votes=3, min_agreement=3, **settings)  # type: ignore[arg-type]
    pol = policy("equivalence", judges=judge(provider=f"stub:{stub}"), equivalence=eq)
    votes = await run_samples(pol, pair(a, b), EMPTY, (), engine=Engine())
    decisions = [v.answer["decision"] if v.answer else v.error for v in votes]
    return decide(pol, (), votes).equivalent, decisions


async def test_the_six_seed_stubs() -> None:
    assert await equivalence("always-equivalent", "1", "2") == (True, ["EQUIVALENT"] * 3)
    assert await equivalence("always-different", "1", "1") == (False, ["DIFFERENT"] * 3)
    assert await equivalence("always-abstain", "1", "1") == (None, ["ABSTAIN"] * 3)
    assert await equivalence("parse-error", "1", "1") == (None, ["malformed_output"] * 3)
    assert await equivalence("raising", "1", "1") == (None, ["adapter_error"] * 3)
    assert await equivalence("numeric-simulated", "x = 200", "\\boxed{200}") == (
        True,
        ["EQUIVALENT"] * 3,
    )


async def test_negative_controls_with_the_numeric_stub() -> None:
    """Seed 002 §6: identical pairs all EQUIVALENT, mismatches all DIFFERENT, gaps ABSTAIN."""
    assert (await equivalence("numeric-simulated", "The answer is 42.", "42"))[1] == [
        "EQUIVALENT"
    ] * 3
    assert (await equivalence("numeric-simulated", "18", "7 apples"))[1] == ["DIFFERENT"] * 3
    assert (await equivalence("numeric-simulated", "12", ""))[1] == ["ABSTAIN"] * 3
    assert (await equivalence("numeric-simulated", "no idea", "3"))[1] == ["ABSTAIN"] * 3


async def test_falsification_conditions_do_not_fire() -> None:
    """Seed 002 §8, each condition checked through real votes."""
    assert (await equivalence("always-equivalent", "1", "999"))[0] is not False
    assert (await equivalence("always-different", "5", "5"))[0] is not True
    assert (await equivalence("always-abstain", "5", "5", abstain_as_neither=False))[0] is False
    assert (await equivalence("always-abstain", "5", "5", abstain_as_neither=True))[0] is None


async def test_a_two_one_split_is_null_under_unanimity(fake: FakeOpenAI) -> None:
    """Seed 002 §8: a 2-1 split with votes = 3 and min_agreement = 3 gives null."""
    lines = "DECISION: {}\nREASON: r\nNUMERIC_A: 1\nNUMERIC_B: 1"
    config = judge(provider="openai-compat", base_url=fake.url, model="m")
    for min_agreement, expected in ((3, None), (2, True)):
        fake.push(*(completion(lines.format(d)) for d in ("EQUIVALENT", "DIFFERENT", "EQUIVALENT")))
        eq = EquivalencePolicy(votes=3, min_agreement=min_agreement)
        pol = policy("equivalence", judges=config, equivalence=eq)
        engine = Engine()
        votes = await run_samples(pol, pair("1", "1.0"), EMPTY, (), engine=engine)
        await engine.aclose()
        assert sorted(v.answer["decision"] for v in votes if v.answer) == [
            "DIFFERENT",
            "EQUIVALENT",
            "EQUIVALENT",
        ]
        assert decide(pol, (), votes).equivalent is expected
    assert (
        fake.received[0]
        .json()["messages"][0]["content"]
        .startswith("You are judging whether two answers")
    )


async def test_always_accept_cannot_get_past_failed_gates() -> None:
    pol = policy("rubric", judges=judge(provider="stub:always-accept", samples=3))
    votes = await run_samples(pol, artifact(), EMPTY, gates(False), engine=Engine())
    assert {v.error for v in votes} == {"accept_with_failed_gates"}
    assert decide(pol, gates(False), votes).disposition == "reject"
    passing = await run_samples(pol, artifact(), EMPTY, gates(), engine=Engine())
    assert {v.answer["disposition"] for v in passing if v.answer} == {"accept"}


async def test_bias_stubs_for_criteria_and_rubric() -> None:
    crit = policy("criteria", judges=judge(provider="stub:always-no"))
    votes = await run_samples(crit, artifact(), EMPTY, (), engine=Engine())
    assert {v.answer["verdict"] for v in votes if v.answer} == {"no"}
    assert decide(crit, (), votes).rollout == "BLOCK"
    yes = policy("criteria", judges=judge(provider="stub:always-yes"))
    assert (
        decide(yes, (), await run_samples(yes, artifact(), EMPTY, (), engine=Engine())).rollout
        == "SHIP"
    )
    rej = policy("rubric", judges=judge(provider="stub:always-reject"))
    votes = await run_samples(rej, artifact(), EMPTY, gates(), engine=Engine())
    assert {v.answer["disposition"] for v in votes if v.answer} == {"reject"}


SUPPORTS = {
    "always-equivalent": {"equivalence"},
    "always-different": {"equivalence"},
    "always-abstain": {"equivalence"},
    "numeric-simulated": {"equivalence"},
    "parse-error": {"rubric", "pairwise", "criterion", "equivalence"},
    "raising": {"rubric", "pairwise", "criterion", "equivalence"},
    "always-accept": {"rubric", "pairwise"},
    "always-reject": {"rubric", "pairwise"},
    "always-yes": {"criterion"},
    "always-no": {"criterion"},
    "always-first": {"pairwise"},
}


@pytest.mark.parametrize("name", STUB_NAMES)
def test_every_stub_declares_what_it_judges(name: str) -> None:
    stub = make_judge(judge(provider=f"stub:{name}"))
    assert stub.reproducible
    kinds = {k for k in ("rubric", "pairwise", "criterion", "equivalence") if stub.supports(k)}
    assert kinds == SUPPORTS[name]


def test_last_number() -> None:
    assert last_number("1,234 then 5.50") == "5.50"
    assert last_number("-3") == "-3"
    assert last_number("none") is None
    assert last_number(None) is None


def test_http_judges_need_no_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    """jurat builds the providers' requests itself: neither SDK is imported, or needed."""
    monkeypatch.setitem(sys.modules, "anthropic", None)
    monkeypatch.setitem(sys.modules, "openai", None)
    for provider in ("anthropic", "openai-compat"):
        adapter = make_judge(judge(provider=provider, model="m", base_url="http://127.0.0.1:9"))
        assert adapter.supports("rubric") and not adapter.reproducible
