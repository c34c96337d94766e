"""The one energy every MAP-style method in graphclust minimises.

.. math::

    E(z) = c + \\sum_i U_{i, z_i}
         + \\sum_{(i,j): w_{ij} > 0} w_{ij} [z_i \\ne z_j]
         + \\sum_{(i,j): w_{ij} < 0} |w_{ij}| [z_i = z_j]
         + \\sum_{k \\in z} h_k
         + \\sum_t T_t[z_{a_t}, z_{b_t}]

unary costs ``U``, signed Potts pair terms (data-graph smoothness and must-links are
attractive, cannot-links repulsive, ``±inf`` hard), optional per-label costs ``h`` paid
once for every label in use (births in RDP-means), and optional general ``K x K``
tables (models imported from pgmpy). Every engine reports the energy of what it
returns through :meth:`Energy.evaluate`, so engines compare number for number.
"""

from functools import cached_property

import numpy as np
import scipy.sparse as sp

from ._utils import check_float
from .errors import InvalidConstraintError, InvalidParameterError

__all__ = ["Energy", "energy_value", "potts_csr"]


def check_unary_costs(U, offset=()):
    """Raise :class:`InvalidParameterError` naming the first NaN or ``-inf`` entry of
    the unary costs ``U`` (any shape; ``offset`` is added to the leading indices, for a
    tile of a larger array). Costs are numbers or ``+inf`` (a forbidden label)."""
    bad = np.isnan(U) | np.isneginf(U)
    if bad.any():
        where = np.argwhere(bad)[0]
        value = U[tuple(where)]
        where[: len(offset)] += np.asarray(offset, dtype=where.dtype)
        raise InvalidParameterError(f"unary[{', '.join(map(str, where.tolist()))}] is {value}; costs must be "
                                    "numbers or +inf")


class Energy:
    """Unary costs plus signed Potts pair terms over ``n_nodes`` discrete variables.

    Parallel pair terms on the same node pair are merged on construction into one
    signed weight plus a constant, which is exact:
    ``a·[z_i≠z_j] + b·[z_i=z_j] = min(a, b) + (a−b)·[z_i≠z_j]`` when ``a ≥ b`` (and
    symmetrically otherwise).

    Parameters
    ----------
    unary : array-like of shape (n_nodes, n_labels)
        Cost of giving node ``i`` label ``k``. ``+inf`` forbids a label (a hard seed);
        NaN and ``-inf`` are refused.
    edges : array-like of shape (n_edges, 2), default=None
        Node index pairs of the Potts terms (any order, repeats allowed).
    weights : array-like of shape (n_edges,), default=None
        Signed weights: ``> 0`` attractive ``w·[z_i≠z_j]``, ``< 0`` repulsive
        ``|w|·[z_i=z_j]``, ``±inf`` hard.
    label_costs : array-like of shape (n_labels,) or None, default=None
        Non-negative cost paid once for every label used.
    table_edges : array-like of shape (n_tables, 2) or None, default=None
    tables : array-like of shape (n_tables, n_labels, n_labels) or None, default=None
        General pairwise cost tables ``T[t, z_a, z_b]`` (finite).
    constant : float, default=0.0

    Attributes
    ----------
    edges : ndarray of shape (n_edges, 2)
        Unique pairs with ``i < j`` after merging.
    weights : ndarray of shape (n_edges,)
        Merged signed weights (no zeros).
    constant : float
        Includes what merging parallel terms moved out of the pairs.

    Examples
    --------
    >>> import numpy as np
    >>> E = Energy([[0.0, 2.0], [1.0, 0.0], [0.0, 3.0]], edges=[(0, 1), (1, 2)], weights=[1.5, -0.5])
    >>> E.evaluate([0, 0, 0]), E.evaluate([0, 1, 0])
    (1.5, 1.5)
    >>> E.n_nodes, E.n_labels, E.n_edges
    (3, 2, 2)
    """

    def __init__(self, unary, edges=None, weights=None, *, label_costs=None, table_edges=None,
                 tables=None, constant=0.0):
        U = np.array(unary, dtype=np.float64, copy=True)
        if U.ndim != 2 or U.shape[0] == 0 or U.shape[1] == 0:
            raise InvalidParameterError(f"unary must have shape (n_nodes, n_labels) with both > 0, got {U.shape}")
        check_unary_costs(U)
        if np.isinf(U).all(axis=1).any():
            i = int(np.flatnonzero(np.isinf(U).all(axis=1))[0])
            raise InvalidConstraintError(f"node {i} has an infinite cost for every label; no labelling is feasible")
        n, K = U.shape
        self.unary = U
        self.constant = float(constant)
        e = np.empty((0, 2), np.int64) if edges is None else _index_pairs(edges, "edges")
        w = np.empty(0) if weights is None else _float_vector(weights, "weights")
        if len(e) != len(w):
            raise InvalidParameterError(f"{len(e)} edges but {len(w)} weights")
        _check_pairs(e, n, "edge")
        if np.isnan(w).any():
            k = int(np.flatnonzero(np.isnan(w))[0])
            raise InvalidParameterError(f"edge {tuple(e[k].tolist())} has weight nan")
        self.edges, self.weights, shift = _merge_parallel(e, w, n)
        self.constant += shift
        if label_costs is not None:
            label_costs = np.asarray(label_costs, dtype=np.float64).reshape(-1)
            if label_costs.shape != (K,) or not (np.isfinite(label_costs) & (label_costs >= 0)).all():
                raise InvalidParameterError(f"label_costs must be {K} finite numbers >= 0")
        self.label_costs = label_costs
        if tables is not None:
            if table_edges is None:
                raise InvalidParameterError("tables need table_edges: one (i, j) pair per table")
            te = _index_pairs(table_edges, "table_edges")
            T = np.asarray(tables, dtype=np.float64)
            if T.shape != (len(te), K, K):
                raise InvalidParameterError(f"tables must have shape ({len(te)}, {K}, {K}), got {T.shape}")
            if not np.isfinite(T).all():
                raise InvalidParameterError("pair tables must be finite")
            _check_pairs(te, n, "table edge")
            self.table_edges, self.tables = te, T
        else:
            self.table_edges, self.tables = np.empty((0, 2), np.int64), np.empty((0, K, K))

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_problem(cls, problem, unary, *, smoothness=1.0, constraint_scale=1.0, constraint_weights=None,
                     label_costs=None, constant=0.0):
        """Energy of a :class:`~graphclust.Problem`: the given unaries, the data graph as
        attractive Potts terms ``smoothness · W_ij`` and the constraints scaled by
        ``constraint_scale`` (hard ones stay infinite).

        Parameters
        ----------
        problem : Problem
        unary : array-like of shape (problem.n_nodes, n_labels)
        smoothness : float, default=1.0
            Multiplier of the data-graph similarities (0 drops them).
        constraint_scale : float, default=1.0
            Multiplier of the constraint strengths.
        constraint_weights : array-like of shape (problem.n_constraints,) or None
            Signed weights to use instead of ``problem.constraint_weights`` (one per
            row of ``problem.constraints``): distance-scaled penalties, reliability
            weights. ``None``: the problem's own.
        label_costs : array-like of shape (n_labels,) or None
        constant : float, default=0.0
            Added to every labelling's energy.

        Examples
        --------
        >>> import networkx as nx, numpy as np
        >>> import graphclust as gc
        >>> P = gc.Problem.from_graph(nx.path_graph(3), gc.SideInfo.from_pairs(cannot=[(0, 2)]))
        >>> E = Energy.from_problem(P, np.zeros((3, 2)), smoothness=2.0)
        >>> E.evaluate([0, 0, 0]), E.evaluate([0, 0, 1])
        (1.0, 2.0)
        """
        smoothness = check_float(smoothness, "smoothness", low=0.0)
        constraint_scale = check_float(constraint_scale, "constraint_scale", low=0.0)
        unary = np.asarray(unary, dtype=np.float64)
        if unary.ndim != 2 or unary.shape[0] != problem.n_nodes:
            raise InvalidParameterError(
                f"unary must have shape ({problem.n_nodes}, n_labels), got {unary.shape}"
            )
        parts_e, parts_w = [], []
        if smoothness:
            upper = sp.triu(problem.W, k=1).tocoo()
            parts_e.append(np.stack([upper.row, upper.col], axis=1).astype(np.int64))
            parts_w.append(smoothness * upper.data)
        if constraint_weights is None:
            constraint_weights = problem.constraint_weights
        else:
            constraint_weights = _float_vector(constraint_weights, "constraint_weights")
            if constraint_weights.shape != (problem.n_constraints,):
                raise InvalidParameterError(
                    f"constraint_weights must have one weight per constraint ({problem.n_constraints}), "
                    f"got shape {constraint_weights.shape}"
                )
        if constraint_scale and problem.n_constraints:
            parts_e.append(problem.constraints)
            parts_w.append(constraint_scale * constraint_weights)
        edges = np.concatenate(parts_e) if parts_e else None
        weights = np.concatenate(parts_w) if parts_w else None
        return cls(unary, edges, weights, label_costs=label_costs, constant=constant)

    @classmethod
    def _from_unique_pairs(cls, unary, edges, weights):
        """An energy from pairs the caller guarantees unique, with ``i < j`` and finite
        weights ``> 0`` (grid builders: a pixel and its forward neighbour). Skips the
        sort that merges parallel terms; the unary is still checked."""
        E = cls(unary)
        E.edges = np.asarray(edges, dtype=np.int64)
        E.weights = np.asarray(weights, dtype=np.float64)
        return E

    # ------------------------------------------------------------------ facts
    @property
    def n_nodes(self):
        return self.unary.shape[0]

    @property
    def n_labels(self):
        return self.unary.shape[1]

    @property
    def n_edges(self):
        return len(self.weights)

    @property
    def has_hard_terms(self):
        return bool(np.isinf(self.weights).any() or np.isinf(self.unary).any())

    @property
    def is_attractive(self):
        """True when every pair term is attractive Potts (no cannot-links, no tables)."""
        return bool((self.weights > 0).all() and len(self.tables) == 0)

    @cached_property
    def adjacency(self):
        """Both directions of every Potts edge as CSR arrays ``(indptr, indices, weights,
        edge_ids)``: the neighbours of node ``i`` are ``indices[indptr[i]:indptr[i+1]]``."""
        return potts_csr(self.edges, self.weights, self.n_nodes)

    def hard_penalty(self):
        """A finite cost larger than any difference the finite terms can make.

        Engines that cannot use infinities replace ``±inf`` by ``±hard_penalty()``:
        then a labelling that violates a hard term always costs more than one that
        does not, when such a labelling exists.
        """
        U = self.unary
        finite_u = np.where(np.isinf(U), np.nan, U)
        with np.errstate(invalid="ignore"):
            spread = np.nan_to_num(np.nanmax(finite_u, axis=1) - np.nanmin(finite_u, axis=1))
        w = self.weights[np.isfinite(self.weights)]
        total = spread.sum() + np.abs(w).sum()
        if self.label_costs is not None:
            total += self.label_costs.sum()
        if len(self.tables):
            total += (self.tables.max(axis=(1, 2)) - self.tables.min(axis=(1, 2))).sum()
        return float(1.0 + 2.0 * total)

    def finite(self, penalty=None):
        """A copy with every ``±inf`` replaced by ``±penalty`` (default
        :meth:`hard_penalty`), for engines that need finite numbers."""
        penalty = self.hard_penalty() if penalty is None else float(penalty)
        out = object.__new__(Energy)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k != "adjacency"})
        # a forbidden label costs the node's worst finite label plus the penalty, so it
        # can never be cheaper than an allowed one
        U = self.unary
        worst = np.where(np.isinf(U), -np.inf, U).max(axis=1, keepdims=True)
        out.unary = np.where(np.isinf(U), worst + penalty, U)
        out.weights = np.clip(self.weights, -penalty, penalty)
        return out

    # ------------------------------------------------------------------ scoring
    def evaluate(self, labels):
        """Energy of a labelling: the single way every engine scores its answer.

        Parameters
        ----------
        labels : array-like of int, shape (n_nodes,)

        Returns
        -------
        float
            ``inf`` when a hard term is violated.
        """
        z = self.check_labels(labels)
        total = energy_value(z, self.unary[np.arange(self.n_nodes), z], self.edges, self.weights,
                             label_costs=self.label_costs, constant=self.constant)
        if len(self.tables):
            total += self.tables[np.arange(len(self.tables)), z[self.table_edges[:, 0]], z[self.table_edges[:, 1]]].sum()
        return float(total)

    def violated_hard_terms(self, labels):
        """Number of hard (infinite) terms a labelling violates."""
        z = self.check_labels(labels)
        n_bad = int(np.isinf(self.unary[np.arange(self.n_nodes), z]).sum())
        if self.n_edges:
            same = z[self.edges[:, 0]] == z[self.edges[:, 1]]
            n_bad += int((np.isposinf(self.weights) & ~same).sum() + (np.isneginf(self.weights) & same).sum())
        return n_bad

    def check_labels(self, labels, name="labels"):
        """``labels`` as an int64 array of one label per node.

        Integral floats are accepted; anything else raises
        :class:`~graphclust.errors.InvalidParameterError` naming the first bad entry
        (``name`` is the argument's name in the message, e.g. ``"init"``).
        """
        z = np.asarray(labels)
        if z.shape != (self.n_nodes,):
            raise InvalidParameterError(f"{name} must have shape ({self.n_nodes},), got {z.shape}")
        if z.size and not np.issubdtype(z.dtype, np.integer):
            try:
                zf = z.astype(np.float64)
            except (TypeError, ValueError):
                raise InvalidParameterError(f"{name} must hold integer labels, got dtype {z.dtype}") from None
            bad = np.flatnonzero(~np.isfinite(zf) | (zf != np.round(np.nan_to_num(zf))))
            if len(bad):
                raise InvalidParameterError(f"{name}[{bad[0]}] = {z[bad[0]].item()!r} is not an integer label")
            z = zf
        z = z.astype(np.int64)
        bad = np.flatnonzero((z < 0) | (z >= self.n_labels))
        if len(bad):
            raise InvalidParameterError(f"{name}[{bad[0]}] = {z[bad[0]]} is not a label in [0, {self.n_labels})")
        return z

    # ------------------------------------------------------------------ interop
    def to_pgmpy(self, kind="markov"):
        """Export to pgmpy (``kind="markov"``: ``DiscreteMarkovNetwork``; ``"factor"``:
        ``FactorGraph``). Needs ``graphclust[pgmpy]``; see :mod:`graphclust.pgmpy_bridge`."""
        from ._pgmpy import model_from_energy

        return model_from_energy(self, kind=kind)

    @classmethod
    def from_pgmpy(cls, model):
        """Import a pairwise discrete pgmpy model; see :mod:`graphclust.pgmpy_bridge`."""
        return cls._from_pgmpy(model)[0]

    @classmethod
    def _from_pgmpy(cls, model):
        from ._pgmpy import energy_arguments

        arguments, names = energy_arguments(model)
        return cls(**arguments), names

    def __repr__(self):
        return (
            f"Energy(n_nodes={self.n_nodes}, n_labels={self.n_labels}, n_edges={self.n_edges}, "
            f"n_attractive={int((self.weights > 0).sum())}, n_repulsive={int((self.weights < 0).sum())}, "
            f"n_tables={len(self.tables)}, label_costs={self.label_costs is not None})"
        )


def energy_value(labels, assigned, edges, weights, *, label_costs=None, used=None, constant=0.0):
    """The energy of a labelling from each node's cost for its own label.

    The formula :meth:`Energy.evaluate` applies (without pair tables), for callers whose
    unaries are never formed as an ``(n_nodes, n_labels)`` matrix: RDP-means passes the
    sum of its centroid costs ``c_i D(x̄_i, μ_{z_i})`` over 10⁵ points every pass.

    Parameters
    ----------
    labels : ndarray of int, shape (n_nodes,)
        Trusted: no checks.
    assigned : ndarray of shape (n_nodes,) or float
        ``U[i, labels[i]]`` per node, or their sum.
    edges : ndarray of shape (n_edges, 2)
        Pair terms (parallel pairs allowed: each term counts).
    weights : ndarray of shape (n_edges,)
        Signed weights as in :class:`Energy`.
    label_costs : ndarray of shape (n_labels,) or None, default=None
    used : ndarray of bool, shape (n_labels,) or None, default=None
        Which labels ``labels`` uses, when the caller keeps count; ``None`` counts them.
    constant : float, default=0.0

    Returns
    -------
    float

    Examples
    --------
    >>> z = np.array([0, 0, 1])
    >>> energy_value(z, np.array([0.5, 0.0, 1.0]), np.array([[0, 1], [1, 2]]), np.array([2.0, -1.0]),
    ...              label_costs=np.array([3.0, 3.0]))
    7.5
    """
    total = constant + np.sum(assigned)
    if len(weights):
        same = labels[edges[:, 0]] == labels[edges[:, 1]]
        w = weights
        total += w[(w > 0) & ~same].sum() - w[(w < 0) & same].sum()
    if label_costs is not None:
        if used is None:
            used = np.bincount(labels, minlength=len(label_costs)) > 0
        total += label_costs[used].sum()
    return float(total)


def potts_csr(edges, weights, n):
    """Both directions of every pair term as CSR arrays ``(indptr, indices, weights,
    edge_ids)``, neighbours in increasing order: what :attr:`Energy.adjacency` holds
    and what the ICM kernels read.

    Examples
    --------
    >>> indptr, indices, w, eid = potts_csr(np.array([[0, 2], [1, 2]]), np.array([1.0, -2.0]), 3)
    >>> indptr.tolist(), indices.tolist(), w.tolist(), eid.tolist()
    ([0, 1, 2, 4], [2, 2, 0, 1], [1.0, -2.0, 1.0, -2.0], [0, 1, 0, 1])
    """
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    m = len(edges)
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    eid = np.concatenate([np.arange(m), np.arange(m)])
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, dst[order].astype(np.int64), np.asarray(weights)[eid[order]], eid[order].astype(np.int64)


def _index_pairs(pairs, name):
    """``(M, 2)`` int64 node-index pairs; refuses other shapes and non-integers."""
    try:
        a = np.asarray(pairs)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be an array of (i, j) index pairs") from None
    if a.size == 0:
        return np.empty((0, 2), np.int64)
    if a.ndim != 2 or a.shape[1] != 2:
        raise InvalidParameterError(f"{name} must have shape (n, 2), got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        if not (np.issubdtype(a.dtype, np.floating) and np.array_equal(a, np.round(a))):
            raise InvalidParameterError(f"{name} must hold integer node indices, got dtype {a.dtype}")
    return a.astype(np.int64)


def _float_vector(values, name):
    try:
        return np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be numbers") from None


def _check_pairs(e, n, what):
    if len(e) == 0:
        return
    if e.min() < 0 or e.max() >= n:
        k = int(np.flatnonzero((e < 0).any(axis=1) | (e >= n).any(axis=1))[0])
        raise InvalidParameterError(f"{what} {tuple(e[k].tolist())} refers to a node outside [0, {n})")
    loops = e[:, 0] == e[:, 1]
    if loops.any():
        k = int(np.flatnonzero(loops)[0])
        raise InvalidParameterError(f"{what} {tuple(e[k].tolist())} joins a node to itself")


def _merge_parallel(e, w, n):
    """Merge parallel Potts terms into one signed weight per pair plus a constant."""
    if len(e) == 0:
        return np.empty((0, 2), np.int64), np.empty(0), 0.0
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    key = lo * n + hi
    uniq, inv = np.unique(key, return_inverse=True)
    pos = np.bincount(inv, weights=np.where(w > 0, w, 0.0), minlength=len(uniq))  # cost when cut
    neg = np.bincount(inv, weights=np.where(w < 0, -w, 0.0), minlength=len(uniq))  # cost when joined
    both_hard = np.isinf(pos) & np.isinf(neg)
    if both_hard.any():
        k = int(np.flatnonzero(both_hard)[0])
        pair = (int(uniq[k] // n), int(uniq[k] % n))
        raise InvalidConstraintError(
            f"pair {pair} has both a hard attractive and a hard repulsive term; no labelling is feasible",
            constraint=pair,
        )
    with np.errstate(invalid="ignore"):
        net = np.where(np.isinf(pos), np.inf, np.where(np.isinf(neg), -np.inf, pos - neg))
    shift = float(np.minimum(pos, neg).sum())
    keep = net != 0
    edges = np.stack([uniq[keep] // n, uniq[keep] % n], axis=1).astype(np.int64)
    return edges, net[keep], shift
