"""DCP node potentials: Gaussian-process posterior variances under a kernel, with one
Cholesky factor per cluster kept up to date in numba.

The cost of node ``x`` in cluster ``C`` is ``τ log s_C(x)`` with
``s_C(x) = k(x, x) − k_{x,C} K_C^{-1} k_{C,x}``; a block of nodes scores by the
log-determinant of its Schur complement. A node is appended to a factor by forward
substitution and deleted by a rank-one update of the trailing block (``O(|C|²)``
each). This module holds the kernels (squared exponential, heat, regularised
Laplacian, precomputed), the cluster store, the hooks that let the Gibbs engine
(:mod:`graphclust.inference.gibbs`) sample the DCP, and :class:`DCPKernel`, the
provider for :class:`graphclust.HMRF` and incremental use. The estimator is
:class:`graphclust.DCP`.
"""

import math
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from numba.typed import List

from .._params import Boolean, Integer, Real
from ..base import canonical_labels
from ..errors import InvalidFeaturesError, InvalidParameterError, ProblemTooLargeError
from ..inference.gibbs import GibbsChain, no_side_information, register_provider
from .base import CountParameter, NodePotentials

__all__ = ["DCPKernel"]

#: dense kernels are refused above this many nodes (the model needs all of K)
_MAX_NODES = 20_000
#: the number of nearest neighbours whose median distance sets the default lengthscale
_LENGTHSCALE_NEIGHBOUR = 7
_KERNELS = ("auto", "se", "heat", "regularized_laplacian")
#: ``concentration="auto"`` without cannot-links: the information a node has about this
#: many nearest neighbours ...
_INFO_NEIGHBOURS = 3
#: ... at this quantile over the nodes (times ``τ``) is ``log α``
_INFO_QUANTILE = 0.1


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


# ============================================================================ Gibbs engine
class DCPGibbsState(NamedTuple):
    """What the Gibbs engine reads of a DCP store: the kernel, the per-cluster factors
    and members, the items (blocks of nodes, CSR ``iptr``/``inodes``), the pivot
    floor, the temperature, the scratch slot that scores a new cluster and
    ``log α``, the log weight of every cluster (added to the new-cluster option)."""

    K: np.ndarray
    facs: object
    mems: object
    size: np.ndarray
    pos: np.ndarray
    zn: np.ndarray
    iptr: np.ndarray
    inodes: np.ndarray
    floor: float
    tau: float
    x: np.ndarray
    scratch: int
    log_alpha: float


# The hooks unpack the state first: outside the engine (which borrows the state's arrays),
# reading NamedTuple fields by name in numba code that calls other functions costs
# reference-count traffic per array and call.
@njit(cache=True)
def _gibbs_scores(ps, u, k_old, z, active, n_active, pos, died, side, out):
    """Take the block of item ``u`` out of slot ``k_old`` (a rank-one update per node),
    then ``−τ log det S_k(B)`` for every active slot (the block joining it), and
    ``log α − τ log det K_B`` for a new cluster (scored in the empty scratch slot), last."""
    K, facs, mems, size, pos_, zn, iptr, inodes, floor, tau, x, scratch, log_alpha = ps
    a0, a1 = iptr[u], iptr[u + 1]
    if k_old >= 0:
        for t in range(a0, a1):
            _remove_node(facs, mems, size, pos_, zn, inodes[t], x)
    for a in range(n_active):
        if side[active[a]] != -np.inf:  # a hard cannot-link vetoes the cluster: no need to score it
            out[a] = -tau * _score_block(K, facs, mems, size, pos_, zn, active[a], inodes, a0, a1, floor)
    out[n_active] = log_alpha - tau * _score_block(K, facs, mems, size, pos_, zn, scratch, inodes, a0, a1, floor)


@njit(cache=True)
def _gibbs_add(ps, u, k, new, active, n_active):
    K, facs, mems, size, pos, zn, iptr, inodes, floor, tau, x, scratch, log_alpha = ps
    for t in range(iptr[u], iptr[u + 1]):
        _append(K, facs, mems, size, pos, zn, k, inodes[t], floor)


register_provider(DCPGibbsState, scores=_gibbs_scores, add=_gibbs_add, cache=True)


# ============================================================================ chain state
class _Store:
    """One chain's cluster factors over a kernel ``K``: items (blocks of nodes, CSR
    ``iptr``/``inodes``), slots ``0..n_items-1`` for clusters plus one scratch slot,
    and the engine's chain (labels, active and free slots)."""

    def __init__(self, K, iptr, inodes, floor):
        n = K.shape[0]
        n_items = len(iptr) - 1
        self.K, self.iptr, self.inodes, self.floor = K, iptr, inodes, float(floor)
        self.n_slots = n_items + 1
        self.facs, self.mems = _new_slots(self.n_slots, 4)
        self.size = np.zeros(self.n_slots, dtype=np.int64)
        self.pos = np.zeros(n, dtype=np.int64)
        self.zn = np.full(n, -1, dtype=np.int64)
        self.x = np.zeros(n + 1)
        self.tau = 1.0
        self.log_alpha = 0.0
        # one slot per item: the chain never runs out, so it never grows
        self.chain = GibbsChain(self, n_items, self.n_slots - 1)

    # what the engine's chain needs
    @property
    def state(self):
        return DCPGibbsState(self.K, self.facs, self.mems, self.size, self.pos, self.zn, self.iptr, self.inodes,
                             self.floor, float(self.tau), self.x, self.n_slots - 1, float(self.log_alpha))

    def grow(self, capacity):  # pragma: no cover - one slot per item always suffices
        raise AssertionError("a DCP store has a slot for every item")

    def build(self, z):
        _rebuild(self.K, self.facs, self.mems, self.size, self.pos, self.zn, z, self.iptr, self.inodes, self.floor)

    @property
    def zi(self):
        """Slot of every item (``-1``: not placed)."""
        return self.chain.z

    def set_labels(self, labels):
        """Items' clusters from labels ``0..m-1`` (one per item; -1: not placed)."""
        self.chain.set_labels(labels)

    def rebuild(self, K=None):
        if K is not None:
            self.K = K
        self.build(self.chain.z)

    def sweep(self, order, unif, adj, tau, log_alpha=0.0):
        """One Gibbs sweep over the items in ``order`` of ``Π_C α det(K_C)^(−τ)``
        (times the side information ``adj``)."""
        self.tau = float(tau)
        self.log_alpha = float(log_alpha)
        self.chain.sweep(order, unif, adj)

    def logdet(self):
        return _store_logdet(self.facs, self.size, self.chain.active, self.chain.n_clusters)

    @property
    def n_clusters(self):
        return self.chain.n_clusters

    def node_labels(self):
        """Canonical node labels ``0..m-1`` in order of first appearance."""
        return canonical_labels(self.zn)

    def item_labels(self):
        return canonical_labels(self.chain.z)


def _singleton_items(n):
    return np.arange(n + 1, dtype=np.int64), np.arange(n, dtype=np.int64)


def _no_adjacency(n_items):
    return no_side_information(n_items)


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


def _neighbour_information(K, floor, n_neighbours=_INFO_NEIGHBOURS, q=_INFO_QUANTILE):
    """The ``q``-quantile over the nodes of ``log(k(x, x) / s_N(x))``, the Gaussian-process
    information (twice the mutual information, in nats) a node has about its
    ``n_neighbours`` most correlated nodes ``N`` (its nearest neighbours under the SE
    kernel), ``s_N(x)`` being its posterior variance given them (floored at ``floor``,
    as in the sampler). A node joins a cluster
    holding its neighbours with ``τ`` times this much more log weight than it opens a
    cluster of its own; ``DCP(concentration="auto")`` sets ``log α`` to ``τ`` times the
    10 % quantile when there are no cannot-links. Rows in chunks (``O(n²)`` memory is
    already spent on ``K``)."""
    n = K.shape[0]
    m = min(int(n_neighbours), n - 1)
    if m < 1:
        return 0.0
    d = np.diag(K)
    out = np.empty(n)
    step = max(1, 2_000_000 // max(n, 1))
    for s0 in range(0, n, step):
        rows = np.arange(s0, min(n, s0 + step))
        C = K[rows] ** 2 / (d[rows, None] * d[None, :])  # squared correlation
        C[np.arange(len(rows)), rows] = -np.inf
        nb = np.argpartition(-C, m - 1, axis=1)[:, :m]
        KN = K[nb[:, :, None], nb[:, None, :]]
        kx = K[rows[:, None], nb]
        v = np.linalg.solve(KN, kx[:, :, None])[:, :, 0]
        post = d[rows] - np.einsum("ij,ij->i", kx, v)
        out[rows] = np.log(d[rows] / np.maximum(post, floor))
    return float(max(np.quantile(out, q), 0.0))


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


def _check_kernel_param(kernel, name):
    """``kernel``: a kernel name or a square numeric matrix (checked against the data
    later); ``name`` is the parameter and its owner ("kernel of DCP")."""
    if isinstance(kernel, str):
        if kernel not in _KERNELS:
            raise InvalidParameterError(
                f"{name} must be one of {', '.join(map(repr, _KERNELS))} or a precomputed (n_nodes, "
                f"n_nodes) kernel matrix, got {kernel!r}"
            )
        return
    arr = np.asarray(kernel)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or not np.issubdtype(arr.dtype, np.number):
        raise InvalidParameterError(
            f"{name} must be a kernel name or a square numeric matrix, got {type(kernel).__name__} of "
            f"shape {getattr(arr, 'shape', None)}"
        )


def _check_lengthscale(value, name):
    """``lengthscale`` as a 1-d array (``None`` stays ``None``); ``name`` is the
    parameter and its owner ("lengthscale of DCP")."""
    if value is None:
        return None
    try:
        arr = np.atleast_1d(np.asarray(value, dtype=np.float64)) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.ndim != 1 or arr.size == 0:
        raise InvalidParameterError(f"{name} must be None, a number > 0 or a vector of them, got {value!r}")
    if not np.isfinite(arr).all() or (arr <= 0).any():
        raise InvalidParameterError(
            f"{name} must be > 0 and finite (a squared-exponential kernel's bandwidth), got {value!r}"
        )
    return arr


#: the kernel parameters DCP and DCPKernel share
_KERNEL_CONSTRAINTS = {
    "tau": Real(low=0.0, low_open=True),
    "lengthscale": _check_lengthscale,
    "kernel": _check_kernel_param,
    "graph_scale": Real(low=0.0, low_open=True),
    "standardize": Boolean(),
    "jitter": Real(low=0.0, low_open=True),
}


# ============================================================================ provider
class DCPKernel(CountParameter, NodePotentials):
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

    _parameter_constraints = {"n_clusters": Integer(low=1), **_KERNEL_CONSTRAINTS}

    # state (set on first use of a problem, and by initialize/update/start)
    _problem = None
    _members = None
    _store = None

    def __init__(self, n_clusters=2, *, tau=1.0, lengthscale=None, kernel="auto", graph_scale=1.0, standardize=True,
                 jitter=1e-6):
        # clusters open along the incremental path: the parameter is the batch
        # interface's count, and `n_clusters` the current one
        self.n_clusters_param = n_clusters
        self.tau = tau
        self.lengthscale = lengthscale
        self.kernel = kernel
        self.graph_scale = graph_scale
        self.standardize = standardize
        self.jitter = jitter

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
            self._validate_params()  # first use on this problem: the parameters are checked here
            spec = _KernelSpec(problem, self.kernel, self.graph_scale, self.standardize, self.jitter, "DCPKernel")
            ell = self.lengthscale
            if spec.learnable:
                ell = _check_lengthscale(ell, "lengthscale of DCPKernel")
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
