"""Peak memory of the GraphML reader, as a multiple of the file size (issue #23).

Generates GraphML files in the graphclust convention, line for line what
``gc.io.write_graphml`` writes for the same graph (checked on a small instance of
each kind before the run; the edges may come in another order), but streamed
straight to disk so that files of hundreds of MB are quick to make:

* ``edges``: many weighted data edges (a sparse graph of average degree 10 on
  ``--edges / 5`` nodes, random weights written as full-precision doubles);
* ``edges-lean``: the same graph as another tool might write it, without the
  ``kind`` element and with 3-decimal weights (about 60 bytes an edge instead of 120):
  the same graph from half the bytes, so every ratio to the file doubles;
* ``features``: one node whose ``features`` value is ``--feature-mb`` MB of
  full-precision doubles (about 19 bytes a value);
* ``features-int``: the same with integer-valued features 0..255, which the
  writer writes as ``"17.0"`` (about 5 bytes a value): many short, repeated values;
* ``features-5dp``: the same with numbers of 5 decimals in [0, 1) (``"0.12345"``,
  about 8 bytes a value): short values, nearly all distinct;
* ``nodes``: ``--nodes`` nodes with a ``--dim``-vector of features each.

Each file is read in a **fresh subprocess** (by ``gc.io.read_graphml``, by
``gc.io.read_problem``, which builds the ``Problem`` arrays without a networkx graph,
and, as a peer, by ``networkx.read_graphml``), which reports:

* ``peak``: the peak resident set size (``getrusage(RUSAGE_SELF).ru_maxrss``) minus
  the resident set size after the imports, just before reading. RSS is what the
  issue's "N x the file size" means: it counts everything the process holds, the
  Python objects, numpy buffers, expat's buffers and the allocator's slack alike,
  which ``tracemalloc`` (Python allocations only) would not;
* ``held``: the resident set size once the reader has returned, with the result
  still alive, after ``gc.collect()`` and ``malloc_trim(0)``, minus the same
  baseline: what the returned graph itself costs (plus any allocator slack);
* ``graph``: the size of the returned graph's own objects, the sum of ``sys.getsizeof``
  over every distinct object reachable from its node, adjacency and graph dicts
  (measured after the two figures above); for ``read_problem``, the bytes of the
  Problem's arrays (``W``'s three, ``X``, counts, vertex weights, constraints) plus
  its node list and node index dict; it is what the caller asked for, and
  ``peak - graph`` is the reader's own overhead beyond it. ``held`` is above
  ``graph`` by the allocator's slack (memory freed during the read but kept by
  Python's allocator in partly used arenas).

Ratios are to the file size. The bound of the issue is ``peak <= 3 x file``.
The networkx peer runs under a time budget (``--nx-budget`` seconds) and an
address-space limit (``--nx-limit-gb``) so that it cannot starve a shared machine;
a run that hits either is reported as such.

    python benchmarks/bench_graphml_memory.py [--edges 1000000] [--feature-mb 100]
        [--nodes 100000 --dim 50] [--repeats 3] [--nx-budget 600] [--kinds edges,features,...]
        [--readers graphclust,problem] [--no-networkx] [--dir DIR] [--json out.json]

``--repeats`` reruns each graphclust reader (each in a fresh process): the times (wall
clock and CPU) are medians and the peak the largest of the runs. Files are written to ``--dir`` (a
temporary folder by default, removed at the end).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HEAD = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
    'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
)
TAIL = "  </graph>\n</graphml>\n"
GRAPH = '  <graph id="G" edgedefault="undirected">\n'


# ---------------------------------------------------------------------- generators
def _fmt(values):
    return " ".join(map(repr, values))


def gen_edges(path, n_edges, seed=0, lean=False):
    """``n_edges`` weighted data edges on ``n_edges // 5`` nodes (each node joined to
    ``u + o`` for 5 fixed offsets ``o < n / 2``: no pair twice). ``lean``: as another
    tool might write the same graph, without ``kind`` and with 3-decimal weights."""
    n = max(n_edges // 5, 12)
    rng = np.random.default_rng(seed)
    offsets = rng.choice(np.arange(1, n // 2), size=5, replace=False).tolist()
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(HEAD)
        if not lean:
            f.write('  <key id="d0" for="edge" attr.name="kind" attr.type="string"/>\n')
        f.write('  <key id="d1" for="edge" attr.name="weight" attr.type="double"/>\n')
        f.write(GRAPH)
        kind = "" if lean else '<data key="d0">data</data>'
        for lo in range(0, n, 100_000):
            f.write("".join(f'    <node id="{u}"/>\n' for u in range(lo, min(n, lo + 100_000))))
        written = 0
        for lo in range(0, n, 20_000):
            us = range(lo, min(n, lo + 20_000))
            weights = rng.random(len(us) * 5)
            weights = [f"{w:.3f}" for w in weights] if lean else list(map(repr, weights.tolist()))
            lines = []
            for i, u in enumerate(us):
                for j, o in enumerate(offsets):
                    if written == n_edges:
                        break
                    written += 1
                    v = (u + o) % n
                    lines.append(f'    <edge source="{min(u, v)}" target="{max(u, v)}">{kind}'
                                 f'<data key="d1">{weights[5 * i + j]}</data></edge>\n')
            f.write("".join(lines))
        f.write(TAIL)
    return {"nodes": n, "edges": written}


def _feature_chunks(n_values, values, rng, step=200_000):
    for lo in range(0, n_values, step):
        m = min(step, n_values - lo)
        if values == "int":
            vals = rng.integers(0, 256, m).astype(float)
        elif values == "5dp":
            vals = rng.random(m).round(5)
        else:
            vals = rng.standard_normal(m)
        yield _fmt(vals.tolist())


def gen_one_big_features(path, megabytes, values="full", seed=0):
    """One node whose ``features`` value is about ``megabytes`` MB of text: full-precision
    doubles, integers 0..255 (``"int"``) or 5-decimal numbers in [0, 1) (``"5dp"``)."""
    rng = np.random.default_rng(seed)
    per_value = {"int": 5.0, "5dp": 8.0, "full": 19.5}[values]
    n_values = max(int(megabytes * 1e6 / per_value), 1)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(HEAD)
        f.write('  <key id="d0" for="node" attr.name="features" attr.type="string"/>\n')
        f.write(GRAPH)
        f.write('    <node id="0"><data key="d0">')
        first = True
        for chunk in _feature_chunks(n_values, values, rng):
            if not first:
                f.write(" ")
            f.write(chunk)
            first = False
        f.write("</data></node>\n")
        f.write(TAIL)
    return {"nodes": 1, "values": n_values}


def gen_nodes(path, n_nodes, dim, seed=0):
    """``n_nodes`` nodes with a ``dim``-vector of features each, no edges."""
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(HEAD)
        f.write('  <key id="d0" for="node" attr.name="features" attr.type="string"/>\n')
        f.write(GRAPH)
        for lo in range(0, n_nodes, 5_000):
            block = rng.standard_normal((min(5_000, n_nodes - lo), dim)).tolist()
            f.write("".join(f'    <node id="{lo + i}"><data key="d0">{_fmt(row)}</data></node>\n'
                            for i, row in enumerate(block)))
        f.write(TAIL)
    return {"nodes": n_nodes, "values": n_nodes * dim}


KINDS = {
    "edges": lambda path, a: gen_edges(path, a.edges),
    "edges-lean": lambda path, a: gen_edges(path, a.edges, lean=True),
    "features": lambda path, a: gen_one_big_features(path, a.feature_mb),
    "features-int": lambda path, a: gen_one_big_features(path, a.feature_mb, values="int"),
    "features-5dp": lambda path, a: gen_one_big_features(path, a.feature_mb, values="5dp"),
    "nodes": lambda path, a: gen_nodes(path, a.nodes, a.dim),
}


def check_generators(folder):
    """Each generator writes the lines ``write_graphml`` writes for the graph it stands for
    (the same lines; edges may come in another order)."""
    import networkx as nx

    import graphclust as gc

    small = os.path.join(folder, "small.graphml")
    ours = os.path.join(folder, "ours.graphml")
    for kind in KINDS:
        if kind == "edges-lean":
            continue  # not what write_graphml writes: no kind, short weights
        if kind == "edges":
            gen_edges(small, 60)
            G = gc.io.read_graphml(small)[0]
        elif kind.startswith("features"):
            gen_one_big_features(small, 0.001, values=kind.partition("-")[2] or "full")
            G = gc.io.read_graphml(small)[0]
        else:
            gen_nodes(small, 7, 3)
            G = gc.io.read_graphml(small)[0]
        assert isinstance(G, nx.Graph)
        gc.io.write_graphml(ours, G)
        with open(small, "rb") as a, open(ours, "rb") as b:
            assert sorted(a.read().splitlines()) == sorted(b.read().splitlines()), \
                f"the {kind} generator differs from write_graphml"
    os.remove(small)
    os.remove(ours)


# ---------------------------------------------------------------------- measuring (child)
def _rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def _trim():
    import ctypes
    import gc as pygc

    pygc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:  # not glibc
        pass


def _reachable_bytes(roots):
    """Bytes of every distinct object reachable from ``roots`` through dicts, lists,
    tuples and sets (``sys.getsizeof``; a numpy array that does not own its data counts
    its ``nbytes`` too)."""
    seen, total = set(), 0
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, np.ndarray) and not obj.flags.owndata:
            total += obj.nbytes  # a view (a features array over the parse's buffer): getsizeof counts no data
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
    return total


def deep_size(G):
    """Bytes of every distinct object reachable from the graph's dicts."""
    return _reachable_bytes([G.graph, G._node, G._adj])


def problem_size(P):
    """Bytes of a Problem's arrays, plus its node list and node index dict (``deep_size``'s way)."""
    arrays = [P.W.data, P.W.indices, P.W.indptr, P.X, P.counts, P.vertex_weights, P.constraints,
              P.constraint_weights]
    return sum(a.nbytes for a in arrays if a is not None) + _reachable_bytes([P.nodes, P.__dict__.get("index", {})])


def child(reader, path):
    import resource

    import networkx as nx

    import graphclust as gc

    read = {"graphclust": gc.io.read_graphml, "problem": gc.io.read_problem, "networkx": nx.read_graphml}[reader]
    _trim()
    base = _rss_bytes()
    t0, c0 = time.perf_counter(), time.process_time()
    result = read(path)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    _trim()
    held = _rss_bytes()
    G = result[0] if isinstance(result, tuple) else result
    if isinstance(G, gc.Problem):
        size, nodes, edges = problem_size(G), G.n_nodes, G.n_edges
    else:
        size, nodes, edges = deep_size(G), G.number_of_nodes(), G.number_of_edges()
    print(json.dumps({"base": base, "peak": peak - base, "held": held - base, "graph": size,
                      "seconds": seconds, "cpu": cpu, "nodes": nodes, "edges": edges}))
    del result, G


def run_child(reader, path, budget=None, limit_gb=None):
    def limit():
        if limit_gb:
            import resource

            cap = int(limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    cmd = [sys.executable, os.path.abspath(__file__), "--child", reader, path]
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=budget, preexec_fn=limit, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"over the time budget of {budget:.0f} s"}
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        if "MemoryError" in out.stderr:
            return {"error": f"MemoryError under a {limit_gb:g} GB address-space limit"}
        return {"error": f"exit {out.returncode}: {last[:200]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- driver
def _mb(x):
    return x / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--feature-mb", type=float, default=100.0)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--readers", default="graphclust,problem",
                    help="graphclust readers to run: graphclust (read_graphml), problem (read_problem)")
    ap.add_argument("--no-networkx", action="store_true")
    ap.add_argument("--nx-budget", type=float, default=600.0, help="seconds per networkx read")
    ap.add_argument("--nx-limit-gb", type=float, default=8.0, help="address-space limit of a networkx read")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return

    folder = a.dir or tempfile.mkdtemp(prefix="graphml-mem-")
    os.makedirs(folder, exist_ok=True)
    rows = []
    try:
        check_generators(folder)
        for kind in a.kinds.split(","):
            path = os.path.join(folder, f"{kind}.graphml")
            t0 = time.perf_counter()
            info = KINDS[kind](path, a)
            size = os.path.getsize(path)
            print(f"# {kind}: {_mb(size):.1f} MB, {info}, written in {time.perf_counter() - t0:.1f} s", flush=True)
            for reader in a.readers.split(","):
                runs = [run_child(reader, path) for _ in range(a.repeats)]
                bad = [r for r in runs if "error" in r]
                if bad:
                    raise SystemExit(f"{reader} reader failed on {kind}: {bad[0]['error']}")
                row = {"kind": kind, "size": size, **info, "reader": reader,
                       "seconds": statistics.median(r["seconds"] for r in runs),
                       "all_seconds": [r["seconds"] for r in runs],
                       "cpu": statistics.median(r["cpu"] for r in runs),
                       "peak": max(r["peak"] for r in runs), "held": max(r["held"] for r in runs),
                       "graph": runs[0]["graph"]}
                rows.append(row)
                print(f"  {reader}: {row}", flush=True)
            if not a.no_networkx:
                r = run_child("networkx", path, a.nx_budget, a.nx_limit_gb)
                row = {"kind": kind, "size": size, **info, "reader": "networkx", **r}
                rows.append(row)
                print(f"  networkx:   {row}", flush=True)
            os.remove(path)
    finally:
        if a.dir is None:
            shutil.rmtree(folder, ignore_errors=True)

    print()
    print("| file | MB | reader | time s | cpu s | peak MB | peak / file | graph MB | graph / file | held / file "
          "| (peak - graph) / file | peak <= 3x file |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['kind']} | {_mb(r['size']):.0f} | {r['reader']} | {r['error']} | | | | | | | | |")
            continue
        ratio, graph, held = r["peak"] / r["size"], r["graph"] / r["size"], r["held"] / r["size"]
        met = "MET" if ratio <= 3 else "NOT MET"
        print(f"| {r['kind']} | {_mb(r['size']):.0f} | {r['reader']} | {r['seconds']:.1f} | {r['cpu']:.1f} "
              f"| {_mb(r['peak']):.0f} "
              f"| {ratio:.2f}x | {_mb(r['graph']):.0f} | {graph:.2f}x | {held:.2f}x | {ratio - graph:.2f}x | {met} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": {k: v for k, v in vars(a).items() if k not in ("child", "dir", "json")}, "rows": rows},
                      f, indent=1)


if __name__ == "__main__":
    main()
