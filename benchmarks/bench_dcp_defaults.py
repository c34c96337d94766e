"""Issue #22/#26: what the DCP's default rules give on clean data, and what changing them does.

For each data set (``blobs50``/``blobs150``: scikit-learn ``make_blobs(n, random_state=1)``,
the data of ``check_clustering``; or a ``gc.datasets.load_*`` name), each lengthscale factor
``f`` (times the 7-NN median ``ℓ₀``), each nugget ``σ²`` (the ``jitter`` argument: a diagonal
term ``σ² I`` on the unit-amplitude SE kernel; ``nn`` = the median GP variance of a point
given its nearest neighbour, ``1 − k(x, x₍₁₎)²``) and each ``τ``: the number of clusters of
the point estimate, its largest sizes, ARI against the classes and the mean number of
clusters over the kept sweeps; without side information and with
``SideInfo.sample(y, 100, random_state=seed)``.

    python benchmarks/bench_dcp_defaults.py --datasets blobs50,iris,wine --taus auto,4,16 \
        --nuggets 1e-6,nn --factors 1 --seeds 0
"""

import argparse
import time

import numpy as np
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust.potentials.dcp import _default_lengthscale, _sq_dists


def load(name):
    if name.startswith("blobs"):
        from sklearn.datasets import make_blobs
        return make_blobs(n_samples=int(name[5:]), random_state=1)
    d = getattr(gc.datasets, "load_" + name)()
    X, y = (d[0], d[1]) if isinstance(d, tuple) else (d.data, d.target)
    return np.asarray(X, dtype=float), np.asarray(y)


def nn_nugget(Y, ell):
    D = _sq_dists(Y, Y)
    np.fill_diagonal(D, np.inf)
    return float(np.median(1.0 - np.exp(-D.min(1) / ell ** 2)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="blobs50,blobs150,iris,wine")
    ap.add_argument("--taus", default="auto,4,16")
    ap.add_argument("--nuggets", default="1e-6,nn")
    ap.add_argument("--factors", default="1")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--n-pairs", type=int, default=100)
    a = ap.parse_args(argv)
    for name in a.datasets.split(","):
        X, y = load(name)
        Y = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
        ell0 = _default_lengthscale(Y)
        print(f"== {name}: n={len(X)}, d={X.shape[1]}, k={len(np.unique(y))}, l0={ell0:.3f}", flush=True)
        for f in (float(v) for v in a.factors.split(",")):
            for nug_s in a.nuggets.split(","):
                nug = nn_nugget(Y, f * ell0) if nug_s == "nn" else float(nug_s)
                for tau_s in a.taus.split(","):
                    tau = tau_s if tau_s == "auto" else float(tau_s)
                    for side in (False, True):
                        for seed in (int(s) for s in a.seeds.split(",")):
                            S = gc.SideInfo.sample(y, a.n_pairs, random_state=seed) if side else None
                            t0 = time.process_time()
                            est = gc.DCP(tau=tau, lengthscale=None if f == 1 else f * ell0, jitter=nug,
                                         random_state=seed).fit(X, S)
                            sizes = sorted(np.bincount(est.labels_).tolist(), reverse=True)[:5]
                            mean_k = est.result_.info["n_clusters"][:, 30:].mean()
                            print(f"  l={f:g}l0 nugget={nug:.3g} tau={tau_s} side={int(side)} seed={seed}: "
                                  f"K={est.n_clusters_} sizes={sizes} ARI={adjusted_rand_score(y, est.labels_):.3f} "
                                  f"mean K={mean_k:.1f} tau_={est.tau_:g} cpu={time.process_time() - t0:.1f}s",
                                  flush=True)


if __name__ == "__main__":
    main()
