"""Tests for graphclust.inference.grid_icm: the stencil ICM kernel on pixel grids.

Oracles: the grid energy written here in plain numpy, brute force over every single-pixel
change, and the generic engine ``solve(Energy, "icm", order="fixed")`` on the same grid
(with the fixed sides folded into the unaries by hand).
"""

import numpy as np
import pytest

from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.inference import solve
from graphclust.inference.grid_icm import grid_icm


def _problem(h, w, K, seed, signed=False):
    rng = np.random.default_rng(seed)
    U = rng.uniform(0, 2, size=(h, w, K))
    lo = -0.5 if signed else 0.0
    return U, rng.uniform(lo, 1.2, size=(h, w - 1)), rng.uniform(lo, 1.2, size=(h - 1, w))


def _energy(U, wh, wv, z):
    """The grid energy, independent of the kernel."""
    e = np.take_along_axis(U, z[..., None].astype(np.intp), axis=2).sum()
    return e + (wh * (z[:, 1:] != z[:, :-1])).sum() + (wv * (z[1:] != z[:-1])).sum()


def _best_single_move(U, wh, wv, z, window):
    """Largest energy decrease any change of one free pixel's label makes (brute force)."""
    base = _energy(U, wh, wv, z)
    r0, r1, c0, c1 = window
    best = 0.0
    for i in range(r0, r1):
        for j in range(c0, c1):
            for k in range(U.shape[2]):
                y = z.copy()
                y[i, j] = k
                best = max(best, base - _energy(U, wh, wv, y))
    return best, base


def _window(shape, fixed):
    h, w = shape
    return int(fixed[0]), h - int(fixed[1]), int(fixed[2]), w - int(fixed[3])


@pytest.mark.parametrize("order", ["fixed", "random"])
@pytest.mark.parametrize("fixed", [(False, False, False, False), (True, True, True, True), (True, False, False, True)])
@pytest.mark.parametrize("seed", [0, 1])
def test_result_is_a_local_minimum_below_the_start(order, fixed, seed):
    """No single free-pixel change lowers the energy (checked over every pixel and
    label), fixed sides keep their labels, the tracked energy is the true one after
    every sweep, and it never rises."""
    U, wh, wv = _problem(7, 9, 3, seed, signed=seed == 1)
    init = np.random.default_rng(seed + 10).integers(0, 3, size=(7, 9))
    res = grid_icm(U, wh, wv, init=init, fixed=fixed, order=order, random_state=seed)
    z = res.labels
    assert z.dtype == np.int32 and res.converged
    win = _window(z.shape, fixed)
    improve, value = _best_single_move(U, wh, wv, z, win)
    assert improve <= 1e-9 * (1 + abs(value)), improve
    assert res.energy == pytest.approx(value, rel=1e-12)
    start = _energy(U, wh, wv, init)
    assert res.info["initial_energy"] == pytest.approx(start, rel=1e-12)
    assert res.energy <= start
    assert all(b <= a + 1e-12 for a, b in zip([start] + res.history, res.history))
    outside = np.ones(z.shape, bool)
    outside[win[0]:win[1], win[2]:win[3]] = False
    np.testing.assert_array_equal(z[outside], init[outside])


def test_tracked_energy_after_every_sweep_is_exact():
    """history[t] equals the energy of the labels after sweep t (the labels are
    recorded by re-running with max_iter = t)."""
    U, wh, wv = _problem(12, 10, 4, 3)
    full = grid_icm(U, wh, wv, order="random", random_state=7)
    assert full.iterations >= 2
    for t in range(1, full.iterations + 1):
        part = grid_icm(U, wh, wv, order="random", random_state=7, max_iter=t)
        assert part.history == full.history[:t]
        assert full.history[t - 1] == pytest.approx(_energy(U, wh, wv, part.labels), rel=1e-12)
    assert full.info["n_changes"][-1] == 0 and all(n > 0 for n in full.info["n_changes"][:-1])


def _generic(U, wh, wv, init, fixed):
    """The generic engine on the free window, fixed sides folded into the unaries."""
    h, w, K = U.shape
    r0, r1, c0, c1 = _window((h, w), fixed)
    Uf = U[r0:r1, c0:c1].copy()
    ar = np.arange(K)
    if r0:
        Uf[0] += wv[0, c0:c1, None] * (ar != init[0, c0:c1, None])
    if r1 < h:
        Uf[-1] += wv[r1 - 1, c0:c1, None] * (ar != init[r1, c0:c1, None])
    if c0:
        Uf[:, 0] += wh[r0:r1, 0, None] * (ar != init[r0:r1, 0, None])
    if c1 < w:
        Uf[:, -1] += wh[r0:r1, c1 - 1, None] * (ar != init[r0:r1, c1, None])
    fh, fw = r1 - r0, c1 - c0
    idx = np.arange(fh * fw).reshape(fh, fw)
    edges = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                            np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    weights = np.concatenate([wh[r0:r1, c0:c1 - 1].ravel(), wv[r0:r1 - 1, c0:c1].ravel()])
    res = solve(Energy(Uf.reshape(-1, K), edges, weights), "icm", order="fixed",
                init=init[r0:r1, c0:c1].ravel())
    out = init.copy()
    out[r0:r1, c0:c1] = res.labels.reshape(fh, fw)
    return out, res


@pytest.mark.parametrize("fixed", [(False, False, False, False), (True, True, True, True), (False, True, True, False)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_raster_order_equals_the_generic_engine(fixed, seed):
    """In raster order the kernel makes the same moves as solve(Energy, "icm",
    order="fixed") on the same grid: identical labels and number of sweeps."""
    U, wh, wv = _problem(11, 8, 4, seed, signed=seed == 2)
    init = U.argmin(axis=2)
    got = grid_icm(U, wh, wv, init=init, fixed=fixed, order="fixed")
    want, res = _generic(U, wh, wv, init, fixed)
    np.testing.assert_array_equal(got.labels, want)
    assert got.iterations == res.iterations
    assert got.info["n_changes"] == res.info["n_changes"]


def test_random_order_is_reproducible_and_float32_is_accepted():
    U, wh, wv = _problem(20, 20, 3, 4)
    a = grid_icm(U, wh, wv, random_state=3)
    b = grid_icm(U, wh, wv, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a.labels, b.labels)
    orders = {grid_icm(U, wh, wv, random_state=s).labels.tobytes() for s in range(6)}
    assert len(orders) > 1  # the visiting order matters on this grid
    U32 = U.astype(np.float32)
    c = grid_icm(U32, wh, wv, random_state=3)
    improve, value = _best_single_move(U32.astype(np.float64), wh, wv, c.labels, (0, 20, 0, 20))
    assert improve <= 1e-6 * value
    assert c.energy == pytest.approx(value, rel=1e-9)


def test_single_pixel_and_all_fixed_edge_cases():
    U = np.array([[[1.0, 0.0, 2.0]]])
    res = grid_icm(U, np.empty((1, 0)), np.empty((0, 1)), init=[[2]])
    assert res.labels.tolist() == [[1]] and res.energy == 0.0 and res.history == [0.0, 0.0]
    U, wh, wv = _problem(2, 2, 2, 0)
    init = np.zeros((2, 2), int)
    res = grid_icm(U, wh, wv, init=init, fixed=(True, True, False, False))  # no free pixel
    np.testing.assert_array_equal(res.labels, init)
    assert res.iterations == 0 and res.converged and res.energy == pytest.approx(_energy(U, wh, wv, init))


def test_bad_input_errors():
    U, wh, wv = _problem(4, 5, 3, 0)
    with pytest.raises(InvalidParameterError, match=r"wh must have shape \(4, 4\)"):
        grid_icm(U, wv, wv)
    with pytest.raises(InvalidParameterError, match=r"unary must have shape \(H, W, K\)"):
        grid_icm(U[0], wh, wv)
    bad = U.copy()
    bad[1, 2, 0] = np.nan
    with pytest.raises(InvalidParameterError, match=r"unary\[1, 2, 0\] is nan"):
        grid_icm(bad, wh, wv)
    with pytest.raises(InvalidParameterError, match=r"init\[0, 1\] = 3 is not a label"):
        grid_icm(U, wh, wv, init=[[0, 3, 0, 0, 0]] + [[0] * 5] * 3)
    with pytest.raises(InvalidParameterError, match="order must be"):
        grid_icm(U, wh, wv, order="sideways")
    with pytest.raises(InvalidParameterError, match="max_iter"):
        grid_icm(U, wh, wv, max_iter=0)
    with pytest.raises(InvalidParameterError, match="fixed must be 4"):
        grid_icm(U, wh, wv, fixed=(True, False))


@pytest.mark.parametrize("random_order", [True, False])
@pytest.mark.parametrize("fixed", [(False, False, False, False), (True, True, True, True)])
def test_skipping_settled_pixels_changes_nothing(random_order, fixed):
    """Skipping pixels whose neighbourhood did not change (and, in random order, the
    read-only pass that marks the pixels able to move) gives exactly the sweeps of
    plain ICM visiting every pixel: same labels, changes and energy steps per sweep,
    from a cold and from a nearly converged warm start."""
    from graphclust.inference.grid_icm import _run, _window as window

    U, wh, wv = _problem(23, 17, 4, 5, signed=True)
    cold = np.random.default_rng(0).integers(0, 4, size=(23, 17)).astype(np.int32)
    warm = grid_icm(U, wh, wv, init=cold, random_state=1).labels
    warm[5:8, 5:8] = 0
    for init in (cold, warm):
        runs = []
        for skip in (True, False):
            z = init.copy()
            sweeps, n_changes, deltas = _run(U, wh, wv, z, window((23, 17), fixed), random_order, 99, 100, skip)
            runs.append((z, n_changes.tolist(), deltas.tolist()))
        np.testing.assert_array_equal(runs[0][0], runs[1][0])
        assert runs[0][1:] == runs[1][1:] and len(runs[0][1]) > 1


@pytest.mark.parametrize("random_order", [True, False])
def test_unaries_of_the_window_only_with_an_offset(random_order):
    """The kernel given only the free window's unaries and their offset runs the same
    sweeps as with the whole grid's (what a tiled run passes: the tile's block, no copy
    extended by its halo); the fixed pixels' unaries are never read."""
    from graphclust.inference.grid_icm import _run

    U, wh, wv = _problem(23, 17, 4, 6)
    init = np.random.default_rng(2).integers(0, 4, size=(23, 17)).astype(np.int32)
    r0, r1, c0, c1 = _window((23, 17), (True, True, True, False))
    full, part = init.copy(), init.copy()
    ref = _run(U, wh, wv, full, (r0, r1, c0, c1), random_order, 7, 100)
    got = _run(np.ascontiguousarray(U[r0:r1, c0:c1]), wh, wv, part, (r0, r1, c0, c1), random_order, 7, 100,
               offset=(r0, c0))
    np.testing.assert_array_equal(part, full)
    assert got[1].tolist() == ref[1].tolist() and (ref[1] > 0).any()
