"""What every inference engine returns, and how engines are registered."""

from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidParameterError

__all__ = ["InferenceResult", "register_engine", "ENGINES"]


@dataclass
class InferenceResult:
    """The answer of an inference engine on an :class:`~graphclust.energy.Energy`.

    Attributes
    ----------
    labels : ndarray of shape (n_nodes,), dtype int64
        The labelling returned (for anytime engines, the best one seen).
    energy : float
        ``energy.evaluate(labels)`` — always computed by the shared evaluator.
    lower_bound : float or None
        A proven lower bound on the minimum energy, when the engine has one (LP value,
        exact optimum).
    iterations : int
        Sweeps / message-passing iterations / solver calls performed.
    converged : bool
        Whether the engine's own stopping rule was met (not a cap on iterations).
    seconds : float
        Wall-clock time of the call.
    history : list of float
        Energy after each iteration where it is cheap to record.
    marginals : ndarray of shape (n_nodes, n_labels) or None
        Min-marginals (BP) or fractional marginals (LP) when available.
    info : dict
        Engine-specific extras (e.g. ``gap``, ``n_roundings``, ``solver_seconds``).
    """

    labels: np.ndarray
    energy: float
    lower_bound: float | None = None
    iterations: int = 0
    converged: bool = True
    seconds: float = 0.0
    history: list = field(default_factory=list)
    marginals: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def gap(self):
        """``energy - lower_bound`` (``None`` without a bound)."""
        return None if self.lower_bound is None else self.energy - self.lower_bound


#: name -> (callable(energy, **options) -> InferenceResult, capabilities dict)
ENGINES = {}


def register_engine(name, *, exact=False, bound=False, binary_only=False, attractive_only=False, max_nodes=None):
    """Class/function decorator registering an engine under ``name`` with the facts a
    caller needs to refuse a bad pairing before any work is done (``bound``: the result
    carries a lower bound on the minimum energy; exact engines always do)."""

    def decorate(func):
        ENGINES[name] = (
            func,
            {"exact": exact, "bound": bound or exact, "binary_only": binary_only, "attractive_only": attractive_only,
             "max_nodes": max_nodes},
        )
        return func

    return decorate


def check_unary_update(index, costs, n, n_labels, *, name, what):
    """``(indices int64, costs float64)`` of an ``update_unary`` call, or a clear error:
    ``index`` distinct integers in ``[0, n)`` (``name`` and ``what`` word the message,
    e.g. ``"nodes"``/``"node"``), ``costs`` one row of ``n_labels`` per index."""
    idx = np.asarray(index)
    if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
        raise InvalidParameterError(f"{name} must be a 1-D array of {what} indices, got {idx.dtype} of shape "
                                    f"{idx.shape}")
    idx = idx.astype(np.int64)
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if len(bad):
        raise InvalidParameterError(f"{name}[{bad[0]}] = {idx[bad[0]]} is not a {what} in [0, {n})")
    if len(np.unique(idx)) != len(idx):
        raise InvalidParameterError(f"{name} must hold distinct {what}s")
    C = np.array(costs, dtype=np.float64)
    if C.shape != (len(idx), n_labels):
        raise InvalidParameterError(f"costs must have shape ({len(idx)}, {n_labels}), got {C.shape}")
    return idx, C
