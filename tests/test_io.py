"""Tests for graphclust.io: GraphML and CSV reading/writing, safety, round trips."""

import copy
import math
import os
import re
import threading
import tracemalloc

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphclust as gc
from graphclust.errors import (
    GraphclustError,
    GraphMLError,
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    UnknownNodeError,
)
from graphclust.io import graphml_write
from graphclust.io import parse_graphml, read_graphml, read_side_info, write_graphml, write_side_info_csv

HEAD = '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
KEYS = (
    '<key id="w" for="edge" attr.name="weight" attr.type="double"/>\n'
    '<key id="k" for="edge" attr.name="kind" attr.type="string"/>\n'
    '<key id="f" for="node" attr.name="features" attr.type="string"/>\n'
    '<key id="l" for="node" attr.name="label" attr.type="long"/>\n'
)


def doc(body, keys=KEYS, graph='<graph edgedefault="undirected">'):
    """A GraphML document with the standard keys and ``body`` inside the graph."""
    return f"{HEAD}{keys}{graph}\n{body}\n</graph>\n</graphml>\n"


@pytest.fixture(params=["string", "file"])
def parse(request, tmp_path):
    """Each reader test runs through parse_graphml (string) and read_graphml (file)."""
    if request.param == "string":
        return parse_graphml

    def from_file(text):
        path = tmp_path / "in.graphml"
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        return read_graphml(path)

    from_file.path = str(tmp_path / "in.graphml")
    return from_file


def expect_error(parse, text, match, *, line=None, element=None):
    with pytest.raises(GraphMLError, match=match) as info:
        parse(text)
    err = info.value
    assert err.path == getattr(parse, "path", None)
    if err.path is not None:
        assert str(err).startswith(err.path)
    if line is not None:
        assert err.line == line
        assert f"line {line}:" in str(err)
    if element is not None:
        assert err.element == element
    assert err.line is not None and err.element
    return err


def edge_dict(G):
    return {frozenset((u, v)): d for u, v, d in G.edges(data=True)}


def typed(value):
    """A comparable value that also distinguishes bool/int/float/str."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return ("vec", tuple(float(x) for x in value))
    return (type(value).__name__, value)


def typed_attrs(d):
    return {k: typed(v) for k, v in d.items()}


def assert_same_graph(G, H, labels=None, label_name="cluster"):
    assert [typed(u) for u in G.nodes] == [typed(u) for u in H.nodes]
    for u in G.nodes:
        expected = typed_attrs(G.nodes[u])
        if labels is not None and u in labels:
            expected[label_name] = typed(labels[u])
        assert typed_attrs(H.nodes[u]) == expected, u
    assert {k: typed_attrs(d) for k, d in edge_dict(G).items()} == {
        k: typed_attrs(d) for k, d in edge_dict(H).items()
    }
    assert typed_attrs(G.graph) == typed_attrs(H.graph)


def round_trip(tmp_path, G, S=None, **kwargs):
    path = tmp_path / "rt.graphml"
    write_graphml(path, G, S, **kwargs)
    return read_graphml(path)


# ---------------------------------------------------------------------- round trips
class TestRoundTrip:
    def test_int_keys_weights_features_constraints_seeds(self, tmp_path):
        """Everything graphclust stores comes back identical, incl. +-inf constraints."""
        G = nx.Graph(name="demo", year=2024, scale=0.5, flag=True)
        for i in range(4):
            G.add_node(i, features=[i, 0.5 * i, -1e-300], truth=i % 2)
        G.add_edge(0, 1, weight=0.25)
        G.add_edge(1, 2, weight=3)  # int weight stays an int
        G.add_edge(2, 3)  # no weight stays without weight
        S = gc.SideInfo(
            [(0, 1, np.inf), (0, 3, -np.inf), (1, 3, 2.5), (2, 0, -0.125)], seeds={0: 1, 3: 2}
        )
        H, S2 = round_trip(tmp_path, G, S)
        assert_same_graph(G, H)
        assert S2 == S
        assert sorted(S2.edges(), key=repr) == sorted(S.edges(), key=repr)
        assert S2.seeds == {0: 1, 3: 2}
        assert all(type(u) is int for u in H.nodes)

    def test_parallel_data_and_constraint_edge_on_same_pair(self, tmp_path):
        G = nx.Graph([(0, 1, {"weight": 2.0}), (1, 2, {"weight": 1.0})])
        S = gc.SideInfo.from_pairs(cannot=[(0, 1)])
        H, S2 = round_trip(tmp_path, G, S)
        assert H[0][1] == {"weight": 2.0}
        assert S2.edges() == [(0, 1, -1.0)]

    def test_string_keys_that_look_like_ints_stay_strings(self, tmp_path):
        G = nx.Graph([("1", "2"), ("2", "10")])
        H, _ = round_trip(tmp_path, G)
        assert list(H.nodes) == ["1", "2", "10"]
        text = (tmp_path / "rt.graphml").read_text()
        assert 'attr.name="node_key_type"' in text and ">str</data>" in text

    def test_plain_string_keys_need_no_key_type(self, tmp_path):
        G = nx.Graph([("a", "b"), ("b", "7")])
        H, _ = round_trip(tmp_path, G)
        assert list(H.nodes) == ["a", "b", "7"]
        assert "node_key_type" not in (tmp_path / "rt.graphml").read_text()

    def test_tuple_keys_of_a_grid(self, tmp_path):
        G = nx.grid_2d_graph(2, 3)
        nx.set_edge_attributes(G, 0.5, "weight")
        labels = {u: u[1] % 2 for u in G}
        H, S = round_trip(tmp_path, G, gc.SideInfo.from_labels({(0, 0): "fg", (1, 2): "bg"}), labels=labels)
        assert_same_graph(G, H, labels)
        assert S.seeds == {(0, 0): "fg", (1, 2): "bg"}
        assert S.cannot_links() == [((0, 0), (1, 2), math.inf)]

    def test_numpy_tuple_keys_and_mixed_keys(self, tmp_path):
        G = nx.Graph([((np.int64(0), np.int64(1)), "a"), ("a", 3), (3, (2.5, None, "x", (1,)))])
        H, _ = round_trip(tmp_path, G)
        assert list(H.nodes) == [(0, 1), "a", 3, (2.5, None, "x", (1,))]
        assert [type(u) for u in H.nodes] == [tuple, str, int, tuple]

    def test_bool_keys_are_not_confused_with_ints(self, tmp_path):
        G = nx.Graph([(True, "x")])
        H, _ = round_trip(tmp_path, G)
        assert [type(u) for u in H.nodes] == [bool, str]

    def test_awkward_strings_round_trip(self, tmp_path):
        s = 'a & b < c > d "q" \'s\'\n\r\ttab  é ∑ 🙂 ]]>'
        G = nx.Graph()
        G.add_node(s, note=s, empty="")
        G.add_node(" padded ")
        G.add_edge(s, " padded ", comment=s)
        G.graph["title"] = s
        H, _ = round_trip(tmp_path, G)
        assert_same_graph(G, H)

    def test_attribute_types_round_trip(self, tmp_path):
        G = nx.Graph()
        G.add_node(0, b=True, i=-(2**70), f=float("inf"), nf=float("-inf"), s="1", z=0.1)
        G.add_node(1, b=np.bool_(False), i=np.int32(7), f=np.float32(0.5), s="x", z=1)
        G.add_edge(0, 1, weight=np.float64(0.75), n=np.int64(3))
        H, _ = round_trip(tmp_path, G)
        assert H.nodes[0] == G.nodes[0]
        assert typed_attrs(H.nodes[1]) == {"b": ("bool", False), "i": ("int", 7), "f": ("float", 0.5),
                                          "s": ("str", "x"), "z": ("int", 1)}
        assert H[0][1] == {"weight": 0.75, "n": 3} and type(H[0][1]["n"]) is int

    def test_scalar_features_come_back_as_one_element_lists(self, tmp_path):
        G = nx.path_graph(2)
        nx.set_node_attributes(G, {0: 1.5, 1: np.float32(-2)}, "features")
        H, _ = round_trip(tmp_path, G)
        assert {u: f.tolist() for u, f in H.nodes(data="features")} == {0: [1.5], 1: [-2.0]}
        np.testing.assert_array_equal(gc.Problem.from_graph(H).X, [[1.5], [-2.0]])

    def test_nan_attribute_round_trips(self, tmp_path):
        G = nx.Graph()
        G.add_node(0, x=float("nan"))
        H, _ = round_trip(tmp_path, G)
        assert math.isnan(H.nodes[0]["x"])

    def test_labels_as_array_and_custom_name_override_old_attribute(self, tmp_path):
        G = nx.path_graph(3)
        G.nodes[0]["part"] = "old"
        H, _ = round_trip(tmp_path, G, labels=np.array([2, 0, 2]), label_name="part")
        assert [H.nodes[u]["part"] for u in H] == [2, 0, 2]
        assert G.nodes[0]["part"] == "old"

    def test_labels_dict_for_some_nodes(self, tmp_path):
        G = nx.path_graph(3)
        H, _ = round_trip(tmp_path, G, labels={1: "x"})
        assert dict(H.nodes(data="cluster")) == {0: None, 1: "x", 2: None}

    def test_side_info_only_file_and_side_graph_argument(self, tmp_path):
        S = gc.SideInfo([("a", "b", 1.0), ("b", "c", -np.inf)], seeds={"d": 0})
        path = tmp_path / "side.graphml"
        write_graphml(path, None, S.to_networkx())
        assert read_side_info(path) == S
        G, S2 = read_graphml(path)
        assert G.number_of_edges() == 0 and S2 == S

    def test_empty_graph(self, tmp_path):
        H, S = round_trip(tmp_path, nx.Graph())
        assert H.number_of_nodes() == 0 and len(S) == 0 and S.seeds is None

    def test_read_graph_feeds_problem(self, tmp_path):
        G = nx.Graph([(0, 1, {"weight": 2.0}), (1, 2, {"weight": 0.5})])
        for i in G:
            G.nodes[i]["features"] = np.array([i, i * i], dtype=float)
        S = gc.SideInfo.from_pairs(must=[(0, 2)], cannot=[(1, 2)], weight=np.inf)
        P = gc.Problem.from_graph(*round_trip(tmp_path, G, S))
        np.testing.assert_array_equal(P.X, [[0, 0], [1, 1], [2, 4]])
        assert P.W[0, 1] == 2.0 and P.W[2, 1] == 0.5
        assert P.constraints.tolist() == [[0, 2], [1, 2]]
        assert P.constraint_weights.tolist() == [np.inf, -np.inf]

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(data=st.data())
    def test_hypothesis_round_trip(self, tmp_path, data):
        """write then read is the identity on nodes, edges, attributes, constraints, seeds."""
        key_kind = data.draw(st.sampled_from(["int", "str", "tuple", "mixed"]))
        text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), min_codepoint=32), max_size=6)
        key_st = {
            "int": st.integers(-50, 50),
            "str": st.one_of(text, st.integers(0, 99).map(str)),
            "tuple": st.tuples(st.integers(0, 3), st.integers(0, 3)),
            "mixed": st.one_of(st.integers(0, 5), text, st.tuples(st.integers(0, 2))),
        }[key_kind]
        nodes = data.draw(st.lists(key_st, min_size=1, max_size=7, unique=True))
        value = st.one_of(
            st.booleans(), st.integers(-(2**64), 2**64), st.floats(allow_nan=False), text
        )
        dim = data.draw(st.integers(0, 3))
        with_features = data.draw(st.booleans())
        G = nx.Graph(**data.draw(st.dictionaries(st.sampled_from(["a", "b"]), value, max_size=2)))
        for u in nodes:
            attrs = data.draw(st.dictionaries(st.sampled_from(["x", "y", "truth"]), value, max_size=2))
            if with_features:
                attrs["features"] = data.draw(st.lists(st.floats(allow_nan=False), min_size=dim, max_size=dim))
            G.add_node(u, **attrs)
        n = len(nodes)
        pairs = [(i, j) for i in range(n) for j in range(i, n)]
        for i, j in data.draw(st.lists(st.sampled_from(pairs), max_size=8, unique=True)) if pairs else []:
            attrs = data.draw(st.dictionaries(st.just("c"), value, max_size=1))
            if data.draw(st.booleans()):
                attrs["weight"] = data.draw(st.one_of(st.floats(0, 1e300), st.integers(0, 10)))
            G.add_edge(nodes[i], nodes[j], **attrs)
        strict = [(i, j) for i, j in pairs if i != j]
        cons = data.draw(st.lists(st.sampled_from(strict), max_size=6, unique=True)) if strict else []
        strengths = st.one_of(st.floats(1e-300, 1e300), st.just(math.inf))
        S = gc.SideInfo(
            [(nodes[i], nodes[j], data.draw(strengths) * data.draw(st.sampled_from([1, -1]))) for i, j in cons],
            seeds=data.draw(st.dictionaries(st.sampled_from(nodes), st.one_of(st.integers(0, 3), text),
                                            max_size=3)) or None,
        )
        labels = data.draw(st.one_of(st.none(), st.lists(st.integers(0, 4), min_size=n, max_size=n)))
        H, S2 = round_trip(tmp_path, G, S, labels=labels)
        assert_same_graph(G, H, None if labels is None else dict(zip(nodes, labels)))
        assert S2 == S and S2.seeds == S.seeds


# ---------------------------------------------------------------------- interop with networkx
class TestNetworkxInterop:
    def test_networkx_written_weighted_graph_reads_fine(self, tmp_path):
        G = nx.karate_club_graph()
        path = tmp_path / "karate.graphml"
        nx.write_graphml(G, path)
        H, S = read_graphml(path)
        assert list(H.nodes) == list(G.nodes) and all(type(u) is int for u in H)
        assert edge_dict(H) == edge_dict(G)
        assert H.nodes[0]["club"] == "Mr. Hi" and H.graph["name"] == G.graph["name"]
        assert len(S) == 0
        P = gc.Problem.from_graph(H)
        assert P.W[0, 1] == G[0][1]["weight"]

    def test_networkx_string_nodes_and_bool_attributes(self, tmp_path):
        G = nx.Graph([("a", "b", {"weight": 1.5, "ok": True})])
        G.nodes["a"]["flag"] = False
        path = tmp_path / "g.graphml"
        nx.write_graphml(G, path)
        H, _ = read_graphml(path)
        assert_same_graph(G, H)

    def test_graph_read_by_networkx_is_written_back_unchanged(self, tmp_path):
        """networkx leaves node_default/edge_default dicts in G.graph; we skip them."""
        G = nx.les_miserables_graph()
        path = tmp_path / "a.graphml"
        nx.write_graphml(G, path)
        N = nx.read_graphml(path)
        H, _ = round_trip(tmp_path, N)
        assert edge_dict(H) == edge_dict(G)
        assert "node_default" not in H.graph

    def test_our_file_loads_in_networkx(self, tmp_path):
        G = nx.Graph([(0, 1, {"weight": 0.5}), (1, 2, {"weight": 2.0})])
        G.nodes[0]["truth"] = "x"
        path = tmp_path / "ours.graphml"
        write_graphml(path, G, gc.SideInfo.from_pairs(cannot=[(0, 2)], weight=np.inf), labels=[0, 0, 1])
        N = nx.read_graphml(path, node_type=int)
        assert N[0][1]["weight"] == 0.5 and N[0][1]["kind"] == "data"
        assert N[0][2]["kind"] == "cannot" and N[0][2]["weight"] == math.inf
        assert N.nodes[0] == {"truth": "x", "cluster": 0}

    def test_tuple_keys_load_in_networkx_as_reprs(self, tmp_path):
        path = tmp_path / "grid.graphml"
        write_graphml(path, nx.grid_2d_graph(1, 2))
        N = nx.read_graphml(path)
        assert set(N.nodes) == {"(0, 0)", "(0, 1)"} and N.graph["node_key_type"] == "repr"


# ---------------------------------------------------------------------- reading conventions
class TestConventions:
    @pytest.mark.parametrize(
        "ids, expected",
        [
            (["0", "17", "-3"], [0, 17, -3]),
            (["0", "007"], ["0", "007"]),
            (["1", "+2"], ["1", "+2"]),
            (["1", "1.0"], ["1", "1.0"]),
            (["-0", "1"], ["-0", "1"]),
            (["a", "1"], ["a", "1"]),
            (["١"], ["١"]),  # Arabic-Indic digit: not a canonical decimal integer
        ],
    )
    def test_int_rule(self, parse, ids, expected):
        G, _ = parse(doc("".join(f'<node id="{i}"/>' for i in ids)))
        assert list(G.nodes) == expected
        assert [type(u) for u in G] == [type(u) for u in expected]

    def test_node_key_type_overrides(self, parse):
        keys = KEYS + '<key id="t" for="graph" attr.name="node_key_type" attr.type="string"/>'
        G, _ = parse(doc('<data key="t">str</data><node id="1"/><node id="2"/>', keys))
        assert list(G.nodes) == ["1", "2"] and "node_key_type" not in G.graph
        G, _ = parse(doc('<node id="(1, &apos;a&apos;)"/><node id="7"/><data key="t">repr</data>', keys))
        assert list(G.nodes) == [(1, "a"), 7]
        G, _ = parse(doc('<data key="t">int</data><node id="007"/>', keys))
        assert list(G.nodes) == [7]

    @pytest.mark.parametrize("text", ["1 2.5 -3", "1,2.5,-3", "[1, 2.5, -3]", " 1 ,\n 2.5\t-3 ", "[1 2.5 -3e0]"])
    def test_feature_formats(self, parse, text):
        G, _ = parse(doc(f'<node id="a"><data key="f">{text}</data></node>'))
        feats = G.nodes["a"]["features"]
        assert type(feats) is np.ndarray and feats.dtype == np.float64 and feats.tolist() == [1.0, 2.5, -3.0]

    def test_labels_become_seeds_and_kind_defaults_to_data(self, parse):
        G, S = parse(doc(
            '<node id="a"><data key="l">1</data></node><node id="b"/><node id="c"><data key="l">2</data></node>'
            '<edge source="a" target="b"/>'
            '<edge source="b" target="c"><data key="k">must</data><data key="w">-3</data></edge>'
        ))
        assert S.seeds == {"a": 1, "c": 2} and "label" not in G.nodes["a"]
        assert list(G.edges(data=True)) == [("a", "b", {})]
        assert S.edges() == [("b", "c", 3.0)]  # strength is |weight|, kind gives the sign

    def test_key_defaults_apply(self, parse):
        keys = (
            '<key id="c" for="node" attr.name="color" attr.type="string"><default>red</default></key>'
            '<key id="w" for="edge" attr.name="weight" attr.type="double"><default>2.5</default></key>'
            '<key id="n" for="all" attr.name="note" attr.type="int"><default>4</default></key>'
        )
        G, _ = parse(doc('<node id="a"><data key="c">blue</data></node><node id="b"/>'
                         '<edge source="a" target="b"/>', keys))
        assert G.nodes["a"] == {"color": "blue", "note": 4} and G.nodes["b"] == {"color": "red", "note": 4}
        assert G["a"]["b"] == {"weight": 2.5, "note": 4} and G.graph == {"note": 4}

    def test_booleans_and_special_doubles(self, parse):
        keys = ('<key id="b" for="node" attr.name="b" attr.type="boolean"/>'
                '<key id="d" for="node" attr.name="d" attr.type="double"/>')
        body = "".join(f'<node id="{i}"><data key="b">{b}</data><data key="d">{d}</data></node>'
                       for i, (b, d) in enumerate([("True", "INF"), ("false", "-INF"), ("1", "1e-3"),
                                                   (" 0 ", "-0.5")]))
        G, _ = parse(doc(body, keys))
        assert [G.nodes[i]["b"] for i in range(4)] == [True, False, True, False]
        assert [G.nodes[i]["d"] for i in range(4)] == [math.inf, -math.inf, 1e-3, -0.5]

    def test_nodes_may_come_after_edges_and_foreign_elements_are_skipped(self, parse):
        body = (
            '<desc>a <b>described</b> graph</desc>'
            '<edge source="a" target="b"><data key="w">1.5</data></edge>'
            '<node id="a" xmlns:y="http://www.yworks.com/xml/graphml">'
            '<data key="g"><y:ShapeNode><y:Fill color="#FF0000"/><node id="zz"/></y:ShapeNode></data></node>'
            '<node id="b"/>'
        )
        keys = KEYS + '<key id="g" for="node" yfiles.type="nodegraphics"/>'
        G, S = parse(doc(body, keys))
        assert list(G.nodes) == ["a", "b"] and G["a"]["b"] == {"weight": 1.5} and G.nodes["a"] == {}

    def test_no_namespace_and_side_mode_signed_edges(self, tmp_path):
        text = ('<graphml><key id="w" for="edge" attr.name="weight" attr.type="double"/><graph>'
                '<node id="1"/><node id="2"/><node id="3"/>'
                '<edge source="1" target="2"><data key="w">-2</data></edge>'
                '<edge source="2" target="3"/></graph></graphml>')
        with pytest.raises(GraphMLError, match="data edge 1-2 has weight -2.0"):
            parse_graphml(text)  # as a graph file, an edge without kind is a data edge
        path = tmp_path / "side.graphml"
        path.write_text(text)
        S = read_side_info(path)
        assert S.edges() == [(1, 2, -2.0), (2, 3, 1.0)]

    def test_str_input_ignores_declared_encoding_bytes_honour_it(self):
        text = ('<?xml version="1.0" encoding="ISO-8859-1"?>' + HEAD + KEYS
                + '<graph><node id="é"/></graph></graphml>')
        assert list(parse_graphml(text)[0].nodes) == ["é"]
        assert list(parse_graphml(text.encode("latin-1"))[0].nodes) == ["é"]
        assert list(parse_graphml(text.replace("ISO-8859-1", "UTF-16").encode("utf-16"))[0].nodes) == ["é"]

    def test_reading_does_not_modify_the_file(self, tmp_path):
        G = nx.path_graph(4)
        path = tmp_path / "g.graphml"
        write_graphml(path, G)
        before = path.read_bytes()
        read_graphml(path)
        with open(path, "rb") as handle:
            read_graphml(handle)
        assert path.read_bytes() == before


# ---------------------------------------------------------------------- errors and safety
BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + "".join(f' <!ENTITY lol{i} "' + (f"&lol{i - 1};" if i > 1 else "&lol;") * 10 + '">\n' for i in range(1, 10))
    + "]>\n<graphml><graph>&lol9;</graph></graphml>\n"
)


class TestSafety:
    def test_billion_laughs_is_refused_without_expanding(self, parse):
        tracemalloc.start()
        try:
            err = expect_error(parse, BILLION_LAUGHS, r"line 2: refusing a <!DOCTYPE>", line=2,
                               element="<!DOCTYPE lolz>")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 2_000_000  # 10**9 "lol"s would be gigabytes
        assert "lol" * 10 not in str(err)

    @pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO to observe file access")
    @pytest.mark.parametrize("template", [
        '<?xml version="1.0"?>\n<!DOCTYPE g [<!ENTITY x SYSTEM "file://{p}">]>\n<graphml>&x;</graphml>',
        '<?xml version="1.0"?>\n<!DOCTYPE graphml SYSTEM "{p}">\n<graphml><graph/></graphml>',
        '<?xml version="1.0"?>\n<!DOCTYPE g [<!ENTITY % x SYSTEM "{p}"> %x;]>\n<graphml/>',
    ])
    def test_external_entity_is_refused_and_never_opened(self, parse, tmp_path, template):
        """The entity points at a FIFO: anyone opening it would release the writer thread."""
        fifo = tmp_path / "secret"
        os.mkfifo(fifo)
        opened = threading.Event()

        def writer():
            fd = os.open(fifo, os.O_WRONLY)  # blocks until somebody opens the FIFO for reading
            opened.set()
            os.write(fd, b"TOP-SECRET")
            os.close(fd)

        thread = threading.Thread(target=writer, daemon=True)
        thread.start()
        try:
            err = expect_error(parse, template.format(p=fifo), "refusing a <!DOCTYPE>", line=2)
            assert "TOP-SECRET" not in str(err)
            assert not opened.is_set()
        finally:
            fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # release the writer
            thread.join(5)
            os.close(fd)
        assert opened.is_set()  # sanity: the FIFO does detect an open

    def test_doctype_without_entities_is_refused_too(self, parse):
        expect_error(parse, '<!DOCTYPE graphml>\n<graphml><graph/></graphml>', "DOCTYPE", line=1)


class TestErrors:
    @pytest.mark.parametrize(
        "text, match, line, element",
        [
            (HEAD + KEYS + "<graph>\n<node id='a'></edge></graph></graphml>", r"malformed XML \(mismatched tag",
             7, "<node>"),
            (HEAD + KEYS + "<graph>\n<node id='a'/>\n<edge source='a'", "truncated", 8, "<graph>"),
            ("", "empty or truncated", 1, "XML document"),
            (HEAD + KEYS + "</graphml>", r"no <graph> element", 6, "<graphml>"),
            (doc("", graph='<graph edgedefault="directed">'), "graphclust wants an undirected graph", 6,
             "<graph>"),
            (doc('<node id="a"/><node id="b"/><edge source="a" target="b" directed="true"/>'),
             "edge a-b is directed", 7, "<edge source='a' target='b'>"),
            (doc('<node id="a"/>\n<edge source="a" target="ghost"/>'),
             "edge a-ghost refers to node 'ghost', which no <node> declares", 8,
             "<edge source='a' target='ghost'>"),
            (doc('<node id="a"/>\n<node id="a"/>'), r"duplicate node id 'a' \(first declared at line 7\)", 8,
             "<node id='a'>"),
            (doc('<node id="a"><data key="nope">1</data></node>'), r"unknown <data key='nope'> on node 'a'", 7,
             "<data key='nope'>"),
            (doc('<node id="a"><data>1</data></node>'), r"<data> without a 'key' attribute on node 'a'", 7,
             "<data key=None>"),
            (doc('<node id="a"><data key="w">1</data></node>'),
             r"<data key='w'> on node 'a' uses a key declared for edge", 7, "<data key='w'>"),
            (doc('<node id="a"/><node id="b"/>\n<edge source="a" target="b"><data key="w">abc</data></edge>'),
             r"line 8: <data key='w'> on edge a-b is 'abc', expected a double", 8, "<data key='w'>"),
            (doc('<node id="a"><data key="i">1.5</data></node>',
                 KEYS + '<key id="i" for="node" attr.name="i" attr.type="int"/>'),
             r"<data key='i'> on node 'a' is '1.5', expected an int", 7, "<data key='i'>"),
            (doc('<node id="a"><data key="b">yes</data></node>',
                 KEYS + '<key id="b" for="node" attr.name="b" attr.type="boolean"/>'),
             r"on node 'a' is 'yes', expected a boolean", 7, "<data key='b'>"),
            (doc('<data key="g">x</data>', KEYS + '<key id="g" for="graph" attr.name="g" attr.type="long"/>'),
             r"<data key='g'> on the graph is 'x', expected a long", 7, "<data key='g'>"),
            (doc('<node id="a"><data key="f">1</data><data key="f">2</data></node>'),
             r"attribute 'features' is given twice", 7, "<data key='f'>"),
            (doc('<node id="a"/><node id="b"/><edge source="a" target="b"><data key="w">NaN</data></edge>'),
             r"data edge a-b has weight nan; similarities must be finite and >= 0", 7,
             "<edge source='a' target='b'>"),
            (doc('<node id="a"/><node id="b"/><edge source="a" target="b"><data key="w">INF</data></edge>'),
             r"data edge a-b has weight inf", 7, "<edge source='a' target='b'>"),
            (doc('<node id="a"/><node id="b"/><edge source="b" target="a"><data key="w">-1</data></edge>'),
             r"data edge b-a has weight -1.0", 7, "<edge source='b' target='a'>"),
            (doc('<node id="a"/><node id="b"/>\n<edge source="a" target="b"/>\n<edge source="b" target="a"/>'),
             r"data edge b-a is given twice \(first at line 8\)", 9, "<edge source='b' target='a'>"),
            (doc('<node id="a"/><node id="b"/>'
                 '<edge source="a" target="b"><data key="k">must</data><data key="w">0</data></edge>'),
             r"must-link a-b has weight 0.0; a constraint needs a non-zero strength", 7,
             "<edge source='a' target='b'>"),
            (doc('<node id="a"/><node id="b"/>'
                 '<edge source="a" target="b"><data key="k">cannot</data><data key="w">nan</data></edge>'),
             r"cannot-link a-b has weight nan", 7, "<edge source='a' target='b'>"),
            (doc('<node id="a"/><edge source="a" target="a"><data key="k">cannot</data></edge>'),
             r"cannot-link a-a joins node 'a' to itself", 7, "<edge source='a' target='a'>"),
            (doc('<node id="a"/><node id="b"/>\n<edge source="a" target="b"><data key="k">must</data></edge>\n'
                 '<edge source="b" target="a"><data key="k">cannot</data></edge>'),
             r"pair b-a is both a must-link and a cannot-link \(the other one at line 8\)", 9,
             "<edge source='b' target='a'>"),
            (doc('<node id="a"/><node id="b"/><edge source="a" target="b"><data key="k">maybe</data></edge>'),
             r"edge a-b has kind='maybe'; expected 'data', 'must' or 'cannot'", 7,
             "<edge source='a' target='b'>"),
            (doc('<node id="a"/><node id="b"/><edge source="a" target="b"><data key="k">must</data>'
                 '<data key="ws">strong</data></edge>',
                 KEYS.replace('id="w" for="edge" attr.name="weight" attr.type="double"',
                              'id="ws" for="edge" attr.name="weight" attr.type="string"')),
             r"edge a-b has weight 'strong'; expected a number", 7, "<edge source='a' target='b'>"),
            (doc('<node id="a"><data key="f">1 two 3</data></node>'),
             r"node 'a' has a non-numeric feature 'two'", 7, "<data key='f'>"),
            (doc('<node id="a"><data key="f">1 2</data></node>\n<node id="b"><data key="f">1 2 3</data></node>'),
             r"node 'b' has 3 features but node 'a' has 2 \(ragged features\)", 8, "<node id='b'>"),
            (doc('<node id="a"><data key="f">[1, 2</data></node>'), r"non-numeric feature '\[1'", 7,
             "<data key='f'>"),
            (doc("") .replace("</graphml>", "<graph/></graphml>"), r"a second <graph>", 9, "<graph>"),
            (doc('<node id="a"><graph/></node>'), "nested graphs are not supported", 7, "<graph>"),
            (doc('<hyperedge/>'), r"<hyperedge> is not supported", 7, "<hyperedge>"),
            (doc('<node id="a"><port name="p"/></node>'), r"<port> is not supported", 7, "<port>"),
            (doc('<nodes/>'), r"unknown element <nodes>", 7, "<nodes>"),
            (doc('<node/>'), r"<node> has no 'id' attribute", 7, "<node>"),
            (doc('<edge source="a"/>'), r"<edge> needs both 'source' and 'target'", 7, "<edge>"),
            (doc("", KEYS + '<key id="w" for="node" attr.name="x"/>'),
             r"key 'w' is declared twice \(first at line 2\)", 6, "<key id='w'>"),
            (doc("", '<key id="v" for="node" attr.name="v" attr.type="vector"/>'),
             r"key 'v' \('v'\) has attr.type='vector'", 2, "<key id='v'>"),
            (doc("", '<key id="v" for="nodes" attr.name="v"/>'), r"key 'v' has for='nodes'", 2, "<key id='v'>"),
            (doc("", '<key for="node" attr.name="v"/>'), r"<key> has no 'id' attribute", 2, "<key>"),
            (doc("", '<key id="v" for="node" attr.name="v" attr.type="int"><default>x</default></key>'),
             r"<default> of key 'v' is 'x', expected an int", 2, "<key id='v'>"),
            (doc("<default/>"), r"<default> is not allowed inside <graph>", 7, "<default>"),
            ('<graph/>', r"<graph> is not allowed as the root element", 1, "<graph>"),
            ('<graphml><graphml/></graphml>', r"<graphml> is not allowed inside <graphml>", 1, "<graphml>"),
            ("<graphml>\n<key id='a' for='node' attr.name='x'><data key='a'/></key></graphml>",
             r"<data> is not allowed inside <key>", 2, "<data>"),
            ('<graphml><graph><node id="a"/>&bogus;</graph></graphml>', r"malformed XML \(undefined entity",
             1, "<graph>"),
            (b'<?xml version="1.0" encoding="klingon"?><graphml/>', r"cannot decode the document", 1,
             "XML declaration"),
            (b'<graphml><graph><node id="\xff"/></graph></graphml>', r"malformed XML \(not well-formed", 1,
             "<graph>"),
            (doc('<node id="a"/>', KEYS + '<key id="t" for="graph" attr.name="node_key_type"/>')
             .replace('<node id="a"/>', '<node id="a"/><data key="t">json</data>'),
             r"node_key_type='json'; expected 'int', 'str' or 'repr'", 10, "<graph>"),
            (doc('<node id="(1,"/><data key="t">repr</data>',
                 KEYS + '<key id="t" for="graph" attr.name="node_key_type"/>'),
             r"node id '\(1,' is not a Python literal", 7, "<node id='(1,'>"),
            (doc('<node id="[1]"/><data key="t">repr</data>',
                 KEYS + '<key id="t" for="graph" attr.name="node_key_type"/>'),
             r"node id '\[1\]' is not a Python literal", 7, "<node id='[1]'>"),
            (doc('<node id="1"/>\n<node id="1.0"/><data key="t">repr</data>',
                 KEYS + '<key id="t" for="graph" attr.name="node_key_type"/>'),
             r"node ids '1' and '1.0' both denote the key 1", 8, "<node id='1.0'>"),
            (doc('<node id="x"/><data key="t">int</data>',
                 KEYS + '<key id="t" for="graph" attr.name="node_key_type"/>'),
             r"node id 'x' is not an int", 7, "<node id='x'>"),
        ],
    )
    def test_malformed(self, parse, text, match, line, element):
        expect_error(parse, text, match, line=line, element=element)

    def test_error_is_a_value_error_with_file_path(self, tmp_path):
        path = tmp_path / "bad.graphml"
        path.write_text(doc('<node id="a"/>\n<edge source="a" target="b"/>'))
        with pytest.raises(ValueError, match=r"bad\.graphml: line 8: edge a-b refers to node 'b'"):
            read_graphml(path)

    def test_parse_rejects_other_types(self):
        with pytest.raises(InvalidParameterError, match="parse_graphml takes str or bytes, got int"):
            parse_graphml(3)

    def test_unencodable_text(self):
        with pytest.raises(GraphMLError, match="not valid text"):
            parse_graphml("<graphml>\ud800</graphml>")


# ---------------------------------------------------------------------- fuzzing
def _fuzz_seed():
    G = nx.Graph([(0, 1, {"weight": 0.5}), (1, 2, {"weight": 2.0, "tag": "x"})])
    for i in G:
        G.nodes[i]["features"] = [i, 1.5]
        G.nodes[i]["truth"] = i % 2
    G.graph["title"] = "t"
    return G, gc.SideInfo([(0, 2, -math.inf), (0, 1, 1.0)], seeds={0: 1})


_FUZZ_G, _FUZZ_S = _fuzz_seed()


@pytest.fixture(scope="module")
def fuzz_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "seed.graphml"
    write_graphml(path, _FUZZ_G, _FUZZ_S, labels=[0, 1, 1])
    data = path.read_bytes()
    assert len(data) < 2000
    return data


TAGS = [b"<node id='9'/>", b"<edge source='0' target='9'/>", b"<data key='d0'>", b"</data>", b"<graph>",
        b"</node>", b"<!DOCTYPE x>", b"&amp;", b"&lol;", b"]]>", b"\xff\xfe", b"<![CDATA[", b"<?pi x?>",
        b"<key id='d0' for='node'/>", b"<desc>", b"<y:x xmlns:y='u'>", b"<hyperedge/>", b"<default>",
        b" edgedefault='directed'", b" directed='true'", b"<edge source='1' target='1'>"]
VALUES = [b"", b"0", b"-1", b"1.5", b"nan", b"INF", b"-INF", b"abc", b"true", b"(1,", b"(0, 1)", b"repr", b"int",
          b"str", b"must", b"cannot", b"data", b"1 2 x", b"[1, 2]", b"0", b"1", b"2", b"d0", b"d3", b"graph",
          b"node", b"edge", b"directed", b"long", b"boolean", b"vector", b"9" * 5000, b"\xc3\xa9", b"&#0;"]
VALUE_SPANS = re.compile(rb'>([^<]*)<|"([^"]*)"')
BYTES = b'<>/"=&;# 0123456789abcdefINFnan-.,[]() \n\x00\xff'


# 200 examples in make test; a release check runs many more (docs/reliability.md):
#   GRAPHCLUST_FUZZ_EXAMPLES=100000 python -m pytest tests/test_io.py -k fuzz
@settings(max_examples=int(os.environ.get("GRAPHCLUST_FUZZ_EXAMPLES", "200")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 5), st.integers(0, 255),
                              st.sampled_from(TAGS), st.sampled_from(VALUES)), min_size=1, max_size=4),
       cut=st.one_of(st.none(), st.none(), st.none(), st.integers(0, 10**6)))
def test_fuzz_parse_only_raises_graphclust_errors(fuzz_bytes, ops, cut):
    """Byte flips, deletions, inserted tags, swapped values, truncation: a result or a GraphclustError."""
    data = bytes(fuzz_bytes)
    for pos, op, byte, tag, value in ops:
        at = pos % (len(data) + 1)
        if op == 0 and at < len(data):
            data = data[:at] + BYTES[byte % len(BYTES): byte % len(BYTES) + 1] + data[at + 1:]
        elif op == 1:
            data = data[:at] + data[at + 1 + byte % 8:]
        elif op == 2:
            data = data[:at] + tag + data[at:]
        else:  # replace one text value or attribute value
            spans = list(VALUE_SPANS.finditer(data))
            if spans:
                m = spans[pos % len(spans)]
                g = 1 if m.group(1) is not None else 2
                data = data[:m.start(g)] + value + data[m.end(g):]
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    try:
        G, S = parse_graphml(data)
    except GraphclustError:
        return
    assert isinstance(G, nx.Graph) and isinstance(S, gc.SideInfo)


def test_fuzz_seed_itself_parses(fuzz_bytes):
    G, S = parse_graphml(fuzz_bytes)
    assert S == _FUZZ_S and G.nodes[1]["cluster"] == 1


# ---------------------------------------------------------------------- side-information files
class TestSideFiles:
    @pytest.mark.parametrize("text, expected", [
        ("u,v,weight\n0,1,2\n1,2,-inf\n", [(0, 1, 2.0), (1, 2, -math.inf)]),
        ("u,v,kind\n0,1,must\n1,2,CANNOT\n", [(0, 1, 1.0), (1, 2, -1.0)]),
        ("source,target,kind,weight\n0, 1 ,must,-2\n\n1,2,cannot,INF\n", [(0, 1, 2.0), (1, 2, -math.inf)]),
        ("# comment\nu,v,weight,kind\n# another\n0,1,0.5,cannot\n", [(0, 1, -0.5)]),
    ])
    def test_csv_formats(self, tmp_path, text, expected):
        path = tmp_path / "s.csv"
        path.write_text(text)
        assert read_side_info(path).edges() == expected
        assert read_side_info(path, nodes=[0, 1, 2]).edges() == expected

    def test_csv_string_tokens_and_rule_without_nodes(self, tmp_path):
        path = tmp_path / "s.csv"
        path.write_text('u,v,kind\na,"b,c",must\n')
        assert read_side_info(path).edges() == [("a", "b,c", 1.0)]

    def test_csv_tokens_matched_to_graph_keys(self, tmp_path):
        """The graph's key type decides: '1' means the int 1, or the string '1'."""
        path = tmp_path / "s.csv"
        path.write_text("u,v,kind\n1,2,must\n")
        assert read_side_info(path, nodes=["1", "2"]).edges() == [("1", "2", 1.0)]
        assert read_side_info(path, nodes=[1, 2]).edges() == [(1, 2, 1.0)]
        path.write_text('u,v,kind\n"(0, 1)","(1 ,1)",cannot\na,3,must\n')
        S = read_side_info(path, nodes=[(0, 1), (1, 1), "a", 3])
        assert S.edges() == [((0, 1), (1, 1), -1.0), ("a", 3, 1.0)]

    @pytest.mark.parametrize("S", [
        gc.SideInfo([((0, 0), (0, 1), 1.0), ((0, 1), (1, 1), -math.inf)]),
        gc.SideInfo([("1", "2", 2.0)]),
        gc.SideInfo([(1, "a", -0.5), ("a", "b,c\n", 1e-300)]),
        gc.SideInfo([(5, -3, math.inf)]),
        gc.SideInfo([(" a", "b ", 1.0)]),
        gc.SideInfo(),
    ])
    def test_csv_round_trip(self, tmp_path, S):
        path = tmp_path / "s.csv"
        write_side_info_csv(path, S)
        S2 = read_side_info(path)
        assert S2 == S
        assert [tuple(map(typed, e)) for e in S2.edges()] == [tuple(map(typed, e)) for e in S.edges()]

    def test_csv_writer_warns_that_seeds_are_dropped(self, tmp_path):
        with pytest.warns(UserWarning, match="seeds are not written"):
            write_side_info_csv(tmp_path / "s.csv", gc.SideInfo.from_labels({0: "a", 1: "b"}))

    def test_read_graphml_with_side_csv_and_side_graphml(self, tmp_path):
        G = nx.path_graph(4)
        main = tmp_path / "g.graphml"
        write_graphml(main, G, gc.SideInfo([(0, 1, 1.0)], seeds={0: "x"}))
        side = tmp_path / "s.csv"
        side.write_text("u,v,kind,weight\n0,1,must,5\n2,3,cannot,inf\n")
        H, S = read_graphml(main, side=side)
        assert sorted(S.edges()) == [(0, 1, 5.0), (2, 3, -math.inf)] and S.seeds == {0: "x"}
        side_g = tmp_path / "s.graphml"
        write_graphml(side_g, None, gc.SideInfo([(3, 1, -2.0)], seeds={2: "y"}))
        H, S = read_graphml(main, side=side_g)
        assert sorted(S.edges()) == [(0, 1, 1.0), (3, 1, -2.0)] and S.seeds == {0: "x", 2: "y"}

    def test_side_graphml_nodes_matched_to_string_graph(self, tmp_path):
        main = tmp_path / "g.graphml"
        write_graphml(main, nx.Graph([("1", "2"), ("2", "3")]))
        side = tmp_path / "s.graphml"
        write_graphml(side, None, gc.SideInfo([(1, 3, -1.0)]))  # written with int ids "1", "3"
        H, S = read_graphml(main, side=side)
        assert S.edges() == [("1", "3", -1.0)]

    def test_unknown_node_in_side_csv(self, tmp_path):
        main = tmp_path / "g.graphml"
        write_graphml(main, nx.path_graph(3))
        side = tmp_path / "s.csv"
        side.write_text("u,v,kind\n0,1,must\n1,7,cannot\n")
        with pytest.raises(UnknownNodeError, match=r"s\.csv: line 3: node '7' in cannot-link 1-7 is not in the "
                                                   r"data graph") as info:
            read_graphml(main, side=side)
        assert info.value.node == "7" and info.value.constraint == ("1", "7")

    def test_unknown_node_in_side_graphml(self, tmp_path):
        main = tmp_path / "g.graphml"
        write_graphml(main, nx.path_graph(3))
        side = tmp_path / "s.graphml"
        write_graphml(side, None, gc.SideInfo([(0, 9, 1.0)]))
        with pytest.raises(UnknownNodeError, match=r"s\.graphml: line \d+: node '9' of the side-information"):
            read_graphml(main, side=side)

    def test_side_contradicting_main_file(self, tmp_path):
        main = tmp_path / "g.graphml"
        write_graphml(main, nx.path_graph(3), gc.SideInfo([(0, 1, 1.0)], seeds={2: 0}))
        side = tmp_path / "s.csv"
        side.write_text("u,v,kind\n2,1,must\n1,0,cannot\n")
        with pytest.raises(GraphMLError, match=r"s\.csv: line 3: pair 1-0 is a cannot-link here but a must-link "
                                               r"in the graph file \(line \d+\)") as info:
            read_graphml(main, side=side)
        assert info.value.line == 3 and info.value.path == str(side)
        side_g = tmp_path / "s.graphml"
        write_graphml(side_g, None, gc.SideInfo(seeds={2: 1}))
        with pytest.raises(GraphMLError, match=r"node 2 has seed label 1 here but 0 in the graph file"):
            read_graphml(main, side=side_g)

    def test_side_graphml_refuses_data_edges(self, tmp_path):
        side = tmp_path / "s.graphml"
        write_graphml(side, nx.path_graph(2))
        with pytest.raises(GraphMLError, match=r"side-information file cannot hold data edges") as info:
            read_side_info(side)
        assert info.value.path == str(side) and info.value.element == "<edge source='0' target='1'>"

    @pytest.mark.parametrize("text, match, line", [
        ("u,v\n0,1\n", r"CSV header 'u,v': expected u,v,weight or u,v,kind\[,weight\]", 1),
        ("u,v,strength\n0,1,2\n", r"CSV header 'u,v,strength'", 1),
        ("u,v,kind,kind\n0,1,must,must\n", r"CSV header", 1),
        ("", r"no header line", 0),
        ("# only a comment\n", r"no header line", 1),
        ("u,v,weight\n0,1\n", r"row '0,1' has 2 fields; the header has 3", 2),
        ("u,v,weight\n0,1,2\n0,2,heavy\n", r"row '0,2,heavy': weight 'heavy' is not a number", 3),
        ("u,v,kind\n0,1,maybe\n", r"row '0,1,maybe': kind 'maybe'; expected 'must' or 'cannot'", 2),
        ("u,v,weight\n0,1,0\n", r"constraint 0-1 has weight 0.0; a constraint needs a non-zero strength", 2),
        ("u,v,weight\n0,1,nan\n", r"constraint 0-1 has weight nan", 2),
        ("u,v,kind\n3,3,must\n", r"constraint 3-3 joins node '3' to itself", 2),
        ("u,v,kind\n0,1,must\n1,0,cannot\n", r"pair 1-0 is both a must-link and a cannot-link \(the other one "
                                             r"at line 2\)", 3),
        ("# node_key_type=yaml\nu,v,kind\n", r"node_key_type='yaml'", 1),
        ("# node_key_type=repr\nu,v,kind\n\"(1,\",2,must\n", r"node id '\(1,' is not a Python literal", 3),
        ('u,v,kind\n"a\0,b,must\n', r"malformed CSV|fields", 2),
    ])
    def test_csv_errors(self, tmp_path, text, match, line):
        path = tmp_path / "bad.csv"
        path.write_text(text)
        with pytest.raises(GraphMLError, match=match) as info:
            read_side_info(path)
        assert info.value.line == line and info.value.path == str(path) and info.value.element
        assert f"bad.csv: line {line}:" in str(info.value)

    def test_csv_not_utf8(self, tmp_path):
        path = tmp_path / "bad.csv"
        path.write_bytes(b"u,v,kind\n0,1,must\n\xff,2,must\n")
        with pytest.raises(GraphMLError, match=r"line 3: the CSV file is not UTF-8"):
            read_side_info(path)


# ---------------------------------------------------------------------- writing: safety and errors
def _listing(directory):
    return sorted(os.listdir(directory))


class TestWriter:
    def test_interrupted_write_leaves_old_file_intact(self, tmp_path, monkeypatch):
        path = tmp_path / "g.graphml"
        write_graphml(path, nx.path_graph(3))
        old = path.read_bytes()
        big = nx.path_graph(10_000)
        written = []

        def fail_midway(handle, chunks):
            chunks = list(chunks)
            assert len(chunks) > 3  # the body really is written in several steps
            handle.write(chunks[0].encode())
            handle.write(chunks[1].encode())
            written.append(True)
            raise OSError("disk full")

        monkeypatch.setattr(graphml_write, "_write_chunks", fail_midway)
        with pytest.raises(OSError, match="disk full"):
            write_graphml(path, big)
        assert written and path.read_bytes() == old
        assert _listing(tmp_path) == ["g.graphml"]

    def test_unserialisable_value_leaves_old_file_intact(self, tmp_path):
        path = tmp_path / "g.graphml"
        write_graphml(path, nx.path_graph(3))
        old = path.read_bytes()
        G = nx.path_graph(50)
        G.nodes[40]["pos"] = (1.0, 2.0)
        with pytest.raises(GraphMLError, match=r"node 40 has pos=\(1.0, 2.0\) of type tuple, which GraphML "
                                               r"cannot store") as info:
            write_graphml(path, G)
        assert info.value.element == "<data key='pos'> on node 40" and info.value.path == str(path)
        assert path.read_bytes() == old and _listing(tmp_path) == ["g.graphml"]

    def test_inputs_are_not_modified(self, tmp_path):
        G = nx.grid_2d_graph(2, 2)
        for u in G:
            G.nodes[u]["features"] = np.array([u[0], u[1]], dtype=float)
            G.nodes[u]["cluster"] = "old"
        nx.set_edge_attributes(G, 0.5, "weight")
        G.edges[(0, 0), (0, 1)]["kind"] = "data"
        G.graph["node_default"] = {}
        S = gc.SideInfo.from_labels({(0, 0): 1, (1, 1): 2})
        labels = np.array([0, 1, 0, 1])
        G0, S0, L0 = copy.deepcopy(G), S.copy(), labels.copy()
        write_graphml(tmp_path / "g.graphml", G, S, labels=labels)
        assert list(G.nodes) == list(G0.nodes) and G.graph == G0.graph
        assert all(typed_attrs(G.nodes[u]) == typed_attrs(G0.nodes[u]) for u in G)
        assert edge_dict(G) == edge_dict(G0)
        assert all(np.array_equal(G.nodes[u]["features"], G0.nodes[u]["features"]) for u in G)
        assert S == S0 and S.seeds == S0.seeds and np.array_equal(labels, L0)

    @pytest.mark.parametrize("build, exc, match", [
        (lambda: (nx.DiGraph([(0, 1)]),), InvalidGraphError, "undirected simple graph; got a DiGraph"),
        (lambda: (nx.MultiGraph([(0, 1)]),), InvalidGraphError, "got a MultiGraph"),
        (lambda: ([(0, 1)],), InvalidGraphError, "G must be a networkx graph or None, got list"),
        (lambda: (nx.Graph([(0, 1, {"weight": -1.0})]),), InvalidGraphError,
         r"edge \(0, 1\) has weight -1.0; similarities must be finite numbers >= 0"),
        (lambda: (nx.Graph([(0, 1, {"weight": float("nan")})]),), InvalidGraphError, r"edge \(0, 1\) has weight nan"),
        (lambda: (nx.Graph([(0, 1, {"weight": "heavy"})]),), InvalidGraphError, r"weight 'heavy'"),
        (lambda: (nx.Graph([(0, 1, {"weight": True})]),), InvalidGraphError, r"weight True"),
        (lambda: (nx.Graph([(0, 1, {"kind": "must"})]),), InvalidGraphError,
         r"data edge \(0, 1\) has kind='must'; 'kind' is reserved"),
        (lambda: (nx.Graph([(0, 1)], node_key_type="x"),), InvalidGraphError, r"'node_key_type' is reserved"),
        (lambda: (_with(nx.path_graph(2), 1, label="a"),), InvalidGraphError, r"node 1 has a 'label' attribute"),
        (lambda: (_with(nx.path_graph(2), 1, features="1 2"),), InvalidFeaturesError,
         r"node 1 has features='1 2'; expected a flat numeric vector"),
        (lambda: (_with(nx.path_graph(2), 0, features=[[1, 2]]),), InvalidFeaturesError, r"node 0 has features"),
        (lambda: (_with(nx.path_graph(2), 0, features=["a"]),), InvalidFeaturesError, r"node 0 has features"),
        (lambda: (_with(nx.path_graph(2), 0, features=None),), InvalidFeaturesError, r"node 0 has features=None"),
        (lambda: (_with(nx.path_graph(2), 0, note="bell\x07"),), GraphMLError,
         r"node 0 has note='bell\\x07', which holds a character XML cannot store"),
        (lambda: (_with(nx.path_graph(2), 0, **{"a": None}),), GraphMLError, r"node 0 has a=None of type NoneType"),
        (lambda: (nx.Graph([("a\x01", "b")]),), GraphMLError, r"node 'a\\x01' has a character XML cannot store"),
        (lambda: (nx.Graph([(frozenset([1]), 2)]),), GraphMLError,
         r"node frozenset\(\{1\}\) cannot be written: node keys of type frozenset cannot be written"),
        (lambda: (nx.Graph([(float("nan"), 2)]),), GraphMLError, r"node nan cannot be written: the node key nan"),
        (lambda: (nx.path_graph(2), gc.SideInfo([(0, 5, 1.0)])), UnknownNodeError,
         r"must-link \(0, 5\) refers to node 5, which is not in G"),
        (lambda: (nx.path_graph(2), gc.SideInfo(seeds={7: 1})), UnknownNodeError, r"seed on node 7"),
        (lambda: (nx.path_graph(2), "S"), InvalidParameterError, r"S must be a SideInfo, a networkx graph or None"),
    ])
    def test_write_errors(self, tmp_path, build, exc, match):
        path = tmp_path / "g.graphml"
        with pytest.raises(exc, match=match):
            write_graphml(path, *build())
        assert _listing(tmp_path) == []

    def test_attribute_name_must_be_a_string(self, tmp_path):
        G = nx.path_graph(2)
        G.nodes[0][3] = "x"
        with pytest.raises(GraphMLError, match=r"node 0 has an attribute named 3"):
            write_graphml(tmp_path / "g.graphml", G)

    @pytest.mark.parametrize("labels, label_name, exc, match", [
        ([0, 1, 2], "cluster", InvalidParameterError, r"one entry per node of G \(2\), got shape \(3,\)"),
        ({0: 1, "z": 2}, "cluster", UnknownNodeError, r"labels has node 'z', which is not in G"),
        ([0, 1], "label", InvalidParameterError, r"label_name='label' is not allowed"),
        ([0, 1], "features", InvalidParameterError, r"label_name='features' is not allowed"),
        ([[0, 1]], "cluster", InvalidParameterError, r"got shape \(1, 2\)"),
        ([object(), 1], "cluster", GraphMLError, r"label of node 0 has cluster=<object"),
    ])
    def test_bad_labels(self, tmp_path, labels, label_name, exc, match):
        with pytest.raises(exc, match=match):
            write_graphml(tmp_path / "g.graphml", nx.path_graph(2), labels=labels, label_name=label_name)

    def test_write_is_a_valid_graphml_document(self, tmp_path):
        """The file parses as plain XML with the GraphML namespace and declares keys before the graph."""
        import xml.etree.ElementTree as ET

        path = tmp_path / "g.graphml"
        write_graphml(path, nx.path_graph(3), gc.SideInfo.from_pairs(cannot=[(0, 2)]))
        root = ET.parse(path).getroot()
        ns = "{http://graphml.graphdrawing.org/xmlns}"
        assert root.tag == ns + "graphml"
        tags = [child.tag for child in root]
        assert tags[-1] == ns + "graph" and set(tags[:-1]) == {ns + "key"}
        kinds = [d.text for e in root.iter(ns + "edge") for d in e if d.text in ("data", "must", "cannot")]
        assert kinds == ["data", "data", "cannot"]


def _with(G, node, **attrs):
    G.nodes[node].update(attrs)
    return G


def test_grid_graph_round_trips_through_graphml(tmp_path):
    """Review finding: grid_graph's graph attributes must be writable."""
    import graphclust as gc

    G = gc.grid_graph(np.arange(6.0).reshape(2, 3))
    S = gc.SideInfo.from_labels({(0, 0): 1, (1, 2): 2})
    gc.write_graphml(tmp_path / "grid.graphml", G, S)
    H, T = gc.read_graphml(tmp_path / "grid.graphml")
    assert set(H.nodes) == set(G.nodes) and H.graph["height"] == 2 and H.graph["width"] == 3
    assert T == S


# ---------------------------------------------------------------------- package layout
def test_io_package_modules_import_each_other_without_a_cycle():
    """graphclust.io keeps one public list, and its modules' relative imports form no cycle."""
    import ast
    import graphlib
    from pathlib import Path

    import graphclust.io

    assert graphclust.io.__all__ == [
        "read_graphml", "read_problem", "parse_graphml", "write_graphml", "read_side_info", "write_side_info_csv"
    ]
    package = Path(graphclust.io.__file__).parent
    modules = {p.stem: p for p in package.glob("*.py")}
    deps = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert name == "__init__" or "__all__" not in {
            t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if hasattr(t, "id")
        }, f"{name}.py has its own __all__"
        deps[name] = set()
        for node in ast.walk(tree):  # function-level imports count too
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [alias.name for alias in node.names]
                deps[name].update(target for target in targets if target in modules)
    graphlib.TopologicalSorter(deps).prepare()  # raises CycleError on a cycle
    assert deps["_common"] == set()


# ---------------------------------------------------------------------- memory (issue #23)
def _features_rule(text):
    """The rule for a features value, applied to its whole text: (floats, None) or (None, bad token)."""
    t = text.strip()
    if t.startswith("[") and t.endswith("]"):
        t = t[1:-1]
    tokens = t.replace(",", " ").split()
    for x in tokens:
        try:
            float(x)
        except ValueError:
            return None, x
    return [float(x) for x in tokens], None


FEATURE_PIECES = ["1", "2.5", "-3e0", "0.0", "0.0", "nan", "INF", "1_0", "x", "[", "]", "[1", "2]", ",", ", ", " ",
                  "  ", "\n", "\t", "\u2003", "\x85", "", "[]", "[ ", " ]"]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(FEATURE_PIECES), max_size=40),
       cuts=st.lists(st.integers(0, 200), max_size=12), chunk=st.sampled_from([1, 2, 3, 7, 1 << 18]))
def test_streamed_features_follow_the_whole_text_rule(pieces, cuts, chunk):
    """Fed in any pieces, with any chunk size, a features value reads as its whole text would."""
    from graphclust.io import graphml_read

    text = "".join(pieces)
    bounds = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(graphml_read, "_CHUNK", chunk)
        reader = graphml_read._FeatureText()
        for a, b in zip(bounds, bounds[1:]):
            reader.feed(text[a:b])
        values, bad = reader.finish()
    if values is not None:
        assert type(values) is np.ndarray and values.dtype == np.float64
        values = values.tolist()
    assert repr((values, bad)) == repr(_features_rule(text)), text


@pytest.mark.parametrize("text", [
    "[" + ", ".join(f"{i}.5" for i in range(30_000)) + "]",  # JSON style, over several chunks and feeds
    " \n".join(str(i % 7) for i in range(60_000)),  # few distinct values: floats shared
    " ".join(str(i) for i in range(30_000)) + " oops " + "1 " * 30_000,
    "[" + " ".join(str(i) for i in range(40_000)) + " 3",  # "[" without "]": the first token is the bad one
])
def test_large_features_value_through_the_parser(parse, text, monkeypatch):
    from graphclust.io import graphml_read

    monkeypatch.setattr(graphml_read, "_CHUNK", 1000)
    values, bad = _features_rule(text)
    body = f'<node id="a"><data key="f">{text}</data></node>'
    if values is None:
        expect_error(parse, doc(body), f"non-numeric feature {re.escape(repr(bad))}", line=7,
                     element="<data key='f'>")
    else:
        G, _ = parse(doc(body))
        assert G.nodes["a"]["features"].tolist() == values


def test_features_value_is_a_float64_array_of_eight_bytes_a_number(tmp_path):
    """A large features value of short, distinct numbers comes back as a float64 array:
    about 8 bytes a number are held (a list of floats held 32, four times its 8-byte
    text), and the read peaks well under 3 times the file (tracemalloc, Python's own
    allocations: the array and one chunk of text)."""
    n = 400_000
    values = np.random.default_rng(0).random(n).round(5)
    path = tmp_path / "f.graphml"
    path.write_text(doc('<node id="a"><data key="f">' + " ".join(map(repr, values.tolist())) + "</data></node>"))
    size = os.path.getsize(path)
    assert 7 * n < size < 9 * n
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        G, _ = read_graphml(path)
        held, peak = (x - before for x in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    feats = G.nodes["a"]["features"]
    assert type(feats) is np.ndarray and feats.dtype == np.float64 and feats.shape == (n,)
    np.testing.assert_array_equal(feats, values)
    assert held < 10 * n, held / n  # the array (8 bytes a number and a little slack), no float objects
    assert peak < 2.5 * size, peak / size


def _random_problem(seed):
    rng = np.random.default_rng(seed)
    n = 40
    G = nx.Graph()
    for u in range(n):
        attrs = {"features": rng.standard_normal(3).round(rng.integers(1, 17)).tolist(), "truth": int(u % 3)}
        if u % 5 == 0:
            attrs["name"] = f"node <{u}> & co"
        G.add_node(u, **attrs)
    for _ in range(120):
        u, v = rng.integers(0, n, 2).tolist()
        r = rng.random()
        if r < 0.6:
            G.add_edge(u, v, weight=float(rng.random()))
        elif r < 0.8:
            G.add_edge(u, v)
        else:
            G.add_edge(u, v, weight=float(rng.integers(0, 5)), note="x" * int(rng.integers(1, 4)))
    pairs = [(u, v) for u, v in rng.integers(0, n, (30, 2)).tolist() if u != v]
    S = gc.SideInfo([(u, v, float(rng.choice([-1, 1]) * rng.choice([0.5, 2.0, math.inf]))) for u, v in pairs],
                    seeds={0: 1, 7: 2})
    return G, S


@pytest.mark.parametrize("seed", range(4))
def test_generated_files_read_as_networkx_reads_them(tmp_path, seed):
    """Our reader and networkx's agree on the nodes, edges and attributes of generated files
    (networkx keeps ids as strings, ``features`` as text and ``kind`` as an edge attribute)."""
    G, S = _random_problem(seed)
    path = tmp_path / "g.graphml"
    write_graphml(path, G, S)
    H, T = read_graphml(path)
    assert_same_graph(G, H)
    assert list(H.nodes) == list(G.nodes) and T == S
    N = nx.read_graphml(path)
    assert list(N.nodes) == [str(u) for u in H.nodes]
    for u in H.nodes:
        theirs = dict(N.nodes[str(u)])
        theirs["features"] = [float(x) for x in theirs["features"].split()]
        if typed_attrs(H.nodes[u]) != typed_attrs(theirs):  # the seed label goes to S, not to H
            assert theirs.pop("label") == S.seeds[u] and typed_attrs(H.nodes[u]) == typed_attrs(theirs)
    def pair(u, v):
        return min(int(u), int(v)), max(int(u), int(v))

    data = [(*pair(u, v), {k: x for k, x in d.items() if k != "kind"})
            for u, v, d in N.edges(data=True) if d.get("kind") == "data"]
    assert sorted(map(repr, data)) == sorted(repr((*pair(u, v), d)) for u, v, d in H.edges(data=True))


def _boom(*args, **kwargs):
    raise MemoryError


class TestOutOfMemory:
    """A MemoryError while reading is a GraphMLError naming the element being read."""

    def test_in_a_features_value(self, parse, monkeypatch):
        from graphclust.io import graphml_read

        monkeypatch.setattr(graphml_read._FeatureText, "feed", _boom)
        body = '<node id="n4"/>\n<node id="n5"><data key="f">1 2 3</data></node>'
        err = expect_error(parse, doc(body), r"ran out of memory \(MemoryError\) while reading <data key='f'> "
                           r"on node 'n5'$", line=8, element="<data key='f'>")
        assert err.__cause__ is None and err.__context__ is None  # the traceback's frames are let go

    def test_in_an_edge_weight(self, parse, monkeypatch):
        from graphclust.io import graphml_read

        monkeypatch.setitem(graphml_read._CONVERT, "double", (_boom, "a double"))
        body = '<node id="a"/><node id="b"/>\n<edge source="a" target="b"><data key="w">0.5</data></edge>'
        expect_error(parse, doc(body), r"while reading <data key='w'> on edge a-b$", line=8, element="<data key='w'>")

    def test_in_an_edge_and_a_node(self, parse, monkeypatch):
        from graphclust.io import graphml_read

        monkeypatch.setattr(graphml_read._Records, "add_data_edge", _boom)
        body = '<node id="a"/><node id="b"/>\n<edge source="a" target="b"/>'
        expect_error(parse, doc(body), r"while reading <edge source='a' target='b'>$", line=8,
                     element="<edge source='a' target='b'>")
        monkeypatch.setattr(graphml_read._Records, "intern", _boom)
        expect_error(parse, doc(body), r"while reading <node id='a'>$", line=7, element="<node id='a'>")

    def test_while_building_the_graph(self, parse, monkeypatch):
        monkeypatch.setattr(nx.Graph, "add_edges_from", _boom)
        with pytest.raises(GraphMLError, match=r"ran out of memory \(MemoryError\) while building the networkx "
                           r"graph \(2 nodes, 1 data edges read\)") as info:
            parse(doc('<node id="a"/><node id="b"/><edge source="a" target="b"/>'))
        assert info.value.path == getattr(parse, "path", None) and info.value.element == "<graph>"

    @pytest.mark.parametrize("kind, what", [
        ("edges", "building the networkx graph (60000 nodes, 240000 data edges read)"),
        ("features", "reading <data key='f'> on node 'a'"),
    ], ids=["edges", "features"])
    def test_under_a_real_address_space_limit(self, tmp_path, kind, what):
        """A real MemoryError (RLIMIT_AS at 24 MB above the imports, in a subprocess) becomes the
        GraphMLError: while building the graph of 240k edges, or while reading 5M feature values."""
        resource = pytest.importorskip("resource")
        if not hasattr(resource, "RLIMIT_AS") or not os.path.exists("/proc/self/status"):
            pytest.skip("needs RLIMIT_AS and /proc")
        import subprocess
        import sys

        path = tmp_path / "big.graphml"
        n = 60_000
        with open(path, "w") as f:
            if kind == "edges":
                f.write(doc("".join(f'<node id="{u}"/>' for u in range(n))
                            + "\n".join(f'<edge source="{u}" target="{(u + o) % n}"><data key="w">0.{u}</data></edge>'
                                        for u in range(n) for o in (1, 2, 3, 4))))
            else:
                f.write(doc('<node id="a"><data key="f">' + "0 1 " * 2_500_000 + "</data></node>"))
        script = (
            "import resource, sys\n"
            "import graphclust as gc\n"
            "import graphclust.io  # imported before the cap: only the reading is limited\n"
            "from graphclust.errors import GraphMLError\n"
            "vm = [int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize')][0]\n"
            "cap = vm + 24 * 2**20\n"
            "resource.setrlimit(resource.RLIMIT_AS, (cap, cap))\n"
            "try:\n"
            "    gc.io.read_graphml(sys.argv[1])\n"
            "except GraphMLError as exc:\n"
            "    print('GraphMLError:', exc)\n"
            "else:\n"
            "    print('read')\n"
        )
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env,
                             timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.startswith(f"GraphMLError: {path}: ")
        assert f"ran out of memory (MemoryError) while {what}" in out.stdout


def test_records_widen_past_four_byte_indices_and_lines(tmp_path, monkeypatch):
    """Node indices and lines are kept in 4-byte arrays until one does not fit; then 8-byte ones."""
    from graphclust.io import graphml_read

    G, S = _random_problem(5)
    path = tmp_path / "g.graphml"
    write_graphml(path, G, S)
    expected = read_graphml(path)
    monkeypatch.setattr(graphml_read, "_NARROW", 7)
    H, T = read_graphml(path)
    assert_same_graph(expected[0], H)
    assert list(H.edges) == list(expected[0].edges) and T == expected[1]
    with pytest.raises(GraphMLError, match=r"line 9: data edge 5-3 is given twice \(first at line 8\)"):
        parse_graphml(doc('<node id="3"/><node id="5"/>\n<edge source="3" target="5"/>\n'
                          + "".join(f'<node id="{i}"/>' for i in range(6, 12)) + '<edge source="5" target="3"/>'))
