"""The speed-ups of RatioDCA: inexact inner solves, the stable-partition stop, adaptive
restart and the locality renumbering of large graphs must not change the answers."""

import numpy as np
import pytest

import graphclust as gc
import graphclust.spectral.ratiodca as rd
from graphclust.datasets import make_moons
from graphclust.errors import InvalidParameterError
from graphclust.spectral.onespectral import one_spectral_bipartition
from graphclust.spectral.ratiodca import RatioProblem, continuous_ratio, optimal_threshold, ratio_dca, solve_inner


def moons_problem(n, **kw):
    X, y = make_moons(n, noise=0.1, random_state=0)
    return RatioProblem(gc.knn_matrix(X, 10), **kw), y


def test_layout_renumbering_gives_the_same_inner_solution(monkeypatch):
    P, _ = moons_problem(600, cannot_pairs=[[0, 5], [10, 400]])
    g = np.random.default_rng(1).standard_normal(P.n)
    g -= g.mean()
    monkeypatch.setattr(rd, "_LAYOUT_MIN_N", 10**9)
    plain = solve_inner(P, g, 0.3, max_iter=300, gap_tol=0.0)
    P2, _ = moons_problem(600, cannot_pairs=[[0, 5], [10, 400]])
    monkeypatch.setattr(rd, "_LAYOUT_MIN_N", 2)
    lay = P2.local_layout()
    assert lay is not None and sorted(lay[0].tolist()) == list(range(P2.n))
    moved = solve_inner(P2, g, 0.3, max_iter=300, gap_tol=0.0)
    np.testing.assert_allclose(moved.f, plain.f, atol=1e-8)
    np.testing.assert_allclose(moved.state.alpha, plain.state.alpha, atol=1e-8)
    assert moved.primal == pytest.approx(plain.primal, rel=1e-8)


def test_small_graphs_are_not_renumbered():
    P, _ = moons_problem(100)
    assert P.local_layout() is None


def test_stable_partition_stop_keeps_the_partition():
    P, y = moons_problem(800)
    f0 = np.random.default_rng(0).standard_normal(P.n)
    full = ratio_dca(P, f0, 0.0, inner_gap=1e-6)
    fast = ratio_dca(P, f0, 0.0, stable_outer=3)
    assert fast.reason == "stable partition" and fast.converged
    assert fast.n_inner < full.n_inner
    a, b = optimal_threshold(P, full.f), optimal_threshold(P, fast.f)
    assert b.ratio <= a.ratio * (1 + 1e-6)
    assert np.all(np.diff(fast.history) < 0)
    assert fast.ratio == pytest.approx(continuous_ratio(P, fast.f), rel=1e-10)


def test_one_spectral_fast_defaults_match_the_spectral_level_set():
    X, y = make_moons(1500, noise=0.1, random_state=0)
    W = gc.knn_matrix(X, 10)
    res = one_spectral_bipartition(W, n_starts=1, random_state=0)
    slow = one_spectral_bipartition(W, n_starts=1, random_state=0, stable_outer=0)
    assert res.runs[0].n_inner <= slow.runs[0].n_inner
    assert res.ratio <= slow.ratio * (1 + 1e-3)
    assert min(np.mean(res.labels != y), np.mean(res.labels == y)) < 0.01


@pytest.mark.parametrize("kw, msg", [
    ({"inner_gap": 1.0}, "inner_gap must be < 1"),
    ({"inner_gap": -0.1}, "inner_gap must be >= 0"),
    ({"stable_outer": -1}, "stable_outer"),
])
def test_ratio_dca_rejects_bad_speed_parameters(kw, msg):
    P, _ = moons_problem(50)
    with pytest.raises(InvalidParameterError, match=msg):
        ratio_dca(P, np.arange(P.n, dtype=float), **kw)


@pytest.mark.parametrize("scale", [1.0, 1e17, 1e300])
def test_simplex_threshold_survives_huge_entries(scale):
    # with |z| ~ 1e17, max(z) - 1 == max(z): the candidate set must still hold the maximum
    z = np.array([3.0, 1.0, 2.5, -4.0]) * scale
    tau = rd._simplex_tau(z)
    p = rd._project_simplex(z)
    assert np.isfinite(tau) and np.all(np.isfinite(p)) and p.sum() <= 1.0 + 1e-12
    assert tau <= z.max() and tau >= z.max() - 1.0 - 1e-12 * scale  # the exact tau up to round-off
    if scale == 1.0:
        np.testing.assert_allclose(np.maximum(z - tau, 0.0), [0.75, 0.0, 0.25, 0.0])
        np.testing.assert_allclose(p, [0.75, 0.0, 0.25, 0.0])
