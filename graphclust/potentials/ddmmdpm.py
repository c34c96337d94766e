"""dd-MMDPM node potentials: max-margin cluster scorers with a distance-dependent (or
Chinese-restaurant) prior, the provider behind :class:`graphclust.DDMMDPM` and
:class:`graphclust.MMDPM`.

The log-potential of cluster ``k`` for node ``i`` is ``β x_iᵀθ_k − λ‖θ_k‖²`` plus the
log prior ``log g(x_i, C_k)`` (``g_max``, ``g_sum`` of the decays ``exp(−d_ij/γ)`` to the
members, or the CRP count), with side information folded into the prior. The weight
vectors ``θ_k`` are learnt online by passive-aggressive (PA) steps. This module holds
the numba kernels (prior over a dense or sparse distance structure, PA steps), the
hooks through which the Gibbs engine (:mod:`graphclust.inference.gibbs`) samples the
model, and :class:`DDMMDPMPotentials` for :class:`graphclust.HMRF` and incremental use.
"""

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._params import AnyOf, Boolean, Integer, Options, Real
from .._utils import check_float, group_sums, sq_distances
from ..errors import InvalidFeaturesError, InvalidGraphError, InvalidParameterError, ProblemTooLargeError
from ..inference.gibbs import register_provider
from .base import CountParameter, NodePotentials, check_features
from .centroids import Centroids

__all__ = ["DDMMDPMPotentials"]

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
def _sparse_log_prior(i, use_max, pri, side, zn, active, n_active, work, mark, out):
    """:func:`_node_log_prior` for the sparse prior (mode 2), working only on the
    clusters that node ``i``'s neighbours and constraint partners are in: every other
    active cluster gets the floor, ``log g̃ = lfloor[i]``, without the per-cluster
    bookkeeping (digits, 10 neighbours, ~40 clusters: the sweep 3.5–6 % faster). The
    same floating-point operations in the same order as there, so the same values.
    ``mark`` (one flag per slot, all False between calls) tells a cluster's first touch."""
    LF, ptr, idx, lfv, lfloor = pri
    sp_ptr, sp_idx, sp_w = side
    acc1, acc2, ml, cl, veto = work
    floor_i = lfloor[i] + 0.0  # what an untouched cluster gets there (the floor plus cl = 0)
    for a in range(n_active):
        out[active[a]] = floor_i
    for e in range(ptr[i], ptr[i + 1]):
        k = zn[idx[e]]
        if k >= 0:
            if not mark[k]:
                mark[k] = True
                acc1[k] = -np.inf
                acc2[k] = 0.0
                ml[k] = 0.0
                cl[k] = 0.0
                veto[k] = False
            if lfv[e] > acc1[k]:
                acc1[k] = lfv[e]
    if not use_max:
        for e in range(ptr[i], ptr[i + 1]):
            k = zn[idx[e]]
            if k >= 0 and acc1[k] > -np.inf:
                acc2[k] += math.exp(lfv[e] - acc1[k])
    for e in range(sp_ptr[i], sp_ptr[i + 1]):
        k = zn[sp_idx[e]]
        if k >= 0:
            if not mark[k]:
                mark[k] = True
                acc1[k] = -np.inf
                acc2[k] = 0.0
                ml[k] = 0.0
                cl[k] = 0.0
                veto[k] = False
            w = sp_w[e]
            if w == -np.inf:
                veto[k] = True
            elif w > 0.0:
                if use_max:
                    if w > ml[k]:
                        ml[k] = w
                else:
                    ml[k] += w
            else:
                cl[k] += w
    for e in range(ptr[i], ptr[i + 1]):  # the touched clusters, each once
        k = zn[idx[e]]
        if k >= 0 and mark[k]:
            mark[k] = False
            out[k] = _touched_log_prior(acc1[k], acc2[k], ml[k], cl[k], veto[k], lfloor[i], use_max)
    for e in range(sp_ptr[i], sp_ptr[i + 1]):
        k = zn[sp_idx[e]]
        if k >= 0 and mark[k]:
            mark[k] = False
            out[k] = _touched_log_prior(acc1[k], acc2[k], ml[k], cl[k], veto[k], lfloor[i], use_max)


@njit(cache=True, inline="always")
def _touched_log_prior(top, mass, ml, cl, veto, floor, use_max):
    """The last step of :func:`_node_log_prior` for one cluster of the sparse prior
    (scalars: array arguments of an inlined function cost reference-count calls)."""
    lg = top
    if not use_max and lg > -np.inf:
        lg += math.log(mass)
    lg = _log_combine(lg, floor, use_max)
    if ml > 0.0:
        lg = _log_combine(lg, math.log(ml), use_max)
    lg += cl
    if veto:
        lg = -np.inf
    return lg


@njit(cache=True)
def _pa_step(x, x_sq, k, theta, tsq, active, n_active, pa_cap, margin, phantom, tnew):
    """Multi-class PA-I step on the example ``(x, k)`` against the strongest rival
    (a live cluster, or the unused candidate ``tnew`` when ``phantom``). The dot
    products are written out over rows of ``theta`` (no row views, no calls): inlined
    into the Gibbs engine, each view or call argument costs a reference-count call."""
    D = x.shape[0]
    s_k = 0.0
    for d in range(D):
        s_k += theta[k, d] * x[d]
    best = -np.inf
    r = -1
    for a in range(n_active):
        j = active[a]
        if j != k:
            s = 0.0
            for d in range(D):
                s += theta[j, d] * x[d]
            if s > best:
                best = s
                r = j
    if phantom:
        s = 0.0
        for d in range(D):
            s += tnew[d] * x[d]
        if s > best:
            best = s
            r = -2
    if r == -1:
        return
    loss = margin - s_k + best
    if loss > 0.0 and x_sq > 0.0:
        tau = min(pa_cap, loss / (2.0 * x_sq))
        s = 0.0
        for d in range(D):
            theta[k, d] += tau * x[d]
            s += theta[k, d] * theta[k, d]
        tsq[k] = s
        if r >= 0:
            s = 0.0
            for d in range(D):
                theta[r, d] -= tau * x[d]
                s += theta[r, d] * theta[r, d]
            tsq[r] = s


@njit(cache=True)
def _pa_epochs(Xn, xsq, labels, theta, tsq, n_epochs, pa_cap, margin):
    """PA steps on every node with its given label, ``n_epochs`` passes in node order."""
    K = theta.shape[0]
    active = np.arange(K)
    for _ in range(n_epochs):
        for i in range(Xn.shape[0]):
            _pa_step(Xn[i], xsq[i], labels[i], theta, tsq, active, K, pa_cap, margin, False, Xn[i])


# ============================================================================ Gibbs engine
class DDMMDPMGibbsState(NamedTuple):
    """What the Gibbs engine reads of a dd-MMDPM chain: the prior structure and
    scaled side information (``_node_log_prior``), the items, the likelihood
    parameters ``(β, λ, PA cap, shrink, margin, σ₀, phantom rival, reuse θ)``, the
    cluster weights, and per-item scratch (the prior of every active cluster, the
    candidate ``θ_new`` and its squared norm, the touched-cluster flags of
    ``_sparse_log_prior``)."""

    mode: int
    use_max: bool
    log_new: float
    pri: tuple
    side: tuple
    items: tuple
    params: tuple
    zn: np.ndarray
    theta: np.ndarray
    tsq: np.ndarray
    size: np.ndarray
    noise: np.ndarray
    work: tuple
    lg: np.ndarray
    prior: np.ndarray
    tnew: np.ndarray
    tn_sq: np.ndarray
    opened: np.ndarray
    mark: np.ndarray


# inlined (numba IR) into the hooks, and with them into the engine's kernel: no call
# per item and member
_node_log_prior_inline = njit(inline="always")(_node_log_prior.py_func)
_sparse_log_prior_inline = njit(inline="always")(_sparse_log_prior.py_func)
_pa_step_inline = njit(inline="always")(_pa_step.py_func)


# Every hook unpacks the state first: outside the engine (which borrows the state's arrays),
# reading NamedTuple fields by name in numba code that calls other functions costs
# reference-count traffic per array and call.
@njit(cache=True)
def _gibbs_scores(ps, u, k_old, z, active, n_active, pos, died, side, out):
    """Detach the block of item ``u`` from slot ``k_old`` (its mass out, ``θ_k`` shrunk
    by ``removal_shrink``); draw the candidate ``θ_new`` (a fresh draw, or the emptied
    cluster's ``θ`` when ``reuse_singleton_theta``); then for every active cluster the
    block's log prior plus
    the max-margin likelihood ``β x_uᵀθ_k − m_u λ‖θ_k‖²``, and last the new cluster's
    ``m_u log(α/N) + β x_uᵀθ_new − m_u λ‖θ_new‖²``."""
    (mode, use_max, log_new, pri, side, items, params, zn, theta, tsq, size, noise, work, lg, prior, tnew, tn_sq,
     opened, mark) = ps
    mem_ptr, mem_idx, cnt = items[0], items[1], items[4]
    D = theta.shape[1]
    if k_old >= 0:
        for e in range(mem_ptr[u], mem_ptr[u + 1]):
            zn[mem_idx[e]] = -1
        size[k_old] -= items[6][u]
        shrink = params[3]
        if shrink > 0.0:
            for d in range(D):
                theta[k_old, d] *= 1.0 - shrink
            tsq[k_old] *= (1.0 - shrink) * (1.0 - shrink)
    if params[7] and died >= 0:
        for d in range(D):
            tnew[d] = theta[died, d]
    else:
        base_std = params[5]
        for d in range(D):
            tnew[d] = base_std * noise[pos, d]
    s = 0.0
    for d in range(D):
        s += tnew[d] * tnew[d]
    tn_sq[0] = s
    for a in range(n_active):
        prior[active[a]] = 0.0
    for e in range(mem_ptr[u], mem_ptr[u + 1]):
        i = mem_idx[e]
        if mode == _SPARSE:
            _sparse_log_prior_inline(i, use_max, pri, side, zn, active, n_active, work, mark, lg)
        else:
            _node_log_prior_inline(i, mode, use_max, pri, side, zn, size, active, n_active, work, lg)
        c = cnt[i]
        for a in range(n_active):
            k = active[a]
            prior[k] += c * lg[k]
    Xs = items[5]
    m_u = items[6][u]
    beta, lam = params[0], params[1]
    for a in range(n_active):
        k = active[a]
        s = 0.0
        for d in range(D):
            s += Xs[u, d] * theta[k, d]
        out[a] = prior[k] + beta * s - m_u * lam * tsq[k]
    s = 0.0
    for d in range(D):
        s += Xs[u, d] * tnew[d]
    out[n_active] = m_u * log_new + beta * s - m_u * lam * tn_sq[0]


@njit(cache=True)
def _gibbs_add(ps, u, k, new, active, n_active):
    """Attach the block (a new cluster takes ``θ_new``), then PA steps member by member."""
    (mode, use_max, log_new, pri, side, items, params, zn, theta, tsq, size, noise, work, lg, prior, tnew, tn_sq,
     opened, mark) = ps
    mem_ptr, mem_idx, Xn, xsq = items[0], items[1], items[2], items[3]
    if new:
        for d in range(theta.shape[1]):
            theta[k, d] = tnew[d]
        tsq[k] = tn_sq[0]
        size[k] = 0.0
        opened[0] += 1
    size[k] += items[6][u]
    for e in range(mem_ptr[u], mem_ptr[u + 1]):
        zn[mem_idx[e]] = k
    pa_cap, margin, phantom = params[2], params[4], params[6]
    for e in range(mem_ptr[u], mem_ptr[u + 1]):
        i = mem_idx[e]
        _pa_step_inline(Xn[i], xsq[i], k, theta, tsq, active, n_active, pa_cap, margin, phantom and not new, tnew)


register_provider(DDMMDPMGibbsState, scores=_gibbs_scores, add=_gibbs_add, cache=True)


class _ChainState:
    """One chain's cluster weights, masses and scratch, as the engine's ``GibbsChain``
    wants its provider (``state``, ``build``); ``cap`` slots, one per item and one
    spare, so it never grows."""

    def __init__(self, model, log_new, params, theta):
        cap, D = theta.shape
        self.model, self.log_new, self.params = model, float(log_new), params
        self.theta = theta
        self.tsq = (theta * theta).sum(1)
        self.size = np.zeros(cap)
        self.zn = np.full(len(model.comp), -1, dtype=np.int64)
        self.noise = np.zeros((model.n_items, D))
        self.work = (np.empty(cap), np.empty(cap), np.empty(cap), np.empty(cap), np.zeros(cap, np.bool_))
        self.lg, self.prior, self.tnew = np.empty(cap), np.empty(cap), np.empty(D)
        self.tn_sq = np.zeros(1)
        self.opened = np.zeros(1, dtype=np.int64)
        self.mark = np.zeros(cap, dtype=np.bool_)

    @property
    def state(self):
        m = self.model
        return DDMMDPMGibbsState(m.mode, m.use_max, self.log_new, m.pri, m.side, m.items, self.params, self.zn,
                                 self.theta, self.tsq, self.size, self.noise, self.work, self.lg, self.prior,
                                 self.tnew, self.tn_sq, self.opened, self.mark)

    def grow(self, capacity):  # pragma: no cover - a slot per item and a spare always suffice
        raise AssertionError("a dd-MMDPM chain has a slot for every item")

    def build(self, z):
        self.size[:] = np.bincount(z, weights=self.model.items[6], minlength=len(self.size))
        self.zn[:] = z[self.model.comp]


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
        Xs = group_sums(comp, Xn, n_items, cnt)
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


# ============================================================================ new points
#: dense distances to the fitted points are computed for blocks of at most this many entries
_BLOCK_ENTRIES = 2_000_000


class _NewPointScores:
    """The log weight of a new point in every cluster of a fixed partition, as the
    sampler's conditional scores a point without side information:

    .. math::

        s_k(x) = \\log g̃(x, C_k) + β x_cᵀθ_k − λ‖θ_k‖², \\qquad θ_k = \\frac{β μ_k}{2λ}

    with ``x_c`` the point centred by the fitted points' mean (a constant-1 feature
    appended with ``bias``), ``μ_k`` the centred mean of cluster ``k``'s points, and
    ``log g̃`` the prior of the fit over the fitted points: the CRP count ``n_k``,
    ``g_sum``/``g_max`` of the decays ``exp(−d/γ)`` to all members (dense), or to the
    point's ``n_neighbors`` nearest fitted points plus the floor at its next one
    (``"knn"``). ``θ_k`` is the maximiser of the members' likelihood
    ``Σ_{i∈k} c_i(β x_iᵀθ − λ‖θ‖²)``, as :meth:`DDMMDPMPotentials.start` sets it, so
    the likelihood term is ``−β²‖x_c − μ_k‖²/(4λ)`` up to a constant of ``x``: an
    isotropic Gaussian with variance ``2λ/β²`` around the cluster mean.

    Parameters
    ----------
    Y : ndarray of shape (n_nodes, n_features)
        The fitted nodes' feature means.
    counts : ndarray of shape (n_nodes,)
    labels : ndarray of int of shape (n_nodes,)
        Clusters ``0..K-1``, each non-empty.
    similarity : {"max", "sum", "crp"}
    distance : {"euclidean", "knn"}
        Ignored by ``"crp"``.
    n_neighbors : int
    gamma : float or None
        The resolved decay scale (``None`` for ``"crp"``).
    floor : bool
    beta, lam : float
    bias : bool
    """

    def __init__(self, Y, counts, labels, *, similarity, distance, n_neighbors, gamma, floor, beta, lam, bias):
        self.Y = np.ascontiguousarray(Y, dtype=np.float64)
        cnt = np.asarray(counts, dtype=np.float64)
        self.labels = np.asarray(labels, dtype=np.int64)
        self.K = int(self.labels.max()) + 1
        self.similarity, self.distance = similarity, distance
        self.n_neighbors, self.gamma, self.floor = int(n_neighbors), gamma, bool(floor)
        self.beta, self.lam, self.bias = float(beta), float(lam), bool(bias)
        self.centre = (cnt[:, None] * self.Y).sum(0) / cnt.sum()
        self.sizes = np.bincount(self.labels, weights=cnt, minlength=self.K)
        mu = group_sums(self.labels, self._centred(self.Y), self.K, cnt) / self.sizes[:, None]
        self.theta = self.beta * mu / (2.0 * max(self.lam, 1e-12))
        self.order = np.argsort(self.labels, kind="stable")
        self.starts = np.searchsorted(self.labels[self.order], np.arange(self.K))

    def _centred(self, X):
        Xc = X - self.centre
        return np.hstack([Xc, np.ones((len(Xc), 1))]) if self.bias else Xc

    def likelihood(self, X):
        """``β x_cᵀθ_k − λ‖θ_k‖²``, shape ``(n_points, K)``."""
        tsq = (self.theta * self.theta).sum(1)
        return self.beta * self._centred(X) @ self.theta.T - self.lam * tsq[None, :]

    def log_prior(self, X):
        """``log g̃(x, C_k)``, shape ``(n_points, K)``."""
        m = len(X)
        if self.similarity == "crp":
            return np.broadcast_to(np.log(self.sizes), (m, self.K)).copy()
        use_max = self.similarity == "max"
        if self.distance == "knn":
            from scipy.spatial import cKDTree

            q = self.n_neighbors
            dd, ii = cKDTree(self.Y).query(X, k=q + 1)
            lf = -dd[:, :q] / self.gamma
            floor = -dd[:, q] / self.gamma if self.floor else np.full(m, -np.inf)
            flat = (np.arange(m)[:, None] * self.K + self.labels[ii[:, :q]]).ravel()
            top = np.full(m * self.K, -np.inf)
            np.maximum.at(top, flat, lf.ravel())
            if use_max:
                lg = top
            else:
                mass = np.zeros(m * self.K)
                np.add.at(mass, flat, np.exp(lf.ravel() - top[flat]))
                with np.errstate(divide="ignore"):
                    lg = top + np.log(mass)
            lg = lg.reshape(m, self.K)
            return np.maximum(lg, floor[:, None]) if use_max else np.logaddexp(lg, floor[:, None])
        out = np.empty((m, self.K))
        step = max(1, _BLOCK_ENTRIES // len(self.Y))
        Ys = self.Y[self.order]
        sizes = np.diff(np.append(self.starts, len(Ys)))
        for s in range(0, m, step):  # blocks of points, vectorised within
            lf = -np.sqrt(sq_distances(X[s:s + step], Ys)) / self.gamma
            top = np.maximum.reduceat(lf, self.starts, axis=1)
            if use_max:
                out[s:s + step] = top
            else:
                mass = np.add.reduceat(np.exp(lf - np.repeat(top, sizes, axis=1)), self.starts, axis=1)
                out[s:s + step] = top + np.log(mass)
        return out

    def __call__(self, X):
        """``s_k(x)`` of every row of ``X``, shape ``(n_points, K)``."""
        X = np.asarray(X, dtype=np.float64)
        return self.log_prior(X) + self.likelihood(X)


# ============================================================================ constraints
def _check_distance(value, name):
    """A distance name, or a dense or sparse ``(n, n)`` matrix (checked against the data
    when the prior is built)."""
    if isinstance(value, str):
        if value not in ("euclidean", "knn", "graph"):
            raise InvalidParameterError(
                f"{name} must be 'euclidean', 'knn', 'graph' or a (n, n) distance matrix, got {value!r}")
    elif not (sp.issparse(value) or isinstance(value, (np.ndarray, list, tuple))):
        raise InvalidParameterError(f"{name} must be a string or a distance matrix, got {type(value).__name__}")


def _check_shrink(value, name):
    """A fraction in ``[0, 1)``."""
    if check_float(value, name, low=0.0) >= 1.0:
        raise InvalidParameterError(f"{name} must be in [0, 1), got {float(value)}")


#: the model parameters DDMMDPM, MMDPM (without the distance ones) and
#: DDMMDPMPotentials share
_MODEL_CONSTRAINTS = {
    "similarity": Options("max", "sum", "crp"),
    "distance": _check_distance,
    "n_neighbors": Integer(low=1),
    "gamma": AnyOf(Options("auto"), Real(low=0.0, low_open=True),
                   message="{name} must be 'auto' or a number > 0, got {value!r}"),
    "floor": Boolean(),
    "alpha": Real(low=0.0, low_open=True),
    "lam": Real(low=0.0),
    "beta": Real(low=0.0, low_open=True),
    "base_std": Real(low=0.0, low_open=True),
    "pa_cap": Real(low=0.0),
    "margin": Real(low=0.0),
    "removal_shrink": _check_shrink,
    "bias": Boolean(),
    "ml_strength": Real(low=0.0),
    "cl_penalty": Real(low=0.0),
}


# ============================================================================ provider
class DDMMDPMPotentials(CountParameter, NodePotentials):
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

    _parameter_constraints = {"n_clusters": Integer(low=1), **_MODEL_CONSTRAINTS, "pa_epochs": Integer(low=0)}

    # state (set by model, initialize and start)
    _model = None
    _pair_memo = None
    theta_ = None

    def __init__(self, n_clusters=2, *, similarity="max", distance="euclidean", n_neighbors=10, gamma="auto",
                 floor=True, alpha=1.0, lam=0.5, beta=1.0, base_std=1.0, pa_cap=0.01, margin=1.0,
                 removal_shrink=0.01, bias=False, ml_strength=1.0, cl_penalty=1.0, pa_epochs=1):
        # clusters open along the incremental path: the parameter is the batch
        # interface's count, and `n_clusters` the current one
        self.n_clusters_param = n_clusters
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

    @property
    def _pair(self):
        """Squared Euclidean pair distortions of the node means."""
        if self._pair_memo is None:
            self._pair_memo = Centroids(1)
        return self._pair_memo

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
        self._validate_params()  # first use on this problem: the parameters are checked here
        who = type(self).__name__
        check_features(problem, who)
        n = problem.n_nodes
        if n < 2:
            raise InvalidFeaturesError(f"{who} needs at least 2 nodes, got {n} (n_samples={n}); a single point is one cluster "
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
        cptr, dst, w = problem.constraint_csr
        src = np.repeat(np.arange(n, dtype=np.int64), np.diff(cptr))
        keep = (comp[src] != comp[dst]) & ~np.isposinf(w)
        w = w[keep]
        val = np.where(np.isinf(w), -np.inf, np.where(w > 0, float(self.ml_strength) * w,
                                                       float(self.cl_penalty) * w))
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(src[keep], minlength=n), out=ptr[1:])
        return ptr, np.ascontiguousarray(dst[keep]), np.ascontiguousarray(val, dtype=np.float64)

    def _params(self, phantom=False, reuse=False):
        return (float(self.beta), float(self.lam), float(self.pa_cap), float(self.removal_shrink),
                float(self.margin), float(self.base_std), bool(phantom), bool(reuse))

    def _log_new_unit(self, N):
        return math.log(self.alpha) - (0.0 if self.similarity == "crp" else math.log(N))

    # ------------------------------------------------------------------ batch (HMRF)
    def points(self, problem):
        """``(node means, counts)``: the space seeds are chosen in (the batch path's
        first use: the parameters are checked here)."""
        self._validate_params()
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
            sums = group_sums(labels, model.Xn, K, model.cnt)
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


