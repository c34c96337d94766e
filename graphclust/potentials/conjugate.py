"""Conjugate likelihoods: collapsed (posterior-predictive) node potentials.

A conjugate provider scores a node against a cluster by the *negative log posterior
predictive* of the node's points given the points already in the cluster, with the
cluster parameters integrated out:

.. math::

    \\text{cost}_i(k) = -\\log p(x_i \\mid \\{x_j : z_j = k, j \\ne i\\})
                     = -\\log \\frac{m(X_k \\cup \\{x_i\\})}{m(X_k)}

where ``m(·)`` is the closed-form marginal likelihood under the prior. The "new
cluster" option is the prior predictive ``−log m({x_i})``. Three likelihood/prior
pairs are provided:

* :class:`NormalInverseWishart` — full-covariance Gaussian, Normal–Inverse-Wishart
  prior; the predictive of one point is a multivariate Student-t. Each cluster keeps
  the Cholesky factor of its posterior scale matrix, updated and downdated by rank-one
  operations in numba (``O(d²)`` per move, ``O(d²)`` per score).
* :class:`NormalInverseGamma` — diagonal-covariance Gaussian, an independent
  Normal–Inverse-Gamma prior per dimension (``O(d)`` per move and score).
* :class:`DirichletMultinomial` — count vectors (bags of words, histograms),
  multinomial likelihood with a Dirichlet prior (``O(nnz(x_i))`` per move and score).

They are the data model of :class:`graphclust.TVClust` (the collapsed Gibbs sampler of
the Dirichlet-process mixture), and they implement both access patterns of
:class:`~graphclust.potentials.base.NodePotentials`, so they also serve in
:class:`graphclust.HMRF` (with a fixed number of clusters).

**Merged nodes.** A node with ``counts[i] = c > 1`` (after
:func:`graphclust.contract`, ``X`` holds feature sums) stands for ``c`` points scored
*together*: its cost is the joint predictive of the block. For the multinomial this is
exact from the summed counts. For the Gaussians the joint predictive also needs the
block's within-node scatter, which :func:`graphclust.contract` keeps
(:attr:`~graphclust.Problem.scatter`), and so does the data-driven prior (the variance
of the original points). A node with ``counts > 1`` but no scatter is taken as ``c``
points at the node mean, which overstates how tight the block is.
"""

import math
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.special import gammaln

from .._params import Integer, Optional, Real
from .._utils import check_float, group_sums, sq_distances
from ..errors import InvalidFeaturesError, InvalidParameterError
from ..inference.gibbs import register_provider
from .base import CountParameter, NodePotentials, check_features
from .centroids import _js

__all__ = ["NormalInverseWishart", "NormalInverseGamma", "DirichletMultinomial", "CONJUGATE"]

#: likelihood kinds, dispatched inside the numba kernels
NIW, NIG, DIRMULT = 0, 1, 2

#: slot 0 holds the prior (the "new cluster" statistics), slot 1 is scratch space;
#: clusters live in slots 2, 3, ...
PRIOR_SLOT, SCRATCH_SLOT, FIRST_SLOT = 0, 1, 2

_LOG_PI = math.log(math.pi)
_LOG_2PI = math.log(2.0 * math.pi)

#: above this many nodes, max_distortion uses farthest-point sweeps (a lower bound)
_EXACT_MAX_NODES = 5000
_BLOCK_FLOATS = 2_000_000


# ============================================================================ kernels
# State layout shared by every kernel (tuples of arrays, so one compiled kernel serves
# all three likelihoods):
#
#   model = (hp, m0, P0)
#       hp  (4,)   NIW: κ0, ν0, log|Ψ0|  ·  NIG: κ0, a0  ·  Dirichlet: Σβ
#       m0  (d,)   prior mean (Gaussians) or β (Dirichlet)
#       P0  2-D    NIW: Cholesky factor of Ψ0 (d, d) · NIG: b0 in row 0 · Dirichlet: unused
#   cl = (cn, cA, cB, cs)        cluster statistics per slot
#       cn  (C,)        number of points
#       cA  (C, d)      posterior mean (Gaussians) or summed counts (Dirichlet)
#       cB  (C, r, d)   NIW: Cholesky factor of Ψ_k · NIG: b_k in row 0 · Dirichlet: unused
#       cs  (C,)        NIW: log|Ψ_k| · Dirichlet: total count
#   items = (im, ix, iblk, iR, isc, iconst, nzp, nzi, nzv)   what is scored and moved
#       im  (n,)        number of points of the item
#       ix  (n, d)      mean of its points (Gaussians)
#       iblk (n,)       row of iR holding the item's within-item scatter, or -1 (none)
#       iR  (b, r, d)   NIW: rows R with R^T R = scatter · NIG: scatter per dimension
#       isc (n,)        total count (Dirichlet)
#       iconst (n,)     log multinomial coefficient (Dirichlet)
#       nzp, nzi, nzv   CSR non-zeros of the summed counts (Dirichlet)
#   scratch = (wL (d, d), wv (d,))


@njit(cache=True)
def _chol_update(L, x):
    """In place: ``L`` becomes the Cholesky factor of ``L Lᵀ + x xᵀ`` (``x`` is destroyed)."""
    d = L.shape[0]
    for k in range(d):
        lkk = L[k, k]
        r = math.sqrt(lkk * lkk + x[k] * x[k])
        c = r / lkk
        s = x[k] / lkk
        L[k, k] = r
        for i in range(k + 1, d):
            L[i, k] = (L[i, k] + s * x[i]) / c
            x[i] = c * x[i] - s * L[i, k]


@njit(cache=True)
def _chol_downdate(L, x):
    """In place: ``L`` becomes the Cholesky factor of ``L Lᵀ − x xᵀ``; False (and ``L``
    unusable) when the result is not positive definite in floating point."""
    d = L.shape[0]
    for k in range(d):
        lkk = L[k, k]
        r2 = lkk * lkk - x[k] * x[k]
        if not r2 > 0.0:
            return False
        r = math.sqrt(r2)
        c = r / lkk
        s = x[k] / lkk
        L[k, k] = r
        for i in range(k + 1, d):
            L[i, k] = (L[i, k] - s * x[i]) / c
            x[i] = c * x[i] - s * L[i, k]
    return True


@njit(cache=True)
def _logdet_chol(L):
    s = 0.0
    for i in range(L.shape[0]):
        s += math.log(L[i, i])
    return 2.0 * s


@njit(cache=True)
def _copy_slot(src, dst, cl):
    """Slot ``dst`` gets the statistics of slot ``src`` (explicit loops: slice
    assignment of 3-D arrays compiles several times slower in numba)."""
    cn, cA, cB, cs = cl
    cn[dst] = cn[src]
    cs[dst] = cs[src]
    for j in range(cA.shape[1]):
        cA[dst, j] = cA[src, j]
    for r in range(cB.shape[1]):
        for j in range(cB.shape[2]):
            cB[dst, r, j] = cB[src, r, j]


@njit(cache=True)
def _reset_slot(k, cl):
    """Slot ``k`` gets the prior statistics (an empty cluster)."""
    _copy_slot(PRIOR_SLOT, k, cl)


@njit(cache=True)
def _lgamma_ratio_d(nu, nu1, d):
    """``log Γ_d(ν1/2) − log Γ_d(ν/2)`` (multivariate gamma)."""
    s = 0.0
    for j in range(d):
        s += math.lgamma(0.5 * (nu1 - j)) - math.lgamma(0.5 * (nu - j))
    return s


@njit(cache=True)
def _crp_log(nk, mu):
    """``log Γ(n_k + m) − log Γ(n_k)``: ``m`` points joining a cluster of ``n_k``."""
    return math.log(nk) if mu == 1.0 else math.lgamma(nk + mu) - math.lgamma(nk)


@njit(cache=True)
def _log_pred(st, u, k=PRIOR_SLOT):
    """``log p(points of item u | points in slot k)``, the collapsed predictive; with
    ``st.crp`` the Chinese-restaurant weight is added: ``log Γ(n_k + m) − log Γ(n_k)``
    for a cluster, ``log α + log Γ(m)`` for the prior slot (a new cluster). The Gibbs
    engine calls it for every cluster and directly as its ``score`` hook. The state is
    unpacked once (``a, b = st``): reading NamedTuple fields by name inside numba code
    that calls other functions costs reference-count traffic per array."""
    kind, model, cl, items, scratch, log_alpha, crp = st
    hp, m0, P0 = model
    cn, cA, cB, cs = cl
    im, ix, iblk, iR, isc, iconst, nzp, nzi, nzv = items
    wL, wv = scratch
    n = cn[k]
    mu = im[u]
    prior = 0.0
    if crp:
        prior = log_alpha + (0.0 if mu == 1.0 else math.lgamma(mu)) if k == PRIOR_SLOT else _crp_log(n, mu)
    if kind == DIRMULT:
        B = hp[0]
        s = math.lgamma(B + cs[k]) - math.lgamma(B + cs[k] + isc[u]) + iconst[u]
        for p in range(nzp[u], nzp[u + 1]):
            base = m0[nzi[p]] + cA[k, nzi[p]]
            s += math.lgamma(base + nzv[p]) - math.lgamma(base)
        return prior + s
    d = cA.shape[1]
    kap = hp[0] + n
    kap1 = kap + mu
    c = kap * mu / kap1
    b = iblk[u]
    if kind == NIW:
        nu = hp[1] + n
        nu1 = nu + mu
        L = cB[k]
        for j in range(d):
            wv[j] = ix[u, j] - cA[k, j]
        if b < 0:
            # |Ψ + c δδᵀ| = |Ψ| (1 + c δᵀΨ⁻¹δ): one triangular solve
            r = 0.0
            for i in range(d):
                s = wv[i]
                for j in range(i):
                    s -= L[i, j] * wv[j]
                wv[i] = s / L[i, i]
                r += wv[i] * wv[i]
            logdet1 = cs[k] + math.log1p(c * r)
        else:
            for i in range(d):
                for j in range(i + 1):
                    wL[i, j] = L[i, j]
            sc = math.sqrt(c)
            for j in range(d):
                wv[j] *= sc
            _chol_update(wL, wv)
            for q in range(iR.shape[1]):
                nz = False
                for j in range(d):
                    wv[j] = iR[b, q, j]
                    nz = nz or wv[j] != 0.0
                if nz:
                    _chol_update(wL, wv)
            logdet1 = _logdet_chol(wL)
        if mu == 1.0:
            g = math.lgamma(0.5 * (nu + 1.0)) - math.lgamma(0.5 * (nu + 1.0 - d))
        else:
            g = _lgamma_ratio_d(nu, nu1, d)
        return prior + (-0.5 * mu * d * _LOG_PI + g + 0.5 * nu * cs[k] - 0.5 * nu1 * logdet1
                        + 0.5 * d * (math.log(kap) - math.log(kap1)))
    # NIG
    a = hp[1] + 0.5 * n
    a1 = a + 0.5 * mu
    s = 0.0
    for j in range(d):
        diff = ix[u, j] - cA[k, j]
        bj = cB[k, 0, j]
        b1 = bj + 0.5 * c * diff * diff
        if b >= 0:
            b1 += 0.5 * iR[b, 0, j]
        s += a * math.log(bj) - a1 * math.log(b1)
    return prior + (d * (math.lgamma(a1) - math.lgamma(a)) + s + 0.5 * d * (math.log(kap) - math.log(kap1))
            - 0.5 * mu * d * _LOG_2PI)


@njit(cache=True)
def _add(st, u, k, new=False, active=None, n_active=0):
    """Put the points of item ``u`` into slot ``k`` (the trailing arguments are the Gibbs
    engine's, unused here)."""
    kind, model, cl, items, scratch, log_alpha, crp = st
    hp, m0, P0 = model
    cn, cA, cB, cs = cl
    im, ix, iblk, iR, isc, iconst, nzp, nzi, nzv = items
    wL, wv = scratch
    mu = im[u]
    if kind == DIRMULT:
        for p in range(nzp[u], nzp[u + 1]):
            cA[k, nzi[p]] += nzv[p]
        cs[k] += isc[u]
        cn[k] += mu
        return
    d = cA.shape[1]
    kap = hp[0] + cn[k]
    kap1 = kap + mu
    c = kap * mu / kap1
    b = iblk[u]
    if kind == NIW:
        sc = math.sqrt(c)
        for j in range(d):
            wv[j] = sc * (ix[u, j] - cA[k, j])
        L = cB[k]
        _chol_update(L, wv)
        if b >= 0:
            for q in range(iR.shape[1]):
                nz = False
                for j in range(d):
                    wv[j] = iR[b, q, j]
                    nz = nz or wv[j] != 0.0
                if nz:
                    _chol_update(L, wv)
        cs[k] = _logdet_chol(L)
    else:
        for j in range(d):
            diff = ix[u, j] - cA[k, j]
            cB[k, 0, j] += 0.5 * c * diff * diff
            if b >= 0:
                cB[k, 0, j] += 0.5 * iR[b, 0, j]
    for j in range(d):
        cA[k, j] = (kap * cA[k, j] + mu * ix[u, j]) / kap1
    cn[k] += mu


@njit(cache=True)
def _remove(st, u, k, z=None):
    """Take the points of item ``u`` out of slot ``k``. Returns False when a Cholesky
    downdate lost positive definiteness: given the item labels ``z`` (``z[u]`` already
    -1, as the Gibbs engine calls it) the slot is then rebuilt here, else the caller
    rebuilds it. A slot left empty is reset to the prior exactly."""
    kind, model, cl, items, scratch, log_alpha, crp = st
    hp, m0, P0 = model
    cn, cA, cB, cs = cl
    im, ix, iblk, iR, isc, iconst, nzp, nzi, nzv = items
    wL, wv = scratch
    mu = im[u]
    ok = True
    if cn[k] - mu < 0.5:
        _reset_slot(k, cl)
        return ok
    if kind == DIRMULT:
        for p in range(nzp[u], nzp[u + 1]):
            cA[k, nzi[p]] -= nzv[p]
        cs[k] -= isc[u]
        cn[k] -= mu
        return ok
    d = cA.shape[1]
    kap1 = hp[0] + cn[k]
    kap = kap1 - mu
    c = kap * mu / kap1
    b = iblk[u]
    for j in range(d):  # the mean without the item
        cA[k, j] = (kap1 * cA[k, j] - mu * ix[u, j]) / kap
    if kind == NIW:
        L = cB[k]
        if b >= 0:
            for q in range(iR.shape[1]):
                nz = False
                for j in range(d):
                    wv[j] = iR[b, q, j]
                    nz = nz or wv[j] != 0.0
                if nz and ok:
                    ok = _chol_downdate(L, wv)
        sc = math.sqrt(c)
        for j in range(d):
            wv[j] = sc * (ix[u, j] - cA[k, j])
        if ok:
            ok = _chol_downdate(L, wv)
        if ok:
            cs[k] = _logdet_chol(L)
    else:
        for j in range(d):
            diff = ix[u, j] - cA[k, j]
            v = cB[k, 0, j] - 0.5 * c * diff * diff
            if b >= 0:
                v -= 0.5 * iR[b, 0, j]
            if not v > 0.0:
                ok = False
            cB[k, 0, j] = v
    cn[k] -= mu
    if not ok and z is not None:
        _rebuild_slot(st, k, z)
    return ok


@njit(cache=True)
def _rebuild_slot(st, k, z):
    """Recompute slot ``k`` from scratch: the prior plus every item ``u`` with ``z[u] == k``."""
    _reset_slot(k, st.cl)
    for u in range(z.shape[0]):
        if z[u] == k:
            _add(st, u, k)


@njit(cache=True)
def _log_marginal(kind, k, model, cl):
    """``log m(points in slot k)``: the marginal likelihood of the cluster's data (for
    the Dirichlet without the multinomial coefficients, which are added separately)."""
    hp, m0, P0 = model
    cn, cA, cB, cs = cl
    n = cn[k]
    if kind == DIRMULT:
        B = hp[0]
        s = math.lgamma(B) - math.lgamma(B + cs[k])
        for j in range(cA.shape[1]):
            if cA[k, j] != 0.0:
                s += math.lgamma(m0[j] + cA[k, j]) - math.lgamma(m0[j])
        return s
    d = cA.shape[1]
    kap0 = hp[0]
    if kind == NIW:
        nu0 = hp[1]
        return (-0.5 * n * d * _LOG_PI + _lgamma_ratio_d(nu0, nu0 + n, d) + 0.5 * nu0 * hp[2]
                - 0.5 * (nu0 + n) * cs[k] + 0.5 * d * (math.log(kap0) - math.log(kap0 + n)))
    a0 = hp[1]
    an = a0 + 0.5 * n
    s = d * (math.lgamma(an) - math.lgamma(a0))
    for j in range(d):
        s += a0 * math.log(P0[0, j]) - an * math.log(cB[k, 0, j])
    return s + 0.5 * d * (math.log(kap0) - math.log(kap0 + n)) - 0.5 * n * d * _LOG_2PI


@njit(cache=True)
def _build(st, z):
    """Reset every slot ``>= FIRST_SLOT`` and add each item to slot ``z[u]`` (``< 0``: none)."""
    for k in range(FIRST_SLOT, st.cl[0].shape[0]):
        _reset_slot(k, st.cl)
    for u in range(z.shape[0]):
        if z[u] >= FIRST_SLOT:
            _add(st, u, z[u])


@njit(cache=True)
def _scores_of(st, u, n_slots, z, out):
    """``out[k] = −log p(item u | slot FIRST_SLOT + k)`` for the first ``n_slots`` cluster
    slots, leaving ``u`` out of its own cluster; ``out[n_slots]`` = the prior predictive."""
    own = z[u]
    for k in range(n_slots):
        slot = FIRST_SLOT + k
        if slot == own:
            _copy_slot(slot, SCRATCH_SLOT, st.cl)
            if not _remove(st, u, SCRATCH_SLOT):
                z[u] = -1
                _rebuild_slot(st, SCRATCH_SLOT, _own_members(z, own))
                z[u] = own
            out[k] = -_log_pred(st, u, SCRATCH_SLOT)
        else:
            out[k] = -_log_pred(st, u, slot)
    out[n_slots] = -_log_pred(st, u, PRIOR_SLOT)


@njit(cache=True)
def _own_members(z, own):
    """Labels with the members of ``own`` moved to the scratch slot (for a rebuild)."""
    out = np.empty(z.shape[0], dtype=np.int64)
    for v in range(z.shape[0]):
        out[v] = SCRATCH_SLOT if z[v] == own else -1
    return out


@njit(cache=True)
def _predictive_table(st, n_slots, out):
    """``out[u, k] = log p(item u | slot FIRST_SLOT + k)`` for every item of ``st`` (new
    points, not members of any slot) and the first ``n_slots`` cluster slots;
    ``out[u, n_slots]`` = the prior predictive. No CRP weights (``st.crp`` off)."""
    for u in range(out.shape[0]):
        for k in range(n_slots):
            out[u, k] = _log_pred(st, u, FIRST_SLOT + k)
        out[u, n_slots] = _log_pred(st, u, PRIOR_SLOT)


@njit(cache=True)
def _unary(st, n_slots, z, out):
    """Batch costs ``(n_items, n_slots)``: leave-one-out negative log predictives."""
    row = np.empty(n_slots + 1)
    for u in range(z.shape[0]):
        _scores_of(st, u, n_slots, z, row)
        for k in range(n_slots):
            out[u, k] = row[k]



# ============================================================================ Gibbs engine
class ConjugateGibbsState(NamedTuple):
    """What the Gibbs engine (:mod:`graphclust.inference.gibbs`) reads of a conjugate
    provider: the kernels' tuples and the log DP concentration (the CRP prior)."""

    kind: int
    model: tuple
    cl: tuple
    items: tuple
    scratch: tuple
    log_alpha: float
    crp: bool


# inlined (numba IR) into the scores hook, and with it into the engine's kernel: one call
# less per item and cluster
_log_pred_inline = njit(inline="always")(_log_pred.py_func)


@njit(cache=True)
def _gibbs_scores(ps, u, k_old, z, active, n_active, pos, died, side, out):
    """Take item ``u`` out of slot ``k_old``, then: CRP weight times the collapsed
    predictive of ``u`` in every active slot not vetoed by a hard cannot-link, and
    ``α Γ(m)`` times the prior predictive for a new cluster (last)."""
    if k_old >= 0:
        _remove(ps, u, k_old, z)
    for a in range(n_active):
        if side[active[a]] != -np.inf:
            out[a] = _log_pred_inline(ps, u, active[a])
    out[n_active] = _log_pred_inline(ps, u, PRIOR_SLOT)


@njit(cache=True)
def _gibbs_reset(ps, k):
    _reset_slot(k, ps.cl)


@njit(cache=True)
def _gibbs_copy(ps, src, dst):
    _copy_slot(src, dst, ps.cl)


@njit(cache=True)
def _gibbs_split_delta(ps, si, sj, sm):
    """``log π(split) − log π(merged)`` under the CRP and the marginal likelihoods."""
    cn = ps.cl[0]
    return (ps.log_alpha + math.lgamma(cn[si]) + math.lgamma(cn[sj]) - math.lgamma(cn[sm])
            + _log_marginal(ps.kind, si, ps.model, ps.cl) + _log_marginal(ps.kind, sj, ps.model, ps.cl)
            - _log_marginal(ps.kind, sm, ps.model, ps.cl))


# the kernels themselves are hooks where they can be: a wrapper would pass the whole state once more
register_provider(ConjugateGibbsState, scores=_gibbs_scores, add=_add, score=_log_pred,
                  reset=_gibbs_reset, copy=_gibbs_copy, split_delta=_gibbs_split_delta, cache=True)


class GibbsStatistics:
    """Cluster statistics of one Gibbs chain in slots (slot 0: the prior, slot 1:
    scratch, clusters from slot 2), as the engine's ``GibbsChain`` wants its
    provider: ``state``, ``grow(capacity)``, ``build(z)``."""

    first_slot = FIRST_SLOT
    scratch_slot = SCRATCH_SLOT

    def __init__(self, provider, model, items, scratch, capacity):
        self.kind = int(provider.kind)
        self.model, self.items, self.scratch = model, items, scratch
        self.cl = provider._empty(model, capacity)
        self.log_alpha = 0.0

    @property
    def state(self):
        return ConjugateGibbsState(self.kind, self.model, self.cl, self.items, self.scratch, float(self.log_alpha),
                                   True)

    def grow(self, capacity):
        self.cl = _grow(self.cl, capacity)

    def build(self, z):
        _build(self.state, z)


# ============================================================================ constraints
_POSITIVE = Real(low=0.0, low_open=True)


def _numeric_array(value, name):
    """An array of numbers (its shape is checked against the data when the prior is
    resolved)."""
    try:
        np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"{name} must be a number or an array of numbers, got {value!r}") from None


def _check_concentration(value, name):
    """A number > 0, or a vector of numbers > 0."""
    if np.ndim(value) == 0:
        check_float(value, name, low=0.0, low_open=True)
        return
    try:
        v = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        v = None
    if v is None or v.ndim != 1 or not (np.isfinite(v) & (v > 0)).all():
        raise InvalidParameterError(f"{name} must be a number > 0 or a vector of numbers > 0")


# ============================================================================ providers
class _Conjugate(CountParameter, NodePotentials):
    """Shared machinery of the conjugate providers (see the module docstring).

    ``__init__`` only stores the parameters; they are checked against
    ``_parameter_constraints`` on first use (:meth:`start`, :meth:`initialize`, the
    pair terms, or :class:`~graphclust.HMRF` and :class:`~graphclust.TVClust` at
    ``fit``), and against the data when the prior is resolved.
    """

    kind = -1
    _name = "conjugate"

    _parameter_constraints = {"n_clusters": Integer(low=1)}

    # fitted state (set by start/initialize/update)
    prior_ = None
    _state = None

    def __init__(self, n_clusters=2):
        self.n_clusters_param = n_clusters

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_state"] = None  # kernels' working arrays are rebuilt on demand
        return state

    @property
    def n_clusters(self):
        """Clusters currently held: the constructor's ``n_clusters`` until the
        provider is started, then the number of cluster slots in use (a cluster
        emptied by :meth:`remove` keeps its number and scores as the prior)."""
        if self._state is None:
            return self.n_clusters_param
        return self._state["n_slots"]

    # ------------------------------------------------------------------ data
    def _features(self, problem):
        """Validated ``(X sums, counts)``; a clear error names the first bad node. The
        first use of the provider on a problem: its parameters are checked here."""
        self._validate_params()
        X, counts = check_features(problem, f"{type(self).__name__}")
        X = np.asarray(X, dtype=np.float64)
        counts = np.asarray(counts)
        if X.ndim != 2 or X.shape[0] != problem.n_nodes or X.shape[1] == 0:
            raise InvalidFeaturesError(
                f"{type(self).__name__} needs a feature matrix of shape (n_nodes, n_features), got {X.shape}"
            )
        if not np.isfinite(X).all():
            i = int(np.argwhere(~np.isfinite(X))[0][0])
            raise InvalidFeaturesError(
                f"node {problem.nodes[i]!r} has non-finite features ({X[i].tolist()!r}); "
                f"{type(self).__name__} needs finite numbers", node=problem.nodes[i],
            )
        if (counts < 1).any():
            i = int(np.flatnonzero(counts < 1)[0])
            raise InvalidFeaturesError(
                f"node {problem.nodes[i]!r} has counts={counts[i]}; every node stands for at least one point",
                node=problem.nodes[i],
            )
        self._check_domain(problem, X)
        return X, counts.astype(np.float64)

    def _check_domain(self, problem, X):
        """Likelihood-specific checks of the feature values (none by default)."""

    def _items(self, X, counts, comp=None, n_items=None, scatter=None):
        """Item arrays for the kernels. ``comp`` groups nodes into items (each item is
        scored and moved as one block); by default each node is an item. ``scatter``:
        the nodes' own within-node scatter (``Problem.within_scatter()``)."""
        raise NotImplementedError

    def _resolve(self, X, counts, within=None):
        """``model`` tuple from the parameters, data-driven where left ``None`` (from
        the points: ``within`` adds the spread inside merged nodes, see
        :func:`_within_spread`); sets :attr:`prior_`."""
        raise NotImplementedError

    def _empty(self, model, capacity):
        """Cluster statistics with ``capacity`` slots, all at the prior."""
        raise NotImplementedError

    def _setup(self, problem, comp=None, n_items=None):
        X, counts = self._features(problem)
        model = self._resolve(X, counts, _within_spread(problem))
        model = tuple(np.ascontiguousarray(a) for a in model)
        items = tuple(np.ascontiguousarray(a) for a in self._items(X, counts, comp, n_items,
                                                                   problem.within_scatter()))
        d = X.shape[1]
        scratch = (np.zeros((d, d)), np.zeros(d))
        return model, items, scratch

    def gibbs_statistics(self, model, items, scratch, capacity):
        """Cluster statistics for the Gibbs engine (``model, items, scratch`` from
        ``_setup``), ``capacity`` slots to start with."""
        return GibbsStatistics(self, model, items, scratch, capacity)

    # ------------------------------------------------------------------ incremental
    def start(self, problem, labels):
        """Build the cluster statistics of ``labels`` (ints ``>= 0``, one per node)."""
        labels = _check_labels(labels, problem.n_nodes)
        model, items, scratch = self._setup(problem)
        n_slots = int(labels.max()) + 1 if labels.size else 0
        cl = self._empty(model, FIRST_SLOT + max(n_slots, 1) + 4)
        z = labels.astype(np.int64) + FIRST_SLOT
        _build(ConjugateGibbsState(self.kind, model, cl, items, scratch, 0.0, False), z)
        self._state = {"problem": problem, "model": model, "items": items, "scratch": scratch, "cl": cl,
                       "z": z, "n_slots": n_slots}

    def _kernel_state(self, st):
        """The kernels' view of the incremental state ``st``."""
        return ConjugateGibbsState(self.kind, st["model"], st["cl"], st["items"], st["scratch"], 0.0, False)

    def _started(self):
        if self._state is None:
            raise InvalidParameterError(f"{type(self).__name__}.start(problem, labels) must be called first")
        return self._state

    def _check_node(self, i, st):
        n = st["z"].shape[0]
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise InvalidParameterError(f"node index must be an int in [0, {n}), got {i!r}")
        return int(i)

    def remove(self, i):
        """Take node index ``i`` out of its cluster."""
        st = self._started()
        i = self._check_node(i, st)
        k = st["z"][i]
        if k < FIRST_SLOT:
            raise InvalidParameterError(f"node index {i} is not in a cluster; add it before removing it")
        st["z"][i] = -1
        ks = self._kernel_state(st)
        if not _remove(ks, i, k):
            _rebuild_slot(ks, k, st["z"])

    def add(self, i, k):
        """Put node index ``i`` into cluster ``k``; ``k == n_clusters`` opens a new one."""
        st = self._started()
        i = self._check_node(i, st)
        if st["z"][i] >= FIRST_SLOT:
            raise InvalidParameterError(f"node index {i} is already in cluster {st['z'][i] - FIRST_SLOT}; "
                                        "remove it first")
        n_slots = st["n_slots"]
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n_slots:
            raise InvalidParameterError(
                f"cluster must be an int in [0, {n_slots}] ({n_slots} opens a new cluster), got {k!r}"
            )
        k = int(k)
        if k == n_slots:
            if FIRST_SLOT + n_slots >= st["cl"][0].shape[0]:
                st["cl"] = _grow(st["cl"], 2 * st["cl"][0].shape[0])
            st["n_slots"] = n_slots + 1
        st["z"][i] = FIRST_SLOT + k
        _add(self._kernel_state(st), i, FIRST_SLOT + k)

    def scores(self, i):
        """Costs ``(n_clusters + 1,)``: the negative log predictive of node ``i`` in each
        cluster (leaving ``i`` out of its own) and in a new cluster (last)."""
        st = self._started()
        i = self._check_node(i, st)
        out = np.empty(st["n_slots"] + 1)
        _scores_of(self._kernel_state(st), i, st["n_slots"], st["z"], out)
        return out

    def log_predictive(self, X):
        """``log p(x | cluster k)`` of new points: the posterior predictive of every row
        of ``X`` given the points in each cluster (none of them a member), shape
        ``(n_points, n_clusters + 1)``, the prior predictive (a new cluster) last.

        Parameters
        ----------
        X : array-like of shape (n_points, n_features)
            Finite feature rows, one point each, in the space of the problem given to
            :meth:`start`.

        Returns
        -------
        ndarray of shape (n_points, n_clusters + 1)

        Examples
        --------
        >>> import numpy as np
        >>> import graphclust as gc
        >>> X = np.array([[0.0, 0.0], [0.1, 0.2], [4.0, 4.0], [4.2, 3.9]])
        >>> lik = gc.potentials.NormalInverseGamma()
        >>> lik.start(gc.Problem.from_array(X), [0, 0, 1, 1])
        >>> lik.log_predictive([[0.1, 0.1], [4.1, 4.0]]).argmax(axis=1).tolist()
        [0, 1]
        """
        st = self._started()
        X = np.asarray(X, dtype=np.float64)
        d = st["scratch"][1].shape[0]
        if X.ndim != 2 or X.shape[1] != d:
            raise InvalidFeaturesError(f"expected points of shape (n_points, {d}), got an array of shape {X.shape}")
        if self.kind == DIRMULT and (X < 0).any():
            i, j = (int(v) for v in np.argwhere(X < 0)[0])
            raise InvalidFeaturesError(f"row {i} of X has a negative count ({X[i, j]:g} in feature {j}); the "
                                       "multinomial likelihood needs non-negative counts", node=i)
        items = tuple(np.ascontiguousarray(a) for a in self._items(X, np.ones(len(X))))
        scratch = (np.zeros((d, d)), np.zeros(d))
        ks = ConjugateGibbsState(self.kind, st["model"], st["cl"], items, scratch, 0.0, False)
        out = np.empty((len(X), st["n_slots"] + 1))
        _predictive_table(ks, st["n_slots"], out)
        return out

    @property
    def sizes(self):
        """Number of points in each cluster, shape ``(n_clusters,)``."""
        st = self._started()
        return st["cl"][0][FIRST_SLOT:FIRST_SLOT + st["n_slots"]].copy()

    def log_marginal(self):
        """``log m(X_k)`` of every cluster: the marginal likelihood of its points with
        the parameters integrated out, shape ``(n_clusters,)`` (multinomial
        coefficients included for the Dirichlet)."""
        st = self._started()
        out = np.array([_log_marginal(self.kind, FIRST_SLOT + k, st["model"], st["cl"])
                        for k in range(st["n_slots"])])
        if self.kind == DIRMULT:
            z = st["z"] - FIRST_SLOT
            inside = z >= 0
            out = out + np.bincount(z[inside], weights=st["items"][5][inside], minlength=st["n_slots"])
        return out

    # ------------------------------------------------------------------ batch (HMRF)
    def initialize(self, problem, seeds, rng):
        """Clusters holding one pseudo-point each, at the seed feature vectors
        ``(n_clusters, n_features)``; no node is a member yet."""
        model, items, scratch = self._setup(problem)
        K = self.n_clusters_param
        seeds = np.asarray(seeds, dtype=np.float64)
        d = scratch[1].shape[0]
        if seeds.shape != (K, d):
            raise InvalidParameterError(f"expected {K} seeds of {d} features, got shape {seeds.shape}")
        cl = self._empty(model, FIRST_SLOT + K + 1)
        for k in range(K):
            self._set_point(model, cl, FIRST_SLOT + k, seeds[k])
        z = np.full(problem.n_nodes, -1, dtype=np.int64)
        self._state = {"problem": problem, "model": model, "items": items, "scratch": scratch, "cl": cl,
                       "z": z, "n_slots": K}

    def _set_point(self, model, cl, slot, x):
        """Slot ``slot`` = the prior updated with one point ``x``."""
        raise NotImplementedError

    def update(self, problem, labels, **penalty_terms):
        """M-step: the clusters become the members given by ``labels`` (the constraint
        terms of :class:`~graphclust.HMRF` do not enter a conjugate posterior)."""
        labels = _check_labels(labels, problem.n_nodes)
        self.start(problem, labels)
        keep = max(self.n_clusters_param, int(labels.max()) + 1 if labels.size else 0)
        self._state["n_slots"] = keep
        if FIRST_SLOT + keep > self._state["cl"][0].shape[0]:
            self._state["cl"] = _grow(self._state["cl"], FIRST_SLOT + keep)

    def unary(self, problem):
        """Costs ``(n_nodes, n_clusters)``: the negative log predictive of every node
        in every cluster, leaving the node out of its own cluster (the data term of the
        collapsed conditional)."""
        st = self._started()
        if st["problem"] is not problem:
            raise InvalidParameterError(
                f"{type(self).__name__}.unary() needs the problem given to initialize/update/start"
            )
        out = np.empty((st["z"].shape[0], st["n_slots"]))
        _unary(self._kernel_state(st), st["n_slots"], st["z"], out)
        return out

    # ------------------------------------------------------------------ pair terms
    def _pair_space(self, problem):
        """``(Y, metric)``: node points in a space where ``φ`` is a plain distance."""
        raise NotImplementedError

    def pair_distortion(self, problem, pairs):
        """``φ(x_i, x_j)`` for distance-scaled constraint penalties: half the squared
        Mahalanobis distance between the node means under the prior's expected
        covariance (Gaussians), the Jensen–Shannon divergence of the smoothed count
        distributions (Dirichlet)."""
        Y, metric = self._pair_space(problem)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        a, b = Y[pairs[:, 0]], Y[pairs[:, 1]]
        if metric == "js":
            return _js(a, b)
        return 0.5 * ((a - b) ** 2).sum(1)

    def max_distortion(self, problem, rng=None):
        """``(φ_max, (i, j))``: exact up to 5000 nodes, a farthest-point lower bound above."""
        Y, metric = self._pair_space(problem)
        n = len(Y)
        if n < 2:
            return 0.0, (0, 0)

        def block(A):
            if metric == "js":
                return _js(A[:, None, :], Y[None, :, :])
            return 0.5 * sq_distances(A, Y)

        if n <= _EXACT_MAX_NODES:
            best, pair = -1.0, (0, 1)
            step = max(1, _BLOCK_FLOATS // (n * (Y.shape[1] if metric == "js" else 1)))
            for s in range(0, n, step):
                D = block(Y[s:s + step])
                r, c = divmod(int(np.argmax(D)), n)
                if D[r, c] > best:
                    best, pair = float(D[r, c]), (s + r, c)
            return best, pair
        i, best, pair = 0, -1.0, (0, 1)
        for _ in range(4):
            D = block(Y[i:i + 1])[0]
            j = int(np.argmax(D))
            if D[j] <= best:
                break
            best, pair, i = float(D[j]), (i, j), j
        return best, pair


def _check_labels(labels, n):
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise InvalidParameterError(f"expected {n} labels (one per node), got shape {labels.shape}")
    if labels.size and (not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0):
        raise InvalidParameterError("labels must be integers >= 0")
    return labels.astype(np.int64)


def _grow(cl, capacity):
    """Cluster statistics with more slots; the new ones at the prior."""
    cn, cA, cB, cs = cl
    C = cn.shape[0]
    if capacity <= C:
        return cl
    out = (np.empty(capacity), np.empty((capacity,) + cA.shape[1:]), np.empty((capacity,) + cB.shape[1:]),
           np.empty(capacity))
    for new, old in zip(out, cl):
        new[:C] = old
        new[C:] = old[PRIOR_SLOT]
    return out


def _empirical_var(X, counts, within=None):
    """Count-weighted mean and per-feature variance of the points: of the node means,
    plus ``within`` (per feature, the summed squares of the points merged into nodes
    around their node means), so a contracted problem gives the variance of its
    original points. A feature without spread (variance at most ``1e-12·mean²``) gets
    the median variance of the others (1 when no feature has spread), so every prior
    scale is positive."""
    N = counts.sum()
    mean = X.sum(0) / N
    D = X / counts[:, None] - mean
    var = (counts[:, None] * D * D).sum(0)
    if within is not None:
        var += within
    var /= N
    flat = ~(var > 1e-12 * mean * mean) | ~(var > 0)
    if flat.any():
        var[flat] = np.median(var[~flat]) if (~flat).any() else 1.0
    return mean, var


def _gaussian_blocks(X, counts, comp, n_items, scatter=None):
    """Per item: points, mean, and within-item scatter (``(n_blocks, d, d)``) for the
    items with scatter: those of more than one node, and nodes that carry scatter of
    their own (merged before, see :class:`~graphclust.Problem`), which is added so
    that nothing of a merged node's second moments is lost."""
    m = np.bincount(comp, weights=counts, minlength=n_items)
    sums = group_sums(comp, X, n_items)
    mean = sums / m[:, None]
    nodes_per = np.bincount(comp, minlength=n_items)
    own_index = None if scatter is None else scatter[0]
    has_own = np.zeros(n_items, dtype=bool)
    if own_index is not None:
        has_own[comp[own_index >= 0]] = True
    multi = np.flatnonzero((nodes_per > 1) | has_own)
    iblk = np.full(n_items, -1, dtype=np.int64)
    iblk[multi] = np.arange(len(multi))
    members = np.flatnonzero(iblk[comp] >= 0)
    D = X[members] / counts[members, None] - mean[comp[members]]
    W = np.zeros((len(multi), X.shape[1], X.shape[1]))
    np.add.at(W, iblk[comp[members]], counts[members, None, None] * D[:, :, None] * D[:, None, :])
    if own_index is not None:
        own = members[own_index[members] >= 0]
        np.add.at(W, iblk[comp[own]], scatter[1][own_index[own]])
    return m, mean, iblk, W


class NormalInverseWishart(_Conjugate):
    """Full-covariance Gaussian clusters with a Normal–Inverse-Wishart prior.

    Each cluster has a mean ``μ`` and covariance ``Σ`` drawn from
    ``Σ ~ IW(Ψ0, ν0)``, ``μ | Σ ~ N(m0, Σ/κ0)``; both are integrated out, so a node's
    cost in a cluster is the negative log of a multivariate Student-t predictive with
    ``ν_k − d + 1`` degrees of freedom, location ``m_k`` and scale
    ``Ψ_k (κ_k + 1) / (κ_k (ν_k − d + 1))``.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters when used in :class:`~graphclust.HMRF`; ignored by
        :class:`~graphclust.TVClust`, where the number of clusters is inferred.
    mean : array-like of shape (n_features,) or None, default=None
        ``m0``; ``None``: the (count-weighted) mean of the data.
    kappa : float, default=1.0
        ``κ0 > 0``: how many pseudo-points the prior mean is worth. With 1, cluster
        means are expected to spread about the data mean like the points of a cluster
        spread about its mean.
    dof : float or None, default=None
        ``ν0 > d − 1``; ``None``: ``d + 2``, the smallest integer for which the prior
        mean of ``Σ`` exists.
    scale : array-like of shape (n_features, n_features) or None, default=None
        ``Ψ0`` (symmetric positive definite). ``None``: ``(ν0 − d − 1) Ĉ`` so that the
        prior mean of every cluster covariance is ``Ĉ``, the empirical covariance of
        the data (``ν0 Ĉ`` when ``ν0 <= d + 1``). ``Ĉ`` gets a ``1e-6`` ridge, and a
        constant feature gets a tenth of the average variance.

    Attributes
    ----------
    prior_ : dict
        The resolved hyperparameters ``mean``, ``kappa``, ``dof``, ``scale``.

    Notes
    -----
    The marginal likelihood of ``n`` points (Murphy 2007, eq. 266) is

    .. math::

        m(X) = \\pi^{-nd/2} \\frac{\\Gamma_d(ν_n/2)}{\\Gamma_d(ν_0/2)}
               \\frac{|Ψ_0|^{ν_0/2}}{|Ψ_n|^{ν_n/2}} \\Big(\\frac{κ_0}{κ_n}\\Big)^{d/2},
        \\qquad Ψ_n = Ψ_0 + S + \\frac{κ_0 n}{κ_n}(\\bar x − m_0)(\\bar x − m_0)^T,

    and the cost of a node is ``−log m(X_k ∪ {x_i}) + log m(X_k)``. Adding one point
    changes ``Ψ`` by a rank-one term ``κ/(κ+1) (x − m)(x − m)ᵀ``, so the Cholesky
    factor of ``Ψ_k`` is kept and updated (or downdated) in ``O(d²)``; a score needs
    one triangular solve.

    References
    ----------
    K. P. Murphy, *Conjugate Bayesian analysis of the Gaussian distribution*, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.1, 0.2], [4.0, 4.0], [4.2, 3.9]])
    >>> lik = gc.potentials.NormalInverseWishart()
    >>> lik.start(gc.Problem.from_array(X), [0, 0, 1, 1])
    >>> costs = lik.scores(0)      # node 0 in cluster 0, in cluster 1, in a new cluster
    >>> int(np.argmin(costs))
    0
    """

    kind = NIW

    _parameter_constraints = {
        **_Conjugate._parameter_constraints,
        "mean": Optional(_numeric_array),
        "kappa": _POSITIVE,
        "dof": Optional(_POSITIVE),
        "scale": Optional(_numeric_array),
    }

    def __init__(self, n_clusters=2, *, mean=None, kappa=1.0, dof=None, scale=None):
        self.n_clusters_param = n_clusters
        self.mean = mean
        self.kappa = kappa
        self.dof = dof
        self.scale = scale

    def _resolve(self, X, counts, within=None):
        d = X.shape[1]
        mean, var = _empirical_var(X, counts, within)
        cov = np.diag(var)
        m0 = _vector(self.mean, d, "mean of NormalInverseWishart") if self.mean is not None else mean
        nu0 = float(d + 2) if self.dof is None else float(self.dof)
        if not nu0 > d - 1:
            raise InvalidParameterError(
                f"dof of NormalInverseWishart must be > n_features - 1 = {d - 1} for a proper prior, got {nu0:g}"
            )
        if self.scale is None:
            psi0 = (nu0 - d - 1.0) * cov if nu0 > d + 1 else nu0 * cov
        else:
            psi0 = _spd(self.scale, d, "scale of NormalInverseWishart")
        L0 = np.linalg.cholesky(psi0)
        self.prior_ = {"mean": m0, "kappa": float(self.kappa), "dof": nu0, "scale": psi0}
        hp = np.array([float(self.kappa), nu0, 2.0 * np.log(np.diag(L0)).sum(), 0.0])
        return hp, m0, L0

    def _empty(self, model, capacity):
        hp, m0, L0 = model
        cn = np.zeros(capacity)
        cA = np.tile(m0, (capacity, 1))
        cB = np.tile(L0, (capacity, 1, 1))
        cs = np.full(capacity, hp[2])
        return cn, cA, cB, cs

    def _set_point(self, model, cl, slot, x):
        hp, m0, L0 = model
        k0 = hp[0]
        psi = L0 @ L0.T + k0 / (k0 + 1.0) * np.outer(x - m0, x - m0)
        L = np.linalg.cholesky(psi)
        cl[0][slot] = 1.0
        cl[1][slot] = (k0 * m0 + x) / (k0 + 1.0)
        cl[2][slot] = L
        cl[3][slot] = 2.0 * np.log(np.diag(L)).sum()

    def _items(self, X, counts, comp=None, n_items=None, scatter=None):
        n, d = X.shape
        if comp is None:
            comp, n_items = np.arange(n), n
        m, mean, iblk, W = _gaussian_blocks(X, counts, comp, n_items, scatter)
        # rows R with RᵀR = W, from the eigendecomposition (W is only semi-definite)
        R = np.zeros((len(W), d, d))
        if len(W):
            vals, vecs = np.linalg.eigh(W)
            keep = vals > 1e-12 * np.maximum(vals.max(axis=1, keepdims=True), 1e-300)
            R = np.where(keep[:, :, None], np.sqrt(np.maximum(vals, 0.0))[:, :, None] * vecs.transpose(0, 2, 1), 0.0)
        zeros = np.zeros(n_items)
        empty_i, empty_f = np.zeros(1, np.int64), np.zeros(0)
        return (m, mean, iblk, R, zeros, zeros, empty_i, np.zeros(0, np.int64), empty_f)

    def _pair_space(self, problem):
        X, counts = self._features(problem)
        model = self._resolve(X, counts, _within_spread(problem))
        L0 = model[2]
        d = X.shape[1]
        nu0 = model[0][1]
        c = nu0 - d - 1.0 if nu0 > d + 1 else nu0  # Σ̄ = Ψ0 / c
        Y = np.linalg.solve(L0, (X / counts[:, None]).T).T * np.sqrt(c)
        return Y, "sq"


class NormalInverseGamma(_Conjugate):
    """Diagonal-covariance Gaussian clusters, a Normal–Inverse-Gamma prior per dimension.

    Dimension ``j`` of a cluster has variance ``σ_j² ~ IG(a0, b0_j)`` and mean
    ``μ_j | σ_j² ~ N(m0_j, σ_j²/κ0)``, independently across dimensions; the predictive of
    one point is a product of Student-t densities with ``2a_k`` degrees of freedom,
    location ``m_kj`` and squared scale ``b_kj (κ_k + 1)/(a_k κ_k)``.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters in :class:`~graphclust.HMRF`; ignored by TVClust.
    mean : array-like of shape (n_features,) or None, default=None
        ``m0``; ``None``: the data mean.
    kappa : float, default=1.0
        ``κ0 > 0``.
    shape : float, default=1.5
        ``a0 > 0``; 1.5 matches the one-dimensional :class:`NormalInverseWishart`
        default (``a0 = ν0/2`` with ``ν0 = d + 2 = 3``).
    rate : array-like of shape (n_features,), float or None, default=None
        ``b0 > 0``; ``None``: ``(a0 − 1) v_j`` so that the prior mean of ``σ_j²`` is the
        data variance ``v_j`` of dimension ``j`` (``a0 v_j`` when ``a0 <= 1``); a
        constant feature gets a tenth of the average variance.

    Attributes
    ----------
    prior_ : dict
        The resolved ``mean``, ``kappa``, ``shape``, ``rate``.

    Notes
    -----
    Per dimension, the marginal likelihood of ``n`` points is
    ``Γ(a_n)/Γ(a0) · b0^{a0}/b_n^{a_n} · (κ0/κ_n)^{1/2} · (2π)^{−n/2}`` with
    ``a_n = a0 + n/2``, ``b_n = b0 + S/2 + κ0 n (x̄ − m0)²/(2κ_n)``. In one dimension
    this is the :class:`NormalInverseWishart` model with ``ν0 = 2a0``, ``Ψ0 = 2b0``.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.1, 0.2], [4.0, 4.0], [4.2, 3.9]])
    >>> lik = gc.potentials.NormalInverseGamma()
    >>> lik.start(gc.Problem.from_array(X), [0, 0, 1, 1])
    >>> int(np.argmin(lik.scores(3)))
    1
    """

    kind = NIG

    _parameter_constraints = {
        **_Conjugate._parameter_constraints,
        "mean": Optional(_numeric_array),
        "kappa": _POSITIVE,
        "shape": _POSITIVE,
        "rate": Optional(_numeric_array),
    }

    def __init__(self, n_clusters=2, *, mean=None, kappa=1.0, shape=1.5, rate=None):
        self.n_clusters_param = n_clusters
        self.mean = mean
        self.kappa = kappa
        self.shape = shape
        self.rate = rate

    def _resolve(self, X, counts, within=None):
        d = X.shape[1]
        mean, var = _empirical_var(X, counts, within)
        m0 = _vector(self.mean, d, "mean of NormalInverseGamma") if self.mean is not None else mean
        a0 = float(self.shape)
        if self.rate is None:
            b0 = (a0 - 1.0) * var if a0 > 1 else a0 * var
        else:
            b0 = np.broadcast_to(_vector(self.rate, d, "rate of NormalInverseGamma", scalar=True), (d,)).copy()
            if not (b0 > 0).all():
                raise InvalidParameterError(f"rate of NormalInverseGamma must be > 0, got {self.rate!r}")
        self.prior_ = {"mean": m0, "kappa": float(self.kappa), "shape": a0, "rate": b0}
        hp = np.array([float(self.kappa), a0, 0.0, 0.0])
        return hp, m0, b0[None, :].copy()

    def _empty(self, model, capacity):
        hp, m0, b0 = model
        return (np.zeros(capacity), np.tile(m0, (capacity, 1)), np.tile(b0, (capacity, 1, 1)), np.zeros(capacity))

    def _set_point(self, model, cl, slot, x):
        hp, m0, b0 = model
        k0 = hp[0]
        cl[0][slot] = 1.0
        cl[1][slot] = (k0 * m0 + x) / (k0 + 1.0)
        cl[2][slot] = b0 + 0.5 * k0 / (k0 + 1.0) * (x - m0) ** 2
        cl[3][slot] = 0.0

    def _items(self, X, counts, comp=None, n_items=None, scatter=None):
        n, d = X.shape
        if comp is None:
            comp, n_items = np.arange(n), n
        m, mean, iblk, W = _gaussian_blocks(X, counts, comp, n_items, scatter)
        R = np.ascontiguousarray(np.diagonal(W, axis1=1, axis2=2)[:, None, :]) if len(W) else np.zeros((0, 1, d))
        zeros = np.zeros(n_items)
        return (m, mean, iblk, R, zeros, zeros, np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0))

    def _pair_space(self, problem):
        X, counts = self._features(problem)
        hp, m0, b0 = self._resolve(X, counts, _within_spread(problem))
        a0 = hp[1]
        var = b0[0] / (a0 - 1.0) if a0 > 1 else b0[0] / a0
        return X / counts[:, None] / np.sqrt(var), "sq"


class DirichletMultinomial(_Conjugate):
    """Count-vector clusters: multinomial likelihood with a Dirichlet prior.

    Each cluster has category probabilities ``θ ~ Dir(β)``; a node's feature vector is
    a vector of counts drawn from ``Mult(θ)``. With ``θ`` integrated out the predictive
    is Dirichlet-multinomial: the cost of node ``i`` (counts ``x``, total ``N``) in a
    cluster with summed counts ``c`` (total ``C``) is

    .. math::

        −\\log p(x \\mid c) = −\\log\\binom{N}{x} − \\log\\frac{Γ(B + C)}{Γ(B + C + N)}
                            − \\sum_{j : x_j > 0} \\log\\frac{Γ(β_j + c_j + x_j)}{Γ(β_j + c_j)}

    with ``B = Σ_j β_j``; it costs ``O(nnz(x))``.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters in :class:`~graphclust.HMRF`; ignored by TVClust.
    concentration : float or array-like of shape (n_features,), default=1.0
        ``β > 0`` (a scalar is used for every category: the symmetric Laplace prior).

    Attributes
    ----------
    prior_ : dict
        ``concentration`` as a vector.

    Notes
    -----
    Features must be non-negative; they need not be integers (the multinomial
    coefficient is taken through the gamma function). Merged nodes are exact: the
    joint predictive of a block depends on its summed counts only, up to the
    multinomial coefficients, which do not depend on the cluster (for a merged node
    the coefficient of its summed counts stands in for the product of its members').

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[5, 0, 1], [4, 1, 0], [0, 6, 0], [1, 5, 0]])
    >>> lik = gc.potentials.DirichletMultinomial()
    >>> lik.start(gc.Problem.from_array(X), [0, 0, 1, 1])
    >>> int(np.argmin(lik.scores(2)))
    1
    """

    kind = DIRMULT

    _parameter_constraints = {**_Conjugate._parameter_constraints, "concentration": _check_concentration}

    def __init__(self, n_clusters=2, *, concentration=1.0):
        self.n_clusters_param = n_clusters
        self.concentration = concentration

    def _check_domain(self, problem, X):
        if (X < 0).any():
            i, j = (int(v) for v in np.argwhere(X < 0)[0])
            raise InvalidFeaturesError(
                f"node {problem.nodes[i]!r} has a negative count ({X[i, j]:g} in feature {j}); the multinomial "
                "likelihood needs non-negative counts", node=problem.nodes[i],
            )

    def _resolve(self, X, counts, within=None):
        d = X.shape[1]
        beta = np.broadcast_to(_vector(self.concentration, d, "concentration of DirichletMultinomial",
                                       scalar=True), (d,)).astype(np.float64)
        self.prior_ = {"concentration": beta}
        return np.array([beta.sum(), 0.0, 0.0, 0.0]), beta, np.zeros((0, d))

    def _empty(self, model, capacity):
        d = len(model[1])
        return np.zeros(capacity), np.zeros((capacity, d)), np.zeros((capacity, 0, d)), np.zeros(capacity)

    def _set_point(self, model, cl, slot, x):
        cl[0][slot] = 1.0
        cl[1][slot] = x
        cl[3][slot] = x.sum()

    def _items(self, X, counts, comp=None, n_items=None, scatter=None):
        n, d = X.shape
        if comp is None:
            comp, n_items = np.arange(n), n
        m = np.bincount(comp, weights=counts, minlength=n_items)
        iconst = np.bincount(comp, weights=_log_multinomial_coefficients(X), minlength=n_items)
        P = sp.csr_array((np.ones(n), (comp, np.arange(n))), shape=(n_items, n))
        S = sp.csr_array(P @ sp.csr_array(X))
        S.sum_duplicates()
        S.eliminate_zeros()
        S.sort_indices()
        total = np.asarray(S.sum(axis=1)).reshape(-1)
        return (m, np.zeros((n_items, 0)), np.full(n_items, -1, np.int64), np.zeros((0, 0, d)), total, iconst,
                S.indptr.astype(np.int64), S.indices.astype(np.int64), S.data.astype(np.float64))

    def _pair_space(self, problem):
        X, counts = self._features(problem)
        beta = self._resolve(X, counts)[1]
        Z = X + beta
        return Z / Z.sum(1, keepdims=True), "js"


def _log_multinomial_coefficients(X):
    """``log((Σ_j x_j)! / Π_j x_j!)`` of every row of ``X`` (through the gamma function).
    It is not additive: the coefficient of merged counts is not the product of the
    parts', so a sampler over merged nodes keeps its members' (see
    :class:`graphclust.TVClust`)."""
    X = np.asarray(X, dtype=np.float64)
    return gammaln(X.sum(1) + 1.0) - gammaln(X + 1.0).sum(1)


def _within_spread(problem):
    """Per feature, the summed squares of the original points around their node's
    mean (the diagonals of :attr:`~graphclust.Problem.scatter`), or ``None`` when no
    node has scatter."""
    index, blocks = problem.within_scatter()
    has = index >= 0
    if not has.any():
        return None
    return np.einsum("kii->i", blocks[index[has]])


def _vector(value, d, name, scalar=False):
    v = np.asarray(value, dtype=np.float64)
    if scalar and v.ndim == 0:
        if not (np.isfinite(v) and v > 0):
            raise InvalidParameterError(f"{name} must be > 0, got {value!r}")
        return v
    if v.shape != (d,) or not np.isfinite(v).all():
        raise InvalidParameterError(f"{name} must be a finite vector of length n_features={d}, got shape {v.shape}")
    return v


def _spd(value, d, name):
    M = np.asarray(value, dtype=np.float64)
    if M.shape != (d, d) or not np.isfinite(M).all() or not np.allclose(M, M.T):
        raise InvalidParameterError(f"{name} must be a symmetric ({d}, {d}) matrix, got shape {M.shape}")
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise InvalidParameterError(f"{name} must be positive definite") from None
    return M


#: likelihood names accepted by :class:`graphclust.TVClust`
CONJUGATE = {
    "gaussian": NormalInverseWishart,
    "gaussian-diag": NormalInverseGamma,
    "multinomial": DirichletMultinomial,
}
