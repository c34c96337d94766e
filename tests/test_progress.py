"""Progress bars: one per fit, and full at the end even when the run stops early."""

import re
import warnings

import pytest

import graphclust as gc


def _fit_and_read_bars(est, capsys, n_classes=3):
    X, y = gc.datasets.load_iris()
    X, y = X[y < n_classes], y[y < n_classes]
    S = gc.SideInfo.sample(y, 100, random_state=0)
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, S)
    err = capsys.readouterr().err
    finished = [line for line in err.split("\n") if line.strip()]
    return err, finished


@pytest.mark.parametrize("make, desc", [
    (lambda: gc.HMRF(gc.potentials.Centroids(3), random_state=0, progress=True), "HMRF EM (2 starts)"),
    (lambda: gc.COSC(n_clusters=3, mode="hard", random_state=0, progress=True), "COSC splits"),
    (lambda: gc.TVClust(n_iter=30, random_state=0, progress=True), None),
])
def test_one_bar_per_fit_full_at_the_end(make, desc, capsys):
    err, finished = _fit_and_read_bars(make(), capsys)
    assert len(finished) == 1, finished  # one bar left on screen
    last = finished[0].split("\r")[-1]
    if desc is not None:
        assert last.startswith(desc)
    done = re.search(r"(\d+)/(\d+)", last)
    assert done and done.group(1) == done.group(2) and "100%" in last, last


def test_entry_point_shows_one_bar_for_all_its_fits(capsys):
    """gc.cluster runs dozens of fits (the folds of the choice of k, HMRF, RDP-means,
    TVClust's folds): one bar counts them all, none of the inner estimators adds its
    own, and it ends full."""
    from graphclust.auto import _K_FOLDS, _TVCLUST_FOLDS

    err, finished = _fit_and_read_bars(gc.AutoCluster(max_clusters=4, random_state=0, progress=True), capsys)
    assert len(finished) == 1, finished
    last = finished[0].split("\r")[-1]
    assert last.startswith("gc.cluster") and "100%" in last, last
    done = re.search(r"(\d+)/(\d+)", last)
    # k = 2, 3, 4 in three folds each, HMRF, RDP-means, TVClust's folds (its fit on
    # all the constraints only if its folds win)
    fits = 3 * _K_FOLDS + 2 + _TVCLUST_FOLDS
    assert done and done.group(1) == done.group(2) and int(done.group(1)) in (fits, fits + 1), last
    quiet = gc.cluster(*gc.datasets.load_iris(), n_clusters=3, method="hmrf", random_state=0, progress=False)
    assert capsys.readouterr().err == "" and quiet.n_clusters_ == 3


def test_restarts_share_one_bar(capsys):
    err, finished = _fit_and_read_bars(gc.RDPMeans(n_clusters=3, random_state=0, progress=True), capsys)
    assert len(finished) == 1, finished
    restarts = set(re.findall(r"restart=(\d+)", err))
    assert len(restarts) > 1  # several restarts ran, all on the one bar


def test_auto_progress_is_the_default():
    for est in (gc.HMRF(gc.potentials.Centroids(3)), gc.RDPMeans(), gc.DPMeans(), gc.COSC(), gc.TVClust(),
                gc.DDMMDPM(), gc.MMDPM(), gc.DCP(), gc.AutoCluster()):
        assert est.progress == "auto", type(est).__name__


@pytest.mark.parametrize("make, n_classes", [
    (lambda: gc.HMRF(gc.potentials.Centroids(3), random_state=0), 3),
    # COSC's bars (splits for k > 2, gamma steps for k = 2) once turned "auto" into True
    (lambda: gc.COSC(n_clusters=3, mode="hard", random_state=0), 3),
    (lambda: gc.COSC(n_clusters=2, mode="hard", random_state=0), 2),
])
def test_auto_progress_is_quiet_on_quick_fits(make, n_classes, capsys):
    err, finished = _fit_and_read_bars(make(), capsys, n_classes)
    assert err == ""  # well under two seconds: nothing printed


def test_auto_progress_shows_a_full_bar_once_the_delay_has_passed(capsys, monkeypatch):
    import graphclust._utils as utils

    monkeypatch.setattr(utils, "AUTO_PROGRESS_DELAY", 0.0)  # every fit is "long" now
    err, finished = _fit_and_read_bars(gc.HMRF(gc.potentials.Centroids(3), random_state=0), capsys)
    assert len(finished) == 1 and finished[0].split("\r")[-1].startswith("HMRF EM (2 starts)"), finished
    last = finished[0].split("\r")[-1]
    done = re.search(r"(\d+)/(\d+)", last)
    assert done and done.group(1) == done.group(2), last


def test_progress_refuses_other_values():
    from graphclust.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="progress.* must be one of True, False, 'auto'"):
        gc.RDPMeans(progress="yes").fit([[0.0], [1.0], [2.0]])
