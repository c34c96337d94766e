"""Write a data graph, its side information and cluster labels as graphclust GraphML.

:func:`write_graphml` is the inverse of :func:`~graphclust.io.read_graphml`; the format
is described in :mod:`graphclust.io`. The document is built and checked in memory, then
written to a temporary file that is renamed into place.
"""

import math
import numbers
import os
import re

import networkx as nx
import numpy as np

from .._utils import atomic_write
from ..errors import GraphMLError, InvalidFeaturesError, InvalidGraphError, InvalidParameterError, UnknownNodeError
from ._common import _CANON_INT, _NS, _RESERVED_GRAPH, _key_mode, _node_tokens, _side_argument

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_TEXT_ESC = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR_ESC = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;"}
)
_PY_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}


def _fmt_float(x):
    if x != x:
        return "NaN"
    if x == math.inf:
        return "INF"
    if x == -math.inf:
        return "-INF"
    return repr(x)


def _gml_type(value):
    t = _PY_TYPES.get(type(value))
    if t is not None:
        return t
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, numbers.Integral):
        return "long"
    if isinstance(value, numbers.Real):
        return "double"
    if isinstance(value, str):
        return "string"
    return None


def _fmt_value(value, type_):
    if type_ == "string":
        return value.translate(_TEXT_ESC)
    if type_ == "double":
        return _fmt_float(float(value))
    if type_ == "long":
        return str(int(value))
    return "true" if value else "false"


class _Writer:
    """Collects keys and body lines; validates every value on the way."""

    def __init__(self, path):
        self.path = path
        self.keys = {}  # (domain, name, type) -> id

    def fail(self, message, element):
        raise GraphMLError(message, path=self.path, line=None, element=element)

    def key(self, domain, name, type_):
        k = (domain, name, type_)
        kid = self.keys.get(k)
        if kid is None:
            kid = self.keys[k] = f"d{len(self.keys)}"
        return kid

    def data(self, domain, name, value, desc):
        if not isinstance(name, str):
            self.fail(f"{desc} has an attribute named {name!r}; GraphML attribute names are strings",
                      f"attribute {name!r} on {desc}")
        type_ = _gml_type(value)
        if type_ is None:
            self.fail(
                f"{desc} has {name}={value!r} of type {type(value).__name__}, which GraphML cannot store "
                "(boolean, int, float or string only); convert or remove it",
                f"<data key={name!r}> on {desc}",
            )
        if type_ == "string" and _XML_BAD.search(value):
            self.fail(f"{desc} has {name}={value!r}, which holds a character XML cannot store",
                      f"<data key={name!r}> on {desc}")
        return f'<data key="{self.key(domain, name, type_)}">{_fmt_value(value, type_)}</data>'

    def features(self, value, node):
        try:
            vec = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            vec = None
        if vec is None or vec.ndim > 1 or value is None or isinstance(value, (str, bytes, bool)):
            raise InvalidFeaturesError(
                f"node {node!r} has features={value!r}; expected a flat numeric vector", node=node
            )
        text = " ".join(map(_fmt_float, np.atleast_1d(vec).tolist()))
        return f'<data key="{self.key("node", "features", "string")}">{text}</data>'


def _attr(text):
    return text.translate(_ATTR_ESC)


def _write_chunks(handle, chunks):
    for chunk in chunks:
        handle.write(chunk.encode("utf-8"))


def write_graphml(path, G, S=None, labels=None, *, label_name="cluster"):
    """Write a data graph, its side information and optional labels as GraphML.

    Data edges get ``kind="data"``, constraints ``kind="must"``/``"cannot"`` with
    ``weight`` = strength (``INF`` when hard), seeds the node attribute ``label``,
    and ``labels`` the node attribute ``label_name``. Node keys that are not all
    ints or all strings are written as their ``repr`` with the graph attribute
    ``node_key_type="repr"`` (format in :mod:`graphclust.io`). The file is written
    to a temporary file beside ``path`` and renamed into place, so an interrupted
    write leaves any old file intact; ``G`` and ``S`` are not modified.

    Parameters
    ----------
    path : str or path-like
    G : networkx.Graph or None
        Undirected data graph. Attribute values must be bool, int, float or str
        (``features``: a numeric vector). ``None`` writes only the side
        information (nodes are the constrained ones) — a side-information file.
    S : SideInfo, networkx.Graph or None, default=None
        Side information over nodes of ``G``.
    labels : dict, array-like of shape (n_nodes,) or None, default=None
        Cluster labels: a ``node -> label`` dict or an array aligned with
        ``list(G.nodes)``.
    label_name : str, default="cluster"
        Node attribute that holds ``labels``.

    Raises
    ------
    InvalidGraphError
        Directed graph or multigraph, a data edge whose weight is not a finite
        number >= 0, a reserved attribute (node ``label``, edge ``kind`` other than
        ``"data"``, graph ``node_key_type``).
    InvalidFeaturesError
        ``features`` that are not a flat numeric vector.
    UnknownNodeError
        A constraint, seed or label on a node that is not in ``G``.
    GraphMLError
        A value GraphML cannot store (a list, a dict, a control character, ...).
    InvalidParameterError
        Bad ``labels`` or ``label_name``.

    Examples
    --------
    >>> import os, tempfile
    >>> import networkx as nx
    >>> from graphclust import read_graphml
    >>> G = nx.Graph([((0, 0), (0, 1), {"weight": 0.5})])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "grid.graphml")
    ...     write_graphml(path, G, labels=[0, 1])
    ...     H, S = read_graphml(path)
    >>> list(H.nodes(data=True)), len(S)
    ([((0, 0), {'cluster': 0}), ((0, 1), {'cluster': 1})], 0)
    """
    name = os.fsdecode(path)
    S = _side_argument(S)
    if not isinstance(label_name, str) or label_name in ("label", "features", ""):
        raise InvalidParameterError(
            f"label_name={label_name!r} is not allowed: use a non-empty string other than 'label' and 'features'"
        )
    if G is None:
        nodes = list(dict.fromkeys([x for u, v, _ in S.edges() for x in (u, v)] + list(S.seeds or ())))
        node_attrs = dict.fromkeys(nodes, {})
        graph_attrs = {}
        data_edges = []
    else:
        if not isinstance(G, nx.Graph):
            raise InvalidGraphError(f"G must be a networkx graph or None, got {type(G).__name__}")
        if G.is_directed() or G.is_multigraph():
            raise InvalidGraphError(
                "graphclust GraphML holds an undirected simple graph; got a "
                f"{type(G).__name__} (use nx.Graph(G.to_undirected()))"
            )
        nodes = list(G.nodes)
        node_attrs = G.nodes
        graph_attrs = G.graph
        data_edges = G.edges(data=True)
    known = set(nodes) if G is not None else None
    for u, v, w in S.edges():
        for x in (u, v):
            if known is not None and x not in known:
                kind = "must-link" if w > 0 else "cannot-link"
                raise UnknownNodeError(f"{kind} {(u, v)!r} refers to node {x!r}, which is not in G",
                                       node=x, constraint=(u, v))
    seeds = S.seeds or {}
    for x in seeds:
        if known is not None and x not in known:
            raise UnknownNodeError(f"seed on node {x!r}, which is not in G", node=x)
    if labels is not None:
        if hasattr(labels, "items"):
            for x in labels:
                if x not in node_attrs:
                    raise UnknownNodeError(f"labels has node {x!r}, which is not in G", node=x)
            labels = dict(labels)
        else:
            arr = np.asarray(labels)
            if arr.ndim != 1 or len(arr) != len(nodes):
                raise InvalidParameterError(
                    f"labels must be a dict or have one entry per node of G ({len(nodes)}), got shape {arr.shape}"
                )
            labels = dict(zip(nodes, arr.tolist()))

    mode = _key_mode(nodes)
    token = _node_tokens(nodes, mode, name)
    if mode != "int":
        for u, t in token.items():
            if _XML_BAD.search(t):
                raise GraphMLError(f"node {u!r} has a character XML cannot store", path=name, element=f"node {u!r}")
    w = _Writer(name)
    body = []
    head_data = []
    if mode == "repr" or (mode == "str" and nodes and all(map(_CANON_INT.fullmatch, nodes))):
        head_data.append(w.data("graph", _RESERVED_GRAPH, mode, "the graph"))
    for k, value in graph_attrs.items():
        if k in ("node_default", "edge_default") and isinstance(value, dict):
            continue  # networkx's reader leaves these behind; not graph data
        if k == _RESERVED_GRAPH:
            raise InvalidGraphError(f"graph attribute {k!r} is reserved by the graphclust GraphML format")
        head_data.append(w.data("graph", k, value, "the graph"))
    if head_data:
        body.append("    " + "".join(head_data) + "\n")
    for u in nodes:
        attrs = node_attrs[u]
        parts = []
        for k, value in attrs.items():
            if k == "label":
                raise InvalidGraphError(
                    f"node {u!r} has a 'label' attribute; in graphclust GraphML 'label' holds seed labels "
                    "of the side information. Rename it, or pass the seeds in S"
                )
            if k == "features":
                parts.append(w.features(value, u))
            elif labels is not None and k == label_name and u in labels:
                continue
            else:
                parts.append(w.data("node", k, value, f"node {u!r}"))
        if u in seeds:
            parts.append(w.data("node", "label", seeds[u], f"seed of node {u!r}"))
        if labels is not None and u in labels:
            parts.append(w.data("node", label_name, labels[u], f"label of node {u!r}"))
        tok = _attr(token[u])
        if parts:
            body.append(f'    <node id="{tok}">{"".join(parts)}</node>\n')
        else:
            body.append(f'    <node id="{tok}"/>\n')
    kind_data = None
    for u, v, attrs in data_edges:
        if kind_data is None:
            kind_data = w.data("edge", "kind", "data", "")
        parts = [kind_data]
        for k, value in attrs.items():
            if k == "kind":
                if value == "data":
                    continue
                raise InvalidGraphError(
                    f"data edge {(u, v)!r} has kind={value!r}; 'kind' is reserved (data/must/cannot): put "
                    "constraints in S", edge=(u, v),
                )
            if k == "weight":
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not (
                    0.0 <= float(value) < math.inf
                ):
                    raise InvalidGraphError(
                        f"edge {(u, v)!r} has weight {value!r}; similarities must be finite numbers >= 0",
                        edge=(u, v),
                    )
            parts.append(w.data("edge", k, value, f"edge {(u, v)!r}"))
        body.append(f'    <edge source="{_attr(token[u])}" target="{_attr(token[v])}">{"".join(parts)}</edge>\n')
    for u, v, weight in S.edges():
        kind = w.data("edge", "kind", "must" if weight > 0 else "cannot", "")
        strength = w.data("edge", "weight", abs(float(weight)), "")
        body.append(f'    <edge source="{_attr(token[u])}" target="{_attr(token[v])}">{kind}{strength}</edge>\n')

    head = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<graphml xmlns="{_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xsi:schemaLocation="{_NS} {_NS}/1.0/graphml.xsd">\n',
    ]
    for (domain, kname, type_), kid in w.keys.items():
        head.append(f'  <key id="{kid}" for="{domain}" attr.name="{_attr(kname)}" attr.type="{type_}"/>\n')
    head.append('  <graph id="G" edgedefault="undirected">\n')
    tail = ["  </graph>\n", "</graphml>\n"]
    step = 4096
    chunks = ["".join(head)] + ["".join(body[i:i + step]) for i in range(0, len(body), step)] + ["".join(tail)]
    with atomic_write(path, "wb") as handle:
        _write_chunks(handle, chunks)
