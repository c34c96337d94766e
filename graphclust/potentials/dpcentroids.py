"""DP-means' provider: centroid costs with a price for opening a cluster.

:class:`DPCentroids` serves RDP-means and DP-means and :class:`~graphclust.HMRF` (a
centroid provider with a fixed label set). For RDP-means and DP-means it is the
incremental provider of ICM with births (:mod:`graphclust.inference.icm_births`): its
state and four compiled hooks (take a node out and score it, put it in, Hamerly
bounds, one exact score) are registered with that engine, which adds the constraint
terms and the birth cost ``λ`` and takes the decisions.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.special import xlogy

from .._params import Integer, Options, Real
from ..errors import InvalidFeaturesError, InvalidParameterError
from ..inference import icm_births
from ..inference.icm_births import register_provider
from .base import CountParameter, NodePotentials, check_features
from .centroids import Centroids

__all__ = ["DPCentroids", "DPState", "DIVERGENCES"]

#: divergences DP-means is defined for (Bregman, the point first: the mean is the centroid)
DIVERGENCES = ("sqeuclidean", "kl")

#: the lower bounds are shrunk by this factor (rounding never decides a skip)
_SAFE = 1.0 - 1e-9

#: log of a zero centroid coordinate (KL): finite, so 0 * log stays 0
_LOG_FLOOR = math.log(1e-300)


# ====================================================================== numba form
class DPState(NamedTuple):
    """The provider's state for ICM with births (:mod:`graphclust.inference.icm_births`).

    ``z``, ``count``: labels and nodes per slot (the engine's). ``Y`` (``n x d``), ``c``,
    ``base``: points (centred for squared distances), counts and ``‖y‖²`` or ``Σ y log y``
    per node. ``C`` (``cap x d``) centroids, ``M`` (``d x cap``, contiguous over
    clusters, so the scoring loop vectorises) their transpose (log for KL), ``cterm``
    ``‖μ‖²`` per slot, ``mass`` the counts per slot, ``acc`` scratch that keeps the
    last node's divergences, ``ub``/``lb`` Hamerly bounds per node (squared distances).
    """

    z: np.ndarray
    count: np.ndarray
    Y: np.ndarray
    c: np.ndarray
    base: np.ndarray
    C: np.ndarray
    M: np.ndarray
    cterm: np.ndarray
    mass: np.ndarray
    acc: np.ndarray
    ub: np.ndarray
    lb: np.ndarray
    sq: bool


@njit(cache=True, inline="always")
def _scores(ps, i, a, cost, n):  # pragma: no cover - compiled
    """Take node ``i`` out of cluster ``a``; ``cost[k] = c_i D(y_i, μ_k)`` for ``k < n``
    from one product with ``M`` (``‖y‖² − 2 y·μ + ‖μ‖²`` on centred data, or
    ``Σ y log y − y·log μ``), and 0 for a new cluster (its centroid is ``y_i``). The
    divergences stay in ``acc`` for :func:`_add`'s bounds."""
    Y, M, acc, cterm = ps.Y, ps.M, ps.acc, ps.cterm
    ci = ps.c[i]
    ps.mass[a] -= ci
    for k in range(n):
        acc[k] = 0.0
    for f in range(Y.shape[1]):
        yf = Y[i, f]
        for k in range(n):
            acc[k] += yf * M[f, k]
    bi = ps.base[i]
    factor = -2.0 if ps.sq else -1.0
    for k in range(n):
        D = max(bi + factor * acc[k] + cterm[k], 0.0)
        acc[k] = D
        cost[k] = ci * D
    cost[n] = 0.0


@njit(cache=True, inline="always")
def _add(ps, i, k, new, n):  # pragma: no cover - compiled
    """Put node ``i`` into cluster ``k`` (a new one gets centroid ``y_i``); for squared
    distances the divergences just computed give the tightest bounds."""
    Y, acc = ps.Y, ps.acc
    if new:
        for f in range(Y.shape[1]):
            y = Y[i, f]
            ps.C[k, f] = y
            if ps.sq:
                ps.M[f, k] = y
            else:
                ps.M[f, k] = math.log(y) if y > 1e-300 else _LOG_FLOOR
        ps.cterm[k] = ps.base[i] if ps.sq else 0.0
        acc[k] = 0.0
    ps.mass[k] += ps.c[i]
    if ps.sq:
        second = np.inf
        for kk in range(n):
            if kk != k and acc[kk] < second:
                second = acc[kk]
        ps.ub[i] = math.sqrt(acc[k])
        ps.lb[i] = math.sqrt(second)


@njit(cache=True, inline="always")
def _bounds(ps, i):  # pragma: no cover - compiled
    """Hamerly's test with costs: ``ub[i]`` bounds the distance to the own centroid from
    above and ``lb[i]`` the distance to every other cluster that existed when the pass
    began from below; a new cluster costs nothing but its label cost."""
    u, v = ps.ub[i], ps.lb[i]
    if not (ps.sq and u <= v):
        return np.inf, 0.0, 0.0
    ci = ps.c[i]
    v = v * _SAFE
    return ci * u * u, ci * v * v, 0.0


@njit(cache=True, inline="always")
def _score(ps, i, k):  # pragma: no cover - compiled
    """``c_i D(y_i, μ_k)`` for one cluster (the difference form for squared distances)."""
    s = 0.0
    if ps.sq:
        for f in range(ps.Y.shape[1]):
            t = ps.Y[i, f] - ps.C[k, f]
            s += t * t
    else:
        for f in range(ps.Y.shape[1]):
            s += ps.Y[i, f] * ps.M[f, k]
        s = max(ps.base[i] - s, 0.0)
    return ps.c[i] * s


register_provider(DPState, scores=_scores, add=_add, bounds=_bounds, score=_score, cache=True)


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
    scores are exact changes of ``Σ_i c_i D(x̄_i, μ_{z_i}) + λ K``.

    **Compiled path.** :attr:`state` (a :class:`DPState`), :attr:`n_slots` and
    :meth:`grow` are what :func:`graphclust.inference.icm_births.sweep` drives: its
    hooks score a node against every cluster with one product, put it in a cluster,
    and skip the nodes whose Hamerly bounds prove they stay. :meth:`sweep` is that
    engine with the birth cost ``λ``: a whole pass of the rule above, constraint terms
    included. :meth:`assignment_cost` is the unary part of the energy of the labelling
    (:func:`graphclust.energy.energy_value` adds the rest).

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
        self._count = np.bincount(z, minlength=cap).astype(np.int64)
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
        self._n_bounded = K  # the clusters the lower bounds may cover (births since then: none)
        self._ub = np.full(len(self._Y), np.inf)  # centroids set from outside: the bounds no longer hold

    def grow(self):
        """Double the number of cluster slots (ICM with births calls it when they run out)."""
        cap = 2 * self._C.shape[0]
        d = self._C.shape[1]
        C, M, cterm, mass = np.zeros((cap, d)), np.zeros((d, cap)), np.zeros(cap), np.zeros(cap)
        count = np.zeros(cap, dtype=np.int64)
        m = self._C.shape[0]
        C[:m], M[:, :m], cterm[:m], mass[:m], count[:m] = self._C, self._M, self._cterm, self._mass, self._count
        self._C, self._M, self._cterm, self._mass, self._count = C, M, cterm, mass, count
        self._acc = np.empty(cap + 1)

    @property
    def state(self):
        """The incremental state as :class:`DPState` (views of the arrays, for the
        compiled hooks)."""
        return DPState(self._z, self._count, self._Y, self._c, self._base_term, self._C, self._M, self._cterm,
                       self._mass, self._acc, self._ub, self._lb, self._sq)

    @property
    def n_slots(self):
        """Cluster slots in use, empty ones included (until :meth:`refit`)."""
        return self._n

    @n_slots.setter
    def n_slots(self, value):
        self._n = int(value)

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
        self._count[k] -= 1
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
                self.grow()
            y = self._Y[i]
            self._C[k] = y
            self._M[:, k] = y if self._sq else _log_floor(y)
            self._ub = np.full(len(self._Y), np.inf)  # a birth outside a sweep: no lower bound covers it
            self._cterm[k] = self._base_term[i] if self._sq else 0.0
            self._n += 1
        self._mass[k] += self._c[i]
        self._count[k] += 1
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
        """One compiled pass of ICM with births over the nodes in ``order``
        (:func:`graphclust.inference.icm_births.sweep` with the birth cost ``λ``).

        Each node takes the cheapest of :meth:`scores` minus the signed weights of its
        constraint partners in each cluster (CSR arrays ``indptr``, ``indices``,
        ``weights``, symmetric: ``w > 0`` rewards sharing a cluster, ``w < 0``
        penalises it, ``-inf`` forbids it), keeping its cluster unless another option
        is strictly cheaper; ties go to the lowest cluster index, a new cluster last.
        Returns the number of nodes that moved.
        """
        return icm_births.sweep(self, order, (indptr, indices, weights), self.lam)

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
        self._count[:K] = self._count[keep]
        self._count[K:] = 0
        new = sums[keep] / mass[keep, None]
        moved = np.sqrt(((new - self._C[keep]) ** 2).sum(axis=1)) if K else np.zeros(0)
        born = self._n > self._n_bounded
        ub, lb = self._ub, self._lb
        self._install(K, new)
        if self._sq and K and not born and np.isfinite(moved).all():
            # centroids moved by `moved`: the bounds widen by as much (triangle
            # inequality); a cluster born since the last M-step is in no lower bound yet
            self._ub = ub + moved[self._z]
            self._lb = np.maximum(lb - moved.max(), 0.0)

    def objective(self):
        """``Σ_i c_i D(x̄_i, μ_{z_i}) + λ K`` (``K`` = non-empty clusters) for the
        incremental state."""
        return float(self.assignment_cost() + self.lam * np.count_nonzero(self._mass[: self._n] > 0))

    def assignment_cost(self):
        """``Σ_i c_i D(x̄_i, μ_{z_i})``: the unary part of the energy of the incremental
        state (each node's cost for its own cluster, summed)."""
        return float(_assignment_cost(self._Y, self._c, self._base_term, self._sq, self._C, self._M, self._z))

    def cluster_sizes(self):
        """Nodes per cluster slot ``(n_slots,)`` of the incremental state (a copy)."""
        return self._count[: self._n].copy()
