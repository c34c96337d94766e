"""The HMRF default against PCKMeans on digits with 600 labelled pairs (issue #26's time
target): NMI >= PCKMeans' at <= 1/20 of its time, one thread each.

Protocol: scikit-learn's digits (1,797 points, 64 features, unscaled, as in the issue),
``SideInfo.sample(y, 600, random_state=s)`` clean pairs for seeds ``s = 0..runs-1``;
``gc.HMRF(gc.potentials.Centroids(10), random_state=s)`` with every other parameter at
its default (the constraint weight chosen by held-out constraints) against
active-semi-supervised-clustering's ``PCKMeans(n_clusters=10)`` on the same pairs (NumPy's
global generator seeded with ``s``). Each fit is timed ``--repeats`` times (median), after
one untimed fit that compiles the numba kernels; NMI (geometric) over all points.

    python benchmarks/bench_hmrf_default_time.py [--runs 5] [--repeats 3] [--out FILE]

Figures: ``docs/benchmarks/noisy_defaults.md``.
"""

import argparse
import os
import sys
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import graphclust as gc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_inference import timed  # noqa: E402
from bench_noisy_defaults import emit  # noqa: E402
from bench_sideinfo_uci import load_peers  # noqa: E402

N_PAIRS = 600
#: the issue's targets
TIME_RATIO = 1 / 20


def run(runs, repeats, log):
    X, y = load_digits(return_X_y=True)
    peers, wanted = load_peers()
    rows = []
    for s in range(runs):
        S = gc.SideInfo.sample(y, N_PAIRS, random_state=s)
        P = gc.Problem.from_array(X, S)
        ml = [(int(a), int(b)) for a, b, _ in S.must_links()]
        cl = [(int(a), int(b)) for a, b, _ in S.cannot_links()]

        def ours():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return gc.HMRF(gc.potentials.Centroids(10), random_state=s).fit(P).labels_

        def peer():
            np.random.seed(s)
            with np.errstate(**wanted):
                return peers["pckmeans"](n_clusters=10).fit(X, ml=ml, cl=cl).labels_

        if s == 0:
            ours()  # compile
        t_ours, labels = timed(ours, repeats)
        t_peer, plabels = timed(peer, repeats)
        row = {"seed": s, "nmi": gc.nmi(y, labels), "seconds": t_ours,
               "peer_nmi": gc.nmi(y, plabels), "peer_seconds": t_peer}
        log(f"seed {s}: HMRF NMI {row['nmi']:.3f} in {t_ours:.3f} s; PCKMeans NMI {row['peer_nmi']:.3f} "
            f"in {t_peer:.3f} s; time ratio {t_ours / t_peer:.3f}")
        rows.append(row)
    return rows


def report(rows):
    nmi, pnmi = np.mean([r["nmi"] for r in rows]), np.mean([r["peer_nmi"] for r in rows])
    t, pt = np.median([r["seconds"] for r in rows]), np.median([r["peer_seconds"] for r in rows])
    ratio = t / pt
    ok = nmi >= pnmi and ratio <= TIME_RATIO
    return "\n".join([
        f"digits, {N_PAIRS} clean pairs, {len(rows)} seeds, one thread:",
        "| method | mean NMI | median seconds |",
        "|---|---|---|",
        f"| HMRF(Centroids(10)) default | {nmi:.3f} | {t:.3f} |",
        f"| PCKMeans(n_clusters=10) | {pnmi:.3f} | {pt:.3f} |",
        f"time ratio {ratio:.3f} (target <= {TIME_RATIO:g}); NMI {'>=' if nmi >= pnmi else '<'} PCKMeans'",
        f"{'MET' if ok else 'NOT MET'}: HMRF default NMI >= PCKMeans' at <= 1/20 of its time",
    ])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="also write the report here (atomically)")
    args = ap.parse_args(argv)
    with threadpool_limits(1):
        rows = run(args.runs, args.repeats, lambda m: print(m, flush=True))
    emit(report(rows), rows, args.out)


if __name__ == "__main__":
    main()
