"""What counts as the same piece of work (issue 37, runner/_work.py): each rule merges what
it says and nothing that changes behaviour, whatever text it is given."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jurat.runner import same_work

PY = "text/x-python"
DIGEST = "sha256:" + "0" * 64

SOURCE = '''def median(values):
    """The middle value."""
    ordered = sorted(values)  # a copy
    middle = len(ordered) // 2
    return ordered[middle]
'''


def work(text: str, rule: str = "default", media: str = PY) -> str:
    return same_work(text, media, DIGEST, rule).sha256  # type: ignore[arg-type]


def test_python_tokens_ignore_formatting_and_comments_not_behaviour() -> None:
    reformatted = ("def median( values ):\n\n    '''The middle value.'''\n"
                   "    ordered = sorted( values )\n    middle = len( ordered )//2\n"
                   "    return ordered[ middle ]\n")
    assert work(reformatted) == work(SOURCE)
    assert work(SOURCE.replace("    # a copy", "")) == work(SOURCE)
    for changed in (SOURCE.replace("// 2", "// 3"), SOURCE.replace("ordered[middle]",
                                                                   "ordered[middle - 1]"),
                    SOURCE.replace("values", "xs")):
        assert work(changed) != work(SOURCE)
    assert same_work(SOURCE, PY, DIGEST).rule == "jurat.work/v1/python-tokens"


def test_the_ast_form_also_ignores_docstrings_and_local_names() -> None:
    renamed = ("def median(xs):\n    s = sorted(xs)\n    m = len(s) // 2\n    return s[m]\n")
    assert work(renamed, "python-ast") == work(SOURCE, "python-ast")
    assert work(renamed) != work(SOURCE)  # the default keeps names and docstrings
    # The function's own name is its interface: it is never renamed.
    assert work(renamed.replace("def median", "def middle"), "python-ast") != work(
        SOURCE, "python-ast")
    # A global read is not a local: renaming it changes the work.
    assert work("def f(x):\n    return x + LIMIT\n", "python-ast") != work(
        "def f(x):\n    return x + OTHER\n", "python-ast")


def test_a_weaker_form_applies_when_a_stronger_one_cannot_read_the_text() -> None:
    broken = "def median(values:\n    return 1\n"
    assert same_work(broken, PY, DIGEST, "python-ast").rule == "jurat.work/v1/text"
    assert same_work("x = (1 +\n", PY, DIGEST).rule == "jurat.work/v1/text"
    deep = "X = " + "[" * 150 + "1" + "]" * 150 + "\n"
    assert same_work(deep, PY, DIGEST, "python-ast").rule.endswith(("python-tokens", "/text"))
    assert same_work("no answer here", "text/plain", DIGEST, "answer").rule.endswith("/text")


def test_answers_by_their_canonical_value() -> None:
    assert work("The answer is $1,200.", "answer", "text/plain") == work(
        "#### 1200", "answer", "text/plain")
    assert work("#### 1200", "answer", "text/plain") != work("#### 1201", "answer",
                                                              "text/plain")


def test_bytes_and_pairs_are_the_artifact_digest() -> None:
    assert same_work(" 42", "text/plain", DIGEST, "bytes").rule == "jurat.work/v1/bytes"
    assert work(" 42", "bytes", "text/plain") == work("42 ", "bytes", "text/plain")  # digest
    pair = same_work(None, "application/vnd.jurat.pair+json", DIGEST)
    assert pair.rule == "jurat.work/v1/bytes"


@given(st.text(max_size=200), st.sampled_from([" ", "\n", "\t", "\r\n", "  \n"]))
def test_text_ignores_surrounding_whitespace_and_normal_forms(text: str, blank: str) -> None:
    base = work(text, media="text/plain")
    assert work(blank + text + blank, media="text/plain") == base
    assert work(unicodedata.normalize("NFD", text), media="text/plain") == work(
        unicodedata.normalize("NFC", text), media="text/plain")


_NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(
    lambda n: n not in {"def", "return", "if", "else", "for", "in", "and", "or", "not", "is",
                        "as", "del", "try", "with", "pass", "from", "while", "class", "elif",
                        "import", "global", "lambda", "yield", "raise", "break", "async",
                        "await", "assert", "except", "finally", "continue", "nonlocal",
                        "sorted", "len"})


@given(st.lists(_NAMES, min_size=3, max_size=3, unique=True), st.text(
    st.characters(codec="ascii", exclude_characters="\r\n"), max_size=30))
def test_comments_blank_lines_and_renamed_locals(names: list[str], comment: str) -> None:
    a, b, c = names
    source = f"def f({a}):\n    {b} = {a} * 2\n    {c} = {b} + 1\n    return {c}\n"
    commented = source.replace("\n    return", f"  # {comment}\n\n    return")
    assert work(commented) == work(source)
    canonical = "def f(x):\n    y = x * 2\n    z = y + 1\n    return z\n"
    assert work(source, "python-ast") == work(canonical, "python-ast")
    assert work(source.replace("* 2", "* 3"), "python-ast") != work(canonical, "python-ast")


@pytest.mark.parametrize("rule", ["default", "text", "python-tokens", "python-ast", "answer"])
@given(text=st.text(max_size=300))
def test_any_text_gets_a_work_and_never_an_error(rule: str, text: str) -> None:
    found = same_work(text, PY, DIGEST, rule)  # type: ignore[arg-type]
    assert found.rule.startswith("jurat.work/v1/") and len(found.sha256) == 64
