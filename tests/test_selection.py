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
