"""Warm re-solves (:class:`ExpansionSolver`) and the dynamic max-flow under them."""

import importlib

import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidConstraintError, InvalidParameterError
from graphclust.inference import ExpansionSolver, alpha_expansion, brute_force, mincut
from graphclust.inference.expansion import _fill_move, _MoveGraph

from .conftest import random_raw
from .test_expansion import grid_energy

exact_module = importlib.import_module("graphclust.inference.exact")


def _move_value(g, l0, l1, xcur, x):
    """const + cut(x) of the move graph, recomputed from scratch."""
    res, tr = np.zeros_like(g.res), np.zeros_like(g.tr)
    const, total, _ = _fill_move(l0, l1, xcur, g.U, g.e0, g.e1, g.w, g.m, g.tables, res, tr)
    cut = np.where(x, np.maximum(tr, 0), np.maximum(-tr, 0)).sum()
    cut += res[0::2][~x[g.e0] & x[g.e1]].sum() + res[1::2][x[g.e0] & ~x[g.e1]].sum()
    return const + cut, total


@pytest.mark.parametrize("seed", range(40))
def test_resumed_flows_give_minimum_cuts(seed):
    """Move after move on random labellings, with unary rows changing in between, the
    cut found from the stored flow has the value of the cut found from zero (both are
    minimum cuts of the same graph); hard terms and cannot-links included (the roof
    dual is switched off: it is not part of the reused flow)."""
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(5, 40)), int(rng.integers(2, 5))
    E = random_raw(rng, n, K, hard=seed % 2 == 0, attractive=seed % 3 != 0).build()
    moves = "expansion" if K > 2 else "swap"
    warm, cold = _MoveGraph(E, moves, reuse_flows=True), _MoveGraph(E, moves)
    warm.qpbo = cold.qpbo = None
    n_checked = 0
    for rep in range(10):
        z = rng.integers(K, size=n)
        if rep % 3 == 2:
            rows = rng.choice(n, size=3, replace=False)
            E.unary[rows] = np.round(rng.uniform(0, 3, (3, K)), 3)
            warm.unary_changed(rows)
            cold.unary_changed(rows)
        for s, (a, b) in enumerate(warm.steps):
            if b < 0:
                l0, l1, xcur = z.copy(), np.full(n, a), np.zeros(n, np.int8)
            else:
                inside = (z == a) | (z == b)
                l0, l1, xcur = np.where(inside, a, z), np.where(inside, b, z), (z == b).astype(np.int8)
            x_warm, _ = warm.cut(s, l0, l1, xcur)
            x_cold, _ = cold.cut(s, l0, l1, xcur)
            v_warm, total = _move_value(warm, l0, l1, xcur, x_warm)
            v_cold, _ = _move_value(warm, l0, l1, xcur, x_cold)
            assert v_warm == pytest.approx(v_cold, rel=0, abs=1e-9 * (1 + total)), f"rep {rep}, move {s}"
            n_checked += 1
    assert n_checked >= 10 and len(warm.flows) == len(warm.steps)


def _binary_grid(seed=0, shape=(30, 30)):
    E, _ = grid_energy(shape, 2, seed=seed, beta=0.4)
    return E


@pytest.mark.parametrize("seed", range(4))
def test_warm_binary_resolve_is_the_exact_minimum(seed):
    """Two labels, attractive: every solve is one swap cut, so after each stroke the warm
    solve must equal the exact minimum cut of the updated energy, hard seeds included."""
    rng = np.random.default_rng(seed)
    E = _binary_grid(seed)
    solver = ExpansionSolver(E)
    assert solver.solve().energy == pytest.approx(mincut(E).energy, rel=1e-12)
    U = E.unary.copy()
    for stroke in range(4):
        nodes = rng.choice(E.n_nodes, size=25, replace=False)
        costs = rng.uniform(0, 2, (25, 2))
        if stroke % 2:
            costs[:, rng.integers(2)] = np.inf  # a hard seed stroke
        solver.update_unary(nodes, costs)
        U[nodes] = costs
        res = solver.solve()
        E2 = Energy(U, E.edges, E.weights)
        assert res.info["warm"]
        assert res.energy == E2.evaluate(res.labels)
        assert res.energy == pytest.approx(mincut(E2).energy, rel=1e-12)
    assert solver.flow_bytes > 0


def test_warm_multilabel_never_above_its_start_and_caller_energy_untouched():
    """K = 4 grid: after a stroke the warm solve ends at or below the previous labelling
    under the new energy, at or below a cold solve's energy here, and the energy passed
    in is not modified."""
    E, _ = grid_energy((40, 40), 4, seed=2, beta=0.3)
    before = E.unary.copy()
    solver = ExpansionSolver(E)
    first = solver.solve()
    nodes = np.arange(200, 260)
    costs = np.tile([1.0, 0.0, 1.0, 1.0], (len(nodes), 1))
    solver.update_unary(nodes, costs)
    U = E.unary.copy()
    U[nodes] = costs
    E2 = Energy(U, E.edges, E.weights)
    res = solver.solve()
    assert res.energy == E2.evaluate(res.labels) <= E2.evaluate(first.labels)
    assert res.energy <= alpha_expansion(E2).energy + 1e-9
    assert (res.labels[nodes] == 1).mean() > 0.9
    np.testing.assert_array_equal(E.unary, before)
    again = solver.solve()  # nothing changed: no move is run
    assert again.info["n_moves"] == 0 and again.energy == res.energy


@pytest.mark.parametrize("seed", range(10))
def test_solver_small_energies_against_brute_force(seed):
    """Random small energies (hard terms, cannot-links): cold and warm solves report the
    shared evaluator's energy, never below the optimum, feasible when the optimum is."""
    rng = np.random.default_rng(seed)
    E = random_raw(rng, int(rng.integers(3, 7)), int(rng.integers(2, 4)), hard=True).build()
    solver = ExpansionSolver(E, reuse_flows=seed % 2 == 0)
    solver.solve()
    nodes = rng.choice(E.n_nodes, size=2, replace=False)
    costs = np.round(rng.uniform(0, 3, (2, E.n_labels)), 3)
    solver.update_unary(nodes, costs)
    res = solver.solve()
    E2 = solver.energy
    np.testing.assert_array_equal(E2.unary[nodes], costs)
    opt = brute_force(E2).energy
    assert res.energy == E2.evaluate(res.labels) >= opt - 1e-9
    if np.isfinite(opt):
        assert np.isfinite(res.energy)


@pytest.mark.parametrize("call, match", [
    (lambda s: s.update_unary([0, 9], [[0, 1, 2], [0, 1, 2]]), r"nodes\[1\] = 9 is not a node in \[0, 4\)"),
    (lambda s: s.update_unary([1, 1], [[0, 1, 2], [0, 1, 2]]), "nodes must hold distinct nodes"),
    (lambda s: s.update_unary([1], [[0, 1]]), r"costs must have shape \(1, 3\), got \(1, 2\)"),
    (lambda s: s.update_unary([1], [[0, np.nan, 2]]), r"unary\[0, 1\] is nan"),
    (lambda s: s.update_unary([0.5], [[0, 1, 2]]), "nodes must be a 1-D array of node indices"),
    (lambda s: s.solve(init=[0, 0, 0, 7]), r"init\[3\] = 7 is not a label"),
])
def test_bad_updates_name_the_parameter(call, match):
    solver = ExpansionSolver(Energy(np.zeros((4, 3)), edges=[(0, 1), (2, 3)], weights=[1.0, 1.0]))
    with pytest.raises(InvalidParameterError, match=match):
        call(solver)


def test_bad_construction_and_infeasible_rows():
    E = Energy(np.zeros((4, 3)), edges=[(0, 1)], weights=[1.0])
    with pytest.raises(InvalidParameterError, match="moves must be 'auto', 'expansion' or 'swap'"):
        ExpansionSolver(E, moves="fusion")
    with pytest.raises(InvalidParameterError, match="needs an Energy, got ndarray"):
        ExpansionSolver(np.zeros((4, 3)))
    with pytest.raises(InvalidParameterError, match="max_iter must be >= 1"):
        ExpansionSolver(E, max_iter=0)
    with pytest.raises(InvalidParameterError, match="does not take label costs"):
        ExpansionSolver(Energy(np.zeros((4, 3)), label_costs=[1.0, 1.0, 1.0]))
    T = np.array([[[0.0, 5.0, 1.0], [5.0, 0.0, 1.0], [1.0, 1.0, 0.0]]])
    tabled = Energy(np.zeros((2, 3)), table_edges=[(0, 1)], tables=T)
    with pytest.raises(InvalidParameterError, match=r"pair table on edge \(0, 1\) is not a metric"):
        ExpansionSolver(tabled, non_metric="raise")
    assert ExpansionSolver(tabled).solve().info["moves"] == "swap"
    with pytest.raises(InvalidConstraintError, match=r"costs\[0\] \(node 2\) forbids every label"):
        ExpansionSolver(E).update_unary([2], [[np.inf] * 3])
