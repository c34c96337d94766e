"""Every estimator is a scikit-learn clusterer: its own checks, clone with nested
parameters, Pipeline, GridSearchCV, partial labels as ``y`` and constraints routed as
the ``sideinfo`` fit parameter."""

import pickle
import warnings

import networkx as nx
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

import graphclust as gc
from graphclust.errors import InvalidParameterError

#: checks a constrained clusterer cannot pass, each with the reason
EXPECTED_FAILURES = {
    "check_dtype_object": "a non-numeric entry raises InvalidFeaturesError (a ValueError naming the row), "
                          "not numpy's TypeError",
}
#: defaults that fail scikit-learn's three-blob clustering check (issue #22, item 3)
DEFAULTS_EXPECTED = {
}


def _estimators():
    """Every estimator, with settings that keep the checks fast (few sweeps)."""
    return [
        gc.HMRF(gc.potentials.Centroids(3)),
        gc.RDPMeans(n_clusters=3),
        gc.TVClust(n_iter=20),
        gc.DCP(n_iter=10),
        gc.DDMMDPM(n_iter=10),
        gc.MMDPM(n_iter=10),
        gc.DPMeans(n_clusters=3),
        gc.COSC(n_clusters=3),
        gc.SpectralClustering(3),
        gc.AutoCluster(3),
    ]


def _expected(estimator):
    return {**EXPECTED_FAILURES, **DEFAULTS_EXPECTED.get(type(estimator).__name__, {})}


@parametrize_with_checks(_estimators(), expected_failed_checks=_expected)
def test_scikit_learn_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


def _blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(scale=0.4, size=(n, 2)) + np.array([[0, 0], [4, 0], [0, 4]])[y]
    return X, y


def test_clone_reaches_nested_parameters():
    est = gc.HMRF(gc.potentials.Centroids(3, distortion="mahalanobis"), inference="icm")
    params = est.get_params(deep=True)
    assert params["potentials__n_clusters"] == 3 and params["potentials__distortion"] == "mahalanobis"
    twin = clone(est)
    assert twin.potentials is not est.potentials  # a fresh provider
    same = {k: v for k, v in twin.get_params(deep=True).items() if k != "potentials"}
    assert same == {k: v for k, v in params.items() if k != "potentials"}
    twin.set_params(potentials__n_clusters=4, inference="bp")
    assert twin.potentials.n_clusters == 4 and twin.inference == "bp" and est.potentials.n_clusters == 3
    with pytest.raises(InvalidParameterError, match="no parameter 'banana'"):
        twin.set_params(banana__x=1)
    with pytest.raises(InvalidParameterError, match="no parameters of its own"):
        twin.set_params(inference__x=1)


def test_pipeline_with_partial_labels():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _blobs()
    X = X * np.array([1000.0, 1.0])  # units that only the scaler undoes
    partial = np.full(len(y), -1)
    partial[::10] = y[::10]
    pipe = make_pipeline(StandardScaler(), gc.HMRF(gc.potentials.Centroids(3), random_state=0))
    labels = pipe.fit(X, partial).named_steps["hmrf"].labels_
    assert gc.ari(y, labels) == pytest.approx(1.0)
    # the labelled points became soft constraints of strength 1
    problem = pipe.named_steps["hmrf"].problem_
    assert problem.n_constraints > 0 and np.all(np.abs(problem.constraint_weights) == 1.0)


def test_partial_labels_are_read_in_node_order_of_a_graph():
    G = nx.barbell_graph(4, 0)
    y = np.full(8, -1)
    y[[0, 7]] = [5, 9]  # two labels: one cannot-link between their nodes
    est = gc.COSC(n_clusters=2, random_state=0).fit(G, y)
    assert est.problem_.n_constraints == 1 and est.problem_.constraint_weights[0] == -1.0
    assert est.labels_[0] != est.labels_[7]


def test_sideinfo_as_triples_and_routed_through_a_pipeline():
    import sklearn
    from sklearn.pipeline import Pipeline

    X, y = _blobs()
    S = gc.SideInfo.sample(y, 200, random_state=0)
    triples = list(S.edges())
    direct = gc.HMRF(gc.potentials.Centroids(3), random_state=0).fit(X, sideinfo=triples)
    assert direct.problem_.n_constraints == len(S)
    with sklearn.config_context(enable_metadata_routing=True):
        est = gc.HMRF(gc.potentials.Centroids(3), random_state=0).set_fit_request(sideinfo=True)
        pipe = Pipeline([("cluster", est)]).fit(X, sideinfo=S)
    np.testing.assert_array_equal(pipe.named_steps["cluster"].labels_, direct.labels_)
    assert pipe.named_steps["cluster"].problem_.n_constraints == len(S)


def test_side_information_errors_name_the_fix():
    X, y = _blobs()
    S = gc.SideInfo.sample(y, 20, random_state=0)
    est = gc.RDPMeans(n_clusters=3)
    with pytest.raises(InvalidParameterError, match="given twice"):
        est.fit(X, S, sideinfo=S)
    with pytest.raises(InvalidParameterError, match=r"sideinfo\[0\] is \(0, 1\); constraints are \(u, v, weight\)"):
        est.fit(X, sideinfo=[(0, 1)])
    with pytest.raises(InvalidParameterError, match="one label per node"):
        est.fit(X, y[:-1])


def test_grid_search_sets_nested_parameters():
    """GridSearchCV clones the estimator and sets ``potentials__n_clusters`` per
    candidate (the clusterers are transductive: the scorer here clusters the test rows)."""
    from sklearn.metrics import adjusted_rand_score
    from sklearn.model_selection import GridSearchCV, KFold

    X, y = _blobs(150)

    def ari_of_fit(est, X_test, y_test):
        return adjusted_rand_score(y_test, clone(est).fit(X_test).labels_)

    search = GridSearchCV(gc.HMRF(gc.potentials.Centroids(2), random_state=0),
                          {"potentials__n_clusters": [2, 3, 4]}, scoring=ari_of_fit,
                          cv=KFold(3, shuffle=True, random_state=0))
    search.fit(X, y)
    assert search.best_params_ == {"potentials__n_clusters": 3}
    assert search.best_estimator_.n_clusters_ == 3


def test_sparse_features_are_features_and_sparse_squares_similarities():
    import scipy.sparse as sp

    X, y = _blobs()
    dense = gc.RDPMeans(n_clusters=3, random_state=0).fit(X).labels_
    np.testing.assert_array_equal(gc.RDPMeans(n_clusters=3, random_state=0).fit(sp.csr_array(X)).labels_, dense)
    W = gc.knn_matrix(X, n_neighbors=5)
    est = gc.SpectralClustering(3, random_state=0).fit(W)
    assert est.problem_.X is None and gc.ari(y, est.labels_) == pytest.approx(1.0)


def test_graph_methods_on_features_build_the_knn_graph():
    X, y = _blobs()
    for est in (gc.SpectralClustering(3, random_state=0), gc.COSC(n_clusters=3, random_state=0)):
        est.fit(X)
        assert gc.ari(y, est.labels_) == pytest.approx(1.0), type(est).__name__
        assert "knn_matrix" in est.result_.info["graph"]


def test_fitted_attributes_and_pickle():
    X, y = _blobs()
    est = gc.HMRF(gc.potentials.Centroids(3), random_state=0).fit(X)
    assert est.n_features_in_ == 2 and est.n_iter_ == est.result_.info["iterations"] >= 1
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.labels_, est.labels_)


def test_every_public_estimator_is_checked():
    import inspect

    from graphclust.base import ClusteringEstimator

    public = {name for name, obj in vars(gc).items() if inspect.isclass(obj) and issubclass(obj, ClusteringEstimator)}
    assert public == {type(e).__name__ for e in _estimators()}


@pytest.mark.parametrize("make", [
    lambda: gc.HMRF(gc.potentials.Centroids(3), random_state=0),
    lambda: gc.HMRF(gc.potentials.Centroids(3, distortion="mahalanobis"), random_state=0),
    lambda: gc.RDPMeans(n_clusters=3, random_state=0),
    lambda: gc.DPMeans(n_clusters=3, random_state=0),
    lambda: gc.AutoCluster(3, random_state=0),
])
def test_predict_places_new_points_with_the_fitted_clusters(make):
    """New points drawn from the same blobs get the label of their blob's training
    points, and the training points themselves get their own labels back."""
    X, y = _blobs(90, seed=0)
    est = make().fit(X, sideinfo=gc.SideInfo.sample(y, 60, random_state=0))
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    X_new, y_new = _blobs(30, seed=1)
    blob_label = {c: np.bincount(est.labels_[y == c]).argmax() for c in range(3)}
    np.testing.assert_array_equal(est.predict(X_new), [blob_label[c] for c in y_new])
    with pytest.raises(gc.errors.InvalidFeaturesError, match="X has 3 features, but .* expecting 2"):
        est.predict(np.zeros((2, 3)))


def test_predict_maps_the_method_clusters_to_the_canonical_labels():
    """HMRF's provider keeps its own cluster order; predict answers in labels_ order,
    even when the provider's first cluster is not the first in node order."""
    X, _ = _blobs(60, seed=2)
    order = np.argsort(-X[:, 1])  # a node order unlike the provider's
    est = gc.HMRF(gc.potentials.Centroids(3), random_state=0).fit(X[order])
    raw = np.argmin(est.potentials_.unary(gc.Problem.from_array(X[order])), axis=1)
    assert not np.array_equal(raw, est.labels_)  # the two orders differ here
    np.testing.assert_array_equal(est.predict(X[order]), est.labels_)


def test_estimators_without_predict_say_why():
    X, _ = _blobs()
    for est in (gc.COSC(n_clusters=3, random_state=0), gc.SpectralClustering(3, random_state=0)):
        est.fit(X)
        assert not hasattr(est, "predict")
        with pytest.raises(AttributeError, match="is transductive: .* fit .* on the old and new points together"):
            est.predict(X)


def test_a_dataframe_index_names_the_nodes():
    pd = pytest.importorskip("pandas")
    X, y = _blobs(30)
    frame = pd.DataFrame(X, columns=["width", "height"], index=[f"item{i}" for i in range(30)])
    S = gc.SideInfo.from_pairs(must=[("item0", "item1")], cannot=[("item0", "item29")])
    est = gc.HMRF(gc.potentials.Centroids(3), random_state=0).fit(frame, S)
    assert est.nodes_ == list(frame.index) and set(est.partition_) == set(frame.index)
    assert est.partition_["item0"] == est.partition_["item1"] != est.partition_["item29"]
    assert list(est.feature_names_in_) == ["width", "height"]
    np.testing.assert_array_equal(est.labels_, gc.HMRF(gc.potentials.Centroids(3), random_state=0).fit(
        X, gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 29)])).labels_)
