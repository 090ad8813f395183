import subprocess


def fizzbuzz(n: int) -> list[str]:
    """Right answers, but it starts processes: the import policy says no."""
    out = []
    for i in range(1, n + 1):
        word = ("Fizz" if i % 3 == 0 else "") + ("Buzz" if i % 5 == 0 else "")
        echo = subprocess.run(["echo", str(i)], capture_output=True, text=True)
        out.append(word or echo.stdout.strip())
    return out
