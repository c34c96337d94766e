"""A small vectorised k-means (k-means++ seeding, Lloyd iterations, several restarts).

Used on small dense problems (spectral coordinates, HMRF's start), where it is several
times faster than scikit-learn's ``KMeans`` per call and takes the library's seeding;
``tests/test_kmeans.py`` holds it to scikit-learn's inertia.
"""

import numpy as np

from ._utils import check_random_state, sq_distances
from .seeding import kmeans_plusplus

__all__ = ["kmeans"]


def kmeans(X, k, *, weights=None, n_init=10, max_iter=300, tol=1e-10, random_state=None):
    """Weighted k-means; returns ``(labels, centres, inertia)`` of the best restart."""
    rng = check_random_state(random_state)
    X = np.asarray(X, dtype=float)
    w = np.ones(len(X)) if weights is None else np.asarray(weights, dtype=float)
    best = None
    for _ in range(n_init):
        C = kmeans_plusplus(X, k, rng, w)
        prev = np.inf
        for _ in range(max_iter):
            D = sq_distances(X, C)
            labels = D.argmin(1)
            inertia = float((w * D[np.arange(len(X)), labels]).sum())
            mass = np.bincount(labels, weights=w, minlength=k)
            sums = np.zeros_like(C)
            np.add.at(sums, labels, w[:, None] * X)
            empty = mass == 0
            C = np.where(empty[:, None], C, sums / np.where(empty, 1, mass)[:, None])
            if np.isfinite(prev) and prev - inertia <= tol * max(1.0, prev):
                break
            prev = inertia
        if best is None or inertia < best[2]:
            best = (labels, C, inertia)
    return best
