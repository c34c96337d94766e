"""Foundation scaling benchmark: Problem.from_graph, contract, SideInfo.check, grid arrays.

Each operation runs at three sizes to show linear scaling, next to a networkx peer run
in the same process on the same input, and prints medians and ratios.

    python benchmarks/bench_foundation.py [--repeats 3] [--quick]
"""

import argparse
import statistics
import time

import networkx as nx
import numpy as np
import scipy.sparse as sp

import graphclust as gc
from graphclust.sideinfo import check_constraints


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def random_graph(n_nodes, n_edges, rng):
    a = rng.integers(0, n_nodes, n_edges)
    b = rng.integers(0, n_nodes, n_edges)
    G = nx.Graph()
    G.add_nodes_from(range(n_nodes))
    G.add_weighted_edges_from(zip(a.tolist(), b.tolist(), rng.random(n_edges).tolist()))
    return G


def bench_problem(sizes, repeats, rng):
    print("\n## Problem.from_graph (networkx graph -> CSR arrays)")
    print(f"{'edges':>10s} {'graphclust s':>13s} {'nx.to_scipy_sparse_array s':>27s} {'ratio':>6s}")
    for m in sizes:
        G = random_graph(m // 4, m, rng)
        ours = median_time(lambda: gc.Problem.from_graph(G), repeats)
        peer = median_time(lambda: nx.to_scipy_sparse_array(G, weight="weight", format="csr"), repeats)
        print(f"{G.number_of_edges():10d} {ours:13.3f} {peer:27.3f} {peer / ours:6.2f}")


def bench_contract(sizes, repeats, rng):
    print("\n## contract (hard must-links merged on a sparse graph with 4 edges per node)")
    print(f"{'nodes':>9s} {'must-links':>10s} {'graphclust s':>13s} {'networkx+dict s':>20s} {'ratio':>6s}")
    for n in sizes:
        m = 4 * n
        a, b = rng.integers(0, n, m), rng.integers(0, n, m)
        keep = a != b
        W = sp.coo_array((rng.random(keep.sum()), (a[keep], b[keep])), shape=(n, n)).tocsr()
        k = n // 10
        ma, mb = rng.integers(0, n, k), rng.integers(0, n, k)
        ok = ma != mb
        P = gc.Problem.from_arrays(W)
        P.constraints = np.stack([np.minimum(ma[ok], mb[ok]), np.maximum(ma[ok], mb[ok])], 1)
        P.constraint_weights = np.full(ok.sum(), np.inf)
        ours = median_time(lambda: gc.contract(P), repeats)
        G = nx.from_scipy_sparse_array(W)
        must = list(zip(ma[ok].tolist(), mb[ok].tolist()))

        def peer():  # what one writes with networkx: components, then sum edges per block pair
            M = nx.Graph()
            M.add_nodes_from(G)
            M.add_edges_from(must)
            block = {u: c for c, members in enumerate(nx.connected_components(M)) for u in members}
            H = nx.Graph()
            for u, v, w in G.edges(data="weight"):
                a, b = block[u], block[v]
                if a != b:
                    H.add_edge(a, b, weight=H[a][b]["weight"] + w if H.has_edge(a, b) else w)
            return H

        theirs = median_time(peer, 1)
        print(f"{n:9d} {int(ok.sum()):10d} {ours:13.3f} {theirs:20.3f} {theirs / ours:6.1f}")


def bench_check(sizes, repeats, rng):
    print("\n## SideInfo.check (components, conflicts with witness paths, clique bound, DSatur)")
    print(f"{'constraints':>11s} {'nodes':>9s} {'graphclust s':>13s} {'networkx s':>11s} {'ratio':>6s}")
    for m in sizes:
        n = 10 * m
        y = rng.integers(0, 10, n)
        S = gc.SideInfo.sample(y, n_pairs=m, noise=0.05, random_state=rng)
        nodes = list(range(n))
        index = {u: u for u in nodes}
        pairs, w = S.to_arrays(index)
        ours = median_time(lambda: check_constraints(nodes, pairs, w), repeats)

        def peer():
            M = nx.Graph()
            M.add_nodes_from(nodes)
            M.add_edges_from(pairs[w > 0].tolist())
            comp = {}
            for c, members in enumerate(nx.connected_components(M)):
                for u in members:
                    comp[u] = c
            C = nx.Graph()
            conflicts = []
            for a, b in pairs[w < 0].tolist():
                if comp[a] == comp[b]:
                    conflicts.append(nx.shortest_path(M, a, b))
                else:
                    C.add_edge(comp[a], comp[b])
            # networkx's DSATUR is quadratic in the number of components (6.7 s for
            # 1000 constraints on 10 000 nodes); largest-first keeps the peer linear
            nx.greedy_color(C, strategy="largest_first")

        theirs = median_time(peer, repeats)
        print(f"{m:11d} {n:9d} {ours:13.3f} {theirs:11.3f} {theirs / ours:6.2f}")
    print("dense regime (10 constraints per node: one giant must-link component, tens of thousands of")
    print("conflicts, each with a witness path; networkx needs one shortest_path per conflict, not run):")
    for m in sizes:
        n = m // 10
        y = rng.integers(0, 10, n)
        S = gc.SideInfo.sample(y, n_pairs=m, noise=0.05, random_state=rng)
        nodes = list(range(n))
        pairs, w = S.to_arrays({u: u for u in nodes})
        ours = median_time(lambda: check_constraints(nodes, pairs, w), repeats)
        report = check_constraints(nodes, pairs, w)
        print(f"{m:11d} {n:9d} {ours:13.3f}   conflicts={len(report.conflicts)}")


def bench_grid(sizes, repeats, rng):
    try:
        from graphclust.graphs import grid_arrays
    except ImportError:
        print("\n## grid arrays: graphclust.graphs not available")
        return
    print("\n## grid_arrays (4-connected, contrast-sensitive weights, grayscale)")
    print(f"{'image':>11s} {'edges':>10s} {'graphclust s':>13s} {'nx.grid_2d_graph s':>19s} {'ratio':>6s}")
    for side in sizes:
        img = rng.random((side, side))
        ours = median_time(lambda: grid_arrays(img), repeats)
        edges = grid_arrays(img)[0]
        peer = "-"
        if side <= 512:
            t = median_time(lambda: nx.grid_2d_graph(side, side), 1)
            peer = f"{t:19.3f} {t / ours:6.1f}"
        print(f"{side:5d}x{side:<5d} {len(edges):10d} {ours:13.3f} {peer:>26s}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--only", nargs="*", choices=["problem", "contract", "check", "grid"],
                        help="run only these sections")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    scale = 100 if args.quick else 1
    only = set(args.only or ["problem", "contract", "check", "grid"])
    if "problem" in only:
        bench_problem([250_000 // scale, 500_000 // scale, 1_000_000 // scale], args.repeats, rng)
    if "contract" in only:
        bench_contract([250_000 // scale, 500_000 // scale, 1_000_000 // scale], args.repeats, rng)
    if "check" in only:
        bench_check([25_000 // scale, 50_000 // scale, 100_000 // scale], args.repeats, rng)
    if "grid" in only:
        side = [512, 1024, 2048] if not args.quick else [64, 128, 256]
        bench_grid(side, args.repeats, rng)


if __name__ == "__main__":
    main()
