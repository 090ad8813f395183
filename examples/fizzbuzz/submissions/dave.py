def fizzbuzz(n: int) -> list[str]:
    """Reads well and is wrong: range(1, n) stops one short of n."""
    out = []
    for i in range(1, n):
        if i % 15 == 0:
            out.append("FizzBuzz")
        elif i % 3 == 0:
            out.append("Fizz")
        elif i % 5 == 0:
            out.append("Buzz")
        else:
            out.append(str(i))
    return out
