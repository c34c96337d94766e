"""The colour model's own EM (``graphclust.potentials.mixture``) against scikit-learn's
``GaussianMixture``, which it replaces so that segmentation never imports scikit-learn."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

import graphclust as gc
from graphclust.potentials.mixture import _m_step, fit_mixture, mixture_em, weighted_log_densities


def _blobs(seed, d):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(0.0, 1.0, (300, d)), rng.normal(3.0, 0.5, (200, d)),
                           rng.normal(-2.0, 0.3, (100, d))])


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("max_iter", [1, 4, 30])
def test_em_takes_scikit_learns_steps_from_the_same_start(d, max_iter):
    Y = _blobs(d, d)
    resp = np.random.default_rng(5).dirichlet(np.ones(4), size=len(Y))
    w, mu, P = _m_step(Y, resp, 1e-3)
    ref = GaussianMixture(4, covariance_type="full", reg_covar=1e-3, max_iter=max_iter, tol=1e-3, weights_init=w,
                          means_init=mu, precisions_init=np.einsum("kij,klj->kil", P, P))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref.fit(Y)
    w2, mu2, P2, n_iter = mixture_em(Y, w, mu, P, reg=1e-3, max_iter=max_iter)
    assert n_iter == ref.n_iter_
    np.testing.assert_allclose(w2, ref.weights_, atol=1e-10)
    np.testing.assert_allclose(mu2, ref.means_, atol=1e-9)
    np.testing.assert_allclose(P2, ref.precisions_cholesky_, atol=1e-8)
    # and the densities it scores with are scikit-learn's
    np.testing.assert_allclose(np.logaddexp.reduce(weighted_log_densities(Y, w2, mu2, P2), axis=0),
                               ref.score_samples(Y), atol=1e-9)


def test_fit_mixture_finds_the_components_and_follows_random_state():
    Y = _blobs(0, 2)
    w, mu, P = fit_mixture(Y, 3, reg=1e-6, random_state=0)
    order = np.argsort(mu[:, 0])
    np.testing.assert_allclose(mu[order, 0], [-2.0, 0.0, 3.0], atol=0.2)
    np.testing.assert_allclose(w[order], [1 / 6, 1 / 2, 1 / 3], atol=0.03)
    again = fit_mixture(Y, 3, reg=1e-6, random_state=0)
    assert all(np.array_equal(a, b) for a, b in zip((w, mu, P), again))
    # as good a fit as scikit-learn's own (its k-means start, several restarts)
    ref = GaussianMixture(3, covariance_type="full", reg_covar=1e-6, n_init=5, random_state=0).fit(Y)
    ours = np.logaddexp.reduce(weighted_log_densities(Y, w, mu, P), axis=0).mean()
    assert ours >= ref.score(Y) - 1e-3


def test_one_component_is_the_sample_mean_and_covariance():
    Y = _blobs(1, 2)
    w, mu, P = fit_mixture(Y, 1, reg=1e-4)
    np.testing.assert_allclose(mu[0], Y.mean(0))
    cov = np.cov(Y, rowvar=False, bias=True) + 1e-4 * np.eye(2)
    np.testing.assert_allclose(P[0] @ P[0].T, np.linalg.inv(cov), rtol=1e-10)
    w1, mu1, P1 = fit_mixture(Y[:1], 5, reg=0.5)  # one point: its own mean, reg as covariance
    np.testing.assert_allclose(mu1[0], Y[0])
    np.testing.assert_allclose(P1[0] @ P1[0].T, np.eye(2) / 0.5, atol=1e-12)


def test_gaussian_mixtures_costs_are_the_mixture_negative_log_likelihood():
    Y = _blobs(2, 3)
    labels = np.repeat([0, 1, -1], [300, 200, 100])
    g = gc.potentials.GaussianMixtures(2, n_components=2, reg=1e-3, random_state=0)
    g.update(gc.Problem.from_array(Y), labels)
    U = g.costs(Y)
    assert U.dtype == np.float32 and U.shape == (600, 2)
    for k in range(2):
        expected = -np.logaddexp.reduce(weighted_log_densities(Y, g.weights_[k], g.means_[k],
                                                               g.precisions_cholesky_[k]), axis=0)
        np.testing.assert_allclose(U[:, k], expected, rtol=1e-6)
    assert (U[:300, 0] < U[:300, 1]).mean() > 0.9 and (U[300:500, 1] < U[300:500, 0]).mean() > 0.9


def test_shrinkage_pulls_a_few_points_toward_the_pooled_covariance():
    """Three points of one label give a needle-thin maximum-likelihood Gaussian; with
    ``shrinkage`` its covariance is ``(3 C + kappa S) / (3 + kappa)``, ``S`` the
    within-label covariance pooled over both labels."""
    rng = np.random.default_rng(0)
    few = np.array([[0.0, 0.0], [0.1, 0.0], [0.2, 0.001]])
    many = rng.normal(5.0, 1.0, (400, 2))
    Y = np.concatenate([few, many])
    labels = np.repeat([0, 1], [3, 400])
    P = gc.Problem.from_array(Y)

    def covariance(g, k):
        L = g.precisions_cholesky_[k][0]
        return np.linalg.inv(L @ L.T)

    ml = gc.potentials.GaussianMixtures(2, n_components=1, reg=1e-6, shrinkage=0.0)
    ml.update(P, labels)
    np.testing.assert_allclose(covariance(ml, 0), np.cov(few, rowvar=False, bias=True) + 1e-6 * np.eye(2), atol=1e-12)
    shrunk = gc.potentials.GaussianMixtures(2, n_components=1, reg=1e-6, shrinkage=20.0)
    shrunk.update(P, labels)
    pooled = ((few - few.mean(0)).T @ (few - few.mean(0)) + (many - many.mean(0)).T @ (many - many.mean(0))) / 403
    expected = (3 * np.cov(few, rowvar=False, bias=True) + 20 * pooled) / 23 + 1e-6 * np.eye(2)
    np.testing.assert_allclose(covariance(shrunk, 0), expected, rtol=1e-9)
    # the many-point label hardly moves
    np.testing.assert_allclose(covariance(shrunk, 1), covariance(ml, 1), rtol=0.05)
    # a point between the labels' reach: the needle gives it away, the shrunk model keeps it near its mean
    x = np.array([[0.1, 0.6]])
    assert ml.costs(x)[0, 0] > ml.costs(x)[0, 1] and shrunk.costs(x)[0, 0] < shrunk.costs(x)[0, 1]
