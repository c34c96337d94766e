"""graphclust.conflict_repair: the lightest set of soft constraints whose removal leaves
consistent side information, against brute force, and on planted noise."""

import itertools

import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import InfeasibleConstraintsError
from graphclust.conflict_repair import _conflict_paths, disjoint_cycles_bound, find_suspects


def consistent(n, pairs, weights):
    from graphclust.sideinfo import must_link_components

    _, comp = must_link_components(n, pairs[weights > 0])
    return not ((weights < 0) & (comp[pairs[:, 0]] == comp[pairs[:, 1]])).any()


def brute_force_min_weight(n, pairs, weights):
    """The least total weight of soft constraints whose removal leaves no conflict."""
    soft = np.flatnonzero(np.isfinite(weights))
    best = np.inf
    for r in range(len(soft) + 1):
        for drop in itertools.combinations(soft.tolist(), r):
            keep = np.ones(len(weights), bool)
            keep[list(drop)] = False
            if consistent(n, pairs[keep], weights[keep]):
                best = min(best, np.abs(weights[list(drop)]).sum())
    return best


def random_instance(rng, n, m, hard=0.0):
    all_pairs = list(itertools.combinations(range(n), 2))
    pairs = np.array([all_pairs[i] for i in rng.choice(len(all_pairs), m, replace=False)])
    w = rng.uniform(0.5, 3.0, m) * np.where(rng.random(m) < 0.6, 1.0, -1.0)
    w[rng.random(m) < hard] *= np.inf
    return pairs, w


def test_exact_repair_is_the_lightest_and_consistent(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    checked = 0
    while checked < 25:
        n = int(rng.integers(3, 8))
        pairs, w = random_instance(rng, n, int(rng.integers(3, min(10, n * (n - 1) // 2) + 1)), hard=0.15)
        try:
            rep = find_suspects(list(range(n)), pairs, w)
        except InfeasibleConstraintsError:
            continue
        keep = np.ones(len(w), bool)
        keep[rep.rows] = False
        assert consistent(n, pairs[keep], w[keep]) and np.isfinite(w[rep.rows]).all()
        assert rep.exact and rep.removed_weight == pytest.approx(brute_force_min_weight(n, pairs, w))
        checked += 1


def test_greedy_repair_breaks_every_conflict_and_is_near_the_optimum(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    for _ in range(15):
        n = int(rng.integers(5, 8))
        pairs, w = random_instance(rng, n, int(rng.integers(5, min(11, n * (n - 1) // 2) + 1)))
        greedy = find_suspects(list(range(n)), pairs, w, exact_max=1)
        keep = np.ones(len(w), bool)
        keep[greedy.rows] = False
        assert consistent(n, pairs[keep], w[keep])
        assert greedy.exact == (greedy.n_conflicts == 0)
        assert greedy.removed_weight >= brute_force_min_weight(n, pairs, w) - 1e-9


def test_the_lower_bound_is_below_the_lightest_repair_and_exact_on_disjoint_conflicts(global_random_seed):
    """No repair is lighter than the bound (brute force), the greedy report carries it,
    an exact report's bound is its own weight; on conflicts that share no constraint
    the bound is the lightest repair itself."""
    rng = np.random.default_rng(global_random_seed)
    positive = 0
    for _ in range(20):
        n = int(rng.integers(5, 8))
        pairs, w = random_instance(rng, n, int(rng.integers(5, min(11, n * (n - 1) // 2) + 1)))
        best = brute_force_min_weight(n, pairs, w)
        bound = disjoint_cycles_bound(n, pairs, w)
        assert 0.0 <= bound <= best + 1e-9
        greedy = find_suspects(list(range(n)), pairs, w, exact_max=1)
        assert greedy.lower_bound == pytest.approx(bound) and bound <= greedy.removed_weight + 1e-9
        exact = find_suspects(list(range(n)), pairs, w)
        assert exact.lower_bound == pytest.approx(exact.removed_weight)
        positive += (bound > 0) == (greedy.n_conflicts > 0)
    assert positive == 20
    # three triangles on separate nodes, each a must-link path closed by a cannot-link
    # (the lightest constraint of each: 0.5, 2, 1), and one hard must-link
    pairs = np.array([[0, 1], [1, 2], [0, 2], [3, 4], [4, 5], [3, 5], [6, 7], [7, 8], [6, 8]])
    w = np.array([1.0, 0.5, -3.0, np.inf, 2.0, -4.0, 1.0, 1.5, -1.0])
    assert disjoint_cycles_bound(9, pairs, w) == pytest.approx(3.5) == brute_force_min_weight(9, pairs, w)
    assert disjoint_cycles_bound(9, pairs[:2], w[:2]) == 0.0
    rep = find_suspects(list(range(9)), pairs, w, exact_max=2)
    assert not rep.exact and "the lightest such set weighs at least 3.5" in rep.summary()


@pytest.mark.parametrize("seed", range(3))
def test_conflict_paths_are_the_breadth_first_paths_of_scipy(seed):
    """The numba search returns, for every conflicting cannot-link, the must-link path
    scipy's breadth-first search finds (neighbours in node order; parallel must-links
    resolved to the last row; self-loops ignored), walked from the second end."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    from graphclust.sideinfo import must_link_components

    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(5, 50))
        pairs = rng.integers(0, n, (int(rng.integers(5, 150)), 2))
        pairs = np.concatenate([pairs, pairs[:4]])  # parallel constraints, self-loops
        w = np.where(rng.random(len(pairs)) < 0.6, 1.0, -1.0)
        w[pairs[:, 0] == pairs[:, 1]] = 1.0
        must = w > 0
        _, comp = must_link_components(n, pairs[must])
        bad = np.flatnonzero(~must & (comp[pairs[:, 0]] == comp[pairs[:, 1]]))
        rows = np.flatnonzero(must)
        A = sp.coo_array((np.ones(len(rows)), (pairs[rows, 0], pairs[rows, 1])), shape=(n, n)).tocsr()
        A = (A + A.T).tocsr()
        row_of = {(min(a, b), max(a, b)): r for r, (a, b) in zip(rows.tolist(), pairs[rows].tolist())}
        flat, begin, length = _conflict_paths(pairs, must, n, bad)
        for j, c in enumerate(bad.tolist()):
            u, x = int(pairs[c, 0]), int(pairs[c, 1])
            pred = breadth_first_order(A, u, directed=False, return_predecessors=True)[1]
            expected = []
            while x != u:
                p = int(pred[x])
                expected.append(row_of[(min(p, x), max(p, x))])
                x = p
            assert flat[begin[j]:begin[j] + length[j]].tolist() == expected


def test_every_suspect_carries_a_conflict_cycle():
    S = gc.SideInfo([("a", "b", 2.0), ("b", "c", 0.5), ("c", "d", 2.0), ("a", "d", -1.0), ("x", "y", 1.0)])
    report = gc.suspects(S)
    assert [s.constraint for s in report.suspects] == [("b", "c")]
    s = report.suspects[0]
    assert s.kind == "must-link" and s.cycle == ["a", "b", "c", "d"] and "weight 0.5" in str(s)
    fixed, again = gc.repair(S)
    assert fixed.check().conflicts == [] and len(fixed) == len(S) - 1 and again.rows.tolist() == report.rows.tolist()
    assert len(S) == 5  # the input is not modified


def test_hard_constraints_are_never_dropped_and_hard_conflicts_raise():
    S = gc.SideInfo([(0, 1, np.inf), (1, 2, 1.0), (0, 2, -np.inf)])
    assert [s.constraint for s in gc.suspects(S).suspects] == [(1, 2)]
    with pytest.raises(InfeasibleConstraintsError):
        gc.suspects(gc.SideInfo([(0, 1, np.inf), (1, 2, np.inf), (0, 2, -np.inf)]))


def test_planted_flips_are_found():
    """Labels of 4 classes, 600 pairs, 5 % flipped (one giant must-link component, so
    the greedy path): on average at least 75 % of the suspects are flipped constraints
    (0.80 measured; issue #26 asks 0.8 on the UCI sets) and at least 80 % of the
    flipped constraints are found (0.89 measured)."""
    precision, recall = [], []
    for seed in range(6):
        y = np.random.default_rng(seed).integers(0, 4, 80)
        S = gc.SideInfo.sample(y, n_pairs=600, noise=0.05, random_state=seed)
        flipped = {frozenset((u, v)) for u, v, w in S.edges() if (w > 0) != (y[u] == y[v])}
        report = gc.suspects(S)
        assert report.n_conflicts > 0 and not report.exact
        found = {frozenset(s.constraint) for s in report.suspects}
        precision.append(len(found & flipped) / len(found))
        recall.append(len(found & flipped) / len(flipped))
    assert np.mean(precision) >= 0.75 and np.mean(recall) >= 0.8


def test_the_data_vote_breaks_ties_towards_what_the_features_contradict():
    """A triangle of two must-links and a cannot-link: every single drop is equally
    light; with the data's vote the must-link between far-apart points goes."""
    from graphclust.conflict_repair import data_plausibility

    X = np.array([[0.0], [0.1], [5.0]])
    S = gc.SideInfo([(0, 1, 1.0), (1, 2, 1.0), (0, 2, -1.0)])
    P = gc.Problem.from_array(X)
    voted = gc.suspects(S, P, data_vote=True)
    assert [s.constraint for s in voted.suspects] == [(1, 2)] and voted.removed_weight == 1.0
    assert gc.suspects(S, P).removed_weight == 1.0  # without the vote: some single drop
    pairs, w = S.to_arrays({0: 0, 1: 1, 2: 2})
    p = data_plausibility(X, pairs, w)
    far_ml = int(np.flatnonzero((pairs == [1, 2]).all(1))[0])
    near_ml = int(np.flatnonzero((pairs == [0, 1]).all(1))[0])
    assert p[far_ml] < p[near_ml] and (p > 0).all()


def test_clustering_suspects_are_what_a_robust_clustering_breaks_on_conflict_cycles():
    """method="clustering": the suspects are the soft constraints on a conflict cycle
    that the noise-robust clustering breaks, so every one kept is kept by that
    clustering or on no conflict (consistent), and on separated blobs they are the
    flipped ones that take part in a conflict."""
    from graphclust.conflict_repair import on_conflict_cycles
    from graphclust.metrics import violated_mask

    X, y = gc.datasets.make_blobs(150, n_clusters=3, cluster_std=0.6, random_state=1)
    S = gc.SideInfo.sample(y, 400, noise=0.1, random_state=2)
    report = gc.suspects(S, X, n_clusters=3, random_state=0)
    assert report.method == "clustering" and report.clustering is not None
    index = {i: i for i in range(len(y))}
    pairs, w = S.to_arrays(index)
    flipped = (y[pairs[:, 0]] == y[pairs[:, 1]]) != (w > 0)
    chosen = np.zeros(len(w), dtype=bool)
    chosen[report.rows] = True
    labels = report.clustering.labels_
    broken = violated_mask(labels, pairs, w)
    cycles = on_conflict_cycles(len(y), pairs, w)
    np.testing.assert_array_equal(chosen, broken & cycles)
    assert (broken & ~cycles).any()  # the clustering broke constraints no conflict goes through: kept
    target = flipped & cycles
    assert (chosen & flipped).sum() / chosen.sum() > 0.95 and (chosen & target).sum() / target.sum() > 0.95
    fixed, again = gc.repair(S, X, n_clusters=3, random_state=0)
    np.testing.assert_array_equal(again.rows, report.rows)
    assert len(fixed) == len(S) - chosen.sum() and not fixed.check().conflicts
    repair_only = gc.suspects(S, X, method="repair")
    assert repair_only.method == "repair" and repair_only.exact in (True, False)
    with pytest.raises(gc.errors.InvalidParameterError, match="method"):
        gc.suspects(S, X, method="vote")
    with pytest.raises(gc.errors.InvalidParameterError, match="node features"):
        gc.suspects(S, method="clustering")


@pytest.mark.parametrize("seed", range(6))
def test_on_conflict_cycles_matches_enumerated_simple_paths(seed):
    """Oracle: a constraint is on a conflict cycle when it is a cannot-link whose ends
    a must-link path joins, or a must-link on some simple must-link path between the
    ends of such a cannot-link (every simple path enumerated by networkx)."""
    import networkx as nx

    from graphclust.conflict_repair import on_conflict_cycles

    rng = np.random.default_rng(seed)
    n = 12
    pairs = np.array(sorted({tuple(sorted(rng.choice(n, 2, replace=False))) for _ in range(22)}))
    w = np.where(rng.random(len(pairs)) < 0.6, 1.0, -1.0)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(map(tuple, pairs[w > 0].tolist()))
    expect = np.zeros(len(w), dtype=bool)
    on_path = set()
    for r in np.flatnonzero(w < 0):
        a, b = map(int, pairs[r])
        if nx.has_path(G, a, b):
            expect[r] = True
            for path in nx.all_simple_paths(G, a, b):
                on_path.update(frozenset(e) for e in zip(path, path[1:]))
    for r in np.flatnonzero(w > 0):
        expect[r] = frozenset(map(int, pairs[r])) in on_path
    got = on_conflict_cycles(n, pairs, w)
    np.testing.assert_array_equal(got, expect)


def test_without_suspects_drops_only_when_soft_constraints_conflict():
    """Consistent constraints, no features, or contradicting hard ones: the problem
    comes back as it was (the same object); with conflicts the dropped rows are every
    soft constraint the noise-robust clustering breaks (the suspects it names on
    conflict cycles and the broken ones off every cycle) plus the repair of the rest,
    and what is kept is consistent."""
    from graphclust.conflict_repair import without_suspects

    X, y = gc.datasets.load_iris()
    clean = gc.Problem.from_array(X, gc.SideInfo.sample(y, 300, random_state=0))
    assert without_suspects(clean, random_state=0)[0] is clean
    noisy_S = gc.SideInfo.sample(y, 300, noise=0.2, random_state=0)
    noisy = gc.Problem.from_array(X, noisy_S)
    kept, rows = without_suspects(noisy, random_state=0)
    assert len(rows) and kept.n_constraints == noisy.n_constraints - len(rows)
    assert consistent(len(y), kept.constraints, kept.constraint_weights)
    flipped = (y[noisy.constraints[:, 0]] == y[noisy.constraints[:, 1]]) != (noisy.constraint_weights > 0)
    assert flipped[rows].mean() > 0.8  # mostly the flipped ones
    report = gc.suspects(noisy_S, X, random_state=0)
    dropped = {frozenset((noisy.nodes[a], noisy.nodes[b])) for a, b in noisy.constraints[rows].tolist()}
    named = {frozenset(s.constraint) for s in report.suspects}
    label = dict(zip(report.clustering.nodes_, report.clustering.labels_))
    broken = {frozenset((u, v)) for u, v, w in noisy_S.edges() if (label[u] == label[v]) != (w > 0)}
    assert len(dropped) == len(rows) and dropped == named | broken
    assert broken - named  # broken constraints on no conflict cycle go too
    graph_only = gc.Problem.from_graph(nx.path_graph(len(y)), noisy_S)
    assert without_suspects(graph_only, random_state=0)[0] is graph_only
    hard = noisy.with_constraints(np.vstack([noisy.constraints, [[0, 1], [1, 2], [0, 2]]]),
                                  np.concatenate([noisy.constraint_weights, [np.inf, np.inf, -np.inf]]))
    assert without_suspects(hard, random_state=0)[0] is hard
    assert without_suspects(hard, random_state=0, force=True)[0] is hard


def test_without_suspects_forced_drops_broken_constraints_without_conflicts():
    """``force=True`` (a caller with another sign of noise) drops the constraints the
    clustering breaks although nothing conflicts; unforced, nothing goes."""
    from graphclust.conflict_repair import without_suspects

    X, y = gc.datasets.load_wine()
    X = (X - X.mean(0)) / X.std(0)
    S = gc.SideInfo.sample(y, 158, noise=0.2, random_state=10)
    assert not S.check().conflicts
    problem = gc.Problem.from_array(X, S)
    assert without_suspects(problem, random_state=0)[0] is problem
    kept, rows = without_suspects(problem, random_state=0, force=True)
    assert len(rows) > 20 and kept.n_constraints == problem.n_constraints - len(rows)
    flipped = (y[problem.constraints[:, 0]] == y[problem.constraints[:, 1]]) != (problem.constraint_weights > 0)
    assert flipped[rows].mean() > 0.8 and flipped[rows].sum() > 0.8 * flipped.sum()
