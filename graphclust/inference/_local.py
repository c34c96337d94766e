"""The local update every ICM-style kernel shares: a node's cost per label given its
neighbours' current labels and the labels in use, and the move rule.

ICM (:mod:`graphclust.inference.icm`), ICM with births
(:mod:`graphclust.inference.icm_births`, RDP-means' sweep), the grid kernel
(:mod:`graphclust.inference.grid_icm`) and the chunked Dask assignment
(:mod:`graphclust.distributed.points`) fill a per-label cost vector with their own
unaries, then call these functions, so they take the same decision on the same
costs: a signed Potts term of weight ``w`` to a neighbour labelled ``z_j`` lowers the
cost of ``z_j`` by ``w`` (``w·[z_i ≠ z_j] = w − w·[z_i = z_j]``, up to a constant); a
label's cost is charged to the node that would be its first user and credited to its
last; and a node leaves its label only for one cheaper by more than
``rel_tol (1 + |cost|)``, so float noise never flips ties back and forth and the
energy never increases.
"""

import numpy as np
from numba import njit

#: relative margin a move must win by
REL_TOL = 1e-12


@njit(cache=True, inline="always")
def potts_pull(cost, z, indptr, indices, weights, i):  # pragma: no cover - compiled
    """``cost[z_j] -= w`` for every neighbour ``j`` of node ``i`` in the CSR arrays
    (neighbours without a label yet, ``z_j < 0``, are skipped)."""
    for p in range(indptr[i], indptr[i + 1]):
        zj = z[indices[p]]
        if zj >= 0:
            cost[zj] -= weights[p]


@njit(cache=True, inline="always")
def label_costs(cost, count, lc, a, n):  # pragma: no cover - compiled
    """Exact label-cost terms of node ``i`` (label ``a``) over labels ``0..n-1``:
    ``cost[k] += lc[k]`` for every label nobody uses (``count[k] == 0``, ``i`` would be
    its first user), and ``cost[a] += lc[a]`` when ``i`` is ``a``'s only user (it is
    credited that cost when it leaves). ``count`` still includes ``i``."""
    for k in range(n):
        if k != a and count[k] == 0:
            cost[k] += lc[k]
    if count[a] == 1:
        cost[a] += lc[a]


@njit(cache=True, inline="always")
def cheapest(cost, n):  # pragma: no cover - compiled
    """Index of the smallest of ``cost[:n]``; ties go to the lowest index."""
    best = 0
    for k in range(1, n):
        if cost[k] < cost[best]:
            best = k
    return best


@njit(cache=True, inline="always")
def improves(new, old, rel_tol):  # pragma: no cover - compiled
    """Whether moving from a label costing ``old`` to one costing ``new`` is a strict
    improvement by more than the relative margin (any finite cost improves on an
    infinite one)."""
    if old == np.inf:
        return new < old
    return new < old - rel_tol * abs(old)  # relative only: the same moves in any units
