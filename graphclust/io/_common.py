"""Constants and node-key helpers shared by the GraphML reader and writer and the CSV
side-information files (private to :mod:`graphclust.io`)."""

import ast
import math
import numbers
import re

import networkx as nx
import numpy as np

from ..errors import GraphMLError, InvalidParameterError
from ..sideinfo import SideInfo

_NS = "http://graphml.graphdrawing.org/xmlns"
_CANON_INT = re.compile(r"0|-?[1-9][0-9]*")
_KEY_TYPES = ("int", "str", "repr")
_RESERVED_GRAPH = "node_key_type"


# ---------------------------------------------------------------------- node keys
def _literal(token):
    """``ast.literal_eval`` that only ever raises ValueError."""
    try:
        value = ast.literal_eval(token)
        hash(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(token) from None
    if value is None:  # networkx refuses None as a node
        raise ValueError(token)
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


def _node_tokens(nodes, mode, path):
    """How each node key is written under the key mode (``int``, ``str`` or ``repr``)."""
    if mode == "int":
        token = {}
        for u in nodes:
            try:
                token[u] = str(int(u))
            except ValueError:  # Python refuses to print integers of more than 4300 digits
                digits = int(int(u).bit_length() * 0.30103) + 1
                raise GraphMLError(
                    f"a node key is an integer of about {digits} digits, longer than Python writes as text "
                    "(sys.get_int_max_str_digits()); relabel the nodes (networkx.convert_node_labels_to_integers)",
                    path=path, element=f"node (integer of about {digits} digits)") from None
        return token
    if mode == "str":
        return {u: u for u in nodes}
    token = {}
    for u in nodes:
        try:
            token[u] = _key_repr(u)
        except ValueError as exc:
            raise GraphMLError(f"node {u!r} cannot be written: {exc}", path=path, element=f"node {u!r}") from None
    return token


def _side_argument(S):
    if S is None:
        return SideInfo()
    if isinstance(S, SideInfo):
        return S
    if isinstance(S, nx.Graph):
        return SideInfo.from_graph(S)
    raise InvalidParameterError(f"S must be a SideInfo, a networkx graph or None, got {type(S).__name__}")
