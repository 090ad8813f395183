"""The fast schema path (jsonschema-rs) against jsonschema itself, on jurat's answer schemas.

The fast path may only ever say "valid": every acceptance must be one jsonschema makes too,
and every verdict, and every refusal message, must be jsonschema's.
"""

from __future__ import annotations

import copy
import enum
import types
from decimal import Decimal
from fractions import Fraction
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from jurat.errors import JudgeOutputError
from jurat.judges._claims import CLAIM_SCHEMA, validate_claim
from jurat.judges._general import general_schema
from jurat.judges._schema_check import AnswerSchema, answer_schema
from jurat.judges._validate import CRITERION_SCHEMA, _schema_check, arcv_schema

ARCV_KEYS = ("correctness", "reasoning", "adherence", "presentation")
GENERAL_KEYS = ("correctness", "clarity", "safety")
UNICODE_KEYS = ("clarté", "𝔰afety")

SCHEMAS: dict[str, Any] = {
    "arcv": arcv_schema,
    "criterion": lambda: CRITERION_SCHEMA,
    "general": lambda: general_schema(GENERAL_KEYS),
    "general_unicode": lambda: general_schema(UNICODE_KEYS),
    "claim": lambda: CLAIM_SCHEMA,
}
SCORE_KEYS = {"arcv": ARCV_KEYS, "general": GENERAL_KEYS, "general_unicode": UNICODE_KEYS}
HEX = "0123456789abcdef"
BIG = [2**53, 2**53 + 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**70]


class _Int(int):
    pass


class _Str(str):
    __slots__ = ()


class _Float(float):
    pass


class _Dict(dict[str, Any]):
    pass


class _Index(enum.IntEnum):
    ONE = 1


@cache
def compiled(name: str) -> AnswerSchema:
    return answer_schema(SCHEMAS[name]())


@cache
def reference(name: str) -> Draft202012Validator:
    return Draft202012Validator(SCHEMAS[name]())


def reference_message(name: str, value: Any) -> str:
    """The refusal message as jurat wrote it before the fast path existed."""
    error = best_match(reference(name).iter_errors(value))
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return str(JudgeOutputError(f"{where}: {error.message}", kind="schema_violation"))


def assert_agrees(name: str, value: Any) -> bool:
    """Assert the fast path's verdict is jsonschema's, and return that verdict."""
    expected = reference(name).is_valid(value)
    schema = compiled(name)
    assert schema.is_valid(value) == expected
    assert not schema.fast_accepts(value) or expected
    if not expected:
        with pytest.raises(JudgeOutputError) as caught:
            schema.check(value)
        assert caught.value.kind == "schema_violation"
        assert str(caught.value) == reference_message(name, value)
    return expected


# -- strategies: valid answers, then mutations near the schema -------------------------------

hexdigests = st.text(alphabet=HEX, min_size=64, max_size=64)
explanations = st.text(min_size=15, max_size=80)
indices = st.lists(st.integers(0, 40), min_size=1, max_size=32, unique=True)


@st.composite
def decisions(draw: st.DrawFn, keys: tuple[str, ...]) -> dict[str, Any]:
    disposition = draw(st.sampled_from(["accept", "reject", "escalate"]))
    preferences = ["A", "B", "tie"] + ([] if disposition == "accept" else ["abstain"])
    return {
        "artifact_sha256": draw(hexdigests),
        "preference": draw(st.sampled_from(preferences)),
        "scores": {key: draw(st.integers(1, 5)) for key in keys},
        "hard_gates_pass": True if disposition == "accept" else draw(st.booleans()),
        "disposition": disposition,
        "evidence_indices": draw(indices),
        "explanation": draw(explanations),
    }


def valid_answers(name: str) -> st.SearchStrategy[dict[str, Any]]:
    if name in SCORE_KEYS:
        return decisions(SCORE_KEYS[name])
    if name == "criterion":
        verdicts = st.sampled_from(["yes", "no", "unsure"])
        return st.fixed_dictionaries({"verdict": verdicts, "explanation": st.text(max_size=80)})
    labels = ["supported", "contradicted", "unresolved", "not_applicable"]
    return st.fixed_dictionaries(
        {
            "label": st.sampled_from(labels),
            "evidence_indices": st.lists(st.integers(0, 80), max_size=64),
            "explanation": st.text(max_size=80),
        }
    )


# Characters on which the libraries could count or match differently: astral (one code
# point, two UTF-16 units), lone and paired surrogates, combining marks, Unicode digits,
# newlines (Python's ``$`` matches before a final one), the replacement character.
_ODD_CHARS = ["a", "0", "f", "F", "😀", "\ud800", "\udc00", "\ud83d\ude00", "\u0301", "٣", "\n",
              "\ufffd", "\x00"]
_BOUNDARY_LENGTHS = [0, 1, 13, 14, 15, 16, 63, 64, 65, 999, 1000, 1999, 2000, 2001]


@st.composite
def odd_strings(draw: st.DrawFn) -> str:
    filler = draw(st.sampled_from(_ODD_CHARS))
    text = filler * draw(st.sampled_from(_BOUNDARY_LENGTHS))
    return text[: draw(st.sampled_from([len(text), max(len(text) - 1, 0)]))] + draw(
        st.sampled_from(["", "\n", "a", "😀", "\ud800"])
    )


@st.composite
def near_digests(draw: st.DrawFn) -> str:
    digest = draw(hexdigests)
    index = draw(st.integers(0, 63))
    return draw(
        st.sampled_from(
            [digest + "\n", digest.upper(), digest[:63], digest + "0", "\n" + digest,
             digest[:index] + draw(st.sampled_from(_ODD_CHARS)) + digest[index + 1 :],
             digest + "\n\n", digest[:32] + "\n" + digest[32:]]
        )
    )


numbers = st.one_of(
    st.integers(-3, 40),
    st.sampled_from(BIG + [-b for b in BIG]),
    st.sampled_from([float(b) for b in BIG] + [0.0, -0.0, 1.0, 5.0, 5.5, 1e300, 1 - 2**-53]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
)
odd_objects = st.sampled_from(
    [None, (0, 1), Decimal(1), Fraction(1), _Int(1), _Str("A"), _Str("accept"), _Float(1.0),
     _Index.ONE, [], {}, types.MappingProxyType({})]
)
enum_words = st.sampled_from(
    ["A", "B", "tie", "abstain", "accept", "reject", "escalate", "yes", "no", "unsure",
     "supported", "not_applicable", "a", "A\n", "accept ", "ACCEPT", "yes\ud800", "Ａ", ""]
)
hostile = st.one_of(
    numbers, odd_strings(), near_digests(), enum_words, odd_objects, st.lists(numbers, max_size=4)
)
extra_keys = st.sampled_from(["extra", "Correctness", "correctness\n", "clarté", "\ud800", "😀"])


def _slots(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) position in ``value``, the top-level dict and its nested ones."""
    found: list[tuple[Any, Any]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        found.append((value, key))
        if isinstance(item, dict | list):
            found.extend(_slots(item))
    return found


def _near_duplicate(item: Any) -> list[Any]:
    return [item, float(item), -float(item) if item == 0 else item, bool(item), _Int(item),
            Decimal(item)] if type(item) is int else [item]


@st.composite
def mutated(draw: st.DrawFn, name: str) -> Any:
    answer = copy.deepcopy(draw(valid_answers(name)))
    for _ in range(draw(st.integers(1, 3))):
        slots = _slots(answer) if isinstance(answer, dict) else []
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        action = draw(st.sampled_from(["replace", "delete", "extra", "wrap", "duplicate"]))
        target = container[key]
        if action == "replace":
            container[key] = draw(hostile)
        elif action == "delete" and isinstance(container, dict):
            del container[key]
        elif action == "extra" and isinstance(container, dict):
            container[draw(extra_keys)] = draw(hostile)
        elif action == "wrap" and isinstance(target, list):
            container[key] = draw(st.sampled_from([tuple(target), [*target, *target], target * 20]))
        elif action == "wrap" and isinstance(target, dict):
            container[key] = draw(st.sampled_from([_Dict(target), types.MappingProxyType(target)]))
        elif action == "duplicate" and isinstance(target, list) and target:
            target.append(draw(st.sampled_from(_near_duplicate(draw(st.sampled_from(target))))))
    return answer


# -- the differential tests ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@given(data=st.data())
def test_valid_answers_take_the_fast_path(name: str, data: st.DataObject) -> None:
    answer = data.draw(valid_answers(name))
    assert reference(name).is_valid(answer)
    assert compiled(name).fast_accepts(answer)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@given(data=st.data())
def test_mutated_answers_get_jsonschemas_verdict(name: str, data: st.DataObject) -> None:
    assert_agrees(name, data.draw(mutated(name)))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@given(value=hostile)
def test_hostile_top_level_values_get_jsonschemas_verdict(name: str, value: Any) -> None:
    assert assert_agrees(name, value) is False


# -- explicit hostile cases ------------------------------------------------------------------


def arcv(**overrides: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "artifact_sha256": "3f" * 32,
        "preference": "A",
        "scores": dict.fromkeys(ARCV_KEYS, 4),
        "hard_gates_pass": True,
        "disposition": "accept",
        "evidence_indices": [0, 2],
        "explanation": "The candidate is correct and its tests pass.",
    }
    answer.update(overrides)
    return answer


def score(correctness: Any) -> dict[str, Any]:
    return arcv(scores={**dict.fromkeys(ARCV_KEYS, 4), "correctness": correctness})


def _deep(depth: int) -> list[Any]:
    value: list[Any] = [0]
    for _ in range(depth):
        value = [value]
    return value


HOSTILE_CASES: list[tuple[str, dict[str, Any], bool]] = [
    # Python's re.search lets ``$`` match before a final newline; Rust's ``$`` does not.
    ("sha trailing newline", arcv(artifact_sha256="3f" * 32 + "\n"), True),
    ("sha two trailing newlines", arcv(artifact_sha256="3f" * 32 + "\n\n"), False),
    ("sha unicode digits", arcv(artifact_sha256="٣" * 64), False),
    ("sha fullwidth digits", arcv(artifact_sha256="０" * 64), False),
    ("sha lone surrogate", arcv(artifact_sha256="3f" * 31 + "3\ud800"), False),
    # Lengths are code points in both; an astral character is one, not two UTF-16 units.
    ("explanation 8 astral", arcv(explanation="😀" * 8), False),
    ("explanation 15 astral", arcv(explanation="😀" * 15), True),
    ("explanation 2000 astral", arcv(explanation="😀" * 2000), True),
    ("explanation 2001 astral", arcv(explanation="😀" * 2001), False),
    ("explanation 14 lone surrogates", arcv(explanation="\ud800" * 14), False),
    ("explanation 15 lone surrogates", arcv(explanation="\ud800" * 15), True),
    ("explanation 2001 paired surrogates", arcv(explanation="\ud83d\ude00" * 1000 + "x"), False),
    ("explanation 2000 paired surrogates", arcv(explanation="\ud83d\ude00" * 1000), True),
    ("explanation 14 combining", arcv(explanation="e\u0301" * 7), False),
    ("explanation 2001 ascii", arcv(explanation="x" * 2001), False),
    # integer: 1.0 is one in both, True and NaN are not.
    ("score 5.0", score(5.0), True),
    ("score True", score(True), False),
    ("score 5.5", score(5.5), False),
    ("score nan", score(float("nan")), False),
    ("score inf", score(float("inf")), False),
    ("score 2**64+3", score(2**64 + 3), False),
    ("score Decimal", score(Decimal(4)), False),
    ("score int subclass", score(_Int(4)), True),
    ("index True", arcv(evidence_indices=[True]), False),
    ("index huge", arcv(evidence_indices=[2**70]), True),
    ("index huge negative", arcv(evidence_indices=[-(2**70)]), False),
    ("index 1e300", arcv(evidence_indices=[1e300]), True),
    ("index -0.0", arcv(evidence_indices=[-0.0]), True),
    # uniqueItems: 1 == 1.0 == -0.0-style equality is Python's ==, but True is never 1.
    ("unique 1 and 1.0", arcv(evidence_indices=[1, 1.0]), False),
    ("unique 0 and -0.0", arcv(evidence_indices=[0, -0.0]), False),
    ("unique 1 and True", arcv(evidence_indices=[1, True]), False),
    ("unique 2**53 and float", arcv(evidence_indices=[2**53, 2.0**53]), False),
    ("unique 2**53+1 and float", arcv(evidence_indices=[2**53 + 1, 2.0**53]), True),
    ("unique 2**62 and float", arcv(evidence_indices=[2**62, 2.0**62]), False),
    ("unique 2**63 and float", arcv(evidence_indices=[2**63, 2.0**63]), False),
    ("unique 2**64 and float", arcv(evidence_indices=[2**64, 2.0**64]), False),
    ("unique 2**64-1 and float", arcv(evidence_indices=[2**64 - 1, 2.0**64]), True),
    ("unique huge ints", arcv(evidence_indices=[2**70, 2**70 + 1]), True),
    ("unique huge ints equal", arcv(evidence_indices=[2**70, 2**70]), False),
    ("unique int subclass", arcv(evidence_indices=[_Int(1), 1]), False),
    ("unique IntEnum", arcv(evidence_indices=[_Index.ONE, 1]), False),
    # Types jsonschema refuses but Rust reads as JSON.
    ("indices tuple", arcv(evidence_indices=(0, 1)), False),
    ("index Decimal", arcv(evidence_indices=[Decimal(1)]), False),
    ("index Fraction", arcv(evidence_indices=[Fraction(1)]), False),
    ("scores proxy", arcv(scores=types.MappingProxyType(dict.fromkeys(ARCV_KEYS, 4))), False),
    ("scores dict subclass", arcv(scores=_Dict(dict.fromkeys(ARCV_KEYS, 4))), True),
    ("preference str subclass", arcv(preference=_Str("A")), True),
    # enum and const: True is not 1, 1 is not True, a near string is not the string.
    ("hard_gates_pass 1", arcv(hard_gates_pass=1), False),
    ("hard_gates_pass 1 on reject", arcv(hard_gates_pass=1, disposition="reject"), False),
    ("accept with failed gates", arcv(hard_gates_pass=False), False),
    ("accept abstaining", arcv(preference="abstain"), False),
    ("preference fullwidth", arcv(preference="Ａ"), False),
    ("preference lone surrogate", arcv(preference="A\ud800"), False),
    ("disposition trailing newline", arcv(disposition="accept\n"), False),
    # Nesting deeper than the guard walks, in an array and under an extra key.
    ("deep indices", arcv(evidence_indices=_deep(40)), False),
    ("deep extra key", arcv(extra=_deep(40)), False),
    ("extra surrogate key", {**arcv(), "\ud800": 1}, False),
]


@pytest.mark.parametrize(
    ("value", "expected"), [c[1:] for c in HOSTILE_CASES], ids=[c[0] for c in HOSTILE_CASES]
)
def test_hostile_arcv_cases(value: dict[str, Any], expected: bool) -> None:
    assert assert_agrees("arcv", value) is expected
    assert_agrees("general", value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"verdict": True, "explanation": ""}, False),
        ({"verdict": "yes", "explanation": "😀" * 2000}, True),
        ({"verdict": "yes", "explanation": "😀" * 2001}, False),
        ({"verdict": "yes", "explanation": "\ud800" * 2000}, True),
        ({"verdict": "yes", "explanation": "\ud800" * 2001}, False),
        ({"verdict": "yes\n", "explanation": ""}, False),
        ({"verdict": _Str("yes"), "explanation": ""}, True),
    ],
)
def test_hostile_criterion_cases(value: dict[str, Any], expected: bool) -> None:
    assert assert_agrees("criterion", value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"label": "supported", "evidence_indices": [], "explanation": ""}, True),
        ({"label": "supported", "evidence_indices": [0, 0, 0.0], "explanation": ""}, True),
        ({"label": "supported", "evidence_indices": (0,), "explanation": ""}, False),
        ({"label": "supported", "evidence_indices": [True], "explanation": ""}, False),
        ({"label": "supported", "evidence_indices": list(range(65)), "explanation": ""}, False),
        ({"label": "supported", "evidence_indices": [2**80], "explanation": ""}, True),
        ({"label": "supported", "evidence_indices": [], "explanation": "😀" * 2000}, True),
        ({"label": "supported", "evidence_indices": [], "explanation": "😀" * 2001}, False),
    ],
)
def test_hostile_claim_cases(value: dict[str, Any], expected: bool) -> None:
    assert assert_agrees("claim", value) is expected


def test_the_guard_is_what_keeps_rust_from_accepting() -> None:
    """jsonschema-rs 0.60 alone accepts these, which jsonschema refuses: why ``_plain`` exists."""
    rust = compiled("arcv").fast
    assert rust is not None
    for value in (
        arcv(evidence_indices=(0, 1)),
        arcv(evidence_indices=[Decimal(1)]),
        arcv(evidence_indices=[2**62, 2.0**62]),
    ):
        assert rust.is_valid(value)
        assert not reference("arcv").is_valid(value)
        assert not compiled("arcv").is_valid(value)


@pytest.mark.parametrize(
    "value",
    [
        arcv(explanation="\ud800" * 15),
        arcv(preference=_Str("A")),
        arcv(scores=_Dict(dict.fromkeys(ARCV_KEYS, 4))),
        score(_Int(4)),
        arcv(evidence_indices=[2**53 + 1]),
        arcv(evidence_indices=[_Index.ONE]),
        arcv(artifact_sha256="3f" * 32 + "\n"),
    ],
)
def test_what_jsonschema_accepts_off_the_plain_domain_is_its_call(value: dict[str, Any]) -> None:
    assert not compiled("arcv").fast_accepts(value)
    assert compiled("arcv").is_valid(value)


def test_a_deep_value_is_not_walked_to_the_bottom() -> None:
    assert compiled("arcv").fast_accepts(arcv(extra=_deep(100_000))) is False


def test_schema_check_refuses_with_jsonschemas_message() -> None:
    value = arcv(evidence_indices=[1, 1.0], explanation="short")
    with pytest.raises(JudgeOutputError) as caught:
        _schema_check("arcv", value)
    assert caught.value.kind == "schema_violation"
    assert str(caught.value) == reference_message("arcv", value)


def test_schema_check_accepts_a_trailing_newline_digest_as_before() -> None:
    _schema_check("arcv", arcv(artifact_sha256="3f" * 32 + "\n"))
    assert not compiled("arcv").fast_accepts(arcv(artifact_sha256="3f" * 32 + "\n"))


def test_claim_check_refuses_with_jsonschemas_message() -> None:
    value = {"label": "supported", "evidence_indices": (0,), "explanation": ""}
    with pytest.raises(JudgeOutputError) as caught:
        validate_claim(value, bundle_size=3)
    assert str(caught.value) == reference_message("claim", value)
    assert validate_claim({"label": "supported", "evidence_indices": [2], "explanation": ""}, 3)
