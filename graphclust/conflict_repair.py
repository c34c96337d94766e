"""Likely-wrong constraints: the lightest set of soft constraints whose removal makes
the rest consistent.

Side information is *consistent* when no cannot-link joins two nodes that must-links
connect. Noisy side information rarely is. Every conflict is a cycle of the constraint
graph with exactly one cannot-link, and at least one constraint on it is wrong. Removing
the lightest set of soft constraints that breaks every such cycle is correlation
clustering on the constraint graph. Each must-link component is split so that no
cannot-linked pair shares a part, at the least total weight of must-links cut and
cannot-links dropped.

* Components of at most ``exact_max`` nodes are solved exactly, as an integer program
  over "same part" indicators with the triangle inequalities (HiGHS through
  :func:`scipy.optimize.milp`).
* Larger ones are solved greedily. While a cannot-link lies inside a component, the
  lightest soft constraint on one of its conflict cycles is dropped: the cannot-link
  itself, or a must-link on the shortest must-link path between its ends. The greedy
  answer breaks every conflict but need not be the lightest.

Hard constraints (``±inf``) are never dropped. A conflict made of hard constraints only
raises :class:`~graphclust.errors.InfeasibleConstraintsError`, as everywhere else.
"""

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import breadth_first_order

from .sideinfo import check_constraints, must_link_components

__all__ = ["Suspect", "SuspectReport", "suspects", "repair", "find_suspects", "data_plausibility", "on_conflict_cycles",
           "disjoint_cycles_bound", "without_suspects", "set_aside_suspects"]

#: components up to this many nodes are solved exactly by default
EXACT_MAX_NODES = 30
#: the greedy drops a must-link only when it lies on this many conflict paths: the
#: best of 2, 3, 4 and 6 on planted 5 % noise (mean precision 0.73, 0.80, 0.74, 0.69
#: over six draws; tests/test_conflict_repair.py)
_MIN_LOAD = 3.0
#: how far the data's plausibility moves a drop cost: factors in (1 - s, 1 + s)
_DATA_SWAY = 0.5
#: soft must-links and cannot-links needed before the clustering's vote is asked
_MIN_PER_KIND = 10


@dataclass(frozen=True)
class Suspect:
    """A constraint that is likely wrong.

    Attributes
    ----------
    constraint : tuple
        The constrained pair ``(u, v)`` of node keys.
    weight : float
        Its signed weight (``> 0`` must-link, ``< 0`` cannot-link).
    cycle : list
        Evidence: the nodes of a conflict cycle through it, a must-link path from one
        end of a cannot-link to the other. The cycle closes with that cannot-link.
    """

    constraint: tuple
    weight: float
    cycle: list

    @property
    def kind(self):
        return "must-link" if self.weight > 0 else "cannot-link"

    def __str__(self):
        u, v = self.constraint
        return f"{self.kind} {(u, v)!r} (weight {abs(self.weight):g}) on the conflict cycle " + " - ".join(
            map(repr, self.cycle))


@dataclass
class SuspectReport:
    """The likely-wrong constraints; returned by :func:`find_suspects` and
    :meth:`graphclust.SideInfo.suspects`.

    Attributes
    ----------
    suspects : list of Suspect
        Constraints whose removal leaves consistent side information.
    removed_weight : float
        Their total strength.
    exact : bool
        True when every conflicting component was solved exactly, so no lighter set of
        soft constraints removes all conflicts.
    n_conflicts : int
        Cannot-links inside a must-link component before the repair.
    rows : ndarray of int
        Rows of the constraint arrays that are suspects.
    lower_bound : float
        No set of soft constraints lighter than this removes every conflict: the
        removed weight itself when ``exact``, otherwise the weight of a packing of
        conflict cycles that share no constraint (each needs one of its constraints
        gone, the lightest at least). ``removed_weight / lower_bound`` bounds how far
        a greedy repair is from the lightest.
    method : str
        ``"repair"`` or ``"clustering"`` (see :func:`suspects`).
    clustering : AutoCluster or None
        With ``"clustering"``: the fitted clustering whose broken constraints are the
        suspects (its ``choice_`` says how it weighed them).
    """

    suspects: list
    removed_weight: float
    exact: bool
    n_conflicts: int
    rows: np.ndarray = field(repr=False, default=None)
    lower_bound: float = 0.0
    method: str = "repair"
    clustering: object = field(repr=False, default=None)

    def summary(self):
        how = "exact" if self.exact else ("broken by a noise-robust clustering" if self.method == "clustering"
                                          else "greedy")
        head = (f"{len(self.suspects)} likely-wrong constraint(s) of total weight {self.removed_weight:g} "
                f"break all {self.n_conflicts} conflict(s) ({how})")
        if not self.exact and self.n_conflicts:
            head += f"; the lightest such set weighs at least {self.lower_bound:g}"
        return "\n".join([head] + [f"  {s}" for s in self.suspects])


def suspects(S, data=None, *, method="auto", n_clusters=None, exact_max=EXACT_MAX_NODES, data_vote=False,
             random_state=None):
    """The likely-wrong constraints of side information ``S``.

    Parameters
    ----------
    S : SideInfo
    data : Problem, networkx.Graph, array-like of shape (n_samples, n_features) or None, default=None
        The data the constraints refer to (unknown nodes raise
        :class:`~graphclust.errors.UnknownNodeError`); an array's rows are the nodes
        ``0..n_samples-1``; ``None``: the constrained nodes.
    method : {"auto", "clustering", "repair"}, default="auto"
        ``"repair"``: the lightest set of soft constraints whose removal leaves no
        conflict (correlation clustering on the constraint graph; no data needed).
        ``"clustering"``: the soft constraints on a conflict cycle
        (:func:`on_conflict_cycles`) that a noise-robust clustering of the data
        (:func:`graphclust.cluster`, which weighs the constraints by held-out
        agreement) breaks, plus a repair of whatever conflict is left. What remains is
        kept by that clustering or on no conflict, so it is consistent. A broken
        constraint on no conflict cycle stays: on seven UCI sets with 5–20 % of the
        pairs flipped that kept the recall and raised the precision from 0.69 to 0.71
        (iris 0.85 → 0.91, digits 0.65 → 0.81). ``"auto"``: ``"clustering"`` when
        ``data`` has node features and ``S`` at least 10 soft must-links and
        cannot-links, else ``"repair"``. The data see wrong constraints no conflict
        reveals, and they tell which constraint of a conflict is the wrong one. On six
        UCI sets at rate 0.03 with 5–20 % of the pairs flipped, the repair's
        precision was 0.2–0.5 on iris and wine, the clustering's 0.5–0.95
        (``docs/benchmarks/noisy_defaults.md``).
    n_clusters : int or None, default=None
        For ``"clustering"``: the number of clusters (``None``: chosen by
        :func:`graphclust.cluster`).
    exact_max : int, default=30
        Must-link components of at most this many nodes are repaired exactly.
    data_vote : bool, default=False
        ``"repair"`` only: let the node features of ``data`` break ties between equally
        light repairs (:func:`data_plausibility`). Measured at rate 0.03 (2 draws each),
        it helps where the constraint graph is sparse: on iris the precision goes from
        0.66 to 0.77 at 5 % noise and from 0.35 to 0.60 at 10 %. It hurts where classes
        are wide: on breast cancer it falls from 0.95 to 0.38. So it is off by default.
    random_state : None, int or numpy.random.Generator
        For ``"clustering"``.

    Returns
    -------
    SuspectReport

    Examples
    --------
    >>> import graphclust as gc
    >>> S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (3, 4)], cannot=[(0, 2), (0, 3)])
    >>> gc.suspects(S).summary().splitlines()[0]
    '1 likely-wrong constraint(s) of total weight 1 break all 1 conflict(s) (exact)'
    """
    if method not in ("auto", "clustering", "repair"):
        from .errors import InvalidParameterError

        raise InvalidParameterError(f"method must be 'auto', 'clustering' or 'repair'; got {method!r}")
    nodes, index = _nodes_of(S, data)
    pairs, weights = S.to_arrays(index)
    X = _features_of(data) if data is not None and method != "repair" else None
    soft = np.isfinite(weights)
    enough = min((soft & (weights > 0)).sum(), (soft & (weights < 0)).sum()) >= _MIN_PER_KIND
    if method == "clustering" or (method == "auto" and X is not None and enough):
        if X is None:
            from .errors import InvalidParameterError

            raise InvalidParameterError("suspects(method='clustering') needs node features in data")
        from .problem import as_problem

        problem = as_problem(np.asarray(data, dtype=np.float64) if _is_array(data) else data, S)
        return _by_clustering(problem, nodes, pairs, weights, n_clusters, exact_max, random_state)
    X = _features_of(data) if data_vote else None
    plausibility = None if X is None else data_plausibility(X, pairs, weights)
    return find_suspects(nodes, pairs, weights, exact_max=exact_max, plausibility=plausibility)


def _broken_by_clustering(problem, nodes, pairs, weights, n_clusters, exact_max, random_state):
    """``(clustering, broken, extra)``: a noise-robust clustering of ``problem`` (data
    and side information, :func:`graphclust.cluster`), the mask of the soft
    constraints it breaks, and the rows of a repair of the rest (what the clustering
    keeps is consistent unless it broke a hard constraint)."""
    from .auto import cluster
    from .metrics import violated_mask

    est = cluster(problem, n_clusters=n_clusters, random_state=random_state, progress=False)
    labels = np.empty(len(nodes), dtype=np.int64)
    where = {u: i for i, u in enumerate(est.nodes_)}
    labels[[where[u] for u in nodes]] = est.labels_
    broken = violated_mask(labels, pairs, weights) & np.isfinite(weights)
    rest = np.flatnonzero(~broken)
    extra = rest[find_suspects(nodes, pairs[rest], weights[rest], exact_max=exact_max).rows]
    return est, broken, extra


def _by_clustering(problem, nodes, pairs, weights, n_clusters, exact_max, random_state):
    """Suspects = soft constraints on conflict cycles that a noise-robust clustering of
    ``problem`` (data and side information) breaks, then a repair of the rest."""
    est, broken, extra = _broken_by_clustering(problem, nodes, pairs, weights, n_clusters, exact_max, random_state)
    # a broken constraint on no conflict cycle is no evidence of noise, only of the
    # clustering's disagreement: it is not named (it cannot make the rest inconsistent)
    n = len(nodes)
    cycles = on_conflict_cycles(n, pairs, weights)
    broken &= cycles
    rows = np.sort(np.concatenate([np.flatnonzero(broken), extra]))
    suspects_ = [Suspect((nodes[pairs[r, 0]], nodes[pairs[r, 1]]), float(weights[r]),
                         [nodes[i] for i in _cycle(pairs, weights, r, n)]) for r in rows.tolist()]
    n_conflicts = int((cycles & ~(weights > 0)).sum())  # the cannot-links inside a must-link component
    return SuspectReport(suspects_, float(np.abs(weights[rows]).sum()), False, n_conflicts, rows,
                         lower_bound=disjoint_cycles_bound(n, pairs, weights), method="clustering", clustering=est)


def without_suspects(problem, random_state=None, *, force=False):
    """``problem`` without its likely-wrong soft constraints, and the rows dropped.

    For the models that take every constraint at its word (the DCP and dd-MMDPM
    samplers): when the soft constraints conflict, the nodes have features and there
    are at least 10 soft must-links and cannot-links, every soft constraint that a
    noise-robust clustering (:func:`graphclust.cluster`) breaks is dropped, with a
    repair of the rest (:func:`repair`) so that what is left is consistent. That is
    more than :func:`suspects` names (only the broken constraints on a conflict cycle,
    far more often the flipped ones): on the noisy-pair protocol a broken constraint
    off every cycle was flipped in 33 % of cases (98 % on iris, 13 % on glass), one on
    a cycle in 80 %; yet the samplers, which take each constraint at its word, did
    better without the off-cycle ones too: the DCP's and dd-MMDPM's mean F rose at
    20 % flipped pairs and on the unseen sets (``docs/benchmarks/noisy_defaults.md``).
    Otherwise, and when hard constraints contradict each other (the estimator's own
    error names them), nothing is dropped. Without conflicts the problem is returned as
    it is and ``random_state`` is not used, unless ``force`` is true: a caller that has
    another sign of noise (the DCP: held-out constraints kept no better than coin
    flips) drops the broken constraints without conflicts too.

    Returns
    -------
    problem : Problem
    dropped : ndarray of int
        Rows of ``problem.constraints`` that were dropped.
    """
    none = np.empty(0, dtype=np.int64)
    pairs, w = problem.constraints, problem.constraint_weights
    soft = np.isfinite(w)
    if problem.X is None or min((soft & (w > 0)).sum(), (soft & (w < 0)).sum()) < _MIN_PER_KIND:
        return problem, none
    n, must, hard = problem.n_nodes, w > 0, ~soft
    if not (force or _cannot_inside(n, pairs, must, ~must).any()) or \
            _cannot_inside(n, pairs, hard & must, hard & ~must).any():
        return problem, none
    # the conflicts show the answers are noisy, and the samplers take a constraint at
    # its word: every constraint the clustering breaks goes, on a conflict cycle or not
    # (off the cycles they are right more often than not, yet dropping them measured
    # better for the DCP and dd-MMDPM than keeping them), with a repair of the rest
    _, broken, extra = _broken_by_clustering(problem, list(problem.nodes), pairs, w, None, EXACT_MAX_NODES,
                                             random_state)
    rows = np.sort(np.concatenate([np.flatnonzero(broken), extra]))
    keep = np.ones(len(w), dtype=bool)
    keep[rows] = False
    return problem.with_constraints(pairs[keep], w[keep]), rows


def set_aside_suspects(problem, enabled, random_state, *, force=False):
    """What an estimator with ``drop_suspects`` does before fitting: ``(problem,
    dropped)``, ``dropped`` the constraints :func:`without_suspects` set aside as
    ``(u, v, weight)`` in node keys (``[]`` when ``enabled`` is false or, unless
    ``force``, nothing conflicts; ``random_state`` is drawn from only when the
    clustering runs)."""
    if not enabled:
        return problem, []
    kept, rows = without_suspects(problem, random_state=random_state, force=force)
    nodes = problem.nodes
    dropped = [(nodes[a], nodes[b], float(w)) for (a, b), w in
               zip(problem.constraints[rows].tolist(), problem.constraint_weights[rows].tolist())]
    return kept, dropped


def on_conflict_cycles(n, pairs, weights):
    """Which constraints lie on at least one conflict cycle.

    A cannot-link does when a must-link path joins its ends; a must-link does when it
    lies on some simple must-link path between the ends of such a cannot-link. The
    simple ``u``-``v`` paths of a graph cover exactly the edges of the blocks
    (biconnected components) on the ``u``-``v`` path of its block-cut tree, so every
    conflicting cannot-link marks that tree path (difference counts at its ends and at
    their lowest common ancestor, then subtree sums).

    Parameters
    ----------
    n : int
        Number of nodes.
    pairs : ndarray of shape (n_constraints, 2)
    weights : ndarray of shape (n_constraints,)
        Signed weights (``> 0`` must-link).

    Returns
    -------
    ndarray of bool, shape (n_constraints,)

    Examples
    --------
    A must-link triangle ``0-1-2`` with a cannot-link ``(0, 2)``, and a must-link
    ``(2, 3)`` hanging off it, which no conflict goes through:

    >>> import numpy as np
    >>> on_conflict_cycles(4, np.array([[0, 1], [1, 2], [2, 3], [0, 2]]), np.array([1.0, 1.0, 1.0, -1.0]))
    array([ True,  True, False,  True])
    """
    import networkx as nx

    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    must = np.asarray(weights) > 0
    _, comp = must_link_components(n, pairs[must])
    out = ~must & (comp[pairs[:, 0]] == comp[pairs[:, 1]])
    bad = np.flatnonzero(out)
    if not len(bad):
        return out
    rows = np.flatnonzero(must)
    G = nx.Graph()
    G.add_edges_from((int(a), int(b), {"row": r}) for r, (a, b) in zip(rows.tolist(), pairs[rows].tolist()))
    # block-cut tree: node x < n is a vertex, n + j is block j
    block_of_row = np.full(len(pairs), -1, dtype=np.int64)
    tree_a, tree_b = [], []
    for j, edges in enumerate(nx.biconnected_component_edges(G)):
        block_of_row[[G.edges[e]["row"] for e in edges]] = j
        members = {x for e in edges for x in e}
        tree_a += members
        tree_b += [n + j] * len(members)
    m = n + int(block_of_row.max()) + 1
    T = sp.coo_array((np.ones(len(tree_a)), (tree_a, tree_b)), shape=(m, m)).tocsr()
    T = (T + T.T).tocsr()
    parent = np.arange(m)  # roots are their own parent
    depth = np.full(m, -1, dtype=np.int64)
    for root in np.unique(pairs[bad, 0]).tolist():
        if depth[root] >= 0:
            continue
        order, pred = breadth_first_order(T, root, directed=False, return_predecessors=True)
        parent[order[1:]] = pred[order[1:]]
        depth[root] = 0
        for x in order[1:].tolist():  # BFS order: the parent's depth is known
            depth[x] = depth[parent[x]] + 1
    # lowest common ancestors by binary lifting, all conflicting cannot-links at once
    up = [parent]
    for _ in range(max(int(depth.max()), 1).bit_length()):
        up.append(up[-1][up[-1]])
    u, v = pairs[bad, 0], pairs[bad, 1]
    deep = np.where(depth[u] >= depth[v], u, v)
    shallow = np.where(depth[u] >= depth[v], v, u)
    gap = depth[deep] - depth[shallow]
    for k, anc in enumerate(up):
        deep = np.where((gap >> k) & 1, anc[deep], deep)
    for anc in reversed(up):
        split = anc[deep] != anc[shallow]
        deep, shallow = np.where(split, anc[deep], deep), np.where(split, anc[shallow], shallow)
    lca = np.where(deep == shallow, deep, parent[deep])
    count = np.zeros(m, dtype=np.int64)
    np.add.at(count, u, 1)
    np.add.at(count, v, 1)
    np.add.at(count, lca, -1)
    above = parent[lca]
    np.add.at(count, above[above != lca], -1)
    reached = np.flatnonzero(depth > 0)
    by_depth = reached[np.argsort(-depth[reached], kind="stable")]
    levels = np.split(by_depth, np.flatnonzero(np.diff(depth[by_depth])) + 1)
    for level in levels:  # deepest first: subtree sums
        np.add.at(count, parent[level], count[level])
    on_path = count[n:] > 0
    out[rows] = on_path[block_of_row[rows]] & (block_of_row[rows] >= 0)
    return out


def data_plausibility(X, pairs, weights):
    """How much the data agree with each constraint, as a factor on its drop cost.

    With ``r`` the squared distance of the pair on standardised features over the
    median of all constrained pairs, a must-link gets ``2 / (1 + r)`` (far apart:
    cheap to drop) and a cannot-link ``2r / (1 + r)`` (close together: cheap to drop);
    a pair at the median distance keeps its weight.
    """
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(0)
    Z = (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)
    d = ((Z[pairs[:, 0]] - Z[pairs[:, 1]]) ** 2).sum(1)
    med = np.median(d) if len(d) else 0.0
    r = d / med if med > 0 else np.ones_like(d)
    return np.where(weights > 0, 2.0 / (1.0 + r), 2.0 * r / (1.0 + r))


def _features_of(data):
    """Node features in node order (means of merged nodes), or None."""
    if data is None:
        return None
    if _is_array(data):
        return np.asarray(data, dtype=np.float64)
    from .problem import Problem

    problem = data if isinstance(data, Problem) else Problem.from_graph(data)
    return None if problem.X is None else problem.feature_means


def repair(S, data=None, *, method="auto", n_clusters=None, exact_max=EXACT_MAX_NODES, data_vote=False,
           random_state=None):
    """``S`` without its likely-wrong constraints (see :func:`suspects`, whose
    parameters it takes), and the report.

    Returns
    -------
    repaired : SideInfo
        A copy of ``S`` (seeds kept) without the suspects: consistent side information.
    report : SuspectReport

    Examples
    --------
    >>> import graphclust as gc
    >>> S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)])
    >>> fixed, report = gc.repair(S)
    >>> len(fixed), fixed.check().conflicts
    (2, [])
    """
    report = suspects(S, data, method=method, n_clusters=n_clusters, exact_max=exact_max, data_vote=data_vote,
                      random_state=random_state)
    drop = {frozenset(s.constraint) for s in report.suspects}
    kept = [(u, v, w) for u, v, w in S.edges() if frozenset((u, v)) not in drop]
    return type(S)(kept, seeds=S.seeds), report


def _is_array(data):
    return isinstance(data, np.ndarray) or (isinstance(data, (list, tuple)) and len(data) and
                                            np.ndim(data) == 2)


def _nodes_of(S, data):
    if data is None:  # in the order the constraints name them: a reproducible report
        nodes = list(dict.fromkeys(x for u, v, _ in S.edges() for x in (u, v)))
    elif _is_array(data):  # rows are the nodes 0..n-1
        nodes = list(range(np.shape(data)[0]))
    else:  # a networkx graph or a Problem
        nodes = list(data.nodes)
    return nodes, {u: i for i, u in enumerate(nodes)}


def find_suspects(nodes, pairs, weights, *, exact_max=EXACT_MAX_NODES, plausibility=None):
    """The lightest set of soft constraints whose removal makes the rest consistent.

    Parameters
    ----------
    nodes : sequence
        Node keys (for the report).
    pairs : ndarray of shape (n_constraints, 2)
        Node indices of each constraint.
    weights : ndarray of shape (n_constraints,)
        Signed weights; ``±inf`` hard.
    exact_max : int, default=30
        Components of the must-link graph with at most this many nodes are solved
        exactly; larger ones greedily.
    plausibility : ndarray of shape (n_constraints,) or None, default=None
        Positive factors on the cost of dropping each constraint: below 1 for a
        constraint the data argue against (see :func:`data_plausibility`), so that
        among equally light repairs the one that drops those is chosen.

    Returns
    -------
    SuspectReport

    Raises
    ------
    InfeasibleConstraintsError
        A conflict made of hard constraints only.

    Examples
    --------
    Three must-links chain ``a`` to ``d``, which are cannot-linked: one of the four is
    wrong, and the weakest goes.

    >>> import numpy as np
    >>> rep = find_suspects(list("abcd"), np.array([[0, 1], [1, 2], [2, 3], [0, 3]]),
    ...                     np.array([2.0, 0.5, 2.0, -1.0]))
    >>> [str(s) for s in rep.suspects], rep.exact
    (["must-link ('b', 'c') (weight 0.5) on the conflict cycle 'a' - 'b' - 'c' - 'd'"], True)
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    n = len(nodes)
    hard = np.isinf(weights)
    check_constraints(nodes, pairs[hard], weights[hard]).raise_if_infeasible()
    # the data break ties between equally light repairs, they do not outvote the weights
    cost = weights if plausibility is None else weights * (1.0 + _DATA_SWAY * (np.asarray(plausibility) - 1.0))
    must = weights > 0
    _, comp = must_link_components(n, pairs[must])
    inside = comp[pairs[:, 0]] == comp[pairs[:, 1]]
    conflicting = np.unique(comp[pairs[inside & ~must, 0]])
    n_conflicts = int((inside & ~must).sum())
    removed, exact, bound = [], True, 0.0
    for c in conflicting.tolist():
        rows = np.flatnonzero((comp[pairs[:, 0]] == c) & (comp[pairs[:, 1]] == c))  # inside the component
        members = np.flatnonzero(comp == c)
        if len(members) <= exact_max:
            drop = rows[_exact(pairs[rows], cost[rows], members)]
            bound += float(np.abs(weights[drop]).sum())
        else:
            exact = False
            drop = rows[_greedy(pairs[rows], weights[rows], cost[rows], n)]
            bound += disjoint_cycles_bound(n, pairs[rows], weights[rows])
        removed.append(drop)
    rows = np.sort(np.concatenate(removed)) if removed else np.empty(0, np.int64)
    suspects = [Suspect((nodes[pairs[r, 0]], nodes[pairs[r, 1]]), float(weights[r]),
                        [nodes[i] for i in _cycle(pairs, weights, r, n)]) for r in rows.tolist()]
    weight = float(np.abs(weights[rows]).sum())
    return SuspectReport(suspects, weight, exact, n_conflicts, rows, lower_bound=weight if exact else bound)


def _exact(pairs, weights, members):
    """Correlation clustering of one component: the rows of ``pairs`` to drop."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    m = len(members)
    local = np.full(members.max() + 1, -1, dtype=np.int64)
    local[members] = np.arange(m)
    a, b = local[pairs[:, 0]], local[pairs[:, 1]]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    index = {p: k for k, p in enumerate(combinations(range(m), 2))}
    var = np.array([index[(i, j)] for i, j in zip(lo.tolist(), hi.tolist())], dtype=np.int64)
    n_var = len(index)
    # minimise  sum_ML w (1 - s) + sum_CL |w| s  =  const + sum c s
    cost = np.zeros(n_var)
    finite = np.isfinite(weights)
    np.add.at(cost, var[finite], -weights[finite])
    lower, upper = np.zeros(n_var), np.ones(n_var)
    lower[var[np.isposinf(weights)]] = 1.0  # hard must-link: same part
    upper[var[np.isneginf(weights)]] = 0.0  # hard cannot-link: apart
    rows, cols, vals = [], [], []
    r = 0
    for i, j, k in combinations(range(m), 3):
        ij, jk, ik = index[(i, j)], index[(j, k)], index[(i, k)]
        for x, y, z in ((ij, jk, ik), (ij, ik, jk), (ik, jk, ij)):  # s_x + s_y - s_z <= 1
            rows += [r, r, r]
            cols += [x, y, z]
            vals += [1.0, 1.0, -1.0]
            r += 1
    constraints = []
    if r:
        A = sp.csr_array((vals, (rows, cols)), shape=(r, n_var))
        constraints.append(LinearConstraint(A, -np.inf, 1.0))
    res = milp(cost, integrality=np.ones(n_var), bounds=Bounds(lower, upper), constraints=constraints)
    s = np.round(res.x).astype(bool)
    same = s[var]
    return np.flatnonzero(np.where(weights > 0, ~same, same))


def _greedy(pairs, weights, cost, n):
    """Rows to drop so that no cannot-link stays inside a must-link component.

    A wrong must-link joins two groups, so it lies on the conflict cycles of many
    cannot-links at once; a wrong cannot-link lies on its own cycle only. Each round
    takes the shortest must-link path of every remaining conflict and drops the soft
    must-link on the most of them per unit of weight. When no must-link is on
    ``_MIN_LOAD`` conflicts, the cheapest soft constraint of each cycle goes instead
    (the cannot-link on ties).
    """
    dropped = np.zeros(len(weights), dtype=bool)
    must = weights > 0
    soft = np.isfinite(weights)
    while True:
        kept_must = must & ~dropped
        bad = np.flatnonzero(_cannot_inside(n, pairs, kept_must, ~must & ~dropped))
        if not len(bad):
            return np.flatnonzero(dropped)
        flat, begin, length = _conflict_paths(pairs, kept_must, n, bad)
        load = np.bincount(flat, minlength=len(weights)).astype(np.float64)  # a path repeats no edge
        load[~soft] = 0.0
        score = np.where(load >= _MIN_LOAD, load / np.abs(weights), 0.0)
        if score.max() > 0:
            dropped[int(np.argmax(score))] = True
            continue
        # every must-link is on one conflict at most: break each cycle where it is cheapest
        for c, b, m in zip(bad.tolist(), begin.tolist(), length.tolist()):
            candidates = [r for r in [c] + flat[b:b + m].tolist() if soft[r]]  # ties: the cannot-link goes
            dropped[min(candidates, key=lambda r: abs(cost[r]))] = True


def _cannot_inside(n, pairs, must, cannot):
    """Which rows of the mask ``cannot`` join two nodes that a path of the must-link
    rows ``must`` connects (conflicts, with those rows)."""
    _, comp = must_link_components(n, pairs[must])
    return cannot & (comp[pairs[:, 0]] == comp[pairs[:, 1]])


def _conflict_paths(pairs, kept_must, n, bad):
    """For each conflicting cannot-link row in ``bad``: the rows of the must-links on a
    shortest must-link path between its ends (one breadth-first search per distinct
    start node, neighbours in node order), from its second end back to its first.
    Returned flat: ``(rows, begin, length)``, the path of ``bad[j]`` being
    ``rows[begin[j]:begin[j] + length[j]]``."""
    indptr, indices, edge_row = _must_link_csr(pairs, kept_must, n)
    starts, ends = pairs[bad, 0], pairs[bad, 1]
    order = np.argsort(starts, kind="stable")
    flat, begin, length = _shortest_path_rows(indptr, indices, edge_row, n, starts[order], ends[order])
    at = np.empty_like(order)
    at[order] = np.arange(len(order))
    return flat, begin[at], length[at]


def _must_link_csr(pairs, use, n):
    """The undirected must-link graph of the rows ``use`` as CSR arrays, neighbours in
    node order, with the constraint row behind each entry (the last row of parallel
    must-links; self-loops left out)."""
    rows = np.flatnonzero(use)
    a, b = pairs[rows, 0], pairs[rows, 1]
    keep = a != b
    rows, a, b = rows[keep], a[keep], b[keep]
    key = np.minimum(a, b) * n + np.maximum(a, b)
    _, last = np.unique(key[::-1], return_index=True)
    pick = len(key) - 1 - last
    rows, a, b = rows[pick], a[pick], b[pick]
    src, dst, row = np.concatenate([a, b]), np.concatenate([b, a]), np.concatenate([rows, rows])
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, dst[order].astype(np.int64), row[order].astype(np.int64)


@njit(cache=True)
def _grow_tree(indptr, indices, edge_row, blocked, s, it, wanted, missing, stamp, pred, pred_row, queue):
    """Breadth-first from ``s`` over the entries whose row is not ``blocked``: every
    node reached gets ``stamp == it`` and its predecessor (node and row). The search
    stops once the ``missing`` nodes with ``wanted == it`` are reached: the tree grown
    so far is what a full search would have for them."""
    stamp[s] = it
    queue[0] = s
    head, tail = 0, 1
    while head < tail and missing > 0:
        x = queue[head]
        head += 1
        for k in range(indptr[x], indptr[x + 1]):
            y = indices[k]
            if stamp[y] != it and not blocked[edge_row[k]]:
                stamp[y] = it
                pred[y] = x
                pred_row[y] = edge_row[k]
                queue[tail] = y
                tail += 1
                if wanted[y] == it:
                    missing -= 1


@njit(cache=True)
def _shortest_path_rows(indptr, indices, edge_row, n, starts, ends):
    """Breadth-first search from each distinct start (``starts`` sorted), and for every
    ``(start, end)`` the edge rows of the path found, walked from the end: a flat
    buffer with each pair's ``begin`` and ``length``."""
    m = len(starts)
    stamp = np.zeros(n, dtype=np.int64)
    pred = np.empty(n, dtype=np.int64)
    pred_row = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    blocked = np.zeros(edge_row.max() + 1 if len(edge_row) else 1, dtype=np.bool_)
    begin = np.zeros(m, dtype=np.int64)
    length = np.zeros(m, dtype=np.int64)
    flat = np.empty(max(4 * m, 16), dtype=np.int64)
    size = 0
    it = 0
    j = 0
    wanted = np.zeros(n, dtype=np.int64)
    while j < m:
        s = starts[j]
        it += 1
        missing = 0
        e = j
        while e < m and starts[e] == s:
            if wanted[ends[e]] != it and ends[e] != s:
                wanted[ends[e]] = it
                missing += 1
            e += 1
        _grow_tree(indptr, indices, edge_row, blocked, s, it, wanted, missing, stamp, pred, pred_row, queue)
        while j < m and starts[j] == s:
            begin[j] = size
            x = ends[j]
            while x != s and stamp[x] == it:
                if size == len(flat):
                    grown = np.empty(2 * len(flat), dtype=np.int64)
                    grown[:size] = flat[:size]
                    flat = grown
                flat[size] = pred_row[x]
                size += 1
                x = pred[x]
            length[j] = size - begin[j]
            j += 1
    return flat[:size], begin, length


def disjoint_cycles_bound(n, pairs, weights):
    """A lower bound on the weight any repair of ``(pairs, weights)`` removes.

    Conflict cycles that share no constraint each lose at least their lightest soft
    constraint, and to different constraints, so the sum of those weights bounds every
    repair from below. The cycles are packed greedily: each conflicting cannot-link in
    turn, closed by a shortest must-link path through must-links no earlier cycle used.

    Examples
    --------
    Two conflicts that share the must-link ``1-2``: one cycle fits, and one constraint
    (that must-link) repairs both:

    >>> import numpy as np
    >>> disjoint_cycles_bound(4, np.array([[0, 1], [1, 2], [2, 3], [0, 2], [1, 3]]),
    ...                       np.array([1.0, 1.0, 1.0, -1.0, -1.0]))
    1.0
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    must = weights > 0
    bad = np.flatnonzero(_cannot_inside(n, pairs, must, ~must))
    if not len(bad):
        return 0.0
    indptr, indices, edge_row = _must_link_csr(pairs, must, n)
    return float(_pack_cycles(indptr, indices, edge_row, n, pairs[bad, 0], pairs[bad, 1],
                              np.abs(weights[bad]), np.abs(weights)))


@njit(cache=True)
def _pack_cycles(indptr, indices, edge_row, n, starts, ends, cl_weight, row_weight):
    used = np.zeros(len(row_weight), dtype=np.bool_)
    stamp = np.zeros(n, dtype=np.int64)
    pred = np.empty(n, dtype=np.int64)
    pred_row = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    wanted = np.zeros(n, dtype=np.int64)
    total = 0.0
    for j in range(len(starts)):
        s, t = starts[j], ends[j]
        wanted[t] = j + 1
        _grow_tree(indptr, indices, edge_row, used, s, j + 1, wanted, int(t != s), stamp, pred, pred_row, queue)
        if stamp[t] != j + 1:
            continue
        lightest = cl_weight[j]
        x = t
        while x != s:
            r = pred_row[x]
            used[r] = True
            if row_weight[r] < lightest:
                lightest = row_weight[r]
            x = pred[x]
        if np.isfinite(lightest):
            total += lightest
    return total


def _cycle(pairs, weights, r, n):
    """Nodes of a conflict cycle through constraint ``r``: for a cannot-link, a
    must-link path between its ends; for a must-link, a must-link path from one end of
    some cannot-link through it to the other end."""
    must = weights > 0
    others = must.copy()
    others[r] = False
    if not must[r]:
        u, v = pairs[r]
        return _node_path(pairs, must, n, u, v) or [u, v]
    a, b = pairs[r]
    # a cannot-link (u, v) with u reachable from a and v from b without this must-link
    _, comp = must_link_components(n, pairs[others])
    for c in np.flatnonzero(~must).tolist():
        u, v = pairs[c]
        for x, y in ((u, v), (v, u)):
            if comp[x] == comp[a] and comp[y] == comp[b]:
                return _node_path(pairs, others, n, x, a) + _node_path(pairs, others, n, b, y)
    return [a, b]


def _node_path(pairs, use, n, u, v):
    """The nodes of a shortest path of the must-link rows ``use`` from ``u`` to ``v``
    (the search of :func:`_conflict_paths`); ``[]`` when none joins them."""
    if u == v:
        return [int(u)]
    indptr, indices, edge_row = _must_link_csr(pairs, use, n)
    rows, _, _ = _shortest_path_rows(indptr, indices, edge_row, n, np.array([u]), np.array([v]))
    if not len(rows):
        return []
    path = [int(v)]
    for a, b in pairs[rows].tolist():  # walked from v: each row leads to the other end
        path.append(a if b == path[-1] else b)
    return path[::-1]
