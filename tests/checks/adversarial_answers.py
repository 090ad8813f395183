"""Hostile answer texts for the deterministic equivalence pass, one per cap it must stop at.

``tests/checks/test_answers.py`` asserts the outcome each one gets (the cap that stopped the
pass, so its work is bounded by the cap rather than by the input); ``bench/equivalence.py``
times them. Plain data: the bench reads this file without importing the tests.
"""

ADVERSARIAL: dict[str, str] = {
    "unclosed boxes": "\\boxed{" * 14_000,
    "nested boxes": "\\boxed{" * 200 + "1" + "}" * 200,
    "one long number": "9" * 99_000,
    "too long": "1" * 1_000_000,
    "many markers": "answer: " * 12_000,
    "many answer lines": "A: 1\n" * 19_000,
    "many fractions": "\\frac{" * 16_000,
    "braces": "{" * 99_000,
    "dollars": "$" * 99_000,
    "latex soup": "$" + "\\left(" * 15_000 + "$",
    "huge exponent": "1e" + "9" * 40,
    "huge hash answer": "#### " + "9" * 60_000,
    "long answer line": "A: " + "x " * 45_000 + "5",
    "spaces in the grammar": "-" + " " * 150 + "$" + " " * 150 + "5",
    "deep power tower": r"\boxed{" + "2^{" * 50 + "2" + "}" * 50 + "}",
    "factorial bomb": r"\boxed{9999999!}",
}
