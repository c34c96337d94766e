"""Constrained 1-spectral clustering (COSC; Rangapuram & Hein, AISTATS 2012): the estimator.

The numerical core (penalised ratio, tight relaxation, RatioDCA, optimal thresholding)
lives in :mod:`graphclust.spectral.ratiodca` and :mod:`graphclust.spectral.onespectral`;
this module adds what makes it a clustering method with a guarantee:

* hard must-links are merged (:func:`graphclust.contract`, summed original vertex
  weights); for ``k = 2`` the cannot-link graph is 2-coloured and each colour class of
  a cannot-link component is merged as well (derived must-links), so every component
  collapses to two super-vertices joined by one cannot-link;
* the ``gamma`` schedule: ``0``, then increasing until the best run violates nothing,
  then bisection down between the last failing and the first consistent value;
* the provable fallback: from a constraint-satisfying partition ``C0`` RatioDCA at
  ``gamma > gvol(V) * NCut(C0) / 4`` can only return consistent partitions no worse
  than ``C0`` (Theorem 2.1), so **every consistent constraint set is satisfied for
  k = 2** in hard mode;
* soft mode (a user ``gamma`` trades the cut against violated constraint weight) and
  ``k > 2`` by recursive splitting (no guarantee; violations are reported);
* ``mode="auto"`` (the default): hard mode, or soft mode at a price chosen by
  cross-validation over the constraints (:mod:`graphclust.selection`), when held-out
  constraints show they help; otherwise the data alone;
* a k-NN graph of the features when the data come without one.
"""

import os
from concurrent.futures import ThreadPoolExecutor
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import breadth_first_order, connected_components

from .._kmeans import kmeans
from .._params import Callable, Integer, Optional, Options, Progress, RandomState, Real
from .._utils import extreme_scale, check_int, check_random_state, progress_bar
from ..base import ClusteringEstimator, Transductive, ClusteringResult, register_method
from ..errors import InvalidParameterError, TooFewClustersError
from ..graphs import with_knn_graph
from ..merge import contract
from ..metrics import cut_weights, violated_mask
from ..problem import Problem
from ..selection import above_chance, cross_validate_constraints, paired_standard_error
from ..sideinfo import check_constraints
from .multilevel import coarsen, merge_groups
from .onespectral import cosc_bipartition, spectral_start
from .ratiodca import RatioProblem, _optimal_threshold, _set_ratio

__all__ = ["COSC"]

_BISECT_TOL = 0.4  # relative width at which the bisection of gamma stops
_GAMMA_GROWTH = 2.0  # factor of gamma between steps until a consistent partition wins
_N_CHAINS = 2  # warm-started runs carried from one gamma step to the next
_CROSSING_MARGIN = 1e-3  # relative step past the gamma at which a known consistent partition wins
# from this many vertices on, a gamma step whose chains did not move jumps to that gamma
# (runs cost seconds there; on small graphs the skipped doubling steps find better cuts)
_JUMP_MIN_N = 2000
_COARSEST_N = 2_000  # multilevel="auto" coarsens larger graphs down to at most this many vertices
_TINY_WEIGHT = 1e-12  # vertex weights below this fraction of the largest are treated as 0
_MAX_COMPONENT_CANDIDATES = 50  # component-vs-rest splits tried in a disconnected cluster (k > 2)
_CONTINUATION_INNER_ITER = 1600  # inner-iteration cap of warm-started runs
_FRESH_INNER_ITER = 1600  # and of fresh runs
#: mode="auto": the soft prices tried, strongest first, in units of the mean weighted degree
AUTO_GAMMA_FACTORS = (1.0, 0.3, 0.1)
#: mode="auto" without cross-validation (too few constraints) and infeasible constraints
AUTO_GAMMA_DEFAULT = 0.3
AUTO_CV_FOLDS = 3
#: fewer soft must-links or cannot-links than this: no cross-validation
AUTO_CV_MIN_PER_KIND = 10


def _check_n_jobs(value, name):
    if value is not None:
        check_int(value, name)
        if value == 0 or value < -1:
            raise InvalidParameterError(f"{name} must be None, -1 (all cores) or a positive int, got {value!r}")


def _n_threads(n_jobs):
    return 1 if n_jobs is None else (os.cpu_count() or 1) if n_jobs == -1 else int(n_jobs)


class COSC(Transductive, ClusteringEstimator):
    """Constrained 1-spectral clustering: normalised or ratio cut with must-/cannot-links.

    Minimises the balanced cut ``cut(C, C') * gvol(V) / (gvol(C) gvol(C'))``
    (``gvol`` = summed degrees for ``cut="ncut"``, sizes for ``cut="rcut"``) through
    its tight continuous relaxation, penalising each violated constraint like ``gamma``
    units of cut edge weight.

    Parameters
    ----------
    n_clusters : int, default=2
        ``2`` carries the guarantee; ``> 2`` splits recursively: the cluster whose
        split gives the smallest k-way cut ``sum_l cut(C_l)/gvol(C_l)`` is split
        next (in hard mode the fewest violated constraints come first, the cut breaks
        ties; in soft mode the cut comes first, each split having already priced
        its violations at ``gamma``). The constraints inside a cluster
        are carried into its sub-problem; when its cannot-links are 2-colourable the
        split satisfies all of them (the k = 2 machinery), otherwise the split with
        the fewest violations found by the schedule is kept. No guarantee for k > 2:
        violations are reported in ``result_.violations``.
    cut : {"ncut", "rcut"}, default="ncut"
    mode : {"auto", "hard", "soft"}, default="auto"
        ``"hard"``: every constraint is treated as hard, **whatever its weight in the
        side information** (soft weights are made hard); the ``gamma`` schedule and
        the fallback return a partition violating none for ``n_clusters=2``.
        Inconsistent constraints raise (:class:`~graphclust.errors.InfeasibleConstraintsError`
        with the witness path, or :class:`~graphclust.errors.TooFewClustersError` for
        cannot-links that form an odd cycle with ``n_clusters=2``).
        ``"soft"``: hard must-links are merged, every other constraint is priced at
        ``gamma * |weight|`` (a hard cannot-link counts with weight 1).
        ``"auto"``: hard mode or soft mode at a cross-validated ``gamma`` when
        held-out constraints show that they help, otherwise the data alone (the
        graph's cut, or k-means on the features); see Notes. Never raises for
        inconsistent soft constraints.
    gamma : float or None, default=None
        Soft mode: the price of one unit of violated constraint weight (required).
        Hard mode: the first positive value of the schedule (default ``0.2`` times the
        mean edge weight). Auto mode: the only soft price tried (``None``: a grid
        scaled to the graph, see Notes).
    n_starts : int, default=5
        RatioDCA starts per split: the spectral start plus ``n_starts - 1`` Gaussian
        random vectors (the constraint-satisfying partition is added in hard mode).
    tol : float, default=1e-4
        Relative-decrease stopping tolerance of RatioDCA.
    max_gamma_steps : int, default=12
        Cap on the schedule; the fallback takes over when it runs out.
    multilevel : {"auto", True, False}, default="auto"
        Hard mode (and unconstrained runs): solve a coarsened graph, then refine the
        answer level by level back to the original graph (see Notes). ``"auto"``
        does so above 2 000 vertices (after must-link merging).
    n_jobs : int or None, default=None
        Threads for the independent RatioDCA runs of one ``gamma`` step (the
        starts at ``gamma = 0``, the warm-started chains later); ``None`` means 1,
        ``-1`` all cores. The answer does not depend on it: every run is
        deterministic given its start.
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool or "auto", default="auto"
        Show a progress bar over the ``gamma`` steps; ``"auto"`` shows it only once the fit has run two
        seconds (quick fits print nothing), ``False`` never.
    callback : callable or None, default=None
        ``callback(step, labels, objective)`` after every outer step: each split of
        the recursive k-way partition, or the one bipartition for two clusters, with
        the labels so far in node order and their balanced cut. Returning True stops
        splitting (fewer clusters than asked are then returned).
    n_neighbors : int, default=10
        Data given as features without a graph (a feature array, or a
        :class:`~graphclust.Problem` without edges) is clustered on
        ``knn_matrix(X, n_neighbors, bandwidth="self-tuning")``: the symmetric k-NN
        graph with locally scaled Gaussian weights (the graph of the COSC paper's
        group). A given graph is used as it is.

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
    nodes_, partition_, n_clusters_, problem_
        See :class:`~graphclust.base.ClusteringEstimator`.
    cut_value_ : float
        Total weight of the cut data edges.
    affinity_matrix_ : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        The similarity graph clustered: the given one or the k-NN graph built.
    result_ : ClusteringResult
        ``objective``: the balanced cut ``sum_l cut(C_l)/gvol(C_l)`` on the original
        graph (equal to ``cut * gvol(V) / (gvol(C) gvol(C'))`` for two clusters;
        clusters of zero volume contribute 0); ``violations``; ``info`` with
        ``gamma`` (the value the answer was found at), ``fallback`` (whether the
        provable fallback was used), ``gamma_bound`` (the theoretical value),
        ``start_cut`` (balanced cut of the constraint-satisfying start), ``history``
        (per ``gamma``: the ratio, violations and RatioDCA inner iterations of every
        run) and ``n_super_nodes``; multilevel runs add ``levels`` and ``refined``.
        ``mode="auto"`` adds ``mode`` (the one used: ``"hard"``, ``"soft"`` or
        ``"kmeans"``), ``mode_reason`` (why),
        ``gamma_scale`` (the mean weighted degree) and, when it cross-validated,
        ``constraint_cv`` (held-out agreement per candidate); a built graph adds
        ``graph``.
        ``history``: the objective after every outer step (split).

    Notes
    -----
    ``mode="auto"`` (the default) decides in four steps.

    1. *Can hard mode satisfy the constraints?* Not when a cannot-link falls inside
       a must-link component, when the must-links leave fewer than ``n_clusters``
       groups, or when the cannot-links between groups admit no colouring with
       ``n_clusters`` colours (for two clusters: an odd cycle; above, a DSatur
       colouring decides, so a colourable graph it misses counts as infeasible).
       Hard mode would raise there, or for ``n_clusters > 2`` violate what it
       cannot satisfy.
    2. *Too few to cross-validate* (fewer than 10 soft must-links or soft
       cannot-links): hard mode if it can satisfy them, otherwise soft mode at
       ``gamma = 0.3`` times the mean weighted degree of the graph.
    3. *Otherwise* the candidates that use the constraints are hard mode (when step 1
       allows it) and soft mode at ``gamma = 1, 0.3, 0.1`` times the mean weighted
       degree (or the user's ``gamma`` alone); the data alone is read two ways: the
       graph's cut (``gamma = 0``, hard must-links merged) and, when COSC built the
       graph from features and no constraint is hard, k-means on the features (10
       restarts). Each is fitted on two thirds of the soft constraints and scored by
       the balanced fraction of the held-out third it keeps (3 folds,
       :func:`graphclust.selection.cross_validate_constraints`; under independent
       flips this is an increasing function of the answer's pairwise accuracy); the
       data-alone readings ignore the constraints and are fitted once.
    4. *The constraints must show that they help*: the best-scoring candidate that
       uses them is refitted on all constraints only if it beats the best reading of
       the data alone by more than one paired standard error
       (:func:`graphclust.selection.paired_standard_error`); otherwise the data alone
       is the answer (``info["mode"] == "kmeans"`` for k-means). Ties go to the
       stronger candidate and to the graph's reading. When the constraints are
       inconsistent and no candidate keeps them better than coin flips
       (:func:`graphclust.selection.above_chance`), ``gamma = 0``.

    Consistent constraints are not taken as hard without this check: sparse noisy
    draws are often consistent, and hard mode then enforces the wrong pairs. On iris
    with 112 pairs of which 20 % flipped, all three draws were consistent and hard
    mode scored pairwise F 0.51-0.59 against 0.745 for k-means
    (``docs/benchmarks/cosc.md``). Both readings of the data alone are there because
    the k-NN graph's own cut can be worse than k-means (iris: F 0.66), and the
    standard-error margin because the plain best score picked hard mode on draws where
    its lead was selection noise; each change is measured in ``docs/cosc.md``. The
    price unit, the mean weighted degree, makes one violated constraint cost as much
    as cutting an average vertex off its cluster.

    The soft fits of ``mode="auto"`` differ from ``mode="soft"`` in one respect: a
    split of a cluster expected to hold more than two of the ``n_clusters`` classes
    (by its share of the vertices) prices its must-links only. Such a split must
    keep many cannot-linked pairs on one side, later splits can still separate them,
    and pricing them made RatioDCA prefer splits across the classes.

    Isolated vertices (degree 0 under ``cut="ncut"``, so zero weight and no edges)
    change neither the cut nor the balance; they are left out of the optimisation and
    then placed opposite their cannot-linked partners, otherwise into the cluster of
    the first node. The same holds for near-isolated vertices, whose weight is below
    ``1e-12`` times the largest (k-NN Gaussian weights of far outliers underflow to
    such values, where the balance term has no precision left). A graph with fewer
    than two vertices of positive weight gets the constraint colouring (cut 0).

    The hard-mode schedule runs every start at ``gamma = 0``, then doubles ``gamma``
    (warm-starting from the previous step) until the best run violates nothing, then
    bisects down. On graphs of 2 000 vertices or more, a step that returns the same
    violating partition as the step before jumps instead to the ``gamma`` at which
    the best consistent partition known (the constraint-satisfying start, or the best
    chain repaired like it) ties that partition's penalised ratio: below it no known
    consistent partition can win, and every skipped step would cost seconds of
    repeated runs. The bisection then searches the skipped range for better
    consistent partitions. Small graphs keep every doubling step (they find better
    cuts more often).

    Multilevel (hard mode): the graph is coarsened by heavy-edge matching with the
    normalised-cut priority ``w_uv (1/b_u + 1/b_v)`` down to at most 2 000 vertices
    (:mod:`graphclust.spectral.multilevel`), never merging an endpoint of a
    cannot-link; merged vertices sum their weights and edges, so a coarse
    bipartition has the balanced cut of its prolongation and satisfies the same
    cannot-links. The schedule and fallback above run on the coarsest graph; at each
    finer level one RatioDCA run at the coarse answer's ``gamma`` starts from the
    prolonged partition and replaces it only if it is better without violating more
    constraints. ``result_.info`` then holds ``levels`` (vertices per level) and
    ``refined`` (per level: the cut before and after, whether it was kept).

    Examples
    --------
    >>> import networkx as nx
    >>> import graphclust as gc
    >>> G = nx.barbell_graph(4, 0)
    >>> S = gc.SideInfo.from_pairs(cannot=[(0, 3)])
    >>> est = COSC(n_clusters=2, random_state=0).fit(G, S)
    >>> est.labels_.tolist(), est.result_.violations.n_violated
    ([0, 0, 0, 1, 1, 1, 1, 1], 0)
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": Integer(low=1),
        "cut": Options("ncut", "rcut"),
        "mode": Options("auto", "hard", "soft"),
        "gamma": Optional(Real(low=0.0)),
        "n_starts": Integer(low=1),
        "tol": Real(low=0.0, low_open=True),
        "max_gamma_steps": Integer(low=1),
        "multilevel": Options("auto", True, False),
        "n_jobs": _check_n_jobs,
        "random_state": RandomState(),
        "progress": Progress(),
        "callback": Callable(),
        "n_neighbors": Integer(low=1),
    }
    #: soft splits of a cluster expected to hold more than two classes price its
    #: cannot-links too (mode="soft"); the fits of mode="auto" turn this off
    _price_early_cannot_links = True

    def __init__(self, n_clusters=2, *, cut="ncut", mode="auto", gamma=None, n_starts=5, tol=1e-4,
                 max_gamma_steps=12, multilevel="auto", n_jobs=None, random_state=None, progress="auto",
                 callback=None, n_neighbors=10):
        self.n_clusters = n_clusters
        self.cut = cut
        self.mode = mode
        self.gamma = gamma
        self.n_starts = n_starts
        self.tol = tol
        self.max_gamma_steps = max_gamma_steps
        self.multilevel = multilevel
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.progress = progress
        self.callback = callback
        self.n_neighbors = n_neighbors

    # ------------------------------------------------------------------ driver
    def _check_params(self):
        if self.mode == "soft" and self.gamma is None:
            raise InvalidParameterError("gamma of COSC is required in mode='soft' (the price of one violation)")

    def _fit(self, problem):
        problem, graph_info = with_knn_graph(problem, self.n_neighbors)
        scale = extreme_scale(problem.W.data)  # 1 unless the weights are near 1e±308
        if scale != 1.0:
            return self._fit_rescaled(problem, scale)
        self.affinity_matrix_ = problem.W
        if self.n_clusters == 1:  # nothing to cut
            self.cut_value_ = 0.0
            return np.zeros(problem.n_nodes, np.int64), ClusteringResult(objective=0.0, info=dict(graph_info))
        if self.mode != "auto":
            labels, result = self._fit_mode(problem, check_random_state(self.random_state))
        else:
            rng = check_random_state(self.random_state)
            mode, gamma, choice = self._auto_choice(problem, rng, features=bool(graph_info))
            if mode == "kmeans":
                labels = choice.pop("kmeans_labels")
                b0 = problem.degrees() if self.cut == "ncut" else np.ones(problem.n_nodes)
                objective, self.cut_value_ = _balanced_cut(problem.W, b0, labels)
                result = ClusteringResult(objective=objective, history=[objective], info={"gamma": None})
            else:
                choice.pop("kmeans_labels", None)
                run = self._resolved(mode, gamma, random_state=rng)
                labels, result = run._fit_mode(problem, rng)
                self.cut_value_ = run.cut_value_
            result.info.update(choice)
            if mode == "soft":
                result.info["gamma"] = gamma
        result.info.update(graph_info)
        return labels, result

    def _fit_rescaled(self, problem, scale):
        """Weights near the ends of the float range (1e±200) products of which overflow:
        fit on ``W / scale`` (a power of two, so exact) with the soft price scaled alike,
        and report the cut, the objective and the price in the graph's own units (the
        normalised cut is a ratio of weights, the same in any units). The
        partition is the same as for any other scale; the other diagnostics in
        ``result_.info`` are in units of ``info["weight_scale"]``."""
        from dataclasses import replace

        est = self.clone(gamma=None if self.gamma is None else self.gamma / scale)
        labels, result = est._fit(replace(problem, W=problem.W / scale))
        if self.cut == "rcut":  # cut / size scales with the weights; cut / volume does not
            result.objective = None if result.objective is None else result.objective * scale
            result.history = [h * scale for h in result.history]
        if result.info.get("gamma") is not None:
            result.info["gamma"] *= scale
        result.info["weight_scale"] = scale
        self.affinity_matrix_ = problem.W
        self.cut_value_ = est.cut_value_ * scale
        return labels, result

    def _resolved(self, mode, gamma, **params):
        """A copy that fits in ``mode`` at ``gamma``: what ``mode="auto"`` chose, or one
        of its cross-validation candidates. Its soft splits of clusters holding more
        than two classes price must-links only (see the class Notes)."""
        est = self.clone(mode=mode, gamma=gamma, **params)
        est._price_early_cannot_links = False
        return est

    def _auto_choice(self, problem, rng, features=False):
        """``(mode, gamma, info)`` for ``mode="auto"``: see the class docstring.
        ``features``: the graph was built from the features (k-means is a candidate)."""
        w = problem.constraint_weights
        feasible, why = _hard_feasible(problem, self.n_clusters)
        degree = problem.degrees()
        scale = float(degree.mean()) if degree.size and degree.mean() > 0 else 1.0
        gammas = [float(self.gamma)] if self.gamma is not None else [f * scale for f in AUTO_GAMMA_FACTORS]
        info = {"mode": None, "mode_reason": why, "gamma_scale": scale}
        soft = np.isfinite(w)
        n_kind = min(int((soft & (w > 0)).sum()), int((soft & (w < 0)).sum()))
        if n_kind < AUTO_CV_MIN_PER_KIND:
            few = f"fewer than {AUTO_CV_MIN_PER_KIND} soft must-links or cannot-links: no cross-validation"
            info["mode_reason"] = f"{why}; {few}"
            if feasible:
                info["mode"] = "hard"
                return "hard", None, info
            gamma = float(self.gamma) if self.gamma is not None else AUTO_GAMMA_DEFAULT * scale
            info["mode"] = "soft"
            return "soft", gamma, info
        candidates = ([("hard", None)] if feasible else []) + [("soft", g) for g in gammas]
        if candidates[-1] != ("soft", 0.0):
            candidates.append(("soft", 0.0))  # the floor: the data alone (hard must-links merged)
        floor = len(candidates) - 1
        if features and np.isfinite(w).all():
            # the data alone read from the features rather than from their k-NN graph
            candidates.append(("kmeans", None))

        data_alone = {}  # gamma = 0 ignores the soft constraints: one fit serves every fold

        def fit_labels(cand, train, seed):
            if cand == ("kmeans", None):  # ignores the constraints: one fit serves every fold
                if "kmeans" not in data_alone:
                    data_alone["kmeans"] = kmeans(problem.feature_means, self.n_clusters, n_init=10,
                                                  random_state=seed)[0]
                return data_alone["kmeans"]
            if cand == ("soft", 0.0):
                if "labels" not in data_alone:
                    hard = ~np.isfinite(w)
                    train = problem.with_constraints(problem.constraints[hard], w[hard])
                else:
                    return data_alone["labels"]
            est = self._resolved(cand[0], cand[1], random_state=seed, progress=False, callback=None)
            labels = est._fit_mode(train, check_random_state(seed))[0]
            if cand == ("soft", 0.0):
                data_alone["labels"] = labels
            return labels

        scores, kept = cross_validate_constraints(fit_labels, problem, candidates, n_folds=AUTO_CV_FOLDS,
                                                  random_state=rng, return_kept=True)
        # the constraints must show that they help: the best candidate that uses them
        # against the best reading of the data alone (ties to the earlier of each)
        alone = floor + int(np.argmax(scores[floor:]))
        pick = int(np.argmax(scores[:floor])) if floor else alone
        if pick != alone and scores[pick] - scores[alone] > paired_standard_error(kept[pick], kept[alone], w):
            reason = "it keeps more held-out constraints than the data alone, by more than one paired standard error"
        else:
            pick = alone
            reason = "no candidate that uses the constraints keeps more held-out ones than the data alone by " \
                     "more than one paired standard error"
        if not feasible and not above_chance(scores.max(), w):
            pick = floor
            reason = "no candidate keeps the held-out constraints better than coin flips: they are ignored"
        mode, gamma = candidates[pick]
        info.update(mode=mode, mode_reason=f"{why}; {reason}",
                    constraint_cv={(m if g is None else f"soft {g:.4g}"): float(v)
                                   for (m, g), v in zip(candidates, scores)})
        if mode == "kmeans":
            info["kmeans_labels"] = fit_labels(("kmeans", None), problem, int(rng.integers(2**31)))
        return mode, gamma, info

    def _fit_mode(self, problem, rng):
        """Fit in ``self.mode`` (``"hard"`` or ``"soft"``) on a problem with its graph."""
        b0 = problem.degrees() if self.cut == "ncut" else np.ones(problem.n_nodes)
        w = problem.constraint_weights
        if self.mode == "hard":
            w = np.where(w > 0, np.inf, -np.inf)
        p = Problem(nodes=problem.nodes, W=problem.W, X=None, counts=problem.counts, vertex_weights=b0,
                    constraints=problem.constraints, constraint_weights=w)
        reduced, lift = contract(p)
        if reduced.n_nodes < self.n_clusters:
            raise TooFewClustersError(
                f"n_clusters={self.n_clusters} but the problem has only {reduced.n_nodes} node(s) after merging "
                "must-links", n_clusters=self.n_clusters,
            )
        W = sp.csr_array(reduced.W)
        b = reduced.vertex_weights
        pairs, cw = reduced.constraints, reduced.constraint_weights
        history = []
        # k > 2: one bar over the splits, none for each split's gamma path
        splits = progress_bar(self.progress if self.n_clusters > 2 else False, self.n_clusters - 1, "COSC splits",
                              unit="split")

        def step_done(labels):
            """An outer step ended with ``labels`` (super-nodes): record, report, ask to stop."""
            history.append(_kway_objective(W, b, labels, int(labels.max()) + 1))
            if splits is not None:
                splits.update(1)
                splits.set_postfix(objective=f"{history[-1]:.6g}")
            return self.callback is not None and bool(self.callback(len(history), lift(labels), history[-1]))

        try:
            if self.n_clusters == 2:
                labels, info = self._two_way(W, b, pairs, cw, reduced.nodes, rng, derive=self.mode == "hard")
                step_done(labels)
            else:
                labels, info = self._k_way(W, b, pairs, cw, rng, step_done)
        finally:
            if splits is not None:
                splits.close()
        full = lift(labels)
        objective, self.cut_value_ = _balanced_cut(problem.W, b0, full)
        info["n_super_nodes"] = reduced.n_nodes
        return full, ClusteringResult(objective=objective, history=history, info=info)

    # ------------------------------------------------------------------ k = 2
    def _two_way(self, W, b, pairs, cw, nodes, rng, derive, target=0):
        """Bipartition of a contracted graph; returns labels over its vertices and info."""
        n = W.shape[0]
        must = cw > 0
        if self.mode == "hard":
            cl = pairs[~must]
            if derive:
                colour, comp = _two_colouring(n, cl, nodes)
                lab = _derived_groups(n, colour, comp)
                k2 = int(lab.max()) + 1
                W2, b2 = merge_groups(W, b, lab, k2)
                cl2 = np.unique(np.sort(lab[cl], axis=1), axis=0) if len(cl) else cl
                labels2, info = self._solve(W2, b2, cl2, None, None, None, rng, strict=True)
                info["n_derived_super_nodes"] = k2
                return labels2[lab], info
            return self._solve(W, b, cl, None, None, None, rng, strict=False, target=target)
        cq = np.where(np.isinf(cw[~must]), 1.0, -cw[~must])
        return self._solve(W, b, pairs[~must], cq, pairs[must], cw[must], rng, strict=False)

    def _solve(self, W, b, cl, cq, ml, mq, rng, strict, target=0):
        """Solve on the vertices of positive weight, then place the others."""
        n = W.shape[0]
        # near-isolated vertices (kernel weights that underflowed) are handled like
        # isolated ones: with weights 1e-40 the balance term loses all precision
        pos = b > _TINY_WEIGHT * (b.max() if b.size else 0.0)
        idx = np.flatnonzero(pos)
        new = np.full(n, -1, dtype=np.int64)
        new[idx] = np.arange(idx.size)
        info = {"gamma": 0.0, "fallback": False, "gamma_bound": None, "start_cut": None, "history": []}
        side = np.full(n, -1, dtype=np.int64)
        if idx.size >= 2:
            Wp = W[idx][:, idx] if idx.size < n else W
            keep = pos[cl[:, 0]] & pos[cl[:, 1]] if len(cl) else np.zeros(0, bool)
            clp = new[cl[keep]]
            cqp = None if cq is None else cq[keep]
            if ml is not None and len(ml):
                mkeep = pos[ml[:, 0]] & pos[ml[:, 1]]
                mlp, mqp = new[ml[mkeep]], mq[mkeep]
            else:
                mlp = mqp = None
            if idx.size == 2:
                mask = np.array([False, True])
            elif self.mode == "hard" and (self.multilevel is True or (
                    self.multilevel == "auto" and idx.size > _COARSEST_N)):
                mask = self._multilevel(Wp, b[idx], clp, rng, info, strict, target)
            else:
                P = RatioProblem(Wp, b[idx], cannot_pairs=clp, cannot_w=cqp, must_pairs=mlp, must_w=mqp)
                if self.mode == "soft":
                    mask = self._soft(P, rng, info)
                else:
                    mask = self._schedule(P, rng, info, strict, target)
            side[idx] = mask.astype(np.int64)
        elif idx.size == 1:
            side[idx] = 0
        _place_free(side, cl)
        if side.max() == 0 and n >= 2:  # everything in one cluster: only zero-weight vertices can move
            zero = np.flatnonzero(~pos)
            side[zero[-1] if zero.size else n - 1] = 1
        return side, info

    def _multilevel(self, W, b, cl, rng, info, strict, target):
        """Hard mode on a coarsened graph, refined level by level.

        The schedule (with its fallback) runs on the coarsest graph; its partition is
        prolonged to each finer level, where one RatioDCA run at the gamma the coarse
        answer was found at starts from it. The run's partition replaces the
        prolonged one only if it is better and violates at most ``target``
        constraints, so the answer keeps the coarse guarantee: prolongation preserves
        the balanced cut and every cannot-link.
        """
        levels, (Wc, bc, clc) = coarsen(W, b, cl, min_n=_COARSEST_N, random_state=rng)
        P = RatioProblem(Wc, bc, cannot_pairs=clc)
        mask = self._schedule(P, rng, info, strict, target) if P.n > 2 else np.arange(P.n) > 0
        gamma = float(info["gamma"] or 0.0)
        info["levels"] = [Wl.shape[0] for Wl, *_ in levels] + [P.n]
        info["refined"] = []
        for Wl, bl, cll, lab in reversed(levels):
            mask = mask[lab]
            P = RatioProblem(Wl, bl, cannot_pairs=cll)
            start_cut = _set_ratio(P, mask, 0.0)
            n_start = P.constraint_counts(mask)[1]
            res = cosc_bipartition(P, gamma=gamma, init=mask.astype(np.float64), tol=self.tol,
                                   max_inner_iter=_CONTINUATION_INNER_ITER)
            better = res.n_violated <= max(target, n_start) and res.balanced_cut < start_cut
            if better:
                mask = res.labels.astype(bool)
            info["refined"].append({"n": P.n, "start_cut": start_cut, "cut": res.balanced_cut,
                                    "violated": res.n_violated, "kept": bool(better),
                                    "n_inner": sum(r.n_inner for r in res.runs)})
        return mask

    def _starts(self, P, rng):
        return [spectral_start(P, random_state=rng)] + [rng.standard_normal(P.n) for _ in range(self.n_starts - 1)]

    def _runs(self, P, gamma, inits, states, continuation=False):
        # a warm start from the previous gamma is near a local optimum: a smaller inner
        # budget stops rejected steps from doubling it for seconds on large graphs
        cap = _CONTINUATION_INNER_ITER if continuation else _FRESH_INNER_ITER

        def run(f0, st):
            return cosc_bipartition(P, gamma=gamma, init=f0, state=st, tol=self.tol, max_inner_iter=cap)

        workers = min(_n_threads(self.n_jobs), len(inits))
        if workers <= 1:
            return [run(f0, st) for f0, st in zip(inits, states)]
        # the numba kernels release the GIL, so threads run the starts side by side
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(run, inits, states))

    def _soft(self, P, rng, info):
        gamma = float(self.gamma)
        starts = self._starts(P, rng)
        runs = self._runs(P, gamma, starts, [None] * len(starts))
        best = min(runs, key=lambda r: r.ratio)
        info["gamma"] = gamma
        info["history"].append(_record(gamma, runs, best))
        return best.labels.astype(bool)

    def _schedule(self, P, rng, info, strict, target=0):
        """The gamma schedule with the provable fallback (hard mode).

        Every start is run at ``gamma = 0``; each later step warm-starts from the
        runs of the previous step, keeping only distinct partitions (the best
        ``_N_CHAINS`` by penalised ratio: warm starts mostly collapse onto one
        partition, and re-running duplicates only costs time), plus a fresh run
        from the constraint-satisfying partition, which is where consistent
        answers usually come from once ``gamma`` is large enough.

        ``target`` > 0 (first splits of a k-way recursion, whose cannot-links cannot
        all be satisfied by one bipartition) accepts partitions violating at most
        that many constraints.
        """
        starts = self._starts(P, rng)
        C0 = _consistent_start(P, starts[0]) if strict and P.cq.size else None
        # candidates: (balanced cut, mask, gamma); best_any also ranks violating runs
        best = None
        best_any = None

        def consider(res, gamma):
            nonlocal best, best_any
            if res.n_violated <= target and (best is None or res.balanced_cut < best[0]
                                        or (best[2] is None and res.balanced_cut <= best[0] * (1 + 1e-12))):
                best = (res.balanced_cut, res.labels.astype(bool), gamma)
            key = (res.n_violated, res.balanced_cut)
            if best_any is None or key < best_any[0]:
                best_any = (key, res.labels.astype(bool), gamma)

        if C0 is not None:
            bc0 = _set_ratio(P, C0, 0.0)
            info["start_cut"] = bc0
            best = (bc0, C0, None)
            # Theorem 2.1: above this price no partition with a violation beats C0
            info["gamma_bound"] = bound = 1.01 * P.gvol * bc0 / 4.0
            if bc0 == 0.0:
                return C0
        else:
            bound = np.inf
        first = float(self.gamma) if self.gamma else 0.2 * (float(P.ew.mean()) if P.n_edges else 1.0)
        gamma, lo, hi, hi_labels = 0.0, None, None, None
        last_loser = None  # partition chosen at the last violating gamma
        # a chain: (start vector, inner-solver state)
        chains = [(f0, None) for f0 in starts]
        chains_lo = chains
        c0_start = [] if C0 is None else [C0.astype(np.float64)]
        repaired_memo = [None, None]  # (vector, its repair): a jump and the next step share it

        def repaired_start(f):
            if repaired_memo[0] is not f:
                repaired_memo[:] = [f, _consistent_start(P, f)]
            return repaired_memo[1]

        # with k > 2 the splits have the bar (see _fit_mode)
        bar = progress_bar(self.progress if self.n_clusters == 2 else False, self.max_gamma_steps, "COSC gamma",
                           unit="step")
        for _ in range(self.max_gamma_steps):
            runs = self._runs(P, gamma, [c[0] for c in chains], [c[1] for c in chains],
                              continuation=gamma > 0.0)
            fresh = c0_start
            if C0 is not None and gamma > 0.0:
                # the best chain's vector repaired the same way as C0: a consistent
                # start near the partitions this gamma favours
                repaired = repaired_start(chains[0][0])
                if not np.array_equal(repaired, C0):
                    fresh = fresh + [repaired.astype(np.float64)]
            runs += self._runs(P, gamma, fresh, [None] * len(fresh))
            chosen = min(runs, key=lambda r: r.ratio)
            info["history"].append(_record(gamma, runs, chosen))
            for r in runs:
                consider(r, gamma)
            if bar is not None:
                bar.update(1)
            if chosen.n_violated <= target:
                repeat = hi is not None and np.array_equal(chosen.labels, hi_labels)
                hi, hi_labels = gamma, chosen.labels
                # a lower gamma that returns the same partition is not worth narrowing further
                if gamma == 0.0 or lo is None or repeat or (hi - lo) / hi < _BISECT_TOL:
                    break
                gamma = 0.5 * (lo + hi)
                chains = chains_lo
            else:
                lo = gamma
                chains = chains_lo = _next_chains(runs)
                if hi is None:
                    if gamma >= bound:  # the last step ran at the bound: the fallback's price
                        break
                    step = first if gamma == 0.0 else _GAMMA_GROWTH * gamma
                    stalled = last_loser is not None and np.array_equal(chosen.labels, last_loser)
                    if C0 is not None and stalled and P.n >= _JUMP_MIN_N:
                        # the chains did not move from the last gamma, and no consistent
                        # partition can win before the chosen one's penalised ratio reaches
                        # the best consistent cut known: go straight there
                        # (a better consistent partition may win earlier: the bisection looks there)
                        known = min(best[0], _set_ratio(P, repaired_start(chains[0][0]), 0.0))
                        mask = chosen.labels.astype(bool)
                        f0 = _set_ratio(P, mask, 0.0)
                        slope = _set_ratio(P, mask, 1.0) - f0  # F_gamma(mask) = f0 + gamma * slope
                        step = max(step, (1.0 + _CROSSING_MARGIN) * max(known - f0, 0.0) / slope)
                    # never beyond the bound: there the run from C0 is the fallback itself
                    gamma = min(step, bound)
                else:
                    if (hi - lo) / hi < _BISECT_TOL:
                        break
                    gamma = 0.5 * (lo + hi)
                last_loser = chosen.labels
        if bar is not None:
            bar.close()
        if hi is None and C0 is not None:  # schedule found no consistent argmin: the provable fallback
            res = cosc_bipartition(P, gamma=bound, init=C0.astype(np.float64), tol=self.tol)
            info["fallback"] = True
            info["history"].append(_record(bound, [res], res))
            consider(res, bound)
        if best is None:  # only without the fallback (k > 2, cannot-links not 2-colourable)
            info["gamma"] = best_any[2]
            return best_any[1]
        info["gamma"] = best[2] if best[2] is not None else bound
        info["fallback"] = bool(info["fallback"] or info["gamma"] == bound)
        return best[1]

    # ------------------------------------------------------------------ k > 2
    def _k_way(self, W, b, pairs, cw, rng, step_done):
        n = W.shape[0]
        labels = np.zeros(n, dtype=np.int64)
        cache = {}
        info = {"splits": [], "gamma": None, "fallback": False}
        for k in range(1, self.n_clusters):
            last = k == self.n_clusters - 1
            best = None
            for c in range(k):
                members = np.flatnonzero(labels == c)
                if members.size < 2:
                    continue
                key = tuple(members.tolist())
                if key not in cache:
                    cache[key] = self._split(W, b, pairs, cw, members, n, rng)
                for side, sub in cache[key]:
                    trial = labels.copy()
                    trial[members[side == 1]] = k
                    obj = _kway_objective(W, b, trial, k + 1)
                    viol = int(violated_mask(trial, pairs, cw).sum())
                    # the smallest k-way cut (Hein & Buehler); in hard mode the last split
                    # prefers the fewest violations, since nothing can repair them later
                    rank = (viol, obj) if self.mode == "hard" and last else (obj, viol)
                    if best is None or rank < best[0]:
                        best = (rank, trial, c, sub, viol, obj)
            if best is None:
                raise TooFewClustersError(  # pragma: no cover - n >= n_clusters is checked first
                    f"n_clusters={self.n_clusters}: no cluster with two or more nodes is left to split",
                    n_clusters=self.n_clusters,
                )
            _, labels, c, sub, viol, obj = best
            info["splits"].append({"cluster": c, "objective": obj, "violated": viol,
                                   "gamma": sub.get("gamma"), "fallback": sub.get("fallback")})
            if step_done(labels):
                break
        return labels, info

    def _split(self, W, b, pairs, cw, members, n_total, rng):
        """Candidate bipartitions ``[(side, info), ...]`` of the cluster ``members``.

        A connected cluster gets one candidate, from the 2-way machinery. The
        sub-problem only sees edges inside the cluster, so in a disconnected cluster
        every component split has cut 0 there although its k-way cost (edges to
        other clusters count) may be high: the candidates are then each component
        against the rest (the largest ``_MAX_COMPONENT_CANDIDATES``) and a split
        inside the largest component; the caller ranks them by the k-way cut.
        """
        Ws = W[members][:, members]
        n_comp, comp = connected_components(Ws, directed=False)
        if n_comp == 1:
            return [self._split_connected(W, b, pairs, cw, members, n_total, rng)]
        mass = np.bincount(comp, weights=b[members], minlength=n_comp)
        order = np.argsort(-mass, kind="stable")
        out = [((comp == c).astype(np.int64), {"gamma": None, "fallback": False, "component": True})
               for c in order[:_MAX_COMPONENT_CANDIDATES]]
        big = np.flatnonzero(comp == order[0])
        if big.size >= 2:
            side_big, info = self._split_connected(W, b, pairs, cw, members[big], n_total, rng)
            side = np.zeros(members.size, dtype=np.int64)
            side[big] = side_big
            out.append((side, info))
        return out

    def _split_connected(self, W, b, pairs, cw, members, n_total, rng):
        loc = np.full(W.shape[0], -1, dtype=np.int64)
        loc[members] = np.arange(members.size)
        inside = (loc[pairs[:, 0]] >= 0) & (loc[pairs[:, 1]] >= 0) if len(pairs) else np.zeros(0, bool)
        sub_pairs, sub_w = loc[pairs[inside]], cw[inside]
        Ws = W[members][:, members]
        derive, target = False, 0
        k_sub = max(2, (members.size * self.n_clusters) // n_total)
        if self.mode == "soft" and not self._price_early_cannot_links and k_sub > 2 and len(sub_w):
            # a cannot-link kept together by this split may still be separated by a
            # later one; only the split of a cluster of about two classes decides it
            keep = sub_w > 0
            sub_pairs, sub_w = sub_pairs[keep], sub_w[keep]
        if self.mode == "hard":
            cl = sub_pairs[sub_w < 0]
            # a cluster expected to hold k' classes keeps about (k'-2)/k' of its
            # cannot-links inside one side after a split (reference COSC code); only
            # a cluster of about two classes must satisfy them all, with derived
            # must-links when the cannot-links are 2-colourable
            if k_sub == 2:
                derive = _is_bipartite(members.size, cl)
            else:
                target = ((k_sub - 2) * len(cl)) // k_sub
        return self._two_way(Ws, b[members], sub_pairs, sub_w, list(range(members.size)), rng, derive, target)


# ---------------------------------------------------------------------- helpers
def _hard_feasible(problem, n_clusters):
    """``(feasible, why)``: whether hard mode can satisfy every constraint of ``problem``
    (weights ignored) with ``n_clusters`` clusters, as far as a check in linear time
    can tell: no cannot-link inside a must-link component, at least ``n_clusters``
    must-link components, and a colouring of the component cannot-link graph with
    ``n_clusters`` colours (exact for two: no odd cycle; a DSatur colouring above)."""
    w = problem.constraint_weights
    if len(w) == 0:
        return True, "no constraints"
    rep = check_constraints(problem.nodes, problem.constraints, w)
    if rep.conflicts:
        first = rep.conflicts[0]
        return False, (f"{len(rep.conflicts)} cannot-link(s) inside must-link components "
                       f"(first: {' - '.join(map(repr, first.path))})")
    if rep.n_components < n_clusters:
        return False, f"the must-links leave {rep.n_components} group(s), fewer than n_clusters={n_clusters}"
    if n_clusters == 2:
        if not _is_bipartite(rep.n_components, rep.implied_cannot):
            return False, "the cannot-links form an odd cycle, which no 2-partition satisfies"
    elif rep.max_clusters_needed > n_clusters:
        return False, (f"no colouring of the cannot-links with n_clusters={n_clusters} colours was found "
                       f"(DSatur needs {rep.max_clusters_needed})")
    return True, "consistent constraints"


def _record(gamma, runs, chosen):
    return {"gamma": float(gamma), "ratios": [float(r.ratio) for r in runs],
            "violated": [int(r.n_violated) for r in runs], "chosen_violated": int(chosen.n_violated),
            "chosen_ratio": float(chosen.ratio), "labels": chosen.labels.astype(bool),
            "n_inner": [sum(x.n_inner for x in r.runs) for r in runs]}


def _next_chains(runs):
    """Warm starts for the next gamma: ``_N_CHAINS`` runs, distinct partitions first
    (best penalised ratio first), then repeats whose vector still moved at this gamma
    (a repeat that took no step is stuck and would only cost time)."""
    order = sorted(range(len(runs)), key=lambda i: runs[i].ratio)
    seen, first, repeats = set(), [], []
    for i in order:
        key = runs[i].labels.astype(bool).tobytes()
        if key not in seen:
            first.append(i)
        elif len(runs[i].history) > 1:
            repeats.append(i)
        seen.add(key)
    kept = (first + repeats)[:_N_CHAINS]
    return [(runs[i].f, runs[i].state) for i in kept]


def _balanced_cut(W, b, labels):
    """``(sum_l cut(C_l) / vol_b(C_l), total cut weight)`` of ``labels`` on ``W``."""
    per_cut, total = _cluster_cuts(W, labels)
    vol = np.bincount(labels, weights=b, minlength=per_cut.size)
    return float(np.sum(np.divide(per_cut, vol, out=np.zeros_like(per_cut), where=vol > 0))), total


def _cluster_cuts(W, labels, k=None):
    upper = sp.triu(sp.coo_array(W), k=1).tocoo()
    return cut_weights(upper.row, upper.col, upper.data.astype(np.float64), labels, k)


def _kway_objective(W, b, labels, k):
    per, _ = _cluster_cuts(W, labels, k)
    vol = np.bincount(labels, weights=b, minlength=k)
    return float(np.sum(np.divide(per, vol, out=np.zeros_like(per), where=vol > 0)))


def _double_cover(n, cl):
    a, c = cl[:, 0], cl[:, 1]
    rows = np.concatenate([a, a + n])
    cols = np.concatenate([c + n, c])
    A = sp.coo_array((np.ones(rows.size, np.int8), (rows, cols)), shape=(2 * n, 2 * n)).tocsr()
    return A + A.T


def _is_bipartite(n, cl):
    if len(cl) == 0:
        return True
    _, lab = connected_components(_double_cover(n, cl), directed=False)
    v = np.unique(cl)
    return not np.any(lab[v] == lab[v + n])


def _two_colouring(n, cl, nodes):
    """2-colour the cannot-link graph: ``(colour, component)``, ``-1`` for free vertices.

    Vertex ``v`` and its copy ``v + n`` in the bipartite double cover (an edge ``a-b``
    becomes ``a-(b+n)`` and ``(a+n)-b``) fall into one component exactly when an odd
    cycle runs through ``v``; otherwise the component of ``v`` fixes its colour.

    Raises
    ------
    TooFewClustersError
        An odd cycle of cannot-links (listed, by node) needs three clusters.
    """
    colour = np.full(n, -1, dtype=np.int64)
    comp = np.full(n, -1, dtype=np.int64)
    if len(cl) == 0:
        return colour, comp
    A = _double_cover(n, cl)
    _, lab = connected_components(A, directed=False)
    v = np.unique(cl)
    odd = v[lab[v] == lab[v + n]]
    if odd.size:
        cycle = _odd_cycle(A, int(odd[0]), n)
        keys = [nodes[i] for i in cycle]
        chain = " - ".join(map(repr, keys + keys[:1]))
        raise TooFewClustersError(
            f"n_clusters=2 but the cannot-links form an odd cycle {chain} (nodes stand for their must-link "
            "groups), which no 2-partition satisfies; use n_clusters >= 3 or mode='soft'",
            n_clusters=2, min_clusters=3, clique=keys,
        )
    C = sp.coo_array((np.ones(len(cl), np.int8), (cl[:, 0], cl[:, 1])), shape=(n, n)).tocsr()
    _, cc = connected_components(C, directed=False)
    root = np.full(n, n, dtype=np.int64)
    np.minimum.at(root, cc[v], v)
    comp[v] = cc[v]
    colour[v] = (lab[v] != lab[root[cc[v]]]).astype(np.int64)
    return colour, comp


def _odd_cycle(A, v, n):
    """A simple odd cycle of the cannot-link graph through the double-cover path ``v -> v+n``."""
    _, pred = breadth_first_order(A, v, directed=False, return_predecessors=True)
    walk = [v + n]
    while walk[-1] != v:
        walk.append(int(pred[walk[-1]]))
    cyc = [x % n for x in walk[:-1]]  # closed walk of odd length (cyclic)
    while True:
        seen = {}
        for i, x in enumerate(cyc):
            if x in seen:
                j = seen[x]
                sub, rest = cyc[j:i], cyc[:j] + cyc[i:]
                cyc = sub if len(sub) % 2 else rest
                break
            seen[x] = i
        else:
            return cyc


def _derived_groups(n, colour, comp):
    """Group id per vertex: one group per (cannot-link component, colour), singletons
    otherwise; numbered in order of first vertex."""
    key = np.where(colour >= 0, n + 2 * comp + colour, np.arange(n))
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inv.reshape(-1)]


def _consistent_start(P, f):
    """A partition satisfying every cannot-link of ``P`` (each vertex in at most one
    pair, as after derived merging): the endpoints of each pair are pushed to opposite
    extremes of ``f`` (keeping their order) and the best feasible level set is taken."""
    f = np.asarray(f, dtype=np.float64).copy()
    lo, hi = f.min() - 1.0, f.max() + 1.0
    a, c = P.ca, P.cb
    swap = f[a] > f[c]
    low = np.where(swap, c, a)
    high = np.where(swap, a, c)
    f[low] = lo
    f[high] = hi
    thr = _optimal_threshold(P, f, 0.0, feasible_only=True)
    return thr.mask.copy()


def _place_free(side, cl):
    """Give unplaced vertices (zero weight) a side: opposite an already placed
    cannot-linked partner when there is one, else 0. Only isolated and near-isolated
    vertices get here, so the cut changes by at most their negligible degrees."""
    if not (side < 0).any():
        return
    for a, c in cl.tolist():
        if side[a] < 0 and side[c] >= 0:
            side[a] = 1 - side[c]
        elif side[c] < 0 and side[a] >= 0:
            side[c] = 1 - side[a]
        elif side[a] < 0 and side[c] < 0:
            side[a], side[c] = 0, 1
    side[side < 0] = 0


@register_method("cosc", "constrained 1-spectral clustering (normalised cut); hard mode satisfies every "
                         "consistent constraint set for k = 2, k > 2 by recursive splitting")
def _cosc_factory(n_clusters=2, random_state=None):
    return COSC(n_clusters=n_clusters, random_state=random_state)
