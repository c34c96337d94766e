"""graphclust.distributed on a LocalCluster: tiled grid ICM and chunked k-means.

Grid: a synthetic SIZE x SIZE image with K grey levels plus noise, Gaussian unaries
(H, W, K) generated chunk by chunk on the workers (never on the client), contrast-sensitive
Potts weights; tiled ICM with 1 and with 2 single-threaded worker processes: wall time
(median of --runs), peak resident memory per worker, and the energy against the
single-machine engine run on the whole image in this process (the peer).

Points: N x D float64 points (K blobs) generated chunk by chunk and persisted on the
workers, --constraints random must/cannot-links; chunked_kmeans with a fixed number
of passes: seconds per pass and peak memory per worker.

    .venv/bin/python benchmarks/bench_distributed.py                 # full: 4096^2, 10M x 10
    .venv/bin/python benchmarks/bench_distributed.py --size 1024 --points 1000000 --runs 1
"""

import argparse
import resource
import statistics
import time

import numpy as np


def _peak_rss():
    """Peak resident memory of this process since it started (VmHWM; unlike ru_maxrss,
    it does not carry over the parent's peak across fork + exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _image_block(block_info=None, K=4, seed=0, noise=0.35):
    loc = block_info[None]["array-location"]
    (r0, r1), (c0, c1) = loc[0], loc[1]
    rows = np.arange(r0, r1)[:, None]
    cols = np.arange(c0, c1)[None, :]
    truth = ((rows // 157 + cols // 211) % K).astype(np.float64)
    rng = np.random.default_rng([seed, r0, c0])
    return truth / (K - 1) + rng.normal(scale=noise, size=truth.shape)


def _unary_block(img, K=4, noise=0.35):
    levels = np.arange(K) / (K - 1)
    return (img[..., None] - levels) ** 2 / (2 * noise**2)


def grid_arrays_lazy(size, chunk, K):
    import dask.array as da

    img = da.map_blocks(_image_block, chunks=((chunk,) * (size // chunk),) * 2, dtype=np.float64, K=K,
                        meta=np.empty((0, 0)))
    U = img.map_blocks(_unary_block, K=K, new_axis=2, chunks=img.chunks + ((K,),), dtype=np.float64,
                       meta=np.empty((0, 0, 0)))
    return img, U


def bench_grid(args):
    import distributed

    import graphclust as gc
    import graphclust.distributed as gd
    from graphclust.energy import Energy
    from graphclust.inference import solve

    results = {}
    labels_by = {}
    for n_workers in (1, 2):
        with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, host="127.0.0.1", memory_limit=0) as cl, \
                distributed.Client(cl) as client:
            img, U = grid_arrays_lazy(args.size, args.chunk, args.K)
            times, res = [], None
            for _ in range(args.runs):
                t = time.perf_counter()
                res = gd.grid_inference(U, img, smoothness=args.smoothness, max_rounds=args.max_rounds,
                                        client=client, random_state=0)
                times.append(time.perf_counter() - t)
            energy = gd.grid_energy(res.labels, U, img, smoothness=args.smoothness, beta=res.beta, client=client)
            peaks = client.run(_peak_rss)
            labels_by[n_workers] = res.labels.compute()
            results[n_workers] = (statistics.median(times), times, max(peaks.values()), energy, res)
            print(f"grid {args.size}x{args.size} K={args.K} chunks={args.chunk} workers={n_workers}: "
                  f"median {statistics.median(times):.1f} s (runs {[round(x, 1) for x in times]}), rounds "
                  f"{res.n_rounds} changes {res.n_changes}, peak RSS per worker "
                  f"{max(peaks.values()) / 1e6:.0f} MB, energy {energy:.6g}", flush=True)
    t1, t2 = results[1][0], results[2][0]
    print(f"speed-up 2 workers vs 1: {t1 / t2:.2f}x", flush=True)
    same = np.array_equal(labels_by[1], labels_by[2])
    print(f"labels identical with 1 and 2 workers: {same}", flush=True)

    # the peer: the single-machine engine on the whole image, in this process
    img, U = grid_arrays_lazy(args.size, args.chunk, args.K)
    image = img.compute(scheduler="threads")
    unary = U.compute(scheduler="threads")
    beta = results[2][4].beta
    t = time.perf_counter()
    edges, weights, _ = gc.grid_arrays(image, beta=beta)
    E = Energy(unary.reshape(-1, args.K), edges, args.smoothness * weights)
    peer = solve(E, "icm", random_state=0)
    t_peer = time.perf_counter() - t
    tiled = E.evaluate(labels_by[2].ravel())
    print(f"in-memory icm on the whole image: {t_peer:.1f} s (building the energy included), energy "
          f"{peer.energy:.6g}; tiled/in-memory energy ratio {tiled / peer.energy:.4f} "
          f"(tiled energy via Energy.evaluate {tiled:.6g}, via grid_energy {results[2][3]:.6g})", flush=True)


def _points_block(block_info=None, D=10, K=10, seed=0):
    (r0, r1), _ = block_info[None]["array-location"]
    rng = np.random.default_rng([seed, r0])
    centres = np.random.default_rng(seed).normal(scale=4.0, size=(K, D))
    return centres[rng.integers(0, K, size=r1 - r0)] + rng.normal(size=(r1 - r0, D))


def bench_points(args):
    import dask.array as da
    import distributed

    import graphclust.distributed as gd

    n, D, K = args.points, args.dims, 10
    chunk = args.point_chunk
    chunks = ((chunk,) * (n // chunk) + ((n % chunk,) if n % chunk else ()), (D,))
    rng = np.random.default_rng(1)
    pairs = rng.integers(0, n, size=(args.constraints, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    w = np.where(rng.random(len(pairs)) < 0.5, 1.0, -1.0)
    for n_workers in (1, 2):
        with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, host="127.0.0.1", memory_limit=0) as cl, \
                distributed.Client(cl) as client:
            X = da.map_blocks(_points_block, chunks=chunks, dtype=np.float64, D=D, K=K, meta=np.empty((0, 0)))
            X = client.persist(X)
            distributed.wait(X)
            init = X[:K].compute()
            t = time.perf_counter()
            res = gd.chunked_kmeans(X, init=init, constraints=pairs, constraint_weights=w,
                                    max_iter=args.passes, client=client)
            total = time.perf_counter() - t
            peaks = client.run(_peak_rss)
            print(f"chunked k-means {n:,} x {D}, K={K}, {len(pairs)} constraints, chunks of {chunk:,}, "
                  f"workers={n_workers}: {res.n_iter} passes in {total:.1f} s, per pass "
                  f"{[round(s, 2) for s in res.seconds_per_pass]} s (median "
                  f"{statistics.median(res.seconds_per_pass):.2f}), peak RSS per worker "
                  f"{max(peaks.values()) / 1e6:.0f} MB (data {X.nbytes / n_workers / 1e6:.0f} MB per worker)",
                  flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--chunk", type=int, default=1024)
    p.add_argument("--K", type=int, default=4)
    p.add_argument("--smoothness", type=float, default=1.5)
    p.add_argument("--max-rounds", type=int, default=10)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--points", type=int, default=10_000_000)
    p.add_argument("--dims", type=int, default=10)
    p.add_argument("--point-chunk", type=int, default=500_000)
    p.add_argument("--constraints", type=int, default=10_000)
    p.add_argument("--passes", type=int, default=5)
    p.add_argument("--skip", choices=["grid", "points"], default=None)
    args = p.parse_args()
    if args.skip != "grid":
        bench_grid(args)
    if args.skip != "points":
        bench_points(args)


if __name__ == "__main__":
    main()
