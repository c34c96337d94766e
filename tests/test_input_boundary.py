"""Issue #23's boundary: bad or extreme input gets a GraphclustError that names the
culprit in the user's terms (never Python's or scipy's own exception, never a message
about a temporary file or an internal parameter). One test per reported defect."""

import os

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphclust as gc
from graphclust.errors import (
    GraphMLError,
    InvalidConstraintError,
    InvalidFeaturesError,
    InvalidParameterError,
    OutputFileError,
    UnknownNodeError,
)
from graphclust.graphs import epsilon_matrix, knn_matrix


def _energy():
    return gc.Energy(np.zeros((4, 2)), edges=[(0, 1), (1, 2)], weights=[1.0, 1.0])


def test_an_unknown_engine_option_is_named_with_the_valid_ones():
    with pytest.raises(InvalidParameterError, match=r"engine 'icm' has no option 'banana'; its options: .*max_iter"):
        gc.solve(_energy(), "icm", banana=1)
    with pytest.raises(InvalidParameterError, match="no option 'banana'"):
        gc.solve(_energy(), banana=1)  # "auto" passes the options to the engine it picks
    img = np.random.default_rng(0).random((8, 8))
    scribbles = np.zeros((8, 8), int)
    scribbles[0, 0], scribbles[7, 7] = 1, 2
    with pytest.raises(InvalidParameterError, match="no option 'banana'"):
        gc.segment(img, scribbles, banana=3)


def test_a_valid_engine_option_still_reaches_the_engine():
    assert gc.solve(_energy(), "icm", max_iter=3, random_state=0).energy == 0.0


@settings(max_examples=25, deadline=None)
@given(exponent=st.floats(-300, 300))
def test_knn_and_epsilon_graphs_do_not_depend_on_the_units(exponent):
    X = np.random.default_rng(1).random((40, 3))
    c = 10.0 ** exponent
    for kw in ({}, {"bandwidth": "self-tuning"}, {"mode": "connectivity"}):
        np.testing.assert_allclose(knn_matrix(X * c, 5, **kw).toarray(), knn_matrix(X, 5, **kw).toarray(), rtol=1e-9)
    D = knn_matrix(X * c, 5, mode="distance")
    assert np.isfinite(D.data).all()
    np.testing.assert_allclose(D.toarray() / c, knn_matrix(X, 5, mode="distance").toarray(), rtol=1e-9)
    np.testing.assert_allclose(epsilon_matrix(X * c, 0.4 * c).toarray(), epsilon_matrix(X, 0.4).toarray(), rtol=1e-9)


def test_knn_graph_near_the_largest_floats():
    # squared distances of 1e155 overflowed inside the k-d tree (scipy's index error)
    X = np.random.default_rng(0).random((20, 2)) * 1e155 + 1e155
    G = gc.graphs.knn_graph(X, 3)
    assert G.number_of_nodes() == 20 and all(np.isfinite(w) and w > 0 for *_, w in G.edges(data="weight"))


def test_array_valued_node_keys_are_refused_by_name():
    with pytest.raises(InvalidConstraintError, match=r"array\(\[1, 2\]\).*must be hashable"):
        gc.SideInfo([(np.array([1, 2]), np.array([3, 4]), 1.0)])


def test_fit_on_none_says_what_to_pass():
    with pytest.raises(InvalidFeaturesError, match="X is None: pass a feature array"):
        gc.HMRF(gc.potentials.Centroids(2)).fit(None)


def test_a_seed_on_an_unknown_node_is_refused_by_fit_as_by_the_writer(tmp_path):
    X = np.random.default_rng(0).random((6, 2))
    S = gc.SideInfo([(0, 1, 1.0)], seeds={99: 0})
    with pytest.raises(UnknownNodeError, match="seed on node 99"):
        gc.HMRF(gc.potentials.Centroids(2), random_state=0).fit(X, S)
    with pytest.raises(UnknownNodeError, match="seed on node 99"):
        gc.io.write_graphml(tmp_path / "g.graphml", nx.path_graph(6), S)


def test_a_missing_output_folder_is_named_as_given(tmp_path):
    target = tmp_path / "no-such-folder" / "out.graphml"
    with pytest.raises(OutputFileError, match=r"cannot write .*no-such-folder.out\.graphml: the folder .* does not exist"):
        gc.io.write_graphml(target, nx.path_graph(3))
    with pytest.raises(OutputFileError, match="out.csv"):
        gc.io.write_side_info_csv(tmp_path / "no-such-folder" / "out.csv", gc.SideInfo([(0, 1, 1.0)]))
    pytest.importorskip("skimage")
    from graphclust.segmentation import write_label_image

    with pytest.raises(OutputFileError, match="labels.png"):
        write_label_image(tmp_path / "no-such-folder" / "labels.png", np.zeros((3, 3), int))
    with pytest.raises(OutputFileError, match="it is a folder"):
        gc.io.write_graphml(tmp_path, nx.path_graph(3))
    assert os.listdir(tmp_path) == []  # no temporary file left behind


def test_the_cli_reports_a_missing_output_folder_in_one_line(tmp_path, capsys):
    from graphclust.cli import main

    G, S = gc.datasets.load_demo()[:2]
    gc.io.write_graphml(tmp_path / "demo.graphml", G, S)
    code = main(["cluster", str(tmp_path / "demo.graphml"), "--method", "spectral", "-k", "3",
                 "--out", str(tmp_path / "nope" / "out.graphml")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "nope" in err[0] and ".tmp-" not in err[0]


def test_a_node_key_too_long_to_print_is_refused_by_the_writer(tmp_path):
    G = nx.Graph([(10**5000, 1)])
    with pytest.raises(GraphMLError, match="integer of about 5001 digits"):
        gc.io.write_graphml(tmp_path / "big.graphml", G)
    assert not (tmp_path / "big.graphml").exists()


def test_a_cluster_of_isolated_nodes_is_reported_not_raised():
    G = nx.complete_graph(3)
    G.add_nodes_from([3, 4])
    with pytest.warns(UserWarning, match="volume 0"):
        est = gc.SpectralClustering(2, random_state=0).fit(G)
    assert sorted(np.bincount(est.labels_).tolist()) == [2, 3]
    assert est.result_.objective == np.inf and "volume 0" in est.result_.info["objective_undefined"]


def test_an_untyped_weight_key_is_read_as_a_number_and_round_trips(tmp_path):
    path = tmp_path / "untyped.graphml"
    path.write_text(
        '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
        '<key id="w" for="edge" attr.name="weight"/><graph edgedefault="undirected">'
        '<node id="0"/><node id="1"/><node id="2"/>'
        '<edge source="0" target="1"><data key="w">2.5</data></edge>'
        '<edge source="1" target="2"><data key="w">1</data></edge></graph></graphml>')
    G, _ = gc.io.read_graphml(path)
    assert dict(G.edges) == {(0, 1): {"weight": 2.5}, (1, 2): {"weight": 1.0}}
    gc.io.write_graphml(tmp_path / "again.graphml", G)
    assert dict(gc.io.read_graphml(tmp_path / "again.graphml")[0].edges) == dict(G.edges)
    path.write_text(path.read_text().replace(">2.5<", ">heavy<"))
    with pytest.raises(GraphMLError, match="'heavy', expected a double"):
        gc.io.read_graphml(path)


def test_the_dask_grid_refuses_nan_unaries_like_energy():
    pytest.importorskip("dask")
    from graphclust.distributed import grid_energy, grid_inference

    U = np.random.default_rng(0).random((40, 40, 2))
    U[25, 33, 1] = np.nan
    with pytest.raises(InvalidParameterError, match=r"unary\[25, 33, 1\] is nan"):
        grid_inference(U, chunks=(20, 20))
    with pytest.raises(InvalidParameterError, match=r"unary\[25, 33, 1\] is nan"):
        grid_energy(np.zeros((40, 40), int), U, chunks=(20, 20))
    with pytest.raises(InvalidParameterError, match=r"unary\[1, 0\] is nan"):
        gc.Energy(U.reshape(-1, 2)[[0, 25 * 40 + 33]][:, ::-1])


def test_features_too_large_to_square_are_refused_naming_the_entry():
    X, _ = gc.datasets.load_iris()
    for est in (gc.HMRF(gc.potentials.Centroids(3)), gc.RDPMeans(n_clusters=3), gc.TVClust(n_iter=5),
                gc.DCP(standardize=True, n_iter=5), gc.DDMMDPM(n_iter=5)):  # DCP gave one cluster, DDMMDPM 150
        with pytest.raises(InvalidFeaturesError, match=r"row 131 of X has 7.9e\+160 in column 0: .*divide X"):
            est.fit(X * 1e160)
    assert gc.RDPMeans(n_clusters=3, random_state=0).fit(X * 1e-160).n_clusters_ == 3  # tiny features work
    # and dd-MMDPM on tiny features finds what it finds in the data's own units
    np.testing.assert_array_equal(gc.DDMMDPM(n_iter=20, random_state=0).fit(X * 1e-160).labels_,
                                  gc.DDMMDPM(n_iter=20, random_state=0).fit(X).labels_)


def test_weights_and_intensities_near_the_float_limits_work():
    G = nx.barbell_graph(6, 2)
    nx.set_edge_attributes(G, 1e308, "weight")  # degrees overflowed: a NaN objective
    for est in (gc.SpectralClustering(2, random_state=0), gc.COSC(2, random_state=0)):
        est.fit(G)
        assert est.result_.objective == pytest.approx(2 / 33) and len(set(est.labels_[:6])) == 1
    rng = np.random.default_rng(0)
    img = rng.random((20, 20))
    img[5:15, 5:15] += 1
    scribbles = np.zeros((20, 20), int)
    scribbles[0, 0], scribbles[10, 10] = 1, 2
    for c in (1e200, 1e-200):  # "unary[0, 0] is nan" before
        labels = gc.segment(img * c, scribbles, random_state=0).labels
        assert labels[10, 10] == 2 and labels[0, 0] == 1 and (labels[6:14, 6:14] == 2).mean() > 0.9
