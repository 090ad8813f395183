"""Deterministic answer equivalence: settle a pair of final answers before any judge (seed 002).

The fold trusts a settled deterministic result over every judge, so this pass is built to
be *conservative*: a wrong settlement is far worse than a pair left to the judge. A pair is
settled only when

1. each text yields exactly one confidently located final answer: an explicit anchor
   (``\\boxed{}``, a GSM8K ``#### n`` line, an ``A: n`` line, "the answer is n",
   "answer: n") or a text that is nothing but the answer ("$1,200", "18 eggs"); all
   anchors must agree, and no digit may follow the last one (a revised answer);
2. that answer is a single plain number: integer, decimal, thousands separators, plain or
   LaTeX fraction, percent, scientific notation, with an optional currency sign and
   trailing unit words. Number words, scale words ("1.5 million"), mixed numbers,
   expressions, ranges and everything else are left to the judge;
3. two independent readers agree on its value: math-verify (``parse``) and an exact
   rational reading of the strict grammar above. math-verify alone is too generous for a
   trusted verdict (it reads "2e2" as 2, "2 1/2" as 1, "1.5 million" as 1.5), and the
   strict grammar alone would be a second copy of math-verify's normalisation;
4. the comparison agrees: math-verify's ``verify`` and exact rational equality must both
   say equal (EQUIVALENT) or both say different (DIFFERENT). A decimal that may be a
   rounding of the other value ("0.33" vs "1/3"), a percent on one side only, or
   different units on both sides leave the pair to the judge.

math-verify's own timeout is a SIGALRM, which works only in the main thread (and replaces,
then cancels, any alarm the caller had set); elsewhere it is disabled, and the bound is that
math-verify only ever reads a short span that already passed the strict grammar, so it cannot
be handed adversarial input.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Literal

from jurat.errors import DependencyError, FoldInputError, ValidationError
from jurat.fold import DETERMINISTIC_EQUIVALENCE_GATE, wilson_interval
from jurat.models import Frozen, GateOutcome

__all__ = [
    "EQUIVALENCE_RULE",
    "AnswerCheck",
    "Extracted",
    "InvarianceVerdict",
    "deterministic_equivalence",
    "extract_final_answer",
    "invariance_verdict",
]

EQUIVALENCE_RULE = "jurat.answers/v1"
"""Id of the extraction and comparison rules; recorded in every gate so a receipt pins them."""

MAX_TEXT_CHARS = 100_000
"""Longer answers are left to the judge rather than scanned."""
MAX_SPAN_CHARS = 160
"""A final-answer span longer than this is not a plain number."""
MAX_DIGITS = 40
"""Digits allowed in one number; more is not an answer anyone needs settled here."""
MAX_ANCHORS = 16
"""More final-answer markers than this in one text is not an answer but a list (or an attack)."""
MAX_EXPONENT = 30
"""Largest decimal exponent accepted in scientific notation."""
MATH_VERIFY_TIMEOUT_S = 2
"""Seconds for each math-verify call (integer: it uses ``signal.alarm``)."""

Anchor = Literal["boxed", "####", "A:", "answer", "bare"]
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


class Extracted(Frozen):
    """One confidently extracted final answer."""

    value: str
    """Exact value, canonical: an integer, a terminating decimal, or ``p/q``; percent applied."""
    text: str
    """The answer span as written, after markup and trailing punctuation are removed."""
    anchor: Anchor
    """How it was located: ``boxed``, ``####``, ``A:``, ``answer`` (inline) or ``bare``."""
    percent: bool = False
    """Whether it was written as a percentage (``value`` is then divided by 100)."""
    decimals: int | None = None
    """Written precision: the last written digit is worth ``10**-decimals`` (2 for "3.50", -2
    for "2e2"); ``None`` for exact integers and fractions."""
    units: str = ""
    """Trailing unit words, lower-cased and singularised (``"egg"``), empty if none."""
    currency: str = ""
    """Leading currency sign, empty if none."""
    parsed: str = ""
    """math-verify's reading of the span (sympy ``str``), which agreed with ``value``."""


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

    def to_gate(self) -> GateOutcome:
        """The ``equivalence.deterministic`` gate: pass (equal), fail (different) or skip."""
        outcome: Literal["pass", "fail", "skip"]
        if not self.settled:
            outcome = "skip"
        else:
            outcome = "pass" if self.equivalent else "fail"
        return GateOutcome(
            id=DETERMINISTIC_EQUIVALENCE_GATE,
            outcome=outcome,
            tool="math-verify",
            tool_version=_math_verify_version(),
            detail=self.detail,
            data={
                "rule": EQUIVALENCE_RULE,
                "method": self.method,
                "a_value": self.a_value,
                "b_value": self.b_value,
                "a_answer": None if self.a_answer is None else self.a_answer.model_dump(),
                "b_answer": None if self.b_answer is None else self.b_answer.model_dump(),
            },
        )


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


# --------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class _Answer:
    extracted: Extracted
    exact: Fraction  # percent applied
    written: Fraction  # as written, for the percent-on-one-side comparison
    other_reading: Fraction | None  # "1,234" / "1.234": the other decimal-separator convention
    mv_value: Any  # math-verify's sympy reading, compared by math_verify.verify


@dataclass(frozen=True)
class _Span:
    text: str
    anchor: Anchor
    start: int  # where the anchor begins; an anchor inside another's span wins
    end: int  # where the span ends; no digit may follow the last one


# The GSM8K conventions are not anchors math-verify knows: it would read "A: 72" only as the
# rightmost number in the text, which is exactly the brittle numericMatch this pass replaces.
_HASH_LINE = re.compile(r"^[ \t]*####[ \t]*(?P<span>[^\n]*)", re.MULTILINE)
_A_LINE = re.compile(
    r"^[ \t]*(?:\*\*)?A(?:\*\*)?[ \t]*[:：](?:\*\*)?(?P<span>[^\n]*)", re.MULTILINE
)
_ANSWER_WORD = re.compile(
    r"\banswer(?:[ \t]+is)?[ \t]*(?:\*\*)?[ \t]*[:=：]|\banswer[ \t]+is\b", re.IGNORECASE
)
# An inline answer ends at the end of its sentence or clause ("1,200" and "3.5" have no
# space after their separator, so they are not cut).
_INLINE_END = re.compile(r"\n|[.!?;,](?=\s|$)")
_BOXED = re.compile(r"\\(?:boxed|fbox)[ \t]*\{")
_NEXT_LINE = re.compile(r"[\n \t]*(?P<line>[^\n]*)")
_DIGIT = re.compile(r"\d")
_NUMBER_WORD = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty"
    r"|seventy|eighty|ninety|hundred|thousand|million|billion|trillion)\b",
    re.IGNORECASE,
)


def _closing_brace(text: str, open_at: int) -> int | None:
    """Index of the brace closing ``text[open_at]``, scanning at most MAX_SPAN_CHARS."""
    depth = 0
    i = open_at
    stop = min(len(text), open_at + MAX_SPAN_CHARS + 2)
    while i < stop:
        c = text[i]
        if c == "\\":
            i += 2  # an escaped character, e.g. \{ or \}, never opens or closes
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _line_span(text: str, start: int, end: int) -> tuple[str, int]:
    """The rest of an anchor's line, or the next non-blank line when the rest is blank."""
    span = text[start:end]
    if span.strip(_MARKUP):
        return span, end
    nxt = text.find("\n", end)
    if nxt < 0:
        return span, end
    line = _NEXT_LINE.match(text, nxt + 1)
    assert line is not None  # the pattern matches the empty string
    return line["line"], line.end()


def _find_spans(text: str) -> list[_Span] | str:
    """Every anchored answer span in ``text``, or the reason none can be trusted."""
    spans: list[_Span] = []

    def add(span: _Span) -> bool:
        spans.append(span)
        return len(spans) <= MAX_ANCHORS  # stop scanning early: the work stays linear

    for m in _BOXED.finditer(text):
        close = _closing_brace(text, m.end() - 1)
        if close is None:
            return "a \\boxed{} is unclosed or too long"
        if not add(_Span(text[m.end() : close], "boxed", m.start(), close + 1)):
            return f"more than {MAX_ANCHORS} final-answer markers"
    line_anchors: tuple[tuple[re.Pattern[str], Anchor], ...] = (
        (_HASH_LINE, "####"),
        (_A_LINE, "A:"),
    )
    for pattern, anchor in line_anchors:
        for m in pattern.finditer(text):
            span, end = _line_span(text, m.start("span"), m.end("span"))
            if not add(_Span(span, anchor, m.start(), end)):
                return f"more than {MAX_ANCHORS} final-answer markers"
    for m in _ANSWER_WORD.finditer(text):
        # A window, not the rest of the text: a span longer than it is not an answer anyway.
        window = m.end() + 2 * MAX_SPAN_CHARS
        stop = _INLINE_END.search(text, m.end(), window)
        end = min(len(text), window) if stop is None else stop.start()
        span, end = _line_span(text, m.end(), end)
        if not add(_Span(span, "answer", m.start(), end)):
            return f"more than {MAX_ANCHORS} final-answer markers"
    # "Final Answer: The final answer is $18$. I hope it is correct." holds two anchors; the
    # inner one is the precise one, the outer span is a sentence.
    return [
        s
        for s in spans
        if not any(o is not s and s.start < o.start < s.end and o.end <= s.end for o in spans)
    ]


def _extract(text: str) -> _Answer | str:
    """The one final answer in ``text``, or the reason it was not confidently extracted."""
    if not isinstance(text, str):
        raise ValidationError(f"an answer must be a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        return f"answer text longer than {MAX_TEXT_CHARS} characters"
    found = _find_spans(text)
    if isinstance(found, str):
        return found
    if not found:
        bare = text.strip()
        if not bare:
            return "empty answer"
        if "\n" in bare or len(bare) > MAX_SPAN_CHARS:
            return "no final-answer marker (\\boxed{}, ####, A:, answer:) and not a bare number"
        found = [_Span(bare, "bare", 0, len(text))]
    answers: list[_Answer] = []
    reads: dict[tuple[str, Anchor], _Answer] = {}
    for span in found:
        read = reads.get((span.text, span.anchor)) or _read_span(span.text, span.anchor)
        if isinstance(read, str):
            return f"{_ANCHOR_NAMES[span.anchor]} {_clip(span.text)!r}: {read}"
        reads[(span.text, span.anchor)] = read
        answers.append(read)
    first = answers[0]
    if any(
        a.exact != first.exact or a.extracted.percent != first.extracted.percent
        for a in answers[1:]
    ):
        values = sorted({a.extracted.text for a in answers})
        return f"conflicting final answers {values}"
    last_end = max(s.end for s in found)
    if _DIGIT.search(text, last_end) or _NUMBER_WORD.search(text, last_end):
        return "numbers follow the final answer (it may have been revised)"
    # The last-written anchor carries the reported span; all agree on the value anyway.
    return max(zip(found, answers, strict=True), key=lambda p: p[0].end)[1]


_ANCHOR_NAMES: dict[Anchor, str] = {
    "boxed": "the \\boxed{} answer",
    "####": "the #### line",
    "A:": "the A: line",
    "answer": "the 'answer' phrase",
    "bare": "the bare answer",
}


def extract_final_answer(text: str) -> Extracted | None:
    """The confidently extracted final answer of ``text``, or ``None`` (leave it to a judge)."""
    got = _extract(text)
    return None if isinstance(got, str) else got.extracted


def _clip(s: str, n: int = 40) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


# --------------------------------------------------------------------------- the strict grammar

_MARKUP = "*_` \t\r\n"
# "?" is not stripped: "18?" is a guess, not an answer.
_TRAILING = ".!;:,。" + _MARKUP

_LATEX_SUBS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\\[dt]frac\b"), r"\\frac"),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\\$"), "$"),
    (re.compile(r"\\%"), "%"),
    (
        re.compile(r"\\(?:text|textrm|mathrm|textbf|textit|mbox|operatorname)\s*\{([^{}\\]*)\}"),
        r" \1 ",
    ),
    (re.compile(r"\^\s*\{?\s*\\circ\s*\}?"), " degrees"),
    (re.compile(r"\\(?:[,;:! ]|quad\b|qquad\b)|~"), " "),
)

_NUMBER = (
    r"(?P<int>\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 1,200 / 1,234.5: groups of exactly three
    r"|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    r"|\.\d+(?:[eE][-+]?\d+)?)"
)
_PLAIN_FRACTION = r"(?P<pnum>\d+)[ \t]*/[ \t]*(?P<pden>\d+)"
_LATEX_FRACTION = (
    r"\\frac[ \t]*\{[ \t]*(?P<lnum>\d+(?:\.\d+)?)[ \t]*\}"
    r"[ \t]*\{[ \t]*(?P<lden>\d+(?:\.\d+)?)[ \t]*\}"
)
_GRAMMAR = re.compile(
    r"(?P<sign1>[-+])?[ \t]*(?P<cur>[$€£¥₹])?[ \t]*(?P<sign2>[-+])?[ \t]*"
    rf"(?:{_LATEX_FRACTION}|{_PLAIN_FRACTION}|{_NUMBER})"
    r"[ \t]*(?P<pct>%)?"
    r"(?P<units>(?:[ \t]+[A-Za-z][A-Za-z'’-]*){0,4})",
    re.ASCII,  # only ASCII digits: other scripts' digits are the judge's to read
)
# One group of three after a single separator reads as thousands in one convention and as
# a decimal in the other ("1,234" / "1.234"); such a value only settles if both agree.
_ONE_GROUP = re.compile(r"(\d{1,3})[.,](\d{3})", re.ASCII)

# Trailing words that change the number or make the span something other than one number.
_NOT_UNITS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty
    ninety hundred hundreds thousand thousands million millions billion billions trillion
    trillions lakh lakhs crore crores dozen dozens score half halves third thirds quarter
    quarters fourth fourths fifth fifths tenth tenths hundredth hundredths thousandth
    thousandths point and or to plus minus times over divided multiplied by than more less
    fewer not no approximately approx about around roughly nearly almost least most squared
    cubed factorial power time halve th st nd rd am pm pi e i x y n k m b
    is are was were be been isn't aren't wasn't weren't yes wrong incorrect correct right true
    false maybe perhaps probably possibly likely unlikely guess think if but so because since
    which that the an it its this these those there here we you he she they me my our your
    his her their what who how why when where do does did can could would should will may
    might must have has had except only""".split()
)
_PERCENT_WORDS = frozenset({"percent", "percentage", "pct", "per-cent"})


def _strip_markup(s: str) -> str:
    """Remove surrounding markdown, trailing punctuation and one layer of math delimiters."""
    for _ in range(4):
        before = s
        s = s.strip(_MARKUP).rstrip(_TRAILING).strip(_MARKUP)
        for left, right in (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)")):
            if s.startswith(left) and s.endswith(right) and len(s) >= len(left) + len(right):
                s = s[len(left) : len(s) - len(right)]
        if len(s) >= 2 and s[0] == "$" and s[-1] == "$" and "$" not in s[1:-1].replace("\\$", ""):
            s = s[1:-1]
        m = _BOXED.match(s)
        if m and _closing_brace(s, m.end() - 1) == len(s) - 1:
            s = s[m.end() : -1]
        if s == before:
            break
    return s


def _singular(word: str) -> str:
    w = word.lower().replace("’", "'")
    return w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w


def _decimal_fraction(token: str) -> tuple[Fraction, int | None] | str:
    """Exact value of a decimal token and its written precision (None for an integer)."""
    digits = sum(c.isdigit() for c in token.split("e")[0].split("E")[0])
    if digits > MAX_DIGITS:
        return f"more than {MAX_DIGITS} digits"
    mantissa, _, exp_text = token.replace("E", "e").partition("e")
    exponent = int(exp_text) if exp_text else 0
    if abs(exponent) > MAX_EXPONENT:
        return f"exponent beyond ±{MAX_EXPONENT}"
    try:
        value = Fraction(Decimal(mantissa.replace(",", ""))) * Fraction(10) ** exponent
    except (InvalidOperation, ValueError):
        return "not a number"
    if "." not in mantissa and not exp_text:
        return value, None
    # "2.0e2" is written to the nearest ten: scientific notation states its precision.
    return value, len(mantissa.partition(".")[2]) - exponent


def _read_span(raw: str, anchor: Anchor) -> _Answer | str:
    """Read one span with the strict grammar and with math-verify; both must agree."""
    if len(raw) > 4 * MAX_SPAN_CHARS:
        return "not a single short answer"
    s = _strip_markup(raw)
    if not s:
        return "empty"
    if len(s) > MAX_SPAN_CHARS or "\n" in s:
        return "not a single short answer"
    latex = "\\" in s or "{" in s  # "1{,}200" is LaTeX without a backslash
    plain = s.replace("−", "-")  # U+2212 minus sign, common in rendered answers
    if latex:
        for pattern, repl in _LATEX_SUBS:
            plain = pattern.sub(repl, plain)
        if "\\" in plain.replace("\\frac", ""):
            return "LaTeX beyond a number or a fraction"
    # One space per run keeps the grammar's adjacent optional blanks from backtracking.
    plain = re.sub(r"[ \t]+", " ", plain).strip()
    m = _GRAMMAR.fullmatch(plain)
    if m is None:
        return "not a single plain number"
    if m["sign1"] and m["sign2"]:
        return "two signs"
    words = (m["units"] or "").split()
    units = [_singular(w) for w in words]
    if any(len(w) < 2 or w.lower() in _NOT_UNITS or _singular(w) in _NOT_UNITS for w in words):
        return "number words, scale words or connectives after the number"
    percent = bool(m["pct"])
    if units and units[0] in _PERCENT_WORDS:
        if percent:
            return "two percent markers"
        percent, units = True, units[1:]
    if any(w in _PERCENT_WORDS for w in units):
        return "percent word in an unexpected place"

    decimals: int | None = None
    if m["lnum"] is not None or m["pnum"] is not None:
        num_text, den_text = (
            (m["lnum"], m["lden"]) if m["lnum"] is not None else (m["pnum"], m["pden"])
        )
        num, den = _decimal_fraction(num_text), _decimal_fraction(den_text)
        if isinstance(num, str) or isinstance(den, str):
            return num if isinstance(num, str) else str(den)
        if den[0] == 0:
            return "zero denominator"
        written = num[0] / den[0]
    else:
        got = _decimal_fraction(m["int"])
        if isinstance(got, str):
            return got
        written, decimals = got
    if m["sign1"] == "-" or m["sign2"] == "-":
        written = -written
    exact = written / 100 if percent else written
    other_reading: Fraction | None = None
    sep = _ONE_GROUP.fullmatch(m["int"] or "")
    if sep is not None:
        thousands = Fraction(int(sep[1] + sep[2]))
        decimal = Fraction(int(sep[1] + sep[2]), 1000)
        other = decimal if "," in sep[0] else thousands
        if m["sign1"] == "-" or m["sign2"] == "-":
            other = -other
        other_reading = other / 100 if percent else other

    mv_value = _math_verify_read(_math_verify_input(s, m, latex), latex)
    if isinstance(mv_value, str):
        return mv_value
    if not _math_verify_equal(_sympy_rational(exact), mv_value):
        return f"math-verify reads {_clip(str(mv_value))!r}, the strict reading {_format(exact)!r}"
    return _Answer(
        extracted=Extracted(
            value=_format(exact),
            text=s,
            anchor=anchor,
            percent=percent,
            decimals=decimals,
            units=" ".join(units),
            currency=m["cur"] or "",
            parsed=_clip(str(mv_value), 80),
        ),
        exact=exact,
        written=written,
        other_reading=other_reading,
        mv_value=mv_value,
    )


def _math_verify_input(s: str, m: re.Match[str], latex: bool) -> str:
    """The span as math-verify should read it: LaTeX in math delimiters, plain text as is."""
    if latex:
        return f"${s}$"
    out = s.replace("−", "-")
    # math-verify's number pattern stops at an exponent ("2e2" reads as 2), has no leading
    # "+" and wants a minus after the currency sign; rewrite only those, so it still reads
    # the units, separators and percent itself.
    token = m["int"]
    if token is not None and ("e" in token or "E" in token):
        mantissa, _, exponent = token.replace("E", "e").partition("e")
        out = out.replace(token, f"{mantissa}*10^({int(exponent)})", 1)
    out = re.sub(r"^\+[ \t]*", "", out)
    out = re.sub(r"^-[ \t]*([$€£¥₹])[ \t]*", r"\1-", out)
    out = re.sub(r"^([$€£¥₹])[ \t]*\+[ \t]*", r"\1", out)
    return out


# --------------------------------------------------------------------------- math-verify


def _math_verify() -> Any:
    try:
        import math_verify
    except ImportError as exc:  # pragma: no cover - math-verify is a pinned dependency
        raise DependencyError("the deterministic equivalence pass needs `math-verify`") from exc
    return math_verify


# sympy and math_verify.errors ship no type information and only ``math_verify`` itself is
# listed in mypy's ignore_missing_imports, so they are imported as plain modules.
def _sympy() -> Any:
    return importlib.import_module("sympy")


def _timeout_exception() -> type[BaseException]:
    # math-verify's TimeoutException derives from BaseException, so ``except Exception``
    # alone would let it escape.
    exc: type[BaseException] = importlib.import_module("math_verify.errors").TimeoutException
    return exc


def _math_verify_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("math-verify")
    except PackageNotFoundError as exc:  # pragma: no cover - pinned dependency
        raise DependencyError("the deterministic equivalence pass needs `math-verify`") from exc


def _timeout() -> int | None:
    # math-verify times out with SIGALRM, which raises outside the main thread; there the
    # input bound (a short span that already passed the strict grammar) is the only bound.
    return MATH_VERIFY_TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


def _math_verify_read(mv_input: str, latex: bool) -> Any:
    """math-verify's single numeric reading of ``mv_input``, or the reason there is none."""
    mv = _math_verify()
    timeout_exc = _timeout_exception()
    config = mv.LatexExtractionConfig() if latex else mv.ExprExtractionConfig()
    try:
        got = mv.parse(
            mv_input,
            extraction_config=[config],
            fallback_mode="no_fallback",
            extraction_mode="first_match",
            parsing_timeout=_timeout(),
            raise_on_error=True,
        )
    except (Exception, timeout_exc) as exc:
        return f"math-verify could not parse it ({type(exc).__name__})"
    if len(got) != 1 or not isinstance(got[0], _sympy().Basic):
        return "math-verify found no single value"
    value = got[0]
    if not value.is_number:
        return "math-verify did not read a number"
    return value


def _math_verify_equal(a: Any, b: Any) -> bool | None:
    """math_verify.verify on two values; ``None`` when it errs or times out (never a guess)."""
    mv = _math_verify()
    timeout_exc = _timeout_exception()
    try:
        return bool(mv.verify(a, b, timeout_seconds=_timeout(), raise_on_error=True))
    except (Exception, timeout_exc):
        return None


def _sympy_rational(x: Fraction) -> Any:
    return _sympy().Rational(x.numerator, x.denominator)


def _format(x: Fraction) -> str:
    """Integer, terminating decimal, or ``p/q``: the value as a person would write it."""
    if x.denominator == 1:
        return str(x.numerator)
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d != 1:
        return f"{x.numerator}/{x.denominator}"
    text = format(Decimal(x.numerator) / Decimal(x.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# --------------------------------------------------------------------------- the pair


def _near(x: _Answer, y: _Answer, xv: Fraction, yv: Fraction) -> bool:
    """Whether one written decimal may be a rounding or truncation of the other value."""
    for this, tv, ov in ((x, xv, yv), (y, yv, xv)):
        d = this.extracted.decimals
        if d is not None and abs(tv - ov) < Fraction(10) ** -d:
            return True
    return False


def deterministic_equivalence(a: str, b: str) -> AnswerCheck:
    """Settle whether ``a`` and ``b`` give the same final number; unsure → not settled."""
    ra, rb = _extract(a), _extract(b)
    ea = None if isinstance(ra, str) else ra.extracted
    eb = None if isinstance(rb, str) else rb.extracted

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

    verdict = _math_verify_equal(ra.mv_value, rb.mv_value)
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
    )
