import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

import graphclust as gc
from graphclust.errors import InfeasibleConstraintsError


def cut_value(W, labels):
    W = W.tocoo()
    return W.data[labels[W.row] != labels[W.col]].sum() / 2


def test_contract_small_example():
    G = nx.Graph()
    G.add_weighted_edges_from([(0, 1, 1.0), (1, 2, 2.0), (2, 3, 3.0), (0, 3, 4.0)])
    nx.set_node_attributes(G, {i: [float(i)] for i in range(4)}, "features")
    S = gc.SideInfo.from_pairs(must=[(0, 1)], weight=np.inf) | gc.SideInfo.from_pairs(
        cannot=[(1, 2), (0, 2)], must=[(2, 3)]
    )
    P = gc.Problem.from_graph(G, S)
    R, lift = gc.contract(P)
    assert R.nodes == [0, 2, 3] and R.counts.tolist() == [2, 1, 1]
    np.testing.assert_array_equal(R.X.ravel(), [1.0, 2.0, 3.0])  # sums
    np.testing.assert_array_equal(R.feature_means.ravel(), [0.5, 2.0, 3.0])
    # edges 1-2 (2) and 0-3 (4) now leave super-node 0
    np.testing.assert_array_equal(R.W.toarray(), [[0, 2, 4], [2, 0, 3], [4, 3, 0]])
    assert lift.internal_weight.tolist() == [1.0, 0.0, 0.0]
    # the two cannot-links 1-2 and 0-2 are parallel after merging: summed
    cons = dict(zip(map(tuple, R.constraints.tolist()), R.constraint_weights.tolist()))
    assert cons == {(0, 1): -2.0, (1, 2): 1.0}
    assert lift([5, 6, 7]).tolist() == [5, 5, 6, 7]


def test_hard_cannot_inside_component_raises_with_path():
    S = gc.SideInfo.from_pairs(must=[("a", "b"), ("b", "c")], cannot=[("a", "c")], weight=np.inf)
    P = gc.Problem.from_graph(nx.path_graph(["a", "b", "c"]), S)
    with pytest.raises(InfeasibleConstraintsError, match="a' - 'b' - 'c'") as err:
        gc.contract(P)
    assert err.value.path == ["a", "b", "c"]


def test_soft_cannot_inside_component_warns_and_is_counted():
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], weight=np.inf) | gc.SideInfo.from_pairs(cannot=[(0, 2, 2.5)])
    P = gc.Problem.from_graph(nx.path_graph(3), S)
    with pytest.warns(UserWarning, match="always be violated"):
        R, lift = gc.contract(P)
    assert R.n_nodes == 1 and lift.constant == 2.5 and R.n_constraints == 0


def test_threshold_merges_strong_soft_links():
    S = gc.SideInfo.from_pairs(must=[(0, 1, 5.0), (2, 3, 0.5)])
    P = gc.Problem.from_graph(nx.path_graph(4), S)
    assert gc.contract(P)[0].n_nodes == 4
    R, lift = gc.contract(P, threshold=1.0)
    assert R.n_nodes == 3 and R.constraint_weights.tolist() == [0.5]


def test_aggregate_sums_unaries():
    S = gc.SideInfo.from_pairs(must=[(0, 2)], weight=np.inf)
    R, lift = gc.contract(gc.Problem.from_graph(nx.path_graph(3), S))
    U = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    np.testing.assert_array_equal(lift.aggregate(U), [[6.0, 8.0], [3.0, 4.0]])


@st.composite
def problems(draw):
    n = draw(st.integers(2, 12))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.floats(0.1, 5)), max_size=30))
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from((u, v, w) for u, v, w in edges if u != v)
    must = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=8))
    must = [(u, v) for u, v in must if u != v]
    labels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return G, must, np.array(labels)


@given(problems())
def test_cut_is_preserved_and_lift_round_trips(data):
    G, must, labels_super_seed = data
    P = gc.Problem.from_graph(G, gc.SideInfo.from_pairs(must=must, weight=np.inf))
    R, lift = gc.contract(P)
    assert R.n_nodes == nx.number_connected_components(nx.Graph(must + [(u, u) for u in G]))
    reduced_labels = labels_super_seed[: R.n_nodes]
    full = lift(reduced_labels)
    # every hard must-link is satisfied by the lifted labels
    assert all(full[u] == full[v] for u, v in must)
    # cut values are preserved exactly
    assert cut_value(R.W, reduced_labels) == pytest.approx(cut_value(P.W, full), abs=1e-9)
    # volumes and sizes per cluster too
    for k in np.unique(reduced_labels):
        assert R.counts[reduced_labels == k].sum() == (full == k).sum()
    # total weight is split between kept and internal edges
    assert R.W.sum() / 2 + lift.internal_weight.sum() == pytest.approx(P.W.sum() / 2)


def test_bad_threshold():
    from graphclust.errors import InvalidParameterError

    P = gc.Problem.from_graph(nx.path_graph(3))
    for bad in ["a", 0, -1.0, None]:
        with pytest.raises(InvalidParameterError, match="threshold"):
            gc.contract(P, threshold=bad)


def _members_moments(X, mapping, k):
    """Direct per-component first and second moments of the original points."""
    d = X.shape[1]
    sums, outer = np.zeros((k, d)), np.zeros((k, d, d))
    for i, c in enumerate(mapping):
        sums[c] += X[i]
        outer[c] += np.outer(X[i], X[i])
    return sums, outer


@given(st.data())
def test_contraction_is_lossless_for_second_moments(data):
    """Contracting in two steps keeps every super-node's Σx and Σxxᵀ equal to its
    original members' (the scatter travels with the merged nodes)."""
    n = data.draw(st.integers(2, 9))
    seed = data.draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)) * rng.uniform(0.1, 10, 3)
    pairs = [tuple(sorted(rng.choice(n, 2, replace=False).tolist())) for _ in range(data.draw(st.integers(0, 6)))]
    strong = [p for p in pairs if rng.random() < 0.5]
    S = gc.SideInfo([(u, v, np.inf if p in strong else 5.0) for p in set(pairs) for u, v in [p]])
    P = gc.Problem.from_array(X, S)
    # first the infinite must-links, then (threshold 1) the rest: nested contraction
    R1, lift1 = gc.contract(P)
    R2, lift2 = gc.contract(R1, threshold=1.0)
    mapping = lift2.mapping[lift1.mapping]
    sums, outer = _members_moments(X, mapping, R2.n_nodes)
    np.testing.assert_allclose(R2.X, sums, atol=1e-9)
    np.testing.assert_allclose(R2.second_moments(), outer, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(R2.second_moments(diagonal=True), np.einsum("kii->ki", outer), rtol=1e-9, atol=1e-9)
    # the one-step contraction of the same components agrees
    R, lift = gc.contract(P, threshold=1.0)
    np.testing.assert_allclose(R.second_moments(), outer, rtol=1e-9, atol=1e-9)


def test_merged_node_scores_like_its_members_under_a_gaussian():
    """Σ_m ‖x_m − μ‖² over a merged node's members = tr(S) + c‖x̄ − μ‖² for any μ."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(6, 2))
    P = gc.Problem.from_array(X, gc.SideInfo.from_pairs(must=[(0, 1), (1, 4)], weight=np.inf))
    R, lift = gc.contract(P)
    index, blocks = R.within_scatter()
    node = lift.mapping[0]
    mu = rng.normal(size=2)
    direct = ((X[[0, 1, 4]] - mu) ** 2).sum()
    mean = R.X[node] / R.counts[node]
    assert np.trace(blocks[index[node]]) + R.counts[node] * ((mean - mu) ** 2).sum() == pytest.approx(direct)
    assert (index[[lift.mapping[i] for i in (2, 3, 5)]] == -1).all()
    assert gc.contract(gc.Problem.from_array(X))[0].scatter is None  # nothing merged: nothing stored
