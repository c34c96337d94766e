"""DP-means' provider: centroid costs with a price for opening a cluster.

:class:`DPCentroids` serves RDP-means and DP-means (ICM with births: its compiled sweep
is one pass of their rule) and :class:`~graphclust.HMRF` (a centroid provider with a
fixed label set). The sweep is the ICM engines' local update
(:mod:`graphclust.inference._local`) over the provider's costs.
"""

import math

import numpy as np
from numba import njit
from scipy.special import xlogy

from .._params import Integer, Options, Real
from ..errors import InvalidFeaturesError, InvalidParameterError
from ..inference._local import REL_TOL, cheapest, improves, potts_pull
from .base import CountParameter, NodePotentials, check_features
from .centroids import Centroids

__all__ = ["DPCentroids", "DIVERGENCES"]

#: divergences DP-means is defined for (Bregman, the point first: the mean is the centroid)
DIVERGENCES = ("sqeuclidean", "kl")

#: bounds must prove a skip with this much room (rounding never decides a skip)
_SAFE = 1.0 - 1e-9
_MARGIN = 1e-9

#: log of a zero centroid coordinate (KL): finite, so 0 * log stays 0
_LOG_FLOOR = math.log(1e-300)


# ====================================================================== kernels
@njit(cache=True)
def _dp_sweep(Y, c, base, sq, C, M, cterm, mass, z, nslots, order, start, indptr, indices, weights, lam,
              rel_tol, cost, acc, ub, lb, k_pass):  # pragma: no cover - compiled
    """One sequential pass with births over ``order[start:]``.

    Divergences come from one product per node with the transposed centroid matrix
    ``M`` (``d x cap``, contiguous over clusters, so the loop vectorises):
    ``‖y‖² − 2 y·μ + ‖μ‖²`` on centred data (``sq``), or ``Σ y log y − y·log μ`` (KL).
    Costs are exact changes of J at fixed centroids: node ``i`` is taken out of its
    cluster, every cluster ``k`` costs ``c_i D(y_i, μ_k)`` (plus ``λ`` if ``k`` is
    empty without ``i``) minus the signed weights of ``i``'s constraint partners in
    ``k``; a new cluster costs ``λ`` and gets centroid ``y_i`` at once. The move rule is
    the ICM engines' (:mod:`graphclust.inference._local`).

    For squared distances a node is skipped when bounds prove that it cannot move
    (Hamerly's test, with the constraint pulls added exactly): ``ub[i]`` bounds the
    distance to its own centroid from above and ``lb[i]`` the distance to every other
    cluster that existed when the pass began (the first ``k_pass``) from below;
    clusters born since are measured directly. When staying costs at most
    ``c_i ub² − pull_own`` and every other option at least that (``c_i lb² − pull_k``,
    ``λ`` for a new cluster), with a margin, the node stays, which is the decision a full
    evaluation takes; most nodes of a late pass are decided this way.

    Returns ``(position reached, nslots, n_changed)``; stops early (position < len)
    when the slot arrays are full, so the caller can grow them and resume.
    """
    n_order = order.shape[0]
    cap = C.shape[0]
    d = Y.shape[1]
    factor = -2.0 if sq else -1.0
    changed = 0
    for p in range(start, n_order):
        if nslots >= cap:
            return p, nslots, changed
        i = order[p]
        a = z[i]
        ci = c[i]
        if sq and mass[a] > ci and ub[i] <= lb[i]:
            # staying costs at most `stay`; any other cluster at least `other`
            u, v = ub[i], lb[i] * _SAFE
            pull_a, pull_max = 0.0, 0.0
            if indptr[i] < indptr[i + 1]:
                for q in range(indptr[i], indptr[i + 1]):
                    zj = z[indices[q]]
                    if zj >= 0:
                        cost[zj] = 0.0
                for q in range(indptr[i], indptr[i + 1]):
                    zj = z[indices[q]]
                    if zj >= 0:
                        cost[zj] += weights[q]
                for q in range(indptr[i], indptr[i + 1]):
                    zj = z[indices[q]]
                    if zj == a:
                        pull_a = cost[zj]
                    elif zj >= 0 and cost[zj] > pull_max:
                        pull_max = cost[zj]
            stay = ci * u * u - pull_a
            room = _MARGIN * (1.0 + abs(stay))
            if stay + room <= ci * v * v - pull_max and stay + room <= lam:
                far = True
                for k in range(k_pass, nslots):  # born in this pass: measured directly
                    s = 0.0
                    for f in range(d):
                        t = Y[i, f] - C[k, f]
                        s += t * t
                    pull_k = 0.0
                    for q in range(indptr[i], indptr[i + 1]):
                        if z[indices[q]] == k:
                            pull_k += weights[q]
                    if not stay + room <= ci * s * _SAFE - pull_k:
                        far = False
                        break
                if far:
                    continue
        mass[a] -= ci
        for k in range(nslots):
            acc[k] = 0.0
        for f in range(d):
            yf = Y[i, f]
            for k in range(nslots):
                acc[k] += yf * M[f, k]
        bi = base[i]
        for k in range(nslots):
            D = max(bi + factor * acc[k] + cterm[k], 0.0)
            acc[k] = D
            cost[k] = ci * D
        for k in range(nslots):
            if mass[k] <= 0.0:
                cost[k] += lam
        cost[nslots] = lam
        potts_pull(cost, z, indptr, indices, weights, i)
        best = cheapest(cost, nslots + 1)
        if best != a and improves(cost[best], cost[a], rel_tol):
            changed += 1
            if best == nslots:
                for f in range(d):
                    y = Y[i, f]
                    C[best, f] = y
                    if sq:
                        M[f, best] = y
                    else:
                        M[f, best] = math.log(y) if y > 1e-300 else -690.7755278982137
                cterm[best] = bi if sq else 0.0
                acc[best] = 0.0
                nslots += 1
            z[i] = best
            mass[best] += ci
        else:
            mass[a] += ci
        if sq:  # exact distances were just computed: the tightest bounds
            own = z[i]
            second = np.inf
            for k in range(nslots):
                if k != own and acc[k] < second:
                    second = acc[k]
            ub[i] = math.sqrt(acc[own])
            lb[i] = math.sqrt(second)
    return n_order, nslots, changed


@njit(cache=True)
def _cluster_sums(Y, c, z, nslots):  # pragma: no cover - compiled
    """Exact per-cluster weighted sums and masses (the M-step's statistics)."""
    d = Y.shape[1]
    sums = np.zeros((nslots, d))
    mass = np.zeros(nslots)
    for i in range(Y.shape[0]):
        k = z[i]
        w = c[i]
        mass[k] += w
        for f in range(d):
            sums[k, f] += w * Y[i, f]
    return sums, mass


@njit(cache=True)
def _assignment_cost(Y, c, base, sq, C, M, z):  # pragma: no cover - compiled
    """Σ_i c_i D(y_i, C[z_i]), with the difference form for squared distances."""
    total = 0.0
    d = Y.shape[1]
    for i in range(Y.shape[0]):
        k = z[i]
        s = 0.0
        if sq:
            for f in range(d):
                t = Y[i, f] - C[k, f]
                s += t * t
        else:
            for f in range(d):
                s += Y[i, f] * M[f, k]
            s = base[i] - s
            if s < 0.0:
                s = 0.0
        total += c[i] * s
    return total

def _entropy_rows(Y):
    """Σ_d y log y per row (0 log 0 = 0)."""
    return xlogy(Y, Y).sum(axis=1)


def _log_floor(C):
    with np.errstate(divide="ignore"):
        return np.where(C > 1e-300, np.log(np.maximum(C, 1e-300)), _LOG_FLOOR)

# ====================================================================== provider
class DPCentroids(CountParameter, NodePotentials):
    """Centroid costs with a birth option: the node-potential provider of DP-means.

    The cost of cluster ``k`` for node ``i`` is ``c_i D(x̄_i, μ_k)`` (``c_i`` original
    points with mean ``x̄_i``), and opening a new cluster at the node costs ``λ``
    (its centroid is then ``x̄_i``, so ``D = 0``).

    Parameters
    ----------
    n_clusters : int, default=1
        Number of clusters of the batch interface (:meth:`initialize`, :meth:`unary`,
        :meth:`update`), which :class:`graphclust.HMRF` uses with a fixed label set.
        The incremental interface starts from any labelling and changes it.
    lam : float > 0, default=1.0
        Cost of a cluster (``λ``), on the divergence's scale.
    divergence : {"sqeuclidean", "kl"}, default="sqeuclidean"
        ``‖x − μ‖²``, or ``Σ_d x_d log(x_d / μ_d)`` on rows made distributions after
        adding ``smoothing`` (histograms). Both are Bregman divergences with the
        point first, so the mean is the best centroid.
    smoothing : float, default=1e-3
        For ``"kl"`` only.

    Attributes
    ----------
    centroids_ : ndarray of shape (n_clusters, n_features)
        Current centroids (distributions for ``"kl"``).

    Notes
    -----
    **Incremental path.** :meth:`start` builds the statistics for a labelling;
    :meth:`remove`, :meth:`scores` and :meth:`add` then move one node at a time, and
    :meth:`refit` is the M-step (centroids = means, empty clusters dropped). Scores are
    taken at the centroids of the last M-step (``start`` or ``refit``), as in DP-means;
    a cluster opened by ``add(i, n_clusters)`` gets the centroid ``x̄_i`` at once. A
    cluster left empty costs ``c_i D + λ`` (joining it would pay for it again), so the
    scores are exact changes of ``Σ_i c_i D(x̄_i, μ_{z_i}) + λ K``. :meth:`sweep` runs
    a whole pass of the same rule, constraint terms included, in compiled code.

    **Batch path.** With a fixed label set (inside :class:`graphclust.HMRF`) this is
    :class:`~graphclust.potentials.Centroids` with the same divergence; ``λ`` plays no
    part there. Pair distortions for distance-scaled penalties come from
    :class:`~graphclust.potentials.Centroids` too.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> P = gc.Problem.from_array(np.array([[0.0], [1.0], [9.0]]))
    >>> dp = DPCentroids(lam=4.0)
    >>> dp.start(P, np.array([0, 0, 0]))   # one cluster, centroid 10/3
    >>> dp.remove(2)
    >>> dp.scores(2).round(2)              # stay (D = 32.11) or open a new cluster (λ = 4)
    array([32.11,  4.  ])
    >>> dp.add(2, dp.n_clusters)           # birth: node 2 gets its own cluster
    >>> dp.refit()
    >>> dp.labels.tolist(), dp.centroids_.ravel().tolist()
    ([0, 0, 1], [0.5, 9.0])
    """

    _parameter_constraints = {
        "n_clusters": Integer(low=1),
        "lam": Real(low=0.0, low_open=True),
        "divergence": Options(*DIVERGENCES),
        "smoothing": Real(low=0.0),
    }

    # state (set by initialize or start)
    _n = None  # number of cluster slots
    _C = None
    _shift = 0.0
    _base_memo = None

    def __init__(self, n_clusters=1, *, lam=1.0, divergence="sqeuclidean", smoothing=1e-3):
        # the clusters are born and die: the parameter is the batch interface's count,
        # and `n_clusters` the current one (see NodePotentials)
        self.n_clusters_param = n_clusters
        self.lam = lam
        self.divergence = divergence
        self.smoothing = smoothing

    @property
    def n_clusters(self):
        return self.n_clusters_param if self._n is None else self._n

    @property
    def _base(self):
        """The centroid provider of the same divergence (points, distortions)."""
        key = (self.divergence, self.smoothing)
        if self._base_memo is None or self._base_memo[0] != key:
            self._base_memo = (key, Centroids(1, distortion=self.divergence, smoothing=self.smoothing))
        return self._base_memo[1]

    @property
    def centroids_(self):
        return None if self._C is None else self._C[: self._n] + self._shift

    @property
    def labels(self):
        """Current labels of the incremental path (a copy)."""
        return self._z.copy()

    # ------------------------------------------------------------------ features
    def points(self, problem):
        """``(Y, c)``: node means in the divergence's space and node counts.

        Raises
        ------
        InvalidFeaturesError
            No features, a non-finite feature (the message names the node), or for
            ``"kl"`` a negative entry or an empty histogram without smoothing.
        """
        self._validate_params()
        X, _ = check_features(problem, f"DPCentroids(divergence={self.divergence!r})")
        if not np.isfinite(X.sum()) and not np.isfinite(X).all():
            r, col = (int(v) for v in np.argwhere(~np.isfinite(X))[0])
            node = problem.nodes[r]
            raise InvalidFeaturesError(
                f"node {node!r} has feature {col} = {X[r, col]}; features must be finite", node=node
            )
        return self._base.points(problem)

    def distortion_matrix(self, Y, C):
        """``D(y_i, c_k)`` for rows already in the divergence's space: ``(len(Y), len(C))``."""
        return self._base.distortion_matrix(Y, C)

    def pair_distortion(self, problem, pairs):
        return self._base.pair_distortion(problem, pairs)

    def max_distortion(self, problem, rng=None):
        return self._base.max_distortion(problem, rng)

    # ------------------------------------------------------------------ state
    def _load(self, Y, c, labels, capacity):
        """Points, counts and labels of the state; squared distances work on data
        centred at the weighted mean (translation-invariant, and the expanded form
        ``‖y‖² − 2y·μ + ‖μ‖²`` of the compiled sweep then loses no digits to an offset)."""
        self._validate_params()
        Y = np.asarray(Y, dtype=np.float64)
        c = np.ascontiguousarray(c, dtype=np.float64)
        self._sq = self.divergence == "sqeuclidean"
        if self._sq:
            self._shift = (c[:, None] * Y).sum(0) / c.sum()
            self._Y = np.ascontiguousarray(Y - self._shift)
            self._base_term = np.einsum("ij,ij->i", self._Y, self._Y)
        else:
            self._shift = np.zeros(Y.shape[1])
            self._Y = np.ascontiguousarray(Y)
            self._base_term = _entropy_rows(self._Y)
        self._c = c
        z = np.ascontiguousarray(labels, dtype=np.int64).copy()
        if z.shape != (len(self._Y),) or (len(z) and z.min() < 0):
            raise InvalidParameterError(f"expected {len(self._Y)} labels >= 0, got shape {z.shape}")
        self._z = z
        cap = max(16, 2 * capacity)
        d = self._Y.shape[1]
        self._C = np.zeros((cap, d))
        self._M = np.zeros((d, cap))
        self._cterm = np.zeros(cap)
        self._mass = np.zeros(cap)
        self._cost = np.empty(cap + 1)
        self._acc = np.empty(cap + 1)
        # Hamerly bounds of the sweep (squared distances): none known yet
        self._ub = np.full(len(self._Y), np.inf)
        self._lb = np.zeros(len(self._Y))

    def _install(self, K, C):
        """Clusters ``0..K-1`` get centroids ``C`` (internal coordinates)."""
        self._C[:K] = C
        if self._sq:
            self._M[:, :K] = C.T
            self._cterm[:K] = np.einsum("ij,ij->i", C, C)
        else:
            self._M[:, :K] = _log_floor(C).T
        self._n = K
        self._ub = np.full(len(self._Y), np.inf)  # centroids set from outside: the bounds no longer hold

    def _grow(self):
        cap = 2 * self._C.shape[0]
        d = self._C.shape[1]
        C, M, cterm, mass = np.zeros((cap, d)), np.zeros((d, cap)), np.zeros(cap), np.zeros(cap)
        m = self._C.shape[0]
        C[:m], M[:, :m], cterm[:m], mass[:m] = self._C, self._M, self._cterm, self._mass
        self._C, self._M, self._cterm, self._mass = C, M, cterm, mass
        self._cost = np.empty(cap + 1)
        self._acc = np.empty(cap + 1)

    # ------------------------------------------------------------------ batch
    def initialize(self, problem, seeds, rng):
        Y, c = self.points(problem)
        seeds = np.asarray(seeds, dtype=np.float64)
        if seeds.ndim != 2 or seeds.shape[1] != Y.shape[1] or len(seeds) < 1:
            raise InvalidParameterError(f"expected seeds of shape (n_clusters, {Y.shape[1]}), got {seeds.shape}")
        self._load(Y, c, np.zeros(len(Y), np.int64), len(seeds))
        self._install(len(seeds), seeds - self._shift)

    def unary(self, problem):
        Y, c = self.points(problem)
        return c[:, None] * self.distortion_matrix(Y, self.centroids_)

    def update(self, problem, labels, **penalty_terms):
        """M-step with a fixed label set: centroids = means; an empty cluster keeps its
        centroid. Constraint terms (``must=``, ``cannot=``, ``far_pair=``) are accepted
        and ignored: there is no metric to learn."""
        Y, c = self.points(problem)
        labels = np.asarray(labels, dtype=np.int64)
        sums, mass = _cluster_sums(Y, c, labels, self._n)
        C = self.centroids_
        filled = mass > 0
        C[filled] = sums[filled] / mass[filled, None]
        self._install(self._n, C - self._shift)

    # ------------------------------------------------------------------ incremental
    def start(self, problem, labels, centroids=None):
        """Statistics for ``labels`` (values ``0..K-1``); centroids are the means of
        the labels unless given (shape ``(K, n_features)``)."""
        Y, c = self.points(problem)
        self.start_arrays(Y, c, labels, centroids)

    def start_arrays(self, Y, c, labels, centroids=None):
        """:meth:`start` on points already in the divergence's space (rows of ``Y``)
        with counts ``c``; the estimators use it after merging must-links."""
        labels = np.asarray(labels)
        K = int(labels.max()) + 1 if labels.size else 0
        self._load(Y, c, labels, K)
        sums, mass = _cluster_sums(self._Y, self._c, self._z, K)
        self._mass[:K] = mass
        d = self._Y.shape[1]
        if centroids is None:
            C = np.zeros((K, d))
            filled = mass > 0
            C[filled] = sums[filled] / mass[filled, None]
        else:
            centroids = np.asarray(centroids, dtype=np.float64)
            if centroids.shape != (K, d):
                raise InvalidParameterError(f"expected centroids of shape {(K, d)}, got {centroids.shape}")
            C = centroids - self._shift
        self._install(K, C)

    def remove(self, i):
        k = self._z[i]
        if k < 0:
            raise InvalidParameterError(f"node index {i} is not in a cluster; add it before removing it")
        self._mass[k] -= self._c[i]
        self._z[i] = -1

    def add(self, i, k):
        if not 0 <= k <= self._n:
            raise InvalidParameterError(
                f"cluster {k} does not exist; use 0..{self._n - 1}, or {self._n} to open a new one"
            )
        if self._z[i] >= 0:
            raise InvalidParameterError(f"node index {i} is already in cluster {self._z[i]}; remove it first")
        if k == self._n:
            if self._n >= self._C.shape[0]:
                self._grow()
            y = self._Y[i]
            self._C[k] = y
            self._M[:, k] = y if self._sq else _log_floor(y)
            self._ub = np.full(len(self._Y), np.inf)  # a birth outside a sweep: no lower bound covers it
            self._cterm[k] = self._base_term[i] if self._sq else 0.0
            self._n += 1
        self._mass[k] += self._c[i]
        self._z[i] = k

    def scores(self, i):
        """Costs ``(n_clusters + 1,)`` of node ``i``: ``c_i D(x̄_i, μ_k)`` per cluster
        (plus ``λ`` for a cluster that is empty), and ``λ`` for a new cluster last."""
        n = self._n
        dot = self._Y[i] @ self._M[:, :n]
        if self._sq:
            D = self._base_term[i] - 2.0 * dot + self._cterm[:n]
        else:
            D = self._base_term[i] - dot
        out = np.empty(n + 1)
        out[:n] = self._c[i] * np.maximum(D, 0.0) + np.where(self._mass[:n] <= 0, self.lam, 0.0)
        out[n] = self.lam
        return out

    def sweep(self, order, indptr, indices, weights):
        """One compiled pass of the sequential rule over the nodes in ``order``.

        Each node takes the cheapest of :meth:`scores` minus the signed weights of its
        constraint partners in each cluster (CSR arrays ``indptr``, ``indices``,
        ``weights``, symmetric: ``w > 0`` rewards sharing a cluster, ``w < 0``
        penalises it, ``-inf`` forbids it), keeping its cluster unless another option
        is strictly cheaper; ties go to the lowest cluster index, a new cluster last.
        Returns the number of nodes that moved.
        """
        order = np.ascontiguousarray(order, dtype=np.int64)
        pos, changed = 0, 0
        self._n_at_sweep = k_pass = self._n
        while pos < len(order):
            pos, self._n, moved = _dp_sweep(
                self._Y, self._c, self._base_term, self._sq, self._C, self._M, self._cterm, self._mass, self._z,
                self._n, order, pos, indptr, indices, weights, self.lam, REL_TOL, self._cost, self._acc,
                self._ub, self._lb, k_pass,
            )
            changed += moved
            if pos < len(order):
                self._grow()
        return changed

    def refit(self):
        """M-step of the incremental path: centroids = means of the current clusters,
        empty clusters removed and the rest renumbered in order."""
        sums, mass = _cluster_sums(self._Y, self._c, self._z, self._n)
        keep = np.flatnonzero(mass > 0)
        K = len(keep)
        remap = np.full(self._n, -1, dtype=np.int64)
        remap[keep] = np.arange(K)
        self._z = remap[self._z]
        self._mass[:K] = mass[keep]
        self._mass[K:] = 0.0
        new = sums[keep] / mass[keep, None]
        moved = np.sqrt(((new - self._C[keep]) ** 2).sum(axis=1)) if K else np.zeros(0)
        born = self._n > getattr(self, "_n_at_sweep", self._n)
        ub, lb = self._ub, self._lb
        self._install(K, new)
        if self._sq and K and not born and np.isfinite(moved).all():
            # centroids moved by `moved`: the bounds widen by as much (triangle
            # inequality); a cluster born in the sweep is in no lower bound yet
            self._ub = ub + moved[self._z]
            self._lb = np.maximum(lb - moved.max(), 0.0)
        self._n_at_sweep = K

    def objective(self):
        """``Σ_i c_i D(x̄_i, μ_{z_i}) + λ K`` (``K`` = non-empty clusters) for the
        incremental state."""
        total = _assignment_cost(self._Y, self._c, self._base_term, self._sq, self._C, self._M, self._z)
        return float(total + self.lam * np.count_nonzero(self._mass[: self._n] > 0))
