"""``[gate]`` at load (issue 29): each bound is range-checked and a bad one is named by its
field; a gate that bounds nothing, or one on a kind without ship / warn / block decisions,
is refused; the gate is not part of the policy, so changing it keeps the policy digest."""

from __future__ import annotations

from typing import Any

import pytest

from jurat.campaign import campaign_from_dict, load_campaign
from jurat.errors import CampaignError, CampaignErrors
from jurat.models import policy_digest


def _data(gate: dict[str, Any] | None, kind: str = "criteria") -> dict[str, Any]:
    data: dict[str, Any] = {
        "campaign": {"id": "g", "kind": kind, "allowed_destinations": ["sim"]},
        "judges": [{"id": "s", "provider": "sim"}],
        "artifacts": [{"id": "a1", "text": "hello"}],
    }
    if kind == "criteria":
        data["criteria"] = {"items": [{"id": "polite", "text": "Is it polite?"}]}
    else:
        data["artifacts"] = [{"id": "p1", "a": "1", "b": "1"}]
    if gate is not None:
        data["gate"] = gate
    return data


def _problems(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    with pytest.raises((CampaignError, CampaignErrors)) as info:
        campaign_from_dict(data)
    error = info.value
    found = error.problems if isinstance(error, CampaignErrors) else (error,)
    return [(p.field or "", str(p.message), str(p.fix)) for p in found]


@pytest.mark.parametrize(("gate", "field", "says"), [
    ({"min_ship_rate": 1.5}, "gate.min_ship_rate", "must be from 0.0 to 1.0, got 1.5"),
    ({"min_ship_rate": -0.1}, "gate.min_ship_rate", "must be from 0.0 to 1.0, got -0.1"),
    ({"max_block": -1}, "gate.max_block", "must be at least 0, got -1"),
    ({"max_warn": 1.5}, "gate.max_warn", "must be a whole number, got 1.5"),
    ({"min_ship_rate": "high"}, "gate.min_ship_rate", "must be a number"),
    ({"min_ship": 0.9}, "gate.min_ship", "did you mean 'min_ship_rate'?"),
])
def test_a_bad_bound_is_named_by_its_field(gate: dict[str, Any], field: str,
                                           says: str) -> None:
    [(where, message, fix)] = _problems(_data(gate))
    assert where == field
    assert says in message
    assert fix


def test_a_gate_without_a_bound_is_refused() -> None:
    [(where, message, fix)] = _problems(_data({}))
    assert where == "gate"
    assert "sets no bound" in message and "min_ship_rate" in fix


def test_a_gate_on_equivalence_is_refused() -> None:
    [(where, message, _)] = _problems(_data({"max_block": 0}, kind="equivalence"))
    assert where == "gate"
    assert "criteria and rubric" in message and "equivalence" in message


def test_the_gate_is_not_part_of_the_policy() -> None:
    plain = campaign_from_dict(_data(None))
    gated = campaign_from_dict(_data({"min_ship_rate": 0.8, "max_block": 1, "max_warn": 0}))
    assert plain.gate is None
    assert gated.gate is not None and gated.gate.min_ship_rate == 0.8
    assert gated.gate.max_block == 1 and gated.gate.max_warn == 0
    assert policy_digest(gated.policy) == policy_digest(plain.policy)


def test_the_error_gives_the_line(tmp_path: Any) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[campaign]\nid = "g"\nkind = "criteria"\nallowed_destinations = ["sim"]\n'
                    '[criteria]\nitems = [{ id = "p", text = "?" }]\n'
                    '[[judges]]\nid = "s"\nprovider = "sim"\n'
                    '[[artifacts]]\nid = "a1"\ntext = "x"\n'
                    '[gate]\nmax_block = -2\n')
    with pytest.raises(CampaignError) as info:
        load_campaign(path)
    assert info.value.line == 14
    assert "gate.max_block" in str(info.value)
