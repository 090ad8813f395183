"""Property tests of the trusted side of the sandbox wire (``_sandbox_proxy``, issue 36).

Whatever the candidate's process answers (any wire value, any exception, a malformed
reply), the tests' process runs no candidate-defined behaviour outside the declared
interface: with no declared classes it asks only for names and calls; every value a call
gives it is plain data built here; no exception it raises is a control-flow exception
(``StopIteration``, ``GeneratorExit``) or a ``BaseException`` that is not an
``Exception``. The candidate is a thread on real pipes speaking the wire protocol with
answers hypothesis draws; the tests' side is the real ``Candidate`` and proxy module.
"""

from __future__ import annotations

import builtins
import os
import sys
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jurat.checks

# The in-sandbox programs import each other as top-level modules, as they do in /opt/jurat.
sys.path.insert(0, str(Path(jurat.checks.__file__).parent))
import _sandbox_proxy as proxy  # noqa: E402
import _sandbox_wire as wire  # noqa: E402

PLAIN = (type(None), bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set,
         frozenset)
EXCEPTION_NAMES = sorted(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
) + ["Skipped", "Failed", "Exit", "OutcomeException", "WeirdName", ""]

# ------------------------------------------------------------------ what a candidate can say

_names = st.text(st.characters(codec="ascii"), max_size=12)
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
    st.tuples(st.just("f"), st.sampled_from(["nan", "inf", "-inf"])).map(list),
    st.tuples(st.just("b"), st.sampled_from(["", "aGk=", "%%%"])).map(list),
    st.tuples(st.just("r"), st.integers(0, 5), st.sampled_from(
        ["function", "Stack", "list", "L", "generator", "module", ""])).map(list),
    st.tuples(st.just("x"), st.integers(0, 5), _names,
              st.sampled_from(EXCEPTION_NAMES)).map(list),
    st.tuples(st.just("m"), st.integers(0, 5), st.sampled_from(
        ["math", "os", "sys", "re", "builtins", "x"])).map(list),
    st.just(["?", 1]), st.just([]),
)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=4).map(lambda xs: ["l", *xs]),
        st.lists(inner, max_size=4).map(lambda xs: ["t", *xs]),
        st.lists(inner, max_size=3).map(lambda xs: ["s", *xs]),
        st.lists(st.tuples(inner, inner).map(list), max_size=3).map(lambda xs: ["d", *xs]),
    )


WIRE_VALUES = st.recursive(_scalars, _containers, max_leaves=12)
REPLIES = st.one_of(
    WIRE_VALUES.map(lambda v: {"ok": v}),
    WIRE_VALUES.map(lambda v: {"ok": v, "after": [v], "kwafter": [["k", v]]}),
    st.fixed_dictionaries({
        "type": st.sampled_from(EXCEPTION_NAMES), "base": st.sampled_from(EXCEPTION_NAMES),
        "ref": st.one_of(st.none(), st.integers(0, 5)), "message": st.text(max_size=20),
    }).map(lambda e: {"raise": e}),
    st.sampled_from([{"stop": True}, {}, {"ok": 1, "raise": {}}, [], "x", {"raise": "x"}]),
)


class FakeCandidate:
    """The candidate's side of the pipes: says hello, then answers each request with the
    next drawn reply (``{"ok": null}`` once they run out), and records every request."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        to_candidate, from_candidate = os.pipe(), os.pipe()
        self.rx, self._their_tx = from_candidate[0], to_candidate[1]
        self._my_rx, self._my_tx = to_candidate[0], from_candidate[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        try:
            wire.write_frame(self._my_tx, {"ready": {"names": ["f", "g", "Stack"]}})
            while True:
                request = wire.read_frame(self._my_rx)
                self.requests.append(request)
                reply = self.replies.pop(0) if self.replies else {"ok": None}
                wire.write_frame(self._my_tx, reply)
        except (EOFError, OSError, wire.WireError):
            pass

    def __enter__(self) -> proxy.Candidate:
        self.thread.start()
        return proxy.Candidate(self.rx, self._their_tx, "solution_under_test",
                               frozenset(self.objects))

    objects: tuple[str, ...] = ()

    def __exit__(self, *exc: object) -> None:
        for fd in (self.rx, self._their_tx):
            os.close(fd)
        self.thread.join(timeout=5)
        for fd in (self._my_rx, self._my_tx):
            os.close(fd)
        sys.modules.pop("solution_under_test", None)


def _operations(module: Any) -> Iterator[Callable[[], Any]]:
    """What tests do with a candidate: HumanEval's calls, the issue's forged passes, and
    every special method a handle could be asked for (the name lookups are
    ``test_a_name_may_hold_functions``'s)."""
    yield lambda: module.f(1, [3, 1, 2])
    yield lambda: all(map(module.f, [1, 2]))
    yield lambda: not any(map(module.f, [1]))
    yield lambda: list(filter(module.f, [1, 2])) == []
    yield lambda: [x for x in map(module.f, [0, 1])]
    yield lambda: next(iter(map(module.f, [5])))
    result = _safely(lambda: module.g("expected-value"))
    yield lambda: "expected-value" in result
    yield lambda: len(result)
    yield lambda: bool(result)
    yield lambda: list(result)
    yield lambda: result == [1, 2]
    yield lambda: hash(result)
    yield lambda: str(result)
    yield lambda: repr(result)
    yield lambda: result[0]
    yield lambda: result.method(1)
    yield lambda: module.Stack().push(1)


def _safely(op: Callable[[], Any]) -> Any:
    try:
        return op()
    except Exception:
        return None


def _check_plain(value: Any, objects: tuple[str, ...], depth: int = 0, *,
                 looked_up: bool = False) -> None:
    """A value the candidate gave, as the tests hold it: plain data (fresh built-ins), an
    Instance only of a declared class, and, in a name's value (``looked_up``), Function
    handles, which can be called and do nothing else."""
    assert depth < 100
    if isinstance(value, proxy.Instance):
        assert value._type in objects
        return
    if looked_up and isinstance(value, proxy.Function):
        assert [n for n in dir(value) if not n.startswith("_")] == []
        return
    if looked_up and isinstance(value, type):
        # An exception class, rebuilt here under a safe built-in base.
        assert issubclass(value, Exception) and value.__module__ == "solution_under_test"
        assert not issubclass(value, StopIteration | StopAsyncIteration)
        return
    if looked_up and isinstance(value, types.ModuleType):
        assert value is sys.modules[value.__name__]  # the tests' own copy of a stdlib module
        return
    assert type(value) in PLAIN, type(value)
    if isinstance(value, list | tuple | set | frozenset):
        for item in value:
            _check_plain(item, objects, depth + 1, looked_up=looked_up)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_plain(key, objects, depth + 1, looked_up=looked_up)
            _check_plain(item, objects, depth + 1, looked_up=looked_up)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies=st.lists(REPLIES, max_size=30), declared=st.booleans())
def test_no_candidate_behaviour_runs_outside_the_declared_interface(
        replies: list[Any], declared: bool) -> None:
    fake = FakeCandidate(replies)
    fake.objects = ("Stack",) if declared else ()
    raised: list[BaseException] = []
    with fake as candidate:
        candidate.install()
        module = sys.modules["solution_under_test"]
        for operation in _operations(module):
            try:
                outcome = operation()
            except Exception as exc:  # noqa: BLE001 - anything but a BaseException is fine
                raised.append(exc)
                continue
            _check_plain(outcome, fake.objects)
        called = [r for r in fake.requests if r.get("op") == "call"]
    # No exception that steers a test's control flow ever reaches it.
    for exc in raised:
        assert not isinstance(exc, StopIteration | StopAsyncIteration), exc
    # Without declared classes the tests only ever looked names up and called them.
    ops = {r.get("op") for r in fake.requests}
    if not declared:
        assert ops <= {"get", "call"}, ops
    else:
        assert ops <= {"get", "call", "len", "bool", "str", "contains", "getitem", "iter"}
    # Arguments cross as data: the expected value the test compares with never does.
    for request in called:
        assert "expected-value" not in repr(request.get("kwargs"))


@settings(max_examples=80, deadline=None)
@given(value=WIRE_VALUES)
def test_a_name_may_hold_functions_and_nothing_else_that_acts(value: Any) -> None:
    with FakeCandidate([{"ok": value}]) as candidate:
        candidate.install()
        module = sys.modules["solution_under_test"]
        try:
            found = module.f
        except Exception as exc:
            assert not isinstance(exc, StopIteration | StopAsyncIteration)
            return
        _check_plain(found, (), looked_up=True)
        if isinstance(found, proxy.Function):
            for probe in (lambda: 1 in found, lambda: len(found), lambda: list(found),
                          lambda: found[0]):
                with pytest.raises(TypeError):
                    probe()
            assert found != found.__class__ and found == found and bool(found)


@pytest.mark.parametrize("name", ["StopIteration", "StopAsyncIteration", "GeneratorExit",
                                  "KeyboardInterrupt", "SystemExit", "BaseException"])
@pytest.mark.parametrize("own_class", [False, True])
def test_control_flow_exceptions_arrive_as_runtime_errors(name: str, own_class: bool) -> None:
    error = {"type": "Mine" if own_class else name, "base": name,
             "ref": 3 if own_class else None, "message": "m"}
    with FakeCandidate([{"ok": ["r", 1, "function"]}, {"raise": error}]) as candidate:
        candidate.install()
        module = sys.modules["solution_under_test"]
        with pytest.raises(RuntimeError, match="m"):
            module.f(1)


def test_in_place_changes_are_copied_back_into_the_callers_objects() -> None:
    after = ["l", ["l", 1, 2, 3], ["d", ["k", ["l", 9]]]]
    with FakeCandidate([{"ok": ["r", 1, "function"]},
                        {"ok": None, "after": after[1:], "kwafter": [["opt", ["l", 7]]]}]
                       ) as candidate:
        candidate.install()
        module = sys.modules["solution_under_test"]
        numbers, nested_inner = [3, 1, 2], [0]
        table = {"k": nested_inner}
        opt: list[int] = []
        assert module.f(numbers, table, opt=opt) is None
    assert numbers == [1, 2, 3]
    # The inner list the test still holds was changed in place, as a local call would.
    assert table == {"k": [9]} and table["k"] is nested_inner and nested_inner == [9]
    assert opt == [7]


def test_an_undeclared_object_is_not_plain_data() -> None:
    with FakeCandidate([{"ok": ["r", 1, "function"]}, {"ok": ["l", ["r", 2, "Evil"]]}]
                       ) as candidate:
        candidate.install()
        module = sys.modules["solution_under_test"]
        with pytest.raises(proxy.NotPlainData, match="returned Evil where plain data"):
            module.f()
