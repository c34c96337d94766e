"""Tests of the COSC numerical core: penalised ratio, relaxation, thresholding,
inner solver (cvxpy oracle), RatioDCA, and the 2-way building blocks."""

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphclust as gc
from graphclust.datasets import make_moons
from graphclust.errors import (
    InvalidConstraintError,
    InvalidGraphError,
    InvalidParameterError,
)
from graphclust.spectral.onespectral import (
    cosc_bipartition,
    one_spectral_bipartition,
    spectral_start,
)
from graphclust.spectral.ratiodca import (
    DualState,
    RatioProblem,
    balance_lovasz,
    balance_subgradient,
    continuous_ratio,
    optimal_threshold,
    ratio_dca,
    set_ratio,
    solve_inner,
)

# ---------------------------------------------------------------- random instances


def random_instance(seed, n=None, p=0.5, n_cl=3, n_ml=2, unit_b=False):
    """Dense random graph (a path keeps every vertex attached), random positive b and
    random cannot/must pairs, plus the dense matrices for the brute-force formulas."""
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(3, 9))
    A = np.triu(rng.random((n, n)) < p, 1) * rng.uniform(0.1, 2.0, (n, n))
    A[np.arange(n - 1), np.arange(1, n)] += rng.uniform(0.05, 1.0, n - 1)
    W = A + A.T
    b = np.ones(n) if unit_b else rng.uniform(0.2, 3.0, n)

    def pairs(m):
        P = rng.integers(0, n, (m, 2))
        P = P[P[:, 0] != P[:, 1]]
        return P, rng.uniform(0.2, 2.0, len(P))

    cl, clw = pairs(n_cl)
    ml, mlw = pairs(n_ml)
    prob = RatioProblem(sp.csr_array(W), b, cannot_pairs=cl, cannot_w=clw, must_pairs=ml, must_w=mlw)
    return prob, W, b, (cl, clw), (ml, mlw)


def brute_set_ratio(W, b, cl, ml, C, gamma):
    C = np.asarray(C, bool)
    cut = W[np.ix_(C, ~C)].sum()
    viol = cl[1][C[cl[0][:, 0]] == C[cl[0][:, 1]]].sum() + ml[1][C[ml[0][:, 0]] != C[ml[0][:, 1]]].sum()
    B = b.sum()
    return (cut + gamma * viol) * B / (b[C].sum() * b[~C].sum())


def brute_continuous_ratio(W, b, cl, ml, f, gamma):
    D = np.abs(f[:, None] - f[None, :])
    T = f.max() - f.min()
    num = 0.5 * (W * D).sum()
    num += gamma * (ml[1] * D[ml[0][:, 0], ml[0][:, 1]]).sum()
    num += gamma * (cl[1] * (T - D[cl[0][:, 0], cl[0][:, 1]])).sum()
    S = (b[:, None] * b[None, :] * D).sum() / (2 * b.sum())
    return num / S


def nontrivial_subsets(n):
    for bits in itertools.product([False, True], repeat=n):
        if 0 < sum(bits) < n:
            yield np.array(bits)


# ---------------------------------------------------------------- functionals


@given(seed=st.integers(0, 10_000), gamma=st.sampled_from([0.0, 0.3, 2.5]))
def test_relaxation_is_exact_on_indicators(seed, gamma):
    """F_gamma(a 1_C + c) == F^_gamma(C) == the paper's formula, for every C."""
    prob, W, b, cl, ml = random_instance(seed)
    rng = np.random.default_rng(seed + 1)
    for C in nontrivial_subsets(prob.n):
        expected = brute_set_ratio(W, b, cl, ml, C, gamma)
        assert set_ratio(prob, C, gamma) == pytest.approx(expected, rel=1e-12)
        a, c = rng.uniform(0.5, 3.0) * rng.choice([-1, 1]), rng.normal()
        assert continuous_ratio(prob, a * C + c, gamma) == pytest.approx(expected, rel=1e-10)


@given(seed=st.integers(0, 10_000), gamma=st.sampled_from([0.0, 1.7]))
def test_continuous_ratio_matches_formula_and_is_invariant(seed, gamma):
    prob, W, b, cl, ml = random_instance(seed)
    f = np.round(np.random.default_rng(seed).normal(size=prob.n), 1)  # ties on purpose
    if f.max() == f.min():
        f[0] += 1.0
    value = continuous_ratio(prob, f, gamma)
    assert value == pytest.approx(brute_continuous_ratio(W, b, cl, ml, f, gamma), rel=1e-10)
    assert continuous_ratio(prob, -2.5 * f + 7.0, gamma) == pytest.approx(value, rel=1e-10)


@given(seed=st.integers(0, 10_000))
def test_balance_subgradient_with_ties(seed):
    """<s, 1> = 0 and <s, f> = S(f) for the sort-based subgradient, ties included,
    and s is a subgradient: S(h) >= <s, h> for any h."""
    prob, _, b, _, _ = random_instance(seed)
    rng = np.random.default_rng(seed)
    f = rng.integers(0, 3, prob.n).astype(float)
    s = balance_subgradient(prob, f)
    S_brute = (b[:, None] * b[None, :] * np.abs(f[:, None] - f[None, :])).sum() / (2 * b.sum())
    assert abs(s.sum()) < 1e-12
    assert s @ f == pytest.approx(S_brute, abs=1e-12)
    assert balance_lovasz(prob, f) == pytest.approx(S_brute, abs=1e-12)
    h = rng.normal(size=prob.n)
    assert balance_lovasz(prob, h) >= s @ h - 1e-12


# ---------------------------------------------------------------- thresholding


@given(seed=st.integers(0, 10_000), gamma=st.sampled_from([0.0, 0.5, 4.0]))
def test_threshold_is_optimal_over_all_thresholds(seed, gamma):
    """Every candidate ratio, cut, violation and feasibility flag equals a direct
    evaluation of the level set; the argmin is the best one."""
    prob, W, b, cl, ml = random_instance(seed)
    f = np.round(np.random.default_rng(seed).normal(size=prob.n), 1)
    if f.max() == f.min():
        f[-1] -= 1.0
    res = optimal_threshold(prob, f, gamma)
    levels = np.unique(f)[:-1]
    np.testing.assert_array_equal(res.thresholds, levels)
    brute = np.array([brute_set_ratio(W, b, cl, ml, f > t, gamma) for t in levels])
    np.testing.assert_allclose(res.ratios, brute, rtol=1e-10)
    feas = np.array([prob.constraint_counts(f > t)[1] == 0 for t in levels])
    np.testing.assert_array_equal(res.feasible, feas)
    assert res.ratio == pytest.approx(brute.min(), rel=1e-12)
    assert set_ratio(prob, res.mask, gamma) == pytest.approx(res.ratio, rel=1e-10)
    assert res.n_violated == prob.constraint_counts(res.mask)[1]
    restricted = optimal_threshold(prob, f, gamma, feasible_only=True)
    if feas.any():
        assert restricted.ratio == pytest.approx(brute[feas].min(), rel=1e-12)
        assert restricted.n_violated == 0
    else:
        assert restricted is None


@given(seed=st.integers(0, 10_000), gamma=st.sampled_from([0.0, 1.0]))
def test_threshold_against_all_subsets(seed, gamma):
    """Theorem 2.2 / coarea: min_C F^ <= best threshold of f <= F(f); thresholding
    the indicator of a global minimiser returns the global minimum."""
    prob, W, b, cl, ml = random_instance(seed)
    values = [(brute_set_ratio(W, b, cl, ml, C, gamma), C) for C in nontrivial_subsets(prob.n)]
    best_val, best_C = min(values, key=lambda x: x[0])
    f = np.random.default_rng(seed).normal(size=prob.n)
    res = optimal_threshold(prob, f, gamma)
    assert best_val - 1e-12 <= res.ratio <= continuous_ratio(prob, f, gamma) + 1e-12
    assert optimal_threshold(prob, best_C.astype(float), gamma).ratio == pytest.approx(best_val, rel=1e-12)


def test_threshold_docstring_case_by_hand():
    """Barbell(3, 0): {3,4,5} has NCut 1*14/49; with a cannot-link (0, 2) and gamma=1
    the best feasible level set is {2,...,5} with cut 2: 2*14/(4*10) = 0.7."""
    W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    P = RatioProblem(W, cannot_pairs=[[0, 2]])
    f = np.array([0.0, 0.1, 0.5, 0.6, 0.9, 1.0])
    r = optimal_threshold(P, f, 1.0)
    assert r.ratio == pytest.approx(min(2 * 14 / 49, 2 * 14 / 40))
    r = optimal_threshold(P, f, 1.0, feasible_only=True)
    assert r.mask.tolist() == [False, False, True, True, True, True] and r.ratio == pytest.approx(0.7)


# ---------------------------------------------------------------- inner solver vs cvxpy


def cvxpy_inner(prob, g, gamma):
    cp = pytest.importorskip("cvxpy")
    n = prob.n
    f = cp.Variable(n)
    D = sp.csr_array((np.r_[np.ones(prob.n_edges), -np.ones(prob.n_edges)],
                      (np.r_[np.arange(prob.n_edges), np.arange(prob.n_edges)], np.r_[prob.ei, prob.ej])),
                     shape=(prob.n_edges, n))
    c = gamma * prob.cq.sum()
    obj = prob.edge_weights(gamma) @ cp.abs(D @ f) - g @ f
    if c > 0:
        obj = obj + c * (cp.max(f) - cp.min(f))
    pb = cp.Problem(cp.Minimize(obj), [cp.norm(f, 2) <= 1])
    pb.solve(solver=cp.CLARABEL)
    return pb.value, f.value


@pytest.mark.parametrize("gamma", [0.0, 0.8])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_inner_solver_matches_cvxpy(seed, gamma):
    prob, *_ = random_instance(seed, n=12, p=0.3, n_cl=4, n_ml=2)
    rng = np.random.default_rng(seed)
    g = dca_linear_term(prob, rng.normal(size=prob.n), gamma)
    res = solve_inner(prob, g, gamma, max_iter=50_000, gap_tol=1e-10)
    ref_val, ref_f = cvxpy_inner(prob, g, gamma)
    assert res.primal == pytest.approx(ref_val, abs=1e-5 * max(1.0, abs(ref_val)))
    assert res.dual <= res.primal + 1e-12
    assert res.dual == pytest.approx(ref_val, abs=1e-5 * max(1.0, abs(ref_val)))
    if ref_val < -1e-3:  # unique minimiser on the sphere (strictly negative optimum)
        np.testing.assert_allclose(res.f, ref_f, atol=1e-3)


def dca_linear_term(prob, f, gamma):
    """g = r2(f) + F(f) s(f): the linear term of a RatioDCA step at f."""
    g = continuous_ratio(prob, f, gamma) * balance_subgradient(prob, f)
    if gamma > 0:
        sgn = gamma * prob.cq * np.sign(f[prob.ca] - f[prob.cb])
        g += np.bincount(prob.ca, sgn, prob.n) - np.bincount(prob.cb, sgn, prob.n)
    return g


def test_inner_warm_start_is_used():
    """Restarting from the returned duals continues where the last call stopped."""
    prob, *_ = random_instance(3, n=12, p=0.3)
    g = dca_linear_term(prob, np.random.default_rng(3).normal(size=prob.n), 0.5)
    cold = solve_inner(prob, g, 0.5, max_iter=20, gap_tol=0.0)
    warm = solve_inner(prob, g, 0.5, state=cold.state, max_iter=20, gap_tol=0.0)
    long = solve_inner(prob, g, 0.5, max_iter=2000, gap_tol=0.0)
    assert cold.dual < warm.dual <= long.dual + 1e-12
    assert warm.dual - cold.dual > 0.5 * (long.dual - cold.dual) or warm.gap < cold.gap
    assert long.primal < 0 and long.gap < 1e-6 * abs(long.dual)
    assert isinstance(DualState.initial(prob, g), DualState)


# ---------------------------------------------------------------- RatioDCA


@given(seed=st.integers(0, 10_000), gamma=st.sampled_from([0.0, 0.4, 3.0]))
@settings(max_examples=25)
def test_ratio_dca_decreases_monotonically(seed, gamma):
    prob, *_ = random_instance(seed, n=10, p=0.4)
    f0 = np.random.default_rng(seed).normal(size=prob.n)
    seen = []
    res = ratio_dca(prob, f0, gamma, callback=lambda it, f, lam: seen.append(lam) and False)
    hist = np.array(res.history)
    assert hist[0] == pytest.approx(continuous_ratio(prob, f0, gamma), rel=1e-12)
    assert np.all(np.diff(hist) < 0)
    assert res.ratio == pytest.approx(continuous_ratio(prob, res.f, gamma), rel=1e-10)
    assert seen == res.history[1:]
    assert res.reason in {"inner optimum zero", "relative decrease", "constant iterate", "inner budget",
                          "zero ratio", "max_outer"}


def test_ratio_dca_callback_can_stop_and_progress_runs():
    prob, *_ = random_instance(5, n=10)
    f0 = np.random.default_rng(0).normal(size=prob.n)
    res = ratio_dca(prob, f0, 0.5, callback=lambda it, f, lam: True, progress=True)
    assert res.reason == "callback" and not res.converged and len(res.history) == 2


def test_ratio_dca_caps():
    prob, *_ = random_instance(6, n=10)
    f0 = np.random.default_rng(0).normal(size=prob.n)
    res = ratio_dca(prob, f0, 0.0, max_outer=1)
    assert res.n_outer == 1 and len(res.history) <= 2
    const = ratio_dca(prob, np.ones(prob.n), 0.0)  # perturbed, not a crash
    assert np.isfinite(const.ratio)


# ---------------------------------------------------------------- 2-way building blocks


def test_one_spectral_barbell_splits_the_bells():
    W = nx.to_scipy_sparse_array(nx.barbell_graph(5, 0), format="csr")
    for cut, expected in [("ncut", 1 * 42 / (21 * 21)), ("rcut", 1 * 10 / 25)]:
        res = one_spectral_bipartition(W, cut=cut, n_starts=2, random_state=0)
        assert res.labels.tolist() == [0] * 5 + [1] * 5
        assert res.ratio == pytest.approx(expected)
        assert res.n_violated == 0 and res.gamma == 0.0


def test_one_spectral_two_moons():
    X, y = make_moons(500, noise=0.1, random_state=0)
    W = gc.knn_matrix(X, 10)
    res = one_spectral_bipartition(W, n_starts=2, random_state=0, tol=1e-4)
    err = min(np.mean(res.labels != y), np.mean(res.labels == y))
    assert err < 0.05
    # the relaxation is tight: never worse than the spectral start's best level set
    start = optimal_threshold(RatioProblem(W), spectral_start(W, random_state=0))
    assert res.ratio <= start.ratio + 1e-12


def test_one_spectral_disconnected_graph_cuts_nothing():
    G = nx.disjoint_union(nx.complete_graph(4), nx.cycle_graph(5))
    res = one_spectral_bipartition(nx.to_scipy_sparse_array(G, format="csr"), n_starts=3, random_state=1)
    assert res.cut == 0.0 and res.ratio == 0.0
    assert res.labels.tolist() == [0] * 4 + [1] * 5


@given(seed=st.integers(0, 10_000))
@settings(max_examples=10)
def test_cosc_from_consistent_start_satisfies_everything(seed):
    """Theorem 2.1 + the improvement property: from a consistent C0 at
    gamma > gvol(V) * NCut(C0) / 4, the result violates nothing and cuts no more."""
    rng = np.random.default_rng(seed)
    n = 12
    G = nx.planted_partition_graph(2, n // 2, 0.6, 0.15, seed=seed)
    G.add_edges_from(zip(range(n - 1), range(1, n)))  # connected
    W = nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr")
    y = np.repeat([0, 1], n // 2)
    pairs = rng.integers(0, n, (6, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    cl = pairs[y[pairs[:, 0]] != y[pairs[:, 1]]]
    if len(cl) == 0:
        cl = np.array([[0, n - 1]])
    prob = RatioProblem(W, cannot_pairs=cl)
    C0 = y == 1
    ncut0 = set_ratio(prob, C0, 0.0)
    gamma = 1.01 * prob.gvol * ncut0 / 4
    res = cosc_bipartition(prob, gamma=gamma, init=C0.astype(float))
    assert res.n_violated == 0
    assert res.balanced_cut <= ncut0 + 1e-12
    assert res.ratio == pytest.approx(set_ratio(prob, res.labels, gamma), rel=1e-10)
    # brute force: every global minimiser of F^_gamma is consistent (Theorem 2.1)
    subsets = np.array(list(nontrivial_subsets(n)))
    vals = np.array([set_ratio(prob, C, gamma) for C in subsets])
    assert all(prob.constraint_counts(C)[1] == 0 for C in subsets[vals <= vals.min() * (1 + 1e-12)])


def test_cosc_gamma_trades_cut_for_violations():
    W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    free = cosc_bipartition(W, cannot_pairs=[[0, 2]], gamma=0.0)
    assert free.n_violated == 1 and free.balanced_cut == pytest.approx(14 / 49)
    hard = cosc_bipartition(W, cannot_pairs=[[0, 2]], gamma=2.0)
    assert hard.n_violated == 0 and hard.ratio == pytest.approx(0.7)
    # warm start across gamma: same answer from the free run's vector and duals
    warm = cosc_bipartition(W, cannot_pairs=[[0, 2]], gamma=2.0, init=free.f + 0.01 * np.arange(6),
                            state=free.state)
    assert warm.ratio <= free.ratio + 2.0 * 14 / 49
    assert cosc_bipartition(W, "rcut", [[0, 2]], gamma=2.0, feasible_only=True).n_violated == 0


def test_soft_must_links_enter_as_edges():
    """A soft must-link of weight q adds gamma*q to the cut when it is cut."""
    W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    P = RatioProblem(W, must_pairs=[[0, 5]], must_w=[2.0])
    C = np.array([0, 0, 0, 1, 1, 1])
    assert set_ratio(P, C, 0.5) == pytest.approx((1 + 0.5 * 2.0) * 14 / 49)
    assert continuous_ratio(P, C, 0.5) == pytest.approx((1 + 0.5 * 2.0) * 14 / 49)


def test_merged_problem_keeps_original_vertex_weights():
    """After contract, F^ with summed ORIGINAL degrees equals F^ on the original graph
    for every non-separating partition (Lemma 2.3); recomputed degrees would not."""
    G = nx.barbell_graph(4, 1)
    W = nx.to_scipy_sparse_array(G, format="csr")
    deg = np.asarray(W.sum(axis=1)).ravel()
    problem = gc.Problem.from_arrays(W, vertex_weights=deg,
                                     S=gc.SideInfo.from_pairs(must=[(0, 1), (5, 6)], weight=np.inf))
    reduced, lift = gc.contract(problem)
    Pr = RatioProblem(reduced.W, reduced.vertex_weights)
    Po = RatioProblem(W)
    for C in nontrivial_subsets(reduced.n_nodes):
        assert set_ratio(Pr, C, 0.0) == pytest.approx(set_ratio(Po, lift(C.astype(int)), 0.0), rel=1e-12)
    res = one_spectral_bipartition(reduced.W, reduced.vertex_weights, n_starts=2, random_state=0)
    assert res.ratio == pytest.approx(set_ratio(Po, lift(res.labels), 0.0), rel=1e-12)


# ---------------------------------------------------------------- errors


def small():
    return nx.to_scipy_sparse_array(nx.path_graph(4), format="csr")


@pytest.mark.parametrize("W, match", [
    (np.array([[0, 1], [2, 0]]), r"not symmetric: W\[0, 1\] = 1.0 but W\[1, 0\] = 2.0"),
    (np.array([[0, -1], [-1, 0]]), r"edge \(0, 1\) has weight -1.0"),
    (np.array([[0, np.nan], [np.nan, 0]]), r"edge \(0, 1\) has weight nan"),
    (np.array([[1.0, 1], [1, 0]]), r"self-loop at vertex 0"),
    (np.zeros((2, 3)), r"square"),
    (np.zeros(3), r"square matrix"),
    ([["a", "b"], ["c", "d"]], r"numeric matrix"),
])
def test_bad_graph(W, match):
    with pytest.raises(InvalidGraphError, match=match):
        RatioProblem(W, b=np.ones(np.shape(W)[0]) if np.ndim(W) == 2 else None)


def test_bad_vertex_weights_and_sizes():
    with pytest.raises(InvalidParameterError, match=r"vertex 2 is isolated"):
        RatioProblem(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
    with pytest.raises(InvalidParameterError, match=r"b\[1\] = 0.0"):
        RatioProblem(small(), b=[1, 0, 1, 1])
    with pytest.raises(InvalidParameterError, match=r"shape \(3,\), expected \(4,\)"):
        RatioProblem(small(), b=[1, 1, 1])
    with pytest.raises(InvalidParameterError, match=r"1 vertex"):
        RatioProblem(np.zeros((1, 1)), b=[1.0])


@pytest.mark.parametrize("kw, match", [
    (dict(cannot_pairs=[[0, 7]]), r"cannot-link \(0, 7\) refers to a vertex outside 0..3"),
    (dict(cannot_pairs=[[2, 2]]), r"cannot-link \(2, 2\) joins a vertex to itself"),
    (dict(cannot_pairs=[[0, 3]], cannot_w=[np.inf]), r"cannot-link \(0, 3\) has weight inf"),
    (dict(must_pairs=[[0, 3], [1, 2]], must_w=[1.0, -1.0]), r"must-link \(1, 2\) has weight -1.0"),
    (dict(cannot_pairs=[[0, 1, 2]]), r"shape \(m, 2\)"),
    (dict(cannot_pairs=[[0.5, 1]]), r"integer vertex indices"),
    (dict(cannot_pairs=[[0, 1]], cannot_w=[1.0, 2.0]), r"weights have shape \(2,\), expected \(1,\)"),
    (dict(cannot_w=[1.0]), r"without cannot-link pairs"),
])
def test_bad_constraints(kw, match):
    with pytest.raises(InvalidConstraintError, match=match) as info:
        RatioProblem(small(), **kw)
    if "refers" in match or "itself" in match or "has weight" in match:
        assert info.value.constraint is not None


def test_bad_parameters():
    P = RatioProblem(small())
    f = np.arange(4.0)
    for gamma, match in [(-1.0, r"gamma must be >= 0.0, got -1.0"), (np.nan, r"gamma must be finite")]:
        with pytest.raises(InvalidParameterError, match=match):
            set_ratio(P, [1, 0, 0, 0], gamma)
        with pytest.raises(InvalidParameterError, match=match):
            cosc_bipartition(small(), gamma=gamma)
    with pytest.raises(InvalidParameterError, match=r"cut must be 'ncut' or 'rcut', got 'cheeger'"):
        one_spectral_bipartition(small(), cut="cheeger")
    with pytest.raises(InvalidParameterError, match=r"cut must be 'ncut' or 'rcut', got 'x'"):
        cosc_bipartition(small(), g="x")
    with pytest.raises(InvalidParameterError, match=r"the set is empty"):
        set_ratio(P, [0, 0, 0, 0])
    with pytest.raises(InvalidParameterError, match=r"the whole vertex set"):
        set_ratio(P, [1, 1, 1, 1])
    with pytest.raises(InvalidParameterError, match=r"f is constant"):
        continuous_ratio(P, np.ones(4))
    with pytest.raises(InvalidParameterError, match=r"f is constant"):
        optimal_threshold(P, np.ones(4))
    with pytest.raises(InvalidParameterError, match=r"f\[2\] = nan"):
        continuous_ratio(P, np.array([0, 1, np.nan, 2]))
    with pytest.raises(InvalidParameterError, match=r"init has shape \(3,\), expected \(4,\)"):
        cosc_bipartition(small(), init=np.ones(3))
    with pytest.raises(InvalidParameterError, match=r"n_starts must be >= 1"):
        one_spectral_bipartition(small(), n_starts=0)
    with pytest.raises(InvalidParameterError, match=r"callback must be callable, got int"):
        ratio_dca(P, f, callback=3)
    with pytest.raises(InvalidParameterError, match=r"max_iter must be >= 1"):
        solve_inner(P, f - f.mean(), max_iter=0)
    with pytest.raises(InvalidParameterError, match=r"pass g and the constraint pairs when building it"):
        cosc_bipartition(P, g=np.ones(4))
    with pytest.raises(InvalidParameterError, match=r"the set indicator has shape \(2,\)"):
        set_ratio(P, [1, 0])


@pytest.mark.parametrize("solver", ["arpack", "lobpcg"])
def test_spectral_start_iterative_solvers_match_dense(monkeypatch, solver):
    # weighted merged vertices (b != degrees), so the generalised problem is exercised
    import graphclust.spectral.onespectral as mod

    X, _ = make_moons(600, noise=0.1, random_state=1)
    W = gc.knn_matrix(X, 10)
    b = np.asarray(W.sum(axis=1)).ravel() * np.random.default_rng(0).uniform(0.5, 2.0, 600)
    dense = spectral_start(W, b)
    monkeypatch.setattr(mod, "_DENSE_MAX", 10)
    if solver == "lobpcg":
        monkeypatch.setattr(mod, "_ARPACK_MAX", 10)
    approx = spectral_start(W, b, random_state=0)
    # same eigenvector up to sign and scale, and the same balanced cut at its best level set
    cos = abs(dense @ approx) / (np.linalg.norm(dense) * np.linalg.norm(approx))
    assert cos > 0.99
    P = RatioProblem(W, b)
    assert optimal_threshold(P, approx).ratio == pytest.approx(optimal_threshold(P, dense).ratio, rel=0.05)
