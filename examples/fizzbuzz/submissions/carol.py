RULES = ((3, "Fizz"), (5, "Buzz"))


def fizzbuzz(n: int) -> list[str]:
    """Table-driven: adding a rule (7, "Bazz") needs no new branch."""
    return [
        "".join(word for divisor, word in RULES if i % divisor == 0) or str(i)
        for i in range(1, n + 1)
    ]
