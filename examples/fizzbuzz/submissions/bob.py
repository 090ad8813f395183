def fizzbuzz(n: int) -> list[str]:
    """Build each word from its parts; an empty word means the number."""
    words = []
    for i in range(1, n + 1):
        word = ("Fizz" if i % 3 == 0 else "") + ("Buzz" if i % 5 == 0 else "")
        words.append(word or str(i))
    return words
