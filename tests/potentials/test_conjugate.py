"""Tests of the conjugate node-potential providers: every predictive against a
marginal likelihood written out independently (closed forms with slogdet, scipy's
Student-t, numerical integration), the incremental statistics against a from-scratch
recomputation, and the batch path inside HMRF."""

import pickle

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln, multigammaln

import graphclust as gc
from graphclust.errors import InvalidFeaturesError, InvalidParameterError
from graphclust.potentials.conjugate import (
    DirichletMultinomial,
    NormalInverseGamma,
    NormalInverseWishart,
)

PROVIDERS = [NormalInverseWishart, NormalInverseGamma, DirichletMultinomial]
IDS = ["niw", "nig", "dirichlet"]


# ---------------------------------------------------------------------- oracles
def niw_logml(X, prior):
    """log m(X) under NIW(m0, κ0, ν0, Ψ0), from the raw points."""
    n, d = X.shape
    if n == 0:
        return 0.0
    m0, k0, nu0, psi0 = prior["mean"], prior["kappa"], prior["dof"], prior["scale"]
    xb = X.mean(0)
    S = (X - xb).T @ (X - xb)
    kn, nun = k0 + n, nu0 + n
    psin = psi0 + S + k0 * n / kn * np.outer(xb - m0, xb - m0)
    return (-n * d / 2 * np.log(np.pi) + multigammaln(nun / 2, d) - multigammaln(nu0 / 2, d)
            + nu0 / 2 * np.linalg.slogdet(psi0)[1] - nun / 2 * np.linalg.slogdet(psin)[1] + d / 2 * np.log(k0 / kn))


def nig_logml(X, prior):
    n = len(X)
    if n == 0:
        return 0.0
    m0, k0, a0, b0 = prior["mean"], prior["kappa"], prior["shape"], prior["rate"]
    xb = X.mean(0)
    S = ((X - xb) ** 2).sum(0)
    kn, an = k0 + n, a0 + n / 2
    bn = b0 + S / 2 + k0 * n * (xb - m0) ** 2 / (2 * kn)
    return float((gammaln(an) - gammaln(a0) + a0 * np.log(b0) - an * np.log(bn) + 0.5 * np.log(k0 / kn)
                  - n / 2 * np.log(2 * np.pi)).sum())


def dm_logml(X, prior):
    """log p(X) of count rows under Dirichlet(β)-multinomial, multinomial coefficients included."""
    if len(X) == 0:
        return 0.0
    beta = prior["concentration"]
    c = X.sum(0)
    coef = (gammaln(X.sum(1) + 1) - gammaln(X + 1).sum(1)).sum()
    return float(coef + gammaln(beta.sum()) - gammaln(beta.sum() + c.sum()) + (gammaln(beta + c) - gammaln(beta)).sum())


ORACLE = {NormalInverseWishart: niw_logml, NormalInverseGamma: nig_logml, DirichletMultinomial: dm_logml}


def data_for(cls, rng, n=9, d=3):
    if cls is DirichletMultinomial:
        return rng.integers(0, 5, size=(n, d)).astype(float)
    return rng.normal(size=(n, d)) * np.array([1.0, 3.0, 0.2])[:d] + np.array([0.0, 5.0, -1.0])[:d]


# ---------------------------------------------------------------------- predictives
@pytest.mark.parametrize("cls", PROVIDERS, ids=IDS)
@pytest.mark.parametrize("d", [1, 2, 3])
def test_predictive_is_a_marginal_likelihood_ratio(cls, d, rng):
    """scores(i)[k] = −log m(X_k ∪ {x_i}) + log m(X_k), with i left out of its own
    cluster; the new-cluster column is −log m({x_i})."""
    X = data_for(cls, rng, d=d)
    labels = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    lik = cls()
    lik.start(gc.Problem.from_array(X), labels)
    logml = ORACLE[cls]
    for i in range(len(X)):
        expected = []
        for k in range(3):
            members = X[(labels == k) & (np.arange(len(X)) != i)]
            expected.append(logml(members, lik.prior_) - logml(np.vstack([members, X[i:i + 1]]), lik.prior_))
        expected.append(-logml(X[i:i + 1], lik.prior_))
        np.testing.assert_allclose(lik.scores(i), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(lik.log_marginal(), [logml(X[labels == k], lik.prior_) for k in range(3)], rtol=1e-10)


def test_niw_predictive_is_a_multivariate_student_t(rng):
    X = rng.normal(size=(7, 3))
    lik = NormalInverseWishart(kappa=0.5, dof=6.0, scale=np.diag([1.0, 2.0, 0.5]))
    lik.start(gc.Problem.from_array(X), np.zeros(7, dtype=int))
    pr = lik.prior_
    Y = X[1:]
    n, d = Y.shape
    kn, nun = pr["kappa"] + n, pr["dof"] + n
    mn = (pr["kappa"] * pr["mean"] + Y.sum(0)) / kn
    psin = pr["scale"] + (Y - Y.mean(0)).T @ (Y - Y.mean(0)) + pr["kappa"] * n / kn * np.outer(
        Y.mean(0) - pr["mean"], Y.mean(0) - pr["mean"])
    df = nun - d + 1
    t = stats.multivariate_t(loc=mn, shape=psin * (kn + 1) / (kn * df), df=df)
    assert lik.scores(0)[0] == pytest.approx(-t.logpdf(X[0]), rel=1e-10)


def test_nig_matches_numerical_integration():
    """m(X) = ∫∫ Π N(x | μ, σ²) N(μ | m0, σ²/κ0) IG(σ² | a0, b0) dμ dσ² in one dimension."""
    X = np.array([[0.3], [-0.5], [1.1]])
    lik = NormalInverseGamma(mean=[0.2], kappa=0.7, shape=2.0, rate=[1.3])
    lik.start(gc.Problem.from_array(X), [0, 0, 0])

    x = X[:, 0]
    log_ig_norm = 2.0 * np.log(1.3) - gammaln(2.0)

    def integrand(mu, t):  # t = log σ², so dσ² = σ² dt
        s2 = np.exp(t)
        log_like = -0.5 * ((x - mu) ** 2).sum() / s2 - 1.5 * np.log(2 * np.pi * s2)
        log_mu = -0.5 * 0.7 * (mu - 0.2) ** 2 / s2 - 0.5 * np.log(2 * np.pi * s2 / 0.7)
        log_s2 = log_ig_norm - 3.0 * t - 1.3 / s2
        return np.exp(log_like + log_mu + log_s2 + t)

    value, _ = integrate.dblquad(integrand, -12.0, 8.0, -10.0, 10.0, epsabs=1e-13, epsrel=1e-10)
    assert lik.log_marginal()[0] == pytest.approx(np.log(value), abs=1e-7)


def test_dirichlet_matches_numerical_integration():
    """Two categories: the Beta–binomial, integrated over θ numerically."""
    X = np.array([[3.0, 1.0], [2.0, 2.0], [0.0, 4.0]])
    lik = DirichletMultinomial(concentration=[0.7, 1.8])
    lik.start(gc.Problem.from_array(X), [0, 0, 0])

    def integrand(th):
        return np.prod(stats.binom.pmf(X[:, 0], X.sum(1), th)) * stats.beta.pdf(th, 0.7, 1.8)

    value, _ = integrate.quad(integrand, 0.0, 1.0, epsabs=1e-14, epsrel=1e-10)
    assert lik.log_marginal()[0] == pytest.approx(np.log(value), rel=1e-8)


def test_one_dimensional_niw_is_nig(rng):
    X = rng.normal(size=(6, 1))
    niw = NormalInverseWishart(mean=[0.1], kappa=0.4, dof=3.0, scale=[[2.4]])
    nig = NormalInverseGamma(mean=[0.1], kappa=0.4, shape=1.5, rate=[1.2])
    P = gc.Problem.from_array(X)
    labels = [0, 0, 1, 1, 1, 0]
    niw.start(P, labels)
    nig.start(P, labels)
    for i in range(6):
        np.testing.assert_allclose(niw.scores(i), nig.scores(i), rtol=1e-10)


@pytest.mark.parametrize("cls", PROVIDERS, ids=IDS)
def test_block_predictive_is_the_joint_predictive(cls, rng):
    """Nodes grouped into one item (as TVClust does for hard must-links) are scored
    by the joint predictive of all their points, within-block scatter included."""
    X = data_for(cls, rng, n=8)
    comp = np.array([0, 1, 1, 2, 3, 3, 3, 4])  # items {1,2} and {4,5,6}
    lik = cls()
    P = gc.Problem.from_array(X)
    model, items, scratch = lik._setup(P, comp, 5)
    from graphclust.potentials.conjugate import FIRST_SLOT, ConjugateGibbsState, _build, _log_pred

    cl = lik._empty(model, FIRST_SLOT + 3)
    z = np.array([0, 0, -1, 1, -1]) + FIRST_SLOT
    z[z < FIRST_SLOT] = -1
    st = ConjugateGibbsState(lik.kind, model, cl, items, scratch, 0.0, False)
    _build(st, z)
    logml = ORACLE[cls]
    in0 = np.flatnonzero(np.isin(comp, [0, 1]))
    for item, k, slot in [(3, 0, FIRST_SLOT), (2, 1, FIRST_SLOT + 1), (3, None, 0)]:
        pts = X[comp == item]
        base = X[in0] if k == 0 else (X[comp == 3] if k == 1 else X[:0])
        expected = logml(np.vstack([base, pts]), lik.prior_) - logml(base, lik.prior_)
        assert _log_pred(st, item, slot) == pytest.approx(expected, rel=1e-9)


def test_merged_nodes_multinomial_exact():
    """A contracted node (counts > 1, summed counts) is scored exactly by the
    Dirichlet-multinomial: the joint predictive of its points, up to the multinomial
    coefficient (the same constant for every cluster)."""
    X = np.array([[3.0, 0.0, 1.0], [2.0, 1.0, 0.0], [0.0, 4.0, 1.0], [1.0, 3.0, 0.0]])
    S = gc.SideInfo.from_pairs(must=[(0, 1)], weight=np.inf)
    reduced, _ = gc.contract(gc.Problem.from_array(X, S))
    lik = DirichletMultinomial()
    lik.start(reduced, [0, 1, 1])
    prior = {"concentration": np.ones(3)}
    block, rest = X[[0, 1]], X[[2, 3]]
    expected = np.array([-dm_logml(block, prior), dm_logml(rest, prior) - dm_logml(np.vstack([rest, block]), prior),
                         -dm_logml(block, prior)])
    diff = lik.scores(0) - expected
    np.testing.assert_allclose(diff - diff[0], 0.0, atol=1e-10)


# ---------------------------------------------------------------------- incremental path
@pytest.mark.parametrize("cls", PROVIDERS, ids=IDS)
def test_incremental_moves_match_recomputation(cls, rng):
    """Random remove/add moves (opening and emptying clusters) leave exactly the
    statistics a fresh start from the final labels builds."""
    X = data_for(cls, rng, n=14)
    P = gc.Problem.from_array(X)
    labels = rng.integers(0, 3, size=14)
    lik = cls()
    lik.start(P, labels)
    for _ in range(300):
        i = int(rng.integers(14))
        lik.remove(i)
        k = int(rng.integers(lik.n_clusters + 1))
        lik.add(i, k)
        labels[i] = k
    fresh = cls()
    fresh.start(P, labels)
    assert fresh.n_clusters <= lik.n_clusters
    K = fresh.n_clusters
    np.testing.assert_allclose(lik.sizes[:K], fresh.sizes)
    assert (lik.sizes[K:] == 0).all()
    np.testing.assert_allclose(lik.log_marginal()[:K], fresh.log_marginal(), rtol=1e-9, atol=1e-9)
    for i in range(14):
        np.testing.assert_allclose(np.delete(lik.scores(i), np.arange(K, lik.n_clusters)), fresh.scores(i),
                                   rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls", PROVIDERS, ids=IDS)
def test_scores_leave_the_node_out_and_unary_agrees(cls, rng):
    X = data_for(cls, rng, n=10)
    P = gc.Problem.from_array(X)
    labels = np.array([0, 1, 0, 1, 2, 2, 0, 1, 2, 0])
    lik = cls(3)
    lik.start(P, labels)
    inside = np.array([lik.scores(i) for i in range(10)])
    lik2 = cls(3)
    lik2.update(P, labels)
    np.testing.assert_allclose(lik2.unary(P), inside[:, :3], rtol=1e-12)
    for i in range(10):
        lik.remove(i)
        np.testing.assert_allclose(lik.scores(i), inside[i], rtol=1e-9)
        lik.add(i, int(labels[i]))


def test_empty_cluster_scores_as_the_prior(rng):
    X = rng.normal(size=(5, 2))
    lik = NormalInverseWishart()
    lik.start(gc.Problem.from_array(X), [0, 0, 1, 1, 1])
    lik.remove(0)
    lik.remove(1)
    s = lik.scores(0)
    assert s[0] == pytest.approx(s[-1], rel=1e-12)
    assert lik.sizes.tolist() == [0.0, 3.0]


def test_incremental_errors(rng):
    lik = NormalInverseWishart()
    with pytest.raises(InvalidParameterError, match="start"):
        lik.scores(0)
    lik.start(gc.Problem.from_array(rng.normal(size=(4, 2))), [0, 0, 1, 1])
    with pytest.raises(InvalidParameterError, match="already in cluster 0"):
        lik.add(0, 1)
    lik.remove(0)
    with pytest.raises(InvalidParameterError, match="not in a cluster"):
        lik.remove(0)
    with pytest.raises(InvalidParameterError, match=r"cluster must be an int in \[0, 2\]"):
        lik.add(0, 5)
    with pytest.raises(InvalidParameterError, match=r"node index must be an int in \[0, 4\)"):
        lik.scores(7)
    with pytest.raises(InvalidParameterError, match="labels must be integers >= 0"):
        lik.start(gc.Problem.from_array(np.zeros((2, 2))), [0, -1])


# ---------------------------------------------------------------------- priors and validation
def test_data_driven_priors(rng):
    X = rng.normal(size=(200, 3)) * np.array([1.0, 10.0, 0.1]) + 4.0
    X[:, 2] = 7.0  # a constant feature
    niw = NormalInverseWishart()
    niw.start(gc.Problem.from_array(X), np.zeros(200, int))
    var = X.var(0)
    var[2] = np.median(var[:2])
    np.testing.assert_allclose(niw.prior_["mean"], X.mean(0))
    np.testing.assert_allclose(niw.prior_["scale"], np.diag(var))  # (ν0 − d − 1) = 1 with ν0 = d + 2
    assert niw.prior_["dof"] == 5.0 and niw.prior_["kappa"] == 1.0
    nig = NormalInverseGamma()
    nig.start(gc.Problem.from_array(X), np.zeros(200, int))
    np.testing.assert_allclose(nig.prior_["rate"] / (nig.prior_["shape"] - 1), var)


def test_bad_features_and_parameters():
    """Bad features and bad parameters are refused with the culprit named. The
    providers' ``__init__`` only stores its arguments: a bad ``kappa`` or
    ``concentration`` is refused at first use (``start``), not at construction."""
    X = np.array([[1.0, 2.0], [0.0, 3.0]])
    with pytest.raises(InvalidFeaturesError, match="node 'b' has a negative count") as err:
        DirichletMultinomial().start(gc.Problem.from_array(np.array([[1.0, 2.0], [-1.0, 3.0]]), nodes=["a", "b"]),
                                     [0, 0])
    assert err.value.node == "b"
    P = gc.Problem.from_array(X, nodes=["a", "b"])
    P.X = np.array([[1.0, np.nan], [0.0, 3.0]])  # bypassing the Problem's own check
    with pytest.raises(InvalidFeaturesError, match="node 'a' has non-finite features") as err:
        NormalInverseWishart().start(P, [0, 0])
    assert err.value.node == "a"
    with pytest.raises(InvalidFeaturesError, match="needs node features"):
        NormalInverseGamma().start(gc.Problem.from_graph(__import__("networkx").path_graph(3)), [0, 0, 0])
    with pytest.raises(InvalidParameterError, match="dof of NormalInverseWishart must be > n_features - 1"):
        NormalInverseWishart(dof=0.5).start(gc.Problem.from_array(X), [0, 0])
    with pytest.raises(InvalidParameterError, match="scale of NormalInverseWishart must be positive definite"):
        NormalInverseWishart(scale=[[1.0, 2.0], [2.0, 1.0]]).start(gc.Problem.from_array(X), [0, 0])
    lik = NormalInverseGamma(kappa=0.0)  # stored as given ...
    with pytest.raises(InvalidParameterError, match="kappa of NormalInverseGamma must be > 0"):
        lik.start(gc.Problem.from_array(X), [0, 0])  # ... and refused at first use
    lik = DirichletMultinomial(concentration=[1.0, -2.0])
    with pytest.raises(InvalidParameterError, match="concentration of DirichletMultinomial"):
        lik.start(gc.Problem.from_array(X), [0, 0])
    with pytest.raises(InvalidParameterError, match="mean of NormalInverseGamma must be a finite vector"):
        NormalInverseGamma(mean=[0.0]).start(gc.Problem.from_array(X), [0, 0])


def test_clone_repr_pickle(rng):
    """clone and repr come from the shared reflection (the repr names every parameter
    that differs from its default, ``n_clusters`` by name)."""
    lik = NormalInverseWishart(3, kappa=0.5)
    assert lik.clone(kappa=2.0).kappa == 2.0 and lik.clone().n_clusters == 3
    assert repr(lik) == "NormalInverseWishart(n_clusters=3, kappa=0.5)"
    lik.start(gc.Problem.from_array(rng.normal(size=(4, 2))), [0, 0, 1, 1])
    again = pickle.loads(pickle.dumps(lik))
    assert again.kappa == 0.5 and again.prior_ is not None


# ---------------------------------------------------------------------- inside HMRF
@pytest.mark.parametrize("cls", PROVIDERS, ids=IDS)
@pytest.mark.parametrize("penalty", ["distance", "constant"])
def test_serves_in_hmrf(cls, penalty, rng):
    y = np.repeat([0, 1], 15)
    if cls is DirichletMultinomial:
        theta = np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]])
        X = np.array([rng.multinomial(30, theta[k]) for k in y]).astype(float)
    else:
        X = rng.normal(scale=0.3, size=(30, 2)) + 3.0 * y[:, None]
    S = gc.SideInfo.sample(y, n_pairs=10, random_state=0)
    est = gc.HMRF(cls(2), inference="icm", penalty=penalty, random_state=0).fit(X, S)
    assert gc.ari(y, est.labels_) == 1.0


@pytest.mark.parametrize("cls", PROVIDERS, ids=IDS)
def test_pair_distortion_and_its_maximum(cls, rng):
    X = data_for(cls, rng, n=12)
    P = gc.Problem.from_array(X)
    lik = cls()
    pairs = np.array([(i, j) for i in range(12) for j in range(12)])
    phi = lik.pair_distortion(P, pairs).reshape(12, 12)
    np.testing.assert_allclose(phi, phi.T, atol=1e-12)
    assert (phi >= -1e-12).all() and np.allclose(np.diag(phi), 0.0, atol=1e-12)
    best, (i, j) = lik.max_distortion(P)
    assert best == pytest.approx(phi.max()) and phi[i, j] == pytest.approx(best)


@pytest.mark.parametrize("make", [
    lambda: NormalInverseWishart(2, mean=np.zeros(3), kappa=0.5, dof=5.0, scale=np.eye(3)),
    lambda: NormalInverseGamma(2, mean=np.zeros(3), kappa=0.5, shape=2.0, rate=np.ones(3)),
])
def test_merged_nodes_have_the_marginal_likelihood_of_their_points(make):
    """Lossless contraction: a partition's marginal likelihood is the same whether the
    provider sees the original points or super-nodes (sums, counts and scatter), merged
    in one step or two."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(12, 3)) * [1.0, 3.0, 0.5]
    S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (4, 5), (7, 8), (8, 11)], weight=np.inf)
    P = gc.Problem.from_array(X, S)
    R1, lift1 = gc.contract(P.with_constraints(P.constraints[:2], P.constraint_weights[:2]))
    R2, lift2 = gc.contract(R1.with_side_info(None).with_constraints(
        np.sort(lift1.mapping[P.constraints[2:]], axis=1), P.constraint_weights[2:]))
    mapping = lift2.mapping[lift1.mapping]
    labels_red = np.arange(R2.n_nodes) % 2
    original, merged = make(), make()
    original.start(P, labels_red[mapping])
    merged.start(R2, labels_red)
    np.testing.assert_allclose(merged.log_marginal(), original.log_marginal(), rtol=1e-10)
