"""One conversion from networkx graphs or arrays into the arrays every algorithm uses.

networkx is the boundary of graphclust, never its inner loop: a graph is turned once
into a :class:`Problem` (node list, CSR similarity matrix, feature matrix, constraint
arrays), every algorithm works on those arrays, and the answer is mapped back to node
keys at the end with :meth:`Problem.partition` or :meth:`Problem.to_networkx`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from itertools import chain
import numbers
from operator import methodcaller

import numpy as np
import scipy.sparse as sp

from ._utils import check_feature_matrix, is_graph
from .errors import (
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    UnknownNodeError,
)
from .sideinfo import SideInfo

__all__ = ["Problem", "as_problem", "constraint_csr"]


@dataclass(eq=False)
class Problem:
    """A clustering problem as arrays: similarity graph, features and constraints.

    Build one with :meth:`from_graph` (a networkx graph), :meth:`from_array` (a feature
    matrix, optionally with a data graph) or :meth:`from_arrays` (a sparse matrix).
    Node ``i`` of every array is ``nodes[i]``.

    Parameters
    ----------
    nodes : sequence of hashable, length n_nodes
        Node keys in array order.
    W : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        Symmetric non-negative float64 similarities, no diagonal, no explicit zeros.
    X : ndarray of shape (n_nodes, n_features) or None
        Node features. After :func:`graphclust.merge.contract` a merged node holds the
        *sum* of its members' features; divide by ``counts`` (see
        :attr:`feature_means`) for their mean.
    counts : ndarray of shape (n_nodes,), dtype int64
        Number of original nodes each node stands for (all ones before merging).
    vertex_weights : ndarray of shape (n_nodes,)
        Non-negative vertex weights (summed by merging).
    constraints : ndarray of shape (n_constraints, 2), dtype int64
        Constrained node pairs ``(i, j)`` with ``i < j``.
    constraint_weights : ndarray of shape (n_constraints,)
        Signed strengths: ``> 0`` must-link, ``< 0`` cannot-link, ``±inf`` hard.
    graph : networkx.Graph or None
        The graph the problem came from (never modified; see :meth:`to_networkx`).
    scatter_index : ndarray of shape (n_nodes,), dtype int64, or None
        For a merged node, its row in ``scatter``; ``-1`` for a node that is one
        point (no scatter). ``None``: no node has scatter (every node one point).
    scatter : ndarray of shape (n_scatter, n_features, n_features) or None
        Within-node scatter ``Σ_m (x_m − x̄)(x_m − x̄)ᵀ`` of the original points merged
        into a node, around their mean ``x̄``. With ``X`` (sums) and ``counts`` it makes
        contraction lossless: every node's first and second moments are known, so a
        Gaussian likelihood scores a merged node exactly as its members (see
        :meth:`second_moments`).

    Examples
    --------
    >>> import networkx as nx
    >>> import graphclust as gc
    >>> G = nx.path_graph(["a", "b", "c", "d"])
    >>> S = gc.SideInfo.from_pairs(must=[("a", "b")], cannot=[("a", "d")])
    >>> P = gc.Problem.from_graph(G, S)
    >>> P.n_nodes, P.n_edges, P.constraints.tolist(), P.constraint_weights.tolist()
    (4, 3, [[0, 1], [0, 3]], [1.0, -1.0])
    >>> P.partition([0, 0, 1, 1])
    {'a': 0, 'b': 0, 'c': 1, 'd': 1}
    """

    nodes: Sequence
    W: sp.csr_array
    X: np.ndarray | None = None
    counts: np.ndarray | None = None
    vertex_weights: np.ndarray | None = None
    constraints: np.ndarray | None = None
    constraint_weights: np.ndarray | None = None
    graph: object = field(default=None, repr=False)
    scatter_index: np.ndarray | None = field(default=None, repr=False)
    scatter: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self):
        n = len(self.nodes)
        if self.counts is None:
            self.counts = np.ones(n, dtype=np.int64)
        if self.vertex_weights is None:
            self.vertex_weights = np.ones(n)
        if self.constraints is None:
            self.constraints = np.empty((0, 2), dtype=np.int64)
            self.constraint_weights = np.empty(0)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_graph(cls, G, S=None, *, weight="weight", features="features", vertex_weight=None):
        """Convert a networkx graph (and optional side information) into a Problem.

        Parameters
        ----------
        G : networkx.Graph or networkx.MultiGraph
            Undirected data graph. Edge attribute ``weight`` is a similarity (missing
            means 1); parallel edges of a multigraph are summed; self loops are ignored.
        S : SideInfo, networkx.Graph or None, default=None
            Side information; a graph is read as signed weights (see
            :meth:`graphclust.SideInfo.from_graph`).
        weight : str or None, default="weight"
            Edge attribute holding the similarity; ``None`` gives every edge weight 1.
        features : str or None, default="features"
            Node attribute holding a numeric feature vector. If no node has it the
            problem has no features; if some nodes have it, all must.
        vertex_weight : str or None, default=None
            Node attribute holding a vertex weight (missing means 1).

        Returns
        -------
        Problem

        Raises
        ------
        InvalidGraphError
            Empty or directed graph; an edge weight that is NaN, infinite, negative or
            not a number (the message names the edge).
        InvalidFeaturesError
            Features missing on some nodes, ragged, non-numeric or not finite.
        UnknownNodeError, InvalidConstraintError
            Side information that refers to an unknown node or is malformed.
        """
        if not is_graph(G):
            raise InvalidGraphError(f"expected a networkx graph, got {type(G).__name__}")
        if G.is_directed():
            raise InvalidGraphError(
                "the data graph is directed; similarities are symmetric, pass G.to_undirected()"
            )
        nodes = list(G.nodes)
        n = len(nodes)
        if n == 0:
            raise InvalidGraphError("the data graph is empty: it has no nodes")
        index = {u: i for i, u in enumerate(nodes)}
        W = _adjacency_csr(G, nodes, index, weight)
        X = _node_features(G, nodes, features) if features else None
        vw = None
        if vertex_weight is not None:
            vw = _node_scalars(G, nodes, vertex_weight)
        problem = cls(nodes=nodes, W=W, X=X, vertex_weights=vw, graph=G)
        problem.__dict__["index"] = index  # already built; seed the cached property
        return problem.with_side_info(S) if S is not None else problem

    @classmethod
    def from_array(cls, X, S=None, *, graph=None, nodes=None):
        """Build a Problem from a feature matrix, with nodes ``0..n-1`` by default.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Finite numeric features.
        S : SideInfo, networkx.Graph or None, default=None
            Side information over the node keys.
        graph : networkx.Graph, scipy.sparse matrix or None, default=None
            Optional data graph over the same nodes (for example from
            :func:`graphclust.knn_graph`); without it the problem has no edges.
        nodes : sequence of hashable or None, default=None
            Node keys; ``range(n_samples)`` when omitted.

        Returns
        -------
        Problem
        """
        X = check_feature_matrix(X)
        n = X.shape[0]
        nodes = list(range(n)) if nodes is None else _unique_keys(nodes)
        if len(nodes) != n:
            raise InvalidFeaturesError(f"{len(nodes)} node keys given for {n} rows of X")
        if graph is None:
            W = sp.csr_array((n, n))
        elif is_graph(graph):
            gp = cls.from_graph(graph, features=None)
            if gp.n_nodes != n:
                raise InvalidGraphError(f"the data graph has {gp.n_nodes} nodes but X has {n} rows")
            try:
                perm = np.fromiter((gp.index[u] for u in nodes), np.int64, n)
            except KeyError as exc:
                raise UnknownNodeError(
                    f"node {exc.args[0]!r} of X is not in the data graph", node=exc.args[0]
                ) from None
            W = gp.W[perm][:, perm].tocsr()
        else:
            W = _check_sparse_similarity(graph, n)
        problem = cls(nodes=nodes, W=W, X=X)
        return problem.with_side_info(S) if S is not None else problem

    @classmethod
    def from_arrays(cls, W, X=None, S=None, *, nodes=None, vertex_weights=None, counts=None):
        """Build a Problem from a sparse (or dense) similarity matrix.

        This is the path that skips networkx, for large grids and k-NN graphs. ``W`` is
        symmetrised as ``max(W, W.T)`` only if it is not symmetric already; its
        diagonal is dropped.

        Parameters
        ----------
        W : scipy.sparse matrix or ndarray of shape (n_nodes, n_nodes)
            Non-negative finite similarities.
        X : array-like of shape (n_nodes, n_features) or None, default=None
        S : SideInfo, networkx.Graph or None, default=None
        nodes : sequence of hashable or None, default=None
            Node keys; ``range(n_nodes)`` when omitted.
        vertex_weights : array-like of shape (n_nodes,) or None, default=None
        counts : array-like of int of shape (n_nodes,) or None, default=None
            How many original points each node stands for (e.g. the pixels of a
            superpixel); ``X`` then holds their feature *sums*. ``None``: all 1.

        Examples
        --------
        >>> import numpy as np
        >>> P = Problem.from_arrays(np.array([[0, 1], [1, 0]]), X=[[6.0], [1.0]], counts=[3, 1])
        >>> P.feature_means.ravel().tolist()
        [2.0, 1.0]
        """
        if not sp.issparse(W):
            try:
                W = np.asarray(W, dtype=np.float64)
            except (TypeError, ValueError):
                raise InvalidGraphError("W must be a numeric square matrix (sparse or dense)") from None
        if W.ndim != 2:
            raise InvalidGraphError(f"W must be a square matrix, got {W.ndim} dimension(s)")
        n = W.shape[0]
        W = _check_sparse_similarity(W, n)
        nodes = range(n) if nodes is None else _unique_keys(nodes)
        if len(nodes) != n:
            raise InvalidGraphError(f"{len(nodes)} node keys given for a {n}x{n} matrix")
        if X is not None:
            X = check_feature_matrix(X)
            if X.shape[0] != n:
                raise InvalidFeaturesError(f"X has {X.shape[0]} rows but W has {n} nodes")
        if vertex_weights is not None:
            vertex_weights = np.asarray(vertex_weights, dtype=float).reshape(-1)
            if vertex_weights.shape != (n,) or not np.all(np.isfinite(vertex_weights) & (vertex_weights >= 0)):
                raise InvalidGraphError("vertex_weights must be n_nodes finite non-negative numbers")
        if counts is not None:
            raw = np.asarray(counts).reshape(-1)
            if raw.shape != (n,) or raw.dtype.kind not in "iu" or (raw < 1).any():
                raise InvalidGraphError(f"counts must be {n} integers >= 1 (points per node)")
            counts = raw.astype(np.int64)
        problem = cls(nodes=nodes, W=W, X=X, counts=counts, vertex_weights=vertex_weights)
        return problem.with_side_info(S) if S is not None else problem

    def with_side_info(self, S):
        """Return a copy of this problem whose constraints come from ``S``.

        Arrays other than the constraints are shared, not copied.
        """
        if S is None:
            return self.with_constraints(np.empty((0, 2), np.int64), np.empty(0))
        S = S if isinstance(S, SideInfo) else SideInfo.from_graph(S)
        return self.with_constraints(*S.to_arrays(self.index))

    def with_constraints(self, constraints, constraint_weights):
        """Return a copy of this problem with other constraint arrays (index pairs
        ``(M, 2)`` with ``i < j`` and signed weights ``(M,)``, trusted as given: the
        constraint closure of :class:`~graphclust.HMRF`, reweighted constraints).

        Arrays other than the constraints are shared, not copied.
        """
        return self._replaced(constraints=constraints, constraint_weights=constraint_weights)

    def _replaced(self, **arrays):
        """A copy with some fields replaced; the others, and the node index once built,
        are shared."""
        clone = Problem(**{f.name: arrays.get(f.name, getattr(self, f.name)) for f in fields(self)})
        if "index" in self.__dict__:
            clone.__dict__["index"] = self.__dict__["index"]
        return clone

    # ------------------------------------------------------------------ views
    @cached_property
    def index(self):
        """dict: node key -> position in every array."""
        return {u: i for i, u in enumerate(self.nodes)}

    @property
    def n_nodes(self):
        return len(self.nodes)

    @property
    def n_edges(self):
        """Number of undirected edges with non-zero similarity."""
        return self.W.nnz // 2

    @property
    def n_constraints(self):
        return len(self.constraint_weights)

    @property
    def n_features(self):
        return 0 if self.X is None else self.X.shape[1]

    @property
    def must_mask(self):
        """Boolean mask of the must-link rows of :attr:`constraints`."""
        return self.constraint_weights > 0

    @property
    def cannot_mask(self):
        """Boolean mask of the cannot-link rows of :attr:`constraints`."""
        return self.constraint_weights < 0

    @property
    def feature_means(self):
        """Features divided by :attr:`counts`: the mean of the original nodes each
        (possibly merged) node stands for."""
        if self.X is None:
            return None
        return self.X / self.counts[:, None]

    @cached_property
    def constraint_csr(self):
        """The constraints as a symmetric signed adjacency, built once: see
        :func:`constraint_csr`."""
        return constraint_csr(self.constraints, self.constraint_weights, self.n_nodes)

    def within_scatter(self):
        """``(scatter_index, scatter)`` with the defaults filled in: every node ``-1`` and
        no blocks when no node has scatter."""
        if self.scatter_index is None:
            return np.full(self.n_nodes, -1, dtype=np.int64), np.zeros((0, self.n_features, self.n_features))
        return self.scatter_index, self.scatter

    def second_moments(self, *, diagonal=False):
        """Sum of the outer products ``Σ_m x_m x_mᵀ`` of the original points behind each
        node: ``(n_nodes, n_features, n_features)``, or its diagonal ``Σ_m x_m²``
        ``(n_nodes, n_features)`` with ``diagonal=True`` (cheap).

        Examples
        --------
        >>> import numpy as np
        >>> import graphclust as gc
        >>> X = np.array([[1.0, 0.0], [3.0, 2.0], [5.0, 5.0]])
        >>> P = gc.Problem.from_array(X, gc.SideInfo.from_pairs(must=[(0, 1)], weight=float("inf")))
        >>> reduced, lift = gc.contract(P)
        >>> reduced.second_moments(diagonal=True)   # rows 0 and 1 merged: 1+9, 0+4
        array([[10.,  4.],
               [25., 25.]])
        """
        if self.X is None:
            raise InvalidFeaturesError("the problem has no features, so no second moments")
        index, blocks = self.within_scatter()
        mean = self.X / self.counts[:, None]
        has = index >= 0
        if diagonal:
            out = self.X * mean
            if has.any():
                out[has] += np.einsum("kii->ki", blocks)[index[has]]
            return out
        out = self.X[:, :, None] * mean[:, None, :]
        if has.any():
            out[has] += blocks[index[has]]
        return out

    def feature_covariance(self):
        """``(mean, covariance)`` of the original points behind the nodes (counts and
        within-node scatter included, so a contracted problem gives the original's),
        shapes ``(n_features,)`` and ``(n_features, n_features)``; the covariance is
        normalised by the number of points."""
        if self.X is None:
            raise InvalidFeaturesError("the problem has no features, so no covariance")
        N = float(self.counts.sum())
        mean = self.X.sum(axis=0) / N
        # Σ_m x_m x_mᵀ = Σ_i X_i X_iᵀ / c_i + Σ scatter (X holds sums), without an n × d × d array
        second = self.X.T @ self.feature_means + self.within_scatter()[1].sum(axis=0)
        return mean, second / N - np.outer(mean, mean)

    def projected(self, mean, axes):
        """A copy whose points are ``(x − mean) @ axes`` (axes of shape ``(n_features,
        m)``): a merged node's feature sum and within-node scatter are mapped as its
        points would be, so contracting and projecting commute. Constraints, graph and
        counts are shared, not copied."""
        axes = np.asarray(axes, dtype=np.float64)
        X = self.X @ axes - self.counts[:, None] * (np.asarray(mean, dtype=np.float64) @ axes)[None, :]
        scatter = None if self.scatter is None else np.einsum("da,kde,eb->kab", axes, self.scatter, axes)
        return self._replaced(X=X, scatter=scatter)

    def degrees(self):
        """Weighted degree of every node, shape (n_nodes,)."""
        return np.asarray(self.W.sum(axis=1)).reshape(-1)

    # ------------------------------------------------------------------ way back
    def _check_labels(self, labels):
        labels = np.asarray(labels)
        if labels.shape != (self.n_nodes,):
            raise InvalidParameterError(
                f"expected {self.n_nodes} labels (one per node), got shape {labels.shape}"
            )
        return labels

    def partition(self, labels):
        """Map labels in node order to a dict ``node -> cluster``.

        Parameters
        ----------
        labels : array-like of shape (n_nodes,)
        """
        labels = self._check_labels(labels)
        return dict(zip(self.nodes, labels.tolist()))

    def to_networkx(self, labels=None, *, name="cluster"):
        """Return a copy of the data graph with ``labels`` as node attribute ``name``.

        The source graph is copied, never modified. A problem built from arrays gives a
        new graph with edge attribute ``weight`` (and ``features`` if any).
        """
        import networkx as nx

        if self.graph is not None and is_graph(self.graph):
            G = self.graph.copy()
        else:
            G = nx.Graph()
            G.add_nodes_from(self.nodes)
            if self.X is not None:
                nx.set_node_attributes(G, dict(zip(self.nodes, self.X.tolist())), "features")
            coo = sp.triu(self.W, k=1).tocoo()
            nodes = self.nodes
            G.add_weighted_edges_from(
                (nodes[i], nodes[j], w) for i, j, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist())
            )
        if labels is not None:
            labels = self._check_labels(labels)
            nx.set_node_attributes(G, dict(zip(self.nodes, labels.tolist())), name)
        return G

    def __repr__(self):
        return (
            f"Problem(n_nodes={self.n_nodes}, n_edges={self.n_edges}, n_features={self.n_features}, "
            f"n_must={int(self.must_mask.sum())}, n_cannot={int(self.cannot_mask.sum())})"
        )


def as_problem(data, S=None, **kwargs):
    """Return a :class:`Problem` for a networkx graph, a feature array or a Problem.

    This is what every estimator's ``fit(data, S)`` calls first.
    """
    if data is None:
        raise InvalidFeaturesError("X is None: pass a feature array (n_samples, n_features), a similarity "
                                   "matrix or a networkx graph")
    if isinstance(data, Problem):
        return data.with_side_info(S) if S is not None else data
    if is_graph(data):
        return Problem.from_graph(data, S, **kwargs)
    if hasattr(data, "iloc") and hasattr(data, "index") and getattr(data, "ndim", 0) == 2:
        # a DataFrame: its index names the nodes (partition_ keys, constraint endpoints)
        kwargs.setdefault("nodes", list(data.index))
        return Problem.from_array(data.to_numpy(), S, **kwargs)
    if sp.issparse(data):
        if data.ndim == 2 and data.shape[0] != data.shape[1]:
            # not a similarity matrix: sparse feature rows, which the estimators use dense
            return Problem.from_array(_dense_features(data), S, **kwargs)
        return Problem.from_arrays(data, S=S, **kwargs)
    return Problem.from_array(data, S, **kwargs)


# ---------------------------------------------------------------------- helpers
#: sparse feature matrices are made dense up to this many bytes
MAX_DENSE_FEATURE_BYTES = 2 * 1024**3


def _dense_features(X):
    """A non-square sparse ``X`` as dense feature rows, or a clear error when too large."""
    size = X.shape[0] * X.shape[1] * 8
    if size > MAX_DENSE_FEATURE_BYTES:
        raise InvalidFeaturesError(
            f"X is a sparse feature matrix of shape {X.shape}; as dense float64 features it would need "
            f"{size / 1024**3:.1f} GB (limit {MAX_DENSE_FEATURE_BYTES / 1024**3:.0f} GB): reduce its dimension "
            "first (e.g. sklearn.decomposition.TruncatedSVD)")
    return X.toarray()


def _adjacency_csr(G, nodes, index, weight):
    """CSR similarities straight from networkx's adjacency dicts.

    Iterating ``G._adj`` with C-level iterators (``chain``, ``map``) is about three times
    faster than ``G.edges(data=...)``: both directions are read, so no symmetrisation
    or duplicate bookkeeping is needed for a simple graph.
    """
    n = len(nodes)
    if G.is_multigraph():
        m = G.number_of_edges()
        if not m:
            return sp.csr_array((n, n))
        us, vs, ws = zip(*G.edges(data=weight, default=1.0)) if weight else (*zip(*G.edges()), None)
        rows = np.fromiter(map(index.__getitem__, us), np.int64, m)
        cols = np.fromiter(map(index.__getitem__, vs), np.int64, m)
        vals = np.ones(m) if ws is None else _checked(_to_float(ws), rows, cols, nodes)
        return _symmetric_csr(rows, cols, vals, n)
    adj = G._adj
    deg = np.fromiter(map(len, adj.values()), np.int64, n)
    total = int(deg.sum())
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg, out=indptr[1:])
    cols = np.fromiter(map(index.__getitem__, chain.from_iterable(adj.values())), np.int64, total)
    rows = np.repeat(np.arange(n, dtype=np.int64), deg)
    if weight is None:
        vals = np.ones(total)
    else:
        attrs = list(chain.from_iterable(map(dict.values, adj.values())))
        vals = _checked(_to_float(list(map(methodcaller("get", weight, 1.0), attrs))), rows, cols, nodes)
    W = sp.csr_array((vals, cols, indptr), shape=(n, n))
    W.setdiag(0)  # self loops carry no similarity between two nodes
    W.eliminate_zeros()
    W.sort_indices()
    return W


#: the weight types read without a closer look (``np.fromiter`` alone would also turn
#: the string "2" into 2.0 and True into 1.0, which the GraphML writer refuses)
_PLAIN_NUMBERS = frozenset({float, int, np.float64, np.float32, np.int64, np.int32})


def _not_a_number(w):
    return isinstance(w, (bool, np.bool_)) or not isinstance(w, numbers.Real)


def _to_float(ws):
    """Weights as float64, or the position and value of the first one that is not a
    real number (strings, booleans and None included)."""
    if not set(map(type, ws)) <= _PLAIN_NUMBERS:  # one C-level pass over the types
        for k, w in enumerate(ws):
            if _not_a_number(w):
                return k, w
    return np.fromiter(ws, np.float64, len(ws))


def _checked(vals, rows, cols, nodes):
    """Raise InvalidGraphError naming the first edge whose weight is not a finite
    number >= 0."""
    if isinstance(vals, tuple):
        k, w = vals
        edge = (nodes[rows[k]], nodes[cols[k]])
        raise InvalidGraphError(f"edge {edge!r} has weight {w!r}; similarities must be numbers", edge=edge)
    bad = ~(np.isfinite(vals) & (vals >= 0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        edge = (nodes[rows[k]], nodes[cols[k]])
        raise InvalidGraphError(
            f"edge {edge!r} has weight {vals[k]}; similarities must be finite and >= 0", edge=edge
        )
    return vals


def _symmetric_csr(rows, cols, vals, n):
    """Symmetric CSR from one triangle-or-both list of entries; diagonal dropped,
    duplicates summed, explicit zeros removed."""
    keep = rows != cols
    rows, cols, vals = rows[keep], cols[keep], vals[keep]
    W = sp.coo_array(
        (np.concatenate([vals, vals]), (np.concatenate([rows, cols]), np.concatenate([cols, rows]))),
        shape=(n, n),
    ).tocsr()
    W.sum_duplicates()
    W.eliminate_zeros()
    return W


def _edge_list_csr(rows, cols, vals, n):
    """Symmetric CSR from undirected edges given once each (no pair twice), as
    :meth:`Problem.from_graph` builds it from a simple graph: self loops and zero
    weights dropped, indices sorted, int64 index arrays. Sorts the ``2E`` directed
    entries once (about 40 bytes an edge at the peak)."""
    keep = (rows != cols) & (vals != 0)
    if not keep.all():
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    del keep
    src = np.concatenate([rows, cols]).astype(np.int64, copy=False)
    dst = np.concatenate([cols, rows]).astype(np.int64, copy=False)
    del rows, cols
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    del src
    indices = dst[order]
    del dst
    data = np.concatenate([vals, vals])[order]
    return sp.csr_array((data, indices, indptr), shape=(n, n))


def constraint_csr(pairs, weights, n):
    """Both directions of every constraint as CSR arrays ``(indptr, partners, weights)``:
    the partners of node ``i`` are ``partners[indptr[i]:indptr[i + 1]]`` with their
    signed weights (``> 0`` must-link, ``< 0`` cannot-link, ``±inf`` hard), in the order
    of the constraint rows. The one form every sweep (ICM with births, Gibbs) reads.

    Examples
    --------
    >>> indptr, partners, w = constraint_csr(np.array([[0, 2], [1, 2]]), np.array([1.0, -2.0]), 3)
    >>> indptr.tolist(), partners.tolist(), w.tolist()
    ([0, 1, 2, 4], [2, 2, 0, 1], [1.0, -2.0, 1.0, -2.0])
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    src = np.concatenate([pairs[:, 0], pairs[:, 1]])
    dst = np.concatenate([pairs[:, 1], pairs[:, 0]])
    ww = np.concatenate([weights, weights])
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, np.ascontiguousarray(dst[order]), np.ascontiguousarray(ww[order])


def _check_sparse_similarity(W, n):
    if W.ndim != 2 or W.shape != (n, n):
        raise InvalidGraphError(f"the similarity matrix must be square, got shape {W.shape}")
    if n == 0:
        raise InvalidGraphError("the data graph is empty: it has no nodes")
    W = sp.csr_array(W, dtype=np.float64) if sp.issparse(W) else sp.csr_array(np.asarray(W, dtype=np.float64))
    bad = ~(np.isfinite(W.data) & (W.data >= 0))
    if bad.any():
        coo = W.tocoo()
        k = int(np.flatnonzero(~(np.isfinite(coo.data) & (coo.data >= 0)))[0])
        i, j = int(coo.row[k]), int(coo.col[k])
        raise InvalidGraphError(
            f"edge {(i, j)!r} has weight {coo.data[k]}; similarities must be finite and >= 0", edge=(i, j)
        )
    W = W.copy()
    W.setdiag(0)
    W.eliminate_zeros()
    if (W != W.T).nnz:
        W = W.maximum(W.T).tocsr()
    W.sort_indices()
    return W


def _unique_keys(nodes):
    """The node keys as a list, refusing repeats (they would merge two rows)."""
    nodes = list(nodes)
    if len(set(nodes)) != len(nodes):
        seen = set()
        for u in nodes:
            if u in seen:
                raise InvalidGraphError(f"node key {u!r} is given twice; node keys must be unique")
            seen.add(u)
    return nodes


def _node_features(G, nodes, attr):
    data = G.nodes
    return _feature_rows(nodes, [data[u].get(attr) for u in nodes], attr)


def _feature_rows(nodes, values, attr):
    """The feature matrix of ``values[i]``, the ``attr`` value of ``nodes[i]`` (None:
    absent); None when no node has one. Shared by :meth:`Problem.from_graph` and the
    GraphML reader that builds a Problem without a graph, so both refuse alike."""
    missing = [u for u, v in zip(nodes, values) if v is None]
    if len(missing) == len(nodes):
        return None
    if missing:
        raise InvalidFeaturesError(
            f"node {missing[0]!r} has no {attr!r} attribute, but other nodes do "
            f"({len(missing)} of {len(nodes)} nodes lack it)",
            node=missing[0],
        )
    try:
        X = np.asarray(values, dtype=np.float64)
        ok = X.ndim in (1, 2)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        _raise_feature_culprit(nodes, values, attr)
    if X.ndim == 1:
        X = X[:, None]
    if not np.isfinite(X).all():
        r = int(np.argwhere(~np.isfinite(X))[0][0])
        raise InvalidFeaturesError(
            f"node {nodes[r]!r} has non-finite features {values[r]!r}", node=nodes[r]
        )
    return X


def _raise_feature_culprit(nodes, values, attr):
    """Find the first node whose features are non-numeric or of another length."""
    length = None
    for u, v in zip(nodes, values):
        if isinstance(v, (str, bytes)):
            raise InvalidFeaturesError(
                f"node {u!r} has {attr}={v!r}, a string; expected a numeric sequence", node=u
            )
        vec = np.atleast_1d(np.asarray(v, dtype=object))
        if vec.ndim != 1:
            raise InvalidFeaturesError(f"node {u!r} has {attr} of shape {vec.shape}; expected a flat vector", node=u)
        for x in vec:
            if isinstance(x, bool) or not isinstance(x, numbers.Real):
                raise InvalidFeaturesError(
                    f"node {u!r} has a non-numeric entry {x!r} in {attr}", node=u
                )
        if length is None:
            length = len(vec)
        elif len(vec) != length:
            raise InvalidFeaturesError(
                f"node {u!r} has {len(vec)} features but earlier nodes have {length} (ragged {attr!r})",
                node=u,
            )
    raise InvalidFeaturesError(f"node attribute {attr!r} could not be read as a numeric matrix")


def _node_scalars(G, nodes, attr):
    out = np.empty(len(nodes))
    for k, u in enumerate(nodes):
        v = G.nodes[u].get(attr, 1.0)
        if _not_a_number(v):
            raise InvalidGraphError(f"node {u!r} has {attr}={v!r}; expected a number")
        out[k] = float(v)
        if not (np.isfinite(out[k]) and out[k] >= 0):
            raise InvalidGraphError(f"node {u!r} has {attr}={v!r}; expected a finite number >= 0")
    return out
