"""COSC numerical core: one unconstrained 1-spectral run (spectral start + RatioDCA +
optimal thresholding) against scikit-learn's SpectralClustering on the same k-NN graph.

Two moons (noise 0.1), symmetric 10-NN Gaussian graph (``gc.knn_matrix``). Both methods
get the same precomputed affinity; times exclude graph construction. Prints the median
time over the repeats, the ratio, the clustering error and the normalised cut.

    python benchmarks/bench_cosc_core.py [--sizes 1000 10000 100000] [--repeats 3] [--tol 1e-6]
"""

import argparse
import statistics
import time

import numpy as np

import graphclust as gc
from graphclust.datasets import make_moons
from graphclust.spectral.onespectral import one_spectral_bipartition
from graphclust.spectral.ratiodca import RatioProblem, set_ratio


def error(labels, y):
    return min(np.mean(labels != y), np.mean(labels == y))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tol", type=float, default=1e-6, help="RatioDCA relative-decrease tolerance")
    ap.add_argument("--max-inner-iter", type=int, default=10_000)
    args = ap.parse_args()
    from sklearn.cluster import SpectralClustering

    # compile the numba kernels outside the timings
    X, _ = make_moons(200, noise=0.1, random_state=0)
    one_spectral_bipartition(gc.knn_matrix(X, 10), n_starts=1, random_state=0)

    print("| n | edges | 1-spectral (s) | sklearn (s) | ratio | error 1-spec | error sklearn "
          "| NCut 1-spec | NCut sklearn | outer / inner its |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        X, y = make_moons(n, noise=0.1, random_state=0)
        W = gc.knn_matrix(X, 10)
        P = RatioProblem(W)
        W32 = W.tocsr().astype(np.float64)
        W32.indices = W32.indices.astype(np.int32)
        W32.indptr = W32.indptr.astype(np.int32)
        ours, peer = [], []
        for rep in range(args.repeats):
            t = time.perf_counter()
            res = one_spectral_bipartition(W, n_starts=1, random_state=rep, tol=args.tol,
                                           max_inner_iter=args.max_inner_iter)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            sk = SpectralClustering(2, affinity="precomputed", random_state=rep).fit(W32)
            peer.append(time.perf_counter() - t)
        a, b = statistics.median(ours), statistics.median(peer)
        run = res.runs[0]
        print(f"| {n} | {P.n_edges} | {a:.2f} | {b:.2f} | {a / b:.2f} | {error(res.labels, y):.3f} "
              f"| {error(sk.labels_, y):.3f} | {res.ratio:.3e} | {set_ratio(P, sk.labels_, 0.0):.3e} "
              f"| {run.n_outer} / {run.n_inner} |", flush=True)


if __name__ == "__main__":
    main()
