"""Cold start of the Gibbs samplers (TVClust, DCP, MMDPM on the shared engine).

A new process imports graphclust, then fits TVClust (with split-merge moves), DCP and
MMDPM for two sweeps on 20 points. Its CPU time (``time.process_time``, so that other
work on the machine counts little) is measured in two settings:

* warm: numba's disk cache already holds the compiled kernels (a first run filled it);
  the cost of every later process;
* compile: an empty cache, so everything is compiled; paid once per cache.

Figures are medians over ``--repeats`` processes (``--compile-repeats`` for the empty
cache). The processes import the graphclust found first on ``PYTHONPATH``, so the
script also measures another checkout (``PYTHONPATH=<checkout>``).

    python benchmarks/bench_gibbs_cold_start.py [--repeats 5] [--compile-repeats 2]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = """
import time
c0 = time.process_time()
import numpy as np
import graphclust as gc
c1 = time.process_time()
X = np.random.default_rng(0).normal(size=(20, 2))
gc.TVClust(n_iter=2, n_split_merge=1, random_state=0).fit(X)
c2 = time.process_time()
gc.DCP(n_iter=2, random_state=0).fit(X)
c3 = time.process_time()
gc.MMDPM(n_iter=2, random_state=0).fit(X)
c4 = time.process_time()
print(c1 - c0, c2 - c1, c3 - c2, c4 - c3)
"""

PARTS = ("import", "TVClust", "DCP", "MMDPM")


def run(cache_dir):
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD], env=env, capture_output=True, text=True,
                         check=True)
    return [float(v) for v in out.stdout.split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--compile-repeats", type=int, default=2)
    args = ap.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as warm:
        run(warm)  # fills the cache
        rows["warm"] = [run(warm) for _ in range(args.repeats)]
    compiled = []
    for _ in range(args.compile_repeats):
        with tempfile.TemporaryDirectory() as empty:
            compiled.append(run(empty))
    rows["compile"] = compiled
    print("| cache | " + " | ".join(f"{p} (s)" for p in PARTS) + " | fits (s) |")
    print("|---|" + "---:|" * (len(PARTS) + 1))
    for name, runs in rows.items():
        med = [statistics.median(r[i] for r in runs) for i in range(len(PARTS))]
        fits = statistics.median(sum(r[1:]) for r in runs)
        print(f"| {name} ({len(runs)} runs) | " + " | ".join(f"{v:.2f}" for v in med) + f" | {fits:.2f} |")


if __name__ == "__main__":
    main()
