"""HMRF clustering: EM over a node-potential provider with any inference engine.

HMRF-KMeans (Basu, Bilenko & Mooney, KDD 2004) minimises

.. math::

    J(z, μ, A) = \\sum_i D_A(x_i, μ_{z_i})
               + \\sum_{(i,j) \\in M} w_{ij} φ_A(x_i, x_j) [z_i \\ne z_j]
               + \\sum_{(i,j) \\in C} \\bar w_{ij} (φ_{A,\\max} − φ_A(x_i, x_j)) [z_i = z_j]
               − N \\log\\det A

by alternating an E-step (the labels, with ICM, loopy BP, the LP relaxation or an
exact engine on the shared :class:`~graphclust.energy.Energy`) and an M-step (the
provider's centroids and metric).
"""

import time
import warnings

import numpy as np

from ._params import AnyOf, Boolean, Callable, InstanceOf, Integer, Optional, Options, Progress, RandomState, Real
from ._utils import check_random_state, group_sums, progress_bar
from .base import ClusteringEstimator, ClusteringResult, register_method
from .energy import Energy
from .errors import InvalidParameterError, TooFewClustersError
from .inference import ENGINES, default_engine, solve
from .merge import contract
from .potentials.base import NodePotentials
from ._kmeans import kmeans
from .potentials.centroids import Centroids
from .selection import above_chance, cross_validate_constraints, heldout_agreement
from .seeding import farthest_first
from .sideinfo import check_constraints

__all__ = ["HMRF"]

#: the constraint-weight factors ``constraint_weight="auto"`` chooses from, strongest first
CV_FACTORS = (1.0, 1 / 3, 1 / 9, 1 / 27, 0.0)
CV_FOLDS = 3
#: k-means restarts of the default start
KMEANS_RESTARTS = 10
#: fewer soft must-links or cannot-links than this: the given strength, no cross-validation
CV_MIN_PER_KIND = 10


def _scale_soft(problem, factor):
    """``problem`` with its soft constraints' strengths times ``factor`` (dropped at 0)."""
    pairs, w = problem.constraints, problem.constraint_weights
    soft = np.isfinite(w)
    scaled = w.copy()
    scaled[soft] *= factor
    keep = ~soft | (factor > 0)
    return problem.with_constraints(pairs[keep], scaled[keep])


def _check_engine(value, name):
    # read at check time: engines registered after import count
    if not isinstance(value, str) or (value not in ENGINES and value != "auto"):
        raise InvalidParameterError(f"{name} must be 'auto' or one of {', '.join(sorted(ENGINES))}; got {value!r}")


class HMRF(ClusteringEstimator):
    """Hidden-Markov-random-field clustering with pairwise constraints (HMRF-KMeans).

    Parameters
    ----------
    potentials : NodePotentials or None, default=None
        The node-potential provider, e.g. ``Centroids(k)`` (squared Euclidean k-means
        costs); its ``n_clusters`` is the number of clusters. It is cloned at ``fit``,
        never modified. Required at ``fit``: ``None`` is refused rather than guessed
        (use :func:`graphclust.cluster` to choose the number of clusters).
    inference : str, default="auto"
        E-step engine, a key of :data:`graphclust.inference.ENGINES` (``"icm"``,
        ``"bp"``, ``"lp"``, ``"exact"``, ``"expansion"``, ...) or ``"auto"``: the engine
        :func:`graphclust.inference.default_engine` picks for the E-step's energy, as
        ``gc.solve`` does, recorded in ``result_.info["engine"]``: loopy BP when there
        are cannot-links (it matches the LP's answers in our experiments at a fraction
        of its cost, and unlike ICM it does not stall on violated constraints that no
        single-node move can repair; α-expansion there, with its truncated moves, gave
        mean pairwise F 0.974 and 0.777 against BP's 0.976 and 0.795 at 0 and 10 %
        noise on five UCI sets, ``docs/benchmarks/hmrf.md``), the exact minimum cut for
        two clusters with must-links only, α-expansion for more.
    penalty : {"distance", "constant"}, default="distance"
        ``"distance"``: a violated must-link costs ``w·φ(x_i, x_j)`` and a violated
        cannot-link ``w̄·(φ_max − φ(x_i, x_j))`` (HMRF-KMeans); ``"constant"``: they
        cost ``w`` and ``w̄`` (PCKMeans).
    constraint_weight : "auto" or float >= 0, default="auto"
        Factor on the strength of every soft constraint (hard ones stay hard); 0
        ignores them. ``"auto"``: the factor among 1, 1/3, 1/9, 1/27 and 0 whose fits
        keep the most held-out constraints in a cross-validation over the
        constraints (:mod:`graphclust.selection`; 3 folds, about 16 extra fits from
        the same start); on a tie the stronger factor, and the given strength when no
        factor keeps them clearly better than coin flips. (Until 2026-11 the strongest
        factor within one paired standard error of the best was kept: it trusted noisy
        constraints too far, iris fell 0.06 below k-means in F at 20 % flipped pairs,
        ``docs/benchmarks/noisy_defaults.md``.) With fewer than 10
        soft must-links: 1; with fewer than 10 soft cannot-links, those stay in every
        fold and random node pairs stand in for them in the score (one cluster would
        keep every held-out must-link). A wrong
        must-link joins far-apart points, so with distance-scaled penalties it costs
        the most to break: at full strength, 10 % flipped pairs pull HMRF below plain
        k-means, the cross-validated factor keeps it above
        (``docs/benchmarks/noisy_defaults.md``). When the constraints conflict and no
        factor keeps the held-out ones clearly better than coin flips (:func:`graphclust.selection.above_chance`)
        -- as when nearly all of them are wrong -- they are ignored (factor 0) and the
        answer is the data's; the same when must-links join the nodes into fewer than
        ``n_clusters`` groups. When the data's own clustering keeps far fewer held-out
        constraints than coin flips would, a warning asks whether must-links and
        cannot-links were swapped (``result_.info["constraints_contradict_data"]``).
        The choice and the scores are in ``result_.info["constraint_weight"]`` and
        ``["constraint_cv"]``.
    use_closure : {"auto", True, False}, default="auto"
        Give the E-step the transitive closure of the constraints (every pair inside a
        must-link component, every pair across cannot-linked components), with the
        weakest given strength of each kind. Falls back to the given constraints (with
        a warning) above ``max_closure_pairs``. ``"auto"``: the closure only when the
        constraints are consistent (no cannot-link inside a must-link component).
        With noisy side information, the closure chains wrong must-links into
        components that swallow whole classes. On breast cancer with 5 % of the pairs
        flipped, for example, it scores pairwise F 0.69 (everything in one cluster),
        against 0.998 without it (``docs/benchmarks/hmrf.md``).
    max_closure_pairs : int, default=200000
    smoothness : float, default=0.0
        Weight of the data graph's similarities as attractive Potts terms (0: the data
        graph is ignored, as in the paper; > 0 for grids and k-NN graphs).
    max_iter : int, default=100
    tol : float, default=1e-6
        Stop when the labels no longer change and the objective moved by at most
        ``tol·|J|``.
    safeguard : bool, default=True
        Accept an E-step labelling only if it does not raise the E-step energy (BP and
        rounded LP labellings may), so the objective never increases through the
        E-step (generalised EM).
    inference_options : dict or None, default=None
        Extra options for the engine (e.g. ``{"damping": 0.5}``).
    init : {"kmeans", "neighbourhoods"}, array-like of shape (n_clusters, n_features) or None, default=None
        Seeds handed to the provider (for :class:`~graphclust.potentials.Centroids`
        the initial centroids); the initial labels are then the cheapest label of every
        node. ``"kmeans"``: the centres of the best of 10 k-means runs (k-means++
        seeding) on the provider's points: the run whose clusters keep the most soft
        constraints (balanced over must- and cannot-links,
        :func:`graphclust.selection.heldout_agreement`), the lowest inertia among
        equals (by inertia alone when the cross-validation finds no signal in the
        constraints). The constraints only choose among the data's own local optima: on
        standardised digits the lowest-inertia optimum has pairwise F 0.53 and
        another 0.61, and picking by inertia cost HMRF 0.05 below k-means at 5 %
        flipped pairs. ``"neighbourhoods"``: seeds from the
        must-link neighbourhoods by weighted farthest-first, topped up by
        farthest-first over the points (Basu et al.), whose members start in their
        seed's cluster. ``None``: EM from both (when there are must-links), keeping the
        answer with the lower objective (``result_.info["start"]``). Farthest-first
        picks outliers in high dimensions: on standardised digits with 5,000 clean
        pairs the neighbourhood start ends at pairwise F 0.43, the k-means start at 0.64
        with a lower objective; where the data's shape differs from the metric's, the
        constraints' start is the one that finds it.
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool or "auto", default="auto"
        Show a progress bar over EM iterations; ``"auto"`` shows it only once the fit has run two
        seconds (quick fits print nothing), ``False`` never.
    callback : callable or None, default=None
        ``callback(iteration, labels, objective)``; return True to stop.

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
    nodes_, partition_, n_clusters_
    potentials_ : NodePotentials
        The fitted provider (``potentials_.centroids_``, ``potentials_.metric_``).
    result_ : ClusteringResult
        ``objective`` = ``J`` at the answer, ``history`` = ``J`` after every
        iteration (non-increasing when the metric is fixed), ``info`` with E-step and
        M-step times, constraint counts after closure and the E-step engine's results.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.2, 0.0], [0.4, 0.0], [5.0, 0.0], [5.2, 0.0]])
    >>> S = gc.SideInfo.from_pairs(must=[(2, 3)], weight=100.0)
    >>> est = HMRF(gc.potentials.Centroids(2), inference="exact", random_state=0).fit(X, S)
    >>> est.labels_  # the must-link pulls node 2 over to the right-hand cluster
    array([0, 0, 1, 1, 1])
    """

    _parameter_constraints = {
        "potentials": Optional(InstanceOf(NodePotentials, "a NodePotentials provider such as "
                                                          "graphclust.potentials.Centroids")),
        "inference": _check_engine,
        "penalty": Options("distance", "constant"),
        "constraint_weight": AnyOf(Options("auto"), Real(low=0.0)),
        "use_closure": Options("auto", True, False),
        "max_closure_pairs": Integer(low=0),
        "smoothness": Real(low=0.0),
        "max_iter": Integer(low=1),
        "tol": Real(low=0.0),
        "safeguard": Boolean(),
        "inference_options": Optional(InstanceOf(dict, "a dict of engine options")),
        "init": lambda value, name: None,  # a name, or an array checked against the data in fit
        "random_state": RandomState(),
        "progress": Progress(),
        "callback": Callable(),
    }

    def __init__(self, potentials=None, *, inference="auto", penalty="distance", constraint_weight="auto",
                 use_closure="auto", max_closure_pairs=200_000, smoothness=0.0, max_iter=100, tol=1e-6,
                 safeguard=True, inference_options=None, init=None, random_state=None, progress="auto",
                 callback=None):
        self.potentials = potentials
        self.inference = inference
        self.penalty = penalty
        self.constraint_weight = constraint_weight
        self.use_closure = use_closure
        self.max_closure_pairs = max_closure_pairs
        self.smoothness = smoothness
        self.max_iter = max_iter
        self.tol = tol
        self.safeguard = safeguard
        self.inference_options = inference_options
        self.init = init
        self.random_state = random_state
        self.progress = progress
        self.callback = callback

    # ------------------------------------------------------------------ fit
    def _fit(self, problem, start=None, warm=None):
        rng = check_random_state(self.random_state)
        if self.potentials is None:
            raise InvalidParameterError(
                "HMRF needs potentials, which fix the number of clusters: HMRF(gc.potentials.Centroids(n_clusters)); "
                "to choose the number from the data and the constraints use gc.cluster(X, S) or gc.AutoCluster")
        provider = self.potentials.clone()
        provider._validate_params()
        if warm is not None:  # a trial fit of the constraint-weight choice: same data as ``warm``'s
            provider.share_caches(warm)
        if self.penalty == "distance" and problem.n_constraints and not provider.has_pair_distortion:
            raise InvalidParameterError(
                f"HMRF(penalty='distance') scales constraint penalties by pair distortions, which "
                f"{type(provider).__name__} does not provide (implement pair_distortion and max_distortion); "
                "use penalty='constant'"
            )
        K = provider.n_clusters
        if K > problem.n_nodes:
            raise TooFewClustersError(
                f"n_clusters={K} but the problem has only {problem.n_nodes} nodes (n_samples={problem.n_nodes})",
                n_clusters=K,
            )
        report = check_constraints(problem.nodes, problem.constraints, problem.constraint_weights)
        # only hard constraints can make the problem infeasible; soft ones are penalties
        is_hard = np.isinf(problem.constraint_weights)
        hard = None
        if is_hard.any():  # without hard constraints every labelling is feasible
            hard = check_constraints(problem.nodes, problem.constraints[is_hard],
                                     problem.constraint_weights[is_hard], n_clusters=K)
            hard.raise_if_infeasible()
        if hard is not None and hard.n_components < K:
            raise TooFewClustersError(
                f"n_clusters={K} but hard must-links leave only {hard.n_components} groups of nodes; "
                "lower n_clusters or soften the must-links", n_clusters=K,
            )
        # the k-means start is computed once: the cross-validation fits share it
        chosen_start = start is None and self._default_init()
        if chosen_start:
            start = self._kmeans_start(problem, provider, rng)
        factor, closure, cv_info = self._constraint_trust(problem, report, rng, start, K, provider)
        if chosen_start and (cv_info.get("no_signal") or cv_info.get("constraints_contradict_data")):
            # constraints that carry no signal (or contradict the data) do not pick the start either
            start = self._kmeans_start(problem, provider, rng, by_constraints=False)
        if self.init is None and factor > 0 and report.n_components < problem.n_nodes:
            if self.use_closure == "auto" and not closure:
                cv_info["closure_skipped"] = (f"{len(report.conflicts)} conflicting constraint(s)" if report.conflicts
                                              else "held-out constraints preferred the given ones")
            return self._best_of_starts(problem, start, factor, closure, cv_info, rng)
        if factor != 1.0:
            problem = _scale_soft(problem, factor)
            report = check_constraints(problem.nodes, problem.constraints, problem.constraint_weights)
        if report.conflicts and self.constraint_weight != "auto":
            warnings.warn(
                f"{len(report.conflicts)} soft cannot-link(s) join nodes that must-links connect "
                f"(first: {report.conflicts[0]}); both penalties are kept",
                UserWarning, stacklevel=3,
            )
        pairs, weights, info = self._estep_constraints(problem, report, closure)
        info.update(cv_info)
        must = weights > 0
        # the metric step sees the constraint terms only when they depend on the metric
        must_terms = (pairs[must], weights[must]) if self.penalty == "distance" else None
        cannot_terms = (pairs[~must], -weights[~must]) if self.penalty == "distance" else None
        labels = self._initialize(problem, provider, report, rng, start)
        # the E-step's problem: the data graph with the constraints the E-step sees;
        # hard must-links are merged away (contract/lift), so the engines never see an
        # infinite attraction and work on fewer nodes
        estep = problem.with_constraints(pairs, weights)
        merge = self._merge_hard_must_links(problem, estep)
        if merge is not None:
            lift = merge[0]
            start = np.empty(lift.n_super, dtype=np.int64)
            start[lift.mapping] = labels
            labels = start
            info["n_super_nodes"] = lift.n_super

        options = dict(self.inference_options or {})
        history, e_seconds, m_seconds, engine_runs = [], 0.0, 0.0, []
        J_prev = np.inf
        converged = False
        bar = progress_bar(self.progress, self.max_iter, "HMRF EM")
        # the energy under the current parameters: built once per iteration, used for
        # the E-step and (after the M-step changed them) for the objective
        energy, far_pair = self._energy(problem, provider, estep, merge)
        # the energy's structure (labels, terms, signs) is the same in every iteration
        engine = default_engine(energy) if self.inference == "auto" else self.inference
        info["engine"] = engine
        for it in range(1, self.max_iter + 1):
            t0 = time.perf_counter()
            result = solve(energy, engine, init=labels, random_state=rng, **options)
            new = result.labels
            if self.safeguard and energy.evaluate(new) > energy.evaluate(labels) + 1e-9 * abs(result.energy):
                new = labels
            changed = int((new != labels).sum())
            labels = new
            e_seconds += time.perf_counter() - t0
            engine_runs.append({"energy": result.energy, "lower_bound": result.lower_bound,
                                "iterations": result.iterations, "seconds": result.seconds})
            t0 = time.perf_counter()
            node_labels = labels if merge is None else merge[0](labels)
            provider.update(problem, node_labels, must=must_terms, cannot=cannot_terms, far_pair=far_pair)
            m_seconds += time.perf_counter() - t0
            energy, far_pair = self._energy(problem, provider, estep, merge)
            J = energy.evaluate(labels) + provider.label_free_energy(problem)
            history.append(J)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(J=f"{J:.6g}", changed=changed)
            if self.callback is not None and self.callback(it, node_labels.copy(), J):
                break
            if changed == 0 and abs(J_prev - J) <= self.tol * max(abs(J), 1e-300):
                converged = True
                break
            J_prev = J
        if bar is not None:
            bar.close()
        self.potentials_ = provider
        info = {**info, "iterations": len(history), "converged": converged, "e_step_seconds": e_seconds,
                "m_step_seconds": m_seconds, "engine_runs": engine_runs}
        return node_labels, ClusteringResult(objective=history[-1], history=history, info=info)

    def _needs_features(self):
        return self.potentials is None or bool(self.potentials.requires_features)

    def predict(self, X):
        """Cluster labels of new points: the cluster whose unary cost (the provider's
        distortion to its centre under the learnt metric) is lowest, as in an E-step
        without constraints; numbered like ``labels_``.

        Parameters
        ----------
        X : array-like of shape (n_points, n_features)

        Returns
        -------
        ndarray of shape (n_points,)

        Examples
        --------
        >>> import numpy as np
        >>> import graphclust as gc
        >>> X = np.array([[0.0], [0.2], [5.0], [5.2]])
        >>> est = gc.HMRF(gc.potentials.Centroids(2), random_state=0).fit(X)
        >>> est.predict([[0.1], [4.9]]).tolist() == [est.labels_[0], est.labels_[2]]
        True
        """
        from .problem import Problem

        X = self._new_points(X)
        unary = self.potentials_.unary(Problem.from_array(X))
        return self._labels_from_raw(np.argmin(unary, axis=1))

    # ------------------------------------------------------------------ pieces
    def _best_of_starts(self, problem, start, factor, closure, cv_info, rng):
        """EM from the k-means start and from the must-link neighbourhoods; the answer
        with the lower objective. Neither start wins everywhere: k-means avoids the
        outliers farthest-first picks in high dimensions, the neighbourhoods carry what
        the constraints say about the shape (a learnt metric needs them)."""
        fixed = dict(constraint_weight=factor, use_closure=closure, random_state=rng, progress=False)
        stopped, current = [], []
        # one bar for the fit: the EM iterations of both starts
        bar = progress_bar(self.progress, 2 * self.max_iter, "HMRF EM (2 starts)")

        def relay(it, labels, J):  # a callback that asks to stop ends the whole fit
            if bar is not None:
                bar.update(1)
                bar.set_postfix(start=current[-1], J=f"{J:.6g}")
            if self.callback is not None and self.callback(it, labels, J):
                stopped.append(it)
                return True
            return False

        callback = relay if self.callback is not None or bar is not None else None
        fits = {}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                for name, init in (("kmeans", start), ("neighbourhoods", "neighbourhoods")):
                    current.append(name)
                    fits[name] = self.clone(init=init, callback=callback, **fixed).fit(problem)
                    if stopped:
                        break
            finally:
                if bar is not None:
                    bar.close()
        seen = set()
        for w in caught:  # once each, at the caller; known conflicts are why "auto" is here
            key = (str(w.message), w.category)
            if key in seen or (self.constraint_weight == "auto" and "soft cannot-link" in key[0]):
                continue
            seen.add(key)
            warnings.warn(w.message, w.category, stacklevel=4)
        name = min(fits, key=lambda n: fits[n].result_.objective)
        best = fits[name]
        self.potentials_ = best.potentials_
        info = {**best.result_.info, **cv_info, "start": name,
                "start_objectives": {n: e.result_.objective for n, e in fits.items()}}
        # the provider's own cluster ids, as a direct fit returns them (predict maps them)
        raw, canon = best._label_of_raw
        provider_ids = np.empty(len(canon), dtype=np.int64)
        provider_ids[canon] = raw
        return provider_ids[best.labels_], ClusteringResult(objective=best.result_.objective,
                                                            history=best.result_.history, info=info)

    def _default_init(self):
        return self.init is None or (isinstance(self.init, str) and self.init == "kmeans")

    @staticmethod
    def _kmeans_start(problem, provider, rng, by_constraints=True):
        """Centres of the best of 10 k-means runs on the provider's points: the run
        whose clusters keep the most soft constraints (balanced; unless
        ``by_constraints`` is False), then the lowest inertia."""
        Y, counts = provider.points(problem)
        w = problem.constraint_weights
        soft = np.isfinite(w) & by_constraints
        pairs, w = problem.constraints[soft], w[soft]
        best = None
        for _ in range(KMEANS_RESTARTS):
            labels, centres, inertia = kmeans(Y, provider.n_clusters, weights=counts, n_init=1, random_state=rng)
            kept = heldout_agreement(labels, pairs, w) if len(w) else 0.0
            if best is None or (-kept, inertia) < best[0]:
                best = ((-kept, inertia), centres)
        return best[1]

    def _constraint_trust(self, problem, report, rng, start, n_clusters, provider):
        """``(factor, closure, info)``: the factor on the soft constraints' strengths,
        whether the E-step sees their closure, and what to record of the choice.
        ``provider`` lends the trial fits what it computed from the data alone."""
        # the closure is an option only for consistent constraints
        closure = self.use_closure is True or (self.use_closure == "auto" and not report.conflicts)
        w = problem.constraint_weights
        soft = np.isfinite(w)
        if self.constraint_weight != "auto" or (soft & (w > 0)).sum() < CV_MIN_PER_KIND:
            factor = 1.0 if self.constraint_weight == "auto" else float(self.constraint_weight)
            return factor, closure, {"constraint_weight": factor}
        # let held-out constraints choose how far to trust them: strongest first, the
        # closure (if allowed) before the given constraints at full strength. Too few
        # cannot-links to hold out stay in every fold, and random pairs stand in for them
        candidates = [(f, False) for f in CV_FACTORS]
        if closure and self.use_closure == "auto":
            candidates.insert(0, (1.0, True))
        # a provider that learns from the constraints (a metric) is tried from both
        # default starts, as in the final fit: judged from the k-means start alone, a
        # candidate loses where only the must-link neighbourhoods find the answer. Other
        # providers' trials run from the k-means start only (half the fits)
        both = self.init is None and getattr(self.potentials, "learns_from_constraints", False)
        trial = self._trial() if both or start is None else self._trial().set_params(init=start)
        unconstrained = []  # factor 0 ignores the soft constraints: one fit serves every fold
        if self.penalty == "distance" and provider.has_pair_distortion:
            provider.max_distortion(problem)  # computed once here, shared by every trial fit

        def fit_labels(cand, train, seed):
            if cand[0] == 0.0 and unconstrained:
                return unconstrained[0]
            with warnings.catch_warnings():  # conflicts in the folds are expected
                warnings.simplefilter("ignore", UserWarning)
                trial.set_params(constraint_weight=cand[0], use_closure=cand[1] or self.use_closure is True,
                                 random_state=seed)
                labels = trial._fit(train, start, warm=provider)[0]
            if cand[0] == 0.0:
                unconstrained.append(labels)
            return labels

        scores = cross_validate_constraints(fit_labels, problem, candidates, n_folds=CV_FOLDS, random_state=rng,
                                            min_per_kind=CV_MIN_PER_KIND)
        # the candidate that keeps the most held-out constraints (the stronger on a tie:
        # candidates are ordered strongest first). Keeping the strongest within one
        # standard error of it trusted noisy constraints too far (docs/benchmarks/noisy_defaults.md).
        # When no candidate keeps them clearly better than coin flips the scores carry no
        # signal, and the given strength stands (conflicting constraints: see below)
        pick = int(np.argmax(scores)) if above_chance(scores.max(), w, min_per_kind=CV_MIN_PER_KIND) else 0
        factor, closure = candidates[pick][0], candidates[pick][1] or self.use_closure is True
        cv = {(f"{f:.4g}" + (" + closure" if c else "")): float(v) for (f, c), v in zip(candidates, scores)}
        info = {"constraint_cv": cv}
        # noisy for sure: conflicts, or must-links that join the nodes into fewer than k groups
        noisy = bool(report.conflicts) or report.n_components < n_clusters
        if noisy and not above_chance(scores.max(), w, min_per_kind=CV_MIN_PER_KIND):
            # no answer keeps the held-out constraints better than coin flips: no usable signal
            factor = 0.0
            info["no_signal"] = True
        if not above_chance(1.0 - scores[-1], w, min_per_kind=CV_MIN_PER_KIND):
            return factor, closure, {"constraint_weight": factor, **info}
        # the data's own clustering keeps far fewer held-out constraints than coin flips would
        info["constraints_contradict_data"] = True
        warnings.warn(
            f"the side information contradicts the data: clustered without it, the answer keeps only "
            f"{scores[-1]:.0%} of held-out constraints (coin flips keep 50 %); check that must-links and "
            f"cannot-links are not swapped. Constraint weight factor used: {factor:g}",
            UserWarning, stacklevel=4,
        )
        return factor, closure, {"constraint_weight": factor, **info}

    def _trial(self):
        """A quiet copy for the cross-validation fits."""
        return self.clone(progress=False, callback=None)

    def _estep_constraints(self, problem, report, closure=True):
        """The constraints the E-step sees: the given ones, or their closure."""
        pairs, w = problem.constraints, problem.constraint_weights
        info = {"n_must": int((w > 0).sum()), "n_cannot": int((w < 0).sum()), "closure": False}
        if len(w) == 0:
            return pairs, w, info
        if self.use_closure == "auto" and report.conflicts:
            # inconsistent side information: its closure would chain the wrong links
            info["closure_skipped"] = f"{len(report.conflicts)} conflicting constraint(s)"
            return pairs, w, info
        if not closure:
            if self.use_closure == "auto":
                info["closure_skipped"] = "held-out constraints preferred the given ones"
            return pairs, w, info
        comp = report.component_of
        n_comp = report.n_components
        sizes = np.bincount(comp, minlength=n_comp)
        n_ml = int((sizes * (sizes - 1) // 2).sum())
        imp = report.implied_cannot
        n_cl = int((sizes[imp[:, 0]] * sizes[imp[:, 1]]).sum()) if len(imp) else 0
        if n_ml + n_cl > self.max_closure_pairs:
            warnings.warn(
                f"the constraint closure has {n_ml + n_cl} pairs (> max_closure_pairs={self.max_closure_pairs}); "
                "the E-step uses the given constraints only",
                UserWarning, stacklevel=4,
            )
            return pairs, w, info
        order = np.argsort(comp, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)])
        members = [order[starts[c]:starts[c + 1]] for c in range(n_comp)]
        new_pairs = []
        for c in np.flatnonzero(sizes > 1).tolist():
            m = members[c]
            a, b = np.triu_indices(len(m), 1)
            new_pairs.append((m[a], m[b], 1.0))
        for ca, cb in imp.tolist():
            a, b = np.meshgrid(members[ca], members[cb], indexing="ij")
            new_pairs.append((a.ravel(), b.ravel(), -1.0))
        w_must = w[w > 0].min() if (w > 0).any() else 1.0
        w_cannot = (-w[w < 0]).min() if (w < 0).any() else 1.0
        ii = np.concatenate([p[0] for p in new_pairs]) if new_pairs else np.empty(0, np.int64)
        jj = np.concatenate([p[1] for p in new_pairs]) if new_pairs else np.empty(0, np.int64)
        sign = np.concatenate([np.full(len(p[0]), p[2]) for p in new_pairs]) if new_pairs else np.empty(0)
        inferred = np.stack([np.minimum(ii, jj), np.maximum(ii, jj)], 1)
        inferred_w = np.where(sign > 0, w_must, -w_cannot)
        # given constraints keep their own strength; the closure adds the rest
        n = problem.n_nodes
        given_key = pairs[:, 0] * n + pairs[:, 1]
        fresh = ~np.isin(inferred[:, 0] * n + inferred[:, 1], given_key)
        all_pairs = np.concatenate([pairs, inferred[fresh]])
        all_w = np.concatenate([w, inferred_w[fresh]])
        info.update(closure=True, n_must_closure=int((all_w > 0).sum()), n_cannot_closure=int((all_w < 0).sum()))
        return all_pairs, all_w, info

    def _initialize(self, problem, provider, report, rng, start=None):
        """Initial labels: the cheapest label of every node under k-means centres
        (``start``) or given seeds; or, with ``init="neighbourhoods"``, seeds from
        must-link neighbourhoods by weighted farthest-first (Bilenko et al. 2004),
        topped up by farthest-first over points, the neighbourhood's cluster for its
        members."""
        if start is None and self._default_init():
            start = self._kmeans_start(problem, provider, rng)
        if start is not None:
            provider.initialize(problem, start, rng)
            return provider.unary(problem).argmin(axis=1).astype(np.int64)
        if isinstance(self.init, str) and self.init != "neighbourhoods":
            raise InvalidParameterError(
                f"init of HMRF must be 'kmeans', 'neighbourhoods', an array of seeds or None; got {self.init!r}")
        if not isinstance(self.init, str):
            seeds = np.asarray(self.init, dtype=np.float64)
            if not np.isfinite(seeds).all():
                raise InvalidParameterError("init of HMRF must be finite")
            provider.initialize(problem, seeds, rng)
            return provider.unary(problem).argmin(axis=1).astype(np.int64)
        Y, counts = provider.points(problem)
        K = provider.n_clusters
        comp = report.component_of
        sizes = np.bincount(comp, weights=counts, minlength=report.n_components)
        hoods = np.flatnonzero(np.bincount(comp, minlength=report.n_components) > 1)
        sums = group_sums(comp, Y, report.n_components, counts)
        seeds, seed_hood = [], []
        if len(hoods):
            cents = sums[hoods] / sizes[hoods, None]
            chosen, _ = farthest_first(lambda i: _dist_to(provider, cents, cents[i]), np.full(len(hoods), np.inf),
                                       min(K, len(hoods)), weights=sizes[hoods], first=int(np.argmax(sizes[hoods])))
            seeds = [cents[c] for c in chosen]
            seed_hood = [hoods[c] for c in chosen]
        if len(seeds) < K:
            # farthest-first over the points, away from the seeds so far (k-means++-like
            # but deterministic given the first pick)
            if seeds:
                dmin, first = np.min(np.stack([_dist_to(provider, Y, s) for s in seeds]), axis=0), None
            else:
                dmin, first = np.full(len(Y), np.inf), int(rng.integers(len(Y)))
            picks, _ = farthest_first(lambda i: _dist_to(provider, Y, Y[i]), dmin, K - len(seeds), first=first)
            seeds += [Y[i] for i in picks]
        provider.initialize(problem, np.array(seeds), rng)
        labels = provider.unary(problem).argmin(axis=1)
        for k, h in enumerate(seed_hood):
            labels[comp == h] = k
        return labels.astype(np.int64)

    def _merge_hard_must_links(self, problem, estep):
        """``(lift, reduced E-step problem, inside)`` when hard must-links exist: their
        components become super-nodes, the E-step constraints are mapped onto them
        (``inside`` marks those that fall inside one), else None."""
        if not np.isposinf(problem.constraint_weights).any():
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # soft cannot-links inside: reported as conflicts already
            reduced, lift = contract(problem)
        ends = np.sort(lift.mapping[estep.constraints], axis=1)
        inside = ends[:, 0] == ends[:, 1]
        return lift, reduced.with_constraints(ends[~inside], estep.constraint_weights[~inside]), inside

    def _energy(self, problem, provider, estep=None, merge=None):
        """The E-step energy under the provider's current parameters: its unaries, the
        data graph times ``smoothness`` and the constraints of ``estep`` (``problem``
        with the E-step's constraints; ``problem`` itself by default), distance-scaled
        with ``penalty="distance"``. With ``merge`` (see :meth:`_merge_hard_must_links`)
        the energy is over the super-nodes: the members' unaries summed, constraints
        between super-nodes kept, those inside one a constant (a cannot-link there is
        always violated, a must-link always kept); its value is the same."""
        estep = problem if estep is None else estep
        U = provider.unary(problem)
        far_pair = None
        weights = estep.constraint_weights
        if len(weights) and self.penalty == "distance":
            phi = provider.pair_distortion(problem, estep.constraints)
            phi_max, far_pair = provider.max_distortion(problem)
            # inf * 0 (identical points) means "hard, but free here": keep it hard
            with np.errstate(invalid="ignore"):
                w = np.where(weights > 0, weights * phi, weights * np.maximum(phi_max - phi, 0.0))
            weights = np.where(np.isnan(w), weights, w)
        if merge is None:
            return Energy.from_problem(estep, U, smoothness=self.smoothness, constraint_weights=weights), far_pair
        lift, reduced, inside = merge
        constant = float(-weights[inside & (weights < 0)].sum())
        return Energy.from_problem(reduced, lift.aggregate(U), smoothness=self.smoothness,
                                   constraint_weights=weights[~inside], constant=constant), far_pair


def _dist_to(provider, Y, c):
    return provider.distortion_matrix(Y, np.asarray(c)[None, :])[:, 0]



@register_method("hmrf", "HMRF-KMeans: centroids with a learnt diagonal metric (as in the paper), "
                         "distance-scaled penalties, E-step engine from --inference (auto by default: bp with cannot-links, "
                         "mincut or expansion without; icm, lp, exact, ...)")
def _hmrf_factory(n_clusters=2, random_state=None):
    return HMRF(Centroids(n_clusters, distortion="mahalanobis"), random_state=random_state)
