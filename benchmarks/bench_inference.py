"""Inference engines on Potts grids against their peers, all scored by Energy.evaluate.

Sections (peers run in the same process unless said otherwise):

1. Loopy BP vs PyMaxflow alpha-expansion (``maxflow.fastmin.aexpansion_grid``) on a
   4-connected 256x256 Potts grid with K=4: a piecewise-constant label image plus
   Gaussian noise, unary = squared distance to the K class means, one Potts weight.
   Ratios: energy BP / alpha-expansion (target within 1 %) and time BP /
   alpha-expansion (target <= 3x).
2. ICM on the same grid: the checkerboard (colour) schedule and the sequential one
   (target: checkerboard < 0.1 s).
3. The LP relaxation (cvxpy + HiGHS) on a 100x100 grid with K=3: total time against
   the time inside HiGHS (target: <= 30 % outside the solver).
4. pgmpy's exact MAP (``VariableElimination`` and ``BeliefPropagation`` ``map_query``)
   on 3x3, 10x10 and 32x32 grids with K=4, each in a child process with a time limit
   and an address-space cap (``resource.setrlimit``), next to graphclust's BP and LP on
   the same energies (the LP value certifies the BP labelling when they meet).

Every timing is the median of ``--repeats`` runs (numba kernels compiled beforehand).

    python benchmarks/bench_inference.py [--repeats 3] [--quick] [--pgmpy-timeout 60] [--pgmpy-mem-gb 2]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from graphclust.energy import Energy
from graphclust.inference import belief_propagation, icm, icm_checkerboard, lp_relaxation


# --------------------------------------------------------------------------- instances
def potts_grid(h, w, K, *, noise=0.25, beta=0.1, seed=0):
    """A noisy piecewise-constant K-label image as a 4-connected Potts energy.

    Returns ``(energy, unary (h, w, K), truth (h, w), beta)``.
    """
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    truth = ((xx >= w // 2).astype(np.int64) + 2 * (yy >= h // 2)) % K
    truth[(yy - h / 2) ** 2 + (xx - w / 2) ** 2 < (min(h, w) / 5) ** 2] = K - 1
    means = np.linspace(0.0, 1.0, K)
    image = means[truth] + rng.normal(0.0, noise, (h, w))
    unary = (image[..., None] - means) ** 2
    idx = np.arange(h * w).reshape(h, w)
    edges = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                            np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    energy = Energy(unary.reshape(-1, K), edges, np.full(len(edges), beta))
    return energy, unary, truth, beta


def timed(fn, repeats):
    """Median wall time of ``repeats`` calls and the last result."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def warm_up():
    """Compile (or load from cache) every numba kernel once, outside the timings."""
    E, *_ = potts_grid(6, 6, 3)
    for schedule in ("sequential", "flooding"):
        belief_propagation(E, schedule=schedule, max_iter=3)
    icm(E, random_state=0)
    icm_checkerboard(E, shape=(6, 6), random_state=0)
    lp_relaxation(E, random_state=0)


# --------------------------------------------------------------------------- sections
def bench_bp(side, K, repeats):
    import maxflow.fastmin

    E, D, truth, beta = potts_grid(side, side, K)
    V = beta * (1.0 - np.eye(K))
    print(f"\n## 1. BP vs alpha-expansion: {side}x{side} grid, K={K}, Potts weight {beta}, "
          f"{E.n_edges} edges (median of {repeats} runs)")
    t_ae, L = timed(lambda: maxflow.fastmin.aexpansion_grid(D, V), repeats)
    e_ae = E.evaluate(L.ravel())
    rows = [("alpha-expansion (PyMaxflow)", t_ae, e_ae, None, None, (L == truth).mean())]
    configs = [
        ("BP default (sequential, damping auto = 0 here)", {}),
        ("BP sequential, damping 0.5", {"damping": 0.5}),
        ("BP flooding, damping 0.5", {"schedule": "flooding", "damping": 0.5}),
    ]
    for name, kw in configs:
        t, res = timed(lambda kw=kw: belief_propagation(E, **kw), repeats)
        rows.append((name, t, res.energy, res.iterations, res.converged,
                     (res.labels.reshape(truth.shape) == truth).mean()))
    print(f"{'method':38s} {'time s':>8s} {'energy':>12s} {'E/E_ae':>9s} {'t/t_ae':>7s} {'iters':>6s} "
          f"{'conv':>5s} {'acc':>6s}")
    for name, t, e, iters, conv, acc in rows:
        print(f"{name:38s} {t:8.3f} {e:12.3f} {e / e_ae:9.5f} {t / t_ae:7.2f} "
              f"{'' if iters is None else iters:>6} {'' if conv is None else str(conv):>5s} {acc:6.3f}")
    print(f"(unary argmin alone: energy {E.evaluate(E.unary.argmin(1)):.3f}, "
          f"accuracy {(E.unary.argmin(1).reshape(truth.shape) == truth).mean():.3f})")
    return E, truth, t_ae, e_ae


def bench_icm(E, truth, t_ae, e_ae, side, repeats):
    print(f"\n## 2. ICM on the same grid (median of {repeats} runs, from the unary argmin)")
    print(f"{'method':38s} {'time s':>8s} {'energy':>12s} {'E/E_ae':>9s} {'t/t_ae':>7s} {'sweeps':>6s} {'acc':>6s}")
    for name, fn in [
        ("ICM checkerboard (icm_checkerboard)", lambda: icm_checkerboard(E, shape=(side, side), random_state=0)),
        ("ICM sequential, random order", lambda: icm(E, random_state=0)),
    ]:
        t, res = timed(fn, repeats)
        acc = (res.labels.reshape(truth.shape) == truth).mean()
        print(f"{name:38s} {t:8.3f} {res.energy:12.3f} {res.energy / e_ae:9.5f} {t / t_ae:7.2f} "
              f"{res.iterations:6d} {acc:6.3f}")


def bench_lp(side, K, repeats):
    E, *_ = potts_grid(side, side, K)
    print(f"\n## 3. LP relaxation (cvxpy + HiGHS): {side}x{side} grid, K={K} (median of {repeats} runs)")
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        res = lp_relaxation(E, random_state=0)
        runs.append((time.perf_counter() - start, res))
    total = statistics.median(r[0] for r in runs)
    solver = statistics.median(r[1].info["solver_seconds"] for r in runs)
    compile_ = statistics.median(r[1].info["compile_seconds"] for r in runs)
    build = statistics.median(r[1].info["build_seconds"] for r in runs)
    res = runs[-1][1]
    outside = total - solver
    print(f"variables {res.info['n_variables']}, constraint rows {res.info['n_constraints']}")
    print(f"total {total:.3f} s | inside HiGHS {solver:.3f} s | outside {outside:.3f} s "
          f"({100 * outside / total:.1f} %: model build {build:.3f} s, cvxpy compile {compile_:.3f} s, "
          "rest = solution retrieval, rounding, evaluate)")
    print(f"LP value {res.lower_bound:.4f}, rounded energy {res.energy:.4f}, gap {res.info['gap']:.2e}, "
          f"fractional nodes {res.info['fractional']:.4f}")
    t_bp, bp = timed(lambda: belief_propagation(E), repeats)
    print(f"BP on the same energy: {bp.energy:.4f} in {t_bp:.3f} s (LP / BP time {total / t_bp:.1f}x)")


def bench_pgmpy(sides, K, timeout, mem_gb):
    print(f"\n## 4. pgmpy 'exact' MAP in a child process (limit {timeout} s, {mem_gb} GiB address space), K={K}")
    print(f"{'grid':>6s} {'engine':34s} {'outcome':60s}")
    for side in sides:
        E, *_ = potts_grid(side, side, K, seed=1)
        bp = belief_propagation(E)
        lp = None
        if E.n_nodes * K <= 50_000:
            lp = lp_relaxation(E, random_state=0)
        ours = f"energy {bp.energy:.4f} in {bp.seconds:.3f} s"
        if lp is not None:
            ours += f"; LP bound {lp.lower_bound:.4f}, LP rounded {lp.energy:.4f} in {lp.seconds:.2f} s"
        print(f"{side:>3d}x{side:<2d} {'graphclust BP (+ LP bound)':34s} {ours}")
        for method in ("VariableElimination", "BeliefPropagation"):
            outcome = _run_child(side, K, method, timeout, mem_gb)
            if outcome.get("status") == "ok":
                text = (f"ok in {outcome['seconds']:.2f} s, energy {outcome['energy']:.4f} "
                        f"({'same as' if abs(outcome['energy'] - bp.energy) < 1e-9 else 'differs from'} BP)")
            else:
                text = outcome.get("status", "?") + (": " + outcome["detail"] if outcome.get("detail") else "")
            print(f"{'':6s} {'pgmpy ' + method + '.map_query':34s} {text[:120]}")


def _run_child(side, K, method, timeout, mem_gb):
    cmd = [sys.executable, os.path.abspath(__file__), "--pgmpy-child", str(side), str(K), method, str(mem_gb)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout after {timeout} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if lines:
        return json.loads(lines[-1])
    tail = proc.stderr.strip().splitlines()[-1:] if proc.stderr.strip() else []
    return {"status": f"died (exit code {proc.returncode})", "detail": " ".join(tail)}


def _child(side, K, method, mem_gb):
    """Runs in the child process: cap memory, then pgmpy's MAP query over every node."""
    cap = int(float(mem_gb) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    import warnings

    warnings.simplefilter("ignore")
    from pgmpy.inference import BeliefPropagation, VariableElimination

    E, *_ = potts_grid(side, side, K, seed=1)
    model = E.to_pgmpy("markov")
    names = [str(i) for i in range(E.n_nodes)]
    engine = {"VariableElimination": VariableElimination, "BeliefPropagation": BeliefPropagation}[method]
    start = time.perf_counter()
    try:
        q = engine(model).map_query(variables=names, show_progress=False)
    except MemoryError as exc:
        print(json.dumps({"status": "MemoryError", "detail": str(exc)[:150]}))
        return
    except Exception as exc:  # report whatever pgmpy raises
        print(json.dumps({"status": type(exc).__name__, "detail": str(exc)[:150]}))
        return
    seconds = time.perf_counter() - start
    z = np.array([int(q[v]) for v in names])
    print(json.dumps({"status": "ok", "seconds": seconds, "energy": E.evaluate(z)}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller grids (a smoke run, not the figures)")
    parser.add_argument("--pgmpy-timeout", type=float, default=60.0)
    parser.add_argument("--pgmpy-mem-gb", type=float, default=2.0)
    parser.add_argument("--pgmpy-child", nargs=4, metavar=("SIDE", "K", "METHOD", "MEM_GB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.pgmpy_child:
        side, K, method, mem = args.pgmpy_child
        _child(int(side), int(K), method, mem)
        return
    side, lp_side = (64, 32) if args.quick else (256, 100)
    warm_up()
    E, truth, t_ae, e_ae = bench_bp(side, 4, args.repeats)
    bench_icm(E, truth, t_ae, e_ae, side, args.repeats)
    bench_lp(lp_side, 3, args.repeats)
    bench_pgmpy((3, 4) if args.quick else (3, 10, 32), 4, args.pgmpy_timeout, args.pgmpy_mem_gb)


if __name__ == "__main__":
    main()
