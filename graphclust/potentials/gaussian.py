"""Per-cluster diagonal Gaussians: the colour model of scribble segmentation, and a
provider in its own right.

A node stands for ``n_i`` original points (pixels, or the pixels of a superpixel) with
feature sums ``X_i`` and within-node scatter ``S_i`` (see :class:`~graphclust.Problem`),
so its cost under cluster ``k`` is the exact negative log-likelihood of all its points,

.. math::

    U_{ik} = \\frac12 \\sum_c \\left[\\frac{S_{i,cc} + n_i (\\bar x_{ic} - \\mu_{kc})^2}{\\sigma^2_{kc}}
             + n_i \\log(2\\pi\\sigma^2_{kc})\\right],

with no approximation for merged nodes.
"""

import numpy as np

from .._params import Integer, Real
from ..errors import InvalidParameterError
from .base import NodePotentials, check_features, check_seeds

__all__ = ["DiagonalGaussian"]


class DiagonalGaussian(NodePotentials):
    """Diagonal Gaussian per cluster, fitted by maximum likelihood with shrinkage.

    Parameters
    ----------
    n_clusters : int, default=2
    shrinkage : float, default=20.0
        Each cluster's variances are pulled towards the variances pooled over all
        clusters with the weight of this many points: a cluster fitted on a few
        points (a short scribble) gets no wild variance.
    reg : float, default=1e-3
        Added to every variance (keeps it positive on flat data).

    Attributes
    ----------
    means_ : ndarray of shape (n_clusters, n_features)
    variances_ : ndarray of shape (n_clusters, n_features)

    Notes
    -----
    :meth:`update` accepts labels ``-1`` for nodes that belong to no cluster (pixels
    nobody scribbled on): they take no part in the fit. A cluster with no points
    keeps its previous parameters.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0], [0.2], [5.0], [5.4], [2.6]])
    >>> P = gc.Problem.from_array(X)
    >>> g = DiagonalGaussian(2, shrinkage=0.0, reg=0.01)
    >>> g.update(P, np.array([0, 0, 1, 1, -1]))
    >>> g.means_.ravel().tolist(), g.unary(P).argmin(axis=1).tolist()
    ([0.1, 5.2], [0, 0, 1, 1, 1])
    """

    _parameter_constraints = {
        "n_clusters": Integer(low=1),
        "shrinkage": Real(low=0.0),
        "reg": Real(low=0.0, low_open=True),
    }

    def __init__(self, n_clusters=2, *, shrinkage=20.0, reg=1e-3):
        self.n_clusters = n_clusters
        self.shrinkage = shrinkage
        self.reg = reg

    def _points(self, problem):
        X, counts = check_features(problem, "DiagonalGaussian")
        return X, counts.astype(np.float64)

    def initialize(self, problem, seeds, rng):
        X, n = self._points(problem)
        seeds = check_seeds(seeds, self.n_clusters, X.shape[1])
        # every cluster starts with the variance of all the data around its mean
        total = n.sum()
        mean = X.sum(0) / total
        var = np.maximum(problem.second_moments(diagonal=True).sum(0) / total - mean ** 2, 0.0)
        self.means_ = seeds.copy()
        self.variances_ = np.tile(var + self.reg, (self.n_clusters, 1))

    def update(self, problem, labels, **penalty_terms):
        """Maximum-likelihood means and variances of the labelled nodes' points, the
        variances shrunk towards their pooled value (constraint terms are ignored)."""
        X, n = self._points(problem)
        labels = np.asarray(labels, dtype=np.int64)
        on = labels >= 0
        if not on.any():
            raise InvalidParameterError("DiagonalGaussian.update() got no labelled node (every label is -1)")
        z, K, d = labels[on], self.n_clusters, X.shape[1]
        S2 = problem.second_moments(diagonal=True)[on]
        cnt = np.bincount(z, weights=n[on], minlength=K)
        sums = np.stack([np.bincount(z, weights=X[on, c], minlength=K) for c in range(d)], 1)
        sq = np.stack([np.bincount(z, weights=S2[:, c], minlength=K) for c in range(d)], 1)
        have = cnt > 0
        safe = np.where(have, cnt, 1.0)[:, None]
        mu = sums / safe
        var = np.maximum(sq / safe - mu ** 2, 0.0)
        pooled = (cnt[:, None] * var).sum(0) / cnt.sum()
        var = (cnt[:, None] * var + self.shrinkage * pooled) / (cnt[:, None] + self.shrinkage) + self.reg
        if getattr(self, "means_", None) is None:
            self.means_, self.variances_ = mu, var
        else:
            self.means_ = np.where(have[:, None], mu, self.means_)
            self.variances_ = np.where(have[:, None], var, self.variances_)

    def unary(self, problem):
        X, n = self._points(problem)
        mean = X / n[:, None]
        index, blocks = problem.within_scatter()
        diag = np.zeros_like(X)
        has = index >= 0
        if has.any():
            diag[has] = np.einsum("kcc->kc", blocks)[index[has]]
        cost = np.zeros((len(X), self.n_clusters))
        for c in range(X.shape[1]):  # channels, not points
            mu, var = self.means_[:, c], self.variances_[:, c]
            cost += 0.5 * ((diag[:, c:c + 1] + n[:, None] * (mean[:, c:c + 1] - mu) ** 2) / var
                           + n[:, None] * np.log(2 * np.pi * var))
        return cost
