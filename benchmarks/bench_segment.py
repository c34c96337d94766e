"""Scribble segmentation: ``gc.segment`` against scikit-image's ``random_walker``, same
images, same scribbles, same process, one thread each (threadpoolctl).

Noisy horse: the silhouette (``skimage.data.horse``) resized to ``size x size``,
foreground 1 and background 0 plus Gaussian noise of standard deviation ``--noise``;
``--n-scribbles`` random pixels scribbled in each of foreground and background, at least
8 pixels inside the region. Coffee and astronaut: the pictures of ``skimage.data`` with
the straight-stroke scribbles and hand-drawn reference masks of
``gc.datasets.load_scribble_scene`` (see ``tools/make_scribble_scenes.py``).

Methods:

* ``gc.segment`` with its defaults (``method="auto"`` = ``"graphcut"``: a Gaussian
  mixture per label from the scribbles, contrast-sensitive 8-connected smoothness with
  the data-driven weight, hard scribbles, exact minimum cut), with two rounds of EM
  refinement of the colour model (``em_rounds=2``), and with the distance-to-stroke
  prior (``locality=5``);
* ``gc.segment(method="hmrf-bp")``, the previous default (one Gaussian per label,
  smoothness 1, loopy BP) — horse only;
* ``skimage.segmentation.random_walker(mode="cg_j")`` at its default ``beta=130`` and at
  ``beta=50``.

Pixel accuracy against the reference; medians of ``--repeats`` runs.

    python benchmarks/bench_segment.py [--size 512] [--repeats 3] [--noise 0.6] [--scenes coffee astronaut]
    python benchmarks/bench_segment.py --smoothness-sweep
"""

import argparse
import statistics
import time
import warnings

import numpy as np

import graphclust as gc
from graphclust.segmentation import segment


def horse_problem(size, noise, n_scribbles, seed=0):
    from scipy.ndimage import binary_erosion
    from skimage.transform import resize

    horse = gc.datasets.load_horse()
    truth = resize(horse.astype(float), (size, size), order=0, anti_aliasing=False) > 0.5
    rng = np.random.default_rng(seed)
    img = truth.astype(float) + rng.normal(scale=noise, size=truth.shape)
    scrib = np.zeros(truth.shape, dtype=np.int64)
    for lab, mask in ((2, truth), (1, ~truth)):
        idx = np.argwhere(binary_erosion(mask, iterations=8))
        pick = idx[rng.choice(len(idx), n_scribbles, replace=False)]
        scrib[pick[:, 0], pick[:, 1]] = lab
    return img, scrib, truth


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def compare(img, scrib, truth, repeats, channel_axis=None, extra=()):
    from skimage.segmentation import random_walker

    rows = []
    methods = [("gc.segment (auto: graphcut)", lambda: segment(img, scrib, random_state=0)),
               ("gc.segment em_rounds=2 (EM refinement)", lambda: segment(img, scrib, em_rounds=2, random_state=0)),
               ("gc.segment locality=5 (distance-to-stroke prior)",
                lambda: segment(img, scrib, locality=5.0, random_state=0)),
               *extra,
               ("random_walker beta=130 (default)",
                lambda: random_walker(img, scrib, mode="cg_j", channel_axis=channel_axis)),
               ("random_walker beta=50",
                lambda: random_walker(img, scrib, beta=50, mode="cg_j", channel_axis=channel_axis))]
    for name, fn in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # random_walker's "probability range" warnings
            t, out = timed(fn, repeats)
        labels = out.labels if hasattr(out, "labels") else out
        note = f"smoothness {out.info['smoothness']:.3g}" if hasattr(out, "info") and "smoothness" in out.info else ""
        rows.append((name, t, float(np.mean((labels == 2) == truth)), note))
    return rows


def table(title, rows):
    t_rw = next(t for name, t, _, _ in rows if name.startswith("random_walker beta=130"))
    t_rw50 = next(t for name, t, _, _ in rows if name.startswith("random_walker beta=50"))
    print(title)
    print()
    print("| method | seconds | time / rw(130) | time / rw(50) | pixel accuracy | note |")
    print("|---|---:|---:|---:|---:|---|")
    for name, t, a, note in rows:
        print(f"| {name} | {t:.2f} | {t / t_rw:.2f} | {t / t_rw50:.2f} | {a:.4f} | {note} |")
    print()


def sweep(args):
    """Pixel accuracy at multiples of the smoothness the rule picks, per image."""
    scenes = [("noisy horse", *horse_problem(args.size, args.noise, args.n_scribbles))]
    scenes += [(name, *gc.datasets.load_scribble_scene(name)) for name in args.scenes]
    factors = (0.25, 0.5, 1.0, 2.0, 4.0)
    print("| image | rule's smoothness | " + " | ".join(f"x{f:g}" for f in factors) + " |")
    print("|---|---:|" + "---:|" * len(factors))
    for name, img, scrib, truth in scenes:
        lam = segment(img, scrib, random_state=0).info["smoothness"]
        accs = [float(np.mean((segment(img, scrib, smoothness=f * lam, random_state=0).labels == 2) == truth))
                for f in factors]
        print(f"| {name} | {lam:.3g} | " + " | ".join(f"{a:.4f}" for a in accs) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--noise", type=float, default=0.6)
    ap.add_argument("--n-scribbles", type=int, default=300)
    ap.add_argument("--scenes", nargs="*", default=["coffee", "astronaut"], choices=["coffee", "astronaut"])
    ap.add_argument("--smoothness-sweep", action="store_true",
                    help="instead: accuracy at 1/4 .. 4 times the data-driven smoothness on each image")
    args = ap.parse_args()
    if args.smoothness_sweep:
        return sweep(args)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        img, scrib, truth = horse_problem(args.size, args.noise, args.n_scribbles)
        warm = np.zeros((32, 32), dtype=int)
        warm[2, 2], warm[-3, -3] = 1, 2
        segment(img[:32, :32], warm, random_state=0)  # compile (numba cache)
        segment(img[:32, :32], warm, method="hmrf-bp", random_state=0, progress=False)
        hmrf = [("gc.segment method='hmrf-bp' (previous default)",
                 lambda: segment(img, scrib, method="hmrf-bp", random_state=0, progress=False))]
        rows = compare(img, scrib, truth, args.repeats, extra=hmrf)
        table(f"noisy horse {args.size}x{args.size}, noise sd {args.noise}, {args.n_scribbles} scribbled pixels per "
              f"label, medians of {args.repeats}, one thread", rows)
        for name in args.scenes:
            image, scribbles, mask = gc.datasets.load_scribble_scene(name)
            rows = compare(image, scribbles, mask, args.repeats, channel_axis=-1)
            table(f"{name} {image.shape[0]}x{image.shape[1]} colour, {int((scribbles > 0).sum())} scribbled pixels, "
                  f"medians of {args.repeats}, one thread", rows)


if __name__ == "__main__":
    main()
