"""graphclust._params: the declarative parameter constraints every estimator uses."""

import numpy as np
import pytest

import graphclust as gc
from graphclust._params import (
    AnyOf,
    Boolean,
    Callable,
    InstanceOf,
    Integer,
    Optional,
    Options,
    Parametrized,
    RandomState,
    Real,
    validate_parameters,
)
from graphclust.errors import InvalidParameterError


@pytest.mark.parametrize("constraint, good, bad, match", [
    (Integer(low=1), [1, np.int64(7)], [0, 1.5, True, "3"], "n must be"),
    (Real(low=0.0, low_open=True), [1e-9, 3], [0.0, -1, float("nan"), float("inf"), "x"], "n must be"),
    (Real(allow_inf=True), [float("inf"), -2.0], [float("nan")], "n must be finite"),
    (Options("a", True), ["a", True, np.True_], ["b", 1, False], "n must be one of 'a', True"),
    (Boolean(), [True, np.False_], [1, "yes", None], "n must be True or False"),
    (Callable(), [print, None], [3], "n must be callable or None"),
    (RandomState(), [None, 0, np.random.default_rng(1)], [-1, 1.5, "seed", True], "n"),
    (InstanceOf(dict, "a dict"), [{}], [[]], "n must be a dict, got list"),
    (Optional(Integer(low=0)), [None, 0], [-1], "n must be >= 0"),
])
def test_each_constraint_accepts_and_refuses(constraint, good, bad, match):
    for value in good:
        constraint.check(value, "n")
    for value in bad:
        with pytest.raises(InvalidParameterError, match=match):
            constraint.check(value, "n")


def test_any_of_reports_the_numeric_error_for_numbers_and_the_message_otherwise():
    c = AnyOf(Options("auto"), None, Real(low=0.0, low_open=True), message="{name} must be 'auto' or > 0, got {value!r}")
    for value in ("auto", None, 2.0):
        c.check(value, "x")
    with pytest.raises(InvalidParameterError, match="x must be > 0.0, got 0.0"):
        c.check(0.0, "x")
    with pytest.raises(InvalidParameterError, match="x must be 'auto' or > 0, got 'never'"):
        c.check("never", "x")


class _Toy(Parametrized):
    _parameter_constraints = {"k": Integer(low=2), "mode": Options("a", "b"), "gamma": Optional(Real())}

    def __init__(self, k=2, *, mode="a", gamma=None):
        self.k = k
        self.mode = mode
        self.gamma = gamma

    def _check_params(self):
        if self.mode == "b" and self.gamma is None:
            raise InvalidParameterError("gamma of _Toy is required with mode='b'")


class _Child(_Toy):
    _parameter_constraints = {**_Toy._parameter_constraints, "k": Integer(low=3)}


def test_parametrized_reflection_validation_and_subclass_extension():
    t = _Toy(3, gamma=0.5)
    assert t.get_params() == {"k": 3, "mode": "a", "gamma": 0.5}
    assert repr(t) == "_Toy(k=3, gamma=0.5)"
    c = t.clone(mode="b")
    assert c is not t and c.get_params() == {"k": 3, "mode": "b", "gamma": 0.5} and t.mode == "a"
    with pytest.raises(InvalidParameterError, match="_Toy has no parameter 'K'"):
        t.set_params(K=1)
    with pytest.raises(InvalidParameterError, match="k of _Toy must be >= 2, got 1"):
        _Toy(1)._validate_params()
    with pytest.raises(InvalidParameterError, match="gamma of _Toy is required"):
        _Toy(mode="b")._validate_params()
    _Toy(2)._validate_params()
    with pytest.raises(InvalidParameterError, match="k of _Child must be >= 3, got 2"):
        _Child(2)._validate_params()
    with pytest.raises(InvalidParameterError, match="mode of _Toy must be one of 'a', 'b', got 'c'"):
        validate_parameters(_Toy(mode="c"))


@pytest.mark.parametrize("est", [gc.RDPMeans(), gc.DPMeans(), gc.COSC(), gc.SpectralClustering(), gc.HMRF(),
                                 gc.TVClust(), gc.DCP(), gc.DDMMDPM(), gc.MMDPM()])
def test_estimators_declare_every_parameter(est):
    """Each converted estimator's table covers its whole signature (nothing unchecked)."""
    assert set(type(est)._parameter_constraints) == set(est.get_params())


def test_parameters_are_checked_when_fit_starts_not_in_init():
    est = gc.COSC(mode="soft")  # gamma missing: a cross-parameter rule
    X = np.array([[0.0], [1.0], [5.0], [6.0]])
    with pytest.raises(InvalidParameterError, match="gamma of COSC is required in mode='soft'"):
        est.fit(gc.knn_graph(X, n_neighbors=2))


@pytest.mark.parametrize("provider", [gc.potentials.Centroids(3, distortion="mahalanobis", metric="full"),
                                      gc.DPCentroids(4, lam=2.0, divergence="kl"),
                                      gc.potentials.DiagonalGaussian(5, shrinkage=3.0),
                                      gc.potentials.NormalInverseWishart(3, mean=[0.0, 1.0], kappa=0.5, dof=4.0,
                                                                         scale=np.eye(2)),
                                      gc.potentials.NormalInverseGamma(4, shape=2.0, rate=0.5),
                                      gc.potentials.DirichletMultinomial(2, concentration=[1.0, 2.0]),
                                      gc.DCPKernel(3, tau=2.0, lengthscale=[1.0, 0.5], kernel="se"),
                                      gc.ddmmdpm.DDMMDPMPotentials(4, similarity="sum", gamma=0.7, pa_epochs=2)])
def test_providers_init_only_stores_and_reflection_round_trips(provider):
    params = provider.get_params()
    twin = provider.clone()
    assert twin is not provider and twin.get_params() == params and repr(twin) == repr(provider)
    assert set(vars(type(provider)(**params))) <= set(params) | {"n_clusters_param"}  # nothing but parameters


@pytest.mark.parametrize("provider, match", [
    (gc.potentials.NormalInverseWishart(0), "n_clusters of NormalInverseWishart must be >= 1, got 0"),
    (gc.potentials.NormalInverseGamma(shape=-1.0), "shape of NormalInverseGamma must be > 0"),
    (gc.potentials.DirichletMultinomial(concentration="flat"), "concentration of DirichletMultinomial"),
    (gc.DCPKernel(tau=0.0), "tau of DCPKernel must be > 0"),
    (gc.DCPKernel(kernel="rbf"), "kernel of DCPKernel must be one of"),
    (gc.ddmmdpm.DDMMDPMPotentials(removal_shrink=1.0), r"removal_shrink of DDMMDPMPotentials must be in \[0, 1\)"),
    (gc.ddmmdpm.DDMMDPMPotentials(similarity="min"), "similarity of DDMMDPMPotentials must be one of"),
])
def test_sampler_providers_check_parameters_at_first_use(provider, match):
    """Construction stores a bad value; the provider's first use (start) and HMRF.fit refuse it."""
    X = np.array([[0.0, 1.0], [0.2, 1.0], [4.0, 3.0], [4.1, 3.2]])
    with pytest.raises(InvalidParameterError, match=match):
        provider.start(gc.Problem.from_array(X), np.array([0, 0, 1, 1]))
    with pytest.raises(InvalidParameterError, match=match):
        gc.HMRF(provider, inference="icm", penalty="constant", random_state=0).fit(X)
