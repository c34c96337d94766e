"""RDP-means and DP-means: objective, monotonicity, local optimality, brute force, merged
nodes, the provider interface and bad input."""

import math
import warnings

import networkx as nx
import numpy as np
import pytest
from scipy.special import rel_entr

import graphclust as gc
from graphclust.base import METHODS
from graphclust.errors import (
    InfeasibleConstraintsError,
    InvalidFeaturesError,
    InvalidParameterError,
    TooFewClustersError,
)
from graphclust import rdpmeans
from graphclust.problem import constraint_csr
from graphclust.rdpmeans import DPCentroids, DPMeans, RDPMeans, _effective, dp_lambda, xi_from_pq


# ---------------------------------------------------------------------- oracles
def divergence(Y, M, kind):
    """Row-wise D(Y_r, M_r), written independently of the library."""
    if kind == "kl":
        return rel_entr(Y, M).sum(-1)
    return ((Y - M) ** 2).sum(-1)


def objective(Y, c, labels, centroids, pairs, w, xi1, xi2, lam, kind="sqeuclidean"):
    """J = Σ c_i D(y_i, μ_{z_i}) - ξ1 Σ_ML w [same] + ξ2 Σ_CL |w| [same] + λ K; a hard
    constraint costs 0 when it holds and inf when it does not."""
    labels = np.asarray(labels)
    J = float(np.sum(c * divergence(Y, centroids[labels], kind)))
    J += lam * len(np.unique(labels))
    for (a, b), wt in zip(np.asarray(pairs).reshape(-1, 2).tolist(), np.asarray(w).tolist()):
        same = labels[a] == labels[b]
        if math.isinf(wt):
            if (wt > 0) != same:
                return math.inf
        elif same:
            J += -xi1 * wt if wt > 0 else xi2 * -wt
    return J


def blobs_problem(seed, n=45, k=3, n_pairs=40, noise=0.2, separation=4.0, dim=2):
    X, y = gc.datasets.make_blobs(n, k, dim, separation=separation, random_state=seed)
    S = gc.SideInfo.sample(y, n_pairs=n_pairs, noise=noise, random_state=seed)
    return X, y, S, gc.Problem.from_array(X, S)


def histograms(seed, n_per=20, draws=200):
    """Multinomial counts from three distinct 6-bin distributions."""
    rng = np.random.default_rng(seed)
    P = np.array([[0.5, 0.3, 0.1, 0.05, 0.03, 0.02],
                  [0.02, 0.05, 0.5, 0.3, 0.1, 0.03],
                  [0.1, 0.02, 0.03, 0.05, 0.3, 0.5]])
    y = np.repeat(np.arange(3), n_per)
    X = np.stack([rng.multinomial(draws, P[k]) for k in y]).astype(float)
    perm = rng.permutation(len(y))
    return X[perm], y[perm]


def set_partitions(n):
    """Every partition of range(n) as a label vector (restricted growth strings)."""
    def rec(prefix, m):
        if len(prefix) == n:
            yield list(prefix)
            return
        for k in range(m + 1):
            yield from rec(prefix + [k], max(m, k + 1))
    yield from rec([0], 1)


def best_partition(Y, c, pairs, w, xi1, xi2, lam):
    """Brute-force minimum over partitions of min_μ J (μ = cluster means)."""
    best = math.inf
    for z in set_partitions(len(Y)):
        z = np.array(z)
        K = z.max() + 1
        mass = np.bincount(z, weights=c, minlength=K)
        mu = np.stack([(c[z == k, None] * Y[z == k]).sum(0) / mass[k] for k in range(K)])
        best = min(best, objective(Y, c, z, mu, pairs, w, xi1, xi2, lam))
    return best


def single_moves(Y, c, labels, centroids, pairs, w, xi1, xi2, lam, kind="sqeuclidean"):
    """Smallest change of J over all single-node moves at fixed centroids (a new
    cluster at the node included)."""
    base = objective(Y, c, labels, centroids, pairs, w, xi1, xi2, lam, kind)
    K = len(centroids)
    best = math.inf
    for i in range(len(Y)):
        for k in range(K + 1):
            if k == labels[i]:
                continue
            z = labels.copy()
            z[i] = k
            C = centroids if k < K else np.vstack([centroids, Y[i]])
            used = np.unique(z)
            remap = np.full(K + 1, -1)
            remap[used] = np.arange(len(used))
            best = min(best, objective(Y, c, remap[z], C[used], pairs, w, xi1, xi2, lam, kind) - base)
    return best, base


# ---------------------------------------------------------------------- objective
def test_reported_objective_matches_oracle_and_energy():
    X, y, S, P = blobs_problem(0)
    est = RDPMeans(lam=4.0, xi=1.5, random_state=0).fit(P)
    J = objective(X, np.ones(len(X)), est.labels_, est.centroids_, P.constraints, P.constraint_weights,
                  1.5, 1.5, 4.0)
    assert est.result_.objective == pytest.approx(J, rel=1e-10)
    # the same number through the shared Energy: unary c·D, signed Potts ξ·w, label costs λ
    # (a must-link's "-ξw if together" is "-ξw + ξw if apart": subtract the constant)
    K = est.n_clusters_
    U = ((X[:, None, :] - est.centroids_[None, :, :]) ** 2).sum(-1)
    w = P.constraint_weights
    E = gc.Energy(U, P.constraints, np.where(w > 0, 1.5 * w, 1.5 * w), label_costs=np.full(K, 4.0))
    assert E.evaluate(est.labels_) - 1.5 * w[w > 0].sum() == pytest.approx(J, rel=1e-10)


@pytest.mark.parametrize("kind", ["sqeuclidean", "kl"])
def test_history_never_increases_at_fixed_xi(kind):
    for seed in range(25):
        if kind == "kl":
            X, y = histograms(seed, n_per=12)
            S = gc.SideInfo.sample(y, n_pairs=40, noise=0.2, random_state=seed)
            est = RDPMeans(lam=0.05, xi=0.02, divergence="kl", random_state=seed).fit(X, S)
        else:
            X, y, S, P = blobs_problem(seed, noise=0.3)
            est = RDPMeans(lam=3.0, xi=(1.0, 2.0), random_state=seed, init=["mean", "box"][seed % 2]).fit(P)
        h = np.array(est.result_.history)
        before = np.array(est.result_.info["objective_before"])
        assert np.all(np.isfinite(h))
        scale = 1e-9 * (1 + np.abs(h))
        assert np.all(h <= before + scale)
        assert np.all(np.diff(h) <= scale[1:])
        assert est.result_.info["converged"]


def test_annealing_monotone_within_every_xi_stage():
    for seed in range(15):
        X, y, S, P = blobs_problem(seed, noise=0.2)
        est = RDPMeans(n_clusters=3, xi="anneal", random_state=seed).fit(P)
        info = est.result_.info
        h, before = np.array(est.result_.history), np.array(info["objective_before"])
        # every pass lowers J under its own ξ
        assert np.all(h <= before + 1e-9 * (1 + np.abs(before)))
        # passes sharing one ξ form a non-increasing run
        xis = info["xi_schedule"]
        for t in range(1, len(h)):
            if xis[t] == xis[t - 1]:
                assert h[t] <= h[t - 1] + 1e-9 * (1 + abs(h[t]))
        # the schedule of the reference code: 0 on pass 1, then xi0 · 2^(t-1) on pass t, capped
        x1 = np.array([x[0] for x in xis])
        assert x1[0] == 0.0
        expected = np.minimum(1e-3 * 2.0 ** np.arange(1, len(x1)), info["xi_max"])
        np.testing.assert_allclose(x1[1:], expected)


@pytest.mark.parametrize("xi", [1.0, "anneal"])
def test_result_is_a_local_minimum(xi):
    """No single node can move, to another cluster or a new one, and lower J at the
    final centroids."""
    for seed in range(6):
        X, y, S, P = blobs_problem(seed, n=30, n_pairs=30, noise=0.25)
        est = RDPMeans(lam=2.5, xi=xi, random_state=seed).fit(P)
        assert est.result_.info["converged"]
        xi1, xi2 = est.xi_
        delta, J = single_moves(X, np.ones(len(X)), est.labels_, est.centroids_, P.constraints,
                                P.constraint_weights, xi1, xi2, 2.5)
        assert J == pytest.approx(est.result_.objective, rel=1e-10)
        assert delta >= -1e-9 * (1 + abs(J))


def test_tiny_problems_against_brute_force():
    """On 6-node problems (two groups, three random signed constraints) no run beats the
    exhaustive optimum over all 203 partitions (which cross-checks both objectives), a
    single run finds it in most instances, and 16 restarts (both inits) almost always."""
    single = multi = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        Y = np.concatenate([rng.normal(0, 0.5, (3, 2)), rng.normal(2.5, 0.5, (3, 2))])
        pairs = np.array([[0, 3], [1, 2], [2, 5]])
        w = rng.choice([-1.0, 1.0], size=3) * rng.uniform(0.5, 2.0, size=3)
        S = gc.SideInfo([(int(a), int(b), float(x)) for (a, b), x in zip(pairs, w)])
        P = gc.Problem.from_array(Y, S)
        opt = best_partition(Y, np.ones(6), P.constraints, P.constraint_weights, 1.0, 1.0, 1.5)
        found = [RDPMeans(lam=1.5, xi=1.0, init=init, random_state=s).fit(P).result_.objective
                 for init in ("mean", "box") for s in range(8)]
        assert min(found) >= opt - 1e-9
        single += found[0] <= opt + 1e-9
        multi += min(found) <= opt + 1e-9
    assert single >= 10 and multi >= 17


def _reference_pass(prov, order, indptr, indices, we):
    """The sweep rule written out over remove/scores/add (no bounds, no skipping);
    returns the number of nodes that moved."""
    n_moved = 0
    for i in order.tolist():
        a = prov.labels[i]
        prov.remove(i)
        cost = prov.scores(i)
        for q in range(indptr[i], indptr[i + 1]):
            cost[prov.labels[indices[q]]] -= we[q]
        best = int(np.argmin(cost))
        better = cost[best] < cost[a] if cost[a] == np.inf else cost[best] < cost[a] - 1e-12 * (1 + abs(cost[a]))
        prov.add(i, best if best != a and better else a)
        n_moved += best != a and better
    return n_moved


@pytest.mark.parametrize("n", [40, 700])
def test_compiled_sweep_matches_reference_loop_over_provider_api(n):
    """One pass of the numba kernel equals the rule written out in Python over
    DPCentroids.remove/scores/add, births and hard cannot-links included (700 nodes:
    several chunks scored by one matrix product each, births inside a chunk)."""
    for seed in range(5):
        X, y, S, P = blobs_problem(seed, n=n, n_pairs=60 * n // 40, noise=0.3)
        w = P.constraint_weights.copy()
        w[::7] = -np.inf  # some hard cannot-links
        indptr, indices, wc = constraint_csr(P.constraints, w, P.n_nodes)
        we = _effective(wc, 0.7, 1.3)
        rng = np.random.default_rng(seed)
        labels0 = rng.integers(0, 3, P.n_nodes)
        order = rng.permutation(P.n_nodes)
        fast, slow = DPCentroids(lam=2.0), DPCentroids(lam=2.0)
        fast.start(P, labels0)
        slow.start(P, labels0)
        moved = fast.sweep(order, indptr, indices, we)
        n_moved = _reference_pass(slow, order, indptr, indices, we)
        np.testing.assert_array_equal(fast.labels, slow.labels)
        assert moved == n_moved > 0
        np.testing.assert_allclose(fast.centroids_, slow.centroids_)
        fast.refit()
        slow.refit()
        assert fast.objective() == pytest.approx(slow.objective())


@pytest.mark.parametrize("n_pairs, hard", [(30, False), (400, False), (400, True)])
def test_bounded_passes_take_the_decisions_of_full_evaluations(n_pairs, hard):
    """Over several passes with M-steps between them, the compiled sweep, which skips
    the nodes its bounds prove cannot move (constraint pulls included), follows the
    rule evaluated in full."""
    for seed in range(4):
        X, y, S, P = blobs_problem(seed, n=300, n_pairs=n_pairs, noise=0.2)
        w = P.constraint_weights.copy()
        if hard:  # hard cannot-links (RDPMeans merges hard must-links before sweeping)
            w[::5] = -np.inf
        indptr, indices, wc = constraint_csr(P.constraints, w, P.n_nodes)
        rng = np.random.default_rng(seed)
        labels0 = rng.integers(0, 4, P.n_nodes)
        fast, slow = DPCentroids(lam=3.0), DPCentroids(lam=3.0)
        fast.start(P, labels0)
        slow.start(P, labels0)
        for _ in range(6):
            order = rng.permutation(P.n_nodes)
            fast.sweep(order, indptr, indices, wc)
            _reference_pass(slow, order, indptr, indices, wc)
            np.testing.assert_array_equal(fast.labels, slow.labels)
            fast.refit()
            slow.refit()
            np.testing.assert_allclose(fast.centroids_, slow.centroids_, rtol=1e-12, atol=1e-12)


def test_visit_order_is_a_fresh_random_order_of_blocks(monkeypatch):
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(rdpmeans._visit_order(100, rng), np.random.default_rng(0).permutation(100))
    monkeypatch.setattr(rdpmeans, "_BLOCKED_FROM", 64)
    monkeypatch.setattr(rdpmeans, "_BLOCK", 16)
    a, b = rdpmeans._visit_order(250, rng), rdpmeans._visit_order(250, rng)
    for o in (a, b):
        assert sorted(o.tolist()) == list(range(250))
        starts = np.flatnonzero(np.diff(o) != 1) + 1  # runs of consecutive nodes
        runs = np.split(o, starts)
        assert all(r[0] % 16 == 0 and len(r) % 16 in (0, 250 % 16) for r in runs)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize("xi", [1.0, "anneal"])
def test_blocked_layout_gives_a_local_minimum_in_the_callers_node_order(xi, monkeypatch):
    """With the random layout and block visits (large problems; thresholds lowered
    here), the answer is still a local minimum, reported in the caller's node order."""
    monkeypatch.setattr(rdpmeans, "_BLOCKED_FROM", 64)
    monkeypatch.setattr(rdpmeans, "_BLOCK", 16)
    for seed in range(3):
        X, y, S, P = blobs_problem(seed, n=300, n_pairs=120, noise=0.1)
        est = RDPMeans(n_clusters=3, xi=xi, random_state=seed).fit(P)
        assert est.result_.info["converged"] and gc.ari(y, est.labels_) > 0.5
        xi1, xi2 = est.xi_
        delta, J = single_moves(X, np.ones(len(X)), est.labels_, est.centroids_, P.constraints,
                                P.constraint_weights, xi1, xi2, est.lam_)
        assert J == pytest.approx(est.result_.objective, rel=1e-10)
        assert delta >= -1e-9 * (1 + abs(J))


# ---------------------------------------------------------------------- the energy
def problem_energy(P, labels, xi1, xi2, lam, kind="sqeuclidean"):
    """J as ``Energy.from_problem`` on the given problem: unary ``c_i D(x̄_i, μ_k)`` with
    ``μ`` the count-weighted means of the labels, the constraints as signed Potts terms
    ``ξ1·w`` / ``ξ2·w`` (hard ones stay infinite), ``λ`` per label, and the constant that
    turns "ξ1 w if apart" into J's "−ξ1 w if together"."""
    Y = P.X / P.counts[:, None]
    c = P.counts.astype(float)
    if kind == "kl":
        Y = (P.X + 1e-3 * P.counts[:, None]) / (P.X.sum(1, keepdims=True) + 1e-3 * P.counts[:, None] * P.X.shape[1])
    K = int(labels.max()) + 1
    mu = np.stack([(c[labels == k, None] * Y[labels == k]).sum(0) / c[labels == k].sum() for k in range(K)])
    U = c[:, None] * np.stack([divergence(Y, np.broadcast_to(m, Y.shape), kind) for m in mu], axis=1)
    w = P.constraint_weights
    with np.errstate(invalid="ignore"):  # 0 * inf where ξ = 0: hard terms are kept below
        weights = np.where(np.isinf(w), w, np.where(w > 0, xi1 * w, xi2 * w))
    constant = -xi1 * w[np.isfinite(w) & (w > 0)].sum()
    E = gc.Energy.from_problem(P, U, smoothness=0.0, constraint_weights=weights, label_costs=np.full(K, lam),
                               constant=constant)
    return E.evaluate(labels)


def random_side_info(rng, n, hard):
    pairs = {tuple(sorted(p)) for p in rng.choice(n, size=(n, 2)).tolist() if p[0] != p[1]}
    trip = [(a, b, float(rng.choice([-1.0, 1.0]) * rng.uniform(0.2, 2.0))) for a, b in sorted(pairs)]
    if hard:  # chains of hard must-links (merged before clustering) and a hard cannot-link
        trip = [t for t in trip if {t[0], t[1]} & {0, 1, 2, 3} == set()]
        trip += [(0, 1, math.inf), (1, 2, math.inf), (3, n - 1, -math.inf)]
    return gc.SideInfo(trip)


@pytest.mark.parametrize("case", ["plain", "merged", "counts", "kl"])
def test_history_and_objective_are_energy_evaluate(case):
    """Every J that RDP-means reports (after each pass, and the objective) is
    Energy.evaluate of the energy Energy.from_problem builds on the caller's problem:
    hard must-links merged into counted nodes, nodes that stand for several points, soft
    constraints inside merged groups and annealed ξ included."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X, y = gc.datasets.make_blobs(36, 3, 2, separation=3.0, random_state=seed)
        kind = "sqeuclidean"
        if case == "kl":
            X, y = histograms(seed, n_per=12)
            kind = "kl"
        S = random_side_info(rng, len(X), hard=case == "merged")
        if case == "counts":  # node i stands for counts[i] points with mean X[i]
            counts = rng.integers(1, 5, size=len(X))
            P = gc.Problem.from_arrays(np.zeros((len(X), len(X))), X=X * counts[:, None], S=S, counts=counts)
        else:
            P = gc.Problem.from_array(X, S)
        seen = []
        params = dict(lam=0.05, xi=0.02, divergence="kl") if kind == "kl" else dict(lam=2.0, xi="anneal")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # soft cannot-links inside merged groups
            est = RDPMeans(random_state=seed, callback=lambda t, z, J: seen.append((z, J)), **params).fit(P)
        if case == "merged":
            assert est.result_.info["n_super_nodes"] < len(X)
        xis = est.result_.info["xi_schedule"]
        assert len(seen) == len(xis) == len(est.result_.history)
        for (z, J), (xi1, xi2), h in zip(seen, xis, est.result_.history):
            assert J == h
            assert J == pytest.approx(problem_energy(P, z, xi1, xi2, est.lam_, kind), rel=1e-9, abs=1e-9)
        assert est.result_.objective == pytest.approx(
            problem_energy(P, est.labels_, *est.xi_, est.lam_, kind), rel=1e-9, abs=1e-9)


def test_each_pass_is_one_sweep_of_icm_with_births(monkeypatch):
    """The estimator's passes are the inference engine's sweeps, fed the energy's
    adjacency and the birth cost λ."""
    from graphclust.inference import icm_births

    calls = []
    sweep = icm_births.sweep

    def spy(provider, order, adjacency, label_cost):
        calls.append((len(order), len(adjacency[1]), label_cost))
        return sweep(provider, order, adjacency, label_cost)

    monkeypatch.setattr(icm_births, "sweep", spy)
    X, y, S, P = blobs_problem(0)
    est = RDPMeans(lam=4.0, xi=1.5, random_state=0).fit(P)
    assert len(calls) == est.result_.info["iterations"] > 1
    assert set(calls) == {(len(X), 2 * len(P.constraints), 4.0)}


#: labels recorded from the provider's own kernel (main at 7f3c833), one character per
#: node (chr(48 + label)), and the number of passes
RECORDED = {
    "anneal": (19, "0010012132222002120012212111032103002210"),
    "fixed": (4, "0123456788866048580078859:57332238040974"),
    "pq": (5, "0010012122222002120012212111002102000210"),
    "dp": (4, "0010234144444224340014431331041104020112"),
    "merged": (4, "0121304560704837968:5769;<9544224783:;53"),
    "kl": (3, "001223314120030566556378537858"),
    "blocked": (20, "00102210334453400252143032430410502501053555322133404500441524305404020402225001455"
                    "42241251550543223445201025211002513102530031045050004553445420013402411313503141530155"
                    "2030505205224253151013331351550"),
}


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_seeds_give_the_labels_recorded_before_the_engine_moved(case, monkeypatch):
    """The sweep moved from a kernel inside the provider to the inference engine: the
    same seeds give the same labels and the same number of passes."""
    X, y = gc.datasets.make_blobs(40, 3, 2, separation=3.0, random_state=0)
    S = gc.SideInfo.sample(y, n_pairs=40, noise=0.2, random_state=0)
    if case == "anneal":
        est = RDPMeans(n_clusters=3, xi="anneal", random_state=0).fit(X, S)
    elif case == "fixed":
        est = RDPMeans(lam=2.0, xi=(0.5, 1.5), random_state=1).fit(X, S)
    elif case == "pq":
        est = RDPMeans(n_clusters=3, xi="pq", p_link=0.9, random_state=2).fit(X, S)
    elif case == "dp":
        est = DPMeans(n_clusters=3, init="box", n_init=3, random_state=3).fit(X)
    elif case == "merged":
        rng = np.random.default_rng(4)
        pairs = rng.choice(40, size=(25, 2))
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        w = rng.choice([-1, 1], len(pairs)) * rng.uniform(0.2, 2, len(pairs))
        trip = [(int(a), int(b), float(x)) for (a, b), x in zip(pairs, w)]
        trip += [(0, 5, math.inf), (5, 9, math.inf), (1, 30, -math.inf)]
        est = RDPMeans(lam=1.5, xi=1.0, random_state=5).fit(X, gc.SideInfo(trip))
    elif case == "kl":
        Xh = np.random.default_rng(6).multinomial(50, [0.5, 0.3, 0.2], size=30).astype(float)
        Xh[15:] = Xh[15:, ::-1]
        Sh = gc.SideInfo.from_pairs(must=[(0, 20)], cannot=[(1, 2)])
        est = RDPMeans(lam=0.02, xi=0.05, divergence="kl", random_state=6).fit(Xh, Sh)
    else:  # large-problem layout (random node order, blocks), thresholds lowered
        monkeypatch.setattr(rdpmeans, "_BLOCKED_FROM", 64)
        monkeypatch.setattr(rdpmeans, "_BLOCK", 16)
        X3, y3 = gc.datasets.make_blobs(200, 4, 3, separation=2.5, random_state=7)
        S3 = gc.SideInfo.sample(y3, n_pairs=150, noise=0.1, random_state=7)
        est = RDPMeans(n_clusters=4, xi="anneal", random_state=7).fit(X3, S3)
    passes, labels = RECORDED[case]
    assert est.labels_.tolist() == [ord(ch) - 48 for ch in labels]
    assert est.result_.info["iterations"] == passes


# ---------------------------------------------------------------------- DP-means
def test_dpmeans_finds_the_true_number_of_well_separated_blobs():
    for seed in range(6):
        k = 2 + seed % 4
        X, y = gc.datasets.make_blobs(40 * k, k, 3, separation=12, random_state=seed)
        # λ between the within-cluster and the between-cluster squared distances
        est = DPMeans(lam=40.0, random_state=seed).fit(X)
        assert est.n_clusters_ == k and gc.ari(y, est.labels_) == 1.0
        hinted = DPMeans(n_clusters=k, random_state=seed).fit(X)
        assert hinted.n_clusters_ == k and gc.ari(y, hinted.labels_) == 1.0
        assert hinted.result_.info["lam_rule"] == "farthest_first"


def test_dpmeans_lambda_extremes():
    X, y = gc.datasets.make_blobs(30, 3, 2, random_state=1)
    assert DPMeans(lam=1e9, random_state=0).fit(X).n_clusters_ == 1
    tiny = DPMeans(lam=1e-9, random_state=0).fit(X)
    assert tiny.n_clusters_ == len(X)  # every (distinct) point is its own cluster
    assert tiny.result_.objective == pytest.approx(1e-9 * len(X))
    mid = DPMeans(lam=8.0, random_state=0).fit(X)
    assert 1 < mid.n_clusters_ < len(X)


def test_dpmeans_objective_and_history():
    X, y = gc.datasets.make_blobs(60, 4, 2, random_state=3)
    est = DPMeans(lam=5.0, random_state=0).fit(X)
    J = objective(X, np.ones(60), est.labels_, est.centroids_, [], [], 0, 0, 5.0)
    assert est.result_.objective == pytest.approx(J)
    assert np.all(np.diff(est.result_.history) <= 1e-9 * (1 + abs(J)))
    # centroids are the cluster means, in label order
    for k in range(est.n_clusters_):
        np.testing.assert_allclose(est.centroids_[k], X[est.labels_ == k].mean(0))


def test_no_constraints_or_zero_xi_equals_dpmeans():
    X, y, S, P = blobs_problem(4, noise=0.1)
    dp = DPMeans(lam=3.0, random_state=7).fit(X)
    for xi in ["anneal", 0.0, 2.0]:
        np.testing.assert_array_equal(RDPMeans(lam=3.0, xi=xi, random_state=7).fit(X).labels_, dp.labels_)
    np.testing.assert_array_equal(RDPMeans(lam=3.0, xi=0.0, random_state=7).fit(X, S).labels_, dp.labels_)
    # DP-means ignores side information but reports what it violates
    with_s = DPMeans(lam=3.0, random_state=7).fit(X, S)
    np.testing.assert_array_equal(with_s.labels_, dp.labels_)
    assert with_s.result_.violations.n_must + with_s.result_.violations.n_cannot == len(S)


def test_all_noise_constraints():
    """Every constraint flipped: with xi='pq' and p = q = 1/2 the links carry no weight
    and the answer is DP-means'; p = q < 1/2 says the links are mostly wrong, and the
    same constraints then help; annealing enforces them (documented)."""
    X, y = gc.datasets.make_blobs(90, 3, 2, separation=6, random_state=2)
    S = gc.SideInfo.sample(y, n_pairs=150, noise=1.0, random_state=2)
    assert S.sampling["n_flipped"] == 150
    dp = DPMeans(n_clusters=3, random_state=5).fit(X)
    assert gc.ari(y, dp.labels_) == 1.0
    for noise_var in ["auto", 0.7]:
        est = RDPMeans(n_clusters=3, xi="pq", p_link=0.5, noise_var=noise_var, random_state=5).fit(X, S)
        assert est.xi_ == (0.0, 0.0)
        np.testing.assert_array_equal(est.labels_, dp.labels_)
    anti = RDPMeans(n_clusters=3, xi="pq", p_link=0.1, random_state=5).fit(X, S)
    assert anti.xi_[0] < 0 and anti.xi_[1] < 0
    assert gc.ari(y, anti.labels_) == 1.0
    annealed = RDPMeans(n_clusters=3, xi="anneal", random_state=5).fit(X, S)
    assert gc.ari(y, annealed.labels_) < 0.5


def test_pq_mode_and_noise_variance_estimate():
    X, y = gc.datasets.make_blobs(150, 3, 2, cluster_std=0.5, separation=10, random_state=0)
    S = gc.SideInfo.sample(y, n_pairs=100, noise=0.05, random_state=0)
    est = RDPMeans(n_clusters=3, xi="pq", p_link=0.95, random_state=0).fit(X, S)
    info = est.result_.info
    assert info["noise_var"] == pytest.approx(0.25, rel=0.2)  # σ² of the blobs
    assert est.xi_ == pytest.approx(xi_from_pq(0.95, 0.95, info["noise_var"]))
    assert [s["xi1"] for s in info["stages"]] == [0.0, est.xi_[0]]
    assert gc.ari(y, est.labels_) == 1.0
    fixed = RDPMeans(n_clusters=3, xi="pq", p_link=0.9, q_link=0.8, noise_var=2.0, random_state=0).fit(X, S)
    assert fixed.xi_ == pytest.approx((4 * math.log(0.9 / 0.2), 4 * math.log(0.8 / 0.1)))
    assert len(fixed.result_.info["stages"]) == 1


def test_xi_from_pq_closed_form():
    assert xi_from_pq(0.95, noise_var=1.0) == pytest.approx((2 * math.log(19), 2 * math.log(19)))
    assert xi_from_pq(0.9, 0.6, noise_var=0.5, divergence="kl") == pytest.approx(
        (0.5 * math.log(0.9 / 0.4), 0.5 * math.log(0.6 / 0.1)))
    assert xi_from_pq(0.5) == (0.0, 0.0)


def test_clean_constraints_fix_a_bad_lambda():
    """λ too large for DP-means to split two touching blobs; clean constraints do it. A
    single annealed run lands in a 3-cluster local minimum for some visiting orders (7 of 20
    seeds find the 2 classes); with 5 restarts 17 of 20 seeds do."""
    X, y = gc.datasets.make_blobs(80, 2, 2, separation=3, random_state=1)
    assert DPMeans(lam=30.0, random_state=0).fit(X).n_clusters_ == 1
    S = gc.SideInfo.sample(y, n_pairs=150, random_state=1)
    est = RDPMeans(lam=30.0, xi="anneal", n_init=5, random_state=0).fit(X, S)
    assert est.n_clusters_ == 2 and gc.ari(y, est.labels_) > 0.9
    assert est.result_.violations.n_violated == 0
    wins = [RDPMeans(lam=30.0, xi="anneal", n_init=n, random_state=s).fit(X, S).n_clusters_ == 2 for n in (1, 5)
            for s in range(8)]
    assert sum(wins[8:]) >= 6 and sum(wins[8:]) > sum(wins[:8])


# ---------------------------------------------------------------------- the noise-aware default (issue #26)
def test_default_does_not_fall_below_kmeans_where_annealing_does():
    """Planted noise (20 % of 1346 pairs flipped, 6 blobs in 8-D): annealing (the old
    default) enforces the wrong links and falls far below k-means; the default (k-means
    start, ξ chosen by cross-validation over the constraints) stays above it."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    km, old, new = [], [], []
    for seed in (0, 2):
        X, y = gc.datasets.make_blobs(300, 6, 8, separation=2.5, random_state=seed)
        S = gc.SideInfo.sample(y, n_pairs=1346, noise=0.2, random_state=seed)
        with threadpool_limits(1):  # (threads only slow a fit this small down)
            km.append(gc.pairwise_f_measure(y, KMeans(6, n_init=10, random_state=seed).fit(X).labels_))
        old.append(gc.pairwise_f_measure(y, RDPMeans(n_clusters=6, xi="anneal", random_state=seed).fit(X, S).labels_))
        est = RDPMeans(n_clusters=6, random_state=seed).fit(X, S)
        new.append(gc.pairwise_f_measure(y, est.labels_))
        assert est.result_.info["xi_mode"] == "auto" and est.result_.info["init"] == "kmeans"
    assert np.mean(old) < np.mean(km) - 0.2
    assert np.mean(new) >= np.mean(km)


@pytest.mark.parametrize("noise", [0.05, 0.15, 0.3])
def test_link_accuracy_estimate_recovers_the_flip_rate(noise):
    """Well-separated blobs and 4000 pairs: the held-out estimates of p and q (the
    fraction of must-links among pairs the fit puts together, of cannot-links among
    pairs it keeps apart, on constraints the fit did not see) match the realised
    accuracy of the constraints."""
    X, y = gc.datasets.make_blobs(900, 4, 2, separation=8, random_state=1)
    S = gc.SideInfo.sample(y, n_pairs=4000, noise=noise, random_state=1)
    pairs, w = S.to_arrays({i: i for i in range(len(y))})
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    p_true = np.mean(w[same] > 0)  # realised P(may-link | same class)
    q_true = np.mean(w[~same] < 0)
    info = RDPMeans(n_clusters=4, random_state=1).fit(X, S).result_.info
    assert info["p_link_estimate"] == pytest.approx(p_true, abs=0.02)
    assert info["q_link_estimate"] == pytest.approx(q_true, abs=0.02)
    assert abs(p_true - (1 - noise)) < 0.05


def test_cross_validation_trusts_clean_links_and_drops_pure_noise():
    X, y = gc.datasets.make_blobs(240, 4, 2, separation=3.0, random_state=4)
    clean = RDPMeans(n_clusters=4, random_state=4).fit(X, gc.SideInfo.sample(y, n_pairs=800, random_state=4))
    info = clean.result_.info
    assert info["link_accuracy"] == rdpmeans.AUTO_LINK_ACCURACIES[0]
    assert clean.xi_ == pytest.approx(xi_from_pq(info["link_accuracy"], noise_var=info["noise_var"]))
    assert set(info["xi_cv"]) == {*rdpmeans.AUTO_LINK_ACCURACIES, 0.5}
    # coin-flip links (every pair's type drawn at random): nothing beats ξ = 0
    rng = np.random.default_rng(4)
    pairs = np.unique(np.sort(rng.choice(240, size=(1200, 2)), axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    S = gc.SideInfo([(int(a), int(b), float(rng.choice([-1.0, 1.0]))) for a, b in pairs])
    noise = RDPMeans(n_clusters=4, random_state=4).fit(X, S)
    stage = RDPMeans(n_clusters=4, xi=0.0, init="kmeans", random_state=4).fit(X)
    assert noise.result_.info["link_accuracy"] == 0.5 and noise.xi_ == (0.0, 0.0)
    assert gc.ari(noise.labels_, stage.labels_) > 0.95


def test_kmeans_stage_and_its_lambda():
    """init="kmeans": restart 0 starts from the best of 10 k-means runs; λ = max(gain of a
    (k+1)-th cluster, largest node cost), so with ξ = 0 no node opens a cluster and the
    k-means answer stays."""
    X, y = gc.datasets.make_blobs(200, 4, 3, separation=2.0, random_state=5)
    est = RDPMeans(n_clusters=4, xi=0.0, init="kmeans", n_init=1, random_state=5).fit(X)
    stage = est.result_.info["kmeans_stage"]
    assert est.lam_ == stage["lam"] == max(stage["gain"], stage["max_node_cost"]) > 0
    assert stage["k"] == 4 and est.n_clusters_ == 4 and est.result_.info["iterations"] == 1
    # the stage's objective is the k-means objective of the answer (a Lloyd fixed point)
    sse = float(((X - est.centroids_[est.labels_]) ** 2).sum())
    assert stage["objective"] == pytest.approx(sse, rel=1e-9)
    assert est.result_.objective == pytest.approx(sse + 4 * est.lam_, rel=1e-9)
    D = ((X[:, None, :] - est.centroids_[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(D.argmin(1), est.labels_)
    assert D.min(1).max() <= est.lam_
    # later restarts start from fresh k-means++ seeds; the lowest J is kept
    many = RDPMeans(n_clusters=4, xi=1.0, init="kmeans", n_init=4, random_state=5).fit(X)
    info = many.result_.info
    assert info["n_init"] == 4 and info["best_init"] == int(np.argmin(info["init_objectives"]))


@pytest.mark.parametrize("noise", [0.0, 0.2, 0.4])
def test_default_cluster_count_stays_within_two_and_twice_the_hint(noise):
    for seed in range(3):
        for k, (X, y) in [(3, gc.datasets.make_blobs(150, 3, 2, separation=1.5, random_state=seed)),
                          (2, gc.datasets.make_moons(120, noise=0.1, random_state=seed)),
                          (5, (np.random.default_rng(seed).uniform(size=(150, 3)), np.arange(150) % 5))]:
            S = gc.SideInfo.sample(y, n_pairs=300, noise=noise, random_state=seed)
            est = RDPMeans(n_clusters=k, random_state=seed).fit(X, S)
            assert 2 <= est.n_clusters_ <= 2 * k
            assert est.result_.info["n_clusters_bounds"] == (2, 2 * k)


def test_out_of_bounds_setting_falls_back_to_a_weaker_one(monkeypatch):
    """A hint of 2 for 8 blobs and 3000 clean cannot-links (too few must-links to
    cross-validate, so the strongest setting is tried first): near-hard links open a
    cluster per blob in every restart, more than 2k = 4; the next weaker setting keeps
    within the bounds."""
    monkeypatch.setattr(rdpmeans, "AUTO_LINK_ACCURACIES", (1 - 1e-9, 0.99, 0.9, 0.7))
    X, y = gc.datasets.make_blobs(240, 8, 2, separation=8, random_state=0)
    rng = np.random.default_rng(0)
    pairs = rng.choice(240, size=(6000, 2))
    pairs = pairs[(pairs[:, 0] != pairs[:, 1]) & (y[pairs[:, 0]] != y[pairs[:, 1]])][:3000]
    S = gc.SideInfo.from_pairs(cannot=[tuple(map(int, p)) for p in pairs])
    est = RDPMeans(n_clusters=2, random_state=0).fit(X, S)
    info = est.result_.info
    assert info["out_of_bounds"] == [1 - 1e-9] and info["link_accuracy"] == 0.99
    assert 2 <= est.n_clusters_ <= 4 and all(2 <= K <= 4 for K in info["init_n_clusters"])
    strongest = RDPMeans(n_clusters=2, xi=info["xi_candidates"][1 - 1e-9], lam=est.lam_, init="kmeans",
                         random_state=0).fit(X, S)
    assert strongest.n_clusters_ > 4


def test_no_hint_scans_k_by_constraint_agreement():
    X, y = gc.datasets.make_blobs(200, 4, 2, separation=5.0, random_state=6)
    S = gc.SideInfo.sample(y, n_pairs=400, noise=0.1, random_state=6)
    est = RDPMeans(random_state=6).fit(X, S)
    scan = est.result_.info["n_clusters_scan"]
    assert sorted(scan) == list(range(2, 21)) and max(scan, key=scan.get) == 4
    assert est.result_.info["n_clusters_bounds"] == (2, 8) and 4 <= est.n_clusters_ <= 8
    assert gc.ari(y, est.labels_) > 0.9
    # without constraints there is nothing to scan with: the gap rule's k (see dp_lambda)
    plain = RDPMeans(random_state=6).fit(X)
    assert "n_clusters_scan" not in plain.result_.info and plain.xi_ == (0.0, 0.0)


def test_default_with_hard_constraints_and_kl():
    X, y = gc.datasets.make_blobs(90, 3, 2, separation=4, random_state=7)
    soft = gc.SideInfo.sample(y, n_pairs=200, noise=0.1, random_state=7)
    same = [(a, b) for a in range(90) for b in range(a + 1, 90) if y[a] == y[b]][:6]
    apart = [(a, b) for a in range(90) for b in range(a + 1, 90) if y[a] != y[b]][:3]
    taken = set(same) | set(apart)
    S = gc.SideInfo([*[e for e in soft.edges() if (e[0], e[1]) not in taken],
                     *[(a, b, math.inf) for a, b in same], *[(a, b, -math.inf) for a, b in apart]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a soft cannot-link inside a merged group (always violated)
        est = RDPMeans(n_clusters=3, random_state=7).fit(X, S)
    assert all(est.labels_[a] == est.labels_[b] for a, b in same)
    assert all(est.labels_[a] != est.labels_[b] for a, b in apart)
    assert est.result_.info["n_super_nodes"] < 90 and gc.ari(y, est.labels_) > 0.9
    Xh, yh = histograms(7)
    kl = RDPMeans(n_clusters=3, divergence="kl", random_state=7).fit(Xh, gc.SideInfo.sample(yh, n_pairs=150,
                                                                                              random_state=7))
    assert kl.result_.info["noise_var"] == pytest.approx(1 / 200) and gc.ari(yh, kl.labels_) == 1.0


def test_explicit_settings_keep_the_papers_start():
    """xi given explicitly: one starting cluster at the mean, λ by farthest-first, one run
    (the behaviour before the noise-aware default)."""
    X, y, S, P = blobs_problem(0)
    for xi in ("anneal", 1.0):
        info = RDPMeans(n_clusters=3, xi=xi, random_state=0).fit(P).result_.info
        assert info["init"] == "mean" and info["lam_rule"] == "farthest_first" and info["n_init"] == 1
        assert "kmeans_stage" not in info and info["n_clusters_bounds"] is None
    start = np.arange(len(X)) % 3
    given = RDPMeans(lam=3.0, xi=1.0, init=start, random_state=0).fit(P)
    assert given.result_.info["init"] == "given"
    with pytest.raises(InvalidParameterError, match="init of RDPMeans must be"):
        RDPMeans(lam=3.0, init=start[:5]).fit(P)
    with pytest.raises(InvalidParameterError, match="init of RDPMeans must be one of"):
        RDPMeans(lam=3.0, init="kmeans++").fit(P)


# ---------------------------------------------------------------------- λ rules
def test_lambda_rules_by_hand():
    X = np.array([[0.0], [1.0], [2.0], [3.0], [11.0], [13.0]])  # mean 5
    # farthest-first from the mean: 13 (64), then 0 (25), then 11 or 3 (4)
    assert dp_lambda(X, 1) == 64.0 and dp_lambda(X, 2) == 25.0 and dp_lambda(X, 3) == 4.0
    # k-th largest squared distance to the mean: 64, 36, 25, ...
    assert dp_lambda(X, 2, rule="kth_from_mean") == 36.0
    assert dp_lambda(X) == 25.0  # largest drop 25 -> 4 is after k = 2
    # fewer distinct points than k: half the smallest positive divergence noted
    # (mean 2/3: 2 at 16/9, then 0 at 4/9, then nothing left)
    assert dp_lambda(np.array([[0.0], [0.0], [2.0]]), 3) == pytest.approx(2 / 9)
    assert dp_lambda(np.zeros((4, 2))) == 1.0
    with pytest.raises(TooFewClustersError, match="n_clusters=7"):
        dp_lambda(X, 7)


# ---------------------------------------------------------------------- KL
def test_kl_on_histograms():
    X, y = histograms(0)
    est = RDPMeans(n_clusters=3, divergence="kl", random_state=0).fit(X)
    assert est.n_clusters_ == 3 and gc.ari(y, est.labels_) == 1.0
    Y = (X + 1e-3) / (X + 1e-3).sum(1, keepdims=True)
    J = objective(Y, np.ones(len(Y)), est.labels_, est.centroids_, [], [], 0, 0, est.lam_, "kl")
    assert est.result_.objective == pytest.approx(J, rel=1e-9)
    np.testing.assert_allclose(est.centroids_.sum(1), 1.0)
    # with constraints: local minimum under KL too
    S = gc.SideInfo.sample(y, n_pairs=30, noise=0.2, random_state=0)
    P = gc.Problem.from_array(X, S)
    est = RDPMeans(lam=0.05, xi=0.03, divergence="kl", random_state=1).fit(P)
    delta, J = single_moves(Y, np.ones(len(Y)), est.labels_, est.centroids_, P.constraints,
                            P.constraint_weights, 0.03, 0.03, 0.05, "kl")
    assert J == pytest.approx(est.result_.objective, rel=1e-9)
    assert delta >= -1e-9


# ---------------------------------------------------------------------- merged nodes
@pytest.mark.parametrize("kind", ["sqeuclidean", "kl"])
def test_contracted_problem_gives_the_same_objective(kind):
    """Hard must-links merged by the estimator, or beforehand by gc.contract (nodes with
    counts > 1 and X = feature sums): the same partition, and objectives that differ by
    the members' scatter around their node mean."""
    if kind == "kl":
        X, y = histograms(3, n_per=10)
        X = X / X.sum(1, keepdims=True)  # distributions: the mean of members is exact
        opts = dict(lam=0.05, xi=0.02, divergence="kl", smoothing=0.0)
    else:
        X, y = gc.datasets.make_blobs(40, 3, 2, random_state=3)
        opts = dict(lam=3.0, xi=1.0)
    rng = np.random.default_rng(0)
    same = [(int(a), int(b)) for a, b in rng.integers(0, len(X), (60, 2)) if a != b and y[a] == y[b]][:12]
    S = gc.SideInfo.from_pairs(must=same, weight=np.inf)
    soft = gc.SideInfo.sample(y, n_pairs=25, noise=0.2, random_state=0)
    S = gc.SideInfo([*S.edges(), *[e for e in soft.edges() if (e[0], e[1]) not in set(same)]])
    P = gc.Problem.from_array(X, S)
    full = RDPMeans(random_state=0, **opts).fit(P)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reduced, lift = gc.contract(P)
    assert reduced.counts.max() > 1
    red = RDPMeans(random_state=0, **opts).fit(reduced)
    np.testing.assert_array_equal(gc.base.canonical_labels(lift(red.labels_)), full.labels_)
    means = reduced.feature_means[lift.mapping]
    scatter = float(divergence(X, means, kind).sum())
    assert full.result_.objective == pytest.approx(red.result_.objective + scatter, rel=1e-9)
    # and the reported objective is J on the original nodes
    J = objective(X, np.ones(len(X)), full.labels_, full.centroids_, P.constraints, P.constraint_weights,
                  1.0 if kind != "kl" else 0.02, 1.0 if kind != "kl" else 0.02, opts["lam"], kind)
    assert full.result_.objective == pytest.approx(J, rel=1e-9)
    assert full.result_.info["n_super_nodes"] == reduced.n_nodes
    # the reduced problem's node costs are counts · D(mean, μ)
    dp = DPCentroids(2, **({"divergence": "kl", "smoothing": 0.0} if kind == "kl" else {}))
    dp.initialize(reduced, red.centroids_[:2], None)
    U = dp.unary(reduced)
    np.testing.assert_allclose(U[:, 0], reduced.counts * divergence(reduced.feature_means, red.centroids_[0], kind))


def test_hard_cannot_links_always_hold():
    X, y, S, P = blobs_problem(5, n=40, n_pairs=0)
    rng = np.random.default_rng(1)
    cl = [(int(a), int(b)) for a, b in rng.integers(0, 40, (30, 2)) if a != b and y[a] == y[b]]
    S = gc.SideInfo.from_pairs(cannot=cl, weight=np.inf)
    for kw in [dict(xi="anneal"), dict(xi=0.0), dict(xi="pq", p_link=0.5), dict(xi="pq", p_link=0.9)]:
        est = RDPMeans(lam=2.0, random_state=0, **kw).fit(X, S)
        assert est.result_.violations.n_violated == 0
        assert np.isfinite(est.result_.objective)


def test_infeasible_hard_constraints_raise():
    X = np.arange(8.0)[:, None]
    S = gc.SideInfo([(0, 1, np.inf), (1, 2, np.inf), (0, 2, -np.inf)])
    with pytest.raises(InfeasibleConstraintsError) as err:
        RDPMeans(lam=1.0).fit(X, S)
    assert err.value.path is not None


# ---------------------------------------------------------------------- provider
def test_provider_scores_and_births():
    P = gc.Problem(nodes=["a", "b", "c"], W=gc.Problem.from_array(np.zeros((3, 1))).W,
                   X=np.array([[0.0], [3.0], [9.0]]), counts=np.array([1, 3, 1]))  # node b: 3 points at 1.0
    dp = DPCentroids(lam=2.0)
    dp.start(P, np.array([0, 0, 1]))
    np.testing.assert_allclose(dp.centroids_.ravel(), [0.75, 9.0])
    dp.remove(1)
    np.testing.assert_allclose(dp.scores(1), [3 * 0.0625, 3 * 64.0, 2.0])
    dp.add(1, 0)
    dp.remove(2)  # cluster 1 is now empty: re-joining it pays λ again
    np.testing.assert_allclose(dp.scores(2), [81 - 2 * 9 * 0.75 + 0.5625, 0.0 + 2.0, 2.0])
    dp.add(2, dp.n_clusters)  # a birth
    assert dp.n_clusters == 3
    dp.refit()
    assert dp.n_clusters == 2 and dp.labels.tolist() == [0, 0, 1]
    assert dp.objective() == pytest.approx(0.75 * 0.0 + 0.0 + 3 * 0.0625 + 0.5625 + 2 * 2.0)
    with pytest.raises(InvalidParameterError, match="remove it first"):
        dp.add(0, 1)
    with pytest.raises(InvalidParameterError, match="does not exist"):
        dp.remove(0)
        dp.add(0, 5)


def test_provider_inside_hmrf_matches_centroids():
    X, y, S, P = blobs_problem(6, n=24, n_pairs=10, noise=0.0)
    a = gc.HMRF(DPCentroids(3, lam=5.0), inference="bp", random_state=0).fit(X, S)
    b = gc.HMRF(gc.potentials.Centroids(3), inference="bp", random_state=0).fit(X, S)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.result_.objective == pytest.approx(b.result_.objective)
    np.testing.assert_allclose(a.potentials_.centroids_, b.potentials_.centroids_)
    Xh, yh = histograms(1, n_per=8)
    kl = gc.HMRF(DPCentroids(3, divergence="kl"), inference="icm", random_state=0).fit(Xh)
    assert gc.ari(yh, kl.labels_) == 1.0


# ---------------------------------------------------------------------- estimator
def test_reproducible_with_random_state():
    X, y, S, P = blobs_problem(8, noise=0.2)
    a = RDPMeans(n_clusters=3, random_state=11).fit(P)
    b = RDPMeans(n_clusters=3, random_state=11).fit(P)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.result_.history == b.result_.history
    c = RDPMeans(n_clusters=3, random_state=np.random.default_rng(11)).fit(P)
    np.testing.assert_array_equal(c.labels_, a.labels_)
    boxed = [RDPMeans(lam=3.0, init="box", random_state=s).fit(P).labels_ for s in (1, 1)]
    np.testing.assert_array_equal(*boxed)


def test_graph_input_centroids_and_info():
    G = nx.path_graph(["a", "b", "c", "d"])
    nx.set_node_attributes(G, {"a": [0.0], "b": [0.1], "c": [5.0], "d": [5.1]}, "features")
    S = gc.SideInfo.from_pairs(cannot=[("a", "b")])
    est = RDPMeans(lam=1.0, xi=100.0, random_state=0).fit(G, S)
    assert est.partition_ == {"a": 0, "b": 1, "c": 2, "d": 2}
    np.testing.assert_allclose(est.centroids_, [[0.0], [0.1], [5.05]])
    info = est.result_.info
    assert info["lam"] == est.lam_ == 1.0 and info["lam_rule"] == "given" and info["xi_mode"] == "fixed"
    assert info["iterations"] == len(est.result_.history) == len(info["n_changed"])
    assert est.n_clusters_ == info["n_clusters"][-1] == 3


def test_callback_and_progress():
    X, y, S, P = blobs_problem(9)
    seen = []
    est = RDPMeans(lam=3.0, callback=lambda t, z, J: seen.append((t, len(z), J)) or t == 2, random_state=0,
                   progress=True).fit(P)
    assert [s[0] for s in seen] == [1, 2] and seen[0][1] == len(X)
    assert est.result_.info["stop"] == "callback"


def test_patience_and_uncapped_schedule():
    X, y, S, P = blobs_problem(10, noise=0.0)
    capped = RDPMeans(n_clusters=3, xi="anneal", random_state=0).fit(P)
    free = RDPMeans(n_clusters=3, xi="anneal", xi_max=None, patience=5, anneal_stop="patience", random_state=0).fit(P)
    assert free.result_.info["stop"] == "patience"
    assert free.result_.info["xi_max"] is None
    np.testing.assert_array_equal(free.labels_, capped.labels_)  # constraints act as hard in both
    # the default stop of the uncapped schedule: an unchanged pass once ξ >= ξ_sat
    sat = RDPMeans(n_clusters=3, xi="anneal", xi_max=None, random_state=0).fit(P)
    info = sat.result_.info
    assert info["stop"] == "converged" and info["n_changed"][-1] == 0
    assert info["xi_schedule"][-1][0] >= info["xi_saturation"] > info["xi_schedule"][-2][0] / 2
    low = RDPMeans(n_clusters=3, xi="anneal", xi_max=0.01, random_state=0).fit(P)
    assert max(x[0] for x in low.result_.info["xi_schedule"]) == 0.01
    # a steep uncapped schedule saturates at 1e300 instead of overflowing
    steep = RDPMeans(n_clusters=3, xi="anneal", xi_max=None, xi_rate=1e10, anneal_stop="patience", patience=40,
                     random_state=0).fit(P)
    assert steep.xi_ == (1e300, 1e300) and np.isfinite(steep.result_.objective)


def test_restarts_keep_the_lowest_objective():
    """n_init restarts continue one generator: restart 0 is the single run, and the answer
    is the restart of lowest J (compared at one ξ), whose J the oracle confirms."""
    for seed in range(8):
        X, y, S, P = blobs_problem(seed, n=30, n_pairs=30, noise=0.25)
        one = RDPMeans(lam=2.5, xi=1.0, init="box", random_state=seed).fit(P)
        many = RDPMeans(lam=2.5, xi=1.0, init="box", n_init=6, random_state=seed).fit(P)
        info = many.result_.info
        Js = info["init_objectives"]
        assert info["n_init"] == 6 and len(Js) == 6 and info["init_xi"] == (1.0, 1.0)
        assert Js[0] == pytest.approx(one.result_.objective, rel=1e-12)
        assert info["best_init"] == int(np.argmin(Js))
        J = objective(X, np.ones(len(X)), many.labels_, many.centroids_, P.constraints, P.constraint_weights,
                      1.0, 1.0, 2.5)
        assert many.result_.objective == pytest.approx(J, rel=1e-10) == pytest.approx(min(Js), rel=1e-10)
        assert many.result_.objective <= one.result_.objective + 1e-9
    # annealed restarts end at different ξ: they are compared at the largest, by the oracle
    X, y, S, P = blobs_problem(3, noise=0.25)
    est = RDPMeans(n_clusters=3, xi="anneal", xi_max=None, n_init=4, random_state=0).fit(P)
    xi1, xi2 = est.result_.info["init_xi"]
    assert (xi1, xi2) >= est.xi_
    J = objective(X, np.ones(len(X)), est.labels_, est.centroids_, P.constraints, P.constraint_weights,
                  xi1, xi2, est.lam_)
    assert min(est.result_.info["init_objectives"]) == pytest.approx(J, rel=1e-10)
    # DP-means restarts too
    dp = DPMeans(n_clusters=3, init="box", n_init=4, random_state=0).fit(X)
    assert dp.result_.objective == pytest.approx(min(dp.result_.info["init_objectives"]), rel=1e-12)


def test_saturation_stop_outlasts_an_early_quiet_spell():
    """Coordinates in the thousands (λ ~ 1e6): the labels settle on pass 2, long before the
    schedule's ξ (from 1e-3) can matter. The paper's rule (20 quiet passes) stops there with
    the DP-means answer; the default waits for ξ >= ξ_sat = 2 (λ + D_max) / w_min and then
    obeys the clean constraints."""
    X, y = gc.datasets.make_blobs(60, 2, 2, separation=3.0, random_state=5)
    X = 1000.0 * X
    S = gc.SideInfo.sample(y, n_pairs=120, random_state=5)
    lam = 40.0 * 1000.0 ** 2
    dp = DPMeans(lam=lam, random_state=0).fit(X)
    paper = RDPMeans(lam=lam, xi="anneal", xi_max=None, anneal_stop="patience", random_state=0).fit(X, S)
    ours = RDPMeans(lam=lam, xi="anneal", xi_max=None, random_state=0).fit(X, S)
    assert paper.result_.info["stop"] == "patience"
    assert paper.xi_[0] < 1e3 and paper.result_.violations.n_violated > 0
    np.testing.assert_array_equal(paper.labels_, dp.labels_)
    info = ours.result_.info
    d_max = float(np.sum((X.max(0) - X.min(0)) ** 2))
    assert info["xi_saturation"] == pytest.approx(2 * (lam + d_max) / 1.0, rel=1e-12)
    assert info["stop"] == "converged" and ours.xi_[0] >= info["xi_saturation"]
    assert ours.result_.violations.n_violated == 0 and gc.ari(y, ours.labels_) > 0.8


def test_registered_methods():
    assert {"rdpmeans", "dpmeans"} <= set(METHODS)
    est = METHODS["rdpmeans"][0](n_clusters=4, random_state=3)
    assert isinstance(est, RDPMeans) and est.n_clusters == 4 and est.random_state == 3
    assert isinstance(METHODS["dpmeans"][0](n_clusters=2, random_state=None), DPMeans)


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("lam", [0.0, -1.0, float("nan"), "big"])
def test_bad_lambda(lam):
    with pytest.raises(InvalidParameterError, match="lam of RDPMeans"):
        RDPMeans(lam=lam).fit(np.zeros((3, 1)))
    with pytest.raises(InvalidParameterError, match="lam of DPCentroids"):
        DPCentroids(lam=lam).points(gc.Problem.from_array(np.zeros((3, 1))))  # checked at first use


@pytest.mark.parametrize("name, value", [("p_link", 0.0), ("p_link", 1.0), ("p_link", 1.5), ("q_link", 0.0),
                                         ("q_link", -0.2)])
def test_bad_link_credibilities(name, value):
    params = {"xi": "pq", "p_link": 0.9, name: value}
    with pytest.raises(InvalidParameterError, match=f"{name} of RDPMeans must lie strictly between 0 and 1"):
        RDPMeans(**params).fit(np.zeros((3, 1)))
    with pytest.raises(InvalidParameterError, match=name):
        xi_from_pq(**{"p_link": 0.9, name: value})


@pytest.mark.parametrize("params, match", [
    ({"xi": "bogus"}, "xi of RDPMeans must be 'anneal', 'pq'"),
    ({"xi": -1.0}, "xi of RDPMeans must be >= 0"),
    ({"xi": (1.0, 2.0, 3.0)}, r"\(xi1, xi2\)"),
    ({"p_link": 0.9}, "only apply with xi='pq'"),
    ({"xi": "pq"}, "needs p_link"),
    ({"noise_var": 0.0}, "noise_var of RDPMeans must be > 0"),
    ({"divergence": "cosine"}, "divergence of RDPMeans must be one of"),
    ({"lam_rule": "elbow"}, "lam_rule of RDPMeans"),
    ({"xi_rate": 0.5}, "xi_rate of RDPMeans must be >= 1"),
    ({"n_clusters": 0}, "n_clusters of RDPMeans must be >= 1"),
    ({"max_iter": 0}, "max_iter of RDPMeans"),
    ({"xi_max": "soon"}, "xi_max of RDPMeans"),
    ({"n_init": 0}, "n_init of RDPMeans must be >= 1"),
    ({"anneal_stop": "never"}, "anneal_stop of RDPMeans must be one of 'saturation', 'patience'"),
])
def test_bad_parameters(params, match):
    with pytest.raises(InvalidParameterError, match=match):
        RDPMeans(lam=1.0, **params).fit(np.zeros((3, 1)))


def test_nan_features_name_the_node():
    G = nx.path_graph(["a", "b", "c"])
    nx.set_node_attributes(G, {"a": [0.0], "b": [float("nan")], "c": [1.0]}, "features")
    with pytest.raises(InvalidFeaturesError, match="'b'") as err:
        RDPMeans(lam=1.0).fit(G)
    assert err.value.node == "b"
    with pytest.raises(InvalidFeaturesError, match="row 1") as err:
        DPMeans(lam=1.0).fit(np.array([[0.0], [np.nan], [1.0]]))
    assert err.value.node == 1
    # a Problem assembled by hand is checked too
    P = gc.Problem(nodes=["x", "y"], W=gc.Problem.from_array(np.zeros((2, 1))).W, X=np.array([[0.0], [np.inf]]))
    with pytest.raises(InvalidFeaturesError, match="node 'y'"):
        RDPMeans(lam=1.0).fit(P)


def test_other_feature_errors():
    with pytest.raises(InvalidFeaturesError, match="RDPMeans needs node features"):
        RDPMeans(lam=1.0).fit(nx.path_graph(3))
    with pytest.raises(InvalidFeaturesError, match="negative feature"):
        RDPMeans(lam=1.0, divergence="kl").fit(np.array([[1.0, 2.0], [3.0, -1.0]]))


def test_k_hint_larger_than_n():
    with pytest.raises(TooFewClustersError, match="n_clusters=5") as err:
        RDPMeans(n_clusters=5).fit(np.arange(4.0)[:, None])
    assert err.value.n_clusters == 5
    with pytest.raises(TooFewClustersError):
        DPMeans(n_clusters=5).fit(np.arange(4.0)[:, None])
    X = np.random.default_rng(0).normal(size=(4, 2))
    assert DPMeans(n_clusters=4, random_state=0).fit(X).n_clusters_ == 4
