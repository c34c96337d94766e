"""``callback`` and ``progress`` on every sampler (issue #25, one result contract):
called once per sweep with node labels and the log joint of ``result_.history``;
returning True stops the run, which then summarises what it kept."""

import numpy as np
import pytest

import graphclust as gc

SAMPLERS = {
    "tvclust": lambda **kw: gc.TVClust(n_iter=12, n_chains=2, random_state=0, **kw),
    "dcp": lambda **kw: gc.DCP(n_iter=12, n_chains=2, random_state=0, **kw),
    "ddmmdpm": lambda **kw: gc.DDMMDPM(n_iter=12, n_chains=2, random_state=0, **kw),
    "mmdpm": lambda **kw: gc.MMDPM(n_iter=12, n_chains=2, random_state=0, **kw),
}


@pytest.fixture(scope="module")
def data():
    X, y = gc.datasets.make_blobs(30, n_clusters=3, random_state=1)
    # a hard must-link merges two nodes: the callback still sees one label per node
    S = gc.SideInfo([(0, 1, np.inf), (2, 3, 1.0), (4, 20, -1.0)])
    return X, S


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_called_every_sweep_without_changing_the_answer(data, name):
    X, S = data
    seen = []
    est = SAMPLERS[name](callback=lambda sweep, labels, lj: seen.append((sweep, labels, lj))).fit(X, S)
    plain = SAMPLERS[name]().fit(X, S)
    assert [s for s, _, _ in seen] == list(range(1, 25))  # 2 chains x 12 sweeps
    assert all(labels.shape == (30,) and labels[0] == labels[1] for _, labels, _ in seen)
    assert [lj for _, _, lj in seen[:12]] == est.result_.history  # chain 0's log joint
    assert np.array_equal(est.labels_, plain.labels_) and est.result_.history == plain.result_.history
    assert np.array_equal(est.samples_, plain.samples_)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
@pytest.mark.parametrize("stop_at", [3, 9])
def test_true_stops_the_run(data, name, stop_at):
    """Stopped in the burn-in (sweep 3 of 12, burn-in 6): the current state is the one
    sample; stopped at sweep 9: the 3 samples kept by then."""
    X, S = data
    calls = []

    def stop(sweep, labels, lj):
        calls.append(sweep)
        return sweep == stop_at

    est = SAMPLERS[name](callback=stop).fit(X, S)
    assert calls == list(range(1, stop_at + 1))
    assert len(est.result_.history) == stop_at
    assert len(est.samples_) == (1 if stop_at <= 6 else stop_at - 6)
    assert est.labels_.shape == (30,) and est.labels_[0] == est.labels_[1]
    assert np.isclose(est.n_clusters_posterior_.sum(), 1.0)


def test_the_trial_fits_of_auto_choices_do_not_call_it():
    """DCP's tau="auto" cross-validates with short fits; only the final run reports."""
    X, y = gc.datasets.make_blobs(40, n_clusters=2, random_state=2)
    S = gc.SideInfo.sample(y, 80, random_state=2)
    sweeps = []
    gc.DCP(n_iter=6, random_state=0, callback=lambda s, labels, lj: sweeps.append(s)).fit(X, S)
    assert sweeps == list(range(1, 13))  # the final run's two chains of 6 sweeps, nothing of the trial fits
