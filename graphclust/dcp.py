"""The Determinantal Clustering Process (DCP): a kernel-based distribution over set
partitions, sampled by Gibbs sampling with hard constraints.

Shah & Ghahramani's DCP scores a partition ``S`` of the nodes by the Gram determinants
of its blocks under a positive-definite kernel ``K``:

.. math::

    p(S \\mid θ, τ) \\propto \\prod_{C \\in S} \\det(K_C)^{-τ}.

A node ``x`` joining cluster ``C`` multiplies the score by ``s_C(x)^{-τ}``, where
``s_C(x) = k(x, x) − k_{x,C} K_C^{-1} k_{C,x}`` is the Gaussian-process posterior
variance of ``x`` given ``C``; a new cluster costs ``k(x, x)^{-τ}``. The sampler keeps
one Cholesky factor per cluster: a node is appended by forward substitution and
deleted by a rank-one update of the trailing block (``O(|C|²)`` each), in numba.
Hard must-links merge nodes into blocks that move as one (the score of a block is
the determinant of its Schur complement), hard cannot-links veto clusters, and
finite-weight constraints add their weights to the log score. The kernel's
lengthscales and ``τ`` are learnt by the exchange algorithm (Murray, Ghahramani &
MacKay 2006) with an auxiliary partition drawn by a few Gibbs sweeps of the
unconstrained DCP.

Read the Notes of :class:`DCP` before using the output: the most probable partition
of a DCP is always the one-cluster partition (Fischer's inequality), so every
summary here comes from posterior samples, never from the mode.
"""

import math
import time
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit
from numba.typed import List

from ._sampling import release_slot, sample_log_weights
from ._utils import check_float, check_int, check_random_state, progress_bar
from .base import (
    ClusteringEstimator,
    ClusteringResult,
    check_is_fitted,
    register_method,
)
from .errors import InvalidFeaturesError, InvalidParameterError, ProblemTooLargeError
from .potentials.base import NodePotentials, check_n_clusters
from .sideinfo import check_constraints, must_link_components
from .tvclust import TVClust, _binder_terms, _canonical_rows, _check_chain_schedule, _posterior_summaries

__all__ = ["DCP", "DCPKernel"]

#: at most this many distinct sampled partitions are candidates for the point estimate
_MAX_CANDIDATES = 200
#: dense kernels are refused above this many nodes (the model needs all of K)
_MAX_NODES = 20_000
#: the number of nearest neighbours whose median distance sets the default lengthscale
_LENGTHSCALE_NEIGHBOUR = 7
#: target acceptance rate of the exchange moves while the steps adapt (burn-in)
_TARGET_ACCEPT = 0.3
_KERNELS = ("auto", "se", "heat", "regularized_laplacian")


# ============================================================================ numba kernels
@njit(cache=True)
def _new_slots(n_slots, cap):
    """Per-cluster Cholesky buffers ``(cap, cap)`` and member lists, ``n_slots`` of each."""
    facs = List()
    mems = List()
    for _ in range(n_slots):
        facs.append(np.zeros((cap, cap)))
        mems.append(np.zeros(cap, dtype=np.int64))
    return facs, mems


@njit(cache=True)
def _ensure(facs, mems, size, k, need):
    """Grow slot ``k`` (by doubling) so that it holds ``need`` nodes."""
    cap = mems[k].shape[0]
    if cap >= need:
        return
    new_cap = max(need, 2 * cap)
    F = np.zeros((new_cap, new_cap))
    M = np.zeros(new_cap, dtype=np.int64)
    n = size[k]
    F[:n, :n] = facs[k][:n, :n]
    M[:n] = mems[k][:n]
    facs[k] = F
    mems[k] = M


@njit(cache=True)
def _append(K, facs, mems, size, pos, zn, k, node, floor):
    """Append ``node`` to cluster slot ``k``. The factor is stored as ``U = Lᵀ``
    (upper, row-major) so that both the forward substitution (column-oriented, an
    axpy per row of ``U``) and the deletion update read memory in order; the new
    column ``L⁻¹k_{C,x}`` is solved in row ``n`` (unused lower part) and copied up.
    Returns ``log s`` (``s`` floored at ``floor``)."""
    n = size[k]
    _ensure(facs, mems, size, k, n + 1)
    U = facs[k]
    M = mems[k]
    Kx = K[node]
    for r in range(n):
        U[n, r] = Kx[M[r]]
    s = Kx[node]
    for c in range(n):
        vc = U[n, c] / U[c, c]
        U[n, c] = vc
        s -= vc * vc
        for r in range(c + 1, n):
            U[n, r] -= U[c, r] * vc
    for c in range(n):
        U[c, n] = U[n, c]
    if s < floor:
        s = floor
    U[n, n] = math.sqrt(s)
    M[n] = node
    pos[node] = n
    zn[node] = k
    size[k] = n + 1
    return math.log(s)


@njit(cache=True)
def _remove_node(facs, mems, size, pos, zn, node, x):
    """Delete ``node`` from its cluster's factor ``U = Lᵀ``: the trailing block gets
    the rank-one update ``U₃₃ᵀU₃₃ + u uᵀ`` by the deleted row ``u`` (Givens-style, one
    contiguous row of ``U`` per step), then rows and columns shift up/left. ``x`` is
    scratch of length >= size."""
    k = zn[node]
    p = pos[node]
    n = size[k]
    U = facs[k]
    M = mems[k]
    for i in range(p + 1, n):
        x[i] = U[p, i]
    for j in range(p + 1, n):
        ujj = U[j, j]
        r = math.sqrt(ujj * ujj + x[j] * x[j])
        c = r / ujj
        sn = x[j] / ujj
        ic = 1.0 / c
        U[j, j] = r
        for i in range(j + 1, n):
            v = (U[j, i] + sn * x[i]) * ic
            U[j, i] = v
            x[i] = c * x[i] - sn * v
    for r in range(p):
        for col in range(p + 1, n):
            U[r, col - 1] = U[r, col]
    for r in range(p + 1, n):
        for col in range(r, n):
            U[r - 1, col - 1] = U[r, col]
        M[r - 1] = M[r]
        pos[M[r - 1]] = r - 1
    size[k] = n - 1
    zn[node] = -1


@njit(cache=True)
def _score_block(K, facs, mems, size, pos, zn, k, inodes, a, b, floor):
    """``log det(K_B − K_{B,C} K_C⁻¹ K_{C,B})`` for the block ``inodes[a:b]`` against
    cluster slot ``k`` (sequential appends, then truncation: the cluster is unchanged)."""
    n0 = size[k]
    total = 0.0
    for t in range(a, b):
        total += _append(K, facs, mems, size, pos, zn, k, inodes[t], floor)
    size[k] = n0
    for t in range(a, b):
        zn[inodes[t]] = -1
    return total


@njit(cache=True)
def _sweep(K, facs, mems, size, pos, zn, zi, iptr, inodes, adj_ptr, adj_idx, adj_w, tau, floor, order, unif,
           active, where, free, book, side, logw, x):
    """One Gibbs sweep over the items (blocks of nodes) in ``order``.

    An item with ``zi[u] = -1`` is not placed yet (it is seated, as in the initial
    sequential pass). The log weight of cluster ``k`` is ``−τ log det S_k(B)`` plus
    the summed weights of ``u``'s constraint partners in ``k`` (``adj``, CSR; ``-inf``:
    hard cannot-link); a new cluster gets ``−τ log det K_B``. ``active[:book[0]]``
    lists the occupied slots (``where`` is its inverse), ``free[:book[1]]`` the free
    ones; the last slot is scratch space for the new-cluster score."""
    scratch = len(facs) - 1
    n_active = book[0]
    n_free = book[1]
    for p in range(order.shape[0]):
        u = order[p]
        a0 = iptr[u]
        a1 = iptr[u + 1]
        k_old = zi[u]
        if k_old >= 0:
            for t in range(a0, a1):
                _remove_node(facs, mems, size, pos, zn, inodes[t], x)
            zi[u] = -1
            if size[k_old] == 0:
                n_active, n_free = release_slot(k_old, active, where, free, n_active, n_free)
        for e in range(adj_ptr[u], adj_ptr[u + 1]):
            kv = zi[adj_idx[e]]
            if kv >= 0:
                side[kv] += adj_w[e]
        top = -np.inf
        for a in range(n_active):
            k = active[a]
            if side[k] == -np.inf:
                logw[a] = -np.inf
                continue
            v = side[k] - tau * _score_block(K, facs, mems, size, pos, zn, k, inodes, a0, a1, floor)
            logw[a] = v
            if v > top:
                top = v
        v = -tau * _score_block(K, facs, mems, size, pos, zn, scratch, inodes, a0, a1, floor)
        logw[n_active] = v
        if v > top:
            top = v
        choice = sample_log_weights(logw, n_active + 1, top, unif[p])
        for e in range(adj_ptr[u], adj_ptr[u + 1]):
            kv = zi[adj_idx[e]]
            if kv >= 0:
                side[kv] = 0.0
        if choice == n_active:
            n_free -= 1
            k = free[n_free]
            active[n_active] = k
            where[k] = n_active
            n_active += 1
        else:
            k = active[choice]
        for t in range(a0, a1):
            _append(K, facs, mems, size, pos, zn, k, inodes[t], floor)
        zi[u] = k
    book[0] = n_active
    book[1] = n_free


@njit(cache=True)
def _rebuild(K, facs, mems, size, pos, zn, zi, iptr, inodes, floor):
    """All factors from scratch for the item slots ``zi`` (drift control)."""
    size[:] = 0
    zn[:] = -1
    for u in range(zi.shape[0]):
        if zi[u] >= 0:
            for t in range(iptr[u], iptr[u + 1]):
                _append(K, facs, mems, size, pos, zn, zi[u], inodes[t], floor)


@njit(cache=True)
def _store_logdet(facs, size, active, n_active):
    """``Λ(S) = Σ_C log det K_C`` from the cached factors."""
    total = 0.0
    for a in range(n_active):
        k = active[a]
        L = facs[k]
        for i in range(size[k]):
            total += 2.0 * math.log(L[i, i])
    return total


@njit(cache=True)
def _partition_logdet(K, labels, floor):
    """``Λ(S) = Σ_C log det K_C`` of node labels ``0..m-1`` (Cholesky per cluster, the
    same floored pivots as the sampler)."""
    n = labels.shape[0]
    order = np.argsort(labels, kind="mergesort")
    buf = np.zeros((n, n))
    total = 0.0
    start = 0
    while start < n:
        stop = start
        while stop < n and labels[order[stop]] == labels[order[start]]:
            stop += 1
        m = stop - start
        for r in range(m):
            i = order[start + r]
            s = K[i, i]
            for q in range(r):
                t = K[order[start + q], i]
                for c in range(q):
                    t -= buf[q, c] * buf[r, c]
                t /= buf[q, q]
                buf[r, q] = t
                s -= t * t
            if s < floor:
                s = floor
            buf[r, r] = math.sqrt(s)
            total += math.log(s)
        start = stop
    return total


@njit(cache=True)
def _node_scores(K, facs, mems, size, pos, zn, node, slots, floor, out):
    """``log s_k(node)`` for each slot in ``slots`` (node not placed)."""
    for j in range(slots.shape[0]):
        k = slots[j]
        out[j] = _append(K, facs, mems, size, pos, zn, k, node, floor)
        size[k] -= 1
        zn[node] = -1


# ============================================================================ chain state
class _Store:
    """One chain's cluster factors over a kernel ``K``: items (blocks of nodes, CSR
    ``iptr``/``inodes``), slots ``0..n_items-1`` for clusters plus one scratch slot."""

    def __init__(self, K, iptr, inodes, floor):
        n = K.shape[0]
        n_items = len(iptr) - 1
        self.K, self.iptr, self.inodes, self.floor = K, iptr, inodes, float(floor)
        self.n_slots = n_items + 1
        self.facs, self.mems = _new_slots(self.n_slots, 4)
        self.size = np.zeros(self.n_slots, dtype=np.int64)
        self.pos = np.zeros(n, dtype=np.int64)
        self.zn = np.full(n, -1, dtype=np.int64)
        self.zi = np.full(n_items, -1, dtype=np.int64)
        self.active = np.zeros(self.n_slots, dtype=np.int64)
        self.where = np.zeros(self.n_slots, dtype=np.int64)
        self.free = np.arange(self.n_slots - 2, -1, -1, dtype=np.int64)  # lowest slot on top
        self.book = np.array([0, self.n_slots - 1], dtype=np.int64)
        self.side = np.zeros(self.n_slots)
        self.logw = np.zeros(self.n_slots + 1)
        self.x = np.zeros(n + 1)

    def set_labels(self, labels):
        """Items' clusters from labels ``0..m-1`` (one per item; -1: not placed)."""
        labels = np.asarray(labels, dtype=np.int64)
        self.zi = labels.copy()
        used = np.unique(labels[labels >= 0])
        self.active[:len(used)] = used
        self.where[used] = np.arange(len(used))
        free = np.setdiff1d(np.arange(self.n_slots - 1), used)[::-1]
        self.free[:len(free)] = free
        self.book[:] = (len(used), len(free))
        self.rebuild()

    def rebuild(self, K=None):
        if K is not None:
            self.K = K
        _rebuild(self.K, self.facs, self.mems, self.size, self.pos, self.zn, self.zi, self.iptr, self.inodes,
                 self.floor)

    def sweep(self, order, unif, adj, tau):
        _sweep(self.K, self.facs, self.mems, self.size, self.pos, self.zn, self.zi, self.iptr, self.inodes,
               adj[0], adj[1], adj[2], float(tau), self.floor, order, unif, self.active, self.where, self.free,
               self.book, self.side, self.logw, self.x)

    def logdet(self):
        return _store_logdet(self.facs, self.size, self.active, int(self.book[0]))

    @property
    def n_clusters(self):
        return int(self.book[0])

    def node_labels(self):
        """Canonical node labels ``0..m-1`` in order of first appearance."""
        return _canonical_rows(self.zn[None, :])[0].astype(np.int64)

    def item_labels(self):
        return _canonical_rows(self.zi[None, :])[0].astype(np.int64)


def _singleton_items(n):
    return np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64)


def _no_adjacency(n_items):
    return np.zeros(n_items + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)


# ============================================================================ kernels
def _sq_dists(A, B):
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    return np.maximum(d, 0.0)


def _se_kernel(Y, ell, jitter):
    Z = Y / ell
    K = np.exp(-0.5 * _sq_dists(Z, Z))
    K[np.diag_indices_from(K)] += jitter  # relative jitter: the diagonal is 1
    return K


def _default_lengthscale(Y):
    """Median distance to the 7th nearest neighbour (the seed spec's ℓ₀)."""
    n = len(Y)
    k = min(_LENGTHSCALE_NEIGHBOUR, n - 1)
    out = np.empty(n)
    step = max(1, 2_000_000 // max(n, 1))
    for s in range(0, n, step):
        D = _sq_dists(Y[s:s + step], Y)
        out[s:s + step] = np.sqrt(np.partition(D, k, axis=1)[:, k])
    ell = float(np.median(out))
    if not ell > 0.0:
        ell = float(np.sqrt(_sq_dists(Y, Y).max())) or 1.0
    return ell


def _graph_kernel(W, kind, scale, jitter):
    """Heat ``expm(−βL)`` or regularised Laplacian ``(I + αL)⁻¹`` of the normalised
    Laplacian of ``W`` (eigendecomposition, O(n³))."""
    n = W.shape[0]
    deg = np.asarray(W.sum(axis=1)).ravel()
    inv = np.zeros(n)
    inv[deg > 0] = 1.0 / np.sqrt(deg[deg > 0])
    A = W.toarray() if sp.issparse(W) else np.asarray(W, dtype=np.float64)
    Lap = np.eye(n) - inv[:, None] * A * inv[None, :]
    Lap[deg == 0, deg == 0] = 0.0
    lam, V = np.linalg.eigh(0.5 * (Lap + Lap.T))
    lam = np.clip(lam, 0.0, None)
    f = np.exp(-scale * lam) if kind == "heat" else 1.0 / (1.0 + scale * lam)
    K = (V * f) @ V.T
    K = 0.5 * (K + K.T)
    K[np.diag_indices_from(K)] += jitter * float(np.mean(np.diag(K)))
    return K


def _check_precomputed(K, n, jitter):
    K = np.asarray(K, dtype=np.float64)
    if K.shape != (n, n):
        raise InvalidParameterError(
            f"a precomputed kernel must have shape (n_nodes, n_nodes) = ({n}, {n}), got {K.shape}"
        )
    if not np.isfinite(K).all():
        i, j = (int(v) for v in np.argwhere(~np.isfinite(K))[0])
        raise InvalidParameterError(f"the precomputed kernel has {K[i, j]} at ({i}, {j}); entries must be finite")
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.abs(K).max()))):
        i, j = (int(v) for v in np.unravel_index(np.argmax(np.abs(K - K.T)), K.shape))
        raise InvalidParameterError(
            f"the precomputed kernel is not symmetric: K[{i}, {j}] = {K[i, j]} but K[{j}, {i}] = {K[j, i]}"
        )
    d = np.diag(K)
    if (d <= 0).any():
        i = int(np.flatnonzero(d <= 0)[0])
        raise InvalidParameterError(
            f"the precomputed kernel has K[{i}, {i}] = {d[i]}; a positive-definite kernel has a positive diagonal"
        )
    lam_min = float(np.linalg.eigvalsh(0.5 * (K + K.T))[0])
    scale = float(d.mean())
    if lam_min < -1e-8 * scale:
        raise InvalidParameterError(
            f"the precomputed kernel is not positive semi-definite (smallest eigenvalue {lam_min:.3g}, mean diagonal "
            f"{scale:.3g}); the DCP needs det(K_C) > 0 for every cluster. Use a kernel matrix (not a similarity or "
            "adjacency matrix), or a graph kernel: kernel='heat' or 'regularized_laplacian'"
        )
    K = 0.5 * (K + K.T)
    K[np.diag_indices_from(K)] += jitter * scale
    return K


class _KernelSpec:
    """What the kernel of a problem is made of; ``matrix(ell)`` builds it."""

    def __init__(self, problem, kernel, graph_scale, standardize, jitter, who):
        self.kind = kernel if isinstance(kernel, str) else "precomputed"
        n = problem.n_nodes
        if n > _MAX_NODES:
            raise ProblemTooLargeError(
                f"{who} needs a dense {n} x {n} kernel ({8 * n * n / 1e9:.1f} GB); subsample to at most "
                f"{_MAX_NODES} nodes"
            )
        self.jitter = float(jitter)
        self.Y = None
        self.mean = self.sd = None
        if self.kind == "auto":
            self.kind = "se" if problem.X is not None else "heat"
        if self.kind == "se":
            if problem.X is None:
                raise InvalidFeaturesError(
                    f"{who} with kernel='se' needs node features: give nodes a 'features' attribute or fit on an "
                    "array X, or use a graph kernel (kernel='heat' or 'regularized_laplacian')"
                )
            if (problem.counts > 1).any():
                warnings.warn(
                    f"{int((problem.counts > 1).sum())} node(s) stand for several points (counts > 1); the DCP "
                    "scores each as one point at the node mean. Fit on the original problem: hard must-links are "
                    "moved as blocks exactly", UserWarning, stacklevel=4,
                )
            Y = np.asarray(problem.feature_means, dtype=np.float64)
            if not np.isfinite(Y).all():
                i = int(np.argwhere(~np.isfinite(Y))[0][0])
                raise InvalidFeaturesError(f"node {problem.nodes[i]!r} has non-finite features; {who} needs finite "
                                           "numbers", node=problem.nodes[i])
            self.mean = Y.mean(0) if standardize else np.zeros(Y.shape[1])
            sd = Y.std(0) if standardize else np.ones(Y.shape[1])
            self.sd = np.where(sd > 0, sd, 1.0)
            self.Y = (Y - self.mean) / self.sd
            self.K_fixed = None
        elif self.kind == "precomputed":
            self.K_fixed = _check_precomputed(kernel, n, self.jitter)
        else:
            self.K_fixed = _graph_kernel(problem.W, self.kind, float(graph_scale), self.jitter)
        self.floor = self.jitter * (1.0 if self.K_fixed is None else float(np.mean(np.diag(self.K_fixed))))

    @property
    def learnable(self):
        return self.kind == "se"

    def matrix(self, ell):
        return _se_kernel(self.Y, ell, self.jitter) if self.K_fixed is None else self.K_fixed

    def transform(self, X):
        return (np.asarray(X, dtype=np.float64) - self.mean) / self.sd


def _check_kernel_param(kernel, who):
    if isinstance(kernel, str):
        if kernel not in _KERNELS:
            raise InvalidParameterError(
                f"kernel of {who} must be one of {', '.join(map(repr, _KERNELS))} or a precomputed (n_nodes, "
                f"n_nodes) kernel matrix, got {kernel!r}"
            )
        return
    arr = np.asarray(kernel)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or not np.issubdtype(arr.dtype, np.number):
        raise InvalidParameterError(
            f"kernel of {who} must be a kernel name or a square numeric matrix, got {type(kernel).__name__} of "
            f"shape {getattr(arr, 'shape', None)}"
        )


def _check_lengthscale(value, who):
    if value is None:
        return None
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=np.float64)) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1 or arr.size == 0:
        raise InvalidParameterError(f"lengthscale of {who} must be None, a number > 0 or a vector of them, "
                                    f"got {value!r}")
    if not np.isfinite(arr).all() or (arr <= 0).any():
        raise InvalidParameterError(
            f"lengthscale of {who} must be > 0 and finite (a squared-exponential kernel's bandwidth), got {value!r}"
        )
    return arr


# ============================================================================ provider
class DCPKernel(NodePotentials):
    """DCP node potentials: the cost of node ``i`` in cluster ``C`` is
    ``τ log s_C(i)``, the log Gaussian-process posterior variance of ``i`` given the
    cluster's other members, under a squared-exponential or graph kernel.

    In :class:`~graphclust.HMRF` it gives the batch unary of the DCP given the current
    clusters (the conditional the DCP's Gibbs sampler uses, in energy form, with a
    node left out of its own cluster), so ICM or BP with a fixed number of clusters
    run on it; the M-step makes the E-step's clusters the new ones. It also
    implements the incremental interface (:meth:`start`, :meth:`remove`,
    :meth:`add`, :meth:`scores`, new cluster last) on the numba Cholesky caches of
    :class:`DCP`.

    Parameters
    ----------
    n_clusters : int, default=2
    tau : float, default=1.0
        Temperature ``τ > 0``.
    lengthscale : float, array of shape (n_features,) or None, default=None
        Squared-exponential lengthscale(s) on the standardised features; ``None``:
        the median distance to the 7th nearest neighbour.
    kernel : {"auto", "se", "heat", "regularized_laplacian"} or ndarray, default="auto"
        As for :class:`DCP`.
    graph_scale : float, default=1.0
        ``β`` of the heat kernel, ``α`` of the regularised Laplacian.
    standardize : bool, default=True
    jitter : float, default=1e-6
        Relative diagonal jitter (times the mean diagonal of ``K``).

    Notes
    -----
    With a free number of clusters, minimising these costs collapses clusters (the
    DCP's mode is the one-cluster partition, see :class:`DCP`); with a fixed number of
    clusters and ICM it behaves like a kernel k-means whose cluster cost is a
    log-determinant. The batch unary costs ``O(Σ_C |C|² n)``.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.3, 0.0], [0.0, 0.3], [4.0, 4.0], [4.3, 4.0], [4.0, 4.3]])
    >>> P = gc.Problem.from_array(X)
    >>> pot = gc.DCPKernel(2, lengthscale=1.0)
    >>> pot.update(P, np.array([0, 0, 0, 1, 1, 1]))
    >>> U = pot.unary(P)       # costs: low in the own cluster, ~0 (= a new cluster) in the other
    >>> U.argmin(axis=1)
    array([0, 0, 0, 1, 1, 1])
    """

    requires_features = False

    def __init__(self, n_clusters=2, *, tau=1.0, lengthscale=None, kernel="auto", graph_scale=1.0, standardize=True,
                 jitter=1e-6):
        self.n_clusters_param = check_n_clusters(n_clusters, "DCPKernel")
        self.tau = check_float(tau, "tau of DCPKernel", low=0.0, low_open=True)
        self.lengthscale = lengthscale
        _check_lengthscale(lengthscale, "DCPKernel")
        _check_kernel_param(kernel, "DCPKernel")
        self.kernel = kernel
        self.graph_scale = check_float(graph_scale, "graph_scale of DCPKernel", low=0.0, low_open=True)
        self.standardize = bool(standardize)
        self.jitter = check_float(jitter, "jitter of DCPKernel", low=0.0, low_open=True)
        self._problem = None
        self._members = None
        self._store = None

    def get_params(self):
        return {"n_clusters": self.n_clusters_param, "tau": self.tau, "lengthscale": self.lengthscale,
                "kernel": self.kernel, "graph_scale": self.graph_scale, "standardize": self.standardize,
                "jitter": self.jitter}

    def clone(self, **changes):
        """An unfitted copy with some parameters changed."""
        return type(self)(**{**self.get_params(), **changes})

    def __repr__(self):
        return f"DCPKernel({self.n_clusters_param}, tau={self.tau}, kernel={self.kernel!r})"

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_store"] = None  # numba lists are rebuilt on demand
        return state

    @property
    def n_clusters(self):
        if self._store is not None:
            return self._n_open
        return self.n_clusters_param if self._members is None else len(self._members)

    # ------------------------------------------------------------------ kernel
    def _setup(self, problem):
        if self._problem is not problem:
            spec = _KernelSpec(problem, self.kernel, self.graph_scale, self.standardize, self.jitter, "DCPKernel")
            ell = self.lengthscale
            if spec.learnable:
                ell = _check_lengthscale(ell, "DCPKernel")
                ell = np.array([_default_lengthscale(spec.Y)]) if ell is None else ell
                if ell.size not in (1, spec.Y.shape[1]):
                    raise InvalidParameterError(
                        f"lengthscale of DCPKernel has {ell.size} entries but the data have {spec.Y.shape[1]} "
                        "features; give one value or one per feature"
                    )
            self._spec, self._K = spec, spec.matrix(ell)
            self._problem = problem
            self._ell = ell
        return self._K

    def kernel_matrix(self, problem):
        """The ``(n_nodes, n_nodes)`` kernel (jitter included) this provider scores with."""
        return self._setup(problem).copy()

    def points(self, problem):
        """Node points whose squared distances are kernel distances (for the HMRF's
        seeding): scaled standardised features for the SE kernel, the kernel's
        feature map otherwise. Returns ``(Y, counts)``."""
        K = self._setup(problem)
        if self._spec.kind == "se":
            return self._spec.Y / self._ell, problem.counts
        lam, V = np.linalg.eigh(K)
        return V * np.sqrt(np.clip(lam, 0.0, None)), problem.counts

    # ------------------------------------------------------------------ batch
    def initialize(self, problem, seeds, rng):
        """Clusters of one node each: the node nearest to each seed point (in the space
        of :meth:`points`); no node is a member yet (no leave-one-out)."""
        Y, _ = self.points(problem)
        seeds = np.asarray(seeds, dtype=np.float64)
        if seeds.ndim != 2 or seeds.shape[1] != Y.shape[1] or len(seeds) < 1:
            raise InvalidParameterError(f"expected seeds of shape (n_clusters, {Y.shape[1]}), got {seeds.shape}")
        nearest = _sq_dists(seeds, Y).argmin(axis=1)
        self._members = [np.array([i], dtype=np.int64) for i in nearest]
        self._loo = False
        self._store = None

    def update(self, problem, labels, **penalty_terms):
        """M-step: the clusters become the members given by ``labels`` (the constraint
        terms of :class:`~graphclust.HMRF` do not enter the DCP)."""
        self._setup(problem)
        labels = np.asarray(labels, dtype=np.int64)
        if labels.shape != (problem.n_nodes,) or (labels.size and labels.min() < 0):
            raise InvalidParameterError(f"expected {problem.n_nodes} labels >= 0, got shape {labels.shape}")
        K = max(self.n_clusters_param, int(labels.max()) + 1 if labels.size else 0)
        order = np.argsort(labels, kind="stable")
        bounds = np.searchsorted(labels[order], np.arange(K + 1))
        self._members = [order[bounds[k]:bounds[k + 1]] for k in range(K)]
        self._loo = True
        self._store = None

    def unary(self, problem):
        """Costs ``(n_nodes, n_clusters)``: ``τ log s_C(i)``, node ``i`` left out of its
        own cluster; an empty cluster costs ``τ log k(i, i)`` (a new cluster)."""
        from scipy.linalg import solve_triangular

        if self._members is None:
            raise InvalidParameterError("DCPKernel.initialize(...) or update(...) must be called first")
        K = self._setup(problem)
        diag = np.diag(K)
        floor = self._spec.floor
        out = np.empty((problem.n_nodes, len(self._members)))
        for c, idx in enumerate(self._members):
            if len(idx) == 0:
                out[:, c] = np.log(diag)
                continue
            Kc = K[np.ix_(idx, idx)]
            L = np.linalg.cholesky(Kc)
            V = solve_triangular(L, K[idx, :], lower=True, check_finite=False)
            s = diag - (V * V).sum(0)
            if self._loo:
                Linv = solve_triangular(L, np.eye(len(idx)), lower=True, check_finite=False)
                s[idx] = 1.0 / (Linv * Linv).sum(0)
            out[:, c] = np.log(np.maximum(s, floor))
        return self.tau * out

    def pair_distortion(self, problem, pairs):
        """Half the squared kernel distance ``(k_ii + k_jj − 2 k_ij) / 2`` of each pair."""
        K = self._setup(problem)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        a, b = pairs[:, 0], pairs[:, 1]
        return np.maximum(0.5 * (K[a, a] + K[b, b]) - K[a, b], 0.0)

    def max_distortion(self, problem, rng=None):
        K = self._setup(problem)
        d = np.diag(K)
        D = 0.5 * (d[:, None] + d[None, :]) - K
        i, j = np.unravel_index(int(np.argmax(D)), D.shape)
        return float(max(D[i, j], 0.0)), (int(i), int(j))

    # ------------------------------------------------------------------ incremental
    def start(self, problem, labels):
        """Cluster factors for ``labels`` (ints ``>= 0``, one per node; incremental path)."""
        K = self._setup(problem)
        labels = np.asarray(labels, dtype=np.int64)
        if labels.shape != (problem.n_nodes,) or (labels.size and labels.min() < 0):
            raise InvalidParameterError(f"expected {problem.n_nodes} labels >= 0, got shape {labels.shape}")
        iptr, inodes = _singleton_items(problem.n_nodes)
        st = _Store(K, iptr, inodes, self._spec.floor)
        # cluster k lives in slot k; clusters keep their numbers when they empty
        st.set_labels(labels)
        self._store = st
        self._n_open = int(labels.max()) + 1 if labels.size else 0

    def _st(self):
        if self._store is None:
            raise InvalidParameterError("DCPKernel.start(problem, labels) must be called first")
        return self._store

    def _check_node(self, i):
        n = self._st().zn.shape[0]
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise InvalidParameterError(f"node index must be an int in [0, {n}), got {i!r}")
        return int(i)

    def remove(self, i):
        """Take node index ``i`` out of its cluster (rank-one factor update)."""
        st = self._st()
        i = self._check_node(i)
        if st.zn[i] < 0:
            raise InvalidParameterError(f"node index {i} is not in a cluster; add it before removing it")
        _remove_node(st.facs, st.mems, st.size, st.pos, st.zn, i, st.x)
        st.zi[i] = -1

    def add(self, i, k):
        """Put node index ``i`` into cluster ``k``; ``k == n_clusters`` opens a new one."""
        st = self._st()
        i = self._check_node(i)
        if st.zn[i] >= 0:
            raise InvalidParameterError(f"node index {i} is already in cluster {st.zn[i]}; remove it first")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= self._n_open:
            raise InvalidParameterError(
                f"cluster must be an int in [0, {self._n_open}] ({self._n_open} opens a new cluster), got {k!r}")
        if k == self._n_open:
            self._n_open += 1
        _append(st.K, st.facs, st.mems, st.size, st.pos, st.zn, int(k), i, st.floor)
        st.zi[i] = int(k)

    def scores(self, i):
        """Costs ``(n_clusters + 1,)``: ``τ log s_k(i)`` for each cluster (``i`` left out
        of its own) and ``τ log k(i, i)`` for a new cluster (last)."""
        st = self._st()
        i = self._check_node(i)
        own = int(st.zn[i])
        if own >= 0:
            self.remove(i)
        slots = np.arange(self._n_open + 1, dtype=np.int64)
        slots[-1] = st.n_slots - 1  # the scratch slot is always empty
        out = np.empty(len(slots))
        _node_scores(st.K, st.facs, st.mems, st.size, st.pos, st.zn, i, slots, st.floor, out)
        if own >= 0:
            self.add(i, own)
        return self.tau * out

    def logdet(self):
        """``Σ_C log det K_C`` of the current clusters (incremental path)."""
        st = self._st()
        used = np.flatnonzero(st.size[:-1] > 0)
        return float(_store_logdet(st.facs, st.size, used.astype(np.int64), len(used)))


# ============================================================================ estimator
class DCP(ClusteringEstimator):
    """Determinantal Clustering Process: a nonparametric, kernel-based distribution over
    partitions, sampled by Gibbs sampling with hard constraints; the number of clusters
    is inferred.

    The partition ``S`` has probability ``∝ Π_C det(K_C)^(−τ)`` under a
    squared-exponential kernel on the node features (ARD or one shared lengthscale),
    or a graph kernel (heat or regularised Laplacian of the data graph) when nodes
    have no features. Hard must-links (labels give them: same label) merge nodes into
    blocks that move together; hard cannot-links (different labels) veto clusters;
    constraints of finite weight ``w`` add ``w`` to the log weight of a cluster for
    each partner in it. The lengthscales and ``τ`` are learnt by the exchange
    algorithm. The answer is the sampled partition with the least posterior expected
    Binder loss; the samples, the co-clustering probabilities, the posterior of the
    number of clusters and test-point predictions are available.

    Parameters
    ----------
    tau : float, default=1.0
        Temperature ``τ > 0`` (the start value when ``learn_tau=True``): large values
        sharpen the distribution, ``τ → 0`` makes it uniform over partitions.
    lengthscale : float, array-like of shape (n_features,) or None, default=None
        Squared-exponential lengthscale(s) on the (standardised) features, the kernel
        being ``exp(−½ Σ_d (x_d − x'_d)² / ℓ_d²)``; the start value when learnt and the
        centre of its prior. ``None``: the median distance to the 7th nearest
        neighbour (the seed spec's ℓ₀). A vector gives ARD.
    kernel : {"auto", "se", "heat", "regularized_laplacian"} or ndarray, default="auto"
        ``"se"``: squared exponential on node features; ``"heat"``:
        ``expm(−β L)``; ``"regularized_laplacian"``: ``(I + α L)⁻¹``, with ``L`` the
        normalised Laplacian of the data graph and ``β``/``α`` = ``graph_scale``;
        ``"auto"``: ``"se"`` when nodes have features, else ``"heat"``. An
        ``(n_nodes, n_nodes)`` array is a precomputed kernel (checked positive
        semi-definite). Only ``"se"`` has learnable lengthscales.
    ard : bool, default=False
        One lengthscale per feature (when ``lengthscale`` is a scalar or ``None`` it is
        the start value of each).
    graph_scale : float, default=1.0
    standardize : bool, default=True
        Centre and scale features to unit variance before the kernel.
    jitter : float, default=1e-6
        Relative diagonal jitter ``ε·mean(diag K)``; it keeps every ``K_C`` positive
        definite (duplicates, long lengthscales) and floors ``s_C(x) ≥ ε·mean(diag K)``.
    learn_tau, learn_lengthscale : bool, default=True
        Exchange-algorithm moves (log-space Gaussian random walks, alternating between
        the two when both are learnt; steps adapt towards 30 % acceptance during the
        burn-in).
    tau_prior : tuple of two floats, default=(0.0, 1.0)
        ``log τ ~ N(mean, sd²)``.
    lengthscale_prior_sd : float, default=1.0
        ``log ℓ_d ~ N(log ℓ₀_d, sd²)`` with ``ℓ₀`` the start value.
    n_aux_sweeps : int, default=5
        Gibbs sweeps of the auxiliary chain in each exchange move (unconstrained DCP
        over all nodes at the proposed parameters, started at the current partition).
    exchange_every : int, default=1
        One exchange move after every this many sweeps.
    n_iter : int, default=200
        Gibbs sweeps per chain after the sequential start.
    burn_in : int or None, default=None
        ``None``: ``n_iter // 2``.
    thin : int, default=1
    n_chains : int, default=1
        Independent chains (``Generator.spawn``), samples pooled.
    refresh_every : int, default=10
        Rebuild every Cholesky factor from scratch after this many sweeps.
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool, default=False

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
        Binder point estimate (Dahl's least-squares rule over the sampled partitions).
    nodes_, partition_, n_clusters_
    samples_ : ndarray of shape (n_samples, n_nodes)
        Kept partitions (labels in order of first appearance).
    coclustering_ : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        Posterior co-clustering probability of every constrained pair and data-graph
        edge; :meth:`coclustering` gives other pairs or the dense matrix.
    n_clusters_posterior_ : ndarray
        ``[k]`` = posterior probability of ``k`` clusters.
    tau_, lengthscale_ : float, ndarray or None
        Posterior means over the kept sweeps (``lengthscale_`` is None for fixed
        kernels).
    kernel_ : str
        The kernel used (``"auto"`` resolved).
    result_ : ClusteringResult
        ``objective``: expected Binder loss of ``labels_``; ``history``: ``log f(S)
        = −τ Σ_C log det K_C`` after every sweep of the first chain; ``info``: traces
        ``"n_clusters"``, ``"tau"``, ``"log_score"`` (``(n_chains, n_iter)``),
        ``"lengthscale"`` (``(n_chains, n_iter, n_ell)``), ``"accept_tau"``,
        ``"accept_lengthscale"`` (acceptance rates), ``"sweep_seconds"``,
        ``"n_items"`` (blocks after merging hard must-links) and more.

    Raises
    ------
    InvalidParameterError
        ``tau`` or ``lengthscale`` ``<= 0``, a precomputed kernel that is not positive
        semi-definite, every node labelled (the hard constraints fix the partition),
        a single node.
    InfeasibleConstraintsError
        Contradictory hard constraints.

    Notes
    -----
    **The mode is degenerate.** For any disjoint ``A, B``,
    ``det K_{A∪B} ≤ det K_A det K_B`` (Fischer), so merging clusters never lowers the
    score: the most probable partition is one cluster (with ``L`` labels, ``L``
    clusters). Finer partitions carry the mass because there are many of them. Use
    the samples; never a MAP or ICM optimum of the DCP with a free number of clusters.

    **Gibbs step.** A block ``B`` (a node, or nodes joined by hard must-links) joins
    cluster ``C`` with weight ``det(K_B − K_{B,C}K_C⁻¹K_{C,B})^(−τ)`` (``s_C(x)^(−τ)``
    for one node) and opens a new cluster with weight ``det(K_B)^(−τ)``. The factors
    are cached per cluster (append by forward substitution, delete by a rank-one update
    of the trailing block) and rebuilt every ``refresh_every`` sweeps. A sweep costs
    ``O(n Σ_C |C|²)``: 50–70 ms for 500 points in a few dozen clusters, 0.4–0.7 s
    when all 500 share one cluster (``docs/benchmarks/dcp.md``).

    **Exchange algorithm.** A proposal ``ψ' = (ℓ', τ')`` is accepted with probability
    ``min(1, p(ψ') f(S; ψ') f(S'; ψ) / (p(ψ) f(S; ψ) f(S'; ψ')))``, where ``S'`` is
    drawn from the *unconstrained* DCP at ``ψ'`` over all nodes; here by
    ``n_aux_sweeps`` Gibbs sweeps started at ``S`` (an approximation: the exact
    algorithm needs an exact draw). The paper's Eq. 13 inverts the proposal ratio and
    drops the prior; this is the standard form.

    **Constraints.** Nodes labelled alike are merged; nodes labelled differently are
    cannot-linked, so anchored clusters never merge; unlabelled nodes may open
    clusters of their own. Constraints between blocks that are not cannot-linked leave
    the block's membership free, and it is sampled.

    References
    ----------
    A. Shah, Z. Ghahramani, *Determinantal clustering process – a nonparametric
    Bayesian approach to kernel based semi-supervised clustering*, UAI 2013.
    I. Murray, Z. Ghahramani, D. MacKay, *MCMC for doubly-intractable distributions*,
    UAI 2006.
    D. B. Dahl, *Model-based clustering for expression data via a Dirichlet process
    mixture model*, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.3, 0.1], [0.1, 0.3], [4.0, 4.0], [4.2, 3.9], [3.9, 4.2]])
    >>> S = gc.SideInfo.from_labels({0: "a", 3: "b"})
    >>> est = gc.DCP(tau=2.0, lengthscale=1.0, n_iter=60, random_state=0).fit(X, S)
    >>> est.labels_
    array([0, 0, 0, 1, 1, 1])
    >>> float(est.n_clusters_posterior_[2]) > 0.5
    True
    """

    def __init__(self, tau=1.0, *, lengthscale=None, kernel="auto", ard=False, graph_scale=1.0, standardize=True,
                 jitter=1e-6, learn_tau=True, learn_lengthscale=True, tau_prior=(0.0, 1.0),
                 lengthscale_prior_sd=1.0, n_aux_sweeps=5, exchange_every=1, n_iter=200, burn_in=None, thin=1,
                 n_chains=1, refresh_every=10, random_state=None, progress=False):
        self.tau = tau
        self.lengthscale = lengthscale
        self.kernel = kernel
        self.ard = ard
        self.graph_scale = graph_scale
        self.standardize = standardize
        self.jitter = jitter
        self.learn_tau = learn_tau
        self.learn_lengthscale = learn_lengthscale
        self.tau_prior = tau_prior
        self.lengthscale_prior_sd = lengthscale_prior_sd
        self.n_aux_sweeps = n_aux_sweeps
        self.exchange_every = exchange_every
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.refresh_every = refresh_every
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------------ validation
    def _validate_params(self):
        name = type(self).__name__
        check_float(self.tau, f"tau of {name}", low=0.0, low_open=True)
        _check_lengthscale(self.lengthscale, name)
        _check_kernel_param(self.kernel, name)
        check_float(self.graph_scale, f"graph_scale of {name}", low=0.0, low_open=True)
        check_float(self.jitter, f"jitter of {name}", low=0.0, low_open=True)
        for pname in ("ard", "standardize", "learn_tau", "learn_lengthscale", "progress"):
            if not isinstance(getattr(self, pname), (bool, np.bool_)):
                raise InvalidParameterError(f"{pname} of {name} must be True or False, got {getattr(self, pname)!r}")
        try:
            m, s = self.tau_prior
        except (TypeError, ValueError):
            raise InvalidParameterError(f"tau_prior of {name} must be a pair (mean, sd) of log tau, "
                                        f"got {self.tau_prior!r}") from None
        check_float(m, f"tau_prior[0] of {name}")
        check_float(s, f"tau_prior[1] of {name}", low=0.0, low_open=True)
        check_float(self.lengthscale_prior_sd, f"lengthscale_prior_sd of {name}", low=0.0, low_open=True)
        check_int(self.n_aux_sweeps, f"n_aux_sweeps of {name}", low=1)
        check_int(self.exchange_every, f"exchange_every of {name}", low=1)
        _check_chain_schedule(self, name)
        check_int(self.refresh_every, f"refresh_every of {name}", low=1)

    # ------------------------------------------------------------------ fit
    def _fit(self, problem):
        rng = check_random_state(self.random_state)
        n = problem.n_nodes
        if n < 2:
            raise InvalidParameterError(
                f"DCP needs at least 2 nodes to cluster, got {n}; a single node is its own cluster"
            )
        spec = _KernelSpec(problem, self.kernel, self.graph_scale, self.standardize, self.jitter, "DCP")
        learn_ell = bool(self.learn_lengthscale) and spec.learnable
        ell0 = None
        if spec.learnable:
            d = spec.Y.shape[1]
            ell0 = _check_lengthscale(self.lengthscale, "DCP")
            ell0 = np.array([_default_lengthscale(spec.Y)]) if ell0 is None else ell0
            if ell0.size not in (1, d):
                raise InvalidParameterError(
                    f"lengthscale of DCP has {ell0.size} entries but the data have {d} features; give one value "
                    "or one per feature"
                )
            if self.ard and ell0.size == 1:
                ell0 = np.full(d, float(ell0[0]))

        # hard constraints: must-link blocks (items), cannot-link vetoes
        pairs, weights = problem.constraints, problem.constraint_weights
        hard = np.isinf(weights)
        check_constraints(problem.nodes, pairs[hard], weights[hard]).raise_if_infeasible()
        n_items, comp = must_link_components(n, pairs[hard & (weights > 0)])
        inodes = np.argsort(comp, kind="stable").astype(np.int64)
        iptr = np.zeros(n_items + 1, dtype=np.int64)
        np.cumsum(np.bincount(comp, minlength=n_items), out=iptr[1:])
        ia, ib = comp[pairs[:, 0]], comp[pairs[:, 1]]
        use = (ia != ib) & ~(hard & (weights > 0))
        src = np.concatenate([ia[use], ib[use]])
        dst = np.concatenate([ib[use], ia[use]])
        wts = np.concatenate([weights[use], weights[use]]).astype(np.float64)
        order_e = np.argsort(src, kind="stable")
        adj_ptr = np.zeros(n_items + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=n_items), out=adj_ptr[1:])
        adj = (adj_ptr, dst[order_e].astype(np.int64), wts[order_e])
        hard_cl = (ia != ib) & hard & (weights < 0)
        n_hard_cl = len(np.unique(np.minimum(ia[hard_cl], ib[hard_cl]) * n_items + np.maximum(ia[hard_cl],
                                                                                              ib[hard_cl])))
        if n_items == 1 or n_hard_cl == n_items * (n_items - 1) // 2:
            raise InvalidParameterError(
                f"every node is labelled: the hard constraints fix the partition ({n_items} group(s) of nodes, "
                "all cannot-linked pairwise or one group), so the DCP has nothing to sample; leave some nodes "
                "unlabelled (without hard constraints)"
            )
        is_anchor = np.diff(iptr) > 1
        is_anchor[ia[hard_cl]] = True
        is_anchor[ib[hard_cl]] = True
        anchors, others = np.flatnonzero(is_anchor), np.flatnonzero(~is_anchor)
        node_iptr, node_inodes = _singleton_items(n)
        no_adj = _no_adjacency(n)

        n_iter = int(self.n_iter)
        burn_in = n_iter // 2 if self.burn_in is None else int(self.burn_in)
        thin = int(self.thin)
        kept_idx = np.arange(burn_in, n_iter, thin)
        C = int(self.n_chains)
        n_ell = 0 if ell0 is None else ell0.size
        traces = {key: np.zeros((C, n_iter)) for key in ("n_clusters", "tau", "log_score")}
        traces["lengthscale"] = np.zeros((C, n_iter, n_ell))
        samples = np.empty((C * len(kept_idx), n_items), dtype=np.int64)
        kept_tau = np.empty(C * len(kept_idx))
        kept_ell = np.empty((C * len(kept_idx), n_ell))
        mu_tau, sd_tau = (float(v) for v in self.tau_prior)
        sd_ell = float(self.lengthscale_prior_sd)
        moves = []
        if self.learn_tau:
            moves.append("tau")
        if learn_ell:
            moves.append("lengthscale")
        accepts = {m: [0, 0] for m in moves}
        bar = progress_bar(self.progress, C * n_iter, "DCP Gibbs", unit="sweep")
        sweep_seconds = exchange_seconds = 0.0
        floor = spec.floor
        row = 0
        for c, crng in enumerate(rng.spawn(C)):
            tau = float(self.tau)
            ell = None if ell0 is None else ell0.copy()
            K = spec.matrix(ell)
            store = _Store(K, iptr, inodes, floor)
            steps = {"tau": 0.5, "lengthscale": 0.3 / math.sqrt(max(n_ell, 1))}
            # anchors first (labelled groups: blocks and cannot-linked items), then the rest
            start = np.concatenate([crng.permutation(anchors), crng.permutation(others)])
            store.sweep(start, crng.random(n_items), adj, tau)
            n_exchange = 0
            for t in range(n_iter):
                t0 = time.perf_counter()
                store.sweep(crng.permutation(n_items), crng.random(n_items), adj, tau)
                if (t + 1) % int(self.refresh_every) == 0:
                    store.rebuild()
                sweep_seconds += time.perf_counter() - t0
                if moves and (t + 1) % int(self.exchange_every) == 0:
                    t0 = time.perf_counter()
                    move = moves[n_exchange % len(moves)]
                    n_exchange += 1
                    zn = store.node_labels()
                    lam_S = store.logdet()
                    if move == "tau":
                        tau_new, ell_new, K_new = tau * math.exp(steps["tau"] * crng.normal()), ell, K
                        log_prior = (_log_normal(math.log(tau_new), mu_tau, sd_tau)
                                     - _log_normal(math.log(tau), mu_tau, sd_tau))
                    else:
                        tau_new = tau
                        ell_new = ell * np.exp(steps["lengthscale"] * crng.normal(size=n_ell))
                        K_new = spec.matrix(ell_new)
                        log_prior = float(_log_normal(np.log(ell_new), np.log(ell0), sd_ell).sum()
                                          - _log_normal(np.log(ell), np.log(ell0), sd_ell).sum())
                    aux = _Store(K_new, node_iptr, node_inodes, floor)
                    aux.set_labels(zn)
                    for _ in range(int(self.n_aux_sweeps)):
                        aux.sweep(crng.permutation(n), crng.random(n), no_adj, tau_new)
                    lam_Sp_new = aux.logdet()
                    lam_S_new = lam_S if K_new is K else _partition_logdet(K_new, zn, floor)
                    lam_Sp_old = _partition_logdet(K, aux.zn.copy(), floor)
                    log_a = (-tau_new * lam_S_new + tau * lam_S - tau * lam_Sp_old + tau_new * lam_Sp_new
                             + log_prior)
                    ok = math.log(crng.random()) < log_a
                    accepts[move][0] += int(ok)
                    accepts[move][1] += 1
                    if ok:
                        if K_new is not K:
                            K = K_new
                            store.rebuild(K)
                        tau, ell = tau_new, ell_new
                    if t < burn_in:  # adapt the step towards the target acceptance rate
                        steps[move] *= math.exp((float(ok) - _TARGET_ACCEPT) / math.sqrt(n_exchange))
                    exchange_seconds += time.perf_counter() - t0
                lam = store.logdet()
                traces["n_clusters"][c, t] = store.n_clusters
                traces["tau"][c, t] = tau
                traces["log_score"][c, t] = -tau * lam
                if n_ell:
                    traces["lengthscale"][c, t] = ell
                if t >= burn_in and (t - burn_in) % thin == 0:
                    samples[row] = store.zi
                    kept_tau[row] = tau
                    if n_ell:
                        kept_ell[row] = ell
                    row += 1
                if bar is not None:
                    bar.update(1)
        if bar is not None:
            bar.close()

        # ---------------------------------------------------------------- summaries
        labels, loss, attrs = _posterior_summaries(problem, samples, comp, n_items)
        for key, value in attrs.items():
            setattr(self, key, value)
        self.tau_ = float(traces["tau"][:, kept_idx].mean())
        self.lengthscale_ = None if not n_ell else traces["lengthscale"][:, kept_idx].reshape(-1, n_ell).mean(0)
        self.kernel_ = spec.kind
        self._kept = (_canonical_rows(samples), kept_tau, kept_ell)
        self._spec = spec
        info = {**traces, "n_samples": int(len(samples)), "n_distinct_partitions": int(len(self._posterior[0])),
                "n_items": int(n_items), "sweep_seconds": sweep_seconds, "exchange_seconds": exchange_seconds,
                "n_sweeps": int(C * n_iter), "kernel": spec.kind,
                **{f"accept_{m}": (a / b if b else float("nan")) for m, (a, b) in accepts.items()}}
        return labels, ClusteringResult(objective=loss, history=traces["log_score"][0].tolist(),
                                        info=info)

    # ------------------------------------------------------------------ results
    # the same posterior summary as TVClust's (samples stored the same way)
    coclustering = TVClust.coclustering

    def predict_samples(self, X, *, n_sweeps=3, max_samples=50, random_state=None):
        """Partitions of the training nodes plus new points, one per posterior sample.

        For each kept sample (at most ``max_samples``, evenly spaced) the training
        partition and ``(ℓ, τ)`` are held fixed; the new points are seated one at a
        time in random order by the DCP conditional (joining a training cluster or
        opening a cluster of their own), then ``n_sweeps`` Gibbs sweeps over the new
        points only. This draws from the conditional of the ``(n + m)``-point DCP
        (the DCP is not projective, so this is the natural inductive rule).

        Parameters
        ----------
        X : array-like of shape (m, n_features)
            New points (original, unstandardised features).
        n_sweeps : int, default=3
        max_samples : int or None, default=50
        random_state : None, int or numpy.random.Generator, default=None

        Returns
        -------
        ndarray of shape (n_used_samples, n_nodes + m)
            Labels (first appearance order); the last ``m`` columns are the new points.
        """
        check_is_fitted(self)
        spec = self._spec
        if spec.kind != "se":
            raise InvalidParameterError(
                f"predict needs the feature kernel (kernel='se'); this DCP used kernel={spec.kind!r}, which has no "
                "value at new points. Fit on all nodes instead (transductive): leave the new nodes unlabelled"
            )
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != spec.Y.shape[1]:
            raise InvalidFeaturesError(f"X must have shape (m, {spec.Y.shape[1]}), got {X.shape}")
        if not np.isfinite(X).all():
            r = int(np.argwhere(~np.isfinite(X))[0][0])
            raise InvalidFeaturesError(f"row {r} of X has non-finite features", node=r)
        n_sweeps = check_int(n_sweeps, "n_sweeps", low=0)
        rng = check_random_state(random_state)
        canon, kept_tau, kept_ell = self._kept
        S = len(canon)
        use = np.arange(S) if max_samples is None or S <= max_samples else \
            np.unique(np.linspace(0, S - 1, check_int(max_samples, "max_samples", low=1)).astype(np.int64))
        _, _, comp = self._posterior
        n, m = len(comp), len(X)
        Yall = np.concatenate([spec.Y, spec.transform(X)])
        iptr, inodes = _singleton_items(n + m)
        no_adj = _no_adjacency(n + m)
        test = np.arange(n, n + m, dtype=np.int64)
        out = np.empty((len(use), n + m), dtype=np.int64)
        for r, s in enumerate(use):
            K = _se_kernel(Yall, kept_ell[s], spec.jitter)
            st = _Store(K, iptr, inodes, spec.floor)
            st.set_labels(np.concatenate([canon[s][comp], np.full(m, -1)]))
            for _ in range(n_sweeps + 1):
                st.sweep(rng.permutation(test), rng.random(m), no_adj, kept_tau[s])
            out[r] = st.node_labels()
        return out

    def predict(self, X, *, n_sweeps=3, max_samples=50, random_state=None):
        """Cluster labels of new points: the Binder point estimate of the joint
        (training + new) samples of :meth:`predict_samples`, restricted to the new
        points, numbered like ``labels_`` (each cluster takes the most common label of
        its training members; clusters of new points only get labels from
        ``labels_.max() + 1``).

        Returns
        -------
        ndarray of shape (m,)
        """
        Z = self.predict_samples(X, n_sweeps=n_sweeps, max_samples=max_samples, random_state=random_state)
        uniq, first_at, freq = np.unique(Z, axis=0, return_index=True, return_counts=True)
        cand = np.lexsort((first_at, -freq))[:_MAX_CANDIDATES].astype(np.int64)
        own, crossed, psum = _binder_terms(uniq, freq / freq.sum(), cand, np.ones(Z.shape[1]))
        best = uniq[cand[int(np.argmin(own + psum - 2.0 * crossed))]]
        n = len(self.labels_)
        train, new = best[:n], best[n:]
        # canonical labels: clusters of new points only appear in increasing order
        clusters, inverse = np.unique(new, return_inverse=True)
        mapped = np.empty(len(clusters), dtype=np.int64)
        nxt = int(self.labels_.max()) + 1
        for a, lab in enumerate(clusters.tolist()):  # one step per cluster
            members = self.labels_[train == lab]
            if len(members):
                mapped[a] = int(np.bincount(members).argmax())
            else:
                mapped[a] = nxt
                nxt += 1
        return mapped[inverse.reshape(-1)]


def _log_normal(x, mu, sd):
    return -0.5 * ((x - mu) / sd) ** 2 - np.log(sd) - 0.5 * math.log(2.0 * math.pi)


@register_method("dcp", "DCP: determinantal clustering process, Gibbs sampling at tau = 3 with the lengthscale "
                        "learnt by exchange moves (infers the number of clusters; -k is ignored)")
def _dcp_factory(n_clusters=2, random_state=None):
    # a learnt tau drifts to ~1 and splits the data into many small clusters
    # (docs/benchmarks/dcp.md); tau = 3 was at least as good on every data set there
    return DCP(tau=3.0, learn_tau=False, n_iter=30, n_aux_sweeps=2, random_state=random_state)
