"""Issues #22/#26: the number of clusters and the ARI the DCP's defaults give, with and without side information.

Data sets: ``blobs50`` (the data of scikit-learn's ``check_clustering``: ``make_blobs(n_samples=50,
random_state=1)``, shuffled with ``random_state=7`` and standardised), ``blobs150``
(``make_blobs(150, random_state=1)``), ``demo`` (``gc.datasets.load_demo()``: iris as a 10-NN
graph with node features, and its own 40 clean pairs), or any ``gc.datasets.load_*`` name.
Side information (``--sides``): ``none``; ``N`` (``SideInfo.sample(y, N, random_state=seed)``,
clean); ``NnP`` (``N`` pairs, ``P`` % of them flipped). The demo always uses its own 40 pairs
for any side other than ``none``. Each fit is ``gc.DCP(random_state=seed, **params)`` with the
defaults, or with ``--config old`` the defaults before the cluster term
(``concentration=1.0, constraint_weight=1.0``), with ``--params`` (JSON) on top.

A fit meets the issue's target when its number of clusters is within one of the number of
classes and its ARI is at least 0.7. One line per fit, then one row per data set and side.

    python benchmarks/bench_dcp_defaults.py --datasets blobs50,iris,wine,demo,glass,ecoli \
        --sides none,100,100n10 --seeds 0,1,2,3,4

``--protocol`` runs issue #26's noisy protocol instead (the draws of
``benchmarks/bench_noisy_defaults.py``: standardised features, ``r`` of the pairs,
``noise`` flipped, ``--runs`` draws per cell) for each of ``--configs``, every
configuration on the same draws, and prints pairwise F, NMI, ARI, the number of
clusters and the fits meeting the target per data set and noise level:

    python benchmarks/bench_dcp_defaults.py --protocol --configs old,default \
        --datasets iris,wine,glass,ecoli --rates 0.01,0.03 --noise 0,0.1,0.2 --runs 2
"""

import argparse
import collections
import json
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import adjusted_rand_score

import graphclust as gc

CONFIGS = {"default": {}, "old": {"concentration": 1.0, "constraint_weight": 1.0}}


def load(name):
    """``(data, y, own side information or None)``."""
    if name == "blobs50":
        from sklearn.datasets import make_blobs
        from sklearn.preprocessing import StandardScaler
        from sklearn.utils import shuffle

        X, y = make_blobs(n_samples=50, random_state=1)
        X, y = shuffle(X, y, random_state=7)
        return StandardScaler().fit_transform(X), y, None
    if name.startswith("blobs"):
        from sklearn.datasets import make_blobs

        X, y = make_blobs(n_samples=int(name[5:]), random_state=1)
        return X, y, None
    if name == "demo":
        G, S, y, _ = gc.datasets.load_demo()
        return G, y, S
    X, y = getattr(gc.datasets, "load_" + name)()
    return np.asarray(X, dtype=float), np.asarray(y), None


def side_information(side, y, own, seed):
    if side == "none":
        return None
    if own is not None:
        return own
    n, _, noise = side.partition("n")
    return gc.SideInfo.sample(y, int(n), noise=float(noise or 0) / 100, random_state=seed)


def protocol(a):
    """Issue #26's noisy protocol, every configuration on the same draws."""
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_noisy_defaults import draws

    configs = a.configs.split(",")
    cells = collections.defaultdict(list)
    for name in a.datasets.split(","):
        X, y = getattr(gc.datasets, "load_" + name)()
        X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
        k = len(np.unique(y))
        for rate in (float(v) for v in a.rates.split(",")):
            for noise in (float(v) for v in a.noise.split(",")):
                for run, S, seed in draws(name, y, rate, noise, a.runs):
                    for cfg in configs:
                        t0 = time.process_time()
                        est = gc.DCP(random_state=seed, **CONFIGS[cfg]).fit(gc.Problem.from_array(X, S))
                        cpu = time.process_time() - t0
                        lab = est.labels_
                        rec = dict(F=gc.pairwise_f_measure(y, lab), NMI=gc.nmi(y, lab),
                                   ARI=adjusted_rand_score(y, lab), K=est.n_clusters_, cpu=cpu)
                        rec["met"] = abs(rec["K"] - k) <= 1 and rec["ARI"] >= 0.7
                        cells[(name, noise, cfg)].append(rec)
                        print(f"  {name} r={rate:g} noise={noise:g} run={run} {cfg}: K={rec['K']} (k={k}) "
                              f"F={rec['F']:.3f} NMI={rec['NMI']:.3f} ARI={rec['ARI']:.3f} cpu={cpu:.2f}s", flush=True)
    print("\n| data | noise | " + " | ".join(f"{c}: F / NMI / ARI, mean K, met" for c in configs) + " |")
    print("|---|---|" + "---|" * len(configs))
    for name, noise in sorted({(n, z) for n, z, _ in cells}):
        row = []
        for cfg in configs:
            rs = cells[(name, noise, cfg)]
            m = {key: np.mean([r[key] for r in rs]) for key in ("F", "NMI", "ARI", "K")}
            row.append(f"{m['F']:.3f} / {m['NMI']:.3f} / {m['ARI']:.3f}, {m['K']:.1f}, "
                       f"{sum(r['met'] for r in rs)}/{len(rs)}")
        print(f"| {name} | {noise:g} | " + " | ".join(row) + " |")
    for cfg in configs:
        rs = [r for (_, _, c), v in cells.items() if c == cfg for r in v]
        print(f"{cfg}: {len(rs)} fits, CPU s per fit: median {np.median([r['cpu'] for r in rs]):.2f}, "
              f"max {max(r['cpu'] for r in rs):.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="blobs50,iris,wine,demo")
    ap.add_argument("--sides", default="none,100")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--config", default="default", choices=sorted(CONFIGS))
    ap.add_argument("--params", default="{}", help="JSON dict of DCP parameters on top of the configuration")
    ap.add_argument("--protocol", action="store_true", help="issue #26's noisy protocol (see above)")
    ap.add_argument("--configs", default="old,default")
    ap.add_argument("--rates", default="0.01,0.03")
    ap.add_argument("--noise", default="0,0.1,0.2")
    ap.add_argument("--runs", type=int, default=2)
    a = ap.parse_args(argv)
    if a.protocol:
        return protocol(a)
    params = {**CONFIGS[a.config], **json.loads(a.params)}
    rows = []
    for name in a.datasets.split(","):
        data, y, own = load(name)
        k = len(np.unique(y))
        for side in a.sides.split(","):
            fits = []
            for seed in (int(s) for s in a.seeds.split(",")):
                S = side_information(side, y, own, seed)
                t0 = time.process_time()
                est = gc.DCP(random_state=seed, **params).fit(data, S)
                cpu = time.process_time() - t0
                ari = adjusted_rand_score(y, est.labels_)
                sizes = sorted(np.bincount(est.labels_).tolist(), reverse=True)[:5]
                fits.append((est.n_clusters_, ari, cpu))
                print(f"  {name} side={side} seed={seed}: K={est.n_clusters_} (k={k}) sizes={sizes} ARI={ari:.3f} "
                      f"tau={est.tau_:g} log_alpha={est.log_alpha_:.2f} cpu={cpu:.2f}s", flush=True)
            rows.append((name, side, k, fits))
    print(f"\nconfiguration: {a.config} {json.dumps(params)}")
    print("| data | side | k | K per seed | ARI mean (min) | target met | CPU s per fit (median) |")
    print("|---|---|---|---|---|---|---|")
    for name, side, k, fits in rows:
        Ks = ", ".join(str(f[0]) for f in fits)
        aris = np.array([f[1] for f in fits])
        met = sum(abs(f[0] - k) <= 1 and f[1] >= 0.7 for f in fits)
        shown = "own 40" if name == "demo" and side != "none" else side
        print(f"| {name} | {shown} | {k} | {Ks} | {aris.mean():.2f} ({aris.min():.2f}) | {met}/{len(fits)} | "
              f"{np.median([f[2] for f in fits]):.2f} |")


if __name__ == "__main__":
    main()
