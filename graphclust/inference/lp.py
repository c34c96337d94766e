"""The local-polytope LP relaxation of the signed Potts energy, solved with cvxpy/HiGHS.

The LP gives a proven lower bound on the minimum energy and fractional marginals,
which are rounded (argmax, randomised Kleinberg-Tardos rounding, ICM polish) into a
labelling scored by :meth:`~graphclust.energy.Energy.evaluate`. The model is built from
a handful of sparse incidence matrices, never one constraint object per edge.
"""

import time

import numpy as np
import scipy.sparse as sp

from .._utils import check_float, check_int, check_random_state, progress_bar, quiet_native_stdout
from ..errors import GraphclustError, InfeasibleConstraintsError, InvalidParameterError, ProblemTooLargeError
from .base import InferenceResult, register_engine
from .bp import _merge_tables
from .icm import _initial_labels, icm

__all__ = ["lp_relaxation"]

#: default size limits (the LP grows linearly, but HiGHS time is superlinear)
MAX_NODES = 20_000
MAX_VARIABLES = 500_000


@register_engine("lp", bound=True, max_nodes=MAX_NODES)
def lp_relaxation(energy, *, solver="HIGHS", max_nodes=MAX_NODES, max_variables=MAX_VARIABLES, n_rounding=20,
                  polish=True, integrality_tol=1e-6, init=None, random_state=None, callback=None, progress=False,
                  solver_options=None):
    """Solve the LP relaxation of the energy, then round its marginals.

    Parameters
    ----------
    energy : Energy
    solver : str, default="HIGHS"
        A cvxpy solver name. Keep HiGHS (simplex with crossover, vertex solutions):
        interior-point solvers such as CLARABEL return the middle of an optimal face,
        fractional whenever the optimum is not unique.
    max_nodes : int, default=20000
    max_variables : int, default=500000
        Refuse larger problems with :class:`~graphclust.errors.ProblemTooLargeError`
        before anything is built.
    n_rounding : int, default=20
        Number of randomised roundings tried when the LP solution is fractional.
    polish : bool, default=True
        Improve the best rounding with ICM (the ``"icm"`` engine when available,
        otherwise a built-in sequential local search).
    integrality_tol : float, default=1e-6
        A node is integral when its largest marginal is at least ``1 - integrality_tol``.
        When every node is, the argmax labelling is optimal and no rounding or
        polishing is done.
    init : array-like of shape (n_nodes,) or None, default=None
        An extra candidate labelling, kept if nothing better is found.
    random_state : None, int or numpy.random.Generator, default=None
        Drives the randomised rounding (and the ICM polish).
    callback : callable or None, default=None
        ``callback(iteration, labels, energy_value)`` after each rounding candidate;
        returning ``True`` stops the rounding.
    progress : bool, default=False
        Show a tqdm bar over the stages (build, solve, round).
    solver_options : dict or None, default=None
        Passed to ``cvxpy.Problem.solve``.

    Returns
    -------
    InferenceResult
        ``lower_bound`` is the LP optimum (plus ``energy.constant``), ``marginals`` the
        fractional node marginals, ``labels`` the best candidate by true energy.
        ``info`` holds ``"gap"`` (``energy - lower_bound``), ``"fractional"`` (fraction
        of nodes with a fractional marginal), ``"build_seconds"`` (building the cvxpy
        model), ``"compile_seconds"`` (cvxpy canonicalisation), ``"solver_seconds"``
        (time inside the solver), ``"n_variables"``, ``"n_constraints"`` (scalar rows),
        ``"n_roundings"``, ``"polish"`` (``"icm"`` or ``None``),
        ``"status"`` and ``"violated_hard_terms"``.

    Raises
    ------
    ProblemTooLargeError
        When the problem exceeds ``max_nodes`` or ``max_variables``.
    InfeasibleConstraintsError
        When the LP is infeasible, so no labelling satisfies the hard terms.
    InvalidParameterError
        For a solver cvxpy does not have, or bad limits.

    See Also
    --------
    graphclust.inference.bp.belief_propagation : scales to large grids.

    Notes
    -----
    Variables are the node marginals ``μ_i(l) ≥ 0`` with ``Σ_l μ_i(l) = 1`` and, per
    pair term, the smallest possible set that reproduces the local polytope:

    .. math::

        \\min \\sum_{i,l} U_{il} \\mu_i(l)
        + \\sum_{w_e > 0} \\frac{w_e}{2} \\sum_l d_e(l)
        + \\sum_{w_e < 0} |w_e| \\sum_l y_e(l)
        + \\sum_t \\langle T_t, \\mu_t \\rangle + \\sum_k h_k u_k

    with ``d_e(l) ≥ |μ_i(l) − μ_j(l)|`` for attractive terms (total variation, the
    Kleinberg-Tardos uniform-metric LP), ``y_e(l) ≥ μ_i(l) + μ_j(l) − 1, y ≥ 0`` for
    repulsive terms, full pairwise marginals ``μ_t(a, b) ≥ 0`` whose row and column
    sums are ``μ_i`` and ``μ_j`` for table terms, and ``u_k ≥ μ_i(k)`` for label costs
    ``h``. For Potts terms this compact form has the same optimum as the local-polytope
    LP with pairwise marginals: for fixed ``μ_i, μ_j`` the cheapest coupling puts
    ``1 − Σ_l min(μ_i(l), μ_j(l)) = ½‖μ_i − μ_j‖₁`` off the diagonal and
    ``Σ_l max(0, μ_i(l) + μ_j(l) − 1)`` on it. It has ``N·K + (#Potts)·K + (#tables)·K²``
    variables instead of ``N·K + (#pairs)·K²``. Hard terms become constraints: a hard
    must-link ``μ_i = μ_j``, a hard cannot-link ``μ_i(l) + μ_j(l) ≤ 1``, a ``+inf``
    unary ``μ_i(l) = 0``. Tables and Potts terms on the same pair are merged first.

    The LP is tight (integral, value = minimum) on submodular energies (two labels,
    attractive terms) and on trees; cannot-links can make it loose, with no rounding
    guarantee, which is why every candidate is scored with the true energy and the gap
    is reported. The model size is linear in the number of nodes and terms; the HiGHS
    time is not.

    References
    ----------
    .. [1] Kleinberg, J. & Tardos, E. (2002). Approximation algorithms for
       classification problems with pairwise relationships: metric labeling and Markov
       random fields. J. ACM 49(5), 616-639. doi:10.1145/585265.585268
    .. [2] Werner, T. (2007). A linear programming approach to max-sum problem: a
       review. IEEE TPAMI 29(7), 1165-1179. doi:10.1109/TPAMI.2007.1036

    Examples
    --------
    Three nodes on a path; the middle one prefers label 0 but a strong must-link ties
    it to node 0, and a cannot-link separates nodes 1 and 2:

    >>> import numpy as np
    >>> from graphclust.energy import Energy
    >>> U = np.array([[0.0, 3.0], [0.0, 0.5], [0.0, 0.2]])
    >>> E = Energy(U, edges=[(0, 1), (1, 2)], weights=[2.0, -1.0])
    >>> res = lp_relaxation(E, random_state=0)
    >>> res.labels, res.energy, round(res.lower_bound, 9), res.info["fractional"]
    (array([0, 0, 1]), 0.2, 0.2, 0.0)
    """
    import cvxpy as cp

    t0 = time.perf_counter()
    max_nodes = check_int(max_nodes, "max_nodes", low=1)
    max_variables = check_int(max_variables, "max_variables", low=1)
    n_rounding = check_int(n_rounding, "n_rounding", low=0)
    integrality_tol = check_float(integrality_tol, "integrality_tol", low=0.0, high=0.5)
    if not isinstance(solver, str) or solver.upper() not in cp.installed_solvers():
        raise InvalidParameterError(f"solver {solver!r} is not available to cvxpy; installed: {cp.installed_solvers()}")
    rng = check_random_state(random_state)
    incumbent = None if init is None else _initial_labels(energy, init)

    N, K = energy.n_nodes, energy.n_labels
    model = _LPModel(energy)
    if N > max_nodes or model.n_variables > max_variables:
        raise ProblemTooLargeError(
            f"the LP relaxation of {N} nodes x {K} labels needs {model.n_variables} variables, more than the "
            f"limits max_nodes={max_nodes}, max_variables={max_variables}; use the 'bp' engine for problems "
            "this large (or raise the limits)"
        )
    bar = progress_bar(progress, 3, "lp", leave=False)
    try:
        t_build = time.perf_counter()
        prob, mu = model.build(cp)
        build_seconds = time.perf_counter() - t_build
        _tick(bar)
        t_solve = time.perf_counter()
        # HiGHS prints a banner from C++ on every solve; keep it unless output was asked for
        with quiet_native_stdout(not (solver_options or {}).get("verbose")):
            prob.solve(solver=solver.upper(), **(solver_options or {}))
        solve_call = time.perf_counter() - t_solve
        _tick(bar)
        if prob.status in ("infeasible", "infeasible_inaccurate"):
            raise InfeasibleConstraintsError(
                "the LP relaxation is infeasible: no labelling satisfies the hard (infinite) terms of this energy"
            )
        if prob.status != "optimal":
            raise GraphclustError(f"the LP solver {solver} stopped with status {prob.status!r}, not 'optimal'")
        marginals = np.clip(np.asarray(mu.value, dtype=np.float64), 0.0, 1.0)
        lower_bound = float(prob.value) * model.scale + energy.constant
        compile_seconds = float(getattr(prob, "compilation_time", None) or 0.0)
        stats_time = getattr(prob.solver_stats, "solve_time", None)
        solver_seconds = float(stats_time) if stats_time else max(solve_call - compile_seconds, 0.0)

        labels, best_e, n_tried, polish_kind = _round(energy, marginals, incumbent, n_rounding, polish,
                                                      integrality_tol, rng, callback)
        _tick(bar)
    finally:
        if bar is not None:
            bar.close()
    fractional = float((marginals.max(axis=1) < 1.0 - integrality_tol).mean()) if N else 0.0
    size = prob.size_metrics
    return InferenceResult(
        labels=labels,
        energy=best_e,
        lower_bound=lower_bound,
        iterations=1,
        converged=True,
        seconds=time.perf_counter() - t0,
        history=[best_e],
        marginals=marginals,
        info={
            "gap": best_e - lower_bound,
            "fractional": fractional,
            "build_seconds": build_seconds,
            "compile_seconds": compile_seconds,
            "solver_seconds": solver_seconds,
            "n_variables": int(size.num_scalar_variables),
            "n_constraints": int(size.num_scalar_eq_constr + size.num_scalar_leq_constr),
            "n_roundings": n_tried,
            "polish": polish_kind,
            "status": prob.status,
            "solver": solver.upper(),
            "violated_hard_terms": energy.violated_hard_terms(labels),
        },
    )


# --------------------------------------------------------------------------- model
class _LPModel:
    """The pair terms of an energy sorted into the LP's blocks (arrays only); ``build``
    turns them into a cvxpy problem with one constraint object per block."""

    def __init__(self, energy):
        N, K = energy.n_nodes, energy.n_labels
        self.N, self.K = N, K
        self.unary = energy.unary
        e, w = energy.edges, energy.weights
        te, T, merged = _merge_tables(energy, e, w)
        e, w = e[~merged], w[~merged]
        finite = np.isfinite(w)
        self.attr = (e[finite & (w > 0)], w[finite & (w > 0)])
        self.rep = (e[finite & (w < 0)], -w[finite & (w < 0)])
        self.must = e[np.isposinf(w)]
        self.cannot = e[np.isneginf(w)]
        self.table_edges, self.tables = te, T
        lc = energy.label_costs
        self.label_costs = lc if lc is not None and (lc > 0).any() else None
        # the solver's tolerances are absolute: it sees the costs divided by the largest
        # finite one (the same answer in any units; the bound is multiplied back)
        finite = [a[np.isfinite(a)] for a in (self.unary, self.attr[1], self.rep[1], T,
                                              lc if self.label_costs is not None else np.zeros(0))]
        peak = max((float(np.abs(a).max()) for a in finite if a.size), default=0.0)
        self.scale = peak if 0.0 < peak < np.inf else 1.0
        self.unary = self.unary / self.scale
        self.attr = (self.attr[0], self.attr[1] / self.scale)
        self.rep = (self.rep[0], self.rep[1] / self.scale)
        self.tables = T / self.scale
        if self.label_costs is not None:
            self.label_costs = self.label_costs / self.scale
        self.n_variables = (N * K + (len(self.attr[1]) + len(self.rep[1])) * K + len(te) * K * K
                            + (K if self.label_costs is not None else 0))

    def _incidence(self, pairs, sign):
        """Sparse ``(len(pairs), N)`` matrix with ``1`` at ``i`` and ``sign`` at ``j``."""
        m = len(pairs)
        rows = np.repeat(np.arange(m), 2)
        vals = np.tile([1.0, float(sign)], m)
        return sp.csr_array((vals, (rows, pairs.reshape(-1))), shape=(m, self.N))

    def build(self, cp):
        N, K = self.N, self.K
        mu = cp.Variable((N, K), nonneg=True, name="mu")
        forbidden = np.isinf(self.unary)
        cost = np.where(forbidden, 0.0, self.unary)
        objective = [cp.sum(cp.multiply(cost, mu))]
        cons = [cp.sum(mu, axis=1) == 1]
        if forbidden.any():  # μ ≥ 0, so one row forces every forbidden entry to 0
            cons.append(cp.sum(cp.multiply(forbidden.astype(np.float64), mu)) == 0)
        (ea, wa), (er, wr) = self.attr, self.rep
        if len(wa):
            d = cp.Variable((len(wa), K), nonneg=True, name="d")
            diff = self._incidence(ea, -1) @ mu
            cons += [d >= diff, d >= -diff]
            objective.append((wa / 2.0) @ cp.sum(d, axis=1))
        if len(wr):
            y = cp.Variable((len(wr), K), nonneg=True, name="y")
            cons.append(y >= self._incidence(er, 1) @ mu - 1.0)
            objective.append(wr @ cp.sum(y, axis=1))
        if len(self.must):
            cons.append(self._incidence(self.must, -1) @ mu == 0)
        if len(self.cannot):
            cons.append(self._incidence(self.cannot, 1) @ mu <= 1)
        if len(self.tables):
            nT = len(self.tables)
            P = cp.Variable((nT, K * K), nonneg=True, name="mu_pair")  # P[t, a*K + b]
            rowsum = sp.csr_array(np.kron(np.eye(K), np.ones((K, 1))))  # (K*K, K): sums over b
            colsum = sp.csr_array(np.kron(np.ones((K, 1)), np.eye(K)))  # sums over a
            first = sp.csr_array((np.ones(nT), (np.arange(nT), self.table_edges[:, 0])), shape=(nT, N))
            second = sp.csr_array((np.ones(nT), (np.arange(nT), self.table_edges[:, 1])), shape=(nT, N))
            cons += [P @ rowsum == first @ mu, P @ colsum == second @ mu]
            objective.append(cp.sum(cp.multiply(self.tables.reshape(nT, K * K), P)))
        if self.label_costs is not None:
            u = cp.Variable(K, nonneg=True, name="used")
            cons.append(mu <= np.ones((N, 1)) @ cp.reshape(u, (1, K), order="C"))
            objective.append(self.label_costs @ u)
        return cp.Problem(cp.Minimize(cp.sum(cp.hstack(objective))), cons), mu


# --------------------------------------------------------------------------- rounding
def _round(energy, marginals, incumbent, n_rounding, polish, tol, rng, callback):
    """Best labelling by true energy among the argmax, ``n_rounding`` randomised
    roundings and ``init``, then ICM-polished. Returns ``(labels, energy, n_tried, polish)``."""
    candidates = [marginals.argmax(axis=1).astype(np.int64)]
    integral = bool((marginals.max(axis=1) >= 1.0 - tol).all())
    if not integral:
        candidates += [_kt_round(marginals, rng) for _ in range(n_rounding)]
    if incumbent is not None:
        candidates.append(incumbent)
    best, best_e = None, np.inf
    n_tried = 0
    for it, z in enumerate(candidates):
        e = energy.evaluate(z)
        n_tried += 1
        if e < best_e or best is None:
            best, best_e = z, e
        if callback is not None and callback(it, z, e):
            break
    polish_kind = None
    if polish and not integral:
        polished, polish_kind = _polish(energy, best, rng)
        e = energy.evaluate(polished)
        if e < best_e:
            best, best_e = polished, e
    return best, float(best_e), n_tried, polish_kind


def _kt_round(marginals, rng):
    """Kleinberg-Tardos rounding: repeatedly draw a label ``l`` and a threshold ``α``,
    and give ``l`` to every unassigned node with ``μ_i(l) ≥ α`` (so node ``i`` ends with
    label ``l`` with probability ``μ_i(l)``). Vectorised over nodes."""
    N, K = marginals.shape
    labels = np.full(N, -1, dtype=np.int64)
    open_ = np.ones(N, dtype=bool)
    for _ in range(64 * K + 1000):  # expected O(K log N) rounds; the cap is never the rule
        if not open_.any():
            break
        lab = int(rng.integers(K))
        alpha = rng.uniform()
        hit = open_ & (marginals[:, lab] >= alpha) & (marginals[:, lab] > 0)
        labels[hit] = lab
        open_ &= ~hit
    if open_.any():
        labels[open_] = marginals[open_].argmax(axis=1)
    return labels


def _polish(energy, labels, rng):
    """ICM from ``labels``: a local minimum no worse than the rounded labelling."""
    return np.asarray(icm(energy, init=labels, random_state=rng).labels, dtype=np.int64), "icm"


def _tick(bar):
    if bar is not None:
        bar.update(1)
