"""COSC's default (``mode="auto"``) on data sets the rule was not chosen on.

The protocol of ``bench_noisy_defaults.py`` (issue #26: standardised features,
``min(round(r * n(n-1)/2), 5000)`` distinct pairs from the true classes, each flipped
with probability ``noise``, scored by pairwise F and NMI against k-means), on synthetic
sets with other seeds than anything the rule was tuned on:

==============  ==============================================================
blobs-overlap   ``make_blobs(400, 4, n_features=5, separation=2.5)``, seed 11
blobs-wide      ``make_blobs(300, 3, n_features=2, cluster_std=1.5, separation=4)``, seed 12
moons           ``make_moons(400, noise=0.15)``, seed 13
==============  ==============================================================

The UCI sets of ``bench_noisy_defaults.py`` (``--datasets iris,wine,...``) run with its
loader and seeds, so the same draws and the same fits as there, with what this script
adds: the mode and price ``mode="auto"`` chose, per-set gaps and time per fit.

Methods: ``kmeans`` (scikit-learn, ``n_init=10``), ``cosc`` (``gc.COSC(n_clusters=k)``,
the default), ``cosc-hard`` (``mode="hard"``: refuses inconsistent draws, counted as
failures), ``cosc-soft1`` (``mode="soft", gamma=1.0``, the issue's reference point),
``cluster`` (``gc.cluster(X, S, n_clusters=k)``, the recommended entry point; its
"mode" column is the method it chose).

    python benchmarks/bench_cosc_auto.py [--runs 3] [--datasets moons] [--methods kmeans,cosc]
        [--rates 0.01,0.03] [--noise 0,0.05,0.1,0.2] [--out FILE] [--json FILE]

One thread (the script sets it). Figures: ``docs/benchmarks/cosc.md``.
"""

import argparse
import os
import sys
import time
import warnings
from collections import Counter, defaultdict

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import graphclust as gc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_noisy_defaults as noisy  # noqa: E402
from bench_noisy_defaults import NOISE, RATES, draws  # noqa: E402
from bench_sideinfo_uci import call_with_limit  # noqa: E402
from bench_sideinfo_uci import load as load_uci  # noqa: E402

DATASETS = {
    "blobs-overlap": lambda: gc.datasets.make_blobs(400, 4, n_features=5, separation=2.5, random_state=11),
    "blobs-wide": lambda: gc.datasets.make_blobs(300, 3, cluster_std=1.5, separation=4.0, random_state=12),
    "moons": lambda: gc.datasets.make_moons(400, noise=0.15, random_state=13),
}
METHODS = ("kmeans", "cosc", "cosc-hard", "cosc-soft1", "cluster")
BASE_SEED = 20261203


def load(name):
    if name in noisy.DATASETS:
        return load_uci(name, "zscore")
    X, y = DATASETS[name]()
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    y = np.asarray(y)
    return X, y, len(np.unique(y))


def seeds(dataset, rate, noise, run):
    if dataset in noisy.DATASETS:
        return noisy.seeds(dataset, rate, noise, run)
    key = [BASE_SEED, list(DATASETS).index(dataset), round(rate * 10000), round(noise * 10000), run]
    a, b = np.random.SeedSequence(key).generate_state(2)
    return int(a), int(b)


def fit(method, X, S, k, seed):
    if method == "kmeans":
        from sklearn.cluster import KMeans

        return KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X).labels_, {}
    if method == "cluster":
        est = gc.cluster(X, S, n_clusters=k, random_state=seed)
        return est.labels_, {"mode": est.choice_["method"]}
    options = {"cosc": {}, "cosc-hard": {"mode": "hard"}, "cosc-soft1": {"mode": "soft", "gamma": 1.0}}[method]
    est = gc.COSC(n_clusters=k, random_state=seed, **options).fit(gc.Problem.from_array(X, S))
    return est.labels_, est.result_.info


def run(args, log):
    records = []
    for ds in args.datasets:
        X, y, k = load(ds)
        n = len(y)
        log(f"\n== {ds}: n={n}, d={X.shape[1]}, k={k}")
        for rate in args.rates:
            for noise in args.noise:
                cell = defaultdict(list)
                for r, S, mseed in draws(ds, y, rate, noise, args.runs, seeds=seeds):
                    for m in args.methods:
                        def call(m=m, S=S):
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                return fit(m, X, S, k, mseed)

                        out, secs, err = call_with_limit(call, args.timeout)
                        rec = {"dataset": ds, "rate": rate, "noise": noise, "run": r, "k": k, "method": m,
                               "seconds": secs, "error": err}
                        if out is not None:
                            labels, info = out
                            rec.update(F=gc.pairwise_f_measure(y, labels), NMI=gc.nmi(y, labels),
                                       K=int(len(np.unique(labels))), mode=info.get("mode"),
                                       gamma=info.get("gamma") if info.get("mode") == "soft" else None,
                                       scale=info.get("gamma_scale"))
                        records.append(rec)
                        cell[m].append(rec)
                for m, recs in cell.items():
                    ok = [x for x in recs if x["error"] is None]
                    txt = (f"F {np.mean([x['F'] for x in ok]):.3f} NMI {np.mean([x['NMI'] for x in ok]):.3f}"
                           if ok else "—")
                    modes = Counter(x.get("mode") for x in ok if x.get("mode"))
                    log(f"  {ds} r={rate:g} noise={noise:g} {m:10s} {txt}  ok {len(ok)}/{len(recs)}  "
                        f"{np.median([x['seconds'] for x in recs]):.2f} s/fit  {dict(modes) if modes else ''}")
    return records


def _mean(recs, key):
    vals = [x[key] for x in recs if x.get("error") is None and key in x]
    return float(np.mean(vals)) if vals else float("nan")


def report(records, args):
    by = defaultdict(list)
    for x in records:
        by[(x["method"], x["noise"], x["dataset"])].append(x)
    out = ["| method | " + " | ".join(f"noise {p:g}: F / NMI" for p in args.noise) + " |",
           "|---|" + "---|" * len(args.noise)]
    for m in args.methods:
        cells = []
        for p in args.noise:
            recs = [x for d in args.datasets for x in by[(m, p, d)]]
            fails = sum(x["error"] is not None for x in recs)
            cells.append(f"{_mean(recs, 'F'):.3f} / {_mean(recs, 'NMI'):.3f}" + (f" ({fails}/{len(recs)} failed)"
                                                                                 if fails else ""))
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    out += ["", "Per data set, F / NMI (mean over rates and runs):", "",
            "| method | noise | " + " | ".join(args.datasets) + " |", "|---|---|" + "---|" * len(args.datasets)]
    for m in args.methods:
        for p in args.noise:
            out.append(f"| {m} | {p:g} | " + " | ".join(
                f"{_mean(by[(m, p, d)], 'F'):.3f} / {_mean(by[(m, p, d)], 'NMI'):.3f}" for d in args.datasets) + " |")
    if "kmeans" in args.methods and "cosc" in args.methods:
        gaps = []
        for p in args.noise:
            for d in args.datasets:
                for key in ("F", "NMI"):
                    gaps.append((_mean(by[("cosc", p, d)], key) - _mean(by[("kmeans", p, d)], key), f"{d} {key} {p:g}"))
        gaps.sort()
        out += ["", "cosc - kmeans, worst cells: " + ", ".join(f"{n}: {g:+.3f}" for g, n in gaps[:4])]
        bad_k = [x for x in records if x["method"] == "cosc" and x.get("K") is not None
                 and (x["K"] == 1 or x["K"] > 2 * x["k"])]
        out.append(f"cosc runs with one cluster or more than 2k: {len(bad_k)}")
        modes = Counter((x["noise"], x.get("mode")) for x in records if x["method"] == "cosc" and x.get("mode"))
        out.append("cosc mode chosen (noise: hard/soft/k-means runs): " + ", ".join(
            f"{p:g}: {modes[(p, 'hard')]}/{modes[(p, 'soft')]}/{modes[(p, 'kmeans')]}" for p in args.noise))
    for m in [m for m in args.methods if m not in ("kmeans", "cosc")] if "kmeans" in args.methods else []:
        gaps = sorted((_mean(by[(m, p, d)], key) - _mean(by[("kmeans", p, d)], key), f"{d} {key} {p:g}")
                      for p in args.noise for d in args.datasets for key in ("F", "NMI"))
        bad_k = sum(1 for x in records if x["method"] == m and x.get("K") is not None
                    and (x["K"] == 1 or x["K"] > 2 * x["k"]))
        out += ["", f"{m} - kmeans, worst cells: " + ", ".join(f"{n}: {g:+.3f}" for g, n in gaps[:4])
                + f"; runs with one cluster or more than 2k: {bad_k}"]
    if "cosc" in args.methods:
        out += ["", "cosc per data set (all rates, noise levels and runs): worst gap = the lowest cosc - kmeans "
                "over noise levels and both scores; K = number of clusters returned; mode = "
                "hard / soft at gamma > 0 / soft at gamma 0 / k-means runs.", "",
                "| data set | F | NMI | worst gap to k-means | runs with K = 1 or K > 2k | mode h/s/0/km | s per fit |",
                "|---|---|---|---|---|---|---|"]
        for d in args.datasets:
            recs = [x for x in records if x["method"] == "cosc" and x["dataset"] == d]
            gaps = [(_mean(by[("cosc", p, d)], key) - _mean(by[("kmeans", p, d)], key), f"{key} {p:g}")
                    for p in args.noise for key in ("F", "NMI")] if "kmeans" in args.methods else []
            worst = min(gaps) if gaps else None
            bad = sum(1 for x in recs if x.get("K") is not None and (x["K"] == 1 or x["K"] > 2 * x["k"]))
            mode = Counter("0" if x.get("mode") == "soft" and not x.get("gamma") else x.get("mode") for x in recs)
            secs = [x["seconds"] for x in recs]
            out.append(f"| {d} | {_mean(recs, 'F'):.3f} | {_mean(recs, 'NMI'):.3f} | "
                       + (f"{worst[0]:+.3f} ({worst[1]})" if worst else "—")
                       + f" | {bad} | {mode['hard']}/{mode['soft']}/{mode['0']}/{mode['kmeans']} | "
                       f"{np.mean(secs):.1f} (max {np.max(secs):.1f}) |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--rates", default=",".join(map(str, RATES)))
    ap.add_argument("--noise", default=",".join(map(str, NOISE)))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per fit")
    ap.add_argument("--out")
    ap.add_argument("--json", help="raw records")
    args = ap.parse_args(argv)
    args.datasets, args.methods = args.datasets.split(","), args.methods.split(",")
    unknown = ([d for d in args.datasets if d not in DATASETS and d not in noisy.DATASETS]
               + [m for m in args.methods if m not in METHODS])
    if unknown:
        ap.error(f"unknown data set or method: {', '.join(unknown)}")
    args.rates = [float(v) for v in args.rates.split(",")]
    args.noise = [float(v) for v in args.noise.split(",")]
    t0 = time.perf_counter()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    with threadpool_limits(1):
        records = run(args, log)
    noisy.emit(report(records, args) + f"\n{len(records)} fits in {time.perf_counter() - t0:.0f} s.\n", records,
               args.out, args.json)


if __name__ == "__main__":
    main()
