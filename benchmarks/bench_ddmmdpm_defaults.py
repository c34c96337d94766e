"""dd-MMDPM's and MMDPM's defaults against issue #22, item 3: do they find the number of
classes (within ±1) with ARI >= 0.7 on iris, wine, the shipped demo and scikit-learn's
three-blob check, with and without side information?

Data: iris as shipped (the demo's features), wine standardised (its raw units let
proline, in the hundreds, decide every distance), the shipped demo (``load_demo``: iris
as a 10-NN graph with its 40 constraints, and the same graph without them), and
``sklearn.datasets.make_blobs(n_samples=50, random_state=1)`` standardised (the data of
scikit-learn's ``check_clustering``). Side information (``--side``): none, or
``round(r * n(n-1)/2)`` pairs from ``SideInfo.sample(y, n_pairs, noise=...)`` written
``r/noise`` (seed ``1000 + seed``).

Variants (``--variants``):

=======  ====================================================================
default  the estimators as they are
old      the defaults before issue #22: ``beta=1, base_std=1``, one chain, and
         ``constraint_weight="auto"`` choosing from (1, 1/3, 1/9)
=======  ====================================================================

Reported per estimator, variant, data and side information: the number of clusters and
the ARI of every seed, the constraints violated, the median seconds per fit, and whether
every seed meets both targets.

    python benchmarks/bench_ddmmdpm_defaults.py [--estimators DDMMDPM,MMDPM] [--variants default,old]
        [--datasets iris,wine,demo,blobs] [--side none,0.01/0,0.03/0.1] [--seeds 3]

One thread (the script sets it). Figures: ``docs/ddmmdpm.md`` ("Defaults that find the
number of clusters").
"""

import argparse
import contextlib
import os
import time
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import graphclust as gc  # noqa: E402
import graphclust.ddmmdpm as ddmmdpm_module  # noqa: E402

#: variant -> (estimator parameters, the cross-validation grid of constraint weights or None)
VARIANTS = {
    "default": ({}, None),
    "old": ({"beta": 1.0, "base_std": 1.0, "n_chains": 1}, (1.0, 1 / 3, 1 / 9)),
}


@contextlib.contextmanager
def cv_weights(grid):
    """``graphclust.ddmmdpm.CV_WEIGHTS`` set to ``grid`` (unchanged for None) inside."""
    saved = ddmmdpm_module.CV_WEIGHTS
    if grid is not None:
        ddmmdpm_module.CV_WEIGHTS = grid
    try:
        yield
    finally:
        ddmmdpm_module.CV_WEIGHTS = saved


def standardised(X):
    return (X - X.mean(0)) / X.std(0)


def datasets():
    """name -> (data, shipped side information or None, classes)."""
    from sklearn.datasets import make_blobs

    iris, y_iris = gc.datasets.load_iris()
    wine, y_wine = gc.datasets.load_wine()
    G, S, y_demo, _ = gc.datasets.load_demo()
    blobs, y_blobs = make_blobs(n_samples=50, random_state=1)
    return {"iris": (iris, None, y_iris), "wine": (standardised(wine), None, y_wine), "demo": (G, S, y_demo),
            "blobs": (standardised(blobs), None, y_blobs)}


def side_modes(text):
    """``"none,0.01/0"`` -> ``["none", (0.01, 0.0)]``."""
    return [m if m == "none" else tuple(float(v) for v in m.split("/")) for m in text.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--estimators", default="DDMMDPM,MMDPM")
    ap.add_argument("--variants", default="default,old")
    ap.add_argument("--datasets", default="iris,wine,demo,blobs")
    ap.add_argument("--side", default="none,0.01/0,0.03/0.1")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    data = datasets()
    print("| estimator | variant | data | side information | K (k) | ARI | violated | s/fit | targets |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.estimators.split(","):
        for variant in args.variants.split(","):
            for ds in args.datasets.split(","):
                X, shipped, y = data[ds]
                k = len(np.unique(y))
                modes = (["shipped"] if shipped is not None else []) + side_modes(args.side)
                if shipped is not None:  # the demo: its own 40 constraints, or none
                    modes = [m for m in modes if m in ("shipped", "none")]
                for mode in modes:
                    Ks, aris, bad, secs = [], [], [], []
                    for seed in range(args.seeds):
                        if mode == "shipped":
                            S = shipped
                        elif mode == "none":
                            S = None
                        else:
                            rate, noise = mode
                            n = len(y)
                            S = gc.SideInfo.sample(y, int(round(rate * n * (n - 1) / 2)), noise=noise,
                                                   random_state=1000 + seed)
                        params, grid = VARIANTS[variant]
                        est = getattr(gc, name)(random_state=seed, **params)
                        start = time.perf_counter()
                        with warnings.catch_warnings(), cv_weights(grid):
                            warnings.simplefilter("ignore")
                            est.fit(X, S)
                        secs.append(time.perf_counter() - start)
                        Ks.append(est.n_clusters_)
                        aris.append(gc.ari(y, est.labels_))
                        v = est.result_.violations
                        bad.append("–" if S is None else f"{v.n_violated}/{v.n_must + v.n_cannot}")
                    met = all(abs(K - k) <= 1 for K in Ks) and min(aris) >= 0.7
                    side = mode if isinstance(mode, str) else f"{mode[0]:g} of pairs, noise {mode[1]:g}"
                    print(f"| {name} | {variant} | {ds} | {side} | {', '.join(map(str, Ks))} ({k}) | "
                          f"{', '.join(f'{a:.2f}' for a in aris)} | {', '.join(bad)} | {np.median(secs):.2f} | "
                          f"{'met' if met else 'not met'} |", flush=True)


if __name__ == "__main__":
    main()
