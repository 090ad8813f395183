# The contest's tests: every submission must pass them. They run in a
# sandbox of their own; the submission never sees this file (docs/checks.md).
from solution import fizzbuzz


def test_first_fifteen() -> None:
    assert fizzbuzz(15) == [
        "1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz", "Buzz",
        "11", "Fizz", "13", "14", "FizzBuzz",
    ]


def test_the_last_number_is_included() -> None:
    assert len(fizzbuzz(100)) == 100
    assert fizzbuzz(100)[-1] == "Buzz"


def test_nothing_for_zero() -> None:
    assert fizzbuzz(0) == []
