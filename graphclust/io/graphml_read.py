"""Read graphclust GraphML: the data graph and its side information.

:func:`read_graphml` reads a file and :func:`parse_graphml` a string. :func:`read_side_info`
reads a side-information file alone, GraphML or CSV: it tells them apart by their content,
so it lives here beside the GraphML parser, and the CSV rows are read by
:mod:`graphclust.io.side_csv`. The format is described in :mod:`graphclust.io`.

Security
--------
Files are parsed with :mod:`xml.parsers.expat` and any ``<!DOCTYPE ...>`` is refused
as soon as it starts, so entity declarations ("billion laughs"), external entities
and external DTDs are never processed, expanded or fetched; GraphML never needs them.

Not supported (refused with a :class:`~graphclust.errors.GraphMLError`): directed
graphs, several or nested graphs, hyperedges, ports. Elements of other namespaces
(for example yEd's graphics) and ``<desc>`` are skipped. Every error names the file,
the line and the element at fault.
"""

import math
import os
from xml.parsers import expat

import networkx as nx

from ..errors import GraphclustError, GraphMLError, InvalidParameterError, UnknownNodeError
from ..sideinfo import SideInfo
from ._common import _KEY_TYPES, _NS, _RESERVED_GRAPH, _ids_to_keys, _resolver
from .side_csv import _read_side_csv

_SEP = " "  # expat namespace separator: names arrive as "uri local"
_DOMAINS = ("node", "edge", "graph", "all", "graphml", "hyperedge", "port", "endpoint")
_UNSUPPORTED = ("hyperedge", "port", "endpoint", "locator")
_DATA_PARENTS = frozenset(("node", "edge", "graph", "graphml"))


def _to_bool(text):
    t = text.strip().lower()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise ValueError(text)


# GraphML attr.type -> (converter, description for messages)
_CONVERT = {
    "boolean": (_to_bool, "a boolean"),
    "int": (int, "an int"),
    "long": (int, "a long"),
    "float": (float, "a float"),
    "double": (float, "a double"),
    "string": (str, "a string"),
}


class _Key:
    __slots__ = ("id", "domain", "name", "type", "convert", "expect", "default", "line")

    def __init__(self, id_, domain, name, type_, line):
        self.id, self.domain, self.name, self.type, self.line = id_, domain, name, type_, line
        self.convert, self.expect = _CONVERT[type_] if type_ in _CONVERT else (None, None)
        self.default = None


class _Records:
    """What a parse produced, before node ids become keys."""

    def __init__(self):
        self.graph_attrs = {}
        self.node_ids = []
        self.node_attrs = []
        self.node_line = {}
        self.seeds = {}  # id -> (label, line)
        self.data_edges = []  # (src, tgt, attrs, line)
        self.constraints = []  # (src, tgt, signed w, line)
        self.pairs = {}  # (src, tgt) -> (signed w, line), for must/cannot clashes


class _Parser:
    """Event-driven GraphML reader over expat; builds :class:`_Records`."""

    def __init__(self, path, side, encoding=None):
        self.path = path
        self.side = side  # a side-information file: unsigned edges are signed constraints
        self.keys = {}
        self.defaults = {"node": [], "edge": [], "graph": []}
        self.rec = _Records()
        self.stack = []
        self.skip = 0
        self.text = None
        self.seen_graph = False
        self.root_owner = ("graphml", "the document", {})
        self.owner = self.root_owner  # (what, ident, attrs) of the element <data> attaches to
        self.feat_len = None  # (length, node id) of the first features vector
        p = self.parser = expat.ParserCreate(encoding, namespace_separator=_SEP)
        p.buffer_text = True
        p.buffer_size = 1 << 16
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.StartDoctypeDeclHandler = self._doctype
        p.EntityDeclHandler = self._entity
        p.ExternalEntityRefHandler = self._external
        p.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
        starts = {
            "graphml": self._start_graphml, "key": self._start_key, "default": self._start_default,
            "graph": self._start_graph, "node": self._start_node, "edge": self._start_edge,
            "data": self._start_data,
        }
        ends = {
            "graphml": self._pop, "key": self._end_key, "default": self._end_default,
            "graph": self._end_graph, "node": self._end_node, "edge": self._end_edge, "data": self._end_data,
        }
        self.starts, self.ends = {}, {}
        for local, fn in starts.items():
            self.starts[local] = self.starts[_NS + _SEP + local] = fn
        for local, fn in ends.items():
            self.ends[local] = self.ends[_NS + _SEP + local] = fn

    # ------------------------------------------------------------------ plumbing
    def fail(self, message, element, line=None):
        if line is None:
            line = self.parser.CurrentLineNumber
        where = f"{self.path}: " if self.path else ""
        raise GraphMLError(f"{where}line {line}: {message}", path=self.path, line=line, element=element)

    def run(self, source):
        try:
            if isinstance(source, (bytes, bytearray, memoryview)):
                self.parser.Parse(bytes(source), True)
            else:
                self.parser.ParseFile(source)
        except GraphclustError:
            raise
        except expat.ExpatError as exc:
            element = f"<{self.stack[-1]}>" if self.stack else "XML document"
            if exc.code == expat.errors.codes[expat.errors.XML_ERROR_NO_ELEMENTS] or (
                exc.code == expat.errors.codes[expat.errors.XML_ERROR_UNCLOSED_TOKEN] and self.stack
            ):
                msg = "unexpected end of file: the document is empty or truncated"
            else:
                msg = f"malformed XML ({expat.ErrorString(exc.code)}, column {exc.offset})"
            self.fail(msg, element, line=exc.lineno)
        except (LookupError, UnicodeError, ValueError, OverflowError) as exc:
            self.fail(f"cannot decode the document: {exc}", "XML declaration")
        if not self.seen_graph:
            self.fail("no <graph> element; a GraphML file must contain one undirected <graph>", "<graphml>")
        return self.rec

    def _doctype(self, name, sysid, pubid, has_internal_subset):
        self.fail(
            "refusing a <!DOCTYPE> declaration: GraphML never needs a DTD, and DTDs allow entity "
            "expansion and external entities (billion laughs, local file reads)",
            f"<!DOCTYPE {name}>",
        )

    def _entity(self, name, *args):  # pragma: no cover - a DOCTYPE is refused first
        self.fail(f"refusing the entity declaration {name!r}", f"<!ENTITY {name}>")

    def _external(self, context, base, sysid, pubid):  # pragma: no cover - a DOCTYPE is refused first
        self.fail(f"refusing the external entity {sysid!r}", f"external entity {sysid!r}")

    def _start(self, name, attrs):
        fn = self.starts.get(name)
        if fn is not None:
            fn(attrs)
            return
        ns, _, local = name.rpartition(_SEP)
        if (ns and ns != _NS) or local == "desc":
            # foreign namespace (e.g. yEd graphics) or a description: skip the subtree
            self.skip = 1
            p = self.parser
            self.saved = (p.CharacterDataHandler, self.text)
            p.StartElementHandler, p.EndElementHandler = self._skip_start, self._skip_end
            p.CharacterDataHandler = None
        elif local in _UNSUPPORTED:
            self.fail(f"<{local}> is not supported by graphclust", f"<{local}>")
        else:
            self.fail(f"unknown element <{local}> in a GraphML document", f"<{local}>")

    def _end(self, name):
        self.ends[name]()

    def _skip_start(self, name, attrs):
        self.skip += 1

    def _skip_end(self, name):
        self.skip -= 1
        if not self.skip:
            p = self.parser
            p.StartElementHandler, p.EndElementHandler = self._start, self._end
            p.CharacterDataHandler = self.saved[0]

    def _pop(self):
        self.stack.pop()

    def _parent(self, local, allowed):
        parent = self.stack[-1] if self.stack else None
        if parent not in allowed:
            where = f"inside <{parent}>" if parent else "as the root element"
            if local == "graph" and parent in ("node", "edge"):
                self.fail("nested graphs are not supported by graphclust", "<graph>")
            self.fail(f"<{local}> is not allowed {where}", f"<{local}>")

    # ------------------------------------------------------------------ elements
    def _start_graphml(self, attrs):
        if self.stack:
            self._parent("graphml", ())
        self.stack.append("graphml")

    def _start_key(self, attrs):
        self._parent("key", ("graphml",))
        kid = attrs.get("id")
        elem = f"<key id={kid!r}>"
        if kid is None:
            self.fail("<key> has no 'id' attribute", "<key>")
        if kid in self.keys:
            self.fail(f"key {kid!r} is declared twice (first at line {self.keys[kid].line})", elem)
        domain = attrs.get("for", "all")
        if domain not in _DOMAINS:
            self.fail(f"key {kid!r} has for={domain!r}; expected one of {', '.join(_DOMAINS)}", elem)
        name = attrs.get("attr.name")
        # GraphML's default type is string, but the convention's edge weight is a number:
        # an untyped weight key is read as a double (else the weights come back as text)
        untyped_weight = name == "weight" and domain in ("edge", "all") and "attr.type" not in attrs
        type_ = "double" if untyped_weight else attrs.get("attr.type", "string")
        if name is not None and type_ not in _CONVERT:
            self.fail(
                f"key {kid!r} ({name!r}) has attr.type={type_!r}; expected boolean, int, long, float, "
                "double or string", elem,
            )
        self.pending_key = _Key(kid, domain, name, type_, self.parser.CurrentLineNumber)
        self.stack.append("key")

    def _start_default(self, attrs):
        self._parent("default", ("key",))
        self.text = text = []
        self.parser.CharacterDataHandler = text.append
        self.stack.append("default")

    def _end_default(self):
        key = self.pending_key
        text = "".join(self.text)
        self.text = None
        self.parser.CharacterDataHandler = None
        if key.name is not None:
            key.default = self._convert(key, text, f"<default> of key {key.id!r}", f"<key id={key.id!r}>")
        self.stack.pop()

    def _end_key(self):
        key = self.pending_key
        self.keys[key.id] = key
        if key.name is not None and key.default is not None:
            for domain in ("node", "edge", "graph"):
                if key.domain in (domain, "all"):
                    self.defaults[domain].append(key)
        self.stack.pop()

    def _start_graph(self, attrs):
        self._parent("graph", ("graphml",))
        if self.seen_graph:
            self.fail("a second <graph>: graphclust reads one graph per file", "<graph>")
        self.seen_graph = True
        direction = attrs.get("edgedefault", "undirected")
        if direction != "undirected":
            self.fail(
                f"<graph edgedefault={direction!r}>: graphclust wants an undirected graph "
                "(similarities and constraints are symmetric)", "<graph>",
            )
        self.owner = ("graph", "the graph", self.rec.graph_attrs)
        self.stack.append("graph")

    def _end_graph(self):
        if self.defaults["graph"]:
            self._apply_defaults("graph", self.rec.graph_attrs)
        self.owner = self.root_owner
        self.stack.pop()

    def _start_node(self, attrs):
        self._parent("node", ("graph",))
        nid = attrs.get("id")
        if nid is None:
            self.fail("<node> has no 'id' attribute", "<node>")
        line = self.parser.CurrentLineNumber
        rec = self.rec
        if nid in rec.node_line:
            self.fail(f"duplicate node id {nid!r} (first declared at line {rec.node_line[nid]})",
                      f"<node id={nid!r}>")
        rec.node_line[nid] = line
        rec.node_ids.append(nid)
        node_attrs = {}
        rec.node_attrs.append(node_attrs)
        self.owner = ("node", nid, node_attrs)
        self.stack.append("node")

    def _end_node(self):
        _, nid, attrs = self.owner
        if self.defaults["node"]:
            self._apply_defaults("node", attrs)
        if "features" in attrs:
            feats = attrs["features"]
            if self.feat_len is None:
                self.feat_len = (len(feats), nid)
            elif len(feats) != self.feat_len[0]:
                n0, first = self.feat_len
                self.fail(
                    f"node {nid!r} has {len(feats)} features but node {first!r} has {n0} (ragged features)",
                    f"<node id={nid!r}>",
                )
        if "label" in attrs:
            self.rec.seeds[nid] = (attrs.pop("label"), self.parser.CurrentLineNumber)
        self.owner = ("graph", "the graph", self.rec.graph_attrs)
        self.stack.pop()

    def _start_edge(self, attrs):
        self._parent("edge", ("graph",))
        src, tgt = attrs.get("source"), attrs.get("target")
        if src is None or tgt is None:
            self.fail("<edge> needs both 'source' and 'target' attributes", "<edge>")
        if attrs.get("directed", "false") not in ("false", "0"):
            self.fail(
                f"edge {src}-{tgt} is directed: graphclust wants an undirected graph",
                f"<edge source={src!r} target={tgt!r}>",
            )
        self.owner = ("edge", (src, tgt, self.parser.CurrentLineNumber), {})
        self.stack.append("edge")

    def _end_edge(self):
        _, (src, tgt, line), attrs = self.owner
        if self.defaults["edge"]:
            self._apply_defaults("edge", attrs)
        kind = attrs.pop("kind", None)
        rec = self.rec
        if kind is None and not self.side or kind == "data":
            if self.side:
                self._edge_fail("a side-information file cannot hold data edges (kind='data')", src, tgt, line)
            w = attrs.get("weight")
            if w is not None:
                w = self._number(w, src, tgt, line)
                if not 0.0 <= w < math.inf:
                    self._edge_fail(
                        f"data edge {src}-{tgt} has weight {w}; similarities must be finite and >= 0",
                        src, tgt, line,
                    )
            rec.data_edges.append((src, tgt, attrs, line))
        elif kind is None or kind == "must" or kind == "cannot":
            w = self._number(attrs.get("weight", 1.0), src, tgt, line)
            what = "constraint" if kind is None else f"{kind}-link"
            if w == 0 or w != w:
                self._edge_fail(
                    f"{what} {src}-{tgt} has weight {w}; a constraint needs a non-zero strength", src, tgt, line
                )
            if kind is not None:
                w = abs(w) if kind == "must" else -abs(w)
            if src == tgt:
                self._edge_fail(f"{what} {src}-{tgt} joins node {src!r} to itself", src, tgt, line)
            old = rec.pairs.get((src, tgt)) or rec.pairs.get((tgt, src))
            if old is None:
                rec.pairs[(src, tgt)] = (w, line)
            elif (old[0] > 0) != (w > 0):
                self._edge_fail(
                    f"pair {src}-{tgt} is both a must-link and a cannot-link (the other one at line {old[1]})",
                    src, tgt, line,
                )
            rec.constraints.append((src, tgt, w, line))
        else:
            self._edge_fail(
                f"edge {src}-{tgt} has kind={kind!r}; expected 'data', 'must' or 'cannot'", src, tgt, line
            )
        self.owner = ("graph", "the graph", rec.graph_attrs)
        self.stack.pop()

    def _edge_fail(self, message, src, tgt, line):
        self.fail(message, f"<edge source={src!r} target={tgt!r}>", line=line)

    def _number(self, w, src, tgt, line):
        if type(w) is float:
            return w
        if isinstance(w, str):
            try:
                return float(w)
            except ValueError:
                pass
        elif isinstance(w, int) and not isinstance(w, bool):
            return float(w)
        self._edge_fail(f"edge {src}-{tgt} has weight {w!r}; expected a number", src, tgt, line)

    def _apply_defaults(self, domain, attrs):
        for key in self.defaults[domain]:
            if key.name not in attrs:
                attrs[key.name] = list(key.default) if isinstance(key.default, list) else key.default

    def _start_data(self, attrs):
        stack = self.stack
        owner = self.owner if stack and stack[-1] in _DATA_PARENTS else None
        key = self.keys.get(attrs.get("key"))
        if owner is None or key is None or (key.domain != owner[0] and key.domain != "all"):
            owner = self._bad_data(attrs, owner)
        self.data = (key, owner, self.parser.CurrentLineNumber)
        self.text = text = []
        self.parser.CharacterDataHandler = text.append
        stack.append("data")

    def _bad_data(self, attrs, owner):
        kid = attrs.get("key")
        elem = f"<data key={kid!r}>"
        if owner is None:
            self._parent("data", _DATA_PARENTS)
        key = self.keys.get(kid)
        if key is None:
            what = "<data> without a 'key' attribute" if kid is None else f"unknown {elem}"
            self.fail(f"{what} on {self._owner_desc(owner)}; declare it with a <key> first", elem)
        if key.domain != owner[0] and key.domain != "all":
            self.fail(f"{elem} on {self._owner_desc(owner)} uses a key declared for {key.domain}", elem)
        return owner

    @staticmethod
    def _owner_desc(owner):
        what, ident, _ = owner
        if what == "node":
            return f"node {ident!r}"
        if what == "edge":
            return f"edge {ident[0]}-{ident[1]}"
        return ident

    def _end_data(self):
        key, owner, line = self.data
        chunks = self.text
        text = chunks[0] if len(chunks) == 1 else "".join(chunks)
        self.text = None
        self.parser.CharacterDataHandler = None
        self.stack.pop()
        name = key.name
        attrs = owner[2]
        if name is None or name in attrs or (name == "features" and owner[0] == "node"):
            return self._special_data(key, owner, line, text)
        try:
            attrs[name] = key.convert(text)
        except (ValueError, OverflowError):
            self._convert(key, text, f"<data key={key.id!r}> on {self._owner_desc(owner)}", f"<data key={key.id!r}>",
                          line)

    def _special_data(self, key, owner, line, text):
        if key.name is None:  # e.g. a yEd key without attr.name: not ours, skip
            return
        elem = f"<data key={key.id!r}>"
        desc = self._owner_desc(owner)
        if key.name in owner[2]:
            self.fail(f"{elem} on {desc}: attribute {key.name!r} is given twice", elem, line=line)
        owner[2][key.name] = self._features(text, desc, elem, line)

    def _convert(self, key, text, where, elem, line=None):
        try:
            return key.convert(text)
        except (ValueError, OverflowError):
            shown = text if len(text) <= 60 else text[:57] + "..."
            self.fail(f"{where} is {shown!r}, expected {key.expect}", elem, line=line)

    def _features(self, text, desc, elem, line):
        t = text.strip()
        if t.startswith("[") and t.endswith("]"):
            t = t[1:-1]
        try:
            return [float(x) for x in t.replace(",", " ").split()]
        except ValueError:
            bad = next(x for x in t.replace(",", " ").split() if not _is_float(x))
            shown = bad if len(bad) <= 40 else bad[:37] + "..."
            self.fail(f"{desc} has a non-numeric feature {shown!r} in {elem}", elem, line=line)

def _is_float(x):
    try:
        float(x)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- reading
def _parse(source, path, *, side=False, nodes=None, encoding=None):
    """Parse GraphML into records and map ids to keys. Returns (records, idmap, parser)."""
    reader = _Parser(path, side, encoding)
    rec = reader.run(source)
    lines = rec.node_line
    mode = rec.graph_attrs.pop(_RESERVED_GRAPH, None)
    if mode is not None and mode not in _KEY_TYPES:
        reader.fail(f"graph attribute node_key_type={mode!r}; expected 'int', 'str' or 'repr'", "<graph>",
                    line=reader.parser.CurrentLineNumber)
    if nodes is not None:
        resolve = _resolver(nodes)
        keys = []
        for nid in rec.node_ids:
            k = resolve(nid)
            if k is None:
                where = f"{path}: " if path else ""
                raise UnknownNodeError(
                    f"{where}line {lines[nid]}: node {nid!r} of the side-information file is not in the data graph",
                    node=nid,
                )
            keys.append(k)
    else:
        keys = _ids_to_keys(rec.node_ids, mode, reader.fail, lines)
    idmap = dict(zip(rec.node_ids, keys))
    for edges in (rec.data_edges, rec.constraints):
        for src, tgt, _, line in edges:
            for end in (src, tgt):
                if end not in idmap:
                    reader.fail(
                        f"edge {src}-{tgt} refers to node {end!r}, which no <node> declares",
                        f"<edge source={src!r} target={tgt!r}>", line=line,
                    )
    return rec, idmap, reader


def _build_graph(rec, idmap, reader):
    G = nx.Graph()
    G.graph.update(rec.graph_attrs)
    G.add_nodes_from(zip(map(idmap.__getitem__, rec.node_ids), rec.node_attrs))
    edges = rec.data_edges
    G.add_edges_from((idmap[s], idmap[t], a) for s, t, a, _ in edges)
    if G.number_of_edges() != len(edges):
        seen = {}
        for s, t, _, line in edges:
            u, v = idmap[s], idmap[t]
            first = seen.get((u, v)) or seen.get((v, u))
            if first is not None:
                reader.fail(
                    f"data edge {s}-{t} is given twice (first at line {first}); merge the two similarities",
                    f"<edge source={s!r} target={t!r}>", line=line,
                )
            seen[(u, v)] = line
    return G


def _side_from(rec, idmap):
    seeds = {idmap[n]: lab for n, (lab, _) in rec.seeds.items()}
    S = SideInfo(((idmap[s], idmap[t], w) for s, t, w, _ in rec.constraints), seeds=seeds or None)
    return S


def _source_name(path):
    if isinstance(path, (str, bytes, os.PathLike)):
        return os.fsdecode(path)
    return getattr(path, "name", None)


def _open_source(path):
    if hasattr(path, "read"):
        return path, False
    return _open_file(path), True


def _open_file(path):
    """``open(path, "rb")``, with a missing or unreadable file as a :class:`GraphMLError`
    naming it (Python's own error named nothing the CLI could print in one line)."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise GraphMLError(f"file {os.fsdecode(path)} does not exist", path=os.fsdecode(path)) from None
    except OSError as exc:
        raise GraphMLError(f"cannot read {os.fsdecode(path)}: {exc.strerror or exc}", path=os.fsdecode(path)) from None


def read_graphml(path, side=None):
    """Read a graphclust GraphML file: the data graph and its side information.

    Parameters
    ----------
    path : str, path-like or binary file object
        The GraphML file (format in :mod:`graphclust.io`).
    side : str, path-like or None, default=None
        A second file with more side information: GraphML (must/cannot edges or
        signed weights) or a CSV edge list (see :func:`read_side_info`). Its
        constraints and seeds are added to those of ``path``.

    Returns
    -------
    G : networkx.Graph
        The data graph: data edges with their attributes, node attributes
        (``features`` as a list of floats, ``truth``, ...), graph attributes.
    S : SideInfo
        Constraints (must/cannot edges, signed) and seeds (node attribute
        ``label``); empty if the file has none.

    Raises
    ------
    GraphMLError
        Malformed, truncated or unsafe XML (any DOCTYPE), a directed graph, an edge
        to an undeclared node, a duplicate node id, an unknown ``<data key>``, a
        value that does not parse as its type, a bad data-edge weight, a bad
        constraint, ragged or non-numeric features; with ``path``, ``line`` and
        ``element`` set. Also for the side file.
    UnknownNodeError
        The side file names a node that is not in the data graph.

    See Also
    --------
    parse_graphml : the same from a string.
    write_graphml : the inverse.

    Examples
    --------
    >>> import os, tempfile
    >>> import networkx as nx
    >>> from graphclust import SideInfo, write_graphml
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "path.graphml")
    ...     write_graphml(path, nx.path_graph(3), SideInfo.from_pairs(cannot=[(0, 2)]))
    ...     G, S = read_graphml(path)
    >>> sorted(G.edges), S.cannot_links()
    ([(0, 1), (1, 2)], [(0, 2, 1.0)])
    """
    name = _source_name(path)
    handle, close = _open_source(path)
    try:
        rec, idmap, reader = _parse(handle, name)
    finally:
        if close:
            handle.close()
    G = _build_graph(rec, idmap, reader)
    if side is None:
        return G, _side_from(rec, idmap)
    side_rec = _read_side_records(side, list(G.nodes))
    return G, _merge_side(rec, idmap, side_rec, _source_name(side))


def parse_graphml(data):
    """Read a graphclust GraphML document from a string or bytes.

    The string twin of :func:`read_graphml`; errors carry ``path=None``.

    Parameters
    ----------
    data : str or bytes
        The document. ``bytes`` honour the XML declaration's encoding; a ``str`` is
        taken as already decoded.

    Returns
    -------
    G : networkx.Graph
    S : SideInfo

    Raises
    ------
    GraphMLError
        As :func:`read_graphml`.

    Examples
    --------
    >>> G, S = parse_graphml('''<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
    ...   <key id="k" for="edge" attr.name="kind" attr.type="string"/>
    ...   <key id="w" for="edge" attr.name="weight" attr.type="double"/>
    ...   <graph edgedefault="undirected">
    ...     <node id="a"/> <node id="b"/> <node id="c"/>
    ...     <edge source="a" target="b"><data key="w">0.5</data></edge>
    ...     <edge source="b" target="c"><data key="k">cannot</data><data key="w">INF</data></edge>
    ...   </graph>
    ... </graphml>''')
    >>> list(G.edges(data=True)), S.edges()
    ([('a', 'b', {'weight': 0.5})], [('b', 'c', -inf)])
    """
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeError as exc:
            raise GraphMLError(f"the document is not valid text: {exc}", element="XML document") from None
        encoding = "utf-8"  # already decoded: ignore the declaration's encoding
    elif isinstance(data, (bytes, bytearray, memoryview)):
        data, encoding = bytes(data), None
    else:
        raise InvalidParameterError(f"parse_graphml takes str or bytes, got {type(data).__name__}")
    rec, idmap, reader = _parse(data, None, encoding=encoding)
    return _build_graph(rec, idmap, reader), _side_from(rec, idmap)


# ---------------------------------------------------------------------- side files
class _SideRecords:
    def __init__(self, constraints, seeds, path):
        self.constraints = constraints  # (u, v, signed w, line) over node keys
        self.seeds = seeds  # key -> (label, line)
        self.path = path


def _sniff_graphml(head):
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def _read_side_records(path, nodes):
    name = _source_name(path)
    with _open_file(path) as handle:
        head = handle.read(512)
        handle.seek(0)
        if _sniff_graphml(head):
            rec, idmap, _ = _parse(handle, name, side=True, nodes=nodes)
            return _SideRecords(
                [(idmap[s], idmap[t], w, line) for s, t, w, line in rec.constraints],
                {idmap[n]: v for n, v in rec.seeds.items()},
                name,
            )
        data = handle.read()
    return _SideRecords(_read_side_csv(data, name, nodes), {}, name)


def _merge_side(rec, idmap, side, side_path):
    where = f"{side_path}: " if side_path else ""
    main = {}
    for s, t, w, line in rec.constraints:
        main[(idmap[s], idmap[t])] = (w, line)
    edges = [(idmap[s], idmap[t], w) for s, t, w, _ in rec.constraints]
    for u, v, w, line in side.constraints:
        old = main.get((u, v)) or main.get((v, u))
        if old is not None and (old[0] > 0) != (w > 0):
            raise GraphMLError(
                f"{where}line {line}: pair {u!r}-{v!r} is a {'must' if w > 0 else 'cannot'}-link here but a "
                f"{'must' if old[0] > 0 else 'cannot'}-link in the graph file (line {old[1]})",
                path=side_path, line=line, element=f"constraint {u!r}-{v!r}",
            )
        edges.append((u, v, w))
    seeds = {idmap[n]: lab for n, (lab, _) in rec.seeds.items()}
    for u, (lab, line) in side.seeds.items():
        if u in seeds and seeds[u] != lab:
            raise GraphMLError(
                f"{where}line {line}: node {u!r} has seed label {lab!r} here but {seeds[u]!r} in the graph file",
                path=side_path, line=line, element=f"<node id={u!r}>",
            )
        seeds[u] = lab
    return SideInfo(edges, seeds=seeds or None)


def read_side_info(path, nodes=None):
    """Read side information alone, from GraphML or from a CSV edge list.

    The format is detected from the content (a file starting with ``<`` is GraphML).

    * GraphML: edges of ``kind`` must/cannot (strength ``|weight|``), or edges
      without ``kind`` whose ``weight`` is signed (default 1: a must-link); node
      attribute ``label`` gives seeds. Edges of kind ``data`` are refused.
    * CSV: a header ``u,v,weight`` (signed weights, ``inf``/``-inf`` for hard
      constraints) or ``u,v,kind[,weight]`` (``kind`` must/cannot, strength
      ``|weight|``, default 1); ``#`` starts a comment line, and the comment
      ``# node_key_type=repr`` (or ``str``, ``int``) says how to read node tokens.

    Parameters
    ----------
    path : str or path-like
    nodes : iterable or None, default=None
        The data graph's node keys. Tokens are matched to them by the graph's
        int/str/repr rule, and an unknown node raises :class:`UnknownNodeError`.
        ``None`` converts tokens on their own (all canonical integers: ints, else
        strings, unless ``node_key_type`` says otherwise).

    Returns
    -------
    SideInfo

    Raises
    ------
    GraphMLError
        Malformed file: bad header, wrong number of fields, a weight that is not a
        number, zero or NaN weight, unknown kind, a self-loop, a pair both must and
        cannot (the message names the line).
    UnknownNodeError
        A node not in ``nodes`` (the message names the node and the line).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "side.csv")
    ...     with open(path, "w") as f:
    ...         _ = f.write("u,v,kind,weight\\n0,1,must,2\\n1,2,cannot,inf\\n")
    ...     S = read_side_info(path, nodes=range(4))
    >>> S.edges()
    [(0, 1, 2.0), (1, 2, -inf)]
    """
    if nodes is not None:
        nodes = list(nodes)
    side = _read_side_records(path, nodes)
    seeds = {u: lab for u, (lab, _) in side.seeds.items()}
    return SideInfo(((u, v, w) for u, v, w, _ in side.constraints), seeds=seeds or None)
