"""Data-graph builders: k-NN, epsilon-ball, dense kernel and pixel grids, plus sparsification.

Every builder has two faces. The ``*_matrix`` function (and :func:`grid_arrays`) does
the work on arrays and returns a symmetric ``scipy.sparse.csr_array`` without diagonal
(or an edge list); the ``*_graph`` function wraps it into a :class:`networkx.Graph` with
edge attribute ``weight`` and node attribute ``features``, ready for
:meth:`graphclust.Problem.from_graph`. There is never a second implementation: the graph
is the matrix, relabelled. (:func:`grid_matrix` writes its CSR rows straight from the
image for speed, through the same per-edge weight function as :func:`grid_arrays`, so
the two agree bit for bit.)

Weights are similarities (larger means closer), except for ``mode="distance"``, which
stores the distances themselves (for users who want to transform them) and keeps a
duplicate pair as an explicit zero rather than losing the edge.
"""

import math
import numbers

import networkx as nx
import numpy as np
import scipy.sparse as sp
from numba import njit, vectorize
from scipy.spatial import cKDTree

from ._utils import check_feature_matrix
from ._utils import check_float, check_int
from .errors import (
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    ProblemTooLargeError,
)

__all__ = [
    "knn_graph",
    "knn_matrix",
    "epsilon_graph",
    "epsilon_matrix",
    "kernel_graph",
    "kernel_matrix",
    "grid_graph",
    "grid_arrays",
    "grid_matrix",
    "contrast_weight",
    "sparsify",
    "KERNEL_MAX_SAMPLES",
]

#: Largest ``n_samples`` :func:`kernel_matrix` accepts by default (a dense n x n kernel).
KERNEL_MAX_SAMPLES = 10_000

_MODES = ("gaussian", "connectivity", "distance")
_SYMMETRIZE = ("union", "mutual")
_METRICS = {"euclidean": 2.0, "manhattan": 1.0, "chebyshev": np.inf, "cosine": 2.0}
_KERNELS = ("rbf", "linear", "cosine")
_SELF_TUNING_RANK = 7  # Zelnik-Manor & Perona use the 7th neighbour
_TINY = np.finfo(np.float64).tiny  # floor for similarities that underflow to 0


# =========================================================================== validation
def _one_of(value, name, allowed):
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise InvalidParameterError(f"{name} must be one of {choices}; got {value!r}")
    return value


_GRID = 2.0**40


def _check_features(X, *, allow_1d=False):
    """The points, any magnitude: the builders search them in units of the largest entry."""
    return check_feature_matrix(X, allow_1d=allow_1d, squarable=False)


def _metric_space(X, metric):
    """Map X into the space where the kd-tree searches; return ``(points, p, scale)``.

    ``cosine`` searches unit vectors with the Euclidean norm: ``1 - cos = |u - v|^2 / 2``,
    which orders neighbours exactly like the cosine distance (``scale`` 1). The other
    metrics search ``X / scale`` (``scale`` the largest absolute entry), so squared
    distances neither overflow (entries near 1e155) nor underflow, and distances in the
    search space times ``scale`` are those of ``X``.
    """
    _one_of(metric, "metric", tuple(_METRICS))
    if metric != "cosine":
        scale = float(np.abs(X).max(initial=0.0))
        scale = scale if scale > 0 else 1.0
        return X / scale, _METRICS[metric], scale
    norms = np.linalg.norm(X, axis=1)
    if not norms.all():
        r = int(np.flatnonzero(norms == 0)[0])
        raise InvalidFeaturesError(f"row {r} of X is all zeros; its cosine distance is undefined", node=r)
    return X / norms[:, None], 2.0, 1.0


def _snapped(P):
    """``P`` on a grid of 2^-40 (of the largest entry, after ``_metric_space``), for the
    k-d tree's search only: features that differ by the rounding of a change of units
    (X * 1e8) then give the same points, so equal distances (ties, common in rounded
    data such as iris) are broken the same way. Distances are measured on ``P``."""
    return np.round(P * _GRID) / _GRID


def _tree_to_metric(dist, metric):
    """Distances measured in the kd-tree space, converted to the requested metric."""
    if metric == "cosine":
        return np.minimum(0.5 * dist * dist, 2.0)
    return dist


def _pair_distances(P, i, j, p, metric):
    """Distances between rows ``i`` and ``j`` of the kd-tree points ``P``, vectorised."""
    diff = P[i] - P[j]
    if p == 2.0:
        d = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    elif p == 1.0:
        d = np.abs(diff).sum(axis=1)
    else:
        d = np.abs(diff).max(axis=1, initial=0.0)
    return _tree_to_metric(d, metric)


def _check_bandwidth(bandwidth, mode):
    if bandwidth is None:
        return None
    if mode != "gaussian":
        raise InvalidParameterError(
            f"bandwidth only applies to mode='gaussian'; got bandwidth={bandwidth!r} with mode={mode!r}"
        )
    if isinstance(bandwidth, str):
        if bandwidth != "self-tuning":
            raise InvalidParameterError(
                f"bandwidth must be None, a number > 0 or 'self-tuning'; got {bandwidth!r}"
            )
        return bandwidth
    return check_float(bandwidth, "bandwidth", low=0, low_open=True)


def _positive_median(d):
    """Median of ``d``, or of its positive entries when that is 0, or 1 when all are 0."""
    if d.size:
        med = float(np.median(d))
        if med > 0:
            return med
        pos = d[d > 0]
        if pos.size:
            return float(np.median(pos))
    return 1.0


def _local_scales(sorted_dist, rank):
    """Zelnik-Manor--Perona scales: distance to the ``rank``-th neighbour of each point.

    A scale of 0 (the point has ``rank`` duplicates) falls back to the distance to its
    nearest distinct neighbour among those given, then to the median positive distance.
    """
    sigma = sorted_dist[:, rank - 1].copy()
    zero = sigma == 0
    if zero.any():
        masked = np.where(sorted_dist[zero] > 0, sorted_dist[zero], np.inf)
        nearest = masked.min(axis=1, initial=np.inf)
        fallback = _positive_median(sorted_dist.ravel())
        sigma[zero] = np.where(np.isfinite(nearest), nearest, fallback)
    return sigma


def _weights(d, i, j, mode, bandwidth, sigma_local):
    """Edge weights from distances ``d`` of pairs ``(i, j)``."""
    if mode == "connectivity" or d.size == 0:
        return np.ones_like(d)
    if mode == "distance":
        return d.copy()
    if bandwidth == "self-tuning":
        w = np.exp(-(d * d) / (sigma_local[i] * sigma_local[j]))
    else:
        sigma = bandwidth if bandwidth is not None else _positive_median(d)
        w = np.exp(-(d * d) / (2.0 * sigma * sigma))
    return np.maximum(w, _TINY)


# =========================================================================== assembly
def _merge_pairs(rows, cols, w, n, how):
    """Undirected pairs ``(lo, hi, weight)`` from directed entries.

    ``union`` keeps a pair chosen from either end, ``mutual`` one chosen from both; the
    weight of a pair is the larger of its entries. Output is sorted by ``(lo, hi)``.
    """
    lo = np.minimum(rows, cols)
    hi = np.maximum(rows, cols)
    key = lo * np.int64(n) + hi
    order = np.argsort(key, kind="stable")
    key, w = key[order], w[order]
    if key.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    first = np.empty(key.size, bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    wmax = np.maximum.reduceat(w, starts)
    ukey = key[starts]
    if how == "mutual":
        counts = np.diff(np.append(starts, key.size))
        keep = counts >= 2
        ukey, wmax = ukey[keep], wmax[keep]
    return ukey // n, ukey % n, wmax


def _csr_from_upper(lo, hi, w, n):
    """Symmetric CSR (canonical format, explicit zeros kept) from pairs ``lo < hi``."""
    W = sp.csr_array(
        (np.concatenate([w, w]), (np.concatenate([lo, hi]), np.concatenate([hi, lo]))),
        shape=(n, n),
    )
    W.sort_indices()
    return W


def _point_graph(W, X, include_features):
    """Nodes ``0 .. n-1`` (with ``features``), the upper triangle of ``W`` as edges."""
    G = nx.Graph()
    n = X.shape[0]
    if include_features:
        G.add_nodes_from(zip(range(n), ({"features": f} for f in X.tolist())))
    else:
        G.add_nodes_from(range(n))
    coo = W.tocoo()
    up = coo.row < coo.col
    G.add_weighted_edges_from(zip(coo.row[up].tolist(), coo.col[up].tolist(), coo.data[up].tolist()))
    return G


# =========================================================================== k-NN
def knn_matrix(X, n_neighbors=10, *, mode="gaussian", bandwidth=None, metric="euclidean", symmetrize="union"):
    """Symmetric k-nearest-neighbour similarity matrix of the rows of ``X``.

    Each point is joined to its ``n_neighbors`` nearest other points (found with
    :class:`scipy.spatial.cKDTree`); the directed choices are then made symmetric.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Finite numeric features; a 1-D array is one feature per sample.
    n_neighbors : int, default=10
        Neighbours per point, ``1 <= n_neighbors < n_samples``.
    mode : {"gaussian", "connectivity", "distance"}, default="gaussian"
        Edge weight: a Gaussian similarity, 1, or the distance itself.
    bandwidth : None, float or "self-tuning", default=None
        Gaussian scale (``mode="gaussian"`` only). ``None`` uses the median of the
        k-NN distances; a float is ``sigma`` itself; ``"self-tuning"`` is the local
        scaling of Zelnik-Manor and Perona (see Notes).
    metric : {"euclidean", "manhattan", "chebyshev", "cosine"}, default="euclidean"
        Distance between rows. ``"cosine"`` is ``1 - cos(x_i, x_j)``.
    symmetrize : {"union", "mutual"}, default="union"
        Keep a pair chosen by either end (the usual k-NN graph, every node has degree
        >= n_neighbors) or by both ends (the mutual k-NN graph, sparser, may leave
        nodes isolated).

    Returns
    -------
    W : scipy.sparse.csr_array of shape (n_samples, n_samples)
        Symmetric, float64, no diagonal, sorted indices.

    Raises
    ------
    InvalidFeaturesError
        ``X`` is empty, ragged, non-numeric or not finite (the message names the
        row), or a row is all zeros with ``metric="cosine"``.
    InvalidParameterError
        An unknown ``mode``, ``metric``, ``symmetrize`` or ``bandwidth``, or
        ``n_neighbors >= n_samples``.

    See Also
    --------
    knn_graph : the same graph as a networkx graph with node features.
    epsilon_matrix, sparsify

    Notes
    -----
    With a global scale ``sigma`` the Gaussian weight is

    .. math:: w_{ij} = \\exp\\left(-\\frac{d_{ij}^2}{2\\sigma^2}\\right),

    and with ``bandwidth="self-tuning"``

    .. math:: w_{ij} = \\exp\\left(-\\frac{d_{ij}^2}{\\sigma_i \\sigma_j}\\right),

    where ``sigma_i`` is the distance from ``x_i`` to its 7th nearest neighbour (its
    ``n_neighbors``-th when ``n_neighbors < 7``). Both formulas are symmetric, so the
    weight of a pair does not depend on which end chose it.

    Duplicate points are neighbours at distance 0: their Gaussian weight is 1. A
    zero scale (all k-NN distances 0, or a point with 7 duplicates) falls back to the
    median positive distance, or to 1 when every distance is 0, so no weight is ever
    NaN. Gaussian weights are floored at the smallest positive float64 so that an
    edge never disappears by underflow. With ``mode="distance"`` a duplicate pair is
    stored as an explicit zero (it stays an edge).

    Ties between equally distant neighbours are broken by the kd-tree. Cost:
    ``O(n log n)`` to build the tree, about ``O(k log n)`` per query in low dimension.

    References
    ----------
    .. [1] L. Zelnik-Manor and P. Perona, "Self-tuning spectral clustering", NIPS 2004.
    .. [2] U. von Luxburg, "A tutorial on spectral clustering", Statistics and
       Computing 17, 2007. https://doi.org/10.1007/s11222-007-9033-z

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [7.0]])
    >>> knn_matrix(X, n_neighbors=1, mode="distance").toarray()
    array([[0., 1., 0., 0.],
           [1., 0., 2., 0.],
           [0., 2., 0., 4.],
           [0., 0., 4., 0.]])
    >>> knn_matrix(X, n_neighbors=1, symmetrize="mutual", mode="connectivity").nnz
    2
    """
    X = _check_features(X, allow_1d=True)
    n = X.shape[0]
    k = check_int(n_neighbors, "n_neighbors", low=1)
    if k >= n:
        raise InvalidParameterError(
            f"n_neighbors={k} must be smaller than the number of samples ({n}): "
            f"each point needs {k} other points to connect to"
        )
    _one_of(mode, "mode", _MODES)
    _one_of(symmetrize, "symmetrize", _SYMMETRIZE)
    bandwidth = _check_bandwidth(bandwidth, mode)
    # distances in units of the largest entry: the weights of a data-derived bandwidth
    # are then the same whatever the units of X (and finite near 1e±300)
    P, p, scale = _metric_space(X, metric)
    bandwidth = bandwidth / scale if isinstance(bandwidth, float) else bandwidth

    Q = _snapped(P)
    _, idx = cKDTree(Q).query(Q, k=k + 1, p=p)
    # Drop each point itself; with duplicates it may not come first or at all, and
    # then the farthest of the k + 1 answers goes instead.
    drop = idx == np.arange(n)[:, None]
    drop[~drop.any(axis=1), -1] = True
    keep = ~drop
    idx = idx[keep].reshape(n, k)
    dist = _pair_distances(P, np.repeat(np.arange(n), k), idx.ravel(), p, metric).reshape(n, k)

    sigma_local = None
    if bandwidth == "self-tuning":
        sigma_local = _local_scales(np.sort(dist, axis=1), min(_SELF_TUNING_RANK, k))
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols = idx.ravel().astype(np.int64)
    d = dist.ravel()
    w = _weights(d, rows, cols, mode, bandwidth, sigma_local)
    if mode == "distance":
        w = w * scale
    lo, hi, w = _merge_pairs(rows, cols, w, n, symmetrize)
    return _csr_from_upper(lo, hi, w, n)


def with_knn_graph(problem, n_neighbors=10):
    """``(problem, info)``: a :class:`~graphclust.Problem` given as features without
    edges gets the graph the graph methods cluster,
    ``knn_matrix(X, n_neighbors, bandwidth="self-tuning")`` (the symmetric k-NN graph
    with locally scaled Gaussian weights); ``info`` says so. A problem with edges (or
    without features, or of one node) is returned as it is, with ``info = {}``."""
    from dataclasses import replace

    if problem.n_edges or problem.X is None or problem.n_nodes < 2:
        return problem, {}
    k = min(int(n_neighbors), problem.n_nodes - 1)
    W = knn_matrix(problem.feature_means, n_neighbors=k, bandwidth="self-tuning")
    return replace(problem, W=W), {"graph": f"knn_matrix(X, n_neighbors={k}, bandwidth='self-tuning')"}


def knn_graph(
    X,
    n_neighbors=10,
    *,
    mode="gaussian",
    bandwidth=None,
    metric="euclidean",
    symmetrize="union",
    include_features=True,
):
    """k-nearest-neighbour graph of the rows of ``X`` as a networkx graph.

    A thin wrapper of :func:`knn_matrix`: nodes are ``0 .. n_samples - 1``, edge
    attribute ``weight`` holds the matrix entry and node attribute ``features`` the
    row of ``X`` as a list of floats.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_neighbors : int, default=10
    mode : {"gaussian", "connectivity", "distance"}, default="gaussian"
    bandwidth : None, float or "self-tuning", default=None
    metric : {"euclidean", "manhattan", "chebyshev", "cosine"}, default="euclidean"
    symmetrize : {"union", "mutual"}, default="union"
        See :func:`knn_matrix` for these.
    include_features : bool, default=True
        Store each row of ``X`` as node attribute ``features``.

    Returns
    -------
    G : networkx.Graph

    Raises
    ------
    InvalidFeaturesError, InvalidParameterError
        As :func:`knn_matrix`.

    See Also
    --------
    knn_matrix : the array face, without networkx.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 0.1, (3, 2)), rng.normal(5, 0.1, (3, 2))])
    >>> G = knn_graph(X, n_neighbors=2, mode="connectivity")
    >>> sorted(G.edges())
    [(0, 1), (0, 2), (1, 2), (3, 4), (3, 5), (4, 5)]
    >>> len(G.nodes[0]["features"])
    2
    """
    W = knn_matrix(X, n_neighbors, mode=mode, bandwidth=bandwidth, metric=metric, symmetrize=symmetrize)
    return _point_graph(W, _check_features(X, allow_1d=True), include_features)


# =========================================================================== epsilon
def epsilon_matrix(X, eps, *, mode="gaussian", bandwidth=None, metric="euclidean"):
    """Similarity matrix joining every pair of rows of ``X`` within distance ``eps``.

    Pairs are found with :meth:`scipy.spatial.cKDTree.query_pairs` (``d <= eps``).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    eps : float
        Radius, > 0 (for ``metric="cosine"`` a cosine distance, at most 2 is useful).
    mode : {"gaussian", "connectivity", "distance"}, default="gaussian"
    bandwidth : None, float or "self-tuning", default=None
        As in :func:`knn_matrix`; ``None`` uses the median distance over the pairs
        found, ``"self-tuning"`` the distance of each point to its 7th nearest
        neighbour (whether or not it lies within ``eps``).
    metric : {"euclidean", "manhattan", "chebyshev", "cosine"}, default="euclidean"

    Returns
    -------
    W : scipy.sparse.csr_array of shape (n_samples, n_samples)
        Symmetric, no diagonal; points with no neighbour within ``eps`` are isolated.

    Raises
    ------
    InvalidFeaturesError, InvalidParameterError
        As :func:`knn_matrix`; also ``eps <= 0``.

    See Also
    --------
    epsilon_graph, knn_matrix

    Notes
    -----
    Memory grows with the number of pairs, up to ``n_samples**2 / 2`` for a radius
    wider than the data: pick ``eps`` from the k-NN distances, or use
    :func:`knn_matrix`, which bounds the degree.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [7.0]])
    >>> epsilon_matrix(X, 2.0, mode="distance").toarray()
    array([[0., 1., 0., 0.],
           [1., 0., 2., 0.],
           [0., 2., 0., 0.],
           [0., 0., 0., 0.]])
    """
    X = _check_features(X, allow_1d=True)
    n = X.shape[0]
    eps = check_float(eps, "eps", low=0, low_open=True)
    _one_of(mode, "mode", _MODES)
    bandwidth = _check_bandwidth(bandwidth, mode)
    P, p, scale = _metric_space(X, metric)  # as in knn_matrix
    bandwidth = bandwidth / scale if isinstance(bandwidth, float) else bandwidth
    radius = np.sqrt(2.0 * eps) if metric == "cosine" else eps / scale

    Q = _snapped(P)
    tree = cKDTree(Q)
    # search a little wider (the grid moves points by up to 2^-41 per coordinate), then
    # keep d <= eps measured on the unsnapped points, up to the rounding of the units
    slack = P.shape[1] / _GRID
    pairs = tree.query_pairs(radius + slack, p=p, output_type="ndarray").astype(np.int64, copy=False)
    d = _pair_distances(P, pairs[:, 0], pairs[:, 1], p, metric)
    inside = d <= (eps if metric == "cosine" else radius) * (1.0 + 1e-12)
    pairs, d = pairs[inside], d[inside]
    i, j = pairs[:, 0], pairs[:, 1]
    sigma_local = None
    if bandwidth == "self-tuning" and n > 1:
        m = min(_SELF_TUNING_RANK, n - 1)
        _, knn_i = tree.query(Q, k=m + 1, p=p)
        knn_d = _pair_distances(P, np.repeat(np.arange(n), m), knn_i[:, 1:].ravel(), p, metric).reshape(n, m)
        sigma_local = _local_scales(np.sort(knn_d, axis=1), m)
    w = _weights(d, i, j, mode, bandwidth, sigma_local)
    if mode == "distance":
        w = w * scale
    order = np.lexsort((j, i))
    return _csr_from_upper(i[order], j[order], w[order], n)


def epsilon_graph(X, eps, *, mode="gaussian", bandwidth=None, metric="euclidean", include_features=True):
    """Epsilon-ball graph of the rows of ``X`` as a networkx graph.

    A thin wrapper of :func:`epsilon_matrix` with nodes ``0 .. n_samples - 1``, edge
    attribute ``weight`` and (when ``include_features``) node attribute ``features``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    eps : float
    mode, bandwidth, metric
        See :func:`epsilon_matrix`.
    include_features : bool, default=True

    Returns
    -------
    G : networkx.Graph

    Examples
    --------
    >>> G = epsilon_graph([[0.0], [1.0], [3.0], [7.0]], 2.0, mode="connectivity")
    >>> sorted(G.edges()), sorted(nx.isolates(G))
    ([(0, 1), (1, 2)], [3])
    """
    W = epsilon_matrix(X, eps, mode=mode, bandwidth=bandwidth, metric=metric)
    return _point_graph(W, _check_features(X, allow_1d=True), include_features)


# =========================================================================== kernel
def kernel_matrix(X, kernel="rbf", gamma=None, *, max_samples=KERNEL_MAX_SAMPLES):
    """Dense kernel similarities between all rows of ``X``, as a sparse matrix.

    Meant for small problems: the kernel is built densely, so memory and time grow
    as ``n_samples**2``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    kernel : {"rbf", "linear", "cosine"}, default="rbf"
        ``"rbf"`` is ``exp(-gamma |x_i - x_j|^2)``; ``"linear"`` is ``x_i . x_j`` and
        ``"cosine"`` is ``x_i . x_j / (|x_i| |x_j|)``, both clipped below at 0
        (similarities are non-negative; a negative inner product means "unrelated",
        and cannot-links belong in the side information, not in the data graph).
    gamma : float or None, default=None
        RBF width, > 0 (``kernel="rbf"`` only). ``None`` uses the median heuristic
        ``gamma = 1 / (2 sigma^2)`` with ``sigma^2`` the median squared distance
        between distinct rows (or the median positive one when that is 0).
    max_samples : int, default=KERNEL_MAX_SAMPLES (10000)
        Refuse larger inputs. Peak memory is about ``24 * n_samples**2`` bytes
        (2.4 GB at the default limit, a fully dense result).

    Returns
    -------
    W : scipy.sparse.csr_array of shape (n_samples, n_samples)
        Symmetric, no diagonal; pairs with similarity 0 (clipped, orthogonal) are not
        stored. RBF weights are floored at the smallest positive float64, so the RBF
        graph is complete.

    Raises
    ------
    ProblemTooLargeError
        ``n_samples > max_samples``; the message suggests :func:`knn_graph`.
    InvalidFeaturesError
        Bad ``X`` (the message names the row), or an all-zero row with
        ``kernel="cosine"``.
    InvalidParameterError
        An unknown ``kernel``, ``gamma <= 0``, or ``gamma`` with another kernel.

    See Also
    --------
    kernel_graph, knn_matrix

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [1.0, 1.0], [-1.0, 0.0]])
    >>> kernel_matrix(X, "cosine").toarray().round(4)
    array([[0.    , 0.7071, 0.    ],
           [0.7071, 0.    , 0.    ],
           [0.    , 0.    , 0.    ]])
    >>> kernel_matrix(X, "rbf", gamma=0.5).toarray().round(4)
    array([[0.    , 0.6065, 0.1353],
           [0.6065, 0.    , 0.0821],
           [0.1353, 0.0821, 0.    ]])
    """
    _one_of(kernel, "kernel", _KERNELS)
    if gamma is not None:
        if kernel != "rbf":
            raise InvalidParameterError(f"gamma only applies to kernel='rbf'; got gamma={gamma!r} with kernel={kernel!r}")
        gamma = check_float(gamma, "gamma", low=0, low_open=True)
    max_samples = check_int(max_samples, "max_samples", low=1)
    X = _check_features(X, allow_1d=True)
    n = X.shape[0]
    if n > max_samples:
        raise ProblemTooLargeError(
            f"kernel_matrix builds a dense {n} x {n} kernel; n_samples={n} exceeds max_samples={max_samples}. "
            "Use knn_graph / knn_matrix (sparse) or raise max_samples if the memory is there"
        )
    if kernel == "rbf":
        Xc = X - X.mean(axis=0)  # centring keeps |x|^2 + |y|^2 - 2 x.y accurate
        sq = np.einsum("ij,ij->i", Xc, Xc)
        K = Xc @ Xc.T
        K *= -2.0
        K += sq[:, None]
        K += sq[None, :]
        np.maximum(K, 0.0, out=K)
        if gamma is None:
            # each pair appears twice off the diagonal, which leaves the median as is
            off = np.delete(K.reshape(-1), np.arange(n) * (n + 1))
            gamma = 0.5 / _positive_median(off)
            del off
        K *= -gamma
        np.exp(K, out=K)
        np.maximum(K, _TINY, out=K)
    else:
        U = X
        if kernel == "cosine":
            U, _, _ = _metric_space(X, "cosine")
        K = U @ U.T
        np.clip(K, 0.0, 1.0 if kernel == "cosine" else None, out=K)
    K += K.T  # exact symmetry whatever the BLAS did
    K *= 0.5
    np.fill_diagonal(K, 0.0)
    return _dense_to_csr(K)


def _dense_to_csr(K, block=1024):
    """CSR of a dense square matrix without the 16-bytes-per-entry COO detour."""
    n = K.shape[0]
    mask = K != 0
    nnz = int(np.count_nonzero(mask))
    idx_dtype = np.int32 if max(nnz, n) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(n + 1, dtype=idx_dtype)
    np.cumsum(mask.sum(axis=1), out=indptr[1:])
    indices = np.empty(nnz, dtype=idx_dtype)
    for start in range(0, n, block):  # blocks of rows bound the temporary index arrays
        stop = min(n, start + block)
        indices[indptr[start] : indptr[stop]] = np.nonzero(mask[start:stop])[1]
    data = K[mask]
    return sp.csr_array((data, indices, indptr), shape=(n, n))


def kernel_graph(X, kernel="rbf", gamma=None, *, max_samples=KERNEL_MAX_SAMPLES, include_features=True):
    """Complete (or nearly complete) kernel graph of the rows of ``X``.

    A thin wrapper of :func:`kernel_matrix` with nodes ``0 .. n_samples - 1``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    kernel : {"rbf", "linear", "cosine"}, default="rbf"
    gamma : float or None, default=None
    max_samples : int, default=KERNEL_MAX_SAMPLES
        See :func:`kernel_matrix`.
    include_features : bool, default=True

    Returns
    -------
    G : networkx.Graph

    Examples
    --------
    >>> G = kernel_graph([[0.0], [1.0], [2.0]], gamma=1.0)
    >>> round(G[0][1]["weight"], 4), round(G[0][2]["weight"], 4)
    (0.3679, 0.0183)
    """
    W = kernel_matrix(X, kernel, gamma, max_samples=max_samples)
    return _point_graph(W, _check_features(X, allow_1d=True), include_features)


# =========================================================================== grids
def _check_image(image, channel_axis):
    """Return the image as float64 ``(h, w, c)``; name the first non-finite pixel."""
    if sp.issparse(image) or isinstance(image, nx.Graph):
        raise InvalidParameterError(f"image must be a numpy array, got {type(image).__name__}")
    try:
        img = np.asarray(image)
    except ValueError as exc:
        raise InvalidParameterError(f"image could not be read as an array: {exc}") from None
    if img.dtype.kind not in "biuf":
        raise InvalidFeaturesError(f"image has dtype {img.dtype}; pixel values must be real numbers")
    if channel_axis is None:
        if img.ndim != 2:
            hint = " (pass channel_axis=-1 for a colour image)" if img.ndim == 3 else ""
            raise InvalidParameterError(
                f"image must be 2-D (rows, cols) when channel_axis=None, got shape {img.shape}{hint}"
            )
        img = img[:, :, None]
    else:
        if isinstance(channel_axis, bool) or not isinstance(channel_axis, numbers.Integral):
            raise InvalidParameterError(f"channel_axis must be None or an int, got {channel_axis!r}")
        if img.ndim != 3:
            raise InvalidParameterError(
                f"image must be 3-D (rows, cols, channels) with channel_axis={channel_axis}, got shape {img.shape}"
            )
        if not -3 <= channel_axis < 3:
            raise InvalidParameterError(f"channel_axis={channel_axis} is out of range for a 3-D image")
        img = np.moveaxis(img, channel_axis, -1)
    h, w, c = img.shape
    if h == 0 or w == 0 or c == 0:
        raise InvalidParameterError(f"image is empty: {h} rows, {w} columns, {c} channels")
    img = np.ascontiguousarray(img, dtype=np.float64)
    if not np.isfinite(img.sum()) and not np.isfinite(img).all():
        r, col, ch = (int(v) for v in np.argwhere(~np.isfinite(img))[0])
        where = f" (channel {ch})" if channel_axis is not None else ""
        raise InvalidFeaturesError(
            f"pixel {(r, col)!r} has value {img[r, col, ch]}{where}; pixel values must be finite", node=(r, col)
        )
    return img


def _check_grid_params(connectivity, beta, sigma):
    if isinstance(connectivity, bool) or connectivity not in (4, 8):
        raise InvalidParameterError(f"connectivity must be 4 or 8; got {connectivity!r}")
    if beta is not None and sigma is not None:
        raise InvalidParameterError(f"give beta or sigma, not both (beta={beta!r}, sigma={sigma!r})")
    if beta is not None:
        beta = check_float(beta, "beta", low=0)
    if sigma is not None:
        sigma = check_float(sigma, "sigma", low=0, low_open=True)
        beta = 0.5 / (sigma * sigma)
    return beta


# Neighbours of pixel p = row * w + col as (d_row, d_col), in increasing order of the
# index offset (row-major order of the 3 x 3 stencil). The forward half gives each
# edge once (i < j); the full stencil gives every CSR row with sorted columns.
_STENCIL = {
    4: ((-1, 0), (0, -1), (0, 1), (1, 0)),
    8: ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)),
}
_LOG_SQRT2 = 0.5 * np.log(2.0)


def _stencil(connectivity, forward):
    steps = np.array(_STENCIL[connectivity], dtype=np.int64)
    if forward:
        steps = steps[len(steps) // 2 :]
    return steps[:, 0].copy(), steps[:, 1].copy()


@njit(cache=True)
def _contrast(img, r, col, rr, cc):
    acc = 0.0
    for ch in range(img.shape[2]):
        diff = img[r, col, ch] - img[rr, cc, ch]
        acc += diff * diff
    return acc


@vectorize(cache=True)
def contrast_weight(sq_diff, beta, log_dist):
    """The contrast-sensitive weight of a grid edge, ``exp(-beta |I_p - I_q|^2) /
    dist(p, q)`` from ``sq_diff = |I_p - I_q|^2`` and ``log_dist = log dist(p, q)``,
    floored at the smallest positive float (a numpy ufunc, also called inside the
    compiled grid builders and by the tiled Dask grid, so all build the same weights).
    Compiled for float64 on first use, not at import: ``import graphclust`` loads no
    compiled code (0.5 s and 44 MB less).

    >>> float(contrast_weight(2.0, 0.5, 0.0)) == float(np.exp(-1.0))
    True
    """
    t = beta * sq_diff if beta != 0.0 else 0.0
    x = math.exp(-(t + log_dist))
    return x if x > _TINY else _TINY


@njit(cache=True)
def _edge_weight(img, r, col, rr, cc, beta, tiny):
    """exp(-beta |I_p - I_q|^2) / dist(p, q), floored; symmetric in p, q."""
    return contrast_weight(_contrast(img, r, col, rr, cc), beta, _LOG_SQRT2 if r != rr and col != cc else 0.0)


@njit(cache=True)
def _grid_contrast_sum_kernel(img, d_row, d_col):
    """Sum of ``|I_p - I_q|^2`` over the forward neighbour pairs (read-only pass)."""
    h, w, _ = img.shape
    total = 0.0
    for r in range(h):
        for col in range(w):
            for s in range(d_row.size):
                rr = r + d_row[s]
                cc = col + d_col[s]
                if 0 <= rr < h and 0 <= cc < w:
                    total += _contrast(img, r, col, rr, cc)
    return total


@njit(cache=True)
def _grid_edges_kernel(img, d_row, d_col, beta, tiny, edges, weights):
    """Fill ``edges`` (forward stencil: sorted by (i, j), i < j) and their weights."""
    h, w, _ = img.shape
    e = 0
    for r in range(h):
        for col in range(w):
            for s in range(d_row.size):
                rr = r + d_row[s]
                cc = col + d_col[s]
                if 0 <= rr < h and 0 <= cc < w:
                    edges[e, 0] = r * w + col
                    edges[e, 1] = rr * w + cc
                    weights[e] = _edge_weight(img, r, col, rr, cc, beta, tiny)
                    e += 1
    return e


@njit(cache=True)
def _grid_csr_kernel(img, d_row, d_col, beta, tiny, indptr, indices, data):
    """Fill a symmetric CSR matrix row by row (full stencil: sorted columns).

    Each edge weight is computed once, from the edge's forward end, and kept for two
    image rows: a backward neighbour of pixel p lies in p's image row or the one above.
    """
    h, w, _ = img.shape
    K = d_row.size
    half = K // 2
    prev = np.empty((w, half))
    cur = np.empty((w, half))
    k = 0
    indptr[0] = 0
    for r in range(h):
        for col in range(w):
            for f in range(half):
                rr = r + d_row[half + f]
                cc = col + d_col[half + f]
                if rr < h and 0 <= cc < w:
                    cur[col, f] = _edge_weight(img, r, col, rr, cc, beta, tiny)
        for col in range(w):
            for s in range(K):
                rr = r + d_row[s]
                cc = col + d_col[s]
                if 0 <= rr < h and 0 <= cc < w:
                    if s >= half:
                        x = cur[col, s - half]
                    elif rr < r:
                        x = prev[cc, K - 1 - s - half]  # the mirror step, seen from q
                    else:
                        x = cur[cc, K - 1 - s - half]
                    indices[k] = rr * w + cc
                    data[k] = x
                    k += 1
            indptr[r * w + col + 1] = k
        prev, cur = cur, prev
    return k


def _n_grid_edges(h, w, connectivity):
    m = h * (w - 1) + (h - 1) * w
    if connectivity == 8:
        m += 2 * (h - 1) * (w - 1)
    return m


def _grid_beta(img, connectivity, beta):
    """The given beta, or 1 / (2 mean |I_p - I_q|^2) over the neighbour pairs."""
    if beta is not None:
        return beta
    h, w, _ = img.shape
    m = _n_grid_edges(h, w, connectivity)
    mean = _grid_contrast_sum_kernel(img, *_stencil(connectivity, True)) / m if m else 0.0
    return 0.5 / mean if mean > 0 else 0.0


def _grid_core(img, connectivity, beta):
    """Edges ``(i, j)``, ``i < j``, sorted, their weights, and the beta used."""
    h, w, _ = img.shape
    beta = _grid_beta(img, connectivity, beta)
    m = _n_grid_edges(h, w, connectivity)
    edges = np.empty((m, 2), dtype=np.int64)
    weights = np.empty(m)
    _grid_edges_kernel(img, *_stencil(connectivity, True), float(beta), _TINY, edges, weights)
    return edges, weights, beta


def _grid_csr(img, connectivity, beta):
    """The grid as a symmetric CSR matrix, written directly (no edge list)."""
    h, w, _ = img.shape
    n = h * w
    beta = _grid_beta(img, connectivity, beta)
    nnz = 2 * _n_grid_edges(h, w, connectivity)
    idx_dtype = np.int32 if max(nnz, n) < np.iinfo(np.int32).max else np.int64
    indptr = np.empty(n + 1, dtype=idx_dtype)
    indices = np.empty(nnz, dtype=idx_dtype)
    data = np.empty(nnz)
    _grid_csr_kernel(img, *_stencil(connectivity, False), float(beta), _TINY, indptr, indices, data)
    W = sp.csr_array((data, indices, indptr), shape=(n, n))
    W.has_sorted_indices = True
    return W


def grid_arrays(image, connectivity=4, beta=None, *, channel_axis=None, sigma=None):
    """Pixel-grid graph of an image as edge arrays, with contrast-sensitive weights.

    Pixels are numbered row-major (``p = row * width + col``); each is joined to its
    4 or 8 neighbours. Built with numpy index arithmetic, no loop over pixels.

    Parameters
    ----------
    image : array-like of shape (rows, cols) or (rows, cols, channels)
        Finite real pixel values (integer images are converted to float first).
    connectivity : {4, 8}, default=4
        4: horizontal and vertical neighbours; 8: also the diagonals.
    beta : float or None, default=None
        Contrast sensitivity, >= 0. ``None`` uses ``1 / (2 mean |I_p - I_q|^2)``
        over all neighbour pairs (0 for a constant image); ``0`` gives unit weights.
    channel_axis : int or None, default=None
        As in scikit-image: ``None`` means a grayscale 2-D image; an int names the
        axis of a 3-D image that holds the channels (moved last internally).
    sigma : float or None, default=None
        Alternative to ``beta``: ``beta = 1 / (2 sigma^2)``. Give one or neither.

    Returns
    -------
    edges : ndarray of shape (n_edges, 2), dtype int64
        Pixel index pairs ``(i, j)`` with ``i < j``, sorted by ``(i, j)``.
    weights : ndarray of shape (n_edges,)
        ``exp(-beta |I_i - I_j|^2)``, times ``1/sqrt(2)`` on diagonal edges.
    shape : tuple of int
        ``(rows, cols)``; pixel ``p`` is ``divmod(p, cols)``.

    Raises
    ------
    InvalidParameterError
        A bad ``connectivity``, ``beta``, ``sigma`` or ``channel_axis``, both ``beta``
        and ``sigma``, an image that is not 2-D (grayscale) or 3-D (with channels),
        or an empty image.
    InvalidFeaturesError
        A NaN or infinite pixel (the message names it) or a non-numeric image.

    See Also
    --------
    grid_matrix : the same graph as a CSR matrix.
    grid_graph : the same graph in networkx, nodes ``(row, col)``.

    Notes
    -----
    The weight is the Boykov--Jolly / GrabCut contrast term

    .. math:: w_{pq} = \\frac{1}{\\mathrm{dist}(p, q)}
              \\exp\\left(-\\beta \\lVert I_p - I_q \\rVert^2\\right),
              \\qquad \\beta = \\frac{1}{2 \\langle \\lVert I_p - I_q \\rVert^2 \\rangle},

    with the mean over the neighbour pairs of the chosen connectivity and
    ``dist = sqrt(2)`` on diagonals (less metrication bias). A 4-connected
    ``h x w`` grid has ``2hw - h - w`` edges; 8-connectivity adds ``2(h-1)(w-1)``.
    Weights are floored at the smallest positive float64, so a very sharp edge
    stays an edge. Time and memory are ``O(hw)``.

    References
    ----------
    .. [1] Y. Boykov and M.-P. Jolly, "Interactive graph cuts for optimal boundary
       and region segmentation of objects in N-D images", ICCV 2001.
       https://doi.org/10.1109/ICCV.2001.937505
    .. [2] C. Rother, V. Kolmogorov and A. Blake, "GrabCut: interactive foreground
       extraction using iterated graph cuts", SIGGRAPH 2004.
       https://doi.org/10.1145/1015706.1015720

    Examples
    --------
    >>> import numpy as np
    >>> image = np.array([[0.0, 0.0, 1.0],
    ...                   [0.0, 0.0, 1.0]])
    >>> edges, weights, shape = grid_arrays(image)
    >>> edges.tolist()
    [[0, 1], [0, 3], [1, 2], [1, 4], [2, 5], [3, 4], [4, 5]]
    >>> weights.round(4).tolist()  # beta = 1 / (2 * 2/7)
    [1.0, 1.0, 0.1738, 1.0, 1.0, 1.0, 0.1738]
    >>> shape
    (2, 3)
    """
    beta = _check_grid_params(connectivity, beta, sigma)
    img = _check_image(image, channel_axis)
    edges, weights, _ = _grid_core(img, connectivity, beta)
    return edges, weights, img.shape[:2]


def grid_matrix(image, connectivity=4, beta=None, *, channel_axis=None, sigma=None):
    """Pixel-grid graph of an image as a symmetric CSR matrix.

    The same graph, with bit-identical weights, as :func:`grid_arrays`, indexed
    row-major (``p = row * width + col``); the rows are written directly, without
    an intermediate edge list.

    Parameters
    ----------
    image : array-like of shape (rows, cols) or (rows, cols, channels)
    connectivity : {4, 8}, default=4
    beta, channel_axis, sigma
        See :func:`grid_arrays`.

    Returns
    -------
    W : scipy.sparse.csr_array of shape (rows * cols, rows * cols)
        Symmetric, no diagonal, sorted indices.

    Examples
    --------
    >>> import numpy as np
    >>> W = grid_matrix(np.zeros((3, 3)), connectivity=8)
    >>> W.shape, W.nnz // 2, float(W[0, 4]).__round__(4)
    ((9, 9), 20, 0.7071)
    """
    beta = _check_grid_params(connectivity, beta, sigma)
    img = _check_image(image, channel_axis)
    return _grid_csr(img, connectivity, beta)


def grid_graph(image, connectivity=4, beta=None, *, channel_axis=None, sigma=None):
    """Pixel-grid graph of an image in networkx, nodes ``(row, col)``.

    Wraps :func:`grid_arrays`. Node attribute ``features`` is the pixel value as a
    list of floats (one entry for a grayscale image, one per channel otherwise); edge
    attribute ``weight`` is the contrast-sensitive weight. Nodes are added in
    row-major order, so ``Problem.from_graph(grid_graph(img)).W`` equals
    ``grid_matrix(img)``. The graph attributes ``shape``, ``connectivity`` and
    ``beta`` record how it was built.

    Parameters
    ----------
    image : array-like of shape (rows, cols) or (rows, cols, channels)
    connectivity : {4, 8}, default=4
    beta, channel_axis, sigma
        See :func:`grid_arrays`.

    Returns
    -------
    G : networkx.Graph

    Raises
    ------
    InvalidParameterError, InvalidFeaturesError
        As :func:`grid_arrays`.

    Examples
    --------
    >>> import numpy as np
    >>> G = grid_graph(np.array([[0, 0], [0, 3]]), beta=0)
    >>> sorted(G.edges(data="weight"))
    [((0, 0), (0, 1), 1.0), ((0, 0), (1, 0), 1.0), ((0, 1), (1, 1), 1.0), ((1, 0), (1, 1), 1.0)]
    >>> G.nodes[1, 1]["features"], G.graph["height"], G.graph["width"]
    ([3.0], 2, 2)
    """
    beta = _check_grid_params(connectivity, beta, sigma)
    img = _check_image(image, channel_axis)
    edges, weights, beta = _grid_core(img, connectivity, beta)
    h, w, c = img.shape
    rows, cols = np.divmod(np.arange(h * w), w)
    nodes = list(zip(rows.tolist(), cols.tolist()))
    # scalars only, so the graph writes to GraphML as it is
    G = nx.Graph(height=h, width=w, connectivity=connectivity, beta=float(beta))
    G.add_nodes_from((u, {"features": f}) for u, f in zip(nodes, img.reshape(h * w, c).tolist()))
    G.add_weighted_edges_from(
        (nodes[a], nodes[b], x) for a, b, x in zip(edges[:, 0].tolist(), edges[:, 1].tolist(), weights.tolist())
    )
    return G


# =========================================================================== sparsify
def _top_k_pairs(rows, cols, w, n, k, symmetrize):
    """Keep, per row, the ``k`` largest entries (ties: smaller column first), then merge."""
    order = np.lexsort((cols, -w, rows))
    rows, cols, w = rows[order], cols[order], w[order]
    starts = np.searchsorted(rows, np.arange(n))
    rank = np.arange(rows.size) - starts[rows]
    keep = rank < k
    return _merge_pairs(rows[keep], cols[keep], w[keep], n, symmetrize)


def sparsify(G, k, *, symmetrize="union", weight="weight"):
    """Keep the ``k`` strongest edges of every node.

    Each node picks its ``k`` heaviest edges (ties go to the neighbour that comes
    first in node order); an edge survives if either end picked it (``"union"``) or
    both did (``"mutual"``). The result is symmetric. Self loops are dropped.

    Parameters
    ----------
    G : networkx.Graph, scipy.sparse matrix or ndarray of shape (n_nodes, n_nodes)
        Undirected similarity graph, or a symmetric non-negative matrix (diagonal
        ignored, explicit zeros are no edge; asymmetry up to rounding, 1e-12 of the
        largest weight, is resolved by the maximum). Never modified.
    k : int
        Edges kept per node, >= 1.
    symmetrize : {"union", "mutual"}, default="union"
        With ``"union"`` every node keeps at least ``min(k, degree)`` edges.
    weight : str or None, default="weight"
        Edge attribute holding the similarity (graphs only; missing means 1,
        ``None`` treats every edge as weight 1).

    Returns
    -------
    networkx.Graph or scipy.sparse.csr_array
        A new graph with every node and its attributes, and the surviving edges with
        all their attributes (copies); or a CSR matrix when a matrix came in.

    Raises
    ------
    InvalidGraphError
        A directed graph or multigraph, a weight that is NaN, infinite, negative or
        not a number, a non-square or asymmetric matrix (the message names the edge).
    InvalidParameterError
        ``k < 1`` or an unknown ``symmetrize``.

    Notes
    -----
    Vectorised: the directed entries are sorted by ``(row, -weight, col)`` and the
    first ``k`` of each row kept; ``O(m log m)`` for ``m`` edges.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph([(0, 1, {"weight": 3.0}), (0, 2, {"weight": 2.0}),
    ...               (0, 3, {"weight": 1.0}), (2, 3, {"weight": 0.5})])
    >>> sorted(sparsify(G, 1).edges())
    [(0, 1), (0, 2), (0, 3)]
    >>> sorted(sparsify(G, 1, symmetrize="mutual").edges())
    [(0, 1)]
    """
    k = check_int(k, "k", low=1)
    _one_of(symmetrize, "symmetrize", _SYMMETRIZE)
    if isinstance(G, nx.Graph):
        return _sparsify_graph(G, k, symmetrize, weight)
    if sp.issparse(G) or isinstance(G, np.ndarray):
        W = _check_square_similarity(G)
        n = W.shape[0]
        coo = W.tocoo()
        lo, hi, w = _top_k_pairs(coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data, n, k, symmetrize)
        return _csr_from_upper(lo, hi, w, n)
    raise InvalidGraphError(f"sparsify expects a networkx graph or a scipy.sparse matrix, got {type(G).__name__}")


def _check_square_similarity(W):
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise InvalidGraphError(f"the similarity matrix must be square, got shape {W.shape}")
    try:
        W = sp.csr_array(W, dtype=np.float64) if sp.issparse(W) else sp.csr_array(np.asarray(W, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise InvalidGraphError(f"the similarity matrix could not be read as numbers: {exc}") from None
    W = W.copy()
    W.sum_duplicates()
    coo = W.tocoo()
    bad = ~(np.isfinite(coo.data) & (coo.data >= 0))
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        i, j = int(coo.row[t]), int(coo.col[t])
        raise InvalidGraphError(
            f"edge {(i, j)!r} has weight {coo.data[t]}; similarities must be finite and >= 0", edge=(i, j)
        )
    W.setdiag(0)
    W.eliminate_zeros()
    diff = abs(W - W.T).tocoo()
    scale = float(W.data.max(initial=0.0))
    off = diff.data > 1e-12 * scale
    if off.any():
        t = int(np.flatnonzero(off)[0])
        i, j = int(diff.row[t]), int(diff.col[t])
        raise InvalidGraphError(
            f"the similarity matrix is not symmetric: W[{i}, {j}] = {W[i, j]} but W[{j}, {i}] = {W[j, i]}; "
            "symmetrise it first, e.g. W.maximum(W.T)",
            edge=(i, j),
        )
    if diff.nnz:  # rounding noise only
        W = W.maximum(W.T).tocsr()
    return W


def _graph_weights(ws, us, vs):
    """Edge weights as float64; name the first edge whose weight is not a finite number >= 0."""
    try:
        vals = np.fromiter(ws, np.float64, len(ws))
    except (TypeError, ValueError):
        for u, v, x in zip(us, vs, ws):
            try:
                float(x)
            except (TypeError, ValueError):
                raise InvalidGraphError(
                    f"edge {(u, v)!r} has weight {x!r}; similarities must be numbers", edge=(u, v)
                ) from None
        raise  # pragma: no cover - fromiter refused what float() accepts
    bad = ~(np.isfinite(vals) & (vals >= 0))
    if bad.any():
        t = int(np.flatnonzero(bad)[0])
        raise InvalidGraphError(
            f"edge {(us[t], vs[t])!r} has weight {vals[t]}; similarities must be finite and >= 0",
            edge=(us[t], vs[t]),
        )
    return vals


def _sparsify_graph(G, k, symmetrize, weight):
    if G.is_directed():
        raise InvalidGraphError("sparsify needs an undirected graph; pass G.to_undirected()")
    if G.is_multigraph():
        raise InvalidGraphError("sparsify does not take multigraphs; merge parallel edges into one weighted edge first")
    nodes = list(G.nodes)
    n = len(nodes)
    index = {u: i for i, u in enumerate(nodes)}
    edges = [(u, v, d) for u, v, d in G.edges(data=True) if u != v]
    H = G.__class__()
    H.graph.update(G.graph)
    H.add_nodes_from((u, dict(d)) for u, d in G.nodes(data=True))
    m = len(edges)
    if m == 0:
        return H
    us = [e[0] for e in edges]
    vs = [e[1] for e in edges]
    if weight is None:
        ws = np.ones(m)
    else:
        ws = _graph_weights([e[2].get(weight, 1.0) for e in edges], us, vs)
    a = np.fromiter(map(index.__getitem__, us), np.int64, m)
    b = np.fromiter(map(index.__getitem__, vs), np.int64, m)
    lo, hi, _ = _top_k_pairs(np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([ws, ws]), n, k, symmetrize)
    data = {(min(x, y), max(x, y)): d for x, y, d in zip(a.tolist(), b.tolist(), (e[2] for e in edges))}
    H.add_edges_from((nodes[x], nodes[y], dict(data[x, y])) for x, y in zip(lo.tolist(), hi.tolist()))
    return H
