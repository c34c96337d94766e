"""Sequential tree-reweighted message passing (TRW-S) with a lower bound.

TRW-S (Kolmogorov 2006) passes min-sum messages like sequential BP, but each node
spreads its belief over the monotonic chains through it: with the nodes in a fixed
order, node ``i`` with ``b_i`` neighbours before it and ``a_i`` after it lies on
``n_i = max(a_i, b_i, 1)`` chains and sends, in a forward pass, to every later
neighbour ``j``

.. math::

    M_{ij}(x_j) = \\min_{x_i} \\big[\\gamma_i \\hat\\theta_i(x_i) - M_{ji}(x_i)
                 + \\theta_{ij}(x_i, x_j)\\big] - c_{ij}, \\qquad
    \\hat\\theta_i = U_i + \\sum_{k \\in N(i)} M_{ki}, \\quad \\gamma_i = 1 / n_i,

(a backward pass is the same in reverse order). Unlike loopy BP it never lets the
dual bound decrease, and every pass yields a proven lower bound (see
:func:`trws`, Notes). Potts messages cost O(K) (the smallest and second-smallest
entries of the cavity), tables O(K²); the passes run in a numba kernel.
"""

import time

import numpy as np
from numba import njit

from .._utils import check_float, check_int, check_random_state, progress_bar
from .base import InferenceResult, register_engine
from .bp import _decode, _decode_given_neighbours, _sweep_order, _term_scale
from .icm import _initial_labels

__all__ = ["trws"]


@njit(cache=True)
def _pass(U, order, split, indptr, nbr, rev, w, tab, tables, msg, gamma, forward, labels, tie, scale):
    """One TRW-S pass in ``order`` (reversed when not ``forward``); returns its bound.

    For each node ``i``: its belief ``θ̂_i`` (unary plus every incoming message);
    ``labels[i]``, the argmin of ``θ̂_i`` with the messages of neighbours visited
    before ``i`` swapped for their pair terms at their fresh labels; then fresh
    messages to the neighbours visited after it, each normalised by its minimum
    ``c``. The bound returned is ``Σ_i (1 − a_i γ_i) min θ̂_i + Σ c`` (``a_i`` later
    neighbours), a lower bound on the energy without its constant (see :func:`trws`).
    """
    n, K = U.shape
    b = np.empty(K)
    c = np.empty(K)
    h = np.empty(K)
    tmp = np.empty(K)
    bound = 0.0
    for step in range(n):
        i = order[step] if forward else order[n - 1 - step]
        lo, hi, mid = indptr[i], indptr[i + 1], split[i]
        e0, e1, l0, l1 = (lo, mid, mid, hi) if forward else (mid, hi, lo, mid)  # earlier, later
        for k in range(K):
            b[k] = U[i, k]
        for p in range(lo, hi):
            for k in range(K):
                b[k] += msg[p, k]
        bmin = np.inf
        for k in range(K):
            bmin = min(bmin, b[k])
            c[k] = b[k]
        g = gamma[i]
        bound += (1.0 - (l1 - l0) * g) * bmin  # the chains that end at i
        labels[i] = _decode_given_neighbours(c, labels, nbr, tab, w, tables, msg, e0, e1, tie, scale)
        for p in range(l0, l1):
            q = rev[p]  # the message into nbr[p] from i
            h1 = np.inf
            for k in range(K):
                v = g * b[k] - msg[p, k]
                h[k] = v
                h1 = min(h1, v)
            t = tab[q]
            cw = w[q]
            if t >= 0:  # general table, O(K^2)
                mn = np.inf
                for l in range(K):
                    best = np.inf
                    for k in range(K):
                        best = min(best, tables[t, k, l] + h[k])
                    tmp[l] = best
                    mn = min(mn, best)
                for k in range(K):
                    msg[q, k] = tmp[k] - mn
                bound += mn
            elif cw > 0:  # attractive Potts: min(h - h1, w), minimum h1
                for k in range(K):
                    msg[q, k] = min(h[k] - h1, cw)
                bound += h1
            else:  # repulsive Potts: the sender's favourite label pays min(|w|, h2 - h1)
                a1 = 0
                while h[a1] > h1:
                    a1 += 1
                h2 = np.inf
                for k in range(K):
                    if k != a1:
                        h2 = min(h2, h[k])
                for k in range(K):
                    msg[q, k] = min(h2 - h1, -cw) if k == a1 else 0.0
                bound += h1
    return bound


@register_engine("trws", bound=True)
def trws(energy, *, max_iter=100, tol=1e-6, init=None, random_state=None, callback=None, progress=False):
    """Sequential tree-reweighted message passing: a labelling and a lower bound.

    Alternates forward and backward passes of TRW-S messages over every pair term of
    ``energy`` (signed Potts terms in O(K) per message, general tables in O(K²)),
    decodes a labelling in every pass, and returns the best labelling seen, scored by
    :meth:`~graphclust.energy.Energy.evaluate`, with the best dual bound computed.

    Parameters
    ----------
    energy : Energy
    max_iter : int, default=100
        Iteration cap; one iteration is a forward and a backward pass.
    tol : float, default=1e-6
        Relative tolerance of both stopping rules: the gap ``energy − lower_bound``
        is at most ``tol · max(|energy|, |lower_bound|)`` (the labelling is optimal to
        that precision), or the bound rose by at most that much in the last
        iteration (TRW-S has reached a fixed point, or crawls). Both are unchanged
        when the energy is multiplied by a constant.
    init : array-like of shape (n_nodes,) or None, default=None
        An initial incumbent, returned if no decoded labelling beats it. Messages
        always start at zero. Default: the unary argmin.
    random_state : None, int or numpy.random.Generator, default=None
        Accepted for the engine convention; TRW-S is deterministic.
    callback : callable or None, default=None
        ``callback(iteration, labels, energy_value)`` after every iteration with the
        best labelling of that iteration; returning ``True`` stops the run.
    progress : bool, default=False
        Show a tqdm bar over the iterations.

    Returns
    -------
    InferenceResult
        ``labels`` the best labelling seen (never worse than ``init``), ``energy``
        its ``energy.evaluate`` value, ``lower_bound`` the best TRW-S bound (plus
        ``energy.constant``; ``inf`` when the bound proves that no labelling
        satisfies the hard terms), ``history`` the energy decoded at each iteration,
        ``marginals`` the final beliefs minus their row minimum. ``info`` holds
        ``"gap"``, ``"relative_gap"``, ``"bounds"`` (the bound after each
        iteration), ``"stop"`` (``"gap"``, ``"bound"``, ``"max_iter"`` or
        ``"callback"``), ``"best_iteration"``, ``"violated_hard_terms"``,
        ``"hard_terms"`` (the bound is that of the finite surrogate, see Notes) and
        ``"infeasible"``.

    Raises
    ------
    InvalidParameterError
        For a bad ``max_iter``, ``tol``, ``init`` or ``random_state``.

    See Also
    --------
    graphclust.inference.bp.belief_propagation : loopy BP, no bound, often as good.
    graphclust.inference.lp.lp_relaxation : the LP bound TRW-S approaches, exactly solved.

    Notes
    -----
    **The bound.** Messages reparametrise the energy: with
    ``θ̂_i = U_i + Σ_k M_ki`` and edge terms ``θ_ij − M_ji − M_ij`` the energy of
    every labelling is unchanged. Split each node's ``θ̂_i`` equally over the
    ``n_i`` monotonic chains through it (pairing edges to earlier and to later
    neighbours; each edge in one chain) and the sum of the chains' minima is a lower
    bound on the minimum. At the end of a pass the messages just sent make every
    chain's dynamic programme trivial, so its minimum is read off: the bound is
    ``Σ_i (1 − a_i/n_i) min θ̂_i + Σ c`` summed during the pass (``a_i`` the
    neighbours visited after ``i``, ``c`` the normalising constants). It is a valid
    bound at every pass, whatever the messages, not only at convergence; the value
    reported is the largest one, never above the energy returned. It is at most the
    LP relaxation's value and equals it at TRW-S's optimal fixed points; on trees and
    on two-label attractive energies it reaches the minimum.

    **Hard terms.** Messages use the finite surrogate in which ``±inf`` becomes a
    penalty larger than twice what all finite terms can change, and ``+inf`` unaries
    the node's worst finite cost plus it. The surrogate is never above the energy,
    so its bound is a valid bound for the energy too; where a hard term must bend
    (the relaxation is loose, e.g. an odd cycle of hard cannot-links with two
    labels) the bound stays far below the feasible energies and says little
    (``info["hard_terms"]`` flags that the bound is the surrogate's). When the bound
    exceeds every value a labelling satisfying the hard terms could have, no such
    labelling exists: the bound is reported as ``inf`` and ``info["infeasible"]``
    is True. Label costs are not pairwise and stay out of the messages (they are
    non-negative, so the bound without them stays valid); decoded labellings are
    scored with them.

    **Decoding.** In each pass node ``i`` takes the best label given the labels
    just decided for the neighbours visited before it and the messages of the
    others. On a forest the node order is breadth-first, each node has at most one
    earlier neighbour, and the decoding is an exact minimum once messages have
    converged (ties included). Otherwise nodes keep their index order.

    Cost: O(iterations · (n_edges · K + n_tables · K²)) time, O(n_edges · K) memory.

    References
    ----------
    .. [1] Kolmogorov, V. (2006). Convergent tree-reweighted message passing for
       energy minimization. IEEE TPAMI 28(10), 1568-1583. doi:10.1109/TPAMI.2006.200
    .. [2] Wainwright, M. J., Jaakkola, T. S. & Willsky, A. S. (2005). MAP estimation via
       agreement on trees: message-passing and linear programming. IEEE Trans. Inf.
       Theory 51(11), 3697-3717. doi:10.1109/TIT.2005.856938

    Examples
    --------
    A 4-cycle with one cannot-link: the bound certifies the labelling.

    >>> import numpy as np
    >>> from graphclust.energy import Energy
    >>> U = np.array([[0.0, 2.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    >>> E = Energy(U, edges=[(0, 1), (1, 2), (2, 3), (3, 0)], weights=[1.0, 1.0, 1.0, -0.5])
    >>> res = trws(E)
    >>> res.labels, res.energy, res.lower_bound, res.info["stop"]
    (array([0, 0, 0, 0]), 1.5, 1.5, 'gap')
    """
    t0 = time.perf_counter()
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0.0)
    check_random_state(random_state)
    best = _initial_labels(energy, init)
    n = energy.n_nodes

    scale, penalty, _ = _term_scale(energy)
    hard = energy.has_hard_terms
    fin = energy.finite(penalty) if hard else energy
    U = np.ascontiguousarray(fin.unary, dtype=np.float64)
    order, _, g = _sweep_order(fin)
    before = g.split - g.indptr[:-1]
    after = g.indptr[1:] - g.split
    gamma = 1.0 / np.maximum(np.maximum(before, after), 1)
    msg = np.zeros((g.n_directed, energy.n_labels))

    def score(z):  # true energy; infeasible labellings ranked among themselves by the surrogate
        e = energy.evaluate(z)
        return e, (fin.evaluate(z) if e == np.inf else e)

    best_e, best_key = score(best)
    best_it = 0
    tie = 10.0 * tol
    labels = U.argmin(axis=1).astype(np.int64)
    lb = -np.inf
    bounds, history = [], []
    stop = "max_iter"
    bar = progress_bar(progress, max_iter, "trws", leave=False)
    it = 0
    try:
        for it in range(1, max_iter + 1):
            lb_prev = lb
            it_best = None
            for forward in (True, False):
                pass_lb = _pass(U, order, g.split, g.indptr, g.nbr, g.rev, g.w, g.tab, g.tables, msg, gamma,
                                forward, labels, tie, scale) + energy.constant
                lb = max(lb, pass_lb)
                e, key = score(labels)
                if it_best is None or key < it_best[1]:
                    it_best = (e, key, labels.copy())
            e, key, z = it_best
            history.append(e)
            bounds.append(lb)
            if key < best_key:
                best, best_e, best_key, best_it = z, e, key, it
            if bar is not None:
                bar.update(1)
                bar.set_postfix(energy=best_e, bound=lb, refresh=False)
            denom = max(abs(best_e), abs(lb)) or scale
            if np.isfinite(best_e) and best_e - lb <= tol * denom:
                stop = "gap"
            elif lb - lb_prev <= tol * max(abs(lb), scale * 1e-12):
                stop = "bound"
            if callback is not None and callback(it, z, e) and stop == "max_iter":
                stop = "callback"
            if stop != "max_iter":
                break
    finally:
        if bar is not None:
            bar.close()
    infeasible = False
    if hard and lb > _largest_feasible_energy(energy):
        lb, infeasible = np.inf, True  # no labelling satisfies every hard term
    elif np.isfinite(best_e):
        lb = min(lb, best_e)  # the minimum is at most best_e: anything above is rounding
    beliefs = np.empty_like(U)
    _decode(U, g.indptr, msg, beliefs)
    gap = best_e - lb if np.isfinite(lb) else np.nan
    rel = gap / max(abs(best_e), abs(lb)) if np.isfinite(gap) and max(abs(best_e), abs(lb)) > 0 else 0.0
    return InferenceResult(
        labels=np.asarray(best, dtype=np.int64),
        energy=float(best_e),
        lower_bound=float(lb),
        iterations=int(it),
        converged=stop in ("gap", "bound"),
        seconds=time.perf_counter() - t0,
        history=history,
        marginals=beliefs - beliefs.min(axis=1, keepdims=True),
        info={
            "gap": float(gap),
            "relative_gap": float(rel),
            "bounds": bounds,
            "stop": stop,
            "best_iteration": best_it,
            "violated_hard_terms": energy.violated_hard_terms(best),
            "hard_terms": hard,
            "infeasible": infeasible,
        },
    )


def _largest_feasible_energy(energy):
    """An upper bound on the energy of any labelling that satisfies every hard term:
    each finite term at its worst."""
    U = energy.unary
    total = energy.constant + np.where(np.isinf(U), -np.inf, U).max(axis=1).sum()
    w = energy.weights[np.isfinite(energy.weights)]
    total += np.abs(w).sum()
    if len(energy.tables):
        total += energy.tables.max(axis=(1, 2)).sum()
    if energy.label_costs is not None:
        total += energy.label_costs.sum()
    return float(total)
