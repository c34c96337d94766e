"""Volume segmentation: ``gc.segment`` on a noisy synthetic volume against
scikit-image's ``random_walker(mode="cg_j")``: time, accuracy and peak memory.

The volume is ``size^3`` voxels: a ball of radius ``0.3 size`` and a box joined by a
rod (foreground 1, background 0) plus Gaussian noise of standard deviation
``--noise``; ``--n-scribbles`` random voxels scribbled in each of foreground and
background, at least 3 voxels inside. Every run is a fresh subprocess (one thread,
threadpoolctl) that reports its time and its peak resident memory (``VmHWM``, see ``memory_peak.py``);
``baseline`` is the same subprocess that only builds the volume (Python, numpy,
scikit-image and graphclust imported, as in every run). Each run first segments a
24^3 volume, so that first-call costs (numba's cache, scipy's imports) are not timed.
Medians of ``--repeats`` runs.

    python benchmarks/bench_segment3d.py [--size 64] [--repeats 3] [--noise 0.6] [--connectivity 6]
        [--methods ours,ours-em,rw130,rw50] [--peer-timeout 600]

A ``random_walker`` run over ``--peer-timeout`` seconds is stopped after that one run and
recorded as a time-out (the project's rule for peers: no table cell filled by hours of
a slow baseline).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_peak import peak_mib  # noqa: E402


def volume_problem(size, noise, n_scribbles, seed=0):
    from scipy.ndimage import binary_erosion

    z, y, x = np.indices((size,) * 3, dtype=np.float32) / size
    truth = (z - 0.4) ** 2 + (y - 0.4) ** 2 + (x - 0.4) ** 2 < 0.3 ** 2
    truth |= (abs(z - 0.75) < 0.12) & (abs(y - 0.75) < 0.15) & (abs(x - 0.7) < 0.2)
    truth |= (abs(z - y) < 0.05) & (abs(x - 0.55) < 0.05) & (z > 0.4) & (z < 0.75)
    rng = np.random.default_rng(seed)
    vol = (truth + rng.normal(scale=noise, size=truth.shape)).astype(np.float32)
    scrib = np.zeros(truth.shape, dtype=np.int64)
    for lab, mask in ((2, truth), (1, ~truth)):
        idx = np.argwhere(binary_erosion(mask, iterations=3))
        pick = idx[rng.choice(len(idx), n_scribbles, replace=False)]
        scrib[tuple(pick.T)] = lab
    return vol, scrib, truth


def run(method, vol, scrib, connectivity):
    import warnings

    import graphclust as gc
    from skimage.segmentation import random_walker

    if method.startswith("ours"):
        em = 2 if method == "ours-em" else 0
        seg = gc.segment(vol, scrib, connectivity=connectivity, em_rounds=em, random_state=0)
        return seg.labels, f"smoothness {seg.info['smoothness']:.3g}"
    if method.startswith("rw"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return random_walker(vol, scrib, mode="cg_j", beta=int(method[2:])), ""
    return np.zeros_like(scrib), ""


def worker(args):
    from threadpoolctl import threadpool_limits

    import graphclust  # noqa: F401  both libraries imported in every run, the baseline too
    import skimage.segmentation  # noqa: F401

    with threadpool_limits(1):
        small = volume_problem(24, args.noise, 10)
        run(args.worker, small[0], small[1], args.connectivity)  # first-call costs (numba cache, scipy)
        vol, scrib, truth = volume_problem(args.size, args.noise, args.n_scribbles)
        t = time.perf_counter()
        labels, note = run(args.worker, vol, scrib, args.connectivity)
        seconds = time.perf_counter() - t
    acc = float(np.mean((labels == 2) == truth))
    peak = peak_mib()
    print(json.dumps({"seconds": seconds, "accuracy": acc, "peak_mb": peak, "note": note}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--noise", type=float, default=0.6)
    ap.add_argument("--n-scribbles", type=int, default=300)
    ap.add_argument("--connectivity", type=int, default=6, choices=[6, 18, 26])
    ap.add_argument("--methods", default="ours,ours-em,rw130,rw50")
    ap.add_argument("--peer-timeout", type=float, default=600.0)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    rows = []
    wanted = ["none", *args.methods.split(",")]
    names = {"none": "baseline (volume only)", "ours": "gc.segment (auto: graphcut)",
             "ours-em": "gc.segment em_rounds=2", "rw130": "random_walker beta=130 (default)",
             "rw50": "random_walker beta=50"}
    for method in wanted:
        runs = []
        for _ in range(args.repeats if method != "none" else 1):
            try:
                out = subprocess.run([sys.executable, __file__, "--size", str(args.size), "--noise", str(args.noise),
                                      "--n-scribbles", str(args.n_scribbles), "--connectivity",
                                      str(args.connectivity), "--worker", method], check=True, capture_output=True,
                                     text=True, timeout=args.peer_timeout if method.startswith("rw") else None)
            except subprocess.TimeoutExpired:
                runs = None  # one measured time-out is the record
                break
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        if runs is None:
            rows.append((names[method], None, None, None, f"time-out (> {args.peer_timeout:.0f} s)"))
            continue
        rows.append((names[method], statistics.median(r["seconds"] for r in runs), runs[0]["accuracy"],
                     statistics.median(r["peak_mb"] for r in runs), runs[0]["note"]))
    t_rw = next((t for name, t, *_ in rows if name.startswith("random_walker beta=130")), None)
    print(f"noisy volume {args.size}^3 ({args.size ** 3 / 1e6:.2f} M voxels), noise sd {args.noise}, "
          f"{args.n_scribbles} scribbled voxels per label, {args.connectivity}-connected, one thread, "
          f"medians of {args.repeats}")
    print()
    print("| method | seconds | time / rw(130) | voxel accuracy | peak memory MB | note |")
    print("|---|---:|---:|---:|---:|---|")
    for name, t, a, mb, note in rows:
        if t is None:
            print(f"| {name} | — | — | — | — | {note} |")
            continue
        ratio = f"{t / t_rw:.2f}" if t_rw and not name.startswith("baseline") else ""
        acc = f"{a:.4f}" if not name.startswith("baseline") else ""
        print(f"| {name} | {t:.2f} | {ratio} | {acc} | {mb:.0f} | {note} |")

if __name__ == "__main__":
    main()
