"""TVClust: time per Gibbs sweep, against a NumPy implementation of the same sweep, and
clustering quality against scikit-learn's variational Dirichlet-process mixture.

Part 1 (speed). Blobs in ``d`` dimensions, 1000 points, 1000 constraints sampled from
the truth with 10 % flipped. One chain; the time of a sweep is the median over
``--repeats`` fits of the fit's mean time per sweep (compilation excluded: a warm-up fit
runs first). "gibbs" is the numba sweep alone (``n_split_merge=0``), "+split-merge" adds
the default 10 split–merge proposals per sweep. The peer is the same collapsed sweep
(diagonal Normal–Inverse-Gamma likelihood, side-information factors, the same
conditional) written with NumPy: a Python loop over points, NumPy vectorised over
clusters; ratio = peer / graphclust for the "gibbs" column.

Part 2 (quality). iris, wine and 4 blobs: TVClust (full Gaussian, defaults: p and q
learnt, 300 sweeps) without constraints and with ``n`` constraints at three noise
levels, against ``sklearn.mixture.BayesianGaussianMixture`` (Dirichlet-process prior,
full covariance, at most 20 components; it takes no side information, so it appears in
the unconstrained row). ARI against the truth, clusters found, seconds; means over
``--seeds`` seeds.

Part 1 also times the full Gaussian sweep at ``--sizes`` points (as many constraints as
points) to show how it scales.

    python benchmarks/bench_tvclust.py [--repeats 5] [--sweeps 20] [--seeds 3] [--sizes 1000 10000]
                                       [--only speed quality] [--clock wall|thread]
"""

import argparse
import math
import statistics
import time

import numpy as np
from scipy.special import gammaln

import graphclust as gc


# ---------------------------------------------------------------------- the NumPy peer
def numpy_sweep(X, z, stats, adj, lp, lq, alpha, prior, rng):
    """One collapsed Gibbs sweep, NIG likelihood, clusters as columns of arrays.

    ``stats = [n (K,), mean (K, d), b (K, d)]`` with empty clusters dropped after the
    sweep; ``adj[i]`` lists ``(j, kind, w)``."""
    m0, k0, a0, b0 = prior
    n, d = X.shape
    cn, cm, cb = stats
    for i in rng.permutation(n):
        k = z[i]
        x = X[i]
        # remove i from its cluster
        kap1 = k0 + cn[k]
        kap = kap1 - 1.0
        if cn[k] > 1:
            m_new = (kap1 * cm[k] - x) / kap
            cb[k] -= 0.5 * kap / kap1 * (x - m_new) ** 2
            cm[k] = m_new
            cn[k] -= 1
        else:
            cn[k], cm[k], cb[k] = 0.0, m0, b0
        alive = cn > 0
        # side information
        side = np.zeros(len(cn))
        for j, kind, w in adj[i]:
            side[z[j]] += w * (lp if kind == 0 else lq)
        # predictive of x in every cluster and in a new one
        kap = k0 + cn
        a = a0 + 0.5 * cn
        b1 = cb + 0.5 * (kap / (kap + 1.0))[:, None] * (x - cm) ** 2
        logp = (d * (gammaln(a + 0.5) - gammaln(a))
                + (a[:, None] * np.log(cb) - (a + 0.5)[:, None] * np.log(b1)).sum(1)
                + 0.5 * d * np.log(kap / (kap + 1.0)) - 0.5 * d * math.log(2 * math.pi))
        logw = np.where(alive, np.log(np.maximum(cn, 1e-300)) + logp + side, -np.inf)
        kap_new, b_new = k0 + 1.0, b0 + 0.5 * k0 / (k0 + 1.0) * (x - m0) ** 2
        new = (math.log(alpha) + d * (math.lgamma(a0 + 0.5) - math.lgamma(a0))
               + (a0 * np.log(b0) - (a0 + 0.5) * np.log(b_new)).sum() + 0.5 * d * math.log(k0 / kap_new)
               - 0.5 * d * math.log(2 * math.pi))
        allw = np.append(logw, new)
        prob = np.exp(allw - allw.max())
        c = int(rng.choice(len(prob), p=prob / prob.sum()))
        if c == len(cn):
            empty = np.flatnonzero(~alive)
            if len(empty):
                c = int(empty[0])
            else:
                cn, cm, cb = np.append(cn, 0.0), np.vstack([cm, m0]), np.vstack([cb, b0])
        kap = k0 + cn[c]
        cb[c] += 0.5 * kap / (kap + 1.0) * (x - cm[c]) ** 2
        cm[c] = (kap * cm[c] + x) / (kap + 1.0)
        cn[c] += 1
        z[i] = c
    return [cn, cm, cb]


def numpy_setup(X, S, lik_prior):
    m0, b0, a0, k0 = lik_prior["mean"], lik_prior["rate"], lik_prior["shape"], lik_prior["kappa"]
    n = len(X)
    adj = [[] for _ in range(n)]
    for u, v, w in S.edges():
        adj[u].append((v, 0 if w > 0 else 1, abs(w)))
        adj[v].append((u, 0 if w > 0 else 1, abs(w)))
    z = np.zeros(n, dtype=np.int64)
    kap = k0 + n
    xb = X.mean(0)
    stats = [np.array([float(n)]), ((k0 * m0 + X.sum(0)) / kap)[None, :],
             (b0 + 0.5 * ((X - xb) ** 2).sum(0) + 0.5 * k0 * n / kap * (xb - m0) ** 2)[None, :]]
    return z, stats, adj, (m0, k0, a0, b0)


# ---------------------------------------------------------------------- parts
def blobs(n, d, k, seed):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-6, 6, size=(k, d))
    y = rng.integers(0, k, n)
    return centres[y] + rng.normal(size=(n, d)), y


def speed(args):
    gc.TVClust(n_iter=3, random_state=0).fit(*blobs(50, 2, 2, 0)[:1])  # compile / load the kernels
    print("### Time per sweep, 1000 points, 1000 constraints (10 % flipped)\n")
    print("| likelihood | d | clusters | gibbs (ms) | +split-merge (ms) | NumPy peer (ms) | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for lik, d in [("gaussian", 2), ("gaussian", 5), ("gaussian", 10), ("gaussian-diag", 5), ("gaussian-diag", 10),
                   ("multinomial", 50)]:
        if lik == "multinomial":
            rng = np.random.default_rng(0)
            theta = rng.dirichlet(np.full(d, 0.3), size=5)
            y = rng.integers(0, 5, 1000)
            X = np.array([rng.multinomial(40, theta[k]) for k in y]).astype(float)
        else:
            X, y = blobs(1000, d, 5, 0)
        S = gc.SideInfo.sample(y, n_pairs=1000, noise=0.1, random_state=0)
        times = {}
        for label, n_sm in (("gibbs", 0), ("sm", 10)):
            per = []
            for rep in range(args.repeats):
                est = gc.TVClust(lik, n_iter=args.sweeps, burn_in=args.sweeps - 1, n_split_merge=n_sm,
                                 random_state=rep).fit(X, S)
                per.append(est.result_.info["sweep_seconds"] / est.result_.info["n_sweeps"])
            times[label] = statistics.median(per)
            k = est.n_clusters_
        peer = "–"
        ratio = "–"
        if lik == "gaussian-diag":
            est = gc.TVClust(lik, n_iter=2, burn_in=1, random_state=0).fit(X, S)
            z, st, adj, prior = numpy_setup(X, S, est.likelihood_.prior_)
            rng = np.random.default_rng(0)
            lp, lq = math.log(0.9 / 0.1), math.log(0.1 / 0.9)
            per = []
            for rep in range(args.repeats):
                t = time.perf_counter()
                st = numpy_sweep(X, z, st, adj, lp, lq, 1.0, prior, rng)
                per.append(time.perf_counter() - t)
            peer = f"{1000 * statistics.median(per):.1f} (K={int((st[0] > 0).sum())})"
            ratio = f"{statistics.median(per) / times['gibbs']:.0f}"
        print(f"| {lik} | {d} | {k} | {1000 * times['gibbs']:.2f} | {1000 * times['sm']:.2f} | {peer} | {ratio} |")
    print()
    print("### Scaling: full Gaussian, d = 5, 10 blobs, as many constraints as points (10 % flipped)\n")
    print("| points | gibbs (ms / sweep) | +split-merge (ms / sweep) | clusters | ARI |")
    print("|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        X, y = blobs(n, 5, 10, 1)
        S = gc.SideInfo.sample(y, n_pairs=n, noise=0.1, random_state=0)
        row = []
        for n_sm in (0, 10):
            per = []
            for rep in range(args.repeats):
                est = gc.TVClust(n_iter=args.sweeps, burn_in=args.sweeps - 1, n_split_merge=n_sm,
                                 random_state=rep).fit(X, S)
                per.append(est.result_.info["sweep_seconds"] / est.result_.info["n_sweeps"])
            row.append(1000 * statistics.median(per))
        print(f"| {n} | {row[0]:.1f} | {row[1]:.1f} | {est.n_clusters_} | {gc.ari(y, est.labels_):.3f} |")
    print()


def quality(args):
    from sklearn.datasets import make_blobs
    from sklearn.mixture import BayesianGaussianMixture

    print("### Quality: ARI (clusters found), mean over seeds\n")
    data = {"iris": gc.datasets.load_iris(), "wine": gc.datasets.load_wine(),
            "blobs": make_blobs(600, centers=4, random_state=0)}
    print("| data | constraints | noise | TVClust ARI | K | s | BGM (DP, no side info) ARI | K | s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (X, y) in data.items():
        n = len(y)
        for n_pairs, noise in [(0, 0.0), (n, 0.0), (n, 0.1), (n, 0.2)]:
            res, peer = [], []
            for seed in range(args.seeds):
                S = gc.SideInfo.sample(y, n_pairs=n_pairs, noise=noise, random_state=seed) if n_pairs else None
                t = time.perf_counter()
                est = gc.TVClust(n_iter=300, random_state=seed).fit(X, S)
                res.append((gc.ari(y, est.labels_), est.n_clusters_, time.perf_counter() - t))
                if n_pairs == 0:
                    t = time.perf_counter()
                    bgm = BayesianGaussianMixture(n_components=20, weight_concentration_prior_type="dirichlet_process",
                                                  covariance_type="full", max_iter=500, random_state=seed).fit(X)
                    lab = bgm.predict(X)
                    peer.append((gc.ari(y, lab), len(np.unique(lab)), time.perf_counter() - t))
            r = np.mean(res, axis=0)
            p = np.mean(peer, axis=0) if peer else None
            ptxt = f"{p[0]:.3f} | {p[1]:.1f} | {p[2]:.2f}" if p is not None else "– | – | –"
            print(f"| {name} | {n_pairs} | {noise} | {r[0]:.3f} | {r[1]:.1f} | {r[2]:.2f} | {ptxt} |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sweeps", type=int, default=20, help="sweeps per timed fit")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="points in the scaling table")
    ap.add_argument("--only", nargs="+", choices=["speed", "quality"], default=["speed", "quality"])
    ap.add_argument("--clock", choices=["wall", "thread"], default="wall",
                    help="thread: CPU time of this thread, not wall time (a machine shared with other work)")
    args = ap.parse_args()
    if args.clock == "thread":
        time.perf_counter = time.thread_time  # the estimators' sweep timers read it too
    if "speed" in args.only:
        speed(args)
    if "quality" in args.only:
        quality(args)


if __name__ == "__main__":
    main()
