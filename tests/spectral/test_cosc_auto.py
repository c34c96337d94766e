"""COSC mode="auto" (the default): hard when the constraints allow it and the held-out
constraints do not reject it, soft at a cross-validated price otherwise; and the k-NN
graph COSC builds from features."""

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import InfeasibleConstraintsError, TooFewClustersError
from graphclust.metrics import ari
from graphclust.spectral import cosc as cosc_module
from graphclust.spectral.cosc import AUTO_GAMMA_DEFAULT, AUTO_GAMMA_FACTORS, COSC


def blobs(n=60, k=2, separation=6.0, seed=0):
    return gc.datasets.make_blobs(n, k, separation=separation, random_state=seed)


def test_default_mode_is_auto():
    assert COSC().mode == "auto"


def test_inconsistent_constraints_give_k_clusters_instead_of_an_error():
    G = nx.path_graph(5)
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)])
    with pytest.raises(InfeasibleConstraintsError):
        COSC(mode="hard", random_state=0).fit(G, S)
    est = COSC(random_state=0).fit(G, S)
    info = est.result_.info
    assert est.n_clusters_ == 2
    assert info["mode"] == "soft" and "cannot-link(s) inside must-link components" in info["mode_reason"]
    assert "0 - 1 - 2" in info["mode_reason"]
    # too few constraints to cross-validate: the documented default price
    assert info["gamma"] == pytest.approx(AUTO_GAMMA_DEFAULT * info["gamma_scale"])
    assert info["gamma_scale"] == pytest.approx(nx.to_numpy_array(G).sum() / 5)


def test_noisy_sampled_draw_that_hard_mode_refuses_is_clustered():
    X, y = blobs(90, 3, seed=1)
    S = gc.SideInfo.sample(y, n_pairs=200, noise=0.2, random_state=0)
    assert S.check().conflicts  # the draw is inconsistent
    with pytest.raises(InfeasibleConstraintsError):
        COSC(3, mode="hard", random_state=0).fit(X, S)
    est = COSC(3, random_state=0).fit(X, S)
    info = est.result_.info
    assert est.n_clusters_ == 3
    assert info["mode"] == "soft" and "hard" not in info["constraint_cv"]
    assert ari(y, est.labels_) > 0.9


def test_odd_cannot_link_cycle_with_two_clusters_is_clustered():
    G = nx.cycle_graph(6)
    S = gc.SideInfo.from_pairs(must=[(4, 5)], cannot=[(0, 2), (2, 4), (5, 0)])
    with pytest.raises(TooFewClustersError, match="odd cycle"):
        COSC(mode="hard", random_state=0).fit(G, S)
    est = COSC(random_state=0).fit(G, S)
    assert est.n_clusters_ == 2
    assert est.result_.info["mode"] == "soft" and "odd cycle" in est.result_.info["mode_reason"]
    # a 2-partition keeps at most two of the three cannot-links of the triangle
    assert est.result_.violations.n_violated >= 1


def test_few_consistent_constraints_take_the_hard_path():
    G = nx.barbell_graph(5, 0)
    S = gc.SideInfo.from_pairs(must=[(0, 9)], cannot=[(0, 1)])
    est = COSC(random_state=0).fit(G, S)
    assert est.result_.info["mode"] == "hard"
    assert "fewer than 10" in est.result_.info["mode_reason"]  # no cross-validation
    assert est.result_.violations.n_violated == 0
    hard = COSC(mode="hard", random_state=0).fit(G, S)
    np.testing.assert_array_equal(est.labels_, hard.labels_)


@pytest.mark.parametrize("seed", [0, 1])
def test_many_clean_constraints_take_the_hard_path_and_hold(seed):
    X, y = gc.datasets.make_moons(120, noise=0.12, random_state=seed)
    S = gc.SideInfo.sample(y, n_pairs=80, random_state=seed)
    est = COSC(random_state=seed).fit(X, S)
    info = est.result_.info
    assert "hard" in info["constraint_cv"]  # cross-validated, hard among the candidates
    assert info["mode"] == "hard"
    assert est.result_.violations.n_violated == 0


def test_without_constraints_auto_is_the_unconstrained_hard_run():
    X, y = blobs(seed=2)
    est = COSC(random_state=0).fit(X)
    assert est.result_.info["mode"] == "hard" and est.result_.info["mode_reason"].startswith("no constraints")
    assert ari(y, est.labels_) == 1.0


class FakeCV:
    """Stands in for cross_validate_constraints: records the candidates; candidate
    ``c`` keeps every held-out constraint except, of each kind, those at the fractions
    ``drops[c] = (lo, hi)`` of the constraints of that kind (``None``: all kept)."""

    def __init__(self, drops=None):
        self.drops = drops
        self.candidates = None

    def __call__(self, fit_labels, problem, candidates, *, n_folds, random_state, return_kept):
        self.candidates = list(candidates)
        w = problem.constraint_weights
        kept = np.ones((len(candidates), len(w)), dtype=bool)
        if self.drops is not None:
            assert len(candidates) == len(self.drops)
            for kind in (np.flatnonzero(w > 0), np.flatnonzero(w < 0)):
                for c, (lo, hi) in enumerate(self.drops):
                    kept[c, kind[round(lo * len(kind)):round(hi * len(kind))]] = False
        scores = 0.5 * (kept[:, w > 0].mean(axis=1) + kept[:, w < 0].mean(axis=1))
        return scores, kept


@pytest.mark.parametrize("drops, expected", [
    # hard keeps far more held-out constraints than the data alone
    ([(0, .03), (0, .1), (0, .2), (0, .3), (0, .5), (0, .6)], 0),
    # a middle price is the best that uses them, clearly ahead of the data alone
    ([(0, .4), (0, .2), (0, .05), (0, .3), (0, .5), (0, .6)], 2),
    # hard is best but keeps only a few more, on pairs where the two differ either way:
    # within one paired standard error of the data alone, which wins
    ([(0, .1), (0, .2), (0, .3), (0, .4), (.1, .23), (0, .5)], 4),
    # of the two readings of the data alone, k-means keeps more
    ([(0, .6), (0, .6), (0, .6), (0, .6), (0, .5), (0, .03)], 5),
])
def test_constraints_are_used_only_when_they_beat_the_data_alone(monkeypatch, drops, expected):
    X, y = blobs(80, 2, seed=3)
    S = gc.SideInfo.sample(y, n_pairs=120, random_state=0)
    P = gc.Problem.from_array(X, S)
    fake = FakeCV(drops)
    monkeypatch.setattr(cosc_module, "cross_validate_constraints", fake)
    est = COSC(random_state=0).fit(P)
    info = est.result_.info
    # the candidates: hard (consistent constraints), then the soft prices strongest
    # first in units of the mean weighted degree of the k-NN graph, then the data
    # alone: the graph's cut (gamma = 0) and k-means on the features
    scale = est.affinity_matrix_.sum() / P.n_nodes
    assert info["gamma_scale"] == pytest.approx(scale)
    grid = ([("hard", None)] + [("soft", pytest.approx(f * scale)) for f in AUTO_GAMMA_FACTORS]
            + [("soft", 0.0), ("kmeans", None)])
    assert fake.candidates == grid
    mode, gamma = fake.candidates[expected]
    assert info["mode"] == mode
    if mode == "soft":
        assert info["gamma"] == pytest.approx(gamma)
    elif mode == "hard":
        assert est.result_.violations.n_violated == 0
    assert list(info["constraint_cv"].values()) == pytest.approx(fake(None, P, grid, n_folds=3, random_state=None,
                                                                      return_kept=True)[0].tolist())
    assert ("data alone" in info["mode_reason"]) and (("more than one" in info["mode_reason"]))


def test_inconsistent_constraints_no_better_than_coin_flips_are_ignored(monkeypatch):
    X, y = blobs(80, 2, seed=4)
    S = gc.SideInfo.sample(y, n_pairs=120, noise=0.5, random_state=0)
    assert S.check().conflicts
    P = gc.Problem.from_array(X, S)
    # the strongest price keeps 55 %: far more than the data alone, not 2 null
    # standard errors above 1/2
    fake = FakeCV([(0, .45), (0, .6), (0, .6), (0, .6), (0, .6)])
    monkeypatch.setattr(cosc_module, "cross_validate_constraints", fake)
    est = COSC(random_state=0).fit(P)
    assert fake.candidates[0][0] == "soft"  # hard is no candidate
    assert est.result_.info["mode"] == "soft" and est.result_.info["gamma"] == 0.0
    assert "coin flips" in est.result_.info["mode_reason"]
    fake.drops = [(0, .25), (0, .6), (0, .6), (0, .6), (0, .6)]  # 75 %: clearly above chance, kept
    est = COSC(random_state=0).fit(P)
    assert est.result_.info["gamma"] == pytest.approx(AUTO_GAMMA_FACTORS[0] * est.result_.info["gamma_scale"])


def test_user_gamma_is_the_only_soft_price_tried(monkeypatch):
    X, y = blobs(80, 2, seed=5)
    S = gc.SideInfo.sample(y, n_pairs=120, random_state=0)
    P = gc.Problem.from_array(X, S)
    fake = FakeCV([(0, .2), (0, .05), (0, .5), (0, .5)])
    monkeypatch.setattr(cosc_module, "cross_validate_constraints", fake)
    est = COSC(gamma=2.5, random_state=0).fit(P)
    assert fake.candidates == [("hard", None), ("soft", 2.5), ("soft", 0.0), ("kmeans", None)]
    assert est.result_.info["mode"] == "soft" and est.result_.info["gamma"] == 2.5


def test_auto_soft_splits_of_many_class_clusters_price_must_links_only(monkeypatch):
    # three cliques; the first split of a 3-cluster problem cannot satisfy every
    # cannot-link, so auto's soft path leaves them to the split that decides them
    G = nx.disjoint_union_all([nx.complete_graph(6)] * 3)
    G.add_edges_from([(0, 6), (6, 12), (12, 0)])
    # a conflict (0 - 1 - 2 against 0 cannot 2) makes auto go soft
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2), (1, 7), (7, 13), (2, 14)])
    seen = []
    two_way = COSC._two_way

    def spy(self, W, b, pairs, cw, nodes, rng, derive, target=0):
        seen.append((self.mode, W.shape[0], np.asarray(cw).copy()))
        return two_way(self, W, b, pairs, cw, nodes, rng, derive, target)

    monkeypatch.setattr(COSC, "_two_way", spy)
    COSC(3, mode="soft", gamma=1.0, random_state=0).fit(G, S)
    first_soft = seen[0]
    assert first_soft[1] == 18 and (first_soft[2] < 0).any()  # mode="soft" prices them as before
    seen.clear()
    est = COSC(3, random_state=0).fit(G, S)
    assert est.result_.info["mode"] == "soft"
    first_auto = seen[0]
    assert first_auto[1] == 18 and not (first_auto[2] < 0).any() and (first_auto[2] > 0).any()


def test_features_without_a_graph_get_the_self_tuning_knn_graph():
    X, y = blobs(60, 2, seed=6)
    S = gc.SideInfo.sample(y, n_pairs=20, random_state=0)
    est = COSC(random_state=0).fit(X, S)
    W = gc.knn_matrix(X, 10, bandwidth="self-tuning")
    assert (abs(est.affinity_matrix_ - W)).max() == 0
    assert est.result_.info["graph"] == "knn_matrix(X, n_neighbors=10, bandwidth='self-tuning')"
    assert ari(y, est.labels_) == 1.0
    small = COSC(n_neighbors=3, random_state=0).fit(X, S)
    assert small.affinity_matrix_.nnz < W.nnz and "n_neighbors=3" in small.result_.info["graph"]


def test_a_given_graph_is_used_as_it_is():
    G = nx.barbell_graph(4, 0)
    est = COSC(random_state=0).fit(G)
    assert "graph" not in est.result_.info
    assert (abs(est.affinity_matrix_ - nx.to_scipy_sparse_array(G))).max() == 0


def test_the_data_alone_is_fitted_once_for_all_folds(monkeypatch):
    # gamma = 0 ignores the soft constraints, so the folds cannot change its answer
    X, y = blobs(80, 2, seed=4)
    S = gc.SideInfo.sample(y, n_pairs=120, noise=0.1, random_state=0)
    P = gc.Problem.from_array(X, S)
    seen = []
    fit_mode = COSC._fit_mode

    def spy(self, problem, rng):
        seen.append((self.mode, self.gamma, len(problem.constraints)))
        return fit_mode(self, problem, rng)

    monkeypatch.setattr(COSC, "_fit_mode", spy)
    est = COSC(random_state=0).fit(P)
    graph_cands = [c for c in est.result_.info["constraint_cv"] if c != "kmeans"]
    assert est.result_.info["mode"] != "kmeans"
    n_cv = len(seen) - 1  # the last fit is the refit of the choice on all constraints
    alone = [s for s in seen[:n_cv] if s[0] == "soft" and s[1] == 0.0]
    assert len(alone) == 1 and alone[0][2] == 0  # one fit, without the soft constraints
    assert n_cv == 3 * (len(graph_cands) - 1) + 1
    assert seen[-1][2] == len(P.constraints)


def test_features_make_k_means_a_candidate_the_constraints_can_choose(monkeypatch):
    # the data alone has two readings when COSC builds the graph: the graph's cut
    # (gamma = 0) and the features' k-means; held-out constraints choose between them
    X, y = blobs(80, 3, seed=7)
    S = gc.SideInfo.sample(y, n_pairs=150, noise=0.2, random_state=1)
    fake = FakeCV([(0, .4), (0, .4), (0, .4), (0, .4), (0, .3)])  # inconsistent: no hard candidate
    monkeypatch.setattr(cosc_module, "cross_validate_constraints", fake)
    est = COSC(3, random_state=0).fit(X, S)
    assert fake.candidates[-2:] == [("soft", 0.0), ("kmeans", None)]
    info = est.result_.info
    assert info["mode"] == "kmeans" and info["constraint_cv"]["kmeans"] == pytest.approx(0.7, abs=0.01)
    assert ari(y, est.labels_) == 1.0 and est.n_clusters_ == 3
    assert est.result_.objective >= 0 and est.cut_value_ > 0
    # with a given graph, or hard constraints k-means would ignore, it is no candidate
    fake.drops = None
    G = nx.from_scipy_sparse_array(gc.knn_matrix(X, 10))
    assert COSC(3, random_state=0).fit(G, S).result_.info["mode"] == "soft"
    assert fake.candidates[-1] == ("soft", 0.0)
    same = next((a, b) for a in range(len(y)) for b in range(a + 1, len(y)) if y[a] == y[b])
    hard = gc.SideInfo.from_pairs(must=[(a, b) for a, b, _ in S.must_links()] + [(*same, np.inf)],
                                  cannot=[(a, b) for a, b, _ in S.cannot_links()])
    COSC(3, random_state=0).fit(X, hard)
    assert fake.candidates[-1] == ("soft", 0.0)
