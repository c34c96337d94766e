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


@njit(cache=True, inline="always")
def release_slot(k, active, where, free, n_active, n_free):  # pragma: no cover - compiled
    """Cluster slot ``k`` has emptied: swap it out of the ``active`` list (``where``
    holds each slot's position there) and push it on the ``free`` stack. Returns the
    new ``(n_active, n_free)``."""
    a = where[k]
    last = active[n_active - 1]
    active[a] = last
    where[last] = a
    free[n_free] = k
    return n_active - 1, n_free + 1
