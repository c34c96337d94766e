import os

import networkx as nx
import numpy as np
import pytest

from hypothesis import settings

settings.register_profile("ci", max_examples=60, deadline=None)
settings.register_profile("dev", max_examples=30, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# the once-per-process compilation notice would land in whichever test fits first on a
# fresh machine (tests that turn warnings into errors among them); it has its own test
import graphclust._utils as _gc_utils  # noqa: E402

_gc_utils._COMPILATION["announced"] = True


@pytest.fixture
def global_random_seed():
    """Fixed seed by default; GRAPHCLUST_SEED=<int> sweeps it."""
    return int(os.environ.get("GRAPHCLUST_SEED", "0"))


@pytest.fixture
def rng(global_random_seed):
    return np.random.default_rng(global_random_seed)


@pytest.fixture
def barbell():
    """Two triangles joined by one edge: the obvious 2-cluster graph."""
    return nx.barbell_graph(3, 0)
