"""Graph-cut move engines: α-expansion and αβ-swap (Boykov, Veksler & Zabih 2001).

Both engines lower the energy by a sequence of *moves*, each the exact or bounded
minimum of a binary sub-problem solved by one s–t minimum cut with the project's own
Boykov–Kolmogorov max-flow (:func:`graphclust.inference.exact._bk_maxflow`):

* an **α-expansion** move lets every node either keep its label or take label α;
* an **αβ-swap** move lets every node labelled α or β take either of the two, the
  others keep theirs.

They work on any graph an :class:`~graphclust.energy.Energy` holds (2-D and 3-D grids,
k-NN graphs, superpixel graphs): the arc layout of the flow graph is built once per run
from the energy's pair terms (int32 indices when they fit) and only the capacities are
refilled for every move, by a compiled kernel that reads each term once. Label costs
enter the cut through ``n_labels + 1`` auxiliary nodes (Delong et al. 2012), whose arcs
follow the labelling: their part of the layout is rebuilt when it changes.

:class:`ExpansionSolver` keeps all this between solves, plus the maximum flow of every
move, so that re-solving after a few unary rows changed resumes each cut from its
previous flow (dynamic graph cuts, Kohli & Torr 2007).

A move is written as a binary energy over ``x_i ∈ {0, 1}`` where ``x_i = 0`` gives node
``i`` its candidate label ``l0_i`` and ``x_i = 1`` the label ``l1_i``; a pair term
becomes a 2×2 table ``(A, B, C, D) = (θ(l0_i, l0_j), θ(l0_i, l1_j), θ(l1_i, l0_j),
θ(l1_i, l1_j))``. When ``A + D ≤ B + C`` (attractive Potts terms, must-links, metric
tables under expansion) the table is submodular and the cut is exact. Otherwise
(cannot-links, repulsive Potts, non-metric tables) it is *truncated* (Rother et al.
2005): ``B`` or ``C`` — never the entry of the current labelling — is raised until the
table is submodular. The truncated move energy is then an upper bound of the true one
that equals it at the current labelling, so its minimum never costs more than where the
move started. Such a move then also solves the move's roof dual (QPBO, on a doubled
graph): the nodes it labels overwrite the truncated cut's answer, which by weak
persistency never costs more, and frees the nodes the truncation froze.

When no move improves any more, the labelling is fused with its runner-up labelling
(every node's best other label given its neighbours) by one more roof-dual cut, in
which nodes may take different labels at once; when that gains, the moves resume.
"""

import time
import warnings

import numpy as np
from numba import njit

from .._params import Boolean
from .._utils import check_float, check_int, check_random_state, progress_bar
from ..errors import InvalidParameterError
from .base import InferenceResult, check_unary_update, register_engine
from .exact import _SINK_TREE, _bk_maxflow, _bk_reflow, _bk_structure, _bk_structure_pairs, _FlowState, _index_dtype
from .icm import _finite_unary, _initial_labels

__all__ = ["alpha_expansion", "alpha_beta_swap", "ExpansionSolver"]

#: a move is kept only when it lowers the energy by more than this, relative
REL_TOL = 1e-12
_NON_METRIC = ("swap", "raise")


@register_engine("expansion")
def alpha_expansion(energy, *, init=None, order="fixed", max_iter=100, tol=1e-7, non_metric="swap", fusion=True,
                    random_state=None, callback=None, progress=False):
    """Minimise an energy with α-expansion moves solved by minimum cuts.

    Every cycle visits the labels once; for label α one minimum cut finds the best
    labelling in which each node keeps its label or switches to α. A move is kept only
    when the labelling it proposes has a strictly lower energy (re-scored with
    :meth:`Energy.evaluate`, see Notes), so the energy never increases. The run stops
    when no label can improve the labelling any more (``converged=True``), when a
    cycle gains less than ``tol`` relative, or after ``max_iter`` cycles.

    Parameters
    ----------
    energy : Energy
        Unaries, signed Potts terms (``±inf`` hard), optional label costs and pair
        tables on any graph.
    init : array-like of int, shape (n_nodes,) or None, default=None
        Starting labelling. ``None`` starts from the unary argmin (ties to the lowest
        label).
    order : {"fixed", "random"}, default="fixed"
        Label order of each cycle: ``0..n_labels-1`` (the classic schedule,
        deterministic), or a new permutation drawn from ``random_state`` every cycle.
        Neither is better in general; on the 1024² grid of
        ``docs/benchmarks/expansion.md`` the fixed order needed fewer cycles.
    max_iter : int, default=100
        Maximum number of cycles over the labels.
    tol : float, default=1e-7
        Stop when a cycle lowers the energy by at most ``tol · |E|`` (scale-free);
        ``0`` runs until no move improves (a local minimum under expansion moves).
    non_metric : {"swap", "raise"}, default="swap"
        What to do when a pair table is not a metric, i.e. breaks
        ``T[α, α] + T[β, γ] ≤ T[β, α] + T[α, γ]`` for some labels (then expansion moves
        are not submodular on it): run αβ-swap moves instead (``info["moves"]`` says
        so) or raise :class:`~graphclust.errors.InvalidParameterError` naming the first
        such table edge. Signed Potts terms never need this: cannot-links are truncated
        (Notes).
    fusion : bool, default=True
        When no move improves any more, fuse the labelling with its *runner-up* (every
        node's best other label given its neighbours) by one roof-dual cut, which lets
        several nodes take different labels at once; when that lowers the energy, the
        moves resume from there (Notes). ``False`` stops at the moves' local minimum.
    random_state : int, numpy.random.Generator or None, default=None
        Seeds the label orders (``order="random"`` only).
    callback : callable or None, default=None
        ``callback(cycle, labels, energy_value)`` after every cycle; returning ``True``
        stops the run.
    progress : bool, default=False
        Show a tqdm bar over the cycles.

    Returns
    -------
    InferenceResult
        ``energy`` is ``energy.evaluate(labels)``; ``history`` the energy after every
        cycle; ``iterations`` the number of cycles; ``converged`` whether the run ended
        at a labelling neither the moves nor the fusion improve, or below ``tol``;
        ``lower_bound`` is None.
        ``info`` holds ``moves`` (``"expansion"`` or ``"swap"``), ``n_moves`` (cuts
        solved), ``n_accepted``, ``n_truncated`` (non-submodular pair terms truncated,
        summed over the moves), ``n_fusion_tries`` and ``n_fusions`` (runner-up
        fusions tried and kept), ``move_history`` (the energy after every move, on the
        finite surrogate when hard terms are present; never increasing) and
        ``violated_hard_terms``.

    Raises
    ------
    InvalidParameterError
        A bad ``init``, ``order``, ``max_iter``, ``tol`` or ``non_metric``, or a
        non-metric table with ``non_metric="raise"`` (the message names its edge).

    See Also
    --------
    alpha_beta_swap : the swap moves, for semi-metric tables.
    graphclust.inference.belief_propagation : message passing on the same energy.
    graphclust.inference.mincut : the exact minimum for two labels.

    Notes
    -----
    **Guarantees.** Every move is checked with the energy itself and kept only when it
    lowers it, so the energy never increases, from any ``init``:

    * attractive Potts terms with per-edge weights, hard must-links and metric tables
      give submodular moves solved exactly; at convergence (``tol=0``) the result is
      within the classic factor of the optimum, for Potts
      ``E(x̂) ≤ E_unary(x*) + 2·E_pair(x*) ≤ 2·E(x*)`` when unaries are ≥ 0;
    * repulsive terms (cannot-links) are truncated: of the two entries where exactly
      one end moves to α, the one where the end that gains less from α moves is raised
      until the term is submodular. The truncated move energy bounds the true one from
      above and equals it at the current labelling, so the move never costs more than
      staying put. A truncated move freezes one end of such a pair, so it is followed
      by the roof dual (QPBO) of the exact move energy, whose labelled nodes replace the
      truncated answer there; weak persistency makes that never worse. Neither finds
      the best move in general (that is NP-hard with repulsive terms), but a labelling
      that satisfies every hard cannot-link keeps satisfying them;
    * hard (``±inf``) terms are replaced by :meth:`Energy.hard_penalty`, larger than any
      difference the finite terms can make, so from a labelling that violates hard terms
      the moves reduce the violations first, and from one that satisfies them every
      accepted move keeps them satisfied (checked again on the true energy);
    * label costs are inside the cut (Delong, Osokin, Isack & Boykov 2012): a label
      ``L ≠ α`` that the move could empty gets one auxiliary node joined to the nodes
      holding it, and α, when unused, one joined to every node that may take it, so
      with attractive terms each move is the exact best expansion move of the full
      energy, label costs included (a group of nodes can open a label that no single
      node could pay for, and a label can be emptied). Truncated moves compare the roof
      dual's answer with the cut's by the full energy.

    With two labels the one swap move between them is the whole binary problem, so it
    is used instead of the two expansion moves: on a binary attractive energy the
    result is the exact minimum, as :func:`~graphclust.inference.mincut` gives.

    **Runner-up fusion.** An expansion move gives its nodes one new label; a group of
    neighbours that must take two different labels together to gain (one to α, its
    neighbour to β) is out of reach of every expansion and swap move. At the moves'
    local minimum ``z`` the runner-up ``y`` (each node's best label other than ``z_i``
    with its neighbours as in ``z``) is *fused* with ``z`` (Lempitsky, Rother, Roth &
    Blake 2010): each node keeps ``z_i`` or takes ``y_i``, a binary energy that is not
    submodular in general and is solved by its roof dual; nodes it leaves undecided
    keep ``z_i``, so by weak persistency the fusion never costs more than ``z`` (it is
    kept only when strictly better, like a move). Nodes that cannot gain from ``y_i``
    whatever their neighbours choose are fixed first, so the fusion's graph covers
    only the contested nodes. On ``docs/benchmarks/expansion.md``'s superpixel and
    k-NN energies it took expansion from 0.008 % above BP (and TRW-S's optimum) to
    equal, and on the harder 1024² grid below PyMaxflow's α-expansion. Not with label costs
    (their auxiliary nodes assume one new label per move).

    **Cost.** One move costs one pass over the terms to fill the capacities plus one
    max-flow (two, the second on a graph twice the size, when a term was truncated);
    a cycle costs ``n_labels`` moves. Nodes already labelled α carry no arc
    capacity in the α move. Label costs add ``n_labels + 1`` nodes and two arcs per
    node, and a linear-time rebuild of the layout after every accepted expansion move
    (every swap move). The re-scoring costs ``O(n_nodes + n_edges)`` per move
    that changes a label.

    References
    ----------
    Y. Boykov, O. Veksler, R. Zabih, "Fast approximate energy minimization via graph
    cuts", IEEE TPAMI 23(11), 2001. doi:10.1109/34.969114

    A. Delong, A. Osokin, H. N. Isack, Y. Boykov, "Fast approximate energy minimization
    with label costs", IJCV 96(1), 2012. doi:10.1007/s11263-011-0437-z

    V. Kolmogorov, R. Zabih, "What energy functions can be minimized via graph cuts?",
    IEEE TPAMI 26(2), 2004. doi:10.1109/TPAMI.2004.1262177

    C. Rother, S. Kumar, V. Kolmogorov, A. Blake, "Digital tapestry", CVPR 2005.
    doi:10.1109/CVPR.2005.130

    V. Kolmogorov, C. Rother, "Minimizing nonsubmodular functions with graph cuts — a
    review", IEEE TPAMI 29(7), 2007. doi:10.1109/TPAMI.2007.1031

    V. Lempitsky, C. Rother, S. Roth, A. Blake, "Fusion moves for Markov random field
    optimization", IEEE TPAMI 32(8), 2010. doi:10.1109/TPAMI.2009.143

    Examples
    --------
    Four nodes on a path, three labels, and a hard cannot-link between the ends. The
    unary argmin ``[0, 1, 1, 0]`` breaks the cannot-link; the moves repair it and reach
    the optimum:

    >>> import numpy as np
    >>> from graphclust.energy import Energy
    >>> U = [[0.0, 3.0, 3.0], [0.5, 0.0, 3.0], [3.0, 0.0, 0.5], [0.0, 0.5, 0.0]]
    >>> E = Energy(U, edges=[(0, 1), (1, 2), (2, 3), (0, 3)], weights=[1.0, 1.0, 1.0, -np.inf])
    >>> E.evaluate(E.unary.argmin(axis=1))
    inf
    >>> result = alpha_expansion(E, random_state=0)
    >>> result.labels, result.energy, result.converged
    (array([0, 1, 1, 1]), 1.5, True)
    """
    moves = _pick_moves(energy, non_metric)
    return _run(energy, moves, init=init, order=order, max_iter=max_iter, tol=tol, fusion=fusion,
                random_state=random_state, callback=callback, progress=progress)


@register_engine("swap")
def alpha_beta_swap(energy, *, init=None, order="fixed", max_iter=100, tol=1e-7, fusion=True, random_state=None,
                    callback=None, progress=False):
    """Minimise an energy with αβ-swap moves solved by minimum cuts.

    Every cycle visits each pair of labels ``α < β`` once; one minimum cut finds the
    best relabelling of the nodes labelled α or β among those two labels, the other
    nodes keep theirs. As for :func:`alpha_expansion`, a move is kept only when the
    re-scored energy strictly decreases, and the options, stopping rule and result are
    the same.

    Parameters
    ----------
    energy : Energy
    init : array-like of int, shape (n_nodes,) or None, default=None
    order : {"fixed", "random"}, default="fixed"
        Order of the label pairs in each cycle: ``(0, 1), (0, 2), …`` or a new random
        permutation every cycle.
    max_iter : int, default=100
        Maximum number of cycles over the ``n_labels·(n_labels−1)/2`` pairs.
    tol : float, default=1e-7
        Stop when a cycle lowers the energy by at most ``tol · |E|``.
    fusion : bool, default=True
        The runner-up fusion at the moves' local minimum, as in :func:`alpha_expansion`.
    random_state : int, numpy.random.Generator or None, default=None
    callback : callable or None, default=None
        ``callback(cycle, labels, energy_value)``; returning ``True`` stops the run.
    progress : bool, default=False

    Returns
    -------
    InferenceResult
        As for :func:`alpha_expansion` (``info["moves"] == "swap"``).

    Raises
    ------
    InvalidParameterError
        A bad ``init``, ``order``, ``max_iter`` or ``tol``.

    See Also
    --------
    alpha_expansion : usually better and faster on metric energies.

    Notes
    -----
    A swap move is submodular when every pair term is a *semi-metric* on the two
    labels, ``T[α, α] + T[β, β] ≤ T[α, β] + T[β, α]``: attractive Potts terms and
    must-links always are. Repulsive terms (cannot-links) and other tables are
    truncated, then the roof dual applied, as described in :func:`alpha_expansion`,
    which keeps every move from
    increasing the energy and hard cannot-links satisfied once they are. With two
    labels one swap move is the whole problem: exact on binary attractive energies.

    References
    ----------
    Y. Boykov, O. Veksler, R. Zabih, "Fast approximate energy minimization via graph
    cuts", IEEE TPAMI 23(11), 2001. doi:10.1109/34.969114

    Examples
    --------
    >>> from graphclust.energy import Energy
    >>> E = Energy([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], edges=[(0, 1), (1, 2)], weights=[0.8, 0.8])
    >>> result = alpha_beta_swap(E, random_state=0)
    >>> result.labels, result.energy
    (array([0, 0, 0]), 1.0)
    """
    return _run(energy, "swap", init=init, order=order, max_iter=max_iter, tol=tol, fusion=fusion,
                random_state=random_state, callback=callback, progress=progress)


# --------------------------------------------------------------------------- the run
def _run(energy, moves, *, init, order, max_iter, tol, fusion, random_state, callback, progress):
    t0 = time.perf_counter()
    order, max_iter, tol, rng = _check_run_options(order, max_iter, tol, random_state)
    graph = _MoveGraph(energy, moves, fusion=_check_fusion(fusion))
    z = _initial_labels(energy, init).copy()
    return graph.descend(z, order=order, max_iter=max_iter, tol=tol, rng=rng, callback=callback,
                         progress=progress, t0=t0)


def _check_fusion(fusion):
    Boolean().check(fusion, "fusion")
    return bool(fusion)


def _check_run_options(order, max_iter, tol, random_state):
    if order not in ("random", "fixed"):
        raise InvalidParameterError(f"order must be 'random' or 'fixed', got {order!r}")
    return order, check_int(max_iter, "max_iter", low=1), check_float(tol, "tol", low=0.0), \
        check_random_state(random_state)


class _MoveGraph:
    """What a sequence of moves on one energy shares: the finite surrogate the moves
    descend, the term arrays, the arc layout of the move graph, the roof-dual graph and,
    with ``reuse_flows``, one :class:`~graphclust.inference.exact._FlowState` per move
    (the residual graph and search trees its last cut left), so that the next cut of
    the same move starts from that flow instead of from zero."""

    def __init__(self, energy, moves, *, reuse_flows=False, fusion=True):
        self.energy = energy
        self.moves = moves
        n, K = energy.n_nodes, energy.n_labels
        self.penalty = energy.hard_penalty() if energy.has_hard_terms else None
        self._surrogate()
        F = self.F
        self.m = F.n_edges
        self.idx = _index_dtype(2 * n + 1, 8 * (F.n_edges + len(energy.tables)) + 1)  # int32 when it fits (QPBO too)
        self.e0 = np.concatenate([F.edges[:, 0], energy.table_edges[:, 0]]).astype(self.idx)
        self.e1 = np.concatenate([F.edges[:, 1], energy.table_edges[:, 1]]).astype(self.idx)
        self.tables = np.ascontiguousarray(energy.tables, dtype=np.float64)
        # label costs enter the cut through K + 1 auxiliary nodes (see _fill_label_costs):
        # node i gets an arc to aux n + l0[i] and one from aux n + K, so the layout
        # follows l0 and is rebuilt when it changes (a counting sort, linear time)
        lc = energy.label_costs
        self.h = np.ascontiguousarray(lc, dtype=np.float64) if lc is not None and (lc > 0).any() else None
        self.n_graph = n if self.h is None else n + K + 1
        if self.h is None:
            self.layout = _bk_structure_pairs(n, self.e0, self.e1)
            self.n_terms = len(self.e0)
        else:
            self.n_terms = len(self.e0)
            node = np.arange(n, dtype=self.idx)
            self.g0 = np.concatenate([self.e0, node, node])
            self.g1 = np.concatenate([self.e1, node, np.full(n, n + K, self.idx)])
            self.layout_l0 = None
        self.res = np.zeros(2 * (self.n_terms + (0 if self.h is None else 2 * n)))
        self.tr = np.zeros(self.n_graph)
        # terms that can be non-submodular (repulsive Potts, tables) get the roof-dual graph
        maybe_ns = np.concatenate([F.weights < 0, np.ones(len(self.tables), dtype=bool)])
        self.qpbo = _QPBOGraph(n, self.e0, self.e1, maybe_ns) if maybe_ns.any() else None
        if moves == "expansion":
            self.steps = [(a, -1) for a in range(K)]
        else:
            self.steps = [(a, b) for a in range(K) for b in range(a + 1, K)]
        self.flows = {} if reuse_flows and self.h is None else None
        # infinite pair weights never change here: without them the hard terms a
        # labelling violates are its forbidden unaries, counted on the nodes a move changes
        self.inf_pairs = bool(np.isinf(energy.weights).any())
        self.spread = None  # per-node spread of the finite unaries, for the penalty (see unary_changed)
        # the runner-up fusion gives nodes different labels at once, which the label-cost
        # construction (one auxiliary node per side) cannot express
        self.fusion = bool(fusion) and self.h is None

    def _surrogate(self):
        """The finite energy the moves descend (the energy itself without hard terms)."""
        energy = self.energy
        if self.penalty is None:
            self.F = energy
        else:
            self.F = energy.finite(self.penalty)
            self.F.unary = _finite_unary(energy.unary, self.penalty)
        self.U = np.ascontiguousarray(self.F.unary)
        self.w = np.ascontiguousarray(self.F.weights, dtype=np.float64)

    def unary_changed(self, nodes):
        """The energy's unary rows ``nodes`` changed (in place): update the surrogate,
        keeping its hard penalty unless the new unaries need a larger one."""
        energy = self.energy
        if not energy.has_hard_terms:
            if self.penalty is None:
                if self.U is not energy.unary:
                    self.U[nodes] = energy.unary[nodes]
                return
            self.penalty = None
            self._surrogate()
            return
        need = self._penalty_after(nodes)
        if self.penalty is None or need > self.penalty:
            self.penalty = need
            self._surrogate()
            return
        # a larger penalty than needed is still a valid one: only the rows change
        self.U[nodes] = _finite_unary(energy.unary[nodes], self.penalty)

    def _penalty_after(self, nodes):
        """:meth:`Energy.hard_penalty` after the unary rows ``nodes`` changed, from the
        stored per-node spreads (the rows' spreads replaced), in time proportional to
        the rows; the full computation the first time."""
        energy = self.energy
        if self.spread is None or energy.label_costs is not None or len(energy.tables):
            U = energy.unary
            self.spread = _spread(U)
            self.spread_sum = float(self.spread.sum())
            w = energy.weights[np.isfinite(energy.weights)]
            self.rest = float(np.abs(w).sum())
            return energy.hard_penalty()
        new = _spread(energy.unary[nodes])
        self.spread_sum += float(new.sum() - self.spread[nodes].sum())
        self.spread[nodes] = new
        return float(1.0 + 2.0 * (self.spread_sum + self.rest))

    def delta(self, z, new, changed):
        """``F(new) - F(z)`` of the surrogate, from the ``changed`` nodes and the pair
        terms touching them (None when pair tables or label costs need a full score)."""
        if len(self.tables) or self.h is not None:
            return None
        U, e0, e1, w = self.U, self.e0, self.e1, self.w
        d = float(U[changed, new[changed]].sum() - U[changed, z[changed]].sum())
        mark = np.zeros(len(z), dtype=bool)
        mark[changed] = True
        touch = np.flatnonzero(mark[e0] | mark[e1])
        a, b, wt = e0[touch], e1[touch], w[touch]
        cut_new = new[a] != new[b]
        cut_old = z[a] != z[b]
        # attractive terms cost w when cut, repulsive ones |w| when joined
        d += float(np.where(wt > 0, wt * (cut_new.astype(np.float64) - cut_old),
                            -wt * ((~cut_new).astype(np.float64) - (~cut_old))).sum())
        return d

    def hard_increase(self, z, new, changed):
        """Whether ``new`` violates more hard terms than ``z``."""
        energy = self.energy
        if self.inf_pairs:
            return energy.violated_hard_terms(new) > energy.violated_hard_terms(z)
        U = energy.unary
        return int(np.isinf(U[changed, new[changed]]).sum()) > int(np.isinf(U[changed, z[changed]]).sum())

    def fuse_runner_up(self, z):
        """The fusion move of ``z`` with its runner-up labelling, or None when it
        changes nothing.

        The runner-up gives every node its best other label with its neighbours as in
        ``z``. Only nodes on a label boundary of ``z`` and their neighbours may take it
        (a restriction: inside a region of one label, a change of the whole region to
        one label is an expansion move, already tried), less those that cannot gain
        from ``y_i`` whatever their neighbours do (see :func:`_runner_up`; nothing is
        lost by fixing those), so the fusion's graph covers only contested nodes. Each
        of them keeps ``z_i`` or takes ``y_i``; that binary problem is solved by its
        roof dual (QPBO, Kolmogorov & Rother 2007), and nodes it leaves unlabelled keep
        ``z_i`` (weak persistency: never worse than ``z``). Unlike an expansion or swap
        move, the nodes may take different labels at once, which frees groups that no
        single label can move (Lempitsky et al. 2010)."""
        # candidates: the nodes on a label boundary of z and their neighbours. A region of
        # one label turning into another as a whole is an expansion move, already tried;
        # leaving region interiors out keeps the fusion cheap on grids
        e0, e1 = self.e0, self.e1
        boundary = _ends(len(z), e0, e1, z[e0] != z[e1])
        candidates = _ends(len(z), e0, e1, boundary[e0] | boundary[e1])
        _, adj_ptr, adj_arc = self.layout
        y, movable = _runner_up(self.U, self.e0, self.e1, self.w, self.m, self.tables, z, candidates, adj_ptr,
                                adj_arc)
        if not movable.any():
            return None
        touch = movable[e0] | movable[e1]
        nodes = np.flatnonzero(_ends(len(z), e0, e1, touch))
        local = np.full(len(z), -1, np.int64)
        local[nodes] = np.arange(len(nodes))
        potts = np.flatnonzero(touch[:self.m])
        tabs = np.flatnonzero(touch[self.m:])
        keep = np.concatenate([potts, self.m + tabs])
        e0, e1 = local[e0[keep]], local[e1[keep]]
        l0 = z[nodes].astype(np.int64)
        l1 = np.where(movable[nodes], y[nodes], l0)
        graph = _QPBOGraph(len(nodes), e0, e1, np.ones(len(keep), dtype=bool))
        x = graph.fuse(np.zeros(len(nodes), dtype=bool), l0, l1, np.ascontiguousarray(self.U[nodes]), e0, e1,
                       np.ascontiguousarray(self.w[potts]), np.ascontiguousarray(self.tables[tabs]))
        if not x.any():
            return None
        new = z.copy()
        new[nodes[x]] = l1[x]
        return new

    @property
    def flow_bytes(self):
        return 0 if not self.flows else sum(s.nbytes for s in self.flows.values())

    def cut(self, s, l0, l1, xcur):
        """Solve move ``s`` (labels ``l0`` on the source side, ``l1`` on the sink side):
        ``(x, n_truncated)`` with ``x`` True where the node takes ``l1``."""
        n = self.energy.n_nodes
        if self.h is not None and (self.layout_l0 is None or not np.array_equal(l0, self.layout_l0)):
            self.g1[self.n_terms:self.n_terms + n] = n + l0
            self.layout = _bk_structure_pairs(self.n_graph, self.g0, self.g1)
            self.layout_l0 = l0.copy()
        head, adj_ptr, adj_arc = self.layout
        _, total, n_trunc = _fill_move(l0, l1, xcur, self.U, self.e0, self.e1, self.w, self.m, self.tables,
                                       self.res, self.tr)
        if self.h is not None:
            total += _fill_label_costs(l0, l1, self.h, self.n_terms, self.res, self.tr)
        eps = 1e-14 * total
        if self.flows is None:
            _, tree = _bk_maxflow(self.n_graph, head, self.res, adj_ptr, adj_arc, self.tr, eps)
        else:
            state = self.flows.get(s)
            if state is None:
                state = self.flows[s] = _FlowState(n, len(self.res), self.idx)
            tree = _bk_reflow(state, head, adj_ptr, adj_arc, self.res, self.tr, eps)
        x = tree[:n] == _SINK_TREE
        if n_trunc and self.qpbo is not None:
            # the nodes the roof dual labels replace the truncated cut's choice there;
            # weak persistency: never worse than the truncated cut alone (label costs
            # are not in the roof dual: then the better of the two by the energy)
            fused = self.qpbo.fuse(x, l0, l1, self.U, self.e0, self.e1, self.w, self.tables)
            if self.h is None or self.F.evaluate(np.where(fused, l1, l0)) <= self.F.evaluate(np.where(x, l1, l0)):
                x = fused
        return x, n_trunc

    def descend(self, z, *, order, max_iter, tol, rng, callback, progress, t0, stale=None):
        """Moves from the labelling ``z`` until none improves (or the stopping rule);
        returns the :class:`InferenceResult`. ``stale`` marks the moves known to find
        nothing from ``z`` (and is updated in place)."""
        energy, F, steps, moves = self.energy, self.F, self.steps, self.moves
        n = energy.n_nodes
        hard = energy.has_hard_terms
        l0 = np.empty(n, np.int64)
        l1 = np.empty(n, np.int64)
        xcur = np.zeros(n, np.int8)
        f_cur = F.evaluate(z)
        if stale is None:
            stale = np.zeros(len(steps), dtype=bool)  # this move found nothing since the last change
        history, move_history = [], []
        n_moves = n_accepted = n_truncated = n_fusions = n_fusion_tries = 0
        converged = False
        bar = progress_bar(progress, max_iter, moves, leave=False)
        it = 0
        try:
            for it in range(1, max_iter + 1):
                f_start = f_cur
                seq = rng.permutation(len(steps)) if order == "random" else range(len(steps))
                for s in seq:
                    if stale[s]:
                        continue
                    a, b = steps[s]
                    if b < 0:
                        l0[:] = z
                        l1.fill(a)
                    else:
                        inside = (z == a) | (z == b)
                        np.copyto(l0, np.where(inside, a, z))
                        np.copyto(l1, np.where(inside, b, z))
                        np.copyto(xcur, z == b)  # the current labelling of a swap is not all-zeros
                    x, n_trunc = self.cut(s, l0, l1, xcur)
                    n_moves += 1
                    n_truncated += n_trunc
                    stale[s] = True
                    new = np.where(x, l1, l0)
                    changed = np.flatnonzero(new != z)
                    if not changed.size:
                        move_history.append(f_cur)
                        continue
                    # the change of the energy from the nodes that moved and their terms
                    d = self.delta(z, new, changed)
                    f_new = F.evaluate(new) if d is None else f_cur + d
                    # keep only strict improvements; with hard terms also refuse to break one
                    ok = f_new < f_cur - REL_TOL * abs(f_cur)
                    if ok and hard and self.hard_increase(z, new, changed):
                        ok = False
                    if ok:
                        z, f_cur = new, f_new
                        n_accepted += 1
                        stale[:] = False
                        # an exact move is optimal for its labels until another move changes
                        # something (rerunning truncated ones gained nothing on the k-NN benchmark)
                        stale[s] = True
                    move_history.append(f_cur)
                done = stale.all() or f_start - f_cur <= tol * abs(f_start)
                if done and self.fusion:
                    # no single move gains: try the fusion with the runner-up labelling,
                    # and when it gains, run the moves again from there
                    n_fusion_tries += 1
                    fused = self.fuse_runner_up(z)
                    if fused is not None:
                        changed = np.flatnonzero(fused != z)
                        d = self.delta(z, fused, changed)
                        f_new = F.evaluate(fused) if d is None else f_cur + d
                        if f_new < f_cur - REL_TOL * abs(f_cur) and not (hard and self.hard_increase(z, fused, changed)):
                            z, f_cur = fused, f_new
                            n_fusions += 1
                            stale[:] = False
                            done = False
                if not hard and f_cur != f_start:
                    f_cur = F.evaluate(z)  # the moves' changes were summed: score the labelling once
                value = energy.evaluate(z) if hard else f_cur
                history.append(value)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(energy=value, refresh=False)
                converged = bool(done)
                if callback is not None and callback(it, z.copy(), value):
                    break
                if converged:
                    break
        finally:
            if bar is not None:
                bar.close()
        if it == 0:  # max_iter >= 1, so only reached with no labels to move
            converged = True
        info = {"moves": moves, "n_moves": n_moves, "n_accepted": n_accepted, "n_truncated": n_truncated,
                "n_fusions": n_fusions, "n_fusion_tries": n_fusion_tries, "move_history": move_history,
                "violated_hard_terms": energy.violated_hard_terms(z)}
        # the last history entry scored the final labelling with the energy itself (hard
        # terms) or with its surrogate, which is the energy when there are none
        final = history[-1] if history else energy.evaluate(z)
        return InferenceResult(labels=z, energy=final, lower_bound=None, iterations=len(history),
                               converged=converged, seconds=time.perf_counter() - t0, history=history, info=info)


def _ends(n, e0, e1, terms):
    """Mask of the ``n`` nodes that end a term selected by ``terms``."""
    out = np.zeros(n, dtype=bool)
    out[e0[terms]] = True
    out[e1[terms]] = True
    return out


def _pick_moves(energy, non_metric):
    """``"swap"`` for two labels or (with ``non_metric="swap"``) a non-metric table, else
    ``"expansion"``; raises naming the first non-metric table edge with ``"raise"``."""
    if non_metric not in _NON_METRIC:
        raise InvalidParameterError(f"non_metric must be 'swap' or 'raise', got {non_metric!r}")
    if energy.n_labels == 2:
        return "swap"
    bad = _first_non_metric(energy.tables) if len(energy.tables) else None
    if bad is None:
        return "expansion"
    if non_metric == "raise":
        t, a, b, c = bad
        T = energy.tables[t]
        raise InvalidParameterError(
            f"pair table on edge {tuple(energy.table_edges[t].tolist())} is not a metric: "
            f"T[{a}, {a}] + T[{b}, {c}] = {T[a, a] + T[b, c]:g} > T[{b}, {a}] + T[{a}, {c}] = "
            f"{T[b, a] + T[a, c]:g}, so the expansion move on label {a} is not submodular there; "
            "use non_metric='swap' or method='swap'"
        )
    return "swap"


def _spread(U):
    """Per row: largest minus smallest finite cost (0 for a row with none)."""
    finite_u = np.where(np.isinf(U), np.nan, U)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-inf rows: nan, set to 0
        return np.nan_to_num(np.nanmax(finite_u, axis=1) - np.nanmin(finite_u, axis=1))


def _first_non_metric(tables):
    """``(table, α, β, γ)`` of the first table breaking the expansion condition
    ``T[α, α] + T[β, γ] ≤ T[β, α] + T[α, γ]``, or None."""
    K = tables.shape[1]
    diag = tables[:, np.arange(K), np.arange(K)]  # (t, K): T[α, α]
    # lhs[t, α, β, γ] = T[α, α] + T[β, γ], rhs = T[β, α] + T[α, γ]
    lhs = diag[:, :, None, None] + tables[:, None, :, :]
    rhs = np.transpose(tables, (0, 2, 1))[:, :, :, None] + tables[:, :, None, :]
    scale = np.abs(tables).max(axis=(1, 2))[:, None, None, None]
    bad = lhs > rhs + 1e-12 * (1.0 + scale)
    if not bad.any():
        return None
    return tuple(int(v) for v in np.argwhere(bad)[0])


class _QPBOGraph:
    """The roof-dual (QPBO) graph of a move: node ``i`` stands for ``x_i`` and node
    ``n + i`` for ``1 − x_i``; every term puts half its capacity on two mirrored arcs.
    Its arc layout is built once per run: two arc pairs per term, two more for the terms
    that can be non-submodular (``maybe_ns``).

    A maximum flow labels node ``i`` when ``i`` and ``n + i`` fall on opposite sides of
    the cut from the source; the other nodes stay unlabelled. Weak persistency (Hammer,
    Hansen & Simeone 1984; Kolmogorov & Rother 2007): overwriting any labelling ``y``
    with the labelled nodes never raises the move energy. Used only on moves whose
    truncation changed a term, with ``y`` the truncated cut's answer.
    """

    def __init__(self, n, e0, e1, maybe_ns):
        T = len(e0)
        self.n = n
        self.slot = np.full(T, -1, np.int64)
        ns = np.flatnonzero(maybe_ns)
        self.slot[ns] = np.arange(len(ns))
        # pairs: (i, j) | (n+i, n+j) | per non-submodular slot: (n+j, i), (n+i, j)
        extra = np.stack([np.stack([e1[ns] + n, e0[ns]], 1), np.stack([e0[ns] + n, e1[ns]], 1)], 1).reshape(-1, 2)
        edges = np.concatenate([np.stack([e0, e1], 1), np.stack([e0 + n, e1 + n], 1), extra])
        self.head, self.adj_ptr, self.adj_arc = _bk_structure(2 * n, edges)
        self.res = np.zeros(2 * len(edges))
        self.tr = np.zeros(2 * n)

    def fuse(self, x, l0, l1, U, e0, e1, w, tables):
        total = _fill_qpbo(l0, l1, U, e0, e1, w, len(w), tables, self.slot, self.res, self.tr)
        _, tree = _bk_maxflow(2 * self.n, self.head, self.res, self.adj_ptr, self.adj_arc, self.tr, 1e-14 * total)
        src = tree == 1  # reachable from the source
        pos, neg = src[: self.n], src[self.n:]
        labelled = pos != neg
        return np.where(labelled, neg, x)  # x_i = 1 when i is cut off and its mirror is not


# --------------------------------------------------------------------------- kernels
@njit(cache=True)
def _runner_up(U, e0, e1, w, m, tables, z, candidates, adj_ptr, adj_arc):  # pragma: no cover - compiled
    """The runner-up labelling ``y`` of ``z`` (every node's best label other than
    ``z_i``, its neighbours as in ``z``) and the nodes that may take it in the fusion
    of the two (``movable``): the ``candidates`` less those that cannot gain.

    A node is fixed at ``z_i`` when switching it to ``y_i`` cannot lower the fusion
    energy whatever its neighbours do: its unary increase plus, per pair term, the
    lowest change over the neighbour's remaining choices (``z_j``, and ``y_j`` while
    that neighbour is movable) is ≥ 0. Then some optimal fusion keeps ``z_i`` there, so
    fixing it loses nothing. Each fixing narrows the neighbours' choices, so their
    test is repeated (a work list over the move graph's adjacency ``adj_ptr``,
    ``adj_arc``: arcs ``2k`` and ``2k + 1`` belong to term ``k``), in time linear in
    the graph."""
    n, K = U.shape
    C = U.copy()
    for k in range(len(e0)):
        i = e0[k]
        j = e1[k]
        for lab in range(K):
            if k < m:
                C[i, lab] += _potts(w[k], lab, z[j])
                C[j, lab] += _potts(w[k], z[i], lab)
            else:
                C[i, lab] += tables[k - m, lab, z[j]]
                C[j, lab] += tables[k - m, z[i], lab]
    y = np.empty(n, np.int64)
    movable = np.zeros(n, np.bool_)
    for i in range(n):
        best = -1
        for lab in range(K):
            if lab != z[i] and (best < 0 or C[i, lab] < C[i, best]):
                best = lab
        y[i] = best
        movable[i] = best >= 0 and candidates[i]
    # lowest change of the fusion energy when i switches (neighbours' choices open)
    low = np.zeros(n)
    for i in range(n):
        if movable[i]:
            low[i] = U[i, y[i]] - U[i, z[i]]
    for k in range(len(e0)):
        i = e0[k]
        j = e1[k]
        if movable[i] or movable[j]:
            zz, zy, yz, yy = _move_table(k, m, w, tables, z[i], y[i], z[j], y[j])
            if movable[i]:
                low[i] += min(yz - zz, yy - zy) if movable[j] else yz - zz
            if movable[j]:
                low[j] += min(zy - zz, yy - yz) if movable[i] else zy - zz
    # fix every node that cannot gain; each fixing only raises its neighbours' lows
    stack = np.empty(n, np.int64)
    top = 0
    for i in range(n):
        if movable[i] and low[i] >= 0.0:
            stack[top] = i
            top += 1
    while top:
        top -= 1
        j = stack[top]
        if not movable[j]:
            continue
        for t in range(adj_ptr[j], adj_ptr[j + 1]):
            k = adj_arc[t] // 2
            i = e1[k] if e0[k] == j else e0[k]
            if movable[i]:
                # j can no longer take y_j: i's term changes from min(a, b) to a
                a0, a1 = e0[k], e1[k]
                zz, zy, yz, yy = _move_table(k, m, w, tables, z[a0], y[a0], z[a1], y[a1])
                if i == a0:
                    a, b = yz - zz, yy - zy
                else:
                    a, b = zy - zz, yy - yz
                was = low[i]
                if a > b:
                    low[i] += a - b
                if was < 0.0 <= low[i]:  # queued once: lows only rise
                    stack[top] = i
                    top += 1
        movable[j] = False
    return y, movable


@njit(cache=True)
def _fill_qpbo(l0, l1, U, e0, e1, w, m, tables, slot, res, tr):  # pragma: no cover - compiled
    """Capacities of a move's roof-dual graph (see :class:`_QPBOGraph`), in place;
    returns the sum of all capacities. A submodular term ``A + u_i x_i + u_j x_j +
    p (1 − x_i) x_j + q x_i (1 − x_j)`` puts ``p/2`` on ``i → j`` and ``n+j → n+i``
    and ``q/2`` on ``j → i`` and ``n+i → n+j``; a non-submodular one
    ``A + (C − A) x_i + (B − A) x_j + κ x_i x_j`` (``κ = A + D − B − C > 0``) puts
    ``κ/2`` on ``n+j → i`` and ``n+i → j``. A unary ``c x_i`` puts ``c/2`` on the
    terminal arcs of ``i`` and ``n + i``."""
    n = len(l0)
    T = len(e0)
    for i in range(n):
        tr[i] = U[i, l1[i]] - U[i, l0[i]]
    for k in range(len(res)):
        res[k] = 0.0
    for k in range(T):
        i = e0[k]
        j = e1[k]
        a0, a1, b0, b1 = l0[i], l1[i], l0[j], l1[j]
        if a0 == a1 and b0 == b1:
            continue
        A, B, C, D = _move_table(k, m, w, tables, a0, a1, b0, b1)
        lam = B + C - A - D
        if lam >= 0.0 or slot[k] < 0:
            if lam < 0.0:  # cannot happen for terms without a slot; stay safe
                lam = 0.0
            p, q = _pair_arcs(A, B, lam)
            res[2 * k] = 0.5 * p
            res[2 * k + 1] = 0.5 * q
            res[2 * (T + k)] = 0.5 * q
            res[2 * (T + k) + 1] = 0.5 * p
            tr[i] += C - A - q
            tr[j] += B - A - p
        else:
            s = 2 * T + 2 * slot[k]
            res[2 * s] = -0.5 * lam
            res[2 * (s + 1)] = -0.5 * lam
            tr[i] += C - A
            tr[j] += B - A
    total = 0.0
    for k in range(len(res)):
        total += res[k]
    for i in range(n):
        c = 0.5 * tr[i]
        tr[i] = c
        tr[n + i] = -c
        total += 2.0 * abs(c)
    return total


@njit(cache=True)
def _fill_move(l0, l1, xcur, U, e0, e1, w, m, tables, res, tr):  # pragma: no cover - compiled
    """Capacities of one move's s–t graph, in place.

    Node ``i`` takes ``l0[i]`` on the source side (``x_i = 0``) and ``l1[i]`` on the
    sink side; ``xcur`` is the current labelling's side. Terms ``k < m`` are Potts
    terms of weight ``w[k]`` on ``(e0[k], e1[k])``, terms ``k ≥ m`` the tables
    ``tables[k − m]``. Each term's 2×2 table ``(A, B, C, D)`` over ``(x_i, x_j) =
    (0,0), (0,1), (1,0), (1,1)`` is truncated if needed and split as
    ``A + u_i x_i + u_j x_j + p (1 − x_i) x_j + q x_i (1 − x_j)``: ``p`` on arc ``2k``
    (``i → j``), ``q`` on arc ``2k + 1``, ``u`` into the terminal residuals ``tr``.

    Returns ``(const, total, n_truncated)``: the move energy of ``x`` is
    ``const + cut(x)``, ``total`` the sum of all capacities (the flow's tolerance scale).
    """
    n = len(l0)
    const = 0.0
    n_trunc = 0
    for i in range(n):
        d0 = U[i, l0[i]]
        const += d0
        tr[i] = U[i, l1[i]] - d0
    for k in range(len(e0)):
        i = e0[k]
        j = e1[k]
        a0, a1, b0, b1 = l0[i], l1[i], l0[j], l1[j]
        if a0 == a1 and b0 == b1:  # neither end can move: a constant
            if k < m:
                const += _potts(w[k], a0, b0)
            else:
                const += tables[k - m, a0, b0]
            res[2 * k] = 0.0
            res[2 * k + 1] = 0.0
            continue
        A, B, C, D = _move_table(k, m, w, tables, a0, a1, b0, b1)
        lam = B + C - A - D
        if lam < 0.0:
            # truncation: raise B or C, never the current entry, so the move energy
            # stays >= the true one and equal to it at the current labelling
            n_trunc += 1
            xi, xj = xcur[i], xcur[j]
            if xi == 0 and xj == 1:
                C -= lam
            elif xi == 1 and xj == 0:
                B -= lam
            else:
                # keep cheap the entry where the end that loses less by flipping flips
                fi = U[i, a1] - U[i, a0]
                fj = U[j, b1] - U[j, b0]
                if xi == 1:
                    fi, fj = -fi, -fj
                # (0,0): C flips i alone, B flips j alone; (1,1): the other way round
                if (fi <= fj) == (xi == 0):
                    B -= lam
                else:
                    C -= lam
            lam = 0.0
        p, q = _pair_arcs(A, B, lam)
        res[2 * k] = p
        res[2 * k + 1] = q
        tr[i] += C - A - q
        tr[j] += B - A - p
        const += A
    total = 0.0
    for k in range(len(res)):
        total += res[k]
    for i in range(n):
        t = tr[i]
        if t < 0.0:
            const += t
            total -= t
        else:
            total += t
    return const, total, n_trunc


@njit(cache=True)
def _fill_label_costs(l0, l1, h, n_terms, res, tr):  # pragma: no cover - compiled
    """Capacities of the label-cost part of a move graph (Delong, Osokin, Isack &
    Boykov 2012), in place; returns their sum.

    After the move, label ``L`` is used iff a node that cannot move has it, or a movable
    node with ``l0 = L`` stays (``x = 0``), or one with ``l1 = L`` moves (``x = 1``). A
    label some unmovable node holds costs a constant. Otherwise, with ``A`` the movable
    nodes whose ``l0`` is ``L``, ``h_L·[∃ i ∈ A: x_i = 0] = h_L − h_L·Π_A x_i`` and
    ``−h_L·Π_A x_i = min_y (−h_L·y + h_L·Σ_A y·(1 − x_i))``: an auxiliary node ``y``
    (node ``n + L``) that gains ``h_L`` on the sink side and an arc ``i → y`` of
    capacity ``h_L`` from every ``i ∈ A``. Likewise for the movable nodes ``B`` whose
    ``l1`` is ``L``: ``h_L·[∃ j ∈ B: x_j = 1]`` through node ``n + K`` on the source
    side and arcs ``y → j``. Expansion and swap moves give every movable node the same
    ``l1`` (α, or β), so one node of the second kind suffices, and no label is on both
    sides. The terms are submodular, so the cut stays exact for them: this is the
    label-cost α-expansion move.

    Arc layout: node ``i``'s arc to ``n + l0[i]`` is pair ``n_terms + i``, its arc
    from ``n + K`` pair ``n_terms + n + i``."""
    n = len(l0)
    K = len(h)
    fixed = np.zeros(K, np.bool_)
    in_a = np.zeros(K, np.bool_)
    in_b = np.zeros(K, np.bool_)
    for i in range(n):
        if l0[i] == l1[i]:
            fixed[l0[i]] = True
        else:
            in_a[l0[i]] = True
            in_b[l1[i]] = True
    total = 0.0
    for L in range(K):
        tr[n + L] = 0.0
        if in_a[L] and not fixed[L] and not in_b[L]:
            tr[n + L] = -h[L]
            total += h[L]
    tr[n + K] = 0.0
    for L in range(K):
        if in_b[L] and not fixed[L] and not in_a[L]:
            tr[n + K] = h[L]
            total += h[L]
    for i in range(n):
        a = 2 * (n_terms + i)
        b = 2 * (n_terms + n + i)
        res[a] = 0.0
        res[a + 1] = 0.0
        res[b] = 0.0
        res[b + 1] = 0.0
        if l0[i] == l1[i]:
            continue
        L = l0[i]
        if in_a[L] and not fixed[L] and not in_b[L]:
            res[a] = h[L]
            total += h[L]
        L = l1[i]
        if in_b[L] and not fixed[L] and not in_a[L]:
            res[b + 1] = h[L]
            total += h[L]
    return total


@njit(cache=True, inline="always")
def _move_table(k, m, w, tables, a0, a1, b0, b1):  # pragma: no cover - compiled
    """Term ``k``'s 2×2 move table ``(A, B, C, D)`` over ``(x_i, x_j) = (0,0), (0,1),
    (1,0), (1,1)``, ends moving ``a0 → a1`` and ``b0 → b1``: a Potts term of weight
    ``w[k]`` for ``k < m``, else the pair table ``tables[k − m]``."""
    if k < m:
        wk = w[k]
        return _potts(wk, a0, b0), _potts(wk, a0, b1), _potts(wk, a1, b0), _potts(wk, a1, b1)
    t = k - m
    return tables[t, a0, b0], tables[t, a0, b1], tables[t, a1, b0], tables[t, a1, b1]


@njit(cache=True, inline="always")
def _pair_arcs(A, B, lam):  # pragma: no cover - compiled
    """Capacities ``(p, q)`` of the arcs ``i → j`` and ``j → i`` for a submodular 2×2
    table with ``λ = B + C − A − D ≥ 0``: ``p = clip(B − A, 0, λ)``, ``q = λ − p``
    (the rest goes to the terminal arcs: ``C − A − q`` on ``i``, ``B − A − p`` on ``j``)."""
    p = B - A
    if p < 0.0:
        p = 0.0
    elif p > lam:
        p = lam
    return p, lam - p


@njit(cache=True, inline="always")
def _potts(w, a, b):  # pragma: no cover - compiled
    """The signed Potts term of weight ``w`` between labels ``a`` and ``b``."""
    if w > 0.0:
        return w if a != b else 0.0
    return -w if a == b else 0.0


# --------------------------------------------------------------------------- warm re-solves
class ExpansionSolver:
    """α-expansion (or αβ-swap) kept alive between solves, for interactive re-solves.

    The solver holds a private copy of the energy, the move graph's arc layout and, per
    move, the maximum flow its last cut left (residual graph and search trees). After
    :meth:`update_unary` changes a few unary rows (a user adds a scribble stroke), the
    next :meth:`solve` starts from the last labelling, and each move's cut starts from
    that move's previous flow moved to the new capacities (dynamic graph cuts, Kohli &
    Torr 2007), so the work follows what changed instead of the whole graph.

    Parameters
    ----------
    energy : Energy
        Copied on construction (its unaries only; the other arrays are shared and never
        modified), so the caller's energy is never changed.
    moves : {"auto", "expansion", "swap"}, default="auto"
        ``"auto"`` chooses as :func:`alpha_expansion` does: swap moves for two labels or
        non-metric tables (or the error of ``non_metric="raise"``), expansion moves
        otherwise. An explicit ``"expansion"`` on non-metric tables truncates them, as
        for cannot-links (never an increase).
    order, max_iter, tol, non_metric, fusion : see :func:`alpha_expansion`
    random_state : int, numpy.random.Generator or None, default=None
        Seeds ``order="random"``; the generator carries on across solves.
    reuse_flows : bool, default=True
        Keep every move's flow (memory: about ``2·n_arcs + 2·n_nodes`` float64 and
        ``n_nodes`` index and tree entries per move, i.e. per label for expansion and
        per label pair for swap; see :attr:`flow_bytes`). ``False`` keeps only the
        layout and the labelling: every cut starts from zero.

    Attributes
    ----------
    energy : Energy
        The solver's current energy (with every update applied).
    labels : ndarray of shape (n_nodes,) or None
        The labelling of the last solve.
    flow_bytes : int
        Memory held by the stored flows.

    Raises
    ------
    InvalidParameterError
        A bad ``moves``, ``order``, ``max_iter`` or ``tol``.

    See Also
    --------
    alpha_expansion : one cold solve.

    Notes
    -----
    **What is reused, and why it is exact.** A move's graph is rebuilt from the current
    labelling and unaries by the same compiled pass as a cold move. Its capacities are
    then compared with those the stored flow was computed for; where they differ the
    residual graph is reparametrised: a terminal change is added to the node's signed
    terminal residual (which moves its source and sink capacities together), an arc
    change to the arc's residual, and where that would go negative (a capacity cut below
    the flow it carries) the deficit is moved to the two terminal residuals, which keeps
    the cost of every cut up to a constant. The search trees are repaired where
    residuals changed (orphans re-adopted, new terminal roots, changed nodes activated)
    and the Boykov–Kolmogorov search resumes. The cut is therefore the minimum cut of
    the new move graph, exactly as from scratch (tests compare the cut values move by
    move); only the time differs. The roof-dual (QPBO) graph of truncated moves is not
    reused. Label costs are not supported here (use :func:`alpha_expansion`).

    **Guarantees** are those of :func:`alpha_expansion`: every accepted move strictly
    lowers the energy, so a warm solve never ends above the labelling it started from
    under the new energy.

    References
    ----------
    P. Kohli, P. H. S. Torr, "Dynamic graph cuts for efficient inference in Markov
    random fields", IEEE TPAMI 29(12), 2007. doi:10.1109/TPAMI.2007.1128

    Examples
    --------
    A path of six nodes with two labels; a "stroke" then makes node 2 prefer label 1:

    >>> import numpy as np
    >>> from graphclust.energy import Energy
    >>> U = np.array([[0.0, 1.0]] * 3 + [[1.0, 0.0]] * 3)
    >>> E = Energy(U, edges=[(i, i + 1) for i in range(5)], weights=[0.6] * 5)
    >>> solver = ExpansionSolver(E)
    >>> solver.solve().labels
    array([0, 0, 0, 1, 1, 1])
    >>> solver.update_unary([2], [[5.0, 0.0]])
    >>> res = solver.solve()
    >>> res.labels, res.info["warm"]
    (array([0, 0, 1, 1, 1, 1]), True)
    """

    def __init__(self, energy, *, moves="auto", order="fixed", max_iter=100, tol=1e-7, non_metric="swap",
                 fusion=True, random_state=None, reuse_flows=True):
        from ..energy import Energy

        if not isinstance(energy, Energy):
            raise InvalidParameterError(f"ExpansionSolver needs an Energy, got {type(energy).__name__}")
        if moves not in ("auto", "expansion", "swap"):
            raise InvalidParameterError(f"moves must be 'auto', 'expansion' or 'swap', got {moves!r}")
        if energy.label_costs is not None:
            raise InvalidParameterError(
                "ExpansionSolver does not take label costs (their auxiliary arcs follow the labelling, so "
                "no flow could be kept); use alpha_expansion")
        self.order, self.max_iter, self.tol, self._rng = _check_run_options(order, max_iter, tol, random_state)
        if moves == "auto":
            moves = _pick_moves(energy, non_metric)
        elif non_metric not in _NON_METRIC:
            raise InvalidParameterError(f"non_metric must be 'swap' or 'raise', got {non_metric!r}")
        own = object.__new__(type(energy))
        own.__dict__.update(energy.__dict__)
        own.unary = energy.unary.copy()
        self.energy = own
        self._graph = _MoveGraph(own, moves, reuse_flows=bool(reuse_flows), fusion=_check_fusion(fusion))
        self._stale = np.zeros(len(self._graph.steps), dtype=bool)
        self.labels = None

    @property
    def flow_bytes(self):
        return self._graph.flow_bytes

    def update_unary(self, nodes, costs):
        """Replace the unary rows of ``nodes`` by ``costs``.

        Parameters
        ----------
        nodes : array-like of int, shape (n_changed,)
            Node indices (distinct).
        costs : array-like of shape (n_changed, n_labels)
            Their new costs (numbers or ``+inf``, a forbidden label, as in
            :class:`~graphclust.energy.Energy`).

        Raises
        ------
        InvalidParameterError
            Indices outside ``[0, n_nodes)`` or repeated, costs of the wrong shape, NaN
            or ``-inf``, or a row with every label forbidden (the message names it).
        """
        from ..energy import check_unary_costs
        from ..errors import InvalidConstraintError

        idx, C = check_unary_update(nodes, costs, self.energy.n_nodes, self.energy.n_labels, name="nodes",
                                    what="node")
        check_unary_costs(C)
        if len(idx) and np.isinf(C).all(axis=1).any():
            r = int(np.flatnonzero(np.isinf(C).all(axis=1))[0])
            raise InvalidConstraintError(f"costs[{r}] (node {idx[r]}) forbids every label; no labelling is feasible")
        self.energy.unary[idx] = C
        self._graph.unary_changed(idx)
        self._stale[:] = False

    def solve(self, init=None, *, callback=None, progress=False):
        """Run the moves: from ``init``, else from the last labelling (a warm solve),
        else from the unary argmin.

        Returns
        -------
        InferenceResult
            As :func:`alpha_expansion`, with ``info["warm"]`` (whether the run started
            from the last labelling) and ``info["flow_bytes"]``.
        """
        t0 = time.perf_counter()
        warm = init is None and self.labels is not None
        if warm:
            z = self.labels.copy()
        else:
            z = _initial_labels(self.energy, init).copy()
            self._stale[:] = False
        res = self._graph.descend(z, order=self.order, max_iter=self.max_iter, tol=self.tol, rng=self._rng,
                                  callback=callback, progress=progress, t0=t0, stale=self._stale)
        self.labels = res.labels.copy()
        res.info["warm"] = warm
        res.info["flow_bytes"] = self.flow_bytes
        return res
