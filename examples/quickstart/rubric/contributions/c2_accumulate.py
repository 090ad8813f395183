from itertools import accumulate


def below_zero(operations: list[int]) -> bool:
    """True if any prefix sum of the operations is negative."""
    return any(balance < 0 for balance in accumulate(operations))
