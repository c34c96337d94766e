"""graphclust.distributed on a two-process LocalCluster over loopback.

Oracles: the single-machine engines and :class:`graphclust.energy.Energy` on the same
grid energy, local fits of the same estimator, and a plain-numpy run of the synchronous
(Jacobi) k-means / DP-means iteration written here.
"""

import functools
import os
import resource
import time

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.base import canonical_labels
from graphclust.energy import Energy
from graphclust.errors import InvalidParameterError
from graphclust.inference import solve

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
gd = pytest.importorskip("graphclust.distributed")
from graphclust.distributed import _common as gd_common  # noqa: E402  (private helpers tested below)
from graphclust.distributed import grid as gd_grid  # noqa: E402


def _cluster(**kw):
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                    host="127.0.0.1", **kw)


@pytest.fixture(scope="module")
def client():
    with _cluster() as cluster, distributed.Client(cluster, timeout="60s") as c:
        c.wait_for_workers(2, timeout=60)
        yield c


# ---------------------------------------------------------------------------- helpers
def _grid_problem(h=64, w=64, K=4, seed=0):
    """A piecewise-constant image with K levels plus noise, and its Gaussian unaries."""
    rng = np.random.default_rng(seed)
    truth = (np.add.outer(np.arange(h) // 16, np.arange(w) // 21) % K).astype(int)
    image = truth / (K - 1) + rng.normal(scale=0.35, size=truth.shape)
    levels = np.arange(K) / (K - 1)
    unary = (image[..., None] - levels) ** 2 / (2 * 0.35**2)
    return image, unary


def _single_machine_energy(unary, image, smoothness, beta):
    h, w, K = unary.shape
    edges, weights, _ = gc.grid_arrays(image, beta=beta)
    return Energy(unary.reshape(-1, K), edges, smoothness * weights)


def _greedy_colours(n, pairs):
    """Greedy colouring of the constraint graph over its endpoints in increasing order."""
    ends = sorted({int(v) for p in pairs for v in p})
    nbrs = {v: set() for v in ends}
    for a, b in pairs:
        nbrs[int(a)].add(int(b))
        nbrs[int(b)].add(int(a))
    colour = np.full(n, -1)
    for v in ends:
        used = {colour[u] for u in nbrs[v] if colour[u] >= 0}
        c = 0
        while c in used:
            c += 1
        colour[v] = c
    return colour


def _jacobi_kmeans(X, C, pairs=(), weights=(), lam=None, max_iter=50):
    """The synchronous algorithm of chunked_kmeans, in plain numpy on one machine."""
    n = len(X)
    colour = _greedy_colours(n, pairs)
    n_col = int(colour.max()) + 1 if len(pairs) else 1
    z = np.full(n, -1)
    C = np.array(C, dtype=float)
    quiet = 0
    for it in range(1, max_iter + 1):
        dist = ((X[:, None, :] - C[None]) ** 2).sum(-1)
        viol = np.zeros_like(dist)
        for (a, b), w in zip(pairs, weights):
            for i, j in ((a, b), (b, a)):
                if z[j] < 0:
                    continue
                if w > 0:
                    viol[i] += np.where(np.arange(len(C)) != z[j], w, 0.0)
                else:
                    viol[i, z[j]] -= w
        # ranking: distortion + violations; a labelled point moves only when the new
        # label is cheaper by more than the ICM engines' relative 1e-12
        cost = dist + viol
        rows = np.arange(n)
        new = cost.argmin(1)
        now = cost[rows, np.maximum(z, 0)]
        stay = (z >= 0) & ~(cost[rows, new] < np.where(np.isfinite(now), now - 1e-12 * (1 + np.abs(now)), now))
        new[stay] = z[stay]
        keep = (z >= 0) & (colour >= 0) & (colour != (it - 1) % n_col)
        new[keep] = z[keep]
        changed = int((new != z).sum())
        worst = cost[rows, new]
        z = new
        for k in range(len(C)):
            if (z == k).any():
                C[k] = X[z == k].mean(0)
        quiet = quiet + 1 if changed == 0 else 0
        if quiet >= n_col and lam is not None and worst.max() > lam:
            C = np.vstack([C, X[int(np.argmax(worst))]])
            quiet = 0
        if quiet >= n_col:
            break
    return z, C, it


# ---------------------------------------------------------------------------- map_fit
def _peak_rss():
    """Peak RSS of this process (VmHWM: ru_maxrss would carry the parent's over exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def _die_soon():
    """Run on a worker: exit the process abruptly 50 ms after returning."""
    import asyncio

    asyncio.get_running_loop().call_later(0.05, os._exit, 1)

def test_map_fit_matches_local_fits_and_reports_failures(client, tmp_path):
    """Every good problem gets exactly the labels of a local fit; a missing file and an
    infeasible problem yield errors without losing the others."""
    X, y = gc.datasets.load_iris()
    S = gc.SideInfo.sample(y, n_pairs=30, random_state=0)
    path = tmp_path / "barbell.graphml"
    gc.write_graphml(path, nx.barbell_graph(5, 1), gc.SideInfo.from_pairs(cannot=[(0, 10)]))
    bad = nx.path_graph(3)
    knn = gc.knn_graph(X, n_neighbors=10)
    problems = [str(path), (knn, S), nx.karate_club_graph(), str(tmp_path / "nope.graphml"), bad]
    est = gc.SpectralClustering(n_clusters=4, random_state=0)
    outs = list(gd.map_fit(est, problems, client=client, ordered=True))
    assert [o.index for o in outs] == list(range(len(problems)))
    assert [o.ok for o in outs] == [True, True, True, False, False]
    assert isinstance(outs[3].error, (FileNotFoundError, gc.errors.GraphMLError, OSError))
    assert "Traceback" in outs[3].traceback
    assert isinstance(outs[4].error, gc.errors.GraphclustError)  # 4 clusters on 3 nodes
    G, S2 = gc.read_graphml(path)
    locals_ = [gc.SpectralClustering(n_clusters=4, random_state=0).fit(d, s).labels_
               for d, s in [(G, S2), (knn, S), (nx.karate_club_graph(), None)]]
    for o, lab in zip(outs[:3], locals_):
        np.testing.assert_array_equal(o.labels, lab)
        assert o.worker is not None
    assert not hasattr(est, "labels_")  # the estimator given is not modified


@pytest.mark.slow
def test_map_fit_survives_a_killed_worker(client):
    """A worker process killed mid-run: Dask re-runs its tasks, every answer is right."""
    X, y = gc.datasets.load_iris()
    problems = [(X[i % 3::2], gc.SideInfo.sample(y[i % 3::2], n_pairs=20, random_state=i)) for i in range(16)]
    # restarts make a fit last long enough (tens of ms) that the kill lands mid-run
    est = gc.RDPMeans(n_clusters=3, n_init=20, random_state=0)
    expected = [gc.RDPMeans(n_clusters=3, n_init=20, random_state=0).fit(d, s).labels_ for d, s in problems]
    before = set(client.scheduler_info()["workers"])
    outs, killed = [], False
    for out in gd.map_fit(est, problems, client=client, max_pending=16):
        outs.append(out)
        if not killed:
            victim = next(a for a in before if a != out.worker) if out.worker in before else sorted(before)[0]
            client.run(_die_soon, workers=[victim])
            killed = True
    assert len(outs) == len(problems) and all(o.ok for o in outs)
    for o in outs:
        np.testing.assert_array_equal(o.labels, expected[o.index])
    deadline = time.monotonic() + 60  # the victim exits 50 ms after the kill order
    while victim in client.scheduler_info()["workers"] and time.monotonic() < deadline:
        time.sleep(0.05)
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker
    assert victim not in client.scheduler_info()["workers"]


def _exit_once(marker, *_):
    """ICM callback run inside a tile task: the first call anywhere kills its worker
    process (the marker file makes the retried task go on)."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)
    return False


def test_grid_inference_survives_a_killed_worker(client, tmp_path):
    """A worker process dies inside a tile update of the first round: Dask re-runs the
    lost work and the tiled run ends with the labels of an undisturbed run."""
    image, unary = _grid_problem(64, 64)
    U = da.from_array(unary, chunks=(16, 16, 4))
    I = da.from_array(image, chunks=(16, 16))
    marker = tmp_path / "killed"
    opts = {"order": "fixed", "callback": functools.partial(_exit_once, str(marker))}
    before = set(client.scheduler_info()["workers"])
    res = gd.grid_inference(U, I, smoothness=1.5, client=client, engine_options=opts)
    labels = res.labels.compute()
    assert marker.exists()
    client.wait_for_workers(2, timeout=60)
    assert set(client.scheduler_info()["workers"]) != before  # one worker was replaced
    with dask.config.set(scheduler="threads"):  # the same run, undisturbed (the marker exists now)
        ref = gd.grid_inference(U, I, smoothness=1.5, engine_options=opts)
    assert res.converged and ref.n_rounds == res.n_rounds
    np.testing.assert_array_equal(labels, ref.labels.compute())


# ---------------------------------------------------------------------------- grids
@pytest.mark.parametrize("chunks", [(16, 16), (20, 13)])
def test_grid_energy_equals_energy_evaluate(client, chunks):
    """The chunk-by-chunk energy equals Energy.evaluate on the whole grid, for regular
    and ragged chunks and random labels."""
    image, unary = _grid_problem(48, 50, K=3)
    labels = np.random.default_rng(1).integers(0, 3, size=image.shape)
    U, I, Z = (da.from_array(a, chunks=chunks + (-1,) * (a.ndim - 2)) for a in (unary, image, labels))
    E = _single_machine_energy(unary, image, 0.7, 2.0)
    got = gd.grid_energy(Z, U, I, smoothness=0.7, beta=2.0, client=client)
    assert got == pytest.approx(E.evaluate(labels.ravel()), rel=1e-12)
    # constant smoothness: every cut edge costs 0.7
    cut = (labels[:, 1:] != labels[:, :-1]).sum() + (labels[1:] != labels[:-1]).sum()
    uni = np.take_along_axis(unary, labels[..., None], 2).sum()
    assert gd.grid_energy(Z, U, smoothness=0.7, client=client) == pytest.approx(uni + 0.7 * cut, rel=1e-12)


def test_tiled_bp_on_cluster_within_half_percent_of_single_machine(client):
    """Tiled BP on a 64x64, K=4 image in 32x32 chunks, on two worker processes, reaches
    an energy within 0.5 % of BP on the whole image; grid_energy and Energy.evaluate
    agree on it, and the global beta is the one grid_arrays computes."""
    image, unary = _grid_problem()
    U = da.from_array(unary, chunks=(32, 32, 4))
    I = da.from_array(image, chunks=(32, 32))
    res = gd.grid_inference(U, I, method="bp", smoothness=1.5, max_rounds=10, client=client)
    labels = res.labels.compute()
    assert labels.shape == (64, 64) and res.labels.chunks == U.chunks[:2]
    assert res.converged and res.n_changes[-1] == 0
    E = _single_machine_energy(unary, image, 1.5, res.beta)
    _, weights, _ = gc.grid_arrays(image)
    np.testing.assert_allclose(E.weights, 1.5 * weights, rtol=1e-9)  # same global beta
    tiled = E.evaluate(labels.ravel())
    assert gd.grid_energy(res.labels, U, I, smoothness=1.5, beta=res.beta, client=client) == pytest.approx(tiled)
    single = solve(E, "bp").energy
    assert tiled <= 1.005 * single, (tiled, single)


@pytest.mark.parametrize("method, halo", [("icm", 1), ("icm", 4), ("bp", 8)])
def test_tiled_inference_within_half_percent_in_process(method, halo):
    """16x16 tiles on dask's thread scheduler: tiled BP within 0.5 % of BP on the whole
    image; ICM, whose local minima depend on the visiting order, within 0.5 % on
    average over seeds of the single-machine average. Every run ends below its start."""
    image, unary = _grid_problem()
    U = da.from_array(unary, chunks=(16, 16, 4))
    I = da.from_array(image, chunks=(16, 16))
    seeds = range(3) if method == "icm" else [0]
    tiled = []
    with dask.config.set(scheduler="threads"):
        for seed in seeds:
            res = gd.grid_inference(U, I, method=method, smoothness=1.5, halo=halo, max_rounds=30,
                                    random_state=seed)
            assert res.converged
            tiled.append(res.labels.compute().ravel())
    E = _single_machine_energy(unary, image, 1.5, res.beta)
    start = E.evaluate(unary.reshape(-1, 4).argmin(1))
    energies = [E.evaluate(z) for z in tiled]
    assert max(energies) < start
    single = [solve(E, method, random_state=s).energy for s in range(5 if method == "icm" else 1)]
    assert np.mean(energies) <= 1.005 * np.mean(single), (energies, single)


@pytest.mark.parametrize("channels", [None, 3])
@pytest.mark.parametrize("halo", [1, 3])
def test_global_beta_from_halo_strips_equals_grid_arrays(channels, halo):
    """beta computed from the blocks and their halo strips (ragged chunks, grey and
    colour) equals grid_arrays' beta on the whole image, and grid_energy's default beta
    is that beta."""
    rng = np.random.default_rng(halo)
    image = rng.random((23, 31) if channels is None else (23, 31, channels))
    chunks = ((7, 9, 7), (10, 5, 16)) + (() if channels is None else ((channels,),))
    I = da.from_array(image, chunks=chunks)
    rings = gd_grid._halo_rings(I, halo)
    got = gd_grid._ring_beta(I, rings, None)
    diffs = [np.diff(image, axis=1) ** 2, np.diff(image, axis=0) ** 2]
    mean = sum(d.sum() for d in diffs) / (23 * 30 + 22 * 31)
    assert got == pytest.approx(0.5 / mean, rel=1e-12)
    labels = rng.integers(0, 2, size=(23, 31))
    U = da.from_array(rng.random((23, 31, 2)), chunks=chunks[:2] + ((2,),))
    default = gd.grid_energy(labels, U, I, chunks=chunks[:2])
    assert default == pytest.approx(gd.grid_energy(labels, U, I, beta=0.5 / mean, chunks=chunks[:2]), rel=1e-12)
    assert default != pytest.approx(gd.grid_energy(labels, U, I, beta=0.0, chunks=chunks[:2]), rel=1e-3)
    if channels is None:  # grid_arrays' own beta gives the same weights
        np.testing.assert_allclose(gc.grid_arrays(image, beta=got)[1], gc.grid_arrays(image)[1], rtol=1e-9)


def test_tiled_icm_one_tile_is_the_engine(client):
    """With a single chunk the tiled run is exactly one engine run from the argmin."""
    image, unary = _grid_problem(24, 24, K=3)
    U = da.from_array(unary, chunks=(24, 24, 3))
    res = gd.grid_inference(U, da.from_array(image, chunks=24), smoothness=1.0, beta=1.0,
                            engine_options={"order": "fixed"}, client=client)
    E = _single_machine_energy(unary, image, 1.0, 1.0)
    np.testing.assert_array_equal(res.labels.compute().ravel(), solve(E, "icm", order="fixed").labels)


@pytest.mark.parametrize("numblocks", [(4, 4), (3, 5), (1, 1), (2, 7)])
@pytest.mark.parametrize("nthreads", [{"a": 1, "b": 1}, {"a": 1, "b": 2}, {"a": 2, "b": 1, "c": 1}])
def test_tile_plan_shares_each_colour_by_threads(numblocks, nthreads):
    """Each checkerboard colour's tiles are split over the workers in proportion to their
    threads (shares within one tile of exact); blocks already on a worker under its share
    stay there."""
    total = sum(nthreads.values())
    rng = np.random.default_rng(sum(numblocks))
    workers = sorted(nthreads)
    current = {(i, j): workers[0] if rng.random() < 0.8 else workers[-1]
               for i in range(numblocks[0]) for j in range(numblocks[1])}
    for cur in (None, current):
        plan = gd_grid._tile_plan(numblocks, nthreads, cur)
        assert set(plan) == {(i, j) for i in range(numblocks[0]) for j in range(numblocks[1])}
        for colour in (0, 1):
            tiles = [t for t in plan if sum(t) % 2 == colour]
            for w in workers:
                share = len(tiles) * nthreads[w] / total
                assert abs(sum(plan[t] == w for t in tiles) - share) < 1, (colour, w, plan)
    # the most tiles possible stay where their blocks are: per colour and worker, the
    # smaller of what it holds and its share
    kept = sum(plan[t] == current[t] for t in plan)
    best = 0
    for colour in (0, 1):
        tiles = [t for t in plan if sum(t) % 2 == colour]
        best += sum(min(sum(current[t] == w for t in tiles), sum(plan[t] == w for t in tiles)) for w in workers)
    assert kept == best


def test_plan_filled_after_the_blocks_are_built_still_places_them(client):
    """grid_inference builds numpy inputs' blocks under an empty plan and fills it once
    the blocks are known: the annotation is read at submission, so every persisted
    block lands on its planned worker."""
    _, unary = _grid_problem(64, 64, seed=4)
    workers = sorted(client.scheduler_info()["workers"])
    plan = {}
    with gd_grid._placed(plan):
        U, _ = gd_grid._check_grid(unary, None, (16, 16), 1)
    plan.update({(i, j): workers[(i + 3 * j) % 2] for i in range(4) for j in range(4)})
    (U,) = gd_common._persist(client, U, optimize=False)
    distributed.wait(U)
    placed = client.who_has(U)
    assert len(placed) == 16
    for key, where in placed.items():
        assert list(where) == [plan[key[1:3]]], key

@pytest.mark.parametrize("max_rounds", [2, 20])
def test_speculative_rounds_give_the_local_run(client, max_rounds):
    """On the cluster each round is submitted before the previous one is counted (and
    dropped when that one changed nothing); labels, rounds and changes equal those of
    the same run on dask's threaded scheduler, stopped by max_rounds or converged."""
    image, unary = _grid_problem(64, 64, seed=3)
    U = da.from_array(unary, chunks=(16, 16, 4))
    I = da.from_array(image, chunks=(16, 16))
    res = gd.grid_inference(U, I, smoothness=1.5, max_rounds=max_rounds, client=client, random_state=5)
    with dask.config.set(scheduler="threads"):
        assert gd_common._distributed_client(None) is None  # no plan, no speculation
        ref = gd.grid_inference(U, I, smoothness=1.5, max_rounds=max_rounds, random_state=5)
    assert res.converged == ref.converged == (max_rounds == 20)
    assert (res.n_rounds, res.n_changes) == (ref.n_rounds, ref.n_changes)
    np.testing.assert_array_equal(res.labels.compute(), ref.labels.compute())


def test_half_round_tasks_carry_the_plan_and_priorities():
    """The graph of a half round, built under the plan and left unoptimised (as
    grid_inference persists it), carries a loose worker restriction per block and runs
    the key-keeping tasks before the tile updates; graph optimisation would drop these
    annotations."""
    from dask.base import collections_to_expr

    image, unary = _grid_problem(48, 48)
    U = da.from_array(unary, chunks=(16, 16, 4))
    z = U.argmin(-1).astype(np.int32)
    plan = gd_grid._tile_plan((3, 3), {"tcp://a:1": 1, "tcp://b:1": 1})
    with gd_grid._placed(plan):
        half = gd_grid._half_round(z, U, None, gd_grid._halo_rings(U, 1), 1, 1, smoothness=1.0,
                                   method="icm", options=None, seed=0, round_=0)
    ann = collections_to_expr([half], False).__dask_annotations__()
    tiles = [(half.name, i, j) for i in range(3) for j in range(3) if (i + j) % 2 == 1]
    ours = [k for k in ann["workers"] if k[0] != z.name and k[0] != U.name]
    assert set(tiles) < set(ours)
    for key in ours:
        assert ann["workers"][key] == [plan[key[1:3]]] and ann["allow_other_workers"][key] is True
    half_round = [k for k in ours if k[0].startswith("grid-half-round")]
    assert len(half_round) == 9
    for key in half_round:
        assert ann["priority"][key] == (0 if key in tiles else 1)
    assert not collections_to_expr([half], True).optimize().__dask_annotations__()


@pytest.mark.parametrize("halo", [1, 3])
def test_halo_strips_rebuild_the_overlapping_window(halo):
    """Every block extended by its neighbours' strips is exactly the window of the whole
    array around it, cut off where the grid ends (map_overlap's boundary="none"), for
    ragged chunks and a trailing axis; a half round is one task per block."""
    x = np.random.default_rng(0).random((23, 30, 2))
    X = da.from_array(x, chunks=((7, 8, 8), (10, 5, 15), 2))
    R = gd_grid._halo_rings(X, halo)
    keys = [(R.name, i, j) for i in range(3) for j in range(3)]
    rings = {k[1:]: v for k, v in zip(keys, dask.get(dict(R.__dask_graph__()), keys))}
    r0 = np.cumsum((0,) + X.chunks[0])
    c0 = np.cumsum((0,) + X.chunks[1])
    for i in range(3):
        for j in range(3):
            block = x[r0[i]:r0[i + 1], c0[j]:c0[j + 1]]
            window = x[max(r0[i] - halo, 0) if i else 0:min(r0[i + 1] + halo, 23) if i < 2 else 23,
                       max(c0[j] - halo, 0) if j else 0:min(c0[j + 1] + halo, 30) if j < 2 else 30]
            np.testing.assert_array_equal(gd_grid._extend(block, rings[(i, j)]), window)
            # the labels' path: the tile task cuts the strips from its neighbours' blocks
            nbrs = [gd_grid._edges(x[r0[i + di]:r0[i + di + 1], c0[j + dj]:c0[j + dj + 1]], halo)
                    if 0 <= i + di < 3 and 0 <= j + dj < 3 else None for di, dj in gd_grid._OFFSETS]
            np.testing.assert_array_equal(gd_grid._extend(block, gd_grid._ring(nbrs)), window)
    z = da.zeros((23, 30), chunks=X.chunks[:2], dtype=np.int32)
    half = gd_grid._half_round(z, X, None, gd_grid._halo_rings(X, halo), 0, halo, smoothness=1.0,
                               method="icm", options=None, seed=0, round_=0)
    own = [k for k in dict(half.__dask_graph__()) if isinstance(k, tuple) and str(k[0]).startswith("grid-")
           and not str(k[0]).startswith("grid-ring") and not str(k[0]).startswith("grid-edges")]
    assert len(own) == 9  # per block: its tile update or pass-through


@pytest.mark.parametrize("halo", [1, 3])
@pytest.mark.parametrize("block_id", [(1, 1), (0, 2), (2, 0)])
def test_grid_kernel_tile_step_equals_generic_tile_step(monkeypatch, halo, block_id):
    """A tile update on the grid ICM kernel (raster order) gives the labels of the
    generic path (Energy + solve(..., "icm", order="fixed")) for interior, corner and
    edge tiles; float32 unaries are used without a float64 copy and give the same."""
    image, unary = _grid_problem(3 * 12 + 2 * halo, 3 * 10 + 2 * halo, K=3, seed=2)
    top, bottom, left, right = gd_grid._sides(block_id, (3, 3), halo)
    r = slice(block_id[0] * 12 + halo - top, (block_id[0] + 1) * 12 + halo + bottom)
    c = slice(block_id[1] * 10 + halo - left, (block_id[1] + 1) * 10 + halo + right)
    z = np.random.default_rng(1).integers(0, 3, size=image.shape).astype(np.int32)[r, c, None]
    kw = dict(block_id=block_id, nblocks=(3, 3), halo=halo, colour=sum(block_id) % 2, smoothness=0.9,
              method="icm", options={"order": "fixed"})
    weights = gd_grid._pair_weights(image[r, c, None], 2.0, 0.9, z.shape[:2])
    fast = gd_grid._tile_step(z, unary[r, c], weights, **kw)
    fast32 = gd_grid._tile_step(z, unary[r, c].astype(np.float32), weights, **kw)
    assert gd_grid._fast_icm("icm", kw["options"]) and not gd_grid._fast_icm("icm", {"schedule": "colour"})
    monkeypatch.setattr(gd_grid, "_fast_icm", lambda method, options: False)
    generic = gd_grid._tile_step(z, unary[r, c], weights, **kw)
    assert fast.shape == (12, 10) and fast.dtype == np.int32
    assert (fast != z[top:top + 12, left:left + 10, 0]).any()
    np.testing.assert_array_equal(fast, generic)
    assert (fast32 != fast).mean() < 0.05  # float32 rounding may break a few near-ties



@pytest.mark.parametrize("halo", [1, 2])
@pytest.mark.parametrize("block_id", [(1, 1), (0, 2), (2, 0)])
def test_tile_step_from_the_block_and_its_halo_strips(halo, block_id):
    """A tile update given its unary block and their halo strips (as the tile task
    passes them; with halo 1 the kernel reads the block itself) equals the update given
    the unaries of the extended tile."""
    image, unary = _grid_problem(36, 30, K=3, seed=7)
    blocks = {(i, j): unary[12 * i:12 * i + 12, 10 * j:10 * j + 10] for i in range(3) for j in range(3)}
    i, j = block_id
    ring = gd_grid._ring([None if (i + di, j + dj) not in blocks else gd_grid._edges(blocks[i + di, j + dj], halo)
                          for di, dj in gd_grid._OFFSETS])
    top, bottom, left, right = gd_grid._sides(block_id, (3, 3), halo)
    r = slice(12 * i - top, 12 * i + 12 + bottom)
    c = slice(10 * j - left, 10 * j + 10 + right)
    z = np.random.default_rng(3).integers(0, 3, size=(36, 30)).astype(np.int8)[r, c, None]
    kw = dict(block_id=block_id, nblocks=(3, 3), halo=halo, colour=sum(block_id) % 2, smoothness=0.9,
              method="icm", options=None, seed=4, round_=1)
    weights = gd_grid._pair_weights(image[r, c, None], 2.0, 0.9, z.shape[:2])
    from_strips = gd_grid._tile_step(z, blocks[block_id], weights, U_ring=ring, **kw)
    extended = gd_grid._tile_step(z, unary[r, c], weights, **kw)
    assert from_strips.dtype == np.int8 and (from_strips != z[top:top + 12, left:left + 10, 0]).any()
    np.testing.assert_array_equal(from_strips, extended)

def test_tile_update_from_a_fixed_point_returns_it_without_sweeping(monkeypatch):
    """Labels a run's converged tile update produced are returned as they are when the
    same tile sees them again in that run (no sweep); another run or halo > 1 sweep
    again, and sweeping gives the very labels returned; with ring pixels changed, the
    sweeps from the pixels next to them give those of a full pass."""
    from graphclust.inference import grid_icm

    calls = []
    real = grid_icm._run
    monkeypatch.setattr(grid_icm, "_run", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(gd_grid, "_FIXED_POINTS", gd_grid._FixedPoints())
    image, unary = _grid_problem(3 * 12 + 2, 3 * 10 + 2, K=3, seed=5)
    weights = gd_grid._pair_weights(image[..., None], 2.0, 0.9, image.shape)
    kw = dict(block_id=(1, 1), nblocks=(3, 3), halo=1, colour=0, smoothness=0.9, method="icm", options=None,
              seed=3, round_=0)
    z = unary.argmin(-1).astype(np.int32)
    first = gd_grid._tile_step(z[..., None], unary, weights, run="a", **kw)
    assert len(calls) == 1 and (first != z[1:-1, 1:-1]).any()
    z[1:-1, 1:-1] = first
    again = gd_grid._tile_step(z[..., None], unary, weights, run="a", **dict(kw, round_=1))
    assert len(calls) == 1  # remembered: no sweep
    np.testing.assert_array_equal(again, first)
    # a sweep from the same labels moves nothing either: the shortcut returns what it would
    np.testing.assert_array_equal(gd_grid._tile_step(z[..., None], unary, weights, **dict(kw, round_=1)), first)
    assert len(calls) == 2
    gd_grid._tile_step(z[..., None], unary, weights, run="b", **kw)
    assert len(calls) == 3
    # a neighbour's side changed: the sweeps start from the pixels next to the change and
    # give what a full pass gives
    z[0, :], z[:, 0] = 0, 1
    moved = gd_grid._tile_step(z[..., None], unary, weights, run="a", **kw)
    assert len(calls) == 4 and (moved != first).any()
    np.testing.assert_array_equal(moved, gd_grid._tile_step(z[..., None], unary, weights, **kw))
    assert len(calls) == 5
    for _ in range(2):  # halo 3: the free region reaches into the neighbours, nothing kept
        gd_grid._tile_step(z[..., None], unary, weights, run="a", **dict(kw, halo=3))
    assert len(calls) == 7



def test_fixed_points_are_bounded_and_keyed_by_run():
    """The memory of converged tiles keeps the newest entries up to its size, and a key
    names the run, the tile and the labels' digest."""
    memo = gd_grid._FixedPoints(size=2)
    labels = np.arange(6, dtype=np.int8).reshape(2, 3)
    keys = [gd_grid._FixedPoints.key("r", (0, k), labels) for k in range(3)]
    for k in keys:
        memo.add(k, ("ring",))
    assert memo.get(keys[0]) is None and memo.get(keys[2]) == ("ring",)
    assert gd_grid._FixedPoints.key("r", (0, 1), labels) == keys[1]
    assert gd_grid._FixedPoints.key("s", (0, 1), labels) != keys[1]
    assert gd_grid._FixedPoints.key("r", (0, 1), labels[::-1]) != keys[1]

def test_fixed_point_shortcut_changes_no_run(monkeypatch):
    """grid_inference with tile updates from remembered fixed points skipped gives the
    labels, rounds and changes of the run sweeping every tile update, and skips some."""
    from graphclust.inference import grid_icm

    calls = []
    real = grid_icm._run
    monkeypatch.setattr(grid_icm, "_run", lambda *a, **k: calls.append(1) or real(*a, **k))
    image, unary = _grid_problem(96, 96, seed=6)
    kw = dict(smoothness=1.5, chunks=(24, 24), random_state=2, max_rounds=20)
    with dask.config.set(scheduler="threads"):
        monkeypatch.setattr(gd_grid, "_FIXED_POINTS", gd_grid._FixedPoints())
        res = gd.grid_inference(unary, image, **kw)
        skipping = len(calls)
        monkeypatch.setattr(gd_grid, "_FIXED_POINTS", gd_grid._FixedPoints(size=0))  # remembers nothing
        ref = gd.grid_inference(unary, image, **kw)
    assert res.converged and res.n_rounds >= 3
    assert (res.n_rounds, res.n_changes) == (ref.n_rounds, ref.n_changes)
    np.testing.assert_array_equal(res.labels.compute(), ref.labels.compute())
    assert skipping < len(calls) - skipping == 16 * res.n_rounds  # every update swept without it
    # converged labels as the start: one round, nothing moves
    with dask.config.set(scheduler="threads"):
        again = gd.grid_inference(unary, image, init=res.labels, **kw)
    assert (again.n_rounds, again.n_changes, again.converged) == (1, [0], True)
    assert again.labels.dtype == np.int32
    np.testing.assert_array_equal(again.labels.compute(), res.labels.compute())


@pytest.mark.slow
def test_worker_memory_stays_bounded_on_an_image_larger_than_its_limit():
    """A lazily generated 1024x1024x80 float64 unary volume (671 MB) is labelled by two
    workers with a 600 MB memory limit each: both stay under it and none is restarted."""
    limit = 600_000_000
    # compile the tile kernel (and fill numba's cache) here first: compiling it inside a
    # worker with a 600 MB limit can take the worker over the limit on its own
    small = da.from_array(np.random.default_rng(0).random((16, 16, 80)), chunks=(8, 8, 80))
    gd.grid_inference(small, smoothness=0.05, max_rounds=1, engine_options={"max_iter": 3}, client=None)
    with _cluster(memory_limit=limit) as cluster, distributed.Client(cluster, timeout="60s") as c:
        c.wait_for_workers(2, timeout=60)
        K, n = 80, 1024
        # 128x128x80 tiles (10 MB): a worker holds a few tiles with their halos and copies,
        # far below its limit, while the whole volume is above it
        rows = da.arange(n, chunks=128, dtype=np.float64)[:, None, None]
        cols = da.arange(n, chunks=128, dtype=np.float64)[None, :, None]
        levels = da.arange(K, chunks=-1, dtype=np.float64)[None, None, :] / (K - 1)
        signal = (da.sin(rows / 97.0) * da.cos(cols / 61.0) + 1) / 2 + 0.2 * da.sin(rows * 12.9898 + cols * 78.233)
        U = (signal - levels) ** 2
        assert U.nbytes > limit
        workers = set(c.scheduler_info()["workers"])
        res = gd.grid_inference(U, smoothness=0.05, max_rounds=1, client=c, engine_options={"max_iter": 3})
        assert res.labels.shape == (n, n) and res.n_rounds == 1 and res.n_changes[0] > 0
        peaks = c.run(_peak_rss)
        assert set(c.scheduler_info()["workers"]) == workers  # nobody was restarted for memory
        assert max(peaks.values()) < limit, peaks


# ---------------------------------------------------------------------------- points
@pytest.mark.parametrize("chunks", [(99,), (13, 50, 7, 29)])
def test_chunked_kmeans_equals_numpy_oracle(client, chunks):
    """Same labels, centroids and number of passes as the plain-numpy synchronous run,
    for any chunking, with must- and cannot-links."""
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 1.0], [0.0, 4.0, -1.0]])
    X = np.concatenate([c + rng.normal(size=(33, 3)) for c in centres])[rng.permutation(99)]
    pairs = [(0, 5), (5, 9), (3, 40), (3, 41), (60, 70), (2, 90), (11, 12)]
    w = [2.0, 3.0, -4.0, -1.5, 5.0, -np.inf, np.inf]
    C0 = X[[0, 1, 2]]
    z, C, n_iter = _jacobi_kmeans(X, C0, pairs, w)
    res = gd.chunked_kmeans(da.from_array(X, chunks=(chunks, 3)), init=C0, constraints=pairs,
                            constraint_weights=w, client=client)
    np.testing.assert_array_equal(res.labels.compute(), z)
    np.testing.assert_allclose(res.centroids, C, rtol=1e-10)
    assert res.n_iter == n_iter and res.converged
    assert res.labels.chunks == (chunks,)


@pytest.mark.parametrize("chunks", [(150,), (40, 11, 60, 39)])
def test_chunked_sweep_equals_single_machine_hmrf(client, chunks):
    """schedule="sweep" gives, for any chunking, the labels and centroids of the
    single-machine estimator it mirrors: HMRF-KMeans with constant penalties and the
    colour-class ICM, one sweep per E-step, from the same centroids."""
    rng = np.random.default_rng(4)
    centres = np.array([[0.0, 0.0, 0.0], [3.0, 0.0, 1.0], [0.0, 3.0, -1.0], [3.0, 3.0, 0.0]])
    X = np.concatenate([c + rng.normal(size=(30, 3)) for c in centres])
    X = np.concatenate([X, rng.normal(scale=3.0, size=(30, 3))])[rng.permutation(150)]
    pairs = rng.choice(150, size=(60, 2), replace=True)
    pairs = np.unique(np.sort(pairs[pairs[:, 0] != pairs[:, 1]], axis=1), axis=0)
    w = rng.uniform(0.5, 8.0, size=len(pairs)) * np.where(rng.random(len(pairs)) < 0.4, 1.0, -1.0)
    S = gc.SideInfo.from_pairs(must=[(int(a), int(b), float(x)) for (a, b), x in zip(pairs, w) if x > 0],
                               cannot=[(int(a), int(b), float(-x)) for (a, b), x in zip(pairs, w) if x < 0])
    C0 = X[[0, 1, 2, 3]]
    est = gc.HMRF(gc.potentials.Centroids(4), inference="icm-colour", penalty="constant", use_closure=False, constraint_weight=1.0,
                  init=C0, inference_options={"max_iter": 1, "order": "fixed"}, tol=0.0, random_state=0)
    est.fit(gc.Problem.from_array(X, S))
    res = gd.chunked_kmeans(da.from_array(X, chunks=(chunks, 3)), init=C0, constraints=pairs,
                            constraint_weights=w, schedule="sweep", client=client)
    assert res.converged and len(est.result_.history) >= res.n_iter >= 3
    assert est.result_.info["engine_runs"][0]["iterations"] == 1
    # labels_ of an estimator are renumbered by first appearance; the centroids keep the raw order
    np.testing.assert_array_equal(canonical_labels(res.labels.compute()), est.labels_)
    np.testing.assert_allclose(res.centroids, est.potentials_.centroids_, rtol=1e-10)
    # the sweep is not the Jacobi schedule: that one ends elsewhere on these links
    jac = gd.chunked_kmeans(da.from_array(X, chunks=(chunks, 3)), init=C0, constraints=pairs,
                            constraint_weights=w, client=client)
    assert not np.array_equal(canonical_labels(jac.labels.compute()), est.labels_)


def test_chunked_dpmeans_births_equal_numpy_oracle(client):
    """With a cluster price lam: births at the costliest point once the assignment has
    settled, identical to the numpy oracle; more clusters for a smaller price."""
    rng = np.random.default_rng(3)
    X = np.concatenate([c + 0.3 * rng.normal(size=(40, 2)) for c in ([0, 0], [3, 0], [0, 3], [3, 3])])
    X = X[rng.permutation(len(X))]
    for lam in (1.5, 6.0):
        z, C, n_iter = _jacobi_kmeans(X, X.mean(0, keepdims=True), lam=lam)
        res = gd.chunked_kmeans(da.from_array(X, chunks=45), lam=lam, client=client)
        np.testing.assert_array_equal(res.labels.compute(), z)
        np.testing.assert_allclose(res.centroids, C, rtol=1e-10)
        assert res.n_iter == n_iter
    assert gd.chunked_kmeans(X, lam=1.5, chunks=50).centroids.shape[0] == 4


def test_chunked_kmeans_random_init_is_reproducible(client):
    X = np.random.default_rng(0).normal(size=(60, 2))
    a = gd.chunked_kmeans(da.from_array(X, chunks=17), n_clusters=3, random_state=5, client=client)
    b = gd.chunked_kmeans(da.from_array(X, chunks=60), n_clusters=3, random_state=5)
    np.testing.assert_array_equal(a.labels.compute(), b.labels.compute())


# ---------------------------------------------------------------------------- bad input
def test_bad_input_errors(client):
    image, unary = _grid_problem(32, 32, K=2)
    U = da.from_array(unary, chunks=(16, 16, 2))
    with pytest.raises(InvalidParameterError, match="chunked differently"):
        gd.grid_inference(U, da.from_array(image, chunks=(8, 16)), client=client)
    with pytest.raises(InvalidParameterError, match="smaller than halo=4"):
        gd.grid_inference(da.from_array(unary, chunks=(3, 16, 2)), halo=4, client=client)
    with pytest.raises(InvalidParameterError, match="pass chunks"):
        gd.grid_inference(unary)
    with pytest.raises(InvalidParameterError, match="unknown method"):
        gd.grid_inference(U, method="simplex")
    init = np.zeros((32, 32), np.int64)
    init[20, 5] = 2
    with pytest.raises(InvalidParameterError, match=r"init\[20, 5\] is 2; labels must lie in 0 .. 1"):
        gd.grid_inference(U, init=da.from_array(init, chunks=16), client=client)
    with pytest.raises(InvalidParameterError, match="integer labels"):
        gd.grid_inference(U, init=da.zeros((32, 32), chunks=16), client=client)
    with pytest.raises(InvalidParameterError, match="outside"):
        gd.chunked_kmeans(np.zeros((5, 2)), n_clusters=2, chunks=2, constraints=[(0, 7)])
    with pytest.raises(InvalidParameterError, match="n_clusters, init or lam"):
        gd.chunked_kmeans(np.zeros((5, 2)), chunks=2)


def test_closed_client_is_refused(client):
    """A client that is gone: every entry point says so before any work."""
    c = distributed.Client(client.scheduler.address, timeout="60s", set_as_default=False)
    c.close()
    U = da.zeros((8, 8, 2), chunks=(4, 4, 2))
    with pytest.raises(InvalidParameterError, match="closed"):
        gd.grid_inference(U, client=c)
    with pytest.raises(InvalidParameterError, match="closed"):
        list(gd.map_fit(gc.SpectralClustering(n_clusters=2), [nx.path_graph(4)], client=c))
    with pytest.raises(InvalidParameterError, match="closed"):
        gd.chunked_kmeans(da.zeros((4, 2), chunks=2), n_clusters=1, client=c)
    with pytest.raises(InvalidParameterError, match="Client"):
        gd.grid_inference(U, client="tcp://127.0.0.1:8786")



# ---------------------------------------------------------------------------- package layout
def test_package_lists_its_public_names_once_and_loads_no_dask():
    """``graphclust.distributed`` re-exports the public names of its feature modules in
    one ``__all__``, and importing it does not import dask."""
    import subprocess
    import sys

    from graphclust.distributed import batches, points

    assert gd.__all__ == ["map_fit", "FitOutcome", "grid_inference", "grid_energy", "GridResult", "chunked_kmeans",
                          "ChunkedKMeansResult"]
    assert sorted(gd.__all__) == sorted(batches.__all__ + gd_grid.__all__ + points.__all__)
    for name in gd.__all__:
        assert getattr(gd, name) is getattr(next(m for m in (batches, gd_grid, points) if name in m.__all__), name)
    code = ("import sys, graphclust.distributed; "
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')); "
            "sys.exit(str(bad) if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_feature_modules_import_no_private_name_of_a_sibling_and_no_cycle():
    """The feature modules (batches, grid, points) take shared private helpers from
    ``_common`` only, and the package's relative imports form no cycle."""
    import ast
    from pathlib import Path

    pkg = Path(gd.__file__).parent
    imports = {}
    for path in pkg.glob("*.py"):
        mod = path.stem
        imports[mod] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module] if node.module else [a.name for a in node.names]
                for target in targets:
                    imports[mod].add(target)
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    if mod != "__init__" and target != "_common":
                        assert not private, f"{mod} imports {private} from its sibling {target}"
    assert imports["_common"] == set()
    assert imports["__init__"] == {"batches", "grid", "points"}
    state = {}

    def visit(m, stack):
        assert state.get(m) != "open", f"import cycle: {' -> '.join(stack + [m])}"
        if state.get(m) is None:
            state[m] = "open"
            for t in imports.get(m, ()):
                visit(t, stack + [m])
            state[m] = "done"

    for m in imports:
        visit(m, [])
