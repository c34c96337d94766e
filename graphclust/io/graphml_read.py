"""Read graphclust GraphML: the data graph and its side information.

:func:`read_graphml` reads a file and :func:`parse_graphml` a string; :func:`read_problem`
reads a file straight into a :class:`~graphclust.Problem`, with the same parser, without
building a networkx graph. :func:`read_side_info` reads a side-information file
alone, GraphML or CSV: it tells them apart by their content, so it lives here beside
the GraphML parser, and the CSV rows are read by :mod:`graphclust.io.side_csv`. The
format is described in :mod:`graphclust.io`.

Security
--------
Files are parsed with :mod:`xml.parsers.expat` and any ``<!DOCTYPE ...>`` is refused
as soon as it starts, so entity declarations ("billion laughs"), external entities
and external DTDs are never processed, expanded or fetched; GraphML never needs them.

Not supported (refused with a :class:`~graphclust.errors.GraphMLError`): directed
graphs, several or nested graphs, hyperedges, ports. Elements of other namespaces
(for example yEd's graphics) and ``<desc>`` are skipped. Every error names the file,
the line and the element at fault.

Memory
------
The file is read in a single streaming pass, and what is kept is compact: each node id
once, data edges in flat arrays (node indices, weight, line), and a ``features``
value parsed a chunk at a time as it arrives into a C array of doubles, so its text is
never held whole. The peak is therefore the returned networkx graph plus a small
overhead; :func:`read_problem` turns the same records into arrays instead, which cost
less than the file; figures are in ``docs/graphml.md``. A :class:`MemoryError` becomes a :class:`GraphMLError` that
says memory ran out and names the element being read.
"""

import math
import os
from array import array
from itertools import chain
from xml.parsers import expat

import networkx as nx
import numpy as np

from ..errors import GraphclustError, GraphMLError, InvalidGraphError, InvalidParameterError, UnknownNodeError
from ..problem import Problem, _checked, _edge_list_csr, _feature_rows, _to_float
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


_NO_WEIGHT = math.nan  # in _Records.weight: the data edge has no weight (a NaN weight is refused)
_CHUNK = 1 << 18  # characters of a features value parsed at a time
_NARROW = 1 << 32  # indices and lines below this fit the 4-byte arrays ("I"); past it they widen to "q"


class _Records:
    """What a parse produced, before node ids become keys.

    Memory: every node id string is kept once, in ``names``, and nodes and edges refer
    to it by its index (its position in ``names``). Data edges are kept in flat arrays
    (4 bytes for an index or a line, 8 for a weight); only an edge with attributes
    other than one float ``weight`` keeps its attribute dict (in ``extra``).
    """

    def __init__(self):
        self.graph_attrs = {}
        self.index = {}  # id -> index
        self.names = []  # index -> id
        self.declared = array("I")  # index -> line of its <node>, 0 while no <node> declares it
        self.node_order = array("I")  # the indices of the declared nodes, in file order
        self.in_order = True  # node_order is 0, 1, 2, ...: no edge named a node before its <node>
        self.node_attrs = []  # per declared node: its attribute dict, or None when it has none
        self.seeds = {}  # index -> (label, line)
        self.source = array("I")  # data edges: source index
        self.target = array("I")  # target index
        self.weight = array("d")  # float weight, or _NO_WEIGHT
        self.edge_line = array("I")
        self.extra = {}  # data edge position -> attribute dict, for the edges that need one
        self.constraints = []  # (src index, tgt index, signed w, line)
        self.pairs = {}  # (src index, tgt index) -> (signed w, line), for must/cannot clashes

    def clear(self):
        self.__init__()

    def widen(self):
        """Past 2**32 - 1 nodes or lines: 8-byte arrays."""
        for name in ("declared", "node_order", "source", "target", "edge_line"):
            setattr(self, name, array("q", getattr(self, name)))

    def intern(self, nid):
        i = self.index.get(nid)
        if i is None:
            i = self.index[nid] = len(self.names)
            if i >= _NARROW and self.source.typecode == "I":
                self.widen()
            self.names.append(nid)
            self.declared.append(0)
        return i

    def add_data_edge(self, src, tgt, attrs, line):
        i = len(self.edge_line)
        if line >= _NARROW and self.source.typecode == "I":
            self.widen()
        self.source.append(self.intern(src))
        self.target.append(self.intern(tgt))
        self.edge_line.append(line)
        w = attrs.get("weight") if len(attrs) == 1 else None
        if type(w) is float:
            self.weight.append(w)
        else:
            self.weight.append(_NO_WEIGHT)
            if attrs:
                self.extra[i] = attrs

    def data_edges(self, keys):
        """``(u, v, attrs)`` for each data edge, in file order, with node keys.

        Gives up the arrays (a block at a time) and the dicts in ``extra`` as it goes,
        so that their memory goes back while the graph that holds the edges grows.
        """
        source, target, weight, extra = self.source, self.target, self.weight, self.extra
        block = max(1 << 16, len(weight) // 16)
        key = keys.__getitem__
        i = 0
        while weight:
            us, vs, ws = list(map(key, source[:block])), list(map(key, target[:block])), weight[:block]
            del source[:block], target[:block], weight[:block]
            for u, v, w in zip(us, vs, ws):
                if w == w:
                    yield u, v, {"weight": w}
                elif extra:
                    yield u, v, extra.pop(i, {})
                else:
                    yield u, v, {}
                i += 1


class _FeatureText:
    """Reads a ``features`` value as it streams in, a chunk of text at a time.

    The same rule as splitting the whole text: strip it; a value that starts with
    ``[`` and ends with ``]`` loses both; commas and whitespace separate the numbers;
    each is read by ``float``. The numbers go straight into a C array of doubles
    (:class:`array.array`, grown in place by ``realloc``), 8 bytes a number and no
    Python float kept, and come back as a float64 ndarray over that array, not a
    copy. Memory is that array plus one chunk of text: the value's text is never
    held whole. Within a chunk, a number written many times (``0.0 1.0 0.0 ...``) is
    converted once.
    """

    __slots__ = ("values", "parts", "size", "limit", "lead", "first", "bad")

    def __init__(self):
        self.values = array("d")
        self.parts = []  # text not yet parsed: it ends with the last token seen, whole or not
        self.size = 0  # characters in parts
        self.limit = _CHUNK
        self.lead = None  # the value's first non-blank character, once seen
        self.first = None  # the first token, when it starts with "[" (kept until the end tells)
        self.bad = None  # the first token that is not a number (after the first)

    def feed(self, text):
        self.parts.append(text)
        self.size += len(text)
        if self.size >= self.limit:
            self._consume("".join(self.parts))

    def _start(self, buf):
        """Skip the value's leading blanks and note its first character (until one is seen)."""
        if self.lead is None:
            buf = buf.lstrip()
            if buf:
                self.lead = buf[0]
        return buf

    def _consume(self, buf):
        buf = self._start(buf)
        flat = buf.replace(",", " ")
        parts = flat.rsplit(None, 1)
        if len(parts) == 2:  # parse the complete tokens; keep the last one, which may go on
            cut = len(parts[0])
            keep = buf[cut:]
            self._take(flat[:cut].split())
        elif parts:  # one token so far: keep it whole
            keep = buf
        else:  # blanks and commas: only the last character matters (is it a comma?)
            keep = buf.rstrip()[-1:]
        self.parts, self.size = [keep], len(keep)
        self.limit = max(_CHUNK, 2 * len(keep))  # a token longer than a chunk: no quadratic rejoin

    def _take(self, tokens):
        if self.first is None and self.lead == "[" and tokens:
            self.first = tokens.pop(0)  # "[1": a number only if the value ends with "]"
        if self.bad is not None or not tokens:
            return
        values = self.values
        try:
            if len(tokens) > 256 and 2 * len(set(tokens[:2048])) <= min(len(tokens), 2048):
                once = dict.fromkeys(tokens)
                for t in once:
                    once[t] = float(t)
                values.extend(map(once.__getitem__, tokens))
            else:
                values.extend(map(float, tokens))
        except ValueError:
            self.bad = next(x for x in tokens if not _is_float(x))

    def finish(self):
        """``(values, None)``, values a float64 ndarray, or ``(None, token)`` for the first
        token that is not a number."""
        buf = self._start("".join(self.parts))
        self.parts = None
        tokens = buf.replace(",", " ").split()
        if self.first is None and self.lead == "[" and tokens:
            self.first = tokens.pop(0)
        taken = self.first is not None
        if taken and self.lead == "[" and buf.rstrip().endswith("]"):  # "[1 2 3]": strip the brackets
            first = self.first[1:]
            if tokens:
                tokens[-1] = tokens[-1][:-1]
                if not tokens[-1]:
                    tokens.pop()
            elif first:
                first = first[:-1]
            self.first = first
        self._take(tokens)
        if taken:
            first = self.first
            if first:
                if not _is_float(first):
                    return None, first
                self.values.insert(0, float(first))
        if self.bad is not None:
            return None, self.bad
        values, self.values = self.values, None
        return np.frombuffer(values, dtype=np.float64), None


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
        out_of_memory = False
        try:
            if isinstance(source, (bytes, bytearray, memoryview)):
                self.parser.Parse(bytes(source), True)
            else:
                self.parser.ParseFile(source)
        except GraphclustError:
            raise
        except MemoryError:  # raised below, once the except clause has let go of the traceback's frames
            out_of_memory = True
        except expat.ExpatError as exc:
            element = f"<{self.stack[-1]}>" if self.stack else "XML document"
            codes = expat.errors.codes
            if exc.code == codes[expat.errors.XML_ERROR_NO_MEMORY]:
                out_of_memory = True
            else:
                if exc.code == codes[expat.errors.XML_ERROR_NO_ELEMENTS] or (
                    exc.code == codes[expat.errors.XML_ERROR_UNCLOSED_TOKEN] and self.stack
                ):
                    msg = "unexpected end of file: the document is empty or truncated"
                else:
                    msg = f"malformed XML ({expat.ErrorString(exc.code)}, column {exc.offset})"
                self.fail(msg, element, line=exc.lineno)
        except (LookupError, UnicodeError, ValueError, OverflowError) as exc:
            self.fail(f"cannot decode the document: {exc}", "XML declaration")
        if out_of_memory:
            self._out_of_memory()
        if not self.seen_graph:
            self.fail("no <graph> element; a GraphML file must contain one undirected <graph>", "<graphml>")
        return self.rec

    def _out_of_memory(self):
        """Fail with a GraphMLError that names what was being read when memory ran out."""
        top = self.stack[-1] if self.stack else None
        line = None
        if top == "data":
            key, owner, line = self.data
            element = f"<data key={key.id!r}>"
            what = f"{element} on {self._owner_desc(owner)}"
        elif top == "node":
            element = what = f"<node id={self.owner[1]!r}>"
        elif top == "edge":
            src, tgt, line = self.owner[1]
            element = what = f"<edge source={src!r} target={tgt!r}>"
        elif top in ("key", "default"):
            element = f"<key id={self.pending_key.id!r}>"
            what = element if top == "key" else f"the <default> of {element}"
        elif top is not None:
            element = what = f"<{top}>"
        else:
            element, what = "XML document", "the XML document"
        self.text = self.data = self.owner = None
        self.rec.clear()  # let go of what was read, before the error travels up
        self.fail(f"ran out of memory (MemoryError) while reading {what}", element, line=line)

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
        self.owner = ("node", nid, {})
        self.stack.append("node")
        rec = self.rec
        i = rec.intern(nid)
        if rec.declared[i]:
            self.fail(f"duplicate node id {nid!r} (first declared at line {rec.declared[i]})",
                      f"<node id={nid!r}>")
        rec.declared[i] = self.parser.CurrentLineNumber
        if i != len(rec.node_order):
            rec.in_order = False
        rec.node_order.append(i)

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
        rec = self.rec
        if "label" in attrs:
            rec.seeds[rec.node_order[-1]] = (attrs.pop("label"), self.parser.CurrentLineNumber)
        rec.node_attrs.append(attrs or None)
        self.owner = ("graph", "the graph", rec.graph_attrs)
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
                number = self._number(w, src, tgt, line)
                if isinstance(w, str):  # a weight key typed "string": a similarity all the same
                    attrs["weight"] = number
                w = number
                if not 0.0 <= w < math.inf:
                    self._edge_fail(
                        f"data edge {src}-{tgt} has weight {w}; similarities must be finite and >= 0",
                        src, tgt, line,
                    )
            rec.add_data_edge(src, tgt, attrs, line)
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
            s, t = rec.intern(src), rec.intern(tgt)
            old = rec.pairs.get((s, t)) or rec.pairs.get((t, s))
            if old is None:
                rec.pairs[(s, t)] = (w, line)
            elif (old[0] > 0) != (w > 0):
                self._edge_fail(
                    f"pair {src}-{tgt} is both a must-link and a cannot-link (the other one at line {old[1]})",
                    src, tgt, line,
                )
            rec.constraints.append((s, t, w, line))
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
        if key.name == "features" and owner[0] == "node" and "features" not in owner[2]:
            self.text = _FeatureText()  # streamed: a features value may be hundreds of MB
            self.parser.CharacterDataHandler = self.text.feed
        else:
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
        self.text = None
        self.parser.CharacterDataHandler = None
        name = key.name
        attrs = owner[2]
        if type(chunks) is _FeatureText:
            values, bad = chunks.finish()
            if values is None:
                elem = f"<data key={key.id!r}>"
                shown = bad if len(bad) <= 40 else bad[:37] + "..."
                self.fail(f"{self._owner_desc(owner)} has a non-numeric feature {shown!r} in {elem}", elem, line=line)
            attrs[name] = values
        else:
            text = chunks[0] if len(chunks) == 1 else "".join(chunks)
            del chunks
            if name is None or name in attrs:
                self._special_data(key, owner, line, text)
            else:
                try:
                    attrs[name] = key.convert(text)
                except (ValueError, OverflowError):
                    self._convert(key, text, f"<data key={key.id!r}> on {self._owner_desc(owner)}",
                                  f"<data key={key.id!r}>", line)
        self.stack.pop()

    def _special_data(self, key, owner, line, text):
        if key.name is None:  # e.g. a yEd key without attr.name: not ours, skip
            return
        elem = f"<data key={key.id!r}>"
        self.fail(f"{elem} on {self._owner_desc(owner)}: attribute {key.name!r} is given twice", elem, line=line)

    def _convert(self, key, text, where, elem, line=None):
        try:
            return key.convert(text)
        except (ValueError, OverflowError):
            shown = text if len(text) <= 60 else text[:57] + "..."
            self.fail(f"{where} is {shown!r}, expected {key.expect}", elem, line=line)


def _is_float(x):
    try:
        float(x)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- reading
class _Lines:
    """``id -> line of its <node>`` over the records, for the messages of :func:`_ids_to_keys`."""

    def __init__(self, rec):
        self.rec = rec

    def get(self, nid):
        i = self.rec.index.get(nid)
        return self.rec.declared[i] if i is not None else None


def _parse(source, path, *, side=False, nodes=None, encoding=None):
    """Parse GraphML into records and map ids to keys.

    Returns ``(records, keys, parser)``, where ``keys[i]`` is the node key of the id of
    index ``i`` (``records.names[i]``).
    """
    reader = _Parser(path, side, encoding)
    rec = reader.run(source)
    reader.data = reader.owner = None  # the last <data> and its owner's attributes: the parser is in a cycle
    mode = rec.graph_attrs.pop(_RESERVED_GRAPH, None)
    if mode is not None and mode not in _KEY_TYPES:
        reader.fail(f"graph attribute node_key_type={mode!r}; expected 'int', 'str' or 'repr'", "<graph>",
                    line=reader.parser.CurrentLineNumber)
    names, declared = rec.names, rec.declared
    ids = [names[i] for i in rec.node_order]
    if nodes is not None:
        resolve = _resolver(nodes)
        keys = []
        for nid in ids:
            k = resolve(nid)
            if k is None:
                where = f"{path}: " if path else ""
                raise UnknownNodeError(
                    f"{where}line {declared[rec.index[nid]]}: node {nid!r} of the side-information file is not "
                    "in the data graph", node=nid,
                )
            keys.append(k)
    else:
        keys = _ids_to_keys(ids, mode, reader.fail, _Lines(rec))
    del ids
    if len(keys) != len(names):  # an edge names a node that no <node> declares
        _undeclared(rec, reader)
    if not rec.in_order:  # an edge named a node before its <node>
        by_index = [None] * len(names)
        for i, k in zip(rec.node_order, keys):
            by_index[i] = k
        keys = by_index
    rec.index = None  # no longer needed
    if nodes is None and mode in (None, "str"):
        rec.names = None  # each id is str(its key): no need to keep both
    return rec, keys, reader


def _undeclared(rec, reader):
    names, declared = rec.names, rec.declared
    constraints = ((s, t, line) for s, t, _, line in rec.constraints)
    for s, t, line in chain(zip(rec.source, rec.target, rec.edge_line), constraints):
        for end in (s, t):
            if not declared[end]:
                src, tgt = names[s], names[t]
                reader.fail(
                    f"edge {src}-{tgt} refers to node {names[end]!r}, which no <node> declares",
                    f"<edge source={src!r} target={tgt!r}>", line=line,
                )


def _build_graph(rec, keys, reader):
    G = nx.Graph()
    G.graph.update(rec.graph_attrs)
    G.add_nodes_from(_node_items(rec, keys))
    rec.node_attrs = rec.node_order = rec.declared = None
    _refuse_repeats(rec, keys, reader)
    rec.edge_line = None
    G.add_edges_from(rec.data_edges(keys))
    return G


def _refuse_repeats(rec, keys, reader):
    """Fail on the first data edge that joins the pair of an earlier one."""
    dup = _first_repeat(rec)
    if dup is not None:
        j, i = dup
        s, t = rec.source[i], rec.target[i]
        src, tgt = (str(keys[s]), str(keys[t])) if rec.names is None else (rec.names[s], rec.names[t])
        reader.fail(
            f"data edge {src}-{tgt} is given twice (first at line {rec.edge_line[j]}); merge the two "
            "similarities", f"<edge source={src!r} target={tgt!r}>", line=rec.edge_line[i],
        )


def _first_repeat(rec):
    """``(j, i)``: data edge ``i`` is the first to join the pair of an earlier edge, ``j``
    (the first edge on that pair); None when no pair has two data edges.

    Sorts the pairs (numpy, about 40 bytes an edge for a moment, before the graph
    exists) rather than keeping a set of them."""
    if len(rec.source) < 2:
        return None
    dtype = np.uint32 if rec.source.typecode == "I" else np.int64
    s = np.frombuffer(rec.source, dtype=dtype).astype(np.int64)
    t = np.frombuffer(rec.target, dtype=dtype).astype(np.int64)
    lo, hi = np.minimum(s, t), np.maximum(s, t)
    del s, t
    order = np.lexsort((hi, lo))  # stable: on each pair, the edges in file order
    lo, hi = lo[order], hi[order]
    repeat = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1])
    del lo, hi
    if not repeat.any():
        return None
    at = np.flatnonzero(repeat)  # order[at + 1] repeats the pair of order[at]
    i = int(order[at + 1].min())
    k = int(at[np.argmax(order[at + 1] == i)])
    while k > 0 and repeat[k - 1]:  # back to the pair's first edge
        k -= 1
    return int(order[k]), i


def _node_items(rec, keys):
    """``key`` or ``(key, attrs)`` for each node in file order, letting go of the parse's dicts."""
    attrs = rec.node_attrs
    for j, i in enumerate(rec.node_order):
        a = attrs[j]
        if a is None:
            yield keys[i]
        else:
            attrs[j] = None
            yield keys[i], a


def _out_of_memory(what, counts, rec, path):
    """The GraphMLError for a MemoryError after the parse (raised outside the except clause)."""
    nodes, edges = counts
    rec.clear()
    where = f"{path}: " if path else ""
    return GraphMLError(
        f"{where}ran out of memory (MemoryError) while {what} ({nodes} nodes, {edges} data edges read)",
        path=path, element="<graph>",
    )


def _graph_and_side(rec, keys, reader, side=None):
    """The networkx graph and the SideInfo of the records (with a side file's records merged)."""
    counts = len(rec.node_order), len(rec.edge_line)
    try:
        G = _build_graph(rec, keys, reader)
    except MemoryError:
        G = None
    if G is None:
        raise _out_of_memory("building the networkx graph", counts, rec, reader.path)
    return G, _side_info(rec, keys, reader, counts, side, list(G.nodes))


def _side_info(rec, keys, reader, counts, side, nodes):
    """The SideInfo of the records, with a side file's merged in (its node ids checked
    against ``nodes``); running out of memory is a GraphMLError saying so."""
    if side is not None:
        return _merge_side(rec, keys, _read_side_records(side, nodes), _source_name(side))
    try:
        return _side_from(rec, keys)
    except MemoryError:
        pass  # raised outside the handler, so the failed frame is let go first
    raise _out_of_memory("building the side information", counts, rec, reader.path)


def _side_from(rec, keys):
    seeds = {keys[i]: lab for i, (lab, _) in rec.seeds.items()}
    S = SideInfo(((keys[s], keys[t], w) for s, t, w, _ in rec.constraints), seeds=seeds or None)
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
        (``features`` as a float64 ndarray, ``truth``, ...), graph attributes.

        .. versionchanged:: Unreleased
           ``features`` is a float64 ndarray (it was a list of floats): 8 bytes a
           number, so a large vector costs about what its text does or less.
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
        ``element`` set. Also for the side file, and when memory runs out (the
        message says so and names the element being read).
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
    return _graph_and_side(*_parse_path(path), side)


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
    rec, keys, reader = _parse(data, None, encoding=encoding)
    return _graph_and_side(rec, keys, reader)


# ---------------------------------------------------------------------- Problem
def _problem_and_side(rec, keys, reader, side=None, *, features=True, allow_empty=False):
    """``(Problem, SideInfo, n_data_edges)`` of the records, with no networkx graph:
    what :meth:`Problem.from_graph` gives for the graph :func:`_graph_and_side` builds.
    ``features=False`` leaves ``X`` None (unchecked); ``allow_empty`` returns a Problem
    of no nodes where :meth:`Problem.from_graph` refuses one (``graphclust check``)."""
    counts = len(rec.node_order), len(rec.edge_line)
    n_edges = counts[1]
    _refuse_repeats(rec, keys, reader)
    rec.edge_line = None
    try:
        in_order = rec.in_order
        nodes = keys if in_order else [keys[i] for i in rec.node_order]
        # each node's features (the float64 arrays of the parse), letting go of the dicts
        attrs, rec.node_attrs = rec.node_attrs, None
        values = [None if a is None else a.get("features") for a in attrs] if features else None
        del attrs
        if not in_order:  # node numbers (order of first mention) -> rows (order of <node>)
            row = np.empty(len(nodes), dtype=np.int64)
            row[np.frombuffer(rec.node_order, dtype=_array_dtype(rec))] = np.arange(len(nodes))
        rec.node_order = rec.declared = None
    except MemoryError:
        nodes = None
    if nodes is None:
        raise _out_of_memory("building the Problem", counts, rec, reader.path)
    S = _side_info(rec, keys, reader, counts, side, nodes)
    n = len(nodes)
    if n == 0 and not allow_empty:
        raise InvalidGraphError("the data graph is empty: it has no nodes")  # Problem.from_graph's words
    try:
        W = _records_csr(rec, nodes, None if in_order else row, n)
        rec.clear()
        X = _features_matrix(nodes, values) if features else None
        del values
    except MemoryError:
        W = None
    if W is None:
        raise _out_of_memory("building the Problem", counts, rec, reader.path)
    P = Problem(nodes=nodes, W=W, X=X)
    return P.with_side_info(S), S, n_edges


def _features_matrix(nodes, values):
    """The feature matrix of the nodes' ``features`` arrays (``values``, emptied as it
    is read), as :meth:`Problem.from_graph` makes it: each array is copied into its row
    and let go, so the peak is about one matrix, not two; one node's array becomes the
    matrix as it is. Anything else (a node without features, a non-finite number) goes
    to the check :meth:`Problem.from_graph` uses, for the same error."""
    if not values or not all(type(v) is np.ndarray for v in values):
        return _feature_rows(nodes, values, "features")
    if len(values) == 1:
        X = values.pop().reshape(1, -1)
    else:
        X = np.empty((len(values), len(values[0])))
        for i in range(len(values)):
            X[i] = values[i]
            values[i] = None
    if not np.isfinite(X).all():
        return _feature_rows(nodes, list(X), "features")
    return X


def _array_dtype(rec):
    return np.uint32 if rec.source.typecode == "I" else np.int64


def _records_csr(rec, nodes, row, n):
    """The similarity CSR of the data edges in the flat arrays of the records."""
    dtype = _array_dtype(rec)
    rows = np.frombuffer(rec.source, dtype=dtype).astype(np.int64)
    cols = np.frombuffer(rec.target, dtype=dtype).astype(np.int64)
    if row is not None:
        rows, cols = row[rows], row[cols]
    vals = np.array(rec.weight, dtype=np.float64)
    rec.source = rec.target = rec.weight = None
    gaps = np.flatnonzero(np.isnan(vals))  # no float weight: unweighted, or other attributes
    if gaps.size:
        extra = rec.extra
        ws = [extra.get(int(i), {}).get("weight", 1.0) for i in gaps]
        vals[gaps] = _checked(_to_float(ws), rows[gaps], cols[gaps], nodes)
    return _edge_list_csr(rows, cols, vals, n)


def read_problem(path, side=None):
    """Read a graphclust GraphML file straight into a :class:`~graphclust.Problem`.

    The arrays :meth:`Problem.from_graph(*read_graphml(path, side)) <graphclust.Problem.from_graph>`
    would hold, without building the networkx graph in between: the same streaming
    parse as :func:`read_graphml`, whose flat edge arrays become the CSR similarity
    matrix and whose per-node ``features`` arrays become the feature matrix. Use it for
    large files: a networkx graph costs about 320 bytes an edge, more than the file
    itself, and this reader stays within 3 times the file size where
    :func:`read_graphml` cannot (``docs/graphml.md``, "Memory").

    Parameters
    ----------
    path : str, path-like or binary file object
        The GraphML file (format in :mod:`graphclust.io`).
    side : str, path-like or None, default=None
        More side information, GraphML or CSV, as in :func:`read_graphml`.

    Returns
    -------
    problem : Problem
        Nodes in file order (keys by the int/str/repr rule), ``W`` the data edges'
        weights (missing: 1; zero weights and self loops dropped), ``X`` the
        ``features`` (None when no node has them), the constraints of the file and
        of ``side`` as its constraint arrays. ``problem.graph`` is None.
    S : SideInfo
        The same constraints by node key, with the seeds (node attribute ``label``):
        what :func:`read_graphml` returns, for :meth:`SideInfo.check`, writing back
        or an estimator's ``fit(problem, S)``.

    Raises
    ------
    GraphMLError, UnknownNodeError
        As :func:`read_graphml`, with the same messages (file, line, element).
    InvalidGraphError, InvalidFeaturesError
        As :meth:`Problem.from_graph`: an empty graph, features on some nodes only,
        non-finite features.

    Notes
    -----
    Only what a Problem holds is kept: node attributes other than ``features``
    (``truth``, ...), edge attributes other than ``weight`` and graph attributes are
    read and checked but not returned; use :func:`read_graphml` for them.

    See Also
    --------
    read_graphml : the data graph as networkx, with every attribute.
    Problem.from_graph : the same arrays from a networkx graph.

    Examples
    --------
    >>> import os, tempfile
    >>> import networkx as nx
    >>> from graphclust import SideInfo, write_graphml
    >>> G = nx.path_graph(3)
    >>> nx.set_node_attributes(G, {0: [0.0, 1.0], 1: [0.5, 1.0], 2: [3.0, 0.0]}, "features")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "path.graphml")
    ...     write_graphml(path, G, SideInfo.from_pairs(cannot=[(0, 2)]))
    ...     P, S = read_problem(path)
    >>> P
    Problem(n_nodes=3, n_edges=2, n_features=2, n_must=0, n_cannot=1)
    >>> P.X[2].tolist(), P.constraints.tolist(), S.cannot_links()
    ([3.0, 0.0], [[0, 2]], [(0, 2, 1.0)])
    """
    return _read_problem(path, side)[:2]


def _read_problem(path, side=None, **options):
    """:func:`read_problem` and the number of data edges (what ``G.number_of_edges()``
    would say: self loops and zero weights included, unlike ``problem.n_edges``);
    ``options`` go to :func:`_problem_and_side`."""
    return _problem_and_side(*_parse_path(path), side, **options)


def _parse_path(path):
    """``(records, keys, reader)`` of the GraphML file (or binary file object) ``path``."""
    name = _source_name(path)
    handle, close = _open_source(path)
    try:
        return _parse(handle, name)
    finally:
        if close:
            handle.close()


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
            rec, keys, _ = _parse(handle, name, side=True, nodes=nodes)
            return _SideRecords(
                [(keys[s], keys[t], w, line) for s, t, w, line in rec.constraints],
                {keys[i]: v for i, v in rec.seeds.items()},
                name,
            )
        data = handle.read()
    return _SideRecords(_read_side_csv(data, name, nodes), {}, name)


def _merge_side(rec, keys, side, side_path):
    where = f"{side_path}: " if side_path else ""
    main = {}
    for s, t, w, line in rec.constraints:
        main[(keys[s], keys[t])] = (w, line)
    edges = [(keys[s], keys[t], w) for s, t, w, _ in rec.constraints]
    for u, v, w, line in side.constraints:
        old = main.get((u, v)) or main.get((v, u))
        if old is not None and (old[0] > 0) != (w > 0):
            raise GraphMLError(
                f"{where}line {line}: pair {u!r}-{v!r} is a {'must' if w > 0 else 'cannot'}-link here but a "
                f"{'must' if old[0] > 0 else 'cannot'}-link in the graph file (line {old[1]})",
                path=side_path, line=line, element=f"constraint {u!r}-{v!r}",
            )
        edges.append((u, v, w))
    seeds = {keys[i]: lab for i, (lab, _) in rec.seeds.items()}
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
