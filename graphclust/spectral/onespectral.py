"""Two-way 1-spectral clustering: unconstrained (Hein & Bühler 2010) and at a fixed
constraint penalty ``gamma`` (the building block of COSC, Rangapuram & Hein 2012).

Both run RatioDCA (:func:`graphclust.spectral.ratiodca.ratio_dca`) from a start
vector and return the optimal threshold set of the result. The COSC driver (the
``gamma`` schedule, the provable fallback, restarts, k-way splitting) is built on
:func:`cosc_bipartition`.
"""

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh, lobpcg

from .._utils import check_int, check_random_state
from ..errors import InvalidParameterError
from .ratiodca import (
    DualState,
    RatioProblem,
    _as_vector,
    _check_gamma,
    _optimal_threshold,
    _ratio_dca,
)

__all__ = ["BipartitionResult", "cosc_bipartition", "one_spectral_bipartition", "spectral_start"]

_DENSE_MAX = 500
_ARPACK_MAX = 20_000  # above: LOBPCG (shift-invert needs a sparse LU, too slow at 100k)
_LOBPCG_ITER = 500


@dataclass
class BipartitionResult:
    """A two-way partition found by RatioDCA plus optimal thresholding.

    Attributes
    ----------
    labels : ndarray of int64, shape (n,)
        0/1 per vertex, vertex 0 always in cluster 0.
    ratio : float
        Penalised ratio :math:`\\hat F_\\gamma` of the partition (at ``gamma = 0`` the
        normalised or ratio cut).
    balanced_cut : float
        ``cut * gvol(V) / (gvol(C) gvol(C'))`` without the penalty.
    cut : float
        Weight of the cut data edges.
    violation : float
        Violated constraint weight.
    n_violated : int
        Violated constraint count.
    gamma : float
    f : ndarray of shape (n,)
        Final continuous vector of the chosen run (warm start for a later ``gamma``).
    state : DualState
        Inner-solver warm start of the chosen run.
    history : list of float
        Continuous ratio after each accepted RatioDCA step of the chosen run.
    from_start : bool
        True when thresholding the start vector gave a better set than thresholding
        the RatioDCA result (the better of the two is returned).
    runs : list of RatioDCAResult
        One per start, in the order the starts were given.
    """

    labels: np.ndarray
    ratio: float
    balanced_cut: float
    cut: float
    violation: float
    n_violated: int
    gamma: float
    f: np.ndarray = field(repr=False)
    state: DualState = field(repr=False)
    history: list = field(repr=False)
    from_start: bool = False
    runs: list = field(default_factory=list, repr=False)


def _vertex_weights(W, g, cut):
    if isinstance(g, str) or g is None:
        name = cut if g is None else g
        if name not in ("ncut", "rcut"):
            raise InvalidParameterError(f"cut must be 'ncut' or 'rcut', got {name!r}")
        if name == "rcut":
            return np.ones(W.shape[0])
        return None  # RatioProblem uses the degrees and names an isolated vertex
    return g


def spectral_start(W, b=None, *, random_state=None):
    """Second eigenvector of the generalised problem ``(D - W) v = mu B v``.

    ``D`` holds the degrees of ``W`` and ``B = diag(b)`` the vertex weights (after
    must-link merging: the summed original weights, so ``B != D``). This is the
    standard spectral relaxation of the balanced cut and the usual RatioDCA start.
    Dense ``eigh`` up to 500 vertices, shift-invert ARPACK up to 20 000, and
    beyond that at most 500 Jacobi-preconditioned LOBPCG iterations orthogonal to
    the trivial vector (a start needs the shape of the vector, not its digits:
    RatioDCA refines it); a random vector if the eigensolver fails.

    Parameters
    ----------
    W : scipy.sparse matrix or ndarray of shape (n, n), or RatioProblem
    b : array-like of shape (n,), default=None
        ``None``: the degrees (normalised cut). Ignored for a RatioProblem.
    random_state : None, int or numpy.random.Generator, default=None
        ARPACK start vector / fallback.

    Returns
    -------
    ndarray of shape (n,)

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    >>> v = spectral_start(W)
    >>> bool(np.all(np.sign(v[:3]) == np.sign(v[0])) and np.all(np.sign(v[3:]) == -np.sign(v[0])))
    True
    """
    P = W if isinstance(W, RatioProblem) else RatioProblem(W, b)
    rng = check_random_state(random_state)
    n = P.n
    A = sp.csr_array((P.ew, (P.ei, P.ej)), shape=(n, n))
    A = A + A.T
    d = np.asarray(A.sum(axis=1)).ravel()
    Lap = sp.diags_array(d) - A
    isb = 1.0 / np.sqrt(P.b)
    M = (sp.diags_array(isb) @ Lap @ sp.diags_array(isb)).tocsc()
    if n <= _DENSE_MAX:
        _, vecs = scipy.linalg.eigh(M.toarray(), subset_by_index=[0, 1], driver="evr")
        return vecs[:, 1] * isb
    if n > _ARPACK_MAX:
        return _lobpcg_start(M, P.b, rng) * isb
    shift = 1e-3 * float(np.mean(d * isb * isb)) + 1e-12
    try:
        _, vecs = eigsh(M, k=2, sigma=-shift, which="LM", v0=rng.uniform(-1, 1, n), tol=1e-6)
    except (ArpackNoConvergence, ArpackError, RuntimeError):  # pragma: no cover - numerical failure
        return rng.standard_normal(n)
    return vecs[:, 1] * isb


def _lobpcg_start(M, b, rng):
    """Smallest non-trivial eigenvector of ``M = B^-1/2 L B^-1/2`` (null vector ``sqrt(b)``)."""
    n = M.shape[0]
    null = np.sqrt(b)[:, None] / np.linalg.norm(np.sqrt(b))
    diag = M.diagonal()
    precond = sp.diags_array(1.0 / np.where(diag > 0, diag, 1.0))
    X0 = rng.standard_normal((n, 1))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "did not reach the tolerance": expected
            _, vecs = lobpcg(M.tocsr(), X0, Y=null, M=precond, largest=False, tol=1e-8, maxiter=_LOBPCG_ITER)
    except (np.linalg.LinAlgError, ValueError):  # pragma: no cover - numerical failure
        return rng.standard_normal(n)
    return vecs[:, 0]


def _run_starts(P, starts, gamma, feasible_only, dca_kwargs, state=None):
    best = None
    runs = []
    for f0 in starts:
        res = _ratio_dca(P, f0, gamma, state=state, **dca_kwargs)
        runs.append(res)
        cands = [(_optimal_threshold(P, res.f, gamma, feasible_only), False)]
        if f0.max() > f0.min():
            cands.append((_optimal_threshold(P, f0, gamma, feasible_only), True))
        for thr, from_start in cands:
            if thr is None:
                continue
            if best is None or thr.ratio < best[0].ratio:
                best = (thr, from_start, res)
    return best, runs


def _result(best, runs, gamma):
    if best is None:
        return None
    thr, from_start, res = best
    labels = thr.mask.astype(np.int64)
    if labels[0] == 1:
        labels = 1 - labels
    return BipartitionResult(
        labels=labels, ratio=thr.ratio, balanced_cut=thr.balanced_cut, cut=thr.cut,
        violation=thr.violation, n_violated=thr.n_violated, gamma=gamma, f=res.f, state=res.state,
        history=res.history, from_start=from_start, runs=runs,
    )


def _dca_kwargs(max_outer, inner_iter, max_inner_iter, tol, callback, progress, stable_outer=3):
    return dict(max_outer=check_int(max_outer, "max_outer", low=1),
                inner_iter=check_int(inner_iter, "inner_iter", low=1),
                max_inner_iter=check_int(max_inner_iter, "max_inner_iter", low=1),
                tol=tol, callback=callback, progress=progress,
                stable_outer=check_int(stable_outer, "stable_outer", low=0))


def one_spectral_bipartition(W, g=None, cut="ncut", *, n_starts=5, random_state=None, max_outer=200,
                             inner_iter=100, max_inner_iter=10_000, tol=1e-6, stable_outer=3, callback=None,
                             progress=False):
    """Unconstrained 1-spectral clustering into two sets (normalised or ratio cut).

    Runs RatioDCA at ``gamma = 0`` from the spectral start (:func:`spectral_start`)
    and ``n_starts - 1`` Gaussian random vectors, thresholds each result optimally,
    and keeps the partition with the smallest balanced cut. The tight relaxation
    makes the thresholded result at least as good as the spectral start's best
    level set.

    Parameters
    ----------
    W : scipy.sparse matrix or ndarray of shape (n, n)
        Symmetric non-negative similarities, zero diagonal.
    g : array-like of shape (n,), default=None
        Vertex weights ``> 0``; overrides ``cut``.
    cut : {"ncut", "rcut"}, default="ncut"
        Normalised cut (``g`` = degrees; isolated vertices are refused) or ratio cut
        (``g = 1``).
    n_starts : int, default=5
    random_state : None, int or numpy.random.Generator, default=None
    max_outer, inner_iter, max_inner_iter, tol, callback, progress
        Passed to :func:`graphclust.spectral.ratiodca.ratio_dca` for every start.
    stable_outer : int, default=3
        Stop a run once its optimal threshold set has not changed for this many
        accepted RatioDCA steps in a row; ``0`` runs to ``tol``.

    Returns
    -------
    BipartitionResult
        ``ratio`` is the balanced cut; ``runs`` has one RatioDCA result per start.

    Raises
    ------
    InvalidParameterError
        Unknown ``cut``, ``n_starts < 1``, bad vertex weights (named), or an isolated
        vertex under ``cut="ncut"``.
    InvalidGraphError
        ``W`` not square, not symmetric, with a negative or non-finite entry or a
        self-loop.

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(4, 0), format="csr")
    >>> res = one_spectral_bipartition(W, n_starts=2, random_state=0)
    >>> res.labels, round(res.ratio, 4)
    (array([0, 0, 0, 0, 1, 1, 1, 1]), 0.1538)
    """
    n_starts = check_int(n_starts, "n_starts", low=1)
    W_b = _vertex_weights(W, g, cut)
    P = W if isinstance(W, RatioProblem) else RatioProblem(W, W_b)
    rng = check_random_state(random_state)
    kw = _dca_kwargs(max_outer, inner_iter, max_inner_iter, tol, callback, progress, stable_outer)
    starts = [spectral_start(P, random_state=rng)] + [rng.standard_normal(P.n) for _ in range(n_starts - 1)]
    best, runs = _run_starts(P, starts, 0.0, False, kw)
    return _result(best, runs, 0.0)


def cosc_bipartition(W, g=None, cannot_pairs=None, cannot_w=None, gamma=0.0, init=None, *, must_pairs=None,
                     must_w=None, state=None, feasible_only=False, random_state=None, max_outer=200,
                     inner_iter=100, max_inner_iter=10_000, tol=1e-6, stable_outer=3, callback=None,
                     progress=False):
    """One RatioDCA run of constrained 1-spectral clustering at a fixed penalty ``gamma``.

    Minimises the continuous penalised ratio :math:`F_\\gamma` from ``init`` and
    returns the best level set of the result for :math:`\\hat F_\\gamma`.

    Contract (what the COSC driver may rely on):

    * the returned ``ratio`` is :math:`\\hat F_\\gamma` of ``labels`` on this graph,
      and ``ratio <= continuous_ratio(init)``; in particular, if ``init`` is the
      indicator of a set ``C0``, then ``ratio <= set_ratio(C0, gamma)`` (never
      worse than the start; the better of the thresholded result and the
      thresholded start is returned, see ``from_start``);
    * hence, if ``C0`` satisfies every constraint and
      ``gamma > gvol(V) * balanced_cut(C0) / 4`` (Rangapuram & Hein 2012, Thm 2.1;
      constraint weights 1), the result violates no constraint and its balanced cut
      is at most that of ``C0``;
    * ``violation`` / ``n_violated`` are the weight / count of the constraints the
      partition violates, reported separately from the cut; ``balanced_cut`` is the
      unpenalised NCut or RCut;
    * ``f`` and ``state`` warm-start a later call at another ``gamma``
      (``init=res.f, state=res.state``);
    * deterministic for a given ``init`` (``random_state`` is used only for the
      spectral start when ``init`` is None and ARPACK is involved).

    Must-links meant as hard constraints should be merged beforehand
    (:func:`graphclust.contract`, keeping summed original vertex weights as ``g``).
    Hard cannot-links should have weight 1 so that ``gamma`` is the price of one
    violation in units of edge weight.

    Parameters
    ----------
    W : scipy.sparse matrix or ndarray of shape (n, n), or RatioProblem
        Symmetric non-negative similarities, zero diagonal. A prepared
        :class:`RatioProblem` is used as is (then ``g`` and the pairs must be None).
    g : array-like of shape (n,), {"ncut", "rcut"} or None, default=None
        Vertex weights ``> 0``; ``None`` or ``"ncut"``: the degrees of ``W``;
        ``"rcut"``: ones.
    cannot_pairs : array-like of shape (m, 2), default=None
    cannot_w : array-like of shape (m,), default=None
        Cannot-link weights ``> 0`` (default 1).
    gamma : float, default=0.0
        Price of one unit of violated constraint weight, ``>= 0``.
    init : array-like of shape (n,), default=None
        Start vector (a set indicator, a previous ``f``, ...). ``None``: the spectral
        start of ``(W, g)``.
    must_pairs, must_w : default=None
        Soft must-links (extra edges of weight ``gamma * w``).
    state : DualState, default=None
        Inner-solver warm start.
    feasible_only : bool, default=False
        Threshold only among level sets that violate no constraint; returns None if
        there is none.
    random_state : None, int or numpy.random.Generator, default=None
    max_outer, inner_iter, max_inner_iter, tol, callback, progress
        Passed to :func:`graphclust.spectral.ratiodca.ratio_dca`.
    stable_outer : int, default=3
        As in :func:`one_spectral_bipartition`.

    Returns
    -------
    BipartitionResult or None

    Raises
    ------
    InvalidParameterError
        ``gamma`` negative or not finite, ``init`` of the wrong length or not finite,
        bad vertex weights, or ``g``/pairs given together with a RatioProblem.
    InvalidConstraintError
        A pair out of range, a self-pair, or a non-positive weight (named).
    InvalidGraphError
        As in :class:`RatioProblem`.

    Examples
    --------
    Two triangles joined by an edge; a cannot-link inside the left triangle forces a
    worse cut once violations cost enough:

    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.barbell_graph(3, 0), format="csr")
    >>> free = cosc_bipartition(W, cannot_pairs=[[0, 2]], gamma=0.0)
    >>> free.labels, free.n_violated
    (array([0, 0, 0, 1, 1, 1]), 1)
    >>> hard = cosc_bipartition(W, cannot_pairs=[[0, 2]], gamma=2.0)
    >>> hard.labels, hard.n_violated, round(hard.ratio, 4)
    (array([0, 0, 1, 1, 1, 1]), 0, 0.7)
    """
    gamma = _check_gamma(gamma)
    if isinstance(W, RatioProblem):
        if g is not None or cannot_pairs is not None or cannot_w is not None or must_pairs is not None \
                or must_w is not None:
            raise InvalidParameterError("W is a RatioProblem: pass g and the constraint pairs when building it, not here")
        P = W
    else:
        P = RatioProblem(W, _vertex_weights(W, g, "ncut"), cannot_pairs=cannot_pairs, cannot_w=cannot_w,
                         must_pairs=must_pairs, must_w=must_w)
    kw = _dca_kwargs(max_outer, inner_iter, max_inner_iter, tol, callback, progress, stable_outer)
    if init is None:
        f0 = spectral_start(P, random_state=random_state)
    else:
        f0 = _as_vector(P, init, "init")
    best, runs = _run_starts(P, [f0], gamma, bool(feasible_only), kw, state=state)
    return _result(best, runs, gamma)
