"""The repair of conflicting constraints (``gc.suspects(S, method="repair")``) on the
largest draws of the noisy-side-information protocol: its time, and how far the greedy
answer can be from the lightest repair (``removed_weight / lower_bound``).

Protocol: ``bench_noisy_defaults``' draws (standardised features, pairs sampled
uniformly at the given rate, capped at 5,000, a fraction flipped); the repair sees the
constraints only. Each repair is timed ``--repeats`` times (median) after one untimed
call that loads the numba kernels; one thread.

    python benchmarks/bench_repair.py [--datasets breast_cancer,balance_scale,ecoli,digits]
        [--rate 0.03] [--noise 0.05,0.1,0.2] [--repeats 3] [--out FILE]

Figures: ``docs/benchmarks/noisy_defaults.md`` ("Likely-wrong constraints").
"""

import argparse
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import graphclust as gc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_noisy_defaults import arrays, draws, flipped_mask, load_any  # noqa: E402
from bench_sideinfo_uci import write_atomic  # noqa: E402


def run(datasets, rate, noises, repeats, log):
    lines = ["| data | n | constraints | flipped | conflicts | suspects | precision | removed / lower bound | seconds |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name in datasets:
        X, y, _ = load_any(name)
        for noise in noises:
            _, S, _ = next(draws(name, y, rate, noise, 1))
            nodes = list(range(len(y)))
            pairs, w = arrays(S, len(y))
            gc.conflict_repair.find_suspects(nodes, pairs[:50], w[:50])  # numba kernels loaded
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                report = gc.conflict_repair.find_suspects(nodes, pairs, w)
                times.append(time.perf_counter() - t)
            flipped = flipped_mask(S, y)
            chosen = np.zeros(len(w), bool)
            chosen[report.rows] = True
            precision = chosen[flipped].sum() / max(chosen.sum(), 1)
            ratio = report.removed_weight / report.lower_bound if report.lower_bound > 0 else float("nan")
            line = (f"| {name} {noise:g} | {len(y)} | {len(w)} | {int(flipped.sum())} | {report.n_conflicts} | "
                    f"{len(report.rows)} | {precision:.2f} | {ratio:.2f} | {np.median(times):.2f} |")
            log(line)
            lines.append(line)
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="breast_cancer,balance_scale,ecoli,digits")
    parser.add_argument("--rate", type=float, default=0.03)
    parser.add_argument("--noise", default="0.05,0.1,0.2")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="also write the table here")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        table = run(args.datasets.split(","), args.rate, [float(x) for x in args.noise.split(",")], args.repeats,
                    lambda s: print(s, flush=True))
    if args.out:
        write_atomic(args.out, table + "\n")


if __name__ == "__main__":
    main()
