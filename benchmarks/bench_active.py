"""Active side information: learning curves of graphclust's query strategies against
active-semi-supervised-clustering's (issue #24).

Protocol: standardised features; an oracle answers from the true classes, each answer
wrong with probability ``noise`` (``gc.active.LabelOracle``: the error of a pair is fixed
by the seed and the pair, so the peers and graphclust meet the same oracle); budgets of
``--budgets`` queries (10 to 200); the ARI of the clustering after ``b`` answers, for
each budget ``b``; the area under that curve by the trapezoid rule, divided by the width
of the budget range (so it reads as a mean ARI); the median over ``--seeds`` seeds.

graphclust: ``gc.active.ActiveLoop(estimator, strategy=..., batch_size=schedule)``, the
schedule being the gaps between budgets (so there is a fit at every budget), soft answers
(weight 1). A budget's score is that of the last fit after at most ``b`` answers.
Estimators (``--estimators``): ``hmrf`` = ``HMRF(Centroids(k), constraint_weight=1.0)``,
``hmrf-auto`` = ``HMRF(Centroids(k))`` (cross-validated trust), ``rdpmeans`` =
``RDPMeans(n_clusters=k)``.

Peers (``bench`` extra): ExploreConsolidate, MinMax and NPU, each with PCKMeans and
MPCKMeans (NPU runs its clusterer inside the selection too). Each peer selection runs
once up to the largest budget against a recording oracle (the peers stop at
``MaximumQueriesExceeded``); the constraints at budget ``b`` are the first ``b``
answers, which is what the peer would have produced with budget ``b`` (its choices do
not depend on the budget). The peer clusterer is then fitted on them at every budget.
Failures are results: an exception (e.g. ``InconsistentConstraintsException``) or a
call over ``--peer-timeout`` seconds (10 minutes) is recorded for that budget; a
selection that fails or times out leaves the budgets it reached usable and the rest
failed. A peer's AUC is taken over seeds whose whole curve exists.

Targets, checked per data set and noise level (``MET`` / ``NOT MET``):

* best graphclust (estimator, strategy) AUC >= every peer's AUC;
* that best strategy's AUC >= 1.10 x the AUC of random queries with the same estimator.

``--speed``: selecting 10 pairs on 10 000 points (5 blobs, 10 features, HMRF fitted with
100 random answers) for every strategy; target < 1 s.

    python benchmarks/bench_active.py --quick
    python benchmarks/bench_active.py --datasets iris,wine --seeds 5 --json a.json
    python benchmarks/bench_active.py --from-json a.json,b.json --out report.md
    python benchmarks/bench_active.py --speed

One thread (the script sets it). Figures: ``docs/benchmarks/active.md``.
"""

import argparse
import json
import os
import sys
import time
import warnings
from collections import defaultdict

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import graphclust as gc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_sideinfo_uci import call_with_limit, load, load_peers, write_atomic  # noqa: E402

DATASETS = ("iris", "wine", "breast_cancer", "digits", "ecoli")
BUDGETS = (10, 20, 30, 50, 75, 100, 150, 200)
STRATEGIES = ("uncertainty", "impact", "farthest_first", "random")
ESTIMATORS = ("hmrf", "rdpmeans")
PEER_SELECTORS = ("explore_consolidate", "minmax", "npu")
PEER_CLUSTERERS = ("pckmeans", "mpckmeans")
BASE_SEED = 20261124
RATIO = 1.10


def seeds(dataset, noise, seed):
    """(oracle seed, method seed) of one run."""
    key = [BASE_SEED, DATASETS.index(dataset) if dataset in DATASETS else 99, round(noise * 1000), seed]
    a, b = np.random.SeedSequence(key).generate_state(2)
    return int(a), int(b) % 2**31


def make_estimator(name, k, seed):
    if name == "hmrf":
        return gc.HMRF(gc.potentials.Centroids(k), constraint_weight=1.0, random_state=seed, progress=False)
    if name == "hmrf-mahalanobis":  # MPCK-means' metric learning, for the MPCKMeans peer
        return gc.HMRF(gc.potentials.Centroids(k, distortion="mahalanobis"), constraint_weight=1.0,
                       random_state=seed, progress=False)
    if name == "hmrf-auto":
        return gc.HMRF(gc.potentials.Centroids(k), random_state=seed, progress=False)
    if name == "rdpmeans":
        return gc.RDPMeans(n_clusters=k, random_state=seed, progress=False)
    raise SystemExit(f"unknown estimator {name!r}")


def curve_at(history, budgets):
    """Score after at most ``b`` answers, for each budget."""
    nq = np.array([r["n_queries"] for r in history])
    sc = np.array([r["score"] for r in history], dtype=float)
    return [float(sc[np.searchsorted(nq, b, side="right") - 1]) for b in budgets]


def auc(budgets, values):
    b = np.asarray(budgets, float)
    v = np.asarray(values, float)
    return float(((v[1:] + v[:-1]) / 2 * np.diff(b)).sum() / (b[-1] - b[0]))


def run_graphclust(X, y, k, dataset, noise, seed, estimator, strategy, budgets):
    oseed, mseed = seeds(dataset, noise, seed)
    schedule = [budgets[0]] + list(np.diff(budgets))
    loop = gc.active.ActiveLoop(make_estimator(estimator, k, mseed), strategy=strategy,
                                batch_size=[int(s) for s in schedule], random_state=mseed)
    t0 = time.perf_counter()
    loop.run(X, gc.active.LabelOracle(y, noise, random_state=oseed), max(budgets),
             scorer=lambda est: gc.ari(y, est.labels_))
    return {"method": f"gc:{estimator}:{strategy}", "dataset": dataset, "noise": noise, "seed": seed,
            "ari": curve_at(loop.history_, budgets), "errors": [None] * len(budgets),
            "seconds": time.perf_counter() - t0,
            "query_seconds": float(sum(r["query_seconds"] for r in loop.history_)),
            "n_conflicts": loop.history_[-1]["n_conflicts"]}


class _Recorder:
    """The peers' oracle protocol (``query(i, j) -> bool``) over a LabelOracle, recording
    every answer and stopping the selection at the budget."""

    def __init__(self, answer, budget, stop):
        self.answer, self.budget, self.stop, self.log = answer, budget, stop, []
        self.max_queries_cnt = budget  # the peers read it

    def query(self, i, j):
        if len(self.log) >= self.budget:
            raise self.stop
        same = bool(self.answer(int(i), int(j)))
        self.log.append((int(i), int(j), same))
        return same


def run_peer(X, y, k, dataset, noise, seed, selector, clusterer, budgets, timeout, peers, wanted):
    from active_semi_clustering.active.pairwise_constraints import NPU, ExploreConsolidate, MinMax
    from active_semi_clustering.active.pairwise_constraints.example_oracle import MaximumQueriesExceeded

    oseed, mseed = seeds(dataset, noise, seed)
    cls = peers[clusterer]
    rec = _Recorder(gc.active.LabelOracle(y, noise, random_state=oseed), max(budgets), MaximumQueriesExceeded)
    if selector == "npu":
        learner = NPU(clusterer=cls(n_clusters=k))
    else:
        learner = {"explore_consolidate": ExploreConsolidate, "minmax": MinMax}[selector](n_clusters=k)

    def select():
        np.random.seed(mseed)
        with np.errstate(**wanted):
            learner.fit(X, oracle=rec)

    t0 = time.perf_counter()
    _, sel_seconds, sel_error = call_with_limit(select, timeout)
    reached = len(rec.log) if sel_error is not None else max(budgets)  # a finished selection covers every budget
    aris, errors = [], []
    for b in budgets:
        if b > reached:
            aris.append(None), errors.append(f"selection: {sel_error}")
            continue
        answers = rec.log[:b]
        ml = [(i, j) for i, j, s in answers if s]
        cl = [(i, j) for i, j, s in answers if not s]

        def fit(ml=ml, cl=cl):
            np.random.seed(mseed)
            with np.errstate(**wanted):
                return cls(n_clusters=k).fit(X, ml=ml, cl=cl).labels_

        labels, _, error = call_with_limit(fit, timeout)
        aris.append(None if error else float(gc.ari(y, labels))), errors.append(error)
    return {"method": f"peer:{selector}:{clusterer}", "dataset": dataset, "noise": noise, "seed": seed,
            "ari": aris, "errors": errors, "seconds": time.perf_counter() - t0, "query_seconds": sel_seconds,
            "selection_error": sel_error, "n_answers": len(rec.log)}


def speed(repeats=5):
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(5, 10))
    y = rng.integers(0, 5, 10_000)
    X = centres[y] + rng.normal(size=(10_000, 10))
    S = gc.SideInfo.sample(y, 100, random_state=0)
    est = gc.HMRF(gc.potentials.Centroids(5), constraint_weight=1.0, random_state=0, progress=False).fit(X, S)
    lines = ["| strategy | median seconds (10 pairs, 10 000 points) | target < 1 s |", "|---|---|---|"]
    for strategy in STRATEGIES:
        times = []
        for r in range(repeats):
            t0 = time.perf_counter()
            gc.active.query(est, X, S, n_queries=10, strategy=strategy, random_state=r)
            times.append(time.perf_counter() - t0)
        med = float(np.median(times))
        lines.append(f"| {strategy} | {med:.3f} | {'MET' if med < 1 else 'NOT MET'} |")
    return "\n".join(lines)


def _prefix(recs):
    """Budgets at least half the runs of ``recs`` reached (the leading entries with a
    score): a selection that stops early everywhere (iris) is scored over what it
    reached, a clusterer failing in one run leaves that run out."""
    def lead(r):
        n = 0
        while n < len(r["ari"]) and r["ari"][n] is not None:
            n += 1
        return n
    leads = sorted(lead(r) for r in recs)
    return leads[(len(leads) - 1) // 2] if leads else 0


def _median_auc(recs, budgets, upto=None):
    """Median AUC over the first ``upto`` budgets (default all) of the runs that reached them."""
    n = len(budgets) if upto is None else upto
    if n < 2:
        return None, len(recs)
    vals = [auc(budgets[:n], r["ari"][:n]) for r in recs if all(a is not None for a in r["ari"][:n])]
    return (float(np.median(vals)) if vals else None), len(recs) - len(vals)


def report(records, budgets):
    out = []
    by = defaultdict(list)
    for r in records:
        by[(r["dataset"], r["noise"], r["method"])].append(r)
    cells = sorted({(r["dataset"], r["noise"]) for r in records}, key=lambda c: (c[1], DATASETS.index(c[0])))
    methods = sorted({r["method"] for r in records}, key=lambda m: (m.startswith("peer:"), m))
    gc_methods = [m for m in methods if m.startswith("gc:")]
    peer_methods = [m for m in methods if m.startswith("peer:")]
    out.append(f"Budgets {list(budgets)}; AUC = trapezoid area under ARI vs queries / {budgets[-1] - budgets[0]} "
               "(a mean ARI); median over seeds. A peer whose selection stopped before the last budget in at least "
               "half the runs (it ran out of points to ask about) is scored over the budgets those runs reached, "
               "shown as (<= b), and compared with graphclust over the same budgets; runs that failed before "
               "that are left out, counted as (k/n failed).\n")
    out.append("| data | noise | " + " | ".join(m.split(":", 1)[1] for m in methods) + " |")
    out.append("|---|---|" + "---|" * len(methods))
    verdicts = []
    for d, p in cells:
        row = []
        for m in methods:
            recs = by[(d, p, m)]
            if not recs:
                row.append("—")
                continue
            n = _prefix(recs)
            v, _ = _median_auc(recs, budgets, n)
            if v is None:
                errs = sorted({e for r in recs for e in r["errors"] if e})
                row.append("failed" + (f" ({'; '.join(errs)[:60]})" if errs else ""))
            else:
                fails = _median_auc(recs, budgets, n)[1]
                row.append(f"{v:.3f}" + (f" (<= {budgets[n - 1]})" if n < len(budgets) else "")
                           + (f" ({fails}/{len(recs)} failed)" if fails else ""))
        out.append(f"| {d} | {p:g} | " + " | ".join(row) + " |")
        best, best_m = -1.0, None
        for m in gc_methods:
            if m.endswith(":random"):
                continue
            v, _ = _median_auc(by[(d, p, m)], budgets)
            if v is not None and v > best:
                best, best_m = v, m
        if best_m is None:
            continue
        est = best_m.split(":")[1]
        rand, _ = _median_auc(by[(d, p, f"gc:{est}:random")], budgets)
        ratio = best / rand if rand else float("nan")
        beaten, failed = [], []
        for m in peer_methods:
            recs = by[(d, p, m)]
            if not recs:
                continue
            n = _prefix(recs)
            v, _ = _median_auc(recs, budgets, n)
            if v is None:
                failed.append(m)
                continue
            ours, _ = _median_auc(by[(d, p, best_m)], budgets, n)
            if v > ours:
                beaten.append(f"{m[5:]} {v:.3f} > {ours:.3f}" + (f" (<= {budgets[n - 1]})" if n < len(budgets) else ""))
        ratios = []
        for e in sorted({m.split(":")[1] for m in gc_methods}):
            r_e, _ = _median_auc(by[(d, p, f"gc:{e}:random")], budgets)
            tops = [(_median_auc(by[(d, p, m)], budgets)[0], m) for m in gc_methods
                    if m.split(":")[1] == e and not m.endswith(":random")]
            tops = [t for t in tops if t[0] is not None]
            if r_e and tops:
                v, m = max(tops)
                ratios.append((v / r_e, m))
        best_ratio = max(ratios) if ratios else (float("nan"), "")
        verdicts.append(
            f"* {d}, noise {p:g}: best graphclust {best_m[3:]} {best:.3f}; vs random with {est} {rand:.3f} "
            f"(x{ratio:.3f}: {'MET' if ratio >= RATIO else 'NOT MET'}); vs peers: "
            + ("MET" if not beaten else "NOT MET (" + ", ".join(beaten) + ")")
            + (f"; peers that failed: {', '.join(m[5:] for m in failed)}" if failed else "")
            + f"; largest best-strategy/random ratio over the estimators: {best_ratio[1][3:]} x{best_ratio[0]:.3f}")
    out.append("\nTargets:\n")
    out.extend(verdicts)
    return "\n".join(out)


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="iris, wine, breast_cancer, ecoli; 3 seeds; budgets 10,20,50,100,200; PCKMeans peers only")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seed-start", type=int, default=0, help="first seed (to resume or split a run)")
    ap.add_argument("--noise", default="0,0.1")
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    ap.add_argument("--estimators", default=",".join(ESTIMATORS))
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--peers", default=",".join(PEER_SELECTORS), help="selectors; 'none' for no peers")
    ap.add_argument("--peer-clusterers", default=",".join(PEER_CLUSTERERS))
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    ap.add_argument("--json", help="append every run's record to this JSON-lines file as it finishes")
    ap.add_argument("--from-json", help="comma-separated JSON-lines files to report on (no runs)")
    ap.add_argument("--out", help="write the markdown report here")
    ap.add_argument("--speed", action="store_true", help="only the selection-time check on 10 000 points")
    args = ap.parse_args(argv)
    if args.quick:
        args.datasets, args.seeds, args.budgets = "iris,wine,breast_cancer,ecoli", 3, "10,20,50,100,200"
        args.peer_clusterers = "pckmeans"
    args.datasets = args.datasets.split(",")
    args.noise = [float(x) for x in args.noise.split(",")]
    args.budgets = [int(x) for x in args.budgets.split(",")]
    args.estimators = args.estimators.split(",")
    args.strategies = args.strategies.split(",")
    args.peers = [] if args.peers == "none" else args.peers.split(",")
    args.peer_clusterers = args.peer_clusterers.split(",")
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    warnings.simplefilter("ignore")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.speed:
        with threadpool_limits(1):
            text = speed()
        print(text)
        return text
    records = []
    if args.from_json:
        for path in args.from_json.split(","):
            with open(path) as fh:
                records += [json.loads(line) for line in fh if line.strip()]
        budgets = args.budgets
    else:
        budgets = args.budgets
        peers, wanted = load_peers() if args.peers else ({}, None)
        with threadpool_limits(1):
            for dataset in args.datasets:
                X, y, k = load(dataset, "zscore")
                for noise in args.noise:
                    for seed in range(args.seed_start, args.seed_start + args.seeds):
                        jobs = [("gc", e, s) for e in args.estimators for s in args.strategies]
                        jobs += [("peer", s, c) for s in args.peers for c in args.peer_clusterers]
                        for kind, a, b in jobs:
                            if kind == "gc":
                                rec = run_graphclust(X, y, k, dataset, noise, seed, a, b, budgets)
                            else:
                                rec = run_peer(X, y, k, dataset, noise, seed, a, b, budgets, args.peer_timeout,
                                               peers, wanted)
                            records.append(rec)
                            if args.json:
                                with open(args.json, "a") as fh:
                                    fh.write(json.dumps(rec) + "\n")
                            shown = " ".join("—" if v is None else f"{v:.2f}" for v in rec["ari"])
                            log(f"{dataset} noise={noise:g} seed={seed} {rec['method']}: {shown} "
                                f"({rec['seconds']:.1f} s)")
    text = report(records, budgets)
    if args.out:
        write_atomic(args.out, text + "\n")
    print(text)
    return text


if __name__ == "__main__":
    main()
