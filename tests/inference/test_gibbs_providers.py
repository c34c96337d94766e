"""Kernels of the package's Gibbs providers checked against their general forms: the
dd-MMDPM sparse (k-NN, graph) prior of the Gibbs hook, which works only on the clusters
a node's neighbours and constraint partners are in, gives the general prior's values
bit for bit."""

import numpy as np
import pytest

from graphclust.potentials.ddmmdpm import _SPARSE, _node_log_prior, _sparse_log_prior


def _random_case(rng, n=40, slots=12):
    # symmetric sparse log-decays, per-node log floors (some -inf), node slots (some
    # detached), constraints of every kind, a few active slots without members
    A = np.triu(rng.random((n, n)) < 0.2, 1)
    A = A | A.T
    ptr = np.concatenate([[0], np.cumsum(A.sum(1))]).astype(np.int64)
    idx = np.nonzero(A)[1].astype(np.int64)
    lfv = -rng.exponential(1.0, size=len(idx))
    lfloor = np.where(rng.random(n) < 0.2, -np.inf, -3.0 - rng.random(n))
    pri = (np.zeros((1, 1)), ptr, idx, lfv, lfloor)
    C = np.triu(rng.random((n, n)) < 0.08, 1)
    C = C | C.T
    w = np.triu(rng.choice([-np.inf, -1.5, -0.5, 0.7, 2.0], size=(n, n)), 1)
    w = w + w.T
    sp_ptr = np.concatenate([[0], np.cumsum(C.sum(1))]).astype(np.int64)
    sp_idx = np.nonzero(C)[1].astype(np.int64)
    side = (sp_ptr, sp_idx, w[C].astype(np.float64))
    zn = rng.integers(-1, slots - 2, size=n).astype(np.int64)
    active = np.unique(np.concatenate([zn[zn >= 0], [slots - 2, slots - 1]])).astype(np.int64)
    size = np.bincount(zn[zn >= 0], minlength=slots).astype(np.float64) + 0.5
    return pri, side, zn, active, size


def _work(slots):
    return np.empty(slots), np.empty(slots), np.empty(slots), np.empty(slots), np.zeros(slots, np.bool_)


@pytest.mark.parametrize("use_max", [True, False], ids=["g_max", "g_sum"])
def test_sparse_prior_of_the_gibbs_hook_equals_the_general_prior_bit_for_bit(use_max):
    rng = np.random.default_rng(5)
    slots = 12
    for _ in range(5):
        pri, side, zn, active, size = _random_case(rng, slots=slots)
        mark = np.zeros(slots, np.bool_)
        work = _work(slots)  # shared across nodes, as in the sampler
        for i in range(len(zn)):
            zi = zn.copy()
            zi[i] = -1  # node i is the one being scored
            want = np.full(slots, np.nan)
            _node_log_prior(i, _SPARSE, use_max, pri, side, zi, size, active, len(active), _work(slots), want)
            got = np.full(slots, np.nan)
            _sparse_log_prior(i, use_max, pri, side, zi, active, len(active), work, mark, got)
            assert np.array_equal(got[active], want[active])  # -inf and floors included, bit for bit
            assert np.isnan(got[np.setdiff1d(np.arange(slots), active)]).all()  # inactive slots untouched
            assert not mark.any()
