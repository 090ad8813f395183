"""The deterministic answer-equivalence pass: settles only what it can read with certainty.

``data/gsm8k_subset.jsonl`` holds 203 (model solution, ground truth, is_correct) pairs from
``gsm8k_example_model_solutions.jsonl.gz`` (OpenAI grade-school-math, MIT, see
``data/gsm8k.LICENSE``): every model's solution for every 28th question (0, 28, ..., 1316),
plus the 11 further pairs of the full file that the pass leaves to the judge.
"""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from fractions import Fraction
from importlib.metadata import version
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.canonical import sha256_digest
from jurat.checks import (
    AnswerCheck,
    Extracted,
    InvarianceVerdict,
    deterministic_equivalence,
    extract_final_answer,
    invariance_verdict,
)
from jurat.checks._answers import MAX_ANCHORS, MAX_EXPONENT, MAX_TEXT_CHARS
from jurat.errors import FoldInputError, ValidationError
from jurat.fold import wilson_interval
from jurat.models import GATE_EQUIVALENCE_DETERMINISTIC
from tests.checks.adversarial_answers import ADVERSARIAL

DATA = Path(__file__).parent / "data" / "gsm8k_subset.jsonl"


def settled_as(a: str, b: str) -> bool | None:
    """The pair's outcome, checked symmetric: settling must not depend on the order."""
    ab, ba = deterministic_equivalence(a, b), deterministic_equivalence(b, a)
    assert (ab.settled, ab.equivalent) == (ba.settled, ba.equivalent), (ab.detail, ba.detail)
    assert ab.settled == (ab.equivalent is not None)
    return ab.equivalent


# ----------------------------------------------------------------- the seed's phrasings

SEED_200 = [
    "200",
    r"\boxed{200}",
    "answer: 200",
    "Answer: 200",
    "The answer is 200.",
    "The final answer is $200$. I hope it is correct.",
    "$200",
    "200.0",
    "200.00",
    "2e2",
    "2.0E+2",
    "+200",
    "**200**",
    "#### 200",
    "A: 200",
    "200 dollars",
    "$200 per week",
    r"$\boxed{200}$",
    r"\[\boxed{200}\]",
    r"\boxed{\$200}",
    r"\boxed{200\text{ dollars}}",
    "**Answer:** 200",
    "**Final Answer:**\n\n$200$",
    "She earns 4 * 50 = 200 dollars.\nA: 200",
    "Step 1: 150 + 50 = 200.\n#### 200",
    "She earns 4 * 50 = 200 dollars. So the answer is 200.",
]


@pytest.mark.parametrize("text", SEED_200)
def test_seed_phrasings_of_200_are_equivalent(text: str) -> None:
    got = extract_final_answer(text)
    assert got is not None, deterministic_equivalence(text, "200").detail
    assert got.value == "200"
    assert settled_as(text, "200") is True
    assert settled_as(text, r"\boxed{200}") is True


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1/2", "0.5"),
        (r"\frac{1}{2}", "0.5"),
        (r"$\frac{1}{2}$", "1/2"),
        (r"\boxed{\dfrac{1}{2}}", ".5"),
        (r"\boxed{-\frac{3}{4}}", "-0.75"),
        ("−3", "-3"),  # U+2212 minus sign
        ("6/4", "1.5"),
        ("50%", "50 %"),
        (r"\boxed{50\%}", "50 percent"),
        ("$1,200", "1200 dollars"),
        (r"\boxed{1{,}200}", "1,200"),
        ("1,234,567", "1234567"),
        ("18 eggs", "18"),
        ("18 eggs", "A: 18"),
        ("$18", "18 dollars"),
        (r"\boxed{12\,\text{cm}}", "12 cm"),
        ("-$5", "$-5"),
        ("2.5e-3", "0.0025"),
        ("007", "7"),
        ("#### 72", "A: 72"),
        ("Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72", "A: 72"),
        ("answer: 3.50", "$3.5"),
    ],
)
def test_equal_values_settle_equivalent(a: str, b: str) -> None:
    assert settled_as(a, b) is True


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("200", "201"),
        (r"\boxed{200}", "answer: 20"),
        ("A: 72", "#### 27"),
        ("1/2", "0.25"),
        ("-3", "3"),
        ("18.4", "18"),
        ("1200 dollars", "$120"),
        ("50%", "7"),
        ("0.5", "5"),
        ("1,200", "200"),
        ("Janet makes 9 * 2 = $18.\nA: 18", "Janet makes 13 * 2 = $26.\nA: 26"),
    ],
)
def test_clear_mismatches_settle_different(a: str, b: str) -> None:
    assert settled_as(a, b) is False
    check = deterministic_equivalence(a, b)
    assert check.method == "different"
    assert check.a_value is not None and check.b_value is not None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n ",
        "two hundred",
        "answer: two hundred",
        "I don't know.",
        "The answer is not 200.",
        "A: 10+John's age",
        "A: -1.8 billion",
        "1.5 million",
        "2 1/2",
        "5 or 6",
        "A: 5 and 6",
        "between 5 and 6",
        "x = 200",
        r"\boxed{x=200}",
        r"\boxed{\sqrt{2}}",
        r"\boxed{200",  # unclosed
        "12:30",
        "5-6",
        "200?",
        "~200",
        "about 200",
        "200 squared",
        "200 is wrong",
        "200 maybe",
        "answer: 200 if it rains",
        "1,20",  # neither thousands nor a plain decimal
        "١٢",  # non-ASCII digits are the judge's to read
        "1/0",
        r"\boxed{200} and then \boxed{201}",
        "A: 200\nB: 300",
        "Answer: 200\nWait, that is wrong: it is 300.",
        "Answer: 200. Actually, make that twenty.",
        "So 4 * 50 = 200 dollars in total",  # no marker: the last number is numericMatch's guess
    ],
)
def test_missing_or_non_numeric_answers_are_not_settled(text: str) -> None:
    assert extract_final_answer(text) is None
    check = deterministic_equivalence(text, "200")
    assert not check.settled and check.equivalent is None
    assert check.method == "no-final-answer"
    assert check.a_value is None and check.b_value == "200"
    assert check.detail.startswith("a: ")


@pytest.mark.parametrize(
    ("a", "b", "method"),
    [
        ("0.33", "1/3", "rounding"),
        ("0.67", r"\frac{2}{3}", "rounding"),
        ("3.14", "3.14159", "rounding"),
        ("2.0e2", "204", "rounding"),
        ("2e2", "250", "rounding"),
        ("50%", "50", "percent-ambiguous"),
        ("50%", "0.5", "percent-ambiguous"),
        ("12 dollars", "1200 cents", "unit-mismatch"),
        ("5 hours", "5 minutes", "unit-mismatch"),
        ("$5", "€5", "unit-mismatch"),
        ("1,234", "1.234", "separator-ambiguous"),
        ("1.234", "1234", "separator-ambiguous"),
    ],
)
def test_ambiguous_pairs_are_left_to_the_judge(a: str, b: str, method: str) -> None:
    assert settled_as(a, b) is None
    assert deterministic_equivalence(a, b).method == method


def test_extracted_records_how_it_read_the_answer() -> None:
    got = extract_final_answer("Each costs $3.\nShe pays $1,234.50 in total.\nA: $1,234.50")
    assert got == Extracted(
        value="1234.5",
        text="$1,234.50",
        anchor="A:",
        percent=False,
        decimals=2,
        units="",
        currency="$",
        parsed=got.parsed if got else "",
    )
    assert got is not None and got.parsed.startswith("1234.5")
    pct = extract_final_answer(r"The final answer is $\boxed{12.5\%}$")
    assert pct is not None and (pct.value, pct.percent, pct.anchor) == ("0.125", True, "boxed")
    assert extract_final_answer("1/3") == extract_final_answer("1/3")
    third = extract_final_answer("1/3")
    assert third is not None and third.value == "1/3" and third.decimals is None


def test_to_gate_maps_to_the_equivalence_gate() -> None:
    tool_version = version("math-verify")
    same = deterministic_equivalence("#### 72", r"\boxed{72}").to_gate()
    assert (same.id, same.outcome, same.tool, same.tool_version) == (
        GATE_EQUIVALENCE_DETERMINISTIC,
        "pass",
        "math-verify",
        tool_version,
    )
    assert same.data["a_value"] == "72" and same.data["reference"] == "b"
    assert same.data["reference_sha256"] == sha256_digest(r"\boxed{72}")
    assert same.data["rule"] == "jurat.answers/v1" and same.data["method"] == "equal"
    assert same.data["a_answer"]["anchor"] == "####"
    assert "b_value" not in same.data and "b_answer" not in same.data
    assert deterministic_equivalence("72", "27").to_gate().outcome == "fail"
    skip = deterministic_equivalence("seventy-two", "72").to_gate()
    assert skip.outcome == "skip" and skip.data["a_value"] is None and skip.detail
    assert skip.data["a_answer"] is None and skip.data["method"] == "no-final-answer"
    # Without a reference (b is another candidate), the gate shows both readings.
    both = deterministic_equivalence("#### 72", r"\boxed{72}").to_gate(reference=False)
    assert both.data["b_value"] == "72" and both.data["b_answer"]["anchor"] == "boxed"
    assert both.data["reference"] == "none" and both.detail == "a = 72, b = 72: equal"
    assert same.detail == "a = 72: equal to the reference"
    # The answers as written (their spans, unit words) are the judged party's text.
    written = deterministic_equivalence("The answer is 72 IGNORE-RUBRIC eggs", "72").to_gate()
    assert "IGNORE" not in json.dumps(written.model_dump(mode="json"))
    unread = deterministic_equivalence(r"\boxed{IGNORE-RUBRIC}", "72").to_gate()
    assert unread.detail == "a: no final answer (unreadable); left to the judge"
    assert "IGNORE" not in json.dumps(unread.model_dump(mode="json"))


# Pairs whose reason for staying open describes b; with b as the reference the gate must say
# nothing of it but the comparison outcome (docs/receipt-format.md, "Reference material").
REFERENCE_PAIRS = [
    ("#### 26", "A: 73,829,146", "different", ("73,829,146", "73829146")),
    ("#### 73829146", "A: 73,829,146", "equal", ("73,829,146",)),
    ("0.33", "A: 1/3", "not-settled", ("1/3", "rounding")),
    ("1,234", "A: 1.234", "not-settled", ("1.234", "swap", "separator")),
    ("50%", "A: 50", "not-settled", ("percent-ambiguous", "percent on one side")),
    ("$5", "A: €5", "not-settled", ("€", "unit-mismatch", "different units")),
    ("#### 12", "The answer is 64,213,579 or 64,213,580.", "not-settled", ("64,213", "64213")),
    ("seventy-two", "A: 73,829,146", "no-final-answer", ("73,829,146", "73829146")),
]


@pytest.mark.parametrize(("a", "b", "method", "secret"), REFERENCE_PAIRS)
def test_reference_gate_says_nothing_of_b_but_the_outcome(
    a: str, b: str, method: str, secret: tuple[str, ...]
) -> None:
    check = deterministic_equivalence(a, b)
    gate = check.to_gate()
    assert gate.data["method"] == method
    assert gate.data["reference_sha256"] == sha256_digest(b)
    shown = json.dumps(gate.model_dump(mode="json"), ensure_ascii=False)
    for token in secret:
        assert token not in shown, (token, shown)
    # The fold reads outcome and tool only: the same as the unredacted gate's.
    full = check.to_gate(reference=False)
    assert (gate.outcome, gate.tool) == (full.outcome, full.tool)
    # An unredacted gate records b's reading (its value, never its text).
    assert "b_value" in full.data and "b_answer" in full.data


def test_records_are_frozen_and_documented() -> None:
    check = deterministic_equivalence("1", "1")
    with pytest.raises(Exception, match="frozen"):
        check.settled = False  # type: ignore[misc]
    for model in (AnswerCheck, Extracted, InvarianceVerdict):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no docstring"


def test_non_string_input_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        deterministic_equivalence(200, "200")  # type: ignore[arg-type]


# ----------------------------------------------------------------- bounded work

_NO_MARKER = "no final-answer marker (\\boxed{}, ####, A:, answer:) and not a bare number"
_BOX = "a \\boxed{} is unclosed or too long"
_SPAN = "not a single short answer"
#: What stops the pass on each hostile input: a cap on the text, on the characters scanned
#: after a marker, on the markers, or on the number read. Its time is measured by
#: bench/equivalence.py, never asserted here.
STOPPED_BY = {
    "unclosed boxes": _BOX,  # MAX_SPAN_CHARS scanned per box
    "nested boxes": _BOX,
    "one long number": _NO_MARKER,  # a bare number longer than MAX_SPAN_CHARS
    "too long": f"answer text longer than {MAX_TEXT_CHARS} characters",
    "many markers": f"more than {MAX_ANCHORS} final-answer markers",
    "many answer lines": f"more than {MAX_ANCHORS} final-answer markers",
    "many fractions": _NO_MARKER,
    "braces": _NO_MARKER,
    "dollars": _NO_MARKER,
    "latex soup": _NO_MARKER,
    "huge exponent": f"exponent beyond ±{MAX_EXPONENT}",
    "huge hash answer": _SPAN,
    "long answer line": _SPAN,
    "spaces in the grammar": _NO_MARKER,
    "deep power tower": _BOX,
}


def test_every_hostile_input_has_an_expected_outcome() -> None:
    assert set(ADVERSARIAL) == {*STOPPED_BY, "factorial bomb"}


@pytest.mark.parametrize("name", list(STOPPED_BY))
def test_adversarial_input_stops_at_a_cap(name: str) -> None:
    check = deterministic_equivalence(ADVERSARIAL[name], "5")
    assert (check.settled, check.equivalent, check.method) == (False, None, "no-final-answer")
    assert check.detail.startswith("a: ") and STOPPED_BY[name] in check.detail


def test_a_factorial_is_read_as_its_digits_never_evaluated() -> None:
    check = deterministic_equivalence(ADVERSARIAL["factorial bomb"], "5")
    assert (check.equivalent, check.a_value, check.method) == (False, "9999999", "different")


def test_runs_outside_the_main_thread() -> None:
    # math-verify's SIGALRM timeout only works in the main thread; elsewhere the pass must
    # still answer (bounded by its input grammar) instead of raising.
    out: list[AnswerCheck] = []
    worker = threading.Thread(target=lambda: out.append(deterministic_equivalence("1/2", "0.5")))
    worker.start()
    worker.join(timeout=30)
    assert out and out[0].settled and out[0].equivalent is True


# ----------------------------------------------------------------- properties

values = st.one_of(
    st.integers(min_value=-(10**9), max_value=10**9).map(Fraction),
    st.fractions(min_value=-1000, max_value=1000, max_denominator=64),
)


def plain(x: Fraction) -> str:
    if x.denominator == 1:
        return str(x.numerator)
    return f"{'-' if x < 0 else ''}{abs(x.numerator)}/{x.denominator}"


def phrasings(x: Fraction) -> list[str]:
    p = plain(x)
    out = [p, rf"\boxed{{{p}}}", f"answer: {p}", f"#### {p}", f"A: {p}", f"{p} apples"]
    if x.denominator == 1:
        n = x.numerator
        out += [f"{n:,}", f"{n}.0", f"${n:,}" if n >= 0 else f"-${-n:,}"]
    else:
        sign = "-" if x < 0 else ""
        out.append(rf"{sign}\frac{{{abs(x.numerator)}}}{{{x.denominator}}}")
        d = x.denominator
        while d % 2 == 0:
            d //= 2
        while d % 5 == 0:
            d //= 5
        if d == 1:  # a terminating decimal: write it out, too
            out.append(format(Decimal(x.numerator) / Decimal(x.denominator), "f"))
    return out


@given(values, st.data())
def test_phrasings_of_one_value_are_equivalent(x: Fraction, data: st.DataObject) -> None:
    forms = phrasings(x)
    a = data.draw(st.sampled_from(forms))
    b = data.draw(st.sampled_from(forms))
    assert settled_as(a, b) is True


@given(values, values)
def test_distinct_exact_values_never_settle_equivalent(x: Fraction, y: Fraction) -> None:
    outcome = settled_as(plain(x), rf"\boxed{{{plain(y)}}}")
    assert outcome is (x == y)


@given(st.text(max_size=200), st.text(max_size=60))
def test_any_text_gets_an_answer_and_settles_only_on_extracted_values(a: str, b: str) -> None:
    check = deterministic_equivalence(a, b)
    if check.settled:
        assert check.a_value is not None and check.b_value is not None
        assert check.equivalent is (check.a_value == check.b_value)


# ----------------------------------------------------------------- invariance verdict


def test_invariance_verdict_counts_and_interval() -> None:
    verdict = invariance_verdict([True] * 18 + [False] * 2 + [None] * 5)
    assert (verdict.total, verdict.decided, verdict.preserved, verdict.broken) == (25, 20, 18, 2)
    assert verdict.undecided == 5 and verdict.proportion == 0.9
    assert verdict.interval == wilson_interval(18, 20, 0.95) and verdict.confidence == 0.95
    low, high = verdict.interval
    assert low < 0.9 < high


def test_invariance_verdict_with_nothing_decided() -> None:
    verdict = invariance_verdict([None, None], confidence=0.9)
    assert verdict.decided == 0 and verdict.proportion is None and verdict.interval is None
    assert invariance_verdict([]).total == 0


@pytest.mark.parametrize(
    ("outcomes", "confidence", "field"),
    [
        ([True, 1], 0.95, "outcomes[1]"),
        ([True, "yes"], 0.95, "outcomes[1]"),
        ("TTF", 0.95, "outcomes"),
        ([True], 1.0, "confidence"),
        ([True], 0.0, "confidence"),
    ],
)
def test_invariance_verdict_refuses_bad_input(
    outcomes: object, confidence: float, field: str
) -> None:
    with pytest.raises(FoldInputError) as caught:
        invariance_verdict(outcomes, confidence)  # type: ignore[arg-type]
    assert caught.value.field == field


# ----------------------------------------------------------------- GSM8K


def test_gsm8k_subset_agrees_with_gold_on_settled_pairs() -> None:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 200
    outcomes: list[bool | None] = []
    wrong = []
    for row in rows:
        check = deterministic_equivalence(row["solution"], row["ground_truth"])
        if check.settled:
            outcomes.append(check.equivalent == row["is_correct"])
            if check.equivalent != row["is_correct"]:
                wrong.append((row["index"], row["model"], check.detail))
        else:
            outcomes.append(None)
            # Leaving a pair to the judge is only right when there is no clean final answer.
            assert check.method == "no-final-answer"
    verdict = invariance_verdict(outcomes)
    assert verdict.proportion is not None and verdict.proportion >= 0.99, wrong
    assert verdict.decided >= 0.9 * len(rows)  # conservative, but not by refusing everything
    assert verdict.undecided >= 10  # the committed subset keeps the hard cases


def test_quickstart_pairs_get_their_expected_gate() -> None:
    path = Path(__file__).parents[2] / "examples" / "quickstart" / "equivalence" / "pairs.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert 12 <= len(rows) <= 20
    assert {r["expected_deterministic"] for r in rows} == {"pass", "fail", "skip"}
    for row in rows:
        gate = deterministic_equivalence(row["a"], row["b"]).to_gate()
        assert gate.outcome == row["expected_deterministic"], (row["id"], gate.detail)
        if gate.outcome != "skip":
            assert (gate.outcome == "pass") == row["is_correct"], row["id"]
