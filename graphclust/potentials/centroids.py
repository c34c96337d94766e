"""Centroid potentials: the distortion of a node to each cluster representative.

This is the node-potential provider of HMRF-KMeans / MPCK-means (Basu, Bilenko &
Mooney 2004; Bilenko, Basu & Mooney 2004): the unary cost of label ``h`` for node
``i`` is ``D(x_i, μ_h)``, the centroids are re-estimated in the M-step, and for the
parameterised squared Euclidean (Mahalanobis) distortion the metric ``A`` is learnt
from the constraints too.
"""

import numpy as np

from .._utils import check_float
from ..errors import InvalidFeaturesError, InvalidParameterError
from .base import NodePotentials, check_features, check_n_clusters

__all__ = ["Centroids", "DISTORTIONS"]

DISTORTIONS = ("sqeuclidean", "mahalanobis", "cosine", "kl")

#: above this many nodes, φ_max comes from farthest-point sweeps (a lower bound)
EXACT_MAX_DISTORTION_NODES = 5000


class Centroids(NodePotentials):
    """Distortion to cluster centroids, with optional metric learning.

    Parameters
    ----------
    n_clusters : int, default=2
    distortion : {"sqeuclidean", "mahalanobis", "cosine", "kl"}, default="sqeuclidean"
        * ``"sqeuclidean"``: ``‖x − μ‖²``; centroid = mean.
        * ``"mahalanobis"``: ``(x − μ)ᵀ A (x − μ)`` with a learnt metric ``A`` (one for
          all clusters, diagonal or full, see ``metric``); the objective keeps the
          Gaussian normaliser ``−N log det A`` so ``A`` cannot collapse.
        * ``"cosine"``: ``1 − x̂ᵀμ̂`` on unit-normalised rows (spherical k-means);
          centroid = normalised sum. All-zero rows are refused.
        * ``"kl"``: ``Σ_d x_d log(x_d / μ_d)`` on rows turned into distributions after
          adding ``smoothing`` to every count (histograms, bags of words); centroid =
          mean (optimal for a Bregman divergence with the centroid second).
          Negative entries are refused.
    metric : {"diagonal", "full"}, default="diagonal"
        Shape of ``A`` for ``"mahalanobis"``.
    smoothing : float, default=1e-3
        Added to every entry before normalising, for ``"kl"``.
    metric_eps : float, default=1e-6
        The metric scatter is clipped at ``metric_eps · max`` (diagonal entries or
        eigenvalues) before inversion, which keeps ``A`` positive definite when
        cannot-link terms make the scatter indefinite or singular.

    Attributes
    ----------
    centroids_ : ndarray of shape (n_clusters, n_features)
        In the transformed space (unit rows for cosine, distributions for KL).
    metric_ : ndarray of shape (n_features,) or (n_features, n_features) or None
        The learnt metric (``"mahalanobis"`` only).

    Notes
    -----
    Pair distortions ``φ(x_i, x_j)`` (for distance-scaled constraint penalties) are
    ``‖x_i − x_j‖²_A`` for the squared Euclidean family, ``1 − x̂_iᵀx̂_j`` for cosine,
    and the Jensen–Shannon-like ``D(x_i, m) + D(x_j, m)``, ``m = (x_i + x_j)/2``, for KL
    (symmetric, as a pair penalty must be).

    The M-step of the metric (diagonal) is ``a_m = N / S_m`` with
    ``S_m = Σ_i (x_im − μ_{z_i m})² + Σ_violated ML w (x_im − x_jm)²
    + Σ_violated CL w̄ ((x'_m − x''_m)² − (x_im − x_jm)²)``, where ``(x', x'')`` is the
    pair realising ``φ_max`` (Bilenko et al. 2004); the full metric is ``A = N S⁻¹``.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, 0.0]])
    >>> P = gc.Problem.from_array(X)
    >>> C = Centroids(2)
    >>> C.initialize(P, X[[0, 2]], np.random.default_rng(0))
    >>> C.unary(P)
    array([[ 0., 25.],
           [ 1., 26.],
           [25.,  0.]])
    """

    def __init__(self, n_clusters=2, *, distortion="sqeuclidean", metric="diagonal", smoothing=1e-3,
                 metric_eps=1e-6):
        self.n_clusters_param = check_n_clusters(n_clusters, "Centroids")
        if distortion == "euclidean":
            distortion = "sqeuclidean"
        if distortion not in DISTORTIONS:
            raise InvalidParameterError(
                f"distortion must be one of {', '.join(DISTORTIONS)}; got {distortion!r}"
            )
        if metric not in ("diagonal", "full"):
            raise InvalidParameterError(f"metric must be 'diagonal' or 'full', got {metric!r}")
        self.distortion = distortion
        self.metric = metric
        self.smoothing = check_float(smoothing, "smoothing", low=0.0)
        self.metric_eps = check_float(metric_eps, "metric_eps", low=0.0)
        self.centroids_ = None
        self.metric_ = None
        self._cache = None

    def __repr__(self):
        return f"Centroids({self.n_clusters_param}, distortion={self.distortion!r})"

    def get_params(self):
        return {"n_clusters": self.n_clusters_param, "distortion": self.distortion, "metric": self.metric,
                "smoothing": self.smoothing, "metric_eps": self.metric_eps}

    def clone(self, **changes):
        """An unfitted copy with some parameters changed."""
        return Centroids(**{**self.get_params(), **changes})

    @property
    def n_clusters(self):
        return self.n_clusters_param

    # ------------------------------------------------------------------ features
    def points(self, problem):
        """``(Y, c)``: node features in the distortion's space (unit rows for cosine,
        distributions for KL; means of merged nodes) and node counts, validated once
        per problem."""
        if self._cache is not None and self._cache[0] is problem:
            return self._cache[1], self._cache[2]
        X, counts = check_features(problem, f"Centroids(distortion={self.distortion!r})")
        Y = X / counts[:, None]
        if self.distortion == "cosine":
            norms = np.linalg.norm(Y, axis=1)
            if (norms == 0).any():
                i = int(np.flatnonzero(norms == 0)[0])
                raise InvalidFeaturesError(
                    f"node {problem.nodes[i]!r} has an all-zero feature vector, which has no direction; "
                    "cosine distortion needs non-zero rows (drop the node or use distortion='sqeuclidean')",
                    node=problem.nodes[i],
                )
            Y = Y / norms[:, None]
        elif self.distortion == "kl":
            if (Y < 0).any():
                i = int(np.argwhere(Y < 0)[0][0])
                raise InvalidFeaturesError(
                    f"node {problem.nodes[i]!r} has a negative feature; KL distortion needs non-negative "
                    "counts or frequencies", node=problem.nodes[i],
                )
            Y = Y + self.smoothing
            sums = Y.sum(axis=1)
            if (sums == 0).any():
                i = int(np.flatnonzero(sums == 0)[0])
                raise InvalidFeaturesError(
                    f"node {problem.nodes[i]!r} has an all-zero histogram; KL distortion needs smoothing > 0 "
                    "or non-empty rows", node=problem.nodes[i],
                )
            Y = Y / sums[:, None]
        self._cache = (problem, Y, counts.astype(np.float64))
        return Y, counts.astype(np.float64)

    # ------------------------------------------------------------------ distortions
    def distortion_matrix(self, Y, C):
        """``D(y_i, c_k)`` for rows of ``Y`` (already in the distortion's space) and
        representatives ``C``: shape ``(len(Y), len(C))``."""
        if self.distortion in ("sqeuclidean", "mahalanobis"):
            Yt, Ct = self._whiten(Y), self._whiten(C)
            D = (Yt * Yt).sum(1)[:, None] - 2.0 * Yt @ Ct.T + (Ct * Ct).sum(1)[None, :]
            return np.maximum(D, 0.0)
        if self.distortion == "cosine":
            Cn = C / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-300)
            return np.maximum(1.0 - Y @ Cn.T, 0.0)
        # KL(y || c) = Σ y log y − Σ y log c
        logc = np.log(np.maximum(C, 1e-300))
        ent = (Y * np.log(np.maximum(Y, 1e-300))).sum(1)
        return np.maximum(ent[:, None] - Y @ logc.T, 0.0)

    def _whiten(self, Y):
        if self.distortion != "mahalanobis" or self.metric_ is None:
            return Y
        if self.metric_.ndim == 1:
            return Y * np.sqrt(self.metric_)
        return Y @ self._metric_root

    def _pairs(self, Ya, Yb):
        """Row-wise symmetric pair distortion φ(a_r, b_r)."""
        if self.distortion in ("sqeuclidean", "mahalanobis"):
            d = self._whiten(Ya - Yb)
            return (d * d).sum(1)
        if self.distortion == "cosine":
            return np.maximum(1.0 - (Ya * Yb).sum(1), 0.0)
        m = 0.5 * (Ya + Yb)
        logm = np.log(m)
        return np.maximum((Ya * (np.log(Ya) - logm)).sum(1) + (Yb * (np.log(Yb) - logm)).sum(1), 0.0)

    # ------------------------------------------------------------------ provider API
    def initialize(self, problem, seeds, rng):
        Y, _ = self.points(problem)
        seeds = np.asarray(seeds, dtype=np.float64)
        if seeds.shape != (self.n_clusters, Y.shape[1]):
            raise InvalidParameterError(
                f"expected {self.n_clusters} seeds of {Y.shape[1]} features, got shape {seeds.shape}"
            )
        self.centroids_ = seeds.copy()
        d = Y.shape[1]
        self.metric_ = None
        if self.distortion == "mahalanobis":
            self.metric_ = np.ones(d) if self.metric == "diagonal" else np.eye(d)
            self._metric_root = np.eye(d)

    def unary(self, problem):
        Y, counts = self.points(problem)
        return counts[:, None] * self.distortion_matrix(Y, self.centroids_)

    def label_free_energy(self, problem):
        if self.distortion != "mahalanobis":
            return 0.0
        _, counts = self.points(problem)
        return -counts.sum() * self._logdet()

    def _logdet(self):
        if self.metric_.ndim == 1:
            return float(np.log(self.metric_).sum())
        return float(np.linalg.slogdet(self.metric_)[1])

    def pair_distortion(self, problem, pairs):
        Y, _ = self.points(problem)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        return self._pairs(Y[pairs[:, 0]], Y[pairs[:, 1]])

    def max_distortion(self, problem, rng=None):
        """Exact up to :data:`EXACT_MAX_DISTORTION_NODES` nodes (chunked, O(n² d));
        above, a lower bound from a few farthest-point sweeps."""
        Y, _ = self.points(problem)
        n = len(Y)
        if n < 2:
            return 0.0, (0, 0)
        if n <= EXACT_MAX_DISTORTION_NODES:
            best, pair = -1.0, (0, 1)
            step = max(1, 2_000_000 // max(n, 1))
            for start in range(0, n, step):
                block = self._block(Y[start:start + step], Y)
                k = int(np.argmax(block))
                r, c = divmod(k, n)
                if block[r, c] > best:
                    best, pair = float(block[r, c]), (start + r, c)
            return best, pair
        i = 0
        best, pair = -1.0, (0, 1)
        for _ in range(4):  # farthest-point sweeps: each is O(n d)
            d = self._pairs(np.broadcast_to(Y[i], Y.shape), Y)
            j = int(np.argmax(d))
            if d[j] <= best:
                break
            best, pair, i = float(d[j]), (i, j), j
        return best, pair

    def _block(self, Ya, Y):
        if self.distortion in ("sqeuclidean", "mahalanobis"):
            A, B = self._whiten(Ya), self._whiten(Y)
            return np.maximum((A * A).sum(1)[:, None] - 2 * A @ B.T + (B * B).sum(1)[None, :], 0.0)
        if self.distortion == "cosine":
            return np.maximum(1.0 - Ya @ Y.T, 0.0)
        out = np.empty((len(Ya), len(Y)))
        for r in range(len(Ya)):  # KL pairs have no matrix form; O(n d) per row
            out[r] = self._pairs(np.broadcast_to(Ya[r], Y.shape), Y)
        return out

    def update(self, problem, labels, *, must=None, cannot=None, far_pair=None):
        """M-step: centroids from ``labels``; for ``"mahalanobis"`` also the metric.

        Parameters
        ----------
        problem : Problem
        labels : ndarray of shape (n_nodes,)
        must, cannot : tuple (pairs (M, 2), weights (M,)) or None
            The constraints the E-step used, with positive penalty weights; only the
            violated ones enter the metric scatter. Infinite weights are skipped (a
            hard constraint is never violated by a feasible labelling).
        far_pair : tuple (i, j) or None
            The pair realising ``φ_max``, held fixed during the update.
        """
        Y, counts = self.points(problem)
        K = self.n_clusters
        labels = np.asarray(labels, dtype=np.int64)
        mass = np.bincount(labels, weights=counts, minlength=K)
        sums = np.zeros((K, Y.shape[1]))
        np.add.at(sums, labels, counts[:, None] * Y)
        filled = mass > 0  # an empty cluster keeps its previous centroid
        if self.distortion == "cosine":
            norms = np.linalg.norm(sums, axis=1)
            ok = filled & (norms > 0)
            self.centroids_[ok] = sums[ok] / norms[ok, None]
        else:
            self.centroids_[filled] = sums[filled] / mass[filled, None]
        if self.distortion == "mahalanobis":
            self._update_metric(Y, counts, labels, must, cannot, far_pair)

    def _update_metric(self, Y, counts, labels, must, cannot, far_pair):
        R = Y - self.centroids_[labels]
        full = self.metric == "full"
        S = (counts[:, None] * R).T @ R if full else (counts[:, None] * R * R).sum(0)

        def add(diff, w, sign):
            nonlocal S
            if full:
                S = S + sign * (w[:, None] * diff).T @ diff
            else:
                S = S + sign * (w[:, None] * diff * diff).sum(0)

        if must is not None and len(must[0]):
            p, w = must
            bad = (labels[p[:, 0]] != labels[p[:, 1]]) & np.isfinite(w)
            if bad.any():
                add(Y[p[bad, 0]] - Y[p[bad, 1]], w[bad], 1.0)
        if cannot is not None and len(cannot[0]) and far_pair is not None:
            p, w = cannot
            bad = (labels[p[:, 0]] == labels[p[:, 1]]) & np.isfinite(w)
            if bad.any():
                far = Y[far_pair[0]] - Y[far_pair[1]]
                wb = w[bad]
                add(np.broadcast_to(far, (int(bad.sum()), len(far))), wb, 1.0)
                add(Y[p[bad, 0]] - Y[p[bad, 1]], wb, -1.0)
        N = counts.sum()
        if full:
            vals, vecs = np.linalg.eigh(0.5 * (S + S.T))
            top = max(vals.max(), 1e-300)
            vals = np.maximum(vals, self.metric_eps * top)
            self.metric_ = (vecs * (N / vals)) @ vecs.T
            self._metric_root = vecs * np.sqrt(N / vals)
        else:
            top = max(S.max(), 1e-300)
            self.metric_ = N / np.maximum(S, self.metric_eps * top)

    # ------------------------------------------------------------------ incremental
    def start(self, problem, labels):
        Y, counts = self.points(problem)
        labels = np.asarray(labels, dtype=np.int64)
        self._Y, self._c = Y, counts
        self._labels = labels.copy()
        self._mass = np.bincount(labels, weights=counts, minlength=self.n_clusters)
        self._sums = np.zeros((self.n_clusters, Y.shape[1]))
        np.add.at(self._sums, labels, counts[:, None] * Y)

    def remove(self, i):
        k = self._labels[i]
        self._mass[k] -= self._c[i]
        self._sums[k] -= self._c[i] * self._Y[i]
        self._labels[i] = -1

    def add(self, i, k):
        if k >= self.n_clusters:
            raise InvalidParameterError("Centroids has a fixed number of clusters; it cannot open a new one")
        self._mass[k] += self._c[i]
        self._sums[k] += self._c[i] * self._Y[i]
        self._labels[i] = k

    def scores(self, i):
        out = np.full(self.n_clusters + 1, np.inf)
        filled = self._mass > 1e-12
        if filled.any():
            C = self._sums[filled] / self._mass[filled, None]
            out[:-1][filled] = self._c[i] * self.distortion_matrix(self._Y[i:i + 1], C)[0]
        return out
