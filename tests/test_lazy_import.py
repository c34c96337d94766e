"""``import graphclust`` loads its public names on first use, so that a script which
only segments images never loads scikit-learn or networkx (about 100 MiB of memory
that a large image needs; issue #28). Checked in fresh interpreters."""

import importlib
import pickle
import subprocess
import sys
import textwrap

import pytest
import sklearn.exceptions

import graphclust as gc


def _run(code):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_importing_the_package_loads_no_estimator_and_no_heavy_dependency():
    loaded = _run("""
        import sys
        import graphclust
        print(*sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'networkx', 'pandas')
                      or m.startswith('graphclust.')))
    """)
    assert loaded == ["graphclust._lazy", "graphclust._utils", "graphclust.errors"]


def test_a_segmentation_loads_neither_scikit_learn_nor_networkx():
    loaded = _run("""
        import sys
        import numpy as np
        import graphclust as gc
        img = np.zeros((20, 30)); img[:, 15:] = 1.0
        img += np.random.default_rng(0).normal(0, 0.3, img.shape)
        scribbles = np.zeros((20, 30), int); scribbles[10, 2] = 1; scribbles[10, 27] = 2
        seg = gc.segment(img, scribbles)
        truth = np.where(np.arange(30) < 15, 1, 2)[None, :]
        assert (seg.labels == truth).mean() > 0.95, seg.labels
        s = gc.Segmenter(img, scribbles)
        s.add_stroke(np.array([[5, 5]]), label=1)
        print(*sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'networkx', 'pandas', 'scipy.spatial'}))
        print('ok')
    """)
    assert loaded == ["ok"]


def test_every_public_name_resolves_and_is_listed():
    for name in gc.__all__:
        assert getattr(gc, name) is not None
    assert set(gc.__all__) <= set(dir(gc))
    assert gc.io.read_graphml is gc.read_graphml  # any submodule, as after an eager import
    assert gc.Problem is gc.problem.Problem and gc.solve is gc.inference.solve
    assert gc.potentials.GaussianMixtures.__module__ == "graphclust.potentials.mixture"
    assert set(gc.potentials.__all__) <= set(dir(gc.potentials))
    with pytest.raises(AttributeError, match="no attribute 'KMeans'"):
        gc.KMeans
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        gc.potentials.Nothing
    namespace = {}
    exec("from graphclust import *", namespace)
    assert {"segment", "HMRF", "SideInfo", "metrics"} <= set(namespace)


def test_not_fitted_error_is_still_scikit_learns_and_pickles():
    err = gc.errors.NotFittedError("fit first")
    assert isinstance(err, sklearn.exceptions.NotFittedError) and isinstance(err, gc.errors.GraphclustError)
    assert gc.errors.NotFittedError is gc.errors.NotFittedError  # made once
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is gc.errors.NotFittedError and str(again) == "fit first"
    with pytest.raises(AttributeError):
        gc.errors.NoSuchError


@pytest.mark.parametrize("package", [gc, gc.potentials])
def test_the_type_checking_imports_are_the_public_names(package):
    """One list: the ``if TYPE_CHECKING:`` imports (read by documentation tools and the
    lazy loader alike) name exactly ``__all__``."""
    from graphclust._lazy import _listed_imports

    where, submodules = _listed_imports(package.__file__)
    assert set(where) | submodules == set(package.__all__)
    for name, module in where.items():
        assert getattr(package, name) is getattr(importlib.import_module(f"{package.__name__}.{module}"), name)
