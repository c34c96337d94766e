"""Tests of the HMRF estimator (HMRF-KMeans): the objective never rises, the E-step
energy against brute force, recovery of planted clusters, k-means as the special case
without constraints, each distortion on data suited to it, bad input, and the CLI."""

import itertools
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs

import graphclust as gc
import graphclust.hmrf as hmrf_module
from graphclust.cli import main
from graphclust.errors import (
    InfeasibleConstraintsError,
    InvalidFeaturesError,
    InvalidParameterError,
    TooFewClustersError,
)
from graphclust.potentials import Centroids
from graphclust.sideinfo import check_constraints


def random_side(rng, n, m, *, p_must=0.5, low=0.2, high=5.0):
    """``m`` distinct random pairs over ``n`` nodes, each a soft must- or cannot-link."""
    pairs = list(itertools.combinations(range(n), 2))
    must, cannot = [], []
    for k in rng.choice(len(pairs), size=min(m, len(pairs)), replace=False).tolist():
        u, v = pairs[k]
        (must if rng.random() < p_must else cannot).append((u, v, float(rng.uniform(low, high))))
    return gc.SideInfo.from_pairs(must=must, cannot=cannot)


def small_data(rng, n, distortion):
    if distortion == "kl":
        return rng.integers(0, 5, size=(n, 3)).astype(float)
    X = rng.normal(size=(n, 3)) * np.array([1.0, 2.0, 0.5])
    if distortion == "cosine":
        X[np.abs(X).sum(1) == 0] = 1.0
    return X


def non_increasing(h):
    return all(b <= a + 1e-9 * (1.0 + abs(a)) for a, b in zip(h, h[1:]))


def fit_quietly(est, X, S=None):
    """Fit, ignoring the soft-conflict UserWarning random constraints may raise."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return est.fit(X, S)


# ---------------------------------------------------------------------------- monotonicity
@pytest.mark.parametrize("inference", ["icm", "bp", "lp", "exact"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), distortion=st.sampled_from(["sqeuclidean", "cosine", "kl"]),
       penalty=st.sampled_from(["distance", "constant"]), K=st.integers(2, 3), n=st.integers(5, 8),
       m=st.integers(0, 7))
def test_objective_never_increases_with_a_fixed_metric(inference, seed, distortion, penalty, K, n, m):
    rng = np.random.default_rng(seed)
    X = small_data(rng, n, distortion)
    S = random_side(rng, n, m)
    est = gc.HMRF(Centroids(K, distortion=distortion), inference=inference, penalty=penalty, random_state=seed)
    fit_quietly(est, X, S)
    h = est.result_.history
    assert non_increasing(h), h
    assert est.result_.objective == h[-1]


class _Recorder:
    """Stands in for ``hmrf.solve``: records every E-step energy and its start."""

    def __init__(self):
        self.calls = []

    def __call__(self, energy, method, **options):
        result = gc.solve(energy, method, **options)
        self.calls.append((energy, np.array(options["init"]), result))
        return result


MAHA = [dict(metric="diagonal"), dict(metric="full"), dict(metric="diagonal", per_cluster=True),
        dict(metric="full", per_cluster=True)]
MAHA_IDS = ["diag", "full", "diag-pc", "full-pc"]


@pytest.mark.parametrize("config", MAHA, ids=MAHA_IDS)
@pytest.mark.parametrize("inference", ["icm", "bp", "lp"])
def test_mahalanobis_e_step_never_raises_its_energy(config, inference, monkeypatch):
    """With metric learning J may rise after a metric step (the far pair is held fixed,
    and per-cluster penalties use the mean metric); the safeguarded E-step never does."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(14, 3)) * np.array([3.0, 1.0, 0.3])
        S = random_side(rng, 14, 10)
        rec = _Recorder()
        monkeypatch.setattr(hmrf_module, "solve", rec)
        accepted = []
        # a fixed constraint weight: the cross-validation fits of "auto" would add solves
        est = gc.HMRF(Centroids(3, distortion="mahalanobis", **config), inference=inference, random_state=seed,
                      constraint_weight=1.0, init="neighbourhoods",
                      callback=lambda it, labels, J: accepted.append(labels))
        try:
            fit_quietly(est, X, S)
        except TooFewClustersError:
            continue
        assert len(accepted) == len(rec.calls) == len(est.result_.history)
        for (energy, init, _), new in zip(rec.calls, accepted):
            assert energy.evaluate(new) <= energy.evaluate(init) + 1e-9 * (1 + abs(energy.evaluate(init)))
        assert np.isfinite(est.result_.history).all()


@pytest.mark.parametrize("metric", ["diagonal", "full"])
@pytest.mark.parametrize("inference", ["icm", "bp"])
def test_mahalanobis_objective_never_increases_with_must_links_only(metric, inference):
    """With must-links only (distance penalties) the shared-metric step is the exact
    minimiser of J over A, so J is non-increasing through the whole EM."""
    for seed in range(8):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(12, 3)) * np.array([1.0, 3.0, 0.3])
        S = random_side(rng, 12, 8, p_must=1.0)
        est = gc.HMRF(Centroids(3, distortion="mahalanobis", metric=metric, metric_eps=1e-12),
                      inference=inference, random_state=seed).fit(X, S)
        assert non_increasing(est.result_.history), (seed, est.result_.history)


@pytest.mark.parametrize("config", MAHA, ids=MAHA_IDS)
def test_mahalanobis_objective_never_increases_without_constraints(config):
    """Without constraints every metric step (shared or per cluster) is exact."""
    for seed in range(6):
        X, _ = make_blobs(40, centers=3, n_features=3, random_state=seed)
        est = gc.HMRF(Centroids(3, distortion="mahalanobis", metric_eps=1e-12, **config), random_state=seed).fit(X)
        assert non_increasing(est.result_.history), (seed, est.result_.history)


def test_constant_penalty_metric_learning_never_increases_the_objective():
    rises = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(12, 3)) * np.array([1.0, 3.0, 0.3])
        S = random_side(rng, 12, 8)
        est = gc.HMRF(Centroids(3, distortion="mahalanobis", metric_eps=1e-12), penalty="constant",
                      random_state=seed)
        try:
            fit_quietly(est, X, S)
        except TooFewClustersError:
            continue
        rises += not non_increasing(est.result_.history)
    assert rises == 0


# ---------------------------------------------------------------------------- exact E-step
def _hand_unary(config, Y, provider):
    """``(n, K)`` unary written out from the provider's parameters."""
    K = provider.n_clusters
    kind = config["distortion"]
    U = np.zeros((len(Y), K))
    for i, h in itertools.product(range(len(Y)), range(K)):
        y, mu = Y[i], provider.centroids_[h]
        if kind == "sqeuclidean":
            U[i, h] = ((y - mu) ** 2).sum()
        elif kind == "cosine":
            U[i, h] = 1 - y @ mu / (np.linalg.norm(y) * np.linalg.norm(mu))
        elif kind == "kl":
            U[i, h] = (y * np.log(y / mu)).sum()
        else:
            A = provider.metric_[h] if config.get("per_cluster") else provider.metric_
            M = np.diag(A) if A.ndim == 1 else A
            U[i, h] = (y - mu) @ M @ (y - mu)
            if config.get("per_cluster"):
                U[i, h] -= np.linalg.slogdet(M)[1]
    return U


def _hand_phi(config, Y, provider):
    """All pair distortions ``(n, n)`` written out."""
    kind = config["distortion"]
    n = len(Y)
    phi = np.zeros((n, n))
    for i, j in itertools.product(range(n), repeat=2):
        a, b = Y[i], Y[j]
        if kind == "sqeuclidean":
            phi[i, j] = ((a - b) ** 2).sum()
        elif kind == "cosine":
            phi[i, j] = 1 - a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
        elif kind == "kl":
            m = (a + b) / 2
            phi[i, j] = (a * np.log(a / m)).sum() + (b * np.log(b / m)).sum()
        else:
            A = provider.metric_.mean(0) if config.get("per_cluster") else provider.metric_
            M = np.diag(A) if A.ndim == 1 else A
            phi[i, j] = (a - b) @ M @ (a - b)
    return phi


EXACT_CONFIGS = [dict(distortion="sqeuclidean"), dict(distortion="cosine"), dict(distortion="kl"),
                 dict(distortion="mahalanobis", metric="diagonal"), dict(distortion="mahalanobis", metric="full"),
                 dict(distortion="mahalanobis", metric="full", per_cluster=True)]


@pytest.mark.parametrize("penalty", ["distance", "constant"])
@pytest.mark.parametrize("config", EXACT_CONFIGS, ids=lambda c: "-".join(map(str, c.values())))
def test_e_step_energy_is_the_brute_force_energy(config, penalty, global_random_seed):
    for trial in range(3):
        rng = np.random.default_rng(1000 * global_random_seed + trial)
        n, K = int(rng.integers(5, 9)), int(rng.integers(2, 4))
        X = small_data(rng, n, config["distortion"])
        S = random_side(rng, n, int(rng.integers(2, 8)))
        problem = gc.Problem.from_array(X, S)
        provider = Centroids(K, **config)
        est = gc.HMRF(provider, penalty=penalty, use_closure=False)
        report = check_constraints(problem.nodes, problem.constraints, problem.constraint_weights)
        labels = est._initialize(problem, provider, report, rng)
        pairs, w = problem.constraints, problem.constraint_weights
        if config["distortion"] == "mahalanobis":  # a learnt, non-identity metric
            _, far = provider.max_distortion(problem)
            provider.update(problem, labels, must=(pairs[w > 0], w[w > 0]), cannot=(pairs[w < 0], -w[w < 0]),
                            far_pair=far)
        energy, _ = est._energy(problem, provider)

        # the same energy, independently: hand unary + hand penalties over all K^n labellings
        Y, _ = provider.points(problem)
        U = _hand_unary(config, Y, provider)
        phi = _hand_phi(config, Y, provider)
        phi_max = phi.max()
        Z = np.array(list(itertools.product(range(K), repeat=n)))
        brute = U[np.arange(n), Z].sum(1)
        for (i, j), wij in zip(pairs.tolist(), w.tolist()):
            same = Z[:, i] == Z[:, j]
            if wij > 0:
                brute += np.where(same, 0.0, wij * (phi[i, j] if penalty == "distance" else 1.0))
            else:
                cost = max(phi_max - phi[i, j], 0.0) if penalty == "distance" else 1.0
                brute += np.where(same, -wij * cost, 0.0)
        sample = rng.choice(len(Z), size=min(60, len(Z)), replace=False)
        for z, e in zip(Z[sample], brute[sample]):
            assert energy.evaluate(z) == pytest.approx(e, rel=1e-9, abs=1e-9)
        best = gc.solve(energy, "exact")
        assert best.energy == pytest.approx(brute.min(), rel=1e-9, abs=1e-9)
        assert brute[np.ravel_multi_index(best.labels, (K,) * n)] == pytest.approx(brute.min(), rel=1e-9, abs=1e-9)


def test_exact_engine_reaches_the_e_step_optimum_inside_em(monkeypatch):
    """Every E-step the estimator runs with inference='exact' returns the brute-force
    optimum of the energy it was given."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(7, 2))
    S = random_side(rng, 7, 6)
    rec = _Recorder()
    monkeypatch.setattr(hmrf_module, "solve", rec)
    fit_quietly(gc.HMRF(Centroids(3), inference="exact", random_state=0), X, S)
    assert rec.calls
    for energy, _, result in rec.calls:
        Z = np.array(list(itertools.product(range(3), repeat=7)))
        assert result.energy == pytest.approx(min(energy.evaluate(z) for z in Z), rel=1e-12)


# ---------------------------------------------------------------------------- no constraints = k-means
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_without_constraints_hmrf_is_kmeans_from_the_same_seeds(seed):
    X, _ = make_blobs(120, centers=4, cluster_std=1.5, random_state=seed)
    problem = gc.Problem.from_array(X)
    provider = Centroids(4)
    est = gc.HMRF(provider, penalty="constant", random_state=seed)
    report = check_constraints(problem.nodes, problem.constraints, problem.constraint_weights)
    est._initialize(problem, provider, report, np.random.default_rng(seed))  # the seeds fit() will use
    seeds = provider.centroids_.copy()
    est.fit(X)
    km = KMeans(4, init=seeds, n_init=1, tol=0.0, max_iter=300, algorithm="lloyd").fit(X)
    assert gc.ari(km.labels_, est.labels_) == 1.0
    order = [int(np.flatnonzero(km.labels_ == est.labels_[np.flatnonzero(est.labels_ == k)[0]])[0]) for k in range(4)]
    np.testing.assert_allclose(est.potentials_.centroids_, km.cluster_centers_[km.labels_[order]], atol=1e-10)
    assert est.result_.objective == pytest.approx(km.inertia_, rel=1e-10)


def test_given_init_is_kmeans_from_those_centroids():
    """init=centroids: the run is sklearn's Lloyd k-means from the same centroids (no
    constraints), whatever random_state; a wrong shape names the expected one."""
    X, _ = make_blobs(150, centers=5, cluster_std=2.0, random_state=7)
    C0 = X[[3, 40, 77, 100, 149]]
    km = KMeans(5, init=C0, n_init=1, tol=0.0, max_iter=300, algorithm="lloyd").fit(X)
    for rs in (0, 1):
        est = gc.HMRF(Centroids(5), init=C0, penalty="constant", inference="icm", random_state=rs).fit(X)
        assert gc.ari(km.labels_, est.labels_) == 1.0
        assert est.result_.objective == pytest.approx(km.inertia_, rel=1e-10)
    with pytest.raises(InvalidParameterError, match=r"expected 5 seeds of 2 features, got shape \(5, 3\)"):
        gc.HMRF(Centroids(5), init=np.zeros((5, 3))).fit(X)
    with pytest.raises(InvalidParameterError, match="init of HMRF must be finite"):
        gc.HMRF(Centroids(5), init=np.full((5, 2), np.nan)).fit(X)


# ---------------------------------------------------------------------------- recovery
@pytest.mark.parametrize("inference", ["icm", "bp", "lp"])
def test_well_separated_blobs_are_recovered_with_constraints(inference):
    X, y = make_blobs(60, centers=[[0, 0], [10, 0], [0, 10]], cluster_std=1.0, random_state=0)
    S = gc.SideInfo.sample(y, n_pairs=30, random_state=0)
    est = gc.HMRF(Centroids(3), inference=inference, random_state=0).fit(X, S)
    assert gc.ari(y, est.labels_) == 1.0
    assert est.result_.violations.n_violated == 0


def test_constraints_improve_overlapping_blobs_on_average():
    without, with_ = [], []
    for seed in range(6):
        X, y = make_blobs(150, centers=3, cluster_std=2.5, center_box=(-6, 6), random_state=seed)
        S = gc.SideInfo.sample(y, n_pairs=100, random_state=seed)
        without.append(gc.ari(y, gc.HMRF(Centroids(3), inference="bp", random_state=seed).fit(X).labels_))
        with_.append(gc.ari(y, gc.HMRF(Centroids(3), inference="bp", random_state=seed).fit(X, S).labels_))
    assert np.mean(with_) >= np.mean(without) + 0.08, (without, with_)


# ---------------------------------------------------------------------------- distortions on suited data
def test_cosine_recovers_directions_where_sqeuclidean_does_not():
    rng = np.random.default_rng(0)
    dirs = np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.3], [0.3, 0.0, 1.0]])
    y = np.repeat(np.arange(3), 40)
    radius = rng.uniform(0.5, 20.0, size=120)
    X = radius[:, None] * (dirs[y] + 0.08 * rng.normal(size=(120, 3)))
    S = gc.SideInfo.sample(y, n_pairs=10, random_state=0)
    cos = gc.HMRF(Centroids(3, distortion="cosine"), random_state=0).fit(X, S)
    sq = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    assert gc.ari(y, cos.labels_) == 1.0
    assert gc.ari(y, sq.labels_) < 0.8


def test_kl_recovers_multinomial_sources():
    rng = np.random.default_rng(0)
    sources = rng.dirichlet(np.full(8, 0.7), size=3)
    y = np.repeat(np.arange(3), 40)
    totals = rng.integers(20, 200, size=120)
    H = np.stack([rng.multinomial(t, sources[c]) for t, c in zip(totals, y)]).astype(float)
    S = gc.SideInfo.sample(y, n_pairs=20, random_state=0)
    for seed in range(3):
        est = gc.HMRF(Centroids(3, distortion="kl"), random_state=seed).fit(H, S)
        assert gc.ari(y, est.labels_) >= 0.95
    # the learnt centroids are the sources (up to sampling noise), in some order
    cents = est.potentials_.centroids_
    match = np.abs(cents[:, None, :] - sources[None, :, :]).sum(-1).argmin(1)
    assert sorted(match.tolist()) == [0, 1, 2]
    assert np.abs(cents - sources[match]).sum(1).max() < 0.1


@pytest.mark.parametrize("config", [dict(metric="diagonal"), dict(metric="full"),
                                    dict(metric="diagonal", per_cluster=True)], ids=["diag", "full", "diag-pc"])
def test_metric_learning_recovers_elongated_clusters(config):
    """Two clusters stretched along x and separated along y: squared Euclidean splits
    them left/right; a learnt metric with some constraints finds the real split."""
    learnt, plain = [], []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        y = np.repeat(np.arange(2), 60)
        X = np.column_stack([rng.normal(0.0, 4.0, 120), rng.normal(0.0, 0.5, 120) + 3.0 * y])
        S = gc.SideInfo.sample(y, n_pairs=50, random_state=seed)
        est = gc.HMRF(Centroids(2, distortion="mahalanobis", **config), inference="bp", random_state=seed).fit(X, S)
        learnt.append(gc.ari(y, est.labels_))
        plain.append(gc.ari(y, gc.HMRF(Centroids(2), inference="bp", random_state=seed).fit(X, S).labels_))
        A = est.potentials_.metric_
        A = A.mean(0) if config.get("per_cluster") else A
        a = A if A.ndim == 1 else np.diag(A)
        assert a[1] > 5 * a[0]  # the metric learnt to stretch y and shrink x
    assert min(learnt) >= 0.95, learnt
    assert max(plain) < 0.3, plain


# ---------------------------------------------------------------------------- bad input
def test_features_missing_for_one_node_is_named():
    G = nx.path_graph(4)
    nx.set_node_attributes(G, {0: [0.0, 1.0], 1: [1.0, 1.0], 2: [5.0, 5.0]}, "features")
    with pytest.raises(InvalidFeaturesError, match="3") as info:
        gc.HMRF(Centroids(2)).fit(G)
    assert info.value.node == 3


def test_graph_without_features_says_features_are_needed():
    with pytest.raises(InvalidFeaturesError, match=r"needs node features: give nodes a 'features' attribute"):
        gc.HMRF(Centroids(2)).fit(nx.path_graph(4))


def test_more_clusters_than_hard_must_link_groups():
    X = np.array([[0.0], [0.1], [5.0], [5.1]])
    S = gc.SideInfo.from_pairs(must=[(0, 1), (2, 3)], weight=np.inf)
    with pytest.raises(TooFewClustersError, match="n_clusters=3 but hard must-links leave only 2 groups") as info:
        gc.HMRF(Centroids(3)).fit(X, S)
    assert info.value.n_clusters == 3


def test_more_clusters_than_nodes():
    with pytest.raises(TooFewClustersError, match="n_clusters=5 but the problem has only 4 nodes"):
        gc.HMRF(Centroids(5)).fit(np.arange(8.0).reshape(4, 2))


@pytest.mark.parametrize("distortion, X, match", [
    ("cosine", [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], "node 'b' has an all-zero feature vector"),
    ("kl", [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], "node 'b' has an all-zero histogram"),
    ("kl", [[1.0, 0.0], [0.5, -1.0], [0.0, 1.0]], "node 'b' has a negative feature"),
])
def test_rows_a_distortion_cannot_take_are_named(distortion, X, match):
    G = nx.Graph()
    for u, x in zip("abc", X):
        G.add_node(u, features=x)
    with pytest.raises(InvalidFeaturesError, match=match) as info:
        gc.HMRF(Centroids(2, distortion=distortion, smoothing=0.0)).fit(G)
    assert info.value.node == "b"


def test_hard_conflict_carries_the_witness_path():
    X = np.array([[0.0], [1.0], [2.0], [9.0]])
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)], weight=np.inf)
    with pytest.raises(InfeasibleConstraintsError, match="must-link path 0 - 1 - 2 joins nodes 0 and 2") as info:
        gc.HMRF(Centroids(2)).fit(X, S)
    assert info.value.path == [0, 1, 2]


def test_soft_conflict_warns_and_still_clusters():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [5.0, 6.0]])
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)], weight=1.0)
    with pytest.warns(UserWarning, match=r"1 soft cannot-link\(s\) join nodes that must-links connect") as record:
        est = gc.HMRF(Centroids(2), inference="exact", constraint_weight=1.0, random_state=0).fit(X, S)
    assert record[0].filename == __file__  # the warning points at the caller
    assert est.result_.violations.n_violated >= 1  # something has to give
    z = est.labels_  # node 2 breaks its cheap must-link rather than the expensive cannot-link
    assert z[0] == z[1] != z[2] == z[3] == z[4]


def test_soft_cannot_link_clique_larger_than_k_still_clusters():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0], [5.0, 6.0]])
    S = gc.SideInfo.from_pairs(cannot=[(0, 1), (0, 2), (1, 2)], weight=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = gc.HMRF(Centroids(2), random_state=0).fit(X, S)
    assert est.result_.violations.n_violated >= 1


@pytest.mark.parametrize("config", MAHA, ids=MAHA_IDS)
def test_singular_metric_data_runs_without_warnings_or_nans(config):
    """A constant feature and collinear clusters make every scatter singular; the
    clipped metric keeps the whole run finite, with no warning."""
    rng = np.random.default_rng(0)
    t = rng.normal(size=(30, 1))
    y = np.repeat(np.arange(2), 15)
    X = np.column_stack([t[:, 0], 2.0 * t[:, 0] + 6.0 * y, np.full(30, 4.0)])
    S = gc.SideInfo.sample(y, n_pairs=12, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = gc.HMRF(Centroids(2, distortion="mahalanobis", **config), inference="bp", random_state=0).fit(X, S)
    assert np.isfinite(est.result_.history).all()
    for A in (est.potentials_.metric_ if config.get("per_cluster") else est.potentials_.metric_[None]):
        assert np.isfinite(A).all()
        assert (A > 0).all() if A.ndim == 1 else np.linalg.eigvalsh(A).min() > 0
    assert gc.ari(y, est.labels_) >= 0.8


def test_unknown_inference_lists_the_engines():
    with pytest.raises(InvalidParameterError, match=r"inference of HMRF must be 'auto' or one of .*bp.*exact.*icm.*"
                                                   r"lp.*; got 'simplex'"):
        gc.HMRF(Centroids(2), inference="simplex").fit(np.zeros((3, 2)))


@pytest.mark.parametrize("k, must, cannot, engine", [
    (3, [(0, 1), (2, 3)], [(0, 20), (5, 25)], "bp"),      # cannot-links: repulsive terms
    (2, [(0, 1), (2, 3), (40, 41)], [], "mincut"),        # two clusters, attractive only: exact
    (3, [(0, 1), (2, 3), (40, 41)], [], "expansion"),     # more clusters, attractive only
])
def test_inference_auto_is_the_default_engine_of_the_estep_energy(k, must, cannot, engine):
    """``inference="auto"`` (the default) runs what ``gc.solve`` would pick for the E-step's
    energy, and gives the labels of that engine named explicitly."""
    X, _ = gc.datasets.make_blobs(60, n_clusters=3, random_state=2)
    S = gc.SideInfo.from_pairs(must=must, cannot=cannot)
    auto = gc.HMRF(Centroids(k), constraint_weight=1.0, random_state=0).fit(X, S)
    assert auto.inference == "auto" and auto.result_.info["engine"] == engine
    named = gc.HMRF(Centroids(k), inference=engine, constraint_weight=1.0, random_state=0).fit(X, S)
    assert named.result_.info["engine"] == engine
    np.testing.assert_array_equal(auto.labels_, named.labels_)


def test_potentials_must_be_a_provider():
    with pytest.raises(InvalidParameterError, match="potentials of HMRF must be a NodePotentials provider .* got str"):
        gc.HMRF("kmeans").fit(np.zeros((3, 2)))


def test_fit_does_not_modify_the_given_provider():
    provider = Centroids(2, distortion="mahalanobis")
    est = gc.HMRF(provider, random_state=0).fit(np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 1.0], [5.2, 1.0]]))
    assert provider.centroids_ is None and provider.metric_ is None
    assert est.potentials_ is not provider and est.potentials_.metric_.shape == (2,)


# ---------------------------------------------------------------------------- command line
def test_cli_cluster_with_hmrf_and_bp(tmp_path, capsys):
    X, y = make_blobs(45, centers=[[0, 0], [8, 0], [0, 8]], cluster_std=1.0, random_state=0)
    G = nx.Graph()
    for i, (x, t) in enumerate(zip(X, y)):
        G.add_node(i, features=x.tolist(), truth=int(t))
    S = gc.SideInfo.sample(y, n_pairs=15, random_state=0)
    path, out = tmp_path / "blobs.graphml", tmp_path / "out.graphml"
    gc.write_graphml(path, G, S)
    assert main(["cluster", str(path), "--method", "hmrf", "--inference", "bp", "-k", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "method=hmrf clusters=3" in text and "ARI=1.0000" in text
    H, _ = gc.read_graphml(out)
    labels = [H.nodes[u]["cluster"] for u in sorted(H.nodes, key=int)]
    assert gc.ari(y, labels) == 1.0


def test_hard_must_links_are_merged_and_the_objective_is_the_original_energy(global_random_seed):
    """Hard must-links go through contract/lift: the engine sees one node per
    component, the answer keeps them, and J is the energy of the original problem."""
    rng = np.random.default_rng(global_random_seed)
    X = np.concatenate([rng.normal(0, 1, (7, 2)), rng.normal(3, 1, (7, 2))])
    S = gc.SideInfo([(0, 9, np.inf), (9, 3, np.inf), (4, 12, np.inf), (1, 13, -2.0), (2, 5, 1.5), (0, 12, -1.0),
                     (0, 3, -0.5)])  # a soft cannot-link inside a hard component: always violated
    problem = gc.Problem.from_array(X, S)
    for penalty in ("distance", "constant"):
        with pytest.warns(UserWarning, match="soft cannot-link"):
            est = gc.HMRF(Centroids(2), inference="brute-force", penalty=penalty, use_closure=False,
                          constraint_weight=1.0, random_state=0).fit(problem)
        z = est.labels_
        assert z[0] == z[9] == z[3] and z[4] == z[12]
        assert est.result_.info["n_super_nodes"] == 11  # 14 nodes, two components of 3 and 2
        unmerged = gc.HMRF(Centroids(2), penalty=penalty, use_closure=False)
        energy, _ = unmerged._energy(problem, est.potentials_)
        # labels_ number the clusters by first appearance; the provider keeps its own order
        z = min((z, 1 - z), key=energy.evaluate)
        assert est.result_.objective == pytest.approx(energy.evaluate(z), rel=1e-12)
        # the brute-force E-step on 11 super-nodes is exact: no labelling of the
        # original nodes that keeps the hard must-links has a lower energy
        Z = np.array(list(itertools.product(range(2), repeat=11)))
        with pytest.warns(UserWarning, match="always be violated"):
            _, lift = gc.contract(problem)
        best = min(energy.evaluate(lift(zr)) for zr in Z)
        assert energy.evaluate(z) <= best + 1e-9


def test_closure_auto_uses_it_on_consistent_side_information_only():
    """use_closure="auto" (the default): the closure of consistent constraints, the given
    constraints when they conflict, since closing noisy links chains wrong must-links
    into components that swallow whole classes."""
    X, y = gc.datasets.make_blobs(120, 2, 2, separation=4, random_state=0)
    clean = gc.SideInfo.sample(y, n_pairs=100, random_state=0)
    est = gc.HMRF(Centroids(2), random_state=0).fit(X, clean)
    assert est.result_.info["closure"] and "closure_skipped" not in est.result_.info
    noisy = gc.SideInfo.sample(y, n_pairs=400, noise=0.05, random_state=0)
    with pytest.warns(UserWarning, match="soft cannot-link"):  # full strength: the closure is the subject
        auto = gc.HMRF(Centroids(2), constraint_weight=1.0, random_state=0).fit(X, noisy)
        closed = gc.HMRF(Centroids(2), use_closure=True, constraint_weight=1.0, random_state=0).fit(X, noisy)
    assert not auto.result_.info["closure"] and "conflicting" in auto.result_.info["closure_skipped"]
    assert closed.result_.info["closure"]
    f_auto, f_closed = gc.pairwise_f_measure(y, auto.labels_), gc.pairwise_f_measure(y, closed.labels_)
    assert f_auto > 0.9 and f_closed < 0.7  # the closure merges the two blobs


def test_use_closure_is_checked():
    with pytest.raises(InvalidParameterError, match="use_closure of HMRF must be one of 'auto', True, False"):
        gc.HMRF(use_closure="yes").fit(np.eye(3))


def test_no_potentials_is_refused_not_guessed():
    """HMRF() used to cluster into 2 without a word; it now says how to give k or choose it."""
    X = np.array([[0.0], [0.1], [5.0], [5.1], [9.0], [9.1]])
    with pytest.raises(InvalidParameterError, match=r"HMRF needs potentials.*Centroids\(n_clusters\).*gc.cluster"):
        gc.HMRF().fit(X)


def test_the_kmeans_start_is_the_restart_that_keeps_the_most_constraints():
    """Four blobs at the corners of a rectangle a little wider than high: k-means with
    k = 2 has two local optima, left/right (lower inertia) and top/bottom. Constraints
    that say top/bottom choose that restart; without them inertia chooses left/right."""
    from graphclust.hmrf import HMRF

    rng = np.random.default_rng(0)
    corners = np.array([[0.0, 0.0], [5.5, 0.0], [0.0, 5.0], [5.5, 5.0]])
    X = np.concatenate([c + rng.normal(scale=0.4, size=(25, 2)) for c in corners])
    top = (X[:, 1] > 2.5).astype(int)
    left = (X[:, 0] < 2.75).astype(int)
    S = gc.SideInfo.sample(top, 40, random_state=0)
    problem = gc.Problem.from_array(X, S)
    provider = Centroids(2).clone()
    by_constraints = HMRF._kmeans_start(problem, provider, np.random.default_rng(1))
    by_inertia = HMRF._kmeans_start(problem, provider, np.random.default_rng(1), by_constraints=False)
    nearest = lambda C: ((X[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)  # noqa: E731
    assert gc.ari(top, nearest(by_constraints)) == 1.0
    assert gc.ari(left, nearest(by_inertia)) == 1.0


def test_the_weight_is_the_factor_with_the_best_held_out_score(monkeypatch):
    """The factor that keeps the most held-out constraints wins, not the strongest one
    within a standard error of it; with no candidate above coin flips the given
    strength stands."""
    import graphclust.hmrf as hmrf_module

    X, y = make_blobs(150, centers=3, random_state=0)
    S = gc.SideInfo.sample(y, 300, noise=0.05, random_state=0)
    candidates = []

    def scores_of(values):
        def fake(fit_labels, problem, cands, **kw):
            candidates[:] = list(cands)
            return np.array(values[-len(cands):])
        return fake

    # closure first (consistent draws only), then 1, 1/3, 1/9, 1/27, 0
    monkeypatch.setattr(hmrf_module, "cross_validate_constraints", scores_of([0.90, 0.91, 0.95, 0.94, 0.93, 0.80]))
    est = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    assert candidates[-5][0] == 1.0 and est.result_.info["constraint_weight"] == pytest.approx(1 / 3)
    monkeypatch.setattr(hmrf_module, "cross_validate_constraints", scores_of([0.50, 0.50, 0.52, 0.51, 0.50, 0.49]))
    clean = gc.SideInfo.sample(y, 300, random_state=0)  # consistent: the given strength may stand
    est = gc.HMRF(Centroids(3), random_state=0).fit(X, clean)
    assert est.result_.info["constraint_weight"] == 1.0  # 0.52 is no signal with 300 pairs
    est = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    if est.result_.info.get("no_signal"):  # conflicting and no signal: ignored instead
        assert est.result_.info["constraint_weight"] == 0.0
