"""Tests of the Centroids node-potential provider: every cost against a hand formula,
the M-step against its closed form, and the incremental path against the batch one."""

import copy
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphclust as gc
import graphclust.potentials.centroids as centroids_module
from graphclust.errors import InvalidFeaturesError, InvalidParameterError
from graphclust.potentials import Centroids

DIST_CONFIGS = [
    dict(distortion="sqeuclidean"),
    dict(distortion="mahalanobis", metric="diagonal"),
    dict(distortion="mahalanobis", metric="full"),
    dict(distortion="mahalanobis", metric="diagonal", per_cluster=True),
    dict(distortion="mahalanobis", metric="full", per_cluster=True),
    dict(distortion="cosine"),
    dict(distortion="kl", smoothing=0.01),
]
IDS = ["sq", "maha-diag", "maha-full", "maha-diag-pc", "maha-full-pc", "cosine", "kl"]


def _data(rng, n=12, d=3, distortion="sqeuclidean"):
    X = rng.normal(size=(n, d)) * np.array([1.0, 2.0, 0.5][:d] + [1.0] * max(0, d - 3))
    if distortion == "kl":
        X = rng.integers(0, 6, size=(n, d)).astype(float)
    return X


def _fitted(config, X, labels, K, seed=0, must=None, cannot=None, far_pair=None):
    """A provider initialised from the first K rows and given one M-step (so a learnt
    metric is not the identity)."""
    C = Centroids(K, **config)
    P = gc.Problem.from_array(X)
    Y, _ = C.points(P)
    C.initialize(P, Y[:K], np.random.default_rng(seed))
    C.update(P, labels, must=must, cannot=cannot, far_pair=far_pair)
    return C, P


def _transform(config, X):
    """Rows in the distortion's space, by hand."""
    if config["distortion"] == "cosine":
        return X / np.linalg.norm(X, axis=1, keepdims=True)
    if config["distortion"] == "kl":
        Z = X + config.get("smoothing", 1e-3)
        return Z / Z.sum(1, keepdims=True)
    return X


def _hand_D(config, y, mu, A):
    """One distortion ``D(y, μ)`` written out plainly."""
    kind = config["distortion"]
    if kind == "sqeuclidean":
        return float(((y - mu) ** 2).sum())
    if kind == "mahalanobis":
        M = np.diag(A) if A.ndim == 1 else A
        return float((y - mu) @ M @ (y - mu))
    if kind == "cosine":
        return float(1 - y @ mu / (np.linalg.norm(y) * np.linalg.norm(mu)))
    return float(sum(a * np.log(a / b) for a, b in zip(y, mu)))


def _mean_metric(C):
    A = C.metric_
    return A.mean(0) if C.per_cluster else A


# ---------------------------------------------------------------------------- unary
@pytest.mark.parametrize("config", DIST_CONFIGS, ids=IDS)
def test_unary_matches_hand_formula(config, rng):
    K = 3
    X = _data(rng, distortion=config["distortion"])
    labels = np.arange(len(X)) % K
    C, P = _fitted(config, X, labels, K)
    U = C.unary(P)
    Y = _transform(config, X)
    for i, h in itertools.product(range(len(X)), range(K)):
        if C.per_cluster:
            A = C.metric_[h]
            logdet = np.linalg.slogdet(np.diag(A) if A.ndim == 1 else A)[1]
            expected = _hand_D(config, Y[i], C.centroids_[h], A) - logdet
        else:
            expected = _hand_D(config, Y[i], C.centroids_[h], C.metric_)
        assert U[i, h] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    if config["distortion"] == "mahalanobis" and not C.per_cluster:
        A = C.metric_
        logdet = np.linalg.slogdet(np.diag(A) if A.ndim == 1 else A)[1]
        assert C.label_free_energy(P) == pytest.approx(-len(X) * logdet)
    else:
        assert C.label_free_energy(P) == 0.0


@pytest.mark.parametrize("config", [c for c in DIST_CONFIGS if not c.get("per_cluster")],
                         ids=[i for c, i in zip(DIST_CONFIGS, IDS) if not c.get("per_cluster")])
def test_merged_nodes_cost_the_sum_of_their_members(config, rng):
    """After contraction X holds feature sums and counts > 1; a super-node's unary is
    the sum of its members' unaries up to a label-independent constant."""
    K = 3
    X = _data(rng, n=14, distortion=config["distortion"])
    if config["distortion"] == "kl":
        X = X + 1.0
        X = X / X.sum(1, keepdims=True)  # equal totals: the case where KL merging is exact
    if config["distortion"] == "cosine":
        X[1] = 3.0 * X[0]  # collinear members: the case where cosine merging is exact
        X[2] = 0.5 * X[0]
        X[9], X[11] = 2.0 * X[5], 0.1 * X[5]
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (5, 9), (9, 11)], weight=np.inf)
    P = gc.Problem.from_array(X, S)
    R, lift = gc.contract(P)
    assert R.counts.max() == 3
    C, _ = _fitted(config, X, np.arange(len(X)) % K, K)
    U = C.unary(P)
    U_red = C.unary(R)
    diff = U_red - lift.aggregate(U)
    np.testing.assert_allclose(diff - diff[:, :1], 0.0, atol=1e-9)
    single = R.counts == 1
    np.testing.assert_allclose(diff[single], 0.0, atol=1e-9)
    assert C.label_free_energy(R) == pytest.approx(C.label_free_energy(P))


@pytest.mark.parametrize("metric", ["diagonal", "full"])
def test_per_cluster_merging_drops_the_within_node_scatter(metric, rng):
    """Documented approximation: with per-cluster metrics a super-node misses exactly
    ``−Σ_m ‖x_m − x̄‖²_{A_h}``, which depends on h."""
    K = 2
    X = _data(rng, n=10)
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], weight=np.inf)
    P = gc.Problem.from_array(X, S)
    R, lift = gc.contract(P)
    C, _ = _fitted(dict(distortion="mahalanobis", metric=metric, per_cluster=True), X, np.arange(10) % K, K)
    diff = C.unary(R) - lift.aggregate(C.unary(P))
    members = X[:3] - X[:3].mean(0)
    for h in range(K):
        A = C.metric_[h] if metric == "full" else np.diag(C.metric_[h])
        within = np.einsum("md,de,me->", members, A, members)
        assert diff[0, h] == pytest.approx(-within, rel=1e-9)
    assert abs(diff[0, 0] - diff[0, 1]) > 1e-6


# ---------------------------------------------------------------------------- pair terms
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), which=st.integers(0, len(DIST_CONFIGS) - 1))
def test_pair_distortion_is_symmetric_non_negative_and_hand_exact(seed, which):
    config = DIST_CONFIGS[which]
    rng = np.random.default_rng(seed)
    X = _data(rng, n=7, distortion=config["distortion"])
    if config["distortion"] == "cosine":
        X[np.linalg.norm(X, axis=1) == 0] = 1.0
    C, P = _fitted(config, X, np.arange(7) % 2, 2)
    pairs = np.array(list(itertools.product(range(7), repeat=2)))
    phi = C.pair_distortion(P, pairs).reshape(7, 7)
    np.testing.assert_allclose(phi, phi.T, atol=1e-12)
    assert (phi >= 0).all()
    np.testing.assert_allclose(np.diag(phi), 0.0, atol=1e-12)
    Y = _transform(config, X)
    A = _mean_metric(C)
    for i, j in [(0, 1), (2, 5), (3, 6)]:
        if config["distortion"] == "kl":
            m = 0.5 * (Y[i] + Y[j])
            expected = _hand_D(config, Y[i], m, A) + _hand_D(config, Y[j], m, A)
        else:
            expected = _hand_D(config, Y[i], Y[j], A)
        assert phi[i, j] == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("config", DIST_CONFIGS, ids=IDS)
def test_max_distortion_is_the_brute_force_maximum(config, rng):
    X = _data(rng, n=9, distortion=config["distortion"])
    C, P = _fitted(config, X, np.arange(9) % 2, 2)
    pairs = np.array(list(itertools.combinations(range(9), 2)))
    phi = C.pair_distortion(P, pairs)
    best, (i, j) = C.max_distortion(P)
    assert best == pytest.approx(phi.max(), rel=1e-9)
    assert C.pair_distortion(P, [(i, j)])[0] == pytest.approx(best, rel=1e-9)


@pytest.mark.parametrize("config", DIST_CONFIGS, ids=IDS)
def test_max_distortion_above_the_exact_limit_is_a_lower_bound(config, rng, monkeypatch):
    monkeypatch.setattr(centroids_module, "EXACT_MAX_DISTORTION_NODES", 5)
    X = _data(rng, n=40, distortion=config["distortion"])
    C, P = _fitted(config, X, np.arange(40) % 2, 2)
    pairs = np.array(list(itertools.combinations(range(40), 2)))
    exact = C.pair_distortion(P, pairs).max()
    best, (i, j) = C.max_distortion(P)
    assert 0 < best <= exact + 1e-12
    assert best >= 0.5 * exact  # farthest-point sweeps are a 2-approximation for metrics; loose here
    assert C.pair_distortion(P, [(i, j)])[0] == pytest.approx(best, rel=1e-12)


# ---------------------------------------------------------------------------- M-step
@pytest.mark.parametrize("config", DIST_CONFIGS, ids=IDS)
def test_centroids_are_means_or_normalised_sums(config, rng):
    K = 3
    X = _data(rng, n=15, distortion=config["distortion"])
    labels = rng.integers(0, K, size=15)
    labels[:K] = np.arange(K)
    C, P = _fitted(config, X, labels, K)
    Y = _transform(config, X)
    for h in range(K):
        s = Y[labels == h].sum(0)
        expected = s / np.linalg.norm(s) if config["distortion"] == "cosine" else Y[labels == h].mean(0)
        np.testing.assert_allclose(C.centroids_[h], expected, rtol=1e-12, atol=1e-12)


def test_centroids_of_merged_nodes_are_means_of_the_original_points(rng):
    X = _data(rng, n=10)
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (6, 7)], weight=np.inf)
    P = gc.Problem.from_array(X, S)
    R, lift = gc.contract(P)
    labels_red = np.arange(R.n_nodes) % 2
    C = Centroids(2)
    C.initialize(R, R.feature_means[:2], np.random.default_rng(0))
    C.update(R, labels_red)
    full = lift(labels_red)
    for h in range(2):
        np.testing.assert_allclose(C.centroids_[h], X[full == h].mean(0), rtol=1e-12)


def test_empty_cluster_keeps_its_centroid_and_metric(rng):
    X = _data(rng, n=8)
    C = Centroids(3, distortion="mahalanobis", per_cluster=True)
    P = gc.Problem.from_array(X)
    seeds = np.array([[0.0, 0, 0], [1, 1, 1], [9, 9, 9]])
    C.initialize(P, seeds, np.random.default_rng(0))
    C.update(P, np.arange(8) % 2)  # cluster 2 empty
    np.testing.assert_array_equal(C.centroids_[2], seeds[2])
    np.testing.assert_array_equal(C.metric_[2], np.ones(3))
    assert not np.allclose(C.metric_[0], 1.0)


# A hand example: five 2-D points, two clusters, one violated must-link (0, 4), one
# violated cannot-link (0, 1), far pair (1, 4). Scatter sums written out term by term.
HX = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 2.0], [4.0, 1.0], [5.0, 3.0]])
HLAB = np.array([0, 0, 0, 1, 1])
HMUST = (np.array([[0, 4], [3, 4]]), np.array([2.0, 1.0]))  # (3, 4) satisfied
HCANNOT = (np.array([[0, 1], [2, 3]]), np.array([0.5, 3.0]))  # (2, 3) satisfied
HFAR = (1, 4)


def _hand_scatters(per_cluster):
    """``S`` (shared) or ``[S_0, S_1]`` (per cluster) as full matrices, by hand."""
    mu = np.array([HX[HLAB == h].mean(0) for h in range(2)])
    S = [np.zeros((2, 2)), np.zeros((2, 2))]
    for i in range(5):
        r = HX[i] - mu[HLAB[i]]
        S[HLAB[i]] += np.outer(r, r)
    d = HX[0] - HX[4]
    ml = 2.0 * np.outer(d, d)  # the violated must-link, weight 2
    if per_cluster:
        S[0] += 0.5 * ml
        S[1] += 0.5 * ml
    else:
        S[0] += ml
    far = HX[1] - HX[4]
    own = HX[0] - HX[1]
    S[0] += 0.5 * (np.outer(far, far) - np.outer(own, own))  # the violated cannot-link, weight 0.5, in cluster 0
    return S if per_cluster else S[0] + S[1]


@pytest.mark.parametrize("metric", ["diagonal", "full"])
def test_shared_metric_update_is_the_closed_form(metric):
    C, P = _fitted(dict(distortion="mahalanobis", metric=metric), HX, HLAB, 2,
                   must=HMUST, cannot=HCANNOT, far_pair=HFAR)
    S = _hand_scatters(False)
    if metric == "diagonal":
        np.testing.assert_allclose(C.metric_, 5.0 / np.diag(S), rtol=1e-12)
    else:
        assert np.linalg.eigvalsh(S).min() > 0  # no clipping in this example
        np.testing.assert_allclose(C.metric_, 5.0 * np.linalg.inv(S), rtol=1e-10)


@pytest.mark.parametrize("metric", ["diagonal", "full"])
def test_per_cluster_metric_update_is_the_mpck_closed_form(metric):
    C, P = _fitted(dict(distortion="mahalanobis", metric=metric, per_cluster=True), HX, HLAB, 2,
                   must=HMUST, cannot=HCANNOT, far_pair=HFAR)
    S = _hand_scatters(True)
    sizes = [3, 2]
    for h in range(2):
        if metric == "diagonal":
            np.testing.assert_allclose(C.metric_[h], sizes[h] / np.diag(S[h]), rtol=1e-12)
        else:
            assert np.linalg.eigvalsh(S[h]).min() > 0
            np.testing.assert_allclose(C.metric_[h], sizes[h] * np.linalg.inv(S[h]), rtol=1e-10)


def test_hard_constraints_do_not_enter_the_metric():
    must = (HMUST[0], np.array([np.inf, 1.0]))
    cannot = (HCANNOT[0], np.array([np.inf, 3.0]))
    C, _ = _fitted(dict(distortion="mahalanobis"), HX, HLAB, 2, must=must, cannot=cannot, far_pair=HFAR)
    B, _ = _fitted(dict(distortion="mahalanobis"), HX, HLAB, 2)
    np.testing.assert_allclose(C.metric_, B.metric_)


def _J_metric(C, P, labels, A):
    """Σ_i c_i ‖x_i − μ_{z_i}‖²_A − N log det A for a shared metric (no constraints)."""
    Y, c = C.points(P)
    R = Y - C.centroids_[labels]
    M = np.diag(A) if A.ndim == 1 else A
    return float(np.einsum("n,nd,de,ne->", c, R, M, R) - c.sum() * np.linalg.slogdet(M)[1])


@pytest.mark.parametrize("metric", ["diagonal", "full"])
def test_metric_step_minimises_the_objective_without_constraints(metric, rng):
    X = _data(rng, n=20) @ rng.normal(size=(3, 3))
    labels = np.arange(20) % 3
    C, P = _fitted(dict(distortion="mahalanobis", metric=metric, metric_eps=1e-12), X, labels, 3)
    A = C.metric_
    J = _J_metric(C, P, labels, A)
    assert J < _J_metric(C, P, labels, np.ones(3) if metric == "diagonal" else np.eye(3))
    for _ in range(20):  # any nearby positive-definite metric is worse
        if metric == "diagonal":
            B = A * np.exp(0.1 * rng.normal(size=3))
        else:
            E = 0.05 * rng.normal(size=(3, 3))
            B = A + (E + E.T) * np.abs(A).max()
            if np.linalg.eigvalsh(B).min() <= 0:
                continue
        assert _J_metric(C, P, labels, B) > J


# ---------------------------------------------------------------------------- singular metrics
@pytest.mark.parametrize("per_cluster", [False, True])
def test_constant_feature_gives_a_clipped_finite_diagonal_metric(per_cluster, rng):
    X = _data(rng, n=12)
    X[:, 1] = 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C, P = _fitted(dict(distortion="mahalanobis", per_cluster=per_cluster, metric_eps=1e-4), X,
                       np.arange(12) % 2, 2)
        U = C.unary(P)
    A = C.metric_ if per_cluster else C.metric_[None]
    assert np.isfinite(A).all() and (A > 0).all()
    for a in A:  # the zero scatter was clipped at eps * max: a_1 = N / (eps S_max) = a_min / eps
        assert a[1] == a.max()
        assert a[1] / a.min() == pytest.approx(1e4, rel=1e-9)
    assert np.isfinite(U).all()


@pytest.mark.parametrize("per_cluster", [False, True])
def test_singular_full_scatter_gives_a_positive_definite_metric(per_cluster, rng):
    t = rng.normal(size=(12, 1))
    X = t * np.array([[1.0, 2.0, -1.0]]) + 5.0  # collinear: scatter of rank 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C, P = _fitted(dict(distortion="mahalanobis", metric="full", per_cluster=per_cluster), X,
                       np.arange(12) % 2, 2)
        U = C.unary(P)
        phi = C.pair_distortion(P, [(0, 1), (2, 3)])
    for A in (C.metric_ if per_cluster else C.metric_[None]):
        assert np.isfinite(A).all()
        np.testing.assert_allclose(A, A.T)
        vals = np.linalg.eigvalsh(A)
        assert vals.min() > 0
        assert vals.max() / vals.min() == pytest.approx(1e6, rel=1e-3)  # clipped at metric_eps = 1e-6
        np.linalg.cholesky(A)
    assert np.isfinite(U).all() and np.isfinite(phi).all()


def test_one_point_cluster_keeps_its_metric():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [7.0, 7.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C, P = _fitted(dict(distortion="mahalanobis", per_cluster=True), X, np.array([0, 0, 0, 1]), 2)
    np.testing.assert_array_equal(C.metric_[1], [1.0, 1.0])  # zero scatter: nothing to learn
    assert np.isfinite(C.unary(P)).all()


@pytest.mark.parametrize("metric", ["diagonal", "full"])
def test_metric_that_would_overflow_is_not_taken(metric):
    X = np.array([[0.0, 0.0], [1.0, 1.0], [3.0, 1.0], [3.0, 2.0]]) * 1e-160  # scatter ~ 1e-320
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C, P = _fitted(dict(distortion="mahalanobis", metric=metric), X, np.array([0, 0, 1, 1]), 2)
        U = C.unary(P)
    expected = np.ones(2) if metric == "diagonal" else np.eye(2)
    np.testing.assert_array_equal(C.metric_, expected)
    assert np.isfinite(U).all() and np.isfinite(C.label_free_energy(P))


def test_metric_eps_zero_is_refused():
    # a provider's __init__ only stores its parameters: they are checked at first use
    P = gc.Problem.from_array(np.eye(3))
    with pytest.raises(InvalidParameterError, match=r"metric_eps of Centroids must be > 0(\.0)?, got 0"):
        Centroids(2, distortion="mahalanobis", metric_eps=0.0).points(P)
    with pytest.raises(InvalidParameterError, match=r"metric_eps of Centroids must be <= 1"):
        Centroids(2, distortion="mahalanobis", metric_eps=2.0).points(P)


# ---------------------------------------------------------------------------- incremental path
@pytest.mark.parametrize("config", DIST_CONFIGS, ids=IDS)
def test_incremental_scores_agree_with_the_batch_unary(config, rng):
    K = 3
    X = _data(rng, n=14, distortion=config["distortion"])
    S = gc.SideInfo.from_pairs(must=[(0, 1), (4, 5)], weight=np.inf)
    R, _ = gc.contract(gc.Problem.from_array(X, S))  # counts > 1 on two nodes
    n = R.n_nodes
    C = Centroids(K, **config)
    Y, counts = C.points(R)
    C.initialize(R, Y[:K], np.random.default_rng(0))
    labels = np.arange(n) % K
    C.update(R, labels)  # a learnt, non-identity metric where there is one
    C.start(R, labels)
    for i in rng.integers(0, n, size=25).tolist():  # move nodes around
        C.remove(i)
        labels[i] = int(rng.integers(0, K))
        C.add(i, labels[i])
    for i in range(n):
        C.remove(i)
        got = C.scores(i)
        others = np.arange(n) != i
        batch = copy.deepcopy(C)
        for h in range(K):
            members = others & (labels == h)
            if members.any():
                batch.centroids_[h] = (counts[members, None] * Y[members]).sum(0) / counts[members].sum()
        expected = batch.unary(R)[i]
        for h in range(K):
            if (others & (labels == h)).any():
                assert got[h] == pytest.approx(expected[h], rel=1e-9, abs=1e-9)
            else:
                assert got[h] == np.inf
        assert got[K] == np.inf  # no new cluster
        C.add(i, labels[i])


def test_incremental_refuses_new_clusters_and_double_moves(rng):
    X = _data(rng, n=6)
    P = gc.Problem.from_array(X)
    C = Centroids(2)
    C.initialize(P, X[:2], np.random.default_rng(0))
    C.start(P, np.array([0, 1, 0, 1, 0, 1]))
    with pytest.raises(InvalidParameterError, match="node index 3 is already in cluster 1"):
        C.add(3, 0)
    C.remove(3)
    with pytest.raises(InvalidParameterError, match="node index 3 is not in a cluster"):
        C.remove(3)
    with pytest.raises(InvalidParameterError, match=r"fixed number of clusters \(2\).*node index 3 into cluster 2"):
        C.add(3, 2)


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    (dict(distortion="manhattan"), "distortion of Centroids must be one of .*, got 'manhattan'"),
    (dict(distortion="mahalanobis", metric="low-rank"), "metric of Centroids must be one of 'diagonal', 'full', "
                                                        "got 'low-rank'"),
    (dict(distortion="cosine", per_cluster=True), "per_cluster=True of Centroids needs distortion='mahalanobis'"
                                                  ".*'cosine'"),
    (dict(distortion="mahalanobis", per_cluster="yes"), "per_cluster of Centroids must be True or False, got 'yes'"),
    (dict(n_clusters=0), "n_clusters of Centroids must be >= 1, got 0"),
    (dict(distortion="kl", smoothing=-1.0), "smoothing of Centroids must be >= 0"),
])
def test_parameter_errors(params, match):
    """Stored as given, refused by name at first use (directly or inside HMRF)."""
    C = Centroids(**{"n_clusters": 2, **params})
    assert C.get_params()["distortion"] == params.get("distortion", "sqeuclidean")  # stored unchanged
    with pytest.raises(InvalidParameterError, match=match):
        C.points(gc.Problem.from_array(np.eye(3)))
    with pytest.raises(InvalidParameterError, match=match):
        gc.HMRF(C).fit(np.eye(3))


def test_euclidean_is_an_alias_of_sqeuclidean():
    X = np.random.default_rng(0).normal(size=(6, 2))
    P = gc.Problem.from_array(X)
    a, b = Centroids(2, distortion="euclidean"), Centroids(2)
    for C in (a, b):
        C.initialize(P, X[:2], np.random.default_rng(0))
    np.testing.assert_array_equal(a.unary(P), b.unary(P))
    assert a.distortion == "euclidean"


def test_seed_shape_is_checked():
    P = gc.Problem.from_array(np.zeros((4, 3)))
    with pytest.raises(InvalidParameterError, match=r"expected 2 seeds of 3 features, got shape \(2, 2\)"):
        Centroids(2).initialize(P, np.zeros((2, 2)), np.random.default_rng(0))


def test_zero_rows_and_negative_entries_name_the_node():
    X = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 1.0]])
    P = gc.Problem.from_array(X, nodes=["a", "b", "c"])
    with pytest.raises(InvalidFeaturesError, match="node 'b' has an all-zero feature vector") as info:
        Centroids(2, distortion="cosine").points(P)
    assert info.value.node == "b"
    with pytest.raises(InvalidFeaturesError, match="node 'b' has an all-zero histogram") as info:
        Centroids(2, distortion="kl", smoothing=0.0).points(P)
    assert info.value.node == "b"
    Centroids(2, distortion="kl").points(P)  # smoothing > 0 makes the row a uniform histogram
    N = gc.Problem.from_array(np.array([[1.0, 2.0], [1.0, -0.5]]), nodes=["p", "q"])
    with pytest.raises(InvalidFeaturesError, match=r"node 'q' has a negative feature \(index 1: -0.5\)") as info:
        Centroids(2, distortion="kl").points(N)
    assert info.value.node == "q"


def test_problem_without_features_is_refused():
    import networkx as nx

    P = gc.Problem.from_graph(nx.path_graph(3))
    with pytest.raises(InvalidFeaturesError, match=r"Centroids\(distortion='sqeuclidean'\) needs node features"):
        Centroids(2).unary(P)


def test_kl_with_zero_smoothing_and_zero_entries_stays_finite():
    X = np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0], [1.0, 1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        C, P = _fitted(dict(distortion="kl", smoothing=0.0), X, np.array([0, 1, 1]), 2)
        phi = C.pair_distortion(P, [(0, 1), (1, 2), (0, 0)])
        best, _ = C.max_distortion(P)
        U = C.unary(P)
    assert np.isfinite(phi).all() and phi[2] == 0.0 and np.isfinite(best) and np.isfinite(U).all()


def test_repr_and_clone():
    C = Centroids(3, distortion="mahalanobis", metric="full", per_cluster=True, metric_eps=1e-3)
    assert repr(C) == "Centroids(n_clusters=3, distortion='mahalanobis', metric='full', per_cluster=True, metric_eps=0.001)"
    D = C.clone(n_clusters=4)
    assert D.get_params() == {**C.get_params(), "n_clusters": 4}
    assert D.metric_ is None


# ---------------------------------------------------------------------------- the pruned diameter
@pytest.mark.parametrize("shape", ["gauss", "sphere", "line", "duplicates", "anisotropic"])
@pytest.mark.parametrize("n", [2, 3, 70, 300])
def test_pruned_diameter_is_exact(shape, n):
    """The pruned search against all pairs, on clouds where pruning helps (Gaussian),
    where it cannot (points on a sphere: every row is a candidate) and degenerate ones."""
    from graphclust.potentials.centroids import _sq_diameter
    from graphclust._utils import sq_distances

    rng = np.random.default_rng(n)
    W = {"gauss": lambda: rng.normal(size=(n, 5)),
         "sphere": lambda: (lambda Z: Z / np.linalg.norm(Z, axis=1, keepdims=True))(rng.normal(size=(n, 3))),
         "line": lambda: np.outer(rng.normal(size=n), [1.0, 2.0, -1.0]),
         "duplicates": lambda: np.repeat(rng.normal(size=(max(1, n // 3), 4)), 3, axis=0)[:n],
         "anisotropic": lambda: rng.normal(size=(n, 6)) * np.array([100.0, 1, 1, 1, 1, 0.01])}[shape]()
    W = np.concatenate([W, W[: max(0, n - len(W))]])[:n] if len(W) < n else W
    best, (i, j), exact = _sq_diameter(W, budget=n * n)
    full = sq_distances(W, W).max()
    assert exact and best == pytest.approx(full, rel=1e-9, abs=1e-12)
    assert ((W[i] - W[j]) ** 2).sum() == pytest.approx(best, rel=1e-9, abs=1e-12)


def test_pruned_diameter_over_budget_is_a_lower_bound_and_says_so():
    from graphclust.potentials.centroids import _sq_diameter
    from graphclust._utils import sq_distances

    Z = np.random.default_rng(0).normal(size=(400, 3))
    W = Z / np.linalg.norm(Z, axis=1, keepdims=True)  # a sphere: pruning cannot help
    best, (i, j), exact = _sq_diameter(W, budget=1000)
    assert not exact
    assert 0 < best <= sq_distances(W, W).max() + 1e-12
    assert ((W[i] - W[j]) ** 2).sum() == pytest.approx(best, rel=1e-12)


def test_max_distortion_follows_the_learnt_metric():
    """Cached while the metric stays, recomputed when the M-step changes it."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2)) * np.array([5.0, 0.2])
    C, P = _fitted(dict(distortion="mahalanobis", metric="diagonal"), X, np.arange(60) % 2, 2)
    first = C.max_distortion(P)
    assert C.max_distortion(P) == first
    C.update(P, (X[:, 1] > 0).astype(int))
    again = C.max_distortion(P)
    pairs = np.array(list(itertools.combinations(range(60), 2)))
    assert again[0] == pytest.approx(C.pair_distortion(P, pairs).max(), rel=1e-9)


def test_hmrf_trial_fits_share_the_diameter(monkeypatch):
    """The fits that choose HMRF's constraint weight differ only in their constraints:
    φ_max is searched once for all of them, not once per trial fit, and the answer is
    the one an unshared search gives."""
    import graphclust.potentials.centroids as centroids

    calls = []
    search = centroids._sq_diameter
    monkeypatch.setattr(centroids, "_sq_diameter", lambda *a, **k: calls.append(1) or search(*a, **k))
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(0, 1, (40, 3)), rng.normal(4, 1, (40, 3))])
    y = np.repeat([0, 1], 40)
    P = gc.Problem.from_array(X, gc.SideInfo.sample(y, 120, random_state=1))
    est = gc.HMRF(Centroids(2), random_state=0).fit(P)
    assert "constraint_cv" in est.result_.info  # the trial fits ran
    # the weight choice once, then the two starts of the final fit (each its own copy)
    assert len(calls) == 3

    def unshared(self, other):
        pass

    monkeypatch.setattr(Centroids, "share_caches", unshared)
    calls.clear()
    again = gc.HMRF(Centroids(2), random_state=0).fit(P)
    assert len(calls) > 3
    np.testing.assert_array_equal(again.labels_, est.labels_)
