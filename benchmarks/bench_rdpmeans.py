"""RDP-means: the marginal cost of one more pass against the marginal cost of one more
Lloyd iteration of scikit-learn's KMeans with the same number of clusters, one thread
each (threadpoolctl), in the same process.

Data: ``gc.datasets.make_blobs(n, k, d, separation=6)`` and constraints sampled from the
labels with 5 % of them flipped (``SideInfo.sample``). RDPMeans (``xi=1.0`` fixed, λ from
the ``k`` hint) is fitted once; from its converged state (labels, centroids, ``K``
clusters), laid out as ``fit`` lays large problems out (nodes in a random order once,
passes over random orders of blocks), we time

* **RDP pass**: what every iteration of ``RDPMeans.fit`` does: a pass of ICM with births
  over all points in a fresh random order (constraint partners read from the energy's
  CSR, births possible), the M-step (exact cluster sums, empty clusters dropped) and the
  objective, the energy of the labelling (``icm_births.sweep`` + ``DPCentroids.refit``
  + ``energy_value``), timed after one untimed pass, as in the middle of a fit (the
  sweep's distance bounds in place);
* **DP pass**: the same without constraints (DP-means);
* **first pass**: pass 1 of a fit, from the single starting cluster (births, no bounds
  yet);
* **Lloyd iteration**: ``(t(m2) − t(m1)) / (m2 − m1)`` where ``t(m)`` is
  ``KMeans(n_clusters=K, init=C0, n_init=1, max_iter=m, tol=0).fit(U)`` on uniform data
  ``U`` of the same shape (a Lloyd iteration costs the same on any data; on well
  separated blobs KMeans converges before ``m2``, which the script checks): the
  set-up and final assignment cancel out;

and print medians over the repeats and the ratio RDP pass / Lloyd iteration. As a
stricter peer, ``KMeans.predict(X)`` is timed too: one assignment pass of scikit-learn's
chunked kernel without the centroid update (the ratio to it is printed as well).
Whole fits (RDPMeans vs ``KMeans(n_clusters=K, n_init=1)``) are printed for context.

``--quality`` adds a small accuracy table instead of timings: Gaussian blobs with
constraints of growing noise, ARI of DP-means, annealed RDP-means, the default
(``xi="auto"``) and fixed-ξ RDP-means (``xi="pq"``), averaged over seeds.

    python benchmarks/bench_rdpmeans.py [--n 100000] [--d 10] [--k 10 50] [--constraints 10000] [--repeats 7]
    python benchmarks/bench_rdpmeans.py --quality [--seeds 5] [--pairs 2000] [--separation 3]
    python benchmarks/bench_rdpmeans.py --heldout [--seeds 3]
    python benchmarks/bench_rdpmeans.py --ablation [--seeds 3]

``--heldout`` checks the default (``xi="auto"``) on data it was not designed on: six
synthetic sets (overlapping blobs in 2, 5, 8 and 20 dimensions, unequal sizes,
anisotropic blobs, two moons) under the protocol of ``bench_noisy_defaults.py``
(standardised features, ``min(round(r·n(n−1)/2), 5000)`` pairs at ``r`` = 0.01 and
0.03, noise 0 to 0.2); mean F / NMI of scikit-learn ``KMeans(k, n_init=10)`` without
the links, the annealing, the default with the true ``k`` and the default without a
hint, the worst set's gap to k-means, and the runs with one cluster or more than ``2k``.

``--ablation`` takes the default apart on the seven data sets, draws and seeds of
``bench_noisy_defaults.py``: the k-means stage alone (``xi=0.0, init="kmeans"``),
``xi="pq"`` from the k-means start with the true accuracy ``1 − noise`` (clipped to
[0.501, 0.999]) or with the default's held-out estimates ``p̂``, ``q̂``, and the
cross-validated ``ξ``, each with 1 and 10 restarts; mean F / NMI by noise level.
"""

import argparse
import statistics
import time

import numpy as np

from threadpoolctl import threadpool_limits

import graphclust as gc
from graphclust.energy import energy_value, potts_csr
from graphclust.inference import icm_births
from graphclust.rdpmeans import DPCentroids, _effective, _visit_order


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def one_pass(provider, Y, c, labels, centroids, order, adjacency, pairs, we, warm=None):
    """One RDPMeans iteration from a given state (rebuilt first, untimed). ``warm``: an
    order for one untimed pass before, so the timed pass is a pass in the middle of a
    fit (the sweep's bounds from the previous pass in place): the marginal cost. The
    energy's constant is computed once, as ``fit`` does for a ξ."""
    constant = -we[(we > 0) & np.isfinite(we)].sum()
    provider.start_arrays(Y, c, labels, centroids)
    lam = provider.lam
    if warm is not None:
        icm_births.sweep(provider, warm, adjacency, lam)
        provider.refit()
    t = time.perf_counter()
    icm_births.sweep(provider, order, adjacency, lam)
    provider.refit()
    sizes = provider.cluster_sizes()
    energy_value(provider.labels, provider.assignment_cost(), pairs, we, label_costs=np.full(len(sizes), lam),
                 used=sizes > 0, constant=constant)
    return time.perf_counter() - t


def lloyd_iteration(X, K, repeats, m1=5, m2=25):
    """Marginal seconds of one Lloyd iteration (uniform data of X's shape)."""
    from sklearn.cluster import KMeans

    U = np.random.default_rng(1).uniform(size=X.shape)
    init = U[:K].copy()

    def fit(m):
        return KMeans(n_clusters=K, init=init, n_init=1, max_iter=m, tol=0).fit(U)

    assert fit(m2).n_iter_ == m2, "KMeans converged before m2 iterations: the difference is not m2 - m1 iterations"
    return (median_time(lambda: fit(m2), repeats) - median_time(lambda: fit(m1), repeats)) / (m2 - m1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--k", type=int, nargs="+", default=[10, 50])
    ap.add_argument("--constraints", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--xi", type=float, default=1.0)
    ap.add_argument("--quality", action="store_true", help="accuracy vs constraint noise instead of timings")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=2000, help="--quality: number of constraints")
    ap.add_argument("--separation", type=float, default=3.0, help="--quality: blob separation")
    ap.add_argument("--heldout", action="store_true", help="the default on held-out synthetic sets")
    ap.add_argument("--ablation", action="store_true", help="the default taken apart on the issue-26 data sets")
    args = ap.parse_args()
    if args.quality:
        return quality(args.seeds, args.pairs, args.separation)
    if args.heldout:
        with threadpool_limits(1):
            return heldout(args.seeds)
    if args.ablation:
        with threadpool_limits(1):
            return ablation(args.seeds)
    from sklearn.cluster import KMeans

    with threadpool_limits(1):
        timings(args)


def timings(args):
    from sklearn.cluster import KMeans

    # compile the numba kernels outside the timings
    Xs, ys = gc.datasets.make_blobs(200, 3, args.d, random_state=0)
    gc.RDPMeans(n_clusters=3, xi=1.0, random_state=0).fit(Xs, gc.SideInfo.sample(ys, n_pairs=50, random_state=0))

    print(f"n={args.n}, d={args.d}, constraints={args.constraints} (5% flipped), xi={args.xi}, "
          f"one thread each, medians of {args.repeats} runs")
    print("| k hint | K | RDP pass (s) | DP pass (s) | first pass (s) | Lloyd iteration (s) | ratio RDP/Lloyd "
          "| KMeans.predict (s) | ratio RDP/predict | RDPMeans fit (s, passes) | KMeans fit n_init=1 (s, iters) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in args.k:
        X, y = gc.datasets.make_blobs(args.n, k, args.d, separation=6, random_state=0)
        S = gc.SideInfo.sample(y, n_pairs=args.constraints, noise=0.05, random_state=0)
        P = gc.Problem.from_array(X, S)
        t = time.perf_counter()
        est = gc.RDPMeans(n_clusters=k, xi=args.xi, random_state=0).fit(P)
        fit_seconds = time.perf_counter() - t
        K = est.n_clusters_
        provider = DPCentroids(lam=est.lam_)
        Y, c = provider.points(P)
        # the layout fit uses: nodes in a random order once
        rng = np.random.default_rng(0)
        perm = rng.permutation(P.n_nodes)
        inv = np.empty_like(perm)
        inv[perm] = np.arange(P.n_nodes)
        Y, c, labels = Y[perm], c[perm], est.labels_[perm]
        pairs, w = np.sort(inv[P.constraints], axis=1), P.constraint_weights
        we = _effective(w, args.xi, args.xi)
        indptr, indices, _, eid = potts_csr(pairs, w, P.n_nodes)
        csr = (indptr, indices, we[eid])
        empty = potts_csr(pairs[:0], we[:0], P.n_nodes)

        rdp, dp, first = [], [], []
        for _ in range(args.repeats):
            order, warm = _visit_order(P.n_nodes, rng), _visit_order(P.n_nodes, rng)
            rdp.append(one_pass(provider, Y, c, labels, est.centroids_, order, csr, pairs, we, warm))
            dp.append(one_pass(provider, Y, c, labels, est.centroids_, order, empty, pairs[:0], we[:0], warm))
            first.append(one_pass(provider, Y, c, np.zeros(P.n_nodes, np.int64), None, order, csr, pairs, we))
        rdp_s, dp_s, first_s = (statistics.median(v) for v in (rdp, dp, first))

        lloyd_s = lloyd_iteration(X, K, args.repeats)
        one = KMeans(n_clusters=K, init=est.centroids_, n_init=1, max_iter=1).fit(X)
        pred_s = median_time(lambda: one.predict(X), args.repeats)
        t = time.perf_counter()
        km = KMeans(n_clusters=K, n_init=1, random_state=0).fit(X)
        km_fit = time.perf_counter() - t
        print(f"| {k} | {K} | {rdp_s:.4f} | {dp_s:.4f} | {first_s:.4f} | {lloyd_s:.4f} | {rdp_s / lloyd_s:.2f} "
              f"| {pred_s:.4f} | {rdp_s / pred_s:.2f} "
              f"| {fit_seconds:.2f} ({est.result_.info['iterations']}) | {km_fit:.2f} ({km.n_iter_}) |")


def quality(n_seeds, n_pairs=2000, separation=3.0):
    """ARI vs the fraction of flipped constraints: 4 blobs of 150 points in 2-D,
    ``n_pairs`` constraints, λ from the hint k = 4."""
    noises = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0]
    methods = {
        "DP-means": lambda: gc.DPMeans(n_clusters=4),
        "RDP anneal (auto cap)": lambda: gc.RDPMeans(n_clusters=4, xi="anneal"),
        "RDP default (xi=auto)": lambda: gc.RDPMeans(n_clusters=4),
        "RDP pq p=0.9": lambda: gc.RDPMeans(n_clusters=4, xi="pq", p_link=0.9),
        "RDP pq p=1-noise": None,
    }
    print(f"4 blobs x 150 points, 2-D, separation {separation}; {n_pairs} constraints; "
          f"mean ARI (mean #clusters) over {n_seeds} seeds")
    print("| flipped | " + " | ".join(methods) + " |")
    print("|---" * (len(methods) + 1) + "|")
    for noise in noises:
        cells = []
        for name, make in methods.items():
            aris, ks = [], []
            for seed in range(n_seeds):
                X, y = gc.datasets.make_blobs(600, 4, 2, separation=separation, random_state=seed)
                S = gc.SideInfo.sample(y, n_pairs=n_pairs, noise=noise, random_state=seed)
                if make is None:
                    p = min(max(1.0 - noise, 0.01), 0.99)
                    est = gc.RDPMeans(n_clusters=4, xi="pq", p_link=p, random_state=seed)
                else:
                    est = make().set_params(random_state=seed)
                est.fit(X, S)
                aris.append(gc.ari(y, est.labels_))
                ks.append(est.n_clusters_)
            cells.append(f"{np.mean(aris):.3f} ({np.mean(ks):.1f})")
        print(f"| {noise:.2f} | " + " | ".join(cells) + " |")


def heldout_sets():
    """Synthetic sets none of the defaults were designed on: ``name -> (X, y)``."""
    blobs = gc.datasets.make_blobs
    X, y = blobs(400, 4, 3, separation=3.0, random_state=16)
    stretch = np.random.default_rng(16).normal(size=(3, 3))
    stretch[:, 0] *= 4
    return {
        "blobs 2-D, k=4": blobs(300, 4, 2, separation=2.0, random_state=11),
        "blobs 8-D, k=6": blobs(500, 6, 8, separation=2.5, random_state=12),
        "unequal 5-D, k=3": blobs([50, 100, 250], 3, 5, separation=1.5, random_state=13),
        "blobs 20-D, k=10": blobs(400, 10, 20, separation=3.0, random_state=14),
        "two moons": gc.datasets.make_moons(300, noise=0.1, random_state=15),
        "anisotropic 3-D, k=4": (X @ stretch, y),
    }


def heldout(n_runs, rates=(0.01, 0.03), noises=(0.0, 0.05, 0.1, 0.2)):
    from sklearn.cluster import KMeans

    methods = {
        "k-means": lambda X, S, k, s: KMeans(k, n_init=10, random_state=s).fit(X).labels_,
        "anneal": lambda X, S, k, s: gc.RDPMeans(n_clusters=k, xi="anneal", random_state=s).fit(X, S).labels_,
        "default": lambda X, S, k, s: gc.RDPMeans(n_clusters=k, random_state=s).fit(X, S).labels_,
        "default, no hint": lambda X, S, k, s: gc.RDPMeans(random_state=s).fit(X, S).labels_,
    }
    recs = []
    for i, (name, (X, y)) in enumerate(heldout_sets().items()):
        X = (X - X.mean(0)) / X.std(0)
        k, n = len(np.unique(y)), len(y)
        for rate in rates:
            for noise in noises:
                for run in range(n_runs):
                    cseed, mseed = (int(v) for v in np.random.SeedSequence(
                        [20261128, i, round(rate * 1e4), round(noise * 1e4), run]).generate_state(2))
                    S = gc.SideInfo.sample(y, int(min(round(rate * n * (n - 1) / 2), 5000)), noise=noise,
                                           random_state=cseed)
                    for m, fit in methods.items():
                        labels = fit(X, S, k, mseed)
                        recs.append((m, name, noise, k, gc.pairwise_f_measure(y, labels), gc.nmi(y, labels),
                                     len(np.unique(labels))))
    print(f"{len(heldout_sets())} held-out sets, rates {rates}, {n_runs} runs a cell: mean F / NMI; "
          "worst set against k-means (F / NMI); runs with 1 or > 2k clusters")
    print("| noise | " + " | ".join(methods) + " | default: worst set, F / NMI |")
    print("|---" * (len(methods) + 2) + "|")

    def mean(m, p, key, name=None):
        j = {"F": 4, "NMI": 5}[key]
        return np.mean([r[j] for r in recs if r[0] == m and r[2] == p and (name is None or r[1] == name)])

    for p in noises:
        gaps = {name: (mean("default", p, "F", name) - mean("k-means", p, "F", name),
                       mean("default", p, "NMI", name) - mean("k-means", p, "NMI", name))
                for name in heldout_sets()}
        worst_f = min(gaps, key=lambda g: gaps[g][0])
        worst_n = min(gaps, key=lambda g: gaps[g][1])
        print(f"| {p:g} | " + " | ".join(f"{mean(m, p, 'F'):.3f} / {mean(m, p, 'NMI'):.3f}" for m in methods)
              + f" | {gaps[worst_f][0]:+.3f} ({worst_f}) / {gaps[worst_n][1]:+.3f} ({worst_n}) |")
    for m in methods:
        bad = [r for r in recs if r[0] == m and (r[6] == 1 or r[6] > 2 * r[3])]
        print(f"{m}: {len(bad)} of {sum(r[0] == m for r in recs)} runs with one cluster or more than 2k")


def ablation(n_runs):
    import os
    import sys

    from sklearn.cluster import KMeans

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_noisy_defaults as noisy
    from bench_sideinfo_uci import load

    def clip(p):
        return float(min(max(p, 0.501), 0.999))

    def pq_hat(X, S, k, s, n_init):
        info = gc.RDPMeans(n_clusters=k, n_init=1, random_state=s).fit(X, S).result_.info
        p, q = info["p_link_estimate"], info["q_link_estimate"]
        if p is None or not p + q > 1:
            return gc.RDPMeans(n_clusters=k, xi=0.0, init="kmeans", n_init=n_init, random_state=s)
        return gc.RDPMeans(n_clusters=k, xi="pq", p_link=clip(p), q_link=clip(q), init="kmeans", n_init=n_init,
                           random_state=s)

    methods = {"k-means": None, "k-means stage (xi=0)": None}
    for n_init in (1, 10):
        methods[f"pq, true accuracy, {n_init} run(s)"] = ("true", n_init)
        methods[f"pq, p-hat and q-hat, {n_init} run(s)"] = ("hat", n_init)
        methods[f"cross-validated, {n_init} run(s)"] = ("cv", n_init)
    recs = []
    for ds in noisy.DATASETS:
        X, y, k = load(ds, "zscore")
        for rate in noisy.RATES:
            for noise in noisy.NOISE:
                for run in range(n_runs):
                    cseed, s = noisy.seeds(ds, rate, noise, run)
                    S = gc.SideInfo.sample(y, noisy.n_pairs(len(y), rate), noise=noise, random_state=cseed)
                    P = gc.Problem.from_array(X, S)
                    for m, how in methods.items():
                        if m == "k-means":
                            labels = KMeans(n_clusters=k, n_init=10, random_state=s).fit(X).labels_
                        elif how is None:
                            labels = gc.RDPMeans(n_clusters=k, xi=0.0, init="kmeans", n_init=1,
                                                 random_state=s).fit(P).labels_
                        elif how[0] == "true":
                            labels = gc.RDPMeans(n_clusters=k, xi="pq", p_link=clip(1 - noise), init="kmeans",
                                                 n_init=how[1], random_state=s).fit(P).labels_
                        elif how[0] == "hat":
                            labels = pq_hat(P, None, k, s, how[1]).fit(P).labels_
                        else:
                            labels = gc.RDPMeans(n_clusters=k, n_init=how[1], random_state=s).fit(P).labels_
                        recs.append((m, noise, gc.pairwise_f_measure(y, labels), gc.nmi(y, labels)))
    print(f"{len(noisy.DATASETS)} data sets, rates {noisy.RATES}, {n_runs} runs a cell: mean F / NMI")
    print("| variant | " + " | ".join(f"{p:g}" for p in noisy.NOISE) + " |")
    print("|---" * (len(noisy.NOISE) + 1) + "|")
    for m in methods:
        cells = [f"{np.mean([r[2] for r in recs if r[0] == m and r[1] == p]):.3f} / "
                 f"{np.mean([r[3] for r in recs if r[0] == m and r[1] == p]):.3f}" for p in noisy.NOISE]
        print(f"| {m} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
