"""Tests for graphclust.inference.expansion: α-expansion and αβ-swap by minimum cuts."""

import itertools

import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.graphs import knn_matrix
from graphclust.inference import (
    ENGINES,
    alpha_beta_swap,
    alpha_expansion,
    belief_propagation,
    brute_force,
    icm,
    mincut,
    solve,
)
from graphclust.inference.expansion import _fill_move, _fill_qpbo, _MoveGraph, _QPBOGraph, _runner_up
from graphclust.inference.icm import _surrogate

from .conftest import random_raw

ENGINES_UNDER_TEST = [alpha_expansion, alpha_beta_swap]
inf = np.inf


def _tol(x):
    return 1e-9 * (1.0 + abs(x))


def _random_energy(seed, **kw):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 5))
    n = int(rng.integers(2, 8 if K < 4 else 7))
    return rng, random_raw(rng, n, K, **kw).build()


def grid_energy(shape, K, *, noise=0.3, beta=0.5, seed=0, connectivity="faces"):
    """Noisy planted labels on a 2-D or 3-D grid (face neighbours): unary = squared
    distance to the class means, one Potts weight."""
    rng = np.random.default_rng(seed)
    idx = np.arange(int(np.prod(shape))).reshape(shape)
    coords = np.indices(shape)
    truth = (coords[0] * K // shape[0]).astype(np.int64)
    means = np.linspace(0, 1, K)
    image = means[truth] + rng.normal(0, noise, shape)
    U = (image.reshape(-1, 1) - means) ** 2
    edges = []
    for ax in range(len(shape)):
        a = np.moveaxis(idx, ax, 0)
        edges.append(np.stack([a[:-1].ravel(), a[1:].ravel()], 1))
    edges = np.concatenate(edges)
    return Energy(U, edges, np.full(len(edges), beta)), truth.ravel()


def single_node_local_minimum(E, z):
    """No single-node change lowers the energy (vectorised over nodes and labels)."""
    n, K = E.n_nodes, E.n_labels
    cost = E.unary.copy()
    for (i, j), w in zip(E.edges, E.weights):  # small energies only
        for a, b in ((i, j), (j, i)):
            # Potts share of node a: w[a≠z_b] (w>0) or |w|[a=z_b] (w<0), as a function of a's label
            row = np.where(np.arange(K) != z[b], w, 0.0) if w > 0 else np.where(np.arange(K) == z[b], -w, 0.0)
            cost[a] += row
    own = cost[np.arange(n), z]
    return bool((cost >= own[:, None] - 1e-9 * (1 + np.abs(own[:, None]))).all())


# ---------------------------------------------------------------------- registration
def test_engines_registered_as_approximate():
    """Both engines are in the registry, not exact, with no capability restriction."""
    for name, func in (("expansion", alpha_expansion), ("swap", alpha_beta_swap)):
        engine, caps = ENGINES[name]
        assert engine is func
        assert not caps["exact"] and not caps["binary_only"] and not caps["attractive_only"]


# ---------------------------------------------------------------------- brute force
@pytest.mark.parametrize("engine", ENGINES_UNDER_TEST)
def test_never_above_optimum_or_start_and_monotone(engine):
    """On random small energies (mixed signs, hard terms, label costs, tables): the
    reported energy is evaluate(labels), >= the brute-force optimum, <= a feasible
    start, and the energy after every move never increases."""
    for seed in range(60):
        rng, E = _random_energy(seed, hard=seed % 2 == 0, label_costs=seed % 5 == 0, tables=seed % 7 == 0,
                                attractive=seed % 3 == 0)
        opt = brute_force(E).energy
        init = rng.integers(E.n_labels, size=E.n_nodes)
        start = E.evaluate(init)
        for z0 in (None, init):
            res = engine(E, init=z0, random_state=seed, tol=0.0)
            assert res.energy == E.evaluate(res.labels)
            assert res.energy >= opt - _tol(opt)
            moves = np.array(res.info["move_history"])
            assert len(moves) == res.info["n_moves"]
            assert (np.diff(moves) <= 1e-9 * (1 + np.abs(moves[:-1]))).all(), f"seed {seed}: a move increased"
            assert np.all(np.diff(res.history) <= 1e-9 * (1 + np.abs(np.array(res.history[:-1]))))
            if z0 is not None and np.isfinite(start):
                assert res.energy <= start + _tol(start)
                assert E.violated_hard_terms(res.labels) == 0
            assert res.converged


@pytest.mark.parametrize("seed", range(40))
def test_potts_expansion_bound(seed):
    """Non-negative Potts weights, any unaries: a converged expansion labelling obeys
    E(x) <= E_unary(x*) + 2 E_pair(x*) (Boykov et al. 2001, Theorem 6.1), from any init."""
    rng = np.random.default_rng(seed)
    K, n = int(rng.integers(3, 5)), int(rng.integers(4, 8))
    pairs = np.array(list(itertools.combinations(range(n), 2)))
    e = pairs[rng.choice(len(pairs), size=int(rng.integers(n, len(pairs) + 1)), replace=False)]
    E = Energy(rng.uniform(-1, 3, (n, K)), e, rng.uniform(0.1, 3.0, len(e)), constant=0.5)
    best = brute_force(E)
    unary_part = E.unary[np.arange(n), best.labels].sum() + E.constant
    bound = unary_part + 2 * (best.energy - unary_part)
    res = alpha_expansion(E, init=rng.integers(K, size=n), random_state=seed, tol=0.0)
    assert res.converged and res.info["moves"] == "expansion"
    assert res.energy <= bound + _tol(bound)
    assert single_node_local_minimum(E, res.labels)


@pytest.mark.parametrize("engine", ENGINES_UNDER_TEST)
@pytest.mark.parametrize("seed", range(12))
def test_two_labels_attractive_equals_mincut(engine, seed):
    """Two labels, attractive terms (hard seeds and must-links too): the exact minimum."""
    rng = np.random.default_rng(seed)
    E = random_raw(rng, int(rng.integers(2, 40)), 2, hard=seed % 2 == 0, attractive=True).build()
    exact = mincut(E)
    res = engine(E, init=rng.integers(2, size=E.n_nodes), random_state=seed)
    assert res.energy == pytest.approx(exact.energy, rel=1e-9, abs=1e-9)
    assert res.info["moves"] == "swap"


@pytest.mark.parametrize("engine", ENGINES_UNDER_TEST)
def test_two_label_grid_with_seeds_equals_mincut(engine):
    """A 30x30 binary grid with hard seeds (infinite unaries): the cut's optimum."""
    rng = np.random.default_rng(4)
    E, _ = grid_energy((30, 30), 2, seed=4, beta=0.4)
    U = E.unary.copy()
    seeds = rng.choice(E.n_nodes, size=20, replace=False)
    U[seeds[:10], 0] = inf
    U[seeds[10:], 1] = inf
    E = Energy(U, E.edges, E.weights)
    assert engine(E, random_state=0).energy == pytest.approx(mincut(E).energy, rel=1e-12)


# ---------------------------------------------------------------------- cannot-links
@pytest.mark.parametrize("engine", ENGINES_UNDER_TEST)
def test_satisfied_hard_cannot_links_stay_satisfied(engine):
    """From a labelling that meets every hard cannot-link (and must-link), no move
    breaks one, even where a cannot-linked pair would like to share a label."""
    for seed in range(30):
        rng = np.random.default_rng(seed)
        n, K = 40, 4
        planted = rng.integers(K, size=n)
        pairs = np.array(list(itertools.combinations(range(n), 2)))
        diff = pairs[planted[pairs[:, 0]] != planted[pairs[:, 1]]]
        cl = diff[rng.choice(len(diff), size=60, replace=False)]
        smooth = pairs[rng.choice(len(pairs), size=120, replace=False)]
        # unaries pull every node to label 0, smoothness pulls cannot-linked pairs together
        U = rng.uniform(0, 1, (n, K))
        U[:, 0] -= 2.0
        edges = np.concatenate([cl, smooth])
        w = np.concatenate([np.full(len(cl), -inf), rng.uniform(0.5, 2.0, len(smooth))])
        E = Energy(U, edges, w)
        start = E.evaluate(planted)
        assert np.isfinite(start)
        res = engine(E, init=planted, random_state=seed)
        assert E.violated_hard_terms(res.labels) == 0
        assert res.energy <= start
        assert res.info["n_truncated"] > 0  # the cannot-links were non-submodular


def test_soft_cannot_links_truncated_not_ignored():
    """Two nodes preferring label 0, a strong soft cannot-link: one of them leaves."""
    E = Energy([[0.0, 1.0, 1.0], [0.0, 1.2, 1.2]], edges=[(0, 1)], weights=[-5.0])
    for engine in ENGINES_UNDER_TEST:
        res = engine(E, random_state=0)
        assert res.energy == pytest.approx(1.0) and res.labels[1] == 0


# ---------------------------------------------------------------------- graphs
@pytest.mark.parametrize("shape", [(40, 50), (12, 12, 10)], ids=["2d", "3d"])
def test_grids_beat_icm_and_match_bp(shape):
    """On 2-D and 3-D Potts grids expansion ends at or below ICM from the same start,
    within 0.5 % of BP, at a single-node local minimum, and recovers the planted labels."""
    E, truth = grid_energy(shape, 3, seed=1)
    res = alpha_expansion(E, random_state=0, tol=0.0)
    assert res.converged
    assert res.energy <= icm(E, random_state=0).energy
    assert res.energy <= belief_propagation(E).energy * 1.005
    assert (res.labels == truth).mean() > 0.95
    swap = alpha_beta_swap(E, random_state=0)
    assert swap.energy <= icm(E, random_state=0).energy


def _knn_energy(n=300, K=3, seed=0, n_cannot=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 3, (K, 2))
    y = rng.integers(K, size=n)
    X = centres[y] + rng.normal(0, 1.2, (n, 2))
    W = knn_matrix(X, n_neighbors=8)
    upper = W.tocoo()
    keep = upper.row < upper.col
    edges = np.stack([upper.row[keep], upper.col[keep]], 1)
    w = 0.5 * upper.data[keep]
    U = ((X[:, None, :] - centres[None]) ** 2).sum(-1) / 2.0
    if n_cannot:
        pairs = rng.choice(n, size=(4 * n_cannot, 2))
        pairs = pairs[(y[pairs[:, 0]] != y[pairs[:, 1]])][:n_cannot]
        edges = np.concatenate([edges, pairs])
        w = np.concatenate([w, np.full(len(pairs), -inf)])
    return Energy(U, edges, w), y


def test_knn_graph_attractive():
    """A k-NN graph (irregular degrees): expansion reaches a single-node local minimum
    below ICM's and BP's energies."""
    E, _ = _knn_energy()
    res = alpha_expansion(E, random_state=0, tol=0.0)
    assert res.converged
    assert single_node_local_minimum(E, res.labels)
    assert res.energy <= icm(E, random_state=0).energy + 1e-9
    assert res.energy <= belief_propagation(E).energy + 1e-9


@pytest.mark.parametrize("engine", ENGINES_UNDER_TEST)
def test_knn_graph_with_hard_cannot_links(engine):
    """k-NN graph plus hard cannot-links that the class labels satisfy: feasible, and
    not worse than the true labels as a start."""
    E, y = _knn_energy(n_cannot=40, seed=2)
    res = engine(E, init=y, random_state=0)
    assert E.violated_hard_terms(res.labels) == 0
    assert res.energy <= E.evaluate(y)
    default = engine(E, random_state=0)  # from the unary argmin, which breaks some
    assert np.isfinite(default.energy)


def test_superpixel_like_planar_graph():
    """A region adjacency graph stand-in (Delaunay triangulation of random sites, weights
    by shared-border length proxies): expansion reaches a single-node local minimum,
    below ICM and BP, and swap is never above ICM."""
    from scipy.spatial import Delaunay

    rng = np.random.default_rng(3)
    sites = rng.uniform(0, 1, (400, 2))
    tri = Delaunay(sites).simplices
    e = np.unique(np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [0, 2]]]), axis=1), axis=0)
    length = np.linalg.norm(sites[e[:, 0]] - sites[e[:, 1]], axis=1)
    K = 4
    truth = (sites[:, 0] > 0.5).astype(int) + 2 * (sites[:, 1] > 0.5)
    U = rng.uniform(0, 1, (len(sites), K))
    U[np.arange(len(sites)), truth] -= 0.6
    E = Energy(U - U.min(), e, 0.05 / length)
    res = alpha_expansion(E, tol=0.0)
    assert res.converged and single_node_local_minimum(E, res.labels)
    assert res.energy <= icm(E, random_state=0).energy and res.energy <= belief_propagation(E).energy + 1e-9
    assert alpha_beta_swap(E).energy <= icm(E, random_state=0).energy


# ---------------------------------------------------------------------- tables, label costs
def test_metric_table_equals_potts():
    """A table holding a Potts metric gives the same result as the Potts term itself,
    with expansion moves."""
    rng = np.random.default_rng(0)
    n, K = 7, 3
    U = rng.uniform(0, 2, (n, K))
    e = np.array([(i, i + 1) for i in range(n - 1)])
    w = rng.uniform(0.2, 1.0, len(e))
    potts = Energy(U, e, w)
    tabled = Energy(U, table_edges=e, tables=w[:, None, None] * (1 - np.eye(K)))
    a = alpha_expansion(potts, random_state=0, order="fixed")
    b = alpha_expansion(tabled, random_state=0, order="fixed")
    assert b.info["moves"] == "expansion"
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.energy == pytest.approx(b.energy)


def test_truncated_linear_metric_table():
    """A truncated linear distance is a metric: expansion moves, within the optimum's bound."""
    rng = np.random.default_rng(5)
    n, K = 7, 4
    D = np.minimum(np.abs(np.arange(K)[:, None] - np.arange(K)[None, :]), 2).astype(float)
    e = np.array(list(itertools.combinations(range(n), 2)))[:12]
    E = Energy(rng.uniform(0, 3, (n, K)), table_edges=e, tables=D[None] * rng.uniform(0.2, 1, (len(e), 1, 1)))
    res = alpha_expansion(E, random_state=0, tol=0.0)
    opt = brute_force(E)
    assert res.info["moves"] == "expansion" and res.info["n_truncated"] == 0
    unary_part = E.unary[np.arange(n), opt.labels].sum()
    # metric bound 2 max/min ratio of the distance (2/1 here): factor 4 on the pair part
    assert res.energy <= unary_part + 4 * (opt.energy - unary_part) + 1e-9


def test_non_metric_table_refused_with_edge_named():
    """non_metric='raise' names the first bad table edge; the default falls back to swap."""
    T = np.zeros((2, 3, 3))
    T[0] = 1 - np.eye(3)
    T[1] = [[0.0, 5.0, 1.0], [5.0, 0.0, 1.0], [1.0, 1.0, 0.0]]  # 5 > 1 + 1: not a metric
    E = Energy(np.zeros((4, 3)), table_edges=[(0, 1), (2, 3)], tables=T)
    with pytest.raises(InvalidParameterError, match=r"pair table on edge \(2, 3\) is not a metric"):
        alpha_expansion(E, non_metric="raise")
    res = alpha_expansion(E, random_state=0)
    assert res.info["moves"] == "swap" and res.energy == E.evaluate(res.labels)


@pytest.mark.parametrize("engine", ENGINES_UNDER_TEST)
def test_label_costs_never_increase(engine):
    """Label costs are outside the cut; moves are still kept only on a decrease, and a
    cheap but costly label is not opened for a tiny unary gain."""
    U = np.array([[0.0, 0.1, 5.0], [0.2, 0.0, 5.0], [5.0, 5.0, 0.0], [0.0, 0.05, 5.0]])
    E = Energy(U, label_costs=[0.0, 1.0, 0.0])
    res = engine(E, init=[0, 0, 2, 0], random_state=0)
    assert res.energy == pytest.approx(0.2)
    np.testing.assert_array_equal(res.labels, [0, 0, 2, 0])


# ---------------------------------------------------------------------- the move kernel
def _random_move(seed, swap, hard, tables):
    """A random energy, its finite surrogate and one random move on it: ``(E, F, l0, l1,
    xcur, e0, e1)`` with the labels on either side of the cut, the current side of every
    node and the term ends (Potts edges, then tables)."""
    rng, E = _random_energy(seed, hard=hard, tables=tables)
    F = _surrogate(E)
    n, K = E.n_nodes, E.n_labels
    z = rng.integers(K, size=n)
    a, b = rng.choice(K, size=2, replace=False)
    if swap:
        inside = (z == a) | (z == b)
        l0, l1 = np.where(inside, a, z), np.where(inside, b, z)
        xcur = (z == b).astype(np.int8)
    else:
        l0, l1, xcur = z.copy(), np.full(n, a), np.zeros(n, np.int8)
    e0 = np.concatenate([F.edges[:, 0], E.table_edges[:, 0]])
    e1 = np.concatenate([F.edges[:, 1], E.table_edges[:, 1]])
    return E, F, l0, l1, xcur, e0, e1


@pytest.mark.parametrize("swap", [False, True], ids=["expansion", "swap"])
def test_move_energy_bounds_true_energy(swap):
    """The move graph's energy const + cut(x) is >= the true energy of every labelling
    the move can reach, and equal at the current labelling (what truncation promises);
    exactly equal everywhere when no term was truncated."""
    for seed in range(25):
        E, F, l0, l1, xcur, e0, e1 = _random_move(seed, swap, hard=False, tables=seed % 3 == 0)
        n = E.n_nodes
        res, tr = np.zeros(2 * len(e0)), np.zeros(n)
        const, _, n_trunc = _fill_move(l0, l1, xcur, F.unary, e0, e1, F.weights, len(F.weights),
                                       np.ascontiguousarray(E.tables), res, tr)
        lc = 0.0 if E.label_costs is None else None
        for bits in itertools.product((0, 1), repeat=n):
            x = np.array(bits)
            cut = np.where(x == 1, np.maximum(tr, 0), np.maximum(-tr, 0)).sum()
            cut += res[0::2][(x[e0] == 0) & (x[e1] == 1)].sum() + res[1::2][(x[e0] == 1) & (x[e1] == 0)].sum()
            labels = np.where(x == 1, l1, l0)
            true = F.evaluate(labels) - F.constant
            if lc is None:
                true -= E.label_costs[np.unique(labels)].sum()
            move = const + cut
            assert move >= true - 1e-9 * (1 + abs(true))
            if np.array_equal(x, xcur) or n_trunc == 0:
                assert move == pytest.approx(true, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("swap", [False, True], ids=["expansion", "swap"])
def test_roof_dual_weak_persistency(swap):
    """The nodes the roof-dual graph labels, written over any move labelling y, never
    raise the move energy (what lets it improve on the truncated cut)."""
    n_labelled = 0
    for seed in range(40):
        E, F, l0, l1, _, e0, e1 = _random_move(seed, swap, hard=seed % 2 == 0, tables=seed % 3 == 0)
        n = E.n_nodes
        w = F.weights
        g = _QPBOGraph(n, e0, e1, np.concatenate([w < 0, np.ones(len(E.tables), bool)]))
        args = (l0, l1, F.unary, e0, e1, w, np.ascontiguousarray(E.tables))
        lo, hi = g.fuse(np.zeros(n, bool), *args), g.fuse(np.ones(n, bool), *args)
        labelled = lo == hi
        n_labelled += labelled.sum()
        _fill_qpbo(*args[:6], len(w), args[6], g.slot, g.res, g.tr)  # the capacities again (the flow used them)
        ge = np.concatenate([np.stack([e0, e1], 1), np.stack([e0 + n, e1 + n], 1)])
        ns = np.flatnonzero(g.slot >= 0)
        ge = np.concatenate([ge, np.stack([np.stack([e1[ns] + n, e0[ns]], 1),
                                           np.stack([e0[ns] + n, e1[ns]], 1)], 1).reshape(-1, 2)])
        base = None
        for bits in itertools.product((False, True), repeat=n):
            y = np.array(bits)
            true = F.evaluate(np.where(y, l1, l0))
            # a consistent cut (node i on the sink side iff y_i, its mirror opposite)
            # costs the move energy up to one constant
            sink = np.concatenate([y, ~y])
            cut = np.where(sink, np.maximum(g.tr, 0), np.maximum(-g.tr, 0)).sum()
            cut += g.res[0::2][~sink[ge[:, 0]] & sink[ge[:, 1]]].sum()
            cut += g.res[1::2][sink[ge[:, 0]] & ~sink[ge[:, 1]]].sum()
            base = true - cut if base is None else base
            assert cut + base == pytest.approx(true, rel=1e-9, abs=1e-9)
            fused = np.where(labelled, lo, y)
            after = F.evaluate(np.where(fused, l1, l0))
            assert after <= true + 1e-9 * (1 + abs(true)), f"seed {seed}"
    assert n_labelled > 0


# ---------------------------------------------------------------------- runner-up fusion
def test_fusion_frees_a_group_no_single_label_can_move():
    """A path 0 - 2 - 1 where the optimum [1, 2, 2] needs two nodes to take two
    different labels at once: every expansion and swap move from the end state of the
    moves alone costs more, the fusion with the runner-up labelling reaches the
    brute-force optimum."""
    E = Energy([[3.0, 2.0, 8.0], [6.0, 3.0, 3.0], [0.0, 4.0, 0.0]], edges=[(0, 2), (1, 2)], weights=[2.0, 2.0])
    opt = brute_force(E)
    for engine in ENGINES_UNDER_TEST:
        alone = engine(E, fusion=False, tol=0.0)
        assert alone.energy > opt.energy + 0.5 and alone.info["n_fusions"] == 0
        fused = engine(E, tol=0.0)
        assert fused.energy == opt.energy == 7.0
        np.testing.assert_array_equal(fused.labels, opt.labels)
        assert fused.info["n_fusions"] >= 1 and fused.info["n_fusion_tries"] > fused.info["n_fusions"]


@pytest.mark.parametrize("seed", range(60))
def test_runner_up_fixings_lose_nothing(seed):
    """The nodes _runner_up fixes at z_i can be fixed without losing the best fusion of
    z and y: brute force over every choice of the movable nodes reaches the minimum
    over all 2^n choices (signed Potts terms, hard terms, tables)."""
    rng, E = _random_energy(seed, hard=seed % 2 == 0, tables=seed % 3 == 0, attractive=seed % 4 == 0)
    g = _MoveGraph(E, "expansion")
    z = rng.integers(E.n_labels, size=E.n_nodes)
    _, adj_ptr, adj_arc = g.layout
    y, movable = _runner_up(g.U, g.e0, g.e1, g.w, g.m, g.tables, z, np.ones(E.n_nodes, bool), adj_ptr, adj_arc)
    assert (y != z).all() or E.n_labels == 1
    best_all = best_movable = inf
    for bits in itertools.product((False, True), repeat=E.n_nodes):
        x = np.array(bits)
        f = g.F.evaluate(np.where(x, y, z))
        best_all = min(best_all, f)
        if not (x & ~movable).any():
            best_movable = min(best_movable, f)
    assert best_movable <= best_all + 1e-9 * (1 + abs(best_all))


def test_runner_up_fixes_nodes_that_cannot_gain():
    """Strong unaries fix every node; with no unary preference and strong ties, none."""
    U = np.array([[0.0, 10.0, 10.0]] * 4)
    E = Energy(U, edges=[(0, 1), (1, 2), (2, 3)], weights=[1.0] * 3)
    g = _MoveGraph(E, "expansion")
    z = np.zeros(4, np.int64)
    y, movable = _runner_up(g.U, g.e0, g.e1, g.w, g.m, g.tables, z, np.ones(4, bool), *g.layout[1:])
    assert not movable.any() and (y == 1).all()
    E = Energy(np.zeros((4, 3)), edges=[(0, 1), (1, 2), (2, 3)], weights=[1.0] * 3)
    g = _MoveGraph(E, "expansion")
    z = np.array([0, 1, 1, 0])
    y, movable = _runner_up(g.U, g.e0, g.e1, g.w, g.m, g.tables, z, np.ones(4, bool), *g.layout[1:])
    assert movable.all()
    # only candidates move; node 2 then gains nothing (1 saved towards node 3, 1 lost
    # towards the fixed node 1), so it is fixed too
    _, movable = _runner_up(g.U, g.e0, g.e1, g.w, g.m, g.tables, z, np.array([True, False, True, False]),
                            *g.layout[1:])
    np.testing.assert_array_equal(movable, [True, False, False, False])


# ---------------------------------------------------------------------- options and errors
@pytest.mark.parametrize("engine", ENGINES_UNDER_TEST)
def test_callback_history_and_reproducibility(engine):
    E, _ = grid_energy((20, 20), 4, seed=3, beta=0.3)
    seen = []
    res = engine(E, random_state=1, callback=lambda c, z, e: seen.append((c, e)) or c == 1)
    assert res.iterations == 1 and len(res.history) == 1 and seen == [(1, res.history[0])]
    a, b = engine(E, random_state=7), engine(E, random_state=7)
    np.testing.assert_array_equal(a.labels, b.labels)
    full = engine(E, random_state=0, max_iter=50, progress=True)
    assert full.converged and full.history[-1] == full.energy
    assert engine(E, random_state=0, max_iter=1).iterations == 1


def test_relative_stopping_rule_is_scale_free():
    """Scaling every term scales the energy but not the path the moves take."""
    E, _ = grid_energy((25, 25), 4, seed=5, beta=0.4)
    big = Energy(1e6 * E.unary, E.edges, 1e6 * E.weights)
    a = alpha_expansion(E, random_state=0, tol=1e-3)
    b = alpha_expansion(big, random_state=0, tol=1e-3)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.iterations == b.iterations


def test_solve_front_door():
    E, _ = grid_energy((10, 10), 3, seed=0)
    assert solve(E, "expansion", random_state=0).energy == alpha_expansion(E, random_state=0).energy
    assert solve(E, "swap", random_state=0).info["moves"] == "swap"


@pytest.mark.parametrize("kwargs, match", [
    ({"order": "sorted"}, "order must be 'random' or 'fixed'"),
    ({"max_iter": 0}, "max_iter must be >= 1"),
    ({"tol": -1.0}, "tol must be >= 0"),
    ({"init": [0, 5, 0]}, r"init\[1\] = 5 is not a label"),
    ({"non_metric": "ignore"}, "non_metric must be 'swap' or 'raise'"),
    ({"fusion": "yes"}, "fusion must be True or False"),
])
def test_bad_options(kwargs, match):
    E = Energy(np.zeros((3, 3)), edges=[(0, 1)], weights=[1.0])
    with pytest.raises(InvalidParameterError, match=match):
        alpha_expansion(E, **kwargs)


def test_nan_energy_refused_before_any_engine():
    U = np.zeros((3, 3))
    U[1, 2] = np.nan
    with pytest.raises(InvalidParameterError, match=r"unary\[1, 2\] is nan"):
        Energy(U)
    with pytest.raises(InvalidParameterError, match=r"edge \(0, 2\) has weight nan"):
        Energy(np.zeros((3, 3)), edges=[(0, 2)], weights=[np.nan])


def test_trivial_energies():
    """One label, one node, no pair terms."""
    res = alpha_expansion(Energy(np.array([[1.0], [2.0]])))
    assert res.energy == 3.0 and res.converged
    res = alpha_beta_swap(Energy(np.array([[2.0, 1.0, 3.0]])))
    assert res.labels.tolist() == [1] and res.converged


# ---------------------------------------------------------------------- label costs in the cut
def _move_labels(z, a, b, n):
    if b < 0:
        return z.copy(), np.full(n, a), np.zeros(n, np.int8)
    inside = (z == a) | (z == b)
    return np.where(inside, a, z), np.where(inside, b, z), (z == b).astype(np.int8)


@pytest.mark.parametrize("moves", ["expansion", "swap"])
def test_label_cost_moves_are_exact(moves):
    """Attractive terms plus label costs: every expansion (swap) move found by one cut is
    the best of all 2^n labellings the move can reach, label costs included (brute force
    over the move), i.e. the costs are inside the cut, not checked after it."""
    from graphclust.inference.expansion import _MoveGraph

    n_moves = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n, K = int(rng.integers(2, 8)), int(rng.integers(3, 5))
        raw = random_raw(rng, n, K, hard=seed % 2 == 0, attractive=True)
        raw.label_costs = np.round(rng.uniform(0, 4, K), 3)
        E = raw.build()
        F = _surrogate(E)
        g = _MoveGraph(E, moves)
        z = rng.integers(K, size=n)
        for s, (a, b) in enumerate(g.steps):
            l0, l1, xcur = _move_labels(z, a, b, n)
            x, _ = g.cut(s, l0, l1, xcur)
            got = F.evaluate(np.where(x, l1, l0))
            best = min(F.evaluate(np.where(np.array(bits, bool), l1, l0))
                       for bits in itertools.product((0, 1), repeat=n))
            assert got <= best + 1e-9 * (1 + abs(best)), f"seed {seed}, move {s}"
            n_moves += 1
    assert n_moves > 100


def test_two_labels_with_label_costs_exact():
    """Two labels, attractive terms, label costs: the one swap cut is the exact optimum
    (both label-cost terms are submodular), from any start."""
    for seed in range(30):
        rng = np.random.default_rng(seed)
        raw = random_raw(rng, int(rng.integers(2, 10)), 2, hard=seed % 2 == 0, attractive=True)
        raw.label_costs = np.round(rng.uniform(0, 5, 2), 3)
        E = raw.build()
        res = alpha_expansion(E, init=rng.integers(2, size=E.n_nodes))
        assert res.energy == pytest.approx(brute_force(E).energy, rel=1e-9, abs=1e-9)


def test_label_costs_open_labels_icm_cannot():
    """Three groups of six nodes all start on a shared label 3; each group's own label is
    cheaper by 1.5 per node but costs 5 to open. No single node can pay for opening a
    label (ICM stays put), a whole group can: expansion moves the groups, empties
    label 3 and reaches the optimum 15."""
    groups = np.repeat([0, 1, 2], 6)
    U = np.full((18, 4), 3.0)
    U[np.arange(18), groups] = 0.0
    U[:, 3] = 1.5
    E = Energy(U, label_costs=[5.0] * 4)
    init = np.full(18, 3)
    res = alpha_expansion(E, init=init)
    np.testing.assert_array_equal(res.labels, groups)
    assert res.energy == pytest.approx(15.0)
    assert icm(E, init=init, random_state=0).energy == pytest.approx(32.0)
