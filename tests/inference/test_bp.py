"""Tests for graphclust.inference.bp: exactness on trees, the message kernel against a
numpy reference, hard terms, anytime decoding, errors."""

import networkx as nx
import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.inference import ENGINES, solve
from graphclust.inference.bp import _Directed, _sweep, _sweep_order, belief_propagation
from graphclust.inference.exact import brute_force, mincut

from .conftest import all_labellings

SCHEDULES = ["sequential", "flooding"]


def tree_energy(rng, n, K, *, tables=False):
    """Random unaries and signed Potts weights on a random tree (some edges as tables)."""
    T = nx.random_labeled_tree(n, seed=int(rng.integers(2**31)))
    e = np.array(list(T.edges()), dtype=np.int64).reshape(-1, 2)
    w = rng.normal(0.0, 1.5, len(e))
    kw = {}
    if tables and len(e) >= 2:
        kw = dict(table_edges=e[:2][:, ::-1], tables=rng.normal(0.0, 1.0, (2, K, K)))
        e, w = e[2:], w[2:]
    return Energy(rng.normal(0.0, 1.0, (n, K)), e, w, **kw)


def loopy_energy(rng, n, K, *, density=0.5, tables=False):
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    e = pairs[rng.random(len(pairs)) < density]
    w = rng.choice([-1.0, 1.0], len(e)) * rng.uniform(0.2, 2.0, len(e))
    kw = {}
    if tables and len(e) >= 3:
        kw = dict(table_edges=np.concatenate([e[:2], e[2:3, ::-1]]), tables=rng.normal(0.0, 1.0, (3, K, K)))
    return Energy(rng.normal(0.0, 1.0, (n, K)), e, w, **kw)


def min_marginals(E):
    """Exact normalised min-marginals by enumeration: min_{z: z_i = l} E(z) - min E."""
    Z = all_labellings(E.n_nodes, E.n_labels)
    vals = np.array([E.evaluate(z) for z in Z])
    out = np.full((E.n_nodes, E.n_labels), np.inf)
    for i in range(E.n_nodes):
        for k in range(E.n_labels):
            out[i, k] = vals[Z[:, i] == k].min()
    return out - vals.min()


# --------------------------------------------------------------------- a numpy reference
def reference_flooding_step(g, U, msg, damping):
    """One parallel min-sum update of every message, written with plain numpy from the
    textbook formula m(b) = min_a theta(a, b) + h(a) (full K x K tables for Potts terms
    too), independently of the O(K) shortcuts of the kernel."""
    K = U.shape[1]
    beliefs = U.copy()
    np.add.at(beliefs, g.recv, msg)
    h = beliefs[g.nbr] - msg[g.rev]  # sender's cavity
    eye = np.eye(K)
    theta = np.where(g.w[:, None, None] > 0, g.w[:, None, None] * (1 - eye), -g.w[:, None, None] * eye)
    tab = g.tab >= 0
    theta[tab] = g.tables[g.tab[tab]]
    new = (theta + h[:, :, None]).min(axis=1)
    new -= new.min(axis=1, keepdims=True)
    return damping * msg + (1 - damping) * new, beliefs


@pytest.mark.parametrize("tables", [False, True])
@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_kernel_matches_numpy_reference(tables, damping, global_random_seed):
    """Three flooding iterations of the numba kernel equal the textbook numpy update, and
    the labels it decodes are the argmin of the reference beliefs."""
    rng = np.random.default_rng(global_random_seed)
    E = loopy_energy(rng, 9, 4, density=0.6, tables=tables)
    order, _, g = _sweep_order(E)
    U = np.ascontiguousarray(E.unary)
    msg = rng.uniform(0, 1, (g.n_directed, 4))
    ref = msg.copy()
    labels = np.zeros(E.n_nodes, np.int64)
    for _ in range(3):
        out = np.empty_like(msg)
        delta = _sweep(U, order, g.split, g.indptr, g.nbr, g.rev, g.w, g.tab, g.tables, msg, out, damping, True, 1,
                       labels, 0.0, 1.0)
        ref_new, ref_beliefs = reference_flooding_step(g, U, ref, damping)
        np.testing.assert_allclose(out, ref_new, atol=1e-12)
        assert delta == pytest.approx(np.abs(ref_new - ref).max(), abs=1e-12)
        np.testing.assert_array_equal(labels, ref_beliefs.argmin(axis=1))
        msg, ref = out, ref_new


def test_directed_structure_pairs_both_directions():
    """rev is an involution pairing (i <- j) with (j <- i), and rows are the receivers."""
    E = Energy(np.zeros((4, 2)), edges=[(0, 1), (1, 2), (0, 3)], weights=[1.0, -1.0, 2.0],
               table_edges=[(3, 2)], tables=np.ones((1, 2, 2)))
    g = _Directed(E)
    assert g.n_directed == 8
    np.testing.assert_array_equal(g.rev[g.rev], np.arange(8))
    np.testing.assert_array_equal(g.recv[g.rev], g.nbr)
    np.testing.assert_array_equal(np.diff(g.indptr), [2, 2, 2, 2])


# --------------------------------------------------------------------- exactness
@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("tables", [False, True])
def test_tree_decodes_exact_map_and_min_marginals(schedule, tables, global_random_seed):
    """On trees BP converges, decodes the brute-force optimum and its beliefs are the
    exact min-marginals."""
    rng = np.random.default_rng(global_random_seed)
    for _ in range(6):
        n, K = int(rng.integers(2, 8)), int(rng.integers(2, 4))
        E = tree_energy(rng, n, K, tables=tables)
        opt = brute_force(E)
        res = belief_propagation(E, schedule=schedule)
        assert res.converged
        assert res.energy == pytest.approx(opt.energy, abs=1e-9)
        np.testing.assert_allclose(res.marginals, min_marginals(E), atol=1e-4)


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_forest_with_isolated_nodes(schedule):
    """Isolated nodes are unary-only: they keep their unary argmin (ties to the lowest
    label) and their min-marginals are their normalised unaries."""
    U = np.array([[1.0, 0.0, 2.0], [0.5, 0.5, 3.0], [0.0, 1.0, 1.0], [2.0, 1.0, 0.0], [4.0, 3.0, 3.0]])
    E = Energy(U, edges=[(0, 2)], weights=[5.0])
    res = belief_propagation(E, schedule=schedule)
    assert res.labels[1] == 0 and res.labels[3] == 2 and res.labels[4] == 1
    np.testing.assert_allclose(res.marginals[[1, 3, 4]], U[[1, 3, 4]] - U[[1, 3, 4]].min(axis=1, keepdims=True))
    assert res.energy == brute_force(E).energy


def test_binary_attractive_grid_hits_the_minimum_cut():
    """On a submodular (2-label attractive) 6x6 grid BP reaches the exact min-cut energy."""
    rng = np.random.default_rng(5)
    idx = np.arange(36).reshape(6, 6)
    e = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                        np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    E = Energy(rng.uniform(0, 2, (36, 2)), e, rng.uniform(0.2, 1.0, len(e)))
    exact = mincut(E).energy
    for schedule in SCHEDULES:
        assert belief_propagation(E, schedule=schedule).energy == pytest.approx(exact, abs=1e-9)


def test_loopy_label_consistent_constraints_hit_the_optimum():
    """With must-/cannot-links that agree with a planted labelling (the realistic case),
    BP finds the brute-force optimum on every small instance."""
    rng = np.random.default_rng(11)
    for _ in range(10):
        n, K = int(rng.integers(5, 9)), 3
        y = rng.integers(K, size=n)
        pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
        e = pairs[rng.random(len(pairs)) < 0.4]
        w = np.where(y[e[:, 0]] == y[e[:, 1]], 1.0, -1.0) * rng.uniform(0.5, 2, len(e))
        U = rng.normal(0, 1, (n, K))
        U[np.arange(n), y] -= 1.0
        E = Energy(U, e, w)
        assert belief_propagation(E).energy == pytest.approx(brute_force(E).energy, abs=1e-9)


# --------------------------------------------------------------------- hard terms
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_chain_with_hard_links_is_feasible(schedule):
    """A chain with hard must- and cannot-links and a forbidden label: the unaries pull
    against the hard terms, BP still returns a feasible (finite) optimum, never NaN."""
    U = np.array([[0.0, 5.0, 5.0], [5.0, 0.0, 5.0], [0.0, 5.0, 5.0], [0.0, 0.0, np.inf], [5.0, 0.0, 0.0]])
    E = Energy(U, edges=[(0, 1), (1, 2), (2, 3), (3, 4)], weights=[np.inf, -np.inf, np.inf, -np.inf])
    res = belief_propagation(E, schedule=schedule)
    assert np.isfinite(res.energy) and res.info["violated_hard_terms"] == 0
    assert not np.isnan(res.marginals).any()
    z = res.labels
    assert z[0] == z[1] and z[1] != z[2] and z[2] == z[3] and z[3] != z[4] and z[3] != 2
    assert res.energy == brute_force(E).energy


def test_infeasible_hard_terms_report_infinite_energy():
    """A hard cannot-link triangle with two labels has no feasible labelling: BP says so
    with an infinite energy, and among infeasible labellings it prefers the one that
    violates fewer hard terms (here 1 rather than the 3 of its start)."""
    E = Energy([[0.0, 0.5], [0.3, 0.0], [0.0, 0.2]], edges=[(0, 1), (1, 2), (0, 2)], weights=[-np.inf] * 3)
    for schedule in SCHEDULES:
        res = belief_propagation(E, init=[0, 0, 0], schedule=schedule)
        assert res.energy == np.inf
        assert res.info["violated_hard_terms"] == 1
        assert not np.isnan(res.marginals).any()


# --------------------------------------------------------------------- anytime, options
def test_returns_best_decoded_labelling():
    """The result is the lowest energy in the history (and never above the unary argmin),
    and the energy reported is evaluate(labels)."""
    E = loopy_energy(np.random.default_rng(3), 8, 3, density=0.8)
    res = belief_propagation(E, max_iter=30, damping=0.0)
    assert res.energy == E.evaluate(res.labels)
    assert res.energy <= min(res.history)
    assert res.energy <= E.evaluate(E.unary.argmin(axis=1))
    assert len(res.history) == res.iterations


def test_init_is_kept_when_nothing_beats_it():
    """An optimal init is returned as is when BP's own decodings are worse."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        E = loopy_energy(rng, 7, 3, density=0.9)
        opt = brute_force(E)
        res = belief_propagation(E, init=opt.labels, max_iter=3)
        assert res.energy == pytest.approx(opt.energy, abs=1e-12)


def test_callback_can_stop_the_run():
    seen = []

    def stop_at_three(it, labels, value):
        seen.append((it, value))
        return it == 3

    E = loopy_energy(np.random.default_rng(1), 8, 3, density=0.8)
    res = belief_propagation(E, callback=stop_at_three, tol=0.0)
    assert res.iterations == 3 and [s[0] for s in seen] == [1, 2, 3]
    assert res.info["stopped_by_callback"] and not res.converged
    assert [s[1] for s in seen] == res.history


def test_iteration_cap_reports_not_converged():
    E = loopy_energy(np.random.default_rng(1), 8, 3, density=0.8)
    res = belief_propagation(E, max_iter=2, tol=0.0)
    assert res.iterations == 2 and not res.converged


def test_label_costs_are_part_of_the_reported_energy():
    """Label costs are not in the messages but the reported energy includes them."""
    E = Energy([[0.0, 1.0], [1.0, 0.0]], edges=[(0, 1)], weights=[0.2], label_costs=[0.0, 5.0])
    res = belief_propagation(E)
    assert res.energy == E.evaluate(res.labels)
    # BP decodes [0, 1] (what the pairwise part prefers) and pays the label cost of 1
    np.testing.assert_array_equal(res.labels, [0, 1])
    assert res.energy == pytest.approx(5.2)


def test_no_pair_terms_is_unary_argmin():
    E = Energy([[1.0, 0.0], [0.0, 0.0], [2.0, 1.0]])
    res = belief_propagation(E)
    np.testing.assert_array_equal(res.labels, [1, 0, 1])
    assert res.iterations == 0 and res.converged


def test_deterministic_and_registered(capsys):
    """Same answer twice (random_state unused), the registry entry is this function, and
    progress=True runs."""
    E = loopy_energy(np.random.default_rng(4), 8, 3)
    a = belief_propagation(E, random_state=0)
    b = solve(E, "bp", random_state=99, progress=True)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert ENGINES["bp"][0] is belief_propagation and not ENGINES["bp"][1]["exact"]


# --------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"damping": 1.0}, r"damping must be in \[0, 1\), got 1.0"),
        ({"damping": -0.1}, r"damping must be >= 0.0, got -0.1"),
        ({"max_iter": 0}, r"max_iter must be >= 1, got 0"),
        ({"tol": -1.0}, r"tol must be >= 0.0, got -1.0"),
        ({"schedule": "random"}, r"schedule must be one of \('flooding', 'sequential'\), got 'random'"),
        ({"init": [0, 1]}, r"init must have shape \(3,\), got \(2,\)"),
        ({"init": [0, 2, 1]}, r"init\[1\] = 2 is not a label in \[0, 2\)"),
        ({"init": [0, 0.5, 1]}, r"init\[1\] = 0.5 is not an integer label"),
        ({"random_state": "seed"}, r"random_state must be None, an int or a numpy Generator, got str"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    E = Energy(np.zeros((3, 2)), edges=[(0, 1)], weights=[1.0])
    with pytest.raises(InvalidParameterError, match=match):
        belief_propagation(E, **kwargs)


# --------------------------------------------------------------------- regressions, issue #27
def test_hard_cannot_link_pair_gh27():
    """Two nodes with identical unaries and a hard cannot-link: the min-marginals tie on
    both nodes, and decoding each node on its own gave [0, 0] (energy inf). Decoding
    conditioned on the already-decoded neighbour returns a feasible optimum."""
    import graphclust as gc

    res = gc.solve(gc.Energy([[0, 1], [0, 1]], [(0, 1)], [-np.inf]), "bp")
    assert sorted(res.labels.tolist()) == [0, 1]
    assert res.energy == 1.0 and res.info["violated_hard_terms"] == 0


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_forest_with_hard_terms_and_ties_is_exact_gh27(schedule, global_random_seed):
    """On random forests with hard must-/cannot-links and tied (integer) unaries, BP
    returns the brute-force optimum: feasible whenever a feasible labelling exists."""
    rng = np.random.default_rng(global_random_seed)
    for _ in range(25):
        n, K = int(rng.integers(2, 8)), int(rng.integers(2, 4))
        T = nx.random_labeled_tree(n, seed=int(rng.integers(2**31)))
        e = np.array(list(T.edges()), dtype=np.int64).reshape(-1, 2)
        keep = rng.random(len(e)) < 0.85  # sometimes a forest
        e = e[keep]
        w = rng.choice([-np.inf, np.inf, -1.0, 1.0, 2.0], len(e))
        U = rng.integers(0, 3, (n, K)).astype(float)  # many ties
        if rng.random() < 0.3:
            U[rng.integers(n), rng.integers(K)] = np.inf
        E = Energy(U, e, w)
        opt = brute_force(E)
        res = belief_propagation(E, schedule=schedule)
        assert res.energy == pytest.approx(opt.energy, abs=1e-9) if np.isfinite(opt.energy) else True
        assert res.converged


def test_hmrf_bp_separates_identical_points_with_hard_cannot_link_gh27():
    """HMRF(inference='bp') with two identical points joined by a hard cannot-link puts
    them in different clusters (BP used to tie and decode both to the same label)."""
    import graphclust as gc

    X = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0], [5.1, 5.0]])
    S = gc.SideInfo.from_pairs(cannot=[(0, 1)], weight=np.inf)
    est = gc.HMRF(gc.potentials.Centroids(2), inference="bp", random_state=0).fit(X, S)
    assert est.labels_[0] != est.labels_[1]


@pytest.mark.parametrize("damping", ["auto", 0.0, 0.5])
def test_scale_free_stopping_gh27(damping):
    """Multiplying the energy by 1e-6 (or 1e6) changes neither the labels nor the number
    of iterations: the stopping and tie rules are relative to the terms' scale (the
    tolerance used to be absolute, so the scaled energy stopped after one iteration)."""
    rng = np.random.default_rng(2)
    E = loopy_energy(rng, 30, 3, density=0.2)
    idx = np.arange(100).reshape(10, 10)
    e = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                        np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    G = Energy(rng.uniform(0, 1, (100, 3)), e, np.full(len(e), 0.3))
    for energy in (E, G):
        ref = belief_propagation(energy, damping=damping)
        assert ref.iterations > 2
        for s in (1e-6, 1e6):
            scaled = Energy(energy.unary * s, energy.edges, energy.weights * s)
            res = belief_propagation(scaled, damping=damping)
            np.testing.assert_array_equal(res.labels, ref.labels)
            assert res.iterations == ref.iterations
            assert res.energy == pytest.approx(ref.energy * s, rel=1e-9)


@pytest.mark.parametrize("damping", [0.0, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("schedule", SCHEDULES)
def test_never_above_best_visited_labelling_gh27(damping, schedule):
    """Whatever the damping, the result is the best labelling visited: not above any
    decoded one (the history), nor above the initial labelling."""
    rng = np.random.default_rng(8)
    for _ in range(5):
        E = loopy_energy(rng, 12, 3, density=0.5)
        init = rng.integers(3, size=12)
        res = belief_propagation(E, damping=damping, schedule=schedule, init=init, max_iter=25)
        assert res.info["damping"] == damping
        assert res.energy == E.evaluate(res.labels)
        assert res.energy <= min(res.history) and res.energy <= E.evaluate(init)
