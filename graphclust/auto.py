"""The recommended entry point: data plus (possibly noisy) pairs in, clusters out.

:func:`cluster` and :class:`AutoCluster` pick the method, the engine and the noise
handling by fixed rules, and say what they picked (``choice_``):

* **features** (an array, or a graph whose nodes carry features): HMRF-KMeans with loopy
  BP (:class:`~graphclust.HMRF`), whose ``constraint_weight="auto"`` lets held-out
  constraints decide how far to trust them (:mod:`graphclust.selection`); and
  RDP-means (:class:`~graphclust.RDPMeans`, ``xi="auto"``) instead when both could
  cross-validate, RDP-means' best strength keeps more held-out constraints than
  HMRF's and it found ``k`` clusters; then TVClust (:class:`~graphclust.TVClust`,
  which trusts each answer with a probability instead of a strength) instead of
  either when it keeps more held-out constraints than both (by more than one standard
  error of its score), its clusters merged down
  to ``k`` by Ward's criterion when it found more (never across a hard cannot-link; it
  may keep fewer, never one), and
  when its fits are predicted to take at most ten times the fits before it
  (``method="hmrf"``: HMRF always);
* **a graph without features**: constrained spectral clustering (:class:`~graphclust.COSC`)
  with its default ``mode="auto"``: hard mode when the constraints are consistent,
  feasible for ``k`` and held-out constraints do not reject it, otherwise soft mode at
  a price chosen by held-out constraints;
* **the number of clusters**: the one given; else, with enough constraints, the
  smallest ``k`` whose fits keep the held-out constraints as well as the best ``k``
  (within one paired standard error); else, for features, the best silhouette of
  k-means.
"""

import time
import warnings

import numpy as np

from ._params import Integer, Optional, Options, Progress, RandomState
from ._utils import check_random_state, progress_bar
from .base import ClusteringEstimator, ClusteringResult
from .errors import InvalidParameterError
from .hmrf import CV_MIN_PER_KIND, HMRF
from .potentials.centroids import Centroids
from .selection import agreement_standard_error, cross_validate_constraints, paired_standard_error
from .sideinfo import check_constraints

__all__ = ["AutoCluster", "cluster"]

#: folds of the constraint cross-validation that chooses k
_K_FOLDS = 3
#: folds of TVClust's held-out agreement
_TVCLUST_FOLDS = 3
#: TVClust is tried when its fits are predicted to take at most this many times the
#: fits before it (HMRF and RDP-means with their cross-validation)
_TVCLUST_TIME_FACTOR = 10
#: sweeps timed (after the first) before that prediction
_TVCLUST_PROBE_SWEEPS = 4


class _Steps:
    """``tick(stage)`` after every fit of an :class:`AutoCluster` run: one bar for the
    run (see :func:`~graphclust._utils.progress_bar`), its total the planned fits,
    grown if a run makes more."""

    def __init__(self, enabled, total):
        self.bar = progress_bar(enabled, total, "gc.cluster", unit="fit")

    def __call__(self, stage):
        if self.bar is None:
            return
        if self.bar.n >= self.bar.total:
            self.bar.total = self.bar.n + 1
        self.bar.set_postfix(stage=stage, refresh=False)
        self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


class _TooSlow(Exception):
    """TVClust's first fold fit predicts that its fits would exceed the time budget."""


def ward_merge(Y, counts, labels, k, apart=None):
    """A map from ``labels``' clusters to at most ``k`` clusters: the pair of clusters
    whose merge adds least within-cluster scatter (Ward's criterion,
    ``n_a n_b / (n_a + n_b) · ‖μ_a − μ_b‖²``, sizes ``counts``-weighted) is merged
    until ``k`` are left. ``apart``: node pairs (hard cannot-links) whose clusters are
    never merged; when only such pairs are left, more than ``k`` clusters remain.
    Returns ``merge`` of length ``labels.max() + 1`` with values ``0..K' - 1``, in
    order of each merged cluster's first cluster."""
    labels = np.asarray(labels)
    K = int(labels.max()) + 1
    blocked = np.zeros((K, K), dtype=bool)
    if apart is not None and len(apart):
        apart = np.asarray(apart, dtype=np.int64).reshape(-1, 2)
        blocked[labels[apart[:, 0]], labels[apart[:, 1]]] = True
        blocked |= blocked.T
    n = np.bincount(labels, weights=counts, minlength=K).astype(np.float64)
    mu = np.zeros((K, Y.shape[1]))
    np.add.at(mu, labels, Y * np.asarray(counts, dtype=np.float64)[:, None])
    mu /= np.maximum(n, 1e-300)[:, None]
    owner = np.arange(K)
    alive = n > 0
    while alive.sum() > k:  # over clusters, not points
        idx = np.flatnonzero(alive)
        d2 = ((mu[idx, None, :] - mu[None, idx, :]) ** 2).sum(-1)
        na = n[idx]
        cost = na[:, None] * na[None, :] / (na[:, None] + na[None, :]) * d2
        cost[np.tril_indices(len(idx))] = np.inf
        cost[blocked[np.ix_(idx, idx)]] = np.inf
        i, j = np.unravel_index(np.argmin(cost), cost.shape)
        if not np.isfinite(cost[i, j]):
            break  # every pair left is kept apart by a hard cannot-link
        a, b = idx[i], idx[j]
        mu[a] = (n[a] * mu[a] + n[b] * mu[b]) / (n[a] + n[b])
        n[a] += n[b]
        alive[b] = False
        owner[owner == b] = a
        blocked[a] |= blocked[b]
        blocked[:, a] |= blocked[:, b]
    return np.unique(owner, return_inverse=True)[1]


class AutoCluster(ClusteringEstimator):
    """Clustering with side information, method and noise handling chosen by rule.

    Parameters
    ----------
    n_clusters : int or None, default=None
        The number of clusters; ``None`` chooses it (see ``max_clusters``). With
        features and ``method="auto"`` this is at most the number found: when
        TVClust's answer is chosen it may have fewer clusters (never one).
    max_clusters : int, default=10
        The largest number of clusters tried when ``n_clusters`` is ``None``.
    method : {"auto", "hmrf"}, default="auto"
        For features: ``"auto"`` compares HMRF, RDP-means and TVClust by held-out
        constraints (see above and docs/benchmarks/noisy_defaults.md: with TVClust
        among them, the mean pairwise F at 10 % flipped pairs on six UCI sets rose
        from 0.81 to 0.86); ``"hmrf"``: HMRF only (several times faster).
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool or "auto", default="auto"
        One bar for the whole fit, a step per fit it runs (each held-out fold of the
        choice of ``k`` and of TVClust, and each estimator fitted on all the
        constraints; the estimators inside show none); ``"auto"`` shows it only once
        the fit has run two seconds, ``False`` never.

    Attributes
    ----------
    labels_, nodes_, partition_, n_clusters_, result_
        As every estimator; ``result_.info["choice"]`` is ``choice_``.
    estimator_ : ClusteringEstimator
        The fitted estimator the rules chose.
    choice_ : dict
        ``method``, ``n_clusters``, ``n_clusters_from`` ("given", "held-out
        constraints" or "silhouette") and ``noise`` (how noisy side information was
        handled), with the scores behind each choice (``method_scores``: each
        candidate's best held-out agreement) and ``tvclust``: whether TVClust was
        tried (``tried``; else ``predicted_seconds`` against ``budget_seconds``), the
        ``margin`` its score had to beat the others' by, and when it did, the number
        of clusters of its fit on all the constraints and ``merge``, the map from its
        clusters to ours (``labels_ == merge[estimator_.labels_]``), or the ``reason``
        it was not taken after all.

    Examples
    --------
    >>> import graphclust as gc
    >>> X, y = gc.datasets.make_blobs(90, n_clusters=3, random_state=0)
    >>> S = gc.SideInfo.sample(y, 200, noise=0.1, random_state=0)
    >>> est = gc.AutoCluster(n_clusters=3, random_state=0).fit(X, S)
    >>> est.choice_["method"], est.n_clusters_
    ('HMRF', 3)
    """

    _parameter_constraints = {
        "n_clusters": Optional(Integer(low=1)),
        "max_clusters": Integer(low=2),
        "method": Options("auto", "hmrf"),
        "random_state": RandomState(),
        "progress": Progress(),
    }

    def __init__(self, n_clusters=None, *, max_clusters=10, method="auto", random_state=None, progress="auto"):
        self.n_clusters = n_clusters
        self.max_clusters = max_clusters
        self.method = method
        self.random_state = random_state
        self.progress = progress

    def _fit(self, problem):
        start = time.perf_counter()
        rng = check_random_state(self.random_state)
        features = problem.X is not None
        if not features and problem.n_edges == 0:
            raise InvalidParameterError(
                "AutoCluster needs node features or a similarity graph: the data have neither")
        tick = _Steps(self.progress, self._planned_fits(problem, features))
        try:
            k, k_from, k_scores = self._choose_k(problem, features, rng, tick)
            inner = self._estimator(problem, features, k, rng)
            with warnings.catch_warnings():
                # the rules above already handle what these warn about
                warnings.filterwarnings("ignore", message=".*soft cannot-link.*")
                inner.fit(problem)
            tick(type(inner).__name__)
            held_out, labels, tvclust = {}, inner.labels_, None
            if features and self.method == "auto":
                inner, held_out = self._better_of_hmrf_and_rdpmeans(problem, inner, k, rng, tick)
                labels = inner.labels_
                if held_out:
                    inner, labels, tvclust = self._or_tvclust(problem, inner, held_out, k, rng,
                                                              time.perf_counter() - start, tick)
        finally:
            tick.close()
        # TVClust's clusters merged down to k: its cluster c is our cluster merge[c]
        merge = tvclust["merge"] if tvclust is not None and type(inner).__name__ == "TVClust" else None
        info = dict(inner.result_.info)
        choice = {"method": type(inner).__name__, "n_clusters": k, "n_clusters_from": k_from,
                  "noise": self._noise_note(inner, merge)}
        if held_out:
            choice["method_scores"] = held_out
        if tvclust is not None:
            choice["tvclust"] = tvclust
        if k_scores:
            choice["n_clusters_scores"] = k_scores
        info["choice"] = choice
        self.estimator_ = inner
        self.choice_ = choice
        result = ClusteringResult(objective=inner.result_.objective, history=list(inner.result_.history), info=info)
        return labels, result

    def predict(self, X):
        """Cluster labels of new points by the chosen estimator (HMRF or RDP-means
        place them by their centres); a graph method (COSC) has no predict and says
        so."""
        from .base import check_is_fitted

        check_is_fitted(self)
        labels = self.estimator_.predict(X)
        if self.choice_["method"] != "TVClust":
            return labels
        return self.choice_["tvclust"]["merge"][labels]  # its clusters merged down to k

    def _planned_fits(self, problem, features):
        """The fits a run makes at most: the bar's length (a run that needs fewer, say
        without enough constraints to cross-validate, ends with its bar full at the
        fits it made)."""
        n = 1  # the chosen estimator on all the constraints
        if self.n_clusters is None:
            n += len(self._k_candidates(problem)) * _K_FOLDS
        if features and self.method == "auto":
            n += 1 + _TVCLUST_FOLDS + 1  # RDP-means; TVClust's folds and its fit on all
        return n

    def _k_candidates(self, problem):
        """The numbers of clusters tried when none is given: 2 to ``max_clusters``
        (at most one per node)."""
        return list(range(2, int(min(self.max_clusters, problem.n_nodes)) + 1))

    # ------------------------------------------------------------------ rules
    @staticmethod
    def _better_of_hmrf_and_rdpmeans(problem, hmrf, k, rng, tick):
        """RDP-means (noise-aware ``xi="auto"``) instead of HMRF when both could
        cross-validate their constraint strength, RDP-means' best strength keeps more
        held-out constraints than HMRF's, and it found ``k`` clusters. Each score is
        the estimator's own pooled held-out agreement (its best candidate)."""
        from .rdpmeans import RDPMeans

        cv = hmrf.result_.info.get("constraint_cv")
        if not cv:
            return hmrf, {}
        rdp = RDPMeans(n_clusters=k, random_state=int(rng.integers(2**31)), progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            rdp.fit(problem)
        tick("RDPMeans")
        rdp_cv = rdp.result_.info.get("xi_cv")
        if not rdp_cv:
            return hmrf, {}
        scores = {"HMRF": max(cv.values()), "RDPMeans": max(rdp_cv.values())}
        better = scores["RDPMeans"] > scores["HMRF"] and rdp.n_clusters_ == k
        return (rdp if better else hmrf), scores

    @staticmethod
    def _or_tvclust(problem, current, held_out, k, rng, spent, tick):
        """TVClust instead of ``current`` when, with more than ``k`` clusters merged
        down to ``k`` by Ward's criterion, it keeps more held-out constraints than
        ``current``'s best strength did (``held_out``, updated in place), by more than
        one standard error of its own score (its folds are not the others', so a
        smaller lead is a tie, and the tie goes to ``current``). Fewer than
        ``k`` clusters (but more than one) are kept as they are: the held-out pairs
        preferred them.

        TVClust trusts each answer with a probability (``p = q = 0.9``) instead of a
        strength chosen by cross-validation; on noisy pairs it keeps more of the
        classes (docs/benchmarks/noisy_defaults.md). Its held-out agreement comes from
        :data:`_TVCLUST_FOLDS` folds of its own. It is tried only when its fits are
        predicted, from the first sweeps, to take at most :data:`_TVCLUST_TIME_FACTOR`
        times what the fits before it took (``spent`` seconds), predicted from its first
        fold fit; otherwise the run is stopped and ``choice_["tvclust"]`` says so. The
        fit on all the constraints runs only when the folds' score wins (it is the
        answer then), which saves one fit in four where TVClust is not chosen. Returns
        ``(estimator, labels, report)``."""
        from .tvclust import TVClust

        n_fits = 1 + _TVCLUST_FOLDS
        budget = _TVCLUST_TIME_FACTOR * spent
        Y, counts = problem.feature_means, problem.counts

        def fit(train, seed, guard):
            est = TVClust(random_state=seed, progress=False)
            clock = time.perf_counter()
            sweeps = est.n_iter * est.n_chains
            marks = {}

            def too_slow(sweep, labels, log_joint):
                # the rate of the sweeps after the first one (which also pays for the
                # start and any kernel loading), projected over this fit and the folds'
                if not guard or sweep > _TVCLUST_PROBE_SWEEPS + 1:
                    return False
                marks[sweep] = time.perf_counter() - clock
                if sweep <= _TVCLUST_PROBE_SWEEPS:
                    return False
                rate = (marks[sweep] - marks[1]) / (sweep - 1)
                predicted = marks[sweep] + rate * (sweeps - sweep + (n_fits - 1) * sweeps)
                if predicted > budget:
                    too_slow.predicted = predicted
                    return True
                return False

            too_slow.predicted = None
            est.set_params(callback=too_slow)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                est.fit(train)
            est.set_params(callback=None)
            tick("TVClust")
            return est, too_slow.predicted

        # the full fit is needed only if TVClust wins: its seed is drawn first (so the
        # folds are what they were when it ran first), the fit itself comes last
        full_seed = int(rng.integers(2**31))
        w = problem.constraint_weights
        apart = problem.constraints[np.isneginf(w)]  # hard cannot-links: never merged
        probe = []  # the first fold fit predicts the time of all of them

        def fit_labels(_, train, seed):
            sub, predicted = fit(train, seed, not probe)
            probe.append(predicted)
            if predicted is not None:
                raise _TooSlow
            return ward_merge(Y, counts, sub.labels_, k, apart)[sub.labels_]

        try:
            scores, kept = cross_validate_constraints(fit_labels, problem, [None], n_folds=_TVCLUST_FOLDS,
                                                      random_state=rng, return_kept=True)
        except _TooSlow:
            return current, current.labels_, {"tried": False, "predicted_seconds": probe[-1],
                                               "budget_seconds": budget}
        score = float(scores[0])
        # its folds are not the others': a lead within its own standard error is a tie
        margin = agreement_standard_error(kept[0], problem.constraint_weights)
        best = max(held_out.values())
        held_out["TVClust"] = score
        report = {"tried": True, "margin": margin}
        if score <= best + margin:
            return current, current.labels_, report
        est, _ = fit(problem, full_seed, False)
        report["n_clusters"] = int(est.n_clusters_)
        if est.n_clusters_ < 2:
            return current, current.labels_, {**report, "reason": "TVClust found one cluster"}
        merge = ward_merge(Y, counts, est.labels_, k, apart)
        if merge.max() + 1 > k:
            return current, current.labels_, {**report, "reason": f"hard cannot-links keep more than {k} of its "
                                                                  "clusters apart"}
        return est, merge[est.labels_], {**report, "merge": merge}

    def _estimator(self, problem, features, k, rng):
        seed = int(rng.integers(2**31))
        if features:
            return HMRF(Centroids(k), random_state=seed, progress=False)
        from .spectral import COSC

        return COSC(n_clusters=k, random_state=seed, progress=False)

    @staticmethod
    def _quick_graph_estimator(problem, k, seed):
        """COSC for the fits that rank ``k``: hard mode when the constraints allow it,
        else soft at a fixed price (``mode="auto"`` would cross-validate inside every
        fold)."""
        from .spectral import COSC

        report = check_constraints(problem.nodes, problem.constraints, problem.constraint_weights, n_clusters=k)
        mode = "hard" if not report.conflicts and report.feasible else "soft"
        return COSC(n_clusters=k, mode=mode, gamma=None if mode == "hard" else 1.0, random_state=seed,
                    progress=False)

    def _choose_k(self, problem, features, rng, tick):
        if self.n_clusters is not None:
            return int(self.n_clusters), "given", None
        ks = self._k_candidates(problem)
        w = problem.constraint_weights
        soft = np.isfinite(w)
        if min((soft & (w > 0)).sum(), (soft & (w < 0)).sum()) >= CV_MIN_PER_KIND:
            def fit_labels(k, train, seed):
                # the constraints as given: the closure of clean ones can run to 10⁵
                # pairs per fit, and ranking k does not need it
                est = (HMRF(Centroids(k), constraint_weight=1 / 3, init="kmeans", use_closure=False, random_state=seed,
                            progress=False)
                       if features
                       else self._quick_graph_estimator(train, k, seed))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    labels = est.fit(train).labels_
                tick("choosing k")
                return labels

            scores, kept = cross_validate_constraints(fit_labels, problem, ks, n_folds=_K_FOLDS, random_state=rng,
                                                      return_kept=True)
            best = int(np.argmax(scores))
            # the fewest clusters that keep the held-out constraints as well as the best
            pick = next(i for i in range(len(ks)) if scores[best] - scores[i] <= paired_standard_error(
                kept[best], kept[i], w))
            return ks[pick], "held-out constraints", dict(zip(ks, scores.tolist()))
        if not features:
            raise InvalidParameterError(
                f"AutoCluster cannot choose n_clusters for a graph without features from fewer than "
                f"{CV_MIN_PER_KIND} must-links and cannot-links; give n_clusters")
        from sklearn.metrics import silhouette_score

        from ._kmeans import kmeans

        Y = problem.feature_means
        scores = {}
        for k in ks:
            labels, _, _ = kmeans(Y, k, weights=problem.counts, n_init=3, random_state=rng)
            scores[k] = float(silhouette_score(Y, labels)) if len(np.unique(labels)) > 1 else -1.0
            tick("choosing k")
        return max(scores, key=scores.get), "silhouette", scores

    @staticmethod
    def _noise_note(inner, merge=None):
        info = inner.result_.info
        if "constraint_weight" in info:
            w = info["constraint_weight"]
            how = ("held-out constraints chose the factor" if "constraint_cv" in info
                   else "too few constraints to hold out; full strength")
            return f"constraint weight x{w:.4g} ({how})"
        if "xi_choice" in info:
            return f"RDP-means constraint strength {info.get('xi')}: {info['xi_choice']}"
        if hasattr(inner, "q_"):  # TVClust
            note = (f"TVClust: each must-link trusted with probability {inner.p_:.3g}, each cannot-link "
                    f"{inner.q_:.3g}")
            if merge is not None and merge.max() + 1 < inner.n_clusters_:
                note += f"; its {inner.n_clusters_} clusters merged to {merge.max() + 1} by Ward's criterion"
            return note
        mode = info.get("mode", inner.mode)
        return f"COSC {mode} mode" + (f" (chosen from mode={inner.mode!r})" if mode != inner.mode else "")


def cluster(data, S=None, n_clusters=None, *, max_clusters=10, method="auto", random_state=None, progress="auto"):
    """Cluster ``data`` with side information ``S``, choosing method and noise handling.

    The recommended entry point for data and pairs of unknown quality; see
    :class:`AutoCluster` for the rules. Returns the fitted :class:`AutoCluster`
    (``labels_``, ``partition_``, and ``choice_``: what was chosen and why).

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features), networkx.Graph or Problem
    S : SideInfo or None
    n_clusters : int or None, default=None
    max_clusters : int, default=10
    method : {"auto", "hmrf"}, default="auto"
    random_state : None, int or numpy.random.Generator
    progress : bool or "auto", default="auto"
        One progress bar for the fit, shown once it has run two seconds (``"auto"``).

    Examples
    --------
    >>> import graphclust as gc
    >>> X, y = gc.datasets.make_blobs(90, n_clusters=3, random_state=0)
    >>> S = gc.SideInfo.sample(y, 300, noise=0.1, random_state=1)
    >>> est = gc.cluster(X, S, random_state=0)
    >>> est.choice_["n_clusters"], est.choice_["n_clusters_from"]
    (3, 'held-out constraints')
    """
    return AutoCluster(n_clusters, max_clusters=max_clusters, method=method, random_state=random_state,
                       progress=progress).fit(data, S)
