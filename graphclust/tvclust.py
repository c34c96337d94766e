"""TVClust: a Dirichlet-process mixture that also sees the side information as a noisy
random graph, sampled by collapsed Gibbs sampling.

Khashabi, Wieting, Liu & Liang (2015) model two views of one latent partition ``z``:
the points come from a Dirichlet-process mixture (DPM) with a conjugate likelihood, and
every constrained pair ``(i, j)`` is a noisy copy of ``H_ij = [z_i = z_j]``:

.. math::

    P(E_{ij} = \\text{may-link} \\mid H_{ij} = 1) = p, \\qquad
    P(E_{ij} = \\text{may-not-link} \\mid H_{ij} = 0) = q.

Given ``p`` and ``q`` the side information is a signed Potts model on the constraint
graph, multiplied into the Chinese-restaurant prior; the sampler visits one node at a
time, takes it out of its cluster and puts it back with probability

.. math::

    P(z_i = k \\mid \\cdot) \\propto n_{-i,k}\\, p(x_i \\mid X_{k,-i})
        \\Big(\\frac{p}{1-q}\\Big)^{f_k^i} \\Big(\\frac{1-p}{q}\\Big)^{s_k^i},
    \\qquad P(z_i = \\text{new} \\mid \\cdot) \\propto α\\, p(x_i)

(``f``/``s``: how many of ``i``'s may-link / may-not-link partners cluster ``k`` holds).
The sweep runs in one numba kernel; the likelihoods are the conjugate providers of
:mod:`graphclust.potentials.conjugate`.
"""

import math
import time
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.special import betaln

from ._sampling import release_slot, sample_log_weights
from ._utils import check_float, check_int, check_random_state, progress_bar
from .base import (
    ClusteringEstimator,
    ClusteringResult,
    check_is_fitted,
    register_method,
)
from .errors import InvalidParameterError, ProblemTooLargeError
from .potentials.conjugate import (
    CONJUGATE,
    DIRMULT,
    FIRST_SLOT,
    PRIOR_SLOT,
    SCRATCH_SLOT,
    _add,
    _build,
    _Conjugate,
    _copy_slot,
    _grow,
    _log_marginal,
    _log_pred,
    _rebuild_slot,
    _remove,
    _reset_slot,
)
from .sideinfo import check_constraints, must_link_components

__all__ = ["TVClust"]

#: p and q are kept in [ε, 1 − ε] so the log-odds stay finite
_PQ_EPS = 1e-12
#: cluster statistics are recomputed from scratch every this many sweeps (rank-one
#: downdates accumulate rounding)
_REFRESH_EVERY = 20
#: at most this many distinct sampled partitions are candidates for the point estimate
_MAX_CANDIDATES = 200
#: dense co-clustering matrices are refused above this many nodes
_MAX_DENSE_NODES = 20_000


# ============================================================================ kernels
@njit(cache=True)
def _gibbs_sweep(kind, model, cl, items, scratch, z, adj, lp, lq, log_alpha, order, unif, start, book,
                 active, where, free, side, logw):
    """One collapsed Gibbs sweep over the items in ``order``, from position ``start``.

    ``z[u]`` is the slot of item ``u`` (``-1``: not placed yet, as in the initial
    sequential pass). ``adj`` is the item-level side-information graph in CSR form
    ``(ptr, idx, kind, weight)``, kind 0 = may-link (adds ``weight·lp`` to the log
    weight of the partner's cluster), 1 = may-not-link (adds ``weight·lq``), 2 = hard
    cannot-link (forbids the partner's cluster). ``active[:book[0]]`` lists the
    occupied slots (``where`` is its inverse) and ``free[:book[1]]`` the free ones.
    Returns the position reached: ``len(order)``, or earlier when no free slot is left
    (the caller grows the arrays and resumes).
    """
    adj_ptr, adj_idx, adj_kind, adj_w = adj
    cn = cl[0]
    im = items[0]
    n = order.shape[0]
    n_active = book[0]
    n_free = book[1]
    for pos in range(start, n):
        if n_free == 0:
            book[0] = n_active
            book[1] = n_free
            return pos
        u = order[pos]
        k_old = z[u]
        if k_old >= FIRST_SLOT:
            z[u] = -1
            if not _remove(kind, u, k_old, model, cl, items, scratch):
                _rebuild_slot(kind, k_old, model, cl, items, scratch, z)
            if cn[k_old] < 0.5:  # the cluster is gone: its slot returns to the free list
                n_active, n_free = release_slot(k_old, active, where, free, n_active, n_free)
        # side information: friends and strangers of u in every cluster
        for e in range(adj_ptr[u], adj_ptr[u + 1]):
            kv = z[adj_idx[e]]
            if kv >= FIRST_SLOT:
                t = adj_kind[e]
                if t == 0:
                    side[kv] += adj_w[e] * lp
                elif t == 1:
                    side[kv] += adj_w[e] * lq
                else:
                    side[kv] = -np.inf
        mu = im[u]
        top = -np.inf
        for a in range(n_active):
            k = active[a]
            s = side[k]
            if s == -np.inf:
                logw[a] = -np.inf
                continue
            nk = cn[k]
            crp = math.log(nk) if mu == 1.0 else math.lgamma(nk + mu) - math.lgamma(nk)
            v = crp + _log_pred(kind, u, k, model, cl, items, scratch) + s
            logw[a] = v
            if v > top:
                top = v
        v = log_alpha + (0.0 if mu == 1.0 else math.lgamma(mu)) + _log_pred(kind, u, PRIOR_SLOT, model, cl,
                                                                          items, scratch)
        logw[n_active] = v
        if v > top:
            top = v
        choice = sample_log_weights(logw, n_active + 1, top, unif[pos])
        for e in range(adj_ptr[u], adj_ptr[u + 1]):
            kv = z[adj_idx[e]]
            if kv >= FIRST_SLOT:
                side[kv] = 0.0
        if choice == n_active:
            n_free -= 1
            k = free[n_free]
            active[n_active] = k
            where[k] = n_active
            n_active += 1
        else:
            k = active[choice]
        _add(kind, u, k, model, cl, items, scratch)
        z[u] = k
    book[0] = n_active
    book[1] = n_free
    return n


@njit(cache=True)
def _crp_log(nk, mu):
    """``log Γ(n_k + m) − log Γ(n_k)``: ``m`` points joining a cluster of ``n_k``."""
    return math.log(nk) if mu == 1.0 else math.lgamma(nk + mu) - math.lgamma(nk)


@njit(cache=True)
def _split_merge(kind, model, cl, items, scratch, z, adj, lp, lq, log_alpha, n_attempts, seed, book, active, where,
                 free, tmp, members):
    """Sequentially-allocated split–merge moves (Dahl 2005), Metropolis–Hastings.

    Two distinct items ``i, j`` are drawn. If they share a cluster ``S``, a split is
    proposed: ``i`` and ``j`` seed two new clusters and the other members of ``S`` are
    allocated one at a time, in random order, in proportion to the CRP weight, the
    predictive and the side-information factor given the members allocated so far.
    If they are in different clusters, their merge is proposed, and the probability of
    the reverse split is the product of the same allocation probabilities for the
    current assignment. Acceptance uses the exact target ratio, side information
    included. Uses numba's generator seeded with ``seed``; needs two free slots and
    the scratch slot. Returns the number of accepted moves.
    """
    np.random.seed(seed)
    adj_ptr, adj_idx, adj_kind, adj_w = adj
    cn = cl[0]
    im = items[0]
    n = z.shape[0]
    accepted = 0
    for attempt in range(n_attempts):
        if n < 2 or book[1] < 2:
            break
        i = np.random.randint(n)
        j = np.random.randint(n - 1)
        if j >= i:
            j += 1
        ki = z[i]
        kj = z[j]
        split = ki == kj
        ms = 0
        for u in range(n):
            if u != i and u != j and (z[u] == ki or z[u] == kj):
                members[ms] = u
                ms += 1
        for a in range(ms - 1, 0, -1):
            b = np.random.randint(a + 1)
            t = members[a]
            members[a] = members[b]
            members[b] = t
        nf = book[1]
        si = free[nf - 1]
        sj = free[nf - 2]
        _reset_slot(si, cl)
        _reset_slot(sj, cl)
        _add(kind, i, si, model, cl, items, scratch)
        _add(kind, j, sj, model, cl, items, scratch)
        tmp[i] = 1
        tmp[j] = 2
        logq = 0.0
        for a in range(ms):
            u = members[a]
            side_i = 0.0
            side_j = 0.0
            for e in range(adj_ptr[u], adj_ptr[u + 1]):
                t = tmp[adj_idx[e]]
                if t > 0:
                    kd = adj_kind[e]
                    if kd == 0:
                        val = adj_w[e] * lp
                    elif kd == 1:
                        val = adj_w[e] * lq
                    else:
                        val = -np.inf
                    if t == 1:
                        side_i += val
                    else:
                        side_j += val
            mu = im[u]
            li = _crp_log(cn[si], mu) + _log_pred(kind, u, si, model, cl, items, scratch) + side_i
            lj = _crp_log(cn[sj], mu) + _log_pred(kind, u, sj, model, cl, items, scratch) + side_j
            top = max(li, lj)
            if top == -np.inf:
                log_pi, log_pj = -np.inf, -np.inf
            else:
                lse = top + math.log(math.exp(li - top) + math.exp(lj - top))
                log_pi, log_pj = li - lse, lj - lse
            if split:
                go_i = np.random.random() < math.exp(log_pi)
            else:
                go_i = z[u] == ki
            if go_i:
                logq += log_pi
                _add(kind, u, si, model, cl, items, scratch)
                tmp[u] = 1
            else:
                logq += log_pj
                _add(kind, u, sj, model, cl, items, scratch)
                tmp[u] = 2
        # pairs that the split separates, and the merged cluster built from scratch
        cross = 0.0
        hard = False
        _copy_slot(si, SCRATCH_SLOT, cl)
        for a in range(ms + 2):
            u = i if a == ms else (j if a == ms + 1 else members[a])
            if tmp[u] == 2:
                _add(kind, u, SCRATCH_SLOT, model, cl, items, scratch)
            for e in range(adj_ptr[u], adj_ptr[u + 1]):
                t = tmp[adj_idx[e]]
                if t > 0 and t != tmp[u]:
                    kd = adj_kind[e]
                    if kd == 0:
                        cross += adj_w[e] * lp
                    elif kd == 1:
                        cross += adj_w[e] * lq
                    else:
                        hard = True
        cross *= 0.5
        # log π(split) − log π(merged)
        delta = (log_alpha + math.lgamma(cn[si]) + math.lgamma(cn[sj]) - math.lgamma(cn[SCRATCH_SLOT])
                 + _log_marginal(kind, si, model, cl) + _log_marginal(kind, sj, model, cl)
                 - _log_marginal(kind, SCRATCH_SLOT, model, cl) - cross)
        if split:
            if math.log(np.random.random()) < delta - logq:
                _copy_slot(si, ki, cl)
                free[nf - 2] = si  # sj leaves the free list, si stays on it
                book[1] = nf - 1
                active[book[0]] = sj
                where[sj] = book[0]
                book[0] += 1
                for a in range(ms + 2):
                    u = i if a == ms else (j if a == ms + 1 else members[a])
                    if tmp[u] == 2:
                        z[u] = sj
                _reset_slot(si, cl)
                accepted += 1
            else:
                _reset_slot(si, cl)
                _reset_slot(sj, cl)
        else:
            if not hard and math.log(np.random.random()) < logq - delta:
                _copy_slot(SCRATCH_SLOT, ki, cl)
                for a in range(ms + 2):
                    u = i if a == ms else (j if a == ms + 1 else members[a])
                    if tmp[u] == 2:
                        z[u] = ki
                a = where[kj]
                last = active[book[0] - 1]
                active[a] = last
                where[last] = a
                book[0] -= 1
                _reset_slot(kj, cl)
                free[nf] = kj
                book[1] = nf + 1
                accepted += 1
            _reset_slot(si, cl)
            _reset_slot(sj, cl)
        for a in range(ms + 2):
            u = i if a == ms else (j if a == ms + 1 else members[a])
            tmp[u] = 0
    return accepted


@njit(cache=True)
def _cluster_terms(kind, model, cl, active, n_active):
    """``(Σ_k log Γ(n_k), Σ_k log m(X_k))`` over the occupied slots."""
    cn = cl[0]
    g = 0.0
    ml = 0.0
    for a in range(n_active):
        k = active[a]
        g += math.lgamma(cn[k])
        ml += _log_marginal(kind, k, model, cl)
    return g, ml


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
    sizes = np.zeros(K)
    # Σ_{i<j} P_ij
    psum = 0.0
    for s in range(nu):
        for i in range(n):
            sizes[U[s, i]] += nw[i]
        t = 0.0
        for i in range(n):
            v = sizes[U[s, i]]
            if v != 0.0:
                t += 0.5 * v * (v - 1.0)
                sizes[U[s, i]] = 0.0
        psum += w[s] * t
    own = np.zeros(cand.shape[0])
    cross = np.zeros(cand.shape[0])
    for ci in range(cand.shape[0]):
        c = cand[ci]
        for i in range(n):
            sizes[U[c, i]] += nw[i]
        t = 0.0
        for i in range(n):
            v = sizes[U[c, i]]
            if v != 0.0:
                t += 0.5 * v * (v - 1.0)
                sizes[U[c, i]] = 0.0
        own[ci] = t
        acc = 0.0
        for s in range(nu):
            for i in range(n):
                table[U[c, i] * K + U[s, i]] += nw[i]
            t = 0.0
            for i in range(n):
                key = U[c, i] * K + U[s, i]
                v = table[key]
                if v != 0.0:
                    t += 0.5 * v * (v - 1.0)
                    table[key] = 0.0
            acc += w[s] * t
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


# ============================================================================ chain state
class _Chain:
    """Working arrays of one chain: cluster statistics in slots, the active and free
    slot lists, and scratch space for the kernel. Grows by doubling."""

    def __init__(self, provider, model, n_items, capacity):
        self.provider = provider
        self.model = model
        self.cl = provider._empty(model, capacity)
        self.z = np.full(n_items, -1, dtype=np.int64)
        self.tmp = np.zeros(n_items, dtype=np.int8)
        self.members = np.zeros(n_items, dtype=np.int64)
        self.book = np.zeros(2, dtype=np.int64)
        self._lists(capacity, first=True)

    def _lists(self, capacity, first=False):
        if first:
            self.active = np.zeros(capacity, dtype=np.int64)
            self.where = np.zeros(capacity, dtype=np.int64)
            # a stack: the lowest free slot is on top (last)
            self.free = np.zeros(capacity, dtype=np.int64)
            slots = np.arange(capacity - 1, FIRST_SLOT - 1, -1)
            self.free[:len(slots)] = slots
            self.book[1] = len(slots)
        else:
            old = len(self.active)
            for name in ("active", "where", "free"):
                arr = np.zeros(capacity, dtype=np.int64)
                arr[:old] = getattr(self, name)
                setattr(self, name, arr)
            n_free = self.book[1]
            new = np.arange(capacity - 1, old - 1, -1)
            # new slots go under the existing free ones, so lower slots are reused first
            self.free[len(new):len(new) + n_free] = self.free[:n_free].copy()
            self.free[:len(new)] = new
            self.book[1] = n_free + len(new)
        self.side = np.zeros(capacity)
        self.logw = np.zeros(capacity + 1)

    def grow(self):
        capacity = 2 * len(self.active)
        self.cl = _grow(self.cl, capacity)
        self._lists(capacity)

    def set_labels(self, labels, kind, items, scratch):
        """Start from given labels (``0..K-1`` per item)."""
        need = FIRST_SLOT + int(labels.max()) + 1
        while len(self.active) < need + 1:
            self.grow()
        self.z = labels.astype(np.int64) + FIRST_SLOT
        _build(kind, self.model, self.cl, items, scratch, self.z)
        used = np.unique(self.z)
        capacity = len(self.active)
        self.active[:len(used)] = used
        self.where[used] = np.arange(len(used))
        free = np.setdiff1d(np.arange(FIRST_SLOT, capacity), used)[::-1]
        self.free[:len(free)] = free
        self.book[:] = (len(used), len(free))

    def sweep(self, kind, items, scratch, adj, lp, lq, log_alpha, order, unif):
        pos = 0
        while True:
            pos = _gibbs_sweep(kind, self.model, self.cl, items, scratch, self.z, adj, lp, lq, log_alpha, order,
                               unif, pos, self.book, self.active, self.where, self.free, self.side, self.logw)
            if pos >= len(order):
                return
            self.grow()

    def split_merge(self, kind, items, scratch, adj, lp, lq, log_alpha, n_attempts, seed):
        while self.book[1] < n_attempts + 1:  # every accepted split takes one slot
            self.grow()
        return _split_merge(kind, self.model, self.cl, items, scratch, self.z, adj, lp, lq, log_alpha, n_attempts,
                            seed, self.book, self.active, self.where, self.free, self.tmp, self.members)


# ============================================================================ estimator
class TVClust(ClusteringEstimator):
    """Dirichlet-process mixture clustering with noisy side information (TVClust),
    by collapsed Gibbs sampling.

    The points follow a DPM with a conjugate likelihood; must-links and cannot-links
    are read as *may-links* and *may-not-links*, noisy observations of whether two
    nodes share a cluster, trusted with credibilities ``p`` and ``q`` that can be
    learnt. The number of clusters is inferred. The answer is the partition that
    minimises the posterior expected Binder loss (not the last sample), with the
    posterior co-clustering probabilities, the posterior of the number of clusters,
    and the posterior means of ``p``, ``q`` and ``α``.

    Parameters
    ----------
    likelihood : {"gaussian", "gaussian-diag", "multinomial"} or conjugate provider, default="gaussian"
        The data model: ``"gaussian"`` (full covariance,
        :class:`~graphclust.potentials.NormalInverseWishart`), ``"gaussian-diag"``
        (:class:`~graphclust.potentials.NormalInverseGamma`) or ``"multinomial"``
        (counts, :class:`~graphclust.potentials.DirichletMultinomial`), each with its
        data-driven default prior: cluster means centred on the data mean, and the
        prior mean of every cluster covariance at the per-feature variances of the data
        (a diagonal matrix); or a symmetric Dirichlet(1).
        Pass a provider instance to set the prior, e.g.
        ``NormalInverseWishart(kappa=0.1, dof=10)``; it is cloned at ``fit``.
    alpha : float, default=1.0
        DP concentration ``α > 0`` (the start value when ``learn_alpha=True``).
    p : float, default=0.9
        Credibility of may-links, ``P(may-link | same cluster)``, in ``(0, 1)``
        (the start value when ``learn_pq=True``).
    q : float, default=0.9
        Credibility of may-not-links, ``P(may-not-link | different clusters)``, in
        ``(0, 1)``. ``p = 1 − q`` makes the side information uninformative.
    learn_pq : bool, default=True
        Draw ``p`` and ``q`` from their Beta posteriors after every sweep.
    p_prior, q_prior : tuple of two floats, default=(10.0, 1.0)
        Beta prior ``(a, b)`` of ``p`` and of ``q``: by default both optimistic (prior
        mean 0.91), as the seed spec recommends (its reference code's ``Beta(1, 10)`` on
        ``p`` treats may-links as unreliable).
    learn_alpha : bool, default=False
        Draw ``α`` after every sweep by Escobar & West's (1995) auxiliary-variable step.
    alpha_prior : tuple of two floats, default=(1.0, 1.0)
        Gamma prior ``(shape, rate)`` of ``α`` when it is learnt.
    n_iter : int, default=500
        Gibbs sweeps per chain (after the initial sequential pass).
    burn_in : int or None, default=None
        Sweeps discarded at the start of each chain; ``None``: ``n_iter // 2``.
    thin : int, default=1
        Keep every ``thin``-th sweep after the burn-in.
    n_chains : int, default=1
        Independent chains, each seeded from ``random_state`` (``Generator.spawn``);
        their kept samples are pooled.
    n_split_merge : int, default=10
        Split–merge proposals after every sweep (Dahl's sequentially-allocated
        Metropolis–Hastings moves; 0: plain Gibbs). Single-node moves cannot split a
        cluster that holds two groups, nor merge two large clusters, in any reasonable
        time; these moves can.
    init : "rdpmeans", "sequential" or array-like of int of shape (n_nodes,), default="rdpmeans"
        ``"rdpmeans"`` (the research spec's recommended start, §2.4): every chain starts
        from the :class:`~graphclust.RDPMeans` solution, the small-variance limit of
        this model, with ``xi="pq"`` from the start values of ``p`` and ``q`` (so
        ``p = q = 0.5`` starts from DP-means), ``λ`` by its gap rule and the first
        child of ``random_state``'s generator. ``"sequential"``: nodes are placed one at
        a time in a random order by the Gibbs conditional given the nodes placed so far.
        An array starts every chain from those labels (a node joined to others by hard
        must-links takes the label of the first of them). Hard cannot-links hold from
        the start with the first two; given labels are repaired in the first sweep.
    point_estimate : {"binder", "map"}, default="binder"
        ``"binder"``: among the sampled partitions, the one with the least posterior
        expected Binder loss (number of node pairs on which it disagrees with the
        posterior, i.e. Dahl's least-squares rule); ``"map"``: the kept sample with the
        highest log joint.
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool, default=False
        Show a progress bar over the sweeps.

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
        The point estimate, labels ``0, 1, ...``.
    nodes_, partition_, n_clusters_
        As for every estimator.
    result_ : ClusteringResult
        ``objective``: the posterior expected Binder loss of ``labels_`` (expected
        number of node pairs clustered differently); ``history``: the log joint after
        every sweep of the first chain; ``info``: traces (``"log_joint"``,
        ``"n_clusters"``, ``"p"``, ``"q"``, ``"alpha"``, arrays of shape
        ``(n_chains, n_iter)``), ``"n_samples"``, ``"n_distinct_partitions"``,
        ``"n_items"`` (nodes after merging hard must-links), ``"sweep_seconds"``.
    samples_ : ndarray of shape (n_samples, n_nodes)
        The kept partitions of all chains (labels in order of first appearance).
    coclustering_ : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        Posterior probability that two nodes share a cluster, stored for every
        constrained pair and every data-graph edge (explicit zeros included); see
        :meth:`coclustering` for other pairs or the dense matrix.
    n_clusters_posterior_ : ndarray
        ``n_clusters_posterior_[k]`` = posterior probability of ``k`` clusters.
    p_, q_, alpha_ : float
        Posterior means over the kept sweeps (the fixed values when not learnt).
    log_joint_ : ndarray of shape (n_chains, n_iter)
        ``log p(x, E, z, p, q, α)`` after every sweep (priors of ``p, q, α`` included
        when they are learnt), for checking mixing.
    likelihood_ : conjugate provider
        The provider with its resolved prior (``likelihood_.prior_``).

    Notes
    -----
    **Side information.** A constraint of strength ``|w|`` counts as ``|w|``
    observations of its pair: it multiplies the Potts weight and enters the Beta
    updates of ``p`` and ``q`` with weight ``|w|`` (unit weights give the paper's
    model). With ``N11`` the (weighted) may-links inside clusters, ``N01`` the
    may-not-links inside, ``N00`` the may-not-links across and ``N10`` the may-links
    across, ``p ~ Beta(a_p + N11, b_p + N01)`` and ``q ~ Beta(a_q + N00, b_q + N10)``.

    **Hard constraints** (``±inf`` weights) have infinite credibility. Nodes joined by
    hard must-links are merged into one block that the sampler moves as a whole, scored
    by the *joint* predictive of its points (exact: the block keeps its within-block
    scatter), with the CRP weight ``Γ(n_k + m)/Γ(n_k)`` of ``m`` points joining a
    cluster of ``n_k`` (``α Γ(m)`` for a new one). A hard cannot-link forbids the
    partner's cluster. Contradictory hard constraints raise
    :class:`~graphclust.errors.InfeasibleConstraintsError`. Hard constraints do not enter
    the ``p``/``q`` updates.

    **Merged input.** A :class:`~graphclust.Problem` whose nodes already stand for
    several points (``counts > 1``, after :func:`graphclust.contract`) is scored
    exactly by ``"multinomial"``; the Gaussian likelihoods lack the within-node
    scatter and treat the points as sitting at the node mean (a warning says so).
    Give the original problem instead: hard must-links are merged exactly here.

    **Cost.** A sweep costs ``O(n K c + |C|)`` with ``c`` the cost of one predictive
    (``d²`` full Gaussian, ``d`` diagonal, ``nnz(x)`` multinomial) and ``K`` the number
    of clusters: about 2 ms for 1000 points, 1000 constraints, ``d = 5``, and 5–7 ms
    with the split–merge proposals (``docs/benchmarks/tvclust.md``); a proposal costs
    ``O(n)`` plus the reallocation of the clusters involved. The point estimate costs
    ``O(min(U, 200)·U·n)`` for ``U`` distinct sampled partitions (candidates are the
    200 most frequent).

    The data graph's edges are not used by the model (TVClust has no smoothness term);
    they only select which pairs :attr:`coclustering_` stores.

    References
    ----------
    D. Khashabi, J. Wieting, J. Y. Liu, F. Liang, *Clustering with side information:
    from a probabilistic model to a deterministic algorithm*, arXiv:1508.06235, 2015.
    R. M. Neal, *Markov chain sampling methods for Dirichlet process mixture models*,
    JCGS 9(2), 2000. https://doi.org/10.1080/10618600.2000.10474879
    M. D. Escobar, M. West, *Bayesian density estimation and inference using
    mixtures*, JASA 90(430), 1995. https://doi.org/10.1080/01621459.1995.10476550
    D. B. Dahl, *Model-based clustering for expression data via a Dirichlet process
    mixture model*, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.1, 0.1], [0.0, 0.2], [3.0, 3.0], [3.1, 2.9], [2.9, 3.1]])
    >>> S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(2, 3)])
    >>> est = gc.TVClust(n_iter=100, random_state=0).fit(X, S)
    >>> est.labels_
    array([0, 0, 0, 1, 1, 1])
    >>> P = est.coclustering_       # posterior co-clustering of the constrained pairs
    >>> bool(P[0, 1] > 0.9), bool(P[2, 3] < 0.2)
    (True, True)
    """

    def __init__(self, likelihood="gaussian", *, alpha=1.0, p=0.9, q=0.9, learn_pq=True, p_prior=(10.0, 1.0),
                 q_prior=(10.0, 1.0), learn_alpha=False, alpha_prior=(1.0, 1.0), n_iter=500, burn_in=None, thin=1,
                 n_chains=1, n_split_merge=10, init="rdpmeans", point_estimate="binder", random_state=None,
                 progress=False):
        self.likelihood = likelihood
        self.alpha = alpha
        self.p = p
        self.q = q
        self.learn_pq = learn_pq
        self.p_prior = p_prior
        self.q_prior = q_prior
        self.learn_alpha = learn_alpha
        self.alpha_prior = alpha_prior
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.n_split_merge = n_split_merge
        self.init = init
        self.point_estimate = point_estimate
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ validation
    def _validate_params(self):
        name = type(self).__name__
        if isinstance(self.likelihood, str):
            if self.likelihood not in CONJUGATE:
                raise InvalidParameterError(
                    f"likelihood of {name} must be one of {', '.join(CONJUGATE)} or a conjugate provider "
                    f"(graphclust.potentials.NormalInverseWishart, ...), got {self.likelihood!r}"
                )
        elif not isinstance(self.likelihood, _Conjugate):
            raise InvalidParameterError(
                f"likelihood of {name} must be one of {', '.join(CONJUGATE)} or a conjugate provider, "
                f"got {type(self.likelihood).__name__}"
            )
        check_float(self.alpha, f"alpha of {name}", low=0.0, low_open=True)
        for pname in ("p", "q"):
            value = getattr(self, pname)
            check_float(value, f"{pname} of {name}")
            if not 0.0 < value < 1.0:
                raise InvalidParameterError(
                    f"{pname} of {name} is a probability and must lie strictly between 0 and 1, got {value}; "
                    "for constraints that must hold, give them infinite weight (hard constraints)"
                )
        for pname in ("learn_pq", "learn_alpha", "progress"):
            if not isinstance(getattr(self, pname), (bool, np.bool_)):
                raise InvalidParameterError(f"{pname} of {name} must be True or False, got {getattr(self, pname)!r}")
        for pname in ("p_prior", "q_prior", "alpha_prior"):
            value = getattr(self, pname)
            try:
                a, b = value
            except (TypeError, ValueError):
                raise InvalidParameterError(f"{pname} of {name} must be a pair of numbers > 0, got {value!r}") from None
            check_float(a, f"{pname}[0] of {name}", low=0.0, low_open=True)
            check_float(b, f"{pname}[1] of {name}", low=0.0, low_open=True)
        _check_chain_schedule(self, name)
        check_int(self.n_split_merge, f"n_split_merge of {name}", low=0)
        if isinstance(self.init, str) and self.init not in ("sequential", "rdpmeans"):
            raise InvalidParameterError(
                f"init of {name} must be 'sequential', 'rdpmeans' or an array of labels, got {self.init!r}"
            )
        if self.point_estimate not in ("binder", "map"):
            raise InvalidParameterError(
                f"point_estimate of {name} must be 'binder' or 'map', got {self.point_estimate!r}"
            )

    # ------------------------------------------------------------------ fit
    def _fit(self, problem):
        rng = check_random_state(self.random_state)
        provider = CONJUGATE[self.likelihood]() if isinstance(self.likelihood, str) else self.likelihood.clone()
        n = problem.n_nodes
        pairs, weights = problem.constraints, problem.constraint_weights
        hard = np.isinf(weights)
        report = check_constraints(problem.nodes, pairs[hard], weights[hard])
        report.raise_if_infeasible()
        n_items, comp = must_link_components(n, pairs[hard & (weights > 0)])
        if provider.kind != DIRMULT and (problem.counts > 1).any():
            warnings.warn(
                f"{int((problem.counts > 1).sum())} node(s) stand for several points (counts > 1) but the "
                f"Gaussian likelihood cannot see their within-node scatter; they are scored as points at the node "
                "mean. Fit on the original problem: TVClust merges hard must-links exactly itself",
                UserWarning, stacklevel=3,
            )
        model, items, scratch = provider._setup(problem, comp, n_items)
        kind = provider.kind
        m = items[0]
        N = float(m.sum())
        const = float(items[5].sum()) if kind == DIRMULT else 0.0

        # side information at item level
        soft = np.isfinite(weights)
        ia, ib = comp[pairs[:, 0]], comp[pairs[:, 1]]
        sa, sb, sw = ia[soft], ib[soft], np.abs(weights[soft])
        s_ml = weights[soft] > 0
        cross = sa != sb
        hcl = hard & (weights < 0)
        src = np.concatenate([sa[cross], sb[cross], ia[hcl], ib[hcl]])
        dst = np.concatenate([sb[cross], sa[cross], ib[hcl], ia[hcl]])
        kinds = np.concatenate([np.where(s_ml[cross], 0, 1)] * 2 + [np.full(2 * int(hcl.sum()), 2)]).astype(np.int8)
        ws = np.concatenate([sw[cross], sw[cross], np.ones(2 * int(hcl.sum()))])
        order_e = np.argsort(src, kind="stable")
        ptr = np.zeros(n_items + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n_items), out=ptr[1:])
        adj = (ptr, dst[order_e].astype(np.int64), kinds[order_e], ws[order_e].astype(np.float64))
        w_ml, w_cl = sw * s_ml, sw * ~s_ml

        init = None
        if isinstance(self.init, str) and self.init == "rdpmeans":
            from .rdpmeans import RDPMeans

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. soft cannot-links inside hard must-link groups
                labels0 = RDPMeans(xi="pq", p_link=float(self.p), q_link=float(self.q),
                                   random_state=rng.spawn(1)[0]).fit(problem).labels_
            init = np.unique(labels0[np.unique(comp, return_index=True)[1]], return_inverse=True)[1].astype(np.int64)
        elif not isinstance(self.init, str):
            labels0 = np.asarray(self.init)
            if labels0.shape != (n,) or not np.issubdtype(labels0.dtype, np.integer) or (labels0 < 0).any():
                raise InvalidParameterError(
                    f"init of TVClust must be 'sequential', 'rdpmeans' or {n} integer labels >= 0, got an array of shape "
                    f"{labels0.shape}"
                )
            # the first node of every item decides its label
            init = np.unique(labels0[np.unique(comp, return_index=True)[1]], return_inverse=True)[1].astype(np.int64)

        n_iter = int(self.n_iter)
        burn_in = n_iter // 2 if self.burn_in is None else int(self.burn_in)
        thin = int(self.thin)
        kept_idx = np.arange(burn_in, n_iter, thin)
        C = int(self.n_chains)
        traces = {key: np.zeros((C, n_iter)) for key in ("log_joint", "n_clusters", "p", "q", "alpha")}
        pair_counts = np.zeros((C, n_iter, 4))
        samples = np.empty((C * len(kept_idx), n_items), dtype=np.int64)
        kept_lj = np.empty(C * len(kept_idx))
        (ap, bp), (aq, bq) = (float(v) for v in self.p_prior), (float(v) for v in self.q_prior)
        a_alpha, b_alpha = (float(v) for v in self.alpha_prior)
        bar = progress_bar(self.progress, C * n_iter, "TVClust Gibbs", unit="sweep")
        sweep_seconds = 0.0
        n_sm = int(self.n_split_merge)
        accepted = 0
        row = 0
        for c, chain_rng in enumerate(rng.spawn(C)):
            p, q, alpha = float(self.p), float(self.q), float(self.alpha)
            chain = _Chain(provider, model, n_items, FIRST_SLOT + min(n_items, 16) + 1)
            lp, lq = math.log(p / (1.0 - q)), math.log((1.0 - p) / q)
            if init is None:
                chain.sweep(kind, items, scratch, adj, lp, lq, math.log(alpha), chain_rng.permutation(n_items),
                            chain_rng.random(n_items))
            else:
                chain.set_labels(init, kind, items, scratch)
            for t in range(n_iter):
                order = chain_rng.permutation(n_items)
                unif = chain_rng.random(n_items)
                t0 = time.perf_counter()
                chain.sweep(kind, items, scratch, adj, lp, lq, math.log(alpha), order, unif)
                if n_sm:
                    accepted += chain.split_merge(kind, items, scratch, adj, lp, lq, math.log(alpha), n_sm,
                                                  int(chain_rng.integers(2**31 - 1)))
                sweep_seconds += time.perf_counter() - t0
                if (t + 1) % _REFRESH_EVERY == 0:
                    _build(kind, model, chain.cl, items, scratch, chain.z)
                z = chain.z
                same = z[sa] == z[sb]
                n11, n01 = float(w_ml[same].sum()), float(w_cl[same].sum())
                n10, n00 = float(w_ml.sum()) - n11, float(w_cl.sum()) - n01
                if self.learn_pq:
                    p = min(max(chain_rng.beta(ap + n11, bp + n01), _PQ_EPS), 1.0 - _PQ_EPS)
                    q = min(max(chain_rng.beta(aq + n00, bq + n10), _PQ_EPS), 1.0 - _PQ_EPS)
                    lp, lq = math.log(p / (1.0 - q)), math.log((1.0 - p) / q)
                K = int(chain.book[0])
                if self.learn_alpha:
                    alpha = _escobar_west(alpha, K, N, a_alpha, b_alpha, chain_rng)
                g, ml = _cluster_terms(kind, model, chain.cl, chain.active, K)
                lj = (K * math.log(alpha) + math.lgamma(alpha) - math.lgamma(alpha + N) + g + ml + const
                      + n11 * math.log(p) + n01 * math.log1p(-p) + n00 * math.log(q) + n10 * math.log1p(-q))
                if self.learn_pq:
                    lj += _log_beta_pdf(p, ap, bp) + _log_beta_pdf(q, aq, bq)
                if self.learn_alpha:
                    lj += a_alpha * math.log(b_alpha) - math.lgamma(a_alpha) + (a_alpha - 1) * math.log(alpha) \
                        - b_alpha * alpha
                for key, value in (("log_joint", lj), ("n_clusters", K), ("p", p), ("q", q), ("alpha", alpha)):
                    traces[key][c, t] = value
                pair_counts[c, t] = (n11, n01, n00, n10)
                if t >= burn_in and (t - burn_in) % thin == 0:
                    samples[row] = z
                    kept_lj[row] = lj
                    row += 1
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()

        # ---------------------------------------------------------------- summaries
        best_row = int(np.argmax(kept_lj)) if self.point_estimate == "map" else None
        labels, loss, attrs = _posterior_summaries(problem, samples, comp, n_items, best_row)
        for key, value in attrs.items():
            setattr(self, key, value)
        kept = traces["p"][:, kept_idx]
        self.p_ = float(kept.mean())
        self.q_ = float(traces["q"][:, kept_idx].mean())
        self.alpha_ = float(traces["alpha"][:, kept_idx].mean())
        self.log_joint_ = traces["log_joint"]
        self.likelihood_ = provider
        info = {**traces, "n_samples": int(len(samples)), "n_distinct_partitions": int(len(self._posterior[0])),
                "n_items": int(n_items), "sweep_seconds": sweep_seconds,
                "n_sweeps": int(C * n_iter), "point_estimate": self.point_estimate,
                "split_merge_accepted": int(accepted), "pair_counts": pair_counts}
        return labels, ClusteringResult(objective=loss, history=traces["log_joint"][0].tolist(),
                                        info=info)

    # ------------------------------------------------------------------ results
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


def _posterior_summaries(problem, samples, comp, n_items, candidate_row=None):
    """Summaries of kept samples (item labels, one row per sample), shared by TVClust,
    DCP and dd-MMDPM: the point estimate minimising Binder's loss among the most
    frequent partitions (ties: earliest sampled) — or the partition of sample
    ``candidate_row`` alone (MAP, last sample) —, the co-clustering probabilities on
    constraint pairs and data-graph edges, and the posterior of the number of
    clusters. Returns ``(labels, loss, attrs)`` with the fitted attributes in ``attrs``."""
    n = problem.n_nodes
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
    own, crossed, psum = _binder_terms(uniq, weights_u, cand, nw)
    losses = own + psum - 2.0 * crossed
    pick = int(np.argmin(losses))
    labels = uniq[cand[pick]][comp].astype(np.int64)
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


def _escobar_west(alpha, K, N, a, b, rng):
    """One draw of ``α | K`` under a Gamma(a, b) prior (Escobar & West 1995, §6)."""
    eta = rng.beta(alpha + 1.0, N)
    rate = b - math.log(eta)
    odds = (a + K - 1.0) / (N * rate)
    shape = a + K if rng.random() < odds / (1.0 + odds) else a + K - 1.0
    return max(rng.gamma(shape, 1.0 / rate), 1e-300)


def _check_chain_schedule(est, name):
    """``n_iter``, ``burn_in``, ``thin`` and ``n_chains`` of a Gibbs sampler (TVClust,
    DCP, dd-MMDPM): ``burn_in`` must leave at least one sample."""
    n_iter = check_int(est.n_iter, f"n_iter of {name}", low=1)
    if est.burn_in is not None:
        check_int(est.burn_in, f"burn_in of {name}", low=0)
        if est.burn_in >= n_iter:
            raise InvalidParameterError(
                f"burn_in of {name} ({est.burn_in}) must be smaller than n_iter ({n_iter}), or no sample is kept"
            )
    check_int(est.thin, f"thin of {name}", low=1)
    check_int(est.n_chains, f"n_chains of {name}", low=1)


def _log_beta_pdf(x, a, b):
    return (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - float(betaln(a, b))


@register_method("tvclust", "TVClust: Dirichlet-process Gaussian mixture + noisy side information, collapsed Gibbs "
                            "(infers the number of clusters; -k is ignored)")
def _tvclust_factory(n_clusters=2, random_state=None):
    return TVClust(n_iter=200, burn_in=100, random_state=random_state)

