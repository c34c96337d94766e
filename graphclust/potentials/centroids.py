"""Centroid potentials: the distortion of a node to each cluster representative.

This is the node-potential provider of HMRF-KMeans / MPCK-means (Basu, Bilenko &
Mooney 2004; Bilenko, Basu & Mooney 2004): the unary cost of label ``h`` for node
``i`` is ``D(x_i, μ_h)``, the centroids are re-estimated in the M-step, and for the
parameterised squared Euclidean (Mahalanobis) distortion the metric ``A`` (one for
all clusters, or one per cluster) is learnt from the constraints too.
"""

import numpy as np
from scipy.special import xlogy

from .._params import Boolean, Integer, Options, Real
from .._utils import group_sums, sq_distances
from ..errors import InvalidFeaturesError, InvalidParameterError
from ..metrics import violated_mask
from .base import NodePotentials, check_features, check_seeds

__all__ = ["Centroids", "DISTORTIONS"]

DISTORTIONS = ("sqeuclidean", "mahalanobis", "cosine", "kl")

#: above this many nodes, φ_max comes from farthest-point sweeps (a lower bound)
EXACT_MAX_DISTORTION_NODES = 5000

#: floats per block in chunked all-pairs computations (bounds the memory to ~16 MB)
_BLOCK_FLOATS = 2_000_000


class Centroids(NodePotentials):
    """Distortion to cluster centroids, with optional metric learning.

    Parameters
    ----------
    n_clusters : int, default=2
    distortion : {"sqeuclidean", "mahalanobis", "cosine", "kl"}, default="sqeuclidean"
        * ``"sqeuclidean"``: ``‖x − μ‖²``; centroid = mean.
        * ``"mahalanobis"``: ``(x − μ)ᵀ A (x − μ)`` with a learnt metric ``A``
          (diagonal or full, see ``metric``; shared or per cluster, see
          ``per_cluster``); the objective keeps the Gaussian normaliser
          ``−log det A`` of every point, so ``A`` cannot collapse.
        * ``"cosine"``: ``1 − x̂ᵀμ̂`` on unit-normalised rows (spherical k-means);
          centroid = normalised sum. All-zero rows are refused.
        * ``"kl"``: ``Σ_d x_d log(x_d / μ_d)`` on rows turned into distributions after
          adding ``smoothing`` to every count (histograms, bags of words); centroid =
          mean (optimal for a Bregman divergence with the centroid second).
          Negative entries are refused, and so are all-zero rows when
          ``smoothing=0``.

        ``"euclidean"`` is accepted as an alias of ``"sqeuclidean"``.
    metric : {"diagonal", "full"}, default="diagonal"
        Shape of ``A`` for ``"mahalanobis"``.
    per_cluster : bool, default=False
        For ``"mahalanobis"`` only: learn one metric ``A_h`` per cluster
        (MPCK-means) instead of one shared metric. Refused for other distortions.
    smoothing : float, default=1e-3
        Added to every entry before normalising, for ``"kl"``.
    metric_eps : float, default=1e-6
        In ``(0, 1]``. The metric scatter is clipped at ``metric_eps · max``
        (diagonal entries or eigenvalues) before inversion, which keeps ``A``
        positive definite and finite when constant features or cannot-link terms make
        the scatter singular or indefinite. ``0`` is refused: a singular scatter would
        give an infinite metric.

    Attributes
    ----------
    centroids_ : ndarray of shape (n_clusters, n_features)
        In the transformed space (unit rows for cosine, distributions for KL).
    metric_ : ndarray or None
        The learnt metric (``"mahalanobis"`` only): shape ``(n_features,)`` (diagonal)
        or ``(n_features, n_features)`` (full), with a leading ``n_clusters`` axis
        when ``per_cluster=True``.

    Notes
    -----
    **Unary costs.** Node ``i`` stands for ``c_i`` original points (``counts``; more
    than one after :func:`graphclust.contract`, where ``X`` holds feature sums) and is
    represented by their mean ``x̄_i``; its cost of label ``h`` is ``c_i D(x̄_i, μ_h)``,
    plus ``−c_i log det A_h`` with per-cluster metrics. For the Bregman distortions
    (squared Euclidean, a shared Mahalanobis metric, KL on rows with equal totals,
    e.g. distributions) this equals the sum of the members' costs up to a constant
    that does not depend on ``h``, so contraction changes no decision. It is an
    approximation for cosine (exact when the members point the same way) and for
    per-cluster metrics, whose within-node scatter ``Σ_m ‖x_m − x̄_i‖²_{A_h}`` depends
    on ``h`` but is lost once features are summed; the metric M-step ignores the
    within-node scatter as well.

    **Pair distortions** ``φ(x_i, x_j)`` (for distance-scaled constraint penalties)
    are ``‖x_i − x_j‖²_A`` for the squared Euclidean family, ``1 − x̂_iᵀx̂_j`` for
    cosine, and the Jensen–Shannon-like ``D(x_i, m) + D(x_j, m)``,
    ``m = (x_i + x_j)/2``, for KL (symmetric, as a pair penalty must be). With
    per-cluster metrics the penalty is needed before the labels are known, so ``φ``
    uses the mean metric ``Ā = (1/K) Σ_h A_h`` (also used by :meth:`distortion_matrix`
    and :meth:`max_distortion`).

    **Metric M-step.** With one shared diagonal metric, ``a_m = N / S_m`` with

    .. math::

        S_m = \\sum_i c_i (x_{im} − μ_{z_i m})^2
            + \\sum_{\\text{violated ML}} w (x_{im} − x_{jm})^2
            + \\sum_{\\text{violated CL}} \\bar w ((x'_m − x''_m)^2 − (x_{im} − x_{jm})^2)

    where ``(x', x'')`` is the pair realising ``φ_max`` (Bilenko et al. 2004); the
    full metric is ``A = N S⁻¹`` with ``S`` the same sum of outer products. Without
    constraints this is the exact minimiser of the objective over ``A``. With
    per-cluster metrics (MPCK-means) ``A_h = |X_h| S_h⁻¹``, where ``S_h`` sums the
    scatter of cluster ``h``, half of ``w (x_i − x_j)(x_i − x_j)ᵀ`` for every
    violated must-link with an endpoint in ``h`` (each of the two clusters gets one
    half), and the cannot-link term above for every violated cannot-link inside
    ``h``, with the global far pair. Hard (infinite-weight) constraints never enter.
    The scatter is clipped (see ``metric_eps``) before inversion. An empty cluster,
    a scatter with no positive entry (a one-point cluster), or an update that would
    overflow keeps the previous metric.

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

    A diagonal metric learnt from two clusters: the second feature varies, the first
    does not (its scatter is clipped, so its weight is large but finite).

    >>> C = Centroids(2, distortion="mahalanobis", metric_eps=0.01)
    >>> C.initialize(P, X[[0, 2]], np.random.default_rng(0))
    >>> C.update(P, np.array([0, 0, 1]))
    >>> C.centroids_
    array([[0. , 0.5],
           [5. , 0. ]])
    >>> C.metric_
    array([600.,   6.])
    """

    _parameter_constraints = {
        "n_clusters": Integer(low=1),
        "distortion": Options("sqeuclidean", "euclidean", *[d for d in DISTORTIONS if d != "sqeuclidean"]),
        "metric": Options("diagonal", "full"),
        "per_cluster": Boolean(),
        "smoothing": Real(low=0.0),
        "metric_eps": Real(low=0.0, low_open=True, high=1.0),
    }

    # fitted state (set by initialize/update)
    centroids_ = None
    metric_ = None
    _pair_root = None  # whitening of the shared (or mean) metric
    _roots = None  # per-cluster whitening, (K, d) or (K, d, d)
    _logdet = 0.0  # float, or (K,) with per-cluster metrics
    _cache = None  # (features, counts, points, counts as float)
    _max_cache = None  # (points, whitening, max_distortion's answer)

    def __init__(self, n_clusters=2, *, distortion="sqeuclidean", metric="diagonal", per_cluster=False,
                 smoothing=1e-3, metric_eps=1e-6):
        self.n_clusters = n_clusters
        self.distortion = distortion
        self.metric = metric
        self.per_cluster = per_cluster
        self.smoothing = smoothing
        self.metric_eps = metric_eps

    @property
    def learns_from_constraints(self):
        """A learnt metric (``distortion="mahalanobis"``) is fitted to the constraints."""
        return self.distortion == "mahalanobis"

    def _check_params(self):
        if self.per_cluster and self._kind != "mahalanobis":
            raise InvalidParameterError(
                f"per_cluster=True of Centroids needs distortion='mahalanobis' (a learnt metric), "
                f"got distortion={self.distortion!r}"
            )

    @property
    def _kind(self):
        """The distortion, with the alias "euclidean" read as "sqeuclidean"."""
        return "sqeuclidean" if self.distortion == "euclidean" else self.distortion

    @property
    def _learnt(self):
        return self._kind == "mahalanobis" and self.metric_ is not None

    # ------------------------------------------------------------------ features
    def points(self, problem):
        """``(Y, c)``: node features in the distortion's space (unit rows for cosine,
        distributions for KL; means of merged nodes) and node counts, validated once
        per feature array (problems that differ only in their constraints share it)."""
        if self._cache is not None and self._cache[0] is problem.X and self._cache[1] is problem.counts:
            return self._cache[2], self._cache[3]
        self._validate_params()  # first use on this problem: the parameters are checked here
        X, counts = check_features(problem, f"Centroids(distortion={self.distortion!r})")
        Y = X / counts[:, None]
        if self._kind == "cosine":
            norms = np.linalg.norm(Y, axis=1)
            if (norms == 0).any():
                i = int(np.flatnonzero(norms == 0)[0])
                raise InvalidFeaturesError(
                    f"node {problem.nodes[i]!r} has an all-zero feature vector, which has no direction; "
                    "cosine distortion needs non-zero rows (drop the node or use distortion='sqeuclidean')",
                    node=problem.nodes[i],
                )
            Y = Y / norms[:, None]
        elif self._kind == "kl":
            if (Y < 0).any():
                i, d = (int(v) for v in np.argwhere(Y < 0)[0])
                raise InvalidFeaturesError(
                    f"node {problem.nodes[i]!r} has a negative feature (index {d}: {Y[i, d]:g}); KL distortion "
                    "needs non-negative counts or frequencies", node=problem.nodes[i],
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
        counts = counts.astype(np.float64)
        self._cache = (problem.X, problem.counts, Y, counts)
        return Y, counts

    def share_caches(self, other):
        """Adopt ``other``'s points and φ_max (see :meth:`NodePotentials.share_caches`):
        the fits that choose HMRF's constraint weight differ only in their constraints."""
        if isinstance(other, Centroids) and other._kind == self._kind and other.smoothing == self.smoothing:
            self._cache, self._max_cache = other._cache, other._max_cache

    # ------------------------------------------------------------------ distortions
    def distortion_matrix(self, Y, C):
        """``D(y_i, c_k)`` for rows of ``Y`` (already in the distortion's space) and
        representatives ``C``: shape ``(len(Y), len(C))``. A learnt metric enters as
        the shared metric, or the mean metric with ``per_cluster=True``."""
        if self._kind in ("sqeuclidean", "mahalanobis"):
            return sq_distances(self._whiten(Y), self._whiten(C))
        if self._kind == "cosine":
            Cn = C / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-300)
            return np.maximum(1.0 - Y @ Cn.T, 0.0)
        # KL(y || c) = Σ y log y − Σ y log c
        logc = np.log(np.maximum(C, 1e-300))
        ent = xlogy(Y, Y).sum(1)
        return np.maximum(ent[:, None] - Y @ logc.T, 0.0)

    def _cluster_distortions(self, Y, C, ks):
        """``D_{A_k}(y_i, C_j)`` with the metric of cluster ``ks[j]`` for column ``j``."""
        if not (self.per_cluster and self._learnt):
            return self.distortion_matrix(Y, C)
        out = np.empty((len(Y), len(C)))
        for j, k in enumerate(np.asarray(ks).tolist()):  # one numpy pass per cluster
            diff = Y - C[j]
            root = self._roots[k]
            t = diff * root if root.ndim == 1 else diff @ root
            out[:, j] = (t * t).sum(1)
        return out

    def _whiten(self, Y):
        if not self._learnt or self._pair_root is None:
            return Y
        if self._pair_root.ndim == 1:
            return Y * self._pair_root
        return Y @ self._pair_root

    def _pairs(self, Ya, Yb):
        """Row-wise symmetric pair distortion φ(a_r, b_r)."""
        if self._kind in ("sqeuclidean", "mahalanobis"):
            d = self._whiten(Ya - Yb)
            return (d * d).sum(1)
        if self._kind == "cosine":
            return np.maximum(1.0 - (Ya * Yb).sum(-1), 0.0)
        return _js(Ya, Yb)

    # ------------------------------------------------------------------ metric
    def _install_metric(self, metric):
        """Set ``metric_`` and the derived whitening roots and log-determinants."""
        metric = np.asarray(metric, dtype=np.float64)
        self.metric_ = metric
        per = self.per_cluster
        if self.metric == "diagonal":
            self._roots = np.sqrt(metric) if per else None
            self._logdet = np.log(metric).sum(-1)
            self._pair_root = np.sqrt(metric.mean(0) if per else metric)
        else:
            mats = metric if per else metric[None]
            vals, vecs = np.linalg.eigh(mats)
            vals = np.maximum(vals, np.finfo(float).tiny)
            roots = vecs * np.sqrt(vals)[:, None, :]
            self._logdet = np.log(vals).sum(-1) if per else float(np.log(vals).sum())
            self._roots = roots if per else None
            if per:
                mv, mvec = np.linalg.eigh(0.5 * (metric.mean(0) + metric.mean(0).T))
                self._pair_root = mvec * np.sqrt(np.maximum(mv, np.finfo(float).tiny))
            else:
                self._pair_root = roots[0]
        if not per:
            self._logdet = float(self._logdet)

    def _solve_metric(self, S, N, previous):
        """``N · S⁻¹`` with the scatter clipped at ``metric_eps · max``; ``previous``
        when the scatter has no positive part or the result would not be finite."""
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if self.metric == "diagonal":
                top = S.max()
                if not (np.isfinite(top) and top > 0):
                    return previous
                A = N / np.maximum(S, self.metric_eps * top)
            else:
                vals, vecs = np.linalg.eigh(0.5 * (S + S.T))
                top = vals.max()
                if not (np.isfinite(top) and top > 0):
                    return previous
                vals = np.maximum(vals, self.metric_eps * top)
                A = (vecs * (N / vals)) @ vecs.T
                A = 0.5 * (A + A.T)
        if not np.isfinite(A).all():
            return previous
        return A

    # ------------------------------------------------------------------ provider API
    def initialize(self, problem, seeds, rng):
        Y, _ = self.points(problem)
        seeds = check_seeds(seeds, self.n_clusters, Y.shape[1])
        self.centroids_ = seeds.copy()
        d, K = Y.shape[1], self.n_clusters
        self.metric_ = None
        self._pair_root = self._roots = None
        self._logdet = 0.0
        if self._kind == "mahalanobis":
            one = np.ones(d) if self.metric == "diagonal" else np.eye(d)
            self._install_metric(np.stack([one] * K) if self.per_cluster else one)

    def unary(self, problem):
        Y, counts = self.points(problem)
        if self.per_cluster and self._learnt:
            K = self.n_clusters
            D = self._cluster_distortions(Y, self.centroids_, np.arange(K)) - self._logdet[None, :]
            return counts[:, None] * D
        return counts[:, None] * self.distortion_matrix(Y, self.centroids_)

    def label_free_energy(self, problem):
        """``−N log det A`` for a shared learnt metric (``N`` = number of original
        points); 0 otherwise (per-cluster normalisers are part of :meth:`unary`)."""
        if not self._learnt or self.per_cluster:
            return 0.0
        _, counts = self.points(problem)
        return float(-counts.sum() * self._logdet)

    def pair_distortion(self, problem, pairs):
        Y, _ = self.points(problem)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        return self._pairs(Y[pairs[:, 0]], Y[pairs[:, 1]])

    def max_distortion(self, problem, rng=None):
        """``(φ_max, pair)``: the largest pair distortion over the nodes and a pair that
        attains it. Squared Euclidean and Mahalanobis: exact by a pruned search (see
        :func:`_sq_diameter`), a lower bound only when pruning fails on more than
        :data:`EXACT_MAX_DISTORTION_NODES` nodes. Cosine and KL: exact up to that many
        nodes (chunked, O(n² d)), above it a lower bound from farthest-point sweeps.
        The value is cached while the points and the metric stay the same (EM asks
        every iteration)."""
        Y, _ = self.points(problem)
        n = len(Y)
        if n < 2:
            return 0.0, (0, 0)
        # the whitening _whiten applies; Y is the same array while the problem is (points' cache)
        metric = self._pair_root.tobytes() if self._learnt and self._pair_root is not None else None
        if self._max_cache is not None and self._max_cache[0] is Y and self._max_cache[1] == metric:
            return self._max_cache[2]
        if self._kind in ("sqeuclidean", "mahalanobis"):
            best, pair, _ = _sq_diameter(self._whiten(Y), EXACT_MAX_DISTORTION_NODES ** 2)
            out = (best, pair)
        elif n <= EXACT_MAX_DISTORTION_NODES:
            best, pair = -1.0, (0, 1)
            per_row = n * (Y.shape[1] if self._kind == "kl" else 1)
            step = max(1, _BLOCK_FLOATS // per_row)
            for start in range(0, n, step):
                block = self._block(Y[start:start + step], Y)
                k = int(np.argmax(block))
                r, c = divmod(k, n)
                if block[r, c] > best:
                    best, pair = float(block[r, c]), (start + r, c)
            out = (best, pair)
        else:
            out = _farthest_point_sweeps(Y, self._pairs, 0)
        self._max_cache = (Y, metric, out)
        return out

    def _block(self, Ya, Y):
        """All pair distortions between the rows of ``Ya`` and of ``Y``."""
        if self._kind in ("sqeuclidean", "mahalanobis"):
            return sq_distances(self._whiten(Ya), self._whiten(Y))
        if self._kind == "cosine":
            return np.maximum(1.0 - Ya @ Y.T, 0.0)
        return _js(Ya[:, None, :], Y[None, :, :])

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
            The pair realising ``φ_max``, held fixed during the update; without it
            cannot-links do not enter the metric.
        """
        Y, counts = self.points(problem)
        K = self.n_clusters
        labels = np.asarray(labels, dtype=np.int64)
        mass = np.bincount(labels, weights=counts, minlength=K)
        sums = group_sums(labels, Y, K, counts)
        filled = mass > 0  # an empty cluster keeps its previous centroid
        if self._kind == "cosine":
            norms = np.linalg.norm(sums, axis=1)
            ok = filled & (norms > 0)
            self.centroids_[ok] = sums[ok] / norms[ok, None]
        else:
            self.centroids_[filled] = sums[filled] / mass[filled, None]
        if self._kind == "mahalanobis":
            terms = _violated_terms(Y, labels, must, cannot, far_pair)
            if self.per_cluster:
                self._update_metrics_per_cluster(Y, counts, labels, mass, terms)
            else:
                self._update_metric(Y, counts, labels, terms)

    def _update_metric(self, Y, counts, labels, terms):
        R = Y - self.centroids_[labels]
        full = self.metric == "full"
        S = _scatter(R, counts, full)
        (_, _, dml, wml), (_, dcl, wcl, far) = terms
        if len(wml):
            S = S + _scatter(dml, wml, full)
        if len(wcl):
            S = S + _scatter(np.broadcast_to(far, dcl.shape), wcl, full) - _scatter(dcl, wcl, full)
        self._install_metric(self._solve_metric(S, counts.sum(), self.metric_))

    def _update_metrics_per_cluster(self, Y, counts, labels, mass, terms):
        full = self.metric == "full"
        R = Y - self.centroids_[labels]
        (za, zb, dml, wml), (zc, dcl, wcl, far) = terms
        new = self.metric_.copy()
        for h in np.flatnonzero(mass > 0).tolist():  # one numpy pass per cluster
            mine = labels == h
            S = _scatter(R[mine], counts[mine], full)
            ends = (za == h) | (zb == h)  # a violated must-link has one endpoint here
            if ends.any():
                S = S + _scatter(dml[ends], 0.5 * wml[ends], full)
            inside = zc == h
            if inside.any():
                d = dcl[inside]
                S = S + _scatter(np.broadcast_to(far, d.shape), wcl[inside], full) - _scatter(d, wcl[inside], full)
            new[h] = self._solve_metric(S, mass[h], self.metric_[h])
        self._install_metric(new)

    # ------------------------------------------------------------------ incremental
    def start(self, problem, labels):
        Y, counts = self.points(problem)
        labels = np.asarray(labels, dtype=np.int64)
        self._Y, self._c = Y, counts
        self._labels = labels.copy()
        self._mass = np.bincount(labels, weights=counts, minlength=self.n_clusters)
        self._sums = group_sums(labels, Y, self.n_clusters, counts)

    def remove(self, i):
        k = self._labels[i]
        if k < 0:
            raise InvalidParameterError(f"node index {i} is not in a cluster; add it before removing it")
        self._mass[k] -= self._c[i]
        self._sums[k] -= self._c[i] * self._Y[i]
        self._labels[i] = -1

    def add(self, i, k):
        if not 0 <= k < self.n_clusters:
            raise InvalidParameterError(
                f"Centroids has a fixed number of clusters ({self.n_clusters}); it cannot put node index {i} "
                f"into cluster {k}"
            )
        if self._labels[i] >= 0:
            raise InvalidParameterError(
                f"node index {i} is already in cluster {self._labels[i]}; remove it first"
            )
        self._mass[k] += self._c[i]
        self._sums[k] += self._c[i] * self._Y[i]
        self._labels[i] = k

    def scores(self, i):
        """Costs of node ``i`` in each cluster as it stands (centroid = mean of the
        current members; ``inf`` for an empty cluster) and ``inf`` for a new one."""
        out = np.full(self.n_clusters + 1, np.inf)
        filled = np.flatnonzero(self._mass > 1e-12)
        if filled.size:
            C = self._sums[filled] / self._mass[filled, None]
            D = self._cluster_distortions(self._Y[i:i + 1], C, filled)[0]
            if self.per_cluster and self._learnt:
                D = D - self._logdet[filled]
            out[filled] = self._c[i] * D
        return out


def _js(a, b):
    """``KL(a ‖ m) + KL(b ‖ m)`` with ``m = (a + b) / 2`` over the last axis (0 log 0 = 0)."""
    m = 0.5 * (a + b)
    return np.maximum((xlogy(a, a) + xlogy(b, b) - 2.0 * xlogy(m, m)).sum(-1), 0.0)


def _scatter(D, w, full):
    """``Σ_r w_r d_r d_rᵀ`` (full) or its diagonal."""
    if full:
        return (w[:, None] * D).T @ D
    return (w[:, None] * D * D).sum(0)


def _violated_terms(Y, labels, must, cannot, far_pair):
    """The violated finite-weight constraints, as what the metric M-step needs:
    ``(label_a, label_b, differences, weights)`` for must-links and
    ``(label, differences, weights, far difference)`` for cannot-links."""
    d = Y.shape[1]
    empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty((0, d)), np.empty(0))
    ml = empty
    if must is not None and len(must[0]):
        p, w = np.asarray(must[0], np.int64).reshape(-1, 2), np.asarray(must[1], np.float64)
        bad = violated_mask(labels, p, w) & np.isfinite(w)
        p = p[bad]
        ml = (labels[p[:, 0]], labels[p[:, 1]], Y[p[:, 0]] - Y[p[:, 1]], w[bad])
    cl = (np.empty(0, np.int64), np.empty((0, d)), np.empty(0), np.zeros(d))
    if cannot is not None and len(cannot[0]) and far_pair is not None:
        p, w = np.asarray(cannot[0], np.int64).reshape(-1, 2), np.asarray(cannot[1], np.float64)
        bad = violated_mask(labels, p, -w) & np.isfinite(w)  # strengths given: negate to cannot-links
        p = p[bad]
        cl = (labels[p[:, 0]], Y[p[:, 0]] - Y[p[:, 1]], w[bad], Y[far_pair[0]] - Y[far_pair[1]])
    return ml, cl


def _farthest_point_sweeps(Y, pairs, start, sweeps=4):
    """A lower bound on the largest pair distortion: from ``start``, jump to the
    farthest point a few times (O(n d) each)."""
    i, best, pair = start, -1.0, (0, 1)
    for _ in range(sweeps):
        d = pairs(np.broadcast_to(Y[i], Y.shape), Y)
        j = int(np.argmax(d))
        if d[j] <= best:
            break
        best, pair, i = float(d[j]), (i, j), j
    return best, pair


def _sq_diameter(W, budget):
    """``(largest squared distance, pair, exact)`` among the rows of ``W``.

    Farthest-point sweeps give a lower bound ``D``; the triangle inequality through the
    mean, ``|w_i − w_j| ≤ r_i + r_j`` (``r``: distance to the mean), then rules out
    every pair with ``r_i + r_j < D``. Rows are visited by decreasing ``r``, each
    against the prefix it can still beat, in blocks, until no row can: usually a small
    fraction of the n² pairs. Should more than ``budget`` pairs need checking, the
    best pair found so far is returned with ``exact=False``."""
    n = len(W)
    r = np.sqrt(((W - W.mean(0)) ** 2).sum(1))
    order = np.argsort(-r, kind="stable")
    Ws, rs = W[order], r[order]
    best, (a, b) = _farthest_point_sweeps(Ws, lambda A, B: ((A - B) ** 2).sum(1), 0)
    best_root = np.sqrt(max(best, 0.0))
    checked, start, step = 0, 0, 64
    while start < n and rs[start] + rs[0] >= best_root:
        stop = min(n, start + step)
        # rows start..stop-1 can only beat the best with rows j whose r_j >= best - r_i
        reach = int(np.searchsorted(-rs, -(best_root - rs[start]), side="right"))
        reach = max(reach, stop)
        checked += (stop - start) * reach
        if checked > budget:
            return best, (int(order[a]), int(order[b])), False
        block = sq_distances(Ws[start:stop], Ws[:reach])
        k = int(np.argmax(block))
        i, j = divmod(k, reach)
        if block[i, j] > best:
            best, a, b = float(block[i, j]), start + i, j
            best_root = np.sqrt(best)
        start = stop
    return best, (int(order[a]), int(order[b])), True
