"""The Gibbs engine's compiled kernels: one per provider (its functions are an argument
numba specialises on), loaded from numba's disk cache by a later process instead of
being compiled again."""

import subprocess
import sys

import numpy as np
import pytest

import graphclust as gc
from graphclust.inference import gibbs

CHILD = """
import numpy as np
import graphclust as gc
from graphclust.inference import gibbs
X = np.random.default_rng(0).normal(size=(20, 2))
gc.TVClust(n_iter=2, n_split_merge=1, random_state=0).fit(X)
gc.DCP(n_iter=2, random_state=0).fit(X)
gc.MMDPM(n_iter=2, random_state=0).fit(X)
hits = sum(sum(k.stats.cache_hits.values()) for k in gibbs._KERNELS[True])
misses = sum(sum(k.stats.cache_misses.values()) for k in gibbs._KERNELS[True])
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
    states = {str(sig[1]).split("(")[0] for sig in gibbs._KERNELS[True][0].signatures}  # sig[0]: the hooks
    assert {"ConjugateGibbsState", "DCPGibbsState", "DDMMDPMGibbsState"} <= states
