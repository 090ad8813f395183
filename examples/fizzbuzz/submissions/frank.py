def fizzbuzz(n: int) -> list[str]:
    """Never ran: the for has no colon, so the file does not parse."""
    out = []
    for i in range(1, n + 1)
        out.append("Fizz" * (i % 3 == 0) + "Buzz" * (i % 5 == 0) or str(i))
    return out
