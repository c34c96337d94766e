"""COSC benchmark: time and clustering error of ``gc.COSC`` (hard mode) with label-derived
constraints against scikit-learn's SpectralClustering (unconstrained), same process.

Part 1 (synthetic): two moons (noise 0.1) and two Gaussian blobs (separation 2.5, so
the unconstrained cut makes mistakes), symmetric 10-NN Gaussian graph
(``gc.knn_matrix(X, 10)``), n = 1k and 10k (100k with ``--large``); 0, 50, 200 and 1000
constraints from ``gc.SideInfo.sample(y, n_pairs=m, random_state=rep)``. Graph
construction is not timed; a COSC time is one ``fit`` (all starts and the gamma
schedule). Part 2 (real data): iris, wine, breast_cancer, digits (z-scored features,
10-NN graph); 2-way runs on the two first classes and k-way runs on all classes, with
0 and 200 constraints: error (best matching of clusters to classes) and violated
constraints.

    python benchmarks/bench_cosc.py [--quick] [--large] [--repeats 3] [--n-starts 5]
        [--part 1 2] [--sizes ...] [--data moons blobs] [--constraints 0 50 200 1000] [--n-jobs 2]
        [--multilevel auto|on|off]
"""

import argparse
import statistics
import time

import numpy as np
from scipy.optimize import linear_sum_assignment

import graphclust as gc
from graphclust.datasets import load_breast_cancer, load_digits, load_iris, load_wine, make_blobs, make_moons


def error(labels, y):
    """Fraction of misclustered points under the best one-to-one matching."""
    labels = np.asarray(labels)
    ks, ys = np.unique(labels), np.unique(y)
    C = np.zeros((ks.size, ys.size))
    np.add.at(C, (np.searchsorted(ks, labels), np.searchsorted(ys, y)), 1)
    r, c = linear_sum_assignment(-C)
    return 1.0 - C[r, c].sum() / labels.size


N_JOBS = None  # set from --n-jobs
MULTILEVEL = "auto"  # set from --multilevel


def fit_cosc(W, y, m, k, rep, n_starts):
    S = gc.SideInfo.sample(y, n_pairs=m, random_state=rep) if m else None
    est = gc.COSC(k, n_starts=n_starts, multilevel=MULTILEVEL, n_jobs=N_JOBS, random_state=rep)
    t = time.perf_counter()
    est = est.fit(W, S) if S is not None else est.fit(W)
    return time.perf_counter() - t, est


def fit_sklearn(W, k, rep):
    from sklearn.cluster import SpectralClustering

    W32 = W.tocsr().astype(np.float64)
    W32.indices = W32.indices.astype(np.int32)
    W32.indptr = W32.indptr.astype(np.int32)
    t = time.perf_counter()
    sk = SpectralClustering(k, affinity="precomputed", random_state=rep).fit(W32)
    return time.perf_counter() - t, sk.labels_


def synthetic(name, n):
    if name == "moons":
        return make_moons(n, noise=0.1, random_state=0)
    X, y = make_blobs(n, 2, separation=2.5, random_state=0)
    return X, y


def part1(sizes, ms, repeats, n_starts, data=("moons", "blobs")):
    print("| data | n | edges | constraints | COSC (s) | sklearn (s) | ratio | error COSC | error sklearn "
          "| violated | gamma | fallback |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in data:
        for n in sizes:
            X, y = synthetic(name, n)
            W = gc.knn_matrix(X, 10)
            peer = [fit_sklearn(W, 2, rep) for rep in range(repeats)]
            tp = statistics.median(t for t, _ in peer)
            ep = statistics.median(error(lab, y) for _, lab in peer)
            for m in ms:
                runs = [fit_cosc(W, y, m, 2, rep, n_starts) for rep in range(repeats)]
                to = statistics.median(t for t, _ in runs)
                eo = statistics.median(error(e.labels_, y) for _, e in runs)
                viol = max(e.result_.violations.n_violated for _, e in runs)
                gam = statistics.median(float(e.result_.info["gamma"]) for _, e in runs)
                fb = sum(bool(e.result_.info["fallback"]) for _, e in runs)
                print(f"| {name} | {n} | {W.nnz // 2} | {m} | {to:.2f} | {tp:.2f} | {to / tp:.1f} | {eo:.4f} "
                      f"| {ep:.4f} | {viol} | {gam:.3g} | {fb}/{repeats} |", flush=True)


def standardise(X):
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def part2(names, ms, n_starts):
    loaders = {"iris": load_iris, "wine": load_wine, "breast_cancer": load_breast_cancer, "digits": load_digits}
    print()
    print("| data | run | n | k | constraints | COSC (s) | error COSC | violated | error sklearn |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        X, y = loaders[name]()
        X = standardise(X)
        classes = np.unique(y)
        tasks = [("2-way", np.isin(y, classes[:2]), 2)]
        if classes.size > 2:
            tasks.append(("k-way", np.ones(y.size, bool), classes.size))
        for run, keep, k in tasks:
            Xs, ys = X[keep], y[keep]
            W = gc.knn_matrix(Xs, 10)
            _, sk = fit_sklearn(W, k, 0)
            for m in ms:
                t, est = fit_cosc(W, ys, m, k, 0, n_starts)
                print(f"| {name} | {run} | {ys.size} | {k} | {m} | {t:.2f} | {error(est.labels_, ys):.3f} "
                      f"| {est.result_.violations.n_violated} | {error(sk, ys):.3f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: n = 1000, one repeat, iris and wine")
    ap.add_argument("--large", action="store_true", help="add n = 100 000 (minutes)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-starts", type=int, default=5)
    ap.add_argument("--part", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    ap.add_argument("--sizes", type=int, nargs="+", help="override the synthetic sizes")
    ap.add_argument("--data", nargs="+", default=["moons", "blobs"], choices=["moons", "blobs"])
    ap.add_argument("--constraints", type=int, nargs="+", default=[0, 50, 200, 1000])
    ap.add_argument("--n-jobs", type=int, default=None, help="COSC threads (default 1)")
    ap.add_argument("--multilevel", choices=["auto", "on", "off"], default="auto",
                    help="COSC multilevel (auto: from 20 000 vertices)")
    args = ap.parse_args()
    global N_JOBS, MULTILEVEL
    N_JOBS = args.n_jobs
    MULTILEVEL = {"auto": "auto", "on": True, "off": False}[args.multilevel]
    # compile the numba kernels outside the timings
    X, y = make_moons(300, noise=0.1, random_state=0)
    fit_cosc(gc.knn_matrix(X, 10), y, 20, 2, 0, 2)
    if args.quick:
        part1([1000], [0, 200], 1, args.n_starts)
        part2(["iris", "wine"], [0, 200], args.n_starts)
        return
    sizes = args.sizes or [1000, 10000] + ([100000] if args.large else [])
    if 1 in args.part:
        part1(sizes, args.constraints, args.repeats, args.n_starts, args.data)
    if 2 in args.part:
        part2(["iris", "wine", "breast_cancer", "digits"], [0, 200], args.n_starts)


if __name__ == "__main__":
    main()
