"""The Gibbs engine's compiled kernels: one per provider (compiled with its functions
inlined), loaded from numba's disk cache by a later process instead of being compiled
again, and compiled afresh when a provider's source changes."""

import gc as gc_module
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from numba import njit, types
from numba.typed import List

import graphclust as gc
from graphclust.inference import gibbs
from graphclust.inference.gibbs import GibbsChain

ROOT = Path(gc.__file__).resolve().parent.parent

CHILD = """
import numpy as np
import graphclust as gc
from graphclust.inference import gibbs
X = np.random.default_rng(0).normal(size=(20, 2))
gc.TVClust(n_iter=2, n_split_merge=1, random_state=0).fit(X)
gc.DCP(n_iter=2, random_state=0).fit(X)
gc.MMDPM(n_iter=2, random_state=0).fit(X)
kernels = [k for e in gibbs._PROVIDERS.values() if e["cache"] for k in e["kernels"]]
hits = sum(sum(k.stats.cache_hits.values()) for k in kernels)
misses = sum(sum(k.stats.cache_misses.values()) for k in kernels)
print(hits, misses)
"""


@pytest.mark.slow
def test_a_second_process_loads_the_kernels_from_the_cache():
    exec(CHILD, {})  # compiles (or loads) and writes the cache in this process
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True)
    hits, misses = (int(v) for v in out.stdout.split())
    assert misses == 0 and hits == 4  # sweep x 3 providers + TVClust's split-merge


def test_one_specialised_kernel_per_provider():
    X = np.random.default_rng(1).normal(size=(12, 2))
    gc.TVClust(n_iter=2, random_state=0).fit(X)
    gc.DCP(n_iter=2, random_state=0).fit(X)
    gc.DDMMDPM(n_iter=2, random_state=0).fit(X)
    for name in ("ConjugateGibbsState", "DCPGibbsState", "DDMMDPMGibbsState"):
        cls = next(c for c in gibbs._PROVIDERS if c.__name__ == name)
        sweep = gibbs._PROVIDERS[cls]["kernels"][0]
        # the provider's own kernel, compiled for its state class only
        assert sweep.signatures and {str(sig[0]).split("(")[0] for sig in sweep.signatures} == {name}


PROVIDER = '''
from typing import NamedTuple
import numpy as np
from numba import njit
from graphclust.inference.gibbs import register_provider

STEP = {step}


class CountState(NamedTuple):
    cnt: np.ndarray


@njit
def scores(ps, u, k_old, z, active, n_active, pos, died, side, out):
    if k_old >= 0:
        ps.cnt[k_old] -= STEP
    for a in range(n_active + 1):
        out[a] = 0.0


@njit
def add(ps, u, k, new, active, n_active):
    ps.cnt[k] += STEP


register_provider(CountState, scores=scores, add=add, cache=True)
'''

SWEEP = """
import numpy as np
import counting_provider as cp
from graphclust.inference.gibbs import GibbsChain, _PROVIDERS, no_side_information


class Provider:
    cnt = np.zeros(8)
    state = property(lambda self: cp.CountState(self.cnt))


prov = Provider()
GibbsChain(prov, 4, 8).sweep(np.arange(4), np.full(4, 0.5), no_side_information(4))
kernel = _PROVIDERS[cp.CountState]["kernels"][0]
print(prov.cnt.sum(), sum(kernel.stats.cache_hits.values()), sum(kernel.stats.cache_misses.values()))
"""


@pytest.mark.slow
def test_an_edited_provider_is_compiled_afresh_not_loaded_stale(tmp_path):
    # the kernels inline the provider's code, which numba's cache does not watch: the
    # engine keys them by the provider's source files too
    module = tmp_path / "counting_provider.py"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}

    def run():
        out = subprocess.run([sys.executable, "-c", SWEEP], capture_output=True, text=True, check=True, env=env)
        total, hits, misses = out.stdout.split()
        return float(total), int(hits), int(misses)

    module.write_text(PROVIDER.format(step=1.0))
    assert run() == (4.0, 0, 1)  # compiled and cached
    assert run() == (4.0, 1, 0)  # loaded
    module.write_text(PROVIDER.format(step=2.0))
    stat = module.stat()
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a later edit, whatever the clock
    assert run() == (8.0, 0, 1)  # the edit shows: compiled again, not the stale kernel


class KeepState(NamedTuple):
    arr: np.ndarray
    kept: object  # numba.typed.List of arrays


@njit
def _keep_scores(ps, u, k_old, z, active, n_active, pos, died, side, out):
    for a in range(n_active + 1):
        out[a] = 0.0


@njit
def _keep_add(ps, u, k, new, active, n_active):
    ps.kept.append(ps.arr)  # a borrowed array stored where it outlives the kernel call
    ps.kept.append(ps.arr[1:])  # and a view of it


gibbs.register_provider(KeepState, scores=_keep_scores, add=_keep_add)


def test_a_borrowed_array_a_hook_keeps_is_counted_and_stays_alive():
    # inside the kernels the state's arrays are not reference-counted; storing one (or a
    # view) must still take a reference, so the list keeps it after its owner is gone
    class Provider:
        def __init__(self):
            self.arr, self.kept = np.arange(5.0), List.empty_list(types.float64[:])

        @property
        def state(self):
            return KeepState(self.arr, self.kept)

    prov = Provider()
    GibbsChain(prov, 3, 8).sweep(np.arange(3), np.full(3, 0.5), gibbs.no_side_information(3))
    kept = prov.kept
    del prov
    gc_module.collect()
    junk = [np.full(5, -7.0) for _ in range(2000)]  # reuse the memory, were the array freed
    assert len(kept) == 6
    for i in range(3):
        assert np.array_equal(kept[2 * i], np.arange(5.0)) and np.array_equal(kept[2 * i + 1], np.arange(1.0, 5.0))
    assert len(junk) == 2000
