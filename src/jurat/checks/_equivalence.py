"""Deterministic answer equivalence: settle a pair of final answers before any judge (seed 002).

The fold trusts a settled deterministic result over every judge, so this pass is built to
be *conservative*: a wrong settlement is far worse than a pair left to the judge. A pair is
settled only when

1. each text yields exactly one confidently located final answer that is a single plain
   number, read the same by math-verify and by an exact rational reading of a strict
   grammar (``_answers``; anything less leaves the pair to the judge);
2. the comparison agrees: math-verify's ``verify`` and exact rational equality must both
   say equal (EQUIVALENT) or both say different (DIFFERENT). A decimal that may be a
   rounding of the other value ("0.33" vs "1/3"), a percent on one side only, or
   different units on both sides leave the pair to the judge.

``invariance_verdict`` folds many pairs' outcomes into seed 002's statistical verdict.

The gate a receipt records (``AnswerCheck.to_gate``) treats ``b`` as reference material by
default (docs/receipt-format.md, "Reference material"): it records ``a``'s reading, the
comparison outcome and the keyed digest of ``b``, never ``b``'s text, reading or anything
the comparison learned about it beyond equal / different / not settled.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

from jurat.canonical import sha256_digest
from jurat.checks._answers import Answer, Extracted, extract_answer, no_answer_kind
from jurat.checks._mathverify import math_verify_equal, math_verify_version
from jurat.errors import FoldInputError
from jurat.fold import wilson_interval
from jurat.models import GATE_EQUIVALENCE_DETERMINISTIC, Frozen, GateOutcome

__all__ = [
    "EQUIVALENCE_RULE",
    "AnswerCheck",
    "InvarianceVerdict",
    "deterministic_equivalence",
    "invariance_verdict",
    "same_number",
]

EQUIVALENCE_RULE = "jurat.answers/v1"
"""Id of the extraction and comparison rules; recorded in every gate so a receipt pins them."""

Method = Literal[
    "equal",
    "different",
    "no-final-answer",
    "percent-ambiguous",
    "separator-ambiguous",
    "unit-mismatch",
    "rounding",
    "readers-disagree",
    "math-verify-error",
]


class AnswerCheck(Frozen):
    """The deterministic pass over one pair of answers."""

    settled: bool
    """Whether the pass decided the pair; when false the judge decides."""
    equivalent: bool | None
    """True or false when settled, ``None`` otherwise."""
    a_value: str | None
    """Canonical value extracted from ``a``, or ``None`` if none was confidently extracted."""
    b_value: str | None
    """Canonical value extracted from ``b``, or ``None``."""
    method: Method
    """Which rule decided: ``equal``/``different`` when settled, else why it was left open."""
    detail: str
    """One line for humans: what was read and why the pass decided or abstained."""
    a_answer: Extracted | None = None
    """The full extraction of ``a``."""
    b_answer: Extracted | None = None
    """The full extraction of ``b``."""
    a_reason: str | None = None
    """Why no final answer was extracted from ``a``; ``None`` when one was."""
    b_sha256: str = ""
    """sha256 of ``b``'s UTF-8 bytes: the pair's artifact digest is built from it when ``b``
    is not the reference (a gold ``b`` is bound by its keyed digest, ``to_gate``)."""

    def to_gate(self, *, reference: bool = True,
                reference_hmac: str | None = None) -> GateOutcome:
        """The ``equivalence.deterministic`` gate: pass (equal), fail (different) or skip.

        The answers are the judged party's text, and the gate is signed and published, so
        it records what was *read* from them, never how they were written: each answer's
        canonical value (a number checked by the extractor), anchor, percent flag and
        written precision, and why one could not be read as a kind (``no_answer_kind``).
        With ``reference`` (the default: ``b`` is the gold answer), nothing read from ``b``
        is recorded but its digest and the comparison's outcome: ``reference_hmac``, its
        keyed digest (``Artifact.reference_hmac``), which the runner always gives, since a
        plain digest of a short gold answer is reversed by hashing guesses (issue 36);
        without it, ``b_sha256`` as receipts recorded it before. The fold reads only
        ``outcome`` and ``tool``.
        """
        outcome: Literal["pass", "fail", "skip"]
        if not self.settled:
            outcome = "skip"
        else:
            outcome = "pass" if self.equivalent else "fail"
        if reference:
            detail, method = self._reference_detail()
            data: dict[str, Any] = {
                "rule": EQUIVALENCE_RULE,
                "method": method,
                "a_value": self.a_value,
                "a_answer": _reading(self.a_answer),
                "reference": "b",
            }
            if reference_hmac is not None:
                data["reference_hmac"] = reference_hmac
            else:
                data["reference_sha256"] = self.b_sha256
        else:
            detail = self._detail()
            data = {
                "rule": EQUIVALENCE_RULE,
                "method": self.method,
                "a_value": self.a_value,
                "b_value": self.b_value,
                "a_answer": _reading(self.a_answer),
                "b_answer": _reading(self.b_answer),
                "reference": "none",
            }
        return GateOutcome(
            id=GATE_EQUIVALENCE_DETERMINISTIC,
            outcome=outcome,
            tool="math-verify",
            tool_version=math_verify_version(),
            detail=detail,
            data=data,
        )

    def _detail(self) -> str:
        """The comparison in values and kinds (``detail`` is for the operator's terminal)."""
        a = "a: no answer" if self.a_value is None else f"a = {self.a_value}"
        b = "b: no answer" if self.b_value is None else f"b = {self.b_value}"
        return f"{a}, {b}: {self.method}"

    def _reference_detail(self) -> tuple[str, str]:
        """``detail`` and ``method`` that say nothing about ``b`` but the comparison outcome.

        Why an unsettled pair was left open can describe ``b`` ("one may be a rounding of the
        other", "equal if ',' and '.' swap roles", ``b``'s unreadable span), so only a failure
        to read ``a`` is named; every other open reason is ``not-settled``.
        """
        if self.a_answer is None:
            kind = no_answer_kind(self.a_reason or "")
            return f"a: no final answer ({kind}); left to the judge", "no-final-answer"
        shown = f"a = {self.a_answer.value}"
        if not self.settled:
            return f"{shown}; not settled against the reference, left to the judge", "not-settled"
        if self.equivalent:
            return f"{shown}: equal to the reference", "equal"
        return f"{shown}: different from the reference", "different"


def _reading(answer: Extracted | None) -> dict[str, Any] | None:
    # The extractor's checked reading only: the span as written and its unit words are
    # the answer's own text.
    if answer is None:
        return None
    return {
        "value": answer.value,
        "anchor": answer.anchor,
        "percent": answer.percent,
        "decimals": answer.decimals,
        "units": bool(answer.units),
        "currency": bool(answer.currency),
    }


class InvarianceVerdict(Frozen):
    """How often a set of pairs kept their answer (seed 002's statistical invariance verdict)."""

    total: int
    """Pairs given."""
    decided: int
    """Pairs with a true or false outcome."""
    preserved: int
    """Pairs whose answer was preserved (outcome true)."""
    broken: int
    """Pairs whose answer changed (outcome false)."""
    undecided: int
    """Pairs with no outcome (abstained, unparsable); excluded from the proportion."""
    proportion: float | None
    """preserved / decided; ``None`` when nothing was decided."""
    interval: tuple[float, float] | None
    """Wilson score interval of ``proportion`` at ``confidence``; ``None`` when undecided."""
    confidence: float
    """Confidence level of ``interval``."""


def invariance_verdict(
    outcomes: Sequence[bool | None], confidence: float = 0.95
) -> InvarianceVerdict:
    """Fold per-pair outcomes (true preserved, false broken, None undecided) into a proportion."""
    if isinstance(outcomes, str | bytes):
        raise FoldInputError("outcomes", "must be a sequence of true, false or null")
    if not 0 < confidence < 1:
        raise FoldInputError("confidence", f"must be in (0, 1), got {confidence!r}")
    for i, o in enumerate(outcomes):
        if o is not None and not isinstance(o, bool):
            raise FoldInputError(f"outcomes[{i}]", f"must be true, false or null, got {o!r}")
    preserved = sum(1 for o in outcomes if o is True)
    broken = sum(1 for o in outcomes if o is False)
    decided = preserved + broken
    return InvarianceVerdict(
        total=len(outcomes),
        decided=decided,
        preserved=preserved,
        broken=broken,
        undecided=len(outcomes) - decided,
        proportion=preserved / decided if decided else None,
        interval=wilson_interval(preserved, decided, confidence) if decided else None,
        confidence=confidence,
    )


# --------------------------------------------------------------------------- the pair


def _near(x: Answer, y: Answer, xv: Fraction, yv: Fraction) -> bool:
    """Whether one written decimal may be a rounding or truncation of the other value."""
    for this, tv, ov in ((x, xv, yv), (y, yv, xv)):
        d = this.extracted.decimals
        if d is not None and abs(tv - ov) < Fraction(10) ** -d:
            return True
    return False


def deterministic_equivalence(a: str, b: str) -> AnswerCheck:
    """Settle whether ``a`` and ``b`` give the same final number; unsure → not settled."""
    ra, rb = extract_answer(a), extract_answer(b)
    ea = None if isinstance(ra, str) else ra.extracted
    eb = None if isinstance(rb, str) else rb.extracted

    a_reason = ra if isinstance(ra, str) else None
    b_sha256 = sha256_digest(b)

    def open_(method: Method, detail: str) -> AnswerCheck:
        return AnswerCheck(
            settled=False,
            equivalent=None,
            a_value=None if ea is None else ea.value,
            b_value=None if eb is None else eb.value,
            method=method,
            detail=detail,
            a_answer=ea,
            b_answer=eb,
            a_reason=a_reason,
            b_sha256=b_sha256,
        )

    if isinstance(ra, str) or isinstance(rb, str):
        reasons = [f"{side}: {r}" for side, r in (("a", ra), ("b", rb)) if isinstance(r, str)]
        return open_("no-final-answer", "; ".join(reasons))
    assert ea is not None and eb is not None  # narrowed above; for the type checker
    shown = f"a {ea.text!r} = {ea.value}, b {eb.text!r} = {eb.value}"
    if (ea.units and eb.units and ea.units != eb.units) or (
        ea.currency and eb.currency and ea.currency != eb.currency
    ):
        return open_("unit-mismatch", f"{shown}: different units, may need a conversion")

    # One side in percent: "50%" and "50" or "0.5" may both be meant; settle only when the
    # values differ under every reading.
    if ea.percent != eb.percent:
        readings = ((ra.exact, rb.exact), (ra.written, rb.written))
        if any(x == y or _near(ra, rb, x, y) for x, y in readings):
            return open_("percent-ambiguous", f"{shown}: percent on one side only")
    elif _near(ra, rb, ra.written, rb.written) and ra.exact != rb.exact:
        return open_("rounding", f"{shown}: one may be a rounding of the other")

    # Comma-thousands / dot-decimal is the primary reading (as in math-verify); the other
    # convention can only stop a DIFFERENT, never make an EQUIVALENT.
    if ra.exact != rb.exact and (
        (ra.other_reading is not None and ra.other_reading == rb.exact)
        or (rb.other_reading is not None and rb.other_reading == ra.exact)
    ):
        return open_("separator-ambiguous", f"{shown}: equal if ',' and '.' swap roles")

    verdict = math_verify_equal(ra.mv_value, rb.mv_value)
    if verdict is None:
        return open_("math-verify-error", f"{shown}: math_verify.verify failed or timed out")
    exact = ra.exact == rb.exact
    if verdict != exact:
        return open_(
            "readers-disagree", f"{shown}: math-verify says {verdict}, exact comparison {exact}"
        )
    return AnswerCheck(
        settled=True,
        equivalent=exact,
        a_value=ea.value,
        b_value=eb.value,
        method="equal" if exact else "different",
        detail=f"{shown}: {'equal' if exact else 'different'}",
        a_answer=ea,
        b_answer=eb,
        b_sha256=b_sha256,
    )


def same_number(x: str | None, y: str | None) -> bool | None:
    """Whether two written numbers (e.g. a judge's NUMERIC_A and NUMERIC_B) are one value.

    Read by the same conservative pass as answers: ``None`` when either is missing or the
    pass would not settle them.
    """
    if x is None or y is None:
        return None
    return deterministic_equivalence(x, y).equivalent
