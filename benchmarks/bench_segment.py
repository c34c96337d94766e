"""Scribble segmentation of the noisy horse silhouette: ``gc.segment`` against
scikit-image's ``random_walker`` and a PyMaxflow graph cut, same image, same scribbles,
same process.

The horse silhouette (``skimage.data.horse``) is resized to ``size x size``, Gaussian
noise of standard deviation ``--noise`` is added (foreground 1, background 0), and
``--n-scribbles`` pixels are scribbled in each of foreground and background, at least 8
pixels inside the region. Methods:

* ``gc.segment(method="hmrf-bp")`` (and ``"hmrf-icm"``): 8-connected contrast-sensitive
  grid, Gaussian colour model fitted on the scribbles, scribbles hard, loopy BP / ICM;
* ``skimage.segmentation.random_walker(mode="cg_j")`` with its default ``beta=130``;
* PyMaxflow: the exact minimum of *the same energy* as ``hmrf-bp`` (two labels, so one
  s-t cut; ``maxflow.Graph`` with ``add_grid_edges`` per neighbour direction), which
  tells how far BP is from the optimum.

Pixel accuracy against the clean silhouette; medians of ``--repeats`` runs.

    python benchmarks/bench_segment.py [--size 512] [--repeats 3] [--noise 0.8]
"""

import argparse
import statistics
import time

import numpy as np

import graphclust as gc
from graphclust.segmentation import segment


def horse_problem(size, noise, n_scribbles, seed=0):
    from scipy.ndimage import binary_erosion
    from skimage.transform import resize

    horse = ~gc.datasets.load_horse().astype(bool)  # skimage's horse is dark on white
    truth = resize(horse.astype(float), (size, size), order=0, anti_aliasing=False) > 0.5
    rng = np.random.default_rng(seed)
    img = truth.astype(float) + rng.normal(scale=noise, size=truth.shape)
    scrib = np.zeros(truth.shape, dtype=np.int64)
    for lab, mask in ((2, truth), (1, ~truth)):
        idx = np.argwhere(binary_erosion(mask, iterations=8))
        pick = idx[rng.choice(len(idx), n_scribbles, replace=False)]
        scrib[pick[:, 0], pick[:, 1]] = lab
    return img, scrib, truth


def graph_cut(img, scrib, seg):
    """Exact minimum of the hmrf-bp energy with PyMaxflow (label 2 = sink side)."""
    import maxflow

    mu, var = seg.info["colour_means"][:, 0], seg.info["colour_vars"][:, 0]
    cost = 0.5 * ((img[..., None] - mu) ** 2 / var + np.log(2 * np.pi * var))
    big = 1e9
    cost[scrib == 1, 1] = big
    cost[scrib == 2, 0] = big
    edges, w, _ = gc.grid_arrays(img, 8)
    rows, cols = img.shape
    g = maxflow.Graph[float]()
    ids = g.add_grid_nodes(img.shape)
    # one structure per neighbour direction, weights taken from grid_arrays
    W = np.zeros((rows * cols, 4))
    di = edges[:, 1] - edges[:, 0]
    for k, d in enumerate((1, cols - 1, cols, cols + 1)):
        sel = di == d
        if d == cols - 1:  # down-left diagonal: only where the column decreases
            sel &= (edges[:, 0] % cols) > 0
        W[edges[sel, 0], k] = w[sel]
    offsets = ((0, 1), (1, -1), (1, 0), (1, 1))
    for k, (dr, dc) in enumerate(offsets):
        structure = np.zeros((3, 3))
        structure[1 + dr, 1 + dc] = 1
        g.add_grid_edges(ids, weights=W[:, k].reshape(rows, cols), structure=structure, symmetric=True)
    g.add_grid_tedges(ids, cost[..., 1], cost[..., 0])
    g.maxflow()
    return np.where(g.get_grid_segments(ids), 2, 1)


def energy_of(img, seg, labels):
    mu, var = seg.info["colour_means"][:, 0], seg.info["colour_vars"][:, 0]
    k = labels - 1
    unary = 0.5 * ((img - mu[k]) ** 2 / var[k] + np.log(2 * np.pi * var[k]))
    edges, w, _ = gc.grid_arrays(img, 8)
    flat = labels.reshape(-1)
    return float(unary.sum() + w[flat[edges[:, 0]] != flat[edges[:, 1]]].sum())


def timed(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--noise", type=float, default=0.8)
    ap.add_argument("--n-scribbles", type=int, default=300)
    args = ap.parse_args()
    from skimage.segmentation import random_walker

    img, scrib, truth = horse_problem(args.size, args.noise, args.n_scribbles)
    segment(img[:32, :32], scrib[:32, :32] if (scrib[:32, :32] > 0).any() else None, n_segments=2)  # compile
    acc = {}
    rows = []
    for name, fn in [
        ("gc.segment hmrf-bp", lambda: segment(img, scrib, method="hmrf-bp", random_state=0)),
        ("gc.segment hmrf-icm", lambda: segment(img, scrib, method="hmrf-icm", random_state=0)),
    ]:
        t, seg = timed(fn, args.repeats)
        acc[name] = float(np.mean((seg.labels == 2) == truth))
        rows.append((name, t, acc[name], energy_of(img, seg, seg.labels)))
        if name.endswith("bp"):
            bp_seg = seg
    t, rw = timed(lambda: random_walker(img, scrib, mode="cg_j"), args.repeats)
    rows.append(("skimage random_walker", t, float(np.mean((rw == 2) == truth)), None))
    t, gcut = timed(lambda: graph_cut(img, scrib, bp_seg), args.repeats)
    rows.append(("PyMaxflow graph cut (same energy)", t, float(np.mean((gcut == 2) == truth)),
                 energy_of(img, bp_seg, gcut)))
    t_rw = rows[2][1]
    print(f"noisy horse {args.size}x{args.size}, noise sd {args.noise}, {args.n_scribbles} scribbled pixels per "
          f"label, medians of {args.repeats}")
    print()
    print("| method | seconds | time / random_walker | pixel accuracy | energy |")
    print("|---|---:|---:|---:|---:|")
    for name, t, a, e in rows:
        print(f"| {name} | {t:.2f} | {t / t_rw:.2f} | {a:.4f} | {'' if e is None else f'{e:.1f}'} |")


if __name__ == "__main__":
    main()
