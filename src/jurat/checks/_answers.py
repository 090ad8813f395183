"""Extract one final answer from a text, read with certainty or not at all (seed 002).

The deterministic equivalence pass (``_equivalence``) settles a pair only on what this module
extracts, so extraction is *conservative*: a text yields an answer only when

1. it holds exactly one confidently located final answer: an explicit anchor
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
   strict grammar alone would be a second copy of math-verify's normalisation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Literal

from jurat.checks._guard import CAUSES, cause_of
from jurat.checks._mathverify import math_verify_equal, math_verify_read, sympy_rational
from jurat.errors import ValidationError
from jurat.models import Frozen

__all__ = ["Answer", "Extracted", "extract_answer", "extract_final_answer"]

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

Anchor = Literal["boxed", "####", "A:", "answer", "bare"]


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


# --------------------------------------------------------------------------- extraction


@dataclass(frozen=True)
class Answer:
    """One extracted answer with the exact readings the pair comparison needs."""

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
# Linear by construction: no two unbounded runs of one class are adjacent. Written as
# "[ \t]*(?:\*\*)?[ \t]*" (the same language), "answer" and n blanks backtracked n²/2 steps
# (100,000 characters: minutes on the event loop that runs this pass).
_ANSWER_WORD = re.compile(
    r"\banswer(?:[ \t]+is)?[ \t]*(?:\*\*[ \t]*)?[:=：]|\banswer[ \t]+is\b", re.IGNORECASE
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


#: Why no answer was extracted, as the kinds a trusted record may carry: the reasons
#: themselves quote the answer's text (``boxed '…': not a number``).
NO_ANSWER_KINDS: tuple[tuple[str, str], ...] = (
    ("a \\boxed{} is unclosed", "unclosed-box"),
    ("more than ", "too-many-markers"),
    ("answer text longer than", "too-long"),
    ("empty answer", "empty"),
    ("no final-answer marker", "no-marker"),
    ("conflicting final answers", "conflicting"),
    ("numbers follow the final answer", "revised"),
    # The extractor itself gave up (``_guard``): the cause is the kind.
    *((cause, cause) for cause in CAUSES),
)


def no_answer_kind(reason: str) -> str:
    """The kind of a reason ``extract_answer`` gave (``unreadable`` for a span it could not
    read as a number)."""
    for prefix, kind in NO_ANSWER_KINDS:
        if reason.startswith(prefix):
            return kind
    return "unreadable"


def extract_answer(text: str) -> Answer | str:
    """The one final answer in ``text``, or the reason it was not confidently extracted.

    The work is linear in the text, capped at ``MAX_TEXT_CHARS``; a failure of the
    extractor is a reason too, whose kind (``no_answer_kind``) is its cause (``_guard``)."""
    if not isinstance(text, str):
        raise ValidationError(f"an answer must be a string, got {type(text).__name__}")
    if len(text) > MAX_TEXT_CHARS:
        return f"answer text longer than {MAX_TEXT_CHARS} characters"
    try:
        return _extract(text)
    except Exception as exc:
        # Whatever a text makes the extractor raise leaves the pair to the judge, with a
        # named cause (its message could quote the text): never a settlement, never a
        # run ended by one answer.
        cause = cause_of(exc)
        if cause is None:
            raise
        return f"{cause}: the extractor gave up on this text"


def _extract(text: str) -> Answer | str:
    """``extract_answer`` on a text within ``MAX_TEXT_CHARS``."""
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
    answers: list[Answer] = []
    reads: dict[tuple[str, Anchor], Answer] = {}
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
    got = extract_answer(text)
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


def _read_span(raw: str, anchor: Anchor) -> Answer | str:
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

    mv_value = math_verify_read(_math_verify_input(s, m, latex), latex)
    if isinstance(mv_value, str):
        return mv_value
    if not math_verify_equal(sympy_rational(exact), mv_value):
        return f"math-verify reads {_clip(str(mv_value))!r}, the strict reading {_format(exact)!r}"
    return Answer(
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
