"""ICM with births (graphclust.inference.icm_births) with a provider written here: fixed
unaries ``U0`` for the first ``K0`` labels and a birth score per node for every label
opened later. Then the engine minimises a plain Energy with label costs, so
``Energy.evaluate`` and brute force are the oracles: without births it takes ICM's
decisions, with births its fixed points are local minima under single-node moves to
any label (a new one included), and bounds that let it skip nodes change nothing."""

from typing import NamedTuple

import numpy as np
import pytest
from numba import njit

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.inference import icm, icm_births


class TableState(NamedTuple):
    z: np.ndarray
    count: np.ndarray
    U0: np.ndarray
    birth: np.ndarray
    calls: np.ndarray  # calls[0]: nodes scored in full
    covered: int  # the bounds cover the labels below this one


class BoundedTableState(NamedTuple):
    z: np.ndarray
    count: np.ndarray
    U0: np.ndarray
    birth: np.ndarray
    calls: np.ndarray
    covered: int


@njit(inline="always")
def _cost(ps, i, k):
    return ps.U0[i, k] if k < ps.U0.shape[1] else ps.birth[i]


@njit(inline="always")
def _scores(ps, i, a, cost, n):
    ps.calls[0] += 1
    for k in range(n):
        cost[k] = _cost(ps, i, k)
    cost[n] = ps.birth[i]


@njit(inline="always")
def _add(ps, i, k, new, n):
    pass


@njit(inline="always")
def _bounds(ps, i):
    """Exact own cost, a lower bound on every other label below ``covered`` (labels the
    pass opens are the engine's to score) and the birth score."""
    a = ps.z[i]
    other = ps.birth[i] if ps.covered > ps.U0.shape[1] else np.inf
    for k in range(ps.U0.shape[1]):
        if k != a and ps.U0[i, k] < other:
            other = ps.U0[i, k]
    return _cost(ps, i, a), other, ps.birth[i]


@njit(inline="always")
def _score(ps, i, k):
    return _cost(ps, i, k)


icm_births.register_provider(TableState, scores=_scores, add=_add)
icm_births.register_provider(BoundedTableState, scores=_scores, add=_add, bounds=_bounds, score=_score)


class Table:
    """The provider object the engine drives: state, n_slots, grow()."""

    def __init__(self, U0, birth, z, capacity=None, bounded=False):
        self.U0 = np.ascontiguousarray(U0, dtype=float)
        self.birth = np.ascontiguousarray(birth, dtype=float)
        self.z = np.array(z, dtype=np.int64)
        self.n_slots = self.U0.shape[1]
        cap = max(capacity or 0, self.n_slots)
        self.count = np.bincount(self.z, minlength=cap).astype(np.int64)
        self.calls = np.zeros(1, dtype=np.int64)
        self.cls = BoundedTableState if bounded else TableState
        self.grown = 0
        self.covered = self.n_slots

    @property
    def state(self):
        return self.cls(self.z, self.count, self.U0, self.birth, self.calls, self.covered)

    def grow(self):
        self.count = np.concatenate([self.count, np.zeros(max(1, len(self.count)), np.int64)])
        self.grown += 1


def run(prov, order, adjacency, lam, max_sweeps=50, energy=None):
    """Sweeps until one changes nothing; the energy after every sweep if given."""
    trace = []
    for _ in range(max_sweeps):
        moved = icm_births.sweep(prov, order, adjacency, lam)
        if energy is not None:
            trace.append(energy.evaluate(prov.z))
        if moved == 0:
            return trace
    raise AssertionError("no fixed point")


def open_energy(U0, birth, edges, w, lam):
    """The Energy the engine minimises: every label beyond U0 costs the node its birth
    score, enough of them for every node to open one, and λ per label used."""
    n, K0 = U0.shape
    U = np.hstack([U0, np.repeat(birth[:, None], n, axis=1)])
    return Energy(U, edges if len(edges) else None, w if len(w) else None, label_costs=np.full(K0 + n, lam))


def random_case(rng, n, K0, *, hard=False):
    """Dyadic costs and weights (exact sums in any order)."""
    U0 = rng.integers(0, 24, size=(n, K0)) / 8.0
    birth = rng.integers(0, 24, size=n) / 8.0
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)], dtype=np.int64).reshape(-1, 2)
    pairs = pairs[rng.random(len(pairs)) < 0.4]
    w = rng.integers(-8, 9, size=len(pairs)) / 4.0
    if hard and len(w):
        w[rng.random(len(w)) < 0.2] = -np.inf
    keep = w != 0
    return U0, birth, pairs[keep], w[keep]


def single_move_gain(E, z):
    """Largest decrease of E.evaluate by changing one node's label (any label)."""
    base = E.evaluate(z)
    best = 0.0
    for i in range(E.n_nodes):
        for k in range(E.n_labels):
            y = z.copy()
            y[i] = k
            best = max(best, base - E.evaluate(y))
    return best, base


# ---------------------------------------------------------------------- oracles
@pytest.mark.parametrize("seed", range(12))
def test_without_births_it_takes_icms_decisions(seed):
    """Births switched off (infinite birth score): the engine is ICM on an Energy with
    label costs; same visiting order, same labels, and a brute-force local minimum."""
    rng = np.random.default_rng(seed)
    n, K0 = int(rng.integers(2, 8)), int(rng.integers(2, 4))
    U0, _, pairs, w = random_case(rng, n, K0)
    lam = float(rng.integers(0, 8)) / 2.0
    E = Energy(U0, pairs if len(pairs) else None, w if len(w) else None, label_costs=np.full(K0, lam))
    z0 = rng.integers(K0, size=n)
    order = rng.permutation(n)
    prov = Table(U0, np.full(n, np.inf), z0)
    trace = run(prov, order, E.adjacency, lam, energy=E)
    ref = icm(E, init=z0, order=order)
    np.testing.assert_array_equal(prov.z, ref.labels)
    assert trace == ref.history
    gain, base = single_move_gain(E, prov.z)
    assert gain <= 1e-12 * (1 + abs(base))


@pytest.mark.parametrize("seed", range(20))
def test_fixed_points_are_local_minima_with_births(seed):
    """With births the energy never rises from sweep to sweep, and the fixed point is a
    local minimum of Energy.evaluate over all labels, new ones included (hard repulsive
    terms, which force births, included)."""
    rng = np.random.default_rng(100 + seed)
    n, K0 = int(rng.integers(2, 7)), int(rng.integers(1, 3))
    U0, birth, pairs, w = random_case(rng, n, K0, hard=seed % 2 == 1)
    lam = float(rng.integers(0, 6)) / 2.0
    E = open_energy(U0, birth, pairs, w, lam)
    prov = Table(U0, birth, np.zeros(n, np.int64), capacity=K0)  # every birth first grows the slots
    start = E.evaluate(prov.z)
    trace = run(prov, rng.permutation(n), E.adjacency, lam, energy=E)
    values = np.array([start] + trace)
    finite = np.isfinite(values)
    assert np.all(np.diff(values[finite]) <= 1e-12 * (1 + np.abs(values[finite][1:])))
    assert np.isfinite(trace[-1])
    gain, base = single_move_gain(E, prov.z)
    assert gain <= 1e-12 * (1 + abs(base))
    assert prov.n_slots == max(K0, prov.z.max() + 1)
    np.testing.assert_array_equal(prov.count[:prov.n_slots], np.bincount(prov.z, minlength=prov.n_slots))


def test_births_grow_the_slots_and_resume():
    """Four nodes in one cluster of capacity 1, all pairs hard cannot-linked: every node
    opens a cluster of its own (the last one too: its own cluster costs 10 plus the λ it
    is credited by leaving), the slots grow three times and the pass resumes."""
    U0 = np.full((4, 1), 10.0)
    pairs = np.array([(i, j) for i in range(4) for j in range(i + 1, 4)])
    w = np.full(len(pairs), -np.inf)
    prov = Table(U0, np.zeros(4), np.zeros(4, np.int64), capacity=1)
    E = open_energy(U0, np.zeros(4), pairs, w, 1.0)
    moved = icm_births.sweep(prov, np.arange(4), E.adjacency, 1.0)
    assert moved == 4 and prov.z.tolist() == [1, 2, 3, 4] and prov.n_slots == 5 and prov.grown == 3
    assert prov.count[:5].tolist() == [0, 1, 1, 1, 1] and prov.calls[0] == 4
    assert E.evaluate(prov.z) == 4.0


def test_a_birth_pays_the_label_cost():
    """A node whose own cluster costs 3 more than a new one moves only when λ < 3."""
    U0 = np.array([[0.0], [0.0], [3.0]])
    for lam, expected in ((2.5, [0, 0, 1]), (3.5, [0, 0, 0])):
        prov = Table(U0, np.zeros(3), np.zeros(3, np.int64))
        icm_births.sweep(prov, np.arange(3), (np.zeros(4, np.int64), np.zeros(0, np.int64), np.zeros(0)), lam)
        assert prov.z.tolist() == expected


@pytest.mark.parametrize("seed", range(10))
def test_bounds_skip_nodes_without_changing_decisions(seed):
    """A provider that gives bounds is scored less often and ends in the same labels,
    clusters born during a pass included (those are scored exactly)."""
    rng = np.random.default_rng(200 + seed)
    n, K0 = 40, 3
    U0, birth, pairs, w = random_case(rng, n, K0, hard=seed % 3 == 0)
    birth += 1.0
    lam = 0.5
    E = open_energy(U0, birth, pairs, w, lam)
    z0 = rng.integers(K0, size=n)
    full, bounded = Table(U0, birth, z0), Table(U0, birth, z0, bounded=True)
    for _ in range(6):
        order = rng.permutation(n)
        bounded.covered = bounded.n_slots  # the labels at the start of the pass
        assert icm_births.sweep(full, order, E.adjacency, lam) == icm_births.sweep(bounded, order, E.adjacency,
                                                                                    lam)
        np.testing.assert_array_equal(full.z, bounded.z)
    assert bounded.calls[0] < full.calls[0]


def test_clusters_born_during_the_pass_are_scored_exactly():
    """Node 0 must leave node 2 (hard cannot-link) and opens cluster 1. Node 1's bounds
    cover only cluster 0, where it stays cheaply, but its must-link to node 0 makes the
    new cluster cheaper still: the engine scores that cluster and moves node 1."""
    U0 = np.zeros((3, 1))
    birth = np.array([0.0, 0.25, 0.0])
    adjacency = Energy(np.zeros((3, 1)), [(0, 2), (0, 1)], [-np.inf, 2.0]).adjacency
    for bounded in (False, True):
        prov = Table(U0, birth, np.zeros(3, np.int64), bounded=bounded)
        assert icm_births.sweep(prov, np.arange(3), adjacency, 0.5) == 2
        assert prov.z.tolist() == [1, 1, 0] and prov.calls[0] == 3


# ---------------------------------------------------------------------- errors
def test_registration_errors():
    class NoZ(NamedTuple):
        count: np.ndarray

    with pytest.raises(InvalidParameterError, match="NamedTuple"):
        icm_births.register_provider(dict, scores=_scores, add=_add)
    with pytest.raises(InvalidParameterError, match="field.*z"):
        icm_births.register_provider(NoZ, scores=_scores, add=_add)
    with pytest.raises(InvalidParameterError, match="both bounds and score"):
        icm_births.register_provider(TableState, scores=_scores, add=_add, bounds=_bounds)
    with pytest.raises(InvalidParameterError, match="hook 'add'.*numba"):
        icm_births.register_provider(TableState, scores=_scores, add=lambda *a: None)


def test_unregistered_state_is_refused():
    class Other(NamedTuple):
        z: np.ndarray
        count: np.ndarray

    class Prov:
        state = Other(np.zeros(2, np.int64), np.array([2], np.int64))
        n_slots = 1

    with pytest.raises(InvalidParameterError, match="Other is not a registered provider state"):
        icm_births.sweep(Prov(), np.arange(2), (np.zeros(3, np.int64), np.zeros(0, np.int64), np.zeros(0)), 1.0)


ICM_CHILD = """
import numpy as np
import graphclust as gc
from graphclust.inference import icm_births
from graphclust.potentials.dpcentroids import DPState
X = np.random.default_rng(0).normal(size=(30, 2))
gc.RDPMeans(lam=2.0, xi=0.0, n_init=1, random_state=0).fit(X)
kernel = icm_births._KERNELS[DPState]
print(sum(kernel.stats.cache_hits.values()), sum(kernel.stats.cache_misses.values()))
"""


@pytest.mark.slow
def test_a_second_process_loads_the_pass_kernel_from_the_cache():
    """The kernel is specialised on DPCentroids' hooks and cached by numba's public
    ``cache=True`` (no private numba API): a later process loads it."""
    import subprocess
    import sys

    exec(ICM_CHILD, {})  # compiles (or loads) and writes the cache in this process
    out = subprocess.run([sys.executable, "-c", ICM_CHILD], capture_output=True, text=True, check=True)
    hits, misses = (int(v) for v in out.stdout.split())
    assert misses == 0 and hits >= 1
