"""Read and write clustering problems as GraphML, and side information as CSV.

A graphclust GraphML file holds one problem: the data graph *and* its side
information, in a single undirected ``<graph>``.

File format
-----------
Nodes
    ``<node id="...">``. Ids are strings in the file. On reading, node keys become
    ``int`` when **every** id in the file is a canonical decimal integer (``"0"``,
    ``"17"``, ``"-3"``; not ``"007"``, ``"+1"`` or ``"1.0"``), else they stay strings.
    The graph attribute ``node_key_type`` overrides that rule: ``"int"``, ``"str"``
    or ``"repr"``. With ``"repr"`` each id is the Python ``repr`` of the key and is
    restored with :func:`ast.literal_eval`, which is how tuple keys (grid pixels
    ``(row, col)``) and graphs mixing int and str keys are stored; the writer sets the
    attribute whenever the default rule would not restore the keys exactly.
Edges
    Edge attribute ``kind`` is ``"data"`` (the default when absent), ``"must"`` or
    ``"cannot"``; attribute ``weight`` is a double (default 1.0). Data edges form the
    networkx data graph ``G`` (``weight`` is a similarity: finite and >= 0).
    ``must``/``cannot`` edges form the :class:`~graphclust.SideInfo` ``S``: the
    strength is ``|weight|`` (``INF`` for a hard constraint), ``kind`` gives the
    sign; other attributes of a constraint edge are not kept. A pair may carry both a
    data edge and a constraint edge (GraphML allows parallel edges), but not two data
    edges, nor both a must-link and a cannot-link.
Node attributes
    ``features``: a numeric vector written as a whitespace-separated string
    (``"0.5 1.25"``); commas and a JSON-style ``"[0.5, 1.25]"`` are accepted on
    reading; it is read back as a list of floats. ``label``: the seed label of a node
    (it goes to ``S.seeds``, not to ``G``). ``truth``: ground-truth class, kept on
    ``G`` like any other attribute.
Other attributes
    Node, edge and graph attributes of GraphML type ``boolean``, ``int``, ``long``,
    ``float``, ``double`` or ``string`` round-trip with their types (Python
    ``bool``, ``int``, ``float``, ``str``). ``<default>`` values of ``<key>`` apply
    to elements without the attribute.

Side-information files (``read_graphml(..., side=path)``, :func:`read_side_info`)
are either GraphML (edges of kind ``must``/``cannot``, or edges without ``kind``
whose ``weight`` is signed: > 0 must-link, < 0 cannot-link) or CSV with a header
line: ``u,v,weight`` (signed weight) or ``u,v,kind[,weight]`` (``kind`` must/cannot,
strength ``|weight|``, default 1). Lines starting with ``#`` are comments;
``# node_key_type=repr`` (or ``str``/``int``) plays the role of the graph attribute.
Node tokens are matched to the data graph's node keys by the same int/str/repr
rule. Fields are stripped of surrounding blanks.

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

import ast
import csv
import io as _stdio
import math
import numbers
import os
import re
import warnings
from xml.parsers import expat

import networkx as nx
import numpy as np

from ._utils import atomic_write
from .errors import (
    GraphclustError,
    GraphMLError,
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    UnknownNodeError,
)
from .sideinfo import SideInfo

__all__ = ["read_graphml", "parse_graphml", "write_graphml", "read_side_info", "write_side_info_csv"]

_NS = "http://graphml.graphdrawing.org/xmlns"
_SEP = " "  # expat namespace separator: names arrive as "uri local"
_CANON_INT = re.compile(r"0|-?[1-9][0-9]*")
_KEY_TYPES = ("int", "str", "repr")
_DOMAINS = ("node", "edge", "graph", "all", "graphml", "hyperedge", "port", "endpoint")
_UNSUPPORTED = ("hyperedge", "port", "endpoint", "locator")
_RESERVED_GRAPH = "node_key_type"
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
        type_ = attrs.get("attr.type", "string")
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


# ---------------------------------------------------------------------- node keys
def _literal(token):
    """``ast.literal_eval`` that only ever raises ValueError."""
    try:
        value = ast.literal_eval(token)
        hash(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(token) from None
    return value


def _ids_to_keys(ids, mode, fail, lines):
    """Convert node id strings to keys under ``mode`` (None: the int/str rule)."""
    if mode is None:
        mode = "int" if all(map(_CANON_INT.fullmatch, ids)) else "str"
    if mode == "str":
        return list(ids)
    conv = int if mode == "int" else _literal
    keys = []
    for nid in ids:
        try:
            keys.append(conv(nid))
        except ValueError:
            expect = "an int" if mode == "int" else "a Python literal (node_key_type='repr')"
            fail(f"node id {nid!r} is not {expect}", f"<node id={nid!r}>", lines.get(nid))
    if mode == "repr" and len(set(keys)) != len(keys):
        seen = {}
        for nid, k in zip(ids, keys):
            if k in seen:
                fail(f"node ids {seen[k]!r} and {nid!r} both denote the key {k!r}", f"<node id={nid!r}>",
                     lines.get(nid))
            seen[k] = nid
    return keys


def _key_mode(nodes):
    """How keys are written: 'int' (all ints), 'str' (all strings) or 'repr'."""
    if all(isinstance(u, numbers.Integral) and not isinstance(u, (bool, np.bool_)) for u in nodes):
        return "int"
    if all(isinstance(u, str) for u in nodes):
        return "str"
    return "repr"


def _key_repr(k):
    """A ``repr`` of a node key that :func:`ast.literal_eval` restores exactly."""
    if isinstance(k, (bool, np.bool_)):
        return repr(bool(k))
    if isinstance(k, numbers.Integral):
        return str(int(k))
    if isinstance(k, numbers.Real):
        k = float(k)
        if not math.isfinite(k):
            raise ValueError(f"the node key {k!r} is not finite")
        return repr(k)
    if isinstance(k, (str, bytes)) or k is None:
        return repr(k)
    if isinstance(k, tuple):
        inner = ", ".join(_key_repr(x) for x in k)
        return f"({inner},)" if len(k) == 1 else f"({inner})"
    raise ValueError(f"node keys of type {type(k).__name__} cannot be written")


def _resolver(nodes):
    """Map a token from a side file to a node of ``nodes`` (or None)."""
    index = {u: u for u in nodes}
    mode = _key_mode(index)

    def resolve(token):
        if mode == "int":
            try:
                return index.get(int(token))
            except ValueError:
                return None
        if mode == "repr":
            try:
                found = index.get(_literal(token))
            except ValueError:
                found = None
            if found is not None:
                return found
        return index.get(token)

    return resolve


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
    return open(path, "rb"), True


def read_graphml(path, side=None):
    """Read a graphclust GraphML file: the data graph and its side information.

    Parameters
    ----------
    path : str, path-like or binary file object
        The GraphML file (format in the module docstring).
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
    >>> from graphclust import SideInfo
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
    with open(path, "rb") as handle:
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
    return _read_side_csv(data, name, nodes)


def _read_side_csv(data, path, nodes):
    where = f"{path}: " if path else ""

    def fail(message, line, element):
        raise GraphMLError(f"{where}line {line}: {message}", path=path, line=line, element=element)

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        fail(f"the CSV file is not UTF-8 text ({exc.reason})", line, "CSV row")
    state = {"line": 0, "mode": None}
    comment = re.compile(r"#\s*node_key_type\s*[=:]\s*(\S+)")

    def lines():
        for raw in text.splitlines(keepends=True):
            state["line"] += 1
            stripped = raw.strip()
            if stripped.startswith("#"):
                m = comment.match(stripped)
                if m:
                    if m.group(1) not in _KEY_TYPES:
                        fail(f"node_key_type={m.group(1)!r}; expected 'int', 'str' or 'repr'", state["line"],
                             stripped)
                    state["mode"] = m.group(1)
                continue
            yield raw

    reader = csv.reader(lines())
    header = None
    rows = []
    try:
        for row in reader:
            if not row or all(not c.strip() for c in row):
                continue
            if header is None:
                header = [c.strip().lower() for c in row]
                extra = header[2:]
                if len(header) not in (3, 4) or any(c not in ("weight", "kind") for c in extra) or (
                    len(set(extra)) != len(extra)
                ):
                    fail(
                        f"CSV header {','.join(row)!r}: expected u,v,weight or u,v,kind[,weight]",
                        state["line"], ",".join(row),
                    )
                continue
            rows.append((row, state["line"]))
    except csv.Error as exc:
        fail(f"malformed CSV ({exc})", state["line"], "CSV row")
    if header is None:
        fail("the CSV file has no header line (u,v,weight or u,v,kind[,weight])", state["line"], "CSV header")
    ncol = len(header)
    kcol = header.index("kind") if "kind" in header else None
    wcol = header.index("weight") if "weight" in header else None
    parsed = []
    pairs = {}
    for row, line in rows:
        elem = ",".join(row)
        if len(row) != ncol:
            fail(f"row {elem!r} has {len(row)} fields; the header has {ncol}", line, elem)
        u, v = row[0].strip(), row[1].strip()
        w = 1.0
        if wcol is not None:
            try:
                w = float(row[wcol])
            except ValueError:
                fail(f"row {elem!r}: weight {row[wcol].strip()!r} is not a number", line, elem)
        if kcol is not None:
            kind = row[kcol].strip().lower()
            if kind not in ("must", "cannot"):
                fail(f"row {elem!r}: kind {row[kcol].strip()!r}; expected 'must' or 'cannot'", line, elem)
            w = abs(w) if kind == "must" else -abs(w)
        if w == 0 or w != w:
            fail(f"constraint {u}-{v} has weight {w}; a constraint needs a non-zero strength", line, elem)
        if u == v:
            fail(f"constraint {u}-{v} joins node {u!r} to itself", line, elem)
        old = pairs.get((u, v)) or pairs.get((v, u))
        if old is None:
            pairs[(u, v)] = (w, line)
        elif (old[0] > 0) != (w > 0):
            fail(f"pair {u}-{v} is both a must-link and a cannot-link (the other one at line {old[1]})", line, elem)
        parsed.append((u, v, w, line))
    if nodes is not None:
        resolve = _resolver(nodes)
        out = []
        for u, v, w, line in parsed:
            ku, kv = resolve(u), resolve(v)
            for tok, k in ((u, ku), (v, kv)):
                if k is None:
                    kind = "must-link" if w > 0 else "cannot-link"
                    raise UnknownNodeError(
                        f"{where}line {line}: node {tok!r} in {kind} {u}-{v} is not in the data graph",
                        node=tok, constraint=(u, v),
                    )
            out.append((ku, kv, w, line))
        return _SideRecords(out, {}, path)
    tokens = list(dict.fromkeys(t for u, v, _, _ in parsed for t in (u, v)))
    first_line = {}
    for u, v, _, line in parsed:
        first_line.setdefault(u, line)
        first_line.setdefault(v, line)

    def key_fail(message, element, line):
        fail(message, line, element)

    keys = dict(zip(tokens, _ids_to_keys(tokens, state["mode"], key_fail, first_line)))
    return _SideRecords([(keys[u], keys[v], w, line) for u, v, w, line in parsed], {}, path)


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


# ---------------------------------------------------------------------- writing
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


def _side_argument(S):
    if S is None:
        return SideInfo()
    if isinstance(S, SideInfo):
        return S
    if isinstance(S, nx.Graph):
        return SideInfo.from_graph(S)
    raise InvalidParameterError(f"S must be a SideInfo, a networkx graph or None, got {type(S).__name__}")


def write_graphml(path, G, S=None, labels=None, *, label_name="cluster"):
    """Write a data graph, its side information and optional labels as GraphML.

    Data edges get ``kind="data"``, constraints ``kind="must"``/``"cannot"`` with
    ``weight`` = strength (``INF`` when hard), seeds the node attribute ``label``,
    and ``labels`` the node attribute ``label_name``. Node keys that are not all
    ints or all strings are written as their ``repr`` with the graph attribute
    ``node_key_type="repr"`` (format in the module docstring). The file is written
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


def _node_tokens(nodes, mode, path):
    """How each node key is written under the key mode (``int``, ``str`` or ``repr``)."""
    if mode == "int":
        return {u: str(int(u)) for u in nodes}
    if mode == "str":
        return {u: u for u in nodes}
    token = {}
    for u in nodes:
        try:
            token[u] = _key_repr(u)
        except ValueError as exc:
            raise GraphMLError(f"node {u!r} cannot be written: {exc}", path=path, element=f"node {u!r}") from None
    return token


def write_side_info_csv(path, S):
    """Write the constraints of ``S`` as a CSV edge list ``u,v,kind,weight``.

    ``kind`` is must/cannot and ``weight`` the strength (``inf`` when hard); node
    keys are written as ints, strings, or (for other keys, and strings with
    surrounding blanks) their ``repr`` with a leading comment
    ``# node_key_type=repr`` (see :func:`read_side_info`). Seeds are not stored
    (a warning says so): use :func:`write_graphml` to keep them. The write is atomic.

    Parameters
    ----------
    path : str or path-like
    S : SideInfo or networkx.Graph

    Examples
    --------
    >>> import os, tempfile
    >>> from graphclust import SideInfo
    >>> S = SideInfo.from_pairs(must=[("a", "b")], cannot=[("b", "c", float("inf"))])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "side.csv")
    ...     write_side_info_csv(path, S)
    ...     print(open(path).read(), end="")
    ...     S2 = read_side_info(path)
    u,v,kind,weight
    a,b,must,1.0
    b,c,cannot,inf
    >>> S2 == S
    True
    """
    S = _side_argument(S)
    if S.seeds:
        warnings.warn(
            "write_side_info_csv stores constraints only; the seeds are not written (use write_graphml)",
            UserWarning, stacklevel=2,
        )
    edges = S.edges()
    nodes = list(dict.fromkeys(x for u, v, _ in edges for x in (u, v)))
    mode = _key_mode(nodes)
    if mode == "str" and any(u != u.strip() for u in nodes):
        mode = "repr"  # the reader strips blanks around fields; quote such keys
    token = _node_tokens(nodes, mode, os.fsdecode(path))
    buf = _stdio.StringIO()
    if mode == "repr" or (mode == "str" and nodes and all(map(_CANON_INT.fullmatch, nodes))):
        buf.write(f"# node_key_type={mode}\n")
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["u", "v", "kind", "weight"])
    out.writerows(
        (token[u], token[v], "must" if x > 0 else "cannot", "inf" if math.isinf(x) else repr(abs(float(x))))
        for u, v, x in edges
    )
    with atomic_write(path, "wb") as handle:
        handle.write(buf.getvalue().encode("utf-8"))
