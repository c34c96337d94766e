"""The estimator contract, run on every registered method."""

import pickle

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.base import METHODS, check_is_fitted
from graphclust.errors import InvalidParameterError, NotFittedError


def two_cliques():
    """Two 5-cliques joined by one edge, nodes carrying 2-D features of two blobs (so
    graph-based and feature-based methods both apply)."""
    G = nx.barbell_graph(5, 0)
    offsets = np.random.default_rng(0).normal(scale=0.1, size=(10, 2))
    nx.set_node_attributes(G, {u: (offsets[u] + (0.0 if u < 5 else 3.0)).tolist() for u in G}, "features")
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 9)])
    return G, S


@pytest.fixture(params=sorted(METHODS))
def estimator(request):
    factory, _ = METHODS[request.param]
    return factory(n_clusters=2, random_state=0)


def test_fit_returns_self_and_aligned_results(estimator):
    G, S = two_cliques()
    assert estimator.fit(G, S) is estimator
    assert estimator.nodes_ == list(G.nodes)
    assert estimator.labels_.shape == (10,)
    assert estimator.partition_ == dict(zip(G.nodes, estimator.labels_.tolist()))
    # labels are consecutive integers from 0
    assert set(estimator.labels_.tolist()) == set(range(estimator.n_clusters_))
    assert estimator.result_.seconds >= 0


def test_same_seed_same_labels_and_clone(estimator):
    G, S = two_cliques()
    from sklearn.base import clone

    a = estimator.fit_predict(G, S)
    np.testing.assert_array_equal(clone(estimator).fit(G, S).labels_, a)
    np.testing.assert_array_equal(estimator.clone().fit(G, S).labels_, a)


def test_unfitted_access_raises(estimator):
    with pytest.raises(NotFittedError, match=type(estimator).__name__):
        check_is_fitted(estimator)


def test_pickle_round_trip(estimator):
    G, S = two_cliques()
    estimator.fit(G, S)
    again = pickle.loads(pickle.dumps(estimator))
    np.testing.assert_array_equal(again.labels_, estimator.labels_)


def test_node_renaming_invariance(estimator):
    G, S = two_cliques()
    a = estimator.fit_predict(G, S)
    names = {u: f"v{u}" for u in G}
    H = nx.relabel_nodes(G, names)
    T = gc.SideInfo([(names[u], names[v], w) for u, v, w in S.edges()])
    np.testing.assert_array_equal(estimator.clone().fit_predict(H, T), a)


def test_set_params_rejects_unknown(estimator):
    with pytest.raises(InvalidParameterError, match="has no parameter 'bogus'"):
        estimator.set_params(bogus=1)


def test_repr_shows_changed_params(estimator):
    assert type(estimator).__name__ in repr(estimator)


#: estimators whose result_.history is the objective they minimise after every outer
#: iteration (EM step, pass, split), ending at result_.objective
OBJECTIVE_HISTORY = ["hmrf", "rdpmeans", "dpmeans", "cosc"]


@pytest.mark.parametrize("name", OBJECTIVE_HISTORY)
def test_history_is_the_objective_per_iteration_and_callback_stops(name):
    factory, _ = METHODS[name]
    G, S = two_cliques()
    est = factory(n_clusters=2, random_state=0)
    est.fit(G, S)
    assert len(est.result_.history) >= 1 and est.result_.history[-1] == pytest.approx(est.result_.objective)
    seen = []
    est.set_params(callback=lambda it, labels, J: seen.append((it, labels.shape, J)) or True, progress=False)
    est.fit(G, S)
    assert seen == [(1, (10,), est.result_.history[0])] and len(est.result_.history) == 1


def test_cosc_reports_every_split_and_stops_when_asked():
    G = nx.disjoint_union_all([nx.complete_graph(4) for _ in range(4)])
    G.add_edges_from([(3, 4), (7, 8), (11, 12)])
    est = gc.COSC(n_clusters=4, random_state=0).fit(G)
    assert len(est.result_.history) == 3 and est.result_.history[-1] == pytest.approx(est.result_.objective)
    seen = []
    stopped = gc.COSC(n_clusters=4, random_state=0,
                      callback=lambda step, labels, J: seen.append((step, int(labels.max()) + 1, J)) or step == 2)
    stopped.fit(G)
    assert [s[:2] for s in seen] == [(1, 2), (2, 3)] and stopped.n_clusters_ == 3
    assert [s[2] for s in seen] == pytest.approx(est.result_.history[:2])


def test_a_plain_graph_is_clustered_or_refused_naming_the_graph_methods(estimator):
    """On a graph without node features, a method clusters it or says which ones would."""
    G = nx.barbell_graph(5, 0)
    S = gc.SideInfo.from_pairs(must=[(0, 1)], cannot=[(0, 9)])
    if estimator._needs_features():
        with pytest.raises(gc.errors.InvalidFeaturesError,
                           match=f"{type(estimator).__name__} needs node features.*COSC, SpectralClustering, DCP"):
            estimator.fit(G, S)
    else:
        assert estimator.fit(G, S).labels_.shape == (10,)


def test_methods_command_says_which_input_each_method_takes(capsys):
    from graphclust.cli import main

    assert main(["methods"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert set(rows) == set(METHODS)
    for name, line in rows.items():
        needs = METHODS[name][0](n_clusters=2, random_state=0)._needs_features()
        assert ("node features" in line) == needs and ("graph or features" in line) == (not needs), line
