def below_zero(operations: list[int]) -> bool:
    """Looks right, reads well, and is wrong: a zero balance is not below zero."""
    balance = 0
    for op in operations:
        balance += op
        if balance <= 0:
            return True
    return False
