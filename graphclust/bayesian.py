"""Posterior summaries shared by the Bayesian clustering estimators (TVClust, DCP,
dd-MMDPM/MMDPM): a base class that keeps the sampled partitions and turns them into
a point estimate (Binder's loss), co-clustering probabilities, the posterior of the
number of clusters, and checks the chain schedule (``n_iter``, ``burn_in``, ``thin``,
``n_chains``).

Every sampler moves *items*: :class:`SamplerItems` merges the nodes joined by hard
must-links with :func:`graphclust.contract` (one item per merged node, with its counts,
feature sums and within-node scatter) and keeps the :class:`~graphclust.merge.Lift`
that maps item labels back to nodes. Samples are stored as item labels and lifted at
the end.
"""

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._params import Callable, Integer, Optional, Options, Progress, RandomState
from ._utils import progress_bar
from .base import ClusteringEstimator, check_is_fitted
from .errors import InvalidParameterError, ProblemTooLargeError
from .merge import contract

__all__ = ["BayesianClusteringEstimator", "SamplerItems"]

#: at most this many distinct sampled partitions are candidates for the point estimate
_MAX_CANDIDATES = 200
#: dense co-clustering matrices are refused above this many nodes
_MAX_DENSE_NODES = 20_000


# ============================================================================ kernels
@njit(cache=True)
def _canonical_rows(Z):
    """Relabel every row ``0, 1, ...`` in order of first appearance (int32)."""
    S, n = Z.shape
    out = np.empty((S, n), dtype=np.int32)
    top = 0
    for s in range(S):
        for i in range(n):
            if Z[s, i] > top:
                top = Z[s, i]
    seen = np.full(top + 1, -1, dtype=np.int64)
    for s in range(S):
        nxt = 0
        for i in range(n):
            lab = Z[s, i]
            if seen[lab] < 0:
                seen[lab] = nxt
                nxt += 1
            out[s, i] = seen[lab]
        for i in range(n):
            seen[Z[s, i]] = -1
    return out


@njit(cache=True, inline="always")
def _pairs_within(a, b, K, nw, table):  # pragma: no cover - compiled
    """``Σ_g v_g (v_g − 1) / 2`` over the groups ``g = (a_i, b_i)`` of the items, ``v_g``
    their summed multiplicities ``nw``: the node pairs that share a cluster in both
    labellings (``b = a``: in ``a``). ``table`` (``K²`` zeros) is left zeroed."""
    for i in range(a.shape[0]):
        table[a[i] * K + b[i]] += nw[i]
    t = 0.0
    for i in range(a.shape[0]):
        key = a[i] * K + b[i]
        v = table[key]
        if v != 0.0:
            t += 0.5 * v * (v - 1.0)
            table[key] = 0.0
    return t


@njit(cache=True)
def _binder_terms(U, w, cand, nw):
    """For unique partitions ``U`` (rows, canonical labels) with posterior weights
    ``w`` and node multiplicities ``nw`` per item: for each candidate row ``c`` the
    number of co-clustered node pairs ``Σ_{i<j} δ^c_ij`` and ``Σ_{i<j} δ^c_ij P_ij``
    (by contingency tables, without the n×n matrix), and ``Σ_{i<j} P_ij``."""
    nu, n = U.shape
    K = 0
    for s in range(nu):
        for i in range(n):
            if U[s, i] + 1 > K:
                K = U[s, i] + 1
    table = np.zeros(K * K)
    # Σ_{i<j} P_ij
    psum = 0.0
    for s in range(nu):
        psum += w[s] * _pairs_within(U[s], U[s], K, nw, table)
    own = np.zeros(cand.shape[0])
    cross = np.zeros(cand.shape[0])
    for ci in range(cand.shape[0]):
        c = cand[ci]
        own[ci] = _pairs_within(U[c], U[c], K, nw, table)
        acc = 0.0
        for s in range(nu):
            acc += w[s] * _pairs_within(U[c], U[s], K, nw, table)
        cross[ci] = acc
    return own, cross, psum


@njit(cache=True)
def _pair_probabilities(U, w, a, b):
    """``P_ab = Σ_s w_s [U_s[a] = U_s[b]]`` for item pairs ``(a, b)``."""
    out = np.zeros(a.shape[0])
    for s in range(U.shape[0]):
        for e in range(a.shape[0]):
            if U[s, a[e]] == U[s, b[e]]:
                out[e] += w[s]
    return out


def _binder_losses(U, w, cand, nw):
    """Posterior expected Binder loss of each candidate row ``cand`` of ``U``."""
    own, crossed, psum = _binder_terms(U, w, cand, nw)
    return own + psum - 2.0 * crossed


def binder_point_estimate(Z):
    """The row of the sample matrix ``Z`` (labels, one partition per row) with the
    least expected Binder loss among the ``200`` most frequent partitions (ties: the
    earliest sampled), every column weighted alike."""
    uniq, first_at, freq = np.unique(Z, axis=0, return_index=True, return_counts=True)
    cand = np.lexsort((first_at, -freq))[:_MAX_CANDIDATES].astype(np.int64)
    losses = _binder_losses(uniq, freq / freq.sum(), cand, np.ones(Z.shape[1]))
    return uniq[cand[int(np.argmin(losses))]]


def canonical_rows(Z):
    """Every row of ``Z`` relabelled ``0, 1, ...`` in order of first appearance (int32)."""
    return _canonical_rows(np.ascontiguousarray(Z, dtype=np.int64))


# ============================================================================ items
class SamplerItems:
    """What a sampler moves: the nodes of ``problem``, those joined by hard must-links
    merged into one *item* each by :func:`graphclust.contract`.

    Parameters
    ----------
    problem : Problem

    Attributes
    ----------
    problem : Problem
        The problem as given.
    reduced : Problem
        One node per item: the members' counts, feature sums and within-item scatter,
        so a likelihood scores an item exactly as its points, and the item-level
        constraints (parallel ones of one sign summed, a hard cannot-link ``-inf``;
        :attr:`side` is their CSR).
    lift : Lift
        Maps item labels back to nodes.
    n_items : int
    comp : ndarray of shape (n_nodes,)
        Item of every node (``lift.mapping``); items are numbered by their first node.
    ptr, members : ndarray
        The nodes of item ``u`` are ``members[ptr[u]:ptr[u + 1]]``, in node order.
    first : ndarray of shape (n_items,)
        First node of every item.
    inside : ndarray of bool, shape (n_constraints,)
        The constraints of ``problem`` with both ends in one item, which contraction
        drops (a sampler that counts constraints, as TVClust does, counts these itself).

    Raises
    ------
    InfeasibleConstraintsError
        A hard cannot-link joins two nodes of one hard must-link component.

    Warns
    -----
    UserWarning
        Soft cannot-links inside a hard must-link component (always violated).
    """

    def __init__(self, problem):
        self.problem = problem
        self.reduced, self.lift = contract(problem)
        self.n_items = self.lift.n_super
        self.comp = self.lift.mapping
        self.members = np.argsort(self.comp, kind="stable").astype(np.int64)
        self.ptr = np.zeros(self.n_items + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.comp, minlength=self.n_items), out=self.ptr[1:])
        self.first = self.members[self.ptr[:-1]]
        ends = self.comp[problem.constraints]
        self.inside = ends[:, 0] == ends[:, 1]

    @property
    def side(self):
        """Item-level signed constraints as CSR ``(ptr, partners, weights)`` (see
        :func:`graphclust.problem.constraint_csr`)."""
        return self.reduced.constraint_csr

    def item_labels(self, labels):
        """Labels of the items from node labels: the first node of every item decides,
        renumbered ``0, 1, ...`` in order of the label values."""
        return np.unique(np.asarray(labels)[self.first], return_inverse=True)[1].reshape(-1).astype(np.int64)


# ============================================================================ summaries
def posterior_summaries(problem, samples, lift, candidate_row=None):
    """Summaries of kept samples (item labels, one row per sample, lifted to the
    nodes by ``lift``): the point estimate minimising Binder's loss among the most
    frequent partitions (ties: earliest sampled) — or the partition of sample
    ``candidate_row`` alone (MAP, last sample) —, the co-clustering probabilities on
    constraint pairs and data-graph edges, and the posterior of the number of
    clusters. Returns ``(labels, loss, attrs)`` with the fitted attributes in ``attrs``."""
    n = problem.n_nodes
    comp, n_items = lift.mapping, lift.n_super
    canon = _canonical_rows(samples)
    uniq, first_at, inverse, freq = np.unique(canon, axis=0, return_index=True, return_inverse=True,
                                              return_counts=True)
    counts_u = freq.astype(np.float64)  # co-clustering probabilities as count / total: exact 0 and 1
    weights_u = counts_u / counts_u.sum()
    nw = np.bincount(comp, minlength=n_items).astype(np.float64)  # nodes per item
    if candidate_row is not None:
        cand = np.array([int(inverse.reshape(-1)[candidate_row])], dtype=np.int64)
    else:
        cand = np.lexsort((first_at, -freq))[:_MAX_CANDIDATES].astype(np.int64)
    losses = _binder_losses(uniq, weights_u, cand, nw)
    pick = int(np.argmin(losses))
    labels = lift(uniq[cand[pick]]).astype(np.int64)
    upper = sp.triu(problem.W, k=1).tocoo()
    pa = np.concatenate([problem.constraints[:, 0], upper.row.astype(np.int64)])
    pb = np.concatenate([problem.constraints[:, 1], upper.col.astype(np.int64)])
    key = np.unique(pa * n + pb)
    pa, pb = key // n, key % n
    prob = _pair_probabilities(uniq, counts_u, comp[pa], comp[pb]) / counts_u.sum()
    cocl = sp.csr_array((np.concatenate([prob, prob]), (np.concatenate([pa, pb]), np.concatenate([pb, pa]))),
                        shape=(n, n))
    cocl.sort_indices()
    k_samples = np.array([len(np.unique(r)) for r in uniq])
    attrs = {"samples_": canon[:, comp], "coclustering_": cocl,
             "n_clusters_posterior_": np.bincount(k_samples, weights=weights_u), "_posterior": (uniq, counts_u, comp)}
    return labels, float(losses[pick]), attrs


# ============================================================================ constraints
class Choice(Options):
    """One of a few values, named in the message as "'a' or 'b'"; ``other`` says what
    else is accepted (any non-string, checked against the data in ``fit``), e.g.
    ``"an array of labels"``."""

    def __init__(self, *values, other=None):
        super().__init__(*values)
        self.other = other

    def check(self, value, name):
        if self.other is not None and not isinstance(value, str):
            return
        if not self._matches(value):
            words = [repr(v) for v in self.values] + ([self.other] if self.other else [])
            listed = f"{', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else words[0]
            raise InvalidParameterError(f"{name} must be {listed}, got {value!r}")


class Pair:
    """Two numbers, each checked by its own constraint; ``what`` names the pair in the
    message when the value is not a pair ("p_prior of TVClust must be a pair of
    numbers > 0"), and an entry is named by its index ("p_prior[1] of TVClust")."""

    def __init__(self, first, second, what="a pair of numbers > 0"):
        self.first, self.second, self.what = first, second, what

    def check(self, value, name):
        try:
            a, b = value
        except (TypeError, ValueError):
            raise InvalidParameterError(f"{name} must be {self.what}, got {value!r}") from None
        param, sep, owner = name.partition(" of ")
        self.first.check(a, f"{param}[0]{sep}{owner}")
        self.second.check(b, f"{param}[1]{sep}{owner}")

    def describe(self):
        return self.what


class SweepMonitor:
    """The progress bar and the ``callback`` of a sampler, called once per sweep.

    ``callback(sweep, labels, log_joint)`` gets the sweep number counted over all
    chains (1, 2, ...), the node labels after that sweep and its log joint; a true
    return value stops the run.
    """

    def __init__(self, estimator, total, desc):
        self.bar = progress_bar(estimator.progress, total, desc, unit="sweep")
        self.callback = estimator.callback
        self.sweeps = 0
        self.stopped = False

    def __call__(self, labels, log_joint):
        """After a sweep; ``labels()`` gives the node labels (called only when there is
        a callback). Returns True when the callback asked to stop."""
        self.sweeps += 1
        if self.bar is not None:
            self.bar.update(1)
        if self.callback is not None and self.callback(self.sweeps, np.asarray(labels()).copy(), float(log_joint)):
            self.stopped = True
        return self.stopped

    def close(self):
        if self.bar is not None:
            self.bar.close()

    def kept(self, rows, row, current):
        """What to summarise of per-sample ``rows`` (partitions, parameters): all of
        them, the first ``row`` when the callback stopped the run, or the ``current``
        value as the one sample when it stopped before any was kept."""
        if not self.stopped:
            return rows
        return rows[:row] if row else np.asarray(current, dtype=rows.dtype)[None, ...].copy()


# ============================================================================ base class
class BayesianClusteringEstimator(ClusteringEstimator):
    """Base of the estimators that sample partitions (TVClust, DCP, DDMMDPM, MMDPM).

    Subclasses declare ``n_iter``, ``burn_in``, ``thin``, ``n_chains``,
    ``random_state`` and ``progress`` among their parameters, extend this class's
    ``_parameter_constraints`` (``{**BayesianClusteringEstimator._parameter_constraints,
    ...}``), call ``super()._check_params()`` from their own ``_check_params`` and
    :meth:`_summarise` at the end of ``_fit``; they inherit :meth:`coclustering`.
    Fitted attributes set here: ``samples_``, ``coclustering_`` and
    ``n_clusters_posterior_`` (see each estimator's docstring).
    """

    _parameter_constraints = {
        "n_iter": Integer(low=1),
        "burn_in": Optional(Integer(low=0)),
        "thin": Integer(low=1),
        "n_chains": Integer(low=1),
        "random_state": RandomState(),
        "progress": Progress(),
        "callback": Callable(),
    }

    def _check_params(self):
        """The chain schedule: ``burn_in`` must leave at least one sample."""
        super()._check_params()
        if self.burn_in is not None and self.burn_in >= self.n_iter:
            raise InvalidParameterError(
                f"burn_in of {type(self).__name__} ({self.burn_in}) must be smaller than n_iter ({self.n_iter}), "
                "or no sample is kept"
            )

    def _schedule(self):
        """``(n_iter, burn_in, thin, kept sweep indices, n_chains)`` as ints."""
        n_iter = int(self.n_iter)
        burn_in = n_iter // 2 if self.burn_in is None else int(self.burn_in)
        thin = int(self.thin)
        return n_iter, burn_in, thin, np.arange(burn_in, n_iter, thin), int(self.n_chains)

    def _summarise(self, problem, samples, lift, candidate_row=None):
        """Set the posterior attributes from the kept ``samples`` (item labels, lifted
        to nodes by ``lift``); returns ``(labels, expected Binder loss, number of
        distinct partitions)``."""
        labels, loss, attrs = posterior_summaries(problem, samples, lift, candidate_row)
        for key, value in attrs.items():
            setattr(self, key, value)
        return labels, loss, int(len(self._posterior[0]))

    def coclustering(self, pairs=None):
        """Posterior probability that nodes share a cluster.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2) or None, default=None
            Node *indices* (positions in ``nodes_``). ``None`` returns the dense
            ``(n_nodes, n_nodes)`` matrix (refused above 20 000 nodes).

        Returns
        -------
        ndarray of shape (n_pairs,) or (n_nodes, n_nodes)
        """
        check_is_fitted(self)
        uniq, w, comp = self._posterior
        n = len(comp)
        if pairs is not None:
            pairs = np.asarray(pairs)
            if pairs.ndim != 2 or pairs.shape[1] != 2 or not np.issubdtype(pairs.dtype, np.integer):
                raise InvalidParameterError(f"pairs must be an integer array of shape (n_pairs, 2), got {pairs.shape}")
            if len(pairs) and (pairs.min() < 0 or pairs.max() >= n):
                raise InvalidParameterError(f"pairs must hold node indices in [0, {n})")
            return _pair_probabilities(uniq, w, comp[pairs[:, 0]], comp[pairs[:, 1]]) / w.sum()
        if n > _MAX_DENSE_NODES:
            raise ProblemTooLargeError(
                f"a dense co-clustering matrix of {n} nodes needs {8 * n * n / 1e9:.1f} GB; ask for pairs= instead, "
                "or read coclustering_ (constraint pairs and graph edges)"
            )
        n_items = uniq.shape[1]
        P = np.zeros((n_items, n_items))
        for s in range(len(uniq)):
            B = np.zeros((n_items, int(uniq[s].max()) + 1))
            B[np.arange(n_items), uniq[s]] = 1.0
            P += w[s] * (B @ B.T)
        return P[np.ix_(comp, comp)] / w.sum()
