"""Tests for graphclust.inference.lp: the compact LP against the full local polytope,
bounds against brute force, tightness where theory promises it, model size, errors."""

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog

from graphclust.energy import Energy
from graphclust.errors import GraphclustError, InfeasibleConstraintsError, InvalidParameterError, ProblemTooLargeError
from graphclust.inference import ENGINES, solve
from graphclust.inference.exact import brute_force, mincut
from graphclust.inference.lp import _LPModel, lp_relaxation

from .conftest import random_raw


# --------------------------------------------------------------------- an independent oracle
def local_polytope_lp(E):
    """The textbook local-polytope LP (node marginals + one K x K pairwise marginal per
    Potts term and per table, no merging), built densely and solved with scipy's HiGHS.
    Infinite costs become zero upper bounds. No label costs."""
    N, K = E.n_nodes, E.n_labels
    eye = np.eye(K)
    thetas, pairs = [], []
    for (i, j), w in zip(E.edges, E.weights):
        thetas.append(np.where(eye > 0, -w if w < 0 else 0.0, w if w > 0 else 0.0))
        pairs.append((i, j))
    for (i, j), T in zip(E.table_edges, E.tables):
        thetas.append(T)
        pairs.append((i, j))
    P = len(pairs)
    nv = N * K + P * K * K
    c = np.zeros(nv)
    ub = np.ones(nv)
    U = E.unary
    c[: N * K] = np.where(np.isinf(U), 0.0, U).ravel()
    ub[: N * K][np.isinf(U).ravel()] = 0.0
    rows, cols, vals, b = [], [], [], []
    r = 0
    for i in range(N):  # normalisation
        rows += [r] * K
        cols += list(range(i * K, i * K + K))
        vals += [1.0] * K
        b.append(1.0)
        r += 1
    for e, ((i, j), th) in enumerate(zip(pairs, thetas)):
        base = N * K + e * K * K
        flat = th.ravel()
        c[base: base + K * K] = np.where(np.isinf(flat), 0.0, flat)
        ub[base: base + K * K][np.isinf(flat)] = 0.0
        for a in range(K):  # sum_b mu_e(a, b) = mu_i(a)
            rows += [r] * (K + 1)
            cols += [base + a * K + bb for bb in range(K)] + [i * K + a]
            vals += [1.0] * K + [-1.0]
            b.append(0.0)
            r += 1
        for bb in range(K):  # sum_a mu_e(a, b) = mu_j(b)
            rows += [r] * (K + 1)
            cols += [base + a * K + bb for a in range(K)] + [j * K + bb]
            vals += [1.0] * K + [-1.0]
            b.append(0.0)
            r += 1
    A = sp.csr_array((vals, (rows, cols)), shape=(r, nv))
    res = linprog(c, A_eq=A, b_eq=np.array(b), bounds=list(zip(np.zeros(nv), ub)), method="highs")
    assert res.status in (0, 2)
    return (res.fun + E.constant) if res.status == 0 else np.inf


def random_tree_energy(rng, n, K):
    T = nx.random_labeled_tree(n, seed=int(rng.integers(2**31)))
    e = np.array(list(T.edges()), dtype=np.int64).reshape(-1, 2)
    return Energy(rng.normal(0, 1, (n, K)), e, rng.normal(0, 1.5, len(e)))


# --------------------------------------------------------------------- formulation
@pytest.mark.parametrize("hard", [False, True])
def test_compact_lp_equals_local_polytope(hard, global_random_seed):
    """The compact Potts formulation (d >= |mu_i - mu_j|, y >= mu_i + mu_j - 1) has the
    optimum of the full local-polytope LP with pairwise marginals (1e-6)."""
    rng = np.random.default_rng(global_random_seed)
    for trial in range(8):
        n, K = int(rng.integers(3, 8)), int(rng.integers(2, 5))
        raw = random_raw(rng, n, K, hard=hard, parallel=True)
        E = raw.build()
        full = local_polytope_lp(E)
        if not np.isfinite(full):
            continue
        res = lp_relaxation(E, random_state=0)
        assert res.lower_bound == pytest.approx(full, abs=1e-6), f"trial {trial}"


def test_tables_use_full_pairwise_marginals(global_random_seed):
    """Energies with general tables (on their own pairs): same optimum as the full LP."""
    rng = np.random.default_rng(global_random_seed)
    for _ in range(6):
        n, K = int(rng.integers(3, 7)), 3
        e = np.array([(i, i + 1) for i in range(n - 1)])
        te = np.array([(0, n - 1), (n - 1, 1)])
        E = Energy(rng.normal(0, 1, (n, K)), e, rng.normal(0, 1, len(e)), table_edges=te,
                   tables=rng.normal(0, 1, (2, K, K)))
        assert lp_relaxation(E).lower_bound == pytest.approx(local_polytope_lp(E), abs=1e-6)


# --------------------------------------------------------------------- bounds and tightness
def test_bound_and_rounding_bracket_the_optimum(small_case):
    """LP value <= brute-force optimum <= energy of the rounded labelling, for argmax-only
    rounding too; an integral LP solution is optimal."""
    E, opt = small_case.energy, small_case.opt
    for kwargs in ({}, {"n_rounding": 0, "polish": False}):
        try:
            res = lp_relaxation(E, random_state=0, **kwargs)
        except InfeasibleConstraintsError:
            assert opt == np.inf
            return
        assert res.lower_bound <= opt + 1e-7 * (1 + abs(opt)) if np.isfinite(opt) else True
        assert res.energy >= opt - 1e-9 * (1 + abs(opt)) if np.isfinite(opt) else res.energy == np.inf
        assert res.energy == E.evaluate(res.labels)
        assert res.info["gap"] == res.energy - res.lower_bound
        if res.info["fractional"] == 0.0 and np.isfinite(opt):
            assert res.energy == pytest.approx(opt, abs=1e-6)


def test_tight_on_submodular_grids(global_random_seed):
    """Two labels and attractive terms: the LP optimum is integral and equals the exact
    minimum cut."""
    rng = np.random.default_rng(global_random_seed)
    idx = np.arange(25).reshape(5, 5)
    e = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                        np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    for _ in range(4):
        E = Energy(rng.uniform(0, 2, (25, 2)), e, rng.uniform(0.1, 1.5, len(e)))
        exact = mincut(E).energy
        res = lp_relaxation(E, random_state=0)
        assert res.info["fractional"] == 0.0
        assert res.lower_bound == pytest.approx(exact, abs=1e-6)
        assert res.energy == pytest.approx(exact, abs=1e-9)


def test_tight_on_trees(global_random_seed):
    """On trees (signed Potts, 3 labels) the LP value is the brute-force optimum and the
    solution is integral."""
    rng = np.random.default_rng(global_random_seed)
    for _ in range(6):
        E = random_tree_energy(rng, int(rng.integers(2, 8)), 3)
        opt = brute_force(E).energy
        res = lp_relaxation(E)
        assert res.lower_bound == pytest.approx(opt, abs=1e-6)
        assert res.info["fractional"] == 0.0 and res.energy == pytest.approx(opt, abs=1e-9)


def test_frustrated_cannot_links_are_fractional_and_rounded():
    """A soft cannot-link triangle with two labels: the LP pays nothing with all marginals
    at 1/2, the true optimum pays one link; the rounded and polished labelling finds it
    and the gap is reported."""
    E = Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2), (0, 2)], weights=[-1.0, -1.0, -1.0])
    res = lp_relaxation(E, random_state=0)
    assert res.lower_bound == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(res.marginals, 0.5, atol=1e-9)
    assert res.info["fractional"] == 1.0
    assert res.energy == 1.0 and res.info["gap"] == pytest.approx(1.0)
    assert res.info["n_roundings"] == 21 and res.info["polish"] == "icm"


def test_same_seed_same_rounding():
    E = Energy(np.zeros((5, 3)), edges=[(i, j) for i in range(5) for j in range(i + 1, 5)], weights=[-1.0] * 10)
    a = lp_relaxation(E, random_state=3, polish=False)
    b = lp_relaxation(E, random_state=3, polish=False)
    np.testing.assert_array_equal(a.labels, b.labels)


# --------------------------------------------------------------------- hard terms, label costs
def test_hard_terms_become_constraints():
    """Hard must-link -> equal marginals, hard cannot-link -> sum <= 1, +inf unary -> 0."""
    U = np.array([[0.0, 4.0, 4.0], [4.0, 0.0, 4.0], [4.0, 4.0, 0.0], [0.0, np.inf, 1.0]])
    E = Energy(U, edges=[(0, 1), (1, 2), (2, 3)], weights=[np.inf, 1.0, -np.inf])
    res = lp_relaxation(E, random_state=0)
    mu = res.marginals
    np.testing.assert_allclose(mu[0], mu[1], atol=1e-9)
    assert (mu[2] + mu[3] <= 1 + 1e-9).all()
    assert mu[3, 1] == pytest.approx(0.0, abs=1e-12)
    assert res.info["violated_hard_terms"] == 0
    assert res.energy == pytest.approx(brute_force(E).energy, abs=1e-9)


def test_infeasible_lp_raises():
    """Both nodes are forced to label 0 and hard cannot-linked: no labelling exists."""
    E = Energy([[0.0, np.inf], [0.0, np.inf]], edges=[(0, 1)], weights=[-np.inf])
    with pytest.raises(InfeasibleConstraintsError, match="LP relaxation is infeasible"):
        lp_relaxation(E)


def test_label_costs_are_modelled():
    """Two nodes preferring different labels, label 1 costs 5: the LP with usage
    variables u_k >= mu_i(k) finds the bound 1 = the optimum (both in label 0)."""
    E = Energy([[0.0, 1.0], [1.0, 0.0]], label_costs=[0.0, 5.0])
    res = lp_relaxation(E)
    assert res.lower_bound == pytest.approx(1.0, abs=1e-9)
    np.testing.assert_array_equal(res.labels, [0, 0])
    assert res.energy == 1.0


def test_constant_is_in_the_bound():
    E = Energy([[0.0, 1.0], [1.0, 0.0]], edges=[(0, 1)], weights=[0.5], constant=2.5)
    res = lp_relaxation(E)
    assert res.lower_bound == pytest.approx(3.0, abs=1e-9) and res.energy == 3.0


# --------------------------------------------------------------------- model size, solver
def _chain(n, K=3):
    rng = np.random.default_rng(0)
    e = np.array([(i, i + 1) for i in range(n - 1)] + [(i, i + 2) for i in range(0, n - 2, 2)])
    w = np.where(np.arange(len(e)) % 3 == 0, -1.0, 1.0)
    w[5] = np.inf
    w[7] = -np.inf
    return Energy(rng.normal(0, 1, (n, K)), e, w)


def test_model_size_grows_linearly():
    """Numbers of scalar variables and constraint rows grow linearly with N (counts, not
    times), and the variables are N·K + (#soft Potts terms)·K."""
    sizes = {}
    for n in (40, 80, 160):
        E = _chain(n)
        prob, _ = _LPModel(E).build(cp)
        m = prob.size_metrics
        sizes[n] = (m.num_scalar_variables, m.num_scalar_eq_constr + m.num_scalar_leq_constr)
        soft = int(np.isfinite(E.weights).sum())
        assert m.num_scalar_variables == n * 3 + soft * 3
    for k in range(2):
        assert sizes[160][k] - sizes[80][k] == 2 * (sizes[80][k] - sizes[40][k])
    # and one constraint object per block, never one per edge
    assert len(_LPModel(_chain(160)).build(cp)[0].constraints) <= 8


def test_highs_returns_a_vertex_where_clarabel_splits_a_tie():
    """Documentation test (spec §7.7 item 4): two nodes with equal unaries and a
    must-link. HiGHS returns an integral vertex of the optimal face; the interior-point
    CLARABEL returns its middle, all marginals 1/2."""
    E = Energy(np.zeros((2, 2)), edges=[(0, 1)], weights=[1.0])
    highs = lp_relaxation(E, solver="HIGHS", n_rounding=0, polish=False)
    assert highs.info["fractional"] == 0.0
    if "CLARABEL" in cp.installed_solvers():
        clarabel = lp_relaxation(E, solver="CLARABEL", n_rounding=0, polish=False)
        np.testing.assert_allclose(clarabel.marginals, 0.5, atol=1e-6)
        assert clarabel.info["fractional"] == 1.0


def test_callback_stops_rounding_and_registry():
    E = Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2), (0, 2)], weights=[-1.0, -1.0, -1.0])
    seen = []
    res = lp_relaxation(E, random_state=0, polish=False, callback=lambda it, z, v: seen.append(it) or True)
    assert seen == [0] and res.info["n_roundings"] == 1
    assert ENGINES["lp"][0] is lp_relaxation
    assert solve(E, "lp", random_state=0, progress=True).energy == 1.0


def test_init_is_a_candidate():
    """An optimal init survives when the LP is loose and rounding is off."""
    E = Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2), (0, 2)], weights=[-1.0, -1.0, -1.5])
    res = lp_relaxation(E, init=[0, 1, 1], n_rounding=0, polish=False)
    assert res.energy == 1.0
    np.testing.assert_array_equal(res.labels, [0, 1, 1])


# --------------------------------------------------------------------- errors
def test_too_large_suggests_bp():
    E = _chain(30)
    with pytest.raises(ProblemTooLargeError, match=r"30 nodes x 3 labels needs \d+ variables.*max_nodes=10.*'bp'"):
        lp_relaxation(E, max_nodes=10)
    with pytest.raises(ProblemTooLargeError, match=r"max_variables=50; use the 'bp' engine"):
        lp_relaxation(E, max_variables=50)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate:UserWarning")
def test_solver_stopping_early_is_an_error():
    """A solver status other than optimal is never turned into a silently wrong bound."""
    E = _chain(30)
    with pytest.raises(GraphclustError, match=r"the LP solver HIGHS stopped with status 'user_limit', not 'optimal'"):
        lp_relaxation(E, solver_options={"simplex_iteration_limit": 0})


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"solver": "NOPE"}, r"solver 'NOPE' is not available to cvxpy; installed: \[.*HIGHS"),
        ({"n_rounding": -1}, r"n_rounding must be >= 0, got -1"),
        ({"max_nodes": 0}, r"max_nodes must be >= 1, got 0"),
        ({"integrality_tol": 0.7}, r"integrality_tol must be <= 0.5, got 0.7"),
        ({"init": [0, 5, 0]}, r"init\[1\] = 5 is not a label in \[0, 2\)"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    E = Energy(np.zeros((3, 2)), edges=[(0, 1)], weights=[1.0])
    with pytest.raises(InvalidParameterError, match=match):
        lp_relaxation(E, **kwargs)


def test_no_solver_banner_on_standard_output():
    """HiGHS prints its banner from C++ (file descriptor 1) the first time a process
    makes a solver; the LP engine keeps it out of the user's output, and Python's own
    prints around it survive. A fresh process, so the banner is not already spent."""
    import subprocess
    import sys

    code = ("import graphclust as gc\n"
            "E = gc.Energy([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], edges=[(0, 1), (1, 2)], weights=[0.8, -0.8])\n"
            "print('before')\n"
            "print(gc.solve(E, 'lp').energy)\n"
            "print('after')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "before\n0.8\nafter\n", out
