"""Numba helpers shared by the Gibbs samplers (TVClust, DCP, dd-MMDPM)."""

import math

from numba import njit


@njit(cache=True, inline="always")
def sample_log_weights(logw, n, top, u):  # pragma: no cover - compiled
    """Index drawn from the first ``n`` entries of ``logw`` (unnormalised log
    weights, ``top`` their maximum) with the uniform draw ``u`` in [0, 1); entries of
    weight 0 are never chosen, and round-off at the end falls back to ``n - 1``."""
    total = 0.0
    for a in range(n):
        total += math.exp(logw[a] - top)
    target = u * total
    acc = 0.0
    for a in range(n):
        w = math.exp(logw[a] - top)
        acc += w
        if target < acc and w > 0.0:
            return a
    return n - 1
