"""graphclust.seeding: the seeding rules every estimator uses."""

import itertools

import numpy as np
import pytest

from graphclust.seeding import farthest_first, kmeans_plusplus


def _sq(Y):
    return lambda i: ((Y - Y[i]) ** 2).sum(1)


def test_farthest_first_maximises_the_distance_to_the_picks_so_far(rng):
    Y = rng.normal(size=(40, 3))
    w = rng.uniform(0.5, 3.0, 40)
    picks, gaps = farthest_first(_sq(Y), np.full(40, np.inf), 6, weights=w, first=7)
    assert picks[0] == 7 and len(set(picks.tolist())) == 6
    for j in range(1, 6):  # brute force: each pick is the weighted farthest from the earlier ones
        d = np.min([((Y - Y[p]) ** 2).sum(1) for p in picks[:j]], axis=0)
        score = np.where(np.isin(np.arange(40), picks[:j]), -np.inf, w * d)
        assert picks[j] == int(np.argmax(score)) and gaps[j] == pytest.approx(d[picks[j]])


def test_farthest_first_from_a_set_stops_at_zero_and_never_repeats():
    Y = np.array([[0.0], [0.0], [1.0], [1.0]])
    picks, gaps = farthest_first(_sq(Y), ((Y - 0.5) ** 2).ravel(), 10, stop_at_zero=True)
    assert gaps.tolist() == [0.25, 0.25, 0.0] and len(picks) == 3
    picks, _ = farthest_first(_sq(Y), np.full(4, np.inf), 10, first=0)
    assert sorted(picks.tolist()) == [0, 1, 2, 3]  # duplicates are distinct points: each once


def test_kmeans_plusplus_picks_data_points_spread_out(rng):
    Y = np.concatenate([rng.normal(0, 0.01, (50, 2)), rng.normal(10, 0.01, (50, 2))])
    hits = 0
    for seed in range(20):
        C = kmeans_plusplus(Y, 2, np.random.default_rng(seed))
        assert all(any(np.array_equal(c, y) for y in Y) for c in C)
        hits += (C[:, 0] > 5).sum() == 1
    assert hits >= 19  # D² sampling: the second centre lands in the other blob


def _plain_kmeans_plusplus(X, k, rng, w):
    """The D² sampling graphclust used before scikit-learn's (one candidate per centre)."""
    centres = [X[rng.choice(len(X), p=w / w.sum())]]
    d2 = ((X - centres[0]) ** 2).sum(1)
    for _ in range(1, k):
        centres.append(X[rng.choice(len(X), p=w * d2 / (w * d2).sum())])
        d2 = np.minimum(d2, ((X - centres[-1]) ** 2).sum(1))
    return np.array(centres)


def test_kmeans_plusplus_by_scikit_learn_seeds_at_least_as_well_as_before_and_honours_weights(rng):
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(300, centers=8, cluster_std=1.0, random_state=0)
    w = rng.uniform(0.5, 3.0, len(X))
    w[:40] = 0.0  # weightless points (e.g. empty groups) are never drawn

    def potential(C):
        return float((w * ((X[:, None, :] - C[None]) ** 2).sum(-1).min(1)).sum())

    new = [potential(kmeans_plusplus(X, 8, np.random.default_rng(s), w)) for s in range(40)]
    old = [potential(_plain_kmeans_plusplus(X, 8, np.random.default_rng(s), w)) for s in range(40)]
    assert np.mean(new) <= np.mean(old)
    for s in range(10):
        C = kmeans_plusplus(X, 8, np.random.default_rng(s), w)
        rows = [int(np.flatnonzero((X == c).all(1))[0]) for c in C]
        assert min(rows) >= 40 and len(set(rows)) == 8
    # the library's random stream decides: same generator state, same seeds
    np.testing.assert_array_equal(kmeans_plusplus(X, 3, np.random.default_rng(5), w),
                                  kmeans_plusplus(X, 3, np.random.default_rng(5), w))
