"""Multilevel COSC: heavy-edge matching, exact prolongation, and the hard-mode
guarantee kept through coarsening and refinement."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import graphclust as gc
from graphclust.errors import InvalidParameterError
from graphclust.metrics import ari
from graphclust.spectral import COSC
from graphclust.spectral import cosc as cosc_module
from graphclust.spectral.multilevel import coarsen, heavy_edge_matching, merge_groups


def random_graph(n, seed):
    G = nx.random_geometric_graph(n, 0.25, seed=seed)
    rng = np.random.default_rng(seed)
    W = nx.to_scipy_sparse_array(G, format="csr", dtype=float)
    W.data = rng.uniform(0.1, 1.0, W.nnz)
    W = sp.csr_array(sp.triu(W, 1) + sp.triu(W, 1).T)
    return W


def ncut(W, mask, b):
    cut = W[mask][:, ~mask].sum()
    return cut * b.sum() / (b[mask].sum() * b[~mask].sum())


@pytest.mark.parametrize("seed", range(5))
def test_matching_pairs_neighbours_and_leaves_no_free_edge(seed):
    W = random_graph(80, seed)
    b = np.asarray(W.sum(1)).ravel() + 1e-3
    cl = np.array([[0, 1], [2, 3], [4, 5]])
    lab, k = heavy_edge_matching(W, b, cl, random_state=seed)
    sizes = np.bincount(lab, minlength=k)
    assert sizes.max() <= 2 and sizes.sum() == 80
    A = W.toarray()
    for g in np.flatnonzero(sizes == 2):
        u, v = np.flatnonzero(lab == g)
        assert A[u, v] > 0  # only neighbours are matched
    assert (sizes[lab[cl.ravel()]] == 1).all()  # cannot-link endpoints stay alone
    # maximal: no edge joins two single, non-frozen vertices
    single = (sizes[lab] == 1)
    single[cl.ravel()] = False
    assert not (A[np.ix_(single, single)] > 0).any()


@pytest.mark.parametrize("seed", range(3))
def test_prolongation_keeps_the_balanced_cut_exactly(seed):
    W = random_graph(120, seed)
    b = np.asarray(W.sum(1)).ravel()
    cl = np.array([[0, 7], [3, 9]])
    levels, (Wc, bc, clc) = coarsen(W, b, cl, min_n=20, random_state=seed)
    assert len(levels) >= 2 and Wc.shape[0] <= 0.5 * W.shape[0]
    rng = np.random.default_rng(seed)
    for _ in range(10):
        mask = rng.random(Wc.shape[0]) < 0.5
        if mask.all() or not mask.any():
            continue
        fine = mask
        for _, _, _, lab in reversed(levels):
            fine = fine[lab]
        assert ncut(W, fine, b) == pytest.approx(ncut(Wc, mask, bc), rel=1e-10)
        # the coarse cannot-links are the fine ones: same satisfied / violated status
        assert ((fine[cl[:, 0]] == fine[cl[:, 1]]) == (mask[clc[:, 0]] == mask[clc[:, 1]])).all()


def test_merge_groups_sums_weights():
    W = sp.csr_array(np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=float))
    W2, b2 = merge_groups(W, np.array([1.0, 2, 3]), np.array([0, 0, 1]), 2)
    assert W2.toarray().tolist() == [[0, 5], [5, 0]]
    assert b2.tolist() == [3, 3]


@pytest.mark.parametrize("seed", range(12))
def test_multilevel_hard_mode_satisfies_every_constraint(seed, monkeypatch):
    monkeypatch.setattr(cosc_module, "_COARSEST_N", 15)  # and multilevel=True below
    rng = np.random.default_rng(seed)
    n = int(rng.integers(60, 140))
    W = random_graph(n, seed)
    y = rng.integers(0, 2, n)
    pairs = rng.choice(n, size=(int(rng.integers(1, 15)), 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    S = gc.SideInfo.from_pairs(must=pairs[same].tolist(), cannot=pairs[~same].tolist())
    est = COSC(2, multilevel=True, n_starts=2, random_state=seed).fit(W, S)
    info = est.result_.info
    assert est.result_.violations.n_violated == 0
    if info["start_cut"] is not None:  # never worse than the constraint-satisfying start
        assert est.result_.objective <= info["start_cut"] + 1e-9
    assert info["levels"][-1] < info["levels"][0]  # coarsened at least once
    for step in info["refined"]:
        assert step["cut"] >= 0 and isinstance(step["kept"], bool)


def test_multilevel_recovers_a_planted_partition(monkeypatch):
    monkeypatch.setattr(cosc_module, "_COARSEST_N", 40)
    G = nx.stochastic_block_model([100, 100], [[0.2, 0.01], [0.01, 0.2]], seed=3)
    y = np.repeat([0, 1], 100)
    S = gc.SideInfo.from_pairs(must=[(0, 5)], cannot=[(1, 150)])
    est = COSC(multilevel=True, random_state=0).fit(G, S)
    assert ari(y, est.labels_) == 1.0
    assert len(est.result_.info["levels"]) >= 3


def test_multilevel_auto_coarsens_only_graphs_above_the_coarsest_size(monkeypatch):
    monkeypatch.setattr(cosc_module, "_COARSEST_N", 50)
    S = gc.SideInfo.from_pairs(cannot=[(0, 4)])
    small = COSC(random_state=0).fit(nx.barbell_graph(25, 0), S)  # 50 vertices
    assert "levels" not in small.result_.info
    large = COSC(random_state=0).fit(nx.barbell_graph(30, 0), S)  # 60 vertices
    assert large.result_.info["levels"][0] == 60 and large.result_.info["levels"][-1] <= 50
    assert large.result_.violations.n_violated == 0
    off = COSC(multilevel=False, random_state=0).fit(nx.barbell_graph(30, 0), S)
    assert "levels" not in off.result_.info


def test_multilevel_parameter_is_checked():
    with pytest.raises(InvalidParameterError, match="multilevel of COSC must be one of"):
        COSC(multilevel="always").fit(nx.path_graph(4))
