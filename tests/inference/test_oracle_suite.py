"""One oracle suite for every registered inference engine.

Engines are collected from ``ENGINES`` at collection time, so a newly registered engine
joins the suite without editing this file. Each one runs on the small random energies of
``conftest.py`` and must respect what every engine promises: the reported energy is the
shared evaluator's, never below the brute-force optimum, feasible when a feasible
labelling exists; exact engines hit the optimum and lower bounds are valid.
"""

import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError, ProblemTooLargeError
from graphclust.inference import ENGINES, InferenceResult, check_capabilities, solve
from graphclust.inference.icm import _surrogate

ENGINE_NAMES = sorted(ENGINES)
#: engines that promise never to end above their initial labelling
MONOTONE_FROM_INIT = {"icm", "icm-colour", "expansion", "swap"}
#: engines whose result is a local minimum under single-node moves (the colour
#: schedule only without label costs, see icm_checkerboard)
LOCAL_MINIMUM = {"icm", "icm-colour"}


def _applicable(name, energy):
    func, caps = ENGINES[name]
    try:
        check_capabilities(energy, name, caps)
    except (InvalidParameterError, ProblemTooLargeError):
        return False
    return True


def _tol(x):
    return 1e-9 * (1.0 + abs(x)) if np.isfinite(x) else 0.0


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_engine_against_brute_force(name, small_case):
    """Reported energy is evaluate(labels), >= the optimum, feasible, and exact when promised."""
    E = small_case.energy
    if not _applicable(name, E):
        with pytest.raises((InvalidParameterError, ProblemTooLargeError), match=repr(name)):
            solve(E, name, random_state=0)
        return
    res = solve(E, name, random_state=0)
    assert isinstance(res, InferenceResult)
    assert res.labels.shape == (E.n_nodes,)
    assert np.issubdtype(res.labels.dtype, np.integer)
    assert res.labels.min() >= 0 and res.labels.max() < E.n_labels
    assert res.energy == E.evaluate(res.labels)
    opt = small_case.opt
    assert res.energy >= opt - _tol(opt)
    if np.isfinite(opt):
        assert np.isfinite(res.energy), f"{name} returned an infeasible labelling although the optimum is {opt}"
        assert E.violated_hard_terms(res.labels) == 0
    if ENGINES[name][1]["exact"]:
        assert res.energy == pytest.approx(opt, rel=1e-9, abs=1e-9) if np.isfinite(opt) else res.energy == opt
    if "violated_hard_terms" in res.info:
        assert res.info["violated_hard_terms"] == E.violated_hard_terms(res.labels)
        assert (res.info["violated_hard_terms"] == 0) == np.isfinite(res.energy)
    if res.lower_bound is not None:
        assert res.lower_bound <= opt + 1e-7 * (1 + abs(opt)) if np.isfinite(opt) else True
    assert res.iterations >= 0 and res.seconds >= 0


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_engine_is_reproducible(name, small_case):
    """The same seed gives the same labels."""
    E = small_case.energy
    if not _applicable(name, E):
        with pytest.raises((InvalidParameterError, ProblemTooLargeError), match=repr(name)):
            solve(E, name, random_state=3)
        return
    a = solve(E, name, random_state=3)
    b = solve(E, name, random_state=3)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.energy == b.energy


@pytest.mark.parametrize("name", sorted(MONOTONE_FROM_INIT & set(ENGINE_NAMES)))
def test_engine_not_worse_than_init(name, small_case):
    """Starting from any labelling, a monotone engine ends at or below it."""
    E = small_case.energy
    rng = np.random.default_rng(7)
    for _ in range(5):
        init = rng.integers(E.n_labels, size=E.n_nodes)
        res = solve(E, name, init=init, random_state=1)
        start = E.evaluate(init)
        assert res.energy <= start + _tol(start)
        if np.isfinite(start):
            assert np.isfinite(res.energy)


@pytest.mark.parametrize("name", sorted(LOCAL_MINIMUM & set(ENGINE_NAMES)))
def test_engine_returns_local_minimum(name, small_case):
    """No single-node label change improves the energy (its finite surrogate when the
    result violates a hard term)."""
    E = small_case.energy
    if name == "icm-colour" and E.label_costs is not None:
        pytest.skip("the colour schedule treats label costs conservatively")
    res = solve(E, name, random_state=0)
    assert res.converged
    F = E if np.isfinite(res.energy) else _surrogate(E)
    base = F.evaluate(res.labels)
    for i in range(E.n_nodes):
        for k in range(E.n_labels):
            z = res.labels.copy()
            z[i] = k
            assert F.evaluate(z) >= base - _tol(base), f"moving node {i} to {k} improves"


def test_exact_engines_registered():
    """The exact engines declare themselves exact; ICM does not."""
    assert ENGINES["exact"][1]["exact"] and ENGINES["mincut"][1]["exact"] and ENGINES["brute-force"][1]["exact"]
    assert not ENGINES["icm"][1]["exact"]
    assert ENGINES["mincut"][1]["binary_only"] and ENGINES["mincut"][1]["attractive_only"]


# ---------------------------------------------------------------------- solve()
def _three_label_energy(n=4):
    return Energy(np.zeros((n, 3)), edges=[(0, 1), (1, 2)], weights=[1.0, -2.0])


def test_solve_unknown_method_lists_engines():
    with pytest.raises(InvalidParameterError, match=r"unknown method 'simplex'; available: .*brute-force.*icm"):
        solve(_three_label_energy(), "simplex")


def test_solve_refuses_non_energy():
    with pytest.raises(InvalidParameterError, match="needs an Energy, got ndarray"):
        solve(np.zeros((3, 2)), "icm")


def test_solve_checks_label_count_before_work():
    with pytest.raises(InvalidParameterError, match=r"'mincut' handles 2 labels only, the energy has 3"):
        solve(_three_label_energy(), "mincut")


def test_solve_checks_attractive_and_names_edge():
    E = Energy(np.zeros((3, 2)), edges=[(0, 1), (1, 2)], weights=[1.0, -2.0])
    with pytest.raises(InvalidParameterError, match=r"attractive Potts terms only.*edge \(1, 2\) \(weight -2.0\)"):
        solve(E, "mincut")
    T = Energy(np.zeros((3, 2)), table_edges=[(0, 2)], tables=np.zeros((1, 2, 2)))
    with pytest.raises(InvalidParameterError, match=r"1 pair tables \(first on nodes \(0, 2\)\)"):
        solve(T, "mincut")


def test_solve_checks_size_and_honours_max_nodes():
    E = Energy(np.zeros((13, 2)))
    with pytest.raises(ProblemTooLargeError, match=r"'brute-force' accepts at most 12 nodes, the energy has 13"):
        solve(E, "brute-force")
    res = solve(E, "brute-force", max_nodes=13)
    assert res.energy == 0.0 and res.info["n_optima"] == 2 ** 13


def test_solve_passes_options():
    E = _three_label_energy()
    res = solve(E, "icm", order="fixed", max_iter=1)
    assert res.iterations == 1
