import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, strategies as st

import graphclust as gc
from graphclust.errors import (
    InfeasibleConstraintsError,
    InvalidConstraintError,
    InvalidParameterError,
    TooFewClustersError,
    UnknownNodeError,
)
from graphclust.sideinfo import _pair_from_linear


def test_from_pairs_signs_and_strengths():
    S = gc.SideInfo.from_pairs(must=[(1, 2), (2, 3, 5.0)], cannot=[(1, 4)], weight=2.0)
    assert sorted(S.edges()) == [(1, 2, 2.0), (1, 4, -2.0), (2, 3, 5.0)]
    assert S.weight(4, 1) == -2.0 and S.weight(1, 3) == 0.0
    assert S.cannot_links() == [(1, 4, 2.0)]


def test_duplicate_pair_keeps_strongest_and_ignores_order():
    S = gc.SideInfo.from_pairs(must=[(1, 2, 1.0), (2, 1, 3.0)])
    assert S.edges() == [(1, 2, 3.0)]


def test_self_loop_constraint_refused():
    with pytest.raises(InvalidConstraintError, match="joins node 'a' to itself") as err:
        gc.SideInfo.from_pairs(must=[("a", "a")])
    assert err.value.constraint == ("a", "a")


def test_pair_both_must_and_cannot_refused():
    with pytest.raises(InvalidConstraintError, match=r"\(2, 1\).*both as a must-link and as a cannot-link"):
        gc.SideInfo.from_pairs(must=[(2, 1)], cannot=[(1, 2)])


@pytest.mark.parametrize("w", [0.0, -1.0, np.nan, "x"])
def test_bad_strengths(w):
    with pytest.raises((InvalidConstraintError, InvalidParameterError)):
        gc.SideInfo.from_pairs(must=[(1, 2, w)])


def test_from_graph_signed_and_kind():
    G = nx.Graph()
    G.add_edge(0, 1, weight=2.0)
    G.add_edge(1, 2, weight=-np.inf)
    G.add_edge(2, 3, kind="cannot", weight=3.0)
    G.add_edge(3, 4, kind="must")
    G.add_node(0, label="fg")
    S = gc.SideInfo.from_graph(G)
    assert sorted(S.edges()) == [(0, 1, 2.0), (1, 2, -np.inf), (2, 3, -3.0), (3, 4, 1.0)]
    assert S.seeds == {0: "fg"}
    H = S.to_networkx()
    assert gc.SideInfo.from_graph(H) == S
    G.add_edge(5, 6, kind="maybe")
    with pytest.raises(InvalidConstraintError, match="kind='maybe'"):
        gc.SideInfo.from_graph(G)


def test_from_labels_is_sparse_but_implies_everything():
    labels = {i: i % 3 for i in range(30)}
    S = gc.SideInfo.from_labels(labels)
    assert len(S.must_links()) == 27  # 3 chains of 10 nodes
    assert len(S.cannot_links()) == 3  # one per label pair
    report = S.check()
    assert report.n_components == 3 and report.min_clusters == 3
    # every cross-label pair is implied: components pairwise cannot-linked
    assert report.n_implied_cannot == 3 * 10 * 10
    assert S.seeds == labels


def test_union():
    a = gc.SideInfo.from_pairs(must=[(0, 1)])
    b = gc.SideInfo.from_pairs(cannot=[(1, 2)])
    assert sorted((a | b).edges()) == [(0, 1, 1.0), (1, 2, -1.0)]


# ---------------------------------------------------------------- sampling
def test_pair_from_linear_is_the_row_major_upper_triangle():
    n = 9
    expected = [(i, j) for i in range(n) for j in range(i + 1, n)]
    i, j = _pair_from_linear(np.arange(len(expected)), n)
    assert list(zip(i.tolist(), j.tolist())) == expected
    n = 100_003  # large n: the float inversion must still be exact
    k = np.array([0, 1, n - 2, n - 1, n * (n - 1) // 2 - 1])
    i, j = _pair_from_linear(k, n)
    assert (i.tolist(), j.tolist()) == ([0, 0, 0, 1, n - 2], [1, 2, n - 1, 2, n - 1])


def test_sample_n_pairs_truthful_without_noise(global_random_seed):
    y = np.repeat([0, 1, 2], 20)
    S = gc.SideInfo.sample(y, n_pairs=200, random_state=global_random_seed)
    assert len(S) == 200
    for u, v, w in S.edges():
        assert (w > 0) == (y[u] == y[v])
    assert S.sampling["n_must"] + S.sampling["n_cannot"] == 200
    again = gc.SideInfo.sample(y, n_pairs=200, random_state=global_random_seed)
    assert again == S


def test_sample_noise_flips_the_expected_fraction():
    y = np.repeat(np.arange(5), 100)
    S = gc.SideInfo.sample(y, n_pairs=20000, noise=0.2, random_state=1)
    wrong = sum((w > 0) != (y[u] == y[v]) for u, v, w in S.edges())
    assert wrong == S.sampling["n_flipped"]
    assert abs(wrong / 20000 - 0.2) < 0.015


def test_sample_rate_conventions():
    n = 150
    y = np.repeat([0, 1, 2], 50)
    paper = gc.SideInfo.sample(y, rate=0.01, convention="paper", random_state=0)
    assert len(paper) == round(0.01 * n * n / 2)  # r is a fraction of the n^2 entries of E
    ref = gc.SideInfo.sample(y, rate=0.01, convention="ref_code", noise=0.1, random_state=0)
    draws = round(0.01 * n * n)
    # about r*n^2 unordered pairs, minus collisions (the seed spec: ~225 on iris at r = 0.01)
    assert 0.9 * draws <= len(ref) <= draws
    flipped = sum((w > 0) != (y[u] == y[v]) for u, v, w in ref.edges())
    assert abs(flipped / len(ref) - 0.1) < 0.06


def test_sample_among_restricts_to_a_fold():
    y = np.arange(40) % 2
    fold = np.arange(10, 20)
    S = gc.SideInfo.sample(y, n_pairs=30, among=fold, random_state=0)
    assert S.nodes() <= set(fold.tolist())


def test_sample_errors():
    with pytest.raises(InvalidParameterError, match="exactly one"):
        gc.SideInfo.sample([0, 1, 1])
    with pytest.raises(InvalidParameterError, match="exceeds the 3 distinct pairs"):
        gc.SideInfo.sample([0, 1, 1], n_pairs=4)
    with pytest.raises(InvalidParameterError, match="convention"):
        gc.SideInfo.sample([0, 1, 1], rate=0.1, convention="matlab")


# ---------------------------------------------------------------- check
def test_check_reports_conflict_with_witness_path():
    S = gc.SideInfo.from_pairs(must=[(3, 8), (8, 12)], cannot=[(3, 12)], weight=np.inf)
    report = S.check(nx.path_graph(13))
    assert not report.feasible
    (conflict,) = report.conflicts
    assert conflict.hard and conflict.constraint == (3, 12) and conflict.path == [3, 8, 12]
    assert "must-link path 3 - 8 - 12 joins nodes 3 and 12" in str(conflict)
    with pytest.raises(InfeasibleConstraintsError) as err:
        report.raise_if_infeasible()
    assert err.value.path == [3, 8, 12] and err.value.constraint == (3, 12)


def test_soft_conflict_is_reported_but_not_infeasible():
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)])
    report = S.check()
    assert len(report.conflicts) == 1 and not report.conflicts[0].hard and report.feasible


def test_check_min_clusters_and_too_few():
    # three must-link components pairwise cannot-linked: a triangle needs 3 clusters
    S = gc.SideInfo.from_pairs(must=[(0, 1), (2, 3), (4, 5)], cannot=[(1, 2), (3, 4), (5, 0)])
    report = S.check(n_clusters=2)
    assert report.min_clusters == 3 and report.max_clusters_needed == 3
    assert report.n_components == 3 and not report.feasible
    with pytest.raises(TooFewClustersError, match="at least 3") as err:
        report.raise_if_infeasible()
    assert err.value.min_clusters == 3 and len(err.value.clique) == 3
    with pytest.raises(TooFewClustersError, match="only 6 nodes"):
        S.check(nx.path_graph(6), n_clusters=7)


def test_check_unknown_node():
    S = gc.SideInfo.from_pairs(must=[(0, 99)])
    with pytest.raises(UnknownNodeError, match="99"):
        S.check(nx.path_graph(3))


def test_coloring_is_proper_and_bounds_ordered(rng):
    n = 60
    pairs = {tuple(sorted(rng.choice(n, 2, replace=False).tolist())) for _ in range(150)}
    pairs = sorted(pairs)
    must = pairs[:40]
    cannot = [p for p in pairs[40:]]
    S = gc.SideInfo.from_pairs(must=must, cannot=cannot)
    report = S.check(nx.empty_graph(n))
    comp, col = report.component_of, report.coloring
    for a, b in report.implied_cannot:
        assert col[a] != col[b]
    # the clique really is a clique of cannot-linked components
    cl = [comp[u] for u in report.clique]
    implied = {tuple(p) for p in report.implied_cannot.tolist()}
    for a, b in itertools.combinations(cl, 2):
        assert (min(a, b), max(a, b)) in implied
    assert report.min_clusters <= report.max_clusters_needed


def _brute_chromatic(n_comp, edges):
    for k in range(1, n_comp + 1):
        for col in itertools.product(range(k), repeat=n_comp):
            if all(col[a] != col[b] for a, b in edges):
                return k
    return n_comp


@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.booleans()), max_size=14))
def test_check_agrees_with_brute_force(triples):
    seen, cons = set(), []
    for u, v, is_must in triples:
        if u != v and frozenset((u, v)) not in seen:
            seen.add(frozenset((u, v)))
            cons.append((u, v, 1.0 if is_must else -1.0))
    S = gc.SideInfo(cons)
    report = S.check(nx.empty_graph(8))
    # components by brute-force closure
    G = nx.Graph()
    G.add_nodes_from(range(8))
    G.add_edges_from((u, v) for u, v, w in cons if w > 0)
    comps = list(nx.connected_components(G))
    assert report.n_components == len(comps)
    comp_id = {u: i for i, c in enumerate(comps) for u in c}
    conflicts = {(u, v) for u, v, w in cons if w < 0 and comp_id[u] == comp_id[v]}
    assert {frozenset(c.constraint) for c in report.conflicts} == {frozenset(c) for c in conflicts}
    for c in report.conflicts:  # each witness is a real must-link path
        assert c.path[0] == c.constraint[0] and c.path[-1] == c.constraint[1]
        assert all(G.has_edge(a, b) for a, b in zip(c.path[:-1], c.path[1:]))
    edges = {tuple(sorted((comp_id[u], comp_id[v]))) for u, v, w in cons if w < 0 and comp_id[u] != comp_id[v]}
    chi = _brute_chromatic(len(comps), edges) if edges else 1
    assert report.min_clusters <= chi <= report.max_clusters_needed


def test_reduce_keeps_the_closure():
    S = gc.SideInfo.from_pairs(
        must=[(0, 1), (1, 2), (0, 2), (3, 4)], cannot=[(0, 3), (1, 4), (2, 3, 5.0)], weight=1.0
    )
    R = S.reduce()
    assert len(R.must_links()) == 3 and len(R.cannot_links()) == 1
    assert R.cannot_links()[0][2] == 5.0  # the strongest is kept
    a, b = S.check(), R.check()
    assert a.n_components == b.n_components and a.n_implied_cannot == b.n_implied_cannot


def test_hard_conflict_is_found_behind_a_shorter_soft_path():
    """Review finding: a soft must-link shortcut hid a hard contradiction."""
    hard = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (2, 3)], cannot=[(0, 3)], weight=np.inf)
    S = hard | gc.SideInfo.from_pairs(must=[(0, 4), (4, 3)])
    report = S.check(nx.path_graph(5))
    (conflict,) = report.conflicts
    assert conflict.hard and conflict.path == [0, 1, 2, 3]
    assert not report.feasible
    with pytest.raises(InfeasibleConstraintsError, match="0 - 1 - 2 - 3"):
        report.raise_if_infeasible()


def test_n_clusters_without_data_is_not_compared_with_constrained_nodes():
    S = gc.SideInfo.from_pairs(must=[(0, 1)])
    assert S.check(n_clusters=3).feasible


@pytest.mark.parametrize("entry, match", [(1, "must be a pair"), ((1, 2, 3, 4), "must be a pair"),
                                          (([1], [2]), "hashable")])
def test_malformed_pair_entries(entry, match):
    with pytest.raises(InvalidConstraintError, match=match):
        gc.SideInfo.from_pairs(must=[entry])
