"""dd-MMDPM and MMDPM: the prior against brute force, the CRP reduction, incremental
statistics, the cannot-link veto, reproducibility and bad input."""

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import graphclust as gc
from graphclust.bayesian import SamplerItems
from graphclust.ddmmdpm import DDMMDPM, MMDPM, DDMMDPMPotentials, _log_joint
from graphclust.inference.gibbs import GibbsChain
from graphclust.potentials.ddmmdpm import _ChainState, _gibbs_add, _gibbs_scores, _pa_step
from graphclust.errors import (
    InfeasibleConstraintsError,
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
)


def blobs(n_per=12, d=2, sep=6.0, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [sep, 0.0], [sep / 2, sep]])[:, :d]
    X = np.concatenate([c + rng.normal(size=(n_per, d)) for c in centres])
    y = np.repeat(np.arange(3), n_per)
    return X, y


def brute_log_prior(X, labels, i, similarity, gamma, side=(), mu=1.0, nu=1.0, nbrs=None, floor=None,
                    D=None):
    """log g̃(x_i, C_k) from the definitions, one cluster at a time."""
    if D is None:
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    K = labels.max() + 1
    out = np.full(K, -np.inf)
    for k in range(K):
        members = [j for j in range(len(labels)) if labels[j] == k and j != i]
        if not members:
            continue
        reach = [j for j in members if nbrs is None or j in nbrs]
        f = [math.exp(-D[i, j] / gamma) for j in reach]
        ml = [mu * w for (a, b, w) in side if w > 0 and np.isfinite(w) and i in (a, b) and (a + b - i) in members]
        cl = [w for (a, b, w) in side if w < 0 and i in (a, b) and (a + b - i) in members]
        if similarity == "max":
            g = max(f + ml + ([floor] if floor is not None else []), default=0.0)
        else:
            g = sum(f) + sum(ml) + (floor if floor is not None else 0.0)
        lg = math.log(g) if g > 0 else -np.inf
        if any(np.isinf(w) for w in cl):
            lg = -np.inf
        else:
            lg += nu * sum(cl)
        out[k] = lg
    return out


SIDE = [(0, 5, 1.0), (1, 7, 2.0), (0, 3, -1.5), (2, 8, -np.inf), (4, 6, -0.5)]


@pytest.mark.parametrize("similarity", ["max", "sum"])
def test_dense_prior_equals_brute_force(similarity):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 3))
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 2])
    S = gc.SideInfo([(a, b, w) for a, b, w in SIDE])
    P = gc.Problem.from_array(X, S)
    pot = DDMMDPMPotentials(similarity=similarity, gamma=0.7, alpha=2.0, ml_strength=0.8, cl_penalty=1.3)
    pot.start(P, labels)
    for i in range(10):
        pot.remove(i)
        got = pot.log_prior(i)
        pot.add(i, labels[i])
        want = brute_log_prior(X, labels, i, similarity, 0.7, SIDE, mu=0.8, nu=1.3)
        np.testing.assert_allclose(got[:-1], want, rtol=1e-12, atol=1e-12)
        assert got[-1] == pytest.approx(math.log(2.0 / 10))


@pytest.mark.parametrize("similarity", ["max", "sum"])
def test_knn_prior_equals_brute_force_with_floor(similarity):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(14, 2))
    labels = rng.integers(0, 3, size=14)
    m = 3
    P = gc.Problem.from_array(X)
    pot = DDMMDPMPotentials(similarity=similarity, distance="knn", n_neighbors=m, gamma=0.5)
    pot.start(P, labels)
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1)
    chosen = [set(order[i, :m].tolist()) for i in range(14)]
    for i in range(14):
        nbrs = chosen[i] | {j for j in range(14) if i in chosen[j]}  # union k-NN graph
        floor = math.exp(-D[i, order[i, m]] / 0.5)  # decay at the (m+1)-th neighbour
        pot.remove(i)
        got = pot.log_prior(i)
        pot.add(i, labels[i])
        want = brute_log_prior(X, labels, i, similarity, 0.5, nbrs=nbrs, floor=floor, D=D)
        np.testing.assert_allclose(got[:-1], want, rtol=1e-12)
        assert np.isfinite(got).all()  # every non-empty cluster keeps a non-zero prior


def test_sparse_precomputed_and_graph_priors():
    X = np.array([[0.0], [1.0], [2.0], [5.0]])
    Dm = sp.csr_array(np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 3], [0, 0, 3, 0]], dtype=float))
    P = gc.Problem.from_array(X)
    pot = DDMMDPMPotentials(similarity="sum", distance=Dm, gamma=1.0)
    pot.start(P, np.array([0, 0, 1, 1]))
    pot.remove(1)
    # node 1 links to 0 (d=1) and 2 (d=1); floor = decay of its farthest stored link
    np.testing.assert_allclose(pot.log_prior(1)[:2], [math.log(2 * math.exp(-1)), math.log(2 * math.exp(-1))])
    W = sp.csr_array(np.array([[0, 0.5, 0, 0], [0.5, 0, 0.2, 0], [0, 0.2, 0, 0.1], [0, 0, 0.1, 0]]))
    P2 = gc.Problem.from_arrays(W, X)
    pot = DDMMDPMPotentials(similarity="max", distance="graph", floor=False)
    pot.start(P2, np.array([0, 0, 1, 1]))
    pot.remove(1)
    np.testing.assert_allclose(pot.log_prior(1)[:2], [math.log(0.5), math.log(0.2)])


@pytest.mark.parametrize("similarity", ["max", "sum"])
def test_log_space_has_no_underflow(similarity):
    n = 5
    D = np.full((n, n), 1e4)
    D[0, 1] = D[1, 0] = 2e4
    np.fill_diagonal(D, 0.0)
    P = gc.Problem.from_array(np.arange(n, dtype=float)[:, None])
    pot = DDMMDPMPotentials(similarity=similarity, distance=D, gamma=1.0)
    pot.start(P, np.array([0, 1, 1, 2, 2]))
    pot.remove(0)
    got = pot.log_prior(0)
    want_max = [-1e4, -1e4]
    want_sum = [np.logaddexp(-2e4, -1e4), -1e4 + math.log(2)]
    np.testing.assert_allclose(got[1:3], want_max if similarity == "max" else want_sum, rtol=1e-14)


def test_constant_distance_prior_is_the_crp():
    """Proposition 1: d ≡ log(N − 1 + α), f = exp(−d), α = 1 gives the CRP ratios."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 2))
    labels = rng.integers(0, 4, size=12)
    N = 12
    Dc = np.full((N, N), math.log(N))
    np.fill_diagonal(Dc, 0.0)
    P = gc.Problem.from_array(X)
    dd = DDMMDPMPotentials(similarity="sum", distance=Dc, gamma=1.0, alpha=1.0)
    crp = DDMMDPMPotentials(similarity="crp", alpha=1.0)
    dd.start(P, labels)
    crp.start(P, labels)
    for i in range(N):
        for pot in (dd, crp):
            pot.remove(i)
        a, b = dd.log_prior(i), crp.log_prior(i)
        for pot in (dd, crp):
            pot.add(i, labels[i])
        sizes = np.bincount(np.delete(labels, i), minlength=labels.max() + 1)
        np.testing.assert_allclose(np.exp(b[:-1]), sizes, atol=0)  # CRP: n_{-i,k} and α
        ok = np.isfinite(a)
        np.testing.assert_allclose(a[ok] - b[ok], -math.log(N), atol=1e-12)


def test_constant_distance_chain_equals_mmdpm():
    X, _ = blobs(n_per=8)
    N = len(X)
    Dc = np.full((N, N), math.log(N))
    np.fill_diagonal(Dc, 0.0)
    a = DDMMDPM(similarity="sum", distance=Dc, gamma=1.0, alpha=1.0, n_iter=15, n_chains=1, random_state=4).fit(X)
    b = MMDPM(alpha=1.0, n_iter=15, random_state=4).fit(X)
    np.testing.assert_array_equal(a.samples_, b.samples_)
    np.testing.assert_array_equal(a.result_.info["n_clusters"], b.result_.info["n_clusters"])


def test_flat_decay_chain_equals_mmdpm():
    """γ → ∞: g_sum → n_{-i,k}, new weight α/N, i.e. MMDPM with α/N."""
    X, _ = blobs(n_per=8)
    N = len(X)
    a = DDMMDPM(similarity="sum", gamma=1e300, alpha=3.0, n_iter=15, n_chains=1, random_state=5).fit(X)
    b = MMDPM(alpha=3.0 / N, n_iter=15, random_state=5).fit(X)
    np.testing.assert_array_equal(a.samples_, b.samples_)


def test_incremental_scores_equal_recomputation():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(15, 3))
    S = gc.SideInfo([(0, 4, 1.0), (2, 9, -1.0), (5, 6, -np.inf)])
    P = gc.Problem.from_array(X, S)
    labels = rng.integers(0, 3, size=15)
    theta = rng.normal(size=(3, 3))
    pot = DDMMDPMPotentials(similarity="sum", gamma=0.8)
    pot.start(P, labels, theta=theta)
    for _ in range(40):  # random moves, some of them opening clusters
        i = int(rng.integers(15))
        pot.remove(i)
        k = int(rng.integers(pot.n_clusters + 1))
        pot.add(i, k)
    z = pot.labels
    fresh = DDMMDPMPotentials(similarity="sum", gamma=0.8)
    fresh.start(P, z, theta=pot.theta_.copy())
    for i in range(15):
        k = z[i]
        pot.remove(i)
        fresh.remove(i)
        np.testing.assert_allclose(pot.scores(i), fresh.scores(i), rtol=1e-12)
        pot.add(i, k)
        fresh.add(i, k)


def test_sweep_bookkeeping_matches_samples():
    """The kernel's live-cluster count equals the clusters of the state it records."""
    X, _ = blobs()
    est = DDMMDPM(similarity="max", lam=0.05, n_iter=12, burn_in=0, n_chains=1, random_state=7).fit(X)
    counted = np.array([len(np.unique(s)) for s in est.samples_])
    np.testing.assert_array_equal(counted, est.result_.info["n_clusters"][0])
    assert est.theta_.shape == (len(np.unique(est.last_labels_)), 2)


def test_pa_step_never_increases_the_hinge_loss():
    rng = np.random.default_rng(8)
    for _ in range(50):
        theta = rng.normal(size=(4, 3))
        tsq = (theta * theta).sum(1)
        x = rng.normal(size=3)
        k = int(rng.integers(4))
        active = np.arange(4)

        def loss():
            s = theta @ x
            return max(0.0, 1.0 - s[k] + np.delete(s, k).max())

        before = loss()
        _pa_step(x, x @ x, k, theta, tsq, active, 4, 0.5, 1.0, False, x)
        assert loss() <= before + 1e-12
        np.testing.assert_allclose(tsq, (theta * theta).sum(1))


def test_adding_a_point_makes_the_pa_step_on_the_chains_weights():
    """The chain's add step (the engine's ``add`` hook) trains θ: point 1 goes back into
    cluster 0 and the weights move by the PA-I update, θ_0 + τx and θ_rival − τx,
    τ = min(C, hinge / (2‖x‖²)), against the hand computation."""
    X = np.array([[0.0, 0.0], [1.0, 0.2], [3.0, 3.0], [3.2, 2.7]])
    pot = DDMMDPMPotentials(similarity="sum", gamma=1.0, pa_cap=10.0, margin=1.0, removal_shrink=0.0)
    model = pot.model(gc.Problem.from_array(X))
    theta = np.zeros((5, 2))
    theta[:2] = [[0.1, -0.2], [0.3, 0.1]]
    stats = _ChainState(model, pot._log_new_unit(model.N), pot._params(), theta)
    chain = GibbsChain(stats, 4, 5)
    chain.set_labels(np.array([0, 0, 1, 1]))
    chain.z[1] = -1  # the engine's scores hook takes point 1 out of cluster 0 (and scores it)
    _gibbs_scores(stats.state, 1, 0, chain.z, chain.active, chain.n_clusters, 0, -1, np.zeros(5), np.empty(5))
    before = stats.theta.copy()
    _gibbs_add(stats.state, 1, 0, False, chain.active, chain.n_clusters)
    x = model.Xn[1]
    s = before[:2] @ x
    hinge = 1.0 - s[0] + s[1]
    assert hinge > 0.0
    tau = min(10.0, hinge / (2.0 * x @ x))
    np.testing.assert_allclose(stats.theta[0], before[0] + tau * x)
    np.testing.assert_allclose(stats.theta[1], before[1] - tau * x)
    np.testing.assert_allclose(stats.tsq[:2], (stats.theta[:2] ** 2).sum(1))


def test_the_max_margin_steps_change_the_fitted_weights():
    """Over whole sweeps: without PA steps (pa_cap=0, no shrinking) every θ stays a
    draw of the base measure; with them the same seed ends with other weights."""
    X, y = blobs()
    kw = {"similarity": "sum", "removal_shrink": 0.0, "n_iter": 5, "init": y, "random_state": 0}
    off = DDMMDPM(pa_cap=0.0, **kw).fit(X)
    on = DDMMDPM(pa_cap=0.5, **kw).fit(X)
    assert off.theta_.shape != on.theta_.shape or not np.allclose(off.theta_, on.theta_)


@pytest.mark.parametrize("est", [
    DDMMDPM(similarity="max", lam=0.05, n_iter=20),
    DDMMDPM(similarity="sum", distance="knn", n_neighbors=4, n_iter=20),
    MMDPM(lam=0.05, n_iter=20),
], ids=["max", "sum-knn", "crp"])
def test_hard_constraints_always_hold(est):
    X, y = blobs()
    rng = np.random.default_rng(9)
    same = [(int(a), int(b)) for a, b in rng.integers(0, 36, size=(40, 2)) if a != b and y[a] == y[b]][:6]
    cannot = [(int(a), int(b)) for a, b in rng.integers(0, 36, size=(60, 2)) if y[a] == y[b] and a != b]
    cannot = [p for p in cannot if p not in same and p[::-1] not in same][:10]
    must_nodes = {u for p in same for u in p}
    cannot = [p for p in cannot if not ({p[0], p[1]} <= must_nodes)][:6]
    S = gc.SideInfo.from_pairs(must=same, cannot=cannot, weight=np.inf)
    if not S.check().feasible:
        pytest.skip("sampled constraints contradict each other")
    est.set_params(random_state=0).fit(X, S)
    for a, b in cannot:
        assert (est.samples_[:, a] != est.samples_[:, b]).all()
        assert est.labels_[a] != est.labels_[b]
    for a, b in same:
        assert (est.samples_[:, a] == est.samples_[:, b]).all()


def test_infeasible_hard_constraints_raise():
    X, _ = blobs(n_per=3)
    S = gc.SideInfo([(0, 1, np.inf), (1, 2, np.inf), (0, 2, -np.inf)])
    with pytest.raises(InfeasibleConstraintsError):
        DDMMDPM(n_iter=2).fit(X, S)


def test_soft_cannot_link_lowers_the_prior():
    X = np.array([[0.0], [0.1], [0.2]])
    P = gc.Problem.from_array(X, gc.SideInfo([(0, 1, -2.0)]))
    pot = DDMMDPMPotentials(similarity="max", gamma=1.0, cl_penalty=0.5)
    pot.start(P, np.array([0, 0, 1]))
    pot.remove(0)
    np.testing.assert_allclose(pot.log_prior(0)[:2], [-0.1 - 1.0, -0.2])


def test_reproducible_and_chains_pool():
    X, _ = blobs()
    a = DDMMDPM(n_iter=10, n_chains=1, random_state=11).fit(X)
    b = DDMMDPM(n_iter=10, n_chains=1, random_state=11).fit(X)
    np.testing.assert_array_equal(a.samples_, b.samples_)
    np.testing.assert_array_equal(a.theta_, b.theta_)
    c = DDMMDPM(n_iter=10, n_chains=2, random_state=11).fit(X)
    assert c.samples_.shape == (10, len(X))
    np.testing.assert_array_equal(c.samples_[:5], a.samples_)  # chain 0 is the same stream


def test_planted_blobs_are_recovered_and_summaries_consistent():
    X, y = blobs(n_per=15)
    est = DDMMDPM(similarity="sum", n_iter=60, random_state=0).fit(X)
    assert gc.ari(y, est.labels_) > 0.9
    P = est.coclustering()
    np.testing.assert_allclose(P, P.T)
    np.testing.assert_allclose(np.diag(P), 1.0)
    # co-clustering from the samples, by brute force
    want = (est.samples_[:, :, None] == est.samples_[:, None, :]).mean(0)
    np.testing.assert_allclose(P, want)
    assert est.n_clusters_posterior_.sum() == pytest.approx(1.0)
    last = DDMMDPM(similarity="sum", n_iter=60, point_estimate="last", random_state=0).fit(X)
    assert gc.ari(last.labels_, est.samples_[-1]) == 1.0


# ---------------------------------------------------------------------------- defaults (issue #26)
def test_default_similarity_sum_where_the_old_max_fragments():
    """Issue #26: the default similarity is g_sum, chosen by measurement
    (docs/ddmmdpm.md): four 2-D blobs with 200 soft constraints (10 % flipped), the
    defaults find the four blobs; g_max at λ = 0.5 with the constraints at full
    strength (the old defaults) scatters them over a dozen clusters."""
    X, y = gc.datasets.make_blobs(120, 4, n_features=2, separation=4.0, random_state=1)
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, 200, noise=0.1, random_state=1)
    fits = [DDMMDPM(random_state=seed).fit(X, S) for seed in range(3)]
    assert fits[0].similarity == "sum"
    assert np.mean([gc.ari(y, est.labels_) for est in fits]) > 0.75  # measured 0.85 (0.70, 0.93, 0.91)
    assert all(3 <= est.n_clusters_ <= 6 for est in fits)
    old = DDMMDPM(similarity="max", lam=0.5, constraint_weight=1.0, beta=1.0, base_std=1.0, n_iter=200, n_chains=1,
                  random_state=0).fit(X, S)
    assert old.n_clusters_ >= 10 and gc.ari(y, old.labels_) < 0.3


def test_auto_lam_and_constraint_weight_are_chosen_on_held_out_constraints():
    """Issue #26: ``lam`` and ``constraint_weight`` "auto" are the pair of the grid
    whose fits keep the most held-out soft constraints, recorded in ``result_.info``.
    Three 12-D blobs (standardised, as wine): the chosen pair keeps the three apart;
    with the old ``beta=1, base_std=1`` the fallback λ = 0.5 collapsed them to two
    (issue #22: a new cluster's ``θ`` paid ``λσ₀²D``)."""
    X, y = gc.datasets.make_blobs(90, 3, n_features=12, separation=8.0, random_state=2)
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, 200, random_state=2)
    est = DDMMDPM(random_state=0).fit(X, S)
    cv = est.result_.info["constraint_cv"]
    assert len(cv) == 15
    best = max(cv, key=cv.get)
    assert best == f"lam={est.lam_:.4g}, constraint_weight={est.constraint_weight_:.4g}"
    assert est.result_.info["lam"] == est.lam_
    assert gc.ari(y, est.labels_) > 0.7
    old = DDMMDPM(lam=0.5, constraint_weight=1.0, beta=1.0, base_std=1.0, n_chains=1, random_state=0).fit(X, S)
    assert gc.ari(y, old.labels_) < 0.5 and old.n_clusters_ <= 2
    fixed = DDMMDPM(lam=0.5, constraint_weight=1.0, random_state=0).fit(X, S)
    assert gc.ari(y, fixed.labels_) > 0.9
    # only the parameter left "auto" is searched
    one = DDMMDPM(lam=0.5, n_iter=20, random_state=0).fit(X, S)
    assert len(one.result_.info["constraint_cv"]) == 5 and one.lam_ == 0.5


def test_auto_weight_may_be_zero_when_held_out_constraints_prefer_the_data():
    """Issue #26: the grid's weight 0 (the data alone). One draw of the noisy-pair
    protocol (standardised wine, 158 pairs, 20 % flipped, none in conflict, so none is
    dropped): every weighted fit keeps fewer held-out constraints than the data alone,
    and the answer is the data's (NMI 0.81, 5 clusters); the grid without 0 chose
    weight 3 (NMI 0.70)."""
    X, y = gc.datasets.load_wine()
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, 158, noise=0.2, random_state=1775049433)  # bench_noisy_defaults' seeds
    est = DDMMDPM(random_state=2170083808).fit(X, S)
    assert not est.dropped_constraints_ and est.constraint_weight_ == 0.0
    cv = est.result_.info["constraint_cv"]
    assert max(cv, key=cv.get).endswith("constraint_weight=0")
    assert gc.nmi(y, est.labels_) > 0.78


def test_auto_falls_back_without_enough_constraints():
    X, _ = blobs()
    est = DDMMDPM(n_iter=10, random_state=0).fit(X)
    assert est.lam_ == 0.5 and est.constraint_weight_ == 1.0 and "constraint_cv" not in est.result_.info
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 20)])
    est = DDMMDPM(n_iter=10, random_state=0).fit(X, S)
    assert est.lam_ == 0.5 and "constraint_cv" not in est.result_.info
    assert MMDPM(lam="auto", constraint_weight="auto", n_iter=10, random_state=0).fit(X).lam_ == 0.5


def test_constraint_weight_scales_the_soft_constraints_only():
    """The factor multiplies ``ml_strength`` and ``cl_penalty``; hard cannot-links
    still veto."""
    X = np.array([[0.0], [0.1], [0.2], [3.0]])
    S = gc.SideInfo([(0, 1, -2.0), (0, 2, 1.5), (0, 3, -np.inf)])
    P = gc.Problem.from_array(X, S)
    est = DDMMDPM(constraint_weight=0.25, cl_penalty=0.8, ml_strength=2.0)
    pot = est._potentials()
    assert pot.cl_penalty == pytest.approx(0.2) and pot.ml_strength == pytest.approx(0.5)
    model = pot.model(P)
    ptr, idx, w = model.side
    got = dict(zip(idx[ptr[0]:ptr[1]].tolist(), w[ptr[0]:ptr[1]].tolist()))
    assert got == {1: pytest.approx(-0.4), 2: pytest.approx(0.75), 3: -np.inf}


def test_provider_in_hmrf():
    X, y = blobs(n_per=10)
    est = gc.HMRF(DDMMDPMPotentials(3), inference="icm", random_state=0).fit(X)
    assert gc.ari(y, est.labels_) == 1.0


# ---------------------------------------------------------------------- bad input
def test_distance_matrix_errors_name_the_entry():
    X = np.zeros((3, 1))
    good = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=float)
    with pytest.raises(InvalidGraphError, match="square"):
        DDMMDPM(distance=np.zeros((3, 2)), n_iter=2).fit(X)
    with pytest.raises(InvalidGraphError, match="3 nodes"):
        DDMMDPM(distance=np.zeros((4, 4)), n_iter=2).fit(X)
    bad = good.copy()
    bad[0, 2] = 5.0
    with pytest.raises(InvalidGraphError, match=r"not symmetric: entry \(0, 2\) is 5.0") as err:
        DDMMDPM(distance=bad, n_iter=2).fit(X)
    assert err.value.edge == (0, 2)
    bad = good.copy()
    bad[1, 2] = bad[2, 1] = -1.0
    with pytest.raises(InvalidGraphError, match=r"entry \(1, 2\) between nodes 1 and 2 is -1.0"):
        DDMMDPM(distance=bad, n_iter=2).fit(X)
    bad = good.copy()
    bad[0, 1] = bad[1, 0] = np.nan
    with pytest.raises(InvalidGraphError, match=r"entry \(0, 1\).* is nan"):
        DDMMDPM(distance=bad, n_iter=2).fit(X)
    with pytest.raises(InvalidGraphError, match="not symmetric"):
        DDMMDPM(distance=sp.csr_array(np.triu(good)), n_iter=2).fit(X)
    with pytest.raises(InvalidGraphError, match=r"entry \(0, 1\) between nodes 0 and 1 is -1.0"):
        DDMMDPM(distance=sp.csr_array(-good), n_iter=2).fit(X)


@pytest.mark.parametrize("params, match", [
    ({"lam": "big"}, "lam of DDMMDPM must be 'auto' or a number >= 0"),
    ({"constraint_weight": -1.0}, "constraint_weight of DDMMDPM must be >= 0"),
    ({"similarity": "min"}, "similarity of DDMMDPM must be 'max' or 'sum'"),
    ({"distance": "cosine"}, "distance of DDMMDPM must be"),
    ({"gamma": 0.0}, "gamma of DDMMDPM must be > 0"),
    ({"gamma": "median"}, "gamma of DDMMDPM must be 'auto'"),
    ({"alpha": 0}, "alpha of DDMMDPM must be > 0"),
    ({"alpha": float("nan")}, "alpha of DDMMDPM must be finite"),
    ({"lam": -1.0}, "lam of DDMMDPM must be >= 0"),
    ({"removal_shrink": 1.0}, r"removal_shrink of DDMMDPM must be in \[0, 1\)"),
    ({"n_neighbors": 0}, "n_neighbors of DDMMDPM must be >= 1"),
    ({"n_iter": 5, "burn_in": 5}, "burn_in of DDMMDPM"),
    ({"init": "kmeans"}, "init of DDMMDPM must be 'single'"),
    ({"point_estimate": "map"}, "point_estimate of DDMMDPM"),
    ({"bias": "yes"}, "bias of DDMMDPM must be True or False"),
    ({"base_std": 0.0}, "base_std of DDMMDPM must be > 0"),
])
def test_bad_hyperparameters(params, match):
    X, _ = blobs(n_per=3)
    with pytest.raises(InvalidParameterError, match=match):
        DDMMDPM(**params).fit(X)


def test_bad_data():
    with pytest.raises(InvalidFeaturesError, match="at least 2 nodes"):
        DDMMDPM(n_iter=2).fit(np.array([[1.0, 2.0]]))
    with pytest.raises(InvalidFeaturesError, match="needs node features"):
        DDMMDPM(n_iter=2).fit(nx.path_graph(4))
    X, _ = blobs(n_per=2)
    with pytest.raises(InvalidParameterError, match="n_neighbors=10 but there are only 6 nodes"):
        DDMMDPM(distance="knn", n_iter=2).fit(X)
    with pytest.raises(InvalidGraphError, match="no edges"):
        DDMMDPM(distance="graph", n_iter=2).fit(X)
    with pytest.raises(InvalidParameterError, match="init of DDMMDPM"):
        DDMMDPM(init=[0, 1], n_iter=2).fit(X)
    with pytest.raises(InvalidParameterError, match="similarity of MMDPM|lam of MMDPM"):
        MMDPM(lam=-1).fit(X)


# ---------------------------------------------------------------------- the log joint (result_.history)
#: hard must-link blocks {0, 3, 9} and {4, 10}, soft must-links, soft and hard cannot-links
LJ_SIDE = [(0, 3, np.inf), (3, 9, np.inf), (4, 10, np.inf), (0, 5, 1.0), (1, 7, 0.6), (9, 11, 0.4),
           (0, 2, -1.5), (2, 8, -np.inf), (4, 6, -0.5), (6, 11, -np.inf)]


def blocks_in_order(n, side):
    """Hard must-link components, numbered by their first node (independently of the
    estimator: plain union-find)."""
    parent = list(range(n))

    def find(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for a, b, w in side:
        if w == np.inf:
            parent[find(a)] = find(b)
    roots = {}
    for i in range(n):
        roots.setdefault(find(i), []).append(i)
    return sorted(roots.values())


def brute_log_joint(X, labels, theta, side, *, similarity, gamma=None, alpha=1.0, beta=1.0, lam=0.5, mu=1.0, nu=1.0,
                    nbrs=None, floors=None, D=None):
    """The log joint from its definition: blocks seated in the order of their first
    node, each scored against the members of its cluster seated before it (the first
    block of a cluster opens it: ``m log(α/N)``, ``m log α`` for the CRP), plus
    ``Σ_i β x_iᵀθ_{z_i} − λ‖θ_{z_i}‖²`` on the centred features."""
    n = len(X)
    Xn = X - X.mean(0)
    soft = [(a, b, w) for a, b, w in side if w != np.inf]
    lp = float(sum(beta * Xn[i] @ theta[labels[i]] - lam * theta[labels[i]] @ theta[labels[i]] for i in range(n)))
    seated = []
    for block in blocks_in_order(n, side):
        k = labels[block[0]]
        earlier = [j for j in seated if labels[j] == k]
        if not earlier:
            lp += len(block) * (math.log(alpha) if similarity == "crp" else math.log(alpha / n))
        for i in block if earlier else ():
            if similarity == "crp":
                ml = sum(mu * w for a, b, w in soft if w > 0 and i in (a, b) and (a + b - i) in earlier)
                cl = [w for a, b, w in soft if w < 0 and i in (a, b) and (a + b - i) in earlier]
                lp += -np.inf if np.isinf(cl).any() else math.log(len(earlier) + ml) + nu * sum(cl)
            else:
                visible = np.full(n, -1)
                visible[earlier] = k
                lp += brute_log_prior(X, visible, i, similarity, gamma, soft, mu=mu, nu=nu,
                                      nbrs=None if nbrs is None else nbrs[i],
                                      floor=None if floors is None else floors[i], D=D)[k]
        seated += block
    return lp


def _sparse_distances(X, m=4):
    """A symmetric m-NN distance matrix, its neighbour sets and the decay floors."""
    n = len(X)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    A = np.zeros((n, n))
    for i in range(n):
        for j in np.argsort(D[i])[1:m + 1]:
            A[i, j] = A[j, i] = D[i, j]
    Dm = sp.csr_array(A)
    nbrs = [set(np.flatnonzero(A[i]).tolist()) for i in range(n)]
    return Dm, nbrs, A.max(1)


@pytest.mark.parametrize("case", ["max", "sum", "sparse-max", "sparse-sum", "crp"])
def test_history_is_the_log_joint_from_its_definition(case):
    X, _ = blobs(n_per=4)
    S = gc.SideInfo(LJ_SIDE)
    kw = dict(alpha=1.5, lam=0.3, beta=1.2, ml_strength=0.8, cl_penalty=1.3, n_iter=6, burn_in=0, random_state=0)
    brute = {}
    if case == "crp":
        est = MMDPM(**kw).fit(X, S)
        sim = "crp"
    else:
        sim = case.split("-")[-1]
        if case.startswith("sparse"):
            Dm, nbrs, far = _sparse_distances(X)
            est = DDMMDPM(similarity=sim, distance=Dm, gamma=0.9, **kw).fit(X, S)
            brute = dict(nbrs=nbrs, floors=np.exp(-far / 0.9))
        else:
            est = DDMMDPM(similarity=sim, gamma=0.9, **kw).fit(X, S)
        brute["gamma"] = 0.9 / est.feature_scale_  # the same decays on the divided features
    # the likelihood acts on the features divided by their spread
    Xs = X / est.feature_scale_
    want = brute_log_joint(Xs, est.last_labels_, est.theta_, LJ_SIDE, similarity=sim, alpha=1.5, beta=1.2, lam=0.3,
                           mu=0.8, nu=1.3, **brute)
    assert np.isfinite(want)
    assert est.result_.history[-1] == pytest.approx(want, rel=1e-10)
    assert est.result_.history == est.result_.info["log_joint"][0].tolist() and len(est.result_.history) == 6


def _chain(est, X, S, labels, seed=0):
    """A chain of ``est``'s model at ``labels`` (blocks take their first node's label)
    with random cluster weights, as the estimator builds it."""
    P = gc.Problem.from_array(X, S)
    merged = SamplerItems(P)
    pot = est._potentials()
    model = pot.model(P, items=(merged.n_items, merged.comp))
    cap = merged.n_items + 1
    rng = np.random.default_rng(seed)
    stats = _ChainState(model, pot._log_new_unit(model.N), pot._params(), rng.normal(size=(cap, model.Xn.shape[1])))
    chain = GibbsChain(stats, merged.n_items, cap)
    chain.set_labels(merged.item_labels(labels))
    stats.noise = rng.normal(size=(merged.n_items, model.Xn.shape[1]))
    return model, stats, chain


def _moves_against_log_joint(model, stats, chain, u):
    """The scores hook's log weights of item ``u`` (for every cluster and a new one) and
    the log joint of the states with ``u`` moved there: their differences must agree."""
    beta, lam = stats.params[0], stats.params[1]
    k_old = int(chain.z[u])
    n_active = chain.n_clusters
    active = chain.active[:n_active].copy()
    chain.z[u] = -1
    out = np.empty(n_active + 1)
    _gibbs_scores(stats.state, u, k_old, chain.z, chain.active, n_active, u, -1, np.zeros(len(stats.size)), out)
    members = np.flatnonzero(model.comp == u)
    free = next(k for k in range(len(stats.size)) if k not in active)
    theta, tsq = stats.theta.copy(), stats.tsq.copy()
    theta[free], tsq[free] = stats.tnew, stats.tn_sq[0]
    joint = []
    for k in list(active) + [free]:
        zn = stats.zn.copy()
        zn[members] = k
        joint.append(_log_joint(model.mode, model.use_max, stats.log_new, model.pri, model.side, model.items,
                                model.comp, zn, theta, tsq, beta, lam))
    return out, np.array(joint)


def test_crp_conditionals_are_ratios_of_the_log_joint():
    """MMDPM with cannot-links (soft and hard): the sampler's conditional of every item
    is a ratio of the log joint, exp(lj(u → k) − lj(u → k')) = p(k) / p(k'), the new
    cluster with the candidate weight the hook drew."""
    X, _ = blobs(n_per=4)
    side = [(0, 2, -1.5), (2, 8, -np.inf), (4, 6, -0.5), (6, 11, -np.inf), (1, 7, -0.3)]
    S = gc.SideInfo(side)
    est = MMDPM(alpha=1.5, lam=0.3, beta=1.2, cl_penalty=1.3, removal_shrink=0.0)
    labels = np.array([0, 0, 1, 1, 2, 0, 1, 2, 2, 0, 1, 2])
    checked = 0
    for u in range(12):
        model, stats, chain = _chain(est, X, S, labels)
        if (chain.z == chain.z[u]).sum() == 1:
            continue  # its cluster would disappear with it: the engine's other path
        out, joint = _moves_against_log_joint(model, stats, chain, u)
        ok = np.isfinite(out)
        np.testing.assert_array_equal(ok, np.isfinite(joint))  # hard cannot-links veto both
        np.testing.assert_allclose(out[ok] - out[-1], joint[ok] - joint[-1], rtol=1e-9, atol=1e-9)
        checked += 1
    assert checked == 12


@pytest.mark.parametrize("similarity, distance", [("max", "euclidean"), ("sum", "euclidean"), ("sum", "knn")])
def test_distance_dependent_conditional_of_the_last_item_is_a_ratio(similarity, distance):
    """With a distance-dependent prior the conditionals come from no joint (the seed
    spec's pitfall P7), so the log joint seats the items in order: moving the last item
    changes only its own term, and its conditional is exactly a ratio of the log joint
    (blocks, soft must-links and the sparse floor included)."""
    X, _ = blobs(n_per=4)
    S = gc.SideInfo(LJ_SIDE + [(5, 11, 0.7)])
    est = DDMMDPM(similarity=similarity, distance=distance, n_neighbors=3, gamma=0.9, alpha=1.5, lam=0.3, beta=1.2,
                  ml_strength=0.8, cl_penalty=1.3, removal_shrink=0.0)
    labels = np.array([0, 1, 1, 0, 2, 1, 0, 2, 2, 0, 2, 2])
    model, stats, chain = _chain(est, X, S, labels)
    u = len(chain.z) - 1
    assert (chain.z == chain.z[u]).sum() > 1
    out, joint = _moves_against_log_joint(model, stats, chain, u)
    ok = np.isfinite(out)
    assert ok.sum() >= 3
    np.testing.assert_array_equal(ok, np.isfinite(joint))
    np.testing.assert_allclose(out[ok] - out[-1], joint[ok] - joint[-1], rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------- defaults (issue #22, item 3)
def _standardised(X):
    return (X - X.mean(0)) / X.std(0)


def _target_data(name):
    """``(data, side information, classes)``: iris as shipped, wine standardised (its
    raw units let proline, in the hundreds, decide every distance), the shipped demo
    (iris as a graph with 40 constraints) and scikit-learn's three-blob check."""
    if name == "iris":
        X, y = gc.datasets.load_iris()
        return X, None, y
    if name == "wine":
        X, y = gc.datasets.load_wine()
        return _standardised(X), None, y
    if name == "demo":
        G, S, y, _ = gc.datasets.load_demo()
        return G, S, y
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=50, random_state=1)
    return _standardised(X), None, y


def _fits(cls, name, seeds=(0, 1)):
    data, S, y = _target_data(name)
    return [cls(random_state=seed).fit(data, S) for seed in seeds], y


#: (estimator, data) pairs whose defaults miss a target, with the figures measured on
#: seeds 0-2 (``benchmarks/bench_ddmmdpm_defaults.py``; docs/ddmmdpm.md, "Defaults that
#: find the number of clusters")
_IRIS_WHY = ("versicolor and virginica touch: started from the true species the sampler leaves them for "
             "ARI 0.54-0.68 (27 settings of beta, lam, gamma tried)")
_MISSED_K = {
    ("MMDPM", "wine"): "measured K 5, 5, 3: the CRP prior keeps fragments",
    ("MMDPM", "demo"): "measured K 2, 5, 2: the CRP prior keeps fragments",
}
_MISSED_ARI = {
    ("DDMMDPM", "iris"): f"measured ARI 0.54, 0.54, 0.54 (K 2, 2, 2); {_IRIS_WHY}",
    ("DDMMDPM", "demo"): f"measured ARI 0.53-0.56 (K 2, 11-12 of the 40 constraints violated); {_IRIS_WHY}",
    ("MMDPM", "iris"): f"measured ARI 0.50-0.52 (K 2, 4, 2); {_IRIS_WHY}",
    ("MMDPM", "demo"): f"measured ARI 0.49-0.52; {_IRIS_WHY}",
    ("MMDPM", "blobs"): "measured ARI 0.57 (K 2), 0.94, 0.91",
}


def _cases(missed):
    return [pytest.param(cls, name, marks=pytest.mark.xfail(strict=True, reason=missed[(cls.__name__, name)]))
            if (cls.__name__, name) in missed else (cls, name)
            for cls in (DDMMDPM, MMDPM) for name in ("iris", "wine", "demo", "blobs")]


@pytest.mark.parametrize("cls, name", _cases(_MISSED_K))
def test_defaults_find_the_number_of_classes_within_one(cls, name):
    """Issue #22: the defaults find the number of classes within ±1 (two seeds)."""
    fits, y = _fits(cls, name)
    k = len(np.unique(y))
    assert [abs(est.n_clusters_ - k) <= 1 for est in fits] == [True, True], [est.n_clusters_ for est in fits]


@pytest.mark.parametrize("cls, name", _cases(_MISSED_ARI))
def test_defaults_reach_ari_07(cls, name):
    """Issue #22: the defaults' partition has ARI >= 0.7 against the classes (two seeds)."""
    fits, y = _fits(cls, name)
    aris = [gc.ari(y, est.labels_) for est in fits]
    assert min(aris) >= 0.7, aris


def test_features_are_divided_by_their_spread_and_base_std_auto_is_the_inverse_rms_norm():
    """The likelihood acts on the features divided by ``feature_scale_``, the RMS
    deviation per coordinate ``sqrt(mean ‖x − x̄‖² / D)`` of the original points (the same
    for a contracted problem: its nodes keep counts and scatter), which is proportional
    to the units; ``base_std="auto"`` is the inverse RMS norm of the divided points,
    ``1/√D``, in any units."""
    X, _ = blobs()
    est = DDMMDPM(n_iter=20, random_state=0).fit(X)
    Xc = X - X.mean(0)
    assert est.feature_scale_ == pytest.approx(np.sqrt((Xc * Xc).sum(1).mean() / X.shape[1]))
    assert est.base_std_ == pytest.approx(1.0 / np.sqrt(X.shape[1]))
    big = DDMMDPM(n_iter=2, random_state=0).fit(100.0 * X)
    assert big.feature_scale_ == pytest.approx(100.0 * est.feature_scale_)
    assert big.base_std_ == pytest.approx(est.base_std_)
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (12, 13)], weight=float("inf"))
    reduced, _ = gc.contract(gc.Problem.from_array(X, S))
    merged = DDMMDPM(n_iter=2, random_state=0).fit(reduced)
    assert merged.feature_scale_ == pytest.approx(est.feature_scale_)
    assert merged.base_std_ == pytest.approx(est.base_std_)
    # no spread: nothing to divide by
    assert DDMMDPM(n_iter=2, random_state=0).fit(np.ones((4, 2))).feature_scale_ == 1.0
    assert DDMMDPM(base_std=0.3, n_iter=5, random_state=0).fit(X).base_std_ == 0.3
    with pytest.raises(InvalidParameterError, match="base_std of DDMMDPM must be > 0.0, got 0.0"):
        DDMMDPM(base_std=0.0).fit(X)
    with pytest.raises(InvalidParameterError, match="base_std of MMDPM must be 'auto' or a number > 0, got 'rms'"):
        MMDPM(base_std="rms").fit(X)


def test_defaults_with_side_information_find_the_iris_species():
    """What the features alone cannot separate, 3 % of the pairs as constraints do:
    iris with 335 correct pairs (measured K 3 and ARI 0.87-0.92 on seeds 0-3)."""
    X, y = gc.datasets.load_iris()
    for seed in (0, 1):
        est = DDMMDPM(random_state=seed).fit(X, gc.SideInfo.sample(y, 335, random_state=seed))
        assert abs(est.n_clusters_ - 3) <= 1 and gc.ari(y, est.labels_) >= 0.7


@pytest.mark.parametrize("cls", [DDMMDPM, MMDPM])
def test_conflicting_soft_constraints_lose_their_suspects_before_sampling(cls):
    """With 20 % of iris' pairs flipped the side information conflicts: the likely-wrong
    constraints are set aside (mostly flipped ones, and what stays is consistent);
    ``drop_suspects=False`` keeps them all; clean pairs lose nothing."""
    X, y = gc.datasets.load_iris()
    S = gc.SideInfo.sample(y, 300, noise=0.2, random_state=0)
    est = cls(n_iter=10, random_state=0).fit(X, S)
    dropped = est.dropped_constraints_
    given = {frozenset((u, v)): w for u, v, w in S.edges()}
    assert len(dropped) > 10 and all(given[frozenset((u, v))] == w for u, v, w in dropped)
    assert np.mean([(y[u] == y[v]) != (w > 0) for u, v, w in dropped]) > 0.8
    out = {frozenset((u, v)) for u, v, _ in dropped}
    assert not gc.SideInfo([(u, v, w) for u, v, w in S.edges() if frozenset((u, v)) not in out]).check().conflicts
    assert cls(n_iter=10, drop_suspects=False, random_state=0).fit(X, S).dropped_constraints_ == []
    assert cls(n_iter=10, random_state=0).fit(X, gc.SideInfo.sample(y, 300, random_state=0)).dropped_constraints_ == []
