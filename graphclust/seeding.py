"""Choosing initial cluster representatives: the one home of the seeding rules.

* :func:`farthest_first`: greedy farthest-first traversal under any distortion,
  optionally weighted (HMRF-KMeans' seeds from must-link neighbourhoods weigh each
  neighbourhood by its size), recording the gap of every pick (RDP-means reads λ off
  those gaps);
* :func:`kmeans_plusplus`: k-means++ sampling (centres drawn with probability
  proportional to the squared distance to the nearest centre so far), by
  scikit-learn's ``sklearn.cluster.kmeans_plusplus`` with the library's random stream.
"""

import numpy as np

__all__ = ["farthest_first", "kmeans_plusplus"]


def farthest_first(distances_to, dmin, n_steps, *, weights=None, first=None, stop_at_zero=False):
    """Greedy farthest-first traversal.

    Parameters
    ----------
    distances_to : callable
        ``distances_to(i)`` returns the distortion of every point to point ``i``,
        shape ``(n_points,)``.
    dmin : ndarray of shape (n_points,)
        Distortion of every point to what is already chosen (``inf`` everywhere when
        nothing is). Not modified.
    n_steps : int
        Number of picks.
    weights : ndarray of shape (n_points,) or None, default=None
        A pick maximises ``weights * dmin`` instead of ``dmin``.
    first : int or None, default=None
        Index of the first pick (then ``n_steps - 1`` more follow).
    stop_at_zero : bool, default=False
        Stop once the largest remaining distortion is 0 (every point coincides with
        a pick).

    Returns
    -------
    picks : ndarray of shape (n_picks,), dtype int64
        Distinct indices, in the order chosen.
    gaps : ndarray of shape (n_picks,)
        Distortion of each pick to the set before it was added (``dmin`` at the time;
        ``inf`` for a ``first`` pick made into an empty set).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 1.0, 5.0, 9.0])
    >>> picks, gaps = farthest_first(lambda i: (x - x[i]) ** 2, (x - 4.0) ** 2, 3)
    >>> picks.tolist(), gaps.tolist()
    ([3, 0, 1], [25.0, 16.0, 1.0])
    """
    dmin = np.array(dmin, dtype=np.float64, copy=True)
    taken = np.zeros(len(dmin), dtype=bool)
    picks, gaps = [], []
    for step in range(n_steps):
        if step == 0 and first is not None:
            i = int(first)
        else:
            score = dmin if weights is None else weights * dmin
            score = np.where(taken, -np.inf, score)
            i = int(np.argmax(score))
            if taken[i]:  # every point is taken
                break
        gap = float(dmin[i])
        picks.append(i)
        gaps.append(gap)
        if stop_at_zero and gap <= 0.0:
            break
        taken[i] = True
        dmin = np.minimum(dmin, distances_to(i))
    return np.asarray(picks, dtype=np.int64), np.asarray(gaps)


def kmeans_plusplus(X, k, rng, weights=None):
    """k-means++ seeding: ``(k, n_features)`` centres, each drawn with probability
    proportional to the squared distance to the nearest centre already chosen (times
    the optional weights), the first by the weights alone. scikit-learn's greedy
    variant does the drawing (``2 + log k`` candidates per centre, the one that lowers
    the potential most kept); its seed comes from ``rng``."""
    from sklearn.cluster import kmeans_plusplus as sklearn_kmeans_plusplus

    X = np.asarray(X, dtype=np.float64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    centres, _ = sklearn_kmeans_plusplus(X, int(k), sample_weight=w, random_state=int(rng.integers(2**31)))
    return centres
