import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import graphclust as gc
from graphclust.errors import (
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    UnknownNodeError,
)


def test_from_graph_arrays_match_networkx():
    G = nx.Graph()
    G.add_edge("a", "b", weight=2.0)
    G.add_edge("b", "c", weight=0.5)
    G.add_edge("c", "c", weight=9.0)  # self loop: ignored
    G.add_node("d")
    P = gc.Problem.from_graph(G)
    assert P.nodes == ["a", "b", "c", "d"]
    dense = P.W.toarray()
    expected = nx.to_numpy_array(G, nodelist=P.nodes)
    np.fill_diagonal(expected, 0)
    np.testing.assert_array_equal(dense, expected)
    assert (P.W != P.W.T).nnz == 0
    assert P.n_edges == 2 and P.X is None
    assert P.W.dtype == np.float64


def test_multigraph_parallel_edges_are_summed():
    G = nx.MultiGraph()
    G.add_edge(0, 1, weight=1.0)
    G.add_edge(0, 1, weight=2.5)
    P = gc.Problem.from_graph(G)
    assert P.W[0, 1] == 3.5 and P.W[1, 0] == 3.5


def test_unweighted_edges_default_to_one_and_weight_none():
    G = nx.path_graph(3)
    G[0][1]["weight"] = 7.0
    assert gc.Problem.from_graph(G).W[0, 1] == 7.0
    assert gc.Problem.from_graph(G, weight=None).W[0, 1] == 1.0
    assert gc.Problem.from_graph(G).W[1, 2] == 1.0


def test_features_and_side_info():
    G = nx.Graph()
    for i in range(3):
        G.add_node(i, features=[i, 2 * i])
    G.add_edges_from([(0, 1), (1, 2)])
    S = gc.SideInfo.from_pairs(must=[(2, 0)], cannot=[(1, 2)], weight=np.inf)
    P = gc.Problem.from_graph(G, S)
    np.testing.assert_array_equal(P.X, [[0, 0], [1, 2], [2, 4]])
    assert P.constraints.tolist() == [[0, 2], [1, 2]]
    assert P.constraint_weights.tolist() == [np.inf, -np.inf]
    assert P.must_mask.tolist() == [True, False]


def test_input_graph_is_not_modified():
    G = nx.karate_club_graph()
    before = nx.to_dict_of_dicts(G)
    P = gc.Problem.from_graph(G)
    H = P.to_networkx(np.arange(G.number_of_nodes()) % 2)
    assert nx.to_dict_of_dicts(G) == before
    assert "cluster" not in G.nodes[0] and H.nodes[1]["cluster"] == 1


def test_partition_round_trip_with_tuple_nodes():
    G = nx.grid_2d_graph(2, 3)
    P = gc.Problem.from_graph(G)
    labels = np.arange(6) % 2
    part = P.partition(labels)
    assert part[(0, 0)] == 0 and part[(0, 1)] == 1
    assert [part[u] for u in P.nodes] == labels.tolist()


def test_from_array_with_graph_and_nodes():
    X = np.arange(8.0).reshape(4, 2)
    G = nx.Graph([(3, 2, {"weight": 2.0}), (0, 1)])
    G.add_nodes_from([0, 1, 2, 3])
    P = gc.Problem.from_array(X, graph=G)
    assert P.W[2, 3] == 2.0 and P.W[0, 1] == 1.0
    np.testing.assert_array_equal(P.X, X)


def test_from_arrays_symmetrises_and_drops_diagonal():
    W = sp.csr_array(np.array([[5.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]))
    P = gc.Problem.from_arrays(W, nodes=["x", "y", "z"])
    np.testing.assert_array_equal(P.W.toarray(), [[0, 1, 0], [1, 0, 2], [0, 2, 0]])


def test_as_problem_dispatch(barbell):
    assert gc.as_problem(barbell).n_nodes == 6
    assert gc.as_problem(np.zeros((3, 2))).n_features == 2
    P = gc.as_problem(barbell)
    assert gc.as_problem(P) is P


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0, "heavy", None])
def test_bad_edge_weight_names_the_edge(bad):
    G = nx.path_graph(4)
    G[1][2]["weight"] = bad
    with pytest.raises(InvalidGraphError, match=r"edge \(1, 2\)") as err:
        gc.Problem.from_graph(G)
    assert err.value.edge == (1, 2)


def test_bad_matrix_entry_names_the_edge():
    W = np.zeros((3, 3))
    W[0, 2] = W[2, 0] = np.nan
    with pytest.raises(InvalidGraphError, match=r"edge \(0, 2\) has weight nan"):
        gc.Problem.from_arrays(W)


def test_empty_and_directed_graphs_are_refused():
    with pytest.raises(InvalidGraphError, match="empty"):
        gc.Problem.from_graph(nx.Graph())
    with pytest.raises(InvalidGraphError, match="directed"):
        gc.Problem.from_graph(nx.DiGraph([(0, 1)]))
    with pytest.raises(InvalidFeaturesError, match="no rows"):
        gc.Problem.from_array(np.zeros((0, 2)))


@pytest.mark.parametrize(
    "features, culprit, message",
    [
        ({0: [1.0, 2.0], 1: [1.0], 2: [0.0, 0.0]}, 1, "ragged"),
        ({0: [1.0, 2.0], 1: [1.0, "x"], 2: [0.0, 0.0]}, 1, "non-numeric"),
        ({0: [1.0, 2.0], 1: "1 2", 2: [0.0, 0.0]}, 1, "string"),
        ({0: [1.0, 2.0], 2: [0.0, 0.0]}, 1, "no 'features'"),
        ({0: [1.0, 2.0], 1: [np.nan, 0.0], 2: [0.0, 0.0]}, 1, "non-finite"),
    ],
)
def test_bad_features_name_the_node(features, culprit, message):
    G = nx.path_graph(3)
    nx.set_node_attributes(G, features, "features")
    with pytest.raises(InvalidFeaturesError, match=message) as err:
        gc.Problem.from_graph(G)
    assert err.value.node == culprit
    assert repr(culprit) in str(err.value)


def test_non_finite_array_features():
    X = np.zeros((3, 2))
    X[2, 1] = np.inf
    with pytest.raises(InvalidFeaturesError, match="row 2 of X has inf in column 1") as err:
        gc.Problem.from_array(X)
    assert err.value.node == 2


def test_unknown_node_in_constraint_is_named():
    S = gc.SideInfo.from_pairs(cannot=[(0, "ghost")])
    with pytest.raises(UnknownNodeError, match="cannot-link .*'ghost'") as err:
        gc.Problem.from_graph(nx.path_graph(3), S)
    assert err.value.node == "ghost" and err.value.constraint == (0, "ghost")


def test_wrong_label_length():
    P = gc.Problem.from_graph(nx.path_graph(3))
    with pytest.raises(InvalidParameterError, match="expected 3 labels"):
        P.partition([0, 1])


def test_node_renaming_gives_the_same_arrays():
    G = nx.karate_club_graph()
    H = nx.relabel_nodes(G, {u: f"n{u}" for u in G})
    a, b = gc.Problem.from_graph(G), gc.Problem.from_graph(H)
    assert (a.W != b.W).nnz == 0


def test_duplicate_node_keys_are_refused():
    with pytest.raises(InvalidGraphError, match="node key 'a' is given twice"):
        gc.Problem.from_array(np.zeros((3, 2)), nodes=["a", "a", "c"])
    with pytest.raises(InvalidGraphError, match="node key 0 is given twice"):
        gc.Problem.from_arrays(np.ones((3, 3)), nodes=[0, 0, 1])


def test_from_arrays_accepts_nested_lists_and_refuses_junk():
    P = gc.Problem.from_arrays([[0, 1], [1, 0]])
    assert P.W[0, 1] == 1.0
    with pytest.raises(InvalidGraphError, match="numeric square matrix"):
        gc.Problem.from_arrays([["a", "b"], ["c", "d"]])


def test_from_arrays_counts_make_x_feature_sums():
    W = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    P = gc.Problem.from_arrays(W, X=[[6.0, 3.0], [1.0, 1.0], [8.0, 4.0]], counts=[3, 1, 4])
    np.testing.assert_allclose(P.feature_means, [[2.0, 1.0], [1.0, 1.0], [2.0, 1.0]])
    assert P.counts.dtype == np.int64
    for bad in ([1, 0, 1], [1.5, 1, 1], [1, 1]):
        with pytest.raises(InvalidGraphError, match="counts must be 3 integers >= 1"):
            gc.Problem.from_arrays(W, X=np.ones((3, 2)), counts=bad)


def test_constraint_csr_lists_every_partner_with_its_signed_weight():
    """Built once per problem; node i's row holds exactly its constraint partners."""
    rng = np.random.default_rng(0)
    n = 12
    pairs = {tuple(sorted(rng.choice(n, 2, replace=False).tolist())) for _ in range(20)}
    S = gc.SideInfo([(u, v, float(rng.choice([-np.inf, -1.5, 2.0, np.inf]))) for u, v in pairs])
    P = gc.Problem.from_array(rng.normal(size=(n, 2)), S)
    indptr, partners, w = P.constraint_csr
    assert P.constraint_csr is P.constraint_csr  # cached
    for i in range(n):
        got = sorted(zip(partners[indptr[i]:indptr[i + 1]].tolist(), w[indptr[i]:indptr[i + 1]].tolist()))
        expected = sorted((v if u == i else u, S.weight(u, v)) for u, v in pairs if i in (u, v))
        assert got == expected
