"""Tests for graphclust.graphs: k-NN, epsilon, kernel and grid builders, sparsification."""

import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from graphclust.errors import (
    InvalidFeaturesError,
    InvalidGraphError,
    InvalidParameterError,
    ProblemTooLargeError,
)
from graphclust.graphs import (
    epsilon_graph,
    epsilon_matrix,
    grid_arrays,
    grid_graph,
    grid_matrix,
    kernel_graph,
    kernel_matrix,
    knn_graph,
    knn_matrix,
    sparsify,
)
from graphclust.problem import Problem

SCIPY_METRIC = {"euclidean": "euclidean", "manhattan": "cityblock", "chebyshev": "chebyshev", "cosine": "cosine"}


@pytest.fixture
def points():
    return np.random.default_rng(0).normal(size=(40, 3))


def brute_knn(X, k, metric="euclidean"):
    """Index array (n, k) of each row's k nearest other rows, and the distance matrix."""
    D = cdist(X, X, SCIPY_METRIC[metric])
    np.fill_diagonal(D, np.inf)
    return np.argsort(D, axis=1, kind="stable")[:, :k], D


def pair_set(W):
    coo = sp.coo_array(W)
    return {(int(i), int(j)) for i, j in zip(coo.row, coo.col) if i < j}


def assert_symmetric_no_diagonal(W):
    assert isinstance(W, sp.csr_array)
    assert W.shape[0] == W.shape[1]
    assert abs(W - W.T).max() == 0
    assert not W.diagonal().any()


# =========================================================================== k-NN
class TestKnn:
    @pytest.mark.parametrize("metric", ["euclidean", "manhattan", "chebyshev", "cosine"])
    @pytest.mark.parametrize("symmetrize", ["union", "mutual"])
    def test_neighbours_match_brute_force(self, points, metric, symmetrize):
        """The edge set is the union (or intersection) of the brute-force k-NN lists."""
        k = 5
        W = knn_matrix(points, k, mode="connectivity", metric=metric, symmetrize=symmetrize)
        assert_symmetric_no_diagonal(W)
        nbrs, _ = brute_knn(points, k, metric)
        chosen = {(i, int(j)) for i in range(len(points)) for j in nbrs[i]}
        if symmetrize == "union":
            expected = {(min(a, b), max(a, b)) for a, b in chosen}
        else:
            expected = {(a, b) for a, b in chosen if a < b and (b, a) in chosen}
        assert pair_set(W) == expected
        assert np.all(W.data == 1.0)

    def test_union_degree_at_least_k(self, points):
        W = knn_matrix(points, 4, mode="connectivity")
        assert (np.diff(W.indptr) >= 4).all()

    def test_agrees_with_scikit_learn(self, points):
        neighbors = pytest.importorskip("sklearn.neighbors")
        A = neighbors.kneighbors_graph(points, 6, mode="distance")
        A = A.maximum(A.T)
        W = knn_matrix(points, 6, mode="distance")
        assert pair_set(W) == pair_set(A)
        np.testing.assert_allclose(W.toarray(), A.toarray(), rtol=1e-12)

    def test_distance_mode_is_the_distance(self, points):
        W = knn_matrix(points, 5, mode="distance", metric="manhattan")
        D = cdist(points, points, "cityblock")
        coo = W.tocoo()
        np.testing.assert_allclose(coo.data, D[coo.row, coo.col], rtol=1e-12)

    def test_gaussian_default_bandwidth_is_median_knn_distance(self, points):
        k = 5
        nbrs, D = brute_knn(points, k)
        sigma = np.median(np.take_along_axis(D, nbrs, axis=1))
        W = knn_matrix(points, k)
        coo = W.tocoo()
        d = D[coo.row, coo.col]
        np.testing.assert_allclose(coo.data, np.exp(-(d**2) / (2 * sigma**2)), rtol=1e-12)

    def test_gaussian_given_bandwidth(self, points):
        W = knn_matrix(points, 5, bandwidth=0.7)
        coo = W.tocoo()
        d = cdist(points, points)[coo.row, coo.col]
        np.testing.assert_allclose(coo.data, np.exp(-(d**2) / (2 * 0.49)), rtol=1e-12)

    @pytest.mark.parametrize("k, rank", [(10, 7), (3, 3)])
    def test_self_tuning_formula(self, points, k, rank):
        """sigma_i is the distance to the 7th neighbour (k-th when k < 7)."""
        nbrs, D = brute_knn(points, k)
        sigma = np.sort(D, axis=1)[:, rank - 1]
        W = knn_matrix(points, k, bandwidth="self-tuning")
        coo = W.tocoo()
        d = D[coo.row, coo.col]
        expected = np.exp(-(d**2) / (sigma[coo.row] * sigma[coo.col]))
        np.testing.assert_allclose(coo.data, expected, rtol=1e-12)

    def test_duplicates_give_weight_one_not_nan(self):
        X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [5.0, 5.0], [5.0, 5.0], [6.0, 5.0]])
        for bandwidth in (None, 0.5, "self-tuning"):
            W = knn_matrix(X, 2, bandwidth=bandwidth)
            assert np.isfinite(W.data).all() and (W.data > 0).all()
            assert W[0, 1] == 1.0 and W[3, 4] == 1.0
            assert_symmetric_no_diagonal(W)

    def test_many_duplicates_self_tuning_falls_back(self):
        """Eight copies of a point make its 7th-neighbour distance 0: no NaN, no zero."""
        X = np.vstack([np.zeros((8, 2)), [[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]]])
        W = knn_matrix(X, 8, bandwidth="self-tuning")
        assert np.isfinite(W.data).all() and (W.data > 0).all()
        # the copies are joined with weight exp(0) = 1
        assert W[0, 1] == 1.0
        # each copy still reaches at least 8 distinct other points (itself dropped)
        assert (np.diff(W.indptr) >= 8).all()

    def test_all_points_identical(self):
        W = knn_matrix(np.ones((5, 2)), 3)
        assert (W.data == 1.0).all()
        assert (np.diff(W.indptr) >= 3).all()
        assert not W.diagonal().any()

    def test_distance_mode_keeps_duplicate_edge_as_explicit_zero(self):
        X = np.array([[0.0], [0.0], [1.0], [3.0]])
        W = knn_matrix(X, 1, mode="distance")
        assert (0, 1) in pair_set(W)  # stored, even though its value is 0
        G = knn_graph(X, 1, mode="distance")
        assert G[0][1]["weight"] == 0.0

    def test_far_outlier_weight_does_not_underflow(self):
        X = np.array([[0.0], [0.1], [0.2], [1e6]])
        W = knn_matrix(X, 1, bandwidth=0.1)
        assert W[2, 3] > 0

    def test_graph_wraps_matrix(self, points):
        W = knn_matrix(points, 4, bandwidth="self-tuning")
        G = knn_graph(points, 4, bandwidth="self-tuning")
        assert list(G.nodes) == list(range(len(points)))
        assert G.number_of_edges() == W.nnz // 2
        for u, v, w in G.edges(data="weight"):
            assert w == W[u, v]
        np.testing.assert_array_equal(G.nodes[7]["features"], points[7])
        assert isinstance(G.nodes[7]["features"], list)
        P = Problem.from_graph(G)
        assert (P.W != W).nnz == 0
        np.testing.assert_array_equal(P.X, points)

    def test_graph_without_features(self, points):
        G = knn_graph(points, 3, include_features=False)
        assert "features" not in G.nodes[0]

    def test_one_dimensional_input(self):
        W = knn_matrix([0.0, 1.0, 3.0, 7.0], 1, mode="connectivity")
        assert pair_set(W) == {(0, 1), (1, 2), (2, 3)}

    # ------------------------------------------------------------------ errors
    def test_too_many_neighbours(self):
        with pytest.raises(InvalidParameterError, match=r"n_neighbors=5 must be smaller than the number of samples \(5\)"):
            knn_matrix(np.zeros((5, 2)), 5)

    @pytest.mark.parametrize(
        "kwargs, message",
        [
            ({"mode": "cosine"}, r"mode must be one of 'gaussian', 'connectivity', 'distance'; got 'cosine'"),
            ({"metric": "minkowski"}, r"metric must be one of 'euclidean', 'manhattan', 'chebyshev', 'cosine'; got 'minkowski'"),
            ({"symmetrize": "max"}, r"symmetrize must be one of 'union', 'mutual'; got 'max'"),
            ({"bandwidth": "auto"}, r"bandwidth must be None, a number > 0 or 'self-tuning'; got 'auto'"),
            ({"bandwidth": 0.0}, r"bandwidth must be > 0, got 0.0"),
            ({"bandwidth": 1.0, "mode": "distance"}, r"bandwidth only applies to mode='gaussian'.*'distance'"),
            ({"n_neighbors": 0}, r"n_neighbors must be >= 1, got 0"),
            ({"n_neighbors": 2.5}, r"n_neighbors must be an int, got 2.5"),
        ],
    )
    def test_bad_parameters(self, points, kwargs, message):
        with pytest.raises(InvalidParameterError, match=message):
            knn_matrix(points, **{"n_neighbors": 3, **kwargs})

    def test_nan_names_the_row(self, points):
        X = points.copy()
        X[17, 2] = np.nan
        with pytest.raises(InvalidFeaturesError, match=r"row 17 of X has NaN in column 2") as err:
            knn_graph(X, 3)
        assert err.value.node == 17

    def test_ragged_names_the_row(self):
        with pytest.raises(InvalidFeaturesError, match=r"row 2 of X has 1 features but earlier rows have 2") as err:
            knn_matrix([[0, 1], [1, 2], [3], [4, 5]], 1)
        assert err.value.node == 2

    def test_non_numeric_names_the_row(self):
        with pytest.raises(InvalidFeaturesError, match=r"row 1 of X has a non-numeric entry 'b'"):
            knn_matrix([[0, 1], [1, "b"], [2, 3]], 1)

    def test_cosine_zero_row(self):
        with pytest.raises(InvalidFeaturesError, match=r"row 1 of X is all zeros"):
            knn_matrix([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]], 1, metric="cosine")

    @pytest.mark.parametrize(
        "X, message",
        [
            (np.empty((0, 2)), "X has no rows"),
            (np.empty((3, 0)), "no columns"),
            (np.zeros((2, 2, 2)), r"X must be 2-D .* shape \(2, 2, 2\)"),
            ("abc", "X is the string 'abc'"),
            (sp.eye(3, format="csr"), "sparse matrix"),
        ],
    )
    def test_bad_arrays(self, X, message):
        with pytest.raises(InvalidFeaturesError, match=message):
            knn_matrix(X, 1)


# =========================================================================== epsilon
class TestEpsilon:
    @pytest.mark.parametrize("metric", ["euclidean", "manhattan", "chebyshev", "cosine"])
    def test_matches_brute_force(self, points, metric):
        D = cdist(points, points, SCIPY_METRIC[metric])
        eps = float(np.quantile(D[np.triu_indices(len(points), 1)], 0.1))
        W = epsilon_matrix(points, eps, mode="distance", metric=metric)
        assert_symmetric_no_diagonal(W)
        i, j = np.nonzero(np.triu(D <= eps, 1))
        assert pair_set(W) == set(zip(i.tolist(), j.tolist()))
        coo = W.tocoo()
        np.testing.assert_allclose(coo.data, D[coo.row, coo.col], rtol=1e-9, atol=1e-12)

    def test_gaussian_default_bandwidth_is_median_pair_distance(self, points):
        W = epsilon_matrix(points, 1.0)
        D = cdist(points, points)
        i, j = np.nonzero(np.triu(D <= 1.0, 1))
        sigma = np.median(D[i, j])
        coo = W.tocoo()
        d = D[coo.row, coo.col]
        np.testing.assert_allclose(coo.data, np.exp(-(d**2) / (2 * sigma**2)), rtol=1e-12)

    def test_self_tuning(self, points):
        D = cdist(points, points)
        np.fill_diagonal(D, np.inf)
        sigma = np.sort(D, axis=1)[:, 6]
        W = epsilon_matrix(points, 1.2, bandwidth="self-tuning")
        coo = W.tocoo()
        d = D[coo.row, coo.col]
        np.testing.assert_allclose(coo.data, np.exp(-(d**2) / (sigma[coo.row] * sigma[coo.col])), rtol=1e-12)

    def test_graph_keeps_isolated_nodes(self):
        G = epsilon_graph([[0.0], [1.0], [10.0]], 1.5, mode="connectivity")
        assert sorted(G.nodes) == [0, 1, 2]
        assert list(nx.isolates(G)) == [2]
        assert G.nodes[2]["features"] == [10.0]

    def test_single_point(self):
        assert epsilon_matrix([[1.0, 2.0]], 1.0, bandwidth="self-tuning").nnz == 0

    def test_bad_eps(self, points):
        with pytest.raises(InvalidParameterError, match=r"eps must be > 0, got -1.0"):
            epsilon_matrix(points, -1.0)

    def test_nan_names_row(self):
        with pytest.raises(InvalidFeaturesError, match=r"row 0 of X has inf"):
            epsilon_graph([[np.inf], [1.0]], 1.0)


# =========================================================================== kernel
class TestKernel:
    def test_rbf_matches_scikit_learn(self, points):
        pairwise = pytest.importorskip("sklearn.metrics.pairwise")
        K = pairwise.rbf_kernel(points, gamma=0.3)
        np.fill_diagonal(K, 0)
        W = kernel_matrix(points, "rbf", gamma=0.3)
        assert_symmetric_no_diagonal(W)
        np.testing.assert_allclose(W.toarray(), K, rtol=1e-10, atol=1e-14)

    def test_rbf_default_gamma_median_heuristic(self, points):
        D2 = cdist(points, points, "sqeuclidean")
        gamma = 0.5 / np.median(D2[np.triu_indices(len(points), 1)])
        expected = np.exp(-gamma * D2)
        np.fill_diagonal(expected, 0)
        np.testing.assert_allclose(kernel_matrix(points).toarray(), expected, rtol=1e-9, atol=1e-14)

    def test_linear_clips_negatives(self, points):
        K = np.clip(points @ points.T, 0, None)
        np.fill_diagonal(K, 0)
        W = kernel_matrix(points, "linear")
        np.testing.assert_allclose(W.toarray(), K, rtol=1e-12, atol=1e-14)
        assert W.nnz == np.count_nonzero(K)

    def test_cosine_matches_scikit_learn(self, points):
        pairwise = pytest.importorskip("sklearn.metrics.pairwise")
        K = np.clip(pairwise.cosine_similarity(points), 0, 1)
        np.fill_diagonal(K, 0)
        np.testing.assert_allclose(kernel_matrix(points, "cosine").toarray(), K, rtol=1e-10, atol=1e-14)

    def test_graph_is_complete_for_rbf(self):
        X = np.array([[0.0], [1.0], [40.0]])
        G = kernel_graph(X, gamma=1.0)
        assert G.number_of_edges() == 3  # exp(-1600) underflows but the edge stays
        assert G[0][2]["weight"] > 0

    def test_refuses_large_problems(self):
        with pytest.raises(ProblemTooLargeError, match=r"n_samples=6 exceeds max_samples=5.*knn_graph"):
            kernel_matrix(np.zeros((6, 2)), max_samples=5)

    @pytest.mark.parametrize(
        "kwargs, message",
        [
            ({"kernel": "poly"}, r"kernel must be one of 'rbf', 'linear', 'cosine'; got 'poly'"),
            ({"kernel": "linear", "gamma": 1.0}, r"gamma only applies to kernel='rbf'"),
            ({"gamma": -2.0}, r"gamma must be > 0, got -2.0"),
        ],
    )
    def test_bad_parameters(self, points, kwargs, message):
        with pytest.raises(InvalidParameterError, match=message):
            kernel_matrix(points, **kwargs)

    def test_cosine_zero_row(self):
        with pytest.raises(InvalidFeaturesError, match="row 0 of X is all zeros"):
            kernel_graph([[0.0, 0.0], [1.0, 1.0]], "cosine")


# =========================================================================== grids
def hand_grid(img, connectivity, beta=None):
    """Oracle: loop over pixels and their neighbours (img is (h, w, c))."""
    h, w, _ = img.shape
    steps = [(0, 1), (1, 0)] + ([(1, 1), (1, -1)] if connectivity == 8 else [])
    pairs = []
    for r, c in itertools.product(range(h), range(w)):
        for dr, dc in steps:
            rr, cc = r + dr, c + dc
            if 0 <= rr < h and 0 <= cc < w:
                d2 = float(np.sum((img[r, c] - img[rr, cc]) ** 2))
                pairs.append((r * w + c, rr * w + cc, d2, dr != 0 and dc != 0))
    if beta is None:
        mean = np.mean([p[2] for p in pairs])
        beta = 1.0 / (2.0 * mean) if mean > 0 else 0.0
    out = {}
    for i, j, d2, diag in pairs:
        out[min(i, j), max(i, j)] = np.exp(-beta * d2) / (np.sqrt(2.0) if diag else 1.0)
    return out, beta


def as_dict(edges, weights):
    return {(int(i), int(j)): float(x) for (i, j), x in zip(edges, weights)}


@pytest.fixture
def image34():
    return np.array([[0.0, 0.2, 0.9, 1.0], [0.1, 0.3, 0.8, 0.7], [0.0, 0.5, 0.6, 1.0]])


@pytest.fixture
def rgb():
    return np.random.default_rng(1).random((5, 6, 3))


class TestGrid:
    @pytest.mark.parametrize("shape", [(1, 1), (1, 5), (5, 1), (2, 2), (3, 4), (7, 5)])
    @pytest.mark.parametrize("connectivity", [4, 8])
    def test_edge_count_and_order(self, shape, connectivity):
        h, w = shape
        edges, weights, out_shape = grid_arrays(np.zeros(shape), connectivity)
        expected = 2 * h * w - h - w + (2 * (h - 1) * (w - 1) if connectivity == 8 else 0)
        assert out_shape == shape
        assert edges.shape == (expected, 2) and edges.dtype == np.int64
        assert weights.shape == (expected,)
        assert (edges[:, 0] < edges[:, 1]).all()
        # sorted by (i, j) and without duplicates
        assert np.array_equal(np.lexsort((edges[:, 1], edges[:, 0])), np.arange(expected))
        assert len({tuple(e) for e in edges.tolist()}) == expected

    def test_four_connectivity_matches_networkx(self):
        h, w = 4, 6
        edges, _, _ = grid_arrays(np.zeros((h, w)))
        ref = {tuple(sorted((a * w + b, c * w + d))) for (a, b), (c, d) in nx.grid_2d_graph(h, w).edges()}
        assert {tuple(e) for e in edges.tolist()} == ref

    @pytest.mark.parametrize("connectivity", [4, 8])
    def test_weights_match_hand_loop_gray(self, image34, connectivity):
        edges, weights, _ = grid_arrays(image34, connectivity)
        ref, _ = hand_grid(image34[:, :, None], connectivity)
        got = as_dict(edges, weights)
        assert got.keys() == ref.keys()
        for key in ref:
            assert got[key] == pytest.approx(ref[key], rel=1e-12), key

    @pytest.mark.parametrize("connectivity", [4, 8])
    def test_weights_match_hand_loop_rgb(self, rgb, connectivity):
        edges, weights, _ = grid_arrays(rgb, connectivity, channel_axis=-1)
        ref, _ = hand_grid(rgb, connectivity)
        got = as_dict(edges, weights)
        assert got.keys() == ref.keys()
        assert all(got[key] == pytest.approx(ref[key], rel=1e-12) for key in ref)

    def test_default_beta_formula(self, image34):
        """beta = 1 / (2 mean |I_p - I_q|^2); with it, the mean of -log w is 1/2."""
        _, beta = hand_grid(image34[:, :, None], 4)
        G = grid_graph(image34)
        assert G.graph["beta"] == pytest.approx(beta, rel=1e-12)
        weights = np.array([w for _, _, w in G.edges(data="weight")])
        assert np.mean(-np.log(weights)) == pytest.approx(0.5, rel=1e-12)

    def test_given_beta_and_sigma(self, image34):
        edges, w_beta, _ = grid_arrays(image34, 8, beta=2.0)
        _, w_sigma, _ = grid_arrays(image34, 8, sigma=0.5)
        ref, _ = hand_grid(image34[:, :, None], 8, beta=2.0)
        got = as_dict(edges, w_beta)
        assert got.keys() == ref.keys()
        assert all(got[key] == pytest.approx(ref[key], rel=1e-12) for key in ref)
        np.testing.assert_allclose(w_sigma, w_beta, rtol=1e-12)

    def test_beta_zero_gives_unit_weights(self, image34):
        edges, weights, _ = grid_arrays(image34, 8, beta=0)
        diagonal = (edges[:, 1] - edges[:, 0]) != 1
        diagonal &= (edges[:, 1] - edges[:, 0]) != 4
        np.testing.assert_array_equal(weights[~diagonal], 1.0)
        np.testing.assert_allclose(weights[diagonal], 1 / np.sqrt(2), rtol=1e-15)

    def test_constant_image(self):
        _, weights, _ = grid_arrays(np.full((3, 3), 7.0), 4)
        np.testing.assert_array_equal(weights, 1.0)

    def test_sharp_edge_does_not_vanish(self):
        img = np.zeros((4, 4))
        img[0, 0] = 1e6
        W = grid_matrix(img, beta=1.0)
        assert W.nnz == 2 * 24 and W[0, 1] > 0

    def test_integer_image_has_no_overflow(self, image34):
        img8 = (image34 * 255).astype(np.uint8)
        e1, w1, _ = grid_arrays(img8)
        e2, w2, _ = grid_arrays(img8.astype(float))
        np.testing.assert_array_equal(e1, e2)
        np.testing.assert_array_equal(w1, w2)

    def test_bool_image(self):
        _, weights, _ = grid_arrays(np.eye(3, dtype=bool), beta=1.0)
        assert set(np.round(weights, 12)) == {1.0, round(np.exp(-1.0), 12)}

    @pytest.mark.parametrize("connectivity", [4, 8])
    def test_channel_axis_equivalent(self, rgb, connectivity):
        last = grid_graph(rgb, connectivity, channel_axis=-1)
        first = grid_graph(np.moveaxis(rgb, -1, 0), connectivity, channel_axis=0)
        middle = grid_graph(np.moveaxis(rgb, -1, 1), connectivity, channel_axis=1)
        for other in (first, middle):
            assert list(other.nodes(data=True)) == list(last.nodes(data=True))
            assert list(other.edges(data=True)) == list(last.edges(data=True))
        assert last.nodes[2, 3]["features"] == rgb[2, 3].tolist()

    @pytest.mark.parametrize("connectivity", [4, 8])
    def test_graph_and_arrays_agree(self, rgb, connectivity):
        G = grid_graph(rgb, connectivity, channel_axis=2)
        edges, weights, (h, w) = grid_arrays(rgb, connectivity, channel_axis=2)
        assert list(G.nodes) == [(r, c) for r in range(h) for c in range(w)]
        got = {(u[0] * w + u[1], v[0] * w + v[1]): x for u, v, x in G.edges(data="weight")}
        got = {(min(a), max(a)): x for a, x in got.items()}
        assert got == as_dict(edges, weights)
        assert (G.graph["height"], G.graph["width"]) == (h, w) and G.graph["connectivity"] == connectivity

    @pytest.mark.parametrize("shape", [(1, 1), (1, 5), (5, 1), (2, 2), (2, 7), (7, 2), (6, 5, 3)])
    @pytest.mark.parametrize("connectivity", [4, 8])
    def test_matrix_agrees_with_arrays_bit_for_bit(self, shape, connectivity):
        img = np.random.default_rng(sum(shape)).random(shape)
        axis = -1 if len(shape) == 3 else None
        W = grid_matrix(img, connectivity, channel_axis=axis)
        assert W.has_canonical_format
        edges, weights, _ = grid_arrays(img, connectivity, channel_axis=axis)
        ref = sp.coo_array((weights, (edges[:, 0], edges[:, 1])), shape=W.shape).tocsr()
        ref = (ref + ref.T).tocsr()
        ref.sort_indices()
        np.testing.assert_array_equal(W.indptr, ref.indptr)
        np.testing.assert_array_equal(W.indices, ref.indices)
        np.testing.assert_array_equal(W.data, ref.data)

    @pytest.mark.parametrize("connectivity", [4, 8])
    def test_matrix_agrees_with_arrays_and_problem(self, image34, connectivity):
        W = grid_matrix(image34, connectivity)
        assert_symmetric_no_diagonal(W)
        assert W.has_canonical_format
        edges, weights, _ = grid_arrays(image34, connectivity)
        ref = sp.coo_array((weights, (edges[:, 0], edges[:, 1])), shape=W.shape).tocsr()
        assert abs(W - (ref + ref.T)).max() == 0
        P = Problem.from_graph(grid_graph(image34, connectivity))
        assert abs(P.W - W).max() == 0
        np.testing.assert_array_equal(P.X[:, 0], image34.ravel())

    @pytest.mark.parametrize("connectivity", [1, 2])
    def test_agrees_with_scikit_image_pixel_graph(self, rgb, connectivity):
        """scikit-image's pixel_graph (grayscale: it treats every axis as spatial)."""
        skgraph = pytest.importorskip("skimage.graph")
        gray = rgb[:, :, 0]
        beta = 0.8

        def contrast(a, b, distance):
            return np.exp(-beta * (a - b) ** 2) / distance

        ref, _ = skgraph.pixel_graph(gray, edge_function=contrast, connectivity=connectivity)
        W = grid_matrix(gray, 4 * connectivity, beta=beta)
        assert pair_set(W) == pair_set(ref)
        np.testing.assert_allclose(W.toarray(), ref.toarray(), rtol=1e-12)

    # ------------------------------------------------------------------ errors
    def test_nan_pixel_is_named(self, image34):
        img = image34.copy()
        img[1, 2] = np.nan
        with pytest.raises(InvalidFeaturesError, match=r"pixel \(1, 2\) has value nan") as err:
            grid_graph(img)
        assert err.value.node == (1, 2)

    def test_inf_pixel_names_channel(self, rgb):
        img = rgb.copy()
        img[4, 0, 2] = -np.inf
        with pytest.raises(InvalidFeaturesError, match=r"pixel \(4, 0\) has value -inf \(channel 2\)"):
            grid_arrays(img, channel_axis=-1)

    @pytest.mark.parametrize(
        "image, kwargs, message",
        [
            (np.zeros((3, 4, 3)), {}, r"must be 2-D .* got shape \(3, 4, 3\) \(pass channel_axis=-1"),
            (np.zeros(5), {}, r"must be 2-D .* got shape \(5,\)"),
            (np.zeros((3, 4)), {"channel_axis": -1}, r"must be 3-D .* got shape \(3, 4\)"),
            (np.zeros((2, 3, 4, 3)), {"channel_axis": -1}, r"must be 3-D"),
            (np.zeros((3, 4, 3)), {"channel_axis": 3}, r"channel_axis=3 is out of range"),
            (np.zeros((3, 4, 3)), {"channel_axis": "last"}, r"channel_axis must be None or an int, got 'last'"),
            (np.zeros((0, 4)), {}, r"image is empty: 0 rows, 4 columns"),
            (np.zeros((3, 4, 0)), {"channel_axis": -1}, r"image is empty: .* 0 channels"),
            (np.zeros((3, 4)), {"connectivity": 6}, r"connectivity must be 4 or 8; got 6"),
            (np.zeros((3, 4)), {"beta": -1.0}, r"beta must be >= 0, got -1.0"),
            (np.zeros((3, 4)), {"sigma": 0.0}, r"sigma must be > 0, got 0.0"),
            (np.zeros((3, 4)), {"beta": 1.0, "sigma": 1.0}, r"give beta or sigma, not both"),
        ],
    )
    def test_bad_parameters(self, image, kwargs, message):
        with pytest.raises(InvalidParameterError, match=message):
            grid_arrays(image, **kwargs)

    def test_non_numeric_image(self):
        with pytest.raises(InvalidFeaturesError, match=r"image has dtype <U1; pixel values must be real numbers"):
            grid_graph(np.array([["a", "b"], ["c", "d"]]))

    def test_input_not_modified(self, image34):
        before = image34.copy()
        grid_graph(image34, 8)
        np.testing.assert_array_equal(image34, before)


# =========================================================================== sparsify
def brute_top_k(G, k, symmetrize):
    """Oracle: each node ranks its neighbours by (-weight, node order)."""
    order = {u: i for i, u in enumerate(G.nodes)}
    picked = set()
    for u in G.nodes:
        ranked = sorted((v for v in G[u] if v != u), key=lambda v: (-G[u][v].get("weight", 1.0), order[v]))
        picked |= {(u, v) for v in ranked[:k]}
    key = lambda a, b: (a, b) if order[a] < order[b] else (b, a)  # noqa: E731
    if symmetrize == "union":
        return {key(a, b) for a, b in picked}
    return {key(a, b) for a, b in picked if (b, a) in picked}


def random_weighted_graph(seed, n=25, p=0.3):
    G = nx.gnp_random_graph(n, p, seed=seed)
    rng = np.random.default_rng(seed)
    for u, v in G.edges:
        G[u][v]["weight"] = float(rng.random())
        G[u][v]["label"] = f"{u}-{v}"
    for u in G.nodes:
        G.nodes[u]["features"] = [float(u)]
    return G


def edge_key_set(G, order):
    return {(u, v) if order[u] < order[v] else (v, u) for u, v in G.edges}


class TestSparsify:
    @pytest.mark.parametrize("seed", range(4))
    @pytest.mark.parametrize("k", [1, 3, 6])
    @pytest.mark.parametrize("symmetrize", ["union", "mutual"])
    def test_graph_matches_brute_force(self, seed, k, symmetrize):
        G = random_weighted_graph(seed)
        H = sparsify(G, k, symmetrize=symmetrize)
        order = {u: i for i, u in enumerate(G.nodes)}
        assert edge_key_set(H, order) == brute_top_k(G, k, symmetrize)
        assert list(H.nodes(data=True)) == list(G.nodes(data=True))
        for u, v, d in H.edges(data=True):
            assert d == G[u][v]

    @pytest.mark.parametrize("symmetrize", ["union", "mutual"])
    def test_matrix_matches_graph(self, symmetrize):
        G = random_weighted_graph(7, n=30)
        W = nx.to_scipy_sparse_array(G, format="csr")
        S = sparsify(W, 3, symmetrize=symmetrize)
        assert_symmetric_no_diagonal(S)
        H = sparsify(G, 3, symmetrize=symmetrize)
        assert pair_set(S) == edge_key_set(H, {u: u for u in G})
        for u, v in H.edges:
            assert S[u, v] == G[u][v]["weight"]

    def test_union_keeps_at_least_k_per_node(self):
        W = knn_matrix(np.random.default_rng(3).normal(size=(50, 2)), 10)
        S = sparsify(W, 4)
        assert (np.diff(S.indptr) >= 4).all()
        assert S.nnz < W.nnz

    def test_input_graph_not_modified(self):
        G = random_weighted_graph(2)
        G.graph["name"] = "g"
        snapshot = nx.node_link_data(G, edges="edges")
        H = sparsify(G, 2)
        assert nx.node_link_data(G, edges="edges") == snapshot
        H.nodes[0]["features"] = "changed"
        H.graph["name"] = "h"
        assert G.nodes[0]["features"] == [0.0] and G.graph["name"] == "g"

    def test_input_matrix_not_modified(self):
        W = knn_matrix(np.random.default_rng(4).normal(size=(20, 2)), 6)
        before = W.copy()
        sparsify(W, 2, symmetrize="mutual")
        assert (W != before).nnz == 0

    def test_dense_input(self):
        A = np.array([[0, 3, 1], [3, 0, 2], [1, 2, 0]], dtype=float)
        assert pair_set(sparsify(A, 1)) == {(0, 1), (1, 2)}  # node 2 picks its 2.0
        assert pair_set(sparsify(A, 1, symmetrize="mutual")) == {(0, 1)}

    def test_ties_go_to_earlier_nodes(self):
        G = nx.star_graph(4)  # unit weights: centre 0, leaves 1..4
        assert sorted(sparsify(G, 2).edges()) == [(0, 1), (0, 2), (0, 3), (0, 4)]
        assert sorted(sparsify(G, 2, symmetrize="mutual").edges()) == [(0, 1), (0, 2)]

    def test_large_k_keeps_everything_but_self_loops(self):
        G = random_weighted_graph(5)
        G.add_edge(3, 3, weight=9.0)
        H = sparsify(G, 100)
        assert H.number_of_edges() == G.number_of_edges() - 1
        assert not H.has_edge(3, 3)

    def test_unweighted(self):
        G = nx.cycle_graph(5)
        nx.set_edge_attributes(G, {e: 1.0 for e in G.edges}, "w")
        G[0][1]["w"] = 5.0
        H = sparsify(G, 1, weight=None, symmetrize="mutual")
        assert sorted(H.edges()) == [(0, 1)]

    # ------------------------------------------------------------------ errors
    def test_bad_k(self):
        with pytest.raises(InvalidParameterError, match=r"k must be >= 1, got 0"):
            sparsify(nx.path_graph(3), 0)

    def test_bad_symmetrize(self):
        with pytest.raises(InvalidParameterError, match=r"symmetrize must be one of 'union', 'mutual'; got 'both'"):
            sparsify(nx.path_graph(3), 1, symmetrize="both")

    def test_negative_weight_names_edge(self):
        G = nx.Graph([(0, 1, {"weight": 2.0}), (1, 2, {"weight": -0.5})])
        with pytest.raises(InvalidGraphError, match=r"edge \(1, 2\) has weight -0.5; similarities must be finite and >= 0"):
            sparsify(G, 1)

    def test_nan_weight_names_edge(self):
        G = nx.Graph([("a", "b", {"weight": 1.0}), ("b", "c", {"weight": float("nan")})])
        with pytest.raises(InvalidGraphError, match=r"edge \('b', 'c'\) has weight nan") as err:
            sparsify(G, 1)
        assert err.value.edge == ("b", "c")

    def test_non_numeric_weight_names_edge(self):
        G = nx.Graph([("a", "b", {"weight": "heavy"})])
        with pytest.raises(InvalidGraphError, match=r"edge \('a', 'b'\) has weight 'heavy'"):
            sparsify(G, 1)

    def test_negative_matrix_entry_names_edge(self):
        W = sp.csr_array(np.array([[0, -1.0], [-1.0, 0]]))
        with pytest.raises(InvalidGraphError, match=r"edge \(0, 1\) has weight -1.0"):
            sparsify(W, 1)

    def test_asymmetric_matrix_names_entry(self):
        W = sp.csr_array(np.array([[0, 1.0, 0], [1.0, 0, 2.0], [0, 0.5, 0]]))
        with pytest.raises(InvalidGraphError, match=r"not symmetric: W\[1, 2\] = 2.0 but W\[2, 1\] = 0.5"):
            sparsify(W, 1)

    def test_rounding_asymmetry_is_tolerated(self):
        W = sp.csr_array(np.array([[0, 1.0], [1.0 + 1e-15, 0]]))
        S = sparsify(W, 1)
        assert_symmetric_no_diagonal(S)
        assert S[0, 1] == 1.0 + 1e-15

    def test_non_square(self):
        with pytest.raises(InvalidGraphError, match=r"must be square, got shape \(2, 3\)"):
            sparsify(sp.csr_array((2, 3)), 1)

    def test_directed_and_multigraph(self):
        with pytest.raises(InvalidGraphError, match="undirected"):
            sparsify(nx.DiGraph([(0, 1)]), 1)
        with pytest.raises(InvalidGraphError, match="multigraphs"):
            sparsify(nx.MultiGraph([(0, 1)]), 1)

    def test_wrong_type(self):
        with pytest.raises(InvalidGraphError, match="got list"):
            sparsify([[0, 1], [1, 0]], 1)


def test_contrast_weight_is_the_grid_builders_weight():
    """The ufunc the tiled Dask grid uses gives the builders' weights bit for bit."""
    from graphclust.graphs import contrast_weight

    img = np.random.default_rng(0).random((5, 6))
    for connectivity in (4, 8):
        edges, w, _ = grid_arrays(img, connectivity, beta=3.0)
        (r0, c0), (r1, c1) = np.divmod(edges[:, 0], 6), np.divmod(edges[:, 1], 6)
        sq = (img[r0, c0] - img[r1, c1]) ** 2
        log_dist = np.where((r0 != r1) & (c0 != c1), 0.5 * np.log(2.0), 0.0)
        np.testing.assert_array_equal(w, contrast_weight(sq, 3.0, log_dist))
    assert contrast_weight(1e6, 1e3, 0.0) == np.finfo(np.float64).tiny  # floored, never 0


def test_import_compiles_nothing():
    """``import graphclust`` loads no compiled kernel (an eager numba signature costs
    every user half a second and LLVM's memory at import): no jitted function or ufunc
    of the package has a compiled signature until it is first called."""
    import subprocess
    import sys

    code = """
import sys, numba
from numba.core.registry import CPUDispatcher
from numba.np.ufunc.dufunc import DUFunc
import graphclust
compiled = []
for name, module in list(sys.modules.items()):
    if name.startswith("graphclust"):
        for attr, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.signatures:
                compiled.append(f"{name}.{attr}")
            if isinstance(obj, DUFunc) and obj.types:
                compiled.append(f"{name}.{attr}")
print(compiled)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
    from graphclust.graphs import contrast_weight

    assert contrast_weight(2.0, 0.5, 0.0) == pytest.approx(np.exp(-1.0))
