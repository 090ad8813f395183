"""Strict parsing and validation of judge answers, without any network."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.canonical import StrictJSONError, digest_json, loads_strict, sha256_digest
from jurat.errors import JudgeOutputError
from jurat.fold import gate_veto, hard_gates_pass
from jurat.judges import (
    RawResponse,
    arcv_schema,
    interpret,
    strict_loads,
    validate_answer,
)
from jurat.models import GATE_LINT_RUFF, GATE_TESTS_PASS, GateOutcome
from tests.support.builders import SEED_RUBRIC, gate, gates
from tests.support.fake_openai import arcv_decision

D = "ab" * 32
#: sha256 of the RFC 8785 form of the schema printed in seed 000 ("Structured model orchestration").
SEED_SCHEMA_DIGEST = "b5d8a857c469649220503e77a1ca61c40b9bcd22845e1ed514e865520f4e6a01"


def check(kind: str, text: str, **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("artifact_sha256", D)
    kwargs.setdefault("bundle_size", 3)
    kwargs.setdefault("gates", gates())
    kwargs.setdefault("hard_gates", SEED_RUBRIC.hard_gates)
    return validate_answer(kind, text, **kwargs)


def kind_of(kind: str, text: str, **kwargs: Any) -> str:
    with pytest.raises(JudgeOutputError) as info:
        check(kind, text, **kwargs)
    return info.value.kind


def test_schema_is_the_seed_schema_verbatim() -> None:
    text = resources.files("jurat.judges").joinpath("arcv_judge_decision_v1.schema.json")
    schema = json.loads(text.read_text("utf-8"))
    assert digest_json(schema) == SEED_SCHEMA_DIGEST
    assert schema["title"] == "ARCV Judge Decision v1"
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert arcv_schema() == schema


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"a": 1, "a": 2}', "duplicate_key"),
        ('{"x": {"a": 1, "a": 1}}', "duplicate_key"),
        ('{"a": NaN}', "non_finite_number"),
        ('{"a": Infinity}', "non_finite_number"),
        ('{"a": -Infinity}', "non_finite_number"),
        ('{"a": 1e999}', "non_finite_number"),
        ('{"a": 1} {"a": 2}', "malformed_json"),
        ('```json\n{"a": 1}\n```', "malformed_json"),
        ('{"a": 1', "malformed_json"),
        ("", "malformed_json"),
        ("\ufeff{}", "malformed_json"),
        ('{"a": "\\ud800"}', "malformed_json"),
        ("{}".encode("utf-16"), "malformed_json"),
        ("[" * 100_000 + "]" * 100_000, "oversized"),
    ],
)
def test_strict_loads_refuses(text: str | bytes, kind: str) -> None:
    with pytest.raises(JudgeOutputError) as info:
        strict_loads(text)
    assert info.value.kind == kind


@pytest.mark.parametrize(
    ("text", "reason", "vote_error"),
    [
        ('{"a": 1, "a": 2}', "duplicate_key", "duplicate_key"),
        ('{"a": NaN}', "non_finite_number", "non_finite_number"),
        ('{"a": 1e999}', "non_finite_number", "non_finite_number"),
        ("[" * 65 + "]" * 65, "too_deep", "malformed_json"),
        ('"\\udc00"', "lone_surrogate", "malformed_json"),
        (b"\xff{}", "encoding", "malformed_json"),
        ("{} {}", "malformed", "malformed_json"),
        ("[" + "1," * 200 + "1]", "oversized", "oversized"),
    ],
)
def test_the_vote_error_is_the_one_parsers_reason(
    text: str | bytes, reason: str, vote_error: str
) -> None:
    # One parser (jurat.canonical) says why it refused; the judge validator only renames it.
    with pytest.raises(StrictJSONError) as info:
        loads_strict(text, max_bytes=256)
    assert info.value.kind == reason
    with pytest.raises(JudgeOutputError) as judged:
        strict_loads(text, limit=256)
    assert judged.value.kind == vote_error


def test_strict_loads_takes_one_whole_document() -> None:
    assert strict_loads('  {"a": [1, 2.5, "x", null, true]}\n') == {"a": [1, 2.5, "x", None, True]}
    assert strict_loads(b'{"a": 1}') == {"a": 1}
    with pytest.raises(JudgeOutputError):
        strict_loads("[" * 5000 + "]" * 5000)  # nesting beyond the recursion limit


def test_duplicate_reject_then_accept_is_not_read_as_accept() -> None:
    good = json.dumps(arcv_decision(D))
    text = good.replace(
        '"disposition": "accept"', '"disposition": "reject", "disposition": "accept"'
    )
    assert json.loads(text)["disposition"] == "accept"  # what a lax parser would conclude
    assert kind_of("rubric", text) == "duplicate_key"


def test_valid_decision_is_returned_as_given_but_for_its_free_text() -> None:
    answer = arcv_decision(D, evidence_indices=[0, 2])
    recorded = check("rubric", json.dumps(answer))
    # The explanation is the judge's free text: a vote (signed, published) keeps its digest.
    explanation = answer.pop("explanation")
    assert recorded == {**answer, "explanation_sha256": sha256_digest(explanation),
                        "explanation_chars": len(explanation)}
    assert check("pairwise", json.dumps(arcv_decision(D, preference="tie"))) is not None


@pytest.mark.parametrize(
    ("overrides", "kwargs", "kind"),
    [
        ({"artifact_sha256": "cd" * 32}, {}, "digest_mismatch"),
        ({"evidence_indices": [0, 3]}, {}, "bad_evidence_index"),
        ({}, {"bundle_size": 0}, "bad_evidence_index"),
        ({}, {"gates": gates(False)}, "accept_with_failed_gates"),
        ({}, {"gates": ()}, "accept_with_failed_gates"),
        ({"preference": "tie"}, {}, "bad_preference"),
        ({"disposition": "maybe"}, {}, "schema_violation"),
        ({"hard_gates_pass": False}, {}, "schema_violation"),
    ],
)
def test_semantic_rules(overrides: dict[str, Any], kwargs: dict[str, Any], kind: str) -> None:
    assert kind_of("rubric", json.dumps(arcv_decision(D, **overrides)), **kwargs) == kind


def test_failed_gates_still_allow_an_honest_rejection() -> None:
    answer = arcv_decision(D, disposition="reject", hard_gates_pass=False)
    assert check("rubric", json.dumps(answer), gates=gates(False))["disposition"] == "reject"
    # the model's claim about gates is not trusted either way: only acceptance is refused
    lying = arcv_decision(D, disposition="escalate", hard_gates_pass=True)
    assert check("rubric", json.dumps(lying), gates=gates(False))["disposition"] == "escalate"


def test_gates_marked_required_count_even_when_not_listed() -> None:
    lint_error = [*gates(), gate(GATE_LINT_RUFF, "error")]
    assert hard_gates_pass(lint_error, SEED_RUBRIC.hard_gates) is False
    assert hard_gates_pass(gates(), SEED_RUBRIC.hard_gates) is True
    assert hard_gates_pass((), ()) is True


@pytest.mark.parametrize("outcomes", [gates(), gates(False), []])
def test_the_validator_refuses_an_accept_exactly_when_the_fold_vetoes(
    outcomes: list[GateOutcome],
) -> None:
    veto = gate_veto(SEED_RUBRIC.hard_gates, outcomes)
    accepted = json.dumps(arcv_decision(D))
    if veto.passed:
        assert check("rubric", accepted, gates=outcomes)["disposition"] == "accept"
    else:
        assert kind_of("rubric", accepted, gates=outcomes) == "accept_with_failed_gates"
        assert GATE_TESTS_PASS in veto.failed


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"verdict": "yes", "explanation": "It cites two sources."}', "yes"),
        ('{"verdict": "unsure", "explanation": ""}', "unsure"),
    ],
)
def test_criterion_answers(text: str, expected: str) -> None:
    assert check("criterion", text)["verdict"] == expected
    assert check("criteria", text)["verdict"] == expected


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('{"verdict": "maybe", "explanation": "x"}', "schema_violation"),
        ('{"verdict": "YES", "explanation": "x"}', "schema_violation"),
        ('{"verdict": "yes"}', "schema_violation"),
        ('{"verdict": "yes", "explanation": "x", "confidence": 0.9}', "schema_violation"),
        ('{"verdict": "no", "verdict": "yes", "explanation": "x"}', "duplicate_key"),
        ("yes", "malformed_json"),
    ],
)
def test_criterion_refusals(text: str, kind: str) -> None:
    assert kind_of("criterion", text) == kind


def test_equivalence_line_format() -> None:
    text = "DECISION: EQUIVALENT\nREASON: both are 200\nNUMERIC_A: 200\nNUMERIC_B: \\boxed{200}\n"
    assert check("equivalence", text, reference=False) == {
        "decision": "EQUIVALENT",
        "reason": "both are 200",
        "numeric_a": "200",
        "numeric_b": "\\boxed{200}",
        "numeric_agree": True,
    }
    crlf = "DECISION: ABSTAIN\r\nREASON: B is empty\r\nNUMERIC_A: 3\r\nNUMERIC_B: NULL"
    assert check("equivalence", crlf, reference=False)["numeric_b"] is None
    as_json = '{"decision": "DIFFERENT", "reason": "r", "numeric_a": 1, "numeric_b": "2"}'
    assert check("equivalence", as_json, reference=False)["numeric_a"] == "1"
    # b is the reference by default: only the decision and whether the judge's two numbers
    # agree are recorded, never its reason or its reading of b.
    assert check("equivalence", text) == {"decision": "EQUIVALENT", "numeric_agree": True}
    assert check("equivalence", crlf) == {"decision": "ABSTAIN", "numeric_agree": None}
    assert check("equivalence", as_json) == {"decision": "DIFFERENT", "numeric_agree": False}


@pytest.mark.parametrize(
    "text",
    [
        "EQUIVALENT",
        "DECISION: EQUIVALENT",
        "DECISION: SAME\nREASON: r\nNUMERIC_A: 1\nNUMERIC_B: 1",
        "DECISION: equivalent\nREASON: r\nNUMERIC_A: 1\nNUMERIC_B: 1",
        "Sure! DECISION: EQUIVALENT\nREASON: r\nNUMERIC_A: 1\nNUMERIC_B: 1",
        "DECISION: EQUIVALENT\nDECISION: DIFFERENT\nREASON: r\nNUMERIC_A: 1\nNUMERIC_B: 2",
        "DECISION: EQUIVALENT\nREASON: r\nNUMERIC_A: 1\nNUMERIC_B: 1\nCONFIDENCE: 0.9",
        '{"decision": "EQUIVALENT"}',
    ],
)
def test_equivalence_parse_errors(text: str) -> None:
    assert kind_of("equivalence", text) == "malformed_output"


def test_interpret_reads_the_envelope_first() -> None:
    good = json.dumps(arcv_decision(D))
    kwargs: dict[str, Any] = {
        "artifact_sha256": D,
        "bundle_size": 1,
        "gates": gates(),
        "hard_gates": SEED_RUBRIC.hard_gates,
    }
    assert interpret(RawResponse(text=good, finish="stop"), "rubric", **kwargs)["disposition"]
    for raw, kind in [
        (RawResponse(text=good, refusal="no"), "refused"),
        (RawResponse(text=good, finish="length"), "truncated"),
        (RawResponse(text=good, envelope_error="empty_response"), "empty_response"),
        (RawResponse(text=None), "empty_response"),
    ]:
        with pytest.raises(JudgeOutputError) as info:
            interpret(raw, "rubric", **kwargs)
        assert info.value.kind == kind


def test_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown answer kind"):
        validate_answer("vibes", "{}", artifact_sha256=D, bundle_size=1)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=20,
)


@given(
    extra=st.dictionaries(
        st.sampled_from(["preference", "scores", "disposition", "evidence_indices", "x"]), _json
    )
)
def test_no_mutation_of_a_decision_is_accepted_unless_it_is_valid(extra: dict[str, Any]) -> None:
    """Whatever replaces fields of a valid answer, an accepted result satisfies every rule."""
    answer = {**arcv_decision(D), **extra}
    try:
        result = check("rubric", json.dumps(answer), gates=gates(False))
    except JudgeOutputError:
        return
    assert result["disposition"] != "accept"  # the gates failed: acceptance is never valid
    assert result["artifact_sha256"] == D
    assert all(0 <= i < 3 for i in result["evidence_indices"])
