"""The recommended entry point: data plus (possibly noisy) pairs in, clusters out.

:func:`cluster` and :class:`AutoCluster` pick the method, the engine and the noise
handling by fixed rules, and say what they picked (``choice_``):

* **features** (an array, or a graph whose nodes carry features): HMRF-KMeans with loopy
  BP (:class:`~graphclust.HMRF`), whose ``constraint_weight="auto"`` lets held-out
  constraints decide how far to trust them (:mod:`graphclust.selection`); and
  RDP-means (:class:`~graphclust.RDPMeans`, ``xi="auto"``) instead when both could
  cross-validate, RDP-means' best strength keeps more held-out constraints than
  HMRF's and it found ``k`` clusters (``method="hmrf"``: HMRF always);
* **a graph without features**: constrained spectral clustering (:class:`~graphclust.COSC`)
  with its default ``mode="auto"``: hard mode when the constraints are consistent,
  feasible for ``k`` and held-out constraints do not reject it, otherwise soft mode at
  a price chosen by held-out constraints;
* **the number of clusters**: the one given; else, with enough constraints, the
  smallest ``k`` whose fits keep the held-out constraints as well as the best ``k``
  (within one paired standard error); else, for features, the best silhouette of
  k-means.
"""

import warnings

import numpy as np

from ._params import Integer, Optional, Options, RandomState
from ._utils import check_random_state
from .base import ClusteringEstimator, ClusteringResult
from .errors import InvalidParameterError
from .hmrf import CV_MIN_PER_KIND, HMRF
from .potentials.centroids import Centroids
from .selection import cross_validate_constraints, paired_standard_error
from .sideinfo import check_constraints

__all__ = ["AutoCluster", "cluster"]

#: folds of the constraint cross-validation that chooses k
_K_FOLDS = 3


class AutoCluster(ClusteringEstimator):
    """Clustering with side information, method and noise handling chosen by rule.

    Parameters
    ----------
    n_clusters : int or None, default=None
        The number of clusters; ``None`` chooses it (see ``max_clusters``).
    max_clusters : int, default=10
        The largest number of clusters tried when ``n_clusters`` is ``None``.
    method : {"auto", "hmrf"}, default="auto"
        For features: ``"auto"`` compares HMRF and RDP-means by held-out constraints
        (see above; on the issue #26 benchmark this kept the entry point above k-means
        on every data set up to 20 % flipped pairs, where HMRF alone fell up to 0.05
        below); ``"hmrf"``: HMRF only (faster).
    random_state : None, int or numpy.random.Generator, default=None

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
        candidate's best held-out agreement).

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
    }

    def __init__(self, n_clusters=None, *, max_clusters=10, method="auto", random_state=None):
        self.n_clusters = n_clusters
        self.max_clusters = max_clusters
        self.method = method
        self.random_state = random_state

    def _fit(self, problem):
        rng = check_random_state(self.random_state)
        features = problem.X is not None
        if not features and problem.n_edges == 0:
            raise InvalidParameterError(
                "AutoCluster needs node features or a similarity graph: the data have neither")
        k, k_from, k_scores = self._choose_k(problem, features, rng)
        inner = self._estimator(problem, features, k, rng)
        with warnings.catch_warnings():
            # the rules above already handle what these warn about
            warnings.filterwarnings("ignore", message=".*soft cannot-link.*")
            inner.fit(problem)
        held_out = {}
        if features and self.method == "auto":
            inner, held_out = self._better_of_hmrf_and_rdpmeans(problem, inner, k, rng)
        info = dict(inner.result_.info)
        choice = {"method": type(inner).__name__, "n_clusters": k, "n_clusters_from": k_from,
                  "noise": self._noise_note(inner)}
        if held_out:
            choice["method_scores"] = held_out
        if k_scores:
            choice["n_clusters_scores"] = k_scores
        info["choice"] = choice
        self.estimator_ = inner
        self.choice_ = choice
        result = ClusteringResult(objective=inner.result_.objective, history=list(inner.result_.history), info=info)
        return inner.labels_, result

    def predict(self, X):
        """Cluster labels of new points by the chosen estimator (HMRF or RDP-means
        place them by their centres); a graph method (COSC) has no predict and says
        so."""
        from .base import check_is_fitted

        check_is_fitted(self)
        return self.estimator_.predict(X)

    # ------------------------------------------------------------------ rules
    @staticmethod
    def _better_of_hmrf_and_rdpmeans(problem, hmrf, k, rng):
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
        rdp_cv = rdp.result_.info.get("xi_cv")
        if not rdp_cv:
            return hmrf, {}
        scores = {"HMRF": max(cv.values()), "RDPMeans": max(rdp_cv.values())}
        better = scores["RDPMeans"] > scores["HMRF"] and rdp.n_clusters_ == k
        return (rdp if better else hmrf), scores

    def _estimator(self, problem, features, k, rng):
        seed = int(rng.integers(2**31))
        if features:
            return HMRF(Centroids(k), random_state=seed)
        from .spectral import COSC

        return COSC(n_clusters=k, random_state=seed)

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

    def _choose_k(self, problem, features, rng):
        if self.n_clusters is not None:
            return int(self.n_clusters), "given", None
        top = int(min(self.max_clusters, problem.n_nodes))
        ks = list(range(2, top + 1))
        w = problem.constraint_weights
        soft = np.isfinite(w)
        if min((soft & (w > 0)).sum(), (soft & (w < 0)).sum()) >= CV_MIN_PER_KIND:
            def fit_labels(k, train, seed):
                est = (HMRF(Centroids(k), constraint_weight=1 / 3, init="kmeans", random_state=seed, progress=False)
                       if features
                       else self._quick_graph_estimator(train, k, seed))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    return est.fit(train).labels_

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
        return max(scores, key=scores.get), "silhouette", scores

    @staticmethod
    def _noise_note(inner):
        info = inner.result_.info
        if "constraint_weight" in info:
            w = info["constraint_weight"]
            how = ("held-out constraints chose the factor" if "constraint_cv" in info
                   else "too few constraints to hold out; full strength")
            return f"constraint weight x{w:.4g} ({how})"
        if "xi_choice" in info:
            return f"RDP-means constraint strength {info.get('xi')}: {info['xi_choice']}"
        mode = info.get("mode", inner.mode)
        return f"COSC {mode} mode" + (f" (chosen from mode={inner.mode!r})" if mode != inner.mode else "")


def cluster(data, S=None, n_clusters=None, *, max_clusters=10, method="auto", random_state=None):
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

    Examples
    --------
    >>> import graphclust as gc
    >>> X, y = gc.datasets.make_blobs(90, n_clusters=3, random_state=0)
    >>> S = gc.SideInfo.sample(y, 300, noise=0.1, random_state=1)
    >>> est = gc.cluster(X, S, random_state=0)
    >>> est.choice_["n_clusters"], est.choice_["n_clusters_from"]
    (3, 'held-out constraints')
    """
    return AutoCluster(n_clusters, max_clusters=max_clusters, method=method, random_state=random_state).fit(data, S)
