"""Weighted k-means for the library's internal starts (HMRF's start, the spectral
embedding, the silhouette scan of :func:`graphclust.cluster`).

scikit-learn's Lloyd iterations do the work; this wrapper only draws its seed from the
library's random generator, so results follow ``random_state`` like everything else.
"""

import warnings

import numpy as np

from ._utils import check_random_state

__all__ = ["kmeans"]


def kmeans(X, k, *, weights=None, n_init=10, max_iter=300, tol=1e-10, random_state=None):
    """Weighted k-means (k-means++ seeding, Lloyd iterations to convergence, best of
    ``n_init`` restarts); returns ``(labels, centres, inertia)``."""
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    rng = check_random_state(random_state)
    X = np.asarray(X, dtype=float)
    w = None if weights is None else np.asarray(weights, dtype=float)
    est = KMeans(int(k), n_init=int(n_init), max_iter=int(max_iter), tol=float(tol), algorithm="lloyd",
                 random_state=int(rng.integers(2**31)))
    with warnings.catch_warnings():
        # fewer distinct points than k: the duplicates' clusters stay empty-free anyway
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, sample_weight=w)
    return est.labels_.astype(np.int64), est.cluster_centers_, float(est.inertia_)
