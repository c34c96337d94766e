"""Numerical core of constrained 1-spectral clustering (COSC): the penalised balanced
cut, its tight continuous relaxation, optimal thresholding, and RatioDCA with a FISTA
inner solver.

Everything here works on arrays. A :class:`RatioProblem` holds a graph (unordered edge
list), vertex weights ``b`` and signed pair constraints once; the functions take it
together with the penalty ``gamma``, so one problem serves a whole ``gamma`` schedule.

For a set ``C`` with complement ``C'`` and ``B = gvol(V) = sum(b)`` the penalised ratio
is

.. math:: \\hat F_\\gamma(C) = \\frac{\\mathrm{cut}(C, C') + \\gamma\\,\\mathrm{viol}(C)}
                                {\\mathrm{gvol}(C)\\,\\mathrm{gvol}(C') / B}

where ``viol`` is the weight of the violated must-links (pairs cut) and cannot-links
(pairs not cut). With ``gamma = 0`` it is the normalised cut (``b`` = degrees) or the
ratio cut (``b = 1``). Its continuous extension, exact on indicator vectors, is

.. math:: F_\\gamma(f) = \\frac{\\sum_{ij \\in E} w_{ij}|f_i - f_j|
          + \\gamma\\sum_{ML} q|f_i - f_j|
          + \\gamma\\sum_{CL} q\\,(\\max f - \\min f - |f_a - f_b|)}
          {\\frac{1}{B}\\sum_{i<j} b_i b_j |f_i - f_j|}

(Rangapuram & Hein 2012, eq. 1 and Lemma 2.2; Hein & Setzer 2011). Each constraint or
edge is one unordered pair; a pair listed twice counts twice (weights add).
"""

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._utils import check_float, check_int, progress_bar
from ..errors import InvalidConstraintError, InvalidGraphError, InvalidParameterError

_LAYOUT_MIN_N = 2000
__all__ = [
    "DualState",
    "InnerResult",
    "RatioDCAResult",
    "RatioProblem",
    "ThresholdResult",
    "balance_lovasz",
    "balance_subgradient",
    "continuous_ratio",
    "optimal_threshold",
    "ratio_dca",
    "set_ratio",
    "solve_inner",
]


# --------------------------------------------------------------------------- problem


class RatioProblem:
    """A graph with vertex weights and pair constraints, prepared for COSC.

    Parameters
    ----------
    W : scipy.sparse matrix or ndarray of shape (n, n)
        Symmetric similarities, finite and ``>= 0``, zero diagonal.
    b : array-like of shape (n,), default=None
        Vertex weights, finite and ``> 0``. ``None`` uses the degrees of ``W``
        (normalised cut). After must-link merging pass the *summed original*
        weights, never the degrees of the merged graph.
    cannot_pairs : array-like of shape (m, 2), default=None
        Cannot-link pairs of vertex indices.
    cannot_w : array-like of shape (m,), default=None
        Their weights (beliefs), finite and ``> 0``; ``None`` is all ones. Use 1 for
        a hard constraint: ``gamma`` sets its price.
    must_pairs, must_w : default=None
        Soft must-links, same format. They enter the relaxation as extra edges of
        weight ``gamma * q`` (hard must-links should be merged beforehand).

    Attributes
    ----------
    n : int
    b : ndarray of shape (n,)
    gvol : float
        ``sum(b)``.
    ei, ej : ndarray of shape (n_edges,)
        Endpoints (``ei < ej``) of the union of the data edges and the must-link pairs.
    ew, eq : ndarray of shape (n_edges,)
        Data weight and must-link weight of each of these edges; the relaxation uses
        ``ew + gamma * eq``.
    ca, cb, cq : ndarray of shape (m,)
        Cannot-link endpoints and weights.
    d_max : int
        Largest unweighted degree of the edge list (at least 1).

    Raises
    ------
    InvalidGraphError
        ``W`` is not square, not symmetric, has a negative or non-finite entry, or a
        self-loop (the message names the entry).
    InvalidParameterError
        ``b`` has the wrong length or a non-positive or non-finite entry (named), or
        the graph has fewer than 2 vertices.
    InvalidConstraintError
        A pair is out of range, a self-pair, or has a non-positive or non-finite weight.

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    >>> P = RatioProblem(W, cannot_pairs=[[0, 5]])
    >>> P.n, len(P.ei), P.gvol, float(P.cq.sum())
    (6, 7, 14.0, 1.0)
    """

    def __init__(self, W, b=None, *, cannot_pairs=None, cannot_w=None, must_pairs=None, must_w=None):
        W = _check_W(W)
        n = W.shape[0]
        if n < 2:
            raise InvalidParameterError(f"the graph has {n} vertex; a bipartition needs at least 2")
        U = sp.triu(W, k=1).tocoo()
        deg = np.asarray(W.sum(axis=1)).ravel()
        if b is None:
            b = deg
            bad = np.flatnonzero(~(b > 0))
            if bad.size:
                raise InvalidParameterError(
                    f"vertex {int(bad[0])} is isolated (degree 0), so its normalised-cut weight is 0; "
                    "drop isolated vertices or pass positive vertex weights b (b=1 is the ratio cut)"
                )
        b = np.asarray(b, dtype=np.float64)
        if b.shape != (n,):
            raise InvalidParameterError(f"vertex weights b have shape {b.shape}, expected ({n},)")
        bad = np.flatnonzero(~(np.isfinite(b) & (b > 0)))
        if bad.size:
            i = int(bad[0])
            raise InvalidParameterError(f"vertex weight b[{i}] = {b[i]}; vertex weights must be finite and > 0")
        ca, cb, cq = _check_pairs(cannot_pairs, cannot_w, n, "cannot-link")
        ma, mb, mq = _check_pairs(must_pairs, must_w, n, "must-link")
        # union of data edges and must-link pairs, one row per unordered pair
        rows = np.concatenate([U.row.astype(np.int64), np.minimum(ma, mb)])
        cols = np.concatenate([U.col.astype(np.int64), np.maximum(ma, mb)])
        key = rows * n + cols
        uniq, inv = np.unique(key, return_inverse=True)
        m_data = U.nnz
        self.ew = np.bincount(inv[:m_data], weights=U.data.astype(np.float64), minlength=uniq.size).astype(np.float64)
        self.eq = np.bincount(inv[m_data:], weights=mq, minlength=uniq.size)
        self.ei = (uniq // n).astype(np.int64)
        self.ej = (uniq % n).astype(np.int64)
        self.n = n
        self.b = b
        self.gvol = float(b.sum())
        self.ca, self.cb, self.cq = ca, cb, cq
        self.ma, self.mb, self.mq = ma, mb, mq
        udeg = np.bincount(self.ei, minlength=n) + np.bincount(self.ej, minlength=n)
        self.d_max = max(int(udeg.max()) if n else 0, 1)
        self._lap_max = None
        self._D = None
        self._layout = None

    @property
    def n_edges(self):
        return int(self.ei.size)

    def edge_weights(self, gamma):
        """Weights ``w + gamma * q`` of the edge list at penalty ``gamma``."""
        return self.ew + gamma * self.eq if self.mq.size else self.ew

    def incidence(self):
        """Unweighted edge-vertex incidence matrix ``D`` (``+1`` at ``ei``, ``-1`` at ``ej``)."""
        if self._D is None:
            m = self.n_edges
            data = np.concatenate([np.ones(m), -np.ones(m)])
            r = np.concatenate([np.arange(m), np.arange(m)])
            c = np.concatenate([self.ei, self.ej])
            D = sp.csr_array((data, (r, c)), shape=(m, self.n))
            # one assignment: COSC's n_jobs threads share the problem, and a thread that
            # saw D set before its transpose failed (a fresh clone's test_n_jobs run)
            self._D = (D, D.T.tocsr())
        return self._D

    def local_layout(self):
        """Renumbering used by the inner solver on large graphs, or None (``n < 2000``).

        Reverse Cuthill-McKee order of the vertices and the edges sorted by their
        new endpoints (each edge keeps its orientation ``ei -> ej``), so the FISTA
        loops touch nearby memory:
        ``(vertex order, edge order, new ei, new ej)``.
        """
        if self._layout is None:
            if self.n < _LAYOUT_MIN_N or self.n_edges == 0:
                self._layout = False
            else:
                from scipy.sparse.csgraph import reverse_cuthill_mckee

                A = sp.csr_matrix((np.ones(self.n_edges), (self.ei, self.ej)), shape=(self.n, self.n))
                vp = np.asarray(reverse_cuthill_mckee((A + A.T).tocsr(), symmetric_mode=True), dtype=np.int64)
                rank = np.empty(self.n, dtype=np.int64)
                rank[vp] = np.arange(self.n)
                a, c = rank[self.ei], rank[self.ej]  # orientation kept: beta's sign stays valid
                ep = np.lexsort((c, a))
                self._layout = (vp, ep, a[ep].copy(), c[ep].copy())
        return self._layout or None

    def laplacian_max(self):
        """An upper estimate of the largest eigenvalue of ``D^T D`` (unweighted Laplacian).

        Power iteration (40 steps, fixed start), inflated by 5% and capped by the
        bound ``2 * d_max``.
        """
        if self._lap_max is None:
            if self.n_edges == 0:
                self._lap_max = 0.0
            else:
                D, DT = self.incidence()
                x = np.random.default_rng(0).standard_normal(self.n)
                lam = 0.0
                for _ in range(40):
                    y = DT @ (D @ x)
                    nrm = np.linalg.norm(y)
                    if nrm == 0:
                        break
                    lam = float(x @ y) / float(x @ x)
                    x = y / nrm
                self._lap_max = min(1.05 * lam + 1e-12, 2.0 * self.d_max)
        return self._lap_max

    def constraint_counts(self, mask):
        """``(violated weight, violated count)`` of the constraints for the set ``mask``."""
        mask = np.asarray(mask, dtype=bool)
        cl = mask[self.ca] == mask[self.cb]
        ml = mask[self.ma] != mask[self.mb]
        return float(self.cq[cl].sum() + self.mq[ml].sum()), int(cl.sum() + ml.sum())


def _check_W(W):
    if sp.issparse(W):
        W = sp.csr_array(W, dtype=np.float64)
    else:
        try:
            A = np.asarray(W, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidGraphError(f"W could not be read as a numeric matrix: {exc}") from None
        if A.ndim != 2:
            raise InvalidGraphError(f"W must be a square matrix, got shape {A.shape}")
        W = sp.csr_array(A)
    if W.shape[0] != W.shape[1]:
        raise InvalidGraphError(f"W must be square, got shape {W.shape}")
    W.sum_duplicates()
    W.eliminate_zeros()
    if W.nnz:
        coo = W.tocoo()
        bad = np.flatnonzero(~(np.isfinite(coo.data) & (coo.data >= 0)))
        if bad.size:
            i, j, v = int(coo.row[bad[0]]), int(coo.col[bad[0]]), coo.data[bad[0]]
            raise InvalidGraphError(f"edge ({i}, {j}) has weight {v}; similarities must be finite and >= 0", edge=(i, j))
        diag = np.flatnonzero(coo.row == coo.col)
        if diag.size:
            i = int(coo.row[diag[0]])
            raise InvalidGraphError(f"W has a self-loop at vertex {i} (W[{i}, {i}] = {coo.data[diag[0]]})", edge=(i, i))
        diff = abs(W - W.T).tocoo()
        scale = np.abs(coo.data).max()
        big = np.flatnonzero(diff.data > 1e-10 * scale)
        if big.size:
            i, j = int(diff.row[big[0]]), int(diff.col[big[0]])
            raise InvalidGraphError(
                f"W is not symmetric: W[{i}, {j}] = {W[i, j]} but W[{j}, {i}] = {W[j, i]}", edge=(i, j)
            )
    return W


def _check_pairs(pairs, weights, n, kind):
    if pairs is None:
        if weights is not None and np.size(weights):
            raise InvalidConstraintError(f"{kind} weights were given without {kind} pairs")
        e = np.zeros(0, dtype=np.int64)
        return e, e.copy(), np.zeros(0)
    P = np.asarray(pairs)
    if P.size == 0:
        P = P.reshape(0, 2)
    if P.ndim != 2 or P.shape[1] != 2:
        raise InvalidConstraintError(f"{kind} pairs must have shape (m, 2), got {P.shape}")
    if P.dtype.kind not in "iu":
        if P.dtype.kind == "f" and np.all(np.isfinite(P)) and np.all(P == np.round(P)):
            P = P.astype(np.int64)
        else:
            raise InvalidConstraintError(f"{kind} pairs must be integer vertex indices, got dtype {P.dtype}")
    P = P.astype(np.int64)
    out = np.flatnonzero(((P < 0) | (P >= n)).any(axis=1))
    if out.size:
        pair = tuple(int(x) for x in P[out[0]])
        raise InvalidConstraintError(f"{kind} {pair} refers to a vertex outside 0..{n - 1}", constraint=pair)
    loops = np.flatnonzero(P[:, 0] == P[:, 1])
    if loops.size:
        pair = tuple(int(x) for x in P[loops[0]])
        raise InvalidConstraintError(f"{kind} {pair} joins a vertex to itself", constraint=pair)
    if weights is None:
        q = np.ones(len(P))
    else:
        q = np.asarray(weights, dtype=np.float64).ravel()
        if q.shape != (len(P),):
            raise InvalidConstraintError(f"{kind} weights have shape {q.shape}, expected ({len(P)},)")
        bad = np.flatnonzero(~(np.isfinite(q) & (q > 0)))
        if bad.size:
            pair = tuple(int(x) for x in P[bad[0]])
            raise InvalidConstraintError(
                f"{kind} {pair} has weight {q[bad[0]]}; weights must be finite and > 0 "
                "(use 1 for a hard constraint: gamma sets its price)", constraint=pair
            )
    return P[:, 0].copy(), P[:, 1].copy(), q


def _check_gamma(gamma):
    return check_float(gamma, "gamma", low=0.0)


def _as_vector(problem, f, name="f"):
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (problem.n,):
        raise InvalidParameterError(f"{name} has shape {f.shape}, expected ({problem.n},)")
    if not np.isfinite(f).all():
        i = int(np.flatnonzero(~np.isfinite(f))[0])
        raise InvalidParameterError(f"{name}[{i}] = {f[i]}; the vector must be finite")
    return f


def _as_mask(problem, C):
    C = np.asarray(C)
    if C.shape != (problem.n,):
        raise InvalidParameterError(f"the set indicator has shape {C.shape}, expected ({problem.n},)")
    mask = C.astype(bool)
    k = int(mask.sum())
    if k == 0 or k == problem.n:
        raise InvalidParameterError(
            f"the set is {'empty' if k == 0 else 'the whole vertex set'}; the ratio needs a non-trivial bipartition"
        )
    return mask


# ----------------------------------------------------------------------- functionals


def set_ratio(problem, C, gamma=0.0):
    """Penalised balanced cut :math:`\\hat F_\\gamma(C)` of a bipartition.

    Parameters
    ----------
    problem : RatioProblem
    C : array-like of shape (n,)
        Indicator (bool or 0/1) of one side; neither empty nor everything.
    gamma : float, default=0.0
        Price of one unit of violated constraint weight, ``>= 0``.

    Returns
    -------
    float
        ``(cut + gamma * viol) * gvol(V) / (gvol(C) * gvol(C'))``.

    Raises
    ------
    InvalidParameterError
        ``gamma`` negative or not finite; ``C`` of the wrong length, empty or full.

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    >>> P = RatioProblem(W, cannot_pairs=[[0, 1]])
    >>> set_ratio(P, [1, 1, 1, 0, 0, 0])            # NCut: 1 * 14 / (7 * 7)
    0.2857142857142857
    >>> set_ratio(P, [1, 1, 1, 0, 0, 0], gamma=2)   # (1 + 2 * 1) * 14 / 49
    0.8571428571428571
    """
    gamma = _check_gamma(gamma)
    mask = _as_mask(problem, C)
    return _set_ratio(problem, mask, gamma)


def _set_ratio(problem, mask, gamma):
    cut = float(problem.ew[mask[problem.ei] != mask[problem.ej]].sum())
    viol, _ = problem.constraint_counts(mask)
    g1 = float(problem.b[mask].sum())
    g2 = problem.gvol - g1
    return (cut + gamma * viol) * problem.gvol / (g1 * g2)


def balance_lovasz(problem, f):
    """Lovász extension of the balance term, ``S(f) = (1/B) sum_{i<j} b_i b_j |f_i - f_j|``.

    Equal to ``gvol(C) gvol(C') / gvol(V)`` at ``f = 1_C``; computed by sorting in
    ``O(n log n)``.

    Examples
    --------
    >>> P = RatioProblem([[0, 1, 0], [1, 0, 1], [0, 1, 0]], b=[1, 1, 1])
    >>> float(balance_lovasz(P, [0.0, 0.0, 1.0]))   # 1 * 2 / 3
    0.6666666666666666
    """
    f = _as_vector(problem, f)
    return _dot(_balance_subgradient(problem, f), f)


def balance_subgradient(problem, f):
    """The sort-based subgradient ``s`` of :func:`balance_lovasz` at ``f``.

    ``s_i = b_i (vol_<(i) - vol_>(i)) / B`` with the masses strictly before and after
    ``i`` in a stable ascending sort; tied entries are split antisymmetrically, so
    ``sum(s) == 0`` and ``s @ f == S(f)`` always.

    Examples
    --------
    >>> P = RatioProblem([[0, 1, 0], [1, 0, 1], [0, 1, 0]], b=[1, 1, 1])
    >>> balance_subgradient(P, [2.0, 0.0, 1.0]) * 3
    array([ 2., -2.,  0.])
    """
    f = _as_vector(problem, f)
    return _balance_subgradient(problem, f)


def _balance_subgradient(problem, f, order=None):
    if order is None:
        order = np.argsort(f, kind="stable")
    bs = problem.b[order]
    cum = np.cumsum(bs)
    s_sorted = bs * ((cum - bs) - (problem.gvol - cum)) / problem.gvol
    s = np.empty_like(s_sorted)
    s[order] = s_sorted
    return s


@njit(cache=True, nogil=True)
def _total_variation(w, f, ei, ej):  # pragma: no cover - numba
    """``sum_e w_e |f[ei_e] - f[ej_e]|`` without temporaries."""
    total = 0.0
    for e in range(ei.size):
        total += w[e] * abs(f[ei[e]] - f[ej[e]])
    return total


@njit(cache=True, nogil=True)
def _dot(a, b):  # pragma: no cover - numba
    """A sequential dot product: BLAS's threaded one stalls for milliseconds per call
    on a loaded machine, and these run once per RatioDCA step."""
    total = 0.0
    for i in range(a.size):
        total += a[i] * b[i]
    return total


def _numerator(problem, f, gamma, w=None):
    if w is None:
        w = problem.edge_weights(gamma)
    num = _total_variation(w, f, problem.ei, problem.ej)
    if problem.cq.size and gamma > 0:
        T = float(f.max() - f.min())
        num += gamma * float(problem.cq.sum() * T - _total_variation(problem.cq, f, problem.ca, problem.cb))
    return num


def _ratio(problem, f, gamma, w=None):
    S = _dot(_balance_subgradient(problem, f), f)
    if not S > 0:
        return math.inf
    return _numerator(problem, f, gamma, w) / S


def continuous_ratio(problem, f, gamma=0.0):
    """Tight continuous relaxation :math:`F_\\gamma(f)` of :func:`set_ratio`.

    Invariant under ``f -> a f + c`` for ``a != 0``; ``continuous_ratio(P, 1_C, g)``
    equals ``set_ratio(P, C, g)``, and some threshold set of ``f`` is never worse than
    ``F(f)`` (:func:`optimal_threshold`).

    Parameters
    ----------
    problem : RatioProblem
    f : array-like of shape (n,)
        Finite and not constant.
    gamma : float, default=0.0

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        ``f`` has the wrong length, a non-finite entry (named) or is constant; bad
        ``gamma``.

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    >>> P = RatioProblem(W)
    >>> continuous_ratio(P, [5.0, 5.0, 5.0, -1.0, -1.0, -1.0])
    0.2857142857142857
    """
    gamma = _check_gamma(gamma)
    f = _as_vector(problem, f)
    if f.max() == f.min():
        raise InvalidParameterError("f is constant; the ratio is defined for non-constant vectors only")
    return _ratio(problem, f, gamma)


# ----------------------------------------------------------------------- thresholding


@dataclass
class ThresholdResult:
    """Best level set ``C = {i : f_i > threshold}`` of a vector (see :func:`optimal_threshold`).

    Attributes
    ----------
    mask : ndarray of bool, shape (n,)
        The chosen set ``C``.
    threshold : float
    ratio : float
        :math:`\\hat F_\\gamma(C)`.
    balanced_cut : float
        The same without penalty: ``cut * gvol(V) / (gvol(C) gvol(C'))`` (NCut or RCut).
    cut : float
    violation : float
        Violated constraint weight.
    n_violated : int
        Violated constraint count.
    thresholds, ratios, cuts, violations : ndarray of shape (n_thresholds,)
        Every candidate (one per distinct value of ``f`` but the largest), in
        ascending order of threshold.
    feasible : ndarray of bool, shape (n_thresholds,)
        Whether the candidate violates no constraint.
    """

    mask: np.ndarray
    threshold: float
    ratio: float
    balanced_cut: float
    cut: float
    violation: float
    n_violated: int
    thresholds: np.ndarray = field(repr=False)
    ratios: np.ndarray = field(repr=False)
    cuts: np.ndarray = field(repr=False)
    violations: np.ndarray = field(repr=False)
    feasible: np.ndarray = field(repr=False)


def _interval_sum(lo, hi, w, n):
    """For pairs at sorted positions lo < hi: sum of w over pairs split by each prefix.

    The prefix of the first t positions splits a pair iff lo < t <= hi; returns the
    sums for t = 0..n (index t).
    """
    diff = np.bincount(lo + 1, weights=w, minlength=n + 2) - np.bincount(hi + 1, weights=w, minlength=n + 2)
    return np.cumsum(diff)[: n + 1]


def _sweep(problem, f, gamma):
    n = problem.n
    order = np.argsort(f, kind="stable")
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    fs = f[order]
    t = np.flatnonzero(fs[:-1] < fs[1:]) + 1  # prefix sizes with a distinct-value boundary

    def split(a, c, w):
        pa, pc = pos[a], pos[c]
        return _interval_sum(np.minimum(pa, pc), np.maximum(pa, pc), w, n)[t]

    cut = split(problem.ei, problem.ej, problem.ew)
    ml_cut = split(problem.ei, problem.ej, problem.eq) if problem.mq.size else np.zeros(t.size)
    ml_cnt = split(problem.ma, problem.mb, np.ones(problem.mq.size)) if problem.mq.size else np.zeros(t.size)
    cl_cut = split(problem.ca, problem.cb, problem.cq) if problem.cq.size else np.zeros(t.size)
    cl_cnt = split(problem.ca, problem.cb, np.ones(problem.cq.size)) if problem.cq.size else np.zeros(t.size)
    viol = (problem.cq.sum() - cl_cut) + ml_cut
    n_viol = np.rint((problem.cq.size - cl_cnt) + ml_cnt).astype(np.int64)
    g1 = np.cumsum(problem.b[order])[t - 1]
    g2 = problem.gvol - g1
    denom = g1 * g2 / problem.gvol
    viol = np.maximum(viol, 0.0)
    return order, fs, t, cut, viol, n_viol, denom


def optimal_threshold(problem, f, gamma=0.0, *, feasible_only=False):
    """Best threshold set of ``f`` for the penalised ratio, in ``O(n log n + |E| + m)``.

    Sorts ``f`` once and evaluates every level set ``{f > t}`` (``t`` running over the
    distinct values but the largest) with cumulative sums: a pair at sorted positions
    ``p < q`` is split exactly by the prefixes of size ``p+1 .. q``, so the cut, the
    violated constraint weight and the balance of every prefix come from one
    difference array each. Because ``F(f)`` averages the level-set ratios
    (coarea formula), the result is never worse than :func:`continuous_ratio`.

    Parameters
    ----------
    problem : RatioProblem
    f : array-like of shape (n,)
        Finite, not constant.
    gamma : float, default=0.0
    feasible_only : bool, default=False
        Choose only among level sets that violate no constraint.

    Returns
    -------
    ThresholdResult or None
        ``None`` only when ``feasible_only`` is set and no level set is feasible.
        Ties between candidates go to the smallest threshold.

    Raises
    ------
    InvalidParameterError
        ``f`` constant, of the wrong length or not finite; bad ``gamma``.

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    >>> P = RatioProblem(W, cannot_pairs=[[0, 2]])
    >>> f = [0.0, 0.1, 0.5, 0.6, 0.9, 1.0]
    >>> r = optimal_threshold(P, f)
    >>> r.mask.astype(int), round(r.ratio, 4), r.n_violated
    (array([0, 0, 0, 1, 1, 1]), 0.2857, 1)
    >>> r = optimal_threshold(P, f, gamma=1.0, feasible_only=True)
    >>> r.mask.astype(int), round(r.ratio, 4), r.n_violated
    (array([0, 0, 1, 1, 1, 1]), 0.7, 0)
    """
    gamma = _check_gamma(gamma)
    f = _as_vector(problem, f)
    if f.max() == f.min():
        raise InvalidParameterError("f is constant; no threshold splits it into two non-empty sets")
    return _optimal_threshold(problem, f, gamma, feasible_only)


def _threshold_mask(problem, f, gamma):
    """The set chosen by :func:`optimal_threshold` (None for a constant ``f``)."""
    if f.max() == f.min():
        return None
    return _optimal_threshold(problem, f, gamma).mask


def _optimal_threshold(problem, f, gamma, feasible_only=False):
    _, fs, t, cut, viol, n_viol, denom = _sweep(problem, f, gamma)
    ratios = (cut + gamma * viol) / denom
    feasible = n_viol == 0
    cand = np.flatnonzero(feasible) if feasible_only else np.arange(t.size)
    if cand.size == 0:
        return None
    k = int(cand[np.argmin(ratios[cand])])
    thr = float(fs[t[k] - 1])
    mask = f > thr
    return ThresholdResult(
        mask=mask, threshold=thr, ratio=float(ratios[k]), balanced_cut=float(cut[k] / denom[k]),
        cut=float(cut[k]), violation=float(viol[k]), n_violated=int(n_viol[k]),
        thresholds=fs[t - 1], ratios=ratios, cuts=cut, violations=viol, feasible=feasible,
    )


# ----------------------------------------------------------------------- inner solver


@dataclass
class DualState:
    """Warm start of the inner solver, independent of ``gamma`` and of the scale of ``W``.

    Attributes
    ----------
    alpha : ndarray of shape (n_edges,)
        Edge duals in ``[-1, 1]`` (``sum_e w_e alpha_e (e_i - e_j)`` is the
        total-variation subgradient).
    v : ndarray of shape (n,) or None
        The "argmin" simplex variable (``None`` when there is no range term).
    """

    alpha: np.ndarray
    v: np.ndarray | None = None

    @classmethod
    def initial(cls, problem, f):
        """``alpha = 0`` and ``v`` the indicator of ``argmin f`` (the spec's warm start)."""
        v = np.zeros(problem.n)
        v[int(np.argmin(f))] = 1.0
        return cls(np.zeros(problem.n_edges), v)


@dataclass
class InnerResult:
    """Solution of the inner problem of one RatioDCA step (see :func:`solve_inner`).

    Attributes
    ----------
    f : ndarray of shape (n,)
        Unit-norm primal point ``r / ||r||`` (zero vector if ``r == 0``).
    primal : float
        Inner objective at ``f`` (an upper bound on the optimum).
    dual : float
        ``-scale * ||r||`` (a lower bound on the optimum).
    n_iter : int
    state : DualState
    """

    f: np.ndarray
    primal: float
    dual: float
    n_iter: int
    state: DualState

    @property
    def gap(self):
        return self.primal - self.dual


def _project_simplex(z):
    """Euclidean projection onto {x >= 0, sum x = 1}; only entries above max(z) - 1 matter."""
    top = z.max()
    cand = np.flatnonzero(z >= top - 1.0)
    zc = np.sort(z[cand])[::-1]
    css = np.cumsum(zc) - 1.0
    k = np.arange(1, zc.size + 1)
    pos = np.flatnonzero(zc - css / k > 0)
    rho = pos[-1] if pos.size else 0  # empty only by round-off at huge |z|
    tau = css[rho] / (rho + 1)
    return np.maximum(z - tau, 0.0)


@njit(cache=True, nogil=True)
def _simplex_tau(z):
    """Threshold tau with sum(max(z - tau, 0)) == 1 (Michelot's finite active-set scheme).

    Only entries above max(z) - 1 can be active; each pass drops those below the
    current tau, and tau never decreases, so a few O(k) passes give the exact value.
    """
    top = z.max()
    buf = np.empty(z.size)
    k = 0
    total = 0.0
    for i in range(z.size):
        if z[i] >= top - 1.0:  # ">=": the maximum itself always qualifies, even when top - 1 == top
            buf[k] = z[i]
            total += z[i]
            k += 1
    tau = (total - 1.0) / k
    while True:
        k_new = 0
        total = 0.0
        for j in range(k):
            if buf[j] > tau:
                buf[k_new] = buf[j]
                total += buf[j]
                k_new += 1
        if k_new == k or k_new == 0:  # k_new == 0 only by round-off at huge |z|
            return tau
        k = k_new
        tau = (total - 1.0) / k


@njit(cache=True, nogil=True)
def _dual_residual(ei, ej, gs, inv_sq, beta, v, use_simplex, z):
    """r = z - P(z) for z = gs + v - D^T beta / sqrt(d_max), written into z."""
    n = gs.size
    for i in range(n):
        z[i] = gs[i] + v[i] if use_simplex else gs[i]
    for e in range(ei.size):
        b = beta[e] * inv_sq
        z[ei[e]] -= b
        z[ej[e]] += b
    if use_simplex:
        tau = _simplex_tau(z)
        for i in range(n):
            z[i] = min(z[i], tau)
    return z


@njit(cache=True, nogil=True)
def _shifted(ei, ej, gs, inv_sq, beta, v, use_simplex, z):
    """z = gs + v - D^T beta / sqrt(d_max) (before the simplex projection), written into z."""
    for i in range(gs.size):
        z[i] = gs[i] + v[i] if use_simplex else gs[i]
    for e in range(ei.size):
        b = beta[e] * inv_sq
        z[ei[e]] -= b
        z[ej[e]] += b
    return z


@njit(cache=True, nogil=True)
def _fista_kernel(ei, ej, box, gs, inv_sq, step, beta, v, use_simplex, max_iter, gap_tol, check_every,
                  w, c, g, scale):
    """FISTA on the rescaled dual of the inner problem; returns (beta, v, n_iter).

    One pass over the edges per iteration: the shifted point ``zy`` of the
    extrapolated duals is kept up to date by scattering each change of ``y_beta``
    (recomputed from scratch at every gap check to stop round-off drift). Adaptive
    restart (O'Donoghue & Candes 2015) drops the momentum when the gradient step
    points along the last move.
    """
    n = gs.size
    m = ei.size
    y_beta = beta.copy()
    y_v = v.copy()
    zy = np.empty(n)
    r = np.empty(n)
    u = np.empty(n)
    _shifted(ei, ej, gs, inv_sq, y_beta, y_v, use_simplex, zy)
    t = 1.0
    it = 0
    while it < max_iter:
        it += 1
        if use_simplex:
            tau = _simplex_tau(zy)
            for i in range(n):
                r[i] = min(zy[i], tau)
        else:
            for i in range(n):
                r[i] = zy[i]
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_new
        turn = 0.0
        for e in range(m):
            a = ei[e]
            bb = ej[e]
            yb = y_beta[e]
            nb = yb + step * (r[a] - r[bb]) * inv_sq
            if nb > box[e]:
                nb = box[e]
            elif nb < -box[e]:
                nb = -box[e]
            d = nb - beta[e]
            turn += (yb - nb) * d
            ny = nb + mom * d
            delta = (ny - yb) * inv_sq
            zy[a] -= delta
            zy[bb] += delta
            y_beta[e] = ny
            beta[e] = nb
        if use_simplex:
            for i in range(n):
                u[i] = y_v[i] - step * r[i]
            tau = _simplex_tau(u)
            for i in range(n):
                nv = u[i] - tau
                nv = max(nv, 0.0)
                d = nv - v[i]
                turn += (y_v[i] - nv) * d
                ny = nv + mom * d
                zy[i] += ny - y_v[i]
                y_v[i] = ny
                v[i] = nv
        if turn > 0.0:  # restart: y <- x
            t_new = 1.0
            for e in range(m):
                y_beta[e] = beta[e]
            if use_simplex:
                for i in range(n):
                    y_v[i] = v[i]
            _shifted(ei, ej, gs, inv_sq, y_beta, y_v, use_simplex, zy)
        t = t_new
        if it % check_every == 0 and it < max_iter:
            _dual_residual(ei, ej, gs, inv_sq, beta, v, use_simplex, r)
            nr = np.sqrt(np.sum(r * r))
            if nr == 0.0:
                break
            primal = 0.0
            for e in range(m):
                primal += w[e] * abs(r[ei[e]] - r[ej[e]])
            primal -= np.sum(g * r)
            if c > 0:
                primal += c * (r.max() - r.min())
            primal /= nr
            dual = -scale * nr
            if primal - dual <= gap_tol * abs(dual):
                break
            _shifted(ei, ej, gs, inv_sq, y_beta, y_v, use_simplex, zy)
    return beta, v, it


def _inner_primal(problem, w, c, g, f):
    val = _total_variation(w, f, problem.ei, problem.ej) - _dot(g, f)
    if c > 0:
        val += c * float(f.max() - f.min())
    return val


def solve_inner(problem, g, gamma=0.0, *, state=None, max_iter=100, gap_tol=1e-6, check_every=10):
    """Solve the convex inner problem of RatioDCA by FISTA on its rescaled dual.

    .. math:: \\min_{\\|f\\|_2 \\le 1} \\sum_{e} w'_e |f_i - f_j| + c\\,(\\max f - \\min f)
              - \\langle g, f \\rangle

    with ``w' = w + gamma * q_ml`` and ``c = gamma * sum(q_cl)``. Its dual (Rangapuram
    & Hein 2012, Lemmas 3.1-3.2) is the smooth problem
    ``min ½ ||z - P(z)||²`` over ``beta`` in a box and ``v`` in the simplex, with
    ``z = g/c + v - D^T beta / sqrt(d_max)``, ``P`` the projection onto the simplex
    (``P = 0`` and ``c`` replaced by 1 when ``c = 0``); the primal point is
    ``f = r / ||r||`` for ``r = z - P(z)``. The gradient is Lipschitz with constant
    ``1 + lmax(D^T D)/d_max`` (``lmax/d_max`` when ``c = 0``), ``lmax`` estimated by
    :meth:`RatioProblem.laplacian_max`. Stops when the relative duality gap drops
    below ``gap_tol`` (checked every ``check_every`` iterations) or after ``max_iter``.

    Parameters
    ----------
    problem : RatioProblem
    g : ndarray of shape (n,)
        Linear term. RatioDCA passes ``r2 + lambda * s`` with ``sum(g) == 0``.
    gamma : float, default=0.0
    state : DualState, default=None
        Warm start (``None``: all duals zero, ``v`` at ``argmin g``).
    max_iter : int, default=100
    gap_tol : float, default=1e-6
    check_every : int, default=10

    Returns
    -------
    InnerResult

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.path_graph(4), format="csr")
    >>> P = RatioProblem(W, b=np.ones(4))
    >>> res = solve_inner(P, np.array([-3.0, -1.0, 1.0, 3.0]), max_iter=500)
    >>> np.round(res.f, 4), round(res.primal, 4), round(res.gap, 6)
    (array([-0.6325, -0.3162,  0.3162,  0.6325]), -3.1623, 0.0)
    """
    gamma = _check_gamma(gamma)
    g = _as_vector(problem, g, "g")
    max_iter = check_int(max_iter, "max_iter", low=1)
    check_every = check_int(check_every, "check_every", low=1)
    gap_tol = check_float(gap_tol, "gap_tol", low=0.0)
    return _solve_inner(problem, g, gamma, state, max_iter, gap_tol, check_every)


def _solve_inner(problem, g, gamma, state, max_iter, gap_tol, check_every=10):
    n = problem.n
    w = problem.edge_weights(gamma)
    c = gamma * float(problem.cq.sum())
    use_simplex = c > 0
    scale = c if use_simplex else 1.0
    sq = math.sqrt(problem.d_max)
    ei, ej = problem.ei, problem.ej
    box = sq * w / scale
    lap = problem.laplacian_max() / problem.d_max
    L = (1.0 + lap) if use_simplex else max(lap, 1e-12)
    step = 1.0 / L
    if state is None:
        state = DualState(np.zeros(problem.n_edges), None)
    beta = np.clip(state.alpha, -1.0, 1.0) * box
    if use_simplex:
        v = state.v
        if v is None or v.shape != (n,):
            v = np.zeros(n)
            v[int(np.argmin(g))] = 1.0
    else:
        v = None
    gs = g / scale

    def residual(beta, v):
        z = gs - (np.bincount(ei, beta, n) - np.bincount(ej, beta, n)) / sq
        if use_simplex:
            z = z + v
            return z - _project_simplex(z)
        return z

    def finish(beta, v, it):
        r = residual(beta, v)
        nr = float(np.linalg.norm(r))
        f = r / nr if nr > 0 else np.zeros(n)
        primal = _inner_primal(problem, w, c, g, f) if nr > 0 else 0.0
        alpha = np.divide(beta, box, out=np.zeros_like(beta), where=box > 0)
        return InnerResult(f, primal, -scale * nr, it, DualState(alpha, v))

    if not use_simplex:
        v = np.zeros(n)
    lay = problem.local_layout()
    if lay is None:
        beta, v, it = _fista_kernel(ei, ej, box, gs, 1.0 / sq, step, beta.copy(), v.copy(), use_simplex,
                                    max_iter, gap_tol, check_every, w, c, g, scale)
    else:  # same problem with vertices and edges renumbered for memory locality
        vp, ep, pi, pj = lay
        bp, vv, it = _fista_kernel(pi, pj, box[ep], gs[vp], 1.0 / sq, step, beta[ep], v[vp], use_simplex,
                                   max_iter, gap_tol, check_every, w[ep], c, g[vp], scale)
        beta = np.empty_like(bp)
        beta[ep] = bp
        v = np.empty_like(vv)
        v[vp] = vv
    if not use_simplex:
        v = None
    return finish(beta, v, it)


# ----------------------------------------------------------------------- RatioDCA


@dataclass
class RatioDCAResult:
    """Outcome of :func:`ratio_dca`.

    Attributes
    ----------
    f : ndarray of shape (n,)
        Last accepted iterate (unit norm).
    ratio : float
        :math:`F_\\gamma(f)`; never larger than the ratio of the start.
    history : list of float
        The ratio after each accepted step, starting with the start's.
    n_outer : int
        Outer iterations (accepted and rejected steps).
    n_inner : int
        Total FISTA iterations.
    converged : bool
        Stopped by a convergence rule rather than by an iteration cap or the callback.
    reason : str
        ``"inner optimum zero"``, ``"relative decrease"``, ``"constant iterate"``,
        ``"inner budget"``, ``"zero ratio"``, ``"max_outer"``, ``"stable partition"`` or
        ``"callback"``.
    state : DualState
        Dual warm start for a later call (for example at the next ``gamma``).
    """

    f: np.ndarray
    ratio: float
    history: list
    n_outer: int
    n_inner: int
    converged: bool
    reason: str
    state: DualState


def ratio_dca(problem, f0, gamma=0.0, *, max_outer=200, inner_iter=100, max_inner_iter=10_000,
              tol=1e-6, zero_tol=1e-8, inner_gap=0.5, stable_outer=0, state=None, callback=None,
              progress=False):
    """Minimise :math:`F_\\gamma` from ``f0`` by RatioDCA (nonlinear inverse power method).

    Each outer step solves the convex inner problem (:func:`solve_inner`) with the
    linear term ``g = r2(f) + lambda * s(f)``, where ``r2`` is the subgradient of the
    cannot-link part ``gamma sum q |f_a - f_b|`` (``sign(0) = 0``) and ``s`` the
    sort-based subgradient of the balance term, so ``sum(g) = 0``. A step is accepted
    only if it lowers the ratio, which makes the ratio sequence strictly decreasing.
    A rejected step doubles the FISTA budget and continues from the current duals;
    after 20 accepted steps in a row the budget doubles too (steps may be tiny).

    The inner problem is solved inexactly (Hein & Setzer 2011): its value at the
    current iterate is 0, and any point with a negative inner value already lowers
    the ratio, so FISTA stops as soon as the relative duality gap is below
    ``inner_gap`` (the step then achieves at least ``1 - inner_gap`` of the best
    possible inner decrease) or the budget runs out.

    Stopping rules: the inner optimum is zero up to ``zero_tol`` (``f`` is already
    critical), relative decrease below ``tol``, a constant inner solution, the inner
    budget above ``max_inner_iter``, ``max_outer`` outer steps, ``callback``
    returning True, or (when ``stable_outer > 0``) the optimal threshold set of the
    iterate unchanged for ``stable_outer`` accepted steps in a row (reason
    ``"stable partition"``).

    Parameters
    ----------
    problem : RatioProblem
    f0 : array-like of shape (n,)
        Start; a constant start is perturbed at its first entry.
    gamma : float, default=0.0
    max_outer : int, default=200
    inner_iter : int, default=100
        Initial FISTA budget per step.
    max_inner_iter : int, default=10000
    tol : float, default=1e-6
    zero_tol : float, default=1e-8
        Relative to ``lambda * S(f)/||f||`` (the scale of the inner objective).
    inner_gap : float, default=0.5
        Relative duality gap at which an inner solve stops, in ``[0, 1)``; ``0``
        solves each inner problem to the budget.
    stable_outer : int, default=0
        Stop once the optimal threshold set of the iterate has not changed for this
        many accepted steps in a row; ``0`` disables the rule. The COSC drivers use
        3: they keep only the thresholded partition, and the later steps merely
        polish the continuous ratio.
    state : DualState, default=None
        Dual warm start (for example ``result.state`` of a run at another ``gamma``).
    callback : callable, default=None
        ``callback(it, f, ratio)`` after each accepted step; return True to stop.
    progress : bool, default=False
        Show a tqdm bar of outer steps.

    Returns
    -------
    RatioDCAResult

    Raises
    ------
    InvalidParameterError
        Bad ``gamma``, ``f0`` or iteration parameters.

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(4, 0), format="csr")
    >>> P = RatioProblem(W)
    >>> res = ratio_dca(P, np.array([0.0, 1, 2, 3, 4, 5, 6, 8]))
    >>> res.history[0] > res.ratio, round(res.ratio, 4)
    (True, 0.1538)
    >>> optimal_threshold(P, res.f).mask.astype(int)
    array([0, 0, 0, 0, 1, 1, 1, 1])
    """
    gamma = _check_gamma(gamma)
    f = _as_vector(problem, f0, "f0").copy()
    max_outer = check_int(max_outer, "max_outer", low=1)
    inner_iter = check_int(inner_iter, "inner_iter", low=1)
    max_inner_iter = check_int(max_inner_iter, "max_inner_iter", low=1)
    tol = check_float(tol, "tol", low=0.0)
    zero_tol = check_float(zero_tol, "zero_tol", low=0.0)
    inner_gap = check_float(inner_gap, "inner_gap", low=0.0)
    if inner_gap >= 1.0:
        raise InvalidParameterError(f"inner_gap must be < 1 (a gap of 1 allows a step that does not descend), "
                                    f"got {inner_gap}")
    stable_outer = check_int(stable_outer, "stable_outer", low=0)
    if callback is not None and not callable(callback):
        raise InvalidParameterError(f"callback must be callable, got {type(callback).__name__}")
    return _ratio_dca(problem, f, gamma, max_outer, inner_iter, max_inner_iter, tol, zero_tol, state,
                      callback, progress, inner_gap, stable_outer)


def _ratio_dca(problem, f, gamma, max_outer=200, inner_iter=100, max_inner_iter=10_000, tol=1e-6,
               zero_tol=1e-8, state=None, callback=None, progress=False, inner_gap=0.5, stable_outer=0):
    if f.max() == f.min():
        f = f.copy()
        f[0] += 1.0 if f[0] == 0 else abs(f[0])
    f = f - f.mean()
    f /= np.linalg.norm(f)
    w = problem.edge_weights(gamma)
    lam = _ratio(problem, f, gamma, w)
    history = [lam]
    if state is None:
        state = DualState.initial(problem, f)
    budget = inner_iter
    last_mask, n_same = None, 0
    streak = 0
    n_inner = 0
    reason, converged = "max_outer", False
    bar = progress_bar(progress, max_outer, f"RatioDCA gamma={gamma:g}", leave=False)
    has_cl = problem.cq.size > 0 and gamma > 0
    try:
        outer = 0
        while outer < max_outer:
            if not lam > 0:
                reason, converged = "zero ratio", True
                break
            outer += 1
            order = np.argsort(f, kind="stable")
            s = _balance_subgradient(problem, f, order)
            gvec = lam * s
            if has_cl:
                sg = gamma * problem.cq * np.sign(f[problem.ca] - f[problem.cb])
                gvec = gvec + np.bincount(problem.ca, sg, problem.n) - np.bincount(problem.cb, sg, problem.n)
            res = _solve_inner(problem, gvec, gamma, state, budget, inner_gap)
            n_inner += res.n_iter
            scale_ref = lam * _dot(s, f) + 1e-300  # lambda * S(f): size of the inner terms
            if -res.dual <= zero_tol * scale_ref:
                reason, converged = "inner optimum zero", True
                break
            fn = res.f
            if fn.max() - fn.min() <= 1e-12 * max(1.0, float(np.abs(fn).max())):
                reason, converged = "constant iterate", True
                break
            lam_new = _ratio(problem, fn, gamma, w)
            if lam_new < lam:
                rel = (lam - lam_new) / lam
                f, lam, state = fn, lam_new, res.state
                history.append(lam)
                streak += 1
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(ratio=f"{lam:.6g}")
                if callback is not None and callback(outer, f, lam):
                    reason = "callback"
                    break
                if rel < tol:
                    reason, converged = "relative decrease", True
                    break
                if stable_outer:
                    mask = _threshold_mask(problem, f, gamma)
                    same = last_mask is not None and np.array_equal(mask, last_mask)
                    n_same = n_same + 1 if same else 0
                    last_mask = mask
                    if n_same >= stable_outer:
                        reason, converged = "stable partition", True
                        break
                if streak >= 20:
                    budget *= 2
                    streak = 0
            else:
                if -res.dual <= tol * scale_ref:
                    # the dual bound shows no step can lower the ratio by a relative tol
                    reason, converged = "relative decrease", True
                    break
                state = res.state  # keep the dual progress; more iterations next time
                streak = 0
                budget *= 2
            if budget > max_inner_iter:
                reason = "inner budget"
                break
    finally:
        if bar is not None:
            bar.close()
    return RatioDCAResult(f=f, ratio=lam, history=history, n_outer=outer, n_inner=n_inner,
                          converged=converged, reason=reason, state=state)
