"""Exact minimisation: brute-force enumeration for tiny energies, s–t minimum cut for
binary attractive ones, and :func:`exact` choosing between them.

These are the oracles every other engine is measured against, and engines in their
own right: :func:`mincut` solves a 256×256 binary Potts grid in well under a second.
"""

import time

import numpy as np
from numba import njit

from .._utils import check_int, progress_bar
from ..errors import InvalidParameterError, ProblemTooLargeError
from .base import InferenceResult, register_engine

__all__ = ["exact", "brute_force", "mincut"]

#: enumeration is refused beyond this many labellings, whatever ``max_nodes`` says
_MAX_LABELLINGS = 1 << 26
_CHUNK = 1 << 15


@register_engine("brute-force", exact=True, max_nodes=12)
def brute_force(energy, *, max_nodes=12, init=None, random_state=None, callback=None, progress=False):
    """Minimise an energy by scoring every labelling.

    All ``n_labels ** n_nodes`` labellings are scored in vectorised chunks. Among equal
    optima the first in lexicographic order (node 0 most significant) is returned.

    Parameters
    ----------
    energy : Energy
    max_nodes : int, default=12
        Refuse energies with more nodes than this.
    init, random_state : ignored
        Accepted for the common engine signature.
    callback : callable or None, default=None
        ``callback(chunk, best_labels, best_energy)`` after every chunk of labellings;
        returning ``True`` stops the enumeration (the result is then not proven
        optimal: ``converged=False`` and ``lower_bound=None``).
    progress : bool, default=False
        Show a tqdm bar over the chunks.

    Returns
    -------
    InferenceResult
        ``lower_bound`` equals ``energy`` (the optimum, ``inf`` when every labelling
        violates a hard term); ``info`` has ``n_labellings``, ``n_optima`` (how many
        labellings are within ``1e-9`` relative of the optimum), ``feasible`` and
        ``violated_hard_terms``.

    Raises
    ------
    ProblemTooLargeError
        More than ``max_nodes`` nodes, or more than 2**26 labellings.

    Examples
    --------
    >>> from graphclust.energy import Energy
    >>> E = Energy([[0.0, 1.0], [1.0, 0.0], [0.5, 0.0]], edges=[(0, 1), (1, 2)], weights=[2.0, -1.0])
    >>> result = brute_force(E)
    >>> result.labels, result.energy, result.info["n_optima"]
    (array([0, 0, 1]), 1.0, 1)
    """
    t0 = time.perf_counter()
    max_nodes = check_int(max_nodes, "max_nodes", low=1)
    n, K = energy.n_nodes, energy.n_labels
    if n > max_nodes:
        raise ProblemTooLargeError(
            f"brute force enumerates {K}**{n} labellings; the energy has {n} nodes, more than "
            f"max_nodes={max_nodes}; use mincut (2 labels, attractive) or method='icm'/'bp'/'lp'"
        )
    total = K ** n
    if total > _MAX_LABELLINGS:
        raise ProblemTooLargeError(
            f"brute force would score {K}**{n} = {total} labellings (limit {_MAX_LABELLINGS}); "
            "use an approximate engine"
        )
    terms = _Terms(energy)
    powers = K ** np.arange(n - 1, -1, -1, dtype=np.int64)
    best_val, best_idx, n_opt = np.inf, 0, 0
    chunks = range(0, total, _CHUNK)
    bar = progress_bar(progress, len(chunks), "brute force", leave=False)
    stopped = False
    try:
        for c, start in enumerate(chunks):
            idx = np.arange(start, min(start + _CHUNK, total), dtype=np.int64)
            val = terms.score((idx[:, None] // powers[None, :]) % K)
            k = int(np.argmin(val))
            if val[k] < best_val:
                best_val, best_idx = float(val[k]), int(idx[k])
            if bar is not None:
                bar.update(1)
            if callback is not None and callback(c, (best_idx // powers) % K, best_val):
                stopped = c < len(chunks) - 1
                if stopped:
                    break
    finally:
        if bar is not None:
            bar.close()
    if not stopped:
        if np.isfinite(best_val):
            tol = 1e-9 * abs(best_val)
            for start in chunks:  # second pass: how many optima (ties make engines disagree)
                idx = np.arange(start, min(start + _CHUNK, total), dtype=np.int64)
                n_opt += int((terms.score((idx[:, None] // powers[None, :]) % K) <= best_val + tol).sum())
        else:
            n_opt = total
    labels = ((best_idx // powers) % K).astype(np.int64)
    value = energy.evaluate(labels)
    return InferenceResult(
        labels=labels, energy=value, lower_bound=None if stopped else value, iterations=1,
        converged=not stopped, seconds=time.perf_counter() - t0,
        info={"method": "brute-force", "n_labellings": total, "n_optima": n_opt, "feasible": bool(np.isfinite(value)),
              "violated_hard_terms": energy.violated_hard_terms(labels)},
    )


@register_engine("exact", exact=True)
def exact(energy, *, method="auto", max_nodes=12, init=None, random_state=None, callback=None, progress=False):
    """Exact minimum of an energy: :func:`mincut` when it applies, else :func:`brute_force`.

    Parameters
    ----------
    energy : Energy
    method : {"auto", "mincut", "brute-force"}, default="auto"
        ``"auto"`` uses the minimum cut for 2 labels with only attractive Potts terms
        (any size) and enumeration otherwise.
    max_nodes : int, default=12
        Largest energy enumeration accepts.
    init, random_state, callback, progress
        Passed on (see the two engines).

    Returns
    -------
    InferenceResult
        ``lower_bound == energy``; ``info["method"]`` names the engine used.

    Raises
    ------
    ProblemTooLargeError
        The energy is not binary attractive and has more than ``max_nodes`` nodes
        (refused before any work).
    InvalidParameterError
        ``method="mincut"`` on an energy it cannot represent.

    Examples
    --------
    >>> from graphclust.energy import Energy
    >>> E = Energy([[0.0, 1.0], [1.0, 0.0], [0.0, 3.0]], edges=[(0, 1), (1, 2)], weights=[0.5, -2.0])
    >>> result = exact(E)
    >>> result.labels, result.energy, result.info["method"]
    (array([0, 1, 0]), 0.5, 'brute-force')
    """
    if method not in ("auto", "mincut", "brute-force"):
        raise InvalidParameterError(f"method must be 'auto', 'mincut' or 'brute-force', got {method!r}")
    if method == "auto":
        binary_attractive = energy.n_labels == 2 and energy.is_attractive
        method = "mincut" if binary_attractive else "brute-force"
        if not binary_attractive and energy.n_nodes > max_nodes:
            why = (f"{energy.n_labels} labels" if energy.n_labels != 2
                   else "pair tables" if len(energy.tables) else "repulsive (cannot-link) terms")
            raise ProblemTooLargeError(
                f"no exact engine for this energy: the minimum cut needs 2 labels and attractive terms only "
                f"(this energy has {why}), and enumeration is limited to max_nodes={max_nodes} nodes "
                f"(it has {energy.n_nodes}); use method='icm', 'bp' or 'lp'"
            )
    kwargs = {"init": init, "random_state": random_state, "callback": callback, "progress": progress}
    if method == "mincut":
        return mincut(energy, **kwargs)
    return brute_force(energy, max_nodes=max_nodes, **kwargs)


class _Terms:
    """The energy's terms laid out for scoring many labellings at once."""

    def __init__(self, energy):
        self.energy = energy
        w = energy.weights
        self.hard_attr, self.hard_rep = np.isposinf(w), np.isneginf(w)
        self.any_hard = bool(self.hard_attr.any() or self.hard_rep.any())
        soft = np.isfinite(w)
        self.w_cut = np.where(soft & (w > 0), w, 0.0)  # paid when the labels differ
        self.w_join = np.where(soft & (w < 0), -w, 0.0)  # paid when they agree
        self.cols = np.arange(energy.n_nodes)

    def score(self, Z):
        """Energies of the labellings in the rows of ``Z`` (shape (m, n_nodes))."""
        en = self.energy
        val = en.unary[self.cols[None, :], Z].sum(axis=1) + en.constant
        if en.n_edges:
            same = Z[:, en.edges[:, 0]] == Z[:, en.edges[:, 1]]
            val += (~same) @ self.w_cut + same @ self.w_join
            if self.any_hard:
                bad = ((~same) & self.hard_attr).any(axis=1) | (same & self.hard_rep).any(axis=1)
                val[bad] = np.inf
        if en.label_costs is not None:
            used = np.zeros((len(Z), en.n_labels), dtype=bool)
            used[np.arange(len(Z))[:, None], Z] = True
            val += used @ en.label_costs
        if len(en.tables):
            te = en.table_edges
            val += en.tables[np.arange(len(te))[None, :], Z[:, te[:, 0]], Z[:, te[:, 1]]].sum(axis=1)
        return val


@register_engine("mincut", exact=True, binary_only=True, attractive_only=True)
def mincut(energy, *, flow="bk", init=None, random_state=None, callback=None, progress=False):
    """Exact minimum of a binary energy with attractive Potts terms, by an s–t minimum cut.

    Label 0 is the source side and label 1 the sink side: node ``i`` is joined to the
    source with capacity ``U[i, 1] − min U[i]`` and to the sink with
    ``U[i, 0] − min U[i]``, and each pair term of weight ``w > 0`` becomes an undirected
    edge of capacity ``w``. A maximum flow (the Boykov–Kolmogorov augmenting-path
    algorithm in float64, compiled with numba) gives the cut; the value of the cut read
    off the search trees is checked against the flow value, which certifies optimality
    (max-flow/min-cut duality), and the labelling is scored with
    :meth:`Energy.evaluate`.

    Parameters
    ----------
    energy : Energy
        Exactly 2 labels, pair terms all attractive (``w > 0``, ``+inf`` allowed), no
        tables. Infinite unaries (hard seeds) and label costs are allowed.
    flow : {"bk", "networkx"}, default="bk"
        Max-flow solver: the compiled Boykov–Kolmogorov one, or
        :func:`networkx.maximum_flow` (slow; a cross-check). Should the compiled
        solver's certificate ever fail, networkx is used and ``info["flow"]`` says so.
    init, random_state, callback, progress : ignored
        Accepted for the common engine signature.

    Returns
    -------
    InferenceResult
        ``lower_bound`` equals ``energy`` (``inf`` when the hard terms cannot all be
        met); ``info`` has ``flow_value``, ``flow`` (the solver used), ``feasible`` and
        ``violated_hard_terms``.

    Raises
    ------
    InvalidParameterError
        More or fewer than 2 labels, a repulsive (cannot-link) term, which makes the
        energy non-submodular (the message names the edge), or pair tables.

    Notes
    -----
    Hard terms become a capacity larger than the sum of all finite capacities, so a
    minimum cut crosses one only when every labelling violates a hard term. Label
    costs ``h`` are exact too: the cut minimises the energy ``E'`` without them, which
    makes its labelling the best of all labellings that use both labels (they all pay
    ``h_0 + h_1``); the two constant labellings are scored as well and the best of the
    three is returned. Among equal optima the one with the fewest nodes labelled 1 is
    returned, i.e. ties go to label 0.

    ``scipy.sparse.csgraph.maximum_flow`` is not used: it needs integer capacities and
    silently truncates them to 32 bits, so real-valued energies would have to be
    rounded, and the optimum is then only approximate.

    References
    ----------
    D. M. Greig, B. T. Porteous, A. H. Seheult, "Exact maximum a posteriori estimation
    for binary images", J. R. Stat. Soc. B 51(2), 1989. doi:10.1111/j.2517-6161.1989.tb01764.x

    Y. Boykov, V. Kolmogorov, "An experimental comparison of min-cut/max-flow algorithms
    for energy minimization in vision", IEEE TPAMI 26(9), 2004. doi:10.1109/TPAMI.2004.60

    Examples
    --------
    Two seeds (infinite unaries) at the ends of a path with one weak link:

    >>> import numpy as np
    >>> from graphclust.energy import Energy
    >>> inf = np.inf
    >>> U = [[0, inf], [0.4, 0.6], [0.6, 0.4], [inf, 0]]
    >>> E = Energy(U, edges=[(0, 1), (1, 2), (2, 3)], weights=[2.0, 0.5, 2.0])
    >>> result = mincut(E)
    >>> result.labels, result.energy, result.lower_bound
    (array([0, 0, 1, 1]), 1.3, 1.3)
    """
    t0 = time.perf_counter()
    if flow not in ("bk", "networkx"):
        raise InvalidParameterError(f"flow must be 'bk' or 'networkx', got {flow!r}")
    _check_mincut(energy)
    n = energy.n_nodes
    U0, U1 = energy.unary[:, 0], energy.unary[:, 1]
    low = np.minimum(U0, U1)
    cap_s = U1 - low  # paid when the node is on the sink side (label 1)
    cap_t = U0 - low  # paid when it is on the source side (label 0)
    w = energy.weights
    finite_total = float(cap_s[np.isfinite(cap_s)].sum() + cap_t[np.isfinite(cap_t)].sum()
                         + w[np.isfinite(w)].sum())
    big = 2.0 * finite_total + 1.0
    cap_s = np.where(np.isinf(cap_s), big, cap_s)
    cap_t = np.where(np.isinf(cap_t), big, cap_t)
    w = np.where(np.isinf(w), big, w)

    info = {"method": "mincut", "flow": flow}
    if flow == "bk":
        value, sink_side = _bk_cut(n, energy.edges, w, cap_s, cap_t, 1e-14 * finite_total)
        labels = sink_side.astype(np.int64)
        cut = _cut_value(labels, energy.edges, w, cap_s, cap_t)
        if not abs(cut - value) <= 1e-9 * (1.0 + finite_total):  # certificate failed: use networkx
            info["flow"] = "networkx (bk certificate failed)"
            flow = "networkx"
    if flow == "networkx":
        value, labels = _networkx_cut(n, energy.edges, w, cap_s, cap_t)
    info["flow_value"] = float(value)
    feasible = value < big
    if energy.label_costs is not None and feasible:
        candidates = [labels, np.zeros(n, np.int64), np.ones(n, np.int64)]
        scores = [energy.evaluate(c) for c in candidates]
        labels = candidates[int(np.argmin(scores))]
    value = energy.evaluate(labels)
    if not feasible:
        value = np.inf
    info["feasible"] = bool(feasible)
    info["violated_hard_terms"] = energy.violated_hard_terms(labels)
    return InferenceResult(labels=labels, energy=value, lower_bound=value, iterations=1, converged=True,
                           seconds=time.perf_counter() - t0, info=info)


def _check_mincut(energy):
    """Raise :class:`InvalidParameterError` unless :func:`mincut` can solve ``energy``."""
    if energy.n_labels != 2:
        raise InvalidParameterError(
            f"mincut needs exactly 2 labels, the energy has {energy.n_labels}; use method='icm', "
            "'bp' or 'lp', or brute_force for tiny problems"
        )
    if len(energy.tables):
        raise InvalidParameterError(
            f"mincut handles Potts pair terms only, the energy has {len(energy.tables)} pair tables "
            f"(first on nodes {tuple(energy.table_edges[0].tolist())})"
        )
    rep = np.flatnonzero(energy.weights < 0)
    if len(rep):
        k = int(rep[0])
        raise InvalidParameterError(
            f"mincut needs attractive pair terms only, but edge {tuple(energy.edges[k].tolist())} has weight "
            f"{energy.weights[k]} (a cannot-link / repulsive term makes the energy non-submodular, so no "
            "s-t cut represents it); use method='icm', 'bp' or 'lp'"
        )


def _cut_value(labels, edges, w, cap_s, cap_t):
    cut = cap_s[labels == 1].sum() + cap_t[labels == 0].sum()
    if len(w):
        cut += w[labels[edges[:, 0]] != labels[edges[:, 1]]].sum()
    return float(cut)


def _bk_cut(n, edges, w, cap_s, cap_t, eps):
    """Max flow on the s–t graph; returns (flow value, sink-side mask)."""
    head, adj_ptr, adj_arc = _bk_structure(n, edges)
    res = np.repeat(w, 2).astype(np.float64)  # arcs 2k and 2k+1 are each other's reverse
    tr = (cap_s - cap_t).astype(np.float64)  # > 0: residual from the source, < 0: to the sink
    value, tree = _bk_maxflow(n, head, res, adj_ptr, adj_arc, tr, eps)
    return value, tree == _SINK_TREE


def _index_dtype(*sizes):
    """int32 when every index (node ids, arc ids, arc pointers) fits, else int64."""
    return np.int32 if max(sizes) < np.iinfo(np.int32).max else np.int64


def _bk_structure(n, edges):
    """The arc layout :func:`_bk_maxflow` reads, built once per graph: arc ``2k`` runs
    ``edges[k, 0] -> edges[k, 1]`` and arc ``2k + 1`` back; returns ``(head, adj_ptr,
    adj_arc)`` (the arcs leaving node ``i`` are ``adj_arc[adj_ptr[i]:adj_ptr[i + 1]]``,
    in increasing arc order). The three arrays are int32 when ``n`` and ``2·n_edges``
    fit (half the memory of int64 on large 3-D grids), else int64. Only the capacities
    change between the moves of α-expansion, so the graph-cut engines build this once
    per run and refill ``res`` and ``tr`` for every move."""
    edges = np.asarray(edges).reshape(-1, 2)
    return _bk_structure_pairs(n, edges[:, 0], edges[:, 1])


def _bk_structure_pairs(n, e0, e1):
    """:func:`_bk_structure` for the edges ``(e0[k], e1[k])`` given as two arrays (no
    stacked copy)."""
    m = len(e0)
    idx = _index_dtype(n + 1, 2 * m + 1)
    head = np.empty(2 * m, idx)
    adj_ptr = np.zeros(n + 1, idx)
    adj_arc = np.empty(2 * m, idx)
    if m:
        _layout(e0, e1, head, adj_ptr, adj_arc)
    return head, adj_ptr, adj_arc


@njit(cache=True)
def _layout(e0, e1, head, adj_ptr, adj_arc):  # pragma: no cover - compiled
    """Fill the arc layout of :func:`_bk_structure` by a counting sort of the arcs by
    their tail: linear time, no int64 temporaries."""
    m = len(e0)
    n = len(adj_ptr) - 1
    for k in range(m):
        head[2 * k] = e1[k]
        head[2 * k + 1] = e0[k]
        adj_ptr[e0[k] + 1] += 1
        adj_ptr[e1[k] + 1] += 1
    for i in range(n):
        adj_ptr[i + 1] += adj_ptr[i]
    fill = adj_ptr[:-1].copy()
    for a in range(2 * m):
        t = head[a ^ 1]
        adj_arc[fill[t]] = a
        fill[t] += 1


_TERMINAL, _ORPHAN, _FREE = -1, -2, -3
_SINK_TREE = 2


class _FlowState:
    """A max-flow left behind for the next, slightly different, flow on the same arc
    layout (dynamic graph cuts, Kohli & Torr 2007): the capacities it was computed for
    (``cap`` per arc, ``t`` signed per node), the residual graph (``res``, ``tr``) and
    the two search trees (``tree``, ``parent``, ``ts``, ``dist``, ``clock``).

    :func:`_bk_reflow` moves it to new capacities by reparametrising the residual graph
    (exact: the new residual graph has the new graph's cuts up to a constant) and
    repairing the trees where residuals changed, then resumes the Boykov–Kolmogorov
    search from there, so the work is proportional to what changed."""

    def __init__(self, n, n_arcs, idx):
        self.eps = None  # the saturation tolerance, fixed at the first flow
        self.cap = np.zeros(n_arcs)
        self.t = np.zeros(n)
        self.res = np.zeros(n_arcs)
        self.tr = np.zeros(n)
        self.tree = np.zeros(n, np.int8)
        self.parent = np.full(n, _FREE, idx)
        self.ts = np.zeros(n, np.int64)
        self.dist = np.zeros(n, idx)
        self.clock = np.zeros(1, np.int64)

    @property
    def nbytes(self):
        return sum(a.nbytes for a in (self.cap, self.t, self.res, self.tr, self.tree, self.parent, self.ts,
                                      self.dist))


def _bk_reflow(state, head, adj_ptr, adj_arc, cap, t, eps):
    """Maximum flow for the capacities ``cap`` (per arc) and ``t`` (signed terminals)
    starting from ``state`` (a :class:`_FlowState` of an earlier flow on the same
    layout, or a fresh one: all zero, which is a cold start); returns the tree array
    (2 = sink side). The tolerance ``eps`` of the first flow is kept for the later ones,
    so that "saturated" means the same to the stored trees and to the resumed search."""
    n = len(t)
    if state.eps is None:
        state.eps = eps
    eps = state.eps  # the trees were grown with this one: keep it
    queue = np.empty(n, head.dtype)
    orphans = np.empty(n, head.dtype)
    q_len, n_orph = _bk_update(head, adj_ptr, adj_arc, state.res, state.tr, state.cap, state.t, cap, t, eps,
                               state.tree, state.parent, state.ts, state.dist, state.clock, queue, orphans)
    _bk_core(n, head, state.res, adj_ptr, adj_arc, state.tr, eps, state.tree, state.parent, state.ts, state.dist,
             state.clock, queue, q_len, orphans, n_orph)
    return state.tree


@njit(cache=True, inline="always")
def _orphan(x, parent, orphans, n_orph):  # pragma: no cover - compiled
    if parent[x] != _ORPHAN:
        parent[x] = _ORPHAN
        orphans[n_orph] = x
        n_orph += 1
    return n_orph


@njit(cache=True)
def _bk_update(head, adj_ptr, adj_arc, res, tr, cap, t, new_cap, new_t, eps, tree, parent, ts, dist, clock,
               queue, orphans):  # pragma: no cover - compiled
    """Move a residual graph to new capacities and repair its search trees.

    Arc pair ``(a, b) = (2k, 2k + 1)`` on ``u → v`` holds the residual table
    ``res[a]·[x_u=0, x_v=1] + res[b]·[x_u=1, x_v=0]``; adding the capacity changes keeps
    it exact. A residual that would go negative (a capacity cut below the flow it
    carries) is rewritten through the terminals, e.g. ``r·[x_u=0, x_v=1] = r·[x_v=1]
    − r·[x_u=1] + r·[x_u=1, x_v=0]``, which leaves the other residual at ``res[a] +
    res[b] ≥ 0`` (the new term is submodular). Terminal changes add to the signed
    residual ``tr`` (both terminal capacities move together). The energy of every cut
    is preserved up to a constant, so the maximum flow from here gives the new graph's
    minimum cut.

    Then the trees: a node whose parent arc lost its residual, or whose terminal arc
    vanished, becomes an orphan; a node with a terminal residual becomes (or stays) a
    root of that terminal's tree (its old children are orphaned when it changes tree);
    every node touched is made active. Returns ``(n_active, n_orphans)`` with the
    active nodes in ``queue`` and the orphans in ``orphans``."""
    n = len(tr)
    m2 = len(res)
    clock[0] += 1  # marks of earlier searches are stale
    touched = np.zeros(n, np.bool_)
    tdirty = np.zeros(n, np.bool_)
    n_orph = 0
    for a in range(0, m2, 2):
        b = a + 1
        da = new_cap[a] - cap[a]
        db = new_cap[b] - cap[b]
        if da == 0.0 and db == 0.0:
            continue
        u = head[b]
        v = head[a]
        ra = res[a] + da
        rb = res[b] + db
        if ra < 0.0:
            tr[v] += ra
            tr[u] -= ra
            rb += ra
            ra = 0.0
            tdirty[u] = True
            tdirty[v] = True
        elif rb < 0.0:
            tr[u] += rb
            tr[v] -= rb
            ra += rb
            rb = 0.0
            tdirty[u] = True
            tdirty[v] = True
        if ra < 0.0:
            ra = 0.0
        if rb < 0.0:
            rb = 0.0
        res[a] = ra
        res[b] = rb
        cap[a] = new_cap[a]
        cap[b] = new_cap[b]
        if ra <= eps:  # a: u -> v carries v's source-tree or u's sink-tree parent link
            if tree[v] == 1 and parent[v] == a:
                n_orph = _orphan(v, parent, orphans, n_orph)
            if tree[u] == 2 and parent[u] == a:
                n_orph = _orphan(u, parent, orphans, n_orph)
        if rb <= eps:
            if tree[u] == 1 and parent[u] == b:
                n_orph = _orphan(u, parent, orphans, n_orph)
            if tree[v] == 2 and parent[v] == b:
                n_orph = _orphan(v, parent, orphans, n_orph)
        touched[u] = True
        touched[v] = True
    for i in range(n):
        d = new_t[i] - t[i]
        if d != 0.0:
            tr[i] += d
            t[i] = new_t[i]
            tdirty[i] = True
    q_len = 0
    for i in range(n):
        if tdirty[i]:
            side = 1 if tr[i] > eps else (2 if tr[i] < -eps else 0)
            if side == 0:
                if parent[i] == _TERMINAL:
                    n_orph = _orphan(i, parent, orphans, n_orph)
            else:
                old = tree[i]
                if old != 0 and old != side:
                    # i changes tree: its children in the old one lose their parent, and
                    # its old tree's neighbours become active (a passive node may only
                    # have residual arcs into its own tree, BK's invariant; once i left,
                    # they must grow again, as when an orphan leaves a tree)
                    for p in range(adj_ptr[i], adj_ptr[i + 1]):
                        q = head[adj_arc[p]]
                        if tree[q] != old:
                            continue
                        touched[q] = True
                        pa = parent[q]
                        if pa >= 0:
                            owner = head[pa ^ 1] if old == 1 else head[pa]
                            if owner == i:
                                n_orph = _orphan(q, parent, orphans, n_orph)
                tree[i] = side
                parent[i] = _TERMINAL
                dist[i] = 1
                ts[i] = 0
            touched[i] = True
    for i in range(n):
        if touched[i]:
            queue[q_len] = i
            q_len += 1
    return q_len, n_orph


@njit(cache=True)
def _bk_maxflow(n, head, res, adj_ptr, adj_arc, tr, eps):  # pragma: no cover - compiled
    """Boykov–Kolmogorov max flow. ``res`` (pair arcs, ``a ^ 1`` is the reverse of ``a``)
    and ``tr`` (terminal residuals: > 0 from the source, < 0 to the sink) are updated in
    place. Returns (flow, tree) with tree 1 = source tree, 2 = sink tree, 0 = free."""
    tree = np.zeros(n, np.int8)
    parent = np.full(n, _FREE, head.dtype)
    ts = np.zeros(n, np.int64)
    dist = np.zeros(n, head.dtype)
    queue = np.empty(n, head.dtype)
    orphans = np.empty(n, head.dtype)
    clock = np.zeros(1, np.int64)
    q_len = 0
    for i in range(n):
        if tr[i] > eps or tr[i] < -eps:
            tree[i] = 1 if tr[i] > 0 else 2
            parent[i] = _TERMINAL
            dist[i] = 1
            queue[q_len] = i
            q_len += 1
    flow = _bk_core(n, head, res, adj_ptr, adj_arc, tr, eps, tree, parent, ts, dist, clock, queue, q_len,
                    orphans, 0)
    return flow, tree


@njit(cache=True)
def _bk_core(n, head, res, adj_ptr, adj_arc, tr, eps, tree, parent, ts, dist, clock, queue, q_len, orphans,
             n_orph):  # pragma: no cover - compiled
    """The Boykov–Kolmogorov search from given trees: ``queue[:q_len]`` are the active
    nodes, ``orphans[:n_orph]`` the nodes waiting for a new parent (adopted first).
    Trees, residuals and ``clock`` (the augmentation counter behind the ``ts`` marks)
    are updated in place, so a later :func:`_bk_update` can resume from them. Returns
    the flow pushed."""
    queued = np.zeros(n, np.bool_)
    for k in range(q_len):
        queued[queue[k]] = True
    q_head = 0
    flow = 0.0
    time = clock[0]
    while True:
        # ---- adoption: orphans find a new parent in their tree or leave it
        while n_orph > 0:
            n_orph -= 1
            o = orphans[n_orph]
            if parent[o] != _ORPHAN:  # made a root again since it was orphaned
                continue
            side = tree[o]
            best = -1
            dmin = 1 << 62
            for p in range(adj_ptr[o], adj_ptr[o + 1]):
                a = adj_arc[p]
                q = head[a]
                if tree[q] != side:
                    continue
                cand = a ^ 1 if side == 1 else a  # q -> o (source tree) or o -> q (sink tree)
                if res[cand] <= eps:
                    continue
                # is q rooted at a terminal? walk up, using timestamps to stop early
                d = 0
                j = q
                valid = False
                while True:
                    if ts[j] == time:
                        d += dist[j]
                        valid = True
                        break
                    pa = parent[j]
                    d += 1
                    if pa == _TERMINAL:
                        ts[j] = time
                        dist[j] = 1
                        valid = True
                        break
                    if pa == _ORPHAN or pa == _FREE:
                        break
                    j = head[pa ^ 1] if side == 1 else head[pa]
                if valid:
                    if d < dmin:
                        dmin = d
                        best = cand
                    j = q
                    dd = d
                    while ts[j] != time:
                        ts[j] = time
                        dist[j] = dd
                        dd -= 1
                        pa = parent[j]
                        j = head[pa ^ 1] if side == 1 else head[pa]
            if best >= 0:
                parent[o] = best
                ts[o] = time
                dist[o] = dmin + 1
                continue
            # no parent: o leaves its tree
            for p in range(adj_ptr[o], adj_ptr[o + 1]):
                a = adj_arc[p]
                q = head[a]
                if tree[q] != side:
                    continue
                cand = a ^ 1 if side == 1 else a
                if res[cand] > eps and not queued[q]:
                    queue[(q_head + q_len) % n] = q
                    q_len += 1
                    queued[q] = True
                pa = parent[q]
                if pa >= 0:
                    owner = head[pa ^ 1] if side == 1 else head[pa]
                    if owner == o:
                        parent[q] = _ORPHAN
                        orphans[n_orph] = q
                        n_orph += 1
            tree[o] = 0
            parent[o] = _FREE
        # ---- growth: find an arc from the source tree to the sink tree
        found = -1
        while q_len > 0:
            i = queue[q_head]
            if tree[i] == 0:
                q_head = (q_head + 1) % n
                q_len -= 1
                queued[i] = False
                continue
            for p in range(adj_ptr[i], adj_ptr[i + 1]):
                a = adj_arc[p]
                j = head[a]
                if tree[i] == 1:
                    if res[a] <= eps:
                        continue
                    if tree[j] == 0:
                        tree[j] = 1
                        parent[j] = a
                        ts[j] = ts[i]
                        dist[j] = dist[i] + 1
                        if not queued[j]:
                            queue[(q_head + q_len) % n] = j
                            q_len += 1
                            queued[j] = True
                    elif tree[j] == 2:
                        found = a
                        break
                    elif ts[j] <= ts[i] and dist[j] > dist[i]:
                        parent[j] = a
                        ts[j] = ts[i]
                        dist[j] = dist[i] + 1
                else:
                    b = a ^ 1
                    if res[b] <= eps:
                        continue
                    if tree[j] == 0:
                        tree[j] = 2
                        parent[j] = b
                        ts[j] = ts[i]
                        dist[j] = dist[i] + 1
                        if not queued[j]:
                            queue[(q_head + q_len) % n] = j
                            q_len += 1
                            queued[j] = True
                    elif tree[j] == 1:
                        found = b
                        break
                    elif ts[j] <= ts[i] and dist[j] > dist[i]:
                        parent[j] = b
                        ts[j] = ts[i]
                        dist[j] = dist[i] + 1
            if found >= 0:
                break
            q_head = (q_head + 1) % n
            q_len -= 1
            queued[i] = False
        if found < 0:
            break
        time += 1
        # ---- augmentation along source ... u -> v ... sink
        u = head[found ^ 1]
        v = head[found]
        bott = res[found]
        x = u
        while parent[x] != _TERMINAL:
            a = parent[x]
            if res[a] < bott:
                bott = res[a]
            x = head[a ^ 1]
        if tr[x] < bott:
            bott = tr[x]
        x = v
        while parent[x] != _TERMINAL:
            a = parent[x]
            if res[a] < bott:
                bott = res[a]
            x = head[a]
        if -tr[x] < bott:
            bott = -tr[x]
        res[found] -= bott
        res[found ^ 1] += bott
        x = u
        while parent[x] != _TERMINAL:
            a = parent[x]
            res[a] -= bott
            res[a ^ 1] += bott
            nxt = head[a ^ 1]
            if res[a] <= eps:
                parent[x] = _ORPHAN
                orphans[n_orph] = x
                n_orph += 1
            x = nxt
        tr[x] -= bott
        if tr[x] <= eps:
            parent[x] = _ORPHAN
            orphans[n_orph] = x
            n_orph += 1
        x = v
        while parent[x] != _TERMINAL:
            a = parent[x]
            res[a] -= bott
            res[a ^ 1] += bott
            nxt = head[a]
            if res[a] <= eps:
                parent[x] = _ORPHAN
                orphans[n_orph] = x
                n_orph += 1
            x = nxt
        tr[x] += bott
        if tr[x] >= -eps:
            parent[x] = _ORPHAN
            orphans[n_orph] = x
            n_orph += 1
        flow += bott
    clock[0] = time
    return flow


def _networkx_cut(n, edges, w, cap_s, cap_t):
    """Reference max flow with networkx; ties go to label 0 as in the compiled solver."""
    import networkx as nx

    G = nx.DiGraph()
    s, t = n, n + 1
    G.add_nodes_from(range(n + 2))
    G.add_weighted_edges_from(
        [(int(u), int(v), float(c)) for (u, v), c in zip(edges, w)]
        + [(int(v), int(u), float(c)) for (u, v), c in zip(edges, w)]
        + [(s, int(i), float(cap_s[i])) for i in np.flatnonzero(cap_s > 0)]
        + [(int(i), t, float(cap_t[i])) for i in np.flatnonzero(cap_t > 0)],
        weight="capacity",
    )
    value, flow = nx.maximum_flow(G, s, t, capacity="capacity")
    # nodes that can still reach the sink in the residual graph are labelled 1
    R = nx.DiGraph()
    R.add_nodes_from(range(n + 2))
    for u, v, c in G.edges(data="capacity"):
        if c - flow[u][v] > 1e-12 * (1.0 + c):
            R.add_edge(u, v)
        if flow[u][v] > 1e-12 * (1.0 + c):
            R.add_edge(v, u)
    sink_side = np.zeros(n, dtype=np.int64)
    reach = nx.ancestors(R, t)
    sink_side[[i for i in reach if i < n]] = 1
    return float(value), sink_side
