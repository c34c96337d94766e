"""The TVClust / RDP-means seed protocol on UCI data: noisy must-/cannot-links, many methods.

Reproduces the experimental protocol of Khashabi, Wieting, Liu & Liang (2015), as the
research spec ``seed-000-tvclust-rdpmeans.md`` (§4) describes it, on the data sets we ship:
the seed's five (iris, wine, ecoli, glass, balance_scale; glass without the record-number
column the seed's reader kept, and with its 6 classes, spec P21) and two larger ones
(breast_cancer, digits); ``glass_id`` is glass as the seed's reader saw it, to reproduce
its numbers:

* constraints are sampled from the true classes at rate ``r`` in {0.01, 0.03, 0.05} and
  accuracy ``p`` in {1.0, 0.95, 0.9, 0.8}: ``SideInfo.sample(y, rate=r, noise=1 - p,
  convention="ref_code")`` -- the reference code's loop (``round(r·n²)`` ordered draws,
  about ``r·n²`` distinct pairs; spec P18 recommends it for reproduction), every
  constraint's type flipped with probability ``1 - p``; unit weights;
* ``--runs`` runs per (data set, r, p) cell, each with its own constraint draw and its own
  algorithm seeds (both derived from the data set, r, p and the run number, so any subset
  of the grid draws the same constraints as the full run);
* every method clusters all points and is scored on all points (spec P24) by the pairwise
  F-measure, ARI and NMI (geometric) of ``graphclust.metrics``;
* features are raw by default, as in the seed's pipeline (spec §4.1: only TVClust-VB
  standardised, internally); ``--features zscore`` standardises every column.

Methods (``--methods``, comma-separated keys):

=============  ============================================================================
kmeans         scikit-learn ``KMeans(k, n_init=10)``, true k, no constraints
dpmeans        ``gc.DPMeans``: λ from the k hint by the reference code's rule (k-th largest
               squared distance to the mean, ``lam_rule="kth_from_mean"``), ``init="box"``
rdpmeans       ``gc.RDPMeans``, the paper's annealing as its reference code runs it:
               ``xi="anneal"`` (ξ = 0 on pass 1, 1e-3·2^(t-1) on pass t), no cap (``xi_max=None``),
               stop after a pass without a move once ξ has reached the level where the
               constraints decide every move they touch (``anneal_stop="saturation"``, the
               default; the paper's "20 passes without a move" can stop before ξ matters);
               same λ and start as dpmeans
rdpmeans-x10   the same with ``n_init=10`` restarts, keeping the lowest final objective
rdpmeans-pq    ``gc.RDPMeans(xi="pq", p_link=p)`` given the true accuracy ``p``
               (``ξ = 2σ² ln(p/(1-p))``, ``σ²`` from a DP-means stage); at ``p = 1`` the
               constraints are given weight ``inf`` (hard), as ``RDPMeans`` asks for
               certain constraints
tvclust        ``gc.TVClust`` (collapsed Gibbs, full Gaussian, p and q learnt from their
               default Beta(10, 1) priors, started from RDP-means, ``init="rdpmeans"``),
               ``--tvclust-sweeps`` sweeps, half burn-in
tvclust-diag   the same with ``likelihood="gaussian-diag"`` (Normal-inverse-gamma per
               feature: about 2d instead of d²/2 parameters per cluster)
hmrf           ``gc.HMRF(Centroids(k), inference="bp")``, HMRF-KMeans with distance-scaled
               penalties, true k; the transitive closure of the constraints only at
               ``p = 1`` (``use_closure=False`` otherwise: the closure of noisy
               must-links chains whole classes together)
pckmeans       PCKMeans    } active-semi-supervised-clustering 0.0.1 (``bench`` extra),
mpckmeans      MPCKMeans   } true k, the same pairs as ``ml=``/``cl=`` lists, run in this
copkmeans      COPKMeans   } process; failures are reported as failures, never as scores
=============  ============================================================================

Peers: the package refuses (``InconsistentConstraintsException``) any input in which a
cannot-link joins two points of one must-link component. With noisy constraints that is
almost every draw, and finding out costs it seconds to minutes of pure-Python closure
building, so the script applies the same test first (union-find, exact) and records the
exception without calling the peer; ``--run-inconsistent-peers`` calls it anyway.
Importing the package sets ``np.seterr("raise")`` for the process: the previous state is
restored after the import and each peer fit runs under the package's own settings. A peer
fit longer than ``--peer-timeout`` seconds is abandoned (SIGALRM) and counted as a failure.

``--wrong-k`` adds the k-sensitivity experiment (spec §4.5, Fig. 3) at one setting
(``--wrong-k-at r,p``, default 0.03,1.0): the methods that take k get
``k' = k + δ``, δ in {-2, -1, +1, +2} (``k' >= 1``); TVClust, which ignores k, is listed
with its true-k value. Same constraint draws as the main grid.

Output: markdown tables (to stdout, or atomically to ``--out``; ``--json`` keeps every run's
record); progress and per-cell means on stderr. Times are wall seconds per fit. Measured
tables and the comparison with the seed: ``docs/benchmarks/sideinfo_uci.md``.

    python benchmarks/bench_sideinfo_uci.py [--quick] [--runs 10] [--first-run 0] [--datasets iris,wine]
        [--methods rdpmeans,tvclust] [--rates 0.01,0.03] [--accuracies 1,0.9] [--wrong-k]
        [--wrong-k-at 0.03,1.0] [--features raw|zscore] [--convention ref_code|paper]
        [--tvclust-sweeps 100] [--peer-timeout 120] [--run-inconsistent-peers] [--out FILE] [--json FILE]
"""

import argparse
import json
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
import warnings
from collections import defaultdict

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import graphclust as gc

#: appended, never reordered: a data set's index is part of its runs' seeds
DATASETS = ("iris", "wine", "breast_cancer", "digits", "ecoli", "glass", "balance_scale", "glass_id")
#: the seed's five UCI sets, over which its Tables 2 and 3 average
SEED_SETS = ("iris", "wine", "ecoli", "glass", "balance_scale")
RATES = (0.01, 0.03, 0.05)
ACCURACIES = (1.0, 0.95, 0.9, 0.8)
DEVIATIONS = (-2, -1, 1, 2)
METHODS = {
    "kmeans": "K-means (sklearn)",
    "dpmeans": "DP-means",
    "rdpmeans": "RDP-means (annealed ξ)",
    "rdpmeans-x10": "RDP-means (annealed ξ, best of 10 restarts)",
    "rdpmeans-pq": "RDP-means (ξ from true p)",
    "tvclust": "TVClust (Gibbs; not the seed's variational algorithm)",
    "tvclust-diag": "TVClust (Gibbs, diagonal Gaussian)",
    "hmrf": "HMRF-KMeans (BP)",
    "pckmeans": "PCKMeans (peer)",
    "mpckmeans": "MPCKMeans (peer)",
    "copkmeans": "COPKMeans (peer)",
}
PEERS = ("pckmeans", "mpckmeans", "copkmeans")
#: methods whose k can be wrong (TVClust ignores k)
TAKES_K = tuple(m for m in METHODS if not m.startswith("tvclust"))
#: base entropy of every seed of this benchmark
BASE_SEED = 20150826
INCONSISTENT = "InconsistentConstraintsException"


#: The seed's published numbers (spec §5, its Tables 1-3): 5 trials per cell, raw features,
#: glass read with its record-number column and k = 7 (our ``glass_id``).
#: Table 1: method -> data set -> (F, ARI, NMI), averaged over every r and p.
SEED_TABLE1 = {
    "kmeans": {"iris": (0.81, 0.71, 0.74), "wine": (0.59, 0.36, 0.42), "ecoli": (0.61, 0.50, 0.63),
               "glass": (0.57, 0.47, 0.71), "balance_scale": (0.47, 0.14, 0.12)},
    "dpmeans": {"iris": (0.74, 0.57, 0.69), "wine": (0.63, 0.37, 0.44), "ecoli": (0.71, 0.61, 0.64),
                "glass": (0.53, 0.29, 0.45), "balance_scale": (0.31, 0.12, 0.21)},
    "rdpmeans": {"iris": (0.86, 0.80, 0.80), "wine": (0.81, 0.73, 0.72), "ecoli": (0.90, 0.86, 0.82),
                 "glass": (0.82, 0.76, 0.73), "balance_scale": (0.94, 0.92, 0.88)},
    "tvclust": {"iris": (0.91, 0.85, 0.90), "wine": (0.56, 0.45, 0.53), "ecoli": (0.85, 0.79, 0.76),
                "glass": (0.42, 0.22, 0.42), "balance_scale": (0.94, 0.92, 0.91)},
    "mpckmeans": {"iris": (0.53, 0.29, 0.30), "wine": (0.54, 0.30, 0.30), "ecoli": (0.57, 0.33, 0.33),
                  "glass": (0.46, 0.30, 0.36), "balance_scale": (0.70, 0.26, 0.28)},
}
#: Table 2: method -> (F, ARI, NMI) at p = 1, 0.95, 0.9, 0.8, averaged over the five sets and r.
SEED_TABLE2 = {
    "kmeans": ((0.61, 0.44, 0.53), (0.60, 0.43, 0.52), (0.61, 0.43, 0.53), (0.61, 0.43, 0.52)),
    "dpmeans": ((0.58, 0.39, 0.49), (0.59, 0.39, 0.48), (0.59, 0.40, 0.49), (0.58, 0.38, 0.48)),
    "rdpmeans": ((0.93, 0.90, 0.89), (0.92, 0.89, 0.87), (0.87, 0.82, 0.79), (0.75, 0.65, 0.62)),
    "tvclust": ((0.77, 0.69, 0.74), (0.75, 0.66, 0.72), (0.73, 0.63, 0.69), (0.68, 0.56, 0.64)),
    "mpckmeans": ((0.94, 0.91, 0.90), (0.46, 0.14, 0.17), (0.44, 0.10, 0.12), (0.41, 0.04, 0.07)),
}
#: Table 3 (F only): method -> r -> F at p = 1, 0.95, 0.9, 0.8, averaged over the five sets.
SEED_TABLE3_F = {
    "kmeans": {0.01: (0.62, 0.62, 0.61, 0.60), 0.03: (0.60, 0.60, 0.61, 0.61), 0.05: (0.62, 0.59, 0.60, 0.60)},
    "dpmeans": {0.01: (0.58, 0.59, 0.58, 0.58), 0.03: (0.59, 0.58, 0.59, 0.58), 0.05: (0.58, 0.59, 0.60, 0.58)},
    "rdpmeans": {0.01: (0.84, 0.79, 0.69, 0.56), 0.03: (0.98, 0.98, 0.93, 0.77), 0.05: (0.96, 0.99, 0.98, 0.91)},
    "tvclust": {0.01: (0.72, 0.69, 0.66, 0.58), 0.03: (0.78, 0.77, 0.76, 0.70), 0.05: (0.81, 0.79, 0.78, 0.74)},
    "mpckmeans": {0.01: (0.83, 0.52, 0.49, 0.44), 0.03: (0.99, 0.43, 0.41, 0.40), 0.05: (1.00, 0.44, 0.41, 0.38)},
}


# ============================================================================ helpers
def cell_seeds(dataset, r, p, run):
    """``(constraint seed, method seed)`` of one run: fixed by the data set, r, p and the
    run number alone."""
    key = [BASE_SEED, DATASETS.index(dataset), round(r * 10000), round(p * 10000), run]
    a, b = np.random.SeedSequence(key).generate_state(2)
    return int(a), int(b)


def load(dataset, features):
    """``(X, y, k)``. ``glass_id`` is glass as the seed's reader saw it (spec P21): the
    UCI record number (1..214, the rows sorted by type) kept as a first feature and
    k = 7 declared although 6 types occur; for reproducing its numbers only."""
    X, y = getattr(gc.datasets, "load_glass" if dataset == "glass_id" else f"load_{dataset}")()
    X = np.asarray(X, dtype=np.float64)
    k = len(np.unique(y))
    if dataset == "glass_id":
        X, k = np.column_stack([np.arange(1.0, len(y) + 1.0), X]), 7
    if features == "zscore":
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, np.asarray(y), k


def closure_conflict(n, ml, cl):
    """True when a cannot-link joins two points of one must-link component: exactly the
    inputs the peer package rejects with InconsistentConstraintsException."""
    if not ml or not cl:
        return False
    a = np.asarray(ml, dtype=np.int64)
    A = sp.coo_array((np.ones(len(a)), (a[:, 0], a[:, 1])), shape=(n, n))
    _, comp = connected_components(A, directed=False)
    c = np.asarray(cl, dtype=np.int64)
    return bool((comp[c[:, 0]] == comp[c[:, 1]]).any())


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout


def call_with_limit(fn, seconds):
    """``(value, seconds, error)``; ``error`` names the exception (or the timeout)."""
    limited = bool(seconds) and hasattr(signal, "SIGALRM")
    if limited:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
    t0 = time.perf_counter()
    try:
        value, error = fn(), None
    except _Timeout:
        value, error = None, f"timeout > {seconds:g} s"
    except Exception as exc:  # noqa: BLE001 -- a method's failure is a result here
        value, error = None, type(exc).__name__
    finally:
        if limited:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    return value, time.perf_counter() - t0, error


def load_peers():
    """``({key: class}, errstate the package wanted)`` with NumPy's error state as before.

    The distribution's own name ``active_semi_supervised_clustering`` does not import
    (its modules import ``..exceptions`` one level too deep); the wheel ships the same
    code as ``active_semi_clustering``, which is what is used.
    """
    fresh = "active_semi_clustering" not in sys.modules
    saved = np.geterr()
    try:
        from active_semi_clustering import COPKMeans, MPCKMeans, PCKMeans
        # its mpckmeans module calls np.seterr("raise") when first imported
        wanted = np.geterr() if fresh else dict.fromkeys(saved, "raise")
    finally:
        np.seterr(**saved)
    return {"pckmeans": PCKMeans, "mpckmeans": MPCKMeans, "copkmeans": COPKMeans}, wanted


# ============================================================================ methods
class Context:
    """Everything one run hands to the methods."""

    def __init__(self, X, y, problem, problem_hard, ml, cl, p, seed):
        self.X, self.y, self.problem, self.problem_hard = X, y, problem, problem_hard
        self.ml, self.cl, self.p, self.seed = ml, cl, p, seed


def make_fitters(methods, args):
    """``key -> fit(ctx, k) -> labels`` for the selected methods."""
    fitters = {}
    sweeps = args.tvclust_sweeps
    peers, wanted = (load_peers() if any(m in PEERS for m in methods) else ({}, None))

    def kmeans(ctx, k):
        from sklearn.cluster import KMeans

        return KMeans(n_clusters=k, n_init=10, random_state=ctx.seed).fit(ctx.X).labels_

    def dpmeans(ctx, k):
        return gc.DPMeans(n_clusters=k, lam_rule="kth_from_mean", init="box",
                          random_state=ctx.seed).fit(ctx.problem).labels_

    def rdpmeans(ctx, k):
        return gc.RDPMeans(n_clusters=k, lam_rule="kth_from_mean", init="box", xi="anneal", xi_max=None,
                           random_state=ctx.seed).fit(ctx.problem).labels_

    def rdpmeans_x10(ctx, k):
        return gc.RDPMeans(n_clusters=k, lam_rule="kth_from_mean", init="box", xi="anneal", xi_max=None,
                           n_init=10, random_state=ctx.seed).fit(ctx.problem).labels_

    def rdpmeans_pq(ctx, k):
        if ctx.p >= 1.0:  # certain constraints: hard (p_link plays no part then)
            est = gc.RDPMeans(n_clusters=k, lam_rule="kth_from_mean", init="box", xi="pq", p_link=0.5,
                              random_state=ctx.seed)
            return est.fit(ctx.problem_hard).labels_
        est = gc.RDPMeans(n_clusters=k, lam_rule="kth_from_mean", init="box", xi="pq", p_link=ctx.p,
                          random_state=ctx.seed)
        return est.fit(ctx.problem).labels_

    def tvclust(ctx, k):
        return gc.TVClust(n_iter=sweeps, random_state=ctx.seed).fit(ctx.problem).labels_

    def tvclust_diag(ctx, k):
        return gc.TVClust("gaussian-diag", n_iter=sweeps, random_state=ctx.seed).fit(ctx.problem).labels_

    def hmrf(ctx, k):
        est = gc.HMRF(gc.potentials.Centroids(k), inference="bp", use_closure=ctx.p >= 1.0,
                      random_state=ctx.seed)
        return est.fit(ctx.problem).labels_

    def peer(cls):
        def fit(ctx, k):
            if not args.run_inconsistent_peers and closure_conflict(len(ctx.y), ctx.ml, ctx.cl):
                raise PrecheckedInconsistent
            np.random.seed(ctx.seed % 2**32)
            with np.errstate(**wanted):
                return cls(n_clusters=k).fit(ctx.X, ml=ctx.ml, cl=ctx.cl).labels_
        return fit

    table = {"kmeans": kmeans, "dpmeans": dpmeans, "rdpmeans": rdpmeans, "rdpmeans-x10": rdpmeans_x10,
             "rdpmeans-pq": rdpmeans_pq,
             "tvclust": tvclust, "tvclust-diag": tvclust_diag, "hmrf": hmrf}
    for m in methods:
        fitters[m] = peer(peers[m]) if m in PEERS else table[m]
    return fitters


class PrecheckedInconsistent(Exception):
    """The peer would raise InconsistentConstraintsException (checked before calling it)."""


def warm_up(fitters, args):
    """Compile the numba kernels (and import scikit-learn) before anything is timed."""
    X = np.array([[0.0, 0.0], [0.1, 0.0], [3.0, 0.0], [3.1, 0.2], [0.0, 3.0], [0.2, 3.1]])
    y = np.array([0, 0, 1, 1, 2, 2])
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(1, 2), (3, 4)])
    H = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(1, 2), (3, 4)], weight=float("inf"))
    for p in (1.0, 0.9):
        ctx = Context(X, y, gc.Problem.from_array(X, S), gc.Problem.from_array(X, H), [(0, 1)], [(1, 2), (3, 4)],
                      p, 0)
        for key, fit in fitters.items():
            if key not in PEERS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit(ctx, 3)


# ============================================================================ running
def run_grid(args, fitters, log):
    """Fit every selected method on every run of every cell; returns the records."""
    records = []
    done = set()
    sampling = []
    for ds in args.datasets:
        X, y, k = load(ds, args.features)
        n = len(y)
        log(f"\n== {ds}: n={n}, d={X.shape[1]}, k={k}, features={args.features}")
        cells = [(r, p, [k]) for r in args.rates for p in args.accuracies]
        if args.wrong_k:
            r0, p0 = args.wrong_k_at
            ks = [k + d for d in sorted((0, *DEVIATIONS)) if k + d >= 1]
            cells.append((r0, p0, ks))
        for r, p, ks in cells:
            t_cell = time.perf_counter()
            per_method = defaultdict(list)
            for run in range(args.first_run, args.first_run + args.runs):
                c_seed, m_seed = cell_seeds(ds, r, p, run)
                S = gc.SideInfo.sample(y, rate=r, convention=args.convention, noise=1.0 - p, random_state=c_seed)
                if (ds, r, p, run) not in {(s["dataset"], s["r"], s["p"], s["run"]) for s in sampling}:
                    sampling.append({"dataset": ds, "r": r, "p": p, "run": run, "n": n, **S.sampling})
                H = gc.SideInfo.sample(y, rate=r, convention=args.convention, noise=1.0 - p,
                                       weight=float("inf"), random_state=c_seed)
                ml = [(int(a), int(b)) for a, b, _ in S.must_links()]
                cl = [(int(a), int(b)) for a, b, _ in S.cannot_links()]
                ctx = Context(X, y, gc.Problem.from_array(X, S), gc.Problem.from_array(X, H), ml, cl, p, m_seed)
                for key, fit in fitters.items():
                    for kk in ks:
                        if kk != k and key not in TAKES_K:
                            continue
                        ident = (ds, r, p, kk, key, run)
                        if ident in done:
                            continue
                        done.add(ident)
                        limit = args.peer_timeout if key in PEERS else 0

                        def call(fit=fit, ctx=ctx, kk=kk):
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                return fit(ctx, kk)

                        labels, secs, err = call_with_limit(call, limit)
                        ran = err != PrecheckedInconsistent.__name__
                        if not ran:
                            err = INCONSISTENT + " (pre-checked, not run)"
                        rec = {"dataset": ds, "r": r, "p": p, "k": k, "k_decl": kk, "method": key, "run": run,
                               "seconds": secs, "error": err, "ran": ran}
                        if labels is not None:
                            labels = np.asarray(labels)
                            rec.update(F=gc.pairwise_f_measure(y, labels), ARI=gc.ari(y, labels),
                                       NMI=gc.nmi(y, labels), K=len(np.unique(labels)))
                        records.append(rec)
                        per_method[(key, kk)].append(rec)
            for (key, kk), recs in per_method.items():
                ok = [x for x in recs if x["error"] is None]
                fails = len(recs) - len(ok)
                f = f"F {np.mean([x['F'] for x in ok]):.3f}" if ok else "F   —  "
                tag = "" if kk == k else f" k'={kk}"
                why = f" ({_failure_text(recs)})" if fails else ""
                ran = [x["seconds"] for x in recs if x["ran"]]
                when = f"  {np.median(ran):.3f} s/fit" if ran else ""
                log(f"  {ds} r={r:g} p={p:g} {METHODS[key] + tag:34s} {f}  ok {len(ok)}/{len(recs)}{why}{when}")
            log(f"  -- cell r={r:g} p={p:g} done in {time.perf_counter() - t_cell:.1f} s")
    return records, sampling


# ============================================================================ tables
def _fmt(v, nd=2):
    return f"{v:.{nd}f}"


def _agg(recs):
    """Means over the successful runs, or None when none succeeded."""
    ok = [x for x in recs if x["error"] is None]
    if not ok:
        return None
    return {m: float(np.mean([x[m] for x in ok])) for m in ("F", "ARI", "NMI", "K")} | {
        "F_sd": float(np.std([x["F"] for x in ok], ddof=1)) if len(ok) > 1 else 0.0,
        "ok": len(ok), "runs": len(recs)}


def _failure_text(recs):
    errs = defaultdict(int)
    for x in recs:
        if x["error"] is not None:
            errs[x["error"]] += 1
    return "; ".join(f"{e} ×{c}" for e, c in errs.items())


def _cell(recs, with_sd=True):
    """``F±sd / ARI / NMI`` of one cell, with the failures said as such."""
    if not recs:
        return "not run"
    a = _agg(recs)
    fails = a["runs"] - a["ok"] if a else len(recs)
    if a is None:
        return f"failed {fails}/{len(recs)}"
    sd = f"±{a['F_sd']:.2f}" if with_sd and a["ok"] > 1 else ""
    text = f"{_fmt(a['F'])}{sd} / {_fmt(a['ARI'])} / {_fmt(a['NMI'])}"
    return text + (f" (failed {fails}/{len(recs)})" if fails else "")


def _strict_cell(recs):
    """Aggregate over many cells: a number only when every run succeeded."""
    if not recs:
        return "not run"
    fails = sum(x["error"] is not None for x in recs)
    if fails:
        return f"failed {fails}/{len(recs)}"
    a = _agg(recs)
    return f"{_fmt(a['F'])} / {_fmt(a['ARI'])} / {_fmt(a['NMI'])}"


def _over_sets(recs, sets, keys=("F", "ARI", "NMI")):
    """Mean over ``sets`` of each set's mean: a tuple, or a string saying why there is none."""
    per = [[x for x in recs if x["dataset"] == ds] for ds in sets]
    nf = sum(x["error"] is not None for r in per for x in r)
    if nf:
        return f"failed {nf}/{sum(map(len, per))}"
    if any(not r for r in per):
        return "not run"
    aggs = [_agg(r) for r in per]
    return tuple(float(np.mean([a[q] for a in aggs])) for q in keys)


def _triple(v):
    return v if isinstance(v, str) else " / ".join(_fmt(x) for x in v)


def seed_comparison(main, methods, args):
    """Markdown lines setting our records beside the seed's Tables 1-3, once with glass as
    the seed read it (``glass_id``) and once with the clean glass, where the records
    hold all five of the seed's sets."""
    out = []
    w = out.append
    present = {x["dataset"] for x in main}
    for glass, title in (("glass_id", "glass as the seed read it (`glass_id`: record number kept, k = 7)"),
                         ("glass", "glass without the record number, k = 6 (the seed's glass numbers "
                                   "are still those of its own reading)")):
        ours_of = {ds: glass if ds == "glass" else ds for ds in SEED_SETS}  # seed's name -> ours
        sets = list(ours_of.values())
        if not set(sets) <= present:
            continue
        w(f"## Against the seed's tables, its five data sets: {title}\n")
        w("`seed` is the paper's number (5 trials per cell); `ours` the mean over the runs here. "
          "Over several data sets: the mean of the per-set means.\n")
        w("### Table 1: per data set, F / ARI / NMI averaged over all r and p\n")
        w("| method | " + " | ".join(f"{ds} seed | {ds} ours" for ds in sets) + " | mean seed | mean ours |")
        w("| --- |" + " --- |" * (2 * len(sets) + 2))
        for m in methods:
            seed = SEED_TABLE1.get(m)
            row = []
            for ds in SEED_SETS:
                row.append(_triple(seed[ds]) if seed else "—")
                row.append(_triple(_over_sets([x for x in main if x["method"] == m], [ours_of[ds]])))
            mean_seed = _triple(tuple(np.mean([seed[ds] for ds in SEED_SETS], axis=0))) if seed else "—"
            mean_ours = _triple(_over_sets([x for x in main if x["method"] == m], sets))
            w(f"| {METHODS[m]} | " + " | ".join(row) + f" | {mean_seed} | {mean_ours} |")
        w("")
        ps = [p for p in ACCURACIES if p in args.accuracies]
        w("### Table 2: by accuracy p, F / ARI / NMI averaged over the five sets and r\n")
        w("| method | " + " | ".join(f"p={p:g} seed | p={p:g} ours" for p in ps) + " |")
        w("| --- |" + " --- |" * (2 * len(ps)))
        for m in methods:
            row = []
            for p in ps:
                row.append(_triple(SEED_TABLE2[m][ACCURACIES.index(p)]) if m in SEED_TABLE2 else "—")
                row.append(_triple(_over_sets([x for x in main if x["method"] == m and x["p"] == p], sets)))
            w(f"| {METHODS[m]} | " + " | ".join(row) + " |")
        w("")
        w("### Table 3: F by r and p, averaged over the five sets\n")
        w("| method | r | seed: " + " / ".join(f"p={p:g}" for p in ps) + " | ours: " +
          " / ".join(f"p={p:g}" for p in ps) + " |")
        w("| --- | ---: | --- | --- |")
        for m in methods:
            for r in [r for r in RATES if r in args.rates]:
                seed = SEED_TABLE3_F.get(m, {}).get(r)
                ours = [_over_sets([x for x in main if x["method"] == m and x["p"] == p and x["r"] == r], sets,
                                   keys=("F",)) for p in ps]
                w(f"| {METHODS[m]} | {r:g} | " +
                  (" / ".join(_fmt(seed[ACCURACIES.index(p)]) for p in ps) if seed else "—") + " | " +
                  " / ".join(v if isinstance(v, str) else _fmt(v[0]) for v in ours) + " |")
        w("")
    return out


def tables(records, sampling, args, elapsed):
    out = []
    w = out.append
    main = [x for x in records if x["k_decl"] == x["k"] and x["r"] in args.rates and x["p"] in args.accuracies]
    methods = [m for m in METHODS if m in args.methods]
    datasets = [d for d in args.datasets if any(x["dataset"] == d for x in records)]

    w("## Setup\n")
    w(f"* command: `python benchmarks/bench_sideinfo_uci.py {' '.join(args.argv)}`")
    w(f"* runs per cell: {args.runs}; rates r: {', '.join(f'{r:g}' for r in args.rates)}; accuracies p: "
      f"{', '.join(f'{p:g}' for p in args.accuracies)}; features: {args.features}; "
      f"r convention: {args.convention}; TVClust sweeps: {args.tvclust_sweeps}")
    when = (f"records merged from {args.merge}" if getattr(args, "merge", None) else f"wall time {elapsed:.0f} s")
    w(f"* Python {platform.python_version()}, NumPy {np.__version__}, graphclust {gc.__version__}; {when}")
    w("* cells: `F±sd / ARI / NMI`, means over the successful runs (sd of F over runs); "
      "`failed a/b`: a of the b runs raised (the exception is in the failure table), "
      "a failed run never counts as a score\n")

    w("### Constraints drawn (means over runs)\n")
    w("| data | n | r | constraints | must-links | cannot-links | share of all pairs | flipped (p=1 / .95 / .9 / .8) |")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for ds in datasets:
        for r in args.rates:
            ss = [s for s in sampling if s["dataset"] == ds and s["r"] == r]
            if not ss:
                continue
            n = ss[0]["n"]
            tot = np.mean([s["n_must"] + s["n_cannot"] for s in ss])
            flips = []
            for p in ACCURACIES:
                sp_ = [s for s in ss if s["p"] == p]
                flips.append(
                    f"{np.mean([s['n_flipped'] / max(1, s['n_must'] + s['n_cannot']) for s in sp_]):.3f}"
                    if sp_ else "—")
            w(f"| {ds} | {n} | {r:g} | {tot:.0f} | {np.mean([s['n_must'] for s in ss]):.0f} | "
              f"{np.mean([s['n_cannot'] for s in ss]):.0f} | {tot / (n * (n - 1) / 2):.4f} | {' / '.join(flips)} |")
    w("")

    w("## Results per data set and rate r\n")
    for ds in datasets:
        for r in args.rates:
            sel = [x for x in main if x["dataset"] == ds and x["r"] == r]
            if not sel:
                continue
            w(f"### {ds}, r = {r:g}\n")
            w("| method | " + " | ".join(f"p={p:g} F / ARI / NMI" for p in args.accuracies) + " |")
            w("| --- |" + " --- |" * len(args.accuracies))
            for m in methods:
                row = [_cell([x for x in sel if x["method"] == m and x["p"] == p]) for p in args.accuracies]
                w(f"| {METHODS[m]} | " + " | ".join(row) + " |")
            w("")

    w("## Table 1 analogue: per data set, averaged over all r and p run\n")
    w("Mean F / ARI / NMI over every run of every (r, p) cell; `failed a/b` when any run failed.\n")
    w("| method | " + " | ".join(datasets) + " | mean over data sets |")
    w("| --- |" + " --- |" * (len(datasets) + 1))
    for m in methods:
        row = [_strict_cell([x for x in main if x["method"] == m and x["dataset"] == ds]) for ds in datasets]
        per = [_agg([x for x in main if x["method"] == m and x["dataset"] == ds]) for ds in datasets]
        fails = any(sum(x["error"] is not None for x in main if x["method"] == m and x["dataset"] == ds)
                    for ds in datasets)
        avg = ("—" if fails or any(a is None for a in per) else
               " / ".join(_fmt(np.mean([a[q] for a in per])) for q in ("F", "ARI", "NMI")))
        w(f"| {METHODS[m]} | " + " | ".join(row) + f" | {avg} |")
    w("")

    w("## Table 2 analogue: by accuracy p, averaged over data sets and r\n")
    w("| method | " + " | ".join(f"p={p:g}" for p in args.accuracies) + " |")
    w("| --- |" + " --- |" * len(args.accuracies))
    for m in methods:
        row = [_triple(_over_sets([x for x in main if x["method"] == m and x["p"] == p], datasets))
               for p in args.accuracies]
        w(f"| {METHODS[m]} | " + " | ".join(row) + " |")
    w("")

    if args.wrong_k:
        r0, p0 = args.wrong_k_at
        w(f"## Wrong k: declared k' = k + δ at r = {r0:g}, p = {p0:g}\n")
        w("Cells: `F / ARI / NMI` over the runs; δ = 0 is the true k. TVClust ignores k.\n")
        for ds in datasets:
            sel = [x for x in records if x["dataset"] == ds and x["r"] == r0 and x["p"] == p0]
            if not sel:
                continue
            k = sel[0]["k"]
            deltas = sorted((0, *DEVIATIONS))
            w(f"### {ds} (k = {k})\n")
            w("| method | " + " | ".join(f"δ={d:+d} (k'={k + d})" for d in deltas) + " |")
            w("| --- |" + " --- |" * len(deltas))
            for m in methods:
                row = []
                for d in deltas:
                    if k + d < 1:
                        row.append("k' < 1")
                        continue
                    if m not in TAKES_K and d != 0:
                        row.append("(ignores k)")
                        continue
                    row.append(_cell([x for x in sel if x["method"] == m and x["k_decl"] == k + d], with_sd=False))
                w(f"| {METHODS[m]} | " + " | ".join(row) + " |")
            w("")

    out.extend(seed_comparison(main, methods, args))

    w("## Time per fit (wall seconds) and clusters found\n")
    w("Median seconds per fit over the runs of the main grid that were executed (successful or not; "
      "pre-checked peer runs excluded), their total, and the mean number of clusters found by the "
      "successful runs.\n")
    w("| method | " + " | ".join(f"{ds} median / total / K̄" for ds in datasets) + " |")
    w("| --- |" + " ---: |" * len(datasets))
    for m in methods:
        row = []
        for ds in datasets:
            recs = [x for x in main if x["method"] == m and x["dataset"] == ds and x["ran"]]
            if not recs:
                row.append("not run")
                continue
            ok = [x for x in recs if x["error"] is None]
            kbar = f"{np.mean([x['K'] for x in ok]):.1f}" if ok else "—"
            row.append(f"{statistics.median(x['seconds'] for x in recs):.3f} / "
                       f"{sum(x['seconds'] for x in recs):.0f} / {kbar}")
        w(f"| {METHODS[m]} | " + " | ".join(row) + " |")
    w("")

    fails = [x for x in records if x["error"] is not None]
    w("## Failures\n")
    if not fails:
        w("None.\n")
    else:
        w("| data | method | r | p | k' | failed / runs | error |")
        w("| --- | --- | ---: | ---: | ---: | ---: | --- |")
        groups = defaultdict(list)
        for x in records:
            groups[(x["dataset"], x["method"], x["r"], x["p"], x["k_decl"])].append(x)
        order = {m: i for i, m in enumerate(METHODS)}
        for (ds, m, r, p, kk), recs in sorted(groups.items(), key=lambda it: (
                datasets.index(it[0][0]), order[it[0][1]], it[0][4] != it[1][0]["k"], it[0][4], it[0][2],
                -it[0][3])):
            nf = sum(x["error"] is not None for x in recs)
            if nf:
                w(f"| {ds} | {METHODS[m]} | {r:g} | {p:g} | {kk} | {nf}/{len(recs)} | {_failure_text(recs)} |")
        w("")
    return "\n".join(out)


# ============================================================================ main
def _floats(text, name, allowed):
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name}: expected comma-separated numbers, got {text!r}") from None
    for v in vals:
        if not allowed(v):
            raise argparse.ArgumentTypeError(f"{name}: value {v:g} is out of range")
    return vals


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: iris and wine, 2 runs, r=0.03, p in {1, 0.9} (unless given explicitly)")
    ap.add_argument("--runs", type=int, default=None, help="runs per cell (default 10, --quick: 2)")
    ap.add_argument("--first-run", type=int, default=0,
                    help="index of the first run (its seeds): split a long grid into jobs, then --merge them")
    ap.add_argument("--datasets", default=None, help=f"comma-separated, from {', '.join(DATASETS)}")
    ap.add_argument("--methods", default=None, help=f"comma-separated, from {', '.join(METHODS)}")
    ap.add_argument("--rates", default=None, help="comma-separated r values (default 0.01,0.03,0.05)")
    ap.add_argument("--accuracies", default=None, help="comma-separated p values (default 1,0.95,0.9,0.8)")
    ap.add_argument("--wrong-k", action="store_true", help="add the declared-k sensitivity experiment")
    ap.add_argument("--wrong-k-at", default="0.03,1.0", help="r,p of the wrong-k experiment")
    ap.add_argument("--features", choices=("raw", "zscore"), default="raw")
    ap.add_argument("--convention", choices=("ref_code", "paper"), default="ref_code",
                    help="meaning of r (SideInfo.sample): the reference code's draws (default) or the paper's text")
    ap.add_argument("--tvclust-sweeps", type=int, default=100)
    ap.add_argument("--peer-timeout", type=float, default=120.0, help="seconds per peer fit (0: no limit)")
    ap.add_argument("--run-inconsistent-peers", action="store_true",
                    help="call the peers even when the constraints are inconsistent (they raise)")
    ap.add_argument("--out", default=None, help="write the markdown here (atomically) instead of stdout")
    ap.add_argument("--json", default=None,
                    help="also write every run's record here (atomically); with --merge, the merged records")
    ap.add_argument("--merge", default=None,
                    help="comma-separated --json files of earlier runs: fit nothing, render their records as one "
                         "set of tables (data sets, methods, r and p default to those present)")
    args = ap.parse_args(argv)
    args.argv = list(argv)
    if args.datasets is None:
        args.datasets = "iris,wine" if args.quick else ",".join(DATASETS)
    args.datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    for d in args.datasets:
        if d not in DATASETS:
            ap.error(f"unknown data set {d!r}; choose from {', '.join(DATASETS)}")
    args.methods = [m.strip() for m in (args.methods or ",".join(METHODS)).split(",") if m.strip()]
    for m in args.methods:
        if m not in METHODS:
            ap.error(f"unknown method {m!r}; choose from {', '.join(METHODS)}")
    try:
        args.rates = _floats(args.rates, "--rates", lambda v: 0 < v <= 1) if args.rates else (
            [0.03] if args.quick else list(RATES))
        args.accuracies = _floats(args.accuracies, "--accuracies", lambda v: 0.5 <= v <= 1) if args.accuracies \
            else ([1.0, 0.9] if args.quick else list(ACCURACIES))
        args.wrong_k_at = _floats(args.wrong_k_at, "--wrong-k-at", lambda v: 0 < v <= 1)
    except argparse.ArgumentTypeError as exc:
        ap.error(str(exc))
    if len(args.wrong_k_at) != 2:
        ap.error("--wrong-k-at takes two numbers: r,p")
    if args.runs is None:
        args.runs = 2 if args.quick else 10
    if args.runs < 1:
        ap.error("--runs must be >= 1")
    if args.first_run < 0:
        ap.error("--first-run must be >= 0")
    if args.tvclust_sweeps < 2:
        ap.error("--tvclust-sweeps must be >= 2")
    if args.merge:
        args.merged = _load_merged(ap, args)
    return args


def _load_merged(ap, args):
    """Records and constraint samples of the ``--merge`` files (a later file's record
    replaces an earlier one with the same data set, r, p, k, method and run); the
    selections not given on the command line default to what the files hold."""
    records, sampling = {}, {}
    for path in [p.strip() for p in args.merge.split(",") if p.strip()]:
        try:
            with open(path) as fh:
                data = json.load(fh)
        except (OSError, ValueError) as exc:
            ap.error(f"--merge: cannot read {path}: {exc}")
        for x in data["records"]:
            records[(x["dataset"], x["r"], x["p"], x["k_decl"], x["method"], x["run"])] = x
        for x in data["sampling"]:
            sampling[(x["dataset"], x["r"], x["p"], x["run"])] = x
    recs = list(records.values())
    if not recs:
        ap.error("--merge: the files hold no records")
    given = {a.split("=", 1)[0] for a in args.argv}
    if "--datasets" not in given:
        args.datasets = [d for d in DATASETS if any(x["dataset"] == d for x in recs)]
    if "--methods" not in given:
        args.methods = [m for m in METHODS if any(x["method"] == m for x in recs)]
    if "--rates" not in given:
        args.rates = sorted({x["r"] for x in recs if x["k_decl"] == x["k"]})
    if "--accuracies" not in given:
        args.accuracies = sorted({x["p"] for x in recs if x["k_decl"] == x["k"]}, reverse=True)
    if "--runs" not in given:
        args.runs = max(x["run"] for x in recs) + 1
    # only the selected data sets and methods (a file may hold more)
    recs = [x for x in recs if x["dataset"] in args.datasets and x["method"] in args.methods]
    if not recs:
        ap.error("--merge: no record of the selected data sets and methods")
    args.wrong_k = args.wrong_k or any(x["k_decl"] != x["k"] for x in recs)
    return recs, [x for x in sampling.values() if x["dataset"] in args.datasets]


def write_atomic(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.splitext(path)[1])
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        # mkstemp makes the file private; give it the mode an ordinary write would
        mode = os.stat(path).st_mode & 0o777 if os.path.exists(path) else 0o644
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_records(path, args, elapsed, records, sampling):
    """The ``--json`` file: every run's record and constraint sample, which ``--merge`` reads."""
    write_atomic(path, json.dumps({"argv": args.argv, "elapsed": elapsed, "records": records,
                                   "sampling": sampling}, indent=0) + "\n")


def main(argv=None):
    """Run the benchmark; returns ``{"records", "sampling", "markdown"}``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(argv)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.merge:
        records, sampling = args.merged
        text = tables(records, sampling, args, 0.0)
        if args.json:  # one records file from many jobs' files, readable by a later --merge
            write_records(args.json, args, None, records, sampling)
        if args.out:
            write_atomic(args.out, text + "\n")
        else:
            print(text)
        return {"records": records, "sampling": sampling, "markdown": text}
    fitters = make_fitters(args.methods, args)
    t0 = time.perf_counter()
    warm_up(fitters, args)
    log(f"warm-up (numba compilation) {time.perf_counter() - t0:.1f} s")
    t0 = time.perf_counter()
    records, sampling = run_grid(args, fitters, log)
    elapsed = time.perf_counter() - t0
    text = tables(records, sampling, args, elapsed)
    if args.json:
        write_records(args.json, args, elapsed, records, sampling)
    if args.out:
        write_atomic(args.out, text + "\n")
        log(f"\nwrote {args.out} ({elapsed:.0f} s)")
    else:
        print(text)
    return {"records": records, "sampling": sampling, "markdown": text}


if __name__ == "__main__":
    main()
