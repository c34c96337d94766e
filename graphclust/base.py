"""The estimator contract (scikit-learn's, without depending on scikit-learn) and the
registry of clustering methods the command line and the demo use."""

import inspect
import time
from dataclasses import dataclass, field

import numpy as np

from .errors import InvalidParameterError, NotFittedError

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


class ClusteringEstimator:
    """Base class: ``get_params``/``set_params`` from the ``__init__`` signature, a
    readable ``repr``, parameter constraints checked once as ``fit`` starts, and
    ``fit_predict``.

    Subclasses implement ``_fit(problem)`` returning ``(labels, ClusteringResult)``
    for a :class:`~graphclust.Problem`, and may declare ``_constraints``: a dict from
    parameter name to a callable ``check(value, name)`` raising on a bad value.
    """

    _constraints = {}

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def get_params(self, deep=True):
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise InvalidParameterError(
                    f"{type(self).__name__} has no parameter {name!r}; valid parameters: {', '.join(valid)}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self):
        sig = inspect.signature(type(self).__init__)
        changed = [
            f"{name}={value!r}"
            for name, value in self.get_params().items()
            if sig.parameters[name].default is inspect.Parameter.empty
            or not _same(value, sig.parameters[name].default)
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _validate_params(self):
        for name, check in self._constraints.items():
            check(getattr(self, name), f"{name} of {type(self).__name__}")

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


def _same(a, b):
    try:
        return bool(a == b) if not isinstance(a, np.ndarray) else False
    except Exception:
        return False


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
