"""Tests for graphclust.inference.exact: brute force, minimum cut and the exact front."""

import networkx as nx
import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError, ProblemTooLargeError
from graphclust.inference import brute_force, exact, icm, mincut

from .conftest import make_case, random_raw

inf = np.inf


def binary_grid(h, w, *, seed=0, n_seeds=0, hard_edges=0, integer=False):
    """A random binary attractive grid energy, optionally with hard seeds and hard edges."""
    rng = np.random.default_rng(seed)
    idx = np.arange(h * w).reshape(h, w)
    e = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                        np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    U = rng.uniform(0, 2, size=(h * w, 2))
    wts = rng.uniform(0.05, 1.0, size=len(e))
    if integer:
        U, wts = np.round(U * 4), np.round(wts * 4) + 1
    if n_seeds:
        s = rng.choice(h * w, size=n_seeds, replace=False)
        U[s[: n_seeds // 2], 1] = inf
        U[s[n_seeds // 2:], 0] = inf
    if hard_edges:
        wts[rng.choice(len(e), size=hard_edges, replace=False)] = inf
    return Energy(U, e, wts)


def networkx_min_energy(E):
    """Minimum energy by the textbook construction solved with networkx.minimum_cut.

    Written independently of graphclust's own construction: infinite terms are edges
    without a capacity attribute, which networkx treats as infinite.
    """
    G = nx.DiGraph()
    n = E.n_nodes
    G.add_nodes_from(["s", "t", *range(n)])
    const = E.constant
    for i, (u0, u1) in enumerate(E.unary):
        m = min(u0, u1)
        const += m
        if u1 > m:
            G.add_edge("s", i, **({} if np.isinf(u1) else {"capacity": u1 - m}))
        if u0 > m:
            G.add_edge(i, "t", **({} if np.isinf(u0) else {"capacity": u0 - m}))
    for (u, v), w in zip(E.edges.tolist(), E.weights.tolist()):
        attrs = {} if np.isinf(w) else {"capacity": w}
        G.add_edge(u, v, **attrs)
        G.add_edge(v, u, **attrs)
    cut, _ = nx.minimum_cut(G, "s", "t")
    return const + cut


# ---------------------------------------------------------------------- brute force
def test_brute_force_matches_reference(small_case):
    res = brute_force(small_case.energy)
    if np.isfinite(small_case.opt):
        assert res.energy == pytest.approx(small_case.opt, rel=1e-12, abs=1e-12)
        assert res.info["n_optima"] == small_case.n_optima
        if small_case.n_optima == 1:
            np.testing.assert_array_equal(res.labels, small_case.opt_labels)
    else:
        assert res.energy == inf and res.lower_bound == inf and not res.info["feasible"]
    assert res.lower_bound == res.energy and res.converged


def test_brute_force_ties_go_to_the_lexicographically_first():
    E = Energy(np.zeros((4, 3)))
    res = brute_force(E)
    np.testing.assert_array_equal(res.labels, [0, 0, 0, 0])
    assert res.info["n_optima"] == 81 and res.info["n_labellings"] == 81


def test_brute_force_chunks_agree_with_reference():
    """More labellings than one chunk (3**11 > 2**15)."""
    raw = random_raw(np.random.default_rng(5), 11, 3, label_costs=True, tables=True)
    E = raw.build()
    res = brute_force(E)
    Z = np.random.default_rng(0).integers(3, size=(2000, 11))
    assert res.energy <= min(E.evaluate(z) for z in Z)
    ref = make_case("big", random_raw(np.random.default_rng(5), 8, 3, label_costs=True, tables=True))
    assert brute_force(ref.energy).energy == pytest.approx(ref.opt)


def test_brute_force_callback_can_stop_early():
    E = Energy(np.random.default_rng(0).uniform(size=(10, 3)))
    calls = []
    res = brute_force(E, callback=lambda c, z, v: calls.append(c) or True)
    assert calls == [0] and not res.converged and res.lower_bound is None
    full = brute_force(E, callback=lambda c, z, v: False, progress=True)
    assert full.converged and full.energy <= res.energy


def test_brute_force_refuses_too_many_nodes():
    with pytest.raises(ProblemTooLargeError, match=r"13 nodes, more than max_nodes=12"):
        brute_force(Energy(np.zeros((13, 2))))
    with pytest.raises(ProblemTooLargeError, match=r"10\*\*9 = 1000000000 labellings"):
        brute_force(Energy(np.zeros((9, 10))), max_nodes=20)
    with pytest.raises(InvalidParameterError, match="max_nodes must be >= 1"):
        brute_force(Energy(np.zeros((2, 2))), max_nodes=0)


# ---------------------------------------------------------------------- min cut
@pytest.mark.parametrize("seed", range(12))
def test_mincut_matches_brute_force_on_tiny_grids(seed):
    rng = np.random.default_rng(seed)
    h, w = (2, 3) if seed % 2 else (3, 3)
    E = binary_grid(h, w, seed=seed, n_seeds=int(rng.integers(0, 3)), hard_edges=int(rng.integers(0, 2)))
    res, ref = mincut(E), brute_force(E)
    assert res.energy == pytest.approx(ref.energy, rel=1e-12)
    assert res.lower_bound == res.energy
    if ref.info["n_optima"] == 1:
        np.testing.assert_array_equal(res.labels, ref.labels)


@pytest.mark.parametrize("seed", range(8))
def test_mincut_with_label_costs_matches_brute_force(seed):
    raw = random_raw(np.random.default_rng(seed), 7, 2, attractive=True, label_costs=True)
    raw.label_costs = raw.label_costs * (4 if seed % 2 else 1)  # sometimes strong enough to win
    E = raw.build()
    assert mincut(E).energy == pytest.approx(brute_force(E).energy, rel=1e-12)


def test_mincut_label_costs_can_make_a_constant_labelling_optimal():
    E = Energy([[0.0, 0.5], [0.5, 0.0], [0.0, 0.5]], label_costs=[0.0, 2.0])
    res = mincut(E)
    np.testing.assert_array_equal(res.labels, [0, 0, 0])
    assert res.energy == 0.5


@pytest.mark.parametrize("seed,n_seeds,hard_edges", [(0, 0, 0), (1, 6, 0), (2, 4, 5), (3, 10, 10)])
def test_mincut_matches_networkx_on_medium_grids(seed, n_seeds, hard_edges):
    E = binary_grid(14, 15, seed=seed, n_seeds=n_seeds, hard_edges=hard_edges)
    ref = networkx_min_energy(E)
    res = mincut(E)
    assert res.info["feasible"]
    assert res.energy == pytest.approx(ref, rel=1e-10)
    res_nx = mincut(E, flow="networkx")
    assert res_nx.info["flow"] == "networkx"
    assert res_nx.energy == pytest.approx(ref, rel=1e-10)
    np.testing.assert_allclose(res.info["flow_value"], res_nx.info["flow_value"], rtol=1e-10)


def test_mincut_is_exact_on_integer_energies_and_beats_icm():
    E = binary_grid(40, 40, seed=9, n_seeds=20, integer=True)
    res = mincut(E)
    assert res.energy == networkx_min_energy(E)
    assert res.energy <= icm(E, random_state=0).energy


def test_mincut_ties_go_to_label_zero():
    """With nothing to choose between the labels, every node gets label 0."""
    E = Energy(np.ones((5, 2)), edges=[(0, 1), (2, 3)], weights=[1.0, 1.0])
    np.testing.assert_array_equal(mincut(E).labels, np.zeros(5))
    np.testing.assert_array_equal(mincut(E, flow="networkx").labels, np.zeros(5))


def test_mincut_is_invariant_to_node_order():
    """A deterministic exact engine gives the same partition after shuffling nodes."""
    E = binary_grid(9, 9, seed=4, n_seeds=4)
    perm = np.random.default_rng(0).permutation(E.n_nodes)
    inv = np.argsort(perm)
    P = Energy(E.unary[perm], inv[E.edges], E.weights)
    np.testing.assert_array_equal(mincut(P).labels[inv], mincut(E).labels)


def test_mincut_infeasible_hard_terms():
    """Seeds of both labels joined by a hard must-link: every labelling is infeasible."""
    E = Energy([[0.0, inf], [0.0, 0.0], [inf, 0.0]], edges=[(0, 1), (1, 2)], weights=[inf, inf])
    res = mincut(E)
    assert res.energy == inf and res.lower_bound == inf and not res.info["feasible"]
    assert brute_force(E).energy == inf


def test_mincut_meets_hard_seeds_against_strong_unaries():
    E = Energy([[0.0, inf], [0.0, 9.0], [9.0, 0.0], [inf, 0.0]], edges=[(0, 1), (1, 2), (2, 3)],
               weights=[inf, 0.1, inf])
    res = mincut(E)
    np.testing.assert_array_equal(res.labels, [0, 0, 1, 1])
    assert res.energy == pytest.approx(0.1)


def test_mincut_refuses_what_it_cannot_represent():
    with pytest.raises(InvalidParameterError, match="exactly 2 labels, the energy has 3"):
        mincut(Energy(np.zeros((3, 3))))
    with pytest.raises(InvalidParameterError, match=r"edge \(1, 2\) has weight -0.5 .*non-submodular"):
        mincut(Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2)], weights=[1.0, -0.5]))
    with pytest.raises(InvalidParameterError, match=r"1 pair tables \(first on nodes \(2, 0\)\)"):
        mincut(Energy(np.zeros((3, 2)), table_edges=[(2, 0)], tables=np.zeros((1, 2, 2))))
    with pytest.raises(InvalidParameterError, match="flow must be 'bk' or 'networkx', got 'pushrelabel'"):
        mincut(Energy(np.zeros((3, 2))), flow="pushrelabel")


# ---------------------------------------------------------------------- exact()
def test_exact_auto_picks_mincut_for_large_binary_attractive():
    E = binary_grid(30, 30, seed=1, n_seeds=8)
    res = exact(E)
    assert res.info["method"] == "mincut" and res.energy == res.lower_bound


def test_exact_auto_picks_brute_force_otherwise(small_case):
    res = exact(small_case.energy)
    binary_attr = small_case.energy.n_labels == 2 and small_case.energy.is_attractive
    assert res.info["method"] == ("mincut" if binary_attr else "brute-force")
    if np.isfinite(small_case.opt):
        assert res.energy == pytest.approx(small_case.opt, rel=1e-12, abs=1e-12)
    else:
        assert res.energy == inf


def test_exact_refuses_large_non_binary_before_work():
    with pytest.raises(ProblemTooLargeError, match=r"this energy has 3 labels.*max_nodes=12 nodes \(it has 20\)"):
        exact(Energy(np.zeros((20, 3))))
    rep = Energy(np.zeros((14, 2)), edges=[(0, 1)], weights=[-1.0])
    with pytest.raises(ProblemTooLargeError, match="repulsive"):
        exact(rep)
    tab = Energy(np.zeros((14, 2)), table_edges=[(0, 1)], tables=np.zeros((1, 2, 2)))
    with pytest.raises(ProblemTooLargeError, match="pair tables"):
        exact(tab)
    res = exact(rep, max_nodes=14)
    assert res.info["method"] == "brute-force" and res.energy == 0.0


def test_exact_explicit_methods():
    E = binary_grid(2, 3, seed=3)
    assert exact(E, method="brute-force").energy == pytest.approx(exact(E, method="mincut").energy)
    with pytest.raises(InvalidParameterError, match="method must be 'auto', 'mincut' or 'brute-force', got 'ilp'"):
        exact(E, method="ilp")
    with pytest.raises(InvalidParameterError, match="exactly 2 labels"):
        exact(Energy(np.zeros((3, 3))), method="mincut")


# ---------------------------------------------------------------------- the max-flow layout
def test_flow_layout_int32_and_same_arcs_as_a_stable_sort():
    """The arc layout is built in int32 when it fits, and lists each node's arcs in
    increasing arc order (what a stable argsort by tail gives, the former layout)."""
    import importlib

    ex = importlib.import_module("graphclust.inference.exact")
    rng = np.random.default_rng(0)
    n = 50
    edges = rng.integers(n, size=(300, 2))
    edges = edges[edges[:, 0] != edges[:, 1]]
    head, adj_ptr, adj_arc = ex._bk_structure(n, edges)
    assert head.dtype == adj_ptr.dtype == adj_arc.dtype == np.int32
    tail = np.stack([edges[:, 0], edges[:, 1]], 1).ravel()
    np.testing.assert_array_equal(head, np.stack([edges[:, 1], edges[:, 0]], 1).ravel())
    np.testing.assert_array_equal(adj_arc, np.argsort(tail, kind="stable"))
    np.testing.assert_array_equal(adj_ptr, np.concatenate([[0], np.cumsum(np.bincount(tail, minlength=n))]))
    assert ex._index_dtype(10, 2**31 - 2) == np.int32
    assert ex._index_dtype(10, 2**31 - 1) == np.int64 and ex._index_dtype(2**31, 5) == np.int64


def test_max_flow_same_cut_with_int64_layout():
    """The compiled max-flow gives the same cut on an int64 layout as on the int32 one
    (the kernels are compiled for both)."""
    import importlib

    ex = importlib.import_module("graphclust.inference.exact")
    rng = np.random.default_rng(1)
    n = 400
    idx = np.arange(n).reshape(20, 20)
    edges = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                            np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    w = rng.uniform(0.1, 1.0, len(edges))
    t = rng.normal(0, 1, n)
    cuts = []
    for dtype in (np.int32, np.int64):
        head, adj_ptr, adj_arc = (a.astype(dtype) for a in ex._bk_structure(n, edges))
        flow, tree = ex._bk_maxflow(n, head, np.repeat(w, 2), adj_ptr, adj_arc, t.copy(), 1e-12)
        cuts.append((flow, tree == ex._SINK_TREE))
    assert cuts[0][0] == pytest.approx(cuts[1][0], rel=1e-12)
    np.testing.assert_array_equal(cuts[0][1], cuts[1][1])
