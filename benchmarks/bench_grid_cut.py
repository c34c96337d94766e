"""The implicit-grid graph-cut engine (``graphclust.inference.grid_cut``) against
PyMaxflow and against graphclust's explicit engines, in time, energy and memory.

Sections (peers in the same process, one thread each; every energy is computed by
``GridEnergy.evaluate`` in float64):

1. Two labels, the noisy horse (``bench_segment.horse_problem``: silhouette resized to
   ``side x side``, noise sd 0.8, 300 hard scribbles per label), 8-connected: unary =
   Gaussian negative log-likelihood of the two classes fitted on the scribbles (float32),
   contrast-sensitive weights ``exp(-(I_p - I_q)^2 / (2 sigma^2)) / |offset|`` with
   sigma the median absolute neighbour difference. ``grid_cut`` against
   ``maxflow.Graph[float]`` built with ``add_grid_edges`` per offset (the same weights)
   and against the explicit ``mincut`` on ``to_energy()`` (1024² only).
2. K=4 Potts grids, 4-connected, the easy and hard instances of
   ``bench_expansion.py`` (``bench_inference.potts_grid``): ``grid_cut`` against
   ``maxflow.fastmin.aexpansion_grid`` and the explicit ``alpha_expansion``.
3. Re-solve after a stroke: the 1024² horse energy, then strokes (discs of radius 30 px,
   2821 pixels, given their true label as a hard scribble) at ``--strokes`` places, one
   after the other: ``GridCutSolver.update_unary`` + ``solve`` against a cold
   ``grid_cut`` of the same energy and PyMaxflow's cold cut. 3b: the same on the hard
   K=4 Potts grid of section 2 (discs of radius 24 px given one label's unaries):
   ``GridCutSolver`` with and without the moves' flows kept, ``grid_cut`` cold from the
   last labels and from scratch, and ``ExpansionSolver`` on the explicit ``Energy``.
4. Peak memory, one subprocess per case: the peak resident set (``VmHWM``) the solve
   adds above the built energy, and the whole child's peak above its state after
   imports and compilation, in bytes per pixel: the 2048² horse (K=2, 8-connected),
   and a 256³ noisy ball (K=2, 6- and 26-connected, contrast-sensitive weights); with
   ``--explicit`` also the 2048² horse as an explicit ``Energy`` solved by ``mincut``
   (the path ``gc.segment`` takes today).

Timings are medians of ``--repeats`` runs, numba kernels compiled beforehand.

    python benchmarks/bench_grid_cut.py [--sides 1024,2048] [--repeats 3]
        [--only horse|potts|warm|memory] [--strokes 9] [--volume 256] [--explicit] [--quick]
"""

import argparse
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from graphclust.inference import GridCutSolver, GridEnergy, alpha_expansion, grid_cut, grid_offsets, mincut  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_inference import timed  # noqa: E402


# --------------------------------------------------------------------------- energies
def contrast_weights(img, offsets, scale=1.0):
    """Contrast-sensitive Potts weights per offset (float32 arrays of the image's shape;
    the entries whose neighbour is outside are left at 0)."""
    diffs = []
    for off in offsets:
        src, dst = _slices(img.shape, off)
        diffs.append(np.abs(img[dst] - img[src]).ravel())
    sigma = float(np.median(np.concatenate([d[:: max(1, len(d) // 200000)] for d in diffs]))) + 1e-12
    del diffs
    out = []
    for off in offsets:
        src, dst = _slices(img.shape, off)
        w = np.zeros(img.shape, np.float32)
        d = (img[dst] - img[src]).astype(np.float32)
        w[src] = scale * np.exp(-(d * d) / np.float32(2 * sigma * sigma)) / np.float32(np.sqrt(np.dot(off, off)))
        del d
        out.append(w)
    return out


def _slices(shape, off):
    src = tuple(slice(max(0, -o), s - max(0, o)) for s, o in zip(shape, off))
    dst = tuple(slice(max(0, o), s - max(0, -o)) for s, o in zip(shape, off))
    return src, dst


def gaussian_unary(img, scrib):
    """(shape, 2) float32 negative log-likelihoods of two Gaussians fitted on the
    scribbles (label 1 -> 0, label 2 -> 1); scribbled pixels are hard."""
    U = np.empty(img.shape + (2,), np.float32)
    for k in (0, 1):
        vals = img[scrib == k + 1]
        mu, var = vals.mean(), vals.var() + 1e-12
        U[..., k] = 0.5 * ((img - mu) ** 2 / var + np.log(2 * np.pi * var))
    U[scrib == 1, 1] = np.inf
    U[scrib == 2, 0] = np.inf
    return U


def horse_energy(side, noise=0.8, n_scribbles=300):
    from bench_segment import horse_problem

    img, scrib, truth = horse_problem(side, noise, n_scribbles if side >= 256 else 5)
    offs = grid_offsets(2, 8)
    return GridEnergy(gaussian_unary(img, scrib), offs, contrast_weights(img, offs)), truth


def ball_energy(side, conn, noise=0.8, n_scribbles=300, seed=0):
    """A noisy ball in a ``side``³ volume, 2 labels, hard seeds, contrast weights."""
    rng = np.random.default_rng(seed)
    c = (side - 1) / 2
    zz, yy, xx = np.ogrid[0:side, 0:side, 0:side]
    truth = (zz - c) ** 2 + (yy - c) ** 2 + (xx - c) ** 2 < (side / 3) ** 2
    img = truth.astype(np.float32)
    img += rng.normal(0.0, noise, truth.shape).astype(np.float32)
    scrib = np.zeros(truth.shape, np.int8)
    for lab, mask in ((2, truth), (1, ~truth)):
        idx = np.flatnonzero(mask.ravel())
        scrib.reshape(-1)[rng.choice(idx, min(n_scribbles, len(idx) // 4), replace=False)] = lab
    del truth
    offs = grid_offsets(3, conn)
    return GridEnergy(gaussian_unary(img, scrib), offs, contrast_weights(img, offs))


# --------------------------------------------------------------------------- PyMaxflow
def pymaxflow_cut(G):
    """Minimum cut of a 2-label GridEnergy with PyMaxflow (float64 capacities, hard
    unaries as 1e9); returns flat labels (1 = sink side)."""
    import maxflow

    g = maxflow.Graph[float]()
    ids = g.add_grid_nodes(G.shape)
    for off, w in zip(G.offsets, G.weights):
        structure = np.zeros((3,) * G.ndim)
        structure[tuple(1 + int(o) for o in off)] = 1
        weights = np.full(G.shape, w) if isinstance(w, float) else w.astype(np.float64)
        g.add_grid_edges(ids, weights=weights, structure=structure, symmetric=True)
    U = np.where(np.isinf(G.unary), 1e9, G.unary).astype(np.float64)
    g.add_grid_tedges(ids, U[..., 1], U[..., 0])
    g.maxflow()
    return g.get_grid_segments(ids).reshape(-1).astype(np.int64)


def warm_up():
    G, _ = horse_energy(128)
    grid_cut(G)
    S = GridCutSolver(G)
    S.solve()
    S.update_unary([0], [[0.0, np.inf]])
    S.solve()
    from bench_inference import potts_grid

    _, D, _, beta = potts_grid(16, 16, 3)
    grid_cut(GridEnergy(D, grid_offsets(2, 4), [beta, beta]))
    alpha_expansion(GridEnergy(D, grid_offsets(2, 4), [beta, beta]).to_energy())
    mincut(G.to_energy())


# --------------------------------------------------------------------------- sections
def bench_horse(sides, repeats):
    print(f"\n## 1. Two labels: noisy horse, 8-connected, contrast weights (median of {repeats} runs, one thread)")
    print("| side | method | seconds | time / PyMaxflow | energy | E / E_PyMaxflow | pixel accuracy |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for side in sides:
        G, truth = horse_energy(side)
        t_pmf, z_pmf = timed(lambda: pymaxflow_cut(G), repeats)
        e_pmf = G.evaluate(z_pmf)
        rows = [("PyMaxflow Graph[float] (add_grid_edges)", t_pmf, z_pmf, e_pmf)]
        t, r = timed(lambda: grid_cut(G), repeats)
        rows.append(("graphclust grid_cut", t, r.labels, r.energy))
        if side <= 1024:
            E = G.to_energy()
            t, r = timed(lambda: mincut(E), repeats)
            rows.append(("graphclust mincut (explicit Energy)", t, r.labels, r.energy))
            del E
        for name, t, z, e in rows:
            acc = float((z.reshape(truth.shape) == truth).mean())
            print(f"| {side} | {name} | {t:.3f} | {t / t_pmf:.2f} | {e:.4f} | {e / e_pmf:.9f} | {acc:.4f} |")


def bench_potts(side, repeats):
    import maxflow.fastmin
    from bench_expansion import GRIDS
    from bench_inference import potts_grid

    print(f"\n## 2. K=4 Potts grid {side}x{side}, 4-connected (median of {repeats} runs, one thread)")
    print("| instance | method | seconds | time / PyMaxflow | energy | E / E_PyMaxflow | cycles |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, (noise, beta) in GRIDS.items():
        E, D, truth, beta = potts_grid(side, side, 4, noise=noise, beta=beta)
        G = GridEnergy(D.astype(np.float32), grid_offsets(2, 4), [beta, beta])
        V = beta * (1.0 - np.eye(4))
        t_pmf, L = timed(lambda: maxflow.fastmin.aexpansion_grid(D, V), repeats)
        e_pmf = G.evaluate(L.ravel())
        rows = [("PyMaxflow aexpansion_grid", t_pmf, e_pmf, "")]
        t, r = timed(lambda: grid_cut(G), repeats)
        rows.append(("graphclust grid_cut", t, r.energy, r.iterations))
        t, r = timed(lambda: alpha_expansion(E), repeats)
        rows.append(("graphclust alpha_expansion (explicit)", t, G.evaluate(r.labels), r.iterations))
        for label, t, e, it in rows:
            print(f"| {name} | {label} | {t:.3f} | {t / t_pmf:.2f} | {e:.4f} | {e / e_pmf:.9f} | {it} |")


def bench_warm(side, n_strokes, radius=30, seed=1):
    print(f"\n## 3. Re-solve after a stroke: horse {side}x{side}, 8-connected, strokes of radius {radius} px "
          f"({n_strokes} strokes one after the other, one thread)")
    G, truth = horse_energy(side)
    solver = GridCutSolver(G)
    first = solver.solve()
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:side, 0:side]
    t_warm, t_cold, t_pmf, sizes, diffs = [], [], [], [], []
    for _ in range(n_strokes):
        cy, cx = rng.integers(radius, side - radius, 2)
        disc = ((yy - cy) ** 2 + (xx - cx) ** 2 <= radius ** 2).ravel()
        idx = np.flatnonzero(disc)
        lab = truth.ravel()[idx].astype(int)
        C = np.zeros((len(idx), 2))
        C[np.arange(len(idx)), 1 - lab] = np.inf
        start = time.perf_counter()
        solver.update_unary(idx, C)
        warm = solver.solve()
        t_warm.append(time.perf_counter() - start)
        start = time.perf_counter()
        cold = grid_cut(solver.genergy)
        t_cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        z = pymaxflow_cut(solver.genergy)
        t_pmf.append(time.perf_counter() - start)
        sizes.append(len(idx))
        diffs.append(abs(warm.energy - cold.energy) / abs(cold.energy))
        assert abs(solver.genergy.evaluate(z) - cold.energy) <= 1e-5 * abs(cold.energy)
    print("| method | median seconds per stroke | max | energy vs cold (max rel. diff) |")
    print("|---|---:|---:|---:|")
    print(f"| GridCutSolver.update_unary + solve (warm) | {np.median(t_warm):.4f} | {max(t_warm):.4f} | "
          f"{max(diffs):.1e} |")
    print(f"| grid_cut (cold) | {np.median(t_cold):.4f} | {max(t_cold):.4f} | 0 |")
    print(f"| PyMaxflow (cold, graph rebuilt) | {np.median(t_pmf):.4f} | {max(t_pmf):.4f} | |")
    print(f"({sizes[0]} pixels per stroke; first solve {first.seconds:.3f} s; flow kept by the solver: "
          f"{solver.flow_bytes / 2**20:.0f} MiB = {solver.flow_bytes / G.n_pixels:.0f} B/pixel)")


def bench_warm_potts(side, n_strokes, radius=24, seed=2):
    from bench_expansion import GRIDS
    from bench_inference import potts_grid

    from graphclust.inference import ExpansionSolver

    print(f"\n## 3b. Re-solve after a stroke, K=4 hard Potts grid {side}x{side}, 4-connected, strokes of radius "
          f"{radius} px ({n_strokes} strokes one after the other, one thread)")
    noise, beta = GRIDS["hard"]
    E, D, truth, beta = potts_grid(side, side, 4, noise=noise, beta=beta)
    G = GridEnergy(D.astype(np.float32), grid_offsets(2, 4), [beta, beta])
    yy, xx = np.mgrid[0:side, 0:side]
    rng = np.random.default_rng(seed)
    strokes = []
    for _ in range(n_strokes):
        cy, cx = rng.integers(radius, side - radius, 2)
        idx = np.flatnonzero((((yy - cy) ** 2 + (xx - cx) ** 2) <= radius ** 2).ravel())
        C = np.ones((len(idx), 4))
        C[:, int(rng.integers(0, 4))] = 0.0
        strokes.append((idx, C))
    solvers = {"GridCutSolver (flows reused)": GridCutSolver(G),
               "GridCutSolver(reuse_flows=False)": GridCutSolver(G, reuse_flows=False),
               "ExpansionSolver (explicit Energy, flows reused)": ExpansionSolver(E)}
    first = {name: S.solve() for name, S in solvers.items()}
    times = {name: [] for name in solvers}
    times["grid_cut from the last labels (cold cuts)"] = []
    times["grid_cut from the unary argmin (cold)"] = []
    energies = {name: [] for name in times}
    for idx, C in strokes:
        ref = solvers["GridCutSolver (flows reused)"]
        prev = ref.labels.copy()  # the labels before the stroke, where the warm solves start
        for name, S in solvers.items():
            start = time.perf_counter()
            S.update_unary(idx, C)
            r = S.solve()
            times[name].append(time.perf_counter() - start)
            energies[name].append(r.energy)
        for name, init in (("grid_cut from the last labels (cold cuts)", prev),
                           ("grid_cut from the unary argmin (cold)", None)):
            start = time.perf_counter()
            r = grid_cut(ref.genergy, init=init)
            times[name].append(time.perf_counter() - start)
            energies[name].append(r.energy)
    base = energies["GridCutSolver (flows reused)"]
    print("| method | median seconds per stroke | max | max rel. energy diff vs GridCutSolver | kept between solves |")
    print("|---|---:|---:|---:|---:|")
    kept = {name: f"{S.flow_bytes / 2**20:.0f} MiB ({S.flow_bytes / G.n_pixels:.0f} B/px)"
            for name, S in solvers.items()}
    for name in times:
        diff = max(abs(a - b) / abs(b) for a, b in zip(energies[name], base))
        print(f"| {name} | {np.median(times[name]):.4f} | {max(times[name]):.4f} | {diff:.1e} | "
              f"{kept.get(name, '')} |")
    print(f"({len(strokes[0][0])} pixels per stroke; first solves: "
          + ", ".join(f"{name} {r.seconds:.2f} s" for name, r in first.items()) + ")")


# --------------------------------------------------------------------------- memory
from memory_peak import status_mib  # noqa: E402


def _reset_peak():
    import ctypes
    import gc

    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def memory_child(case):
    """Print the peaks of one case (Linux only): ``RESULT n_pixels start build_peak
    energy_mib solve_extra seconds energy``."""
    kind, size, conn = case.split(":")
    size, conn = int(size), int(conn)
    explicit = kind == "explicit"  # the horse as an explicit Energy, solved by mincut (the old path)
    build = (lambda s: horse_energy(s)[0]) if kind in ("horse", "explicit") else (lambda s: ball_energy(s, conn))
    small = build(128 if kind != "ball" else 8)
    grid_cut(small)  # compile / load the kernels outside the measure
    if explicit:
        mincut(small.to_energy())
    del small
    _reset_peak()
    start_mib = status_mib("VmRSS:")
    G = build(size)
    n = G.n_pixels
    if explicit:
        G = G.to_energy()
        held = (G.unary.nbytes + G.edges.nbytes + G.weights.nbytes) / 2**20
    else:
        held = G.nbytes / 2**20
    build_peak = status_mib("VmHWM:")
    _reset_peak()
    base = status_mib("VmRSS:")
    t0 = time.perf_counter()
    res = mincut(G) if explicit else grid_cut(G)
    seconds = time.perf_counter() - t0
    print(f"RESULT {n} {start_mib:.1f} {build_peak:.1f} {base:.1f} {status_mib('VmHWM:'):.1f} "
          f"{held:.1f} {seconds:.2f} {res.energy!r}")


def bench_memory(cases):
    import subprocess

    print("\n## 4. Peak memory (one subprocess per case, resident set from /proc/self/status)")
    print("| case | pixels | energy held (MiB, B/px) | solve peak above the energy (MiB, B/px) | "
          "energy + solve (B/px) | whole run peak above imports (MiB, B/px) | solve s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for case in cases:
        env = dict(os.environ)
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", case], env=env,
                             capture_output=True, text=True, check=True)
        n, start, build_peak, base, peak, e_mib, seconds, _ = out.stdout.split("RESULT ")[1].split()
        n = int(n)
        start, build_peak, base, peak, e_mib = map(float, (start, build_peak, base, peak, e_mib))
        solve = peak - base
        whole = max(build_peak, peak) - start
        per = lambda mib: mib * 2**20 / n  # noqa: E731
        print(f"| {case} | {n} | {e_mib:.0f}, {per(e_mib):.0f} | {solve:.0f}, {per(solve):.0f} | "
              f"{per(e_mib + solve):.0f} | {whole:.0f}, {per(whole):.0f} | {seconds} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sides", default="1024,2048", help="image sides of section 1")
    parser.add_argument("--side", type=int, default=1024, help="side of sections 2 and 3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--strokes", type=int, default=9)
    parser.add_argument("--volume", type=int, default=256, help="side of the 3-D memory cases")
    parser.add_argument("--only", choices=("horse", "potts", "warm", "memory"))
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--explicit", action="store_true",
                        help="memory section: also the explicit Energy + mincut on the largest horse (about 6 GB)")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        with threadpool_limits(1):
            memory_child(args.memory_child)
        return
    sides = (128,) if args.quick else tuple(int(s) for s in args.sides.split(","))
    side = 128 if args.quick else args.side
    with threadpool_limits(1):
        warm_up()
        if args.only in (None, "horse"):
            bench_horse(sides, args.repeats)
        if args.only in (None, "potts"):
            bench_potts(side, args.repeats)
        if args.only in (None, "warm"):
            bench_warm(side, 3 if args.quick else args.strokes)
            bench_warm_potts(side, 3 if args.quick else args.strokes)
    if args.only in (None, "memory"):
        vol = 32 if args.quick else args.volume
        big = 256 if args.quick else max(sides)
        bench_memory([f"horse:{big}:8", f"ball:{vol}:6", f"ball:{vol}:26"]
                     + ([f"explicit:{big}:8"] if args.explicit else []))


if __name__ == "__main__":
    main()
