"""Peak memory of ``gc.segment`` on a large grey image (issue #28: a 2048² segmentation
in at most 400 MB, tens of bytes per pixel rather than a kilobyte).

The noisy horse of ``bench_segment.horse_problem`` (noise sd 0.6, 300 scribbled pixels per
label) is written to ``.npy`` files first, so that the measured processes import
neither scikit-image nor anything else the segmentation does not need. Each case is a
fresh subprocess whose peak resident set (``VmHWM``, what ``/usr/bin/time -v`` reports
as "Maximum resident set size") is read at its end:

* ``baseline``: graphclust imported, the image and scribbles loaded, a 64² image
  segmented (so numba's cached kernels are loaded, as in every run);
* ``segment``: the same, then ``gc.segment(image, scribbles)`` with its defaults;
* ``segment hmrf-icm`` (``--explicit``): the explicit-energy path the grid engine
  replaced, for comparison;
* ``segment 4-connected`` (``--four``): the default method with ``connectivity=4``
  (two weight and flow arrays per pixel instead of four).

    python benchmarks/bench_segment_memory.py [--size 2048] [--explicit] [--four]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # the workers inherit it: one thread, as every benchmark times

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_peak import peak_mib  # noqa: E402


def worker(method, folder):
    import graphclust as gc

    img, scrib = np.load(os.path.join(folder, "image.npy")), np.load(os.path.join(folder, "scribbles.npy"))
    small = np.zeros((64, 64), dtype=np.int64)
    small[10, 10], small[50, 50] = 1, 2
    gc.segment(img[:64, :64].copy(), small)  # load the cached kernels, as every real run does
    out = {"accuracy": None, "seconds": 0.0}
    if method != "baseline":
        t = time.perf_counter()
        if method == "segment 4-connected":
            seg = gc.segment(img, scrib, connectivity=4)
        else:
            seg = gc.segment(img, scrib, method="auto" if method == "segment" else method)
        out["seconds"] = time.perf_counter() - t
        truth = np.load(os.path.join(folder, "truth.npy"))
        out["accuracy"] = float(np.mean((seg.labels == 2) == truth))
    out["peak_mb"] = peak_mib()
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--explicit", action="store_true", help="also measure method='hmrf-icm' (explicit energy)")
    ap.add_argument("--four", action="store_true", help="also measure the default method with connectivity=4")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(*args.worker)
    from bench_segment import horse_problem

    img, scrib, truth = horse_problem(args.size, 0.6, 300)
    with tempfile.TemporaryDirectory() as folder:
        np.save(os.path.join(folder, "image.npy"), img.astype(np.float32))
        np.save(os.path.join(folder, "scribbles.npy"), scrib.astype(np.uint8))
        np.save(os.path.join(folder, "truth.npy"), truth)
        cases = (["baseline", "segment"] + (["hmrf-icm"] if args.explicit else [])
                 + (["segment 4-connected"] if args.four else []))
        rows = {}
        for case in cases:
            out = subprocess.run([sys.executable, __file__, "--worker", case, folder], check=True,
                                 capture_output=True, text=True)
            rows[case] = json.loads(out.stdout.strip().splitlines()[-1])
    n = args.size * args.size
    base = rows["baseline"]["peak_mb"]
    print(f"noisy horse {args.size}² ({n / 1e6:.1f} M pixels, grey float32), one process per row")
    print()
    print("| run | peak MiB | above baseline MiB | bytes per pixel above baseline | seconds | pixel accuracy |")
    print("|---|---:|---:|---:|---:|---:|")
    for case, r in rows.items():
        above = r["peak_mb"] - base
        acc = "" if r["accuracy"] is None else f"{r['accuracy']:.4f}"
        extra = "" if case == "baseline" else f"{above:.0f} | {above * 2**20 / n:.0f}"
        print(f"| {case} | {r['peak_mb']:.0f} | {extra or ' | '} | {r['seconds']:.2f} | {acc} |")


if __name__ == "__main__":
    main()
