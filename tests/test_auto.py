"""gc.cluster / AutoCluster: the recommended entry point and its rules."""

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import InvalidParameterError


def _blobs(n=120, k=3, std=1.0, seed=0):
    return gc.datasets.make_blobs(n, n_clusters=k, cluster_std=std, random_state=seed)


@pytest.mark.parametrize("seed", [0, 1])
def test_features_and_k_choose_the_method_by_held_out_constraints(seed):
    # HMRF (held-out constraint weight) and RDP-means nearly tie here (ARI 0.95-1 both):
    # whichever keeps more held-out constraints is chosen, HMRF on a tie
    X, y = _blobs()
    S = gc.SideInfo.sample(y, 300, noise=0.1, random_state=1)
    est = gc.cluster(X, S, n_clusters=3, random_state=seed)
    check_choice(est, 3)
    assert est.choice_["n_clusters_from"] == "given" and est.n_clusters_ == 3
    if isinstance(est.estimator_, gc.HMRF):
        assert "constraint_cv" in est.estimator_.result_.info  # noisy and plentiful: cross-validated
    assert gc.ari(y, est.labels_) > 0.9
    assert est.result_.info["choice"] is est.choice_


def check_choice(est, k):
    """The rules: RDP-means over HMRF when its held-out score is higher and it has k
    clusters; TVClust (merged to k) over both when its score is higher than theirs by
    more than its standard error."""
    scores, choice = est.choice_["method_scores"], est.choice_["method"]
    first = "RDPMeans" if scores["RDPMeans"] > scores["HMRF"] else "HMRF"
    margin = est.choice_.get("tvclust", {}).get("margin", 0.0)
    if "TVClust" in scores and scores["TVClust"] > max(scores["HMRF"], scores["RDPMeans"]) + margin:
        assert choice == "TVClust" and margin > 0
    elif choice != "HMRF":
        assert choice == first
    assert type(est.estimator_).__name__ == choice
    if choice == "TVClust":
        merge = est.choice_["tvclust"]["merge"]
        assert len(merge) == est.estimator_.n_clusters_
        assert merge.max() + 1 == min(k, est.estimator_.n_clusters_) == est.n_clusters_ >= 2
        np.testing.assert_array_equal(est.labels_, merge[est.estimator_.labels_])
        assert est.choice_["noise"].startswith("TVClust: each must-link trusted with probability 0.9")
    else:
        np.testing.assert_array_equal(est.labels_, est.estimator_.labels_)


@pytest.mark.parametrize("k, seed", [
    (2, 2),
    (4, 3),  # failed while the weight choice kept the strongest factor within one SE (before 2026-11-27)
    (5, 4),
])
def test_k_from_held_out_constraints_is_the_true_k_on_separated_blobs(k, seed):
    X, y = _blobs(40 * k, k, std=0.6, seed=seed)
    S = gc.SideInfo.sample(y, 400, noise=0.1, random_state=seed)
    est = gc.cluster(X, S, random_state=0)
    assert est.choice_["n_clusters_from"] == "held-out constraints"
    scores = est.choice_["n_clusters_scores"]
    assert set(scores) == set(range(2, 11))
    assert est.choice_["n_clusters"] == k, est.choice_


def test_the_fits_that_rank_k_see_the_given_constraints_not_their_closure(monkeypatch):
    """Clean constraints are consistent, and HMRF would add their closure: on breast
    cancer's clean draws (569 points, 1 613 pairs) up to 200 000 pairs per fit, and the
    27 fits that rank k took 85 s of a 95 s run. The ranking fits now take the
    constraints as given (the chosen k's final fit still tries the closure)."""
    import graphclust.auto as auto

    X, y = _blobs(150, 3, std=0.6, seed=1)
    S = gc.SideInfo.sample(y, 300, random_state=1)  # clean: the closure has about 7 000 pairs
    assert not S.check().conflicts
    seen = []
    real = auto.HMRF._fit

    def spy(self, problem, *args, **kwargs):
        labels, result = real(self, problem, *args, **kwargs)
        seen.append((result.info.get("closure"), problem.n_constraints))
        return labels, result

    monkeypatch.setattr(auto.HMRF, "_fit", spy)
    est = gc.AutoCluster(method="hmrf", random_state=0)
    k, how, _ = est._choose_k(gc.Problem.from_array(X, S), True, np.random.default_rng(0), lambda stage: None)
    assert how == "held-out constraints" and k == 3
    assert len(seen) == 9 * 3 and not any(closure for closure, _ in seen)


def test_k_follows_the_constraints_when_the_data_cannot_tell():
    """Two classes made of two blobs each: k-means' silhouette says 4, the constraints say 2."""
    rng = np.random.default_rng(5)
    centres = np.array([[0, 0], [6, 0], [0, 6], [6, 6]], dtype=float)
    X = np.concatenate([c + rng.normal(scale=0.5, size=(30, 2)) for c in centres])
    y = np.repeat([0, 1, 1, 0], 30)  # diagonal blobs belong together
    S = gc.SideInfo.sample(y, 500, noise=0.05, random_state=6)
    est = gc.cluster(X, S, random_state=0)
    plain = gc.cluster(X, None, random_state=0)
    assert plain.choice_["n_clusters_from"] == "silhouette" and plain.choice_["n_clusters"] == 4
    assert est.choice_["n_clusters"] == 2
    assert gc.ari(y, est.labels_) > 0.9


def test_graph_without_features_uses_cosc():
    G = nx.disjoint_union_all([nx.complete_graph(8) for _ in range(3)])
    G.add_edges_from([(0, 8), (8, 16)])
    y = np.repeat([0, 1, 2], 8)
    S = gc.SideInfo.sample(y, 60, random_state=0)
    est = gc.cluster(G, S, n_clusters=3, random_state=0)
    # COSC's own mode="auto" decides, and the choice reports what it decided
    assert est.choice_["method"] == "COSC" and est.estimator_.mode == "auto"
    mode = est.estimator_.result_.info["mode"]
    assert est.choice_["noise"] == f"COSC {mode} mode (chosen from mode='auto')"
    assert gc.ari(y, est.labels_) == 1.0
    noisy = gc.SideInfo.sample(y, 120, noise=0.3, random_state=3)
    if not noisy.check(G).conflicts:
        pytest.skip("the draw happens to be consistent")
    est = gc.cluster(G, noisy, n_clusters=3, random_state=0)
    assert est.estimator_.result_.info["mode"] == "soft" and est.n_clusters_ == 3
    assert gc.ari(y, est.labels_) == 1.0


def test_bad_input_says_what_to_give():
    with pytest.raises(InvalidParameterError, match="give n_clusters"):
        gc.cluster(nx.path_graph(5), gc.SideInfo.from_pairs(must=[(0, 1)]))
    with pytest.raises(InvalidParameterError, match="n_clusters"):
        gc.AutoCluster(n_clusters=0).fit(np.zeros((4, 2)))
    with pytest.raises(InvalidParameterError, match="max_clusters"):
        gc.AutoCluster(max_clusters=1).fit(np.zeros((4, 2)))


def test_clone_and_params_round_trip():
    est = gc.AutoCluster(n_clusters=3, max_clusters=6, random_state=1)
    assert est.get_params() == {"n_clusters": 3, "max_clusters": 6, "method": "auto", "random_state": 1,
                                "progress": "auto"}
    assert est.clone().get_params() == est.get_params()


@pytest.mark.parametrize("seed", [2, 5])
def test_rdpmeans_when_its_held_out_agreement_is_higher(seed):
    """Standardised iris, 300 pairs with 20 % flipped: each estimator cross-validates
    its own constraint strength; the entry point takes RDP-means when its best keeps
    more held-out constraints than HMRF's (and it has k clusters). On these draws it
    does, and its answer is closer to the species than HMRF's."""
    X, y = gc.datasets.load_iris()
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, n_pairs=300, noise=0.2, random_state=seed)
    est = gc.cluster(X, S, n_clusters=3, random_state=0)
    hmrf = gc.cluster(X, S, n_clusters=3, method="hmrf", random_state=0)
    scores = est.choice_["method_scores"]
    assert scores["RDPMeans"] > scores["HMRF"]
    check_choice(est, 3)
    assert est.choice_["method"] != "HMRF" and est.n_clusters_ == 3
    if est.choice_["method"] == "RDPMeans":
        assert est.choice_["noise"].startswith("RDP-means constraint strength")
    assert hmrf.choice_["method"] == "HMRF" and "method_scores" not in hmrf.choice_
    assert gc.pairwise_f_measure(y, est.labels_) > gc.pairwise_f_measure(y, hmrf.labels_) + 0.05


def test_hmrf_kept_when_it_keeps_more_held_out_constraints():
    X, y = gc.datasets.load_iris()
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, n_pairs=300, noise=0.2, random_state=3)
    est = gc.cluster(X, S, n_clusters=3, random_state=0)
    scores = est.choice_["method_scores"]
    assert scores["HMRF"] >= scores["RDPMeans"]
    check_choice(est, 3)
    assert est.choice_["method"] in ("HMRF", "TVClust")


def test_ward_merge_is_scipys_ward_linkage_on_single_points():
    """Oracle: with one point per cluster, merging by Ward's criterion down to k is
    scipy's Ward agglomeration cut at k clusters."""
    from scipy.cluster.hierarchy import fcluster, linkage

    from graphclust.auto import ward_merge

    rng = np.random.default_rng(0)
    Y = rng.normal(size=(30, 3)) + np.repeat(np.eye(3) * 4, 10, axis=0)
    for k in (1, 2, 3, 5, 9):
        ours = ward_merge(Y, np.ones(30), np.arange(30), k)
        theirs = fcluster(linkage(Y, "ward"), k, "maxclust")
        assert gc.ari(theirs, ours) == 1.0 and ours.max() == k - 1


def test_ward_merge_weighs_clusters_by_their_counts():
    """Merged nodes (counts > 1) count as their points: a heavy cluster is not merged
    where a light one at the same distance is."""
    from graphclust.auto import ward_merge

    Y = np.array([[0.0], [1.0], [10.0], [11.5]])
    # clusters 0..3 as given; (2, 3) is 1.5 apart, (0, 1) 1 apart but heavy
    assert ward_merge(Y, np.array([1, 1, 1, 1]), np.arange(4), 3).tolist() == [0, 0, 1, 2]
    assert ward_merge(Y, np.array([50, 50, 1, 1]), np.arange(4), 3).tolist() == [0, 1, 2, 2]
    # several points per cluster: the merge acts on clusters, the map has one entry each
    labels = np.array([0, 0, 1, 2, 2, 3])
    Y2 = np.array([[0.0], [0.2], [0.5], [9.0], [9.2], [20.0]])
    assert ward_merge(Y2, np.ones(6), labels, 2).tolist() == [0, 0, 0, 1] or \
        ward_merge(Y2, np.ones(6), labels, 2).tolist() == [0, 0, 1, 1]


def test_tvclust_is_chosen_on_noisy_iris_and_predicts_in_the_merged_labels():
    """Standardised iris with 300 pairs, 10 % flipped: TVClust (p = q = 0.9) keeps
    more held-out constraints than HMRF and RDP-means and finds the species much
    better (F 0.98 against 0.82-0.87 in docs/benchmarks/noisy_defaults.md)."""
    X, y = gc.datasets.load_iris()
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, n_pairs=300, noise=0.1, random_state=0)
    est = gc.cluster(X, S, n_clusters=3, random_state=0)
    check_choice(est, 3)
    assert est.choice_["method"] == "TVClust" and est.choice_["tvclust"]["tried"]
    assert est.n_clusters_ == 3
    hmrf = gc.cluster(X, S, n_clusters=3, method="hmrf", random_state=0)
    assert gc.pairwise_f_measure(y, est.labels_) > max(0.95, gc.pairwise_f_measure(y, hmrf.labels_))
    assert np.mean(est.predict(X) == est.labels_) > 0.95  # predict speaks the merged labels
    assert set(np.unique(est.predict(X[:10] + 0.01))) <= {0, 1, 2}


def test_tvclust_fits_all_the_constraints_only_when_its_folds_win(monkeypatch):
    """TVClust's fit on all the constraints is its answer, so it runs only when the
    folds' score wins: three fits (the folds, on two thirds of the constraints each)
    on clean wine, where HMRF keeps more held-out pairs; four on noisy iris, where
    TVClust is chosen."""
    from graphclust.tvclust import TVClust

    seen = []
    fit = TVClust._fit

    def counting(self, problem):
        seen.append(problem.n_constraints)
        return fit(self, problem)

    monkeypatch.setattr(TVClust, "_fit", counting)
    X, y = gc.datasets.load_wine()
    X = (X - X.mean(0)) / X.std(0)
    est = gc.cluster(X, gc.SideInfo.sample(y, n_pairs=300, random_state=0), n_clusters=3, random_state=0)
    assert est.choice_["method"] == "HMRF" and est.choice_["tvclust"]["tried"]
    assert len(seen) == 3 and max(seen) == 200 and "merge" not in est.choice_["tvclust"]
    seen.clear()
    X, y = gc.datasets.load_iris()
    X = (X - X.mean(0)) / X.std(0)
    est = gc.cluster(X, gc.SideInfo.sample(y, n_pairs=300, noise=0.1, random_state=0), n_clusters=3,
                     random_state=0)
    assert est.choice_["method"] == "TVClust"
    assert len(seen) == 4 and seen[-1] == 300 and len(est.choice_["tvclust"]["merge"]) == est.estimator_.n_clusters_


def test_tvclust_is_not_tried_when_it_would_take_too_long(monkeypatch):
    import graphclust.auto as auto

    monkeypatch.setattr(auto, "_TVCLUST_TIME_FACTOR", 1e-9)
    X, y = gc.datasets.load_iris()
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, n_pairs=300, noise=0.1, random_state=0)
    est = gc.cluster(X, S, n_clusters=3, random_state=0)
    report = est.choice_["tvclust"]
    assert report["tried"] is False and report["predicted_seconds"] > report["budget_seconds"]
    assert est.choice_["method"] in ("HMRF", "RDPMeans") and "TVClust" not in est.choice_["method_scores"]


def test_ward_merge_never_joins_clusters_a_hard_cannot_link_keeps_apart():
    """Oracle by hand: clusters 0 and 1 are nearest, but a hard cannot-link joins a
    point of each, so the next nearest pair merges; when only blocked pairs are left,
    more than k clusters remain (and gc.cluster keeps its other candidate)."""
    from graphclust.auto import ward_merge

    Y = np.array([[0.0], [0.5], [3.0], [10.0]])
    labels = np.arange(4)
    assert ward_merge(Y, np.ones(4), labels, 3).tolist() == [0, 0, 1, 2]
    assert ward_merge(Y, np.ones(4), labels, 3, apart=[(1, 0)]).tolist() == [0, 1, 1, 2]
    # a cannot-link between 1 and 2 blocks the merged {1, 2} from 0 too
    assert ward_merge(Y, np.ones(4), labels, 2, apart=[(0, 1), (0, 2)]).tolist() == [0, 1, 1, 1]
    assert ward_merge(Y, np.ones(4), labels, 1, apart=[(0, 1), (0, 2), (0, 3)]).max() == 1


def test_the_entry_point_keeps_hard_constraints_whichever_method_it_picks():
    X, y = gc.datasets.load_iris()
    X = (X - X.mean(0)) / X.std(0)
    noisy = gc.SideInfo.sample(y, n_pairs=300, noise=0.1, random_state=0)
    hard = gc.SideInfo.from_pairs(must=[(0, 1), (51, 52), (101, 102)], cannot=[(0, 60), (60, 110), (0, 110)],
                                  weight=np.inf)
    est = gc.cluster(X, noisy.union(hard), n_clusters=3, random_state=0)
    assert gc.violations(hard, est.partition_).n_violated == 0
    lab = est.labels_
    assert lab[0] == lab[1] and lab[51] == lab[52] and lab[101] == lab[102]
    assert len({lab[0], lab[60], lab[110]}) == 3
