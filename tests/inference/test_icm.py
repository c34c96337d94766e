"""Tests for graphclust.inference.icm: monotone descent, local minima, schedules, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.inference import icm, icm_checkerboard
from graphclust.inference.exact import brute_force
from graphclust.inference.icm import _surrogate

from .conftest import random_raw


def grid_energy(h, w, K, *, beta=0.6, diagonal=False, seed=0):
    """A Potts grid in row-major order with random unaries."""
    rng = np.random.default_rng(seed)
    idx = np.arange(h * w).reshape(h, w)
    e = [np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1), np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)]
    if diagonal:
        e.append(np.stack([idx[:-1, :-1].ravel(), idx[1:, 1:].ravel()], 1))
    e = np.concatenate(e)
    return Energy(rng.uniform(0, 2, size=(h * w, K)), e, np.full(len(e), beta))


def single_moves_improve(E, labels):
    """Largest improvement any single-node change makes on the finite surrogate ICM
    descends (equal to the energy on feasible labellings)."""
    F = _surrogate(E)
    base = F.evaluate(labels)
    best = 0.0
    for i in range(E.n_nodes):
        for k in range(E.n_labels):
            z = labels.copy()
            z[i] = k
            best = max(best, base - F.evaluate(z))
    return best, base


energies = st.builds(
    lambda seed, n, K, hard, lc, tab: random_raw(np.random.default_rng(seed), n, K, hard=hard, label_costs=lc,
                                                 tables=tab).build(),
    st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(2, 4), st.booleans(), st.booleans(), st.booleans(),
)


# ---------------------------------------------------------------------- laws
@settings(max_examples=40, deadline=None)
@given(E=energies, seed=st.integers(0, 1000), schedule=st.sampled_from(["sequential", "colour"]))
def test_energy_never_increases(E, seed, schedule):
    """Sweep after sweep the energy (its finite surrogate when hard terms are violated)
    never rises above the start, and the history ends at the reported energy."""
    rng = np.random.default_rng(seed)
    init = rng.integers(E.n_labels, size=E.n_nodes)
    F = _surrogate(E)
    trace = [F.evaluate(init)]
    res = icm(E, init=init, schedule=schedule, random_state=seed,
              callback=lambda it, z, value: trace.append(F.evaluate(z)))
    trace.append(F.evaluate(res.labels))
    trace = np.array(trace)
    assert np.all(np.diff(trace) <= 1e-9 * (1 + np.abs(trace[:-1])))
    hist = np.array(res.history)
    assert len(hist) == res.iterations == len(res.info["n_changes"]) == len(trace) - 2
    feasible = np.isfinite(hist)
    np.testing.assert_allclose(hist[feasible], trace[1:-1][feasible], rtol=1e-9, atol=1e-9)
    assert res.history[-1] == res.energy
    if res.converged:
        assert res.info["n_changes"][-1] == 0


@settings(max_examples=40, deadline=None)
@given(E=energies, seed=st.integers(0, 1000))
def test_sequential_result_is_local_minimum(E, seed):
    """With label costs and tables handled exactly, no single-node change improves."""
    res = icm(E, random_state=seed)
    assert res.converged
    gain, base = single_moves_improve(E, res.labels)
    assert gain <= 1e-9 * (1 + abs(base))


def test_colour_result_is_local_minimum_without_label_costs():
    E = grid_energy(6, 7, 3, seed=4)
    res = icm_checkerboard(E, shape=(6, 7), random_state=0)
    assert res.converged and res.info["colouring"] == "checkerboard"
    gain, base = single_moves_improve(E, res.labels)
    assert gain <= 1e-9 * (1 + abs(base))


# ---------------------------------------------------------------------- known answers
def test_label_cost_is_credited_when_a_label_is_freed():
    """Node 2 alone holds label 1; moving it to 0 frees label 1 and saves its cost."""
    E = Energy([[0.0, 1.0], [0.0, 1.0], [0.5, 0.0]], label_costs=[0.0, 1.0])
    res = icm(E, random_state=0)
    np.testing.assert_array_equal(res.labels, [0, 0, 0])
    assert res.energy == 0.5
    # without the label cost node 2 keeps label 1
    res = icm(Energy(E.unary), random_state=0)
    np.testing.assert_array_equal(res.labels, [0, 0, 1])


def test_label_cost_is_charged_for_a_new_label():
    """Label 1 is unused; opening it for node 0 costs more than it gains."""
    E = Energy([[0.4, 0.0], [0.0, 1.0]], label_costs=[0.0, 1.0])
    res = icm(E, init=[0, 0], random_state=0)
    np.testing.assert_array_equal(res.labels, [0, 0])
    assert res.energy == 0.4 and res.iterations == 1


def test_tables_in_both_orientations():
    """A table on (1, 0) pulls node 0 to the label its table row prefers."""
    T = np.array([[[0.0, 5.0], [5.0, 5.0]]])  # T[z1, z0]: only (0, 0) is cheap
    E = Energy([[0.0, 1.0], [1.0, 0.0]], table_edges=[(1, 0)], tables=T)
    res = icm(E, order="fixed")
    assert res.energy == brute_force(E).energy == 1.0
    np.testing.assert_array_equal(res.labels, [0, 0])


def test_visiting_order_decides_between_optima():
    """Two must-linked nodes disagreeing: whoever is visited first gives in."""
    E = Energy([[0.0, 1.0], [1.0, 0.0]], edges=[(0, 1)], weights=[3.0])
    np.testing.assert_array_equal(icm(E, order="fixed").labels, [1, 1])
    np.testing.assert_array_equal(icm(E, order=[1, 0]).labels, [0, 0])
    assert icm(E, order="fixed").energy == icm(E, order=[1, 0]).energy == 1.0


def test_default_init_is_unary_argmin_with_ties_to_lowest():
    E = Energy([[1.0, 1.0, 0.0], [0.0, 0.0, 2.0]], edges=[(0, 1)], weights=[-0.1])
    res = icm(E, max_iter=1)
    np.testing.assert_array_equal(res.labels, [2, 0])
    assert res.converged


def test_warm_start_at_optimum_stays():
    E = grid_energy(3, 3, 3, seed=1)
    opt = brute_force(E)
    res = icm(E, init=opt.labels, random_state=5)
    np.testing.assert_array_equal(res.labels, opt.labels)
    assert res.iterations == 1 and res.converged and res.info["n_changes"] == [0]


def test_hard_terms_are_met():
    """A hard must-link overrides the unaries; a hard seed (inf unary) is respected."""
    inf = np.inf
    E = Energy([[0.0, inf], [0.0, 5.0], [5.0, 0.0]], edges=[(0, 2)], weights=[inf])
    res = icm(E, random_state=0)
    assert res.labels[0] == 0 and res.labels[2] == 0
    assert np.isfinite(res.energy) and E.violated_hard_terms(res.labels) == 0


def test_forbidden_label_never_preferred_whatever_the_scale():
    """A +inf unary stays forbidden even when the allowed label costs more than the
    hard-term penalty (regression: an absolute penalty of 1 undercut a cost of 10)."""
    E = Energy([[10.0, np.inf], [0.0, 0.0]])
    for res in (icm(E), icm_checkerboard(E)):
        np.testing.assert_array_equal(res.labels, [0, 0])
        assert res.energy == 10.0
    F = _surrogate(E)
    assert F.unary[0, 1] >= F.unary[0, 0] + E.hard_penalty()


def test_denoises_a_planted_grid():
    """A noisy two-region image is cleaned by Potts smoothing (both schedules)."""
    rng = np.random.default_rng(0)
    h, w = 20, 20
    truth = (np.arange(w)[None, :] >= w // 2).repeat(h, 0).astype(int).ravel()
    noisy = np.where(rng.random(h * w) < 0.15, 1 - truth, truth)
    unary = np.stack([noisy != 0, noisy != 1], 1).astype(float)
    idx = np.arange(h * w).reshape(h, w)
    e = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                        np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    E = Energy(unary, e, np.full(len(e), 0.7))
    for res in (icm(E, random_state=0), icm_checkerboard(E, shape=(h, w), random_state=0)):
        assert (res.labels != truth).mean() < 0.5 * (noisy != truth).mean()


# ---------------------------------------------------------------------- schedules
def test_checkerboard_needs_two_colours_on_a_grid():
    res = icm_checkerboard(grid_energy(5, 4, 2), shape=(5, 4), random_state=0)
    assert res.info["n_colours"] == 2 and res.info["colouring"] == "checkerboard"


def test_greedy_colouring_when_checkerboard_does_not_apply():
    """Diagonals join same-colour squares: a greedy colouring is used, still valid."""
    E = grid_energy(5, 5, 3, diagonal=True, seed=2)
    res = icm_checkerboard(E, shape=(5, 5), random_state=0)
    assert res.info["colouring"] == "greedy" and res.info["n_colours"] >= 3
    res2 = icm(E, schedule="colour", random_state=0)  # no shape: greedy straight away
    assert res2.info["colouring"] == "greedy"
    gain, base = single_moves_improve(E, res.labels)
    assert res.converged and gain <= 1e-9 * (1 + abs(base))


def test_colour_schedule_is_not_worse_than_sequential_on_average():
    """Both schedules reach local minima of similar quality (sanity, not a race)."""
    seq = [icm(grid_energy(8, 8, 3, seed=s), random_state=s).energy for s in range(6)]
    col = [icm_checkerboard(grid_energy(8, 8, 3, seed=s), shape=(8, 8), random_state=s).energy for s in range(6)]
    assert abs(np.mean(seq) - np.mean(col)) < 0.05 * np.mean(seq)


def test_fixed_order_ignores_random_state():
    E = grid_energy(4, 4, 3, seed=3)
    a = icm(E, order="fixed", random_state=0)
    b = icm(E, order="fixed", random_state=99)
    c = icm(E, order=np.arange(16), random_state=7)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.labels, c.labels)


def test_max_iter_caps_and_reports_not_converged():
    E = grid_energy(10, 10, 3, beta=1.5, seed=0)
    res = icm(E, max_iter=1, random_state=0)
    assert res.iterations == 1 and not res.converged and res.info["n_changes"][0] > 0


def test_callback_sees_every_sweep_and_can_stop():
    E = grid_energy(10, 10, 3, beta=1.5, seed=0)
    seen = []

    def cb(it, labels, value):
        seen.append((it, value))
        assert value == E.evaluate(labels)
        return it == 1

    res = icm(E, callback=cb, random_state=0)
    assert res.iterations == 1 and not res.converged and seen[0][0] == 1
    seen.clear()
    full = icm(E, callback=lambda *a: seen.append(a[0]), random_state=0)
    assert seen == list(range(1, full.iterations + 1))


def test_progress_bar_runs(capsys):
    res = icm(grid_energy(3, 3, 2), progress=True, random_state=0)
    assert res.converged
    res = icm_checkerboard(grid_energy(3, 3, 2), shape=(3, 3), progress=True, random_state=0)
    assert res.converged


def test_input_labels_are_not_modified():
    E = grid_energy(3, 3, 3, seed=6)
    init = np.zeros(9, dtype=np.int64)
    icm(E, init=init, random_state=0)
    assert (init == 0).all()


# ---------------------------------------------------------------------- errors
@pytest.fixture
def E5():
    return Energy(np.zeros((5, 3)), edges=[(0, 1)], weights=[1.0])


def test_init_wrong_shape(E5):
    with pytest.raises(InvalidParameterError, match=r"init must have shape \(5,\), got \(4,\)"):
        icm(E5, init=[0, 0, 0, 0])


def test_init_label_out_of_range_names_node(E5):
    with pytest.raises(InvalidParameterError, match=r"init\[2\] = 7 is not a label in \[0, 3\)"):
        icm(E5, init=[0, 1, 7, 0, 0])
    with pytest.raises(InvalidParameterError, match=r"init\[4\] = -1"):
        icm(E5, init=[0, 1, 2, 0, -1])


def test_init_not_integer_names_node(E5):
    with pytest.raises(InvalidParameterError, match=r"init\[1\] = 0.5 is not an integer label"):
        icm(E5, init=[0.0, 0.5, 1.0, 0.0, 0.0])
    with pytest.raises(InvalidParameterError, match=r"init\[3\] = nan"):
        icm(E5, init=[0.0, 1.0, 1.0, np.nan, 0.0])
    with pytest.raises(InvalidParameterError, match="integer labels, got dtype <U1"):
        icm(E5, init=list("abcde"))
    np.testing.assert_array_equal(icm(E5, init=[0.0, 1.0, 2.0, 0.0, 0.0], max_iter=1).labels.dtype, np.int64)


def test_bad_order(E5):
    with pytest.raises(InvalidParameterError, match="order must be 'random', 'fixed' or a permutation, got 'zigzag'"):
        icm(E5, order="zigzag")
    with pytest.raises(InvalidParameterError, match=r"node 4 is never visited"):
        icm(E5, order=[0, 1, 2, 3, 3])
    with pytest.raises(InvalidParameterError, match=r"node 0 is never visited"):
        icm(E5, order=[5, 1, 2, 3, 4])
    with pytest.raises(InvalidParameterError, match=r"permutation of 0..4, got shape \(3,\)"):
        icm(E5, order=[0, 1, 2])
    with pytest.raises(InvalidParameterError, match="applies to schedule='sequential' only"):
        icm(E5, order=np.arange(5), schedule="colour")


def test_bad_schedule_shape_and_max_iter(E5):
    with pytest.raises(InvalidParameterError, match="schedule must be 'sequential' or 'colour', got 'async'"):
        icm(E5, schedule="async")
    with pytest.raises(InvalidParameterError, match="shape applies to schedule='colour' only"):
        icm(E5, shape=(5, 1))
    with pytest.raises(InvalidParameterError, match=r"shape \(2, 2\) has 4 pixels but the energy has 5 nodes"):
        icm_checkerboard(E5, shape=(2, 2))
    with pytest.raises(InvalidParameterError, match=r"shape must be \(height, width\), got 5"):
        icm_checkerboard(E5, shape=5)
    with pytest.raises(InvalidParameterError, match="max_iter must be >= 1, got 0"):
        icm(E5, max_iter=0)
