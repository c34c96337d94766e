"""Exact-enumeration helpers shared by the samplers' oracle tests."""


def set_partitions(n):
    """Every partition of range(n) as a list of blocks (Bell(n) of them)."""
    if n == 0:
        yield []
        return
    for part in set_partitions(n - 1):
        for k in range(len(part)):
            yield part[:k] + [part[k] + [n - 1]] + part[k + 1:]
        yield part + [[n - 1]]
