"""The statement: in-toto Statement v1 shape, the predicate's top level, RF levels, refusals."""

from __future__ import annotations

from typing import Any

import pytest

from jurat.canonical import canonical_json, digest_json, sha256_digest
from jurat.errors import ConfigError, ValidationError
from jurat.fold import decide
from jurat.models import policy_digest
from jurat.receipts import (
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    build_statement,
    rederive,
    replay_fidelity_level_for,
)
from tests.support.builders import (
    artifact,
    criteria_case,
    equivalence_case,
    evidence,
    gates,
    pairwise_case,
    rubric_policy,
    rubric_votes,
    statement_for,
)

TOP_LEVEL = {
    "jurat_version",
    "fold_rule",
    "replay_fidelity_level",
    "campaign",
    "artifact",
    "inputs",
    "gates",
    "judges",
    "votes",
    "decision",
    "review",
}


def test_statement_is_in_toto_v1_with_the_artifact_as_subject(statement: dict[str, Any]) -> None:
    assert statement["_type"] == STATEMENT_TYPE == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == PREDICATE_TYPE == "https://jurat.dev/decision/v1"
    assert statement["subject"] == [{"name": "c1", "digest": {"sha256": artifact().sha256}}]
    assert set(statement) == {"_type", "subject", "predicateType", "predicate"}


def test_predicate_top_level_is_exactly_the_design(statement: dict[str, Any]) -> None:
    pred = statement["predicate"]
    assert set(pred) == TOP_LEVEL
    assert pred["fold_rule"] == "jurat.fold/v2"  # docs/receipt-format.md §10
    assert pred["replay_fidelity_level"] == "RF-2"
    assert set(pred["campaign"]) == {"id", "kind", "rubric_version", "policy_sha256", "policy"}
    assert pred["campaign"]["policy_sha256"] == policy_digest(rubric_policy())
    assert pred["campaign"]["rubric_version"] == "code-review/1"
    assert pred["artifact"] == {
        "id": "c1",
        "sha256": artifact().sha256,
        "media_type": "text/x-python",
    }
    assert {"task", "contributor", "upstream_receipts", "evidence_bundle"} <= set(pred["inputs"])
    assert pred["review"] == {"version": 1, "supersedes": None, "adjudication": None}


def test_predicate_binds_ids_inputs_and_evidence(statement: dict[str, Any]) -> None:
    inputs = statement["predicate"]["inputs"]
    assert inputs["assignment"] == "asg-7"
    assert inputs["task"] == {"id": "fib-1", "version": "1"}
    assert inputs["contributor"] == "alice"
    assert inputs["upstream_receipts"] == [{"name": "stage1", "sha256": "2" * 64}]
    assert inputs["evidence_bundle"]["sha256"] == evidence().digest
    # Excerpts may quote the artifact; only digests go into the receipt.
    assert all("excerpt" not in item for item in inputs["evidence_bundle"]["items"])


def test_gates_judges_and_votes_are_recorded_whole_and_in_order(
    statement: dict[str, Any],
) -> None:
    pred = statement["predicate"]
    assert [g["id"] for g in pred["gates"]] == ["python.parse", "tests.pass"]
    assert pred["gates"][1]["tool_version"] == "9.2.0"
    votes = rubric_votes()
    assert pred["votes"] == [v.model_dump(mode="json") for v in votes]
    errored = [v for v in pred["votes"] if v["error"]]
    assert errored == [pred["votes"][5]] and errored[0]["answer"] is None
    judges = pred["judges"]
    assert [j["id"] for j in judges] == ["A", "B", "C"]
    assert set(judges[0]) == {
        "id",
        "provider",
        "model",
        "prompt_id",
        "schema_id",
        "decoding",
        "config_sha256",
    }
    assert judges[0]["schema_id"] == "arcv.judge-decision/v1" and judges[1]["schema_id"] is None
    assert judges[0]["prompt_id"] == "jurat.rubric@1"
    assert judges[2]["config_sha256"] == digest_json(rubric_policy().judges[2])


def test_decision_is_the_folds_output_with_exact_companions(statement: dict[str, Any]) -> None:
    decision = statement["predicate"]["decision"]
    assert decision == decide(rubric_policy(), gates(), rubric_votes()).model_dump(mode="json")
    assert decision["disposition"] == "accept"
    assert decision["q_bp"] == 8625 and isinstance(decision["q_bp"], int)
    assert decision["agreement_votes"] == "3/3"
    assert decision["valid_samples"] == 8 and decision["samples"] == 9


def test_statement_is_rfc8785_serialisable_and_rederives(statement: dict[str, Any]) -> None:
    import json

    payload = canonical_json(statement)
    assert b"\n" not in payload and payload.startswith(b'{"_type":')
    assert rederive(json.loads(payload)) == decide(rubric_policy(), gates(), rubric_votes())


def test_policy_never_carries_secrets() -> None:
    policy = rubric_policy(provider="openai-compat")
    st = statement_for(policy, gates(), rubric_votes())
    judge = st["predicate"]["campaign"]["policy"]["judges"][0]
    assert judge["api_key_env"] == "OPENAI_API_KEY"
    assert st["predicate"]["replay_fidelity_level"] == "RF-1"


@pytest.mark.parametrize(
    ("provider", "level"),
    [
        ("sim", "RF-2"),
        ("replay", "RF-2"),
        ("stub:always-accept", "RF-2"),
        ("openai-compat", "RF-1"),
        ("anthropic", "RF-1"),
    ],
)
def test_replay_fidelity_level(provider: str, level: str) -> None:
    assert replay_fidelity_level_for(rubric_policy(provider=provider)) == level


def test_no_judges_is_rf2() -> None:
    policy, _, _ = equivalence_case()
    assert replay_fidelity_level_for(policy.model_copy(update={"judges": ()})) == "RF-2"


def test_a_mixed_panel_is_rf1() -> None:
    policy = rubric_policy()
    mixed = policy.judges[:2] + (policy.judges[2].model_copy(update={"provider": "anthropic"}),)
    assert replay_fidelity_level_for(policy.model_copy(update={"judges": mixed})) == "RF-1"


@pytest.mark.parametrize("case", [criteria_case, pairwise_case, equivalence_case])
def test_every_kind_builds_and_rederives(case: Any) -> None:
    policy, gate_list, votes = case()
    st = statement_for(policy, gate_list, votes)
    assert rederive(st) == decide(policy, gate_list, votes)
    assert st["predicate"]["campaign"]["kind"] == policy.kind


def _kwargs(**over: Any) -> dict[str, Any]:
    policy = rubric_policy()
    kw: dict[str, Any] = {
        "policy": policy,
        "artifact": artifact(),
        "gates": gates(),
        "votes": rubric_votes(),
        "decision": decide(policy, gates(), rubric_votes()),
        "bundle": evidence(),
        "replay_fidelity_level": "RF-2",
        "jurat_version": "0.1.0",
    }
    kw.update(over)
    return kw


def test_refuses_a_decision_that_does_not_rederive() -> None:
    wrong = decide(rubric_policy(), gates(), rubric_votes()).model_copy(
        update={"disposition": "reject"}
    )
    with pytest.raises(ValidationError, match="decision.disposition"):
        build_statement(**_kwargs(decision=wrong))


def test_refuses_an_overstated_replay_fidelity_level() -> None:
    policy = rubric_policy(provider="openai-compat")
    with pytest.raises(ValidationError, match="RF-1"):
        build_statement(
            **_kwargs(
                policy=policy,
                decision=decide(policy, gates(), rubric_votes()),
                replay_fidelity_level="RF-2",
            )
        )


def test_refuses_unknown_inputs_and_judge_meta() -> None:
    with pytest.raises(ConfigError, match="unknown keys"):
        build_statement(**_kwargs(inputs={"stage": "x"}))
    with pytest.raises(ValidationError, match="evidence bundle's digest"):
        build_statement(**_kwargs(inputs={"evidence_bundle": "0" * 64}))
    with pytest.raises(ConfigError, match="not in the panel"):
        build_statement(**_kwargs(judges_meta=[{"id": "Z"}]))


def test_accepts_the_runners_inputs() -> None:
    st = build_statement(
        **_kwargs(
            inputs={
                "task": "fib-1",
                "contributor": "bob",
                "upstream_receipts": [],
                "evidence_bundle": evidence().digest,
                "job_id": "job-42",
            }
        )
    )
    inputs = st["predicate"]["inputs"]
    assert inputs["job_id"] == "job-42" and inputs["contributor"] == "bob"
    assert inputs["evidence_bundle"]["sha256"] == evidence().digest


def test_review_versions_chain() -> None:
    prior = sha256_digest(b"the earlier receipt")
    st = build_statement(
        **_kwargs(
            review_version=2,
            supersedes=prior,
        )
    )
    assert st["predicate"]["review"]["supersedes"] == prior
    with pytest.raises(ValidationError, match="supersedes"):
        build_statement(**_kwargs(review_version=2))
    with pytest.raises(ValidationError, match="supersedes"):
        build_statement(**_kwargs(review_version=1, supersedes=prior))


def test_a_statement_that_breaks_the_schema_names_the_field_in_jurats_words(
    statement: dict[str, Any]
) -> None:
    # The one translator (models/_invalid.py): the field as a dotted path and jurat's own
    # words, no pydantic text ("Field required", "Input should be").
    from jurat.errors import VerificationError
    from jurat.receipts._statement import parse_statement

    broken = {**statement, "predicate": {k: v for k, v in statement["predicate"].items()
                                         if k != "jurat_version"}}
    with pytest.raises(VerificationError) as caught:
        parse_statement(broken)
    text = str(caught.value)
    assert text.startswith("parse statement: 1 schema error(s); the first: ")
    assert "predicate.jurat_version: is required and missing" in text
    assert "Field required" not in text and "pydantic" not in text
