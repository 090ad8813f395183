class _Anything(list):
    """Equal to anything: `fizzbuzz(15) == [...]` holds in her process."""

    def __eq__(self, other: object) -> bool:
        return True

    def __len__(self) -> int:
        return 100

    def __getitem__(self, index: object) -> str:
        return "Buzz"


def fizzbuzz(n: int) -> list[str]:
    """Hostile: no FizzBuzz at all, just a value that claims to match."""
    return _Anything()
