"""The samplers (TVClust, DCP, dd-MMDPM/MMDPM) move items built by ``contract`` and map
their samples back with ``lift`` (``SamplerItems``): the same draws as the code that
built its own items, constraint counts that contraction must not change, the
multinomial coefficients of the original nodes, and a contracted problem scored as the
original one."""

import warnings

import numpy as np
import pytest
from scipy.special import gammaln

import graphclust as gc
from graphclust.bayesian import SamplerItems
from graphclust.errors import InfeasibleConstraintsError

INF = np.inf


def mixed_problem():
    """15 points in three blobs; hard must-links make blocks of 3, 2 and 2 nodes; soft
    must-links and cannot-links of fractional weights, one inside a block, two parallel
    to one block, a soft cannot-link beside a hard one."""
    rng = np.random.default_rng(7)
    centres = np.array([[0.0, 0.0], [4.0, 0.5], [2.0, 4.0]])
    X = np.concatenate([c + rng.normal(size=(5, 2)) for c in centres])
    S = gc.SideInfo([
        (0, 1, INF), (1, 2, INF), (5, 6, INF), (10, 12, INF),   # blocks {0, 1, 2}, {5, 6}, {10, 12}
        (0, 2, 0.7),                                            # soft must-link inside a block
        (3, 4, 1.0), (3, 0, 0.5), (3, 1, 0.7),                  # two of them parallel (3 to block {0, 1, 2})
        (7, 8, -1.0), (9, 11, -2.0),
        (0, 5, -INF),                                           # hard cannot-link between blocks
        (6, 10, -INF), (6, 12, -0.8),                           # hard and parallel soft cannot-link
        (13, 14, 0.6), (4, 13, -0.4),
    ])
    return X, S


def counts_problem():
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.poisson([8, 1, 1], size=(5, 3)), rng.poisson([1, 8, 2], size=(5, 3))]).astype(float)
    S = gc.SideInfo([(0, 1, INF), (5, 6, INF), (0, 6, -INF), (2, 3, 1.0), (2, 7, -1.0), (3, 8, -0.5)])
    return X, S


#: dd-MMDPM's and MMDPM's likelihood scale before issue #22
OLD_MAX_MARGIN = {"beta": 1.0, "base_std": 1.0}

# TVClust with the defaults the draws were recorded under (κ0 = 1, p and q learnt)
CONFIGS = {
    "tvclust-gaussian": (mixed_problem, lambda: gc.TVClust(gc.potentials.NormalInverseWishart(), learn_pq=True,
                                                           n_iter=8, burn_in=2, n_chains=2, random_state=0)),
    "tvclust-diag-sequential": (mixed_problem, lambda: gc.TVClust(gc.potentials.NormalInverseGamma(), learn_pq=True,
                                                                  n_iter=8, burn_in=2, init="sequential",
                                                                  learn_alpha=True, random_state=1)),
    "tvclust-multinomial": (counts_problem, lambda: gc.TVClust("multinomial", learn_pq=True, n_iter=8, burn_in=2,
                                                               random_state=2)),
    # DCP, DDMMDPM and MMDPM with the defaults the draws were recorded at (issues #26 and
    # #22 changed them)
    "dcp": (mixed_problem, lambda: gc.DCP(tau=1.0, learn_tau=True, learn_lengthscale=True, split_merge=0, n_iter=8,
                                          burn_in=2, n_chains=2, concentration=1.0, random_state=0)),
    "ddmmdpm-max": (mixed_problem, lambda: gc.DDMMDPM(similarity="max", lam=0.5, constraint_weight=1.0, n_iter=8,
                                                      burn_in=2, n_chains=2, random_state=0, **OLD_MAX_MARGIN)),
    "ddmmdpm-sum-knn": (mixed_problem, lambda: gc.DDMMDPM(similarity="sum", distance="knn", n_neighbors=4,
                                                          n_iter=8, burn_in=2, n_chains=1, random_state=3,
                                                          **OLD_MAX_MARGIN)),
    "mmdpm": (mixed_problem, lambda: gc.MMDPM(n_iter=8, burn_in=2, random_state=4, **OLD_MAX_MARGIN)),
}

#: samples_ (one string of node labels per kept sweep) and the log joint (TVClust) or
#: log score (DCP) per sweep of the first chain, recorded by running the samplers of
#: commit 7f3c833, which built their own items (must_link_components) and item
#: constraints, on the configurations above. Re-record only for a change meant to alter
#: the draws.
RECORDED = {
    "tvclust-gaussian": ("000001112233333 000001121032333 000011121300000 000001111100000 000012222200000 "
                         "000001112203033 000001121133333 000001112023222 000001112233333 000001110022222 "
                         "000001110122222 000001112122222",
                         [-81.8032619801, -74.3415785888, -72.9238805722, -74.6408250636, -77.9302638774,
                          -70.7860221573, -75.4114028891, -73.1235907871]),
    "tvclust-diag-sequential": ("000001121233333 000001112120222 000001120033300 000001110100000 000001110100020 "
                                "000001111122222",
                                [-72.4218021538, -71.9562050877, -73.1804642775, -75.6647625395, -78.0043248531,
                                 -71.5359387211, -74.9286654147, -70.0340848874]),
    "tvclust-multinomial": ("0000122222 0000011211 0000011111 0000011111 0000011111 0000011111",
                            [-39.0077242809, -41.5228494008, -42.0887117962, -45.0903966945, -39.8037816597,
                             -40.3213190354, -40.1470588068, -40.1436838544]),
    "dcp": ("000001123100000 000001112100000 000001110200000 000001112100000 000001112100000 000001102100000 "
            "000001111100000 000001111100000 000001112200000 000001111100000 000001111100000 000001111100000",
            [37.6024899949, 19.3148595496, 20.5403487425, 22.3721943887, 22.3527197478, 19.4735689955,
             19.4735689955, 18.1611582099]),
    # dd-MMDPM and MMDPM re-recorded when their likelihood moved to the features divided
    # by their spread (issue #23, a change meant to alter the draws); until then these
    # rows held 7f3c833's draws and passed
    "ddmmdpm-max": ("000001110122233 000001111122223 000102222213131 000101120123232 000101111122223 "
                    "000102223211134 000102220011111 000111100122222 000112201011121 000102220211111 "
                    "000101111022222 000001111122222", None),
    "ddmmdpm-sum-knn": ("000001111022222 000001100122222 000001110022222 000001110022222 000001110122222 "
                        "000001110022222", None),
    "mmdpm": ("000012200211111 000121130033330 000102201013111 000102220311121 000001110100000 "
              "000102220100010", None),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_same_draws_as_the_samplers_own_items(name):
    data, make = CONFIGS[name]
    X, S = data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # soft cannot-links inside blocks: warned about, tested below
        est = make().fit(X, S)
    rows, trace = RECORDED[name]
    got = " ".join("".join(map(str, r)) for r in est.samples_.tolist())
    assert got == rows
    if trace is not None:
        key = "log_joint" if name.startswith("tvclust") else "log_score"
        np.testing.assert_allclose(est.result_.info[key][0], trace, rtol=1e-10)


def test_items_are_the_hard_must_link_components():
    X, S = mixed_problem()
    P = gc.Problem.from_array(X, S)
    merged = SamplerItems(P)
    assert merged.n_items == 11 and merged.reduced.n_nodes == 11
    groups = [merged.members[merged.ptr[u]:merged.ptr[u + 1]].tolist() for u in range(merged.n_items)]
    assert groups[0] == [0, 1, 2] and [5, 6] in groups and [10, 12] in groups
    assert merged.first.tolist() == [g[0] for g in groups] == sorted(g[0] for g in groups)
    np.testing.assert_array_equal(merged.lift(np.arange(merged.n_items)), merged.comp)
    # dropped by contraction: the three hard must-links and the soft one inside {0, 1, 2}
    inside = {tuple(p) for p in P.constraints[merged.inside].tolist()}
    assert inside == {(0, 1), (1, 2), (5, 6), (10, 12), (0, 2)}
    # item-level constraints: the parallel must-links summed, the hard cannot-link absorbs its soft twin
    ptr, idx, w = merged.side
    item = dict(zip(map(tuple, merged.reduced.constraints.tolist()), merged.reduced.constraint_weights))
    assert item[tuple(sorted(merged.comp[[0, 3]].tolist()))] == pytest.approx(1.2)
    assert item[tuple(sorted(merged.comp[[6, 10]].tolist()))] == -INF
    assert len(idx) == 2 * len(item) and ptr[-1] == len(idx)
    # the first node of every item decides its label (nodes 1, 2, 6 and 12 do not)
    labels = np.array([4, 9, 9, 7, 7, 1, 3, 1, 1, 1, 2, 2, 0, 2, 2])
    assert merged.item_labels(labels).tolist() == [2, 3, 3, 0, 0, 0, 0, 1, 1, 1, 1]


def test_infeasible_hard_constraints_raise_before_sampling():
    X, _ = mixed_problem()
    S = gc.SideInfo([(0, 1, INF), (1, 2, INF), (0, 2, -INF)])
    for est in (gc.TVClust(n_iter=2), gc.DCP(n_iter=2), gc.DDMMDPM(n_iter=2), gc.MMDPM(n_iter=2)):
        with pytest.raises(InfeasibleConstraintsError, match="must-link path 0 - 1 - 2"):
            est.fit(X, S)


#: a block {8, 9, 14} with a soft cannot-link inside
BLOCK_WITH_CANNOT = [(8, 9, INF), (9, 14, INF), (8, 14, -0.3)]


def test_soft_cannot_links_inside_a_block_are_warned_about():
    X, S = mixed_problem()
    S = S.union(gc.SideInfo(BLOCK_WITH_CANNOT))
    with pytest.warns(UserWarning, match="will always be violated"):
        gc.TVClust(n_iter=2, random_state=0).fit(X, S)


def test_pair_counts_include_the_constraints_inside_items():
    """TVClust's p/q counts (Σ weights of may-links within / across clusters, ...) come
    from every soft constraint, also those inside a block and beside a hard cannot-link:
    counted here from the node labels of every sweep."""
    X, S = mixed_problem()
    S = S.union(gc.SideInfo(BLOCK_WITH_CANNOT))  # a soft cannot-link inside a block too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = gc.TVClust(n_iter=6, burn_in=0, random_state=5).fit(X, S)
    soft = [(a, b, w) for a, b, w in S.edges() if np.isfinite(w)]
    for t, z in enumerate(est.samples_):
        n11 = sum(w for a, b, w in soft if w > 0 and z[a] == z[b])
        n10 = sum(w for a, b, w in soft if w > 0 and z[a] != z[b])
        n01 = sum(-w for a, b, w in soft if w < 0 and z[a] == z[b])
        n00 = sum(-w for a, b, w in soft if w < 0 and z[a] != z[b])
        np.testing.assert_allclose(est.result_.info["pair_counts"][0, t], [n11, n01, n00, n10], atol=1e-12)
    assert est.result_.info["pair_counts"][0, :, 1].min() >= 0.3  # the one inside a block always counts


def test_multinomial_log_joint_keeps_the_members_coefficients():
    """The log joint of the Dirichlet–multinomial TVClust, computed from the node
    labels: the multinomial coefficients are those of the original nodes (the merged
    counts of a block have another coefficient)."""
    X, S = counts_problem()
    alpha, p, q = 0.8, 0.85, 0.75
    est = gc.TVClust("multinomial", alpha=alpha, p=p, q=q, learn_pq=False, n_iter=5, burn_in=0,
                     random_state=0).fit(X, S)
    beta = est.likelihood_.prior_["concentration"]
    coef = float((gammaln(X.sum(1) + 1) - gammaln(X + 1).sum(1)).sum())
    soft = [(a, b, w) for a, b, w in S.edges() if np.isfinite(w)]
    N = len(X)
    for t, z in enumerate(est.samples_):
        lj = gammaln(alpha) - gammaln(alpha + N) + coef
        for k in np.unique(z):
            c = X[z == k].sum(0)
            lj += (np.log(alpha) + gammaln((z == k).sum()) + gammaln(beta.sum()) - gammaln(beta.sum() + c.sum())
                   + (gammaln(beta + c) - gammaln(beta)).sum())
        for a, b, w in soft:
            same = z[a] == z[b]
            lj += w * np.log(p if same else 1 - q) if w > 0 else -w * np.log(1 - p if same else q)
        assert est.result_.history[t] == pytest.approx(lj, rel=1e-12)
    merged = X[[0, 1]].sum(0, keepdims=True)
    assert (gammaln(merged.sum() + 1) - gammaln(merged + 1).sum()) != pytest.approx(
        float((gammaln(X[:2].sum(1) + 1) - gammaln(X[:2] + 1).sum(1)).sum()))


@pytest.mark.parametrize("likelihood", ["gaussian", "gaussian-diag"])
def test_a_contracted_problem_is_sampled_as_the_original(likelihood):
    """Contraction keeps counts, sums and scatter, so TVClust on ``contract(P)`` resolves
    the same data-driven prior (the variance of the original points) and draws the same
    chain as on ``P`` (whose hard must-links it merges itself)."""
    X, _ = mixed_problem()
    S = gc.SideInfo([(0, 1, INF), (1, 2, INF), (5, 6, INF), (10, 12, INF), (3, 4, 1.0), (7, 8, -1.0),
                     (0, 5, -INF), (13, 14, 2.0)])
    P = gc.Problem.from_array(X, S)
    reduced, lift = gc.contract(P)
    kw = dict(init="sequential", learn_pq=False, n_iter=10, burn_in=0, random_state=3)
    a = gc.TVClust(likelihood, **kw).fit(P)
    b = gc.TVClust(likelihood, **kw).fit(reduced)
    for key, value in a.likelihood_.prior_.items():
        np.testing.assert_allclose(b.likelihood_.prior_[key], value, rtol=1e-12)
    # the prior is centred on the points' mean, its expected covariance their variance
    prior = b.likelihood_.prior_
    np.testing.assert_allclose(prior["mean"], X.mean(0), rtol=1e-12)
    if likelihood == "gaussian":
        np.testing.assert_allclose(prior["scale"], (prior["dof"] - 3) * np.diag(X.var(0)), rtol=1e-12)
    else:
        np.testing.assert_allclose(prior["rate"], (prior["shape"] - 1) * X.var(0), rtol=1e-12)
    first = SamplerItems(P).first
    np.testing.assert_array_equal(gc.base.canonical_labels(a.samples_[0][first]), b.samples_[0])
    np.testing.assert_array_equal(a.samples_[:, first], b.samples_)
    np.testing.assert_allclose(a.log_joint_, b.log_joint_, rtol=1e-10)


@pytest.mark.parametrize("make", [
    lambda: gc.TVClust(n_iter=5, burn_in=1, n_chains=2, random_state=0),
    lambda: gc.DCP(n_iter=5, burn_in=1, n_chains=2, random_state=0),
    lambda: gc.DDMMDPM(n_iter=5, burn_in=1, n_chains=2, random_state=0),
    lambda: gc.MMDPM(n_iter=5, burn_in=1, n_chains=2, random_state=0),
], ids=["tvclust", "dcp", "ddmmdpm", "mmdpm"])
def test_history_is_the_log_joint_of_every_sweep_of_the_first_chain(make):
    X, S = mixed_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make().fit(X, S)
    trace = est.result_.info["log_joint"]
    assert trace.shape == (2, 5) and trace.dtype == np.float64 and np.isfinite(trace).all()
    assert est.result_.history == trace[0].tolist()
    assert len(set(est.result_.history)) > 1
