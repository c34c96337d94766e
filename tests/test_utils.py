import os
import stat

import numpy as np
import pytest

from graphclust._utils import atomic_write, check_random_state
from graphclust.errors import InvalidParameterError


def test_atomic_write_replaces_and_keeps_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    with atomic_write(target, "w") as fh:
        fh.write("new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_write_new_file_is_not_private(tmp_path):
    target = tmp_path / "fresh.txt"
    with atomic_write(target, "w") as fh:
        fh.write("x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o666 & ~umask


def test_interrupted_write_leaves_old_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("precious")
    with pytest.raises(RuntimeError):
        with atomic_write(target, "w") as fh:
            fh.write("half")
            raise RuntimeError("disk full")
    assert target.read_text() == "precious"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_check_random_state():
    g = np.random.default_rng(3)
    assert check_random_state(g) is g
    assert check_random_state(5).integers(100) == np.random.default_rng(5).integers(100)
    with pytest.raises(InvalidParameterError, match="random_state"):
        check_random_state("seed")


@pytest.mark.parametrize("weighted", [False, True])
def test_group_sums_matches_add_at(weighted):
    from graphclust._utils import group_sums

    rng = np.random.default_rng(0)
    groups = rng.integers(0, 5, 50)
    rows = rng.normal(size=(50, 3))
    w = rng.uniform(0.5, 2.0, 50) if weighted else None
    expected = np.zeros((7, 3))  # groups 5 and 6 stay empty
    np.add.at(expected, groups, rows * (1.0 if w is None else w[:, None]))
    out = group_sums(groups, rows, 7, w)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    out[0] = 0.0  # a fresh, writable array


def test_a_cold_kernel_cache_is_announced_once(tmp_path):
    """The first fit in a process with no cached kernels says it is compiling; a run
    that finds the cache says nothing."""
    import subprocess
    import sys

    code = ("import warnings, numpy as np, graphclust as gc\n"
            "warnings.simplefilter('always')\n"
            "X = np.array([[0.0], [0.1], [5.0], [5.1]])\n"
            "gc.DPMeans(n_clusters=2, random_state=0).fit(X)\n"
            "gc.DPMeans(n_clusters=2, random_state=0).fit(X)\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
            for _ in range(2)]
    assert runs[0].stderr.count("CompilationNotice") == 1 and "compiles its numba kernels" in runs[0].stderr
    assert "CompilationNotice" not in runs[1].stderr
