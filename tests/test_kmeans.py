"""The internal k-means wrapper: converged, weighted, following ``random_state``."""

import numpy as np
import pytest

from graphclust._kmeans import kmeans
from graphclust._utils import sq_distances


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_converged_fixed_point(seed):
    """Overlapping blobs, where one assignment after seeding is far from a local
    optimum: the labels are the nearest centres and the centres the labels' means."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(c, 1.5, size=(80, 3)) for c in ([0, 0, 0], [3, 0, 0], [0, 3, 0], [3, 3, 3])])
    labels, C, inertia = kmeans(X, 4, n_init=10, random_state=seed)
    assert np.array_equal(labels, sq_distances(X, C).argmin(1))
    for c in range(4):
        assert np.allclose(C[c], X[labels == c].mean(0))
    assert inertia == pytest.approx(sq_distances(X, C)[np.arange(len(X)), labels].sum())


def test_weights_act_as_multiplicities():
    """Integer weights give the inertia of the data with rows repeated."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    w = rng.integers(1, 4, size=60)
    labels, C, inertia = kmeans(X, 3, weights=w, n_init=10, random_state=0)
    R = np.repeat(X, w, axis=0)
    assert inertia == pytest.approx(sq_distances(R, C).min(1).sum())
    for c in range(3):
        assert np.allclose(C[c], np.average(X[labels == c], axis=0, weights=w[labels == c]))


def test_random_state():
    X = np.random.default_rng(4).normal(size=(50, 2))
    a = kmeans(X, 4, n_init=1, random_state=5)[0]
    assert np.array_equal(a, kmeans(X, 4, n_init=1, random_state=5)[0])
    assert np.array_equal(a, kmeans(X, 4, n_init=1, random_state=np.random.default_rng(5))[0])
