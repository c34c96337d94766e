"""The Gibbs engine with a provider written here from scratch, and nothing changed in
the package: a Poisson likelihood with a conjugate Gamma prior (counts), the CRP and
signed side information. On six items the engine's empirical posterior over all set
partitions matches exact enumeration, with plain Gibbs sweeps and with split–merge
moves; the provider's kernels stay out of numba's on-disk cache."""

import math
import sys
from typing import NamedTuple

import numpy as np
import pytest
from numba import njit
from scipy.special import gammaln

from graphclust.base import canonical_labels
from graphclust.errors import InvalidParameterError
from graphclust.inference import gibbs
from graphclust.inference.gibbs import GibbsChain, register_provider
from partition_oracles import set_partitions


# ---------------------------------------------------------------------- the provider
class PoissonGammaState(NamedTuple):
    X: np.ndarray        # (n_items, d) counts
    lfact: np.ndarray    # (n_items,) Σ_d log x_d!
    a: float             # Gamma shape
    b: float             # Gamma rate
    log_alpha: float     # CRP concentration
    cn: np.ndarray       # (slots,) items per slot
    cs: np.ndarray       # (slots, d) summed counts per slot


@njit
def _log_m(a, b, n, s):
    """log ∫ Π Poisson(x | λ) Gamma(λ | a, b) dλ for one dimension, without the x! terms."""
    return a * math.log(b) - math.lgamma(a) + math.lgamma(a + s) - (a + s) * math.log(b + n)


@njit
def _pred(ps, u, k):
    """log p(x_u | the points in slot k)."""
    s = -ps.lfact[u]
    n = ps.cn[k]
    for j in range(ps.X.shape[1]):
        s += _log_m(ps.a, ps.b, n + 1.0, ps.cs[k, j] + ps.X[u, j]) - _log_m(ps.a, ps.b, n, ps.cs[k, j])
    return s


@njit
def pg_remove(ps, u, k, z):
    ps.cn[k] -= 1.0
    for j in range(ps.X.shape[1]):
        ps.cs[k, j] -= ps.X[u, j]


@njit
def pg_score(ps, u, k):
    return math.log(ps.cn[k]) + _pred(ps, u, k)


@njit
def pg_score_new(ps, u):
    # slot 0 is never handed out and stays empty: the prior predictive
    return ps.log_alpha + _pred(ps, u, 0)


@njit
def pg_scores(ps, u, k_old, z, active, n_active, pos, died, side, out):
    if k_old >= 0:
        pg_remove(ps, u, k_old, z)
    for a in range(n_active):
        out[a] = pg_score(ps, u, active[a])
    out[n_active] = pg_score_new(ps, u)


@njit
def pg_add(ps, u, k, new, active, n_active):
    ps.cn[k] += 1.0
    for j in range(ps.X.shape[1]):
        ps.cs[k, j] += ps.X[u, j]


@njit
def pg_reset(ps, k):
    ps.cn[k] = 0.0
    for j in range(ps.X.shape[1]):
        ps.cs[k, j] = 0.0


@njit
def pg_copy(ps, src, dst):
    ps.cn[dst] = ps.cn[src]
    for j in range(ps.X.shape[1]):
        ps.cs[dst, j] = ps.cs[src, j]


@njit
def _cluster(ps, k):
    """log Γ(n_k) + log m(X_k) (the x! terms cancel in every ratio)."""
    s = math.lgamma(ps.cn[k])
    for j in range(ps.X.shape[1]):
        s += _log_m(ps.a, ps.b, ps.cn[k], ps.cs[k, j])
    return s


@njit
def pg_split_delta(ps, k1, k2, km):
    return ps.log_alpha + _cluster(ps, k1) + _cluster(ps, k2) - _cluster(ps, km)


register_provider(PoissonGammaState, scores=pg_scores, add=pg_add, score=pg_score,
                  reset=pg_reset, copy=pg_copy, split_delta=pg_split_delta)


class PoissonGamma:
    """The Python side the chain wants: ``state``, ``grow``, ``build``. Slot 0 is
    the empty prior slot, slot 1 scratch for split–merge; clusters from slot 2."""

    first_slot = 2

    def __init__(self, X, a, b, alpha, capacity=4):
        self.X = np.asarray(X, dtype=np.float64)
        self.lfact = gammaln(self.X + 1.0).sum(1)
        self.a, self.b, self.log_alpha = float(a), float(b), math.log(alpha)
        self.cn = np.zeros(capacity)
        self.cs = np.zeros((capacity, self.X.shape[1]))

    @property
    def state(self):
        return PoissonGammaState(self.X, self.lfact, self.a, self.b, self.log_alpha, self.cn, self.cs)

    def grow(self, capacity):
        old = len(self.cn)
        self.cn = np.concatenate([self.cn, np.zeros(capacity - old)])
        self.cs = np.concatenate([self.cs, np.zeros((capacity - old, self.cs.shape[1]))])

    def build(self, z):
        self.cn[:] = 0.0
        self.cs[:] = 0.0
        np.add.at(self.cn, z[z >= 0], 1.0)
        np.add.at(self.cs, z[z >= 0], self.X[z >= 0])


# ---------------------------------------------------------------------- the oracle


def exact_posterior(X, a, b, alpha, pairs):
    """CRP(α) × Π_k m(X_k) × Π_(i,j) exp(w_ij [z_i = z_j]), normalised over all partitions."""
    n = len(X)
    out = {}
    for part in set_partitions(n):
        z = np.empty(n, dtype=int)
        for k, block in enumerate(part):
            z[block] = k
        lp = len(part) * math.log(alpha)
        for block in part:
            s, m = X[block].sum(0), len(block)
            lp += gammaln(m) + (a * np.log(b) - gammaln(a) + gammaln(a + s) - (a + s) * np.log(b + m)).sum()
        for i, j, w in pairs:
            if z[i] == z[j]:
                lp += w
        out[tuple(canonical_labels(z).tolist())] = lp
    keys = list(out)
    logp = np.array([out[k] for k in keys])
    prob = np.exp(logp - logp[np.isfinite(logp)].max())
    return dict(zip(keys, prob / prob.sum()))


def side_csr(n, pairs):
    """Item-level CSR ``(ptr, idx, w)`` of symmetric pairs."""
    src = np.array([i for i, j, w in pairs] + [j for i, j, w in pairs], dtype=np.int64)
    dst = np.array([j for i, j, w in pairs] + [i for i, j, w in pairs], dtype=np.int64)
    w = np.array([w for *_, w in pairs] * 2, dtype=np.float64)
    order = np.argsort(src, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    return ptr, dst[order], w[order]


X6 = np.array([[0, 1], [1, 0], [6, 5], [7, 7], [2, 9], [0, 2]])
PAIRS = [(0, 1, 1.2), (2, 4, -0.8), (1, 3, -np.inf), (3, 5, 0.5)]


def sample(n_split_merge, n_sweeps, seed):
    rng = np.random.default_rng(seed)
    prov = PoissonGamma(X6, a=1.0, b=0.5, alpha=1.5)
    chain = GibbsChain(prov, len(X6), capacity=4, first_slot=prov.first_slot)
    adj = side_csr(len(X6), PAIRS)
    chain.sweep(rng.permutation(len(X6)), rng.random(len(X6)), adj)  # sequential start
    out = np.empty((n_sweeps, len(X6)), dtype=np.int64)
    for t in range(n_sweeps):
        chain.sweep(rng.permutation(len(X6)), rng.random(len(X6)), adj)
        if n_split_merge:
            chain.split_merge(adj, n_split_merge, int(rng.integers(2**31 - 1)), scratch=1)
        out[t] = chain.z
        # the provider's statistics always match the labels (no drift, no stray slot)
        if t % 997 == 0:
            assert np.array_equal(np.bincount(chain.z, minlength=len(prov.cn))[2:], prov.cn[2:])
            assert sorted(chain.active[:chain.n_clusters]) == sorted(np.unique(chain.z))
    return out, chain


@pytest.mark.parametrize("n_split_merge", [0, 2], ids=["gibbs", "gibbs+split-merge"])
def test_engine_with_a_custom_provider_matches_exact_enumeration(n_split_merge):
    exact = exact_posterior(X6.astype(float), 1.0, 0.5, 1.5, PAIRS)
    Z, chain = sample(n_split_merge, 30_000, seed=3)
    keys, counts = np.unique([canonical_labels(z) for z in Z[500:]], axis=0, return_counts=True)
    emp = {tuple(k.tolist()): c / counts.sum() for k, c in zip(keys, counts)}
    tv = 0.5 * sum(abs(exact.get(k, 0.0) - emp.get(k, 0.0)) for k in set(exact) | set(emp))
    assert tv < 0.03
    # the hard cannot-link holds in every sample, and the slots were recycled and grown
    assert (Z[:, 1] != Z[:, 3]).all()
    assert chain.capacity > 4


def test_custom_provider_stays_out_of_the_disk_cache():
    sample(1, 3, seed=0)
    for entry in gibbs._PROVIDERS.values():
        for kernel in entry["kernels"]:
            assert not (entry["cache"] and any("PoissonGammaState" in str(sig) for sig in kernel.signatures))
    kernels = gibbs._PROVIDERS[PoissonGammaState]["kernels"]
    assert any("PoissonGammaState" in str(sig) for sig in kernels[0].signatures)
    assert all(type(k._cache).__name__ == "NullCache" for k in kernels)  # numba's "no disk cache"


def test_unregistered_state_and_bad_hooks_are_refused():
    class Unregistered(NamedTuple):
        x: np.ndarray

    class Prov:
        state = Unregistered(np.zeros(3))

    with pytest.raises(InvalidParameterError, match="not a registered Gibbs provider"):
        GibbsChain(Prov(), 2, 3).sweep(np.arange(2), np.zeros(2), gibbs.no_side_information(2))
    with pytest.raises(InvalidParameterError, match="NamedTuple"):
        register_provider(dict, scores=pg_scores, add=pg_add)
    with pytest.raises(InvalidParameterError, match="hook 'scores'"):
        register_provider(Unregistered, scores=lambda *args: None, add=pg_add)


def test_kernels_leave_the_reference_counts_of_the_state_as_they_were():
    # the kernels borrow the state's arrays (no reference counting inside): a sweep and a
    # split-merge pass must neither leak nor drop a reference
    prov = PoissonGamma(X6, a=1.0, b=0.5, alpha=1.5, capacity=16)
    chain = GibbsChain(prov, len(X6), capacity=16, first_slot=prov.first_slot)
    adj = side_csr(len(X6), PAIRS)
    rng = np.random.default_rng(0)
    chain.sweep(rng.permutation(len(X6)), rng.random(len(X6)), adj)
    arrays = [prov.X, prov.lfact, prov.cn, prov.cs, chain.z, chain.active, chain.side, chain.logw, *adj]
    before = [sys.getrefcount(a) for a in arrays]
    for _ in range(50):
        chain.sweep(rng.permutation(len(X6)), rng.random(len(X6)), adj)
        chain.split_merge(adj, 2, int(rng.integers(2**31 - 1)), scratch=1)
    assert chain.capacity == 16  # no growth: the same arrays throughout
    assert [sys.getrefcount(a) for a in arrays] == before
