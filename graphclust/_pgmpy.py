"""pgmpy model <-> arrays, the work behind :mod:`graphclust.pgmpy_bridge` and the
``Energy.to_pgmpy`` / ``Energy.from_pgmpy`` methods. It reads an energy's arrays and
returns arrays, so neither :mod:`graphclust.energy` nor the bridge is imported here."""

import warnings

import numpy as np

from ._utils import optional_import
from .errors import InvalidParameterError


def _pgmpy(purpose):
    with warnings.catch_warnings():
        # pgmpy 1.1 warns about its own deprecated estimators on import; not the caller's concern
        warnings.simplefilter("ignore", FutureWarning)
        optional_import("pgmpy", "pgmpy", purpose)
        models = optional_import("pgmpy.models", "pgmpy", purpose)
        factors = optional_import("pgmpy.factors.discrete", "pgmpy", purpose)
        optional_import("pgmpy.inference", "pgmpy", purpose)
    return models, factors


def model_from_energy(energy, kind="markov"):
    """The pgmpy model of ``energy`` (see :func:`graphclust.pgmpy_bridge.to_pgmpy`)."""
    if kind not in ("markov", "factor"):
        raise InvalidParameterError(f"kind must be 'markov' or 'factor', got {kind!r}")
    if energy.label_costs is not None:
        raise InvalidParameterError(
            "the energy has label costs, a global term that a pairwise pgmpy model cannot hold; "
            "drop them (Energy(..., label_costs=None)) before exporting"
        )
    models, factors = _pgmpy("Energy.to_pgmpy()")
    DiscreteFactor = factors.DiscreteFactor
    n, K = energy.n_nodes, energy.n_labels
    names = [str(i) for i in range(n)]
    U = energy.unary
    with np.errstate(invalid="ignore"):
        unary_pot = np.exp(-(U - U.min(axis=1, keepdims=True)))
    fs = [DiscreteFactor([names[i]], [K], unary_pot[i]) for i in range(n)]
    pair_scopes = []
    eye = np.eye(K, dtype=bool)
    for (i, j), w in zip(energy.edges.tolist(), energy.weights.tolist()):
        pot = np.ones((K, K))
        if w > 0:
            pot[~eye] = np.exp(-w)  # exp(-inf) = 0 for hard must-links
        else:
            pot[eye] = np.exp(w)
        fs.append(DiscreteFactor([names[i], names[j]], [K, K], pot.ravel()))
        pair_scopes.append((names[i], names[j]))
    for (i, j), T in zip(energy.table_edges.tolist(), energy.tables):
        fs.append(DiscreteFactor([names[i], names[j]], [K, K], np.exp(-(T - T.min())).ravel()))
        pair_scopes.append((names[i], names[j]))

    if kind == "markov":
        model = models.DiscreteMarkovNetwork()
        model.add_nodes_from(names)
        model.add_edges_from(pair_scopes)
        model.add_factors(*fs)
    else:
        model = models.FactorGraph()
        model.add_nodes_from(names)
        model.add_factors(*fs)
        model.add_edges_from([(v, f) for f in fs for v in f.scope()])
    model.check_model()
    return model


def energy_arguments(model):
    """``(Energy keyword arguments, variable names)`` of a pairwise pgmpy model (see
    :func:`graphclust.pgmpy_bridge.from_pgmpy`)."""
    models, _ = _pgmpy("Energy.from_pgmpy()")
    if isinstance(model, models.FactorGraph):
        variables = set(model.get_variable_nodes())
        names = [v for v in model.nodes() if v in variables]
    elif isinstance(model, models.DiscreteMarkovNetwork):
        names = list(model.nodes())
    else:
        raise InvalidParameterError(
            f"expected a pgmpy DiscreteMarkovNetwork or FactorGraph, got {type(model).__name__}"
        )
    if not names:
        raise InvalidParameterError("the pgmpy model has no variables")
    index = {v: i for i, v in enumerate(names)}
    factors = list(model.get_factors())
    states = {}
    for f in factors:
        scope = list(f.scope())
        if len(scope) > 2:
            raise InvalidParameterError(
                f"factor over {tuple(scope)} involves {len(scope)} variables; only unary and pairwise "
                "factors map to an Energy"
            )
        for v in scope:
            if v not in index:
                raise InvalidParameterError(f"factor over {tuple(scope)} mentions {v!r}, which is not a model variable")
            sn = list(f.state_names[v])
            if v not in states:
                states[v] = sn
            elif sorted(map(repr, sn)) != sorted(map(repr, states[v])):
                raise InvalidParameterError(
                    f"variable {v!r} has states {states[v]!r} in one factor and {sn!r} in factor over {tuple(scope)}"
                )
    missing = [v for v in names if v not in states]
    if missing:
        raise InvalidParameterError(f"variable {missing[0]!r} is in no factor, so its number of states is unknown")
    cards = {v: len(s) for v, s in states.items()}
    K = cards[names[0]]
    odd = [v for v in names if cards[v] != K]
    if odd:
        raise InvalidParameterError(
            f"variable {odd[0]!r} has {cards[odd[0]]} states but {names[0]!r} has {K}; an Energy needs "
            "one label set for every variable"
        )

    n = len(names)
    U = np.zeros((n, K))
    t_edges, t_vals = [], []
    for f in factors:
        scope = list(f.scope())
        phi = np.asarray(f.values, dtype=np.float64)
        # align each axis with the reference state order of its variable
        for ax, v in enumerate(scope):
            sn = list(f.state_names[v])
            if sn != states[v]:
                perm = [sn.index(s) for s in states[v]]
                phi = np.take(phi, perm, axis=ax)
        if not np.isfinite(phi).all() or (phi < 0).any():
            raise InvalidParameterError(
                f"factor over {tuple(scope)} has a negative or non-finite potential; potentials must be finite and >= 0"
            )
        if not (phi > 0).any():
            raise InvalidParameterError(f"factor over {tuple(scope)} has only zero potentials; no state is possible")
        with np.errstate(divide="ignore"):
            theta = -np.log(phi)
        if len(scope) == 1:
            U[index[scope[0]]] += theta
        else:
            t_edges.append((index[scope[0]], index[scope[1]]))
            t_vals.append(theta)
    dead = np.flatnonzero(np.isinf(U).all(axis=1))
    if len(dead):
        raise InvalidParameterError(f"variable {names[dead[0]]!r} has potential 0 for every state")
    tables = np.array(t_vals).reshape(-1, K, K)
    if len(tables) and np.isinf(tables).any():
        fu = np.where(np.isinf(U), np.nan, U)
        ft = np.where(np.isinf(tables), np.nan, tables)
        spread = (np.nanmax(fu, axis=1) - np.nanmin(fu, axis=1)).sum() + \
            (np.nanmax(ft, axis=(1, 2)) - np.nanmin(ft, axis=(1, 2))).sum()
        penalty = 1.0 + 2.0 * float(spread)
        floor = np.nanmin(ft, axis=(1, 2))[:, None, None]
        tables = np.where(np.isinf(tables), floor + penalty, tables)
    return {"unary": U, "table_edges": np.array(t_edges, dtype=np.int64).reshape(-1, 2) if t_vals else None,
            "tables": tables if t_vals else None}, names
