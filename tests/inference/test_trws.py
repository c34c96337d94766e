"""Tests for graphclust.inference.trws: a valid bound everywhere, exact on trees and on
submodular energies, hard terms, scale invariance, anytime decoding, errors."""

import networkx as nx
import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.inference import ENGINES, solve
from graphclust.inference.exact import brute_force, mincut
from graphclust.inference.trws import trws

from .conftest import CASES, make_case, random_raw


def _tol(x):
    return 1e-7 * (1.0 + abs(x))


def grid_edges(h, w):
    idx = np.arange(h * w).reshape(h, w)
    return np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                           np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])


def loopy_energy(rng, n, K, *, density=0.5):
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    e = pairs[rng.random(len(pairs)) < density]
    w = rng.choice([-1.0, 1.0], len(e)) * rng.uniform(0.2, 2.0, len(e))
    return Energy(rng.normal(0.0, 1.0, (n, K)), e, w)


# --------------------------------------------------------------------- the bound
def test_every_bound_is_below_the_brute_force_optimum(global_random_seed):
    """On small random energies (signed Potts, hard terms, tables, label costs) the bound
    of every iteration is <= the optimum, and the energy is >= it."""
    rng = np.random.default_rng(global_random_seed)
    cases = list(CASES)
    for seed in range(30):
        K = int(rng.integers(2, 4))
        raw = random_raw(rng, int(rng.integers(3, 8)), K, hard=seed % 2 == 0, tables=seed % 5 == 0,
                         label_costs=seed % 7 == 0)
        cases.append(make_case(f"extra{seed}", raw))
    for case in cases:
        res = trws(case.energy, max_iter=30)
        opt = case.opt
        assert res.energy == case.energy.evaluate(res.labels)
        if np.isfinite(opt):
            assert res.energy >= opt - _tol(opt)
            assert res.lower_bound <= opt + _tol(opt), case.name
            assert max(res.info["bounds"]) <= opt + _tol(opt), case.name
            assert np.isfinite(res.energy)


def test_bound_is_below_every_engine_and_the_lp():
    """On loopy frustrated energies the TRW-S bound is <= the energy of every engine and
    <= the LP relaxation's value (TRW-S's bound is a dual point of that LP)."""
    rng = np.random.default_rng(4)
    for _ in range(4):
        E = loopy_energy(rng, 25, 3, density=0.25)
        res = trws(E)
        lp = solve(E, "lp", random_state=0)
        assert res.lower_bound <= lp.lower_bound + _tol(lp.lower_bound)
        for name in ("icm", "bp", "lp", "trws", "icm-colour"):
            assert res.lower_bound <= solve(E, name, random_state=0).energy + _tol(res.lower_bound)


# --------------------------------------------------------------------- exactness
@pytest.mark.parametrize("tables", [False, True])
def test_trees_and_chains_are_exact(tables, global_random_seed):
    """On trees (random, and chains) TRW-S returns the optimum with a zero gap."""
    rng = np.random.default_rng(global_random_seed)
    for k in range(12):
        n, K = int(rng.integers(2, 9)), int(rng.integers(2, 4))
        T = nx.path_graph(n) if k % 3 == 0 else nx.random_labeled_tree(n, seed=int(rng.integers(2**31)))
        e = np.array(list(T.edges()), dtype=np.int64).reshape(-1, 2)
        w = rng.normal(0.0, 1.5, len(e))
        kw = {}
        if tables and len(e) >= 2:
            kw = dict(table_edges=e[:2][:, ::-1], tables=rng.normal(0.0, 1.0, (2, K, K)))
            e, w = e[2:], w[2:]
        E = Energy(rng.normal(0.0, 1.0, (n, K)), e, w, **kw)
        opt = brute_force(E).energy
        res = trws(E)
        assert res.energy == pytest.approx(opt, abs=1e-9)
        assert res.lower_bound == pytest.approx(opt, abs=1e-7)
        assert res.converged and res.info["stop"] == "gap"


def test_forest_with_hard_terms_and_ties_is_exact():
    """Forests with hard must-/cannot-links and integer (tied) unaries: the optimum,
    feasible, and a bound equal to it."""
    rng = np.random.default_rng(3)
    for _ in range(25):
        n, K = int(rng.integers(2, 8)), int(rng.integers(2, 4))
        T = nx.random_labeled_tree(n, seed=int(rng.integers(2**31)))
        e = np.array(list(T.edges()), dtype=np.int64).reshape(-1, 2)
        e = e[rng.random(len(e)) < 0.85]
        w = rng.choice([-np.inf, np.inf, -1.0, 1.0, 2.0], len(e))
        E = Energy(rng.integers(0, 3, (n, K)).astype(float), e, w)
        opt = brute_force(E).energy
        res = trws(E)
        assert res.energy == pytest.approx(opt, abs=1e-9)
        assert res.lower_bound == pytest.approx(opt, abs=1e-7)


def test_hard_cannot_link_pair():
    """Identical unaries and a hard cannot-link: a feasible optimum, bound 1."""
    res = solve(Energy([[0, 1], [0, 1]], [(0, 1)], [-np.inf]), "trws")
    assert sorted(res.labels.tolist()) == [0, 1]
    assert res.energy == 1.0 and res.lower_bound == pytest.approx(1.0)


def test_binary_attractive_grid_reaches_the_minimum_cut():
    """On submodular (2-label attractive) grids TRW-S reaches the min-cut optimum and its
    bound closes the gap."""
    rng = np.random.default_rng(5)
    e = grid_edges(12, 12)
    for _ in range(3):
        E = Energy(rng.uniform(0, 2, (144, 2)), e, rng.uniform(0.2, 1.5, len(e)))
        exact = mincut(E).energy
        res = trws(E, max_iter=300)
        assert res.energy == pytest.approx(exact, rel=1e-9)
        assert res.lower_bound == pytest.approx(exact, rel=1e-5)


# --------------------------------------------------------------------- hard terms
def test_infeasible_hard_terms():
    """A hard cannot-link triangle with two labels is infeasible but its relaxation is
    not (every marginal 1/2): a finite, valid bound and an infinite energy. Two nodes
    forced to label 0 by their unaries and hard-cannot-linked: the relaxation is
    infeasible too, and the bound says so with inf."""
    E = Energy([[0.0, 0.5], [0.3, 0.0], [0.0, 0.2]], edges=[(0, 1), (1, 2), (0, 2)], weights=[-np.inf] * 3)
    res = trws(E)
    assert res.energy == np.inf and np.isfinite(res.lower_bound) and not res.info["infeasible"]
    assert res.info["violated_hard_terms"] == 1 and res.info["stop"] == "bound"
    E = Energy([[0.0, np.inf, 1.0], [0.0, np.inf, 2.0], [0.0, 0.0, 0.0]], edges=[(0, 1), (1, 2)],
               weights=[-np.inf, 1.0])
    res = trws(E)
    assert np.isfinite(res.energy)  # label 2 is allowed
    E = Energy([[0.0, np.inf], [0.0, np.inf], [0.0, 0.0]], edges=[(0, 1), (1, 2)], weights=[-np.inf, 1.0])
    res = trws(E)
    assert res.energy == np.inf and res.lower_bound == np.inf and res.info["infeasible"]


def test_hard_terms_on_a_loopy_graph_stay_feasible():
    """Hard links agreeing with a planted labelling on a grid: feasible result, valid bound."""
    rng = np.random.default_rng(0)
    e = grid_edges(6, 6)
    y = (np.arange(36) % 6 >= 3).astype(int) + (np.arange(36) >= 18)
    w = rng.uniform(0.2, 1.0, len(e))
    hard = rng.random(len(e)) < 0.2
    w[hard] = np.where(y[e[hard, 0]] == y[e[hard, 1]], np.inf, -np.inf)
    U = rng.uniform(0, 1, (36, 3))
    E = Energy(U, e, w)
    res = trws(E)
    lp = solve(E, "lp", random_state=0)
    assert np.isfinite(res.energy) and res.info["hard_terms"] and not res.info["infeasible"]
    assert res.lower_bound <= lp.lower_bound + _tol(lp.lower_bound)


# --------------------------------------------------------------------- invariance, anytime
def test_scale_invariance():
    """energy x 1e-6 (and x 1e6): same labels, iterations and stopping reason."""
    rng = np.random.default_rng(9)
    e = grid_edges(10, 10)
    E = Energy(rng.uniform(0, 1, (100, 4)), e, rng.choice([-1, 1], len(e)) * rng.uniform(0.1, 0.6, len(e)))
    ref = trws(E)
    for s in (1e-6, 1e6):
        res = trws(Energy(E.unary * s, E.edges, E.weights * s))
        np.testing.assert_array_equal(res.labels, ref.labels)
        assert res.iterations == ref.iterations and res.info["stop"] == ref.info["stop"]
        assert res.lower_bound == pytest.approx(ref.lower_bound * s, rel=1e-9)


def test_returns_best_labelling_and_keeps_init():
    """The result is never above any decoded labelling nor above an optimal init."""
    rng = np.random.default_rng(0)
    for _ in range(10):
        E = loopy_energy(rng, 7, 3, density=0.9)
        opt = brute_force(E)
        res = trws(E, init=opt.labels, max_iter=3)
        assert res.energy == pytest.approx(opt.energy, abs=1e-12)
        res = trws(E, max_iter=10)
        assert res.energy <= min(res.history) and len(res.history) == res.iterations


def test_callback_cap_and_progress():
    seen = []

    def stop_at_two(it, labels, value):
        seen.append((it, value))
        return it == 2

    E = loopy_energy(np.random.default_rng(1), 12, 3, density=0.8)
    res = trws(E, callback=stop_at_two, tol=0.0)
    assert res.iterations == 2 and res.info["stop"] == "callback" and not res.converged
    assert [s[1] for s in seen] == res.history
    res = trws(E, max_iter=1, tol=0.0, progress=True)
    assert res.iterations == 1 and res.info["stop"] == "max_iter" and not res.converged


def test_no_pair_terms_and_registration():
    E = Energy([[1.0, 0.0], [0.0, 0.0], [2.0, 1.0]], constant=0.5)
    res = trws(E)
    np.testing.assert_array_equal(res.labels, [1, 0, 1])
    assert res.lower_bound == res.energy == 1.5 and res.converged
    assert ENGINES["trws"][0] is trws and not ENGINES["trws"][1]["exact"]
    a, b = trws(loopy_energy(np.random.default_rng(2), 9, 3), random_state=0), solve(
        loopy_energy(np.random.default_rng(2), 9, 3), "trws", random_state=5)
    np.testing.assert_array_equal(a.labels, b.labels)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_iter": 0}, r"max_iter must be >= 1, got 0"),
        ({"tol": -1.0}, r"tol must be >= 0.0, got -1.0"),
        ({"init": [0, 1]}, r"init must have shape \(3,\), got \(2,\)"),
        ({"init": [0, 2, 1]}, r"init\[1\] = 2 is not a label in \[0, 2\)"),
        ({"random_state": "seed"}, r"random_state must be None, an int or a numpy Generator, got str"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    E = Energy(np.zeros((3, 2)), edges=[(0, 1)], weights=[1.0])
    with pytest.raises(InvalidParameterError, match=match):
        trws(E, **kwargs)
