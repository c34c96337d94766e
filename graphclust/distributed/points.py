"""Chunked points on Dask: :func:`chunked_kmeans`.

:func:`chunked_kmeans` runs the synchronous (Jacobi) HMRF-KMeans / RDP-means iteration
over a chunked ``(n, d)`` point array: every pass assigns each chunk's points with the
broadcast centroids and the previous labels of their constraint partners, and
tree-reduces per-chunk centroid sums. The assignment kernel is :func:`_assign_kernel`
(numba).
"""

import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .._utils import check_float, check_int, check_random_state
from ..errors import InvalidParameterError
from ..inference._local import REL_TOL, cheapest, improves
from ..problem import constraint_csr
from ._common import _check_client, _compute, _dask, _persist

__all__ = ["chunked_kmeans", "ChunkedKMeansResult"]


@dataclass
class ChunkedKMeansResult:
    """What :func:`chunked_kmeans` returns.

    Attributes
    ----------
    labels : dask.array.Array of shape (n,), dtype int64
        Chunked like the points, persisted on the workers.
    centroids : ndarray of shape (n_clusters, d)
        Means of the final assignment (a cluster left empty keeps its centroid).
    n_iter : int
        Passes over the data.
    converged : bool
        The last pass (``"sweep"``) or ``n_colours`` passes (``"jacobi"``) changed no
        label and no cluster was opened.
    n_changes : list of int
        Labels changed in each pass (for ``"sweep"`` summed over its colour classes).
    cost : list of float
        Sum over the points of the cost of the chosen label in each pass
        (distortion plus penalties against the partners' previous labels).
    seconds_per_pass : list of float
    """

    labels: object
    centroids: np.ndarray
    n_iter: int
    converged: bool
    n_changes: list = field(default_factory=list)
    cost: list = field(default_factory=list)
    seconds_per_pass: list = field(default_factory=list)


@njit(cache=True)
def _assign_kernel(X, C, rows, partner_labels, cw, z_old, colour, active, out_z, out_cost, sums, counts):  # pragma: no cover
    """Assign every row to its cheapest centroid given the partners' previous labels;
    accumulate per-cluster sums in row order. Returns the number of changed labels.

    The decision is the ICM engines' (:mod:`graphclust.inference.icm`): a finite link of
    signed weight ``w`` lowers the cost of the partner's label by ``w`` (the Potts form
    ``-w [k = z_j]``), and a labelled point moves only to a label cheaper by more than
    ``REL_TOL (1 + |cost|)``. ``out_cost`` is the distortion plus the violated weights."""
    m, d = X.shape
    K = C.shape[0]
    cost = np.empty(K)
    dist = np.empty(K)
    viol = np.empty(K)
    p = 0
    changed = 0
    for i in range(m):
        for k in range(K):
            s = 0.0
            for j in range(d):
                t = X[i, j] - C[k, j]
                s += t * t
            dist[k] = s
            cost[k] = s
            viol[k] = 0.0
        while p < rows.shape[0] and rows[p] == i:
            zp = partner_labels[p]
            w = cw[p]
            if zp >= 0:
                if w > 0:
                    for k in range(K):
                        if k != zp:
                            viol[k] += w
                else:
                    viol[zp] -= w
                if np.isinf(w):  # hard: forbid the violating labels (no inf - inf)
                    for k in range(K):
                        if viol[k] == np.inf:
                            cost[k] = np.inf
                else:
                    cost[zp] -= w
            p += 1
        best = cheapest(cost, K)
        cur = z_old[i]
        if cur >= 0:
            if colour[i] >= 0 and colour[i] != active:
                best = cur  # a constrained point of another colour keeps its label this pass
            elif not improves(cost[best], cost[cur], REL_TOL):
                best = cur
        out_z[i] = best
        out_cost[i] = dist[best] + viol[best]
        if best != cur:
            changed += 1
        counts[best] += 1
        for j in range(d):
            sums[best, j] += X[i, j]
    return changed


def _assign_chunk(X, z_old, C, rows, partners_labels, cw, colour, active):
    """One chunk of a pass: new labels, and the chunk's statistics."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    m, d = X.shape
    K = C.shape[0]
    z = np.empty(m, np.int64)
    cost = np.empty(m)
    sums = np.zeros((K, d))
    counts = np.zeros(K, np.int64)
    changed = _assign_kernel(X, C, rows, partners_labels, cw, np.asarray(z_old, np.int64), colour, active, z, cost,
                             sums, counts)
    i = int(np.argmax(cost)) if m else 0
    stats = {"sums": sums, "counts": counts, "changed": changed, "cost": float(cost.sum()),
             "worst": float(cost[i]) if m else -np.inf, "worst_x": X[i].copy() if m else np.zeros(d)}
    return z, stats


def _merge_stats(a, b):
    """Combine two chunks' statistics; the worst point is the earlier one on ties
    (``a`` always precedes ``b`` in point order)."""
    w = a if a["worst"] >= b["worst"] else b
    return {"sums": a["sums"] + b["sums"], "counts": a["counts"] + b["counts"],
            "changed": a["changed"] + b["changed"], "cost": a["cost"] + b["cost"],
            "worst": w["worst"], "worst_x": w["worst_x"]}


def _tree(delayed, items, split_every):
    """Tree-reduce a list of delayed stats, preserving order."""
    while len(items) > 1:
        nxt = []
        for s in range(0, len(items), split_every):
            group = items[s:s + split_every]
            acc = group[0]
            for g in group[1:]:
                acc = delayed(_merge_stats, pure=True)(acc, g)
            nxt.append(acc)
        items = nxt
    return items[0]


def chunked_kmeans(X, n_clusters=None, *, init=None, lam=None, constraints=None, constraint_weights=None,
                   schedule="jacobi", max_iter=50, chunks=None, client=None, random_state=None, split_every=8):
    """Synchronous HMRF-KMeans / DP-means over a chunked point array.

    Every pass assigns each point to the label ``k`` minimising
    ``|x_i - c_k|^2 + sum_{must (i,j)} w_ij [k != z_j] + sum_{cannot (i,j)} |w_ij| [k = z_j]``
    with the centroids and the partners' labels ``z_j`` of the *previous* pass (a
    Jacobi schedule, so chunks are independent), then recomputes the centroids from
    per-chunk sums reduced in a tree. Partners never move in the same pass: the
    constraint graph is coloured once (greedily, in point order) and a constrained
    point may change its label only in the passes of its colour, so the constraint
    terms are exact coordinate descent and cannot make two partners swap forever. A
    labelled point moves only to a label cheaper by more than a relative ``1e-12`` (the
    rule of the ICM engines). With ``lam`` (DP-means / RDP-means' price of a cluster),
    once the assignment has settled and some point still costs more than ``lam``, the
    point of largest cost (the first one on ties) opens a new cluster at its position,
    and the passes resume. The labels do not depend on the chunking: the same data,
    seed and order give the same answer on one chunk or many, one worker or many.

    ``schedule="jacobi"`` moves one colour class of constrained points (``pass %
    n_colours``) and every unconstrained point per pass, starting from no labels (the
    first pass ignores the links). ``schedule="sweep"`` starts from the nearest
    centroid of every point and moves every colour class in turn per pass (the
    partners' labels gathered again between classes; unconstrained points move with
    class 0), before the centroids are recomputed: this is one EM iteration of
    ``HMRF(Centroids(k), inference="icm-colour", penalty="constant",
    use_closure=False, init=<the same centroids>, inference_options={"max_iter": 1,
    "order": "fixed"})``, which gives the same labels on one machine (tested). It
    reads the data ``n_colours`` times per pass.

    Parameters
    ----------
    X : dask.array.Array or ndarray of shape (n, d)
        Points; chunked along rows (column chunks are merged). An ndarray needs
        ``chunks`` (rows per chunk).
    n_clusters : int or None
        Number of initial centroids drawn uniformly from the points with
        ``random_state`` (ignored with ``init``). With ``lam`` and neither, one
        cluster at the global mean.
    init : array-like of shape (k, d) or None
        Initial centroids.
    lam : float or None, default=None
        Price of a cluster (births as above); None keeps the number of clusters fixed.
    constraints : array-like of shape (M, 2) or None
        Point index pairs.
    constraint_weights : array-like of shape (M,) or None
        Signed: ``> 0`` must-link, ``< 0`` cannot-link, ``±inf`` hard; default
        ``1`` (must-links).
    schedule : {"jacobi", "sweep"}, default="jacobi"
        As above.
    max_iter : int, default=50
    chunks : int or None
    client : dask.distributed.Client or None, default=None
    random_state : int, Generator or None
    split_every : int, default=8
        Fan-in of the tree reduction of the chunk statistics.

    Returns
    -------
    ChunkedKMeansResult

    Raises
    ------
    InvalidParameterError
        A closed client, bad shapes, constraints outside ``[0, n)``, neither
        ``n_clusters``, ``init`` nor ``lam``.

    Notes
    -----
    :class:`graphclust.RDPMeans` visits points one at a time (Gauss–Seidel ICM), which
    cannot be split over chunks without changing its answer; this is its batch
    (Jacobi) counterpart. Each pass reads the data once; the labels of constraint
    partners (``2M`` integers) are the only labels gathered to the client. Centroids
    move between passes, so convergence is not guaranteed in general; ``max_iter``
    caps the passes.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from graphclust.distributed import chunked_kmeans
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0], [0.0, 0.1], [5.0, 5.1]])
    >>> res = chunked_kmeans(da.from_array(X, chunks=2), init=X[[0, 2]])
    >>> res.labels.compute().tolist(), res.converged
    ([0, 0, 1, 1, 0, 1], True)
    >>> res = chunked_kmeans(da.from_array(X, chunks=2), init=X[[0, 2]], constraints=[(0, 2)],
    ...                      constraint_weights=[100.0])              # a strong must-link
    >>> res.labels.compute().tolist()[:3]
    [0, 0, 0]
    >>> chunked_kmeans(da.from_array(X, chunks=4), lam=4.0).centroids.shape    # DP-means: 2 clusters
    (2, 2)
    """
    dask, da = _dask()
    from dask import delayed

    client = _check_client(client)
    max_iter = check_int(max_iter, "max_iter", low=1)
    split_every = check_int(split_every, "split_every", low=2)
    if schedule not in ("jacobi", "sweep"):
        raise InvalidParameterError(f"schedule must be 'jacobi' or 'sweep', got {schedule!r}")
    if not isinstance(X, da.Array):
        if chunks is None:
            raise InvalidParameterError("X is not a dask array; pass chunks=<rows per chunk>")
        X = da.from_array(np.asarray(X), chunks=(check_int(chunks, "chunks", low=1), -1))
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise InvalidParameterError(f"X must have shape (n, d) with both > 0, got {X.shape}")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    n, d = X.shape
    if lam is not None:
        lam = check_float(lam, "lam", low=0.0)
    # constraints: both directions, sorted by the updated point
    if constraints is None or len(constraints) == 0:
        cons = np.empty((0, 2), np.int64)
        cw = np.empty(0)
    else:
        cons = np.asarray(constraints)
        if cons.ndim != 2 or cons.shape[1] != 2 or not np.issubdtype(cons.dtype, np.integer):
            raise InvalidParameterError(f"constraints must be integer pairs of shape (M, 2), got {cons.shape}")
        cons = cons.astype(np.int64)
        bad = np.flatnonzero((cons < 0).any(1) | (cons >= n).any(1) | (cons[:, 0] == cons[:, 1]))
        if len(bad):
            raise InvalidParameterError(
                f"constraint {tuple(cons[bad[0]].tolist())} refers to a point outside [0, {n}) or to itself"
            )
        cw = np.ones(len(cons)) if constraint_weights is None else np.asarray(constraint_weights, np.float64)
        if cw.shape != (len(cons),) or np.isnan(cw).any():
            raise InvalidParameterError(f"constraint_weights must be {len(cons)} numbers (no NaN)")
    indptr, other, wd = constraint_csr(cons, cw, n)
    node = np.repeat(np.arange(n), np.diff(indptr))  # each point once per partner, in order
    bounds = np.concatenate([[0], np.cumsum(X.chunks[0])])
    cuts = np.searchsorted(node, bounds)
    uniq_other, other_pos = np.unique(other, return_inverse=True)
    # colour the constraint graph: partners never move in the same pass
    n_colours = 1
    if len(cons):
        import scipy.sparse as sp

        from ..inference.icm import _greedy_colouring

        ends = np.unique(node)
        pos = np.searchsorted(ends, np.concatenate([cons[:, 0], cons[:, 1]]))
        A = sp.coo_array((np.ones(2 * len(cons)), (pos, np.concatenate([pos[len(cons):], pos[:len(cons)]]))),
                         shape=(len(ends), len(ends))).tocsr()
        col = _greedy_colouring(A.indptr.astype(np.int64), A.indices.astype(np.int64))
        n_colours = int(col.max()) + 1
    chunk_colours = []
    for b in range(len(bounds) - 1):
        c = np.full(bounds[b + 1] - bounds[b], -1, np.int64)
        if len(cons):
            lo, hi = np.searchsorted(ends, [bounds[b], bounds[b + 1]])
            c[ends[lo:hi] - bounds[b]] = col[lo:hi]
        chunk_colours.append(c)
    # initial centroids
    if init is not None:
        C = np.array(init, dtype=np.float64, ndmin=2)
        if C.ndim != 2 or C.shape[1] != d or C.shape[0] < 1:
            raise InvalidParameterError(f"init must have shape (k, {d}), got {C.shape}")
    elif n_clusters is not None:
        k = check_int(n_clusters, "n_clusters", low=1, high=n)
        idx = np.sort(check_random_state(random_state).choice(n, size=k, replace=False))
        (C,) = _compute(client, X[idx])
        C = np.asarray(C, np.float64)
    elif lam is not None:
        (C,) = _compute(client, X.astype(np.float64).mean(axis=0))
        C = np.asarray(C, np.float64).reshape(1, d)
    else:
        raise InvalidParameterError("give n_clusters, init or lam")
    if schedule == "sweep":  # unconstrained points move with the first class, as in the colour ICM
        chunk_colours = [np.maximum(c, 0) for c in chunk_colours]
    Xb = X.to_delayed().ravel()

    def assign(z, C, active, links=True):
        """One pass over the chunks: new labels (persisted) and the reduced statistics."""
        if links and len(uniq_other):
            (pl,) = _compute(client, z[uniq_other])
            pl = np.asarray(pl, np.int64)[other_pos]
        else:
            pl = np.empty(0, np.int64)
        Cd = delayed(C) if C.size > 1e5 else C
        zb = z.to_delayed().ravel()
        labels, stats = [], []
        for b in range(len(Xb)):
            s, e = (cuts[b], cuts[b + 1]) if links else (0, 0)
            lab, st = delayed(_assign_chunk, nout=2, pure=True)(
                Xb[b], zb[b], Cd, node[s:e] - bounds[b], pl[s:e], wd[s:e], chunk_colours[b], active)
            labels.append(da.from_delayed(lab, shape=(X.chunks[0][b],), dtype=np.int64))
            stats.append(st)
        z, root = _persist(client, da.concatenate(labels), _tree(delayed, stats, split_every))
        (st,) = _compute(client, root)
        return z, st

    (z,) = _persist(client, da.full(n, -1, dtype=np.int64, chunks=(X.chunks[0],)))
    if schedule == "sweep":
        z, _ = assign(z, C, -1, links=False)  # nearest centroid
    settle = n_colours if schedule == "jacobi" else 1
    n_changes, costs, secs = [], [], []
    converged = False
    it = quiet = 0
    for it in range(1, max_iter + 1):
        t0 = time.perf_counter()
        changed = 0
        for active in ([(it - 1) % n_colours] if schedule == "jacobi" else range(n_colours)):
            z, st = assign(z, C, active)
            changed += int(st["changed"])
        counts = st["counts"]
        newC = C.copy()
        nz = counts > 0
        newC[nz] = st["sums"][nz] / counts[nz][:, None]
        n_changes.append(changed)
        costs.append(float(st["cost"]))
        quiet = quiet + 1 if changed == 0 else 0
        if quiet >= settle and lam is not None and st["worst"] > lam:
            newC = np.vstack([newC, st["worst_x"][None]])  # a birth once the assignment has settled
            quiet = 0
        C = newC
        secs.append(time.perf_counter() - t0)
        if quiet >= settle:  # every colour had its turn without a change
            converged = True
            break
    return ChunkedKMeansResult(labels=z, centroids=C, n_iter=it, converged=converged, n_changes=n_changes,
                               cost=costs, seconds_per_pass=secs)
