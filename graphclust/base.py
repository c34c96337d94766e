"""The estimator contract (scikit-learn's: every estimator is a scikit-learn clusterer)
and the registry of clustering methods the command line and the demo use."""

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from ._params import Parametrized
from .errors import InvalidFeaturesError, InvalidParameterError, NotFittedError

__all__ = [
    "ClusteringEstimator",
    "ClusteringResult",
    "METHODS",
    "register_method",
    "check_is_fitted",
    "canonical_labels",
]


@dataclass
class ClusteringResult:
    """What a fitted estimator found, beyond the labels.

    Attributes
    ----------
    objective : float or None
        The value the method minimises (energy, ratio, cut) at the answer.
    violations : object or None
        Constraint violations (:func:`graphclust.metrics.violations`).
    history : list
        Objective after each outer iteration.
    seconds : float
        Wall-clock time of ``fit``.
    info : dict
        Method-specific extras.
    """

    objective: float | None = None
    violations: object = None
    history: list = field(default_factory=list)
    seconds: float = 0.0
    info: dict = field(default_factory=dict)


class ClusteringEstimator(Parametrized, ClusterMixin, BaseEstimator):
    """Base class: ``get_params``/``set_params``/``clone`` from the ``__init__``
    signature (nested ``potentials__n_clusters`` included), a readable ``repr``,
    parameter constraints checked once as ``fit`` starts, and ``fit_predict``. A
    scikit-learn clusterer: ``sklearn.base.clone``, ``Pipeline``, ``GridSearchCV``'s
    parameter grids and metadata routing of ``sideinfo`` work as for scikit-learn's own.

    Subclasses implement ``_fit(problem)`` returning ``(labels, ClusteringResult)``
    for a :class:`~graphclust.Problem`, declare ``_parameter_constraints`` (a dict from
    parameter name to a constraint of :mod:`graphclust._params`, extending the
    parent's), and put rules that tie parameters together in ``_check_params``.
    """

    # side information is what these estimators are for: requested by default, so a
    # routed sideinfo= reaches fit through Pipeline and GridSearchCV without set_fit_request
    __metadata_request__fit = {"sideinfo": True}

    def fit(self, X, y=None, *, sideinfo=None):
        """Cluster ``X`` with optional side information; returns ``self``.

        Parameters
        ----------
        X : networkx.Graph, array-like of shape (n_samples, n_features), sparse matrix or Problem
            The data: a graph (nodes may carry ``features``), feature rows (nodes
            ``0..n_samples-1``), a sparse similarity matrix, or a :class:`~graphclust.Problem`.
        y : array-like of shape (n_samples,) or None, default=None
            Partial labels in node order, ``-1`` for an unlabelled node (the convention
            of ``sklearn.semi_supervised``): nodes with one label are must-linked and
            different labels cannot-linked, as soft constraints of strength 1, so wrong
            labels are weighed like any noisy pair (for hard ones pass
            ``sideinfo=SideInfo.from_labels(...)``). A :class:`~graphclust.SideInfo` or a
            networkx graph given here is read as ``sideinfo`` (``fit(G, S)``).
        sideinfo : SideInfo, networkx.Graph, iterable of (u, v, weight) or None, default=None
            Pairwise constraints over node keys: ``weight > 0`` must-link, ``< 0``
            cannot-link, ``±inf`` hard; a graph's edge weights are read the same way.
            A fit parameter, so scikit-learn's metadata routing can pass it through a
            ``Pipeline`` (``est.set_fit_request(sideinfo=True)``).

        Examples
        --------
        >>> import numpy as np
        >>> import graphclust as gc
        >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
        >>> y = np.array([0, -1, -1, 1, -1, -1])  # two labelled points
        >>> gc.HMRF(gc.potentials.Centroids(2), random_state=0).fit(X, y).labels_.tolist()
        [0, 0, 0, 1, 1, 1]
        >>> S = [(0, 3, -1.0)]  # a cannot-link as a (u, v, weight) triple
        >>> gc.HMRF(gc.potentials.Centroids(2), random_state=0).fit(X, sideinfo=S).n_clusters_
        2
        """
        from ._utils import announce_compilation_once
        from .problem import as_problem
        from .sideinfo import side_information

        self._validate_params()
        announce_compilation_once()
        start = time.perf_counter()
        problem = as_problem(X)
        if problem.X is None and self._needs_features():
            raise InvalidFeaturesError(
                f"{type(self).__name__} needs node features: give nodes a 'features' attribute (or fit on an "
                f"array X); these nodes have none. Methods that work on a graph alone: COSC, SpectralClustering, "
                f"DCP and AutoCluster")
        S = side_information(problem.nodes, y, sideinfo)
        if S is not None:
            problem = problem.with_side_info(S)
        labels, result = self._fit(problem)
        result.seconds = time.perf_counter() - start
        if result.violations is None:
            from .metrics import violations

            result.violations = violations(problem, labels)
        # the labels, and which canonical label each of the method's own cluster ids became (for predict)
        self.labels_, raw, canon = _canonicalise(labels)
        self._label_of_raw = (raw, canon)
        self.nodes_ = list(problem.nodes)
        self.partition_ = problem.partition(self.labels_)
        self.n_clusters_ = int(len(np.unique(self.labels_)))
        self.result_ = result
        self.problem_ = problem
        if problem.X is not None:
            self.n_features_in_ = int(problem.X.shape[1])
        if hasattr(X, "columns") and hasattr(X, "iloc"):  # a DataFrame, as scikit-learn records it
            self.feature_names_in_ = np.asarray(X.columns, dtype=object)
        if "max_iter" in self._param_names() or "n_iter" in self._param_names():
            self.n_iter_ = int(result.info.get("iterations", len(result.history)))
        return self

    def _needs_features(self):
        """Whether the method clusters node features (a graph alone will not do)."""
        return False

    def _new_points(self, X):
        """New feature rows for ``predict``, checked against the fit's features."""
        from ._utils import check_feature_matrix

        check_is_fitted(self)
        X = check_feature_matrix(X)
        expected = getattr(self, "n_features_in_", None)
        if expected is None:
            raise InvalidParameterError(
                f"{type(self).__name__} was fitted without node features, so new points cannot be placed")
        if X.shape[1] != expected:
            raise InvalidFeaturesError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting {expected} features as input")
        return X

    def _labels_from_raw(self, raw):
        """Canonical labels of the method's own cluster ids ``raw``; an id no training
        node ended in (an emptied cluster) gets a label after the fitted ones."""
        known, canon = self._label_of_raw
        raw = np.asarray(raw)
        pos = np.clip(np.searchsorted(known, raw), 0, len(known) - 1)
        seen = known[pos] == raw
        out = np.empty(len(raw), dtype=np.int64)
        out[seen] = canon[pos[seen]]
        if not seen.all():
            _, new = np.unique(raw[~seen], return_inverse=True)
            out[~seen] = self.n_clusters_ + new.reshape(-1)
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a sparse X is a similarity matrix when square, else features (see as_problem)
        tags.input_tags.sparse = True
        tags.non_deterministic = False
        return tags

    def fit_predict(self, X, y=None, *, sideinfo=None):
        """``fit`` and return ``labels_``."""
        return self.fit(X, y, sideinfo=sideinfo).labels_

    def _fit(self, problem):  # pragma: no cover - abstract
        raise NotImplementedError


class Transductive:
    """Mixin for an estimator without ``predict``: ``hasattr(est, "predict")`` is False
    (so scikit-learn does not expect it), and asking for it says why and what to do.
    ``_no_predict`` says why; the default is a method with no model of a cluster."""

    _no_predict = ("is transductive: it partitions the nodes it was fitted on and has no model of a cluster "
                   "for new points")

    @property
    def predict(self):
        name = type(self).__name__
        raise AttributeError(
            f"{name} {self._no_predict}; fit {name} on the old and new points together (constraints may name "
            "the old ones only), or use an estimator with predict (HMRF, RDPMeans, DPMeans, TVClust, DCP, DDMMDPM, "
            "MMDPM)")


def canonical_labels(labels):
    """Relabel clusters ``0, 1, ...`` in order of first appearance in node order, so
    results are consecutive integers and comparable across runs.

    >>> canonical_labels([7, 7, 2, 9, 2]).tolist()
    [0, 0, 1, 2, 1]
    """
    return _canonicalise(labels)[0]


def _canonicalise(labels):
    """``(canonical labels, distinct input labels, their canonical labels)``."""
    labels = np.asarray(labels)
    uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(uniq))
    return rank[inverse.reshape(-1)], uniq, rank


def check_is_fitted(estimator, attribute="labels_"):
    """Raise :class:`NotFittedError` naming the estimator if ``fit`` was not called."""
    if not hasattr(estimator, attribute):
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet; call fit(data, S) first"
        )


#: name -> (factory(n_clusters, random_state, **options) -> estimator, one-line description)
METHODS = {}


def register_method(name, description):
    """Register a clustering method for ``graphclust cluster --method`` and the demo.

    The decorated factory takes ``n_clusters`` and ``random_state`` keyword arguments
    and returns an unfitted estimator.
    """

    def decorate(factory):
        METHODS[name] = (factory, description)
        return factory

    return decorate
