"""Pixel-grid graph builders: graphclust.grid_arrays / grid_matrix against their peers.

Times ``grid_arrays`` and ``grid_matrix`` on grayscale and RGB images of 512^2, 1024^2
and 2048^2 pixels (4- and 8-connectivity, contrast-sensitive weights), prints the
median of ``--repeats`` runs and the time per pixel (flat when the cost is linear), then
runs two peers in the same process on the same images:

* ``skimage.graph.pixel_graph`` (scikit-image), which builds the same sparse matrix;
  once with its default distance weights (against ``grid_matrix(beta=0)``) and once
  with a contrast ``edge_function`` (against ``grid_matrix`` with the same beta),
  grayscale only because it treats every axis of an array as spatial;
* ``networkx.grid_2d_graph``, the unweighted structure only, at 256^2 and 512^2,
  against ``grid_arrays`` and against ``grid_graph`` (our networkx face, which also
  stores weights and features).

Every timing is reported as wall-clock and CPU (``time.process_time``) medians: all
the code timed is single-threaded, so on an idle machine the two agree, and on a
shared machine the CPU figure is the steadier one. Ratios are peer / graphclust
(> 1: graphclust is faster), from the CPU medians.

    python benchmarks/bench_grid.py [--repeats 5] [--quick]
"""

import argparse
import os
import statistics
import time

import networkx as nx
import numpy as np

from graphclust.graphs import grid_arrays, grid_graph, grid_matrix


def median_time(fn, repeats):
    """Median (wall, cpu) seconds of ``repeats`` calls."""
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
        del out
    return statistics.median(wall), statistics.median(cpu)


def image(side, channels, rng):
    shape = (side, side) if channels == 1 else (side, side, channels)
    return rng.random(shape)


def bench_scaling(sides, repeats, rng):
    print(f"\n## graphclust grid builders, contrast weights (median of {repeats} runs)")
    print(f"{'image':>12s} {'conn':>4s} {'edges':>9s} | {'grid_arrays wall s':>18s} {'cpu s':>6s} {'cpu ns/px':>9s} "
          f"| {'grid_matrix wall s':>18s} {'cpu s':>6s} {'cpu ns/px':>9s}")
    for channels in (1, 3):
        for side in sides:
            img = image(side, channels, rng)
            axis = None if channels == 1 else -1
            for conn in (4, 8):
                n_edges = len(grid_arrays(img, conn, channel_axis=axis)[1])
                aw, ac = median_time(lambda: grid_arrays(img, conn, channel_axis=axis), repeats)
                mw, mc = median_time(lambda: grid_matrix(img, conn, channel_axis=axis), repeats)
                label = f"{side}x{side}" + ("x3" if channels == 3 else "")
                pix = side * side
                print(f"{label:>12s} {conn:4d} {n_edges:9d} | {aw:18.3f} {ac:6.3f} {1e9 * ac / pix:9.1f} "
                      f"| {mw:18.3f} {mc:6.3f} {1e9 * mc / pix:9.1f}")


def bench_skimage(sides, repeats, rng):
    try:
        from skimage.graph import pixel_graph
    except ImportError:  # pragma: no cover - scikit-image is the 'image' extra
        print("\n(scikit-image not installed: pixel_graph comparison skipped)")
        return
    print(f"\n## vs skimage.graph.pixel_graph (grayscale, same CSR matrix, median of {repeats} runs)")
    print(f"{'image':>10s} {'conn':>4s} {'weights':>9s} | {'graphclust wall':>15s} {'cpu':>6s} "
          f"| {'skimage wall':>12s} {'cpu':>6s} | {'ratio':>6s}")
    beta = 3.0  # = 1 / (2 mean squared difference) for uniform noise; same for both
    for side in sides:
        img = image(side, 1, rng)
        for conn in (4, 8):
            sk_conn = 1 if conn == 4 else 2

            def contrast(a, b, distance):
                return np.exp(-beta * (a - b) ** 2) / distance

            cases = (
                # structure, skimage's default weights (distances) vs unit / 1/sqrt(2)
                ("default", lambda: grid_matrix(img, conn, beta=0), lambda: pixel_graph(img, connectivity=sk_conn)),
                ("contrast", lambda: grid_matrix(img, conn, beta=beta),
                 lambda: pixel_graph(img, edge_function=contrast, connectivity=sk_conn)),
            )
            for name, ours_fn, peer_fn in cases:
                ow, oc = median_time(ours_fn, repeats)
                pw, pc = median_time(peer_fn, repeats)
                print(f"{side:>4d}x{side:<5d} {conn:4d} {name:>9s} | {ow:15.3f} {oc:6.3f} "
                      f"| {pw:12.3f} {pc:6.3f} | {pc / oc:6.1f}")


def bench_networkx(sides, repeats, rng):
    print(f"\n## vs networkx.grid_2d_graph (4-connected structure, median of {repeats} runs, "
          f"{max(1, repeats // 2)} for the networkx builders)")
    print(f"{'image':>10s} | {'grid_arrays cpu s':>17s} {'grid_graph cpu s':>16s} {'nx.grid_2d_graph cpu s':>22s} "
          f"| {'nx/arrays':>9s} {'nx/graph':>8s}")
    for side in sides:
        img = image(side, 1, rng)
        _, ta = median_time(lambda: grid_arrays(img, 4), repeats)
        _, tg = median_time(lambda: grid_graph(img, 4), max(1, repeats // 2))
        _, tn = median_time(lambda: nx.grid_2d_graph(side, side), max(1, repeats // 2))
        print(f"{side:>4d}x{side:<5d} | {ta:17.3f} {tg:16.3f} {tn:22.3f} | {tn / ta:9.1f} {tn / tg:8.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smaller images, for a smoke run")
    args = parser.parse_args()
    if hasattr(os, "getloadavg"):  # the machine may be shared: say how busy it was
        print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    rng = np.random.default_rng(0)
    grid_matrix(np.zeros((4, 4)), 4)  # load the numba kernels (compiled once, cached on disk)
    grid_arrays(np.zeros((4, 4, 3)), 8, channel_axis=-1)
    big = [128, 256] if args.quick else [512, 1024, 2048]
    small = [64, 128] if args.quick else [256, 512]
    bench_scaling(big, args.repeats, rng)
    bench_skimage(small if args.quick else small + [1024], args.repeats, rng)
    bench_networkx(small, args.repeats, rng)
    if hasattr(os, "getloadavg"):
        print("\nload average at end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
