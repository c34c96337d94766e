"""Declarative parameter constraints: one validation system for estimators and providers.

An estimator (or a node-potential provider) declares what each hyper-parameter may
be in a class-level ``_parameter_constraints`` dict, scikit-learn's pattern; a subclass
extends its parent's table instead of repeating it::

    _parameter_constraints = {
        **Parent._parameter_constraints,
        "n_clusters": Integer(low=1),
        "mode": Options("hard", "soft"),
        "gamma": Optional(Real(low=0.0)),
    }

:func:`validate_parameters` checks the table once, when ``fit`` starts, and before any
heavy work; only rules that tie two parameters together are written in code (the
``_check_params`` hook). A constraint is any object with ``check(value, name)`` that
raises :class:`~graphclust.errors.InvalidParameterError` naming the parameter and its
owner ("max_iter of HMRF must be >= 1, got 0"), or a plain callable with the same
signature.
"""

import inspect
import numbers

import numpy as np

from ._utils import check_float, check_int, check_random_state
from .errors import InvalidParameterError

__all__ = [
    "AnyOf",
    "Boolean",
    "Callable",
    "InstanceOf",
    "Parametrized",
    "Integer",
    "Optional",
    "Options",
    "RandomState",
    "Real",
    "validate_parameters",
]


class Integer:
    """An int (not a bool) in ``[low, high]``."""

    def __init__(self, low=None, high=None):
        self.low, self.high = low, high

    def check(self, value, name):
        check_int(value, name, low=self.low, high=self.high)


class Real:
    """A finite real number (``inf`` too with ``allow_inf``) in ``[low, high]``, or
    ``(low, high]`` with ``low_open``."""

    def __init__(self, low=None, high=None, *, low_open=False, allow_inf=False):
        self.low, self.high, self.low_open, self.allow_inf = low, high, low_open, allow_inf

    def check(self, value, name):
        check_float(value, name, low=self.low, high=self.high, low_open=self.low_open, allow_inf=self.allow_inf)


class Options:
    """One of a few values (strings, booleans, ...), compared by equality and type."""

    def __init__(self, *values):
        self.values = values

    def _matches(self, value):
        # True == 1 in Python: a bool must match a bool and a string a string
        return any(type(value) is type(v) and value == v for v in self.values) or any(
            isinstance(value, np.bool_) and isinstance(v, bool) and bool(value) == v for v in self.values
        )

    def check(self, value, name):
        if not self._matches(value):
            raise InvalidParameterError(f"{name} must be one of {', '.join(map(repr, self.values))}, got {value!r}")


class Boolean:
    """``True`` or ``False`` (numpy booleans too)."""

    def check(self, value, name):
        if not isinstance(value, (bool, np.bool_)):
            raise InvalidParameterError(f"{name} must be True or False, got {value!r}")


class Progress(Options):
    """``True``, ``False`` or ``"auto"`` (a bar once the fit has run a couple of seconds)."""

    def __init__(self):
        super().__init__(True, False, "auto")


class Callable:
    """A callable, or ``None``."""

    def check(self, value, name):
        if value is not None and not callable(value):
            raise InvalidParameterError(f"{name} must be callable or None, got {type(value).__name__}")


class RandomState:
    """What :func:`graphclust._utils.check_random_state` accepts."""

    def check(self, value, name):
        if isinstance(value, (np.random.Generator, np.random.RandomState, np.random.SeedSequence)) or value is None:
            return
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise InvalidParameterError(
                f"{name} must be None, an int or a numpy Generator, got {type(value).__name__}"
            )
        try:
            check_random_state(value)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"{name}: {exc}") from None


class InstanceOf:
    """An instance of ``cls``; ``what`` says what it is in the message."""

    def __init__(self, cls, what=None):
        self.cls, self.what = cls, what or cls.__name__

    def check(self, value, name):
        if not isinstance(value, self.cls):
            raise InvalidParameterError(f"{name} must be {self.what}, got {type(value).__name__}")


class Optional:
    """``None`` or what ``constraint`` accepts."""

    def __init__(self, constraint):
        self.constraint = constraint

    def check(self, value, name):
        if value is not None:
            _check_one(self.constraint, value, name)


class AnyOf:
    """What any of ``constraints`` accepts. A number that none accepts gets the last
    constraint's error (put the numeric one last: "must be > 0, got 0.0"); anything
    else gets ``message`` (a format string with ``{name}`` and ``{value!r}``) when
    given."""

    def __init__(self, *constraints, message=None):
        self.constraints, self.message = constraints, message

    def check(self, value, name):
        error = None
        for c in self.constraints:
            try:
                _check_one(c, value, name)
                return
            except InvalidParameterError as exc:
                error = exc
        is_number = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
        if self.message is not None and not is_number:
            raise InvalidParameterError(self.message.format(name=name, value=value)) from None
        raise error


def _check_one(constraint, value, name):
    if constraint is None:  # in AnyOf: the value None itself
        if value is not None:
            raise InvalidParameterError(f"{name} must be None, got {value!r}")
    elif hasattr(constraint, "check"):
        constraint.check(value, name)
    else:
        constraint(value, name)


def validate_parameters(obj, constraints=None):
    """Check every parameter of ``obj`` against its class's ``_parameter_constraints``
    (or ``constraints``), naming the parameter and the class in the error."""
    owner = type(obj).__name__
    table = type(obj)._parameter_constraints if constraints is None else constraints
    values = obj.get_params(deep=False) if hasattr(obj, "get_params") else {name: getattr(obj, name) for name in table}
    for name, constraint in table.items():
        _check_one(constraint, values[name], f"{name} of {owner}")


class Parametrized:
    """Hyper-parameters read from the ``__init__`` signature (scikit-learn's
    reflection): ``get_params``, ``set_params``, ``clone``, a ``repr`` that shows what
    differs from the defaults, and ``_validate_params`` over the class's
    ``_parameter_constraints`` plus the ``_check_params`` hook for rules that tie
    parameters together. ``__init__`` only stores its arguments under their own names.
    """

    _parameter_constraints = {}

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def get_params(self, deep=True):
        """The hyper-parameters as a dict ``name -> value``; with ``deep``, also those
        of parameters that have their own (``potentials__n_clusters``), as
        scikit-learn's ``GridSearchCV`` and ``clone`` expect."""
        out = {name: getattr(self, name) for name in self._param_names()}
        if deep:
            for name, value in list(out.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    out.update((f"{name}__{key}", v) for key, v in value.get_params(deep=True).items())
        return out

    def set_params(self, **params):
        """Set hyper-parameters by name (``potentials__n_clusters`` sets a nested
        one); returns ``self``."""
        valid = self._param_names()
        nested = {}
        for name, value in params.items():
            head, sep, rest = name.partition("__")
            if head not in valid:
                raise InvalidParameterError(
                    f"{type(self).__name__} has no parameter {head!r}; valid parameters: {', '.join(valid)}"
                )
            if sep:
                nested.setdefault(head, {})[rest] = value
            else:
                setattr(self, name, value)
        for head, values in nested.items():
            inner = getattr(self, head)
            if not hasattr(inner, "set_params"):
                raise InvalidParameterError(
                    f"{type(self).__name__}'s parameter {head!r} is {inner!r}, which has no parameters of its "
                    f"own to set ({', '.join(f'{head}__{k}' for k in values)})"
                )
            inner.set_params(**values)
        return self

    def clone(self, **changes):
        """An unfitted copy with the same hyper-parameters, some of them changed;
        parameters that have parameters of their own are cloned too."""
        params = {name: _clone_param(value) for name, value in self.get_params(deep=False).items()}
        return type(self)(**{**params, **changes})

    def __repr__(self):
        sig = inspect.signature(type(self).__init__)
        changed = [
            f"{name}={value!r}"
            for name, value in self.get_params(deep=False).items()
            if sig.parameters[name].default is inspect.Parameter.empty
            or not _same(value, sig.parameters[name].default)
        ]
        return f"{type(self).__name__}({', '.join(changed)})"

    def _validate_params(self):
        validate_parameters(self)
        self._check_params()

    def _check_params(self):
        """Rules that tie parameters together (the table checks each one alone)."""


def _clone_param(value):
    """A fresh copy of a parameter that is itself parametrised (a provider), else the
    value itself (scikit-learn's ``clone`` does the same)."""
    if hasattr(value, "clone") and hasattr(value, "get_params") and not isinstance(value, type):
        return value.clone()
    return value


def _same(a, b):
    try:
        return bool(a == b) if not isinstance(a, np.ndarray) else False
    except Exception:
        return False
