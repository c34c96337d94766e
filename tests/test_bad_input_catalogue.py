"""A catalogue of bad and extreme input (issue #23, item 5).

Each row is one thing a user can get wrong: the call, the error class it must raise
(always a :class:`~graphclust.errors.GraphclustError`) and a pattern the message must
match, naming the culprit in the user's terms (the parameter, node, edge, row or file
element), never an internal name or a temporary file.
"""

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import (
    GraphclustError,
    GraphMLError,
    InfeasibleConstraintsError,
    InvalidConstraintError,
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    OutputFileError,
    TooFewClustersError,
    UnknownNodeError,
)

RNG = np.random.default_rng(0)
X = RNG.random((12, 2))
PATH = nx.path_graph(6)
S_OK = gc.SideInfo([(0, 1, 1.0), (2, 3, -1.0)])


def _graph(**edge_attrs):
    G = nx.path_graph(4)
    nx.set_edge_attributes(G, {(0, 1): edge_attrs})
    return G


def _directed():
    return nx.DiGraph([(0, 1), (1, 2), (2, 3)])


def _multi():
    G = nx.MultiGraph([(0, 1), (0, 1), (1, 2)])
    return G


def _vertex_weighted(value):
    G = nx.path_graph(3)
    G.nodes[0]["w"] = value
    return G


def _mixed_nodes():
    G = nx.Graph([(0, "a"), ("a", 2.5)])
    return G


def _energy(unary=((0.0, 1.0), (1.0, 0.0)), **kw):
    return gc.Energy(unary, **kw)


def _grml(tmp_path, body, name="g.graphml"):
    p = tmp_path / name
    p.write_text('<?xml version="1.0"?>' + body)
    return p


GRAPHML_HEAD = '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'

CASES = [
    # ------------------------------------------------------------- features
    ("X is None", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(None), InvalidFeaturesError, "X is None"),
    ("X 1-D", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(np.arange(5.0)), InvalidFeaturesError,
     "Reshape your data"),
    ("X 3-D", lambda tp: gc.RDPMeans(n_clusters=2).fit(np.zeros((3, 2, 2))), InvalidFeaturesError, "2-D"),
    ("X with no rows", lambda tp: gc.RDPMeans(n_clusters=2).fit(np.zeros((0, 2))), InvalidFeaturesError,
     "0 sample"),
    ("X with no columns", lambda tp: gc.RDPMeans(n_clusters=2).fit(np.zeros((5, 0))), InvalidFeaturesError,
     "0 feature"),
    ("X with NaN", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(np.where(np.eye(4, 2) > 0, np.nan, 1.0)),
     InvalidFeaturesError, "NaN"),
    ("X with inf", lambda tp: gc.DPMeans(lam=1.0).fit(np.array([[0.0, np.inf], [1.0, 1.0]])), InvalidFeaturesError,
     "infinity|inf"),
    ("X complex", lambda tp: gc.RDPMeans(n_clusters=2).fit(X + 1j), InvalidFeaturesError, "[Cc]omplex"),
    ("X of strings", lambda tp: gc.RDPMeans(n_clusters=2).fit(np.array([["a", "b"], ["c", "d"]])),
     InvalidFeaturesError, "row 0|'a'|numeric|number"),
    ("k larger than n (HMRF)", lambda tp: gc.HMRF(gc.potentials.Centroids(20)).fit(X), TooFewClustersError,
     "20"),
    ("k larger than n (RDP)", lambda tp: gc.RDPMeans(n_clusters=20).fit(X), GraphclustError, "20"),
    ("k larger than n (COSC)", lambda tp: gc.COSC(n_clusters=9).fit(PATH), TooFewClustersError, "9"),
    ("k larger than n (spectral)", lambda tp: gc.SpectralClustering(9).fit(PATH), TooFewClustersError, "9"),
    ("predict with wrong width", lambda tp: gc.HMRF(gc.potentials.Centroids(2), random_state=0).fit(X).predict(
        np.zeros((3, 5))), InvalidFeaturesError, "5 features.*expecting 2"),
    ("predict before fit", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).predict(X), gc.errors.NotFittedError,
     "not fitted|fit"),
    # an AttributeError by design: hasattr(est, "predict") must be False for scikit-learn
    ("predict on a graph method", lambda tp: gc.COSC(2, random_state=0).fit(PATH).predict(X), AttributeError,
     "COSC is transductive.*fit COSC on the old and new points together"),
    # ------------------------------------------------------------- graphs
    ("directed graph", lambda tp: gc.SpectralClustering(2).fit(_directed()), InvalidGraphError, "directed"),
    ("multigraph with parallel edges", lambda tp: gc.as_problem(_multi()).W.toarray()[0, 1] == 2 or 1 / 0,
     None, None),
    ("empty graph", lambda tp: gc.SpectralClustering(2).fit(nx.Graph()), GraphclustError, "no nodes|0 nodes|empty"),
    ("one-node graph", lambda tp: gc.COSC(2).fit(nx.empty_graph(1)), TooFewClustersError, "1 node|2 nodes"),
    ("negative weight", lambda tp: gc.SpectralClustering(2).fit(_graph(weight=-1.0)), InvalidGraphError,
     r"edge \(0, 1\).*-1"),
    ("NaN weight", lambda tp: gc.COSC(2).fit(_graph(weight=np.nan)), InvalidGraphError, r"edge \(0, 1\).*nan"),
    ("inf weight", lambda tp: gc.COSC(2).fit(_graph(weight=np.inf)), InvalidGraphError, r"edge \(0, 1\)"),
    ("complex weight", lambda tp: gc.SpectralClustering(2).fit(_graph(weight=1 + 2j)), InvalidGraphError,
     r"edge \(0, 1\).*\(1\+2j\)"),
    ("string weight", lambda tp: gc.SpectralClustering(2).fit(_graph(weight="heavy")), InvalidGraphError,
     r"edge \(0, 1\).*'heavy'"),
    # refused by write_graphml, so refused by fit too (numpy would read them as 2.0 and 1.0)
    ("numeric-string weight", lambda tp: gc.COSC(2).fit(_graph(weight="2")), InvalidGraphError,
     r"edge \(0, 1\) has weight '2'; similarities must be numbers"),
    ("boolean weight", lambda tp: gc.COSC(2).fit(_graph(weight=True)), InvalidGraphError,
     r"edge \(0, 1\) has weight True"),
    ("None weight", lambda tp: gc.COSC(2).fit(_graph(weight=None)), InvalidGraphError,
     r"edge \(0, 1\) has weight None"),
    ("boolean vertex weight", lambda tp: gc.Problem.from_graph(_vertex_weighted(True), vertex_weight="w"),
     InvalidGraphError, r"node 0 has w=True; expected a number"),
    ("mixed node key types are fine", lambda tp: gc.SpectralClustering(2, random_state=0).fit(_mixed_nodes())
     .n_clusters_ == 2 or 1 / 0, None, None),
    ("feature method on a plain graph", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(PATH),
     InvalidFeaturesError, "HMRF needs node features.*COSC"),
    ("ragged node features", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(_ragged()), InvalidFeaturesError,
     "node 1|features"),
    ("non-numeric node features", lambda tp: gc.as_problem(_bad_features()), InvalidFeaturesError, "node 0"),
    ("square sparse with negative entry", lambda tp: gc.SpectralClustering(2).fit(_neg_sparse()),
     InvalidGraphError, "negative|-1|edge"),
    ("unsymmetric similarity matrix is made symmetric as documented (max(W, W.T))",
     lambda tp: (gc.as_problem(_unsym_sparse()).W.toarray() == [[0, 1, 0], [1, 0, 1], [0, 1, 0]]).all() or 1 / 0,
     None, None),
    # ------------------------------------------------------------- side information
    ("self-loop constraint", lambda tp: gc.SideInfo([(1, 1, 1.0)]), InvalidConstraintError, "node 1 to itself"),
    ("zero-weight constraint", lambda tp: gc.SideInfo([(0, 1, 0.0)]), InvalidConstraintError, r"\(0, 1\).*0\.0"),
    ("NaN-weight constraint", lambda tp: gc.SideInfo([(0, 1, np.nan)]), InvalidConstraintError, "nan"),
    ("string-weight constraint", lambda tp: gc.SideInfo([(0, 1, "strong")]), InvalidConstraintError, "'strong'"),
    ("must and cannot on one pair", lambda tp: gc.SideInfo([(0, 1, 1.0), (1, 0, -1.0)]), InvalidConstraintError,
     "both as a must-link and as a cannot-link"),
    ("array node key", lambda tp: gc.SideInfo([(np.arange(2), 1, 1.0)]), InvalidConstraintError, "hashable"),
    ("constraint on an unknown node", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(X, gc.SideInfo(
        [(0, 99, -1.0)])), UnknownNodeError, "node 99"),
    ("seed on an unknown node", lambda tp: gc.RDPMeans(n_clusters=2).fit(X, gc.SideInfo([(0, 1, 1.0)],
                                                                                      seeds={"z": 1})),
     UnknownNodeError, "seed on node 'z'"),
    ("infeasible hard constraints", lambda tp: gc.COSC(2, mode="hard").fit(PATH, gc.SideInfo(
        [(0, 1, np.inf), (1, 2, np.inf), (0, 2, -np.inf)])), InfeasibleConstraintsError, "0.*2|cannot-link"),
    ("hard cannot-links need more clusters than k", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(
        X, gc.SideInfo([(0, 1, -np.inf), (1, 2, -np.inf), (0, 2, -np.inf)])), GraphclustError, "3"),
    ("sideinfo of the wrong type", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(X, sideinfo=42),
     InvalidParameterError, "sideinfo must be"),
    ("sideinfo item not a triple", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(X, sideinfo=[(0, 1)]),
     InvalidParameterError, r"sideinfo\[0\]"),
    ("y of the wrong length", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(X, np.zeros(3)),
     InvalidParameterError, "one label per node"),
    ("side information given twice", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).fit(X, S_OK, sideinfo=S_OK),
     InvalidParameterError, "given twice"),
    ("sample more pairs than exist", lambda tp: gc.SideInfo.sample([0, 1, 1], 10), GraphclustError,
     "3 nodes|pairs"),
    ("noise outside [0, 1)", lambda tp: gc.SideInfo.sample([0, 1, 1, 0], 2, noise=1.5), InvalidParameterError,
     "noise"),
    ("RowConstraints with a non-row node", lambda tp: gc.RowConstraints([(0, 50, 1.0)], 12), UnknownNodeError,
     "node 50"),
    # ------------------------------------------------------------- parameters
    ("n_clusters 0", lambda tp: gc.COSC(n_clusters=0).fit(PATH), InvalidParameterError, "n_clusters"),
    ("n_clusters negative", lambda tp: gc.SpectralClustering(-1).fit(PATH), InvalidParameterError, "n_clusters"),
    ("n_clusters fractional", lambda tp: gc.SpectralClustering(2.5).fit(PATH), InvalidParameterError,
     "n_clusters"),
    ("n_clusters a string", lambda tp: gc.RDPMeans(n_clusters="3").fit(X), InvalidParameterError, "n_clusters"),
    ("max_iter 0", lambda tp: gc.HMRF(gc.potentials.Centroids(2), max_iter=0).fit(X), InvalidParameterError,
     "max_iter"),
    ("random_state a string", lambda tp: gc.HMRF(gc.potentials.Centroids(2), random_state="x").fit(X),
     InvalidParameterError, "random_state"),
    ("unknown inference engine", lambda tp: gc.HMRF(gc.potentials.Centroids(2), inference="banana").fit(X),
     InvalidParameterError, "banana"),
    ("unknown parameter to set_params", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).set_params(banana=1),
     InvalidParameterError, "banana"),
    ("unknown nested parameter", lambda tp: gc.HMRF(gc.potentials.Centroids(2)).set_params(potentials__banana=1),
     InvalidParameterError, "banana"),
    ("negative lam", lambda tp: gc.DPMeans(lam=-1.0).fit(X), InvalidParameterError, "lam"),
    ("COSC mode unknown", lambda tp: gc.COSC(2, mode="medium").fit(PATH), InvalidParameterError, "mode"),
    ("gc.cluster unknown method", lambda tp: gc.cluster(X, S_OK, method="magic"), InvalidParameterError, "magic"),
    ("potentials not a provider", lambda tp: gc.HMRF(potentials=3).fit(X), InvalidParameterError, "potentials"),
    # ------------------------------------------------------------- energies and engines
    ("unary 1-D", lambda tp: _energy(unary=[0.0, 1.0]), InvalidParameterError, "unary must have shape"),
    ("unary with NaN", lambda tp: _energy(unary=[[0.0, np.nan]]), InvalidParameterError, r"unary\[0, 1\] is nan"),
    ("unary all +inf in a row", lambda tp: _energy(unary=[[np.inf, np.inf]]), GraphclustError,
     "node 0 has an infinite cost for every label"),
    ("edge to a missing node", lambda tp: _energy(edges=[(0, 5)], weights=[1.0]), InvalidParameterError, "5"),
    ("edge weight NaN", lambda tp: _energy(edges=[(0, 1)], weights=[np.nan]), InvalidParameterError,
     r"edge \(0, 1\) has weight nan"),
    ("solve unknown method", lambda tp: gc.solve(_energy(), "simplex"), InvalidParameterError,
     "unknown method 'simplex'"),
    ("solve unknown option", lambda tp: gc.solve(_energy(), "bp", banana=1), InvalidParameterError,
     "no option 'banana'"),
    ("solve on a non-energy", lambda tp: gc.solve(np.zeros((2, 2))), InvalidParameterError, "Energy"),
    ("mincut on three labels", lambda tp: gc.solve(_energy(unary=np.zeros((2, 3))), "mincut"),
     InvalidParameterError, "2 labels"),
    ("init of the wrong length", lambda tp: gc.solve(_energy(), "icm", init=[0, 1, 1]), InvalidParameterError,
     "init"),
    # ------------------------------------------------------------- files
    ("missing GraphML file", lambda tp: gc.read_graphml(tp / "nope.graphml"), GraphMLError,
     "nope.graphml does not exist"),
    ("missing side-information file", lambda tp: gc.read_graphml(_grml(tp, GRAPHML_HEAD + "<graph "
                                                                       'edgedefault="undirected"/></graphml>'),
                                                                 side=tp / "none.csv"), GraphMLError,
     "none.csv does not exist"),
    ("a folder as the GraphML file", lambda tp: gc.read_graphml(tp), GraphMLError, "cannot read"),
    ("not XML", lambda tp: gc.read_graphml(_grml(tp, "this is not xml")), GraphMLError, "g.graphml"),
    ("wrong root", lambda tp: gc.read_graphml(_grml(tp, "<html/>")), GraphMLError, "html|graphml"),
    ("DTD", lambda tp: gc.read_graphml(_grml(tp, '<!DOCTYPE g [<!ENTITY a "b">]>' + GRAPHML_HEAD + "</graphml>")),
     GraphMLError, "DTD|DOCTYPE|entit"),
    ("edge to an undeclared node is fine or named", lambda tp: gc.read_graphml(_grml(
        tp, GRAPHML_HEAD + '<graph edgedefault="undirected"><node id="a"/><edge source="a" target="b"/></graph>'
        "</graphml>")), GraphMLError, "'b'"),
    ("data with an undeclared key", lambda tp: gc.read_graphml(_grml(
        tp, GRAPHML_HEAD + '<graph edgedefault="undirected"><node id="a"><data key="zz">1</data></node></graph>'
        "</graphml>")), GraphMLError, "zz"),
    ("bad edge kind", lambda tp: gc.read_graphml(_grml(
        tp, GRAPHML_HEAD + '<key id="k" for="edge" attr.name="kind" attr.type="string"/>'
        '<graph edgedefault="undirected"><node id="a"/><node id="b"/><edge source="a" target="b">'
        '<data key="k">maybe</data></edge></graph></graphml>')), GraphMLError, "maybe"),
    ("a None node id under node_key_type='repr'", lambda tp: gc.read_graphml(_grml(
        tp, GRAPHML_HEAD + '<key id="t" for="graph" attr.name="node_key_type" attr.type="string"/>'
        '<graph edgedefault="undirected"><data key="t">repr</data><node id="None"/><node id="1"/>'
        '<edge source="None" target="1"/></graph></graphml>')), GraphMLError, "node id 'None'"),
    ("side CSV without a header", lambda tp: gc.read_side_info(_csv(tp, "0,1\n")), GraphMLError, "header|u,v"),
    ("write to a missing folder", lambda tp: gc.write_graphml(tp / "no" / "g.graphml", PATH), OutputFileError,
     "no.g.graphml"),
    ("write a graph with an unwritable attribute", lambda tp: gc.write_graphml(tp / "g.graphml",
                                                                               _obj_attr()), GraphMLError, "obj"),
    ("write labels of the wrong length", lambda tp: gc.write_graphml(tp / "g.graphml", PATH, labels=[0, 1]),
     InvalidParameterError, "labels"),
    # ------------------------------------------------------------- segmentation
    ("scribbles of another shape", lambda tp: gc.segment(np.zeros((5, 5)), np.zeros((4, 5), int)),
     InvalidParameterError, "shape"),
    ("one scribbled label only (COSC)", lambda tp: gc.segment(np.zeros((5, 5)), np.pad([[1]], ((0, 4), (0, 4))),
                                                               method="cosc"), InvalidParameterError, "two"),
    ("image with NaN", lambda tp: gc.segment(np.full((5, 5), np.nan), _two_scribbles()), InvalidFeaturesError,
     "nan|NaN|finite"),
    ("unknown segment method", lambda tp: gc.segment(np.zeros((5, 5)), _two_scribbles(), method="magic"),
     InvalidParameterError, "magic"),
    # ------------------------------------------------------------- metrics
    ("nmi of different lengths", lambda tp: gc.nmi([0, 1], [0, 1, 1]), InvalidParameterError, "2.*3|length"),
    ("ari of an empty labelling", lambda tp: gc.ari([], []), GraphclustError, "empty|no"),
]


def _ragged():
    G = nx.Graph([(0, 1), (1, 2)])
    G.nodes[0]["features"] = [0.0, 1.0]
    G.nodes[1]["features"] = [0.0]
    G.nodes[2]["features"] = [1.0, 1.0]
    return G


def _bad_features():
    G = nx.Graph([(0, 1)])
    G.nodes[0]["features"] = ["a", "b"]
    G.nodes[1]["features"] = [0.0, 1.0]
    return G


def _neg_sparse():
    import scipy.sparse as sp

    return sp.csr_array(np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))


def _unsym_sparse():
    import scipy.sparse as sp

    return sp.csr_array(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))


def _csv(tmp_path, text):
    p = tmp_path / "s.csv"
    p.write_text(text)
    return p


def _obj_attr():
    G = nx.path_graph(2)
    G.nodes[0]["obj"] = object()
    return G


def _two_scribbles():
    s = np.zeros((5, 5), int)
    s[0, 0], s[4, 4] = 1, 2
    return s


@pytest.mark.parametrize("call, error, pattern", [pytest.param(c, e, p, id=name) for name, c, e, p in CASES])
def test_catalogue(call, error, pattern, tmp_path):
    if error is None:  # extreme but valid: it must work
        assert call(tmp_path) is not False
        return
    assert issubclass(error, GraphclustError) or error is AttributeError
    with pytest.raises(error, match=pattern) as info:
        call(tmp_path)
    assert ".tmp-" not in str(info.value)


CLI_CASES = [
    ("unknown method", ["cluster", "{demo}", "--method", "magic"], "unknown method 'magic'"),
    ("bad --param", ["cluster", "{demo}", "--method", "hmrf", "--param", "nonsense"], "expected key=value"),
    ("unknown --param", ["cluster", "{demo}", "--method", "hmrf", "--param", "banana=1"], "banana"),
    ("bad --param value", ["cluster", "{demo}", "--method", "hmrf", "--param", "max_iter=-5"], "max_iter"),
    ("missing file", ["cluster", "{tmp}/nope.graphml", "--method", "hmrf"], "nope.graphml"),
    ("missing output folder", ["cluster", "{demo}", "--method", "spectral", "--out", "{tmp}/no/x.graphml"],
     "no.x.graphml"),
    ("check a missing file", ["check", "{tmp}/nope.graphml"], "nope.graphml"),
    ("segment without the image", ["segment", "{tmp}/nope.png", "--scribbles", "{tmp}/s.png", "--out",
                                   "{tmp}/o.png"], "nope.png"),
]


@pytest.mark.parametrize("argv, pattern", [pytest.param(a, p, id=name) for name, a, p in CLI_CASES])
def test_cli_catalogue(argv, pattern, tmp_path, capsys):
    from graphclust.cli import main

    G, S = gc.datasets.load_demo()[:2]
    demo = tmp_path / "demo.graphml"
    gc.write_graphml(demo, G, S)
    code = main([a.format(demo=demo, tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("graphclust: error:"), err  # one line, no traceback
    assert __import__("re").search(pattern, err[0]), err[0]


def test_the_catalogue_is_large_enough():
    assert len(CASES) + len(CLI_CASES) >= 80
