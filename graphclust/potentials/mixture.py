"""A Gaussian mixture per label: the colour model of scribble segmentation.

Each label ``k`` has a mixture of ``n_components`` full-covariance Gaussians over the
features (pixel colours or intensities), fitted by EM on the nodes currently carrying
the label — first the scribbled
pixels, then, in the GrabCut-style refinement of :func:`graphclust.segment`, the
current segmentation. The cost of label ``k`` at a node with feature mean ``x`` is the
negative log-likelihood

.. math::

    U_{ik} = -n_i \\log \\sum_j \\pi_{kj} \\, \\mathcal N(x_i \\mid \\mu_{kj}, \\Sigma_{kj}),

``n_i`` the points the node stands for (1 for a pixel). Costs are computed in blocks
of nodes and returned as float32, so scoring a large image needs no float64 array of
its size.

The EM is the library's own (:func:`fit_mixture`; the same iterations as
scikit-learn's ``GaussianMixture(covariance_type="full")`` from the same start, which a
test checks): image segmentation then runs without importing scikit-learn, which
would take about 90 MiB of the memory a large image needs.
"""

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
    shrinkage : float, default=20.0
        Each component's covariance is pulled toward the within-label covariance
        pooled over the labels, with the weight of this many points (as
        :class:`DiagonalGaussian` does): a few scribbled pixels then give no
        needle-thin component that loses its own region. 0 is maximum likelihood.
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
    >>> labels = np.array([0, 0, 0, 1, 1, 1, -1])
    >>> g = GaussianMixtures(2, n_components=1, shrinkage=0.0)  # maximum likelihood
    >>> g.update(P, labels)
    >>> g.unary(P).argmin(axis=1).tolist()  # 2.4 is nearer 0.1, but the tight cluster rules it out
    [0, 0, 0, 1, 1, 1, 1]
    >>> g = GaussianMixtures(2, n_components=1)  # spreads pulled toward the pooled one
    >>> g.update(P, labels)
    >>> g.unary(P).argmin(axis=1).tolist()  # three points are not evidence of a tight cluster
    [0, 0, 0, 1, 1, 1, 0]
    """

    _parameter_constraints = {
        "n_clusters": Integer(low=1),
        "n_components": Integer(low=1),
        "reg": Real(low=0.0, low_open=True),
        "shrinkage": Real(low=0.0),
        "max_samples": Integer(low=1),
        "max_iter": Integer(low=1),
        "random_state": RandomState(),
    }

    def __init__(self, n_clusters=2, *, n_components=5, reg=1e-4, shrinkage=20.0, max_samples=20000, max_iter=30,
                 random_state=0):
        self.n_clusters = n_clusters
        self.n_components = n_components
        self.reg = reg
        self.shrinkage = shrinkage
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
        X, n = check_features(problem, "GaussianMixtures")
        labels = np.asarray(labels).reshape(-1)
        rng = check_random_state(self.random_state)
        if getattr(self, "means_", None) is not None:
            weights, means, chols = list(self.weights_), list(self.means_), list(self.precisions_cholesky_)
        else:
            weights, means, chols = [None] * self.n_clusters, [None] * self.n_clusters, [None] * self.n_clusters
        samples = {}
        for k in range(self.n_clusters):
            idx = np.flatnonzero(labels == k)
            if idx.size == 0:
                if means[k] is None:
                    raise InvalidParameterError(f"label {k} has no node to fit its colour model on")
                continue
            if idx.size > self.max_samples:
                idx = np.sort(rng.choice(idx, self.max_samples, replace=False))
            samples[k] = np.asarray(X[idx], dtype=np.float64) / np.asarray(n[idx], dtype=np.float64)[:, None]
        prior = None
        if self.shrinkage > 0:  # the pooled within-label covariance, weighted as `shrinkage` points
            centred = [Y - Y.mean(axis=0) for Y in samples.values()]
            scatter = sum(c.T @ c for c in centred)
            prior = (float(self.shrinkage), scatter / sum(len(Y) for Y in samples.values()))
        for k, Y in samples.items():
            m = min(self.n_components, len(np.unique(Y, axis=0)))
            weights[k], means[k], chols[k] = fit_mixture(Y, m, reg=self.reg, max_iter=self.max_iter, prior=prior,
                                                         random_state=rng)
        self.weights_, self.means_, self.precisions_cholesky_ = weights, means, chols

    def unary(self, problem):
        X, n = check_features(problem, "GaussianMixtures")
        return self.costs(X, n)

    def costs(self, X, counts=None):
        """Costs ``(n_nodes, n_clusters)`` float32 of feature sums ``X`` (means when
        ``counts`` is None) — :meth:`unary` on arrays."""
        N = X.shape[0]
        out = np.empty((N, self.n_clusters), dtype=np.float32)
        for start in range(0, N, _BLOCK):
            stop = min(N, start + _BLOCK)
            Y = np.asarray(X[start:stop], dtype=np.float64)
            if counts is not None:
                c = np.asarray(counts[start:stop], dtype=np.float64)[:, None]
                Y = Y / c
            for k in range(self.n_clusters):
                cost = -_log_sum_exp(weighted_log_densities(Y, self.weights_[k], self.means_[k],
                                                            self.precisions_cholesky_[k]))
                if counts is not None:
                    cost *= c[:, 0]
                out[start:stop, k] = cost
        return out


def weighted_log_densities(Y, weights, means, precisions_cholesky):
    """``log pi_j + log N(y_i | mu_j, Sigma_j)`` as ``(m, n)``, one row per component
    (reductions over components then run along contiguous rows, several times faster
    than across the short axis of ``(n, m)``). ``precisions_cholesky`` ``(m, d, d)``
    holds factors ``P_j`` with ``P_j P_j^T = Sigma_j^-1`` (triangular, so the
    log-determinant is the sum of the logs of the diagonal)."""
    d = Y.shape[1]
    out = np.empty((len(weights), Y.shape[0]))
    for j, (w, mu, P) in enumerate(zip(weights, means, precisions_cholesky)):
        z = Y @ P - mu @ P
        out[j] = (np.log(w) + np.log(np.diag(P)).sum() - 0.5 * d * np.log(2 * np.pi)
                  - 0.5 * np.einsum("ij,ij->i", z, z))
    return out


def _log_sum_exp(logp):
    """``log sum_j exp(logp[j])`` over the rows of ``(m, n)``, without overflow."""
    top = logp.max(axis=0)
    return top + np.log(np.exp(logp - top).sum(axis=0))


def _m_step(Y, resp, reg, prior=None):
    """Weights, means and precision factors from responsibilities ``(n, m)`` (each
    covariance plus ``reg`` on its diagonal, so it stays positive definite).
    ``prior = (kappa, S)``: each covariance is ``(N_j C_j + kappa S) / (N_j + kappa)``,
    its scatter shrunk toward ``S`` with the weight of ``kappa`` points."""
    nk = resp.sum(axis=0) + 10 * np.finfo(np.float64).eps  # an empty component keeps finite means
    means = (resp.T @ Y) / nk[:, None]
    d = Y.shape[1]
    chols = np.empty((len(nk), d, d))
    for j in range(len(nk)):
        diff = Y - means[j]
        cov = (resp[:, j] * diff.T) @ diff / nk[j]
        if prior is not None:
            cov = (nk[j] * cov + prior[0] * prior[1]) / (nk[j] + prior[0])
        cov.flat[:: d + 1] += reg
        # P = L^-T with L L^T = Sigma: upper triangular, P P^T = Sigma^-1
        chols[j] = np.linalg.inv(np.linalg.cholesky(cov)).T
    return nk / Y.shape[0], means, chols


def mixture_em(Y, weights, means, precisions_cholesky, *, reg, max_iter, tol=1e-3, prior=None):
    """EM from the given parameters until the mean log-likelihood gains less than
    ``tol`` or after ``max_iter`` steps (``prior``: see :func:`_m_step`); returns
    ``(weights, means, precisions_cholesky, n_iter)``."""
    lower = -np.inf
    for it in range(1, max_iter + 1):
        logp = weighted_log_densities(Y, weights, means, precisions_cholesky)
        norm = _log_sum_exp(logp)
        previous, lower = lower, float(norm.mean())
        weights, means, precisions_cholesky = _m_step(Y, np.exp(logp - norm).T, reg, prior)
        if abs(lower - previous) < tol:
            break
    return weights, means, precisions_cholesky, it


def _kmeans_start(Y, m, rng, n_lloyd=100):
    """Responsibilities ``(n, m)`` of a k-means start: greedy k-means++ seeds (of
    ``2 + log m`` candidates per seed, the one that lowers the potential most), then
    Lloyd steps until no point changes its centre."""
    n = len(Y)
    centres = [Y[int(rng.integers(n))]]
    d2 = ((Y - centres[0]) ** 2).sum(axis=1)
    for _ in range(1, m):
        total = d2.sum()
        if total <= 0:  # fewer distinct points than components: the rest start anywhere
            picks = rng.integers(n, size=1)
        else:
            picks = np.minimum(np.searchsorted(np.cumsum(d2), rng.random(2 + int(np.log(m))) * total), n - 1)
        trial = np.minimum(d2[None, :], ((Y[None, :, :] - Y[picks][:, None, :]) ** 2).sum(axis=2))
        best = int(np.argmin(trial.sum(axis=1)))
        centres.append(Y[picks[best]])
        d2 = trial[best]
    centres = np.array(centres)
    sq = (Y ** 2).sum(axis=1)
    nearest = None
    for _ in range(n_lloyd):
        new = (sq[:, None] - 2.0 * Y @ centres.T + (centres ** 2).sum(axis=1)).argmin(axis=1)
        if nearest is not None and np.array_equal(new, nearest):
            break
        nearest = new
        size = np.bincount(nearest, minlength=m)
        sums = np.stack([np.bincount(nearest, weights=Y[:, k], minlength=m) for k in range(Y.shape[1])], axis=1)
        centres = np.where(size[:, None] > 0, sums / np.maximum(size, 1)[:, None], centres)  # an empty one stays
    resp = np.zeros((n, m))
    resp[np.arange(n), nearest] = 1.0
    return resp


def fit_mixture(Y, m, *, reg, max_iter=30, tol=1e-3, prior=None, random_state=None):
    """A full-covariance Gaussian mixture of ``m`` components fitted to the rows of
    ``Y`` by EM from a k-means start (:func:`mixture_em`; scikit-learn's
    ``GaussianMixture`` starts the same way). Returns ``(weights (m,), means (m, d),
    precisions_cholesky (m, d, d))``; ``m <= 1`` is the sample mean and covariance.
    ``prior = (kappa, S)`` shrinks every covariance toward ``S`` (:func:`_m_step`)."""
    Y = np.asarray(Y, dtype=np.float64)
    if m <= 1 or len(Y) < 2:
        return _m_step(Y, np.ones((len(Y), 1)), reg, prior)
    weights, means, chols = _m_step(Y, _kmeans_start(Y, m, check_random_state(random_state)), reg, prior)
    return mixture_em(Y, weights, means, chols, reg=reg, max_iter=max_iter, tol=tol, prior=prior)[:3]
