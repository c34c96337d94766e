"""The grid graph-cut engine against the explicit float64 engines on ``to_energy()``:
the exact minimum cut and brute force for two labels, α-expansion for more."""

import numpy as np
import pytest

from graphclust.errors import InvalidConstraintError, InvalidParameterError
from graphclust.inference import (
    GridCutSolver, GridEnergy, alpha_expansion, brute_force, grid_cut, grid_offsets, mincut, solve,
)

CASES = [((7, 9), 4), ((6, 8), 8), ((4, 5, 3), 6), ((4, 4, 3), 18), ((3, 4, 4), 26)]


def random_grid(shape, conn, K, *, seed=0, dtype=np.float32, forbid=0.1, uniform=False):
    rng = np.random.default_rng(seed)
    offs = grid_offsets(len(shape), conn)
    U = rng.uniform(0.0, 1.0, shape + (K,)).astype(dtype)
    mask = rng.random(shape) < forbid
    U[mask, rng.integers(0, K)] = np.inf
    if uniform:
        W = [float(rng.uniform(0.1, 0.6)) for _ in offs]
    else:
        W = [rng.uniform(0.0, 0.8, shape).astype(np.float32) for _ in offs]
    return GridEnergy(U, offs, W)


def rel_close(a, b, rel=1e-5):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


# --------------------------------------------------------------------------- the energy
def test_grid_offsets():
    assert grid_offsets(2, 4) == [(0, 1), (1, 0)]
    assert sorted(grid_offsets(2, 8)) == sorted([(0, 1), (1, 0), (1, 1), (1, -1)])
    assert grid_offsets(3, 6) == [(0, 0, 1), (0, 1, 0), (1, 0, 0)]
    for conn, support in ((18, 2), (26, 3)):
        offs = grid_offsets(3, conn)
        assert len(offs) == conn // 2 == len(set(offs))
        # no offset is the opposite of another: the positive half
        assert not set(offs) & {tuple(-x for x in o) for o in offs}
        assert max(sum(map(abs, o)) for o in offs) == support
    assert grid_offsets(1, 2) == [(1,)]
    with pytest.raises(InvalidParameterError, match="connectivity must be one of \\[4, 8\\] for a 2-D grid"):
        grid_offsets(2, 6)
    with pytest.raises(InvalidParameterError, match="connectivity"):
        grid_offsets(3, 8)


@pytest.mark.parametrize("shape, conn", CASES)
@pytest.mark.parametrize("uniform", [False, True])
def test_evaluate_equals_the_explicit_energy(shape, conn, uniform):
    G = random_grid(shape, conn, 3, seed=1, forbid=0.0, uniform=uniform)
    E = G.to_energy()
    rng = np.random.default_rng(2)
    # each in-grid pair appears once, with positive weights only
    n_pairs = sum(np.prod([s - abs(o) for s, o in zip(shape, off)]) for off in G.offsets)
    assert E.n_edges <= n_pairs and (E.n_edges == n_pairs or not uniform)
    for _ in range(5):
        z = rng.integers(0, 3, G.n_pixels)
        assert G.evaluate(z) == pytest.approx(E.evaluate(z), rel=1e-12)
        assert G.evaluate(z.reshape(shape)) == G.evaluate(z)


def test_evaluate_counts_forbidden_labels_and_ignores_weights_past_the_border():
    U = np.zeros((2, 2, 2))
    U[0, 0, 1] = np.inf
    W = np.full((2, 2), 1.0)
    W[:, 1] = 1e6  # (p, p + (0, 1)) leaves the grid from the last column: ignored
    G = GridEnergy(U, [(0, 1)], [W])
    assert G.evaluate([[0, 1], [1, 1]]) == 1.0
    assert G.evaluate([[1, 1], [1, 1]]) == np.inf
    assert G.to_energy().n_edges == 2


def test_nbytes_and_dtypes():
    U = np.zeros((8, 8, 2), np.float32)
    G = GridEnergy(U, grid_offsets(2, 8), [np.ones((8, 8))] * 3 + [0.5])
    assert G.unary is U  # float32 C-contiguous: not copied
    assert G.nbytes == U.nbytes + 3 * 64 * 4 + 4
    assert G.weights[3] == 0.5 and G.weights[0].dtype == np.float32
    assert GridEnergy(np.zeros((2, 2, 2), np.int64), [(1, 0)], [1]).unary.dtype == np.float64


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kwargs, error, match", [
    (dict(weights=[np.ones((3, 4)), np.ones((4, 3))]), InvalidParameterError,
     r"weights\[1\] must be a number or an array of the grid's shape \(3, 4\), got shape \(4, 3\)"),
    (dict(offsets=[(0, 1), (1, 0, 0)]), InvalidParameterError, r"offsets\[1\] = \(1, 0, 0\) has length 3"),
    (dict(offsets=[(0, 1), (0, 0)]), InvalidParameterError, r"offsets\[1\] = \(0, 0\) is zero"),
    (dict(offsets=[(0, 1.5), (1, 0)]), InvalidParameterError, r"offsets\[0\] = \(0, 1.5\) must hold integers"),
    (dict(weights=[1.0]), InvalidParameterError, "2 offsets but 1 weights"),
    (dict(weights=[1.0, -0.5]), InvalidParameterError, r"weights\[1\] is -0.5; Potts weights must be finite and >= 0"),
    (dict(weights=[1.0, np.nan]), InvalidParameterError, r"weights\[1\] is nan"),
    (dict(weights=[1.0, np.inf]), InvalidParameterError, r"weights\[1\] is inf"),
    (dict(weights=[1.0, 1e300]), InvalidParameterError, r"weights\[1\] has values beyond the float32 range"),
])
def test_bad_energies_are_refused_naming_the_parameter(kwargs, error, match):
    args = dict(unary=np.zeros((3, 4, 2)), offsets=[(0, 1), (1, 0)], weights=[1.0, 1.0])
    args.update(kwargs)
    with pytest.raises(error, match=match):
        GridEnergy(**args)


def test_bad_weight_and_unary_entries_are_named():
    W = np.ones((3, 4))
    W[2, 1] = -1.0
    with pytest.raises(InvalidParameterError, match=r"weights\[0\] at pixel \(2, 1\) is -1.0"):
        GridEnergy(np.zeros((3, 4, 2)), [(0, 1)], [W])
    W[2, 1] = np.nan
    with pytest.raises(InvalidParameterError, match=r"weights\[0\] at pixel \(2, 1\) is nan"):
        GridEnergy(np.zeros((3, 4, 2)), [(0, 1)], [W])
    U = np.zeros((3, 4, 2))
    U[1, 2, 0] = np.nan
    with pytest.raises(InvalidParameterError, match=r"unary\[1, 2, 0\] is nan"):
        GridEnergy(U, [(0, 1)], [1.0])
    U[1, 2] = np.inf
    with pytest.raises(InvalidConstraintError, match=r"pixel \(1, 2\) has an infinite cost for every label"):
        GridEnergy(U, [(0, 1)], [1.0])
    with pytest.raises(InvalidParameterError, match="unary must have shape"):
        GridEnergy(np.zeros(4), [(1,)], [1.0])


def test_bad_engine_arguments():
    G = random_grid((3, 4), 4, 3)
    with pytest.raises(InvalidParameterError, match="grid_cut needs a GridEnergy, got Energy"):
        grid_cut(G.to_energy())
    with pytest.raises(InvalidParameterError, match=r"needs an Energy, got GridEnergy; minimise a GridEnergy with grid_cut"):
        solve(G)
    with pytest.raises(InvalidParameterError, match="max_iter must be >= 1"):
        grid_cut(G, max_iter=0)
    with pytest.raises(InvalidParameterError, match="tol must be >= 0"):
        grid_cut(G, tol=-1.0)
    with pytest.raises(InvalidParameterError, match=r"init must have the grid's shape \(3, 4\) or \(12,\)"):
        grid_cut(G, init=[0, 1])
    with pytest.raises(InvalidParameterError, match=r"init\[1, 2\] = 3 is not a label in \[0, 3\)"):
        grid_cut(G, init=np.where(np.arange(12) == 6, 3, 0))
    S = GridCutSolver(G)
    with pytest.raises(InvalidParameterError, match=r"index\[1\] = 12 is not a pixel in \[0, 12\)"):
        S.update_unary([0, 12], np.zeros((2, 3)))
    with pytest.raises(InvalidParameterError, match="index must hold distinct pixels"):
        S.update_unary([1, 1], np.zeros((2, 3)))
    with pytest.raises(InvalidParameterError, match=r"costs must have shape \(2, 3\), got \(2, 2\)"):
        S.update_unary([0, 1], np.zeros((2, 2)))
    with pytest.raises(InvalidParameterError, match=r"a boolean index must have the grid's shape \(3, 4\)"):
        S.update_unary(np.zeros((4, 3), bool), np.zeros((0, 3)))
    with pytest.raises(InvalidParameterError, match=r"costs\[1, 1\] \(pixel 0, 1\) is nan"):
        S.update_unary([0, 1], [[0, 0, 0], [0, np.nan, 0]])
    with pytest.raises(InvalidConstraintError, match=r"costs\[0\] \(pixel 0, 1\) forbids every label"):
        S.update_unary([1], [[np.inf] * 3])
    S32 = GridCutSolver(GridEnergy(np.zeros((3, 4, 2), np.float32), [(0, 1)], [1.0]))
    with pytest.raises(InvalidParameterError, match=r"costs\[0, 1\] \(pixel 0, 2\) is -1e\+300, beyond the range"):
        S32.update_unary([2], [[0.0, -1e300]])
    with pytest.raises(InvalidParameterError, match="GridCutSolver needs a GridEnergy"):
        GridCutSolver(G.to_energy())


# --------------------------------------------------------------------------- two labels: exact
@pytest.mark.parametrize("shape, conn", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_labels_give_the_minimum_cut(shape, conn, seed, dtype):
    G = random_grid(shape, conn, 2, seed=seed, dtype=dtype)
    res = grid_cut(G)
    ref = mincut(G.to_energy())
    assert rel_close(res.energy, ref.energy)
    assert res.energy == G.evaluate(res.labels)
    assert res.labels.shape == (G.n_pixels,) and res.labels.dtype == np.int64
    assert np.isfinite(res.energy)  # forbidden labels respected
    assert res.info["moves"] == "cut"


@pytest.mark.parametrize("conn", [4, 8])
def test_two_labels_on_a_larger_noisy_image(conn):
    """Long augmenting paths and many orphans: a 60x70 noisy disc."""
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[0:60, 0:70]
    truth = (yy - 30) ** 2 + (xx - 35) ** 2 < 20 ** 2
    img = truth + rng.normal(0.0, 0.8, truth.shape)
    U = np.stack([img ** 2, (img - 1) ** 2], -1)
    W = [rng.uniform(0.3, 1.5, truth.shape) for _ in range(conn // 2)]
    G = GridEnergy(U, grid_offsets(2, conn), W)
    res = grid_cut(G)
    assert rel_close(res.energy, solve(G.to_energy(), "mincut").energy)
    assert (res.labels.reshape(truth.shape) == truth).mean() > 0.9


@pytest.mark.parametrize("shape", [(2, 5), (3, 3), (1, 7), (2, 2, 2)])
@pytest.mark.parametrize("seed", range(4))
def test_two_labels_on_tiny_grids_against_brute_force(shape, seed):
    conn = 8 if len(shape) == 2 else 26
    G = random_grid(shape, conn, 2, seed=seed, dtype=np.float64, forbid=0.2)
    res = grid_cut(G)
    ref = brute_force(G.to_energy())
    assert rel_close(res.energy, ref.energy)


# --------------------------------------------------------------------------- more labels: expansion
@pytest.mark.parametrize("shape, conn", CASES)
@pytest.mark.parametrize("K", [3, 4])
@pytest.mark.parametrize("seed", [0, 1])
def test_more_labels_match_alpha_expansion(shape, conn, K, seed):
    G = random_grid(shape, conn, K, seed=seed)
    E = G.to_energy()
    res = grid_cut(G)
    ref = alpha_expansion(E)
    # the same moves in the same order from the same labelling: the same local minimum
    assert res.energy <= ref.energy * (1 + 1e-5)
    assert rel_close(res.energy, ref.energy)
    assert np.isfinite(res.energy) and res.energy == G.evaluate(res.labels)
    assert res.info["moves"] == "expansion" and res.converged
    # from another start: never above it, and equal to expansion from there
    init = np.random.default_rng(seed).integers(0, K, G.n_pixels)
    init = np.where(np.isinf(G.unary.reshape(-1, K)[np.arange(G.n_pixels), init]),
                    G.unary.reshape(-1, K).argmin(1), init)
    warm = grid_cut(G, init=init)
    assert warm.energy <= G.evaluate(init)
    assert rel_close(warm.energy, alpha_expansion(E, init=init).energy)


def test_expansion_history_never_increases_and_callback_stops():
    G = random_grid((12, 12), 8, 4, seed=5)
    res = grid_cut(G, init=np.zeros(144, int))
    assert all(b <= a for a, b in zip(res.history, res.history[1:]))
    seen = []
    stopped = grid_cut(G, init=np.zeros(144, int), callback=lambda it, z, e: seen.append((it, e)) or True)
    assert stopped.iterations == 1 and len(seen) == 1 and seen[0][1] == pytest.approx(stopped.energy)


def test_init_on_a_forbidden_label_starts_from_the_argmin_there():
    U = np.zeros((1, 4, 3))
    U[0, 0] = [np.inf, 0.0, 1.0]
    G = GridEnergy(U, [(0, 1)], [0.1])
    res = grid_cut(G, init=np.zeros(4, int))
    assert res.labels[0] != 0 and np.isfinite(res.energy)


# --------------------------------------------------------------------------- warm re-solves
@pytest.mark.parametrize("conn", [4, 8])
@pytest.mark.parametrize("seed", range(3))
def test_warm_two_label_solves_equal_cold_ones(conn, seed):
    rng = np.random.default_rng(seed)
    G = random_grid((15, 17), conn, 2, seed=seed)
    S = GridCutSolver(G)
    first = S.solve()
    assert not first.info["warm"] and rel_close(first.energy, grid_cut(G).energy)
    for k in range(6):
        m = int(rng.integers(1, 30))
        idx = rng.choice(G.n_pixels, m, replace=False)
        C = rng.uniform(0.0, 2.0, (m, 2))
        C[rng.random(m) < 0.3, int(rng.integers(0, 2))] = np.inf
        if k % 2:
            mask = np.zeros(G.shape, bool)
            mask.reshape(-1)[idx] = True
            S.update_unary(mask, C[np.argsort(idx)])
        else:
            S.update_unary(idx, C)
        warm = S.solve()
        cold = grid_cut(S.genergy)
        assert warm.info["warm"] and warm.info["n_changed"] == m
        assert rel_close(warm.energy, cold.energy)
        assert rel_close(warm.energy, mincut(S.genergy.to_energy()).energy)
    assert S.flow_bytes == G.n_pixels * (4 * G.n_offsets + 19)
    assert np.array_equal(G.unary, random_grid((15, 17), conn, 2, seed=seed).unary)  # the input is not changed


def test_warm_solve_resumes_with_little_work():
    """A change far from the cut leaves most of the flow in place: the re-solve equals
    a cold one, and a repeated solve with no change is the same cut."""
    G = random_grid((40, 40), 4, 2, seed=7, forbid=0.0)
    S = GridCutSolver(G)
    a = S.solve()
    b = S.solve()
    assert np.array_equal(a.labels, b.labels) and b.info["n_changed"] == 0
    S.update_unary([0], [[0.0, np.inf]])
    c = S.solve()
    assert c.labels[0] == 0 and rel_close(c.energy, grid_cut(S.genergy).energy)


@pytest.mark.parametrize("reuse_flows", [True, False])
@pytest.mark.parametrize("shape, conn", [((10, 11), 8), ((5, 4, 6), 26)])
@pytest.mark.parametrize("seed", range(2))
def test_warm_expansion_equals_expansion_from_the_last_labels(reuse_flows, shape, conn, seed):
    """Every move of a warm solve is the exact cut of its move graph, whether it starts
    from the move's stored flow (moved to the new labels and unaries) or from zero: the
    same moves as alpha_expansion from the last labelling, never above it."""
    rng = np.random.default_rng(seed)
    G = random_grid(shape, conn, 3, seed=seed)
    S = GridCutSolver(G, reuse_flows=reuse_flows)
    first = S.solve()
    assert rel_close(first.energy, grid_cut(G).energy)
    m, n = G.n_offsets, G.n_pixels
    assert S.flow_bytes == (n * (3 * (4 * m + 15) + 17) if reuse_flows else 0)
    for k in range(4):
        idx = rng.choice(n, 8, replace=False)
        C = rng.uniform(0.0, 2.0, (8, 3))
        C[k % 8, k % 3] = np.inf
        S.update_unary(idx, C)
        prev = S.labels.copy()
        allowed = np.isfinite(S.genergy.unary.reshape(-1, 3)[np.arange(n), prev])
        start = np.where(allowed, prev, S.genergy.unary.reshape(-1, 3).argmin(1))  # as the solver repairs it
        res = S.solve()
        assert res.info["warm"] and res.energy <= S.genergy.evaluate(start)
        assert rel_close(res.energy, alpha_expansion(S.genergy.to_energy(), init=start).energy)
        assert ("n_touched" in res.info) == reuse_flows


# --------------------------------------------------------------------------- units
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("factor", [1e-8, 1e8])
def test_the_labels_do_not_depend_on_the_units(K, factor):
    rng = np.random.default_rng(4)
    shape = (9, 10)
    U = rng.uniform(0.0, 1.0, shape + (K,))
    W = [rng.uniform(0.1, 0.7, shape) for _ in range(4)]
    base = grid_cut(GridEnergy(U, grid_offsets(2, 8), W))
    res = grid_cut(GridEnergy(U * factor, grid_offsets(2, 8), [w * factor for w in W]))
    np.testing.assert_array_equal(res.labels, base.labels)
    assert res.energy == pytest.approx(base.energy * factor, rel=1e-6)


# --------------------------------------------------------------------------- odd shapes and offsets
@pytest.mark.parametrize("offsets", [[(0, 2), (2, -1)], [(-1, 1), (0, 3), (1, 0)], [(0, 1), (0, -1)]])
@pytest.mark.parametrize("K", [2, 3])
def test_any_offsets_long_range_negative_or_opposite(offsets, K):
    """Offsets are not limited to the standard neighbourhoods: long-range ones, ones
    whose first coordinate is negative, and an offset with its opposite (two terms on
    each pair) all give the explicit engines' answer."""
    rng = np.random.default_rng(len(offsets) + K)
    shape = (6, 7)
    U = rng.uniform(0.0, 1.0, shape + (K,))
    G = GridEnergy(U, offsets, [rng.uniform(0.0, 0.7, shape) for _ in offsets])
    ref = mincut(G.to_energy()) if K == 2 else alpha_expansion(G.to_energy())
    assert rel_close(grid_cut(G).energy, ref.energy)


def test_one_dimensional_and_single_label_grids():
    U = np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.0], [0.0, 1.0]])
    G = GridEnergy(U, grid_offsets(1, 2), [0.5])
    assert grid_cut(G).labels.tolist() == mincut(G.to_energy()).labels.tolist()
    one = GridEnergy(np.ones((3, 3, 1)), grid_offsets(2, 4), [1.0, 1.0])
    res = grid_cut(one)
    assert res.labels.tolist() == [0] * 9 and res.energy == 9.0
    res3 = GridCutSolver(one).solve()
    assert res3.energy == 9.0


def test_weights_as_one_stacked_array_and_non_contiguous_unaries():
    rng = np.random.default_rng(9)
    U = np.asfortranarray(rng.uniform(0.0, 1.0, (5, 6, 2)))
    W = rng.uniform(0.0, 1.0, (2, 5, 6))
    G = GridEnergy(U, grid_offsets(2, 4), W)
    assert np.array_equal(G.weights[1], W[1].astype(np.float32))
    assert rel_close(grid_cut(G).energy, mincut(G.to_energy()).energy)


def test_progress_bar_runs(capsys):
    G = random_grid((8, 8), 4, 3, seed=2)
    assert rel_close(grid_cut(G, progress=True).energy, alpha_expansion(G.to_energy()).energy)


_STALE_MARKS_CASE = """
import numpy as np
from graphclust.inference import GridCutSolver, GridEnergy, grid_offsets, mincut
rng = np.random.default_rng(123)
for trial in range(138):  # the 138th instance of a randomised sweep: (6, 11), 8-connected
    nd = 2 if trial % 3 else 3
    shape = tuple(int(x) for x in rng.integers(2, 14 if nd == 2 else 6, nd))
    conn = [4, 8][trial % 2] if nd == 2 else [6, 18, 26][trial % 3]
    offs = grid_offsets(nd, conn)
    U = rng.random(shape + (2,)).astype(np.float32) * rng.choice([1, 10, 100])
    W = [(rng.random(shape) * rng.choice([0.1, 1, 5])).astype(np.float32) for _ in offs]
    S = GridCutSolver(GridEnergy(U, offs, W)) if trial == 137 else None
    if S is not None:
        S.solve()
    for k in range(8):
        m = int(rng.integers(1, max(2, int(np.prod(shape)) // 3)))
        idx = rng.choice(int(np.prod(shape)), m, replace=False)
        C = rng.random((m, 2)) * rng.choice([1, 10, 100])
        r = rng.random(m)
        C[r < 0.15, 0] = np.inf
        C[(r >= 0.15) & (r < 0.3), 1] = np.inf
        if S is not None:
            S.update_unary(idx, C)
            e, ref = S.solve().energy, mincut(S.genergy.to_energy()).energy
            assert abs(e - ref) <= 1e-5 * abs(ref), (k, e, ref)
print("ok")
"""


def test_warm_solve_does_not_trust_the_marks_of_the_last_search():
    """Regression: the resumed search took the timestamps of the previous search as
    "verified rooted at this time", so an orphan could adopt its own descendant and the
    augmentation walked a parent cycle forever. Run in a subprocess so that a relapse
    fails by timeout instead of hanging the suite."""
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _STALE_MARKS_CASE], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ))
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_solver_with_an_explicit_init_after_kept_flows():
    """A solve from a given labelling (not the last one) still makes exact moves: the
    kept flows are moved to whatever labels the moves start from."""
    rng = np.random.default_rng(5)
    G = random_grid((9, 12), 8, 4, seed=5, forbid=0.0)
    S = GridCutSolver(G)
    S.solve()
    for _ in range(3):
        init = rng.integers(0, 4, G.n_pixels)
        res = S.solve(init=init)
        assert not res.info["warm"]
        assert rel_close(res.energy, alpha_expansion(G.to_energy(), init=init).energy)


def test_a_stacked_float32_weight_buffer_is_used_without_a_copy():
    """A C-contiguous float32 ``(n_offsets, *shape)`` array is the energy's weight
    buffer itself (segmentation builds its weights that way to save one copy); the
    energy and the cut are those of the same weights given as a list, and the buffer
    is checked like any other weights."""
    rng = np.random.default_rng(3)
    offsets = grid_offsets(2, 8)
    U = rng.random((9, 11, 2)).astype(np.float32)
    W = rng.random((len(offsets), 9, 11)).astype(np.float32)
    stacked = GridEnergy(U, offsets, W)
    listed = GridEnergy(U, offsets, [w.copy() for w in W])
    assert np.shares_memory(stacked._w, W) and not np.shares_memory(listed._w, W)
    z = rng.integers(0, 2, size=U.shape[:-1])
    assert stacked.evaluate(z) == pytest.approx(listed.evaluate(z), rel=1e-12)
    np.testing.assert_array_equal(grid_cut(stacked).labels, grid_cut(listed).labels)
    W[1, 4, 5] = -1.0
    with pytest.raises(InvalidParameterError, match=r"weights\[1\] at pixel \(4, 5\) is -1.0"):
        GridEnergy(U, offsets, W)


@pytest.mark.parametrize("seed", range(3))
def test_a_clock_restart_during_the_search_keeps_the_cut_exact(seed):
    """The search's timestamps are int32; when the clock reaches its limit every mark
    is made stale (and every distance the largest, so the re-parenting rule cannot
    close a cycle). Warm solves whose searches cross the limit still find the exact
    minimum cut."""
    from graphclust.inference.grid_cut import _TS_LIMIT

    rng = np.random.default_rng(seed)
    G = random_grid((24, 26), 8, 2, seed=seed)
    S = GridCutSolver(G)
    S.solve()
    for k in range(4):
        S._state.clock[0] = _TS_LIMIT - 1 - 3 * k  # the limit is crossed at entry, or a few augmentations in
        idx = rng.choice(G.n_pixels, 40, replace=False)
        S.update_unary(idx, rng.uniform(0.0, 2.0, (40, 2)))
        warm = S.solve()
        assert S._state.clock[0] < _TS_LIMIT
        assert rel_close(warm.energy, mincut(S.genergy.to_energy()).energy)


@pytest.mark.parametrize("shape,conn", [((15, 17), 4), ((15, 17), 8), ((5, 6, 7), 26)])
@pytest.mark.parametrize("seed", range(3))
def test_the_cut_from_terminal_capacities_is_grid_cuts(shape, conn, seed):
    """``grid_cut_terminals`` (the unary given as ``U1 − U0``, consumed) finds the cut
    ``grid_cut`` finds, and its zero-unary ``pairs`` scores the pair part exactly."""
    from graphclust.inference import grid_cut_terminals

    G = random_grid(shape, conn, 2, seed=seed)
    with np.errstate(invalid="ignore"):
        t = (G.unary[..., 1] - G.unary[..., 0]).astype(np.float32)
    labels, pairs, flow = grid_cut_terminals(t, G.offsets.tolist(), G.weights)
    ref = grid_cut(G)
    z = labels.reshape(-1).astype(np.int64)
    assert labels.shape == shape and labels.dtype == bool
    assert rel_close(G.evaluate(z), ref.energy)
    assert rel_close(G.evaluate(z), mincut(G.to_energy()).energy)
    unary_part = float(np.take_along_axis(G.unary.reshape(-1, 2), z[:, None], axis=1).sum(dtype=np.float64))
    assert pairs.evaluate(z) == pytest.approx(G.evaluate(z) - unary_part, rel=1e-9, abs=1e-9)
    assert flow == pytest.approx(ref.info["flow_value"], rel=1e-5)


def test_the_cut_from_terminal_capacities_refuses_what_it_cannot_overwrite():
    from graphclust.inference import grid_cut_terminals

    t = np.zeros((3, 4), np.float32)
    with pytest.raises(InvalidParameterError, match="writeable C-contiguous float32"):
        grid_cut_terminals(t.astype(np.float64), [(0, 1)], [1.0])
    with pytest.raises(InvalidParameterError, match="writeable C-contiguous float32"):
        grid_cut_terminals(t.T, [(0, 1)], [1.0])
    t[1, 2] = np.nan
    with pytest.raises(InvalidParameterError, match=r"pixel \(1, 2\) is NaN"):
        grid_cut_terminals(t, [(0, 1)], [1.0])
