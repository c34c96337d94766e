"""DCP: incremental Cholesky scores against from-scratch determinants, the Gibbs
sampler against exact enumeration of the partition posterior, hard constraints,
the exchange algorithm on a kernel whose posterior over tau is the prior, the HMRF
provider against brute-force leave-one-out determinants, and bad input."""

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.bayesian import SamplerItems
from graphclust.dcp import _SplitMerge
from graphclust.potentials.dcp import _no_adjacency, _partition_logdet, _se_kernel, _singleton_items, _Store
from graphclust.errors import InfeasibleConstraintsError, InvalidFeaturesError, InvalidParameterError


def set_partitions(n):
    """All partitions of n items as restricted-growth label arrays."""
    out = []

    def rec(prefix, top):
        if len(prefix) == n:
            out.append(np.array(prefix))
            return
        for lab in range(top + 2):
            rec(prefix + [lab], max(top, lab))

    rec([0], 0)
    return out


def logdet_partition(K, labels):
    return sum(np.linalg.slogdet(K[np.ix_(labels == c, labels == c)])[1] for c in np.unique(labels))


def blobs(n_per=6, seed=0):
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(0, 0.3, (n_per, 2)), rng.normal(3, 0.3, (n_per, 2))])
    return X, np.repeat([0, 1], n_per)


# ---------------------------------------------------------------------------- Cholesky caches
def test_incremental_scores_equal_logdet_differences(rng):
    """After a long random sequence of appends and deletions every cached factor equals
    chol(K_C) of its members, and the score of a node equals logdet(K_{C+x}) - logdet(K_C)."""
    X = rng.normal(size=(14, 3))
    K = _se_kernel(X, np.array([1.3]), 1e-6)
    iptr, inodes = _singleton_items(14)
    st = _Store(K, iptr, inodes, 1e-6)
    labels = rng.integers(0, 3, 14)
    st.set_labels(labels)
    from graphclust.potentials.dcp import _append, _node_scores, _remove_node

    for _ in range(300):
        i = int(rng.integers(14))
        _remove_node(st.facs, st.mems, st.size, st.pos, st.zn, i, st.x)
        _append(K, st.facs, st.mems, st.size, st.pos, st.zn, int(rng.integers(3)), i, st.floor)
    for k in range(3):
        m = st.size[k]
        members = st.mems[k][:m]
        U = np.triu(st.facs[k][:m, :m])  # the factor is stored as U = L^T
        np.testing.assert_allclose(U.T @ U, K[np.ix_(members, members)], atol=1e-9)
    # score of a node taken out of its cluster, against every cluster and a new one
    i = 5
    _remove_node(st.facs, st.mems, st.size, st.pos, st.zn, i, st.x)
    slots = np.array([0, 1, 2, st.n_slots - 1], dtype=np.int64)
    out = np.empty(4)
    _node_scores(K, st.facs, st.mems, st.size, st.pos, st.zn, i, slots, st.floor, out)
    for j, k in enumerate(slots[:3]):
        C = st.mems[k][:st.size[k]]
        expect = np.linalg.slogdet(K[np.ix_(np.r_[C, i], np.r_[C, i])])[1] - np.linalg.slogdet(K[np.ix_(C, C)])[1]
        assert out[j] == pytest.approx(expect, abs=1e-9)
    assert out[3] == pytest.approx(np.log(K[i, i]))
    # Λ from the caches equals the from-scratch partition log-determinant
    st.set_labels(labels)
    assert st.logdet() == pytest.approx(logdet_partition(K, labels), abs=1e-8)
    assert _partition_logdet(K, labels, 1e-6) == pytest.approx(logdet_partition(K, labels), abs=1e-8)


def test_merging_never_lowers_the_score(rng):
    """Fischer's inequality: logdet K_{A∪B} <= logdet K_A + logdet K_B."""
    for _ in range(50):
        X = rng.normal(size=(8, 2))
        K = _se_kernel(X, np.array([rng.uniform(0.3, 3.0)]), 1e-6)
        labels = rng.integers(0, 3, 8)
        merged = np.where(labels == 2, 1, labels)
        assert _partition_logdet(K, merged, 1e-6) <= _partition_logdet(K, labels, 1e-6) + 1e-9


# ---------------------------------------------------------------------------- exact enumeration
def exact_posterior(K, tau, n, must=(), cannot=(), soft=(), log_alpha=0.0):
    """``Π_C α det(K_C)^(−τ) · exp(Σ w)`` over all partitions of ``n`` nodes, normalised."""
    parts = set_partitions(n)
    logp = []
    for z in parts:
        if any(z[a] != z[b] for a, b in must) or any(z[a] == z[b] for a, b in cannot):
            logp.append(-np.inf)
            continue
        logp.append(-tau * logdet_partition(K, z) + log_alpha * len(np.unique(z))
                    + sum(w for a, b, w in soft if z[a] == z[b]))
    logp = np.array(logp)
    p = np.exp(logp - logp.max())
    return {tuple(z): q for z, q in zip(parts, p / p.sum())}


def empirical(samples):
    keys, counts = np.unique(samples, axis=0, return_counts=True)
    return {tuple(k): c / counts.sum() for k, c in zip(keys, counts)}


def tv(p, q):
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def test_gibbs_matches_exact_enumeration_unconstrained(global_random_seed):
    """5 points, 52 partitions: sampled frequencies vs  Π det(K_C)^(-τ)."""
    X = np.array([[0.0, 0.0], [0.4, 0.1], [1.2, 0.9], [2.0, 2.1], [2.3, 1.8]])
    tau, ell = 1.5, 0.8
    est = gc.DCP(tau=tau, lengthscale=ell, standardize=False, learn_tau=False, learn_lengthscale=False,
                 concentration=1.0, split_merge=0, n_iter=12000, burn_in=200, random_state=global_random_seed).fit(X)
    K = _se_kernel(X, np.array([ell]), 1e-6)
    exact = exact_posterior(K, tau, 5)
    assert tv(empirical(est.samples_), exact) < 0.04
    # the posterior of the number of clusters matches too
    ks = {}
    for z, q in exact.items():
        ks[len(set(z))] = ks.get(len(set(z)), 0.0) + q
    for k, q in ks.items():
        assert est.n_clusters_posterior_[k] == pytest.approx(q, abs=0.03)


def test_gibbs_matches_exact_enumeration_with_constraints(global_random_seed):
    """Must-link block (0, 1), hard cannot-link (1, 4), soft must-link (2, 3) of weight 0.7."""
    X = np.array([[0.0, 0.0], [0.4, 0.1], [1.2, 0.9], [2.0, 2.1], [2.3, 1.8]])
    tau, ell = 1.0, 1.0
    S = gc.SideInfo([(0, 1, np.inf), (1, 4, -np.inf), (2, 3, 0.7)])
    est = gc.DCP(tau=tau, lengthscale=ell, standardize=False, learn_tau=False, learn_lengthscale=False,
                 concentration=1.0, split_merge=0, n_iter=10000, burn_in=200,
                 random_state=global_random_seed).fit(X, S)
    K = _se_kernel(X, np.array([ell]), 1e-6)
    exact = exact_posterior(K, tau, 5, must=[(0, 1)], cannot=[(1, 4)], soft=[(2, 3, 0.7)])
    assert tv(empirical(est.samples_), exact) < 0.04


def test_split_merge_moves_keep_the_exact_posterior(global_random_seed):
    """Split-merge proposals dominating the sweeps (20 per sweep) still sample
    Π det(K_C)^(-τ) · exp(Σ w) within the hard constraints: block (0, 1), hard
    cannot-link (1, 4), soft must-link (2, 3) and soft cannot-link (0, 3). A wrong
    proposal ratio (dropping log q) gives a total variation of about 0.27 on the
    unconstrained version of this problem."""
    X = np.array([[0.0, 0.0], [0.4, 0.1], [1.2, 0.9], [2.0, 2.1], [2.3, 1.8]])
    tau, ell = 1.0, 1.0
    S = gc.SideInfo([(0, 1, np.inf), (1, 4, -np.inf), (2, 3, 0.7), (0, 3, -0.5)])
    est = gc.DCP(tau=tau, lengthscale=ell, standardize=False, concentration=1.0, split_merge=20, n_iter=2500,
                 burn_in=100, random_state=global_random_seed).fit(X, S)
    K = _se_kernel(X, np.array([ell]), 1e-6)
    exact = exact_posterior(K, tau, 5, must=[(0, 1)], cannot=[(1, 4)], soft=[(2, 3, 0.7), (0, 3, -0.5)])
    assert tv(empirical(est.samples_), exact) < 0.05
    info = est.result_.info
    assert 0.0 < info["accept_split"] < 1.0 and 0.0 < info["accept_merge"] < 1.0


@pytest.mark.parametrize("log_alpha", [1.3, -1.1], ids=["reward", "cost"])
@pytest.mark.parametrize("split_merge", [0, 20], ids=["gibbs", "split-merge"])
def test_cluster_term_matches_exact_enumeration(log_alpha, split_merge, global_random_seed):
    """The per-cluster factor α: Gibbs sweeps alone, and split-merge proposals
    dominating them, sample Π_C α det(K_C)^(−τ) · exp(Σ w) within the hard constraints
    (block (0, 1), hard cannot-link (1, 4), soft must-link (2, 3), soft cannot-link
    (0, 3)), for α > 1 and α < 1. The enumeration without the factor is far from it,
    so the test can tell them apart."""
    X = np.array([[0.0, 0.0], [0.4, 0.1], [1.2, 0.9], [2.0, 2.1], [2.3, 1.8]])
    tau, ell = 1.0, 1.0
    side = [(0, 1, np.inf), (1, 4, -np.inf), (2, 3, 0.7), (0, 3, -0.5)]
    est = gc.DCP(tau=tau, lengthscale=ell, standardize=False, concentration=float(np.exp(log_alpha)),
                 split_merge=split_merge, n_iter=6000 if split_merge == 0 else 2500, burn_in=100,
                 random_state=global_random_seed).fit(X, gc.SideInfo(side))
    assert est.log_alpha_ == pytest.approx(log_alpha)
    K = _se_kernel(X, np.array([ell]), 1e-6)
    kw = dict(must=[(0, 1)], cannot=[(1, 4)], soft=[(2, 3, 0.7), (0, 3, -0.5)])
    exact = exact_posterior(K, tau, 5, log_alpha=log_alpha, **kw)
    assert tv(empirical(est.samples_), exact) < 0.05
    assert tv(exact, exact_posterior(K, tau, 5, **kw)) > 0.1
    if split_merge:
        info = est.result_.info
        assert 0.0 < info["accept_split"] < 1.0 and 0.0 < info["accept_merge"] < 1.0


def test_cluster_term_is_the_gibbs_conditional():
    """One node's conditional, read off the sampler's scores, is the ratio of the
    enumerated joints: joining cluster k of the rest against opening a new cluster,
    log α − τ (log det K_{C∪x} − log det K_C) against log α − τ log k(x, x)."""
    from graphclust.potentials.dcp import _node_scores

    rng = np.random.default_rng(3)
    X = rng.normal(size=(7, 2))
    tau, log_alpha = 1.7, 0.9
    K = _se_kernel(X, np.array([1.1]), 1e-6)
    rest = np.array([0, 0, 1, 1, 1, 2, -1])  # node 6 is out
    st = _Store(K, *_singleton_items(7), 1e-6)
    st.set_labels(rest)
    slots = np.array([0, 1, 2, st.n_slots - 1], dtype=np.int64)
    out = np.empty(4)
    _node_scores(K, st.facs, st.mems, st.size, st.pos, st.zn, 6, slots, st.floor, out)
    sampler = -tau * out
    sampler[3] += log_alpha  # what _gibbs_scores adds to the new-cluster option

    def log_joint(z):
        return -tau * logdet_partition(K, z) + log_alpha * len(np.unique(z))

    joints = np.array([log_joint(np.r_[rest[:6], k]) for k in (0, 1, 2, 3)])
    np.testing.assert_allclose(sampler - sampler[3], joints - joints[3], atol=1e-8)


def test_concentration_one_is_the_dcp_without_the_term():
    """α = 1 switches the term off. The recorded draws of tests/test_sampler_items.py and
    tests/inference/test_gibbs_recorded_samples.py (recorded before the term existed)
    pin ``concentration=1.0`` and are reproduced bit for bit; here log α is 0, the log
    joint has no cluster term, and another α changes the draws."""
    X, _ = blobs(6, 2)
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 9)], weight=1.0)
    kw = dict(tau=2.0, lengthscale=1.0, standardize=False, constraint_weight=1.0, n_iter=20, random_state=0)
    off = gc.DCP(concentration=1.0, **kw).fit(X, S)
    assert off.log_alpha_ == 0.0 and off.result_.info["log_alpha"] == 0.0
    K = off._spec.matrix(np.array([1.0]))
    for z, lj in zip(off.samples_, off.result_.info["log_joint"][0, 10:]):
        want = -2.0 * logdet_partition(K, z) + (1.0 if z[0] == z[1] else 0.0) - (1.0 if z[0] == z[9] else 0.0)
        assert lj == pytest.approx(want, abs=1e-8)
    on = gc.DCP(concentration=np.exp(3.0), **kw).fit(X, S)
    assert not np.array_equal(off.samples_, on.samples_)


def test_split_merge_separates_far_groups_that_gibbs_leaves_merged():
    """Issue #26: two far blobs in one cluster, 16 soft cannot-links across. Far
    apart they are independent under the kernel, so merged and split have the same
    determinants and the cannot-links favour the split by e^16; yet single-node Gibbs
    moves never separate them (each node is held by its blob), while a split proposal
    is accepted within a few moves."""
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0.0, 0.3, (8, 2)), rng.normal(8.0, 0.3, (8, 2))])
    y = np.repeat([0, 1], 8)
    cannot = [(i, 8 + (i + j) % 8) for i in range(8) for j in range(2)]
    P = gc.Problem.from_array(X, gc.SideInfo.from_pairs(cannot=cannot, weight=1.0))
    items = SamplerItems(P)
    st = _Store(_se_kernel(X, np.array([1.0]), 1e-6), items.ptr, items.members, 1e-6)
    st.set_labels(np.zeros(16, dtype=np.int64))
    for _ in range(50):
        st.sweep(rng.permutation(16), rng.random(16), items.side, 4.0)
    assert st.n_clusters == 1
    moves = _SplitMerge(16, items.ptr, items.members, items.side)
    for _ in range(30):
        moves.move(st, 4.0, rng)
    assert gc.ari(y, st.node_labels()) == 1.0
    assert moves.accepted[0] >= 1


def test_defaults_recover_planted_blobs_where_the_old_defaults_fragment():
    """Issue #26: three blobs of 40 points in 6 dimensions, 120 soft constraints from
    the truth with 10 % flipped. The old defaults (τ = 1 and the lengthscale learnt,
    Gibbs sweeps only) break them into dozens of small clusters; the defaults (τ
    chosen on held-out constraints, split-merge moves) keep the blobs apart with a
    few stray points."""
    X, y = gc.datasets.make_blobs(120, 3, n_features=6, separation=5.0, random_state=1)
    S = gc.SideInfo.sample(y, 120, noise=0.1, random_state=1)
    est = gc.DCP(random_state=0).fit(X, S)
    assert gc.ari(y, est.labels_) > 0.6 and est.n_clusters_ <= 12
    assert est.result_.info["tau_start"] in (2.0, 4.0, 8.0) and "tau_cv" in est.result_.info
    old = gc.DCP(tau=1.0, learn_tau=True, learn_lengthscale=True, split_merge=0, concentration=1.0,
                 constraint_weight=1.0, n_iter=200, random_state=0).fit(X, S)
    assert old.n_clusters_ >= 30 and gc.ari(y, old.labels_) < 0.1


def test_tempered_constraints_keep_neighbouring_blobs_apart():
    """Issue #26: with the soft constraints at weight 1 the kernel term, scaled by
    τ = 4, outweighs the ~46 cannot-links between neighbouring blobs and two of the
    three are merged (ARI 0.57, 2 clusters); constraint_weight="tau" tempers the
    constraints with the kernel and keeps the blobs apart."""
    X, y = gc.datasets.make_blobs(90, 3, n_features=6, separation=4.0, random_state=1)
    S = gc.SideInfo.sample(y, 60, random_state=1)
    untempered = gc.DCP(tau=4.0, constraint_weight=1.0, random_state=0).fit(X, S)
    assert untempered.n_clusters_ <= 2 and gc.ari(y, untempered.labels_) < 0.7
    est = gc.DCP(tau=4.0, constraint_weight="tau", random_state=0).fit(X, S)
    assert est.result_.info["constraint_weight"] == 4.0
    assert est.n_clusters_ == 3 and gc.ari(y, est.labels_) > 0.9


def test_constraint_weight_scales_the_soft_constraints_exactly(global_random_seed):
    """The sampler at τ = 1.5 with constraint_weight="tau" samples the DCP whose soft
    weights are multiplied by 1.5 (exact enumeration); hard constraints unchanged."""
    X = np.array([[0.0, 0.0], [0.4, 0.1], [1.2, 0.9], [2.0, 2.1], [2.3, 1.8]])
    tau, ell = 1.5, 1.0
    S = gc.SideInfo([(1, 4, -np.inf), (2, 3, 0.7), (0, 3, -0.5)])
    est = gc.DCP(tau=tau, lengthscale=ell, standardize=False, constraint_weight="tau", concentration=1.0,
                 n_iter=2500, burn_in=100, random_state=global_random_seed).fit(X, S)
    K = _se_kernel(X, np.array([ell]), 1e-6)
    exact = exact_posterior(K, tau, 5, cannot=[(1, 4)], soft=[(2, 3, 0.7 * tau), (0, 3, -0.5 * tau)])
    assert tv(empirical(est.samples_), exact) < 0.05
    unscaled = exact_posterior(K, tau, 5, cannot=[(1, 4)], soft=[(2, 3, 0.7), (0, 3, -0.5)])
    assert tv(exact, unscaled) > 0.05  # the test can tell the two apart


def test_neighbour_information_is_the_gp_information_about_the_nearest_neighbours(rng):
    """The data rule behind concentration="auto": the 10 % quantile over the nodes of
    log(k(x, x) / s_N(x)), N the 3 nodes nearest to x, by brute force."""
    from graphclust.potentials.dcp import _neighbour_information

    X = rng.normal(size=(40, 3))
    K = _se_kernel(X, np.array([0.9]), 1e-6)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    info = []
    for i in range(40):
        N = np.argsort(D[i])[1:4]
        s = K[i, i] - K[i, N] @ np.linalg.solve(K[np.ix_(N, N)], K[N, i])
        info.append(np.log(K[i, i] / s))
    assert _neighbour_information(K, 1e-6) == pytest.approx(np.quantile(info, 0.1), rel=1e-9)
    # amplitude-free, like the sampler's conditionals
    assert _neighbour_information(3.0 * K, 3e-6) == pytest.approx(np.quantile(info, 0.1), rel=1e-9)


def test_concentration_auto_rule():
    """Without cannot-links log α = τ times the neighbour information (a reward per
    cluster); with a cannot-link (soft or hard) log α = −2 c, c the constraint weight
    factor (τ by default): a cluster costs two unit cannot-links."""
    from graphclust.potentials.dcp import _neighbour_information

    X, _ = blobs(6, 3)
    est = gc.DCP(tau=3.0, n_iter=4, random_state=0).fit(X)
    K = est._spec.matrix(np.array([est.lengthscale_[0]]))
    info = _neighbour_information(K, est._spec.floor)
    assert info > 0 and est.result_.info["split_information"] == pytest.approx(info)
    assert est.log_alpha_ == pytest.approx(3.0 * info)
    must = gc.SideInfo.from_pairs(must=[(0, 1)], weight=1.0)
    assert gc.DCP(tau=3.0, n_iter=4, random_state=0).fit(X, must).log_alpha_ == pytest.approx(3.0 * info)
    cannot = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 8)], weight=1.0)
    assert gc.DCP(tau=3.0, n_iter=4, random_state=0).fit(X, cannot).log_alpha_ == -6.0
    assert gc.DCP(tau=3.0, constraint_weight=1.0, n_iter=4, random_state=0).fit(X, cannot).log_alpha_ == -2.0
    labels = gc.SideInfo.from_labels({0: "a", 8: "b"})  # hard cannot-links
    assert gc.DCP(tau=3.0, n_iter=4, random_state=0).fit(X, labels).log_alpha_ == -6.0
    assert gc.DCP(tau=3.0, concentration=0.5, n_iter=4, random_state=0).fit(X, labels).log_alpha_ == np.log(0.5)


def test_tau_auto_without_constraints_is_the_fallback():
    X, _ = blobs(5, 7)
    est = gc.DCP(n_iter=10, random_state=0).fit(X)
    assert est.tau_ == 4.0 and "tau_cv" not in est.result_.info
    assert est.result_.info["constraint_weight"] == 4.0  # "tau"
    assert not est.result_.info["tau"][0].std()  # not learnt by default


# ---------------------------------------------------------------------------- constraints
def test_hard_constraints_hold_in_every_sample(global_random_seed):
    X, y = blobs(8, global_random_seed)
    labelled = {0: 0, 1: 0, 8: 1, 9: 1, 4: 2}
    S = gc.SideInfo.from_labels(labelled)
    est = gc.DCP(n_iter=40, n_aux_sweeps=2, random_state=global_random_seed).fit(X, S)
    Z = est.samples_
    assert (Z[:, 0] == Z[:, 1]).all() and (Z[:, 8] == Z[:, 9]).all()
    assert (Z[:, 0] != Z[:, 8]).all() and (Z[:, 0] != Z[:, 4]).all() and (Z[:, 8] != Z[:, 4]).all()
    assert (est.n_clusters_posterior_[:3] == 0).all()  # at least as many clusters as labels
    assert est.result_.violations.n_violated == 0


def test_semi_supervised_blobs_and_prediction():
    X, y = blobs(10, 1)
    S = gc.SideInfo.from_labels({0: "a", 10: "b"})
    est = gc.DCP(tau=2.0, learn_tau=False, learn_lengthscale=False, n_iter=60, random_state=0).fit(X, S)
    assert gc.ari(y, est.labels_) == pytest.approx(1.0)
    pred = est.predict(np.array([[0.1, 0.0], [3.0, 3.1]]), random_state=0)
    assert pred[0] == est.labels_[0] and pred[1] == est.labels_[10]
    Z = est.predict_samples(np.array([[0.1, 0.0]]), max_samples=5, random_state=0)
    assert Z.shape == (5, 21)


def test_reproducible_and_seed_dependent():
    X, _ = blobs(6, 2)
    kw = dict(learn_tau=True, learn_lengthscale=True, n_iter=20, n_aux_sweeps=1)  # the exchange moves draw too
    a = gc.DCP(random_state=3, **kw).fit(X)
    b = gc.DCP(random_state=3, **kw).fit(X)
    np.testing.assert_array_equal(a.samples_, b.samples_)
    np.testing.assert_array_equal(a.result_.info["tau"], b.result_.info["tau"])
    c = gc.DCP(random_state=4, **kw).fit(X)
    assert not np.array_equal(a.result_.info["tau"], c.result_.info["tau"])


def test_kernel_scale_invariance():
    """Scaling a precomputed kernel by α (relative jitter) leaves every conditional,
    hence every sample, unchanged."""
    X, _ = blobs(5, 3)
    K = _se_kernel(X, np.array([1.0]), 0.0)
    kw = dict(learn_tau=False, n_iter=30, random_state=0)
    a = gc.DCP(kernel=K, **kw).fit(X)
    b = gc.DCP(kernel=7.5 * K, **kw).fit(X)
    np.testing.assert_array_equal(a.samples_, b.samples_)


# ---------------------------------------------------------------------------- exchange
def test_exchange_on_the_delta_kernel_samples_the_tau_prior():
    """K = I gives f(S) = 1 for every partition: the exchange chain over τ must then
    target the prior, log τ ~ N(0.5, 0.8²)."""
    n = 6
    est = gc.DCP(kernel=np.eye(n), tau=1.0, learn_tau=True, split_merge=0, tau_prior=(0.5, 0.8), n_aux_sweeps=1,
                 n_iter=3000, burn_in=300, random_state=1).fit(np.zeros((n, 1)))
    kept = np.log(est.result_.info["tau"][0, 300:])
    assert kept.mean() == pytest.approx(0.5, abs=0.15)
    assert kept.std() == pytest.approx(0.8, abs=0.15)
    # the delta kernel makes the DCP uniform over partitions: Bell(6) = 203
    assert est.n_clusters_posterior_[1] == pytest.approx(1 / 203, abs=0.01)


def test_exchange_without_labels_samples_the_prior():
    """Without constraints the marginal posterior of ψ = (ℓ, τ) is its prior (the
    partition integrates out: Σ_S f(S; ψ)/Z(ψ) = 1), for any kernel; with near-exact
    auxiliary draws (4 points, 10 sweeps) the exchange chain must recover
    log τ ~ N(0.3, 0.7²) and log ℓ ~ N(log 1, 0.5²)."""
    X = np.array([[0.0, 0.0], [0.5, 0.2], [1.5, 1.0], [2.5, 2.2]])
    est = gc.DCP(tau=1.0, lengthscale=1.0, standardize=False, learn_tau=True, learn_lengthscale=True,
                 split_merge=0, tau_prior=(0.3, 0.7), lengthscale_prior_sd=0.5, n_aux_sweeps=8, n_iter=3000,
                 burn_in=300, random_state=0).fit(X)
    info = est.result_.info
    log_tau, log_ell = np.log(info["tau"][0, 300:]), np.log(info["lengthscale"][0, 300:, 0])
    assert log_tau.mean() == pytest.approx(0.3, abs=0.15) and log_tau.std() == pytest.approx(0.7, abs=0.15)
    assert log_ell.mean() == pytest.approx(0.0, abs=0.12) and log_ell.std() == pytest.approx(0.5, abs=0.1)


@pytest.mark.parametrize("ell0", [2.0, 0.125], ids=["from-above", "from-below"])
def test_exchange_moves_the_lengthscale_towards_a_planted_value(ell0):
    """Partitions drawn from the DCP at a known lengthscale ℓ* = 0.5 (60 sweeps of the
    unconstrained sampler at τ = 2 on 60 uniform points), three quarters of the nodes
    labelled by the draw: started 4 times too long or too short, the learnt ℓ ends
    much closer to ℓ* than it started (a weak prior, log-sd 2, centred on the start)."""
    rng = np.random.default_rng(0)
    n, ell_star = 60, 0.5
    X = rng.uniform(0.0, 4.0, (n, 2))
    st = _Store(_se_kernel(X, np.array([ell_star]), 1e-6), *_singleton_items(n), 1e-6)
    for _ in range(60):
        st.sweep(rng.permutation(n), rng.random(n), _no_adjacency(n), 2.0)
    z = st.node_labels()
    S = gc.SideInfo.from_labels({i: int(z[i]) for i in range(n) if i % 4})
    est = gc.DCP(tau=2.0, learn_tau=False, learn_lengthscale=True, split_merge=0, lengthscale=ell0,
                 standardize=False, lengthscale_prior_sd=2.0, n_iter=300, n_aux_sweeps=3, random_state=0).fit(X, S)
    start, learnt = abs(np.log(ell0 / ell_star)), abs(np.log(est.lengthscale_[0] / ell_star))
    assert learnt < 0.25 * start


def test_exchange_learns_a_lengthscale_and_traces():
    X, y = blobs(10, 4)
    est = gc.DCP(ard=True, learn_tau=True, learn_lengthscale=True, n_iter=40, n_aux_sweeps=2, n_chains=1,
                 random_state=0).fit(X)
    info = est.result_.info
    assert info["lengthscale"].shape == (1, 40, 2) and est.lengthscale_.shape == (2,)
    assert 0.0 <= info["accept_lengthscale"] <= 1.0 and 0.0 <= info["accept_tau"] <= 1.0
    assert info["n_clusters"].shape == (1, 40)
    assert est.coclustering().shape == (20, 20)


def test_chains_pool_their_samples_and_coclustering_agrees():
    X, _ = blobs(5, 6)
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 9)], weight=np.inf)
    est = gc.DCP(n_chains=2, n_iter=20, burn_in=10, thin=2, n_aux_sweeps=1, random_state=0).fit(X, S)
    assert est.samples_.shape == (2 * 5, 10) and est.result_.info["tau"].shape == (2, 20)
    P = est.coclustering()
    Z = est.samples_
    np.testing.assert_allclose(P, (Z[:, :, None] == Z[:, None, :]).mean(0))
    assert est.coclustering_[0, 1] == 1.0 and est.coclustering_[0, 9] == 0.0
    np.testing.assert_allclose(est.coclustering([[2, 7]]), P[2, 7])


# ---------------------------------------------------------------------------- graph kernels
@pytest.mark.parametrize("kernel", ["heat", "regularized_laplacian"])
def test_graph_kernel_without_features(kernel):
    G = nx.barbell_graph(5, 0)
    S = gc.SideInfo.from_labels({0: 0, 9: 1})
    est = gc.DCP(kernel=kernel, graph_scale=5.0, tau=2.0, n_iter=40, random_state=0).fit(G, S)
    assert est.kernel_ == kernel and est.lengthscale_ is None
    assert est.labels_[0] != est.labels_[9]
    with pytest.raises(InvalidParameterError, match="kernel='se'"):
        est.predict([[0.0]])


# ---------------------------------------------------------------------------- HMRF provider
def test_provider_unary_is_the_leave_one_out_log_variance(rng):
    X = rng.normal(size=(9, 2))
    P = gc.Problem.from_array(X)
    pot = gc.DCPKernel(3, tau=1.7, lengthscale=0.9)
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    pot.update(P, labels)
    U = pot.unary(P)
    K = pot.kernel_matrix(P)
    for i in range(9):
        for c in range(3):
            C = np.flatnonzero((labels == c) & (np.arange(9) != i))
            full = np.r_[C, i]
            s = np.linalg.slogdet(K[np.ix_(full, full)])[1] - np.linalg.slogdet(K[np.ix_(C, C)])[1]
            assert U[i, c] == pytest.approx(1.7 * s, abs=1e-7)
    # the incremental interface agrees with the batch unary, new cluster last
    pot.start(P, labels)
    sc = pot.scores(4)
    np.testing.assert_allclose(sc[:3], U[4], atol=1e-7)
    assert sc[3] == pytest.approx(1.7 * np.log(K[4, 4]))
    pot.remove(4)
    pot.add(4, 3)
    assert pot.n_clusters == 4
    assert pot.logdet() == pytest.approx(logdet_partition(K, np.where(np.arange(9) == 4, 3, labels)), abs=1e-8)


def test_provider_in_hmrf():
    X, y = blobs(8, 5)
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 15)])
    est = gc.HMRF(gc.DCPKernel(2, lengthscale=1.0), inference="icm", random_state=0).fit(X, S)
    assert gc.ari(y, est.labels_) == pytest.approx(1.0)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    ({"lengthscale": 0.0}, "lengthscale of DCP must be > 0"),
    ({"lengthscale": [1.0, -2.0]}, "lengthscale of DCP must be > 0"),
    ({"lengthscale": "wide"}, "lengthscale of DCP must be None, a number > 0"),
    ({"tau": 0.0}, "tau of DCP must be > 0"),
    ({"tau": -1.0}, "tau of DCP must be > 0"),
    ({"tau": "hot"}, "tau of DCP must be 'auto' or a number > 0"),
    ({"split_merge": -1}, "split_merge of DCP"),
    ({"constraint_weight": "auto"}, "constraint_weight of DCP must be 'tau' or a number >= 0"),
    ({"concentration": 0.0}, "concentration of DCP must be > 0"),
    ({"concentration": "dp"}, "concentration of DCP must be 'auto' or a number > 0"),
    ({"kernel": "rbf"}, "kernel of DCP must be one of"),
    ({"burn_in": 10, "n_iter": 10}, "burn_in of DCP"),
])
def test_bad_parameters(params, match):
    X, _ = blobs(3)
    with pytest.raises(InvalidParameterError, match=match):
        gc.DCP(**params).fit(X)


def test_bad_kernels_and_data():
    X, _ = blobs(3)
    bad = 2 * np.ones((6, 6)) - np.eye(6)  # eigenvalues 11 and -1 (x5): indefinite
    with pytest.raises(InvalidParameterError, match="not positive semi-definite"):
        gc.DCP(kernel=bad).fit(X)
    with pytest.raises(InvalidParameterError, match="shape"):
        gc.DCP(kernel=np.eye(5)).fit(X)
    with pytest.raises(InvalidParameterError, match=r"K\[2, 2\] = 0"):
        gc.DCP(kernel=np.diag([1.0, 1, 0, 1, 1, 1])).fit(X)
    with pytest.raises(InvalidParameterError, match="3 entries but the data have 2 features"):
        gc.DCP(lengthscale=[1.0, 1.0, 1.0]).fit(X)
    # a singular (rank-one) PSD kernel is fine: the relative jitter keeps K_C positive definite
    est = gc.DCP(kernel=np.ones((6, 6)), n_iter=5, learn_tau=False).fit(X)
    assert np.isfinite(est.result_.history).all()
    with pytest.raises(InvalidParameterError, match="at least 2 nodes"):
        gc.DCP().fit(np.zeros((1, 2)))
    with pytest.raises(InvalidFeaturesError, match="needs node features"):
        gc.DCP(kernel="se").fit(nx.path_graph(4))


def test_all_points_labelled_is_refused():
    X, y = blobs(3)
    S = gc.SideInfo.from_labels(dict(enumerate(y.tolist())))
    with pytest.raises(InvalidParameterError, match="every node is labelled"):
        gc.DCP().fit(X, S)
    with pytest.raises(InfeasibleConstraintsError):
        gc.DCP().fit(X, gc.SideInfo([(0, 1, np.inf), (1, 2, np.inf), (0, 2, -np.inf)]))


@pytest.mark.parametrize("concentration, constraint_weight", [(1.0, 1.0), (0.3, "tau")], ids=["plain", "term"])
def test_history_is_the_log_joint(concentration, constraint_weight):
    """``result_.history``: ``−τ Σ_C log det K_C`` plus ``log α`` per cluster plus the
    weights (times the constraint weight factor) of the soft constraints whose nodes
    share a cluster (one inside a hard must-link block always does), after every
    sweep, from the kept node labels."""
    X, _ = blobs()
    side = [(0, 1, np.inf), (6, 7, np.inf), (2, 3, np.inf), (2, 8, np.inf),  # blocks {0, 1}, {6, 7}, {2, 3, 8}
            (1, 2, 0.6), (0, 7, -0.8), (3, 9, 1.1), (4, 10, -0.5), (5, 11, -np.inf), (3, 8, -0.3)]
    S = gc.SideInfo(side)
    with pytest.warns(UserWarning, match="always be violated"):  # (3, 8), inside a block
        est = gc.DCP(tau=1.5, lengthscale=1.0, learn_tau=False, learn_lengthscale=False, n_iter=8, burn_in=0,
                     n_chains=1, concentration=concentration, constraint_weight=constraint_weight,
                     random_state=0).fit(X, S)
    K = est._spec.matrix(np.array([1.0]))
    cw = 1.5 if constraint_weight == "tau" else constraint_weight
    soft = [(a, b, cw * w) for a, b, w in side if np.isfinite(w)]
    assert len(est.samples_) == len(est.result_.history) == 8
    for z, lj, ls in zip(est.samples_, est.result_.history, est.result_.info["log_score"][0]):
        assert ls == pytest.approx(-1.5 * logdet_partition(K, z), abs=1e-8)
        want = (-1.5 * logdet_partition(K, z) + np.log(concentration) * len(np.unique(z))
                + sum(w for a, b, w in soft if z[a] == z[b]))
        assert lj == pytest.approx(want, abs=1e-8)
    assert est.result_.history != est.result_.info["log_score"][0].tolist()


def test_defaults_separate_sklearn_check_clustering_blobs():
    """Issues #22/#26: scikit-learn's check_clustering data (three blobs, no side
    information). Without the cluster term the DCP merged them into one cluster (ARI
    0); concentration="auto" rewards a cluster by τ times the information a node has
    about its nearest neighbours, and the blobs come apart."""
    from sklearn.datasets import make_blobs
    from sklearn.metrics import adjusted_rand_score
    from sklearn.preprocessing import StandardScaler

    X, y = make_blobs(n_samples=50, random_state=1)
    X = StandardScaler().fit_transform(X)
    est = gc.DCP(random_state=0).fit(X)
    assert adjusted_rand_score(y, est.labels_) > 0.4
    assert est.log_alpha_ > 0 and 2 <= est.n_clusters_ <= 4
    off = gc.DCP(concentration=1.0, random_state=0).fit(X)
    assert off.n_clusters_ <= 2


# ---------------------------------------------------------------------------- issue #22 targets
# K within one of the number of classes and ARI >= 0.7 with the defaults. Measured over
# seeds 0-4 by benchmarks/bench_dcp_defaults.py (docs/dcp.md): wine with 100 clean pairs
# 5/5 (7/10 over 2 draws x 5 sampler seeds), iris with 100 clean pairs 2/5 (2/10), the
# demo 0/5, iris and wine without side information 0/5.
def test_defaults_find_the_classes_of_wine_with_100_pairs():
    """Wine and 100 clean pairs: 3 clusters, ARI 0.95 (the DCP without the cluster
    term and with untempered constraints gave 4 clusters, ARI 0.46). One draw and one
    seed: over 2 draws x 5 sampler seeds 7 of 10 fits meet the target; the others
    merge two classes (ARI 0.43-0.47; docs/dcp.md)."""
    X, y = gc.datasets.load_wine()
    S = gc.SideInfo.sample(y, 100, random_state=0)
    est = gc.DCP(random_state=0).fit(X, S)
    assert abs(est.n_clusters_ - 3) <= 1 and gc.ari(y, est.labels_) >= 0.7
    assert est.log_alpha_ == -2.0 * est.tau_


@pytest.mark.xfail(strict=True, reason="issue #22: iris with 100 clean pairs meets the target on 2 of 5 seeds "
                   "(ARI 0.92, 0.76); on the others, this one included, versicolor and virginica are not told "
                   "apart (3 clusters, ARI 0.54): their GP mutual information at the 7-NN lengthscale, 19 nats, "
                   "is about what the ~22 cannot-links between them pay, and the model scores the truth and "
                   "these partitions within 1 nat per unit of tau (docs/dcp.md)")
def test_defaults_find_the_classes_of_iris_with_100_pairs():
    X, y = gc.datasets.load_iris()
    S = gc.SideInfo.sample(y, 100, random_state=0)
    est = gc.DCP(random_state=0).fit(X, S)
    assert abs(est.n_clusters_ - 3) <= 1 and gc.ari(y, est.labels_) >= 0.7


@pytest.mark.xfail(strict=True, reason="issue #22: the shipped demo (iris, 40 clean pairs) gives 2 clusters, "
                   "ARI 0.52-0.54 on 5 of 5 seeds: its 12 cannot-links between versicolor and virginica do "
                   "not pay for their 19 nats of GP mutual information, so the two are merged (docs/dcp.md)")
def test_defaults_find_the_classes_of_the_demo():
    G, S, y, k = gc.datasets.load_demo()
    est = gc.DCP(random_state=0).fit(G, S)
    assert abs(est.n_clusters_ - k) <= 1 and gc.ari(y, est.labels_) >= 0.7


@pytest.mark.xfail(strict=True, reason="issue #22: without side information no cluster term splits iris or "
                   "wine: the GP mutual information between their touching classes (iris versicolor-virginica "
                   "19 nats, wine 1.6-11.5) exceeds what most nodes tell about their own class (median 3.5 and "
                   "2.0 nats), so a reward that splits the classes scatters the nodes: iris 13-18 clusters "
                   "(ARI 0.40), wine 8-11 (ARI -0.01) on 5 seeds (docs/dcp.md)")
@pytest.mark.parametrize("name", ["iris", "wine"])
def test_defaults_find_the_classes_without_side_information(name):
    X, y = getattr(gc.datasets, "load_" + name)()
    est = gc.DCP(random_state=0).fit(X)
    assert abs(est.n_clusters_ - 3) <= 1 and gc.ari(y, est.labels_) >= 0.7


def test_conflicting_soft_constraints_lose_their_suspects_before_sampling():
    """As for dd-MMDPM: the likely-wrong constraints of conflicting side information are
    set aside before the DCP samples (it takes every constraint at its word)."""
    X, y = gc.datasets.load_iris()
    S = gc.SideInfo.sample(y, 300, noise=0.2, random_state=0)
    est = gc.DCP(n_iter=5, random_state=0).fit(X, S)
    dropped = est.dropped_constraints_
    assert len(dropped) > 10 and np.mean([(y[u] == y[v]) != (w > 0) for u, v, w in dropped]) > 0.8
    assert gc.DCP(n_iter=5, drop_suspects=False, random_state=0).fit(X, S).dropped_constraints_ == []


def _wine_pairs_without_conflicts(random_state):
    """Standardised wine and 158 pairs (1 % of all), 20 % flipped, none in conflict."""
    X, y = gc.datasets.load_wine()
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, 158, noise=0.2, random_state=random_state)
    assert not S.check().conflicts
    return X, y, S


def test_without_conflicts_no_heldout_signal_drops_the_broken_constraints():
    """Issue #26: 158 wine pairs with 20 % flipped and no conflict among them. No τ keeps
    the held-out constraints better than coin flips, the second sign of noise: the
    constraints the noise-robust clustering breaks go (mostly flipped ones), τ is
    chosen again with signal, and the partition follows the wine classes where taking
    every answer at its word does not."""
    X, y, S = _wine_pairs_without_conflicts(random_state=10)
    est = gc.DCP(n_iter=20, random_state=0).fit(X, S)
    info = est.result_.info
    before, after = info["tau_cv_before_drop"], info["tau_cv"]
    assert max(before.values()) < 0.6 < max(after.values()) and not info["no_signal"]
    dropped = est.dropped_constraints_
    assert len(dropped) > 20 and np.mean([(y[u] == y[v]) != (w > 0) for u, v, w in dropped]) > 0.8
    off = gc.DCP(n_iter=20, drop_suspects=False, random_state=0).fit(X, S)
    assert off.dropped_constraints_ == [] and "tau_cv_before_drop" not in off.result_.info
    assert gc.ari(y, est.labels_) > 0.9 > 0.5 > gc.ari(y, off.labels_)


def test_without_conflicts_heldout_constraints_may_choose_to_drop_the_broken_ones():
    """Issue #26: wine, 158 pairs, 20 % flipped, no conflict (a draw of the noisy-pair
    benchmark). The held-out constraints are kept a little better than coin flips
    (τ = 2: 0.59), so the no-signal test does not fire, and taking every answer at its
    word scatters wine over many clusters. Dropping what a noise-robust clustering of
    each fold's training constraints breaks is a candidate too, judged on the same
    held-out constraints: it wins (0.77 at τ = 8), the broken constraints go (mostly
    flipped ones), τ is chosen again on the rest, and the partition follows the classes."""
    X, y, S = _wine_pairs_without_conflicts(random_state=2548966387)
    est = gc.DCP(n_iter=20, random_state=2598747930).fit(X, S)
    info = est.result_.info
    before, without = info["tau_cv_before_drop"], info["tau_cv_without_broken"]
    assert info["dropped_by"] == "tau_cv" and max(without.values()) > max(before.values()) > 0.55
    dropped = est.dropped_constraints_
    assert len(dropped) > 15 and np.mean([(y[u] == y[v]) != (w > 0) for u, v, w in dropped]) > 0.8
    off = gc.DCP(n_iter=20, drop_suspects=False, random_state=2598747930).fit(X, S)
    assert off.dropped_constraints_ == [] and "tau_cv_without_broken" not in off.result_.info
    assert gc.ari(y, est.labels_) > 0.85 and gc.ari(y, off.labels_) < 0.5
