"""Side information as a signed graph: must-links, cannot-links, seeds.

An edge ``(u, v)`` with weight ``w > 0`` says *u and v belong together* (must-link or
may-link), ``w < 0`` says *they do not* (cannot-link), ``|w|`` is the strength and
``±inf`` makes the constraint hard. :class:`SideInfo` builds such graphs from pairs,
seed labels or ground truth, and :meth:`SideInfo.check` reports what they imply:
must-link components, contradictions with a witness path, and how many clusters the
cannot-links need.
"""

from dataclasses import dataclass
from functools import cached_property
import heapq
import math
import numbers

import numpy as np
import scipy.sparse as sp

from ._utils import check_float, check_int, check_random_state, is_graph
from .errors import (
    InfeasibleConstraintsError,
    InvalidConstraintError,
    InvalidParameterError,
    TooFewClustersError,
    UnknownNodeError,
)

__all__ = ["SideInfo", "RowConstraints", "CheckReport", "Conflict"]


def _short(x, limit=60):
    """``repr(x)``, cut to ``limit`` characters (for messages about odd node keys)."""
    text = repr(x)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class SideInfo:
    """A signed side-information graph over node keys.

    Parameters
    ----------
    constraints : iterable of (u, v, weight), default=()
        Signed constraints. ``weight > 0`` is a must-link, ``< 0`` a cannot-link,
        ``±inf`` hard; zero and NaN are refused. A pair listed twice with the same sign
        keeps the larger strength; with opposite signs it is an error.
    seeds : dict or None, default=None
        Optional ``node -> label`` seeds the constraints came from (kept for GraphML
        output and for segmentation).

    See Also
    --------
    SideInfo.from_pairs, SideInfo.from_labels, SideInfo.sample, SideInfo.from_graph

    Examples
    --------
    >>> import graphclust as gc
    >>> S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(2, 3)])
    >>> S
    SideInfo(n_must=2, n_cannot=1, n_hard=0)
    >>> report = S.check()
    >>> report.n_components, report.min_clusters
    (2, 2)
    """

    def __init__(self, constraints=(), *, seeds=None):
        self._edges = {}
        self.seeds = dict(seeds) if seeds is not None else None
        self.sampling = None
        for u, v, w in constraints:
            self._add(u, v, w)

    def _add(self, u, v, w):
        if isinstance(w, bool) or not isinstance(w, numbers.Real):
            try:
                w = float(w)
            except (TypeError, ValueError):
                raise InvalidConstraintError(
                    f"constraint {(u, v)!r} has weight {w!r}; expected a number", constraint=(u, v)
                ) from None
        w = float(w)
        try:
            hash(u), hash(v)
        except TypeError:
            raise InvalidConstraintError(
                f"constraint ({_short(u)}, {_short(v)}): node keys must be hashable, as networkx node keys are "
                "(an array is not: use a tuple or a number)", constraint=None
            ) from None
        if u == v:
            raise InvalidConstraintError(
                f"constraint {(u, v)!r} joins node {u!r} to itself; self-loop constraints are meaningless",
                constraint=(u, v),
            )
        if math.isnan(w) or w == 0:
            raise InvalidConstraintError(
                f"constraint {(u, v)!r} has weight {w}; use > 0 for must-link, < 0 for cannot-link",
                constraint=(u, v),
            )
        key = (u, v)
        old = self._edges.get(key)
        if old is None:
            old = self._edges.get((v, u))
            if old is not None:
                key = (v, u)
        if old is None:
            self._edges[key] = w
        elif (old > 0) != (w > 0):
            raise InvalidConstraintError(
                f"pair {key!r} is given both as a must-link and as a cannot-link",
                constraint=key,
            )
        elif abs(w) > abs(old):
            self._edges[key] = w

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_pairs(cls, must=(), cannot=(), *, weight=1.0):
        """Side information from lists of must-linked and cannot-linked pairs.

        Parameters
        ----------
        must, cannot : iterable of (u, v) or (u, v, strength)
            Pairs of node keys; a third item overrides ``weight`` for that pair.
        weight : float, default=1.0
            Strength of every pair without its own (``numpy.inf`` for hard
            constraints). Must be > 0; the sign comes from the list.

        Examples
        --------
        >>> S = SideInfo.from_pairs(must=[("a", "b")], cannot=[("a", "c", float("inf"))])
        >>> sorted(S.edges())
        [('a', 'b', 1.0), ('a', 'c', -inf)]
        """
        weight = check_float(weight, "weight", low=0, low_open=True, allow_inf=True)
        S = cls()
        for sign, pairs, name in ((1.0, must, "must"), (-1.0, cannot, "cannot")):
            for item in pairs:
                if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
                    raise InvalidConstraintError(
                        f"{name}-link entry {item!r} must be a pair (u, v) or a triple (u, v, strength)"
                    )
                if len(item) == 2:
                    (u, v), w = item, weight
                elif len(item) == 3:
                    u, v, w = item
                    if not isinstance(w, numbers.Real) or isinstance(w, bool) or not w > 0:
                        raise InvalidConstraintError(
                            f"{name}-link {(u, v)!r} has strength {w!r}; strengths must be > 0",
                            constraint=(u, v),
                        )
                else:
                    raise InvalidConstraintError(
                        f"{name}-link entry {item!r} must be (u, v) or (u, v, strength)"
                    )
                S._add(u, v, sign * w)
        return S

    @classmethod
    def from_graph(cls, S, *, weight="weight", kind="kind"):
        """Side information from a networkx graph with signed edge weights.

        An edge attribute ``kind`` equal to ``"must"`` or ``"cannot"``, when present,
        gives the sign and ``weight`` the strength (so ``kind="cannot", weight=2`` is
        ``-2``); otherwise ``weight`` is read as a signed number.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.Graph([(1, 2, {"weight": 2.0}), (2, 3, {"weight": -1.0})])
        >>> SideInfo.from_graph(G)
        SideInfo(n_must=1, n_cannot=1, n_hard=0)
        """
        if isinstance(S, SideInfo):
            return S.copy()
        if not is_graph(S):
            raise InvalidParameterError(f"side information must be a SideInfo or a networkx graph, got {type(S).__name__}")
        out = cls()
        for u, v, d in S.edges(data=True):
            w = d.get(weight, 1.0)
            k = d.get(kind)
            if k is not None:
                if k not in ("must", "cannot"):
                    raise InvalidConstraintError(
                        f"edge {(u, v)!r} has {kind}={k!r}; expected 'must' or 'cannot'", constraint=(u, v)
                    )
                try:
                    w = abs(float(w))
                except (TypeError, ValueError):
                    raise InvalidConstraintError(
                        f"constraint {(u, v)!r} has weight {w!r}; expected a number", constraint=(u, v)
                    ) from None
                w = w if k == "must" else -w
            out._add(u, v, w)
        seeds = {u: d["label"] for u, d in S.nodes(data=True) if "label" in d}
        out.seeds = seeds or None
        return out

    @classmethod
    def from_labels(cls, labels, *, weight=np.inf, cannot=True):
        """Side information from seed labels (``node -> label``), e.g. scribbles.

        Nodes with the same label are chained by ``n - 1`` must-links (a spanning path,
        not all pairs); one representative per label is cannot-linked to every other
        label's representative, which with the chains implies every cross-label pair.

        Parameters
        ----------
        labels : dict
            ``node -> label`` for the seeded nodes only. Labels must be hashable and
            mutually comparable is not required.
        weight : float, default=numpy.inf
            Strength of the generated constraints (hard by default).
        cannot : bool, default=True
            Also add the cannot-links between labels.

        Examples
        --------
        >>> S = SideInfo.from_labels({"a": 1, "b": 1, "c": 1, "d": 2})
        >>> sorted(S.must_links()), S.cannot_links()
        ([('a', 'b', inf), ('b', 'c', inf)], [('a', 'd', inf)])
        """
        weight = check_float(weight, "weight", low=0, low_open=True, allow_inf=True)
        if not hasattr(labels, "items"):
            raise InvalidParameterError("labels must be a dict mapping node -> label")
        groups = {}
        for node, lab in labels.items():
            groups.setdefault(lab, []).append(node)
        S = cls(seeds=labels)
        for members in groups.values():
            for a, b in zip(members[:-1], members[1:]):
                S._add(a, b, weight)
        if cannot:
            reps = [members[0] for members in groups.values()]
            for i in range(len(reps)):
                for j in range(i + 1, len(reps)):
                    S._add(reps[i], reps[j], -weight)
        return S

    @classmethod
    def sample(
        cls, y, n_pairs=None, *, rate=None, convention="paper", noise=0.0, weight=1.0,
        nodes=None, among=None, random_state=None,
    ):
        """Sample constraints from ground-truth labels, as in the seed papers.

        A pair in the same class becomes a must-link, otherwise a cannot-link; with
        probability ``noise`` its type is flipped.

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            Ground-truth classes.
        n_pairs : int or None
            Number of distinct unordered pairs, drawn uniformly without replacement.
        rate : float or None
            Alternative to ``n_pairs``: the sampling rate ``r`` of the TVClust/RDP-means
            protocol. With ``convention="paper"`` ``r`` is the fraction of the ``n²``
            entries of the symmetric constraint matrix that are set, so
            ``round(r·n²/2)`` pairs. With ``convention="ref_code"`` the reference code's
            loop is reproduced: ``round(r·n²)`` ordered draws with replacement, a draw
            already made in the same order is skipped, a reverse draw overwrites the
            pair with a fresh noisy label (about twice as many pairs as "paper").
        convention : {"paper", "ref_code"}, default="paper"
        noise : float in [0, 1), default=0.0
            Probability of flipping a constraint's type (``1 - p`` in the papers).
        weight : float, default=1.0
            Strength of each constraint.
        nodes : sequence or None
            Node keys of the rows of ``y`` (default ``0..n-1``).
        among : array-like of int or None
            Row indices to draw pairs from (e.g. a training fold); default all rows.
        random_state : None, int or numpy.random.Generator

        Returns
        -------
        SideInfo
            With a ``sampling`` dict: ``n_must``, ``n_cannot``, ``n_flipped``, ``draws``.

        Examples
        --------
        >>> S = SideInfo.sample([0, 0, 0, 1, 1, 1], n_pairs=5, random_state=0)
        >>> len(S), S.sampling["n_flipped"]
        (5, 0)
        """
        y = np.asarray(y)
        if y.ndim != 1:
            raise InvalidParameterError(f"y must be 1-D, got shape {y.shape}")
        n_all = len(y)
        nodes = list(range(n_all)) if nodes is None else list(nodes)
        if len(nodes) != n_all:
            raise InvalidParameterError(f"{len(nodes)} node keys for {n_all} labels")
        pool = np.arange(n_all) if among is None else np.unique(np.asarray(among, dtype=np.int64))
        if pool.size and (pool[0] < 0 or pool[-1] >= n_all):
            raise InvalidParameterError("among must hold row indices in [0, n_samples)")
        n = len(pool)
        if n < 2:
            raise InvalidParameterError("need at least two rows to sample pairs")
        noise = check_float(noise, "noise", low=0.0, high=1.0)
        weight = check_float(weight, "weight", low=0, low_open=True, allow_inf=True)
        if convention not in ("paper", "ref_code"):
            raise InvalidParameterError(f"convention must be 'paper' or 'ref_code', got {convention!r}")
        if (n_pairs is None) == (rate is None):
            raise InvalidParameterError("give exactly one of n_pairs and rate")
        rng = check_random_state(random_state)
        total = n * (n - 1) // 2
        if rate is not None:
            rate = check_float(rate, "rate", low=0.0, high=1.0)
        if rate is not None and convention == "ref_code":
            draws = int(round(rate * n * n))
            a = rng.integers(0, n, draws)
            b = rng.integers(0, n - 1, draws)
            b = b + (b >= a)  # uniform over b != a
            flip = rng.random(draws) < noise
            # a draw repeated in the same order is skipped: keep its first occurrence
            _, first = np.unique(a * n + b, return_index=True)
            first.sort()
            a, b, flip = a[first], b[first], flip[first]
            # a reverse-order draw overwrites: keep the last occurrence per unordered pair
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            key = lo * n + hi
            _, last_rev = np.unique(key[::-1], return_index=True)
            keep = np.sort(len(key) - 1 - last_rev)
            i, j, flip = lo[keep], hi[keep], flip[keep]
        else:
            if rate is not None:
                n_pairs = int(round(rate * n * n / 2))
                draws = n_pairs
            else:
                n_pairs = check_int(n_pairs, "n_pairs", low=0)
                draws = n_pairs
            if n_pairs > total:
                raise InvalidParameterError(f"n_pairs={n_pairs} exceeds the {total} distinct pairs of {n} rows")
            k = _sample_distinct(total, n_pairs, rng)
            i, j = _pair_from_linear(k, n)
            flip = rng.random(n_pairs) < noise
        gi, gj = pool[i], pool[j]
        same = y[gi] == y[gj]
        sign = np.where(same ^ flip, 1.0, -1.0)
        S = cls()
        edges = S._edges
        for a_, b_, s in zip(gi.tolist(), gj.tolist(), sign.tolist()):
            edges[(nodes[a_], nodes[b_])] = s * weight
        S.sampling = {
            "n_must": int((sign > 0).sum()),
            "n_cannot": int((sign < 0).sum()),
            "n_flipped": int(flip.sum()),
            "draws": int(draws),
            "convention": convention,
        }
        return S

    # ------------------------------------------------------------------ access
    def edges(self):
        """List of ``(u, v, signed_weight)`` triples."""
        return [(u, v, w) for (u, v), w in self._edges.items()]

    def must_links(self):
        """List of ``(u, v, strength)`` for the must-links."""
        return [(u, v, w) for (u, v), w in self._edges.items() if w > 0]

    def cannot_links(self):
        """List of ``(u, v, strength)`` for the cannot-links (strength > 0)."""
        return [(u, v, -w) for (u, v), w in self._edges.items() if w < 0]

    def nodes(self):
        """Set of nodes mentioned by a constraint or a seed."""
        out = set()
        for u, v in self._edges:
            out.add(u)
            out.add(v)
        if self.seeds:
            out.update(self.seeds)
        return out

    def weight(self, u, v):
        """Signed weight of the pair ``(u, v)``, or 0.0 if unconstrained."""
        return self._edges.get((u, v), self._edges.get((v, u), 0.0))

    def __len__(self):
        return len(self._edges)

    def __iter__(self):
        return iter(self.edges())

    def __eq__(self, other):
        if not isinstance(other, SideInfo):
            return NotImplemented
        if len(self) != len(other):
            return False
        return all(other.weight(u, v) == w for (u, v), w in self._edges.items()) and (
            (self.seeds or None) == (other.seeds or None)
        )

    def __repr__(self):
        w = np.fromiter(self._edges.values(), float, len(self._edges))
        return (
            f"SideInfo(n_must={int((w > 0).sum())}, n_cannot={int((w < 0).sum())}, "
            f"n_hard={int(np.isinf(w).sum())})"
        )

    def copy(self):
        out = SideInfo(seeds=self.seeds)
        out._edges = dict(self._edges)
        out.sampling = None if self.sampling is None else dict(self.sampling)
        return out

    def union(self, other):
        """Constraints of both (a pair in both keeps the stronger weight)."""
        out = self.copy()
        for u, v, w in SideInfo.from_graph(other) if not isinstance(other, SideInfo) else other:
            out._add(u, v, w)
        if other.seeds if isinstance(other, SideInfo) else False:
            out.seeds = {**(out.seeds or {}), **other.seeds}
        return out

    __or__ = union

    def to_networkx(self):
        """A new ``nx.Graph`` with edge attributes ``weight`` (signed) and ``kind``."""
        import networkx as nx

        G = nx.Graph()
        if self.seeds:
            G.add_nodes_from((u, {"label": lab}) for u, lab in self.seeds.items())
        G.add_edges_from(
            (u, v, {"weight": w, "kind": "must" if w > 0 else "cannot"}) for (u, v), w in self._edges.items()
        )
        return G

    def to_arrays(self, index):
        """Constraint index pairs ``(M, 2)`` (``i < j``) and signed weights ``(M,)``.

        Raises :class:`UnknownNodeError` naming the first constraint (or seed) whose
        node is not a key of ``index``: a seed on a node the data lacks is refused here
        as :func:`~graphclust.io.write_graphml` refuses it, not silently dropped.
        """
        for u in self.seeds or ():
            if u not in index:
                raise UnknownNodeError(f"seed on node {_short(u)}, which is not in the data graph", node=u)
        return constraint_arrays(self.edges(), index)

    # ------------------------------------------------------------------ analysis
    def check(self, data=None, *, n_clusters=None, threshold=0.0):
        """Report what the constraints imply on ``data``.

        Parameters
        ----------
        data : Problem, networkx.Graph or None, default=None
            The data the constraints refer to (unknown nodes raise
            :class:`UnknownNodeError`). ``None`` uses the constrained nodes only.
        n_clusters : int or None, default=None
            If given, :attr:`CheckReport.feasible` also requires the cannot-links to be
            satisfiable with that many clusters (as far as the bounds tell).
        threshold : float, default=0.0
            Must-links with strength ``>= threshold`` join components (0: all).

        Returns
        -------
        CheckReport
        """
        if data is None:
            nodes = list(self.nodes())
            index = {u: i for i, u in enumerate(nodes)}
        elif is_graph(data):
            nodes = list(data.nodes)
            index = {u: i for i, u in enumerate(nodes)}
        elif hasattr(data, "index") and hasattr(data, "nodes"):  # a Problem (which imports this module)
            nodes, index = data.nodes, data.index
        else:
            raise InvalidParameterError(f"check() takes a Problem, a networkx graph or None, got {type(data).__name__}")
        pairs, weights = self.to_arrays(index)
        return check_constraints(nodes, pairs, weights, n_clusters=n_clusters, threshold=threshold,
                                 all_nodes=data is not None)

    def reduce(self):
        """Drop constraints that are redundant once the must-links are closed.

        Must-links are cut down to a spanning forest of each must-link component, and
        cannot-links to the strongest one per pair of components. Exact for hard
        constraints; for soft ones it changes the penalty (documented trade-off).

        Examples
        --------
        >>> S = SideInfo.from_pairs(must=[(0, 1), (1, 2), (0, 2)], cannot=[(0, 3), (2, 3)])
        >>> S.reduce()
        SideInfo(n_must=2, n_cannot=1, n_hard=0)
        """
        nodes = list(self.nodes())
        index = {u: i for i, u in enumerate(nodes)}
        pairs, w = self.to_arrays(index)
        n = len(nodes)
        must = w > 0
        comp = must_link_components(n, pairs[must])[1]
        out = SideInfo(seeds=self.seeds)
        # spanning forest of the must-link graph: union-find over the must edges, strongest first
        order = np.flatnonzero(must)[np.argsort(-w[must], kind="stable")]
        parent = np.arange(n)
        for k in order.tolist():
            a, b = _find(parent, pairs[k, 0]), _find(parent, pairs[k, 1])
            if a != b:
                parent[a] = b
                out._edges[(nodes[pairs[k, 0]], nodes[pairs[k, 1]])] = w[k]
        cannot = np.flatnonzero(~must)
        if cannot.size:
            ca, cb = comp[pairs[cannot, 0]], comp[pairs[cannot, 1]]
            key = np.minimum(ca, cb).astype(np.int64) * n + np.maximum(ca, cb)
            order = np.lexsort((w[cannot], key))  # most negative (strongest) first per key
            first = np.ones(order.size, bool)
            first[1:] = key[order][1:] != key[order][:-1]
            for k in cannot[order[first]].tolist():
                out._edges[(nodes[pairs[k, 0]], nodes[pairs[k, 1]])] = w[k]
        return out


class RowConstraints:
    """Pairwise constraints between the rows of a feature matrix, in the form
    scikit-learn's cross-validation splits together with ``X``.

    scikit-learn hands a fit parameter to each fold sliced by the fold's rows when it
    has one entry per row. A :class:`SideInfo` is keyed by node and has none, so
    ``GridSearchCV`` would pass every constraint to every fold, naming rows the fold
    does not have. A ``RowConstraints`` has ``len(X)`` entries: indexing it with rows
    keeps the constraints between those rows, renumbered in the rows' order. Give it as
    ``sideinfo=`` to ``fit``, ``GridSearchCV.fit`` or ``cross_val_score``; with
    :class:`~graphclust.selection.ConstraintKFold` and
    :data:`~graphclust.selection.heldout_constraint_score` the search is scored by the
    held-out constraints (``docs/guide.md``, "Choosing parameters without ground truth").

    Parameters
    ----------
    sideinfo : SideInfo, networkx.Graph or iterable of (u, v, weight)
        Constraints whose nodes are row numbers ``0 .. n_rows - 1``.
    n_rows : int
        Number of rows of ``X``.

    Attributes
    ----------
    pairs : ndarray of int64, shape (n_constraints, 2)
        Row numbers, ``pairs[:, 0] < pairs[:, 1]``.
    weights : ndarray of float64, shape (n_constraints,)
        Signed strengths (``> 0`` must-link, ``< 0`` cannot-link, ``±inf`` hard).

    Examples
    --------
    >>> import graphclust as gc
    >>> C = gc.RowConstraints([(0, 1, 1.0), (1, 3, -1.0), (2, 3, 1.0)], n_rows=4)
    >>> len(C), len(C[[1, 2, 3]].pairs)  # rows 1, 2, 3 keep two constraints
    (4, 2)
    >>> C[[3, 2, 1]].pairs.tolist()      # renumbered: rows 3, 2, 1 are now 0, 1, 2
    [[0, 2], [0, 1]]
    """

    def __init__(self, sideinfo, n_rows):
        n_rows = check_int(n_rows, "n_rows", low=0)
        S = sideinfo if isinstance(sideinfo, SideInfo) else side_information([], sideinfo=sideinfo)
        S = S if S is not None else SideInfo()
        index = {}
        for u in S.nodes():
            if not (isinstance(u, numbers.Integral) and not isinstance(u, bool) and 0 <= u < n_rows):
                raise UnknownNodeError(
                    f"RowConstraints: node {u!r} of a constraint is not a row number in 0..{n_rows - 1}; "
                    "constraints on rows name their rows by position", node=u)
            index[u] = int(u)
        self.pairs, self.weights = constraint_arrays(S.edges(), index)
        self.n_rows = n_rows

    @classmethod
    def _from_arrays(cls, pairs, weights, n_rows):
        out = cls.__new__(cls)
        out.pairs, out.weights, out.n_rows = pairs, weights, n_rows
        return out

    @property
    def shape(self):
        """``(n_rows, n_rows)``: what scikit-learn reads as one entry per row."""
        return (self.n_rows, self.n_rows)

    def __len__(self):
        return self.n_rows

    def __getitem__(self, rows):
        if isinstance(rows, tuple):  # scikit-learn indexes as rows[key, ...]
            rows = rows[0]
        rows = np.arange(self.n_rows)[rows]
        if rows.ndim != 1:
            raise InvalidParameterError("RowConstraints are indexed by a 1-D selection of rows")
        position = np.full(self.n_rows, -1, dtype=np.int64)
        position[rows] = np.arange(len(rows))
        a, b = position[self.pairs[:, 0]], position[self.pairs[:, 1]]
        keep = (a >= 0) & (b >= 0)
        pairs = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)[keep]
        return RowConstraints._from_arrays(pairs, self.weights[keep], len(rows))

    def to_sideinfo(self, nodes=None):
        """The constraints as a :class:`SideInfo` over ``nodes`` (default: the row numbers)."""
        nodes = list(range(self.n_rows)) if nodes is None else list(nodes)
        if len(nodes) != self.n_rows:
            raise InvalidParameterError(
                f"RowConstraints cover {self.n_rows} rows but the data has {len(nodes)}; build them with "
                "n_rows=len(X) (a cross-validation fold slices both together)")
        return SideInfo((nodes[a], nodes[b], w) for (a, b), w in zip(self.pairs.tolist(), self.weights.tolist()))

    def __repr__(self):
        return (f"RowConstraints(n_rows={self.n_rows}, n_must={int((self.weights > 0).sum())}, "
                f"n_cannot={int((self.weights < 0).sum())})")


def side_information(nodes, y=None, sideinfo=None):
    """The side information of an estimator's ``fit(X, y, sideinfo=...)``, or None.

    ``y``: partial labels in the order of ``nodes`` (``-1`` unlabelled), read as soft
    constraints of strength 1 (:meth:`SideInfo.from_labels`); a SideInfo or networkx
    graph there is taken as ``sideinfo`` (the older ``fit(G, S)``). ``sideinfo``: a
    SideInfo, a signed networkx graph, :class:`RowConstraints` (rows in the order of
    ``nodes``), or an iterable of ``(u, v, weight)`` triples.
    """
    if isinstance(y, SideInfo) or is_graph(y):
        if sideinfo is not None:
            raise InvalidParameterError(
                "side information was given twice: as the second argument of fit and as sideinfo=; "
                "pass it once (partial labels as y, pairs as sideinfo)")
        y, sideinfo = None, y
    out = None
    if sideinfo is not None:
        if isinstance(sideinfo, RowConstraints):
            out = sideinfo.to_sideinfo(nodes)
        elif isinstance(sideinfo, SideInfo) or is_graph(sideinfo):
            out = SideInfo.from_graph(sideinfo)
        elif isinstance(sideinfo, (str, bytes)) or not hasattr(sideinfo, "__iter__"):
            raise InvalidParameterError(
                f"sideinfo must be a SideInfo, a networkx graph, RowConstraints or (u, v, weight) triples, got "
                f"{type(sideinfo).__name__}")
        else:
            triples = []
            for k, item in enumerate(sideinfo):
                try:
                    u, v, w = item
                except (TypeError, ValueError):
                    raise InvalidParameterError(
                        f"sideinfo[{k}] is {item!r}; constraints are (u, v, weight) triples with weight > 0 for a "
                        "must-link and < 0 for a cannot-link (or use SideInfo.from_pairs(must=..., cannot=...))"
                    ) from None
                triples.append((u, v, w))
            out = SideInfo(triples)
    if y is not None:
        labels = np.asarray(y)
        if labels.ndim != 1 or len(labels) != len(nodes):
            raise InvalidParameterError(
                f"y must hold one label per node ({len(nodes)}), -1 for unlabelled; got an array of shape "
                f"{labels.shape}")
        known = np.flatnonzero(labels != -1)
        if len(known):
            seeds = {nodes[i]: (lab.item() if isinstance(lab, np.generic) else lab)
                     for i, lab in zip(known.tolist(), labels[known])}
            from_y = SideInfo.from_labels(seeds, weight=1.0)
            out = from_y if out is None else out.union(from_y)
    return out


def _find(parent, x):
    root = x
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        parent[x], x = root, parent[x]
    return root


# ---------------------------------------------------------------------- sampling helpers
def _sample_distinct(total, k, rng):
    """``k`` distinct integers in ``[0, total)``, uniformly, without an O(total) array
    when ``total`` is large."""
    if k == 0:
        return np.empty(0, np.int64)
    if total <= 4 * k or total <= 1_000_000:
        return rng.choice(total, size=k, replace=False).astype(np.int64)
    out = np.unique(rng.integers(0, total, int(k * 1.1) + 16))
    while out.size < k:
        out = np.unique(np.concatenate([out, rng.integers(0, total, k)]))
    return rng.permutation(out)[:k]


def _pair_from_linear(k, n):
    """Map linear indices of the strict upper triangle (row-major) to ``(i, j)``."""
    k = np.asarray(k, dtype=np.int64)
    # rows start at s(i) = i*n - i*(i+1)/2; invert with the quadratic formula, then fix rounding
    i = np.floor(n - 0.5 - np.sqrt((n - 0.5) ** 2 - 2.0 * k)).astype(np.int64)
    start = i * n - i * (i + 1) // 2
    i = np.where(start > k, i - 1, i)
    start = i * n - i * (i + 1) // 2
    nxt = (i + 1) * n - (i + 1) * (i + 2) // 2
    i = np.where(nxt <= k, i + 1, i)
    start = i * n - i * (i + 1) // 2
    j = k - start + i + 1
    return i, j


# ---------------------------------------------------------------------- check (array core)
def constraint_arrays(pairs_by_key, index):
    """Map ``(u, v, w)`` triples of node keys to index arrays, naming unknown nodes.

    Returns ``(pairs, weights)`` with ``pairs[:, 0] < pairs[:, 1]``.
    """
    m = len(pairs_by_key)
    if m == 0:
        return np.empty((0, 2), np.int64), np.empty(0)
    us, vs, ws = zip(*pairs_by_key)
    get = index.get
    a = np.fromiter((get(u, -1) for u in us), np.int64, m)
    b = np.fromiter((get(v, -1) for v in vs), np.int64, m)
    bad = (a < 0) | (b < 0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        u, v = us[k], vs[k]
        node = u if a[k] < 0 else v
        kind = "must-link" if ws[k] > 0 else "cannot-link"
        raise UnknownNodeError(
            f"{kind} {(u, v)!r} refers to node {node!r}, which is not in the data graph",
            node=node, constraint=(u, v),
        )
    if (a == b).any():  # only reachable when two keys map to one index
        k = int(np.flatnonzero(a == b)[0])
        raise InvalidConstraintError(f"constraint {(us[k], vs[k])!r} joins a node to itself", constraint=(us[k], vs[k]))
    pairs = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
    return pairs, np.asarray(ws, dtype=np.float64)


def must_link_components(n, must_pairs):
    """Connected components of the must-link graph on ``n`` nodes, in linear time.

    Returns ``(n_components, component_of_node)``, components numbered in the order of
    their first node (so merged groups keep node order).
    """
    if len(must_pairs) == 0:
        return n, np.arange(n, dtype=np.int64)
    M = sp.coo_array(
        (np.ones(len(must_pairs), dtype=np.int8), (must_pairs[:, 0], must_pairs[:, 1])), shape=(n, n)
    ).tocsr()
    from scipy.sparse.csgraph import connected_components  # here: with scipy.linalg, 11 MiB a segmentation never needs

    k, comp = connected_components(M, directed=False)
    first = np.full(k, n, dtype=np.int64)
    np.minimum.at(first, comp, np.arange(n))
    rank = np.empty(k, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(k)
    return k, rank[comp]


@dataclass(frozen=True)
class Conflict:
    """A cannot-link whose endpoints a must-link path joins.

    Attributes
    ----------
    constraint : tuple
        The cannot-linked pair ``(u, v)``.
    weight : float
        Its (negative) weight.
    path : list
        Nodes of a must-link path from ``u`` to ``v``.
    hard : bool
        True when the cannot-link and every must-link on the path are hard, so no
        labelling can satisfy them.
    """

    constraint: tuple
    weight: float
    path: list
    hard: bool

    def __str__(self):
        u, v = self.constraint
        chain = " - ".join(map(repr, self.path))
        kind = "hard " if self.hard else ""
        return f"{kind}must-link path {chain} joins nodes {u!r} and {v!r}, which are cannot-linked"


@dataclass
class CheckReport:
    """What a set of constraints implies; returned by :meth:`SideInfo.check`.

    Attributes
    ----------
    nodes : sequence
        Node keys in the order of :attr:`component_of`.
    component_of : ndarray of shape (n_nodes,)
        Must-link component of every node.
    n_components : int
        Number of must-link components (singletons included).
    components : list of list
        The must-link components with two or more nodes.
    conflicts : list of Conflict
        Cannot-links inside a must-link component, each with a witness path.
    implied_cannot : ndarray of shape (n_pairs, 2)
        Pairs of components with at least one cannot-link between them; every node
        pair across them is implicitly cannot-linked.
    n_implied_cannot : int
        Number of node pairs those component pairs cannot-link.
    min_clusters : int
        Lower bound on the number of clusters the cannot-links need (size of a clique
        of pairwise cannot-linked components found greedily; 1 without cannot-links).
    clique : list
        One node from each component of that clique.
    max_clusters_needed : int
        Upper bound: the number of colours of a DSatur colouring of the component
        cannot-link graph (a labelling with this many clusters satisfies every
        constraint that has no conflict).
    n_clusters : int or None
        The number of clusters asked about, if any.
    """

    nodes: object
    component_of: np.ndarray
    n_components: int
    components: list
    conflicts: list
    implied_cannot: np.ndarray
    n_implied_cannot: int
    n_must: int = 0
    n_cannot: int = 0
    n_clusters: int | None = None

    # the clique and the colouring are computed when first asked for: most callers
    # need only the components and the conflicts
    @cached_property
    def _clique_and_colours(self):
        return _clique_and_coloring(self.n_components, self.implied_cannot)

    @property
    def min_clusters(self):
        return max(1, len(self._clique_and_colours[0]))

    @property
    def clique(self):
        rep = np.full(self.n_components, -1, dtype=np.int64)
        n = len(self.component_of)
        rep[self.component_of[::-1]] = np.arange(n)[::-1]  # first node of each component
        return [self.nodes[rep[c]] for c in self._clique_and_colours[0]]

    @property
    def max_clusters_needed(self):
        colours = self._clique_and_colours[1]
        return int(colours.max()) + 1 if colours.size else 1

    @property
    def coloring(self):
        """DSatur colour of every must-link component."""
        return self._clique_and_colours[1]

    @property
    def hard_conflicts(self):
        return [c for c in self.conflicts if c.hard]

    @property
    def feasible(self):
        """No hard conflict, and enough clusters if ``n_clusters`` was given."""
        if self.hard_conflicts:
            return False
        return self.n_clusters is None or self.n_clusters >= self.min_clusters

    def raise_if_infeasible(self):
        """Raise :class:`InfeasibleConstraintsError` or :class:`TooFewClustersError`."""
        hard = self.hard_conflicts
        if hard:
            first = hard[0]
            more = f" ({len(hard) - 1} more conflicts)" if len(hard) > 1 else ""
            raise InfeasibleConstraintsError(
                f"{first}{more}", constraint=first.constraint, path=first.path, conflicts=hard
            )
        if self.n_clusters is not None and self.n_clusters < self.min_clusters:
            raise TooFewClustersError(
                f"n_clusters={self.n_clusters} but the cannot-links need at least {self.min_clusters} "
                f"clusters: nodes {self.clique!r} are pairwise cannot-linked (through their must-link components)",
                n_clusters=self.n_clusters, min_clusters=self.min_clusters, clique=self.clique,
            )

    def summary(self):
        """A few human-readable lines for the command line."""
        lines = [
            f"constraints: {self.n_must} must-link, {self.n_cannot} cannot-link",
            f"must-link components: {self.n_components} ({len(self.components)} with two or more nodes, "
            f"largest {max((len(c) for c in self.components), default=1)})",
            f"cannot-links between components: {len(self.implied_cannot)} component pairs, "
            f"implying {self.n_implied_cannot} node pairs",
            f"clusters needed by the cannot-links: at least {self.min_clusters}, "
            f"at most {self.max_clusters_needed} (DSatur)",
            f"conflicts: {len(self.conflicts)} ({len(self.hard_conflicts)} hard)",
        ]
        for c in self.conflicts[:10]:
            lines.append(f"  - {c}")
        if len(self.conflicts) > 10:
            lines.append(f"  ... {len(self.conflicts) - 10} more")
        if self.n_clusters is not None:
            lines.append(f"n_clusters={self.n_clusters}: {'feasible' if self.feasible else 'INFEASIBLE'}")
        return "\n".join(lines)


def check_constraints(nodes, pairs, weights, *, n_clusters=None, threshold=0.0, all_nodes=True):
    """Array core of :meth:`SideInfo.check` (see there). ``all_nodes=False`` says
    ``nodes`` are only the constrained ones, so ``n_clusters`` is not compared with
    their number."""
    n = len(nodes)
    if n_clusters is not None:
        n_clusters = check_int(n_clusters, "n_clusters", low=1)
        if all_nodes and n_clusters > n:
            raise TooFewClustersError(
                f"n_clusters={n_clusters} but the problem has only {n} nodes (n_samples={n})", n_clusters=n_clusters
            )
    must = weights >= max(threshold, np.finfo(float).tiny)
    cannot = weights < 0
    n_comp, comp = must_link_components(n, pairs[must])
    sizes = np.bincount(comp, minlength=n_comp)
    big = np.flatnonzero(sizes > 1)
    components = []
    if big.size:
        order = np.argsort(comp, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        components = [[nodes[i] for i in order[starts[c]:starts[c + 1]].tolist()] for c in big.tolist()]
    cp = pairs[cannot]
    ca, cb = comp[cp[:, 0]], comp[cp[:, 1]]
    inside = ca == cb
    conflicts = _conflicts(n, nodes, pairs, weights, must, comp)
    # component-level cannot-link graph
    lo, hi = np.minimum(ca[~inside], cb[~inside]), np.maximum(ca[~inside], cb[~inside])
    key = np.unique(lo * n_comp + hi)
    implied = np.stack([key // n_comp, key % n_comp], axis=1) if key.size else np.empty((0, 2), np.int64)
    n_implied = int((sizes[implied[:, 0]] * sizes[implied[:, 1]]).sum()) if key.size else 0
    return CheckReport(
        nodes=nodes, component_of=comp, n_components=int(n_comp), components=components,
        conflicts=conflicts, implied_cannot=implied, n_implied_cannot=n_implied,
        n_must=int((weights > 0).sum()), n_cannot=int(cannot.sum()), n_clusters=n_clusters,
    )


def _witness_paths(n, nodes, must_pairs, bad_pairs, comp):
    """A must-link path (over ``must_pairs``) for every pair of ``bad_pairs`` that
    ``comp`` puts in one component: one BFS tree per component with a conflict, then
    each path climbs the tree to the common ancestor. Returns lists of node keys."""
    if len(bad_pairs) == 0:
        return []
    M = sp.coo_array((np.ones(len(must_pairs), np.int8), (must_pairs[:, 0], must_pairs[:, 1])), shape=(n, n)).tocsr()
    parent = np.full(n, -9999, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    for c in np.unique(comp[bad_pairs[:, 0]]).tolist():
        root = int(bad_pairs[comp[bad_pairs[:, 0]] == c][0, 0])
        from scipy.sparse.csgraph import breadth_first_order

        order, pred = breadth_first_order(M, root, directed=False, return_predecessors=True)
        parent[order] = pred[order]
        for node in order[1:].tolist():
            depth[node] = depth[pred[node]] + 1
    out = []
    for a, b in bad_pairs.tolist():
        left, right = [a], [b]
        x, y = a, b
        while depth[x] > depth[y]:
            x = int(parent[x]); left.append(x)
        while depth[y] > depth[x]:
            y = int(parent[y]); right.append(y)
        while x != y:
            x = int(parent[x]); left.append(x)
            y = int(parent[y]); right.append(y)
        out.append([nodes[i] for i in left + right[-2::-1]])
    return out


def _conflicts(n, nodes, pairs, weights, must, comp):
    """Cannot-links inside a must-link component, each with a witness path.

    A conflict is hard when the cannot-link is hard and *hard* must-links alone join
    its ends; its witness then uses hard must-links only (a shorter soft path would
    hide that no labelling can satisfy it)."""
    cannot = weights < 0
    cp, cw = pairs[cannot], weights[cannot]
    inside = comp[cp[:, 0]] == comp[cp[:, 1]]
    cp, cw = cp[inside], cw[inside]
    if len(cp) == 0:
        return []
    hard_must = np.isposinf(weights) & must
    _, hcomp = must_link_components(n, pairs[hard_must])
    hard = np.isneginf(cw) & (hcomp[cp[:, 0]] == hcomp[cp[:, 1]])
    paths = [None] * len(cp)
    for mask, edges, labels in ((hard, pairs[hard_must], hcomp), (~hard, pairs[must], comp)):
        idx = np.flatnonzero(mask)
        for k, path in zip(idx.tolist(), _witness_paths(n, nodes, edges, cp[idx], labels)):
            paths[k] = path
    return [
        Conflict(constraint=(nodes[a], nodes[b]), weight=w, path=path, hard=bool(h))
        for (a, b), w, path, h in zip(cp.tolist(), cw.tolist(), paths, hard.tolist())
    ]


def _clique_and_coloring(n_comp, implied):
    """Greedy clique (lower bound) and DSatur colouring (upper bound) of the component
    cannot-link graph. Components without cannot-links get colour 0."""
    colors = np.zeros(n_comp, dtype=np.int64)
    if len(implied) == 0:
        return [], colors
    A = sp.coo_array((np.ones(len(implied), np.int8), (implied[:, 0], implied[:, 1])), shape=(n_comp, n_comp))
    A = (A + A.T).tocsr()
    active = np.flatnonzero(np.diff(A.indptr))
    adj = {v: set(A.indices[A.indptr[v]:A.indptr[v + 1]].tolist()) for v in active.tolist()}
    colors[active] = _dsatur(adj)
    best = []
    for start in sorted(adj, key=lambda v: -len(adj[v]))[:16]:
        clique = [start]
        cand = set(adj[start])
        while cand:
            nxt = max(cand, key=lambda u: (len(adj[u] & cand), -u))
            clique.append(nxt)
            cand &= adj[nxt]
        if len(clique) > len(best):
            best = clique
    return sorted(best), colors


def _dsatur(adj):
    """DSatur colouring (Brelaz 1979) with a lazy heap: O((n + m) log n).

    ``adj`` maps each vertex to its neighbour set; returns colours in ``adj`` order.
    """
    seen = {v: set() for v in adj}
    color = dict.fromkeys(adj, -1)
    heap = [(0, -len(nb), v) for v, nb in adj.items()]
    heapq.heapify(heap)
    while heap:
        sat, _, v = heapq.heappop(heap)
        if color[v] >= 0 or -sat != len(seen[v]):
            continue  # stale entry
        used, c = seen[v], 0
        while c in used:
            c += 1
        color[v] = c
        for u in adj[v]:
            if color[u] < 0 and c not in seen[u]:
                seen[u].add(c)
                heapq.heappush(heap, (-len(seen[u]), -len(adj[u]), u))
    return np.fromiter(color.values(), np.int64, len(color))
