"""HMRF-KMeans against constrained k-means peers, in one process, on the same constraints.

Peers: ``active-semi-supervised-clustering`` 0.0.1 (the ``bench`` extra) -- COPKMeans,
PCKMeans, MPCKMeans (single diagonal metric) -- and scikit-learn's ``KMeans`` as the
no-constraint baseline. Ours: ``graphclust.HMRF`` with

* ``Centroids(k)`` (squared Euclidean) and ``penalty="constant"``: the PCKMeans model;
* ``Centroids(k, distortion="mahalanobis", metric="diagonal")`` and distance-scaled
  penalties: the MPCKMeans model (MPCK-Means-S-D, one learnt diagonal metric);

each with the ICM and the loopy-BP E-step.

Protocol: for each data set (iris, wine, breast_cancer, digits) and seed ``s``,
``SideInfo.sample(y, n_pairs=N, random_state=s)`` draws ``N`` random pairs of points
(same class: must-link, else cannot-link); every method gets exactly these pairs (the
peers as ``ml=[(i, j), ...]``, ``cl=[...]``), clusters all points with ``k`` = the number
of classes, and is scored by NMI (``graphclust.nmi``, geometric normalisation) against
the classes over all points. The peers draw from NumPy's global generator, seeded with
``s`` before each fit; ours get ``random_state=s``; KMeans gets ``random_state=s``,
``n_init=10``.

Weights: the peers' assignment step scores a point by ``½‖x − μ‖² + w·#violations``
(PCKMeans) and ``‖x − μ‖²_A − log₂det A + 2w·φ`` per violated constraint (MPCKMeans),
with their default ``w = 1``; graphclust charges ``‖x − μ‖²(_A) + w·(1 or φ)``, so our
constraints get weight 2, which gives both models the peers' assignment energy.

Peer quirks handled here, never in the library:

* the distribution's own top-level package ``active_semi_supervised_clustering`` does not
  import (its modules do ``from ..exceptions import ...`` one package too deep); the same
  wheel ships a working copy as ``active_semi_clustering``, which is what is imported;
* importing it calls ``np.seterr('raise')`` for the whole process; the previous error
  state is restored straight after the import, and each peer fit runs inside
  ``np.errstate(all="raise")``, i.e. under the settings the package ships with;
* a peer exception (``EmptyClustersException``, ``ClusteringNotFoundException``,
  ``InconsistentConstraintsException``, ``FloatingPointError``, ...) or a fit longer than
  ``--peer-timeout`` seconds (SIGALRM) is caught per run, counted and reported; the
  NMI columns average the successful runs only.

Times are the median wall time of the successful fits (numba kernels compiled before).

    python benchmarks/bench_hmrf_peers.py [--quick] [--seeds 5] [--n-constraints 300]
        [--datasets iris,wine,breast_cancer,digits] [--peer-timeout 300] [--json out.json]
"""

import argparse
import json
import signal
import statistics
import sys
import time
from collections import Counter

import numpy as np

import graphclust as gc

DATASETS = ("iris", "wine", "breast_cancer", "digits")
OUR_WEIGHT = 2.0


def import_peers():
    """``(COPKMeans, PCKMeans, MPCKMeans, KMeans, peer_errstate)``, leaving NumPy's error
    state as it was before the import."""
    from sklearn.cluster import KMeans

    before = np.geterr()
    try:
        import active_semi_supervised_clustering  # noqa: F401  the distribution's own name
        broken = None
    except ImportError as exc:
        broken = f"{type(exc).__name__}: {exc}"
    from active_semi_clustering import COPKMeans, MPCKMeans, PCKMeans

    shipped = np.geterr()
    np.seterr(**before)
    return COPKMeans, PCKMeans, MPCKMeans, KMeans, shipped, broken


class PeerTimeout(Exception):
    """Raised by SIGALRM when a peer fit exceeds its time limit."""


def _alarm(signum, frame):
    raise PeerTimeout


def timed_fit(fn, args, timeout):
    """``(labels, seconds, error)``: run ``fn(*args)`` (returns labels) with a wall-clock limit."""
    old = signal.signal(signal.SIGALRM, _alarm)
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    start = time.perf_counter()
    try:
        labels = fn(*args)
        error = None
    except PeerTimeout:
        labels, error = None, f"timeout>{timeout:g}s"
    except Exception as exc:  # noqa: BLE001 -- a peer crash is data here
        labels, error = None, type(exc).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return labels, time.perf_counter() - start, error


def methods(peers):
    """``name -> fit(X, y_k, S, ml, cl, seed) -> labels`` for every method compared."""
    COPKMeans, PCKMeans, MPCKMeans, KMeans, shipped, _ = peers

    def peer(cls, **kw):
        def fit(X, k, S, ml, cl, seed):
            np.random.seed(seed)
            with np.errstate(**shipped):
                return cls(n_clusters=k, **kw).fit(X, ml=ml, cl=cl).labels_
        return fit

    def kmeans(X, k, S, ml, cl, seed):
        return KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X).labels_

    def ours(distortion, penalty, inference):
        def fit(X, k, S, ml, cl, seed):
            pot = gc.potentials.Centroids(k, distortion=distortion, metric="diagonal")
            return gc.HMRF(pot, inference=inference, penalty=penalty, random_state=seed).fit(X, S).labels_
        return fit

    return {
        "KMeans (sklearn, no constraints)": kmeans,
        "COPKMeans (peer)": peer(COPKMeans),
        "PCKMeans (peer)": peer(PCKMeans),
        "MPCKMeans (peer)": peer(MPCKMeans),
        "HMRF constant, ICM (ours ~ PCKMeans)": ours("sqeuclidean", "constant", "icm"),
        "HMRF constant, BP (ours ~ PCKMeans)": ours("sqeuclidean", "constant", "bp"),
        "HMRF Mahalanobis, ICM (ours ~ MPCKMeans)": ours("mahalanobis", "distance", "icm"),
        "HMRF Mahalanobis, BP (ours ~ MPCKMeans)": ours("mahalanobis", "distance", "bp"),
    }


def warm_up(fits):
    X = np.array([[0.0, 0.0], [0.1, 0.0], [3.0, 0.0], [3.1, 0.2], [0.0, 3.0], [0.2, 3.1]])
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(1, 2), (3, 4)], weight=OUR_WEIGHT)
    for name, fit in fits.items():
        if "ours" in name:
            fit(X, 3, S, [(0, 1)], [(1, 2), (3, 4)], 0)


def run(datasets, n_constraints, seeds, timeout, fits, log):
    rows = []
    for ds in datasets:
        X, y = getattr(gc.datasets, f"load_{ds}")()
        k = len(np.unique(y))
        log(f"\n{ds}: {X.shape[0]} points, {X.shape[1]} features, k={k}, {n_constraints} constraints, "
            f"{seeds} seeds")
        for seed in range(seeds):
            S = gc.SideInfo.sample(y, n_pairs=n_constraints, weight=OUR_WEIGHT, random_state=seed)
            ml = [(int(u), int(v)) for u, v, *_ in S.must_links()]
            cl = [(int(u), int(v)) for u, v, *_ in S.cannot_links()]
            for name, fit in fits.items():
                labels, seconds, error = timed_fit(fit, (X, k, S, ml, cl, seed), timeout)
                score = None if labels is None else gc.nmi(y, np.asarray(labels))
                rows.append({"dataset": ds, "method": name, "seed": seed, "nmi": score, "seconds": seconds,
                             "error": error, "n_must": len(ml), "n_cannot": len(cl)})
                log(f"  seed {seed} {name:42s} " + (f"NMI {score:.3f}" if error is None else f"FAILED {error}")
                    + f"  {seconds:.2f} s")
    return rows


def summarise(rows, log):
    table = []
    log("\n| data | method | NMI mean ± std | ok / runs | failures | median time (s) | time vs peer |")
    log("| --- | --- | --- | --- | --- | ---: | --- |")
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        sel = [r for r in rows if r["dataset"] == ds]
        med = {}
        for name in dict.fromkeys(r["method"] for r in sel):
            ok = [r for r in sel if r["method"] == name and r["error"] is None]
            med[name] = statistics.median(r["seconds"] for r in ok) if ok else None
        for name in dict.fromkeys(r["method"] for r in sel):
            runs = [r for r in sel if r["method"] == name]
            ok = [r for r in runs if r["error"] is None]
            nmis = np.array([r["nmi"] for r in ok])
            fails = Counter(r["error"] for r in runs if r["error"] is not None)
            peer = "MPCKMeans (peer)" if "MPCK" in name else ("PCKMeans (peer)" if "PCK" in name else None)
            ratio = ""
            if peer and peer != name and med.get(peer) and med[name]:
                r = med[peer] / med[name]
                ratio = (f"{r:.1f}x faster than {peer.split()[0]}" if r >= 1
                         else f"{1 / r:.1f}x slower than {peer.split()[0]}")
            entry = {"dataset": ds, "method": name, "runs": len(runs), "ok": len(ok),
                     "nmi_mean": float(nmis.mean()) if len(ok) else None,
                     "nmi_std": float(nmis.std(ddof=1)) if len(ok) > 1 else None,
                     "median_seconds": med[name], "failures": dict(fails), "speedup": ratio}
            table.append(entry)
            nmi_cell = (f"{entry['nmi_mean']:.3f} ± {entry['nmi_std'] or 0.0:.3f}" if ok else "—")
            fail_cell = ", ".join(f"{k} ×{v}" for k, v in fails.items()) or "0"
            time_cell = f"{med[name]:.3f}" if med[name] is not None else "—"
            log(f"| {ds} | {name} | {nmi_cell} | {len(ok)}/{len(runs)} | {fail_cell} | {time_cell} | {ratio} |")
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--seeds", type=int, default=None, help="runs per method and data set (default 5)")
    parser.add_argument("--n-constraints", type=int, default=300)
    parser.add_argument("--peer-timeout", type=float, default=300.0,
                        help="seconds before a single fit is abandoned and counted as a failure (0: none)")
    parser.add_argument("--quick", action="store_true", help="iris and wine, 2 seeds (smoke test)")
    parser.add_argument("--json", default=None, help="write per-run results and the summary here")
    args = parser.parse_args(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    for d in datasets:
        if d not in DATASETS:
            parser.error(f"unknown data set {d!r}; choose from {', '.join(DATASETS)}")
    if args.quick and args.datasets == ",".join(DATASETS):
        datasets = ["iris", "wine"]
    seeds = args.seeds if args.seeds is not None else (2 if args.quick else 5)

    def log(msg):
        print(msg, flush=True)

    peers = import_peers()
    if peers[5]:
        log(f"note: `import active_semi_supervised_clustering` fails ({peers[5]}); "
            "using the working copy `active_semi_clustering` shipped in the same wheel")
    log(f"peer NumPy error state (set by its import, restored for graphclust): {peers[4]}")
    fits = methods(peers)
    warm_up(fits)
    start = time.perf_counter()
    rows = run(datasets, args.n_constraints, seeds, args.peer_timeout, fits, log)
    log(f"\ntotal time {time.perf_counter() - start:.0f} s")
    table = summarise(rows, log)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"runs": rows, "summary": table}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
