"""TRW-S against loopy BP and ICM, with the TRW-S bound and the exact minimum cut.

Sections (every engine in the same process, one thread, timings the median of
``--repeats`` runs after the numba kernels are compiled):

1. A k-NN graph energy: ``n`` points from four overlapping Gaussian classes in 8
   dimensions, unary = half the squared distance to the class means (K = 4), the
   10-NN Gaussian similarities times a smoothness, and 500 sampled constraints (10 %
   flipped) as signed Potts terms. No exact minimum is available: each engine's
   energy is compared with the TRW-S lower bound, ``gap = (E − bound) / |E|``
   (issue #27 target for TRW-S: ≤ 1 %).
2. The noisy horse: ``skimage.data.horse()`` (horse = 1), Gaussian noise σ = 0.6,
   unary ``(I − μ_l)²`` for μ = 0, 1, 4-connected Potts smoothness λ = 1, 2, 4, 8.
   Compared with the exact ``mincut`` engine: ``excess = (E − E*) / E*`` (target
   for TRW-S: ≤ 0.5 %).
3. BP's damping, measured: damping 0, 0.25, 0.5 and 0.75 on the horse, on the
   256×256 K = 4 grid of ``bench_inference.py`` and on the k-NN energy, against the
   exact minimum (horse) or the TRW-S bound (the others).

    python benchmarks/bench_trws.py [--repeats 3] [--n 5000] [--quick]
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one thread, before numpy/numba load

import argparse  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402

import graphclust as gc  # noqa: E402
from graphclust.inference import belief_propagation, icm, mincut, trws  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_inference import potts_grid, timed  # noqa: E402


# --------------------------------------------------------------------------- instances
def knn_energy(n, smoothness, seed=0):
    """The k-NN graph energy of section 1."""
    rng = np.random.default_rng(seed)
    K, d = 4, 8
    means = 1.2 * rng.normal(0.0, 1.0, (K, d))
    y = rng.integers(K, size=n)
    X = means[y] + rng.normal(0.0, 1.0, (n, d))
    P = gc.Problem.from_graph(gc.knn_graph(X, n_neighbors=10),
                              gc.SideInfo.sample(y, n_pairs=500, noise=0.1, random_state=seed))
    U = 0.5 * ((X[:, None, :] - means[None]) ** 2).sum(-1)
    return gc.Energy.from_problem(P, U, smoothness=smoothness, constraint_scale=2.0)


def horse_energy(lam, sigma=0.6, seed=0):
    """The noisy-horse energy of section 2."""
    from skimage import data

    img = (~data.horse()).astype(np.float64)
    noisy = img + np.random.default_rng(seed).normal(0.0, sigma, img.shape)
    h, w = img.shape
    U = np.stack([noisy ** 2, (noisy - 1.0) ** 2], axis=-1).reshape(-1, 2)
    idx = np.arange(h * w).reshape(h, w)
    edges = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                            np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    return gc.Energy(U, edges, np.full(len(edges), float(lam)))



def warm_up():
    E = knn_energy(200, 1.0)
    trws(E, max_iter=2)
    belief_propagation(E, max_iter=2)
    icm(E, random_state=0)
    mincut(horse_energy(1.0))


ENGINES = [("TRW-S", lambda E: trws(E)), ("BP (default)", lambda E: belief_propagation(E)),
           ("ICM", lambda E: icm(E, random_state=0))]


# --------------------------------------------------------------------------- sections
def bench_knn(n, repeats):
    print(f"\n## 1. k-NN graph energy: n={n}, K=4, 10-NN, 500 constraints (10 % noise); "
          f"gap = (E - TRW-S bound) / |E|, median of {repeats}")
    print(f"{'smoothness':>10s} {'engine':14s} {'time s':>8s} {'iters':>6s} {'energy':>13s} {'gap %':>9s}")
    for smoothness in (1.0, 4.0):
        E = knn_energy(n, smoothness)
        rows = [(name, *timed(lambda f=f: f(E), repeats)) for name, f in ENGINES]
        bound = rows[0][2].lower_bound
        for name, t, res in rows:
            gap = 100 * (res.energy - bound) / abs(res.energy)
            print(f"{smoothness:10.1f} {name:14s} {t:8.3f} {res.iterations:6d} {res.energy:13.4f} {gap:9.5f}")
        tr = rows[0][2]
        print(f"{'':10s} TRW-S bound {bound:.4f}, stop {tr.info['stop']!r}; gap as a share of the "
              f"pairwise part (E - sum of unary minima): "
              f"{100 * (tr.energy - bound) / (tr.energy - E.unary.min(axis=1).sum()):.4f} %")


def bench_horse(repeats, lams=(1.0, 2.0, 4.0, 8.0)):
    print(f"\n## 2. Noisy horse (328x400, sigma 0.6, 2 labels): excess = (E - E*) / E* against the exact "
          f"min-cut, median of {repeats}")
    print(f"{'lambda':>6s} {'engine':14s} {'time s':>8s} {'iters':>6s} {'energy':>13s} {'excess %':>9s} "
          f"{'bound gap %':>11s}")
    for lam in lams:
        E = horse_energy(lam)
        t_ex, ex = timed(lambda: mincut(E), repeats)
        print(f"{lam:6.0f} {'mincut (exact)':14s} {t_ex:8.3f} {'':>6s} {ex.energy:13.4f} {0.0:9.5f}")
        for name, f in ENGINES:
            t, res = timed(lambda f=f: f(E), repeats)
            excess = 100 * (res.energy - ex.energy) / ex.energy
            bgap = "" if res.lower_bound is None else f"{100 * (ex.energy - res.lower_bound) / ex.energy:11.5f}"
            print(f"{lam:6.0f} {name:14s} {t:8.3f} {res.iterations:6d} {res.energy:13.4f} {excess:9.5f} {bgap:>11s}")


def bench_damping(n, repeats, quick):
    print(f"\n## 3. BP damping: excess % over the exact minimum (horse) or the TRW-S bound (others), "
          f"iterations, time (median of {repeats})")
    cases = [(f"horse lambda={lam:g}", horse_energy(lam), "exact") for lam in (1.0, 4.0, 8.0)]
    cases.append(("grid 256^2 K=4" if not quick else "grid 64^2 K=4",
                  potts_grid(*((64, 64) if quick else (256, 256)), 4)[0], "trws"))
    cases.append((f"k-NN n={n} s=4", knn_energy(n, 4.0), "trws"))
    dampings = (0.0, 0.25, 0.5, 0.75)
    print(f"{'energy':22s} " + " ".join(f"{'d=' + str(d):>24s}" for d in dampings))
    for name, E, ref_kind in cases:
        ref = mincut(E).energy if ref_kind == "exact" else trws(E).lower_bound
        cells = []
        for d in dampings:
            t, res = timed(lambda d=d: belief_propagation(E, damping=d), repeats)
            cells.append(f"{100 * (res.energy - ref) / abs(ref):8.3f}% {res.iterations:4d}it {t:6.2f}s")
        print(f"{name:22s} " + " ".join(f"{c:>24s}" for c in cells))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--quick", action="store_true", help="smaller instances, one run each")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    n = 1000 if args.quick else args.n
    warm_up()
    print(f"numba threads: {os.environ['NUMBA_NUM_THREADS']}")
    bench_knn(n, repeats)
    bench_horse(repeats, (1.0, 8.0) if args.quick else (1.0, 2.0, 4.0, 8.0))
    bench_damping(n, repeats, args.quick)


if __name__ == "__main__":
    main()
