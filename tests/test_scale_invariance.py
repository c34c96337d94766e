"""Answers that do not depend on the data's units (issue #23, item 1): the same
partition when every feature (or, for graph methods, every edge weight) is multiplied
by a factor in [1e-8, 1e8]. Tolerances and stopping rules are relative, and the
scale-dependent parameters' defaults (``lam``, bandwidths, the k-NN graph's weights)
come from the data."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import graphclust as gc

X, Y = gc.datasets.make_blobs(60, n_clusters=3, cluster_std=1.2, random_state=4)
S = gc.SideInfo.sample(Y, 40, noise=0.1, random_state=0)

FEATURE_ESTIMATORS = {
    "HMRF": lambda: gc.HMRF(gc.potentials.Centroids(3), random_state=0),
    "HMRF-icm": lambda: gc.HMRF(gc.potentials.Centroids(3), inference="icm", random_state=0),
    "HMRF-mahalanobis": lambda: gc.HMRF(gc.potentials.Centroids(3, distortion="mahalanobis"), random_state=0),
    "RDPMeans": lambda: gc.RDPMeans(n_clusters=3, random_state=0),
    "DPMeans": lambda: gc.DPMeans(random_state=0),
    "COSC": lambda: gc.COSC(3, random_state=0),
    "SpectralClustering": lambda: gc.SpectralClustering(3, random_state=0),
    "AutoCluster": lambda: gc.AutoCluster(random_state=0),
    "TVClust": lambda: gc.TVClust(n_iter=30, random_state=0),
    "DDMMDPM": lambda: gc.DDMMDPM(n_iter=30, random_state=0),
    "MMDPM": lambda: gc.MMDPM(n_iter=30, random_state=0),
    "DCP": lambda: gc.DCP(n_iter=20, random_state=0),
}
_BASE = {}


def _base(name):
    if name not in _BASE:
        _BASE[name] = FEATURE_ESTIMATORS[name]().fit(X, S).labels_
    return _BASE[name]


@pytest.mark.parametrize("name", sorted(FEATURE_ESTIMATORS))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(exponent=st.floats(-8, 8))
def test_the_partition_does_not_depend_on_the_units_of_the_features(name, exponent):
    labels = FEATURE_ESTIMATORS[name]().fit(X * 10.0**exponent, S).labels_
    np.testing.assert_array_equal(labels, _base(name))


def _weighted_graph():
    G = nx.barbell_graph(8, 3)
    rng = np.random.default_rng(0)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = float(rng.uniform(0.5, 2.0))
    return G


GRAPH_ESTIMATORS = {
    "COSC": lambda: gc.COSC(2, random_state=0),
    "SpectralClustering": lambda: gc.SpectralClustering(2, random_state=0),
}
G_SIDE = gc.SideInfo([(0, 18, 1.0), (0, 1, -1.0)])


@pytest.mark.parametrize("name", sorted(GRAPH_ESTIMATORS))
@pytest.mark.parametrize("factor", [1e-200, 1e-8, 1e8, 1e200])
def test_the_partition_does_not_depend_on_the_units_of_the_weights(name, factor):
    G = _weighted_graph()
    base = GRAPH_ESTIMATORS[name]().fit(G, G_SIDE)
    scaled = G.copy()
    for u, v in scaled.edges:
        scaled.edges[u, v]["weight"] *= factor
    est = GRAPH_ESTIMATORS[name]().fit(scaled, G_SIDE)
    np.testing.assert_array_equal(est.labels_, base.labels_)
    # the normalised cut is a ratio of weights: the same in any units
    assert est.result_.objective == pytest.approx(base.result_.objective, rel=1e-9)
    if name == "COSC":
        assert est.cut_value_ == pytest.approx(base.cut_value_ * factor, rel=1e-9)


def _engine_energy(K, attractive, factor):
    from graphclust.energy import Energy

    rng = np.random.default_rng(0)
    n = 10
    U = rng.uniform(0.0, 2.0, (n, K))
    edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.35])
    w = rng.uniform(0.2, 1.2, len(edges))
    if not attractive:
        w[:3] *= -1
    return Energy(U * factor, edges, w * factor)


def _engine_cases():
    from graphclust.inference import ENGINES

    for name, (_, caps) in sorted(ENGINES.items()):
        for attractive in (True, False):
            if attractive or not caps.get("attractive_only"):
                yield name, 2 if caps.get("binary_only") else 3, attractive


@pytest.mark.parametrize("name, K, attractive", list(_engine_cases()))
@pytest.mark.parametrize("factor", [1e-8, 1e8])
def test_every_engine_gives_the_same_labels_in_any_units(name, K, attractive, factor):
    """Every engine's stopping rules and margins are relative (the LP's solver sees the
    costs divided by the largest): an energy times a factor gives the same labels, and
    the same energy and bound times the factor."""
    base = gc.solve(_engine_energy(K, attractive, 1.0), name, random_state=0)
    res = gc.solve(_engine_energy(K, attractive, factor), name, random_state=0)
    np.testing.assert_array_equal(res.labels, base.labels)
    assert res.energy == pytest.approx(base.energy * factor, rel=1e-9)
    if base.lower_bound is not None:
        assert res.lower_bound == pytest.approx(base.lower_bound * factor, rel=1e-6)


def _scribbled_image():
    rng = np.random.default_rng(0)
    truth = np.zeros((40, 40), dtype=np.int64)
    truth[8:30, 10:32] = 1
    img = truth + rng.normal(scale=0.5, size=truth.shape)
    scrib = np.zeros_like(truth)
    scrib[15:20, 15:25] = 2
    scrib[0:4, 0:30] = 1
    return img, scrib


@pytest.mark.parametrize("graph", ["grid", "superpixels"])
@pytest.mark.parametrize("factor", [1e-8, 1e8])
def test_segment_gives_the_same_segmentation_in_any_units(graph, factor):
    """A float image's intensities in other units: the same segments (the colour model's
    regularisation is in units of the image's intensity range, the contrast sensitivity
    comes from the data, SLIC sees the image scaled to [0, 1])."""
    pytest.importorskip("skimage")
    img, scrib = _scribbled_image()
    kw = dict(graph=graph, n_superpixels=100, random_state=0)
    base = gc.segment(img, scrib, **kw).labels
    assert 0.1 < (base == 2).mean() < 0.6  # a real segmentation, not one label
    np.testing.assert_array_equal(gc.segment(img * factor, scrib, **kw).labels, base)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("factor", [1e-8, 1e8])
def test_the_grid_engine_gives_the_same_labels_in_any_units(K, factor):
    """The implicit-grid engine (float32 flows, not in ENGINES: it takes a GridEnergy)
    under the same rule: the same labels, the energy times the factor."""
    from graphclust.inference import GridEnergy, grid_cut, grid_offsets

    rng = np.random.default_rng(1)
    U = rng.uniform(0.0, 2.0, (8, 9, K))
    U[0, 0, 1:] = np.inf
    W = [rng.uniform(0.2, 1.2, (8, 9)) for _ in range(4)]
    base = grid_cut(GridEnergy(U, grid_offsets(2, 8), W))
    res = grid_cut(GridEnergy(U * factor, grid_offsets(2, 8), [w * factor for w in W]))
    np.testing.assert_array_equal(res.labels, base.labels)
    assert res.energy == pytest.approx(base.energy * factor, rel=1e-6)
