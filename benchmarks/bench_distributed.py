"""graphclust.distributed on a LocalCluster: tiled grid ICM and chunked k-means.

Grid (--parts grid): a synthetic SIZE x SIZE image with K grey levels plus noise,
Gaussian unaries (H, W, K) generated chunk by chunk on the workers (never on the client)
and persisted there (--inputs lazy regenerates them in every round instead),
contrast-sensitive Potts weights; tiled ICM (the grid kernel) with 1 and with 2
single-threaded worker processes: wall time (median of --runs), worker and client CPU
seconds, numba loading per worker, peak resident memory per worker, the load average
before and after, and with --profile a summary of dask's task stream.

Peer (--parts peer): for each of --peer-sizes, the tiled energy (2 workers) against ICM
on the whole image in this process: grid_icm (the same kernel, one tile) and, up to
--generic-max, the generic solve(Energy, "icm"); larger sizes use float32 unaries.

Points (--parts points): N x D float64 points (K blobs) generated chunk by chunk and
persisted on the workers, --constraints random must/cannot-links; chunked_kmeans with a
fixed number of passes: seconds per pass and peak memory per worker.

    .venv/bin/python benchmarks/bench_distributed.py                 # full: 4096^2, 10M x 10
    .venv/bin/python benchmarks/bench_distributed.py --parts grid --size 1024 --chunk 256 --runs 1
    .venv/bin/python benchmarks/bench_distributed.py --parts peer --peer-sizes 4096,8192
"""

import argparse
import collections
import contextlib
import os
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


def grid_arrays_lazy(size, chunk, K, dtype=np.float64):
    import dask.array as da

    n_full, rest = divmod(size, chunk)
    chunks = ((chunk,) * n_full + ((rest,) if rest else ()),) * 2
    img = da.map_blocks(_image_block, chunks=chunks, dtype=np.float64, K=K, meta=np.empty((0, 0)))
    U = img.map_blocks(_unary_block, K=K, new_axis=2, chunks=img.chunks + ((K,),), dtype=np.float64,
                       meta=np.empty((0, 0, 0)))
    return img, U.astype(dtype)


def _cpu_seconds():
    """User + system CPU seconds of this process."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _machine_cpu():
    """(busy, steal) CPU seconds of the whole machine since boot from ``/proc/stat``
    (Linux; None elsewhere): the other jobs' share and the hypervisor's steal explain
    runs of the same code that differ by half."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    tick = os.sysconf("SC_CLK_TCK")
    user, nice, system, _, _, irq, softirq, steal = v
    return (user + nice + system + irq + softirq) / tick, steal / tick


def _warm_up():
    """Load the compiled grid kernels (numba cache) in a worker process; returns seconds."""
    t = time.perf_counter()
    from graphclust.inference.grid_icm import _unary_argmin, grid_icm

    for dtype in (np.float32, np.float64):
        _unary_argmin(np.zeros((2, 2, 2), dtype))
        grid_icm(np.zeros((3, 3, 2), dtype), np.ones((3, 2)), np.ones((2, 3)), fixed=(True, True, True, True))
        grid_icm(np.zeros((3, 3, 2), dtype), np.ones((3, 2)), np.ones((2, 3)), order="fixed")
    return time.perf_counter() - t


def _load():
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _task_summary(data, since):
    """Seconds per action (compute / transfer) and task-name prefix, and per worker, of
    the task-stream records that started after ``since`` (``time.time()``)."""
    by_prefix, by_worker = collections.defaultdict(float), collections.defaultdict(float)
    n_tasks = 0
    for rec in data:
        key = rec["key"][0] if isinstance(rec["key"], tuple) else str(rec["key"])
        prefix = key.rsplit("-", 1)[0]
        spans = [ss for ss in rec["startstops"] if ss["start"] >= since]
        n_tasks += any(ss["action"] == "compute" for ss in spans)
        for ss in spans:
            d = ss["stop"] - ss["start"]
            by_prefix[(ss["action"], prefix)] += d
            by_worker[(rec["worker"], ss["action"])] += d
    top = sorted(by_prefix.items(), key=lambda kv: -kv[1])[:6]
    lines = [f"    {n_tasks} tasks"] + [f"    {a:8s} {p[:48]:48s} {v:7.1f} s" for (a, p), v in top]
    lines += [f"    worker {w.rsplit(':', 1)[-1]} {a:8s} {v:7.1f} s" for (w, a), v in sorted(by_worker.items())]
    return "\n".join(lines)


def _start(stack, args, n_workers, size, dtype):
    """A LocalCluster with the inputs (persisted unless --inputs lazy) and warm workers."""
    import dask
    import distributed

    with dask.config.set({"distributed.scheduler.work-stealing": args.work_stealing == "on"}):
        cl = stack.enter_context(distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                                          dashboard_address=None, host="127.0.0.1", memory_limit=0))
    client = stack.enter_context(distributed.Client(cl, set_as_default=False))
    img, U = grid_arrays_lazy(size, args.chunk, args.K, dtype)
    if args.inputs == "persisted":
        img, U = client.persist([img, U])
        with client.as_current():
            distributed.wait([img, U])
    warm = client.run(_warm_up)
    return {"client": client, "img": img, "U": U, "n_workers": n_workers, "size": size, "dtype": dtype,
            "warm": max(warm.values()), "runs": []}


def _run_once(args, st, profile=False):
    """One timed grid_inference; appends (seconds, worker CPU per worker, client CPU, load).
    Each run has its own seed and the previous result is released first: dask reuses a
    key that is still in memory, so a repeated run would skip the rounds (and a rerun
    with the same seed the set-up) it shares with the one before."""
    import distributed

    import graphclust.distributed as gd

    client = st["client"]
    st.pop("res", None)
    seed = len(st["runs"])  # the k-th runs of both configurations share a seed
    opts = None if args.order == "random" else {"order": args.order}
    cpu0 = client.run(_cpu_seconds)
    t, c, since, m0 = time.perf_counter(), _cpu_seconds(), time.time(), _machine_cpu()
    if profile:
        with distributed.get_task_stream(client) as ts:
            res = gd.grid_inference(st["U"], st["img"], smoothness=args.smoothness, max_rounds=args.max_rounds,
                                    client=client, random_state=seed, engine_options=opts)
        st["summary"] = _task_summary(ts.data, since)
    else:
        res = gd.grid_inference(st["U"], st["img"], smoothness=args.smoothness, max_rounds=args.max_rounds,
                                client=client, random_state=seed, engine_options=opts)
    wall, client_cpu, m1 = time.perf_counter() - t, _cpu_seconds() - c, _machine_cpu()
    cpu = client.run(_cpu_seconds)
    per_worker = sorted(round(cpu[w] - cpu0[w], 1) for w in cpu)
    # the machine's CPU outside this benchmark's processes (client, scheduler, workers)
    other = None if m0 is None else (m1[0] - m0[0] - sum(per_worker) - client_cpu, m1[1] - m0[1])
    st["runs"].append((wall, per_worker, client_cpu, _load(), other))
    st["res"] = res
    return wall


def _report(args, st):
    """Print one configuration's runs; returns (median seconds, labels, beta, energy)."""
    import graphclust.distributed as gd

    client, res = st["client"], st["res"]
    energy = gd.grid_energy(res.labels, st["U"], st["img"], smoothness=args.smoothness, beta=res.beta, client=client)
    peaks = client.run(_peak_rss)
    times = [r[0] for r in st["runs"]]
    med = statistics.median(times)
    n = st["n_workers"]
    print(f"grid {st['size']}x{st['size']} K={args.K} chunks={args.chunk} {np.dtype(st['dtype']).name} "
          f"inputs={args.inputs} order={args.order} work-stealing={args.work_stealing} workers={n}: "
          f"median {med:.1f} s, rounds {res.n_rounds} "
          f"changes {res.n_changes}, numba loading {st['warm']:.1f} s per worker, peak RSS per worker "
          f"{max(peaks.values()) / 1e6:.0f} MB, energy {energy:.6g}", flush=True)
    for wall, per_worker, client_cpu, load, other in st["runs"]:
        machine = "" if other is None else f", other jobs {other[0]:.1f} CPU s, steal {other[1]:.1f} s"
        print(f"    run {wall:6.1f} s: worker CPU {per_worker} s ({sum(per_worker) / wall / n:.0%} of {n} "
              f"core(s)), client+scheduler CPU {client_cpu:.1f} s{machine}, load after {load}", flush=True)
    if st.get("summary"):
        print("  task stream of the last run (seconds inside tasks):\n" + st["summary"], flush=True)
    return med, client.compute(res.labels).result(), res.beta, energy


def run_tiled(args, n_workers, size, runs, dtype=np.float64):
    """grid_inference on a fresh LocalCluster; returns (median seconds, labels, beta, energy)."""
    with contextlib.ExitStack() as stack:
        st = _start(stack, args, n_workers, size, dtype)
        for run in range(runs):
            _run_once(args, st, profile=args.profile and run == runs - 1)
        return _report(args, st)


def bench_grid(args):
    """1 and 2 workers, two clusters alive at once and their runs interleaved, so that
    both see the same machine load; the speed-up is reported per pair and as a ratio of
    medians."""
    with contextlib.ExitStack() as stack:
        st1 = _start(stack, args, 1, args.size, np.float64)
        st2 = _start(stack, args, 2, args.size, np.float64)
        print(f"load average (1/5/15 min) before: {_load()}", flush=True)
        pairs = []
        for run in range(args.runs):
            last = args.profile and run == args.runs - 1
            pairs.append(_run_once(args, st1, last) / _run_once(args, st2, last))
        print(f"load average (1/5/15 min) after: {_load()}", flush=True)
        t1, labels1, _, _ = _report(args, st1)
        t2, labels2, _, _ = _report(args, st2)
    print(f"speed-up 2 workers vs 1: {t1 / t2:.2f}x (ratio of medians); per interleaved pair "
          f"{[round(x, 2) for x in pairs]}", flush=True)
    print(f"labels identical with 1 and 2 workers: {np.array_equal(labels1, labels2)}", flush=True)


def bench_peer(args):
    """Tiled (2 workers) against in-memory ICM on the whole image, for each --peer-sizes."""
    import graphclust as gc
    from graphclust.distributed.grid import _pair_weights
    from graphclust.energy import Energy
    from graphclust.inference import solve
    from graphclust.inference.grid_icm import _grid_energy, grid_icm

    for size in args.peer_sizes:
        dtype = np.float64 if size <= args.generic_max else np.float32
        _, tiled, beta, _ = run_tiled(args, 2, size, 1, dtype=dtype)
        img, U = grid_arrays_lazy(size, args.chunk, args.K, dtype)
        image = img.compute(scheduler="threads")
        unary = U.compute(scheduler="threads")
        wh, wv = _pair_weights(image[..., None], beta, args.smoothness, image.shape)
        e_tiled = _grid_energy(unary, wh, wv, np.ascontiguousarray(tiled))
        t = time.perf_counter()
        fast = grid_icm(unary, wh, wv, order=args.order, random_state=0)
        t_fast = time.perf_counter() - t
        e_fast = _grid_energy(unary, wh, wv, fast.labels)
        print(f"in-memory grid_icm on the whole {size}x{size} image ({np.dtype(dtype).name} unaries): "
              f"{t_fast:.1f} s, {fast.iterations} sweeps, energy {e_fast:.6g}; tiled/in-memory {e_tiled / e_fast:.5f} "
              f"(tiled {e_tiled:.6g}); peak RSS of this process {_peak_rss() / 1e9:.1f} GB", flush=True)
        if size <= args.generic_max:
            del fast
            t = time.perf_counter()
            edges, weights, _ = gc.grid_arrays(image, beta=beta)
            E = Energy(unary.reshape(-1, args.K), edges, args.smoothness * weights)
            del edges, weights
            peer = solve(E, "icm", random_state=0, **({} if args.order == "random" else {"order": "fixed"}))
            t_peer = time.perf_counter() - t
            print(f"in-memory solve(Energy, 'icm') on the whole {size}x{size} image: {t_peer:.1f} s incl. building "
                  f"the Energy, energy {peer.energy:.6g} (Energy.evaluate of the tiled labels "
                  f"{E.evaluate(tiled.ravel()):.6g}); tiled/in-memory {e_tiled / peer.energy:.5f}; peak RSS of this "
                  f"process {_peak_rss() / 1e9:.1f} GB", flush=True)
            del E, peer


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
                                    schedule=args.schedule, max_iter=args.passes, client=client)
            total = time.perf_counter() - t
            peaks = client.run(_peak_rss)
            print(f"chunked k-means {n:,} x {D}, K={K}, {len(pairs)} constraints, chunks of {chunk:,}, "
                  f"schedule={args.schedule}, workers={n_workers}: {res.n_iter} passes in {total:.1f} s, per pass "
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
    p.add_argument("--schedule", choices=["jacobi", "sweep"], default="jacobi",
                   help="chunked_kmeans schedule (sweep: every colour class per pass, n_colours data reads)")
    p.add_argument("--order", choices=["random", "fixed"], default="random",
                   help="ICM visiting order on the tiles (engine_options['order'])")
    p.add_argument("--inputs", choices=["persisted", "lazy"], default="persisted",
                   help="persist image and unaries on the workers first, or regenerate them in every round")
    p.add_argument("--profile", action="store_true", help="summarise dask's task stream of the last run")
    p.add_argument("--work-stealing", choices=["on", "off"], default="on",
                   help="dask's work stealing in the grid clusters (on is dask's default)")
    p.add_argument("--peer-sizes", type=lambda v: [int(x) for x in v.split(",")], default=[4096],
                   help="sizes for the tiled vs in-memory energy comparison")
    p.add_argument("--generic-max", type=int, default=4096,
                   help="largest size for solve(Energy, 'icm'); larger sizes use float32 unaries and grid_icm only")
    p.add_argument("--parts", default="grid,peer,points", help="comma-separated subset of grid,peer,points")
    args = p.parse_args()
    parts = args.parts.split(",")
    if "grid" in parts:
        bench_grid(args)
    if "peer" in parts:
        bench_peer(args)
    if "points" in parts:
        bench_points(args)


if __name__ == "__main__":
    main()
