"""Loopy min-sum belief propagation on the signed Potts energy.

Max-product in the negative-log domain: every number is an energy, nothing is
exponentiated. For a pairwise model the factor and variable messages fold into one
message per edge direction,

.. math::

    h_{i \\setminus j}(a) = U_i(a) + \\sum_{k \\in N(i), k \\ne j} m_{k \\to i}(a), \\qquad
    m_{i \\to j}(b) = \\min_a \\big[\\theta_{ij}(a, b) + h_{i \\setminus j}(a)\\big],

and the Potts structure makes the minimum cost O(K) instead of O(K²): for an attractive
weight ``w``, ``m(b) = min(h(b), min_a h(a) + w)``; for a repulsive ``|w|``,
``m(b) = min(h(b) + |w|, min_{a≠b} h(a))``, read off the smallest and second-smallest
entries ``h1 ≤ h2`` of ``h``. Normalised to minimum 0 these are
``min(h(b) − h1, w)`` and, for a repulsive term, ``0`` everywhere except
``min(|w|, h2 − h1)`` on the sender's favourite label. General pair tables cost O(K²)
per message. Messages live in one ``(2·n_terms, K)`` array in CSR order of the
receiving node and are updated by a numba kernel.
"""

import time

import numpy as np
from numba import njit

from .._utils import check_float, check_int, check_random_state, progress_bar
from ..errors import InvalidParameterError
from .base import InferenceResult, register_engine
from .icm import _initial_labels

__all__ = ["belief_propagation"]

_SCHEDULES = ("flooding", "sequential")
#: coupling above which undamped sequential BP was seen to lock into one label
#: (docs/benchmarks/trws.md, section 3): "auto" damps beyond it
_STRONG_COUPLING = 4.0


# --------------------------------------------------------------------------- structure
class _Directed:
    """Both directions of every pair term, grouped by receiving node (CSR).

    Position ``p`` in row ``i`` holds the message *into* ``i`` from ``nbr[p]``; the
    message into ``nbr[p]`` from ``i`` sits at ``rev[p]``. Potts positions carry their
    signed weight ``w[p]`` and ``tab[p] = -1``; table positions carry ``w[p] = 0`` and
    ``tab[p]`` indexes ``tables[tab[p]]``, oriented so that
    ``message[p](l_i) = min_{l_j} tables[tab[p]][l_j, l_i] + h_j(l_j)``.

    Within a row, neighbours are sorted by ``rank`` (their position in the sweep order;
    default their index), so the neighbours visited before ``i`` by a forward sweep
    are ``split[i]`` positions ``indptr[i]:split[i]``, the rest come after.
    """

    def __init__(self, energy, rank=None):
        n, K = energy.n_nodes, energy.n_labels
        pe, pw = energy.edges, energy.weights
        te, T, merged = _merge_tables(energy, pe, pw)
        pe, pw = pe[~merged], pw[~merged]  # those Potts terms now live in a table
        m, t = len(pe), len(te)
        # undirected term list: Potts first, then tables
        a = np.concatenate([pe[:, 0], te[:, 0]])
        b = np.concatenate([pe[:, 1], te[:, 1]])
        # directed position 2u   : message into b from a ; 2u+1 : into a from b
        recv = np.stack([b, a], axis=1).ravel()
        send = np.stack([a, b], axis=1).ravel()
        w = np.repeat(np.concatenate([pw, np.zeros(t)]), 2)
        tab_u = np.concatenate([np.full(m, -1, np.int64), np.arange(t, dtype=np.int64)])
        # oriented tables: into b from a uses T[a_lbl, b_lbl] = T ; into a from b uses T.T
        oriented = np.empty((2 * t, K, K))
        oriented[0::2] = T
        oriented[1::2] = np.transpose(T, (0, 2, 1))
        tab = np.where(np.repeat(tab_u, 2) >= 0, 2 * np.repeat(tab_u, 2) + np.tile([0, 1], m + t), -1)
        key = send if rank is None else rank[send]
        order = np.lexsort((key, recv))
        inv = np.empty_like(order)
        inv[order] = np.arange(len(order))
        partner = np.arange(len(order)) ^ 1  # 2u <-> 2u+1
        self.indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(recv, minlength=n), out=self.indptr[1:])
        self.recv = recv[order].astype(np.int64)
        self.nbr = send[order].astype(np.int64)
        self.rev = inv[partner[order]].astype(np.int64)
        self.w = w[order]
        self.tab = tab[order].astype(np.int64)
        self.tables = oriented
        self.n_directed = len(order)
        rk = np.arange(n) if rank is None else rank
        before = np.bincount(recv[rk[send] < rk[recv]], minlength=n)
        self.split = (self.indptr[:-1] + before).astype(np.int64)


def _merge_tables(energy, pe, pw):
    """Sum the tables, and the finite Potts terms, that share a node pair into one table
    per pair, oriented ``i < j``, so that BP sees no parallel factors (2-cycles).

    Returns ``(table_edges, tables, merged)`` where ``merged`` flags the Potts terms
    (rows of ``pe``) now inside a table. Hard Potts terms are never merged.
    """
    K = energy.n_labels
    if not len(energy.tables):
        return np.empty((0, 2), np.int64), np.empty((0, K, K)), np.zeros(len(pe), bool)
    n = energy.n_nodes
    te, T = energy.table_edges, energy.tables
    flip = te[:, 0] > te[:, 1]
    T = np.where(flip[:, None, None], np.transpose(T, (0, 2, 1)), T)
    lo, hi = np.minimum(te[:, 0], te[:, 1]), np.maximum(te[:, 0], te[:, 1])
    uniq, inv = np.unique(lo * n + hi, return_inverse=True)
    merged = np.zeros((len(uniq), K, K))
    np.add.at(merged, inv, T)
    hit = np.isin(pe[:, 0] * n + pe[:, 1], uniq) & np.isfinite(pw)
    if hit.any():
        slot = np.searchsorted(uniq, pe[hit, 0] * n + pe[hit, 1])
        wh = pw[hit][:, None, None]
        eye = np.eye(K)[None]
        np.add.at(merged, slot, np.where(wh > 0, wh * (1 - eye), -wh * eye))
    edges = np.stack([uniq // n, uniq % n], axis=1).astype(np.int64)
    return edges, merged, hit


# --------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _decode_given_neighbours(c, labels, nbr, tab, w, tables, msg, e0, e1, tie, scale):  # pragma: no cover
    """The label of a node whose belief is in ``c``, conditioned on the neighbours
    already decoded (slots ``e0..e1`` of its adjacency): each such neighbour's message
    is replaced by its pair term at the neighbour's label, so on a forest the decoded
    labelling is a joint minimum. BP and TRW-S decode with it. ``c`` is overwritten."""
    K = len(c)
    for p in range(e0, e1):
        lj = labels[nbr[p]]
        t = tab[p]
        cw = w[p]
        if t >= 0:
            for k in range(K):
                c[k] += tables[t, lj, k] - msg[p, k]
        elif cw > 0:
            for k in range(K):
                c[k] += cw - msg[p, k]
            c[lj] -= cw
        else:
            for k in range(K):
                c[k] -= msg[p, k]
            c[lj] -= cw
    return _argmin_tie(c, tie, scale)


@njit(cache=True)
def _sweep(U, order, split, indptr, nbr, rev, w, tab, tables, msg, out, damping, forward, decode, labels, tie,
           scale):
    """Update every message once; returns the largest change of a message.

    Nodes are visited in ``order`` (reversed when ``forward`` is False); the neighbours
    of ``i`` visited before it by a forward sweep are ``nbr[indptr[i]:split[i]]`` (see
    :class:`_Directed`). ``out is msg``: a sequential (Gauss-Seidel) sweep, each
    node sending fresh messages from its current belief. Otherwise a parallel
    (flooding) update reading ``msg`` and writing ``out``. Messages are normalised to
    minimum 0 before damping. (One flat loop on purpose: numba ran the same code split
    into an inlined helper three times slower.)

    ``decode``: 0 leaves ``labels`` alone; 1 sets ``labels[i]`` to the argmin of
    ``i``'s belief when it sends its messages; 2 conditions that on the neighbours
    visited before ``i`` in this sweep (their pair terms at their fresh labels replace
    their messages), which makes a forward sweep's labelling an exact minimum on a
    forest visited in BFS order once messages have converged, ties included. Ties: see
    ``_argmin_tie``. Nodes without pair terms are skipped.
    """
    n, K = U.shape
    b = np.empty(K)
    c = np.empty(K)
    h = np.empty(K)
    tmp = np.empty(K)
    keep = 1.0 - damping
    delta = 0.0
    for step in range(n):
        i = order[step] if forward else order[n - 1 - step]
        lo, hi = indptr[i], indptr[i + 1]
        if lo == hi:
            continue
        for k in range(K):
            b[k] = U[i, k]
        for p in range(lo, hi):
            for k in range(K):
                b[k] += msg[p, k]
        if decode == 2:
            # the neighbours visited before i enter by their pair term at their fresh label
            for k in range(K):
                c[k] = b[k]
            e0, e1 = (lo, split[i]) if forward else (split[i], hi)
            labels[i] = _decode_given_neighbours(c, labels, nbr, tab, w, tables, msg, e0, e1, tie, scale)
        elif decode == 1:
            labels[i] = _argmin_tie(b, tie, scale)
        for p in range(lo, hi):
            q = rev[p]  # the message into nbr[p] from i
            h1 = np.inf
            for k in range(K):
                v = b[k] - msg[p, k]  # cavity: i's belief without what nbr[p] told it
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
                    val = keep * (tmp[k] - mn) + damping * msg[q, k]
                    delta = max(delta, abs(val - msg[q, k]))
                    out[q, k] = val
            elif cw > 0:  # attractive Potts: min(h - h1, w)
                for k in range(K):
                    val = keep * min(h[k] - h1, cw) + damping * msg[q, k]
                    delta = max(delta, abs(val - msg[q, k]))
                    out[q, k] = val
            else:  # repulsive Potts: only the sender's favourite label pays min(|w|, h2 - h1)
                a1 = 0
                while h[a1] > h1:
                    a1 += 1
                h2 = np.inf
                for k in range(K):
                    if k != a1:
                        h2 = min(h2, h[k])
                for k in range(K):
                    nv = min(h2 - h1, -cw) if k == a1 else 0.0
                    val = keep * nv + damping * msg[q, k]
                    delta = max(delta, abs(val - msg[q, k]))
                    out[q, k] = val
    return delta


@njit(cache=True)
def _argmin_tie(b, tie, scale):
    """The lowest label whose value is within ``tie·(scale + |min|)`` of the minimum
    (``scale``: the energy's term scale, so the rule is unchanged when the energy is
    multiplied by a constant)."""
    mn = np.inf
    for k in range(b.shape[0]):
        mn = min(mn, b[k])
    bound = mn + tie * (scale + abs(mn))
    for k in range(b.shape[0]):
        if b[k] <= bound:
            return k
    return 0


@njit(cache=True)
def _decode(U, indptr, msg, beliefs):
    """Beliefs ``U + Σ incoming``."""
    n, K = U.shape
    for i in range(n):
        for k in range(K):
            v = U[i, k]
            for p in range(indptr[i], indptr[i + 1]):
                v += msg[p, k]
            beliefs[i, k] = v


@njit(cache=True)
def _conditional_decode(U, order, split, indptr, nbr, w, tab, tables, msg, labels, tie, scale):
    """Decode nodes in ``order``, each conditioned on the neighbours decoded before it
    (their pair terms at their labels) and on the messages of the others: the decoding
    of a forward sweep without the message updates."""
    n, K = U.shape
    c = np.empty(K)
    for step in range(n):
        i = order[step]
        lo, hi = indptr[i], indptr[i + 1]
        if lo == hi:
            continue
        for k in range(K):
            c[k] = U[i, k]
        for p in range(split[i], hi):
            for k in range(K):
                c[k] += msg[p, k]
        for p in range(lo, split[i]):
            lj = labels[nbr[p]]
            t = tab[p]
            cw = w[p]
            if t >= 0:
                for k in range(K):
                    c[k] += tables[t, lj, k]
            elif cw > 0:
                for k in range(K):
                    c[k] += cw
                c[lj] -= cw
            else:
                c[lj] -= cw
        labels[i] = _argmin_tie(c, tie, scale)


@njit(cache=True)
def _bfs_order(indptr, nbr, n):
    """Breadth-first order of every connected component (roots in index order)."""
    order = np.empty(n, np.int64)
    seen = np.zeros(n, np.bool_)
    head = tail = 0
    for s in range(n):
        if seen[s]:
            continue
        seen[s] = True
        order[tail] = s
        tail += 1
        while head < tail:
            i = order[head]
            head += 1
            for p in range(indptr[i], indptr[i + 1]):
                j = nbr[p]
                if not seen[j]:
                    seen[j] = True
                    order[tail] = j
                    tail += 1
    return order


def _sweep_order(energy):
    """``(order, rank, directed)``: the sweep order is breadth-first when the pair terms
    form a forest (each node then has at most one neighbour before it, which
    conditional decoding needs to be exact), index order otherwise (the best memory
    locality on grids); ``directed`` is the :class:`_Directed` structure sorted for it."""
    n = energy.n_nodes
    g = _Directed(energy)
    n_terms = g.n_directed // 2
    if 0 < n_terms < n:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components

        A = sp.csr_array((np.ones(g.n_directed), g.nbr, g.indptr), shape=(n, n))
        n_comp = connected_components(A, directed=False)[0]
        if n_terms == n - n_comp:  # acyclic, and no parallel terms (they would count twice)
            order = _bfs_order(g.indptr, g.nbr, n)
            rank = np.empty(n, np.int64)
            rank[order] = np.arange(n)
            return order, rank, _Directed(energy, rank)
    ident = np.arange(n, dtype=np.int64)
    return ident, ident, g


@njit(cache=True)
def _finite_spread(U):
    """Each row's largest minus smallest finite entry (0 for fewer than two)."""
    n, K = U.shape
    out = np.zeros(n)
    for i in range(n):
        lo, hi = np.inf, -np.inf
        for k in range(K):
            v = U[i, k]
            if v < np.inf:
                lo = min(lo, v)
                hi = max(hi, v)
        if hi > lo:
            out[i] = hi - lo
    return out


def _coupling(energy, spread):
    """Median over nodes with pair terms of ``Σ_j |w_ij|`` over the node's unary spread
    ``spread`` (``inf`` where the unaries tie): how strongly neighbours outvote a
    node's own data. Tables count by their range."""
    n = energy.n_nodes
    strength = np.zeros(n)
    for e, v in ((energy.edges, np.abs(energy.weights)),
                 (energy.table_edges, np.ptp(energy.tables, axis=(1, 2)) if len(energy.tables) else None)):
        if len(e):
            strength += np.bincount(e.ravel(), np.repeat(v, 2), minlength=n)
    has = strength > 0
    if not has.any():
        return 0.0
    with np.errstate(divide="ignore"):
        return float(np.median(strength[has] / spread[has]))  # x / 0 = inf: tied unaries


def _term_scale(energy):
    """``(scale, penalty, spread)`` of the finite terms, the first two proportional to
    the energy.

    ``spread`` is each node's range of finite unary costs; ``scale`` the largest
    finite pair weight or table range (the size a message can reach), else the
    largest spread, else 1; ``penalty`` replaces ``±inf`` in messages: twice the sum
    of every finite term's range plus ``scale``, so a violated hard term outweighs
    anything the finite terms can change (as in :meth:`Energy.hard_penalty`, but
    without its absolute ``1 +``).
    """
    spread = _finite_spread(energy.unary)
    w = energy.weights
    if not np.isfinite(w).all():
        w = w[np.isfinite(w)]
    w = np.abs(w)
    trange = np.ptp(energy.tables, axis=(1, 2)) if len(energy.tables) else np.empty(0)
    pair = max(w.max(initial=0.0), trange.max(initial=0.0))
    scale = pair if pair > 0 else (spread.max(initial=0.0) or 1.0)
    total = spread.sum() + w.sum() + trange.sum()
    if energy.label_costs is not None:
        total += energy.label_costs.sum()
    return float(scale), float(2.0 * total + scale), spread


# --------------------------------------------------------------------------- engine
@register_engine("bp")
def belief_propagation(energy, *, damping="auto", max_iter=200, tol=1e-6, schedule="sequential", init=None,
                       random_state=None, callback=None, progress=False):
    """Loopy min-sum belief propagation with anytime decoding.

    Passes min-sum messages over every pair term of ``energy`` (signed Potts terms in
    O(K) per message, general tables in O(K²)), decodes the argmin of the beliefs after
    every iteration and returns the best labelling seen, scored by
    :meth:`~graphclust.energy.Energy.evaluate`.

    Parameters
    ----------
    energy : Energy
    damping : float or "auto", default="auto"
        Weight of the old message in ``new = damping·old + (1 − damping)·update``;
        in ``[0, 1)``. ``"auto"`` uses 0 when every pair term is attractive and the
        coupling is moderate (the median over nodes of ``Σ_j |w_ij|`` over the node's
        unary spread is at most 4), where undamped sequential BP reaches the same
        energies in 2-5 times fewer iterations; otherwise 0.5: with repulsive terms or
        tables (frustrated cycles) and with strong smoothness, where undamped BP locks
        into one label (+28 % to +60 % energy on the benchmarks, against < 1.5 % damped;
        ``docs/benchmarks/trws.md``). The value used is ``info["damping"]``.
    max_iter : int, default=200
        Iteration cap. One iteration updates every message once (``"sequential"``:
        one forward or backward sweep over the nodes).
    tol : float, default=1e-6
        Convergence when the largest change of a (normalised) message is at most
        ``tol`` times the largest finite pair weight (or table range): relative, so
        multiplying the energy by a constant changes neither the labels nor the
        iterations.
    schedule : {"sequential", "flooding"}, default="sequential"
        ``"sequential"`` sweeps the nodes alternately forward and backward, each node
        sending fresh messages from its current belief at once (Gauss-Seidel);
        ``"flooding"`` updates all messages in parallel from the previous iteration's.
        Both are numba kernels; the sequential schedule reached the same energies in
        fewer iterations in our measurements (``docs/benchmarks/inference.md``).
    init : array-like of shape (n_nodes,) or None, default=None
        An initial incumbent: BP returns it if no decoded labelling beats it. Messages
        always start at zero. Default: the unary argmin (ties to the lowest label).
    random_state : None, int or numpy.random.Generator, default=None
        Accepted for the engine convention; BP is deterministic and does not use it.
    callback : callable or None, default=None
        ``callback(iteration, labels, energy_value)`` after every iteration with the
        labelling decoded there; returning ``True`` stops the run.
    progress : bool, default=False
        Show a tqdm bar over the iterations.

    Returns
    -------
    InferenceResult
        ``labels`` is the best decoded labelling, ``energy`` its
        ``energy.evaluate`` value, ``marginals`` the normalised min-marginals
        (beliefs minus their row minimum) of the last iteration, ``history`` the
        energy of the labelling decoded at each iteration,
        ``info`` holds ``"schedule"``, ``"damping"`` (the value used),
        ``"delta"`` (last largest message change), ``"best_iteration"``,
        ``"violated_hard_terms"`` and ``"stopped_by_callback"``.

    Raises
    ------
    InvalidParameterError
        For a bad ``damping``, ``max_iter``, ``tol``, ``schedule`` or ``init``.

    See Also
    --------
    graphclust.inference.lp.lp_relaxation : a lower bound and a rounded labelling.
    graphclust.inference.trws.trws : TRW-S, the same messages reweighted, with a bound.

    Notes
    -----
    Hard (``±inf``) terms are replaced for message passing (:meth:`Energy.finite`)
    by a penalty of twice the sum of every finite term's range plus the largest term
    (proportional to the energy, unlike :meth:`Energy.hard_penalty`), so messages
    never hold NaN and a labelling that violates a hard term never looks cheaper
    than one that does not; the returned
    energy is that of the original energy (``inf`` if a hard term is still violated,
    counted in ``info["violated_hard_terms"]``). Label costs are not part of the
    messages (they are not pairwise); the decoded labellings are nevertheless scored
    with them. When every labelling seen violates a hard term, the one that is
    cheapest under the finite surrogate (fewest, cheapest violations) is returned.
    Parallel tables on one node pair (and Potts terms on a pair that also has a table)
    are merged into one table, so BP sees no 2-cycles. Nodes without pair terms keep
    their unary argmin. Beliefs within ``10·tol·(s + |min|)`` of the minimum (``s``
    the largest finite pair weight) count as tied and the lowest label wins.

    Decoding: each forward sweep (and the final messages) decodes node ``i`` from
    its unary, the messages of the neighbours not yet decoded and the pair terms of
    those already decoded at their labels; backward sweeps (and the final messages,
    as a second candidate) take the plain argmin of each belief. A node's min-marginals alone can tie
    between labels that its neighbours' choices make unequal (two identical nodes
    with a hard cannot-link both tie between 0 and 1); conditioning breaks such ties
    consistently. On a forest the nodes are swept in breadth-first order, so every
    node is decoded after exactly its parent, and the labelling decoded from
    converged messages is an exact minimum, ties and hard terms included (feasible
    whenever a feasible labelling exists). On loopy graphs convergence is not
    guaranteed: the best labelling seen (never worse than ``init``) is returned,
    with ``converged=False`` after ``max_iter`` iterations.

    Cost: O(iterations · (n_edges · K + n_tables · K²)) time, O(n_edges · K) memory.

    References
    ----------
    .. [1] Felzenszwalb, P. F. & Huttenlocher, D. P. (2006). Efficient belief propagation
       for early vision. IJCV 70(1), 41-54. doi:10.1007/s11263-006-7899-4

    Examples
    --------
    A 4-node chain whose ends prefer label 1 and whose middle prefers label 0, with a
    must-link pulling everything together:

    >>> import numpy as np
    >>> from graphclust.energy import Energy
    >>> U = np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
    >>> E = Energy(U, edges=[(0, 1), (1, 2), (2, 3)], weights=[1.5, 1.5, 1.5])
    >>> res = belief_propagation(E, random_state=0)
    >>> res.labels, res.energy, res.converged
    (array([1, 1, 1, 1]), 2.0, True)
    """
    t0 = time.perf_counter()
    scale, penalty, spread = _term_scale(energy)
    hard = energy.has_hard_terms
    fin = energy.finite(penalty) if hard else energy
    if isinstance(damping, str) and damping == "auto":
        # hard must-links are the strongest coupling there is
        strong = hard or _coupling(energy, spread) > _STRONG_COUPLING
        damping = 0.0 if energy.is_attractive and not strong else 0.5
    damping = check_float(damping, "damping", low=0.0)
    if damping >= 1.0:
        raise InvalidParameterError(f"damping must be in [0, 1), got {damping}")
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0.0)
    if schedule not in _SCHEDULES:
        raise InvalidParameterError(f"schedule must be one of {_SCHEDULES}, got {schedule!r}")
    check_random_state(random_state)
    best = _initial_labels(energy, init)

    U = np.ascontiguousarray(fin.unary, dtype=np.float64)
    order, _, g = _sweep_order(fin)
    msg = np.zeros((g.n_directed, energy.n_labels))

    # rank labellings by true energy, infeasible ones among themselves by the surrogate
    def score(z):
        e = energy.evaluate(z)
        return e, (fin.evaluate(z) if e == np.inf else e)

    best_e, best_key = score(best)
    best_it = 0
    tie = 10.0 * tol  # beliefs this close count as tied (damped messages converge from one side)
    labels = U.argmin(axis=1).astype(np.int64)  # nodes without pair terms keep this
    history = []
    converged = stopped = False
    delta = 0.0
    prev, prev_e, prev_key = None, None, None
    flooding = schedule == "flooding"
    spare = np.zeros_like(msg) if flooding else msg
    bar = progress_bar(progress, max_iter, "bp", leave=False)
    it = 0
    try:
        for it in range(1, max_iter + 1):
            if g.n_directed == 0:
                converged, it = True, 0
                break
            # sequential: forward sweeps decode conditioned on the nodes before (exact on
            # forests), backward sweeps by the plain belief argmin: both are candidates
            forward = flooding or it % 2 == 1
            delta = _sweep(U, order, g.split, g.indptr, g.nbr, g.rev, g.w, g.tab, g.tables, msg, spare, damping,
                           forward, 2 if forward and not flooding else 1, labels, tie, scale)
            if flooding:
                msg, spare = spare, msg
            if prev is None or not np.array_equal(labels, prev):
                prev_e, prev_key = score(labels)
            prev = labels.copy()
            history.append(prev_e)
            if prev_key < best_key:
                best, best_e, best_key, best_it = prev, prev_e, prev_key, it
            if bar is not None:
                bar.update(1)
                bar.set_postfix(energy=best_e, delta=delta, refresh=False)
            converged = delta <= tol * scale  # relative to the terms: unchanged by scaling the energy
            if callback is not None and callback(it, prev, prev_e):
                stopped = True
            if converged or stopped:
                break
    finally:
        if bar is not None:
            bar.close()
    beliefs = np.empty_like(U)
    _decode(U, g.indptr, msg, beliefs)
    # the final messages' own decodings: plain argmin, and forward-conditioned (exact on
    # a forest)
    plain = np.where(np.diff(g.indptr) > 0, beliefs.argmin(axis=1), labels)
    _conditional_decode(U, order, g.split, g.indptr, g.nbr, g.w, g.tab, g.tables, msg, labels, tie, scale)
    for z in (plain, labels):
        if prev is None or not np.array_equal(z, prev):
            e, key = score(z)
            if key < best_key:
                best, best_e, best_key, best_it = z, e, key, it
    marginals = beliefs - beliefs.min(axis=1, keepdims=True)
    return InferenceResult(
        labels=np.asarray(best, dtype=np.int64),
        energy=float(best_e),
        lower_bound=None,
        iterations=int(it),
        converged=bool(converged),
        seconds=time.perf_counter() - t0,
        history=history,
        marginals=marginals,
        info={
            "schedule": schedule,
            "damping": damping,
            "delta": float(delta),
            "best_iteration": best_it,
            "violated_hard_terms": energy.violated_hard_terms(best),
            "stopped_by_callback": stopped,
        },
    )
