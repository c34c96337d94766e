"""The side-information UCI benchmark script runs end to end in its smallest mode."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "bench_sideinfo_uci.py"

OURS = ("dpmeans", "rdpmeans", "rdpmeans-pq", "tvclust", "hmrf")


@pytest.fixture(autouse=True)
def _restore_numpy_errstate():
    """Importing the peer package calls ``np.seterr("raise")``; keep that out of other tests."""
    with np.errstate():
        yield


def load_script():
    spec = importlib.util.spec_from_file_location("bench_sideinfo_uci", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def table_rows(markdown, heading):
    """``{first cell: [other cells]}`` of the markdown table under ``heading``."""
    lines = markdown.split(heading, 1)[1].splitlines()
    rows = {}
    for line in lines[1:]:
        if line.startswith("#"):
            break
        if line.startswith("| ") and not line.startswith("| method") and not line.startswith("| ---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


def test_quick_iris_our_methods(tmp_path):
    bench = load_script()
    out = tmp_path / "table.md"
    result = bench.main(["--quick", "--datasets", "iris", "--runs", "1", "--methods", ",".join(OURS),
                         "--tvclust-sweeps", "30", "--out", str(out)])
    assert out.read_text().strip() == result["markdown"].strip()
    # one record per method, r = 0.03 and p in {1, 0.9}, one run each; none failed
    records = result["records"]
    assert sorted((r["method"], r["p"]) for r in records) == sorted((m, p) for m in OURS for p in (1.0, 0.9))
    assert all(r["error"] is None for r in records)
    for r in records:
        for metric in ("F", "ARI", "NMI"):
            assert 0.0 <= r[metric] <= 1.0, (r["method"], metric, r[metric])
    # the table has one row per method, each cell "F / ARI / NMI" with all three in [0, 1]
    rows = table_rows(result["markdown"], "### iris, r = 0.03")
    assert sorted(rows) == sorted(bench.METHODS[m] for m in OURS)
    for name, cells in rows.items():
        assert len(cells) == 2, name
        for cell in cells:
            values = [float(v) for v in cell.split(" / ")]
            assert len(values) == 3 and all(0.0 <= v <= 1.0 for v in values), (name, cell)
    # noise-free constraints at r = 0.03 (about 650 pairs) pin iris down for the constrained methods
    f = {r["method"]: r["F"] for r in records if r["p"] == 1.0}
    assert f["rdpmeans-pq"] > f["dpmeans"] and f["hmrf"] > 0.9


def test_merge_renders_earlier_runs_as_one_table(tmp_path):
    """Two runs over different accuracies and methods, saved with --json, merge into the
    tables a single run over both would give (same seeds, so the same numbers)."""
    bench = load_script()
    common = ["--quick", "--datasets", "iris", "--runs", "2"]
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    bench.main(common + ["--accuracies", "1", "--methods", "dpmeans,rdpmeans", "--json", str(a)])
    bench.main(common + ["--accuracies", "0.9", "--methods", "dpmeans", "--json", str(b)])
    both = bench.main(common + ["--accuracies", "1,0.9", "--methods", "dpmeans"])
    merged = bench.main(["--merge", f"{a},{b}"])
    assert len(merged["records"]) == 2 * 2 + 2
    rows = table_rows(merged["markdown"], "### iris, r = 0.03")
    want = table_rows(both["markdown"], "### iris, r = 0.03")
    assert rows["DP-means"] == want["DP-means"]
    assert rows["RDP-means (annealed ξ)"][1] == "not run" and rows["RDP-means (annealed ξ)"][0] != "not run"
    assert "records merged from" in merged["markdown"]
    # a grid split by runs (--first-run) merges into the same table as well
    c, d = tmp_path / "c.json", tmp_path / "d.json"
    bench.main(common[:-1] + ["1", "--accuracies", "1,0.9", "--methods", "dpmeans", "--json", str(c)])
    bench.main(common[:-1] + ["1", "--first-run", "1", "--accuracies", "1,0.9", "--methods", "dpmeans",
                              "--json", str(d)])
    split = bench.main(["--merge", f"{c},{d}"])
    assert table_rows(split["markdown"], "### iris, r = 0.03")["DP-means"] == want["DP-means"]
    # --merge with --json keeps the merged records as one file, which merges like its parts
    cd, before = tmp_path / "cd.json", (c.read_bytes(), d.read_bytes())
    bench.main(["--merge", f"{c},{d}", "--json", str(cd)])
    assert (c.read_bytes(), d.read_bytes()) == before
    again = bench.main(["--merge", str(cd)])
    assert again["markdown"] == split["markdown"].replace(f"{c},{d}", str(cd))
    assert sorted(json.dumps(x, sort_keys=True) for x in again["records"]) == sorted(
        json.dumps(x, sort_keys=True) for x in split["records"])
    # a selection narrower than the files renders only what was selected
    e = tmp_path / "e.json"
    bench.main(["--quick", "--datasets", "iris,wine", "--runs", "1", "--methods", "dpmeans,rdpmeans", "--json", str(e)])
    only = bench.main(["--merge", str(e), "--datasets", "wine", "--methods", "rdpmeans"])
    assert {(x["dataset"], x["method"]) for x in only["records"]} == {("wine", "rdpmeans")}
    assert "### iris" not in only["markdown"] and list(table_rows(only["markdown"], "### wine, r = 0.03")) == [
        "RDP-means (annealed ξ)"]


def test_quick_iris_peers_fail_as_failures():
    # the distribution's own name does not import (see docs/benchmarks/hmrf.md); the wheel's
    # working copy is what the script uses
    pytest.importorskip("active_semi_clustering")
    bench = load_script()
    result = bench.main(["--quick", "--datasets", "iris", "--runs", "1", "--methods", "pckmeans,copkmeans"])
    by = {(r["method"], r["p"]): r for r in result["records"]}
    assert by[("pckmeans", 1.0)]["error"] is None and 0.0 <= by[("pckmeans", 1.0)]["F"] <= 1.0
    # noisy constraints: the package refuses them; reported as a failure, never as a score
    for m in ("pckmeans", "copkmeans"):
        rec = by[(m, 0.9)]
        assert rec["error"].startswith(bench.INCONSISTENT) and "F" not in rec
    rows = table_rows(result["markdown"], "### iris, r = 0.03")
    assert rows[bench.METHODS["copkmeans"]][1] == "failed 1/1"


def test_precheck_agrees_with_the_peer_package():
    """The script's shortcut predicts exactly the inputs the peers reject."""
    pytest.importorskip("active_semi_clustering")
    from active_semi_clustering.exceptions import InconsistentConstraintsException
    from active_semi_clustering.semi_supervised.pairwise_constraints.constraints import (
        preprocess_constraints,
    )

    bench = load_script()
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(300):
        n = int(rng.integers(3, 10))
        pairs = {tuple(sorted(rng.choice(n, 2, replace=False).tolist())) for _ in range(int(rng.integers(1, 10)))}
        pairs = sorted(pairs)
        must = rng.random(len(pairs)) < 0.5
        ml = [p for p, m in zip(pairs, must) if m]
        cl = [p for p, m in zip(pairs, must) if not m]
        try:
            preprocess_constraints(ml, cl, n)
            refused = False
        except InconsistentConstraintsException:
            refused = True
        assert bench.closure_conflict(n, ml, cl) == refused, (n, ml, cl)
        seen.add(refused)
    assert seen == {True, False}


def test_glass_as_the_seed_read_it():
    """``glass_id``: the record number (1..214, rows sorted by type) as first feature, k = 7."""
    bench = load_script()
    X, y, k = bench.load("glass_id", "raw")
    X0, y0, k0 = bench.load("glass", "raw")
    assert (X.shape, k, k0) == ((214, 10), 7, 6)
    np.testing.assert_array_equal(X[:, 0], np.arange(1, 215))
    np.testing.assert_array_equal(X[:, 1:], X0)
    np.testing.assert_array_equal(y, y0)
    # the leak: the record number alone orders the types
    assert (np.diff(y[np.argsort(X[:, 0])]) >= 0).all()


def test_seed_comparison_means_of_per_set_means():
    """Five-set averages are means of per-set means (as the seed's tables are), failures
    are shown as failures, and the seed's own numbers stand beside ours."""
    from types import SimpleNamespace

    bench = load_script()
    sets = ("iris", "wine", "ecoli", "glass_id", "balance_scale")
    records = []
    for i, ds in enumerate(sets):
        for run in range(i + 1):  # unequal run counts: pooling would give another number
            for p in (1.0, 0.8):
                f = 0.1 * (i + 1) + 0.01 * run + (0.0 if p == 1.0 else 0.5)
                records.append({"dataset": ds, "r": 0.03, "p": p, "k": 3, "k_decl": 3, "method": "rdpmeans",
                                "run": run, "error": None, "F": f, "ARI": f / 2, "NMI": f / 4, "K": 3})
                records.append({"dataset": ds, "r": 0.03, "p": p, "k": 3, "k_decl": 3, "method": "mpckmeans",
                                "run": run, "error": None if p == 1.0 else "InconsistentConstraintsException"}
                               | ({"F": 1.0, "ARI": 1.0, "NMI": 1.0, "K": 3} if p == 1.0 else {}))
    args = SimpleNamespace(accuracies=[1.0, 0.8], rates=[0.03])
    text = "\n".join(bench.seed_comparison(records, ["rdpmeans", "mpckmeans"], args))
    assert "glass as the seed read it" in text and "without the record number" not in text
    per_set = [np.mean([0.1 * (i + 1) + 0.01 * run for run in range(i + 1)]) for i in range(5)]
    want = np.mean(per_set)
    t2 = table_rows(text, "### Table 2")
    seed_p1, ours_p1, seed_p8, ours_p8 = t2["RDP-means (annealed ξ)"]
    assert seed_p1 == "0.93 / 0.90 / 0.89" and seed_p8 == "0.75 / 0.65 / 0.62"
    assert ours_p1 == f"{want:.2f} / {want / 2:.2f} / {want / 4:.2f}"
    assert ours_p8.startswith(f"{want + 0.5:.2f} / ")
    assert t2["MPCKMeans (peer)"][1] == "1.00 / 1.00 / 1.00" and t2["MPCKMeans (peer)"][3] == "failed 15/15"
    t1 = table_rows(text, "### Table 1")
    assert t1["RDP-means (annealed ξ)"][0] == "0.86 / 0.80 / 0.80"  # the seed's iris
    assert t1["MPCKMeans (peer)"][-1].startswith("failed ")
    t3 = table_rows(text, "### Table 3")
    assert t3["RDP-means (annealed ξ)"] == ["0.03", "0.98 / 0.77", f"{want:.2f} / {want + 0.5:.2f}"]
