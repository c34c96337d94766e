"""α-expansion (and αβ-swap) over graphclust's own max-flow against PyMaxflow, and on
k-NN graphs against BP and ICM. Every energy is computed by ``Energy.evaluate``.

Sections (peers in the same process, one thread each):

1. Potts grids, 4-connected, K=4, built by ``bench_inference.potts_grid`` (noisy
   piecewise-constant label image, unary = squared distance to the class means, one
   Potts weight): the *hard* instance of ``bench_inference`` (noise 0.25, weight 0.1)
   and an *easy* one (noise 0.1, weight 0.1: the unaries nearly decide). graphclust's
   ``alpha_expansion`` against ``maxflow.fastmin.aexpansion_grid``. Targets: energy
   <= PyMaxflow's, time <= 1.0x (moonshot 0.5x).
2. k-NN graphs (where ``aexpansion_grid`` cannot run): Gaussian blobs, a 10-NN
   Gaussian similarity graph as attractive Potts terms, unary = squared distance to the
   class means (classes overlap: smoothing matters), with and without hard cannot-links
   sampled from the true classes;
   expansion vs swap vs BP vs ICM (energies and times).

6. Superpixel graphs (``--only superpixel``): scikit-image's astronaut as SLIC
   superpixels and their contrast-sensitive adjacency (``graphclust.segmentation.superpixel_graph``), K
   colour classes from k-means on the superpixels' mean colours, unary = pixels ×
   squared colour distance / (2 × the pooled variance), Potts weights = smoothness ×
   the graph's weights; expansion, swap, BP, ICM and TRW-S (its lower bound gives every
   engine a certified gap).
7. A sweep (``--only sweep``): energies only, over 18 superpixel and 15 k-NN energies,
   expansion with and without its runner-up fusion against BP and ICM.

Timings are medians of ``--repeats`` runs, numba kernels compiled beforehand.

    python benchmarks/bench_expansion.py [--side 1024] [--repeats 3] [--knn 20000]
        [--only grid|knn|warm|labelcost|memory|superpixel|sweep] [--quick]
"""

import argparse
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from graphclust.energy import Energy  # noqa: E402
from graphclust.graphs import knn_matrix  # noqa: E402
from graphclust.inference import alpha_beta_swap, alpha_expansion, belief_propagation, icm  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_inference import potts_grid, timed  # noqa: E402
from memory_peak import status_mib  # noqa: E402

#: name -> (noise, Potts weight) of the grid instances
GRIDS = {"easy": (0.1, 0.1), "hard": (0.25, 0.1)}



def warm_up():
    E, *_ = potts_grid(8, 8, 3)
    alpha_expansion(E, random_state=0)
    alpha_beta_swap(E, random_state=0)
    belief_propagation(E)
    icm(E, random_state=0)


# --------------------------------------------------------------------------- grids
def bench_grid(side, K, repeats, with_swap):
    import maxflow.fastmin

    print(f"\n## 1. Potts grid {side}x{side}, K={K}, 4-connected: graphclust alpha_expansion vs "
          f"PyMaxflow aexpansion_grid (median of {repeats} runs, one thread)")
    print(f"{'instance':8s} {'method':34s} {'time s':>8s} {'energy':>14s} {'E/E_pmf':>10s} {'t/t_pmf':>8s} "
          f"{'cycles':>6s} {'moves':>6s} {'acc':>6s}")
    rows = []
    for name, (noise, beta) in GRIDS.items():
        start = time.perf_counter()
        E, D, truth, beta = potts_grid(side, side, K, noise=noise, beta=beta)
        build = time.perf_counter() - start
        V = beta * (1.0 - np.eye(K))
        t_pmf, L = timed(lambda: maxflow.fastmin.aexpansion_grid(D, V), repeats)
        e_pmf = E.evaluate(L.ravel())
        acc = lambda z: (z.reshape(truth.shape) == truth).mean()  # noqa: E731
        print(f"{name:8s} {'PyMaxflow aexpansion_grid':34s} {t_pmf:8.3f} {e_pmf:14.4f} {1.0:10.6f} {1.0:8.2f} "
              f"{'':>6s} {'':>6s} {acc(L.ravel()):6.3f}")
        configs = [("alpha_expansion (default)", alpha_expansion, {}),
                   ("alpha_expansion (fusion=False)", alpha_expansion, {"fusion": False}),
                   ("alpha_expansion (order=random)", alpha_expansion, {"order": "random", "random_state": 0})]
        if with_swap:
            configs.append(("alpha_beta_swap (default)", alpha_beta_swap, {}))
        for label, fn, kw in configs:
            t, res = timed(lambda fn=fn, kw=kw: fn(E, **kw), repeats)
            print(f"{name:8s} {label:34s} {t:8.3f} {res.energy:14.4f} {res.energy / e_pmf:10.6f} "
                  f"{t / t_pmf:8.2f} {res.iterations:6d} {res.info['n_moves']:6d} {acc(res.labels):6.3f}")
            rows.append((name, label, t / t_pmf, res.energy / e_pmf))
        print(f"{'':8s} (building the Energy once: {build:.2f} s, not timed for either; unary argmin energy "
              f"{E.evaluate(E.unary.argmin(1)):.4f})")
    return rows


# --------------------------------------------------------------------------- k-NN graphs
def knn_energy(n, K, *, dim=5, n_neighbors=10, smoothness=1.0, spread=1.0, n_cannot=0, extra=0, seed=0):
    """Overlapping Gaussian blobs (class means drawn with standard deviation ``spread``,
    unit noise) -> 10-NN Gaussian similarity graph as attractive Potts terms, unary =
    squared distance to the class means (halved), optional hard cannot-links between
    points of different classes. ``extra`` spurious centres, drawn the same way, are
    candidate labels no point belongs to (the label-cost instances)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, spread, (K + extra, dim))
    y = rng.integers(K, size=n)
    X = centres[y] + rng.normal(0.0, 1.0, (n, dim))
    W = knn_matrix(X, n_neighbors=n_neighbors).tocoo()
    keep = W.row < W.col
    edges = np.stack([W.row[keep], W.col[keep]], 1)
    w = smoothness * W.data[keep]
    U = 0.5 * ((X[:, None, :] - centres[None]) ** 2).sum(-1)
    if n_cannot:
        pairs = rng.integers(n, size=(4 * n_cannot, 2))
        pairs = pairs[y[pairs[:, 0]] != y[pairs[:, 1]]][:n_cannot]
        edges = np.concatenate([edges, pairs])
        w = np.concatenate([w, np.full(len(pairs), -np.inf)])
    return Energy(U, edges, w), y


def bench_knn(n, K, repeats):
    print(f"\n## 2. k-NN graph, {n} points in 5-D, K={K}, overlapping classes, 10-NN Gaussian similarities "
          f"(median of {repeats} runs, one thread; PyMaxflow's aexpansion_grid needs a grid)")
    print(f"{'instance':22s} {'method':30s} {'time s':>8s} {'energy':>14s} {'E/E_exp':>9s} {'viol':>5s} {'acc':>6s}")
    for label, n_cannot in (("attractive", 0), (f"+{n // 10} hard cannot", n // 10)):
        E, y = knn_energy(n, K, n_cannot=n_cannot)
        res_exp = None
        bp = belief_propagation(E)
        for name, fn in (("alpha_expansion", lambda: alpha_expansion(E)),
                         ("alpha_expansion (fusion=False)", lambda: alpha_expansion(E, fusion=False)),
                         ("alpha_beta_swap", lambda: alpha_beta_swap(E)),
                         ("BP (default)", lambda: belief_propagation(E)),
                         ("ICM (sequential)", lambda: icm(E, random_state=0)),
                         ("alpha_expansion from BP's labels", lambda: alpha_expansion(E, init=bp.labels))):
            t, res = timed(fn, repeats)
            res_exp = res_exp or res
            ratio = res.energy / res_exp.energy if np.isfinite(res.energy) else np.inf
            print(f"{label:22s} {name:30s} {t:8.3f} {res.energy:14.4f} {ratio:9.5f} "
                  f"{E.violated_hard_terms(res.labels):5d} {(res.labels == y).mean():6.3f}")
        print(f"{'':22s} ({E.n_edges} pair terms; unary argmin energy {E.evaluate(E.unary.argmin(1)):.4f}, "
              f"{E.violated_hard_terms(E.unary.argmin(1))} hard terms violated)")


# --------------------------------------------------------------------------- superpixels
#: Potts factors of section 6: the unaries count a superpixel's pixels and the weights its
#: boundary pixels, so a factor of several is needed before smoothing changes labels
SUPERPIXEL_SMOOTHNESS = (4.0, 16.0, 64.0)


def superpixel_energy(n_superpixels, K, smoothness, seed=0):
    """The astronaut's superpixel graph as a K-label Potts energy (see section 6)."""
    from skimage.data import astronaut
    from sklearn.cluster import KMeans

    from graphclust.segmentation import superpixel_graph

    segments, W, means, counts = superpixel_graph(astronaut(), n_superpixels)
    km = KMeans(K, n_init=4, random_state=seed).fit(means, sample_weight=counts)
    sq = ((means[:, None, :] - km.cluster_centers_[None]) ** 2).sum(-1)
    var = float((counts * sq[np.arange(len(means)), km.labels_]).sum() / counts.sum())
    U = counts[:, None] * sq / (2.0 * var)
    upper = W.tocoo()
    keep = upper.row < upper.col
    edges = np.stack([upper.row[keep], upper.col[keep]], 1)
    return Energy(U, edges, smoothness * upper.data[keep])


def bench_superpixels(n_superpixels, K, repeats):
    from graphclust.inference import trws

    print(f"\n## 6. superpixel graph of the astronaut, about {n_superpixels} superpixels, K={K} "
          f"(median of {repeats} runs, one thread; gap = (E - TRW-S bound) / |E|)")
    print(f"{'smoothness':>10s} {'method':30s} {'time s':>8s} {'energy':>14s} {'E/E_exp':>9s} {'gap':>9s}")
    for smoothness in SUPERPIXEL_SMOOTHNESS:
        E = superpixel_energy(n_superpixels, K, smoothness)
        t_bound, bound_run = timed(lambda: trws(E), 1)
        bound = bound_run.lower_bound
        res_exp = None
        for name, fn in (("alpha_expansion", lambda: alpha_expansion(E)),
                         ("alpha_expansion (fusion=False)", lambda: alpha_expansion(E, fusion=False)),
                         ("alpha_beta_swap", lambda: alpha_beta_swap(E)),
                         ("BP (default)", lambda: belief_propagation(E)),
                         ("ICM (sequential)", lambda: icm(E, random_state=0)),
                         ("TRW-S", lambda: trws(E))):
            t, res = timed(fn, repeats)
            res_exp = res_exp or res
            print(f"{smoothness:10g} {name:30s} {t:8.3f} {res.energy:14.4f} {res.energy / res_exp.energy:9.5f} "
                  f"{(res.energy - bound) / abs(res.energy):9.2e}")
        print(f"{'':10s} ({E.n_nodes} superpixels, {E.n_edges} pair terms; TRW-S bound {bound:.4f}; unary argmin "
              f"energy {E.evaluate(E.unary.argmin(1)):.4f})")


def bench_sweep():
    """Section 7: expansion (with and without the runner-up fusion) against BP and ICM
    over many superpixel and k-NN energies: how often is it above either?"""
    print("\n## 7. sweep: superpixel graphs (1000/5000/20000 superpixels x smoothness 2..64) and 5000-point "
          "k-NN graphs (5 seeds x smoothness 0.5/1/2); energy relative to BP")
    print(f"{'instance':24s} {'expansion':>11s} {'fusion=False':>13s} {'ICM':>10s}")
    cases = [(f"superpixel {n} s={s:g}", lambda n=n, s=s: superpixel_energy(n, 5, s))
             for n in (1000, 5000, 20000) for s in (2, 4, 8, 16, 32, 64)]
    cases += [(f"k-NN seed {seed} s={sm:g}", lambda seed=seed, sm=sm: knn_energy(5000, 5, smoothness=sm, seed=seed)[0])
              for seed in range(5) for sm in (0.5, 1.0, 2.0)]
    above = {"expansion": 0, "fusion=False": 0}
    for name, build in cases:
        E = build()
        bp = belief_propagation(E).energy
        ic = icm(E, random_state=0).energy
        e = {"expansion": alpha_expansion(E).energy, "fusion=False": alpha_expansion(E, fusion=False).energy}
        for key, value in e.items():
            above[key] += value > min(bp, ic) + 1e-9 * abs(value)
        rel = {key: 100 * (value - bp) / abs(bp) for key, value in e.items()}
        print(f"{name:24s} {rel['expansion']:+10.4f}% {rel['fusion=False']:+12.4f}% {100 * (ic - bp) / abs(bp):+9.3f}%")
    for key, count in above.items():
        print(f"{key}: above BP or ICM on {count} of {len(cases)} energies")


# --------------------------------------------------------------------------- warm re-solves
def stroke(side, K, radius, label):
    """The unary rows a scribble stroke changes: a disc of ``radius`` pixels centred at a
    quarter of the grid, whose pixels now cost 0 for ``label`` and 1 for the others."""
    yy, xx = np.mgrid[0:side, 0:side]
    nodes = np.flatnonzero(((yy - side / 4) ** 2 + (xx - side / 4) ** 2 <= radius ** 2).ravel())
    costs = np.ones((len(nodes), K))
    costs[:, label] = 0.0
    return nodes, costs


def bench_warm(sides, K, repeats, radius):
    from graphclust.inference import ExpansionSolver  # not in older checkouts (--baseline runs)

    print(f"\n## 3. Re-solve after a stroke (unaries changed in a disc of radius {radius} px), hard Potts grid, "
          f"K={K} (median of {repeats} runs, one thread)")
    print(f"{'side':>5s} {'method':44s} {'time s':>8s} {'t/t_cold':>8s} {'energy':>14s} {'E - E_cold':>11s} "
          f"{'cuts':>5s}")
    for side in sides:
        noise, beta = GRIDS["hard"]
        E, *_ = potts_grid(side, side, K, noise=noise, beta=beta)
        nodes, costs = stroke(side, K, radius, label=1)
        U2 = E.unary.copy()
        U2[nodes] = costs
        E2 = Energy(U2, E.edges, E.weights)
        first = alpha_expansion(E)
        times = {key: [] for key in ("cold", "labels", "solver0", "solver")}
        out = {}
        for _ in range(repeats):
            start = time.perf_counter()
            out["cold"] = alpha_expansion(E2)
            times["cold"].append(time.perf_counter() - start)
            start = time.perf_counter()
            out["labels"] = alpha_expansion(E2, init=first.labels)
            times["labels"].append(time.perf_counter() - start)
            for key, reuse in (("solver0", False), ("solver", True)):
                solver = ExpansionSolver(E, reuse_flows=reuse)
                solver.solve()
                solver.update_unary(nodes, costs)
                start = time.perf_counter()
                out[key] = solver.solve()
                times[key].append(time.perf_counter() - start)
            out["solver_bytes"] = solver.flow_bytes
        t_cold = float(np.median(times["cold"]))
        e_cold = out["cold"].energy
        names = {"cold": "alpha_expansion(E2), cold",
                 "labels": "alpha_expansion(E2, init=previous labels)",
                 "solver0": "ExpansionSolver(reuse_flows=False) warm",
                 "solver": "ExpansionSolver warm (flows reused)"}
        for key, name in names.items():
            t = float(np.median(times[key]))
            r = out[key]
            assert r.energy == E2.evaluate(r.labels)
            print(f"{side:5d} {name:44s} {t:8.3f} {t / t_cold:8.2f} {r.energy:14.4f} {r.energy - e_cold:11.4f} "
                  f"{r.info['n_moves']:5d}")
        print(f"{'':5s} ({len(nodes)} unary rows changed; flows held by the solver: "
              f"{out['solver_bytes'] / 2**20:.0f} MiB; the first solve, not timed: {first.energy:.4f})")


# --------------------------------------------------------------------------- label costs
def knn_label_cost_energy(n, K, extra, cost, *, dim=5, n_neighbors=10, n_cannot=0, seed=0):
    """:func:`knn_energy` with ``K + extra`` candidate labels (the ``K`` true centres
    plus ``extra`` spurious ones) and ``cost`` per label used."""
    E, y = knn_energy(n, K, dim=dim, n_neighbors=n_neighbors, n_cannot=n_cannot, extra=extra, seed=seed)
    return Energy(E.unary, E.edges, E.weights, constant=E.constant, label_costs=np.full(K + extra, cost)), y


def bench_label_costs(n, repeats):
    print(f"\n## 4. Label costs: k-NN graph, {n} points in 5-D, 8 candidate labels (5 classes used by the data), "
          f"cost per label used (median of {repeats} runs, one thread)")
    print(f"{'instance':28s} {'method':34s} {'time s':>8s} {'energy':>14s} {'E/E_icm':>9s} {'labels':>6s} "
          f"{'viol':>5s}")
    for cost in (20.0, 200.0, 2000.0):
        for n_cannot in (0, n // 10):
            E, y = knn_label_cost_energy(n, 5, 3, cost, n_cannot=n_cannot)
            label = f"h={cost:g}" + (f", +{n_cannot} hard cannot" if n_cannot else "")
            t_icm, r_icm = timed(lambda: icm(E, random_state=0), repeats)
            t_exp, r_exp = timed(lambda: alpha_expansion(E), repeats)
            t_pol, r_pol = timed(lambda: alpha_expansion(E, init=r_icm.labels), repeats)
            for name, t, r in (("ICM (sequential)", t_icm, r_icm), ("alpha_expansion", t_exp, r_exp),
                               ("alpha_expansion from ICM's labels", t_pol, r_pol)):
                print(f"{label:28s} {name:34s} {t:8.3f} {r.energy:14.4f} {r.energy / r_icm.energy:9.5f} "
                      f"{len(np.unique(r.labels)):6d} {E.violated_hard_terms(r.labels):5d}")
            e_true = E.evaluate(y)
            print(f"{label:28s} {'(the true classes, for reference)':34s} {'':8s} {e_true:14.4f} "
                  f"{e_true / r_icm.energy:9.5f} {len(np.unique(y)):6d} {E.violated_hard_terms(y):5d}")


# --------------------------------------------------------------------------- memory on 3-D grids
def grid3d_energy(shape, K, *, noise=0.3, beta=0.1, seed=0):
    """A 6-connected 3-D Potts grid: K slabs along the first axis, Gaussian noise,
    unary = squared distance to the class means."""
    rng = np.random.default_rng(seed)
    idx = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    means = np.linspace(0.0, 1.0, K)
    image = means[np.indices(shape)[0] * K // shape[0]] + rng.normal(0.0, noise, shape)
    U = (image.reshape(-1, 1) - means) ** 2
    del image
    edges = np.concatenate([np.stack([np.moveaxis(idx, ax, 0)[:-1].ravel(), np.moveaxis(idx, ax, 0)[1:].ravel()], 1)
                            for ax in range(3)])
    del idx
    return Energy(U, edges, np.full(len(edges), beta))


def memory_child(shape, K):
    """Build the energy, hand the freed heap back to the system, reset the peak RSS
    (``/proc/self/clear_refs``), run ``alpha_expansion`` and print what the solve added
    to the resident set at its peak (Linux only)."""
    import ctypes
    import gc

    E = grid3d_energy(shape, K)
    build_peak = status_mib("VmHWM:")
    alpha_expansion(grid3d_energy((4, 4, 4), K))  # compile outside the measure
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = status_mib("VmRSS:")
    start = time.perf_counter()
    res = alpha_expansion(E)
    seconds = time.perf_counter() - start
    print(f"RESULT {status_mib('VmHWM:') - base:.0f} {base:.0f} {seconds:.2f} {res.energy!r} {res.iterations} "
          f"{build_peak:.0f}")


def bench_memory(shape, K, baseline):
    import subprocess

    print(f"\n## 5. Memory of alpha_expansion on a {'x'.join(map(str, shape))} 6-connected grid, K={K} "
          f"(peak resident memory the solve adds above the built Energy, one subprocess per code version)")
    runs = [("this checkout", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]
    if baseline:
        runs.insert(0, ("baseline " + baseline, baseline))
    for name, path in runs:
        env = dict(os.environ, PYTHONPATH=path)
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", "x".join(map(str, shape)),
                              "--memory-labels", str(K)], env=env, capture_output=True, text=True, check=True)
        peak, base, seconds, energy, cycles, build = out.stdout.split("RESULT ")[1].split()
        print(f"  {name:40s} solve peak +{peak} MiB (energy held: {base} MiB; building it peaked at {build} MiB), "
              f"{seconds} s, energy {energy}, {cycles} cycles")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--knn", type=int, default=20000, help="points of the k-NN instances")
    parser.add_argument("--no-swap", action="store_true", help="skip alpha_beta_swap on the grids")
    parser.add_argument("--only", choices=("grid", "knn", "warm", "labelcost", "memory", "superpixel", "sweep"),
                        help="run one section")
    parser.add_argument("--superpixels", type=int, default=5000, help="superpixels of section 6")
    parser.add_argument("--memory-shape", default="256x256x128", help="3-D grid of the memory section")
    parser.add_argument("--memory-labels", type=int, default=3)
    parser.add_argument("--baseline", help="a source tree (e.g. an older checkout) to measure memory against")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    parser.add_argument("--warm-sides", default="512,1024", help="grid sides of the re-solve section")
    parser.add_argument("--radius", type=int, default=24, help="stroke radius (pixels) of the re-solve section")
    parser.add_argument("--quick", action="store_true", help="256x256 grids, 2000 points (a smoke run)")
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(tuple(int(v) for v in args.memory_child.split("x")), args.memory_labels)
        return
    side, n_knn = (256, 2000) if args.quick else (args.side, args.knn)
    with threadpool_limits(1):
        warm_up()
        rows = bench_grid(side, 4, args.repeats, not args.no_swap) if args.only in (None, "grid") else []
        if args.only in (None, "knn"):
            bench_knn(n_knn, 5, args.repeats)
        if args.only in (None, "warm"):
            sides = (256,) if args.quick else tuple(int(s) for s in args.warm_sides.split(","))
            bench_warm(sides, 4, args.repeats, args.radius)
        if args.only in (None, "labelcost"):
            bench_label_costs(n_knn, args.repeats)
        if args.only in (None, "superpixel"):
            bench_superpixels(500 if args.quick else args.superpixels, 5, args.repeats)
        if args.only == "sweep":  # energies only, about 2 minutes
            bench_sweep()
    if args.only in (None, "memory"):
        shape = (32, 32, 16) if args.quick else tuple(int(v) for v in args.memory_shape.split("x"))
        bench_memory(shape, args.memory_labels, args.baseline)
    if rows:
        print("\nsummary (time and energy relative to PyMaxflow):")
    for name, label, t_ratio, e_ratio in rows:  # empty without the grid section
        print(f"  {name:5s} {label:34s} time {t_ratio:.2f}x, energy {e_ratio:.6f}x")


if __name__ == "__main__":
    main()
