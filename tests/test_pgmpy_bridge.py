"""Tests for graphclust.pgmpy_bridge: export, import, and pgmpy as an exact MAP oracle."""

import itertools
import sys
import warnings

import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError, MissingDependencyError
from graphclust.inference import brute_force
from graphclust.pgmpy_bridge import from_pgmpy, to_pgmpy

with warnings.catch_warnings():  # pgmpy 1.1 warns about its own deprecated estimators on import
    warnings.simplefilter("ignore", FutureWarning)
    pgmpy = pytest.importorskip("pgmpy")
    from pgmpy.factors.discrete import DiscreteFactor
    from pgmpy.inference import VariableElimination
    from pgmpy.models import DiscreteMarkovNetwork, FactorGraph

inf = np.inf


def random_energy(seed, *, n=None, K=None, hard=False, tables=False):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(2, 7))
    K = K or int(rng.integers(2, 4))
    U = rng.uniform(0, 3, size=(n, K))
    if hard:
        U[rng.integers(n), rng.integers(K)] = inf
    pairs = list(itertools.combinations(range(n), 2))
    pick = rng.choice(len(pairs), size=min(len(pairs), int(rng.integers(1, 2 * n))), replace=False)
    edges = [pairs[i] for i in pick]
    w = rng.uniform(0.2, 2.0, size=len(edges)) * rng.choice([-1, 1], size=len(edges))
    if hard:
        w[0] = inf if rng.random() < 0.5 else -inf
    kw = {}
    if tables:
        kw = {"table_edges": [pairs[rng.integers(len(pairs))]], "tables": rng.uniform(0, 2, size=(1, K, K))}
    return Energy(U, edges, w, constant=0.7, **kw)


def labellings(n, K):
    return np.array(list(itertools.product(range(K), repeat=n)))


# ---------------------------------------------------------------------- pgmpy as oracle
@pytest.mark.parametrize("seed", range(8))
def test_brute_force_map_equals_pgmpy_exact_map(seed):
    E = random_energy(seed, hard=seed % 3 == 0, tables=seed % 2 == 0)
    model = to_pgmpy(E, kind="markov")
    names = [str(i) for i in range(E.n_nodes)]
    assignment = VariableElimination(model).map_query(variables=names, show_progress=False)
    z = np.array([assignment[v] for v in names])
    ours = brute_force(E)
    assert E.evaluate(z) == pytest.approx(ours.energy, rel=1e-9)


def test_factor_graph_export_converts_to_the_same_markov_model():
    E = random_energy(3, tables=True)
    fg = to_pgmpy(E, kind="factor")
    assert isinstance(fg, FactorGraph)
    assert sorted(fg.get_variable_nodes()) == sorted(str(i) for i in range(E.n_nodes))
    assert len(fg.get_factors()) == E.n_nodes + E.n_edges + len(E.tables)
    names = [str(i) for i in range(E.n_nodes)]
    assignment = VariableElimination(fg.to_markov_model()).map_query(variables=names, show_progress=False)
    assert E.evaluate(np.array([assignment[v] for v in names])) == pytest.approx(brute_force(E).energy)


def test_exported_potentials_are_shifted_exponentials():
    E = Energy([[0.0, 2.0], [inf, 1.0]], edges=[(0, 1)], weights=[-0.5])
    model = to_pgmpy(E)
    assert isinstance(model, DiscreteMarkovNetwork)
    f = {tuple(f.scope()): f.values for f in model.get_factors()}
    np.testing.assert_allclose(f[("0",)], [1.0, np.exp(-2.0)])
    np.testing.assert_allclose(f[("1",)], [0.0, 1.0])
    np.testing.assert_allclose(f[("0", "1")], [[np.exp(-0.5), 1.0], [1.0, np.exp(-0.5)]])


# ---------------------------------------------------------------------- round trips
@pytest.mark.parametrize("kind", ["markov", "factor"])
@pytest.mark.parametrize("seed", range(6))
def test_round_trip_preserves_energy_up_to_a_constant(seed, kind):
    E = random_energy(seed, tables=seed % 2 == 1, hard=seed % 3 == 2)
    F, names = from_pgmpy(to_pgmpy(E, kind=kind), return_names=True)
    assert names == [str(i) for i in range(E.n_nodes)]
    Z = labellings(E.n_nodes, E.n_labels)
    a = np.array([E.evaluate(z) for z in Z])
    b = np.array([F.evaluate(z) for z in Z])
    ok = np.isfinite(a)
    assert ok.any()
    shift = b[ok] - a[ok]
    np.testing.assert_allclose(shift, shift[0], atol=1e-9)
    # hard unaries stay infinite; hard pair terms become costs above every feasible labelling
    assert (np.isinf(F.unary) == np.isinf(E.unary)).all()
    if (~ok).any():
        assert b[~ok].min() > b[ok].max()
    assert brute_force(F).labels.tolist() == brute_force(E).labels.tolist()


def test_import_aligns_permuted_state_names():
    """Labels follow the state order of the first factor naming the variable; a factor
    listing the states in another order is re-indexed, not misread."""
    mn = DiscreteMarkovNetwork()
    mn.add_nodes_from(["x", "y"])
    mn.add_edge("x", "y")
    sn = {"x": ["lo", "hi"], "y": ["lo", "hi"]}
    fx = DiscreteFactor(["x"], [2], [1.0, 0.5], state_names={"x": ["lo", "hi"]})
    fy = DiscreteFactor(["y"], [2], [0.25, 1.0], state_names={"y": ["hi", "lo"]})
    fxy = DiscreteFactor(["x", "y"], [2, 2], [1.0, 0.1, 0.1, 1.0], state_names=sn)
    mn.add_factors(fx, fy, fxy)
    E, names = from_pgmpy(mn, return_names=True)
    assert names == ["x", "y"]
    # y's labels are (hi, lo), as in fy, the first factor over y
    np.testing.assert_allclose(E.unary, [[0.0, np.log(2)], [np.log(4), 0.0]])
    np.testing.assert_allclose(E.tables[0], -np.log([[0.1, 1.0], [1.0, 0.1]]))
    # MAP: x=lo (label 0) and y=lo (label 1), whatever the state order
    np.testing.assert_array_equal(brute_force(E).labels, [0, 1])


def test_import_zero_pair_potential_becomes_a_large_finite_cost():
    mn = DiscreteMarkovNetwork()
    mn.add_nodes_from(["a", "b"])
    mn.add_edge("a", "b")
    mn.add_factors(DiscreteFactor(["a"], [2], [1.0, 0.9]), DiscreteFactor(["b"], [2], [0.9, 1.0]),
                   DiscreteFactor(["a", "b"], [2, 2], [1.0, 0.0, 1.0, 1.0]))
    E = from_pgmpy(mn)
    assert np.isfinite(E.tables).all()
    res = brute_force(E)
    assert res.labels.tolist() != [0, 1]  # the zero-potential state is never the MAP
    assert E.evaluate([0, 1]) > max(E.evaluate(z) for z in ([0, 0], [1, 0], [1, 1]))


# ---------------------------------------------------------------------- errors
def test_export_refuses_label_costs_and_unknown_kind():
    E = Energy(np.zeros((2, 2)), label_costs=[1.0, 1.0])
    with pytest.raises(InvalidParameterError, match="label costs"):
        to_pgmpy(E)
    with pytest.raises(InvalidParameterError, match="kind must be 'markov' or 'factor', got 'bayes'"):
        to_pgmpy(Energy(np.zeros((2, 2))), kind="bayes")


def _mn(factors, nodes, edges=()):
    mn = DiscreteMarkovNetwork()
    mn.add_nodes_from(nodes)
    mn.add_edges_from(edges)
    mn.add_factors(*factors)
    return mn


def test_import_refuses_higher_order_factor():
    f = DiscreteFactor(["a", "b", "c"], [2, 2, 2], np.ones(8))
    mn = _mn([f], ["a", "b", "c"], [("a", "b"), ("b", "c"), ("a", "c")])
    with pytest.raises(InvalidParameterError, match=r"factor over \('a', 'b', 'c'\) involves 3 variables"):
        from_pgmpy(mn)


def test_import_refuses_mixed_cardinalities():
    mn = _mn([DiscreteFactor(["a"], [2], [1, 1]), DiscreteFactor(["b"], [3], [1, 1, 1])], ["a", "b"])
    with pytest.raises(InvalidParameterError, match="variable 'b' has 3 states but 'a' has 2"):
        from_pgmpy(mn)


def test_import_refuses_zero_or_negative_potentials():
    mn = _mn([DiscreteFactor(["a"], [2], [0.0, 0.0])], ["a"])
    with pytest.raises(InvalidParameterError, match=r"factor over \('a',\) has only zero potentials"):
        from_pgmpy(mn)
    mn = _mn([DiscreteFactor(["a"], [2], [1.0, 0.0]), DiscreteFactor(["a"], [2], [0.0, 1.0])], ["a"])
    with pytest.raises(InvalidParameterError, match="variable 'a' has potential 0 for every state"):
        from_pgmpy(mn)
    mn = _mn([DiscreteFactor(["a"], [2], [1.0, -1.0])], ["a"])
    with pytest.raises(InvalidParameterError, match=r"factor over \('a',\) has a negative or non-finite"):
        from_pgmpy(mn)


def test_import_refuses_variable_without_factor_and_non_models():
    mn = _mn([DiscreteFactor(["a"], [2], [1.0, 1.0])], ["a", "lonely"])
    with pytest.raises(InvalidParameterError, match="variable 'lonely' is in no factor"):
        from_pgmpy(mn)
    with pytest.raises(InvalidParameterError, match="DiscreteMarkovNetwork or FactorGraph, got dict"):
        from_pgmpy({})
    with pytest.raises(InvalidParameterError, match="no variables"):
        from_pgmpy(DiscreteMarkovNetwork())


def test_import_refuses_inconsistent_state_names():
    fa = DiscreteFactor(["a"], [2], [1.0, 1.0], state_names={"a": ["x", "y"]})
    fb = DiscreteFactor(["a"], [2], [1.0, 1.0], state_names={"a": ["x", "z"]})
    with pytest.raises(InvalidParameterError, match=r"variable 'a' has states \['x', 'y'\] in one factor"):
        from_pgmpy(_mn([fa, fb], ["a"]))


def test_missing_pgmpy_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pgmpy", None)  # makes "import pgmpy" fail
    with pytest.raises(MissingDependencyError, match=r"pip install 'graphclust\[pgmpy\]'"):
        to_pgmpy(Energy(np.zeros((2, 2))))
    with pytest.raises(MissingDependencyError, match=r"Energy.from_pgmpy\(\) needs the optional dependency pgmpy"):
        Energy.from_pgmpy(None)


def test_energy_methods_delegate():
    E = random_energy(1)
    F = Energy.from_pgmpy(E.to_pgmpy())
    Z = labellings(E.n_nodes, E.n_labels)
    d = np.array([F.evaluate(z) - E.evaluate(z) for z in Z])
    np.testing.assert_allclose(d, d[0], atol=1e-9)
