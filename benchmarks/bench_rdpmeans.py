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
constraints of growing noise, ARI of DP-means, annealed RDP-means and fixed-ξ
RDP-means (``xi="pq"``), averaged over seeds.

    python benchmarks/bench_rdpmeans.py [--n 100000] [--d 10] [--k 10 50] [--constraints 10000] [--repeats 7]
    python benchmarks/bench_rdpmeans.py --quality [--seeds 5] [--pairs 2000] [--separation 3]
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
    args = ap.parse_args()
    if args.quality:
        return quality(args.seeds, args.pairs, args.separation)
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
        "RDP anneal (auto cap)": lambda: gc.RDPMeans(n_clusters=4),
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


if __name__ == "__main__":
    main()
