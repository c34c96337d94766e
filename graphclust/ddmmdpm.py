"""Distance-dependent maximum-margin Dirichlet-process mixture (dd-MMDPM) and its CRP
baseline (MMDPM).

MMDPM (Chen, Zhang & Xiong, AAAI 2016) is a Dirichlet-process mixture whose cluster
"likelihood" is a linear max-margin scorer ``exp(β x_iᵀθ_k − λ‖θ_k‖²)``; the weight
vectors ``θ_k`` are learnt online during the Gibbs sweeps by passive-aggressive (PA)
steps. dd-MMDPM (Nguyen, Lauri & Frintrop, *Distance dependent Maximum Margin Dirichlet
Process Mixture*) keeps that likelihood and replaces the CRP prior by a distance-based
similarity between the point and the current members of each cluster:

.. math::

    P(z_i = k \\mid \\cdot) \\propto g(x_i, C_k)\\, e^{β x_iᵀθ_k − λ‖θ_k‖²}, \\qquad
    P(z_i = \\text{new} \\mid \\cdot) \\propto \\frac{α}{N}\\, e^{β x_iᵀθ_{new} − λ‖θ_{new}‖²}

with ``g_max(x_i, C_k) = max_{j∈C_k} f(d_ij)`` or ``g_sum(x_i, C_k) = Σ_{j∈C_k} f(d_ij)``
and ``f(d) = exp(−d/γ)``; ``θ_new`` is a fresh draw from ``N(0, σ₀² I)`` for each point.
Clusters are never merged, so the ``θ_k`` stay explicit.

The sweep runs in one numba kernel over a dense distance matrix (``O(n)`` per point)
or a sparse k-NN graph (``O(degree)`` per point, memory linear in ``n``). The posterior
summaries (Binder point estimate, co-clustering, number of clusters) are those of
:class:`graphclust.TVClust` and reuse its kernels.
"""

import math
import time

import numpy as np
import scipy.sparse as sp
from numba import njit

from ._sampling import release_slot, sample_log_weights
from ._utils import check_float, check_int, check_random_state, progress_bar
from .base import ClusteringEstimator, ClusteringResult, register_method
from .errors import (
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    ProblemTooLargeError,
)
from .potentials.base import NodePotentials, check_features, check_n_clusters
from .potentials.centroids import Centroids
from .sideinfo import check_constraints, must_link_components
from .tvclust import TVClust, _canonical_rows, _check_chain_schedule, _posterior_summaries

__all__ = ["DDMMDPM", "MMDPM", "DDMMDPMPotentials"]

#: prior modes of the kernels
_CRP, _DENSE, _SPARSE = 0, 1, 2
#: dense distance matrices are refused above this many nodes (use distance="knn")
_MAX_DENSE_NODES = 20_000
#: the data-driven decay scale is the mean distance to this nearest neighbour
_GAMMA_NEIGHBOUR = 10


# ============================================================================ kernels
@njit(cache=True)
def _log_combine(a, b, use_max):
    """``log(max(e^a, e^b))`` or ``log(e^a + e^b)``, exact at ``-inf``."""
    if use_max:
        return a if a > b else b
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    m = a if a > b else b
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@njit(cache=True)
def _node_log_prior(i, mode, use_max, pri, side, zn, size, active, n_active, work, out):
    """``log g̃(x_i, C_k)`` for every active slot ``k`` into ``out[k]``.

    ``zn[j]`` is the slot of node ``j`` (``-1``: detached, i.e. node ``i`` itself and
    the rest of its block). ``pri = (LF, ptr, idx, lfv, lfloor)``: dense log-decay
    ``LF`` (mode 1) or CSR log-decay ``(ptr, idx, lfv)`` plus a per-node log floor
    (mode 2); mode 0 is the CRP (``size`` = cluster mass). ``side = (ptr, idx, w)``:
    signed constraint weights, already scaled (``w > 0`` adds link mass, ``w < 0`` is
    added to the log prior, ``-inf`` vetoes).
    """
    LF, ptr, idx, lfv, lfloor = pri
    sp_ptr, sp_idx, sp_w = side
    acc1, acc2, ml, cl, veto = work
    for a in range(n_active):
        k = active[a]
        acc1[k] = -np.inf
        acc2[k] = 0.0
        ml[k] = 0.0
        cl[k] = 0.0
        veto[k] = False
    if mode == _DENSE:
        n = zn.shape[0]
        for j in range(n):
            k = zn[j]
            if k >= 0:
                v = LF[i, j]
                if v > acc1[k]:
                    acc1[k] = v
        if not use_max:
            for j in range(n):
                k = zn[j]
                if k >= 0 and acc1[k] > -np.inf:
                    acc2[k] += math.exp(LF[i, j] - acc1[k])
    elif mode == _SPARSE:
        for e in range(ptr[i], ptr[i + 1]):
            k = zn[idx[e]]
            if k >= 0 and lfv[e] > acc1[k]:
                acc1[k] = lfv[e]
        if not use_max:
            for e in range(ptr[i], ptr[i + 1]):
                k = zn[idx[e]]
                if k >= 0 and acc1[k] > -np.inf:
                    acc2[k] += math.exp(lfv[e] - acc1[k])
    for e in range(sp_ptr[i], sp_ptr[i + 1]):
        k = zn[sp_idx[e]]
        if k >= 0:
            w = sp_w[e]
            if w == -np.inf:
                veto[k] = True
            elif w > 0.0:
                if use_max and mode != _CRP:
                    if w > ml[k]:
                        ml[k] = w
                else:
                    ml[k] += w
            else:
                cl[k] += w
    for a in range(n_active):
        k = active[a]
        if mode == _CRP:
            lg = math.log(size[k] + ml[k])
        else:
            lg = acc1[k]
            if not use_max and lg > -np.inf:
                lg += math.log(acc2[k])
            if mode == _SPARSE:
                lg = _log_combine(lg, lfloor[i], use_max)
            if ml[k] > 0.0:
                lg = _log_combine(lg, math.log(ml[k]), use_max)
        lg += cl[k]
        if veto[k]:
            lg = -np.inf
        out[k] = lg


@njit(cache=True)
def _dot(a, b):
    s = 0.0
    for d in range(a.shape[0]):
        s += a[d] * b[d]
    return s


@njit(cache=True)
def _pa_step(x, x_sq, k, theta, tsq, active, n_active, pa_cap, margin, phantom, tnew):
    """Multi-class PA-I step on the example ``(x, k)`` against the strongest rival
    (a live cluster, or the unused candidate ``tnew`` when ``phantom``)."""
    s_k = _dot(theta[k], x)
    best = -np.inf
    r = -1
    for a in range(n_active):
        j = active[a]
        if j != k:
            s = _dot(theta[j], x)
            if s > best:
                best = s
                r = j
    if phantom:
        s = _dot(tnew, x)
        if s > best:
            best = s
            r = -2
    if r == -1:
        return
    loss = margin - s_k + best
    if loss > 0.0 and x_sq > 0.0:
        tau = min(pa_cap, loss / (2.0 * x_sq))
        for d in range(x.shape[0]):
            theta[k, d] += tau * x[d]
        tsq[k] = _dot(theta[k], theta[k])
        if r >= 0:
            for d in range(x.shape[0]):
                theta[r, d] -= tau * x[d]
            tsq[r] = _dot(theta[r], theta[r])


@njit(cache=True)
def _sweep(mode, use_max, log_new, pri, side, items, params, state, order, unif, noise, work, lg, prior, logw,
           tnew):
    """One sweep over the blocks (items) in ``order``: detach, score against every live
    cluster and a fresh candidate, sample, attach, PA steps. Returns the number of
    clusters opened."""
    mem_ptr, mem_idx, Xn, xsq, cnt, Xs, msum = items
    beta, lam, pa_cap, shrink, margin, base_std, phantom, reuse = params
    z, zn, theta, tsq, size, book, active, where, free = state
    n_active = book[0]
    n_free = book[1]
    D = theta.shape[1]
    opened = 0
    for pos in range(order.shape[0]):
        u = order[pos]
        k_old = z[u]
        m_u = msum[u]
        for e in range(mem_ptr[u], mem_ptr[u + 1]):
            zn[mem_idx[e]] = -1
        size[k_old] -= m_u
        if shrink > 0.0:
            for d in range(D):
                theta[k_old, d] *= 1.0 - shrink
            tsq[k_old] *= (1.0 - shrink) * (1.0 - shrink)
        died = size[k_old] < 0.5
        if died:  # the cluster is gone with its θ: its slot returns to the free list
            n_active, n_free = release_slot(k_old, active, where, free, n_active, n_free)
        if reuse and died:
            for d in range(D):
                tnew[d] = theta[k_old, d]
        else:
            for d in range(D):
                tnew[d] = base_std * noise[pos, d]
        tn_sq = _dot(tnew, tnew)
        for a in range(n_active):
            prior[active[a]] = 0.0
        for e in range(mem_ptr[u], mem_ptr[u + 1]):
            i = mem_idx[e]
            _node_log_prior(i, mode, use_max, pri, side, zn, size, active, n_active, work, lg)
            c = cnt[i]
            for a in range(n_active):
                k = active[a]
                prior[k] += c * lg[k]
        top = -np.inf
        for a in range(n_active):
            k = active[a]
            v = prior[k] + beta * _dot(Xs[u], theta[k]) - m_u * lam * tsq[k]
            logw[a] = v
            if v > top:
                top = v
        v = m_u * log_new + beta * _dot(Xs[u], tnew) - m_u * lam * tn_sq
        logw[n_active] = v
        if v > top:
            top = v
        choice = sample_log_weights(logw, n_active + 1, top, unif[pos])
        new = choice == n_active
        if new:
            n_free -= 1
            k = free[n_free]
            active[n_active] = k
            where[k] = n_active
            n_active += 1
            for d in range(D):
                theta[k, d] = tnew[d]
            tsq[k] = tn_sq
            size[k] = 0.0
            opened += 1
        else:
            k = active[choice]
        size[k] += m_u
        z[u] = k
        for e in range(mem_ptr[u], mem_ptr[u + 1]):
            zn[mem_idx[e]] = k
        for e in range(mem_ptr[u], mem_ptr[u + 1]):
            i = mem_idx[e]
            _pa_step(Xn[i], xsq[i], k, theta, tsq, active, n_active, pa_cap, margin, phantom and not new, tnew)
    book[0] = n_active
    book[1] = n_free
    return opened


@njit(cache=True)
def _pa_epochs(Xn, xsq, labels, theta, tsq, n_epochs, pa_cap, margin):
    """PA steps on every node with its given label, ``n_epochs`` passes in node order."""
    K = theta.shape[0]
    active = np.arange(K)
    for _ in range(n_epochs):
        for i in range(Xn.shape[0]):
            _pa_step(Xn[i], xsq[i], labels[i], theta, tsq, active, K, pa_cap, margin, False, Xn[i])


# ============================================================================ the model arrays
class _Model:
    """Arrays the kernels read: centred features, the prior structure, side information."""

    def __init__(self, Xn, cnt, mode, use_max, pri, gamma, side, comp, n_items):
        self.Xn, self.cnt, self.mode, self.use_max, self.pri, self.gamma = Xn, cnt, mode, use_max, pri, gamma
        self.side, self.comp, self.n_items = side, comp, n_items
        self.xsq = np.einsum("ij,ij->i", Xn, Xn)
        self.N = float(cnt.sum())
        order = np.argsort(comp, kind="stable")
        ptr = np.zeros(n_items + 1, dtype=np.int64)
        np.cumsum(np.bincount(comp, minlength=n_items), out=ptr[1:])
        Xs = np.zeros((n_items, Xn.shape[1]))
        np.add.at(Xs, comp, cnt[:, None] * Xn)
        msum = np.bincount(comp, weights=cnt, minlength=n_items)
        self.items = (ptr, order.astype(np.int64), Xn, self.xsq, cnt, Xs, msum)


def _empty_prior():
    return (np.zeros((1, 1)), np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(1))


def _validated_distances(D, problem, who):
    """A user distance matrix as dense float64 ``(n, n)`` or symmetric CSR, checked
    entry by entry on failure (the message names the entry and its nodes)."""
    n = problem.n_nodes
    nodes = problem.nodes
    if sp.issparse(D):
        D = sp.csr_array(D, dtype=np.float64)
        if D.shape != (n, n):
            raise InvalidGraphError(f"the distance matrix of {who} has shape {D.shape}; it must be square, ({n}, {n}) "
                                    f"for {n} nodes")
        D.sum_duplicates()
        coo = D.tocoo()
        r, c, v = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data
    else:
        try:
            D = np.asarray(D, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidGraphError(f"the distance matrix of {who} must be a numeric (n, n) array") from None
        if D.ndim != 2 or D.shape[0] != D.shape[1]:
            raise InvalidGraphError(f"the distance matrix of {who} has shape {D.shape}; it must be square")
        if D.shape[0] != n:
            raise InvalidGraphError(f"the distance matrix of {who} is {D.shape[0]}x{D.shape[0]} but the data has "
                                    f"{n} nodes")
        r = c = v = None
    vals = D.data if r is not None else D
    bad = np.isnan(vals) | (vals < 0)
    if bad.any():
        if r is None:
            i, j = (int(t) for t in np.argwhere(bad)[0])
            val = D[i, j]
        else:
            e = int(np.flatnonzero(bad)[0])
            i, j, val = int(r[e]), int(c[e]), v[e]
        raise InvalidGraphError(
            f"distance entry ({i}, {j}) between nodes {nodes[i]!r} and {nodes[j]!r} is {val}; distances must be "
            ">= 0 and not NaN (+inf means no link)", edge=(nodes[i], nodes[j]))
    if r is None:
        asym = D != D.T
        if asym.any():
            i, j = (int(t) for t in np.argwhere(asym)[0])
            raise InvalidGraphError(
                f"the distance matrix of {who} is not symmetric: entry ({i}, {j}) is {D[i, j]} but ({j}, {i}) is "
                f"{D[j, i]} (nodes {nodes[i]!r}, {nodes[j]!r}); pass (D + D.T) / 2 or np.minimum(D, D.T)",
                edge=(nodes[i], nodes[j]))
        return D
    T = D.T.tocsr()
    diff = abs(D - T)
    diff.eliminate_zeros()
    pattern = (D != 0).astype(np.int8) - (T != 0).astype(np.int8)
    pattern.eliminate_zeros()
    if diff.nnz or pattern.nnz:
        M = pattern if pattern.nnz else diff
        mc = M.tocoo()
        i, j = int(mc.row[0]), int(mc.col[0])
        raise InvalidGraphError(
            f"the sparse distance matrix of {who} is not symmetric: entry ({i}, {j}) is {D[i, j]} but ({j}, {i}) is "
            f"{D[j, i]} (nodes {nodes[i]!r}, {nodes[j]!r})", edge=(nodes[i], nodes[j]))
    return D


def _auto_gamma_dense(D):
    n = D.shape[0]
    k = min(_GAMMA_NEIGHBOUR, n - 1)
    Dm = D + np.diag(np.full(n, np.inf))
    kth = np.partition(Dm, k - 1, axis=1)[:, k - 1]
    kth = kth[np.isfinite(kth)]
    g = float(kth.mean()) if kth.size else 0.0
    if not g > 0:
        pos = Dm[np.isfinite(Dm) & (Dm > 0)]
        g = float(pos.mean()) if pos.size else 1.0
    return g


def _csr_rows(ptr, values, fill, reduce):
    """Per-row reduction (min or max) of CSR values, ``fill`` for empty rows."""
    n = len(ptr) - 1
    out = np.full(n, fill, dtype=np.float64)
    nonempty = np.flatnonzero(np.diff(ptr) > 0)
    if nonempty.size:
        out[nonempty] = reduce.reduceat(values, ptr[nonempty])
    return out


# ============================================================================ provider
class DDMMDPMPotentials(NodePotentials):
    """Max-margin cluster scorers with the distance-dependent (or CRP) prior: the
    node-potential provider behind :class:`DDMMDPM` and :class:`MMDPM`.

    The log-potential of cluster ``k`` for node ``i`` is the max-margin likelihood
    ``c_i (β x_iᵀθ_k − λ‖θ_k‖²)`` (``x_i`` the centred node mean, ``c_i`` its count),
    optionally plus the prior ``c_i log g̃(x_i, C_k ∖ i)`` under the current labels.

    Parameters
    ----------
    n_clusters : int, default=2
        Size of the fixed label set of the batch interface (:class:`graphclust.HMRF`).
    similarity : {"max", "sum", "crp"}, default="max"
        ``g_max``, ``g_sum``, or the Chinese-restaurant prior (MMDPM).
    distance : {"euclidean", "knn", "graph"} or array-like or sparse matrix, default="euclidean"
        Where the distances of the prior come from (ignored by ``"crp"``):

        * ``"euclidean"``: all pairwise Euclidean distances of the node means (dense,
          ``O(n²)`` memory; the paper's model);
        * ``"knn"``: the ``n_neighbors`` nearest neighbours of each node (union of
          both directions, memory ``O(n·n_neighbors)``);
        * ``"graph"``: the data graph's similarities are the decay values
          ``f_ij = w_ij`` directly (``d_ij = −γ log w_ij``);
        * an ``(n_nodes, n_nodes)`` array: precomputed distances (``+inf``: no link);
          a sparse matrix stores only the neighbourhood of each node.
    n_neighbors : int, default=10
        For ``distance="knn"``.
    gamma : float or "auto", default="auto"
        Decay scale of ``f(d) = exp(−d/γ)``. ``"auto"``: the mean distance to the 10th
        nearest neighbour (to the farthest stored one on sparse input).
    floor : bool, default=True
        Sparse distances only: every cluster keeps at least the decay ``ε_i`` at the
        first distance outside node ``i``'s neighbourhood (for ``"knn"``: its
        ``(n_neighbors+1)``-th neighbour; for ``"graph"`` and sparse input: its
        weakest stored link), so clusters out of reach keep a non-zero prior. ``g_max``
        becomes ``max(g, ε_i)``, ``g_sum`` becomes ``g + ε_i``.
    alpha : float, default=1.0
        New-cluster weight ``α/N`` (dd prior) or ``α`` (CRP).
    lam, beta : float, default=0.5, 1.0
        The likelihood ``β xᵀθ − λ‖θ‖²``.
    base_std : float, default=1.0
        ``σ₀`` of the base measure ``N(0, σ₀² I)`` of new clusters' ``θ``.
    pa_cap, margin : float, default=0.01, 1.0
        PA-I step cap ``C`` and hinge margin.
    removal_shrink : float, default=0.01
        ``θ`` of the cluster a point leaves is multiplied by ``1 − removal_shrink``.
    bias : bool, default=False
        Append a constant-1 feature to ``x`` (not to the distances).
    ml_strength, cl_penalty : float, default=1.0, 1.0
        Side information folded into the prior (an extension, not in the paper): a
        soft must-link of weight ``w`` to a member of ``C_k`` adds link mass
        ``ml_strength·w`` (summed for ``g_sum`` and the CRP, maximised for ``g_max``);
        soft cannot-links multiply the prior by ``exp(−cl_penalty·Σ|w|)``; a hard
        cannot-link sets it to 0. The new-cluster option is never penalised.

    Notes
    -----
    **Batch interface** (inside :class:`graphclust.HMRF`): :meth:`initialize` sets
    ``θ_k = β s_k / (2λ)`` for centred seeds ``s_k`` (so the first labels are the nearest
    seeds), :meth:`unary` returns the negated likelihood potentials, and :meth:`update`
    runs ``pa_epochs`` passes of PA steps on the given labels (the EM-like loop of the
    spec). Pair distortions are squared Euclidean distances of the node means.

    **Incremental interface**: :meth:`start`, :meth:`remove`, :meth:`add`,
    :meth:`scores` move nodes under fixed ``θ``; :meth:`log_prior` gives the prior
    alone. The "new cluster" column uses the exact marginal of the likelihood under
    the base measure, ``E_θ~G₀[e^{βxᵀθ−λ‖θ‖²}] = (1+2λσ₀²)^{−D/2}
    exp(β²σ₀²‖x‖² / (2(1+2λσ₀²)))``, and a node put into a new cluster gets the
    posterior mode ``θ = βσ₀² x / (1 + 2λσ₀²)``.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0], [0.1], [3.0], [3.2]])
    >>> P = gc.Problem.from_array(X)
    >>> pot = DDMMDPMPotentials(similarity="max", gamma=1.0)
    >>> pot.start(P, np.array([0, 0, 1, 1]))
    >>> pot.remove(1)
    >>> pot.log_prior(1).round(2)      # log g_max = -d/γ to the nearest member; new: log(α/N)
    array([-0.1 , -2.9 , -1.39])
    """

    def __init__(self, n_clusters=2, *, similarity="max", distance="euclidean", n_neighbors=10, gamma="auto",
                 floor=True, alpha=1.0, lam=0.5, beta=1.0, base_std=1.0, pa_cap=0.01, margin=1.0,
                 removal_shrink=0.01, bias=False, ml_strength=1.0, cl_penalty=1.0, pa_epochs=1):
        self.n_clusters_param = check_n_clusters(n_clusters, "DDMMDPMPotentials")
        self.similarity = similarity
        self.distance = distance
        self.n_neighbors = n_neighbors
        self.gamma = gamma
        self.floor = floor
        self.alpha = alpha
        self.lam = lam
        self.beta = beta
        self.base_std = base_std
        self.pa_cap = pa_cap
        self.margin = margin
        self.removal_shrink = removal_shrink
        self.bias = bias
        self.ml_strength = ml_strength
        self.cl_penalty = cl_penalty
        self.pa_epochs = pa_epochs
        _check_model_params(self, "DDMMDPMPotentials")
        check_int(pa_epochs, "pa_epochs of DDMMDPMPotentials", low=0)
        self._model = None
        self._pair = Centroids(1)
        self.theta_ = None

    _PARAMS = ("similarity", "distance", "n_neighbors", "gamma", "floor", "alpha", "lam", "beta", "base_std",
               "pa_cap", "margin", "removal_shrink", "bias", "ml_strength", "cl_penalty", "pa_epochs")

    def __repr__(self):
        return f"DDMMDPMPotentials({self.n_clusters_param}, similarity={self.similarity!r})"

    def get_params(self):
        return {"n_clusters": self.n_clusters_param, **{p: getattr(self, p) for p in self._PARAMS}}

    def clone(self, **changes):
        """An unfitted copy with some parameters changed."""
        return DDMMDPMPotentials(**{**self.get_params(), **changes})

    @property
    def n_clusters(self):
        return self.n_clusters_param if self.theta_ is None else len(self.theta_)

    # ------------------------------------------------------------------ model
    def model(self, problem, *, items=None):
        """The kernel arrays for ``problem`` (cached per problem): centred features, the
        prior (dense log-decay matrix, or CSR plus log floors), the scaled side
        information, and the blocks of hard must-links (``items=(n_items, comp)``,
        default: one block per node)."""
        key = (id(problem), None if items is None else items[0])
        if self._model is not None and self._model[0] == key and self._model[1] is problem:
            return self._model[2]
        who = type(self).__name__
        check_features(problem, who)
        n = problem.n_nodes
        if n < 2:
            raise InvalidFeaturesError(f"{who} needs at least 2 nodes, got {n}; a single point is one cluster "
                                       "by definition")
        Y = problem.feature_means
        cnt = problem.counts.astype(np.float64)
        Xn = Y - (cnt[:, None] * Y).sum(0) / cnt.sum()
        if self.bias:
            Xn = np.hstack([Xn, np.ones((n, 1))])
        Xn = np.ascontiguousarray(Xn)
        mode, pri, gamma = self._prior(problem, Y)
        n_items, comp = (n, np.arange(n, dtype=np.int64)) if items is None else items
        side = self._side(problem, comp)
        model = _Model(Xn, cnt, mode, self.similarity == "max", pri, gamma, side, comp, n_items)
        self._model = (key, problem, model)
        return model

    def _prior(self, problem, Y):
        """``(mode, (LF, ptr, idx, lfv, lfloor), γ)``."""
        if self.similarity == "crp":
            return _CRP, _empty_prior(), None
        n = problem.n_nodes
        dist = self.distance
        gamma = None if isinstance(self.gamma, str) else float(self.gamma)
        if isinstance(dist, str) and dist == "graph":
            W = sp.csr_array(problem.W)
            if W.nnz == 0:
                raise InvalidGraphError("distance='graph' reads the data graph's similarities as link weights, but "
                                        "the data graph has no edges; fit on a graph (gc.knn_graph(X)) or use "
                                        "distance='knn'")
            W.sort_indices()
            lfv = np.log(W.data)
            ptr = W.indptr.astype(np.int64)
            lfloor = _csr_rows(ptr, lfv, -np.inf, np.minimum) if self.floor else np.full(n, -np.inf)
            return _SPARSE, (np.zeros((1, 1)), ptr, W.indices.astype(np.int64), lfv, lfloor), None
        if isinstance(dist, str) and dist == "knn":
            from scipy.spatial import cKDTree

            m = int(self.n_neighbors)
            if m >= n:
                raise InvalidParameterError(f"n_neighbors={m} but there are only {n} nodes; use at most {n - 1}")
            q = min(m + 2, n)
            dd, ii = cKDTree(Y).query(Y, k=q)
            # drop each node itself (with duplicates it need not come first)
            rows = np.arange(n)[:, None]
            is_self = ii == rows
            keep = np.where(is_self.any(1, keepdims=True), ~is_self, np.arange(q)[None, :] < q - 1)
            dd = dd[keep].reshape(n, q - 1)
            ii = ii[keep].reshape(n, q - 1)
            k_gamma = min(_GAMMA_NEIGHBOUR, q - 1)
            if gamma is None:
                gamma = float(dd[:, k_gamma - 1].mean())
                if not gamma > 0:
                    gamma = float(dd[dd > 0].mean()) if (dd > 0).any() else 1.0
            beyond = dd[:, m] if q - 1 > m else np.full(n, np.inf)
            r = np.repeat(np.arange(n), m)
            c = ii[:, :m].ravel()
            v = dd[:, :m].ravel()
            A = sp.coo_array((np.concatenate([v, v]), (np.concatenate([r, c]), np.concatenate([c, r]))),
                             shape=(n, n)).tocsr()
            # duplicates of a pair chosen from both ends were summed: halve them back
            B = sp.coo_array((np.ones(2 * len(v)), (np.concatenate([r, c]), np.concatenate([c, r]))),
                             shape=(n, n)).tocsr()
            A.sort_indices()
            B.sort_indices()
            dist_vals = A.data / B.data
            ptr = A.indptr.astype(np.int64)
            lfloor = -beyond / gamma if self.floor else np.full(n, -np.inf)
            return _SPARSE, (np.zeros((1, 1)), ptr, A.indices.astype(np.int64), -dist_vals / gamma, lfloor), gamma
        if isinstance(dist, str):  # "euclidean"
            if n > _MAX_DENSE_NODES:
                raise ProblemTooLargeError(
                    f"a dense distance matrix of {n} nodes needs {8 * n * n / 1e9:.1f} GB; use distance='knn'")
            sq = (Y * Y).sum(1)
            D = np.sqrt(np.maximum(sq[:, None] - 2.0 * Y @ Y.T + sq[None, :], 0.0))
            np.fill_diagonal(D, 0.0)
        else:
            D = _validated_distances(dist, problem, type(self).__name__)
        if sp.issparse(D):
            D.sort_indices()
            ptr = D.indptr.astype(np.int64)
            vals = D.data
            if gamma is None:
                # per row: the 10th smallest stored distance, or the largest when fewer
                row = np.repeat(np.arange(n), np.diff(ptr))
                srt = np.lexsort((vals, row))
                rank = np.arange(len(vals)) - ptr[row]
                want = np.minimum(_GAMMA_NEIGHBOUR, np.diff(ptr))[row] - 1
                kth = vals[srt][rank == want]
                kth = kth[np.isfinite(kth) & (kth > 0)]
                gamma = float(kth.mean()) if kth.size else 1.0
            far = _csr_rows(ptr, vals, np.inf, np.maximum)
            lfloor = -far / gamma if self.floor else np.full(n, -np.inf)
            return _SPARSE, (np.zeros((1, 1)), ptr, D.indices.astype(np.int64), -vals / gamma, lfloor), gamma
        if gamma is None:
            gamma = _auto_gamma_dense(D)
        return _DENSE, (np.ascontiguousarray(-D / gamma), np.zeros(1, np.int64), np.zeros(0, np.int64),
                        np.zeros(0), np.zeros(1)), gamma

    def _side(self, problem, comp):
        """Node-level CSR of the constraints between different blocks, scaled:
        ``ml_strength·w`` (must), ``cl_penalty·w`` (cannot, ``< 0``), ``-inf`` hard."""
        n = problem.n_nodes
        pairs, w = problem.constraints, problem.constraint_weights
        a, b = pairs[:, 0], pairs[:, 1]
        keep = (comp[a] != comp[b]) & ~(np.isinf(w) & (w > 0))
        a, b, w = a[keep], b[keep], w[keep]
        val = np.where(np.isinf(w), -np.inf, np.where(w > 0, float(self.ml_strength) * w,
                                                       float(self.cl_penalty) * w))
        src = np.concatenate([a, b])
        dst = np.concatenate([b, a])
        vv = np.concatenate([val, val])
        order = np.argsort(src, kind="stable")
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
        return ptr, dst[order].astype(np.int64), vv[order].astype(np.float64)

    def _params(self, phantom=False, reuse=False):
        return (float(self.beta), float(self.lam), float(self.pa_cap), float(self.removal_shrink),
                float(self.margin), float(self.base_std), bool(phantom), bool(reuse))

    def _log_new_unit(self, N):
        return math.log(self.alpha) - (0.0 if self.similarity == "crp" else math.log(N))

    # ------------------------------------------------------------------ batch (HMRF)
    def points(self, problem):
        """``(node means, counts)``: the space seeds are chosen in."""
        check_features(problem, type(self).__name__)
        return problem.feature_means, problem.counts.astype(np.float64)

    def distortion_matrix(self, Y, C):
        return self._pair.distortion_matrix(Y, C)

    def pair_distortion(self, problem, pairs):
        return self._pair.pair_distortion(problem, pairs)

    def max_distortion(self, problem, rng=None):
        return self._pair.max_distortion(problem)

    def _centre(self, problem, V):
        Y, cnt = self.points(problem)
        V = np.asarray(V, dtype=np.float64) - (cnt[:, None] * Y).sum(0) / cnt.sum()
        return np.hstack([V, np.ones((len(V), 1))]) if self.bias else V

    def initialize(self, problem, seeds, rng):
        seeds = np.asarray(seeds, dtype=np.float64)
        Y, _ = self.points(problem)
        if seeds.shape != (self.n_clusters_param, Y.shape[1]):
            raise InvalidParameterError(f"expected {self.n_clusters_param} seeds of {Y.shape[1]} features, got shape "
                                        f"{seeds.shape}")
        self.theta_ = np.ascontiguousarray(float(self.beta) * self._centre(problem, seeds) /
                                           (2.0 * max(float(self.lam), 1e-12)))

    def unary(self, problem):
        """Costs ``−c_i (β x_iᵀθ_k − λ‖θ_k‖²)``, shape ``(n_nodes, n_clusters)``."""
        Xn = self._centre(problem, problem.feature_means)
        cnt = problem.counts.astype(np.float64)
        tsq = (self.theta_ * self.theta_).sum(1)
        return -cnt[:, None] * (float(self.beta) * Xn @ self.theta_.T - float(self.lam) * tsq[None, :])

    def update(self, problem, labels, **penalty_terms):
        """``pa_epochs`` passes of PA steps on ``labels`` (constraint terms ignored)."""
        Xn = np.ascontiguousarray(self._centre(problem, problem.feature_means))
        xsq = np.einsum("ij,ij->i", Xn, Xn)
        tsq = (self.theta_ * self.theta_).sum(1)
        _pa_epochs(Xn, xsq, np.asarray(labels, dtype=np.int64), self.theta_, tsq, int(self.pa_epochs),
                   float(self.pa_cap), float(self.margin))

    # ------------------------------------------------------------------ incremental
    def start(self, problem, labels, theta=None):
        """State for ``labels`` (``0..K-1``); ``θ_k`` given, or ``β μ_k / (2λ)`` for the
        centred cluster means ``μ_k``."""
        model = self.model(problem)
        labels = np.asarray(labels, dtype=np.int64)
        n = problem.n_nodes
        if labels.shape != (n,) or (labels < 0).any():
            raise InvalidParameterError(f"expected {n} labels >= 0, got shape {labels.shape}")
        K = int(labels.max()) + 1
        D = model.Xn.shape[1]
        cap = n + K + 1
        size = np.zeros(cap)
        size[:K] = np.bincount(labels, weights=model.cnt, minlength=K)
        th = np.zeros((cap, D))
        if theta is None:
            sums = np.zeros((K, D))
            np.add.at(sums, labels, model.cnt[:, None] * model.Xn)
            filled = size[:K] > 0
            th[:K][filled] = float(self.beta) * sums[filled] / size[:K][filled, None] / (2.0 * max(self.lam, 1e-12))
        else:
            theta = np.asarray(theta, dtype=np.float64)
            if theta.shape != (K, D):
                raise InvalidParameterError(f"expected theta of shape {(K, D)}, got {theta.shape}")
            th[:K] = theta
        self._z = labels.copy()
        self._K = K
        self._size = size
        self._theta = th
        self.theta_ = th[:K]
        self._tsq = (th * th).sum(1)
        self._work = (np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap), np.zeros(cap, np.bool_))
        self._problem = problem

    def _active(self):
        act = np.flatnonzero(self._size[: self._K] > 0.5).astype(np.int64)
        return act

    def remove(self, i):
        k = self._z[i]
        if k < 0:
            raise InvalidParameterError(f"node index {i} is not in a cluster; add it before removing it")
        self._size[k] -= self._model[2].cnt[i]
        self._z[i] = -1

    def add(self, i, k):
        if not 0 <= k <= self._K:
            raise InvalidParameterError(f"cluster {k} does not exist; use 0..{self._K - 1}, or {self._K} to open one")
        if self._z[i] >= 0:
            raise InvalidParameterError(f"node index {i} is already in cluster {self._z[i]}; remove it first")
        model = self._model[2]
        if k == self._K:
            s2 = float(self.base_std) ** 2
            self._theta[k] = float(self.beta) * s2 * model.Xn[i] / (1.0 + 2.0 * float(self.lam) * s2)
            self._tsq[k] = self._theta[k] @ self._theta[k]
            self._K += 1
            self.theta_ = self._theta[:self._K]
        self._size[k] += model.cnt[i]
        self._z[i] = k

    def log_prior(self, i):
        """``log g̃(x_i, C_k)`` for clusters ``0..K-1`` (``-inf`` for an empty one) and
        the new-cluster weight ``log(α/N)`` (``log α`` for the CRP) last, for a node
        that has been removed. Multiplied by the node's count, as in the sampler."""
        model = self._model[2]
        act = self._active()
        out = np.full(len(self._size), -np.inf)
        _node_log_prior(i, model.mode, model.use_max, model.pri, model.side, self._z, self._size, act, len(act),
                        self._work, out)
        res = np.full(self._K + 1, -np.inf)
        res[act] = out[act]
        res[self._K] = self._log_new_unit(model.N)
        return model.cnt[i] * res

    def log_likelihood(self, i):
        """``c_i (β x_iᵀθ_k − λ‖θ_k‖²)`` per cluster, and the marginal under the base
        measure for a new cluster last."""
        model = self._model[2]
        K = self._K
        x = model.Xn[i]
        c = model.cnt[i]
        lam, beta, s2 = float(self.lam), float(self.beta), float(self.base_std) ** 2
        out = np.empty(K + 1)
        out[:K] = c * (beta * self._theta[:K] @ x - lam * self._tsq[:K])
        a = 1.0 + 2.0 * lam * s2
        out[K] = c * (-0.5 * len(x) * math.log(a) + beta * beta * s2 * float(x @ x) / (2.0 * a))
        return out

    def scores(self, i):
        """Costs ``(n_clusters + 1,)``: negated log prior + log likelihood (``inf`` for
        an empty or vetoed cluster), a new cluster last."""
        return -(self.log_prior(i) + self.log_likelihood(i))

    @property
    def labels(self):
        """Current labels of the incremental path (a copy)."""
        return self._z.copy()


def _check_model_params(obj, name):
    sim = getattr(obj, "similarity", "crp")
    if sim not in ("max", "sum", "crp"):
        raise InvalidParameterError(f"similarity of {name} must be 'max' or 'sum', got {sim!r}")
    dist = getattr(obj, "distance", "euclidean")
    if isinstance(dist, str):
        if dist not in ("euclidean", "knn", "graph"):
            raise InvalidParameterError(
                f"distance of {name} must be 'euclidean', 'knn', 'graph' or a (n, n) distance matrix, got {dist!r}")
    elif not (sp.issparse(dist) or isinstance(dist, (np.ndarray, list, tuple))):
        raise InvalidParameterError(f"distance of {name} must be a string or a distance matrix, got "
                                    f"{type(dist).__name__}")
    check_int(getattr(obj, "n_neighbors", 10), f"n_neighbors of {name}", low=1)
    gamma = getattr(obj, "gamma", "auto")
    if isinstance(gamma, str):
        if gamma != "auto":
            raise InvalidParameterError(f"gamma of {name} must be 'auto' or a number > 0, got {gamma!r}")
    else:
        check_float(gamma, f"gamma of {name}", low=0.0, low_open=True)
    check_float(obj.alpha, f"alpha of {name}", low=0.0, low_open=True)
    check_float(obj.lam, f"lam of {name}", low=0.0)
    check_float(obj.beta, f"beta of {name}", low=0.0, low_open=True)
    check_float(obj.base_std, f"base_std of {name}", low=0.0, low_open=True)
    check_float(obj.pa_cap, f"pa_cap of {name}", low=0.0)
    check_float(obj.margin, f"margin of {name}", low=0.0)
    shrink = check_float(obj.removal_shrink, f"removal_shrink of {name}", low=0.0)
    if shrink >= 1.0:
        raise InvalidParameterError(f"removal_shrink of {name} must be in [0, 1), got {shrink}")
    check_float(obj.ml_strength, f"ml_strength of {name}", low=0.0)
    check_float(obj.cl_penalty, f"cl_penalty of {name}", low=0.0)
    for p in ("bias", "floor"):
        v = getattr(obj, p, False)
        if not isinstance(v, (bool, np.bool_)):
            raise InvalidParameterError(f"{p} of {name} must be True or False, got {v!r}")


# ============================================================================ estimators
class DDMMDPM(ClusteringEstimator):
    """Distance-dependent maximum-margin Dirichlet-process mixture (dd-MMDPM).

    A Dirichlet-process mixture whose clusters are linear max-margin scorers ``θ_k``,
    learnt online by passive-aggressive steps during the sweeps (MMDPM), with the CRP
    prior replaced by a distance-based similarity between a point and the members of
    each cluster: the decay to the nearest member (``g_max``) or summed over all
    members (``g_sum``). The number of clusters is inferred. Must-links and
    cannot-links can be folded into the prior (an extension, see Notes).

    Parameters
    ----------
    similarity : {"max", "sum"}, default="max"
        ``g_max(x_i, C_k) = max_{j∈C_k} f(d_ij)`` (neighbourhood effect, no size
        bias) or ``g_sum = Σ_{j∈C_k} f(d_ij)`` (ddCRP-like, large clusters attract).
    distance : {"euclidean", "knn", "graph"} or array-like or sparse matrix, default="euclidean"
        Dense Euclidean distances of the node features (the paper), the
        ``n_neighbors``-NN graph (sparse, memory linear in ``n``), the data graph's
        similarities used as decay values, or a precomputed ``(n_nodes, n_nodes)``
        distance matrix (dense, or sparse for neighbourhoods only; ``+inf``: no link).
        See :class:`DDMMDPMPotentials`.
    n_neighbors : int, default=10
    gamma : float or "auto", default="auto"
        Scale of ``f(d) = exp(−d/γ)``; ``"auto"``: mean distance to the 10th nearest
        neighbour.
    floor : bool, default=True
        Sparse distances: clusters outside a node's neighbourhood keep the decay of
        the first distance outside it (see :class:`DDMMDPMPotentials`).
    alpha : float, default=1.0
        The new-cluster prior weight is ``α/N``.
    lam : float, default=0.5
        ``λ`` of the likelihood ``exp(β xᵀθ − λ‖θ‖²)``; the parameter that drives the
        number of clusters most.
    beta : float, default=1.0
    base_std : float, default=1.0
        ``σ₀``: ``θ_new ~ N(0, σ₀² I)``, drawn afresh for every point. ``‖θ_new‖² ≈ σ₀²D``
        so in high dimension lower it (e.g. ``1/√D``) or new clusters never open.
    pa_cap : float, default=0.01
        Cap ``C`` of the PA-I step ``τ = min(C, ℓ / (2‖x‖²))``.
    margin : float, default=1.0
        Hinge margin of the PA step.
    removal_shrink : float, default=0.01
        ``θ`` of the cluster a point leaves is multiplied by ``1 − removal_shrink``.
    bias : bool, default=False
        Append a constant-1 feature to ``x`` (distances are computed without it).
    ml_strength : float, default=1.0
        A soft must-link of weight ``w`` adds link mass ``ml_strength·w`` to its
        partner's cluster (extension).
    cl_penalty : float, default=1.0
        A soft cannot-link of weight ``w < 0`` multiplies the prior of its partner's
        cluster by ``exp(cl_penalty·w)`` (extension). Hard cannot-links veto.
    phantom_rival : bool, default=False
        Let the unused new-cluster candidate be the PA rival (as the MMDPM MATLAB code
        does); by default only live clusters compete.
    reuse_singleton_theta : bool, default=False
        When a point's cluster disappears with it, offer that cluster's ``θ`` as the
        new-cluster candidate instead of a fresh draw (Neal's algorithm 8 in spirit;
        keeps singletons stable).
    n_iter : int, default=200
        Sweeps per chain.
    burn_in : int or None, default=None
        Sweeps discarded at the start of each chain; ``None``: ``n_iter // 2``. The paper
        uses 100 burn-in sweeps and scores 5 samples: ``n_iter=105, burn_in=100``.
    thin : int, default=1
    n_chains : int, default=1
        Independent chains seeded from ``random_state``; their samples are pooled.
    init : "single" or array-like of int of shape (n_nodes,), default="single"
        ``"single"``: every point in one cluster with a random ``θ`` (as the MMDPM
        code); or initial labels (each with a random ``θ``).
    point_estimate : {"binder", "last"}, default="binder"
        ``"binder"``: the sampled partition with the least expected Binder loss against
        the sampled co-clustering (as :class:`graphclust.TVClust`); ``"last"``: the
        last sample of the last chain.
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool, default=False
        Show a progress bar over the sweeps.

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
    nodes_, partition_, n_clusters_
        As for every estimator.
    samples_ : ndarray of shape (n_samples, n_nodes)
        The kept partitions of all chains (labels in order of first appearance).
    coclustering_ : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        Fraction of samples in which two nodes share a cluster, stored for every
        constrained pair and every data-graph edge; :meth:`coclustering` gives any
        pairs or the dense matrix.
    n_clusters_posterior_ : ndarray
        ``n_clusters_posterior_[k]`` = fraction of samples with ``k`` clusters.
    theta_ : ndarray of shape (n_clusters_last, n_features)
        Cluster weight vectors of the final state of the first chain (in the centred
        feature space, a last column for the bias), rows in the order of
        ``last_labels_``.
    last_labels_ : ndarray of shape (n_nodes,)
        Labels of that final state.
    gamma_ : float or None
        The decay scale used (``None`` for the CRP and ``distance="graph"``).
    result_ : ClusteringResult
        ``objective``: the expected Binder loss of ``labels_``; ``history``: number of
        clusters after every sweep of the first chain; ``info``: ``"n_clusters"`` and
        ``"opened"`` traces ``(n_chains, n_iter)``, ``"n_samples"``,
        ``"n_distinct_partitions"``, ``"n_items"``, ``"sweep_seconds"``.

    Notes
    -----
    The sampler is not a valid MCMC: the conditionals come from no joint prior and the
    ``θ`` are learnt, not sampled. ``samples_`` are the states of a stochastic search
    and the summaries describe their spread, not a posterior; compare seeds.

    **Side information** (an extension; the paper names the similarity as the place for
    domain knowledge but gives no formula). A soft must-link of weight ``w`` to a member
    of ``C_k`` adds link mass ``μ w`` (``μ = ml_strength``): ``g_sum + μΣw``, or
    ``max(g_max, μ max w)``, so with ``μ w = 1`` a must-link partner counts as a member
    at distance 0. Soft cannot-links multiply by ``exp(−ν Σ|w|)`` (``ν = cl_penalty``)
    and hard ones set the prior to 0 (zeroing one link would not veto under ``g_max``).
    Nodes joined by hard must-links move as one block with
    ``log g(block, k) = Σ_i c_i log g̃(i, k)``, the likelihood summed over members, new
    weight ``(α/N)^{size}`` and PA steps member by member. The new-cluster option is
    never penalised, so every step is feasible, and after each complete sweep no hard
    cannot-link is violated. Contradictory hard constraints raise
    :class:`~graphclust.errors.InfeasibleConstraintsError`.

    **Cost.** A sweep costs ``O(n²)`` for the prior with dense distances (``O(n·m)``
    on an ``m``-NN graph) plus ``O(n K D)`` for the likelihood and the PA steps;
    memory is ``O(n²)`` dense and ``O(n (m + D))`` sparse
    (``docs/benchmarks/ddmmdpm.md``).

    References
    ----------
    Q. Nguyen, M. Lauri, S. Frintrop, *Distance dependent Maximum Margin Dirichlet
    Process Mixture* (undated preprint).
    G. Chen, H. Zhang, C. Xiong, *Maximum margin Dirichlet process mixtures for
    clustering*, AAAI 2016. https://doi.org/10.1609/aaai.v30i1.10270
    D. M. Blei, P. I. Frazier, *Distance dependent Chinese restaurant processes*, JMLR
    12, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.3, 0.1], [0.1, 0.3], [4.0, 4.0], [4.2, 3.9], [3.9, 4.2]])
    >>> est = gc.DDMMDPM(similarity="sum", n_iter=60, random_state=0).fit(X)
    >>> est.labels_
    array([0, 0, 0, 1, 1, 1])
    >>> S = gc.SideInfo.from_pairs(cannot=[(0, 1)], weight=float("inf"))
    >>> est = gc.DDMMDPM(similarity="sum", n_iter=60, random_state=0).fit(X, S)
    >>> bool((est.samples_[:, 0] != est.samples_[:, 1]).all())   # the veto always holds
    True
    """

    _crp = False

    def __init__(self, similarity="max", *, distance="euclidean", n_neighbors=10, gamma="auto", floor=True,
                 alpha=1.0, lam=0.5, beta=1.0, base_std=1.0, pa_cap=0.01, margin=1.0, removal_shrink=0.01,
                 bias=False, ml_strength=1.0, cl_penalty=1.0, phantom_rival=False, reuse_singleton_theta=False,
                 n_iter=200, burn_in=None, thin=1, n_chains=1, init="single", point_estimate="binder",
                 random_state=None, progress=False):
        self.similarity = similarity
        self.distance = distance
        self.n_neighbors = n_neighbors
        self.gamma = gamma
        self.floor = floor
        self.alpha = alpha
        self.lam = lam
        self.beta = beta
        self.base_std = base_std
        self.pa_cap = pa_cap
        self.margin = margin
        self.removal_shrink = removal_shrink
        self.bias = bias
        self.ml_strength = ml_strength
        self.cl_penalty = cl_penalty
        self.phantom_rival = phantom_rival
        self.reuse_singleton_theta = reuse_singleton_theta
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.init = init
        self.point_estimate = point_estimate
        self.random_state = random_state
        self.progress = progress

    coclustering = TVClust.coclustering

    # ------------------------------------------------------------------ validation
    def _validate_params(self):
        name = type(self).__name__
        if not self._crp and self.similarity not in ("max", "sum"):
            raise InvalidParameterError(f"similarity of {name} must be 'max' or 'sum', got {self.similarity!r}")
        _check_model_params(self, name)
        for p in ("phantom_rival", "reuse_singleton_theta", "progress"):
            if not isinstance(getattr(self, p), (bool, np.bool_)):
                raise InvalidParameterError(f"{p} of {name} must be True or False, got {getattr(self, p)!r}")
        _check_chain_schedule(self, name)
        if isinstance(self.init, str) and self.init != "single":
            raise InvalidParameterError(f"init of {name} must be 'single' or an array of labels, got {self.init!r}")
        if self.point_estimate not in ("binder", "last"):
            raise InvalidParameterError(
                f"point_estimate of {name} must be 'binder' or 'last', got {self.point_estimate!r}")

    def _potentials(self):
        keys = ("alpha", "lam", "beta", "base_std", "pa_cap", "margin", "removal_shrink", "bias", "ml_strength",
                "cl_penalty")
        kw = {k: getattr(self, k) for k in keys}
        if self._crp:
            return DDMMDPMPotentials(similarity="crp", **kw)
        return DDMMDPMPotentials(similarity=self.similarity, distance=self.distance, n_neighbors=self.n_neighbors,
                                 gamma=self.gamma, floor=self.floor, **kw)

    # ------------------------------------------------------------------ fit
    def _fit(self, problem):
        rng = check_random_state(self.random_state)
        name = type(self).__name__
        n = problem.n_nodes
        pairs, weights = problem.constraints, problem.constraint_weights
        hard = np.isinf(weights)
        check_constraints(problem.nodes, pairs[hard], weights[hard]).raise_if_infeasible()
        n_items, comp = must_link_components(n, pairs[hard & (weights > 0)])
        pot = self._potentials()
        model = pot.model(problem, items=(n_items, comp))
        D = model.Xn.shape[1]
        cap = n_items + 1

        init = None
        if not isinstance(self.init, str):
            labels0 = np.asarray(self.init)
            if labels0.shape != (n,) or not np.issubdtype(labels0.dtype, np.integer) or (labels0 < 0).any():
                raise InvalidParameterError(f"init of {name} must be 'single' or {n} integer labels >= 0, got an "
                                            f"array of shape {labels0.shape}")
            init = np.unique(labels0[np.unique(comp, return_index=True)[1]], return_inverse=True)[1].reshape(-1).astype(np.int64)

        n_iter = int(self.n_iter)
        burn_in = n_iter // 2 if self.burn_in is None else int(self.burn_in)
        kept_idx = np.arange(burn_in, n_iter, int(self.thin))
        C = int(self.n_chains)
        traces = {key: np.zeros((C, n_iter), dtype=np.int64) for key in ("n_clusters", "opened")}
        samples = np.empty((C * len(kept_idx), n_items), dtype=np.int64)
        params = pot._params(self.phantom_rival, self.reuse_singleton_theta)
        log_new = pot._log_new_unit(model.N)
        work = (np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap), np.zeros(cap, np.bool_))
        lg, prior, logw, tnew = np.empty(cap), np.empty(cap), np.empty(cap + 1), np.empty(D)
        bar = progress_bar(self.progress, C * n_iter, f"{name} sweeps", unit="sweep")
        sweep_seconds = 0.0
        row = 0
        for c, chain_rng in enumerate(rng.spawn(C)):
            z = np.zeros(n_items, dtype=np.int64) if init is None else init.copy()
            K0 = int(z.max()) + 1
            theta = np.zeros((cap, D))
            theta[:K0] = float(self.base_std) * chain_rng.standard_normal((K0, D))
            tsq = (theta * theta).sum(1)
            size = np.zeros(cap)
            size[:K0] = np.bincount(z, weights=model.items[6], minlength=K0)
            used = np.flatnonzero(size[:K0] > 0)
            active = np.zeros(cap, dtype=np.int64)
            where = np.zeros(cap, dtype=np.int64)
            active[:len(used)] = used
            where[used] = np.arange(len(used))
            free = np.zeros(cap, dtype=np.int64)
            fr = np.setdiff1d(np.arange(cap), used)[::-1]
            free[:len(fr)] = fr
            book = np.array([len(used), len(fr)], dtype=np.int64)
            zn = z[comp].copy()
            state = (z, zn, theta, tsq, size, book, active, where, free)
            for t in range(n_iter):
                order = chain_rng.permutation(n_items)
                unif = chain_rng.random(n_items)
                noise = chain_rng.standard_normal((n_items, D))
                t0 = time.perf_counter()
                opened = _sweep(model.mode, model.use_max, log_new, model.pri, model.side, model.items, params, state,
                                order, unif, noise, work, lg, prior, logw, tnew)
                sweep_seconds += time.perf_counter() - t0
                traces["n_clusters"][c, t] = book[0]
                traces["opened"][c, t] = opened
                if t >= burn_in and (t - burn_in) % int(self.thin) == 0:
                    samples[row] = z
                    row += 1
                if bar is not None:
                    bar.update(1)
            if c == 0:
                last = _canonical_rows(z[None, :])[0]
                slots = np.empty(int(last.max()) + 1, dtype=np.int64)
                slots[last] = z
                self.theta_ = theta[slots].copy()
                self.last_labels_ = last[comp].astype(np.int64)
        if bar is not None:
            bar.close()
        labels, objective, extra = _summaries(problem, samples, comp, n_items, self.point_estimate)
        for key, value in extra.pop("_attrs").items():
            setattr(self, key, value)
        self.gamma_ = model.gamma
        info = {**{k: v for k, v in traces.items()}, **extra, "n_items": int(n_items),
                "sweep_seconds": sweep_seconds, "n_sweeps": int(C * n_iter)}
        return labels, ClusteringResult(objective=objective, history=traces["n_clusters"][0].tolist(), info=info)


def _summaries(problem, samples, comp, n_items, point_estimate):
    """TVClust's posterior summaries (``point_estimate="last"``: the last sample's
    partition). Returns ``(labels, objective, info)``; ``info["_attrs"]`` holds the
    fitted attributes for the estimator."""
    last = len(samples) - 1 if point_estimate == "last" else None
    labels, loss, attrs = _posterior_summaries(problem, samples, comp, n_items, last)
    return labels, loss, {"n_samples": int(len(samples)), "n_distinct_partitions": int(len(attrs["_posterior"][0])),
                          "_attrs": attrs}


class MMDPM(DDMMDPM):
    """Maximum-margin Dirichlet-process mixture (Chen, Zhang & Xiong 2016): the same
    sampler as :class:`DDMMDPM` with the Chinese-restaurant prior.

    Existing cluster ``k`` gets prior weight ``n_{−i,k}`` and a new cluster ``α``.
    Side information enters as in :class:`DDMMDPM` (must-links add to ``n_{−i,k}``).
    Parameters and attributes are those of :class:`DDMMDPM` without the distance
    ones (``similarity``, ``distance``, ``n_neighbors``, ``gamma``, ``floor``).

    With ``alpha=1`` it equals ``DDMMDPM(similarity="sum", alpha=1)`` on the constant
    distance ``d = γ log N`` (Proposition 1 of the dd-MMDPM paper), and ``MMDPM(alpha=a/N)``
    equals ``DDMMDPM(similarity="sum", alpha=a)`` as ``γ → ∞``.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.3, 0.1], [0.1, 0.3], [4.0, 4.0], [4.2, 3.9], [3.9, 4.2]])
    >>> est = gc.MMDPM(n_iter=60, random_state=0).fit(X)
    >>> est.labels_
    array([0, 0, 0, 1, 1, 1])
    >>> est.n_clusters_posterior_.round(2)     # fraction of samples with 0, 1, 2, ... clusters
    array([0.  , 0.  , 0.57, 0.4 , 0.03])
    """

    _crp = True

    def __init__(self, *, alpha=1.0, lam=0.5, beta=1.0, base_std=1.0, pa_cap=0.01, margin=1.0, removal_shrink=0.01,
                 bias=False, ml_strength=1.0, cl_penalty=1.0, phantom_rival=False, reuse_singleton_theta=False,
                 n_iter=200, burn_in=None, thin=1, n_chains=1, init="single", point_estimate="binder",
                 random_state=None, progress=False):
        self.alpha = alpha
        self.lam = lam
        self.beta = beta
        self.base_std = base_std
        self.pa_cap = pa_cap
        self.margin = margin
        self.removal_shrink = removal_shrink
        self.bias = bias
        self.ml_strength = ml_strength
        self.cl_penalty = cl_penalty
        self.phantom_rival = phantom_rival
        self.reuse_singleton_theta = reuse_singleton_theta
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.init = init
        self.point_estimate = point_estimate
        self.random_state = random_state
        self.progress = progress


@register_method("ddmmdpm", "dd-MMDPM: max-margin Dirichlet-process mixture with a distance-dependent prior "
                            "(g_sum), Gibbs-style sweeps (infers the number of clusters; -k is ignored)")
def _ddmmdpm_factory(n_clusters=2, random_state=None):
    return DDMMDPM(similarity="sum", n_iter=40, random_state=random_state)
