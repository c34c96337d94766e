"""Cross-validation on the constraints (graphclust.selection) and HMRF's constraint_weight="auto"."""

import warnings

import numpy as np
import pytest

import graphclust as gc
from graphclust.potentials import Centroids
from graphclust.selection import constraint_folds, cross_validate_constraints, heldout_agreement


def test_heldout_agreement_is_the_balanced_kept_fraction():
    rng = np.random.default_rng(0)
    for _ in range(20):
        labels = rng.integers(0, 3, 30)
        pairs = rng.integers(0, 30, (40, 2))
        w = rng.choice([-2.0, 1.0], 40)
        same = [labels[a] == labels[b] for a, b in pairs]
        ml = [s for s, x in zip(same, w) if x > 0]
        cl = [not s for s, x in zip(same, w) if x < 0]
        assert heldout_agreement(labels, pairs, w) == pytest.approx((sum(ml) / len(ml) + sum(cl) / len(cl)) / 2)
    assert heldout_agreement([0, 1], [[0, 1]], [1.0]) == 0.0  # one kind only: its fraction
    assert np.isnan(heldout_agreement([0, 1], np.empty((0, 2)), []))


def test_folds_deal_out_both_kinds_and_never_hold_out_hard_constraints():
    w = np.array([1.0] * 10 + [-1.0] * 7 + [np.inf, -np.inf])
    fold = constraint_folds(w, 3, np.random.default_rng(1))
    assert (fold[-2:] == -1).all()
    for kind in (slice(0, 10), slice(10, 17)):
        counts = np.bincount(fold[kind], minlength=3)
        assert counts.max() - counts.min() <= 1


def test_cross_validation_scores_each_candidate_on_every_held_out_constraint():
    """A fit that ignores its training constraints scores exactly its agreement with all
    of them; a fit that is told which constraints it saw is scored on the others only."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 2))
    y = rng.integers(0, 3, 25)
    S = gc.SideInfo.sample(y, 60, noise=0.2, random_state=3)
    problem = gc.Problem.from_array(X, S)
    fixed = [rng.integers(0, 3, 25) for _ in range(3)]
    scores = cross_validate_constraints(lambda c, train, seed: fixed[c], problem, [0, 1, 2], n_folds=4,
                                        random_state=0)
    pairs, w = problem.constraints, problem.constraint_weights
    assert np.allclose(scores, [heldout_agreement(f, pairs, w) for f in fixed])
    # a cheat that keeps exactly its training constraints' pairs together scores no better on
    # held-out must-links than chance allows: every held-out pair was unseen
    seen = []

    def record(c, train, seed):
        seen.append({tuple(p) for p in train.constraints.tolist()})
        return fixed[0]

    cross_validate_constraints(record, problem, [0], n_folds=4, random_state=0)
    everything = {tuple(p) for p in pairs.tolist()}
    held = [everything - s for s in seen]
    assert all(held) and set().union(*held) == everything  # each constraint held out once
    assert sum(len(h) for h in held) == len(everything)


def _noisy(y, n_pairs, noise, seed):
    return gc.SideInfo.sample(y, n_pairs, noise=noise, random_state=seed)


def test_auto_weight_is_full_strength_with_few_constraints():
    X, y = gc.datasets.make_blobs(60, n_clusters=3, random_state=0)
    S = _noisy(y, 20, 0.0, 1)  # about 7 must-links: too few to hold any out
    auto = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    one = gc.HMRF(Centroids(3), constraint_weight=1.0, random_state=0).fit(X, S)
    assert auto.result_.info["constraint_weight"] == 1.0 and "constraint_cv" not in auto.result_.info
    assert np.array_equal(auto.labels_, one.labels_)


def test_auto_weight_keeps_clean_side_information_at_full_strength():
    """Clean constraints on overlapping blobs: nothing rejects them, the factor stays 1."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1, 2], 40)
    X = rng.normal(size=(120, 2)) + np.c_[y * 1.0, np.zeros(120)]
    S = _noisy(y, 300, 0.0, 2)
    auto = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    assert auto.result_.info["constraint_weight"] == 1.0 and "constraint_cv" in auto.result_.info


def test_auto_weight_takes_the_factor_the_held_out_constraints_prefer():
    """The chosen factor is the first best of the cross-validation scores, and the fit is
    the fit with that factor."""
    X, y = gc.datasets.make_blobs(90, n_clusters=3, random_state=4)
    S = _noisy(y, 300, 0.25, 5)
    est = gc.HMRF(Centroids(3), random_state=7).fit(X, S)
    info = est.result_.info
    scores = list(info["constraint_cv"].items())  # strongest candidate first
    chosen = f"{info['constraint_weight']:.4g}" + (" + closure" if info["closure"] else "")
    at = [key for key, _ in scores].index(chosen)
    best = max(v for _, v in scores)
    assert all(v < best for _, v in scores[:at])  # a stronger candidate was passed over only when worse
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = gc.HMRF(Centroids(3), constraint_weight=info["constraint_weight"], random_state=7)
        # same random stream after the selection: compare objectives, not labels
        fixed.fit(X, S)
    assert fixed.result_.info["constraint_weight"] == info["constraint_weight"]


@pytest.mark.parametrize("noise", [0.3, 1.0])
def test_auto_weight_ignores_side_information_that_is_mostly_wrong(noise):
    """30 % of the pairs flipped on well-separated blobs: the held-out constraints prefer
    the data's answer. Every pair flipped: no answer keeps the held-out constraints
    better than coin flips, so they are ignored. Either way the answer is the blobs."""
    X, y = gc.datasets.make_blobs(90, n_clusters=3, cluster_std=0.5, random_state=8)
    S = _noisy(y, 400, noise, 9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto = gc.HMRF(Centroids(3), random_state=0).fit(X, S)
    # every pair wrong: the data's own clustering keeps far fewer than coin flips, and HMRF says so
    assert any("contradicts the data" in str(w.message) for w in caught) == (noise == 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = gc.HMRF(Centroids(3), constraint_weight=1.0, random_state=0).fit(X, S)
    assert auto.result_.info["constraint_weight"] <= 1 / 9
    assert gc.ari(y, auto.labels_) > 0.9 > 0.2 > gc.ari(y, full.labels_)


def test_above_chance_is_two_standard_errors_of_coin_flips():
    from graphclust.selection import above_chance

    w = [1.0] * 100 + [-1.0] * 100  # se = 0.5 * sqrt(2 / 100) / 2
    se = 0.5 * np.sqrt(0.02) / 2
    assert above_chance(0.5 + 2.01 * se, w) and not above_chance(0.5 + 1.99 * se, w)
    assert not above_chance(1.0, [np.inf, -np.inf])  # hard constraints are never held out


def test_auto_weight_keeps_mostly_right_side_information_strong():
    """Two touching blobs the data cannot separate, 5 % of pairs flipped: the constraints
    are worth more than the data, and the cross-validation keeps them."""
    rng = np.random.default_rng(10)
    y = np.repeat([0, 1], 60)
    X = rng.normal(size=(120, 2)) + np.c_[y * 0.8, np.zeros(120)]
    S = _noisy(y, 600, 0.05, 11)
    auto = gc.HMRF(Centroids(2), random_state=0).fit(X, S)
    zero = gc.HMRF(Centroids(2), constraint_weight=0.0, random_state=0).fit(X, S)
    assert auto.result_.info["constraint_weight"] >= 1 / 9
    assert gc.ari(y, auto.labels_) > gc.ari(y, zero.labels_) + 0.3


def test_weight_zero_is_the_unconstrained_fit():
    X, y = gc.datasets.make_blobs(50, n_clusters=2, random_state=12)
    S = _noisy(y, 100, 0.3, 13)
    zero = gc.HMRF(Centroids(2), constraint_weight=0.0, random_state=0).fit(X, S)
    none = gc.HMRF(Centroids(2), random_state=0).fit(X)
    assert np.array_equal(zero.labels_, none.labels_)


def test_bad_constraint_weight_names_the_parameter():
    X = np.zeros((4, 1))
    for bad in (-1.0, "full", np.nan):
        with pytest.raises(gc.errors.InvalidParameterError, match="constraint_weight"):
            gc.HMRF(constraint_weight=bad).fit(X)


def test_paired_standard_error_counts_only_disagreements():
    from graphclust.selection import paired_standard_error

    w = np.array([1.0] * 4 + [-1.0] * 6)
    a = np.array([1, 1, 0, 1, 1, 1, 1, 0, 0, 1], dtype=bool)
    assert paired_standard_error(a, a, w) == 0.0
    b = a.copy()
    b[0] = False  # one must-link of four differs: d = (1, 0, 0, 0)
    d = np.array([1.0, 0, 0, 0])
    assert paired_standard_error(a, b, w) == pytest.approx(np.sqrt(d.var() / 4 + 0.0) / 2)


# ---------------------------------------------------------------------------- scikit-learn model selection
def test_constraint_kfold_holds_out_each_labelled_point_once_and_never_an_unlabelled_one():
    from graphclust.selection import ConstraintKFold

    rng = np.random.default_rng(0)
    y = np.where(rng.random(200) < 0.3, rng.integers(0, 4, 200), -1)
    seen = np.zeros(len(y), dtype=int)
    for train, test in ConstraintKFold(3, random_state=0).split(None, y):
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == len(y)
        assert (y[test] != -1).all()
        for label in range(4):  # every fold holds its share of each label
            n = (y == label).sum()
            assert n // 3 <= (y[test] == label).sum() <= -(-n // 3)
        seen[test] += 1
    np.testing.assert_array_equal(seen, (y != -1).astype(int))


def test_heldout_label_score_is_the_ari_over_labelled_points():
    from sklearn.metrics import adjusted_rand_score

    from graphclust.selection import heldout_label_score

    rng = np.random.default_rng(1)
    y = np.where(rng.random(60) < 0.5, rng.integers(0, 3, 60), -1)
    pred = rng.integers(0, 4, 60)

    class Fixed:
        def predict(self, X):
            return pred[np.asarray(X)[:, 0].astype(int)]

    X = np.arange(60.0)[:, None]
    keep = y != -1
    assert heldout_label_score(Fixed(), X, y) == pytest.approx(adjusted_rand_score(y[keep], pred[keep]), abs=1e-12)
    assert np.isnan(heldout_label_score(Fixed(), X, np.full(60, -1)))


def test_grid_search_chooses_k_from_partial_labels_alone():
    from sklearn.model_selection import GridSearchCV

    from graphclust.selection import ConstraintKFold, heldout_label_score

    rng = np.random.default_rng(2)
    truth = np.repeat([0, 1, 2, 3], 40)
    X = rng.normal(scale=0.5, size=(160, 2)) + np.array([[0, 0], [4, 0], [0, 4], [4, 4]])[truth]
    y = np.where(rng.random(160) < 0.15, truth, -1)  # 15 % labelled
    search = GridSearchCV(gc.HMRF(gc.potentials.Centroids(2), random_state=0),
                          {"potentials__n_clusters": [2, 3, 4, 5, 6]}, scoring=heldout_label_score,
                          cv=ConstraintKFold(3, random_state=0))
    search.fit(X, y)
    # a fifth cluster can split a blob without breaking a held-out pair (a tie); the
    # grid runs from fewest clusters and GridSearchCV keeps the first of the best
    assert search.best_params_ == {"potentials__n_clusters": 4}
    scores = search.cv_results_["mean_test_score"]
    assert scores[2] == scores.max() and scores[2] > scores[1] > scores[0] and scores[2] > scores[4]


def test_simplest_within_one_se_picks_the_first_candidate_near_the_best():
    from graphclust.selection import simplest_within_one_se

    results = {"mean_test_score": np.array([0.6, 0.78, 0.80, 0.79]), "std_test_score": np.array([0.1, 0.1, 0.05, 0.2]),
               "split0_test_score": 0, "split1_test_score": 0, "split2_test_score": 0, "split3_test_score": 0}
    # best 0.80 with SE 0.05 / 2 = 0.025: 0.78 is within it, 0.6 is not
    assert simplest_within_one_se(results) == 1
    results["std_test_score"] = np.array([0.1, 0.1, 0.0, 0.2])
    assert simplest_within_one_se(results) == 2


# ------------------------------------------------------------------ pairwise constraints through scikit-learn
@pytest.fixture
def metadata_routing():
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _four_blobs(seed=2):
    rng = np.random.default_rng(seed)
    truth = np.repeat([0, 1, 2, 3], 40)
    X = rng.normal(scale=0.5, size=(160, 2)) + np.array([[0, 0], [4, 0], [0, 4], [4, 4]])[truth]
    return X, truth


def test_row_constraints_slice_to_the_pairs_between_the_rows_renumbered():
    S = gc.SideInfo([(0, 5, 1.0), (2, 5, -np.inf), (1, 3, 2.0), (4, 0, -1.5)])
    C = gc.RowConstraints(S, n_rows=6)
    assert len(C) == C.shape[0] == 6
    rows = np.array([5, 0, 2, 3])
    sub = C[rows]
    assert len(sub) == 4
    got = {(int(rows[a]), int(rows[b])): w for (a, b), w in zip(sub.pairs.tolist(), sub.weights.tolist())}
    want = {}
    for u, v, w in S.edges():
        if u in rows.tolist() and v in rows.tolist():
            a, b = sorted((rows.tolist().index(u), rows.tolist().index(v)))
            want[(int(rows[a]), int(rows[b]))] = w
    assert got == want == {(5, 0): 1.0, (5, 2): -np.inf}
    assert (sub.pairs[:, 0] < sub.pairs[:, 1]).all()
    assert C[np.arange(6) > 2].n_rows == 3                       # a boolean mask
    assert C[(np.array([0, 5]), Ellipsis)].pairs.tolist() == [[0, 1]]  # scikit-learn's rows[key, ...]
    # into a fit: the rows are the data's nodes in order
    side = gc.sideinfo.side_information(["a", "b", "c", "d"], sideinfo=gc.RowConstraints([(0, 3, -1.0)], 4))
    assert side.weight("a", "d") == -1.0 and len(side) == 1


def test_row_constraints_refuse_what_is_not_a_row():
    from graphclust.errors import InvalidParameterError, UnknownNodeError

    with pytest.raises(UnknownNodeError, match="node 7 .* not a row number in 0..4"):
        gc.RowConstraints([(0, 7, 1.0)], n_rows=5)
    with pytest.raises(UnknownNodeError, match="'x'"):
        gc.RowConstraints([("x", 1, 1.0)], n_rows=5)
    with pytest.raises(InvalidParameterError, match="cover 5 rows but the data has 3"):
        gc.sideinfo.side_information([0, 1, 2], sideinfo=gc.RowConstraints([(0, 1, 1.0)], 5))


def test_constraint_kfold_on_pairs_keeps_must_link_components_whole():
    from graphclust.selection import ConstraintKFold
    from graphclust.sideinfo import must_link_components

    X, truth = _four_blobs()
    S = gc.SideInfo.sample(truth, 150, random_state=0)
    C = gc.RowConstraints(S, len(X))
    _, comp = must_link_components(len(X), C.pairs[C.weights > 0])
    constrained = np.zeros(len(X), bool)
    constrained[C.pairs.ravel()] = True
    held_out = np.zeros(len(C.weights), int)
    tested = np.zeros(len(X), int)
    for train, test in ConstraintKFold(3, random_state=0).split(X, sideinfo=C):
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == len(X)
        assert constrained[test].all()                       # unconstrained points always train
        for c in np.unique(comp[test]):                       # a component is wholly in or out
            assert np.isin(np.flatnonzero(comp == c), test).all()
        inside = np.isin(C.pairs, test).all(axis=1)
        trained = np.isin(C.pairs, train).all(axis=1)
        assert not (inside & trained).any()
        assert (inside[C.weights > 0] | trained[C.weights > 0]).all()   # no must-link lost to a boundary
        held_out += inside
        tested[test] += 1
        assert inside.any()
    assert (held_out[C.weights > 0] == 1).all()                # every must-link held out exactly once
    np.testing.assert_array_equal(tested, constrained.astype(int))


def test_constraint_kfold_names_what_is_missing():
    from graphclust.errors import InvalidParameterError
    from graphclust.selection import ConstraintKFold

    X = np.zeros((6, 1))
    with pytest.raises(InvalidParameterError, match="enable_metadata_routing"):
        next(ConstraintKFold(2).split(X))
    with pytest.raises(InvalidParameterError, match=r"RowConstraints\(S, len\(X\)\)"):
        next(ConstraintKFold(2).split(X, sideinfo=gc.SideInfo([(0, 1, 1.0)])))
    with pytest.raises(InvalidParameterError, match="at least n_splits=3 must-link components"):
        next(ConstraintKFold(3).split(X, sideinfo=gc.RowConstraints([(0, 1, 1.0), (1, 2, 1.0), (3, 4, 1.0)], 6)))
    with pytest.raises(InvalidParameterError, match="fold 1 holds out no constraint"):  # the cannot-link crosses
        next(ConstraintKFold(2, shuffle=False).split(X, sideinfo=gc.RowConstraints([(0, 1, 1.0), (1, 2, -1.0)], 6)))


def test_pair_kappa_over_every_pair_is_the_adjusted_rand_index():
    from itertools import combinations

    from sklearn.metrics import adjusted_rand_score

    from graphclust.selection import pair_kappa

    rng = np.random.default_rng(4)
    truth, pred = rng.integers(0, 3, 30), rng.integers(0, 4, 30)
    pairs = np.array(list(combinations(range(30), 2)))
    weights = np.where(truth[pairs[:, 0]] == truth[pairs[:, 1]], 1.0, -1.0)
    assert pair_kappa(pred, pairs, weights) == pytest.approx(adjusted_rand_score(truth, pred), abs=1e-12)
    assert pair_kappa(truth, pairs, weights) == pytest.approx(1.0)
    assert pair_kappa(np.zeros(30, int), pairs, weights) == 0.0     # one cluster: no better than chance
    assert np.isnan(pair_kappa(pred, np.empty((0, 2), int), []))


def test_heldout_constraint_score_is_the_kappa_on_the_held_out_pairs(metadata_routing):
    from graphclust.selection import heldout_constraint_score, pair_kappa

    rng = np.random.default_rng(3)
    pred = rng.integers(0, 3, 40)

    class Fixed:
        def predict(self, X):
            return pred[np.asarray(X)[:, 0].astype(int)]

    truth = rng.integers(0, 3, 40)
    C = gc.RowConstraints(gc.SideInfo.sample(truth, 60, random_state=1), 40)
    rows = np.arange(0, 40, 2)
    sub = C[rows]
    want = pair_kappa(pred[rows], sub.pairs, sub.weights)
    assert heldout_constraint_score(Fixed(), np.arange(40.0)[rows, None], sideinfo=sub) == pytest.approx(want)
    assert np.isnan(heldout_constraint_score(Fixed(), np.zeros((2, 1)), sideinfo=gc.RowConstraints([], 2)))


def test_grid_search_chooses_k_from_pairs_alone_and_routes_through_a_pipeline(metadata_routing):
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from graphclust.selection import ConstraintKFold, heldout_constraint_score, simplest_within_one_se

    X, truth = _four_blobs()
    C = gc.RowConstraints(gc.SideInfo.sample(truth, 300, random_state=0), len(X))
    search = GridSearchCV(gc.HMRF(gc.potentials.Centroids(2), random_state=0),
                          {"potentials__n_clusters": [2, 3, 4, 5, 6]}, scoring=heldout_constraint_score,
                          cv=ConstraintKFold(3, random_state=0), refit=simplest_within_one_se)
    search.fit(X, sideinfo=C)
    assert search.best_params_ == {"potentials__n_clusters": 4}
    scores = search.cv_results_["mean_test_score"]
    assert scores[2] == pytest.approx(1.0) and scores[2] > max(scores[0], scores[1], scores[3], scores[4])
    assert gc.ari(truth, search.best_estimator_.labels_) > 0.95
    # the pairs reach the clusterer inside a Pipeline: with them its folds keep every held-out pair
    pipe = make_pipeline(StandardScaler(), gc.HMRF(gc.potentials.Centroids(4), random_state=0))
    kept = cross_val_score(pipe, X, scoring=heldout_constraint_score, cv=ConstraintKFold(3, random_state=0),
                           params={"sideinfo": C})
    assert kept.min() > 0.95


def test_agreement_standard_error_is_the_binomial_error_of_the_balanced_score():
    from graphclust.selection import agreement_standard_error

    w = np.array([1.0] * 4 + [-1.0] * 4)
    kept = np.array([1, 0, 1, 1, 1, 1, 0, 0], dtype=float)
    # must-links kept 3/4 (variance 3/16), cannot-links 2/4 (variance 1/4), each over 4
    expected = np.sqrt(3 / 16 / 4 + 1 / 4 / 4) / 2
    assert agreement_standard_error(kept, w) == pytest.approx(expected)
    assert agreement_standard_error(np.ones(8), w) == 0.0
