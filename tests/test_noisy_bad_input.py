"""Issue #26's bad input for the noise-aware defaults: constraints that are all wrong,
must-links only, a must-link graph that joins every node, constraints on a handful of
nodes, and reliabilities outside (0, 1). Each answer is held to plain k-means on the
same data (standardised wine, 178 points, 3 classes; k-means pairwise F 0.93)."""

import warnings

import numpy as np
import pytest
from sklearn.cluster import KMeans

import graphclust as gc
from graphclust.errors import InvalidParameterError
from graphclust.potentials import Centroids
from graphclust.selection import cross_validate_constraints, split_fraction


@pytest.fixture(scope="module")
def wine():
    X, y = gc.datasets.load_wine()
    X = (X - X.mean(0)) / X.std(0)
    return X, y, gc.pairwise_f_measure(y, KMeans(3, n_init=10, random_state=0).fit_predict(X))


def must_links_only(S):
    return gc.SideInfo([(u, v, w) for u, v, w in S.edges() if w > 0])


DEFAULTS = {
    "hmrf": lambda: gc.HMRF(Centroids(3), random_state=0),
    "rdpmeans": lambda: gc.RDPMeans(n_clusters=3, random_state=0),
}


def test_all_constraints_wrong_gives_the_datas_clustering_and_says_so(wine):
    """Every pair's type flipped: held out, they are kept by the data's own clustering
    far less often than coin flips would; HMRF ignores them (factor 0) and warns that
    must-links and cannot-links may be swapped."""
    X, y, f_kmeans = wine
    S = gc.SideInfo.sample(y, n_pairs=300, noise=1.0, random_state=0)
    with pytest.warns(UserWarning, match="contradicts the data.*swapped"):
        est = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    assert est.result_.info["constraint_weight"] == 0.0
    assert est.result_.info["constraints_contradict_data"]
    assert gc.pairwise_f_measure(y, est.labels_) >= f_kmeans - 0.02
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        entry = gc.cluster(X, S, n_clusters=3, random_state=0)
    assert gc.pairwise_f_measure(y, entry.labels_) >= f_kmeans - 0.02


@pytest.mark.parametrize("method", sorted(DEFAULTS))
def test_noisy_must_links_only(wine, method):
    """600 pairs, 10 % flipped, cannot-links dropped: the must-links chain into one
    component over most nodes, so the closure (and full strength) would merge the
    classes; random pairs stand in for the missing cannot-links in the cross-validation.
    Before, HMRF scored F 0.50 on the first draw."""
    X, y, f_kmeans = wine
    scores = []
    for seed in (1, 2, 3):
        S = must_links_only(gc.SideInfo.sample(y, n_pairs=600, noise=0.1, random_state=seed))
        # one component holds most of the constrained nodes, across all three classes
        report = gc.SideInfo.check(S)
        assert max(map(len, report.components)) > 0.9 * len(report.nodes)
        est = DEFAULTS[method]().fit(X, S)
        assert est.n_clusters_ == 3
        scores.append(gc.pairwise_f_measure(y, est.labels_))
    assert min(scores) > 0.85 and np.mean(scores) >= f_kmeans - 0.02, scores


def test_a_must_link_chain_through_every_node(wine):
    """Must-links along a random order of all nodes (two thirds join different classes):
    consistent, but one group where k = 3 are asked for. Not one cluster: no strength
    keeps held-out links better than coin flips, so the data decide."""
    X, y, f_kmeans = wine
    order = np.random.default_rng(0).permutation(len(y))
    S = gc.SideInfo([(int(a), int(b), 1.0) for a, b in zip(order[:-1], order[1:])])
    est = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    assert est.n_clusters_ == 3 and est.result_.info["constraint_weight"] == 0.0
    assert gc.pairwise_f_measure(y, est.labels_) >= f_kmeans - 0.02


def test_constraints_on_a_handful_of_nodes(wine):
    X, y, f_kmeans = wine
    S = gc.SideInfo([(0, 1, 1.0), (0, 100, -1.0), (1, 170, -1.0), (2, 3, 1.0)])
    for est in (DEFAULTS["hmrf"](), DEFAULTS["rdpmeans"](), gc.AutoCluster(n_clusters=3, random_state=0)):
        est.fit(X, S)
        assert est.n_clusters_ == 3
        assert gc.pairwise_f_measure(y, est.labels_) >= f_kmeans - 0.02
        assert est.labels_[0] == est.labels_[1] != est.labels_[100]


@pytest.mark.parametrize("make, message", [
    (lambda y: gc.TVClust(p=1.5), "p of TVClust is a probability and must lie strictly between 0 and 1"),
    (lambda y: gc.TVClust(q=0.0), "q of TVClust is a probability and must lie strictly between 0 and 1"),
    (lambda y: gc.rdpmeans.xi_from_pq(2.0, 0.9), "p_link must lie strictly between 0 and 1"),
    (lambda y: gc.SideInfo.sample(y, 50, noise=1.5), "noise must be <= 1.0"),
    (lambda y: gc.SideInfo.sample(y, 50, noise=-0.1), "noise must be >= 0.0"),
])
def test_reliability_outside_the_unit_interval_is_refused(wine, make, message):
    X, y, _ = wine
    S = gc.SideInfo.sample(y, 20, random_state=0)
    with pytest.raises(InvalidParameterError, match=message):
        est = make(y)
        est.fit(X, S)


def test_random_pairs_stand_in_for_missing_cannot_links():
    """Scored on must-links alone, one cluster would keep them all; the split fraction
    of the fit takes the cannot-links' place in the balanced score."""
    X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (3, 4), (4, 5)])
    problem = gc.Problem.from_array(X, S)

    def fit(split_at, train, seed):
        return (train.X[:, 0] > split_at).astype(int)

    scores = cross_validate_constraints(fit, problem, [2.5, 10.0], n_folds=2, random_state=0)
    # all must-links kept by both; the two-cluster answer splits 9 of 15 pairs, one cluster none
    assert scores == pytest.approx([(1.0 + 9 / 15) / 2, 0.5])
    assert split_fraction([0, 0, 1, 1, 1, 1]) == pytest.approx(8 / 15)
