"""Side information as a CSV edge list.

:func:`write_side_info_csv` writes the constraints of a :class:`~graphclust.SideInfo` as
``u,v,kind,weight`` rows; the CSV reader here serves :func:`~graphclust.io.read_side_info`
and ``read_graphml(..., side=path)``. The format is described in :mod:`graphclust.io`.
"""

import csv
import io as _stdio
import math
import os
import re
import warnings

from .._utils import atomic_write
from ..errors import GraphMLError, UnknownNodeError
from ._common import _CANON_INT, _KEY_TYPES, _ids_to_keys, _key_mode, _node_tokens, _resolver, _side_argument


def _read_side_csv(data, path, nodes):
    """Parse a CSV side-information file (``bytes``) into ``(u, v, signed w, line)`` rows over node keys."""
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
        return out
    tokens = list(dict.fromkeys(t for u, v, _, _ in parsed for t in (u, v)))
    first_line = {}
    for u, v, _, line in parsed:
        first_line.setdefault(u, line)
        first_line.setdefault(v, line)

    def key_fail(message, element, line):
        fail(message, line, element)

    keys = dict(zip(tokens, _ids_to_keys(tokens, state["mode"], key_fail, first_line)))
    return [(keys[u], keys[v], w, line) for u, v, w, line in parsed]


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
    >>> from graphclust import SideInfo, read_side_info
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
