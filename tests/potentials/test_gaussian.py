"""DiagonalGaussian: exact costs of merged nodes, the scribble fit, HMRF use."""

import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import InvalidParameterError
from graphclust.potentials import DiagonalGaussian


def _reference_costs(X, labels, K, shrinkage, reg):
    """Per point: fit on the labelled points, shrink, score every point (by hand)."""
    mu = np.array([X[labels == k].mean(0) for k in range(K)])
    var = np.array([X[labels == k].var(0) for k in range(K)])
    cnt = np.bincount(labels[labels >= 0], minlength=K)[:, None]
    pooled = (cnt * var).sum(0) / cnt.sum()
    var = (cnt * var + shrinkage * pooled) / (cnt + shrinkage) + reg
    return 0.5 * (((X[:, None, :] - mu) ** 2) / var + np.log(2 * np.pi * var)).sum(-1), mu, var


def test_fit_and_costs_match_the_formula(rng):
    X = np.concatenate([rng.normal(0, 1, (30, 3)), rng.normal(4, 2, (20, 3))])
    labels = np.full(50, -1)
    labels[:5], labels[30:33] = 0, 1
    g = DiagonalGaussian(2, shrinkage=20.0, reg=1e-3)
    P = gc.Problem.from_array(X)
    g.update(P, labels)
    U, mu, var = _reference_costs(X, labels, 2, 20.0, 1e-3)
    np.testing.assert_allclose(g.means_, mu, rtol=1e-12)
    np.testing.assert_allclose(g.variances_, var, rtol=1e-10)
    np.testing.assert_allclose(g.unary(P), U, rtol=1e-12)


def test_a_merged_node_costs_what_its_points_cost(rng):
    X = rng.normal(size=(12, 2)) * [1.0, 5.0] + [0.0, 100.0]
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (5, 9)], weight=np.inf)
    P = gc.Problem.from_array(X, S)
    reduced, lift = gc.contract(P)
    g = DiagonalGaussian(3)
    g.initialize(P, X[[0, 5, 7]], rng)
    np.testing.assert_allclose(g.unary(reduced), lift.aggregate(g.unary(P)), rtol=1e-9)


def test_empty_clusters_keep_their_parameters_and_no_labels_is_an_error(rng):
    P = gc.Problem.from_array(rng.normal(size=(6, 1)))
    g = DiagonalGaussian(3)
    g.initialize(P, np.array([[0.0], [1.0], [2.0]]), rng)
    before = g.means_.copy()
    g.update(P, np.array([0, 0, 1, 1, -1, -1]))
    assert g.means_[2] == before[2] and g.means_[0] != before[0]
    with pytest.raises(InvalidParameterError, match="no labelled node"):
        g.update(P, np.full(6, -1))


def test_serves_hmrf_with_constant_penalties(rng):
    X = np.concatenate([rng.normal(0, 0.5, (20, 2)), rng.normal(4, 0.5, (20, 2))])
    y = np.repeat([0, 1], 20)
    est = gc.HMRF(DiagonalGaussian(2), penalty="constant", random_state=0).fit(X, gc.SideInfo.sample(y, n_pairs=20,
                                                                                                    random_state=0))
    assert gc.ari(y, est.labels_) == 1.0
    with pytest.raises(InvalidParameterError, match="reg of DiagonalGaussian must be > 0"):
        gc.HMRF(DiagonalGaussian(2, reg=0.0), penalty="constant").fit(X)
