"""Tests for graphclust.read_problem: GraphML straight into a Problem, no networkx graph.

The oracle is the networkx path: ``Problem.from_graph(*read_graphml(path))`` must give
the same arrays, and a bad file the same error, for every file here."""

import math
import os
import tracemalloc

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import (
    GraphMLError,
    InvalidFeaturesError,
    InvalidGraphError,
    UnknownNodeError,
)
from graphclust.io import graphml_read, read_graphml, read_problem, write_graphml

from test_io import _random_problem, doc


def assert_same_problem(P, Q):
    """Every array of two Problems equal, dtypes included (``graph`` aside)."""
    assert list(P.nodes) == list(Q.nodes)
    assert [type(u) for u in P.nodes] == [type(u) for u in Q.nodes]
    assert P.W.shape == Q.W.shape
    for name in ("indptr", "indices", "data"):
        a, b = getattr(P.W, name), getattr(Q.W, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    if Q.X is None:
        assert P.X is None
    else:
        assert P.X.dtype == Q.X.dtype and P.X.shape == Q.X.shape
        np.testing.assert_array_equal(P.X, Q.X)
    for name in ("counts", "vertex_weights", "constraints", "constraint_weights"):
        a, b = getattr(P, name), getattr(Q, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_array_equal(a, b, err_msg=name)


def via_networkx(path, side=None):
    G, S = read_graphml(path, side=side)
    return gc.Problem.from_graph(G, S), S


def check_same(path, side=None):
    P, S = read_problem(path, side=side)
    Q, T = via_networkx(path, side=side)
    assert_same_problem(P, Q)
    assert S == T and S.seeds == T.seeds
    assert P.graph is None and isinstance(P, gc.Problem)
    return P, S


def write_text(tmp_path, text, name="in.graphml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------- same arrays
@pytest.mark.parametrize("seed", range(4))
def test_generated_files_give_the_problem_of_the_networkx_path(tmp_path, seed):
    """Features, truth and other node attributes, weights of every kind (float, int,
    missing, with other attributes), constraints of both signs, seeds."""
    G, S = _random_problem(seed)
    path = tmp_path / "g.graphml"
    write_graphml(path, G, S)
    P, S2 = check_same(path)
    assert P.n_features == 3 and P.n_constraints > 0 and S2.seeds == {0: 1, 7: 2}


@pytest.mark.parametrize("keys", ["int", "str", "tuple", "mixed"])
def test_node_keys_of_every_kind(tmp_path, keys):
    G = nx.grid_2d_graph(3, 4)  # tuple keys: node_key_type="repr"
    if keys == "int":
        G = nx.convert_node_labels_to_integers(G)
    elif keys == "str":
        G = nx.relabel_nodes(G, {u: f"p{u[0]}-{u[1]}" for u in G})
    elif keys == "mixed":
        G = nx.relabel_nodes(G, {u: (u[0] if u[1] == 0 else f"{u}") for u in G})
    rng = np.random.default_rng(1)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.random())
    for u in G:
        G.nodes[u]["features"] = rng.standard_normal(2)
    nodes = list(G)
    S = gc.SideInfo.from_pairs(must=[(nodes[0], nodes[5])], cannot=[(nodes[1], nodes[7])], weight=math.inf)
    path = tmp_path / "g.graphml"
    write_graphml(path, G, S)
    check_same(path)


def test_nodes_after_edges_self_loops_zero_weights_and_parallel_constraint(tmp_path):
    """Node rows follow the <node> order even when edges name nodes first; a self loop
    and a zero weight drop out of W as in Problem.from_graph; a pair may carry a data
    edge and a constraint edge."""
    body = (
        '<edge source="c" target="a"><data key="w">0.5</data></edge>\n'
        '<edge source="b" target="b"><data key="w">2</data></edge>\n'
        '<edge source="b" target="c"><data key="w">0</data></edge>\n'
        '<edge source="a" target="b"/>\n'
        '<edge source="c" target="a"><data key="k">cannot</data><data key="w">3</data></edge>\n'
        '<node id="b"><data key="f">1 2</data></node><node id="a"><data key="f">[3, 4]</data></node>\n'
        '<node id="c"><data key="f">5,6</data><data key="l">1</data></node>\n'
    )
    P, S = check_same(write_text(tmp_path, doc(body)))
    assert P.nodes == ["b", "a", "c"] and P.X.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert P.W.toarray().tolist() == [[0, 1, 0], [1, 0, 0.5], [0, 0.5, 0]]
    assert P.constraints.tolist() == [[1, 2]] and P.constraint_weights.tolist() == [-3.0]
    assert S.seeds == {"c": 1}


def test_typed_weights_and_graph_attributes(tmp_path):
    """A weight key of type int or string (numbers as text) and attributes that a
    Problem does not hold: the same W, the rest dropped."""
    keys = ('<key id="w" for="edge" attr.name="weight" attr.type="string"/>\n'
            '<key id="n" for="edge" attr.name="note" attr.type="int"/>\n'
            '<key id="g" for="graph" attr.name="name" attr.type="string"/>\n'
            '<key id="t" for="node" attr.name="truth" attr.type="int"/>\n')
    body = ('<data key="g">demo</data><node id="0"><data key="t">1</data></node><node id="1"/><node id="2"/>\n'
            '<edge source="0" target="1"><data key="w">2.5</data></edge>\n'
            '<edge source="1" target="2"><data key="w">1e-3</data><data key="n">4</data></edge>\n')
    P, _ = check_same(write_text(tmp_path, doc(body, keys=keys)))
    assert P.W[0, 1] == 2.5 and P.W[2, 1] == 1e-3 and P.X is None


def test_side_files(tmp_path):
    G, S = _random_problem(2)
    path = tmp_path / "g.graphml"
    write_graphml(path, G, gc.SideInfo(seeds=S.seeds))
    csv = tmp_path / "s.csv"
    csv.write_text("u,v,kind,weight\n0,1,must,2\n3,5,cannot,inf\n")
    side = tmp_path / "s.graphml"
    write_graphml(side, None, S)
    for extra in (csv, side):
        P, T = check_same(path, side=extra)
        assert P.n_constraints == len(T) > 0


def test_a_file_object_and_no_features_no_edges(tmp_path):
    path = write_text(tmp_path, doc('<node id="x"/><node id="y"/>'))
    with open(path, "rb") as handle:
        P, S = read_problem(handle)
    assert_same_problem(P, via_networkx(path)[0])
    assert P.n_nodes == 2 and P.n_edges == 0 and P.X is None and len(S) == 0


def test_one_large_features_value_is_the_matrix_row(tmp_path):
    values = np.random.default_rng(0).random(50_000).round(5)
    path = write_text(tmp_path, doc('<node id="a"><data key="f">' + " ".join(map(repr, values.tolist()))
                                    + "</data></node>"))
    P, _ = check_same(path)
    assert P.X.shape == (1, 50_000)
    np.testing.assert_array_equal(P.X[0], values)


def test_estimator_fits_the_same(tmp_path):
    G, S = _random_problem(1)
    path = tmp_path / "g.graphml"
    write_graphml(path, G, S)
    P, S2 = read_problem(path)
    a = gc.SpectralClustering(n_clusters=3, random_state=0).fit(P)
    b = gc.SpectralClustering(n_clusters=3, random_state=0).fit(*read_graphml(path))
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.partition_ == b.partition_


def test_records_past_four_byte_indices(tmp_path, monkeypatch):
    """The 8-byte arrays the records widen to give the same Problem."""
    G, S = _random_problem(5)
    path = tmp_path / "g.graphml"
    write_graphml(path, G, S)
    expected = read_problem(path)[0]
    monkeypatch.setattr(graphml_read, "_NARROW", 7)
    P, _ = check_same(path)
    assert_same_problem(P, expected)


# ---------------------------------------------------------------------- same errors
BAD = {
    "duplicate data edge": '<node id="a"/><node id="b"/>\n<edge source="a" target="b"/>\n<edge source="b" target="a"/>',
    "duplicate node": '<node id="a"/>\n<node id="a"/>',
    "features given twice": '<node id="a"><data key="f">1</data>\n<data key="f">2</data></node>',
    "weight given twice": ('<node id="a"/><node id="b"/>\n<edge source="a" target="b"><data key="w">1</data>'
                           '<data key="w">2</data></edge>'),
    "must and cannot": ('<node id="a"/><node id="b"/>\n<edge source="a" target="b"><data key="k">must</data></edge>\n'
                        '<edge source="b" target="a"><data key="k">cannot</data></edge>'),
    "undeclared node": '<node id="a"/>\n<edge source="a" target="z"/>',
    "negative weight": '<node id="a"/><node id="b"/>\n<edge source="a" target="b"><data key="w">-1</data></edge>',
    "non-numeric feature": '<node id="a"><data key="f">1 x</data></node>',
    "ragged features": '<node id="a"><data key="f">1 2</data></node>\n<node id="b"><data key="f">1</data></node>',
    "self-loop constraint": '<node id="a"/>\n<edge source="a" target="a"><data key="k">must</data></edge>',
    "truncated": '<node id="a"/>\n<edge source="a"',
    "features on some nodes": '<node id="a"><data key="f">1 2</data></node>\n<node id="b"/>',
    "non-finite features": '<node id="a"><data key="f">1 2</data></node>\n<node id="b"><data key="f">nan 1</data></node>',
    "infinite feature of one node": '<node id="a"><data key="f">1 inf 2</data></node>',
    "empty graph": "",
}


def _error(fn, *args, **kwargs):
    with pytest.raises(Exception) as info:
        fn(*args, **kwargs)
    return info.value


@pytest.mark.parametrize("case", list(BAD))
def test_bad_files_are_refused_with_the_same_error(tmp_path, case):
    text = BAD[case] if case == "truncated" else doc(BAD[case])
    if case == "truncated":
        text = doc("")[: doc("").index("<graph")] + '<graph edgedefault="undirected">\n' + BAD[case]
    path = write_text(tmp_path, text)
    got = _error(read_problem, path)
    want = _error(via_networkx, path)
    assert type(got) is type(want) and str(got) == str(want)
    assert isinstance(got, (GraphMLError, InvalidFeaturesError, InvalidGraphError))
    for attr in ("path", "line", "element", "node"):
        assert getattr(got, attr, None) == getattr(want, attr, None), attr


def test_side_file_errors_are_the_same(tmp_path):
    path = write_text(tmp_path, doc('<node id="0"/><node id="1"/><node id="2"/>\n'
                                    '<edge source="0" target="1"><data key="k">must</data></edge>'))
    for name, text in [("unknown.csv", "u,v,weight\n0,9,1\n"), ("clash.csv", "u,v,kind\n1,0,cannot\n"),
                       ("bad.csv", "u,v,weight\n0,2,zero\n")]:
        side = tmp_path / name
        side.write_text(text)
        got, want = _error(read_problem, path, side=side), _error(via_networkx, path, side=side)
        assert type(got) is type(want) and str(got) == str(want)
        assert isinstance(got, (GraphMLError, UnknownNodeError))


def test_out_of_memory_while_building_the_problem(tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(graphml_read, "_edge_list_csr", boom)
    path = write_text(tmp_path, doc('<node id="a"/><node id="b"/><edge source="a" target="b"/>'))
    with pytest.raises(GraphMLError, match=r"ran out of memory \(MemoryError\) while building the Problem "
                       r"\(2 nodes, 1 data edges read\)") as info:
        read_problem(path)
    assert info.value.path == str(path) and info.value.element == "<graph>"
    monkeypatch.setattr(graphml_read, "_side_from", boom)
    with pytest.raises(GraphMLError, match=r"while building the side information \(2 nodes, 1 data edges read\)"):
        read_problem(path)


# ---------------------------------------------------------------------- memory
def test_edges_are_read_without_a_graph_in_a_fraction_of_the_memory(tmp_path):
    """tracemalloc (Python's and numpy's allocations) on a 4 MB file of 40k weighted
    edges: read_problem peaks well under the file size and far under read_graphml."""
    n = 8_000
    rng = np.random.default_rng(0)
    lines = [f'<node id="{u}"/>' for u in range(n)]
    lines += [f'<edge source="{u}" target="{(u + o) % n}"><data key="k">data</data><data key="w">{w!r}</data></edge>'
              for u in range(n) for o, w in zip((1, 2, 3, 5, 8), rng.random(5).tolist())]
    path = write_text(tmp_path, doc("\n".join(lines)))
    size = os.path.getsize(path)

    def peak(fn):
        tracemalloc.start()
        try:
            fn(path)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    ours, theirs = peak(read_problem), peak(read_graphml)
    assert ours < 1.5 * size, ours / size
    assert ours < theirs / 2, (ours / size, theirs / size)


# ---------------------------------------------------------------------- the command line
@pytest.mark.parametrize("body", [
    ('<node id="a"><data key="f">1 2</data></node><node id="b"/><node id="c"/>\n'  # features on one node only
     '<edge source="a" target="a"/><edge source="a" target="b"><data key="w">0</data></edge>\n'
     '<edge source="b" target="c"><data key="k">cannot</data></edge>'
     '<edge source="a" target="c"><data key="k">must</data></edge>'),
    "",  # no nodes at all
], ids=["self-loop, zero weight, partial features", "empty"])
def test_check_command_reads_no_networkx_graph_and_says_the_same(tmp_path, capsys, monkeypatch, body):
    from graphclust.cli import main

    path = write_text(tmp_path, doc(body))
    G, S = read_graphml(path)
    expected = f"{path}: {G.number_of_nodes()} nodes, {G.number_of_edges()} data edges\n{S.check(G).summary()}\n"
    monkeypatch.setattr(graphml_read, "_build_graph", None)  # calling it would fail
    status = main(["check", str(path)])
    assert capsys.readouterr().out == expected
    assert status == (0 if S.check(G).feasible else 1)
