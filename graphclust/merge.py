"""Must-link merging: contract must-link components into super-nodes, and lift back.

:func:`contract` is a reduction in cvxpy's sense: it returns the reduced problem and
its inverse (:class:`Lift`) together, and nothing else needs to know how lifting
works::

    reduced, lift = contract(problem)
    labels = lift(algorithm(reduced))

Contraction is exact for hard must-links: any labelling of the reduced problem lifts
to one of the original problem that satisfies them, with the same cut values, the same
vertex weights per cluster and the same feature sums per cluster.
"""

import warnings

import numpy as np
import scipy.sparse as sp

from .errors import InfeasibleConstraintsError, InvalidParameterError
from .problem import Problem
from .sideinfo import _conflicts, must_link_components

__all__ = ["contract", "Lift"]


class Lift:
    """The inverse of :func:`contract`: maps results on super-nodes back to nodes.

    Attributes
    ----------
    mapping : ndarray of shape (n_nodes,)
        Super-node of every original node.
    n_nodes, n_super : int
        Sizes before and after contraction.
    internal_weight : ndarray of shape (n_super,)
        Similarity weight of the data edges inside each super-node (dropped from the
        reduced graph; it can never be cut).
    constant : float
        Constraint cost every labelling pays: soft cannot-links inside a hard must-link
        component are always violated, and are dropped with their strength added here.
    n_dropped_must : int
        Must-links inside a component (the merged ones and soft ones made redundant).
    """

    def __init__(self, mapping, n_super, internal_weight, constant, n_dropped_must):
        self.mapping = mapping
        self.n_nodes = len(mapping)
        self.n_super = int(n_super)
        self.internal_weight = internal_weight
        self.constant = float(constant)
        self.n_dropped_must = int(n_dropped_must)

    def __call__(self, labels):
        """Labels (or any per-node rows) of the reduced problem → original nodes.

        Parameters
        ----------
        labels : array-like of shape (n_super, ...)
        """
        labels = np.asarray(labels)
        if labels.shape[:1] != (self.n_super,):
            raise InvalidParameterError(
                f"expected {self.n_super} rows (one per super-node), got shape {labels.shape}"
            )
        return labels[self.mapping]

    def aggregate(self, values):
        """Sum per-node rows into their super-nodes (e.g. unary costs ``(n, K)``)."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape[:1] != (self.n_nodes,):
            raise InvalidParameterError(f"expected {self.n_nodes} rows, got shape {values.shape}")
        P = self.indicator()
        return P.T @ values

    def indicator(self):
        """Sparse ``(n_nodes, n_super)`` 0/1 matrix: node ``i`` belongs to ``mapping[i]``."""
        n = self.n_nodes
        return sp.csr_array((np.ones(n), (np.arange(n), self.mapping)), shape=(n, self.n_super))

    def members(self, super_node):
        """Indices of the original nodes merged into ``super_node``."""
        return np.flatnonzero(self.mapping == super_node)

    def __repr__(self):
        return f"Lift(n_nodes={self.n_nodes}, n_super={self.n_super})"


def contract(problem, *, threshold=np.inf):
    """Merge every must-link component into one super-node.

    Parameters
    ----------
    problem : Problem
    threshold : float, default=numpy.inf
        Must-links with strength ``>= threshold`` are merged: by default only hard
        ones (exact). A finite threshold also merges strong soft must-links, which
        approximates the problem.

    Returns
    -------
    reduced : Problem
        One node per component, keyed by the component's first node (in node order).
        Similarities between components are summed (internal ones dropped), vertex
        weights and counts summed, features summed (``X`` holds sums; see
        :attr:`Problem.feature_means`) and the members' scatter around their mean
        kept (:attr:`Problem.scatter`), so first and second moments survive. Constraints are mapped to super-node pairs and
        parallel ones of the same sign summed; soft must-links inside a component are
        dropped (always satisfied).
    lift : Lift
        Maps labels of ``reduced`` back to ``problem``'s nodes.

    Raises
    ------
    InfeasibleConstraintsError
        A hard cannot-link joins two nodes of one merged component; the error carries
        the witness must-link path.

    Warns
    -----
    UserWarning
        When soft cannot-links fall inside a merged component (they are always violated).

    Notes
    -----
    Runs in ``O(n + m + M)``: components by ``scipy.sparse.csgraph``, aggregation by
    relabelling the non-zeros of ``W`` (the sparse product ``Pᵀ W P`` without forming it).

    Examples
    --------
    >>> import networkx as nx
    >>> import graphclust as gc
    >>> G = nx.path_graph(4)
    >>> S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(1, 3)], weight=float("inf"))
    >>> reduced, lift = gc.contract(gc.Problem.from_graph(G, S))
    >>> reduced.nodes, reduced.counts.tolist(), reduced.constraints.tolist()
    ([0, 2, 3], [2, 1, 1], [[0, 2]])
    >>> lift([0, 0, 1]).tolist()
    [0, 0, 0, 1]
    """
    if not isinstance(problem, Problem):
        raise InvalidParameterError(f"contract() takes a Problem, got {type(problem).__name__}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.number)) or not threshold > 0:
        raise InvalidParameterError(f"threshold must be > 0, got {threshold}")
    n = problem.n_nodes
    pairs, w = problem.constraints, problem.constraint_weights
    merging = w >= threshold
    k, comp = must_link_components(n, pairs[merging])  # numbered by first node: node order kept
    first = np.full(k, n, dtype=np.int64)
    np.minimum.at(first, comp, np.arange(n))

    # relabel the entries of W by component: one pass over the non-zeros, cheaper than
    # the two sparse products of P^T W P
    coo = problem.W.tocoo()
    r, c = comp[coo.row], comp[coo.col]
    same = r == c
    internal = np.bincount(r[same], weights=coo.data[same], minlength=k) / 2.0
    WP = sp.coo_array((coo.data[~same], (r[~same], c[~same])), shape=(k, k)).tocsr()
    WP.sum_duplicates()
    WP.eliminate_zeros()

    ca, cb = comp[pairs[:, 0]], comp[pairs[:, 1]]
    inside = ca == cb
    bad = inside & (w < 0)
    constant = 0.0
    if bad.any():
        hard_bad = bad & np.isneginf(w)
        if hard_bad.any():
            conflicts = [c for c in _conflicts(n, problem.nodes, pairs, w, merging, comp) if np.isneginf(c.weight)]
            first_c = conflicts[0]
            raise InfeasibleConstraintsError(
                f"{first_c}" + (f" ({len(conflicts) - 1} more)" if len(conflicts) > 1 else ""),
                constraint=first_c.constraint, path=first_c.path, conflicts=conflicts,
            )
        constant = float(-w[bad].sum())
        warnings.warn(
            f"{int(bad.sum())} soft cannot-link(s) join nodes of one merged must-link component and "
            f"will always be violated (total strength {constant:g}); check the side information with "
            "SideInfo.check()",
            UserWarning, stacklevel=2,
        )
    keep = ~inside
    lo = np.minimum(ca[keep], cb[keep])
    hi = np.maximum(ca[keep], cb[keep])
    kw = w[keep]
    new_pairs, new_w = [], []
    for sign_mask in (kw > 0, kw < 0):
        if sign_mask.any():
            key = lo[sign_mask] * k + hi[sign_mask]
            uniq, inv = np.unique(key, return_inverse=True)
            new_pairs.append(np.stack([uniq // k, uniq % k], axis=1))
            new_w.append(np.bincount(inv, weights=kw[sign_mask], minlength=len(uniq)))
    constraints = np.concatenate(new_pairs).astype(np.int64) if new_pairs else np.empty((0, 2), np.int64)
    weights = np.concatenate(new_w) if new_w else np.empty(0)

    X_sum = None if problem.X is None else _sum_rows(problem.X, comp, k)
    scatter_index, scatter = (None, None) if problem.X is None else _merged_scatter(problem, comp, k, X_sum)
    reduced = Problem(
        nodes=[problem.nodes[i] for i in first.tolist()],
        W=WP,
        X=X_sum,
        counts=np.bincount(comp, weights=problem.counts, minlength=k).astype(np.int64),
        vertex_weights=np.bincount(comp, weights=problem.vertex_weights, minlength=k),
        constraints=constraints,
        constraint_weights=weights,
        graph=None,
        scatter_index=scatter_index,
        scatter=scatter,
    )
    lift = Lift(comp, k, internal, constant, int((inside & (w > 0)).sum()))
    return reduced, lift


def _sum_rows(X, comp, k):
    """Sum the rows of ``X`` per component: ``(k, n_features)``."""
    n = len(comp)
    P = sp.csr_array((np.ones(n), (np.arange(n), comp)), shape=(n, k))
    return np.asarray(P.T @ X)


def _merged_scatter(problem, comp, k, X_sum):
    """Scatter of every component of more than one node around its mean, by the
    parallel-axis rule ``S = Σ_m (S_m + c_m (x̄_m − x̄)(x̄_m − x̄)ᵀ)`` over its member nodes
    ``m`` (which may carry scatter of their own)."""
    counts = problem.counts
    n_per = np.bincount(comp, minlength=k)
    index, blocks = problem.within_scatter()
    multi = n_per > 1
    if not multi.any() and not (index >= 0).any():
        return None, None
    c_sum = np.bincount(comp, weights=counts, minlength=k)
    new_index = np.full(k, -1, dtype=np.int64)
    # a component keeps scatter when it merges nodes or holds one node that had some
    keeps = multi.copy()
    keeps[comp[index >= 0]] = True
    new_index[keeps] = np.arange(int(keeps.sum()))
    d = problem.X.shape[1]
    out = np.zeros((int(keeps.sum()), d, d))
    rows = np.flatnonzero(keeps[comp])
    D = problem.X[rows] / counts[rows, None] - X_sum[comp[rows]] / c_sum[comp[rows], None]
    np.add.at(out, new_index[comp[rows]], counts[rows, None, None] * D[:, :, None] * D[:, None, :])
    had = rows[index[rows] >= 0]
    if len(had):
        np.add.at(out, new_index[comp[had]], blocks[index[had]])
    return new_index, out
