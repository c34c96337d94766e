"""HMRF with parts written outside the package: a provider in this file (k-medians,
L1 costs, batch access only) and an engine registered from here. Neither needs a change
to graphclust; what they lack is refused when ``fit`` starts, by name."""

import itertools

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import InvalidParameterError
from graphclust.inference import ENGINES, InferenceResult, register_engine
from graphclust.potentials.base import NodePotentials
from graphclust.sideinfo import check_constraints


class Medians(NodePotentials):
    """k-medians: cost ``c_i ‖x̄_i − m_k‖₁``, medians re-estimated per coordinate."""

    def __init__(self, n_clusters=2):
        self.n_clusters = n_clusters

    def initialize(self, problem, seeds, rng):
        self.medians_ = np.array(seeds, dtype=float)

    def unary(self, problem):
        Y, counts = self.points(problem)
        return counts[:, None] * np.abs(Y[:, None, :] - self.medians_[None]).sum(-1)

    def update(self, problem, labels, **penalty_terms):
        Y, _ = self.points(problem)
        for k in range(self.n_clusters):
            if (labels == k).any():
                self.medians_[k] = np.median(Y[labels == k], axis=0)


def two_blobs(rng, n=30):
    X = np.concatenate([rng.normal(0, 0.3, (n // 2, 2)), rng.normal(3, 0.3, (n - n // 2, 2))])
    return X, np.repeat([0, 1], [n // 2, n - n // 2])


def test_outside_provider_flags_and_defaults():
    assert not Medians.has_pair_distortion and not Medians.has_incremental
    assert gc.potentials.Centroids.has_pair_distortion
    m = Medians(3)
    assert m.get_params() == {"n_clusters": 3} and m.clone().n_clusters == 3 and m.clone() is not m
    assert repr(Medians(3)) == "Medians(n_clusters=3)"


def test_outside_provider_clusters_with_constant_penalties(rng):
    X, y = two_blobs(rng)
    S = gc.SideInfo.sample(y, n_pairs=20, random_state=0)
    provider = Medians(2)
    est = gc.HMRF(provider, penalty="constant", random_state=0).fit(X, S)
    assert gc.ari(y, est.labels_) == 1.0
    assert est.result_.violations.n_violated == 0
    assert not hasattr(provider, "medians_"), "HMRF must fit a clone, never the given provider"
    assert est.potentials_.medians_.shape == (2, 2)
    # EM on a fixed metric: the objective never rises
    assert np.all(np.diff(est.result_.history) <= 1e-9 * np.abs(est.result_.history[:-1]))


def test_missing_capability_is_refused_by_name_before_any_work(rng):
    X, y = two_blobs(rng)
    S = gc.SideInfo.from_pairs(must=[(0, 1)])
    with pytest.raises(InvalidParameterError, match="Medians does not provide .*pair_distortion.*penalty='constant'"):
        gc.HMRF(Medians(2), penalty="distance").fit(X, S)
    # without constraints there is nothing to scale: the default penalty is fine
    gc.HMRF(Medians(2), random_state=0).fit(X)


@pytest.fixture
def enumeration_engine():
    calls = []

    @register_engine("test-enumeration", exact=True, max_nodes=10)
    def enumerate_all(energy, init=None, random_state=None, **options):
        Z = np.array(list(itertools.product(range(energy.n_labels), repeat=energy.n_nodes)))
        values = np.array([energy.evaluate(z) for z in Z])
        best = Z[int(np.argmin(values))]
        calls.append(energy.n_nodes)
        return InferenceResult(labels=best, energy=float(values.min()), lower_bound=float(values.min()))

    yield calls
    del ENGINES["test-enumeration"]


def test_engine_registered_outside_serves_hmrf(enumeration_engine, rng):
    X = np.array([[0.0, 0.0], [0.3, 0.1], [2.0, 2.1], [2.2, 1.9], [1.1, 1.0], [4.0, 4.0], [4.1, 3.9]])
    S = gc.SideInfo.from_pairs(must=[(4, 2)], cannot=[(0, 4), (2, 5)], weight=5.0)
    ours = gc.HMRF(gc.potentials.Centroids(3), inference="exact", random_state=0).fit(X, S)
    theirs = gc.HMRF(gc.potentials.Centroids(3), inference="test-enumeration", random_state=0).fit(X, S)
    assert enumeration_engine, "the registered engine was never called"
    np.testing.assert_array_equal(theirs.labels_, ours.labels_)
    assert theirs.result_.objective == pytest.approx(ours.result_.objective)


def _brute_closure(n, pairs, weights):
    """Every pair inside a must-link component, every pair across cannot-linked ones."""
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(p for p, w in zip(pairs, weights) if w > 0)
    comp = {u: i for i, c in enumerate(nx.connected_components(G)) for u in c}
    must = {(a, b) for a in range(n) for b in range(a + 1, n) if comp[a] == comp[b]}
    bad = {frozenset((comp[u], comp[v])) for (u, v), w in zip(pairs, weights) if w < 0}
    cannot = {(a, b) for a in range(n) for b in range(a + 1, n) if frozenset((comp[a], comp[b])) in bad}
    return must, cannot


def test_default_closure_is_the_brute_force_closure(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    for _ in range(20):
        n = int(rng.integers(3, 9))
        all_pairs = list(itertools.combinations(range(n), 2))
        m = int(rng.integers(1, min(8, len(all_pairs)) + 1))
        chosen = [all_pairs[i] for i in rng.choice(len(all_pairs), m, replace=False)]
        strength = rng.uniform(0.5, 2.0, m)
        sign = np.where(rng.random(m) < 0.6, 1.0, -1.0)
        must, cannot = _brute_closure(n, chosen, sign)
        if must & cannot:  # inconsistent draws: closure is not defined; skip
            continue
        X = rng.normal(size=(n, 2))
        S = gc.SideInfo([(u, v, s * w) for (u, v), s, w in zip(chosen, sign, strength)])
        problem = gc.Problem.from_array(X, S)
        report = check_constraints(problem.nodes, problem.constraints, problem.constraint_weights)
        pairs, w, info = gc.HMRF()._estep_constraints(problem, report)
        got_must = {tuple(p) for p in pairs[w > 0].tolist()}
        got_cannot = {tuple(p) for p in pairs[w < 0].tolist()}
        assert got_must == must and got_cannot == cannot
        assert info["closure"] and info["n_must_closure"] == len(must) and info["n_cannot_closure"] == len(cannot)
        given = {tuple(p): x for p, x in zip(problem.constraints.tolist(), problem.constraint_weights)}
        weakest_must = min((x for x in given.values() if x > 0), default=1.0)
        weakest_cannot = min((-x for x in given.values() if x < 0), default=1.0)
        for p, x in zip(pairs.tolist(), w):
            expected = given.get(tuple(p), weakest_must if x > 0 else -weakest_cannot)
            assert x == expected
        # and the fitted estimator reports the same closure
        est = gc.HMRF(gc.potentials.Centroids(2), inference="exact", random_state=0).fit(X, S)
        assert est.result_.info["n_must_closure"] == len(must)
