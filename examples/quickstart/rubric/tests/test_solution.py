# HumanEval/3 `check`, as a pytest test (HumanEval, MIT licence, see ../../DATA-LICENSES.md).
from solution import below_zero


def test_humaneval_check() -> None:
    assert below_zero([]) is False
    assert below_zero([1, 2, -3, 1, 2, -3]) is False
    assert below_zero([1, 2, -4, 5, 6]) is True
    assert below_zero([1, -1, 2, -2, 5, -5, 4, -4]) is False
    assert below_zero([1, -1, 2, -2, 5, -5, 4, -5]) is True
    assert below_zero([1, -2, 2, -2, 5, -5, 4, -4]) is True
