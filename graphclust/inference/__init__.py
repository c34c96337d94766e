"""Inference engines: interchangeable minimisers of one :class:`~graphclust.energy.Energy`.

Every engine takes the same energy, returns an :class:`InferenceResult` scored by
:meth:`Energy.evaluate`, and is registered in :data:`ENGINES` with the facts a caller
needs to refuse a bad pairing before any work (``exact``, ``binary_only``,
``attractive_only``, ``max_nodes``). :func:`solve` is the front door.
"""

from ..energy import Energy
from ..errors import InvalidParameterError, ProblemTooLargeError
from .base import ENGINES, InferenceResult, register_engine
from .bp import belief_propagation
from .exact import brute_force, exact, mincut
from .expansion import ExpansionSolver, alpha_beta_swap, alpha_expansion
from .grid_cut import GridCutSolver, GridEnergy, grid_cut, grid_cut_terminals, grid_offsets
from .icm import icm, icm_checkerboard
from .lp import lp_relaxation
from .trws import trws

__all__ = [
    "solve",
    "default_engine",
    "InferenceResult",
    "ENGINES",
    "register_engine",
    "check_capabilities",
    "icm",
    "icm_checkerboard",
    "exact",
    "brute_force",
    "mincut",
    "belief_propagation",
    "lp_relaxation",
    "trws",
    "alpha_expansion", "alpha_beta_swap", "ExpansionSolver",
    "grid_cut", "grid_cut_terminals", "GridEnergy", "GridCutSolver", "grid_offsets",
]



def default_engine(energy, *, bound=False):
    """The engine ``solve(energy)`` uses: the exact minimum cut for two labels with
    attractive Potts terms; α-expansion for more labels with attractive Potts terms
    (within a factor 2 of the optimum, and below BP's and ICM's energies on the
    benchmarks); loopy BP when there are repulsive terms (cannot-links) or pair tables,
    where it reached lower energies than expansion's truncated moves
    (``docs/benchmarks/expansion.md``); α-expansion again when the energy has label costs,
    which its moves put inside the cut (Delong et al. 2012): on the oracle energies it
    is never above ICM, and on k-NN energies with label costs it ended 1–9 % below ICM
    (``docs/benchmarks/expansion.md``, section 4). With ``bound=True`` (a lower bound
    on the minimum is wanted): the exact minimum cut where it applies, TRW-S otherwise
    (its gap was at most 0.005 % on k-NN and superpixel energies)."""
    attractive = not len(energy.tables) and not (energy.weights < 0).any()  # Potts terms, all >= 0
    exact_cut = energy.n_labels == 2 and energy.label_costs is None and attractive
    if bound:
        return "mincut" if exact_cut else "trws"
    if energy.label_costs is not None:
        return "expansion"
    if not attractive:
        return "bp"
    return "mincut" if exact_cut else "expansion"


def solve(energy, method="auto", *, bound=False, **options):
    """Minimise ``energy`` with the engine registered as ``method``.

    The engine's declared capabilities are checked first, so a bad pairing (say the
    minimum cut on a three-label energy with cannot-links) fails at once with a
    message saying why, before any work is done.

    Parameters
    ----------
    energy : Energy
    method : str, default="auto"
        A key of :data:`ENGINES`: ``"icm"``, ``"icm-colour"``, ``"bp"``, ``"trws"``, ``"lp"``,
        ``"exact"``, ``"mincut"``, ``"expansion"``, ``"swap"``, ``"brute-force"``, ...;
        ``"auto"`` picks by :func:`default_engine` and records the pick in
        ``info["engine"]``.
    bound : bool, default=False
        Ask for a lower bound on the minimum energy (``result.lower_bound``, a
        certificate of the labelling's gap): ``"auto"`` then picks the exact minimum
        cut or TRW-S, and a named engine that gives no bound is refused.
    **options
        Passed to the engine (``init``, ``random_state``, ``callback``, ``progress``
        and the engine's own options).

    Returns
    -------
    InferenceResult

    Raises
    ------
    InvalidParameterError
        Unknown method, an energy the engine cannot handle (wrong number of labels,
        repulsive terms or tables for an attractive-only engine), or not an Energy.
    ProblemTooLargeError
        More nodes than the engine accepts.

    Examples
    --------
    >>> from graphclust.energy import Energy
    >>> E = Energy([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], edges=[(0, 1), (1, 2)], weights=[0.8, 0.8])
    >>> solve(E, "exact").energy, solve(E, "icm", random_state=0).energy
    (1.0, 1.0)
    >>> solve(E, "simplex")
    Traceback (most recent call last):
    ...
    graphclust.errors.InvalidParameterError: unknown method 'simplex'; available: ...
    """
    if not isinstance(energy, Energy):
        hint = "; minimise a GridEnergy with grid_cut(), or pass genergy.to_energy()" \
            if isinstance(energy, GridEnergy) else ""
        raise InvalidParameterError(f"solve() needs an Energy, got {type(energy).__name__}{hint}")
    if method == "auto":
        method = default_engine(energy, bound=bound)
        result = solve(energy, method, bound=bound, **options)
        result.info["engine"] = method
        return result
    if method not in ENGINES:
        raise InvalidParameterError(f"unknown method {method!r}; available: {', '.join(sorted(ENGINES))}")
    func, caps = ENGINES[method]
    if bound and not caps.get("bound"):
        bounded = ", ".join(sorted(name for name, (_, c) in ENGINES.items() if c.get("bound")))
        raise InvalidParameterError(f"method {method!r} gives no lower bound; with bound=True use 'auto' or one of "
                                    f"{bounded}")
    check_engine_options(method, options)
    check_capabilities(energy, method, caps, max_nodes=options.get("max_nodes"))
    return func(energy, **options)


def engine_options(method, func=None):
    """The option names the engine ``method`` accepts (its keyword parameters), or
    None when it takes any. ``func``: the engine function itself, for an engine that
    is not in :data:`ENGINES` (such as :func:`grid_cut`, which takes a
    :class:`GridEnergy`)."""
    import inspect

    params = inspect.signature(ENGINES[method][0] if func is None else func).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][1:]  # not the energy


def check_engine_options(method, options, func=None):
    """Raise :class:`InvalidParameterError` naming an option the engine does not take
    and listing those it does (instead of Python's TypeError from the call)."""
    known = engine_options(method, func)
    if known is None:
        return
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise InvalidParameterError(
            f"engine {method!r} has no option {unknown[0]!r}; its options: {', '.join(known)}")


def check_capabilities(energy, method, caps, *, max_nodes=None):
    """Raise unless the engine ``method`` with capabilities ``caps`` can take ``energy``."""
    if caps.get("binary_only") and energy.n_labels != 2:
        raise InvalidParameterError(
            f"method {method!r} handles 2 labels only, the energy has {energy.n_labels}"
        )
    if caps.get("attractive_only") and not energy.is_attractive:
        if len(energy.tables):
            why = f"{len(energy.tables)} pair tables (first on nodes {tuple(energy.table_edges[0].tolist())})"
        else:
            k = int((energy.weights <= 0).argmax())
            why = f"a repulsive term on edge {tuple(energy.edges[k].tolist())} (weight {energy.weights[k]})"
        raise InvalidParameterError(
            f"method {method!r} handles attractive Potts terms only, the energy has {why}"
        )
    limit = max_nodes if max_nodes is not None else caps.get("max_nodes")
    if limit is not None and energy.n_nodes > limit:
        raise ProblemTooLargeError(
            f"method {method!r} accepts at most {limit} nodes, the energy has {energy.n_nodes}"
        )
