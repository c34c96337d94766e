"""Conversion between :class:`~graphclust.energy.Energy` and pgmpy's discrete models.

pgmpy is the model container, interop layer and test oracle of graphclust; the
inference engines are graphclust's own. pgmpy is an optional dependency
(``pip install 'graphclust[pgmpy]'``), imported only when a function here is called.

Potentials and energies are related by ``φ = exp(−(θ − min θ))``: every factor is
shifted so that its best entry has potential 1, which keeps the potentials in
floating-point range (an entry more than about 745 above its factor's minimum
underflows to 0 and comes back as forbidden). The shifts are constants, so a round
trip ``Energy → pgmpy → Energy`` preserves the energy of every labelling up to one
constant, and the MAP labelling exactly.
"""

from .energy import Energy

__all__ = ["to_pgmpy", "from_pgmpy"]


def to_pgmpy(energy, kind="markov"):
    """Export an energy as a pgmpy model with one factor per term.

    Variables are named ``"0" .. str(n_nodes - 1)`` and have ``n_labels`` states
    ``0 .. n_labels - 1``. Each node gets a unary factor ``exp(−(U_i − min U_i))``;
    each Potts edge and each table gets a ``K × K`` factor (row-major: entry ``[a, b]``
    is ``(first variable = a, second = b)``). Infinite costs (hard terms) become zero
    potentials.

    Parameters
    ----------
    energy : Energy
    kind : {"markov", "factor"}, default="markov"
        ``"markov"`` builds a ``DiscreteMarkovNetwork`` (what pgmpy's exact
        ``VariableElimination`` and ``BeliefPropagation`` accept); ``"factor"`` builds a
        ``FactorGraph``.

    Returns
    -------
    pgmpy.models.DiscreteMarkovNetwork or pgmpy.models.FactorGraph
        A model that passes ``check_model()``.

    Raises
    ------
    InvalidParameterError
        Unknown ``kind``, or label costs (a global term no pairwise model can hold).
    MissingDependencyError
        pgmpy is not installed.

    Examples
    --------
    >>> from graphclust.energy import Energy
    >>> E = Energy([[0.0, 1.0], [0.5, 0.0]], edges=[(0, 1)], weights=[2.0])
    >>> model = to_pgmpy(E)
    >>> sorted(model.nodes()), len(model.get_factors())
    (['0', '1'], 3)
    >>> from pgmpy.inference import VariableElimination
    >>> VariableElimination(model).map_query(show_progress=False) == {"0": 0, "1": 0}
    True
    """
    return energy.to_pgmpy(kind=kind)


def from_pgmpy(model, *, return_names=False):
    """Import a pairwise discrete pgmpy model as an energy with pair tables.

    Every factor must involve one or two variables, and all variables must have the
    same number of states. A unary factor ``φ`` adds ``−log φ`` to its variable's
    unary costs (a zero potential forbids the state: ``+inf``); a pairwise factor
    becomes a table ``−log φ``. Tables must be finite, so a zero pairwise potential
    becomes a large finite cost, the factor's smallest finite cost plus a penalty
    larger than what all finite terms together can differ by: a labelling that
    uses a zero-potential entry then always costs more than one that uses none, so the
    MAP is unchanged (when one with non-zero probability exists).

    Parameters
    ----------
    model : pgmpy.models.DiscreteMarkovNetwork or pgmpy.models.FactorGraph
    return_names : bool, default=False
        Also return the variable names in node order.

    Returns
    -------
    energy : Energy
        Node ``i`` is the ``i``-th variable in the order of ``model.nodes()``; label
        ``k`` is the ``k``-th state in the ``state_names`` of the first factor (in
        ``model.get_factors()`` order) that involves the variable; factors listing the
        states in another order are re-indexed to match.
    names : list
        Only when ``return_names=True``.

    Raises
    ------
    InvalidParameterError
        Not a Markov network or factor graph; a factor over three or more variables;
        variables with different numbers of states or state names; a negative or
        non-finite potential; a variable or pairwise factor whose potentials are all 0
        (the message names the variable or the factor's scope).
    MissingDependencyError
        pgmpy is not installed.

    Examples
    --------
    >>> from graphclust.energy import Energy
    >>> E = Energy([[0.0, 1.0], [0.5, 0.0]], edges=[(0, 1)], weights=[2.0])
    >>> F, names = from_pgmpy(to_pgmpy(E), return_names=True)
    >>> names, F.n_nodes, F.n_labels, len(F.tables)
    (['0', '1'], 2, 2, 1)
    >>> [round(F.evaluate(z) - E.evaluate(z), 12) for z in ([0, 0], [0, 1], [1, 0], [1, 1])]
    [0.0, 0.0, 0.0, 0.0]
    """
    energy, names = Energy._from_pgmpy(model)
    return (energy, names) if return_names else energy
