"""COSC estimator: the k = 2 guarantee, the fallback, errors, degenerate graphs, soft mode, k > 2."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphclust as gc
from graphclust.errors import (
    InfeasibleConstraintsError,
    InvalidParameterError,
    TooFewClustersError,
)
from graphclust.metrics import ari
from graphclust.spectral.cosc import COSC, _two_colouring


def balanced_cut(W, labels, b):
    """cut * gvol(V) / (gvol(C) gvol(C')) from scratch (dense)."""
    W = np.asarray(W.todense() if hasattr(W, "todense") else W)
    m = np.asarray(labels) == 1
    cut = W[m][:, ~m].sum()
    g1, g2 = b[m].sum(), b[~m].sum()
    return cut * (g1 + g2) / (g1 * g2)


def n_violated(pairs_must, pairs_cannot, labels):
    return sum(labels[u] != labels[v] for u, v in pairs_must) + sum(labels[u] == labels[v] for u, v in pairs_cannot)


@st.composite
def constrained_graphs(draw):
    n = draw(st.integers(5, 12))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    p = draw(st.sampled_from([0.25, 0.5, 0.8]))
    A = np.triu(rng.random((n, n)) < p, 1) * rng.uniform(0.1, 2.0, (n, n))
    W = A + A.T
    y = rng.integers(0, 2, n)
    y[0], y[1] = 0, 1  # both sides non-empty
    m = draw(st.integers(0, 2 * n))
    pairs = [tuple(sorted(rng.choice(n, 2, replace=False).tolist())) for _ in range(m)]
    must = sorted({pq for pq in pairs if y[pq[0]] == y[pq[1]]})
    cannot = sorted({pq for pq in pairs if y[pq[0]] != y[pq[1]]})
    cut = draw(st.sampled_from(["ncut", "rcut"]))
    steps = draw(st.sampled_from([1, 12]))  # 1: the schedule stops at gamma = 0, forcing the fallback
    return W, must, cannot, cut, seed, steps


@settings(max_examples=60, deadline=None)
@given(constrained_graphs())
def test_hard_mode_satisfies_every_consistent_constraint_set(case):
    W, must, cannot, cut, seed, steps = case
    G = nx.from_numpy_array(W)
    S = gc.SideInfo.from_pairs(must=must, cannot=cannot)  # soft weights: made hard in mode="hard"
    est = COSC(2, cut=cut, n_starts=2, max_gamma_steps=steps, random_state=seed).fit(G, S)
    labels = est.labels_
    assert n_violated(must, cannot, labels) == 0
    assert est.result_.violations.n_violated == 0
    assert set(labels.tolist()) == {0, 1}
    b = W.sum(1) if cut == "ncut" else np.ones(len(W))
    if (b[labels == 0].sum() > 0) and (b[labels == 1].sum() > 0):
        bc = balanced_cut(W, labels, b)
        assert est.result_.objective == pytest.approx(bc, rel=1e-9, abs=1e-12)
        start = est.result_.info["start_cut"]
        if start is not None:  # never worse than the constraint-satisfying start
            assert bc <= start + 1e-9
    assert est.cut_value_ == pytest.approx(np.triu(W)[labels == 0][:, labels == 1].sum()
                                           + np.triu(W)[labels == 1][:, labels == 0].sum())


def ordered(G):
    """The same graph with its nodes in sorted order (barbell_graph(4, 1) lists node 4 last)."""
    H = nx.Graph()
    H.add_nodes_from(sorted(G))
    H.add_edges_from(G.edges(data=True))
    return H


def brute_force_best(W, must, cannot, b):
    n = len(W)
    best = np.inf
    for bits in itertools.product([0, 1], repeat=n - 1):
        lab = np.array((0,) + bits)
        if lab.sum() == 0 or n_violated(must, cannot, lab):
            continue
        best = min(best, balanced_cut(W, lab, b))
    return best


@pytest.mark.parametrize("must, cannot", [([(0, 1)], [(0, 3)]), ([(4, 6)], [(0, 3), (5, 7)])])
def test_small_barbell_matches_brute_force(must, cannot):
    G = nx.barbell_graph(4, 0)
    W = nx.to_numpy_array(G)
    S = gc.SideInfo.from_pairs(must=must, cannot=cannot, weight=np.inf)
    est = COSC(random_state=0).fit(G, S)
    assert est.result_.violations.n_violated == 0
    assert est.result_.objective == pytest.approx(brute_force_best(W, must, cannot, W.sum(1)))


def test_barbell_with_bridge_matches_brute_force():
    G = ordered(nx.barbell_graph(4, 1))
    W = nx.to_numpy_array(G)
    must, cannot = [(0, 1)], [(0, 3), (5, 8)]
    est = COSC(random_state=0).fit(G, gc.SideInfo.from_pairs(must=must, cannot=cannot))
    assert n_violated(must, cannot, est.labels_) == 0
    assert est.result_.objective == pytest.approx(brute_force_best(W, must, cannot, W.sum(1)))
    assert est.result_.objective <= est.result_.info["start_cut"] + 1e-12


def test_fallback_is_used_when_schedule_is_capped_and_satisfies_all():
    G = nx.barbell_graph(4, 0)
    S = gc.SideInfo.from_pairs(cannot=[(0, 3)])
    free = COSC(random_state=0, max_gamma_steps=1).fit(G)  # gamma = 0 cuts the bridge
    assert free.labels_.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    est = COSC(random_state=0, max_gamma_steps=1).fit(G, S)
    info = est.result_.info
    assert info["fallback"] is True
    assert info["gamma"] == pytest.approx(info["gamma_bound"])
    assert est.labels_[0] != est.labels_[3]
    assert est.result_.violations.n_violated == 0
    assert est.result_.objective <= info["start_cut"] + 1e-12


def test_schedule_bisects_to_a_consistent_gamma():
    G = nx.barbell_graph(4, 0)
    S = gc.SideInfo.from_pairs(cannot=[(0, 3)])
    est = COSC(random_state=0).fit(G, S)
    info = est.result_.info
    gammas = [h["gamma"] for h in info["history"]]
    assert gammas[0] == 0.0 and info["history"][0]["chosen_violated"] == 1
    assert 0 < info["gamma"] <= max(gammas)
    assert est.result_.violations.n_violated == 0


def test_inconsistent_constraints_raise_with_witness():
    G = nx.path_graph(5)
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)])
    with pytest.raises(InfeasibleConstraintsError, match=r"0 - 1 - 2 joins nodes 0 and 2") as exc:
        COSC(mode="hard", random_state=0).fit(G, S)
    assert exc.value.path == [0, 1, 2]


def test_odd_cannot_link_cycle_raises_naming_the_cycle():
    G = nx.cycle_graph(6)
    S = gc.SideInfo.from_pairs(must=[(4, 5)], cannot=[(0, 2), (2, 4), (5, 0)])
    with pytest.raises(TooFewClustersError, match=r"odd cycle (0|2|4) - (0|2|4) - (0|2|4) - (0|2|4) \(nodes stand") as exc:
        COSC(mode="hard", random_state=0).fit(G, S)
    assert sorted(exc.value.clique) == [0, 2, 4] and exc.value.min_clusters == 3


def test_two_colouring_of_an_even_cycle():
    cl = np.array([[0, 1], [1, 2], [2, 3], [0, 3], [5, 6]])
    colour, comp = _two_colouring(7, cl, list(range(7)))
    assert colour.tolist() == [0, 1, 0, 1, -1, 0, 1]
    assert comp[0] == comp[3] != comp[5] and comp[4] == -1


def test_everything_must_linked_raises():
    G = nx.path_graph(3)
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)])
    with pytest.raises(TooFewClustersError, match="only 1 node"):
        COSC(mode="hard", random_state=0).fit(G, S)


def test_disconnected_graph_splits_along_components_with_zero_cut():
    G = nx.disjoint_union(nx.complete_graph(4), nx.complete_graph(5))
    est = COSC(random_state=0).fit(G, gc.SideInfo.from_pairs(cannot=[(0, 8)]))
    assert est.labels_.tolist() == [0] * 4 + [1] * 5
    assert est.result_.objective == 0.0 and est.cut_value_ == 0.0


def test_isolated_vertices_are_placed_by_their_cannot_links():
    G = nx.barbell_graph(4, 0)
    G.add_nodes_from(["iso1", "iso2"])
    S = gc.SideInfo.from_pairs(cannot=[("iso1", 0)])
    est = COSC(random_state=0).fit(G, S)
    part = est.partition_
    assert [part[u] for u in range(8)] == [0] * 4 + [1] * 4
    assert part["iso1"] == 1 and part["iso2"] == 0  # opposite its partner; free ones join node 0's cluster
    assert est.result_.violations.n_violated == 0
    assert est.result_.objective == pytest.approx(balanced_cut(nx.to_numpy_array(G), est.labels_,
                                                              nx.to_numpy_array(G).sum(1)))


def test_graph_without_edges_gets_the_constraint_colouring():
    G = nx.empty_graph(4)
    est = COSC(random_state=0).fit(G, gc.SideInfo.from_pairs(cannot=[(1, 2)]))
    assert est.result_.violations.n_violated == 0
    assert est.labels_[1] != est.labels_[2] and est.cut_value_ == 0.0
    none = COSC(random_state=0).fit(nx.empty_graph(3))
    assert none.n_clusters_ == 2


def test_planted_partition_is_recovered():
    G = nx.stochastic_block_model([30, 30], [[0.5, 0.03], [0.03, 0.5]], seed=1)
    y = np.repeat([0, 1], 30)
    S = gc.SideInfo.from_pairs(must=[(0, 5), (40, 50)], cannot=[(1, 59)])
    for cut in ("ncut", "rcut"):
        est = COSC(cut=cut, random_state=0).fit(G, S)
        assert ari(y, est.labels_) == 1.0


def test_soft_mode_trades_cut_against_violations():
    G = nx.barbell_graph(4, 0)
    S = gc.SideInfo.from_pairs(cannot=[(0, 3)])
    cheap = COSC(mode="soft", gamma=0.0, random_state=0).fit(G, S)
    dear = COSC(mode="soft", gamma=100.0, random_state=0).fit(G, S)
    assert cheap.result_.violations.n_violated == 1 and cheap.labels_.tolist() == [0] * 4 + [1] * 4
    assert dear.result_.violations.n_violated == 0
    assert dear.result_.objective > cheap.result_.objective
    assert dear.result_.info["gamma"] == 100.0


def test_soft_mode_uses_constraint_weights():
    G = nx.barbell_graph(4, 0)
    weak = gc.SideInfo.from_pairs(cannot=[(0, 3)], weight=0.001)
    strong = gc.SideInfo.from_pairs(cannot=[(0, 3)], weight=1000.0)
    assert COSC(mode="soft", gamma=1.0, random_state=0).fit(G, weak).result_.violations.n_violated == 1
    assert COSC(mode="soft", gamma=1.0, random_state=0).fit(G, strong).result_.violations.n_violated == 0


def test_soft_mode_needs_gamma():
    with pytest.raises(InvalidParameterError, match="gamma of COSC is required in mode='soft'"):
        COSC(mode="soft").fit(nx.path_graph(4))


@pytest.mark.parametrize("param, value, match", [
    ("cut", "cheeger", "cut of COSC must be one of 'ncut', 'rcut', got 'cheeger'"),
    ("mode", "medium", "mode of COSC must be one of"),
    ("n_clusters", 0, "n_clusters of COSC must be >= 1"),
    ("gamma", -1.0, "gamma of COSC must be >= 0"),
    ("n_starts", 0, "n_starts of COSC must be >= 1"),
    ("tol", 0.0, "tol of COSC must be > 0"),
    ("n_jobs", 0, "n_jobs of COSC must be None, -1 \\(all cores\\) or a positive int"),
])
def test_bad_parameters_are_named(param, value, match):
    with pytest.raises(InvalidParameterError, match=match):
        COSC(**{param: value}).fit(nx.path_graph(4))


def test_three_way_split_of_three_cliques():
    G = nx.disjoint_union_all([nx.complete_graph(5)] * 3)
    G.add_edges_from([(0, 5), (5, 10), (10, 0)])
    y = np.repeat([0, 1, 2], 5)
    S = gc.SideInfo.from_pairs(must=[(1, 2)], cannot=[(3, 8), (8, 13)])
    est = COSC(3, random_state=0).fit(G, S)
    assert ari(y, est.labels_) == 1.0
    assert est.n_clusters_ == 3 and est.result_.violations.n_violated == 0
    assert len(est.result_.info["splits"]) == 2
    assert est.result_.objective == pytest.approx(3 * 2 / 22)  # each clique: cut 2, volume 22


def test_k_way_reports_violations_honestly():
    # three mutually cannot-linked nodes inside one clique: 3-way splitting must
    # separate them; the reported count matches a recount
    G = nx.disjoint_union(nx.complete_graph(6), nx.complete_graph(6))
    S = gc.SideInfo.from_pairs(cannot=[(0, 1), (1, 2), (0, 2)])
    est = COSC(3, random_state=0).fit(G, S)
    lab = est.labels_
    assert est.result_.violations.n_violated == n_violated([], [(0, 1), (1, 2), (0, 2)], lab)
    with pytest.raises(TooFewClustersError, match="n_clusters=5 but the problem has only 4 node"):
        COSC(5).fit(nx.path_graph(4))


def test_cli_method_is_registered():
    from graphclust.base import METHODS

    est = METHODS["cosc"][0](n_clusters=2, random_state=0)
    assert isinstance(est, COSC) and est.random_state == 0


def test_soft_mode_three_way_and_progress_bar(capsys):
    G = nx.disjoint_union_all([nx.complete_graph(5)] * 3)
    G.add_edges_from([(0, 5), (5, 10), (10, 0)])
    S = gc.SideInfo.from_pairs(must=[(0, 6)])  # a wrong soft must-link across two cliques
    est = COSC(3, mode="soft", gamma=0.01, random_state=0, progress=True).fit(G, S)
    assert ari(np.repeat([0, 1, 2], 5), est.labels_) == 1.0  # cheap to violate: the cliques win
    assert est.result_.violations.n_violated == 1
    hard = COSC(2, random_state=0, progress=True).fit(G, gc.SideInfo.from_pairs(cannot=[(1, 2)]))
    assert hard.labels_[1] != hard.labels_[2]
    assert "COSC gamma" in capsys.readouterr().err


def test_k_way_splits_a_disconnected_cluster_along_its_components():
    # four disjoint cliques of different sizes plus a weak chain: every split inside a
    # cluster that still holds several cliques must cut between cliques, not peel
    # off vertices (in the sub-problem every component split has cut 0)
    sizes = [8, 6, 5, 4]
    G = nx.disjoint_union_all([nx.complete_graph(s) for s in sizes])
    y = np.repeat(np.arange(4), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    G.add_weighted_edges_from([(int(a), int(b), 0.01) for a, b in zip(starts[:-1], starts[1:])])
    est = COSC(4, random_state=0).fit(G, gc.SideInfo.from_pairs(cannot=[(1, 9)]))
    assert ari(y, est.labels_) == 1.0
    assert est.result_.violations.n_violated == 0


def test_k_way_with_many_cannot_links_keeps_the_clusters():
    # labelled pairs on four noisy blobs: a non-bipartite cannot-link graph across all
    # classes must not force the first split to separate every cannot-link
    X, y = gc.datasets.make_blobs(160, 4, separation=6.0, random_state=0)
    W = gc.knn_matrix(X, 8)
    S = gc.SideInfo.sample(y, n_pairs=120, random_state=0)
    est = COSC(4, random_state=0).fit(W, S)
    free = COSC(4, random_state=0).fit(W)
    assert ari(y, est.labels_) >= max(0.9, ari(y, free.labels_) - 0.05)


def test_n_jobs_gives_the_same_answer():
    X, y = gc.datasets.make_moons(300, noise=0.1, random_state=0)
    W = gc.knn_matrix(X, 10)
    S = gc.SideInfo.sample(y, n_pairs=30, random_state=1)
    one = COSC(random_state=0).fit(W, S)
    two = COSC(random_state=0, n_jobs=2).fit(W, S)
    np.testing.assert_array_equal(one.labels_, two.labels_)
    assert one.result_.objective == two.result_.objective


def test_schedule_carries_a_bounded_number_of_runs_per_gamma():
    # at gamma = 0 every start runs; later only the warm chains and the consistent starts
    from graphclust.spectral.cosc import _N_CHAINS

    X, y = gc.datasets.make_blobs(300, 2, separation=2.0, random_state=0)
    S = gc.SideInfo.sample(y, n_pairs=40, random_state=0)
    est = COSC(n_starts=5, mode="hard", random_state=0).fit(gc.knn_matrix(X, 10), S)
    hist = est.result_.info["history"]
    assert len(hist[0]["ratios"]) == 5 + 1  # five starts and the constraint-satisfying partition
    assert all(len(h["ratios"]) <= _N_CHAINS + 2 for h in hist[1:])
    assert est.result_.violations.n_violated == 0


def test_near_isolated_vertices_do_not_break_the_balance():
    # weights that underflowed to 1e-300 leave a vertex practically isolated; the
    # objective must stay a valid non-negative balanced cut
    G = nx.barbell_graph(5, 0)
    G.add_edge(10, 0, weight=1e-300)
    G.add_edge(10, 9, weight=1e-300)
    est = COSC(random_state=0).fit(G, gc.SideInfo.from_pairs(cannot=[(0, 9)]))
    assert est.result_.objective >= 0.0
    assert est.labels_[:5].tolist() == [est.labels_[0]] * 5 and est.labels_[0] != est.labels_[9]


def test_stalled_schedule_jumps_to_where_the_known_consistent_cut_wins(monkeypatch):
    # large graphs: once a gamma step returns the partition of the step before, gamma
    # goes straight to the price at which the best known consistent partition ties it
    from graphclust.spectral import cosc as cosc_module

    monkeypatch.setattr(cosc_module, "_JUMP_MIN_N", 0)
    G = ordered(nx.barbell_graph(4, 1))
    W = nx.to_numpy_array(G)
    must, cannot = [(0, 1)], [(0, 3), (5, 8)]
    est = COSC(random_state=0).fit(G, gc.SideInfo.from_pairs(must=must, cannot=cannot))
    hist = est.result_.info["history"]
    assert [h["chosen_violated"] > 0 for h in hist[:2]] == [True, True]
    stalled = hist[1]["labels"]
    assert np.array_equal(hist[0]["labels"], stalled)
    # the crossing, recomputed from scratch on the contracted graph (0 and 1 merged):
    # (cut + gamma * violations) * vol / (vol_a * vol_b) = best consistent cut known
    lab = np.r_[stalled[0], stalled].astype(int)  # back to the 9 original nodes
    b = W.sum(1)
    scale = b.sum() / (b[lab == 0].sum() * b[lab == 1].sum())
    cut = W[lab == 0][:, lab == 1].sum()
    viol = n_violated([], cannot, lab)
    known = est.result_.info["start_cut"]  # the constraint-satisfying start C0 ...
    crossing = (known / scale - cut) / viol
    assert hist[2]["gamma"] <= 1.001 * crossing * (1 + 1e-9)  # ... or a better repaired start
    assert hist[2]["gamma"] > 2 * hist[1]["gamma"]  # a jump, not a doubling
    assert est.result_.violations.n_violated == 0
    assert est.result_.objective <= known + 1e-12
