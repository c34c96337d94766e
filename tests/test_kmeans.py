"""The library's small k-means against scikit-learn's."""

import numpy as np
import pytest
from sklearn.cluster import KMeans

from graphclust._kmeans import kmeans
from graphclust._utils import sq_distances


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_inertia_matches_scikit_learn(seed):
    """Overlapping blobs, where the first assignment after seeding is far from a local
    optimum: Lloyd iterations must run to convergence and reach scikit-learn's inertia."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(c, 1.5, size=(80, 3)) for c in ([0, 0, 0], [3, 0, 0], [0, 3, 0], [3, 3, 3])])
    labels, C, inertia = kmeans(X, 4, n_init=10, random_state=seed)
    ref = KMeans(4, n_init=10, random_state=seed).fit(X)
    assert inertia <= ref.inertia_ * (1 + 1e-3)
    # a fixed point: the labels are the nearest centres, the centres the labels' means
    assert np.array_equal(labels, sq_distances(X, C).argmin(1))
    for c in range(4):
        assert np.allclose(C[c], X[labels == c].mean(0))


def test_weights_act_as_multiplicities():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    w = rng.integers(1, 4, size=60)
    _, C, inertia = kmeans(X, 3, weights=w, n_init=10, random_state=0)
    ref = KMeans(3, n_init=10, random_state=0).fit(np.repeat(X, w, axis=0))
    assert inertia == pytest.approx(ref.inertia_, rel=1e-3) or inertia < ref.inertia_
