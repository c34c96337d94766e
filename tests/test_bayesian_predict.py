"""predict and predict_proba of the Bayesian estimators with a model of a cluster
(TVClust, DDMMDPM, MMDPM): against the conjugate formulas and the dd-MMDPM
conditional written out by hand, recovery of planted blobs, and bad input."""

import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

import graphclust as gc
from graphclust.errors import InvalidFeaturesError, InvalidParameterError, NotFittedError


def blobs(n_per, seed, sd=0.5):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [3.0, 6.0]])
    y = np.repeat(np.arange(3), n_per)
    return centres[y] + rng.normal(scale=sd, size=(3 * n_per, 2)), y


#: estimators that find the three blobs of ``blobs``, with few sweeps
MAKERS = {
    "TVClust": lambda: gc.TVClust(n_iter=40, random_state=0),
    "DDMMDPM": lambda: gc.DDMMDPM(n_iter=40, random_state=0),
    "DDMMDPM-knn": lambda: gc.DDMMDPM(distance="knn", n_iter=40, random_state=0),
    "MMDPM": lambda: gc.MMDPM(n_iter=40, random_state=0),
}


@pytest.mark.parametrize("name", MAKERS)
def test_predict_recovers_the_blobs(name):
    """Training points get their own labels back (>= 95 %) and fresh points from the
    same blobs get their blob's cluster (ARI >= 0.9)."""
    X, y = blobs(30, seed=0)
    est = MAKERS[name]().fit(X)
    assert gc.ari(y, est.labels_) >= 0.9, est.n_clusters_
    assert np.mean(est.predict(X) == est.labels_) >= 0.95
    X_new, y_new = blobs(20, seed=1)
    pred = est.predict(X_new)
    assert gc.ari(y_new, pred) >= 0.9
    assert set(pred) <= set(est.labels_)


@pytest.mark.parametrize("name", MAKERS)
def test_predict_shapes_dtypes_and_pickle(name):
    X, _ = blobs(10, seed=2)
    est = MAKERS[name]().fit(X)
    pred = est.predict(X[:7])
    assert pred.dtype == np.int64 and pred.shape == (7,)
    P = est.predict_proba(X[:7])
    assert P.shape == (7, est.n_clusters_) and P.dtype == np.float64
    np.testing.assert_allclose(P.sum(1), 1.0)
    np.testing.assert_array_equal(P.argmax(1), pred)
    assert est.predict(X[:1]).shape == (1,)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    np.testing.assert_allclose(again.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("name", MAKERS)
def test_predict_bad_input(name):
    X, _ = blobs(10, seed=2)
    est = MAKERS[name]()
    with pytest.raises(NotFittedError, match=f"This {type(est).__name__} instance is not fitted yet"):
        est.predict(X)
    est.fit(X)
    with pytest.raises(InvalidFeaturesError, match=f"X has 3 features, but {type(est).__name__} is expecting 2"):
        est.predict(np.zeros((2, 3)))
    with pytest.raises(InvalidFeaturesError, match="row 1 of X has NaN in column 0"):
        est.predict([[0.0, 0.0], [np.nan, 1.0]])
    with pytest.raises(InvalidFeaturesError, match="Reshape your data"):
        est.predict(np.zeros(2))


# ============================================================================ TVClust oracle
TINY = np.array([[0.0, 0.2], [0.3, -0.1], [-0.2, 0.1], [0.1, 0.4],
                 [3.0, 3.1], [3.4, 2.8], [2.7, 3.3]])
#: new points: near each cluster, between them, far away
NEW = np.array([[0.1, 0.1], [3.1, 3.0], [1.6, 1.5], [1.4, 1.7], [-4.0, 6.0]])


def _data_prior(X):
    """TVClust's default Gaussian prior from the data: the mean and per-feature variance."""
    return X.mean(0), X.var(0)


def niw_oracle(X, labels, Xnew, kappa0=0.01):
    """n_k · multivariate Student-t posterior predictive (Murphy 2007, eq. 258)."""
    d = X.shape[1]
    m0, var = _data_prior(X)
    nu0 = d + 2.0
    psi0 = (nu0 - d - 1.0) * np.diag(var)
    out = []
    for k in range(labels.max() + 1):
        P = X[labels == k]
        n = len(P)
        xbar = P.mean(0)
        S = (P - xbar).T @ (P - xbar)
        kn, nun = kappa0 + n, nu0 + n
        mn = (kappa0 * m0 + n * xbar) / kn
        psin = psi0 + S + kappa0 * n / kn * np.outer(xbar - m0, xbar - m0)
        df = nun - d + 1.0
        t = stats.multivariate_t(loc=mn, shape=psin * (kn + 1.0) / (kn * df), df=df)
        out.append(n * t.pdf(Xnew))
    W = np.stack(out, axis=1)
    return W / W.sum(1, keepdims=True)


def nig_oracle(X, labels, Xnew, kappa0=0.01, a0=1.5):
    """n_k · product over features of Student-t posterior predictives."""
    m0, var = _data_prior(X)
    b0 = (a0 - 1.0) * var
    out = []
    for k in range(labels.max() + 1):
        P = X[labels == k]
        n = len(P)
        xbar = P.mean(0)
        kn, an = kappa0 + n, a0 + n / 2.0
        mn = (kappa0 * m0 + n * xbar) / kn
        bn = b0 + 0.5 * ((P - xbar) ** 2).sum(0) + kappa0 * n * (xbar - m0) ** 2 / (2.0 * kn)
        scale = np.sqrt(bn * (kn + 1.0) / (an * kn))
        out.append(n * stats.t.pdf(Xnew, df=2.0 * an, loc=mn, scale=scale).prod(1))
    W = np.stack(out, axis=1)
    return W / W.sum(1, keepdims=True)


def dirmult_oracle(X, labels, Xnew, beta=1.0):
    """n_k · Dirichlet-multinomial posterior predictive."""
    B = beta * X.shape[1]
    N = Xnew.sum(1)
    coef = gammaln(N + 1.0) - gammaln(Xnew + 1.0).sum(1)
    out = []
    for k in range(labels.max() + 1):
        c = X[labels == k].sum(0)
        C = c.sum()
        lp = (coef + gammaln(B + C) - gammaln(B + C + N)
              + (gammaln(beta + c + Xnew) - gammaln(beta + c)).sum(1))
        out.append(np.log((labels == k).sum()) + lp)
    L = np.stack(out, axis=1)
    W = np.exp(L - L.max(1, keepdims=True))
    return W / W.sum(1, keepdims=True)


@pytest.mark.parametrize("likelihood, oracle", [("gaussian", niw_oracle), ("gaussian-diag", nig_oracle)])
def test_tvclust_predict_proba_is_the_conjugate_posterior_predictive(likelihood, oracle):
    est = gc.TVClust(likelihood, n_iter=30, random_state=0).fit(TINY)
    np.testing.assert_array_equal(est.labels_, [0, 0, 0, 0, 1, 1, 1])
    want = oracle(TINY, est.labels_, NEW)
    np.testing.assert_allclose(est.predict_proba(NEW), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.predict(NEW), want.argmax(1))
    # the midpoints are genuinely uncertain: the test would see a wrong weighting
    assert 0.05 < want[2, 0] < 0.95 and 0.05 < want[3, 0] < 0.95


def test_tvclust_multinomial_predictive():
    X = np.array([[6, 0, 1], [5, 1, 0], [7, 1, 1], [0, 6, 1], [1, 5, 0], [0, 7, 2]], dtype=float)
    new = np.array([[4, 0, 0], [0, 3, 1], [2, 2, 1], [1, 1, 9]], dtype=float)
    est = gc.TVClust("multinomial", n_iter=30, random_state=0).fit(X)
    np.testing.assert_array_equal(est.labels_, [0, 0, 0, 1, 1, 1])
    want = dirmult_oracle(X, est.labels_, new)
    np.testing.assert_allclose(est.predict_proba(new), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.predict(new), want.argmax(1))
    with pytest.raises(InvalidFeaturesError, match="row 1 of X has a negative count"):
        est.predict([[1, 0, 0], [0, -1, 0]])


def test_tvclust_predict_with_hard_must_links_and_a_contracted_problem():
    """Hard must-links (blocks moved as one) and a problem from ``contract`` (nodes
    carrying several points with their scatter) predict from the clusters' points."""
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (4, 5)], weight=float("inf"))
    est = gc.TVClust(n_iter=30, random_state=0).fit(TINY, S)
    np.testing.assert_array_equal(est.labels_, [0, 0, 0, 0, 1, 1, 1])
    want = niw_oracle(TINY, est.labels_, NEW)
    np.testing.assert_allclose(est.predict_proba(NEW), want, rtol=1e-9, atol=1e-12)
    reduced, lift = gc.contract(gc.Problem.from_array(TINY, S))
    merged = gc.TVClust(n_iter=30, random_state=0).fit(reduced)
    np.testing.assert_array_equal(lift(merged.labels_), est.labels_)
    np.testing.assert_allclose(merged.predict_proba(NEW), want, rtol=1e-9, atol=1e-12)


# ============================================================================ dd-MMDPM oracle
def ddmmdpm_oracle(X, labels, Xnew, similarity, gamma, lam, beta, knn=None, floor=True):
    """The sampler's conditional for one more point, cluster by cluster, point by point."""
    centre = X.mean(0)
    K = labels.max() + 1
    out = np.empty((len(Xnew), K))
    for a, x in enumerate(Xnew):
        d = np.sqrt(((X - x) ** 2).sum(1))
        near = np.argsort(d, kind="stable")[:knn] if knn else np.arange(len(X))
        eps = np.exp(-np.sort(d)[knn] / gamma) if knn and floor else 0.0
        for k in range(K):
            members = np.flatnonzero(labels == k)
            mu = (X[members] - centre).mean(0)
            theta = beta * mu / (2.0 * lam)
            lik = beta * (x - centre) @ theta - lam * theta @ theta
            if similarity == "crp":
                g = len(members)
            else:
                f = [np.exp(-d[j] / gamma) for j in members if j in near]
                g = max(f + [eps]) if similarity == "max" else sum(f) + eps
            out[a, k] = np.log(g) + lik
    return out


@pytest.mark.parametrize("similarity, knn", [("sum", None), ("max", None), ("sum", 3), ("max", 3)])
def test_ddmmdpm_predict_is_the_conditional_of_one_more_point(similarity, knn):
    kw = dict(distance="knn", n_neighbors=knn) if knn else {}
    est = gc.DDMMDPM(similarity, gamma=0.8, lam=0.5, beta=2.0, n_iter=40, random_state=0, **kw).fit(TINY)
    np.testing.assert_array_equal(est.labels_, [0, 0, 0, 0, 1, 1, 1])
    # the likelihood acts on the features divided by their spread (the RMS deviation per
    # coordinate); the given gamma is in the data's units
    sc = est.feature_scale_
    assert sc == pytest.approx(np.sqrt(((TINY - TINY.mean(0)) ** 2).mean()))
    s = ddmmdpm_oracle(TINY / sc, est.labels_, NEW / sc, similarity, 0.8 / sc, 0.5, 2.0, knn=knn)
    want = np.exp(s - s.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(est.predict_proba(NEW), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(est.predict(NEW), s.argmax(1))


def test_mmdpm_predict_is_a_gaussian_component_per_cluster():
    """MMDPM: log n_k + β x_cᵀθ_k − λ‖θ_k‖² with θ_k = βμ_k/(2λ), which is
    log n_k − β²‖x − μ_k‖²/(4λ) up to a constant of x."""
    est = gc.MMDPM(lam=0.7, beta=2.0, n_iter=40, random_state=0).fit(TINY)
    np.testing.assert_array_equal(est.labels_, [0, 0, 0, 0, 1, 1, 1])
    sc = est.feature_scale_
    s = ddmmdpm_oracle(TINY / sc, est.labels_, NEW / sc, "crp", None, 0.7, 2.0)
    P = est.predict_proba(NEW)
    want = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(P, want / want.sum(1, keepdims=True), rtol=1e-9, atol=1e-12)
    mu = np.stack([TINY[est.labels_ == k].mean(0) for k in range(2)])
    n = np.bincount(est.labels_)
    gauss = np.log(n) - 2.0**2 * ((NEW[:, None, :] - mu[None]) ** 2).sum(-1) / (4 * 0.7 * sc**2)
    gauss = np.exp(gauss - gauss.max(1, keepdims=True))
    np.testing.assert_allclose(P, gauss / gauss.sum(1, keepdims=True), rtol=1e-9, atol=1e-12)


def test_ddmmdpm_without_distances_to_new_points_says_so():
    D = np.sqrt(((TINY[:, None] - TINY[None]) ** 2).sum(-1))
    est = gc.DDMMDPM(distance=D, n_iter=10, random_state=0).fit(TINY)
    with pytest.raises(InvalidParameterError, match="precomputed distance matrix has no distances from new points"):
        est.predict(NEW)
    G = gc.knn_graph(TINY, n_neighbors=3)
    est = gc.DDMMDPM(distance="graph", n_iter=10, random_state=0).fit(G)
    with pytest.raises(InvalidParameterError, match="distance='graph' .* or fit on the old and new points together"):
        est.predict(NEW)


def test_predict_uses_the_fitted_values_not_later_parameters():
    est = gc.DDMMDPM(gamma=0.8, n_iter=30, random_state=0).fit(TINY)
    before = est.predict_proba(NEW)
    est.set_params(gamma=50.0, similarity="max", beta=9.0)
    np.testing.assert_array_equal(est.predict_proba(NEW), before)
