"""Issue 36's forged passes and their generalisations, through the real sandbox.

A wrong program passed hidden tests through behaviour the sandbox let into the trusted
test process: a function that only raises ``StopIteration`` passed ``all(map(f, good))``
(``map`` read it as the end of the iteration), and a function returning an object of its
own class passed ``x in result`` (the proxy forwarded ``__contains__`` to it, with the
expected value as the argument). Each hostile candidate below runs against the same test
file as an honest one: the honest one passes every test, every hostile one passes none.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from jurat.checks import SandboxRun, cores, run_tests
from jurat.models._checks import Limits

LIMITS = Limits(wall_s=30, cpu_s=10)

TESTS = """\
from solution import evens, is_even

GOOD, BAD = [0, 2, 4], [1, 3, 5]


def test_all_map():
    assert all(map(is_even, GOOD))


def test_not_any_map():
    assert not any(map(is_even, BAD))


def test_filter():
    assert list(filter(is_even, BAD)) == []


def test_for_loop_counts():
    seen = 0
    for ok in map(is_even, GOOD + BAD):
        seen += 1
    assert seen == 6


def test_generator_expression():
    assert sum(1 for x in GOOD if is_even(x)) == 3


def test_in():
    assert 4 in evens([1, 4, 5])


def test_not_in():
    assert 5 not in evens([1, 4, 5])


def test_len():
    assert len(evens([2, 3, 4])) == 2


def test_iteration():
    assert [x * 10 for x in evens([2, 3])] == [20]


def test_equality():
    assert evens([1, 2]) == [2]


def test_truthiness():
    assert evens([2]) and not evens([1])


def test_indexing():
    assert evens([7, 8])[0] == 8


def test_text():
    assert str(evens([6])) == "[6]"
"""

HONEST = """\
def is_even(x):
    return x % 2 == 0


def evens(xs):
    return [x for x in xs if x % 2 == 0]
"""

_RAISES = """\
class Mine({base}):
    pass


def is_even(x):
    raise {raised}


def evens(xs):
    raise {raised}
"""

_OBJECT = """\
class Liar:
    def __contains__(self, item):
        return True

    def __len__(self):
        return {length}

    def __iter__(self):
        return iter([20, 8])

    def __eq__(self, other):
        return True

    def __bool__(self):
        return {truth}

    def __getitem__(self, key):
        return 8

    def __str__(self):
        return "[6]"

    def __hash__(self):
        return 0


def is_even(x):
    return {predicate}


def evens(xs):
    return {evens}
"""

HOSTILE = {
    "raises_StopIteration": _RAISES.format(base="Exception", raised="StopIteration"),
    "raises_StopIteration_subclass": _RAISES.format(base="StopIteration", raised="Mine()"),
    "raises_StopAsyncIteration": _RAISES.format(base="Exception",
                                                raised="StopAsyncIteration"),
    "raises_GeneratorExit": _RAISES.format(base="Exception", raised="GeneratorExit"),
    "raises_KeyboardInterrupt": _RAISES.format(base="KeyboardInterrupt", raised="Mine()"),
    "own_object": _OBJECT.format(length=2, truth="True", predicate="Liar()",
                                 evens="Liar()"),
    "own_object_in_a_list": _OBJECT.format(length=2, truth="True",
                                           predicate="[Liar()][0]", evens="[Liar()]"),
    "own_object_falsy": _OBJECT.format(length=0, truth="False", predicate="Liar()",
                                       evens="Liar()"),
    "generator": "def is_even(x):\n    yield True\n\n\n"
                 "def evens(xs):\n    return (x for x in xs if x % 2 == 0)\n",
    "function": "def is_even(x):\n    return is_even\n\n\n"
                "def evens(xs):\n    return evens\n",
}


def _run(source: str, tests: str = TESTS, objects: tuple[str, ...] = ()) -> SandboxRun:
    return run_tests({"solution.py": source, "test_solution.py": tests},
                     ["test_solution.py"], limits=LIMITS, coverage=False, objects=objects)


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[str, SandboxRun]]:
    cases = {"honest": HONEST, **HOSTILE}
    with ThreadPoolExecutor(cores()) as pool:
        futures = {name: pool.submit(_run, source) for name, source in cases.items()}
        yield {name: future.result() for name, future in futures.items()}


def test_the_honest_candidate_passes_every_test(runs: dict[str, SandboxRun]) -> None:
    run = runs["honest"]
    assert run.outcome == "passed" and run.passed == run.collected == 13, run.tests


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_candidate_passes_no_test(runs: dict[str, SandboxRun], name: str) -> None:
    run = runs[name]
    assert run.outcome == "failed" and run.collected == 13
    passed = [t.index for t in run.tests if t.outcome == "passed"]
    assert passed == [], (name, passed, run.tests)
    # Every control-flow exception arrives as a RuntimeError (a class of the candidate's as
    # a local subclass of it, named CandidateException here), every foreign value as
    # NotPlainData: none of them is read by the test's own code as anything else.
    raised = {t.raised for t in run.tests}
    assert raised <= {"RuntimeError", "CandidateException", "NotPlainData", "AssertionError",
                      "TypeError"}, raised


# ------------------------------------------------------------------ the declared interface

STACK_TESTS = """\
from solution import Stack, median


def test_push_pop():
    s = Stack()
    s.push(1)
    s.push(2)
    assert len(s) == 2 and 2 in s and 3 not in s
    assert list(s) == [1, 2] and s.items == [1, 2]
    assert s.pop() == 2 and len(s) == 1 and bool(s)


def test_empty():
    s = Stack()
    assert not s and len(s) == 0 and list(s) == []


def test_median_sorts_its_argument_in_place():
    values = [5, 1, 3]
    assert median(values) == 3
    assert values == [1, 3, 5]
"""

STACK = """\
class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    def __len__(self):
        return len(self.items)

    def __contains__(self, x):
        return x in self.items

    def __iter__(self):
        return iter(self.items)


def median(xs):
    xs.sort()
    return xs[len(xs) // 2]
"""

LYING_STACK = STACK.replace("return x in self.items", "return True").replace(
    "return len(self.items)", "return 2")


def test_a_declared_class_based_task_passes_and_a_wrong_one_fails() -> None:
    with ThreadPoolExecutor(cores()) as pool:
        right = pool.submit(_run, STACK, STACK_TESTS, ("Stack",))
        wrong = pool.submit(_run, LYING_STACK, STACK_TESTS, ("Stack",))
        undeclared = pool.submit(_run, STACK, STACK_TESTS)
        right_run, wrong_run, undeclared_run = right.result(), wrong.result(), undeclared.result()
    assert right_run.outcome == "passed" and right_run.passed == 3, right_run.tests
    # Its special methods are its own behaviour, asked for and coerced: a lie fails a test.
    assert [t.outcome for t in wrong_run.tests] == ["failed", "failed", "passed"]
    # Without the declaration an instance is not plain data: the class tests fail, the
    # plain-data function still passes.
    assert [(t.outcome, t.raised) for t in undeclared_run.tests] == [
        ("failed", "NotPlainData"), ("failed", "NotPlainData"), ("passed", "")]
