"""HMRF's constraint closure against noisy side information: use_closure="auto" (the
default: the closure only when the constraints are consistent), True and False, beside
scikit-learn's KMeans without side information, in the same process.

The seed protocol of ``bench_sideinfo_uci.py``: standardised features, pairs sampled
uniformly at rate 0.03 of all pairs (capped at 5 000), a fraction flipped; mean
pairwise F over seeds, one thread.

    python benchmarks/bench_hmrf_closure.py [--datasets iris wine breast_cancer] [--seeds 3]
"""

import argparse
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import graphclust as gc

LOADERS = {"iris": gc.datasets.load_iris, "wine": gc.datasets.load_wine,
           "breast_cancer": gc.datasets.load_breast_cancer, "ecoli": gc.datasets.load_ecoli,
           "glass": gc.datasets.load_glass, "balance_scale": gc.datasets.load_balance_scale}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["iris", "wine", "breast_cancer"], choices=sorted(LOADERS))
    ap.add_argument("--noise", nargs="+", type=float, default=[0.0, 0.05, 0.1])
    ap.add_argument("--rate", type=float, default=0.03)
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    from sklearn.cluster import KMeans

    warnings.simplefilter("ignore")  # the conflicts of noisy draws are expected here
    print("| data | flipped | conflicts (mean) | HMRF auto | HMRF closure | HMRF no closure | KMeans |")
    print("|---|---|---|---|---|---|---|")
    with threadpool_limits(1):
        for name in args.datasets:
            X, y = LOADERS[name]()
            X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
            k, n = len(np.unique(y)), len(y)
            n_pairs = min(5000, int(args.rate * n * (n - 1) / 2))
            for noise in args.noise:
                scores = {m: [] for m in ("auto", True, False, "kmeans")}
                conflicts = []
                for seed in range(args.seeds):
                    S = gc.SideInfo.sample(y, n_pairs=n_pairs, noise=noise, random_state=seed)
                    conflicts.append(len(S.check().conflicts))
                    for mode in ("auto", True, False):
                        est = gc.HMRF(gc.potentials.Centroids(k), use_closure=mode, random_state=seed).fit(X, S)
                        scores[mode].append(gc.pairwise_f_measure(y, est.labels_))
                    km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X)
                    scores["kmeans"].append(gc.pairwise_f_measure(y, km.labels_))
                cells = " | ".join(f"{np.mean(scores[m]):.3f}" for m in ("auto", True, False, "kmeans"))
                print(f"| {name} | {noise:.2f} | {np.mean(conflicts):.0f} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
