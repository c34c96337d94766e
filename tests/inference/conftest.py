"""Small random energies with their brute-force optimum, shared by the inference tests.

The optimum is computed here from the *raw* terms (before ``Energy`` merges parallel
pairs) with a formula written independently of ``Energy.evaluate`` and of
``graphclust.inference.exact``, so it can serve as an oracle for both.
"""

import itertools
from dataclasses import dataclass

import numpy as np
import pytest

from graphclust.energy import Energy


@dataclass
class RawEnergy:
    unary: np.ndarray
    edges: list
    weights: list
    label_costs: np.ndarray | None = None
    table_edges: list | None = None
    tables: np.ndarray | None = None
    constant: float = 0.0

    @property
    def n(self):
        return self.unary.shape[0]

    @property
    def K(self):
        return self.unary.shape[1]

    def build(self):
        return Energy(self.unary, self.edges or None, self.weights or None, label_costs=self.label_costs,
                      table_edges=self.table_edges, tables=self.tables, constant=self.constant)


def reference_energy(raw, Z):
    """Energies of the labellings in the rows of ``Z``, term by term from the raw terms."""
    Z = np.atleast_2d(np.asarray(Z))
    val = np.full(len(Z), float(raw.constant))
    val += raw.unary[np.arange(raw.n)[None, :], Z].sum(axis=1)
    for (u, v), w in zip(raw.edges, raw.weights):
        same = Z[:, u] == Z[:, v]
        if w > 0:
            val += np.where(same, 0.0, w)
        elif w < 0:
            val += np.where(same, -w, 0.0)
    if raw.label_costs is not None:
        for k, h in enumerate(raw.label_costs):
            val += np.where((Z == k).any(axis=1), h, 0.0)
    if raw.tables is not None:
        for (a, b), T in zip(raw.table_edges, raw.tables):
            val += T[Z[:, a], Z[:, b]]
    return val


def all_labellings(n, K):
    """Every labelling, node 0 most significant (lexicographic order)."""
    return np.array(list(itertools.product(range(K), repeat=n)), dtype=np.int64).reshape(-1, n)


def random_raw(rng, n, K, *, hard=True, label_costs=False, tables=False, attractive=False, parallel=True):
    """A random raw energy; hard terms agree with a planted labelling, so it is feasible."""
    planted = rng.integers(K, size=n)
    U = np.round(rng.uniform(0, 3, size=(n, K)), 3)
    if hard:
        forbid = (rng.random((n, K)) < 0.15) & (np.arange(K)[None, :] != planted[:, None])
        U[forbid] = np.inf
    pairs = [tuple(sorted(p)) for p in itertools.combinations(range(n), 2)]
    m = int(rng.integers(1, min(len(pairs), 2 * n) + 1)) if pairs else 0
    chosen = [pairs[i] for i in rng.choice(len(pairs), size=m, replace=False)] if m else []
    edges, weights = [], []
    for u, v in chosen:
        same = planted[u] == planted[v]
        w = float(np.round(rng.uniform(0.1, 2.0), 3))
        if not attractive and rng.random() < 0.4:
            w = -w
        if hard and rng.random() < 0.15:
            if same:
                w = np.inf
            elif not attractive:
                w = -np.inf
        edges.append((u, v) if rng.random() < 0.5 else (v, u))
        weights.append(w)
    if parallel and edges:
        for _ in range(int(rng.integers(0, 3))):
            k = int(rng.integers(len(edges)))
            if np.isinf(weights[k]):
                continue
            w = float(np.round(rng.uniform(0.1, 1.5), 3))
            if not attractive and rng.random() < 0.5:
                w = -w
            edges.append(edges[k][::-1])
            weights.append(w)
    raw = RawEnergy(U, edges, weights, constant=float(np.round(rng.uniform(-1, 1), 3)))
    if label_costs:
        raw.label_costs = np.round(rng.uniform(0, 2, size=K), 3)
    if tables and n >= 2:
        t = int(rng.integers(1, 3))
        raw.table_edges = [tuple(int(x) for x in rng.choice(n, size=2, replace=False)) for _ in range(t)]
        raw.tables = np.round(rng.uniform(0, 2, size=(t, K, K)), 3)
    return raw


@dataclass
class Case:
    """A small energy and its optimum, found by the reference brute force."""

    name: str
    raw: RawEnergy
    energy: Energy
    opt: float
    opt_labels: np.ndarray
    n_optima: int
    values: np.ndarray  # energy of every labelling, in all_labellings order


def make_case(name, raw):
    Z = all_labellings(raw.n, raw.K)
    values = reference_energy(raw, Z)
    k = int(np.argmin(values))
    opt = float(values[k])
    n_opt = int((values <= opt + 1e-9 * (1 + abs(opt))).sum()) if np.isfinite(opt) else len(values)
    return Case(name, raw, raw.build(), opt, Z[k], n_opt, values)


def _cases():
    cases = []
    for seed in range(24):
        rng = np.random.default_rng(1000 + seed)
        kind = seed % 4
        K = 2 if kind in (0, 1) else 3
        n = int(rng.integers(2, 9 if K == 2 else 8))
        raw = random_raw(
            rng, n, K,
            hard=seed % 3 != 0,
            label_costs=kind == 2 and seed % 8 == 2 or seed % 5 == 4,
            tables=kind == 3 and seed % 8 == 3,
            attractive=kind == 0,
        )
        name = f"s{seed}-n{n}-K{K}" + ("-attr" if kind == 0 else "") + ("-lc" if raw.label_costs is not None else "") \
            + ("-tab" if raw.tables is not None else "")
        cases.append(make_case(name, raw))
    # hard cannot-link triangle with two labels: every labelling violates a hard term
    infeasible = RawEnergy(np.zeros((3, 2)), [(0, 1), (1, 2), (0, 2)], [-np.inf, -np.inf, -np.inf])
    cases.append(make_case("infeasible-triangle", infeasible))
    # a single node, no pair terms
    cases.append(make_case("single-node", RawEnergy(np.array([[2.0, 1.0, 3.0]]), [], [])))
    return cases


CASES = _cases()


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def small_case(request):
    """A small random energy (N <= 8, K <= 3; mixed signs, hard terms, label costs,
    tables) with its reference brute-force optimum."""
    return request.param
