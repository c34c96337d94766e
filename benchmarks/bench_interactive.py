"""Interactive refinement: how long ``gc.Segmenter.add_stroke`` takes to re-solve a
1-megapixel colour image, against a cold ``gc.segment`` of the same model.

The astronaut of ``skimage.data`` is resized to ``--size x --size`` (1024: 1.05
megapixels) with the scribbles and reference mask of
``gc.datasets.load_scribble_scene("astronaut")`` (nearest neighbour). After the first
solve, a simulated user adds ``--strokes`` strokes: each time, inside the largest
connected region the segmentation gets wrong, a disc of radius 8 around its most
interior pixel (largest distance to the region's border), labelled with the reference
label. Each ``add_stroke`` (update of the stroke pixels' unaries, warm re-solve from the
previous flows, the changed-pixel mask) is timed; then a cold
``gc.segment(image, all_scribbles, colour_model=..., smoothness=..., em_rounds=0)`` —
the same energy solved from scratch — for comparison. One thread (threadpoolctl).

    python benchmarks/bench_interactive.py [--size 1024] [--strokes 10]
"""

import argparse
import statistics
import time

import numpy as np

import graphclust as gc


def scene(size):
    from skimage.transform import resize

    image, scribbles, mask = gc.datasets.load_scribble_scene("astronaut")
    image = (resize(image, (size, size), order=1, anti_aliasing=False) * 255).round().astype(np.uint8)
    scribbles = resize(scribbles, (size, size), order=0, preserve_range=True, anti_aliasing=False).astype(np.int64)
    mask = resize(mask.astype(float), (size, size), order=0, anti_aliasing=False) > 0.5
    return image, scribbles, mask


def next_stroke(labels, mask, radius=8):
    """A disc inside the largest wrongly labelled region, with the reference label."""
    from scipy import ndimage

    wrong = (labels == 2) != mask
    regions, n = ndimage.label(wrong)
    if n == 0:
        return None, None
    largest = np.argmax(np.bincount(regions.ravel())[1:]) + 1
    inside = regions == largest
    dist = ndimage.distance_transform_edt(inside)
    r, c = np.unravel_index(np.argmax(dist), dist.shape)
    rr, cc = np.ogrid[:labels.shape[0], :labels.shape[1]]
    disc = ((rr - r) ** 2 + (cc - c) ** 2 <= radius ** 2) & inside
    return disc, 2 if mask[r, c] else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--strokes", type=int, default=10)
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    image, scribbles, mask = scene(args.size)
    warm = np.zeros((32, 32), dtype=int)
    warm[2, 2], warm[-3, -3] = 1, 2
    with threadpool_limits(1):
        gc.Segmenter(image[:32, :32], warm).add_stroke([(5, 5)], 1)  # compile (numba cache)
        t = time.perf_counter()
        seg = gc.Segmenter(image, scribbles)
        first = time.perf_counter() - t
        print(f"astronaut {args.size}x{args.size} colour ({args.size * args.size / 1e6:.2f} Mpx), one thread; "
              f"first solve (colour model, smoothness, solver built) {first:.2f} s, accuracy "
              f"{np.mean((seg.labels == 2) == mask):.4f}")
        print()
        print("| stroke | label | pixels | re-solve s | changed pixels | accuracy |")
        print("|---:|---:|---:|---:|---:|---:|")
        times = []
        for k in range(args.strokes):
            disc, label = next_stroke(seg.labels, mask)
            if disc is None:
                break
            res = seg.add_stroke(disc, label=label)
            times.append(res.seconds)
            print(f"| {k + 1} | {label} | {int(disc.sum())} | {res.seconds:.3f} | {res.n_changed} | "
                  f"{np.mean((seg.labels == 2) == mask):.4f} |")
        t = time.perf_counter()
        cold = gc.segment(image, seg.scribbles, colour_model=seg.model, smoothness=seg.smoothness, em_rounds=0)
        t_cold = time.perf_counter() - t
        print()
        print(f"median re-solve per stroke: {statistics.median(times):.3f} s (max {max(times):.3f} s); cold solve of "
              f"the same energy: {t_cold:.2f} s; energies {seg.energy:.6g} (strokes) vs {cold.energy:.6g} (cold)")


if __name__ == "__main__":
    main()
