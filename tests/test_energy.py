"""Tests for graphclust.energy.Energy: the evaluator every engine reports through."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphclust as gc
from graphclust.energy import Energy, energy_value, potts_csr
from graphclust.errors import InvalidConstraintError, InvalidParameterError

inf = np.inf


def labellings(n, K):
    return np.array(list(itertools.product(range(K), repeat=n)), dtype=np.int64).reshape(-1, n)


def hand_energy(U, terms, z, *, label_costs=None, tables=(), constant=0.0):
    """The energy written term by term, with nothing merged."""
    total = constant + sum(U[i][z[i]] for i in range(len(z)))
    for u, v, w in terms:
        if w > 0 and z[u] != z[v]:
            total += w
        elif w < 0 and z[u] == z[v]:
            total += -w
    if label_costs is not None:
        total += sum(label_costs[k] for k in set(int(x) for x in z))
    for (a, b), T in tables:
        total += T[z[a]][z[b]]
    return total


@st.composite
def raw_energies(draw):
    n = draw(st.integers(1, 5))
    K = draw(st.integers(1, 3))
    cost = st.floats(0, 5, allow_nan=False) | st.just(inf)
    U = [[draw(cost) for _ in range(K)] for _ in range(n)]
    for row in U:
        if all(np.isinf(row)):
            row[draw(st.integers(0, K - 1))] = draw(st.floats(0, 5))
    terms = []
    if n >= 2:
        pair = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1])
        weight = st.floats(-5, 5, allow_nan=False) | st.sampled_from([inf, -inf])
        for (u, v), w in draw(st.lists(st.tuples(pair, weight), max_size=8)):
            key = frozenset((u, v))
            signs = {np.sign(x) for a, b, x in terms if frozenset((a, b)) == key and np.isinf(x)}
            if np.isinf(w) and -np.sign(w) in signs:
                continue  # hard + opposite hard on one pair is refused; tested separately
            terms.append((u, v, w))
    label_costs = draw(st.none() | st.lists(st.floats(0, 3), min_size=K, max_size=K))
    tables = []
    if n >= 2 and draw(st.booleans()):
        for _ in range(draw(st.integers(1, 2))):
            a, b = draw(st.permutations(range(n)))[:2]
            T = [[draw(st.floats(-2, 2)) for _ in range(K)] for _ in range(K)]
            tables.append(((a, b), T))
    constant = draw(st.floats(-3, 3))
    return U, terms, label_costs, tables, constant


def build(U, terms, label_costs, tables, constant):
    return Energy(
        U,
        [(u, v) for u, v, _ in terms] or None,
        [w for _, _, w in terms] or None,
        label_costs=label_costs,
        table_edges=[e for e, _ in tables] if tables else None,
        tables=np.array([T for _, T in tables]) if tables else None,
        constant=constant,
    )


# ---------------------------------------------------------------------- evaluate
@settings(max_examples=60, deadline=None)
@given(raw=raw_energies())
def test_evaluate_matches_hand_formula(raw):
    """Merging parallel terms, hard terms, tables, label costs and constants are exact."""
    U, terms, label_costs, tables, constant = raw
    E = build(*raw)
    for z in labellings(len(U), len(U[0])):
        expected = hand_energy(U, terms, z, label_costs=label_costs, tables=tables, constant=constant)
        got = E.evaluate(z)
        if np.isinf(expected):
            assert got == expected
        else:
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(raw=raw_energies())
def test_merged_edges_are_unique_sorted_and_nonzero(raw):
    E = build(*raw)
    assert (E.edges[:, 0] < E.edges[:, 1]).all()
    assert len({tuple(e) for e in E.edges.tolist()}) == E.n_edges
    assert (E.weights != 0).all() and not np.isnan(E.weights).any()


def test_parallel_terms_merge_into_one_signed_weight():
    """2·[≠] and 0.5·[=] on one pair (given in both orders) become 0.5 + 1.5·[≠]."""
    E = Energy(np.zeros((2, 2)), edges=[(0, 1), (1, 0)], weights=[2.0, -0.5])
    assert E.edges.tolist() == [[0, 1]] and E.weights.tolist() == [1.5] and E.constant == 0.5
    assert E.evaluate([0, 0]) == 0.5 and E.evaluate([0, 1]) == 2.0


def test_cancelling_terms_leave_a_constant():
    E = Energy(np.zeros((2, 2)), edges=[(0, 1), (0, 1)], weights=[1.0, -1.0])
    assert E.n_edges == 0 and E.constant == 1.0
    assert E.evaluate([0, 0]) == E.evaluate([0, 1]) == 1.0


def test_hard_terms_give_inf_and_are_counted():
    E = Energy([[0.0, inf], [0.0, 0.0], [0.0, 0.0]], edges=[(0, 1), (1, 2)], weights=[inf, -inf])
    assert E.evaluate([0, 0, 1]) == 0.0
    assert E.evaluate([0, 1, 0]) == inf and E.violated_hard_terms([0, 1, 0]) == 1
    assert E.evaluate([1, 1, 1]) == inf and E.violated_hard_terms([1, 1, 1]) == 2
    assert E.has_hard_terms


def test_facts_and_repr():
    E = Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2)], weights=[1.0, -1.0], label_costs=[0, 1])
    assert (E.n_nodes, E.n_labels, E.n_edges) == (3, 2, 2)
    assert not E.is_attractive and not E.has_hard_terms
    assert Energy(np.zeros((2, 2)), edges=[(0, 1)], weights=[1.0]).is_attractive
    assert not Energy(np.zeros((2, 2)), table_edges=[(0, 1)], tables=np.zeros((1, 2, 2))).is_attractive
    assert repr(E) == ("Energy(n_nodes=3, n_labels=2, n_edges=2, n_attractive=1, n_repulsive=1, "
                       "n_tables=0, label_costs=True)")


def test_adjacency_lists_both_directions():
    E = Energy(np.zeros((4, 2)), edges=[(2, 0), (1, 2), (3, 1)], weights=[1.0, -2.0, 3.0])
    indptr, indices, weights, eids = E.adjacency
    nbrs = {i: sorted(zip(indices[indptr[i]:indptr[i + 1]].tolist(), weights[indptr[i]:indptr[i + 1]].tolist()))
            for i in range(4)}
    assert nbrs == {0: [(2, 1.0)], 1: [(2, -2.0), (3, 3.0)], 2: [(0, 1.0), (1, -2.0)], 3: [(1, 3.0)]}
    assert (E.weights[eids] == weights).all()


@settings(max_examples=40, deadline=None)
@given(raw=raw_energies())
def test_energy_value_from_raw_terms_matches_hand_formula(raw):
    """energy_value, given each node's cost for its own label and the raw (unmerged,
    parallel) pair terms, is the hand formula: what a provider-backed energy reports."""
    U, terms, label_costs, tables, constant = raw
    U = np.array(U, dtype=float)
    edges = np.array([(u, v) for u, v, _ in terms], dtype=np.int64).reshape(-1, 2)
    w = np.array([x for _, _, x in terms], dtype=float)
    lc = None if label_costs is None else np.array(label_costs, dtype=float)
    for z in labellings(*U.shape):
        expected = hand_energy(U, terms, z, label_costs=label_costs, constant=constant)
        got = energy_value(z, U[np.arange(len(z)), z], edges, w, label_costs=lc, constant=constant)
        used = np.bincount(z, minlength=U.shape[1]) > 0
        assert energy_value(z, U[np.arange(len(z)), z], edges, w, label_costs=lc, used=used,
                            constant=constant) == got
        assert energy_value(z, U[np.arange(len(z)), z].sum(), edges, w, label_costs=lc, constant=constant) == got
        if np.isinf(expected):
            assert got == expected
        else:
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-9)


def test_potts_csr_is_the_adjacency_of_the_energy():
    rng = np.random.default_rng(0)
    for _ in range(10):
        n = int(rng.integers(2, 12))
        pairs = np.array([p for p in itertools.combinations(range(n), 2)])
        pairs = pairs[rng.random(len(pairs)) < 0.4]
        w = rng.normal(size=len(pairs))
        E = Energy(np.zeros((n, 2)), pairs[:, ::-1] if len(pairs) else None, w if len(w) else None)
        got = potts_csr(E.edges, E.weights, n)
        for a, b in zip(got, E.adjacency):
            np.testing.assert_array_equal(a, b)
        indptr, indices, weights, eids = got
        assert all((np.diff(indices[indptr[i]:indptr[i + 1]]) > 0).all() for i in range(n))


# ---------------------------------------------------------------------- finite()
def test_finite_forbidden_unary_costs_more_than_allowed():
    """Minimal case hypothesis found: a +inf unary became the absolute penalty 1.0, so
    the forbidden label undercut the allowed one (cost 10) and became the optimum."""
    E = Energy([[10.0, inf], [0.0, 0.0]])
    F = E.finite()
    assert F.unary[0, 1] > F.unary[0, 0]
    assert np.argmin(F.unary[0]) == 0


@settings(max_examples=40, deadline=None)
@given(raw=raw_energies())
def test_finite_keeps_the_optimum_and_ranks_violations_last(raw):
    """Brute force: the surrogate is finite, equals the energy on feasible labellings,
    and every violating labelling costs more than every feasible one."""
    E = build(*raw)
    F = E.finite()
    assert np.isfinite(F.unary).all() and np.isfinite(F.weights).all()
    Z = labellings(E.n_nodes, E.n_labels)
    true = np.array([E.evaluate(z) for z in Z])
    fin = np.array([F.evaluate(z) for z in Z])
    feasible = np.isfinite(true)
    np.testing.assert_allclose(fin[feasible], true[feasible], rtol=1e-12, atol=1e-12)
    if feasible.any() and (~feasible).any():
        assert fin[~feasible].min() > fin[feasible].max()
    if feasible.any():
        assert true[np.argmin(fin)] == true.min()


def test_finite_does_not_touch_the_original():
    E = Energy([[0.0, inf], [0.0, 0.0]], edges=[(0, 1)], weights=[-inf])
    F = E.finite(penalty=100.0)
    assert F.unary[0, 1] == 100.0 and F.weights.tolist() == [-100.0]
    assert E.unary[0, 1] == inf and E.weights.tolist() == [-inf]
    assert F.evaluate([0, 0]) == 100.0 and E.evaluate([0, 0]) == inf


# ---------------------------------------------------------------------- from_problem
def test_from_problem_adds_smoothness_and_scaled_constraints():
    G = nx.Graph()
    G.add_weighted_edges_from([("a", "b", 2.0), ("b", "c", 0.5), ("c", "d", 1.0)])
    S = gc.SideInfo.from_pairs(must=[("a", "d")], cannot=[("a", "b")], weight=3.0)
    P = gc.Problem.from_graph(G, S)
    U = np.arange(8.0).reshape(4, 2) % 3
    E = Energy.from_problem(P, U, smoothness=2.0, constraint_scale=0.5)
    idx = P.index
    terms = [(idx[u], idx[v], 2.0 * w) for u, v, w in G.edges(data="weight")]
    terms += [(idx["a"], idx["d"], 1.5), (idx["a"], idx["b"], -1.5)]
    for z in labellings(4, 2):
        assert E.evaluate(z) == pytest.approx(hand_energy(U, terms, z))
    E0 = Energy.from_problem(P, U, smoothness=0, constraint_scale=0)
    assert E0.n_edges == 0
    assert E0.evaluate([0, 0, 0, 0]) == U[:, 0].sum()


def test_from_problem_keeps_hard_constraints_hard():
    G = nx.path_graph(3)
    S = gc.SideInfo.from_pairs(cannot=[(0, 2)], weight=inf)
    E = Energy.from_problem(gc.Problem.from_graph(G, S), np.zeros((3, 2)), constraint_scale=0.1)
    assert E.evaluate([0, 0, 0]) == inf and E.evaluate([0, 0, 1]) == 1.0


def test_from_problem_checks_unary_shape():
    P = gc.Problem.from_graph(nx.path_graph(3))
    with pytest.raises(InvalidParameterError, match=r"unary must have shape \(3, n_labels\), got \(2, 2\)"):
        Energy.from_problem(P, np.zeros((2, 2)))


# ---------------------------------------------------------------------- errors
def test_nan_or_minus_inf_unary_is_named():
    with pytest.raises(InvalidParameterError, match=r"unary\[1, 0\] is nan"):
        Energy([[0.0, 1.0], [np.nan, 0.0]])
    with pytest.raises(InvalidParameterError, match=r"unary\[0, 1\] is -inf"):
        Energy([[0.0, -inf], [0.0, 0.0]])
    with pytest.raises(InvalidParameterError, match=r"unary must have shape \(n_nodes, n_labels\).*\(3,\)"):
        Energy([0.0, 1.0, 2.0])
    with pytest.raises(InvalidParameterError, match=r"got \(0, 2\)"):
        Energy(np.zeros((0, 2)))


def test_edge_out_of_range_or_self_loop_is_named():
    with pytest.raises(InvalidParameterError, match=r"edge \(0, 5\) refers to a node outside \[0, 3\)"):
        Energy(np.zeros((3, 2)), edges=[(0, 1), (0, 5)], weights=[1.0, 1.0])
    with pytest.raises(InvalidParameterError, match=r"edge \(-1, 2\) refers to a node outside"):
        Energy(np.zeros((3, 2)), edges=[(-1, 2)], weights=[1.0])
    with pytest.raises(InvalidParameterError, match=r"edge \(1, 1\) joins a node to itself"):
        Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 1)], weights=[1.0, 1.0])
    with pytest.raises(InvalidParameterError, match=r"table edge \(2, 2\) joins a node to itself"):
        Energy(np.zeros((3, 2)), table_edges=[(2, 2)], tables=np.zeros((1, 2, 2)))
    with pytest.raises(InvalidParameterError, match=r"table edge \(0, 3\) refers to a node outside"):
        Energy(np.zeros((3, 2)), table_edges=[(0, 3)], tables=np.zeros((1, 2, 2)))


def test_weight_count_mismatch():
    with pytest.raises(InvalidParameterError, match="2 edges but 1 weights"):
        Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2)], weights=[1.0])


def test_nan_weight_names_the_edge():
    with pytest.raises(InvalidParameterError, match=r"edge \(1, 2\) has weight nan"):
        Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2)], weights=[1.0, np.nan])


def test_all_infinite_row_names_the_node():
    with pytest.raises(InvalidConstraintError, match="node 2 has an infinite cost for every label"):
        Energy([[0.0, 1.0], [1.0, 0.0], [inf, inf]])


def test_hard_attractive_and_hard_repulsive_on_one_pair():
    msg = r"pair \(0, 2\) has both a hard attractive and a hard repulsive"
    with pytest.raises(InvalidConstraintError, match=msg) as err:
        Energy(np.zeros((3, 2)), edges=[(0, 2), (2, 0)], weights=[inf, -inf])
    assert err.value.constraint == (0, 2)


def test_bad_label_costs_and_tables():
    with pytest.raises(InvalidParameterError, match="label_costs must be 2 finite numbers >= 0"):
        Energy(np.zeros((2, 2)), label_costs=[1.0, -1.0])
    with pytest.raises(InvalidParameterError, match="label_costs must be 2 finite numbers >= 0"):
        Energy(np.zeros((2, 2)), label_costs=[1.0])
    with pytest.raises(InvalidParameterError, match=r"tables must have shape \(1, 2, 2\), got \(1, 3, 3\)"):
        Energy(np.zeros((2, 2)), table_edges=[(0, 1)], tables=np.zeros((1, 3, 3)))
    with pytest.raises(InvalidParameterError, match="pair tables must be finite"):
        Energy(np.zeros((2, 2)), table_edges=[(0, 1)], tables=np.full((1, 2, 2), inf))


def test_evaluate_checks_labels():
    E = Energy(np.zeros((3, 2)))
    with pytest.raises(InvalidParameterError, match=r"labels must have shape \(3,\), got \(2,\)"):
        E.evaluate([0, 1])
    with pytest.raises(InvalidParameterError, match=r"labels\[2\] = 2 is not a label in \[0, 2\)"):
        E.evaluate([0, 1, 2])


class TestReviewRegressions:
    """Inputs that used to be truncated silently or to escape as bare numpy errors."""

    def test_fractional_edges_and_labels_are_refused(self):
        with pytest.raises(InvalidParameterError, match="integer node indices"):
            Energy(np.zeros((2, 2)), edges=[[0.6, 1.7]], weights=[1.0])
        E = Energy(np.zeros((2, 2)), edges=[[0, 1]], weights=[1.0])
        with pytest.raises(InvalidParameterError, match=r"labels\[0\] = 0.9 is not an integer label"):
            E.evaluate([0.9, 0.2])
        assert E.evaluate(np.array([0.0, 1.0])) == 1.0  # integral floats are fine
        with pytest.raises(InvalidParameterError, match=r"labels\[1\] = 5 is not a label in \[0, 2\)"):
            E.violated_hard_terms([0, 5])

    def test_malformed_pairs_weights_and_tables(self):
        with pytest.raises(InvalidParameterError, match=r"shape \(n, 2\)"):
            Energy(np.zeros((3, 2)), edges=[[0, 1, 2]], weights=[1.0])
        with pytest.raises(InvalidParameterError, match="weights must be numbers"):
            Energy(np.zeros((3, 2)), edges=[[0, 1]], weights=["a"])
        with pytest.raises(InvalidParameterError, match="tables need table_edges"):
            Energy(np.zeros((3, 2)), tables=np.zeros((1, 2, 2)))
        with pytest.raises(InvalidParameterError, match="labels must hold integer labels, got dtype <U1"):
            Energy(np.zeros((2, 2))).evaluate(["a", "b"])

    def test_from_problem_refuses_negative_scales(self):
        import networkx as nx

        import graphclust as gc

        P = gc.Problem.from_graph(nx.path_graph(3))
        with pytest.raises(InvalidParameterError, match="smoothness must be >= 0"):
            Energy.from_problem(P, np.zeros((3, 2)), smoothness=-1)
        with pytest.raises(InvalidParameterError, match="constraint_scale must be finite"):
            Energy.from_problem(P, np.zeros((3, 2)), constraint_scale=np.nan)
