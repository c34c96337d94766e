"""The estimator contract (scikit-learn's, without depending on scikit-learn) and the
registry of clustering methods the command line and the demo use."""

import time
from dataclasses import dataclass, field

import numpy as np

from ._params import Parametrized
from .errors import NotFittedError

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


class ClusteringEstimator(Parametrized):
    """Base class: ``get_params``/``set_params``/``clone`` from the ``__init__``
    signature, a readable ``repr``, parameter constraints checked once as ``fit``
    starts, and ``fit_predict``.

    Subclasses implement ``_fit(problem)`` returning ``(labels, ClusteringResult)``
    for a :class:`~graphclust.Problem`, declare ``_parameter_constraints`` (a dict from
    parameter name to a constraint of :mod:`graphclust._params`, extending the
    parent's), and put rules that tie parameters together in ``_check_params``.
    """

    def fit(self, data, S=None):
        """Fit on a networkx graph, a feature array or a Problem, with optional side
        information; returns ``self``."""
        from .problem import as_problem

        self._validate_params()
        start = time.perf_counter()
        problem = as_problem(data, S)
        labels, result = self._fit(problem)
        result.seconds = time.perf_counter() - start
        if result.violations is None:
            from .metrics import violations

            result.violations = violations(problem, labels)
        self.labels_ = canonical_labels(labels)
        self.nodes_ = list(problem.nodes)
        self.partition_ = problem.partition(self.labels_)
        self.n_clusters_ = int(len(np.unique(self.labels_)))
        self.result_ = result
        self.problem_ = problem
        return self

    def fit_predict(self, data, S=None):
        """``fit`` and return ``labels_``."""
        return self.fit(data, S).labels_

    def _fit(self, problem):  # pragma: no cover - abstract
        raise NotImplementedError


def canonical_labels(labels):
    """Relabel clusters ``0, 1, ...`` in order of first appearance in node order, so
    results are consecutive integers and comparable across runs.

    >>> canonical_labels([7, 7, 2, 9, 2]).tolist()
    [0, 0, 1, 2, 1]
    """
    labels = np.asarray(labels)
    uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(uniq))
    return rank[inverse.reshape(-1)]


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
