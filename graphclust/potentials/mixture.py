"""A Gaussian mixture per label: the colour model of scribble segmentation.

Each label ``k`` has a mixture of ``n_components`` full-covariance Gaussians over the
features (pixel colours or intensities), fitted by EM (scikit-learn's
``GaussianMixture``) on the nodes currently carrying the label — first the scribbled
pixels, then, in the GrabCut-style refinement of :func:`graphclust.segment`, the
current segmentation. The cost of label ``k`` at a node with feature mean ``x`` is the
negative log-likelihood

.. math::

    U_{ik} = -n_i \\log \\sum_j \\pi_{kj} \\, \\mathcal N(x_i \\mid \\mu_{kj}, \\Sigma_{kj}),

``n_i`` the points the node stands for (1 for a pixel). Costs are computed in blocks
of nodes and returned as float32, so scoring a large image needs no float64 array of
its size.
"""

import warnings

import numpy as np

from .._params import Integer, RandomState, Real
from .._utils import check_random_state
from ..errors import InvalidParameterError
from .base import NodePotentials, check_features

__all__ = ["GaussianMixtures"]

_BLOCK = 1 << 17  # nodes scored at once


class GaussianMixtures(NodePotentials):
    """A Gaussian mixture per cluster (label), fitted on the nodes carrying the label.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of labels.
    n_components : int, default=5
        Gaussians per label (fewer when a label has fewer distinct points).
    reg : float, default=1e-4
        Added to the diagonal of every covariance, in squared feature units.
    max_samples : int, default=20000
        A label with more nodes is fitted on this many of them, drawn at random
        (the fit costs ``O(max_samples · n_components · d²)`` per EM step).
    max_iter : int, default=30
        EM iterations per fit.
    random_state : None, int or numpy.random.Generator, default=0
        Subsampling and the k-means start of each fit.

    Attributes
    ----------
    weights_, means_, precisions_cholesky_ : list of ndarray, one entry per label
        Mixture weights ``(m,)``, means ``(m, d)`` and Cholesky factors of the
        precisions ``(m, d, d)``.

    Notes
    -----
    :meth:`update` accepts labels ``-1`` for nodes that belong to no label (pixels
    nobody scribbled on); a label with no node keeps its previous mixture (and before
    any, is an error naming it).

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0], [0.2], [0.1], [5.0], [5.4], [5.2], [2.4]])
    >>> P = gc.Problem.from_array(X)
    >>> g = GaussianMixtures(2, n_components=1)
    >>> g.update(P, np.array([0, 0, 0, 1, 1, 1, -1]))
    >>> g.unary(P).argmin(axis=1).tolist()  # 2.4 is nearer 0.1, but the tight cluster rules it out
    [0, 0, 0, 1, 1, 1, 1]
    """

    _parameter_constraints = {
        "n_clusters": Integer(low=1),
        "n_components": Integer(low=1),
        "reg": Real(low=0.0, low_open=True),
        "max_samples": Integer(low=1),
        "max_iter": Integer(low=1),
        "random_state": RandomState(),
    }

    def __init__(self, n_clusters=2, *, n_components=5, reg=1e-4, max_samples=20000, max_iter=30, random_state=0):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.reg = reg
        self.max_samples = max_samples
        self.max_iter = max_iter
        self.random_state = random_state

    def initialize(self, problem, seeds, rng):
        """One Gaussian per label at each seed, with the data's covariance."""
        X, n = check_features(problem, "GaussianMixtures")
        seeds = np.asarray(seeds, dtype=np.float64)
        Y = X / n[:, None]
        cov = np.atleast_2d(np.cov(Y, rowvar=False)) + self.reg * np.eye(Y.shape[1])
        chol = np.linalg.cholesky(np.linalg.inv(cov))
        self.weights_ = [np.ones(1) for _ in range(self.n_clusters)]
        self.means_ = [s[None, :].copy() for s in seeds]
        self.precisions_cholesky_ = [chol[None].copy() for _ in range(self.n_clusters)]

    def update(self, problem, labels, **penalty_terms):
        """Fit each label's mixture on the node means carrying it (labels ``-1``
        ignored; constraint terms are not used)."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.mixture import GaussianMixture

        X, n = check_features(problem, "GaussianMixtures")
        labels = np.asarray(labels).reshape(-1)
        rng = check_random_state(self.random_state)
        if getattr(self, "means_", None) is not None:
            weights, means, chols = list(self.weights_), list(self.means_), list(self.precisions_cholesky_)
        else:
            weights, means, chols = [None] * self.n_clusters, [None] * self.n_clusters, [None] * self.n_clusters
        for k in range(self.n_clusters):
            idx = np.flatnonzero(labels == k)
            if idx.size == 0:
                if means[k] is None:
                    raise InvalidParameterError(f"label {k} has no node to fit its colour model on")
                continue
            if idx.size > self.max_samples:
                idx = np.sort(rng.choice(idx, self.max_samples, replace=False))
            Y = np.asarray(X[idx], dtype=np.float64) / np.asarray(n[idx], dtype=np.float64)[:, None]
            m = min(self.n_components, len(np.unique(Y, axis=0)))
            if m <= 1:
                mu = Y.mean(0)
                cov = np.atleast_2d(np.cov(Y, rowvar=False)) if len(Y) > 1 else np.zeros((Y.shape[1],) * 2)
                cov = cov + self.reg * np.eye(Y.shape[1])
                weights[k], means[k] = np.ones(1), mu[None]
                chols[k] = np.linalg.cholesky(np.linalg.inv(cov))[None]
                continue
            gm = GaussianMixture(m, covariance_type="full", reg_covar=self.reg, max_iter=self.max_iter,
                                 random_state=int(rng.integers(2 ** 31)))
            with warnings.catch_warnings():  # a fit short of convergence still scores well
                warnings.filterwarnings("ignore", category=ConvergenceWarning)
                gm.fit(Y)
            weights[k], means[k], chols[k] = gm.weights_, gm.means_, gm.precisions_cholesky_
        self.weights_, self.means_, self.precisions_cholesky_ = weights, means, chols

    def unary(self, problem):
        X, n = check_features(problem, "GaussianMixtures")
        return self.costs(X, n)

    def costs(self, X, counts=None):
        """Costs ``(n_nodes, n_clusters)`` float32 of feature sums ``X`` (means when
        ``counts`` is None) — :meth:`unary` on arrays."""
        N, d = X.shape
        out = np.empty((N, self.n_clusters), dtype=np.float32)
        for start in range(0, N, _BLOCK):
            stop = min(N, start + _BLOCK)
            Y = np.asarray(X[start:stop], dtype=np.float64)
            if counts is not None:
                c = np.asarray(counts[start:stop], dtype=np.float64)[:, None]
                Y = Y / c
            for k in range(self.n_clusters):
                logp = np.empty((stop - start, len(self.weights_[k])))
                for j, (w, mu, L) in enumerate(zip(self.weights_[k], self.means_[k], self.precisions_cholesky_[k])):
                    z = (Y - mu) @ L
                    logp[:, j] = (np.log(w) + np.log(np.diag(L)).sum() - 0.5 * d * np.log(2 * np.pi)
                                  - 0.5 * np.einsum("ij,ij->i", z, z))
                top = logp.max(1)
                cost = -(top + np.log(np.exp(logp - top[:, None]).sum(1)))
                if counts is not None:
                    cost *= c[:, 0]
                out[start:stop, k] = cost
        return out
