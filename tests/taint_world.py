"""The world of ``tests/test_taint.py`` (issue 25): two random markers, a hostile candidate
that writes one through every channel it can reach, hidden tests that carry the other, the
campaigns that run them, and a scanner that finds either marker in any output.

The rule under test: nothing the judged party wrote reaches a trusted output (a receipt,
the board, the report, a contributor-facing service response, a judge prompt outside its
delimited data blocks) except as digests, counts, enums or range-checked numbers; and the
hidden tests reach none of them, not even inside delimited blocks.

Every marker is ``CANDMARK<16 hex>`` or ``HIDDENMARK<16 hex>`` (drawn per test run) followed
by ``_<tag>``, the tag naming the channel it was written through (``_ret_str``,
``_exc_custom``, ``_patch_num``, ``_paramid``, …), so a finding says which channel leaked.
The candidate also echoes what the hidden tests passed it (``|arg=…``): a candidate sees
its arguments, and can write them wherever it writes its own marker.

The candidate never names the hidden marker and the hidden tests never name the candidate
marker: a hidden marker in an output came from the tests (or through the candidate's echo
of their arguments), a candidate marker came from the candidate.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: How many characters of context a finding shows on each side of the marker.
CONTEXT = 80
#: How long the last hidden test waits after asking the candidate to turn hostile, so the
#: candidate's patches are in place before the tests' side asks for coverage; and how long
#: the candidate waits after answering before it patches (its answer must go out first).
FINALE_WAIT_S = 0.6
PATCH_DELAY_S = 0.05


@dataclass(frozen=True)
class Markers:
    """The two markers of one test run."""

    cand: str
    hidden: str

    @classmethod
    def draw(cls) -> Markers:
        return cls(cand="CANDMARK" + secrets.token_hex(8),
                   hidden="HIDDENMARK" + secrets.token_hex(8))

    def named(self) -> tuple[tuple[str, str], ...]:
        return (("candidate", self.cand), ("hidden", self.hidden))


# --------------------------------------------------------------------------- the candidate

#: How the candidate patches every non-standard-library module in its process at the end
#: of the run (after its last honest answer): each mode is one artifact.
#:
#: - ``return``: every function (module level and every class's methods) returns the
#:   marker; every str global is the marker;
#: - ``raise``: every function raises an exception whose class name and message carry it;
#: - ``num``: every function runs as before, but each number in what it returns (nested
#:   in lists, tuples and dict values too) becomes the marker: type confusion, the shape
#:   of the data kept.
PATCH_MODES = ("return", "raise", "num")

_CANDIDATE = r'''"""Solution module. Docstring: @@M@@_docstring"""
# A comment: @@M@@_comment
import atexit
import os
import sys
import threading
import time

try:
    import @@M@@_import_missing  # noqa: F401
except ImportError:
    pass
try:
    import threading.@@M@@_warned_submodule  # noqa: F401
except ImportError:
    pass

MARK = "@@M@@"
MODE = "@@MODE@@"
FAIL = @@FAIL@@
GLOBAL_@@M@@_str = MARK + "_global_str"
_SEEN = []


def _m(tag):
    """The marker, its channel, and the last texts the tests passed in, as one word (an
    output that quotes a token quotes all of it)."""
    seen = "".join("_arg_" + "".join(c if c.isalnum() else "_" for c in s) for s in _SEEN[-3:])
    return MARK + "_" + tag + seen


def _saw(*args):
    for a in args:
        if isinstance(a, str):
            _SEEN.append(a[:60])
    print(_m("stdout"))
    print(_m("stderr"), file=sys.stderr)


class @@M@@_Error(ValueError):
    """An exception class named with the marker: @@M@@_class_doc"""


class Thing:
    """An object whose every text carries the marker: @@M@@_thing_doc (its class name is
    the campaign's ``objects`` declaration, which is the operator's text)."""

    def __repr__(self):
        return _m("repr")

    def __str__(self):
        return _m("str")

    def __len__(self):
        return 3

    def __bool__(self):
        return True

    def __iter__(self):
        return iter([_m("iter")])

    def __getitem__(self, key):
        _saw(key)
        return _m("getitem")

    def __contains__(self, key):
        _saw(key)
        return True

    def method_@@M@@(self):
        return _m("method")


def add(a, b):
    _saw(a, b)
    if FAIL and a == 2:
        return a + b + 1
    return a + b


def f_@@M@@_fn(x):
    _saw(x)
    return x * 2


def greet(name):
    _saw(name)
    if FAIL:
        raise @@M@@_Error(_m("exc_unexpected"))
    return "hello " + str(name) + " " + _m("ret_str")


def thing():
    return Thing()


def mapping():
    return {_m("key"): _m("value"), "n": 1, "nested": [_m("nested"), (_m("tuple"),)]}


def gen():
    yield _m("gen_1")
    yield _m("gen_2")


def boom():
    raise @@M@@_Error(_m("exc_custom"))


def boom_builtin():
    raise ValueError(_m("exc_value"))


def boom_key():
    raise KeyError(_m("exc_key"))


def boom_system_exit():
    raise SystemExit(_m("exc_system_exit"))


def _write_files(_m=_m):
    written = 0
    for where in ("/work", "/tmp", os.getcwd(), os.path.expanduser("~")):
        for name in (MARK + "_file_name", "notes.txt"):
            try:
                with open(os.path.join(where, name), "w") as handle:
                    handle.write(_m("file_content"))
                written += 1
            except OSError:
                pass
    return written


def write_files():
    return _write_files()


def _spray_fds(_m=_m):
    data = ("\n" + _m("fd") + "\n").encode()
    for fd in range(256):
        try:
            os.fstat(fd)
            os.write(fd, data)
        except OSError:
            pass


def _patched(original, tag, _mark=_m, _mode=MODE, _error=@@M@@_Error):
    def numbers(value, depth=0):
        if depth > 20 or isinstance(value, bool):
            return value
        if isinstance(value, (int, float)):
            return _mark(tag)
        if isinstance(value, list):
            return [numbers(v, depth + 1) for v in value]
        if isinstance(value, tuple):
            return tuple(numbers(v, depth + 1) for v in value)
        if isinstance(value, dict):
            return {k: numbers(v, depth + 1) for k, v in value.items()}
        return value

    def replacement(*args, **kwargs):
        if _mode == "return":
            return _mark(tag)
        if _mode == "raise":
            raise _error(_mark(tag))
        return numbers(original(*args, **kwargs))

    return replacement


def _patch_everything(_patched=_patched, _mark=_m, _mode=MODE):
    """Every function and str global of every non-stdlib module in this process."""
    stdlib = os.path.dirname(os.__file__) + os.sep
    modules = getattr(sys, "".join(("mod", "ules")))
    tag = "patch_" + _mode
    keep = ("__new__", "__init__", "__init_subclass__")
    patched = 0
    for name, module in list(modules.items()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        if path.startswith(stdlib) and "-packages" not in path:
            continue
        table = getattr(module, "__dict__", {})
        for attr, value in list(table.items()):
            if attr.startswith("__") and attr.endswith("__"):
                continue
            try:
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    for meth, fn in list(value.__dict__.items()):
                        if callable(fn) and meth not in keep:
                            try:
                                setattr(value, meth, _patched(fn, tag))
                                patched += 1
                            except (AttributeError, TypeError):
                                pass
                if isinstance(value, str):
                    setattr(module, attr, _mark("patch_str_global"))
                    patched += 1
                elif callable(value):
                    setattr(module, attr, _patched(value, tag))
                    patched += 1
            except (AttributeError, TypeError):
                pass
    return patched


def _turn_hostile(_write_files=_write_files, _patch_everything=_patch_everything):
    time.sleep(@@DELAY@@)
    _write_files()
    _patch_everything()


def finale():
    """Called by the last test: answer honestly, then turn hostile."""
    threading.Thread(target=_turn_hostile, daemon=True).start()
    return True


def _at_exit(_m=_m, _write_files=_write_files, _spray_fds=_spray_fds):
    print(_m("stdout_exit"))
    print(_m("stderr_exit"), file=sys.stderr)
    _write_files()
    _spray_fds()


atexit.register(_at_exit)
print(_m("stdout_import"))
print(_m("stderr_import"), file=sys.stderr)
if @@CRASH@@:
    raise @@M@@_Error(_m("import_crash"))
'''


def candidate_source(markers: Markers, mode: str, *, fail: bool = False,
                     crash: bool = False) -> str:
    """The hostile candidate: passes the hidden tests (``fail``: fails some of them;
    ``crash``: raises while it is imported, after printing)."""
    assert mode in PATCH_MODES, mode
    text = (
        _CANDIDATE.replace("@@M@@", markers.cand)
        .replace("@@MODE@@", mode)
        .replace("@@FAIL@@", "True" if fail else "False")
        .replace("@@CRASH@@", "True" if crash else "False")
        .replace("@@DELAY@@", repr(PATCH_DELAY_S))
    )
    assert markers.hidden not in text
    return text


def unparseable_source(markers: Markers) -> str:
    """A candidate that does not parse, on a line that carries the marker."""
    return (
        f'"""{markers.cand}_docstring"""\n'
        "def ok():\n"
        "    return 1\n"
        f"{markers.cand}_parse_line = ok(1,\n"
    )


# --------------------------------------------------------------------------- hidden tests


def hidden_test_name(markers: Markers) -> str:
    return f"test_hidden_{markers.hidden}_fname.py"


_HIDDEN = r'''"""Hidden tests: @@H@@_docstring"""
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solution
from solution import add as _add_at_collection  # noqa: F401

SECRET = "@@H@@_constant"


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param(1, 2, 3, id="@@H@@_paramid_small"),
        pytest.param(2, 2, 4, id="@@H@@_paramid_fails_when_hostile"),
    ],
)
def test_add_@@H@@_testname(a, b, expected):
    assert solution.add(a, b) == expected, "@@H@@_assertmsg_add " + SECRET


@pytest.mark.parametrize("word", ["@@H@@_paramval", "plain"])
def test_greet_@@H@@_testname(word):
    out = solution.greet(word)
    assert out.startswith("hello " + word), "@@H@@_assertmsg_greet"


def test_named_function_@@H@@_testname():
    names = [n for n in solution.__all__ if n.startswith("f_")]
    assert getattr(solution, names[0])(21) == 42, "@@H@@_assertmsg_named"


def test_objects_@@H@@_testname():
    t = solution.thing()
    assert len(str(t)) > 0 and len(t) == 3 and bool(t), "@@H@@_assertmsg_objects"
    assert "@@H@@_contains_probe" in t
    assert len(t["@@H@@_getitem_probe"]) > 0
    assert solution.mapping()["n"] == 1
    with pytest.raises(Exception):  # a generator is not plain data: NotPlainData
        solution.gen()
    assert len(list(t)) == 1


def test_raises_@@H@@_testname():
    with pytest.raises(ValueError, match="_exc_custom"):
        solution.boom()
    with pytest.raises(ValueError):
        solution.boom_builtin()
    with pytest.raises(KeyError):
        solution.boom_key()
    with pytest.raises(Exception):
        solution.boom_system_exit()


def test_files_@@H@@_testname():
    assert solution.write_files() >= 1, "@@H@@_assertmsg_files"


@settings(max_examples=5)
@given(st.integers(min_value=0, max_value=9))
def test_property_@@H@@_testname(n):
    assert solution.add(n, 0) == n, "@@H@@_assertmsg_property"


def test_zz_finale_@@H@@_testname():
    assert solution.finale() is True, "@@H@@_assertmsg_finale"
    time.sleep(@@WAIT@@)
'''


def hidden_tests(markers: Markers) -> str:
    text = _HIDDEN.replace("@@H@@", markers.hidden).replace("@@WAIT@@", repr(FINALE_WAIT_S))
    assert markers.cand not in text
    return text


# --------------------------------------------------------------------------- campaigns


def judge_table(url: str) -> str:
    return f"""
[[judges]]
id = "loopback"
provider = "openai-compat"
base_url = "{url}"
model = "fake-judge"
samples = 1
retries = 0
timeout_s = 20
"""


def campaign_toml(cid: str, url: str, tests: str, artifacts: Iterable[tuple[str, str]], *,
                  mutation: bool, max_mutants: int = 2) -> str:
    """A rubric campaign: required hard gates, the hidden tests with coverage (and mutation),
    one loopback judge that is asked even after a veto, so every evidence path is prompted."""
    body = f"""\
[campaign]
id = "{cid}"
kind = "rubric"
risk_tier = {{ votes = 1, min_agreement = 1.0 }}
allowed_destinations = ["{url}"]
judge_after_veto = true

[rubric]
version = "taint/1"
threshold = 0.5
hard_gates = ["python.parse", "python.imports", "tests.pass"]
criteria = [
  {{ id = "correctness", weight = 0.7 }},
  {{ id = "presentation", weight = 0.3 }},
]

[checks.python]
tests = "{tests}"
coverage = true
mutation = {"true" if mutation else "false"}
max_mutants = {max_mutants}
objects = ["Thing"]
limits = {{ wall_s = 30, cpu_s = 15, memory_mb = 384, procs = 32 }}
""" + judge_table(url)
    for aid, path in artifacts:
        body += f'\n[[artifacts]]\nid = "{aid}"\npath = "{path}"\n'
    return body


# --------------------------------------------------------------------------- scanning


@dataclass(frozen=True)
class Finding:
    marker: str
    """``candidate`` or ``hidden``."""
    output: str
    """The output: a file, a request, an endpoint."""
    path: str
    """Where in it: the JSON path of the string ('' for plain text)."""
    channels: tuple[str, ...]
    """The tags after the marker in that string: which channel wrote it."""
    context: str
    """About CONTEXT characters either side of the first occurrence."""

    def line(self) -> str:
        where = f"{self.output} {self.path}".rstrip()
        return f"[{self.marker}] {where}: …{self.context}… (tags: {', '.join(self.channels)})"

    snippet: str = ""
    """In a long text, the words just before the marker, normalised: what says where."""

    @property
    def field(self) -> str:
        """The path, folded: list indexes dropped, the envelope around a receipt dropped;
        in a long text, with the words before the marker."""
        folded = _INDEX.sub("[]", self.path).rsplit("<base64>", 1)[-1]
        if self.snippet:
            return f"{folded or '(text)'} at “{self.snippet}”"
        return folded or "(text)"


def _context(text: str, start: int, end: int) -> str:
    left = max(0, start - CONTEXT)
    return text[left:end + CONTEXT].replace("\n", "⏎")


def find(text: str, marker: str) -> Iterator[tuple[int, int]]:
    """Every place of the marker; a marker cut short after 12 of its random characters
    (an output that truncates text) is still found."""
    probe = marker[: len(marker) - 4]
    start = 0
    while True:
        i = text.find(probe, start)
        if i < 0:
            return
        yield i, i + len(probe)
        start = i + len(probe)


_TAG = re.compile(r"[0-9a-f]*(_[A-Za-z0-9_]*)?")
_INDEX = re.compile(r"\[\d+\]")


def _hits(text: str, output: str, path: str, markers: Markers, only: str | None,
          seen: set[Any]) -> list[Finding]:
    found: list[Finding] = []
    for label, marker in markers.named():
        if only is not None and label != only:
            continue
        places = list(find(text, marker))
        # One finding per (marker, place with list indexes folded) in an output.
        key = (label, _INDEX.sub("[]", path))
        if not places or key in seen:
            continue
        seen.add(key)
        tags = []
        for _, end in places:
            tag = _TAG.match(text, end)
            name = (tag.group(1) if tag else None) or "?"
            if name not in tags:
                tags.append(name)
        start, end = places[0]
        found.append(Finding(label, output, path, tuple(tags), _context(text, start, end),
                             _snippet(text, start, markers) if len(text) > 200 else ""))
    return found


_HEX = re.compile(r"[0-9a-f]{8,}")
_DIGITS = re.compile(r"\d+")


def _snippet(text: str, start: int, markers: Markers) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 50):start]
    for label, marker in markers.named():
        before = before.replace(marker, f"<{label}>")
    before = _DIGITS.sub("N", _HEX.sub("<hex>", before))
    return before.strip() + "<marker>"


def scan(data: bytes | str, where: str, markers: Markers, *, only: str | None = None,
         path: str = "") -> list[Finding]:
    """Findings of either marker (``only``: of that one) in ``data``. JSON (a document, or
    one per line) is searched string by string and each finding names its path; strings
    that are base64 are decoded and searched too (receipts carry their payload in base64),
    as are base64 runs in other text."""
    seen: set[Any] = set()
    found: list[Finding] = []
    for inner, text in texts_of(data):
        found += _hits(text, where, path + inner, markers, only, seen)
    return found


def texts_of(data: bytes | str, path: str = "", depth: int = 0) -> Iterator[tuple[str, str]]:
    """(path, text) for every string inside ``data`` (see ``scan``)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if depth > 4:
        yield path, text
        return
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        document = None
    else:
        if isinstance(document, (dict, list)):
            yield from _json_texts(document, path or "$", depth)
            return
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if len(lines) > 1:
        try:
            rows = [json.loads(ln) for ln in lines]
        except ValueError:
            rows = []
        if rows and all(isinstance(r, dict) for r in rows):
            for i, row in enumerate(rows, start=1):
                yield from _json_texts(row, f"{path}line {i}:$", depth)
            return
    yield path, text
    for run in _B64_RUN.findall(text):
        inner = _b64(run)
        if inner is not None:
            yield from texts_of(inner, f"{path}<base64>", depth + 1)


def _json_texts(value: Any, path: str, depth: int) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield f"{path}.<key>", str(k)
            yield from _json_texts(v, f"{path}.{k}", depth)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            name = v.get("id") if isinstance(v, dict) else None
            step = f"[id={name}]" if isinstance(name, str) and len(name) < 40 else f"[{i}]"
            yield from _json_texts(v, path + step, depth)
    elif isinstance(value, str):
        yield path, value
        inner = _b64(value) if len(value) >= 40 else None
        if inner is not None:
            yield from texts_of(inner, f"{path}<base64>", depth + 1)


_B64_RUN = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")


def _b64(value: str) -> str | None:
    try:
        raw = base64.b64decode(value, validate=True)
    except (ValueError, binascii.Error):
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def scan_tree(root: Path, label: str, markers: Markers) -> list[Finding]:
    """Every file under ``root``, recursively, its file name included."""
    found: list[Finding] = []
    for path in sorted(p for p in root.rglob("*")):
        rel = f"{label}/{path.relative_to(root)}"
        found += scan(str(path.relative_to(root)), f"{rel} (file name)", markers)
        if path.is_file():
            found += scan(path.read_bytes(), rel, markers)
    return found


_BLOCK = re.compile(r"<<<([A-Z][A-Z0-9 ]*?) ([0-9a-f]{8,64})>>>\n(.*?)\n<<<END \1 \2>>>", re.S)


def strip_blocks(text: str) -> str:
    """The text with every delimited data block (``models._taint.data_block``) removed."""
    previous = None
    while previous != text:
        previous = text
        text = _BLOCK.sub("<<<data block removed>>>", text)
    return text


def strings_of(value: Any) -> Iterator[tuple[str, str]]:
    """(JSON path, string) for every string in a JSON document, keys included."""
    yield from _json_texts(value, "$", 5)


@dataclass
class Findings:
    """Everything found, and what was looked at (so an empty list means something)."""

    items: list[Finding] = field(default_factory=list)
    looked_at: list[str] = field(default_factory=list)
    info: list[Finding] = field(default_factory=list)

    def add(self, where: str, found: list[Finding]) -> None:
        self.looked_at.append(where)
        self.items.extend(found)

    def merge(self, other: Findings) -> None:
        self.items += other.items
        self.looked_at += other.looked_at
        self.info += other.info

    def report(self) -> str:
        lines = [f"{len(self.items)} leak(s) in {len(self.looked_at)} outputs looked at."]
        lines.append("By field (marker, where in the output; how many outputs; one example):")
        groups: dict[tuple[str, str], list[Finding]] = {}
        for f in self.items:
            groups.setdefault((f.marker, f.field), []).append(f)
        for (marker, name), items in groups.items():
            lines.append(f"  [{marker}] {name}: {len(items)} output(s), e.g. {items[0].output}")
            lines.append(f"      …{items[0].context}…")
        lines.append("Every finding:")
        lines += [f"  {f.line()}" for f in self.items]
        if self.info:
            lines.append("not asserted (operator-only, for the record):")
            lines += [f"  {f.line()}" for f in self.info]
        return "\n".join(lines)
