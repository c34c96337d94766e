"""COSC mode="auto" (the default): hard when the constraints allow it and the held-out
constraints do not reject it, soft at a cross-validated price otherwise; and the k-NN
graph COSC builds from features."""

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import InfeasibleConstraintsError, TooFewClustersError
from graphclust.metrics import ari
from graphclust.selection import paired_standard_error
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
    """Stands in for cross_validate_constraints: records the candidates and returns
    chosen scores and kept-arrays."""

    def __init__(self, kept):
        self.kept = np.asarray(kept, dtype=bool)
        self.candidates = None

    def __call__(self, fit_labels, problem, candidates, *, n_folds, random_state, return_kept):
        self.candidates = list(candidates)
        assert return_kept and len(candidates) == len(self.kept)
        w = problem.constraint_weights
        must = w > 0
        scores = 0.5 * (self.kept[:, must].mean(axis=1) + self.kept[:, ~must].mean(axis=1))
        return scores, self.kept


def kept_pattern(w, drops):
    """Kept-arrays: candidate ``c`` keeps every held-out constraint except the
    must-links and the cannot-links at positions ``range(*drops[c])`` of their kind."""
    kept = np.ones((len(drops), len(w)), dtype=bool)
    for kind in (np.flatnonzero(w > 0), np.flatnonzero(w < 0)):
        for c, (lo, hi) in enumerate(drops):
            kept[c, kind[lo:hi]] = False
    return kept


# two candidates that disagree on a few constraints either way differ by less than one
# paired standard error; nested ones by more
@pytest.mark.parametrize("drops, expected", [
    ([(10, 30), (4, 10), (0, 4), (10, 40), (0, 50)], 1),  # the second price is best, the first within one SE
    ([(4, 10), (0, 4), (10, 30), (10, 40), (0, 50)], 0),  # the first price is best, hard within one SE
    ([(2, 40), (2, 30), (2, 20), (2, 10), (0, 2)], 4),  # the data alone is best, by more than one SE
])
def test_choice_is_the_strongest_candidate_within_one_paired_standard_error(monkeypatch, drops, expected):
    X, y = blobs(80, 2, seed=3)
    S = gc.SideInfo.sample(y, n_pairs=120, random_state=0)
    P = gc.Problem.from_array(X, S)
    w = P.constraint_weights
    fake = FakeCV(kept_pattern(w, drops))
    monkeypatch.setattr(cosc_module, "cross_validate_constraints", fake)
    est = COSC(random_state=0).fit(P)
    info = est.result_.info
    # the candidates: hard (consistent constraints), then the soft prices strongest
    # first in units of the mean weighted degree of the k-NN graph, then 0
    scale = est.affinity_matrix_.sum() / P.n_nodes
    assert info["gamma_scale"] == pytest.approx(scale)
    grid = [("hard", None)] + [("soft", pytest.approx(f * scale)) for f in AUTO_GAMMA_FACTORS] + [("soft", 0.0)]
    assert fake.candidates == grid
    scores, kept = fake(None, P, fake.candidates, n_folds=3, random_state=None, return_kept=True)
    top = int(np.argmax(scores))
    pick = next(c for c in range(len(scores)) if scores[top] - scores[c] <= paired_standard_error(kept[top], kept[c], w))
    assert pick == expected and (pick == 4 or pick < top)
    mode, gamma = fake.candidates[pick]
    assert info["mode"] == mode
    if mode == "soft":
        assert info["gamma"] == pytest.approx(gamma)
    assert list(info["constraint_cv"].values()) == pytest.approx(scores.tolist())


def test_inconsistent_constraints_no_better_than_coin_flips_are_ignored(monkeypatch):
    X, y = blobs(80, 2, seed=4)
    S = gc.SideInfo.sample(y, n_pairs=120, noise=0.5, random_state=0)
    assert S.check().conflicts
    P = gc.Problem.from_array(X, S)
    w = P.constraint_weights
    half = min((w > 0).sum(), (w < 0).sum()) // 2
    fake = FakeCV(kept_pattern(w, [(0, half), (half - 1, 2 * half), (1, half + 1), (2, half + 2)]))
    monkeypatch.setattr(cosc_module, "cross_validate_constraints", fake)
    est = COSC(random_state=0).fit(P)
    assert fake.candidates[0][0] == "soft"  # hard is no candidate
    assert est.result_.info["mode"] == "soft" and est.result_.info["gamma"] == 0.0
    assert "coin flips" in est.result_.info["mode_reason"]


def test_user_gamma_is_the_only_soft_price_tried(monkeypatch):
    X, y = blobs(80, 2, seed=5)
    S = gc.SideInfo.sample(y, n_pairs=120, random_state=0)
    P = gc.Problem.from_array(X, S)
    fake = FakeCV(kept_pattern(P.constraint_weights, [(0, 4), (0, 2), (0, 40)]))
    monkeypatch.setattr(cosc_module, "cross_validate_constraints", fake)
    est = COSC(gamma=2.5, random_state=0).fit(P)
    assert fake.candidates == [("hard", None), ("soft", 2.5), ("soft", 0.0)]
    assert est.result_.info["mode"] in ("hard", "soft")


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
