"""ICM vs loopy BP vs the LP relaxation as the E-step of HMRF-KMeans (seed 002).

Reproduces the experiment of Bilenko & Basu (SRL-2004): pairwise F-measure against the
number of constraints, one curve per E-step engine, on iris, wine and digits.

Protocol (seed note §4, §6 item 16):

* ``--reps`` repetitions of a ``--folds``-fold split of the points (default 4 x 5 = 20
  runs per point); in each run the constraints are drawn uniformly at random among
  the pairs of *training-fold* points (``SideInfo.sample(..., among=train)``, unit
  weight, a same-class pair is a must-link, otherwise a cannot-link);
* the clustering runs on all points; the pairwise F-measure is computed over the
  pairs of *test-fold* points only;
* the three engines see the same constraints and the same ``random_state`` in each run,
  so their F-measures are paired;
* distortion: parameterised squared Euclidean with one learnt diagonal metric
  (``Centroids(k, distortion="mahalanobis", metric="diagonal")``), distance-scaled
  penalties, the transitive closure of the constraints in the E-step, raw features.

Times: ``e-step`` is the mean wall time of one E-step as HMRF reports it
(``result_.info["e_step_seconds"] / iterations``, which includes building the energy:
unaries, pair distortions and φ_max); ``engine`` is the engine's own time per E-step
(``engine_runs[*]["seconds"]``).

    python benchmarks/hmrf_inference_comparison.py [--quick] [--datasets iris,wine,digits]
        [--engines icm,bp,lp] [--reps 4] [--folds 5] [--json results.json] [--figure PATH]

``--engines`` takes any of ``icm``, ``bp``, ``lp`` and ``auto`` (HMRF's default,
``inference="auto"``: the engine ``graphclust.inference.default_engine`` picks for each
E-step energy), e.g. ``--engines bp,auto`` to compare the default with BP run for run.
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import graphclust as gc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_sideinfo_uci import write_atomic  # noqa: E402

ENGINES = ("icm", "bp", "lp", "auto")

#: constraint counts per data set, and the largest count the LP E-step is run at
#: (None: no cap). Digits: see ``docs/benchmarks/hmrf.md`` for the LP cap.
SETTINGS = {
    "iris": {"counts": [0, 10, 25, 50, 100, 200, 400], "lp_cap": None},
    "wine": {"counts": [0, 10, 25, 50, 100, 200, 400], "lp_cap": None},
    "digits": {"counts": [0, 100, 300, 1000, 3000], "lp_cap": 1000},
}
QUICK = {
    "iris": {"counts": [0, 25, 100], "lp_cap": None},
    "wine": {"counts": [0, 25, 100], "lp_cap": None},
    "digits": {"counts": [0, 100], "lp_cap": 100},
}

DEFAULT_FIGURE = Path(__file__).resolve().parents[1] / "docs" / "img" / "hmrf_inference_comparison.png"


def folds_of(n, n_folds, rng):
    """``n_folds`` disjoint test folds covering a random permutation of ``range(n)``."""
    return np.array_split(rng.permutation(n), n_folds)


def warm_up(engines=ENGINES):
    """Compile (or load from numba's cache) the engines' kernels outside the timings."""
    X = np.array([[0.0, 0.0], [0.1, 0.0], [3.0, 0.0], [3.1, 0.2], [0.0, 3.0], [0.2, 3.1]])
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(1, 2), (3, 4)])
    for engine in engines:
        gc.HMRF(gc.potentials.Centroids(3, distortion="mahalanobis"), inference=engine, random_state=0).fit(X, S)


def one_run(X, y, test, S, k, engine, seed):
    """Fit HMRF-KMeans with one E-step engine; return F on the test pairs and timings."""
    est = gc.HMRF(gc.potentials.Centroids(k, distortion="mahalanobis", metric="diagonal"),
                  inference=engine, random_state=seed)
    start = time.perf_counter()
    est.fit(X, S)
    total = time.perf_counter() - start
    info = est.result_.info
    iters = info["iterations"]
    return {
        "f": gc.metrics.pairwise_f_measure(y, est.labels_, subset=test),
        "iterations": iters,
        "e_step_s": info["e_step_seconds"] / iters,
        "engine_s": sum(r["seconds"] for r in info["engine_runs"]) / iters,
        "fit_s": total,
        "n_must_closure": info.get("n_must_closure", info["n_must"]),
        "n_cannot_closure": info.get("n_cannot_closure", info["n_cannot"]),
    }


def run_dataset(name, settings, reps, n_folds, log, engines=("icm", "bp", "lp")):
    X, y = getattr(gc.datasets, f"load_{name}")()
    k = len(np.unique(y))
    rows = []
    for count in settings["counts"]:
        here = [e for e in engines if e != "lp" or settings["lp_cap"] is None or count <= settings["lp_cap"]]
        start = time.perf_counter()
        for rep in range(reps):
            split_rng = np.random.default_rng([2004, rep])
            for fold, test in enumerate(folds_of(len(y), n_folds, split_rng)):
                train = np.setdiff1d(np.arange(len(y)), test)
                seed = 1000 * rep + fold
                S = gc.SideInfo.sample(y, n_pairs=count, among=train, random_state=seed) if count else None
                for engine in here:
                    r = one_run(X, y, test, S, k, engine, seed)
                    rows.append({"dataset": name, "constraints": count, "rep": rep, "fold": fold,
                                 "engine": engine, **r})
        done = [r for r in rows if r["dataset"] == name and r["constraints"] == count]
        means = {e: statistics.fmean(r["f"] for r in done if r["engine"] == e) for e in here}
        log(f"  {name:6s} {count:5d} constraints: " + "  ".join(f"{e}={m:.3f}" for e, m in means.items())
            + f"   ({time.perf_counter() - start:.0f} s)")
    return rows


def summarise(rows):
    """Per (dataset, constraints, engine): mean/std of F and timings; paired BP/LP - ICM."""
    out = []
    keys = sorted({(r["dataset"], r["constraints"]) for r in rows}, key=lambda t: (list(SETTINGS).index(t[0]), t[1]))
    for ds, count in keys:
        sel = [r for r in rows if r["dataset"] == ds and r["constraints"] == count]
        by = {e: sorted((r for r in sel if r["engine"] == e), key=lambda r: (r["rep"], r["fold"])) for e in ENGINES}
        entry = {"dataset": ds, "constraints": count, "runs": max(len(rs) for rs in by.values())}
        for e, rs in by.items():
            if not rs:
                continue
            f = np.array([r["f"] for r in rs])
            entry[e] = {
                "f_mean": float(f.mean()), "f_std": float(f.std(ddof=1)) if len(f) > 1 else 0.0,
                "e_step_s": float(np.mean([r["e_step_s"] for r in rs])),
                "engine_s": float(np.mean([r["engine_s"] for r in rs])),
                "iterations": float(np.mean([r["iterations"] for r in rs])),
            }
            if e in ("bp", "lp") and by["icm"]:
                d = f - np.array([r["f"] for r in by["icm"]])
                entry[e]["diff_mean"] = float(d.mean())
                entry[e]["diff_se"] = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else 0.0
                entry[e]["wins_ties_losses"] = [int((d > 1e-12).sum()), int((np.abs(d) <= 1e-12).sum()),
                                                int((d < -1e-12).sum())]
        first = next(rs for rs in by.values() if rs)
        entry["closure"] = [float(np.mean([r["n_must_closure"] for r in first])),
                            float(np.mean([r["n_cannot_closure"] for r in first]))]
        if by["bp"] and by["auto"]:  # the default against BP, run for run
            d = np.array([r["f"] for r in by["auto"]]) - np.array([r["f"] for r in by["bp"]])
            entry["auto"]["vs_bp"] = [float(d.mean()), int((d > 1e-12).sum()), int((np.abs(d) <= 1e-12).sum()),
                                      int((d < -1e-12).sum())]
        out.append(entry)
    return out


def _f_cell(s, e):
    return f"{s[e]['f_mean']:.3f} ± {s[e]['f_std']:.3f}" if e in s else "—"


def _diff_cell(s, e):
    return f"{s[e]['diff_mean']:+.4f} ± {s[e]['diff_se']:.4f}" if "diff_mean" in s.get(e, {}) else "—"


def _time_cell(s, e):
    return f"{1e3 * s[e]['e_step_s']:.1f} / {1e3 * s[e]['engine_s']:.1f}" if e in s else "—"


def print_tables(summary, log):
    log("\n### Pairwise F-measure on test-fold pairs (mean ± std over runs)\n")
    log("| data | constraints | runs | ICM F | BP F | LP F | BP − ICM (± s.e.) | BP vs ICM w/t/l | LP − ICM (± s.e.) |")
    log("| --- | ---: | ---: | --- | --- | --- | --- | --- | --- |")
    for s in summary:
        wtl = "/".join(map(str, s["bp"]["wins_ties_losses"])) if "wins_ties_losses" in s.get("bp", {}) else "—"
        log(f"| {s['dataset']} | {s['constraints']} | {s['runs']} | {_f_cell(s, 'icm')} | {_f_cell(s, 'bp')} "
            f"| {_f_cell(s, 'lp')} | {_diff_cell(s, 'bp')} | {wtl} | {_diff_cell(s, 'lp')} |")
    paired = [s for s in summary if "auto" in s and "vs_bp" in s["auto"]]
    if paired:
        log("\n### HMRF's default engine (inference='auto') against BP, run for run\n")
        log("| data | constraints | runs | BP F | default F | default − BP | default vs BP w/t/l |")
        log("| --- | ---: | ---: | --- | --- | --- | --- |")
        for s in paired:
            d, w, t, lo = s["auto"]["vs_bp"]
            log(f"| {s['dataset']} | {s['constraints']} | {s['runs']} | {_f_cell(s, 'bp')} | {_f_cell(s, 'auto')} "
                f"| {d:+.4f} | {w}/{t}/{lo} |")
    log("\n### Time per E-step (mean, ms): HMRF's E-step (energy build + engine) / engine alone; EM iterations\n")
    log("| data | constraints | closure ML/CL | ICM | BP | LP | default | iterations ICM/BP/LP/default |")
    log("| --- | ---: | --- | --- | --- | --- | --- | --- |")
    for s in summary:
        its = "/".join(f"{s[e]['iterations']:.1f}" if e in s else "—" for e in ENGINES)
        times = " | ".join(_time_cell(s, e) for e in ENGINES)
        log(f"| {s['dataset']} | {s['constraints']} | {s['closure'][0]:.0f}/{s['closure'][1]:.0f} | {times} | {its} |")


def plot(summary, datasets, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 3.8), squeeze=False)
    styles = {"icm": ("ICM", "o", "-"), "bp": ("loopy BP", "s", "--"), "lp": ("LP relaxation", "^", ":"),
              "auto": ("default engine", "d", "-.")}
    for ax, ds in zip(axes[0], datasets):
        sel = [s for s in summary if s["dataset"] == ds]
        for j, e in enumerate(ENGINES):
            pts = [s for s in sel if e in s]
            if not pts:
                continue
            x = np.array([s["constraints"] for s in pts]) * 1.07 ** (j - 1)  # small offset per engine
            m = np.array([s[e]["f_mean"] for s in pts])
            sd = np.array([s[e]["f_std"] for s in pts])
            label, marker, ls = styles[e]
            ax.errorbar(x, m, yerr=sd, marker=marker, linestyle=ls, capsize=3, markersize=4, label=label)
        ax.set_title(f"{ds} ({sel[0]['runs']} runs per point)")
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("number of constraints (symlog scale)")
        ax.set_ylabel("pairwise F-measure (test pairs)")
        ax.grid(alpha=0.3)
    axes[0][0].legend(loc="lower right")
    fig.suptitle("HMRF-KMeans E-step: ICM vs loopy BP vs LP (mean ± std)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="iris,wine,digits",
                        help="comma-separated subset of iris, wine, digits")
    parser.add_argument("--reps", type=int, default=None, help="repetitions of the k-fold split (default 4)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--engines", default="icm,bp,lp",
                        help="comma-separated E-step engines: icm, bp, lp, auto (HMRF's default)")
    parser.add_argument("--quick", action="store_true", help="few counts and 1 x 2 runs per point (smoke test)")
    parser.add_argument("--json", type=Path, default=None, help="write the per-run results here")
    parser.add_argument("--figure", default=None,
                        help="where to save the figure ('' to skip; default docs/img/"
                             "hmrf_inference_comparison.png, none with --quick)")
    args = parser.parse_args(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    for d in datasets:
        if d not in SETTINGS:
            parser.error(f"unknown data set {d!r}; choose from {', '.join(SETTINGS)}")
    engines = tuple(e.strip() for e in args.engines.split(",") if e.strip())
    for e in engines:
        if e not in ENGINES:
            parser.error(f"unknown engine {e!r}; choose from {', '.join(ENGINES)}")
    settings = QUICK if args.quick else SETTINGS
    reps = args.reps if args.reps is not None else (1 if args.quick else 4)
    n_folds = 2 if args.quick and args.folds == 5 else args.folds

    def log(msg):
        print(msg, flush=True)

    log(f"# HMRF-KMeans E-step comparison: {reps} x {n_folds}-fold = {reps * n_folds} runs per point")
    rows = []
    with threadpool_limits(1):  # every engine timed on one thread
        warm_up(engines)
        start = time.perf_counter()
        for ds in datasets:
            rows += run_dataset(ds, settings[ds], reps, n_folds, log, engines)
            cap = settings[ds]["lp_cap"]
            if cap is not None:
                log(f"  ({ds}: LP E-step run only up to {cap} constraints)")
    log(f"\ntotal time {time.perf_counter() - start:.0f} s")
    summary = summarise(rows)
    print_tables(summary, log)
    if args.json:
        write_atomic(str(args.json), json.dumps({"runs": rows, "summary": summary}, indent=1))
    figure = args.figure if args.figure is not None else ("" if args.quick else str(DEFAULT_FIGURE))
    if figure:
        plot(summary, datasets, Path(figure))
        log(f"\nfigure: {figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
