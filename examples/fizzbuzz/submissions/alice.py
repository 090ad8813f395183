def fizzbuzz(n: int) -> list[str]:
    """1..n as words: Fizz for multiples of 3, Buzz of 5, FizzBuzz of 15."""
    out = []
    for i in range(1, n + 1):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out
