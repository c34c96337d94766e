"""Tests of TVClust: the sampler against exact enumeration of the posterior over all
set partitions, the side information's exact no-op at p = q = 0.5, hard constraints,
the p/q and α updates, the Binder point estimate and the co-clustering matrix against
brute force, and the error paths."""

import math
import warnings

import networkx as nx
import numpy as np
import pytest
from scipy import integrate
from scipy.special import gammaln, multigammaln

import graphclust as gc
from graphclust.base import METHODS
from graphclust.errors import (
    InfeasibleConstraintsError,
    InvalidFeaturesError,
    InvalidParameterError,
)
from graphclust.potentials.conjugate import DirichletMultinomial, NormalInverseGamma, NormalInverseWishart
from graphclust.tvclust import TVClust, _escobar_west
from partition_oracles import set_partitions


# ---------------------------------------------------------------------- oracles


def niw_logml(X, pr):
    n, d = X.shape
    xb = X.mean(0)
    kn, nun = pr["kappa"] + n, pr["dof"] + n
    psin = pr["scale"] + (X - xb).T @ (X - xb) + pr["kappa"] * n / kn * np.outer(xb - pr["mean"], xb - pr["mean"])
    return (-n * d / 2 * np.log(np.pi) + multigammaln(nun / 2, d) - multigammaln(pr["dof"] / 2, d)
            + pr["dof"] / 2 * np.linalg.slogdet(pr["scale"])[1] - nun / 2 * np.linalg.slogdet(psin)[1]
            + d / 2 * np.log(pr["kappa"] / kn))


def nig_logml(X, pr):
    n = len(X)
    xb = X.mean(0)
    kn, an = pr["kappa"] + n, pr["shape"] + n / 2
    bn = pr["rate"] + ((X - xb) ** 2).sum(0) / 2 + pr["kappa"] * n * (xb - pr["mean"]) ** 2 / (2 * kn)
    return float((gammaln(an) - gammaln(pr["shape"]) + pr["shape"] * np.log(pr["rate"]) - an * np.log(bn)
                  + 0.5 * np.log(pr["kappa"] / kn) - n / 2 * np.log(2 * np.pi)).sum())


def dm_logml(X, pr):
    beta, c = pr["concentration"], X.sum(0)
    return float(gammaln(beta.sum()) - gammaln(beta.sum() + c.sum()) + (gammaln(beta + c) - gammaln(beta)).sum())


def exact_posterior(X, constraints, alpha, p, q, logml):
    """P(partition | X, E) ∝ CRP(z | α) Π_k m(X_k) Π_(i,j) P(E_ij | H_ij), by enumeration;
    keys are canonical label tuples."""
    n = len(X)
    keys, logp = [], []
    for part in set_partitions(n):
        z = np.empty(n, dtype=int)
        for k, block in enumerate(part):
            z[block] = k
        lp = len(part) * np.log(alpha) + sum(gammaln(len(b)) + logml(X[b]) for b in part)
        for a, b, w in constraints:
            same = z[a] == z[b]
            if np.isinf(w):
                lp += 0.0 if (w > 0) == same else -np.inf
            elif w > 0:
                lp += w * np.log(p if same else 1 - q)
            else:
                lp += -w * np.log(1 - p if same else q)
        keys.append(tuple(gc.base.canonical_labels(z).tolist()))
        logp.append(lp)
    logp = np.array(logp)
    prob = np.exp(logp - logp.max())
    return dict(zip(keys, prob / prob.sum()))


def empirical(samples):
    keys, counts = np.unique(samples, axis=0, return_counts=True)
    return {tuple(k.tolist()): c / counts.sum() for k, c in zip(keys, counts)}


def total_variation(exact, emp):
    return 0.5 * sum(abs(exact.get(k, 0.0) - emp.get(k, 0.0)) for k in set(exact) | set(emp))


TINY = np.array([[0.0, 0.0], [0.5, 0.2], [1.0, 1.1], [1.3, 0.7], [0.2, 1.0]])


# ---------------------------------------------------------------------- the sampler is exact
@pytest.mark.parametrize("split_merge", [0, 3], ids=["gibbs", "gibbs+split-merge"])
def test_matches_exact_enumeration_full_gaussian(split_merge):
    """Bell(5) = 52 partitions; fixed α, p, q; soft constraints of mixed strength."""
    constraints = [(0, 1, 1.0), (2, 4, -1.0), (1, 3, 2.0)]
    S = gc.SideInfo(constraints)
    alpha, p, q = 0.7, 0.8, 0.7
    est = TVClust(alpha=alpha, p=p, q=q, learn_pq=False, n_iter=12000, burn_in=100, n_split_merge=split_merge,
                  random_state=0).fit(TINY, S)
    pr = est.likelihood_.prior_
    exact = exact_posterior(TINY, constraints, alpha, p, q, lambda Y: niw_logml(Y, pr))
    assert len(exact) == 52
    assert total_variation(exact, empirical(est.samples_)) < 0.04


def test_matches_exact_enumeration_with_hard_constraints():
    """Hard must-link (a block moved as one, scored by its joint predictive with its
    scatter) and hard cannot-link, diagonal Gaussian, split-merge on."""
    constraints = [(0, 2, np.inf), (1, 4, -np.inf), (3, 4, 1.0), (0, 3, -1.0)]
    S = gc.SideInfo(constraints)
    alpha, p, q = 1.3, 0.9, 0.6
    est = TVClust("gaussian-diag", alpha=alpha, p=p, q=q, learn_pq=False, n_iter=12000, burn_in=100,
                  n_split_merge=3, random_state=1).fit(TINY, S)
    assert est.result_.info["n_items"] == 4
    pr = est.likelihood_.prior_
    exact = exact_posterior(TINY, constraints, alpha, p, q, lambda Y: nig_logml(Y, pr))
    emp = empirical(est.samples_)
    assert all(exact.get(k, 0.0) > 0 for k in emp)  # no sample breaks a hard constraint
    assert total_variation(exact, emp) < 0.04


def test_matches_exact_enumeration_multinomial():
    X = np.array([[4.0, 0.0, 1.0], [3.0, 1.0, 0.0], [0.0, 3.0, 2.0], [1.0, 4.0, 0.0]])
    constraints = [(0, 3, -1.0), (1, 2, 1.0)]
    alpha, p, q = 0.5, 0.75, 0.85
    est = TVClust("multinomial", alpha=alpha, p=p, q=q, learn_pq=False, n_iter=8000, burn_in=100, n_split_merge=2,
                  random_state=2).fit(X, gc.SideInfo(constraints))
    pr = est.likelihood_.prior_
    exact = exact_posterior(X, constraints, alpha, p, q, lambda Y: dm_logml(Y, pr))
    assert total_variation(exact, empirical(est.samples_)) < 0.04


def test_uninformative_side_information_changes_nothing():
    """p = q = 0.5 makes every constraint factor exactly 1: the same seed gives the
    same chain as without constraints, sample for sample."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(15, 2)), rng.normal(size=(15, 2)) + 2.0])
    S = gc.SideInfo.sample(np.repeat([0, 1], 15), n_pairs=40, noise=0.2, random_state=0)
    kw = dict(p=0.5, q=0.5, learn_pq=False, n_iter=60, random_state=5)
    with_s = TVClust(**kw).fit(X, S)
    without = TVClust(**kw).fit(X)
    np.testing.assert_array_equal(with_s.samples_, without.samples_)
    np.testing.assert_array_equal(with_s.result_.info["n_clusters"], without.result_.info["n_clusters"])


# ---------------------------------------------------------------------- behaviour on blobs
def blobs(rng, sizes=(20, 20, 20), sep=6.0, scale=0.5):
    centres = sep * np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 0.9]])
    y = np.repeat(np.arange(len(sizes)), sizes)
    return centres[y] + scale * rng.normal(size=(len(y), 2)), y


def test_credible_constraints_are_respected_on_separable_blobs():
    X, y = blobs(np.random.default_rng(0))
    S = gc.SideInfo.sample(y, n_pairs=60, random_state=0)
    est = TVClust(p=0.999, q=0.999, learn_pq=False, n_iter=60, random_state=0).fit(X, S)
    assert est.result_.violations.n_violated == 0
    assert gc.ari(y, est.labels_) == 1.0
    assert est.n_clusters_posterior_[3] > 0.9


def test_credible_constraints_split_what_the_features_merge():
    """Two overlapping groups look like one cluster; many credible constraints
    separate them, and with p = q = 0.5 (no information) they stay merged."""
    rng = np.random.default_rng(1)
    y = np.repeat([0, 1], 25)
    X = rng.normal(size=(50, 2)) * np.array([1.0, 0.3]) + np.array([[0.0, 0.0], [1.5, 0.0]])[y]
    S = gc.SideInfo.sample(y, n_pairs=300, random_state=1)
    blind = TVClust(p=0.5, q=0.5, learn_pq=False, n_iter=80, random_state=0).fit(X, S)
    informed = TVClust(p=0.99, q=0.99, learn_pq=False, n_iter=80, random_state=0).fit(X, S)
    assert gc.ari(y, blind.labels_) < 0.2
    assert gc.ari(y, informed.labels_) == 1.0 and informed.result_.violations.n_violated == 0


def test_learnt_credibilities_recover_the_flip_rate():
    X, y = blobs(np.random.default_rng(2), sizes=(40, 40, 40))
    S = gc.SideInfo.sample(y, n_pairs=600, noise=0.2, random_state=2)
    est = TVClust(learn_pq=True, n_iter=120, random_state=0).fit(X, S)
    assert gc.ari(y, est.labels_) == 1.0 and est.n_clusters_posterior_[3] >= 0.9
    # with the partition at (or next to) the truth, p and q have these Beta posteriors
    pairs = np.array([(u, v) for u, v, _ in S.edges()])
    ml = np.array([w > 0 for _, _, w in S.edges()])
    same = y[pairs[:, 0]] == y[pairs[:, 1]]
    n11, n01, n00, n10 = (ml & same).sum(), (~ml & same).sum(), (~ml & ~same).sum(), (ml & ~same).sum()
    assert est.p_ == pytest.approx((10 + n11) / (11 + n11 + n01), abs=0.015)
    assert est.q_ == pytest.approx((10 + n00) / (11 + n00 + n10), abs=0.015)
    assert abs(est.q_ - 0.8) < 0.05 and est.result_.info["p"].shape == (1, 120)


def test_pair_counts_of_the_pq_update_against_brute_force():
    """The agree/disagree counts behind the Beta draws of p and q, recomputed pair by pair
    from every kept sample: N11 may-links inside a cluster, N01 may-not-links inside, N00
    may-not-links across, N10 may-links across (weights |w|; hard pairs excluded)."""
    X, y = blobs(np.random.default_rng(6), sizes=(12, 12, 12), sep=3.0, scale=0.8)
    rng = np.random.default_rng(6)
    S = gc.SideInfo.sample(y, n_pairs=80, noise=0.25, random_state=6)
    triples = [(u, v, w * rng.choice([0.5, 1.0, 2.0])) for u, v, w in S.edges()]
    triples += [(0, 1, np.inf), (2, 30, -np.inf)]
    S = gc.SideInfo(triples)
    est = TVClust(learn_pq=True, n_iter=25, burn_in=0, random_state=0).fit(X, S)
    counts = est.result_.info["pair_counts"]
    assert counts.shape == (1, 25, 4)
    for t, z in enumerate(est.samples_):
        brute = np.zeros(4)
        for u, v, w in triples:
            if np.isinf(w):
                continue
            same = z[u] == z[v]
            brute[(0 if same else 3) if w > 0 else (1 if same else 2)] += abs(w)
        np.testing.assert_allclose(counts[0, t], brute, rtol=1e-12)
    # and the draws follow them: the mean of p over the sweeps sits near the mean of its
    # Beta(10 + N11, 1 + N01) posteriors
    n11, n01 = counts[0, :, 0], counts[0, :, 1]
    assert est.result_.info["p"][0].mean() == pytest.approx(np.mean((10 + n11) / (11 + n11 + n01)), abs=0.03)


# ---------------------------------------------------------------------- the defaults (issue #26)
def standardised(load):
    X, y = load()
    X = np.asarray(X, dtype=float)
    return (X - X.mean(0)) / X.std(0), np.asarray(y)


def test_default_prior_does_not_fragment_wine():
    """Standardised wine (178 x 13, 3 classes) without side information: with κ0 = 1 the
    Gaussian likelihood opens about ten clusters, the default κ0 = 0.01 about five (both
    on all 13 features: the prior is the subject here, not the projection)."""
    X, y = standardised(gc.datasets.load_wine)
    old = TVClust(NormalInverseWishart(kappa=1.0), n_iter=60, random_state=0).fit(X)
    new = TVClust(n_components=None, n_iter=60, random_state=0).fit(X)
    assert new.likelihood_.prior_["kappa"] == 0.01
    assert old.n_clusters_ >= 9
    assert new.n_clusters_ <= 6
    assert gc.pairwise_f_measure(y, new.labels_) > gc.pairwise_f_measure(y, old.labels_) + 0.1


def test_default_prior_of_the_likelihood_names():
    """Both Gaussian names get κ0 = 0.01; a provider instance is used as given."""
    X, y = blobs(np.random.default_rng(0), sizes=(6, 6, 6))
    assert TVClust("gaussian-diag", n_iter=2).fit(X).likelihood_.prior_["kappa"] == 0.01
    assert TVClust(NormalInverseWishart(), n_iter=2).fit(X).likelihood_.prior_["kappa"] == 1.0
    assert TVClust("multinomial", n_iter=2).fit(np.abs(X).round()).likelihood_.prior_["concentration"][0] == 1.0


@pytest.mark.parametrize("seed", [0, 5])
def test_fixed_credibilities_keep_noisy_links_from_being_explained_away(seed):
    """Standardised iris, 110 pairs with 20 % flipped: learning p and q lets the Gaussian
    model merge versicolor and virginica and write the cannot-links between them off as
    noise (p̂ about 0.6); the default, p = q = 0.9 fixed, keeps the three species."""
    X, y = standardised(gc.datasets.load_iris)
    S = gc.SideInfo.sample(y, n_pairs=110, noise=0.2, random_state=seed)
    learnt = TVClust(learn_pq=True, n_iter=60, random_state=0).fit(X, S)
    fixed = TVClust(n_iter=60, random_state=0).fit(X, S)
    assert learnt.n_clusters_ == 2 and learnt.p_ < 0.7
    assert fixed.n_clusters_ == 3 and gc.ari(y, fixed.labels_) > 0.85
    assert fixed.p_ == pytest.approx(0.9) and fixed.q_ == pytest.approx(0.9)


def test_rdpmeans_start():
    """init="rdpmeans" (the default) starts every chain from the RDP-means solution (the
    spec's recommended start) with ξ from the start values of p and q (the small-variance
    limit of this model), drawn with the first child of the generator."""
    X, y = blobs(np.random.default_rng(7), sizes=(15, 15, 15), sep=3.0, scale=0.8)
    S = gc.SideInfo.sample(y, n_pairs=100, noise=0.1, random_state=7)
    est = TVClust(n_iter=10, p=0.8, q=0.7, random_state=5).fit(X, S)
    g = np.random.default_rng(5)
    start = gc.RDPMeans(xi="pq", p_link=0.8, q_link=0.7, random_state=g.spawn(1)[0]).fit(X, S).labels_
    same = TVClust(n_iter=10, p=0.8, q=0.7, init=start, random_state=g).fit(X, S)
    np.testing.assert_array_equal(est.samples_, same.samples_)
    np.testing.assert_array_equal(est.log_joint_, same.log_joint_)


def test_hard_constraints_hold_in_every_sample():
    X, y = blobs(np.random.default_rng(4), sizes=(10, 10, 10))
    S = gc.SideInfo.from_pairs(must=[(0, 15), (15, 25)], cannot=[(1, 2), (11, 12)], weight=np.inf)
    est = TVClust(n_iter=40, random_state=0).fit(X, S)
    Z = est.samples_
    assert (Z[:, 0] == Z[:, 15]).all() and (Z[:, 15] == Z[:, 25]).all()
    assert (Z[:, 1] != Z[:, 2]).all() and (Z[:, 11] != Z[:, 12]).all()
    assert est.result_.info["n_items"] == 28
    assert est.coclustering_[0, 15] == 1.0 and est.coclustering_[1, 2] == 0.0


def test_infeasible_hard_constraints_name_the_path():
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2)], cannot=[(0, 2)], weight=np.inf)
    with pytest.raises(InfeasibleConstraintsError, match="must-link path 0 - 1 - 2"):
        TVClust(n_iter=5).fit(TINY, S)


def test_split_merge_separates_what_sequential_start_merges():
    """In 20 dimensions the sequential start puts several blobs in one cluster, which
    single-node moves cannot split; split–merge moves recover all five."""
    rng = np.random.default_rng(0)
    centres = rng.uniform(-10, 10, size=(5, 20))
    y = np.repeat(np.arange(5), 40)
    X = centres[y] + rng.normal(size=(200, 20))
    plain = TVClust(n_iter=30, n_split_merge=0, init="sequential", random_state=0).fit(X)
    moved = TVClust(n_iter=30, init="sequential", random_state=0).fit(X)
    assert gc.ari(y, moved.labels_) == 1.0
    assert moved.log_joint_[0, -1] > plain.log_joint_[0, -1]
    assert moved.result_.info["split_merge_accepted"] > 0


# ---------------------------------------------------------------------- summaries
def fitted(seed=0, **kw):
    X, y = blobs(np.random.default_rng(seed), sizes=(8, 8, 8), sep=2.5, scale=0.8)
    G = gc.knn_graph(X, n_neighbors=3)
    S = gc.SideInfo.sample(y, n_pairs=15, noise=0.2, random_state=seed)
    return TVClust(**{"n_iter": 80, "random_state": seed, **kw}).fit(G, S), G, S


def test_binder_point_estimate_against_the_dense_posterior():
    est, G, S = fitted(n_chains=2)
    Z = est.samples_
    n = Z.shape[1]
    P = np.mean([(z[:, None] == z[None, :]) for z in Z], axis=0)
    iu = np.triu_indices(n, 1)

    def expected_loss(z):
        same = (z[:, None] == z[None, :])[iu]
        return float(np.abs(same - P[iu]).sum())

    distinct = np.unique(Z, axis=0)
    losses = [expected_loss(z) for z in distinct]
    assert est.result_.objective == pytest.approx(min(losses), rel=1e-9)
    assert expected_loss(est.labels_) == pytest.approx(min(losses), rel=1e-9)
    np.testing.assert_allclose(est.coclustering(), P, atol=1e-12)


def test_coclustering_is_stored_on_constraint_pairs_and_graph_edges():
    est, G, S = fitted()
    C = est.coclustering_.tocoo()
    idx = {u: i for i, u in enumerate(est.nodes_)}
    stored = {(min(i, j), max(i, j)) for i, j in zip(C.row.tolist(), C.col.tolist())}
    wanted = {tuple(sorted((idx[u], idx[v]))) for u, v in G.edges()} | {
        tuple(sorted((idx[u], idx[v]))) for u, v, _ in S.edges()}
    assert stored == wanted
    dense = est.coclustering()
    np.testing.assert_allclose(C.data, dense[C.row, C.col], atol=1e-12)
    pairs = np.array([[0, 5], [3, 20], [7, 7]])
    np.testing.assert_allclose(est.coclustering(pairs), dense[pairs[:, 0], pairs[:, 1]])


def test_posterior_summaries_are_consistent():
    est, _, _ = fitted(n_chains=2, thin=2, learn_alpha=True)
    info = est.result_.info
    assert est.samples_.shape == (2 * 20, 24)  # (80 − 40) / 2 kept per chain
    assert info["log_joint"].shape == (2, 80) and est.result_.history == info["log_joint"][0].tolist()
    k = np.array([len(np.unique(z)) for z in est.samples_])
    np.testing.assert_allclose(est.n_clusters_posterior_, np.bincount(k) / len(k))
    assert est.alpha_ == pytest.approx(info["alpha"][:, 40::2].mean())
    assert est.p_ == pytest.approx(info["p"][:, 40::2].mean())
    assert 0 < est.p_ < 1 and est.alpha_ > 0


def test_map_point_estimate_is_the_best_kept_sample():
    est, _, _ = fitted(point_estimate="map", n_chains=2)
    kept = est.result_.info["log_joint"][:, 40:].reshape(-1)
    np.testing.assert_array_equal(est.labels_, est.samples_[int(np.argmax(kept))])


def test_escobar_west_draws_follow_the_exact_alpha_posterior():
    """With K and N fixed, the auxiliary-variable chain for α has stationary density
    ∝ Gamma(α | a, b) α^K Γ(α)/Γ(α + N); compare means."""
    a, b, K, N = 2.0, 1.0, 4, 30
    rng = np.random.default_rng(0)
    alpha, draws = 1.0, []
    for _ in range(20000):
        alpha = _escobar_west(alpha, K, N, a, b, rng)
        draws.append(alpha)

    def dens(x):
        return math.exp((a - 1) * math.log(x) - b * x + K * math.log(x) + math.lgamma(x) - math.lgamma(x + N))

    Z = integrate.quad(dens, 0, np.inf)[0]
    mean = integrate.quad(lambda x: x * dens(x), 0, np.inf)[0] / Z
    assert np.mean(draws[500:]) == pytest.approx(mean, rel=0.03)


# ---------------------------------------------------------------------- contract
def test_reproducible_with_random_state():
    a, _, _ = fitted(seed=3)
    b, _, _ = fitted(seed=3)
    np.testing.assert_array_equal(a.samples_, b.samples_)
    np.testing.assert_array_equal(a.log_joint_, b.log_joint_)
    two = fitted(seed=3, n_chains=2)[0]
    assert not np.array_equal(two.log_joint_[0], two.log_joint_[1])
    np.testing.assert_array_equal(two.log_joint_[0], fitted(seed=3, n_chains=2)[0].log_joint_[0])


def test_registered_method_and_docs_defaults():
    factory, description = METHODS["tvclust"]
    est = factory(n_clusters=3, random_state=0)
    assert isinstance(est, TVClust) and est.random_state == 0 and "ignored" in description
    assert gc.TVClust is TVClust


def test_likelihood_instances_and_init_labels():
    X, y = blobs(np.random.default_rng(5), sizes=(10, 10, 10))
    lik = NormalInverseWishart(kappa=0.5)
    est = TVClust(lik, n_iter=20, init=y, random_state=0).fit(X)
    assert est.likelihood_ is not lik and est.likelihood_.prior_["kappa"] == 0.5 and lik.prior_ is None
    assert gc.ari(y, est.labels_) == 1.0
    # an initial labelling that breaks a hard cannot-link is repaired in the first sweep
    S = gc.SideInfo.from_pairs(cannot=[(0, 1)], weight=np.inf)
    est = TVClust(NormalInverseGamma(), n_iter=3, burn_in=0, init=y, random_state=0).fit(X, S)
    assert (est.samples_[:, 0] != est.samples_[:, 1]).all()


def test_contracted_input():
    """A contracted problem carries its nodes' scatter, so the Gaussian likelihoods score
    merged nodes exactly (no warning); merged nodes given without scatter are warned about."""
    X = np.array([[0.0, 0.0], [0.1, 0.1], [3.0, 3.0], [3.1, 2.9]])
    reduced, _ = gc.contract(gc.Problem.from_array(X, gc.SideInfo.from_pairs(must=[(0, 1)], weight=np.inf)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TVClust(n_iter=5).fit(reduced)
        TVClust("multinomial", n_iter=5).fit(reduced)
    blind = gc.Problem.from_arrays(reduced.W, X=reduced.X, counts=reduced.counts)  # sums and counts only
    with pytest.warns(UserWarning, match="carry no within-node scatter"):
        TVClust(n_iter=5).fit(blind)


# ---------------------------------------------------------------------- many features
def test_feature_covariance_and_projection_of_a_contracted_problem_are_the_originals():
    """Counts and within-node scatter make both exact: the covariance of a contracted
    problem is that of its original points, and projecting commutes with contracting."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 4)) * [1.0, 10.0, 0.1, 3.0]
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (5, 6)], weight=np.inf)
    P = gc.Problem.from_array(X, S)
    mean, cov = P.feature_covariance()
    np.testing.assert_allclose(mean, X.mean(0))
    np.testing.assert_allclose(cov, np.cov(X.T, bias=True))
    reduced, _ = gc.contract(P)
    mean2, cov2 = reduced.feature_covariance()
    np.testing.assert_allclose(mean2, mean)
    np.testing.assert_allclose(cov2, cov, atol=1e-12)
    axes = rng.normal(size=(4, 2))
    a, _ = gc.contract(P.projected(mean, axes))
    b = reduced.projected(mean, axes)
    np.testing.assert_allclose(a.X, b.X, atol=1e-12)
    np.testing.assert_allclose(a.scatter, b.scatter, atol=1e-12)
    np.testing.assert_allclose(P.projected(mean, axes).X, (X - mean) @ axes)


def test_principal_axes_are_those_of_the_standardised_features_in_any_units():
    from sklearn.decomposition import PCA

    from graphclust.tvclust import principal_axes

    X, _ = standardised(gc.datasets.load_wine)
    mean, axes = principal_axes(gc.Problem.from_array(X), 3)
    ref = PCA(3).fit(X).components_.T
    np.testing.assert_allclose(np.abs(axes.T @ ref), np.eye(3), atol=1e-8)  # the same axes, up to sign
    units = np.linspace(0.01, 100.0, X.shape[1])
    mean_u, axes_u = principal_axes(gc.Problem.from_array(X * units + 5.0), 3)
    np.testing.assert_allclose((X * units + 5.0 - mean_u) @ axes_u, (X - mean) @ axes, atol=1e-8)


def test_n_components_auto_models_five_principal_components_of_many_features():
    """The full-covariance Gaussian sees the first five principal components of data
    with more features (the same chain as TVClust on those components), all features
    of data with at most five, and all features for the other likelihoods and for a
    provider instance; predict and predict_proba project new points the same way."""
    from graphclust.tvclust import AUTO_COMPONENTS, principal_axes

    X, y = standardised(gc.datasets.load_wine)
    S = gc.SideInfo.sample(y, 60, random_state=0)
    est = TVClust(n_iter=30, random_state=0).fit(X, S)
    assert est.n_components_ == AUTO_COMPONENTS == 5 and est.components_.shape == (5, X.shape[1])
    mean, axes = principal_axes(gc.Problem.from_array(X), 5)
    Z = (X - mean) @ axes
    same = TVClust(n_components=None, n_iter=30, random_state=0).fit(Z, S)
    np.testing.assert_array_equal(est.labels_, same.labels_)
    np.testing.assert_allclose(est.predict_proba(X[:20]), same.predict_proba(Z[:20]), atol=1e-9)
    np.testing.assert_array_equal(est.predict(X), same.predict(Z))
    assert est.n_features_in_ == X.shape[1] and est.likelihood_.prior_["mean"].shape == (5,)
    # unpickled, the likelihood's clusters are rebuilt from the projected problem
    import pickle

    np.testing.assert_allclose(pickle.loads(pickle.dumps(est)).predict_proba(X[:20]), est.predict_proba(X[:20]))
    for kw in (dict(n_components=None), dict(likelihood="gaussian-diag"), dict(likelihood=NormalInverseWishart())):
        fit = TVClust(n_iter=2, **kw).fit(X)
        assert fit.n_components_ == X.shape[1] and fit.components_ is None
    assert TVClust(n_components=2, n_iter=2).fit(X).n_components_ == 2
    small = TVClust(n_iter=2).fit(X[:, :4])
    assert small.n_components_ == 4 and small.components_ is None


def test_many_features_no_longer_outvote_the_links():
    """Issue #26: digits 3, 5 and 8 (539 images, 64 standardised pixel features) with
    200 clean pairs. On all 64 features the full-covariance model pays about
    (d²/4) log n_k nats for every extra cluster and lumps the three digits together
    (ARI 0.0); on five principal components the pairs separate them (ARI 0.59), in a
    tenth of the time."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [3, 5, 8])
    X, y = X[keep], y[keep]
    sd = X.std(0)
    X = (X - X.mean(0)) / np.where(sd > 0, sd, 1.0)
    S = gc.SideInfo.sample(y, 200, random_state=0)
    auto = TVClust(n_iter=40, random_state=0).fit(X, S)
    every = TVClust(n_components=None, n_iter=40, random_state=0).fit(X, S)
    assert gc.ari(y, auto.labels_) > 0.5
    assert gc.ari(y, auto.labels_) > gc.ari(y, every.labels_) + 0.3


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("params, match", [
    (dict(p=0.0), "p of TVClust is a probability and must lie strictly between 0 and 1, got 0.0"),
    (dict(p=1.0), "p of TVClust is a probability"),
    (dict(q=1.5), "q of TVClust is a probability and must lie strictly between 0 and 1, got 1.5"),
    (dict(q=-0.1), "q of TVClust is a probability"),
    (dict(alpha=0.0), "alpha of TVClust must be > 0"),
    (dict(alpha=-2), "alpha of TVClust must be > 0"),
    (dict(likelihood="poisson"), "likelihood of TVClust must be one of gaussian, gaussian-diag, multinomial"),
    (dict(likelihood=gc.potentials.Centroids(2)), "got Centroids"),
    (dict(n_iter=10, burn_in=10), r"burn_in of TVClust \(10\) must be smaller than n_iter \(10\)"),
    (dict(thin=0), "thin of TVClust must be >= 1"),
    (dict(n_chains=0), "n_chains of TVClust must be >= 1"),
    (dict(p_prior=(1.0, 0.0)), r"p_prior\[1\] of TVClust must be > 0"),
    (dict(alpha_prior=3.0), "alpha_prior of TVClust must be a pair"),
    (dict(point_estimate="mean"), "point_estimate of TVClust must be 'binder' or 'map'"),
    (dict(init="kmeans"), "init of TVClust must be 'sequential', 'rdpmeans' or an array"),
    (dict(init=[0, 1]), "init of TVClust must be 'sequential', 'rdpmeans' or 5 integer labels"),
    (dict(n_components=0), "n_components of TVClust must be >= 1, got 0"),
    (dict(n_components="all"), "n_components of TVClust must be 'auto', None or an int >= 1, got 'all'"),
    (dict(n_components=9), "n_components=9 of TVClust: the data have only 2 features"),
    (dict(likelihood="multinomial", n_components=1), "the multinomial likelihood models counts, which are not"),
])
def test_bad_parameters(params, match):
    with pytest.raises(InvalidParameterError, match=match):
        TVClust(**params).fit(TINY)


def test_bad_features_name_the_node():
    G = nx.path_graph(["a", "b", "c"])
    nx.set_node_attributes(G, {"a": [0.0, 1.0], "b": [float("nan"), 1.0], "c": [2.0, 2.0]}, "features")
    with pytest.raises(InvalidFeaturesError, match="node 'b'") as err:
        TVClust(n_iter=5).fit(G)
    assert err.value.node == "b"
    counts = gc.Problem.from_array(np.array([[1.0, 2.0], [3.0, -1.0]]), nodes=["x", "y"])
    with pytest.raises(InvalidFeaturesError, match="node 'y' has a negative count") as err:
        TVClust("multinomial", n_iter=5).fit(counts)
    assert err.value.node == "y"
    with pytest.raises(InvalidFeaturesError, match="needs node features"):
        TVClust(n_iter=5).fit(nx.path_graph(4))
    assert isinstance(DirichletMultinomial(), gc.potentials.DirichletMultinomial)
