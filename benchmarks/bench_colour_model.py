"""The colour model of ``gc.segment``: the library's own EM (with and without its
covariance shrinkage) against scikit-learn's ``GaussianMixture``, the previous colour
model, in the same segmentation (same grid, smoothness rule and cut).

Scenes: the README's noisy rectangle (four noise draws, a 20-pixel and a 70-pixel
stroke), the tests' three colour bands and three grey bands (7 scribbled pixels per
band), the noisy horse at 512² (300 scribbled pixels per label) and the coffee and
astronaut pictures with their shipped scribbles and masks. Pixel accuracy, mean and
worst over ``--seeds`` random states, and the median seconds of one ``gc.segment``.

    python benchmarks/bench_colour_model.py [--seeds 4]
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import graphclust as gc  # noqa: E402
from graphclust.potentials.mixture import GaussianMixtures  # noqa: E402


def sklearn_update(self, problem, labels, **penalty_terms):
    """The previous ``GaussianMixtures.update``: scikit-learn's EM per label."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    X, n = problem.X, problem.counts
    labels = np.asarray(labels).reshape(-1)
    rng = np.random.default_rng(self.random_state) if not isinstance(self.random_state, np.random.Generator) \
        else self.random_state
    weights, means, chols = [], [], []
    for k in range(self.n_clusters):
        idx = np.flatnonzero(labels == k)
        if idx.size > self.max_samples:
            idx = np.sort(rng.choice(idx, self.max_samples, replace=False))
        Y = np.asarray(X[idx], dtype=np.float64) / np.asarray(n[idx], dtype=np.float64)[:, None]
        m = min(self.n_components, len(np.unique(Y, axis=0)))
        gm = GaussianMixture(m, covariance_type="full", reg_covar=self.reg, max_iter=self.max_iter,
                             random_state=int(rng.integers(2 ** 31)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gm.fit(Y)
        weights.append(gm.weights_), means.append(gm.means_), chols.append(gm.precisions_cholesky_)
    self.weights_, self.means_, self.precisions_cholesky_ = weights, means, chols


def scenes():
    from bench_segment import horse_problem
    from test_segmentation import noisy_regions

    out = {}
    for seed in range(4):
        rng = np.random.default_rng(seed)
        truth = np.zeros((60, 80), dtype=int)
        truth[15:45, 20:60] = 1
        image = truth + rng.normal(scale=0.6, size=truth.shape)
        s = np.zeros(truth.shape, dtype=int)
        s[30, 30:50] = 2
        s[5, 5:75] = 1
        out[f"rectangle, draw {seed}"] = (image, s, truth + 1)
    img, scr, truth = noisy_regions(colour=True, noise=0.35)
    out["three colour bands"] = (img, scr, truth)
    img, scr, truth = noisy_regions()
    out["three grey bands"] = (img, scr, truth)
    img, scr, truth = horse_problem(512, 0.6, 300)
    out["noisy horse 512²"] = (img, scr, truth.astype(int) + 1)
    for name in ("coffee", "astronaut"):
        img, scr, mask = gc.datasets.load_scribble_scene(name)
        out[name] = (img, scr, (mask > 0).astype(int) + 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=4)
    args = ap.parse_args()
    own = GaussianMixtures.update
    variants = {
        "scikit-learn GaussianMixture (before)": (sklearn_update, 0.0),
        "own EM, shrinkage=0": (own, 0.0),
        "own EM, shrinkage=20 (default)": (own, 20.0),
    }
    rows = {}
    with threadpool_limits(1):
        for name, (img, scr, truth) in scenes().items():
            rows[name] = []
            for label, (update, shrinkage) in variants.items():
                GaussianMixtures.update = update
                GaussianMixtures.__init__.__kwdefaults__["shrinkage"] = shrinkage
                accs, secs = [], []
                for r in range(args.seeds):
                    t = time.perf_counter()
                    seg = gc.segment(img, scr, random_state=r)
                    secs.append(time.perf_counter() - t)
                    accs.append(float(np.mean(seg.labels == truth)))
                rows[name].append((np.mean(accs), np.min(accs), np.median(secs)))
            print(name, rows[name], flush=True)
    GaussianMixtures.update = own
    GaussianMixtures.__init__.__kwdefaults__["shrinkage"] = 20.0
    print()
    print("| scene | " + " | ".join(variants) + " |")
    print("|---|" + "---:|" * len(variants))
    for name, cells in rows.items():
        print(f"| {name} | " + " | ".join(f"{m:.4f} (worst {w:.3f}; {s:.2f} s)" for m, w, s in cells) + " |")
    means = np.array([[c[0] for c in cells] for cells in rows.values()])
    print("| mean over the scenes | " + " | ".join(f"{v:.4f}" for v in means.mean(axis=0)) + " |")


if __name__ == "__main__":
    main()
