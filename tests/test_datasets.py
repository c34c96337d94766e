"""Tests for graphclust.datasets: shipped tables against scikit-learn's copies, generators."""

from importlib import resources
import sys

import numpy as np
import pytest
import sklearn.datasets as skdata

from graphclust import datasets
from graphclust.datasets import (
    SAMPLE_IMAGES,
    load_balance_scale,
    load_breast_cancer,
    load_digits,
    load_ecoli,
    load_glass,
    load_horse,
    load_iris,
    load_sample_image,
    load_wine,
    make_blobs,
    make_label_image,
    make_moons,
)
from graphclust.errors import InvalidParameterError, MissingDependencyError


# ---------------------------------------------------------------------- shipped tables
#: loader, shape, class sizes; the first four are scikit-learn's tables, the other three
#: the rest of the TVClust / RDP-means paper's protocol (checked below against what UCI
#: documents about them)
TABLES = [
    (load_iris, (150, 4), [50, 50, 50]),
    (load_wine, (178, 13), [59, 71, 48]),
    (load_breast_cancer, (569, 30), [212, 357]),
    (load_digits, (1797, 64), [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]),
    (load_ecoli, (336, 7), [143, 77, 52, 35, 20, 5, 2, 2]),
    (load_glass, (214, 9), [70, 76, 17, 13, 9, 29]),
    (load_balance_scale, (625, 4), [288, 49, 288]),
]
SKLEARN_TWINS = [
    (load_iris, skdata.load_iris),
    (load_wine, skdata.load_wine),
    (load_breast_cancer, skdata.load_breast_cancer),
    (load_digits, skdata.load_digits),
]


def _name(x):
    return getattr(x, "__name__", None)


@pytest.mark.parametrize("ours, shape, counts", TABLES, ids=_name)
def test_shape_dtype_counts(ours, shape, counts):
    X, y = ours()
    assert X.shape == shape and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (shape[0],) and y.dtype == np.int64
    assert np.bincount(y).tolist() == counts
    assert np.isfinite(X).all()


@pytest.mark.parametrize("ours, theirs", SKLEARN_TWINS, ids=_name)
def test_identical_to_sklearn(ours, theirs):
    """The shipped CSV reproduces scikit-learn's bundled copy bit for bit."""
    X, y = ours()
    ref = theirs()
    np.testing.assert_array_equal(X, ref.data)
    np.testing.assert_array_equal(y, ref.target)


@pytest.mark.parametrize("ours", [t[0] for t in TABLES], ids=_name)
def test_fresh_arrays(ours):
    """Each call returns new arrays: editing one result does not leak into the next."""
    X, _ = ours()
    X[0, 0] = -999.0
    assert ours()[0][0, 0] != -999.0


def test_ecoli_values():
    """Seven scores in [0, 1] with two decimals; the two near-binary ones mark lipoproteins."""
    X, y = load_ecoli()
    assert X.min() >= 0.0 and X.max() <= 1.0
    assert np.abs(X * 100 - np.round(X * 100)).max() < 1e-9
    assert set(X[:, 2]) == {0.48, 1.0} and set(X[:, 3]) == {0.5, 1.0}
    # lip (signal peptidase II score) is 1.00 on every lipoprotein: omL (5) and imL (6)
    assert (X[np.isin(y, [5, 6]), 2] == 1.0).all() and (X[y == 7, 2] == 0.48).all()
    assert len({tuple(r) for r in X}) == 336  # no duplicate rows


def test_glass_values():
    """UCI rows 1 and 214, and oxide percentages that add up to about 100."""
    X, y = load_glass()
    assert X[0].tolist() == [1.52101, 13.64, 4.49, 1.1, 71.78, 0.06, 8.75, 0.0, 0.0]
    assert X[-1].tolist() == [1.51711, 14.23, 0.0, 2.08, 73.36, 0.0, 8.62, 1.67, 0.0]
    assert y[0] == 0 and y[-1] == 5 and (np.diff(y) >= 0).all()  # UCI rows are sorted by type
    np.testing.assert_allclose(X[:, 1:].sum(axis=1), 100.0, atol=1.0)


def test_balance_scale_is_the_torque_rule():
    """Every setting once, labelled by comparing weight x distance, independently of the loader."""
    X, y = load_balance_scale()
    assert len({tuple(r) for r in X}) == 625 and set(np.unique(X)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert X[0].tolist() == [1.0] * 4 and X[-1].tolist() == [5.0] * 4
    assert all(tuple(a) < tuple(b) for a, b in zip(X[:-1], X[1:]))  # lexicographic, as UCI
    for (lw, ld, rw, rd), label in zip(X, y):
        left, right = lw * ld, rw * rd
        assert label == (0 if left > right else 1 if left == right else 2)


def test_package_data_files_and_size():
    """The data files are where package-data picks them up, with their licence note, < 300 kB."""
    data = resources.files("graphclust") / "data"
    names = {p.name for p in data.iterdir()}
    assert {"ecoli.csv", "glass.csv", "README.md"} <= names
    # what scikit-learn ships is read from scikit-learn, not shipped again
    assert not names & {"iris.csv", "wine.csv", "breast_cancer.csv.gz", "digits.csv.gz"}
    total = sum(len((data / n).read_bytes()) for n in names if not n.startswith("__"))
    assert total < 300_000
    readme = (data / "README.md").read_text()
    assert "CC BY 4.0" in readme and "10.24432/C56C76" in readme


# ---------------------------------------------------------------------- scikit-image
class TestImages:
    def test_horse_mask(self):
        """True on the horse: the inverse of scikit-image's black-on-white silhouette."""
        skimage_data = pytest.importorskip("skimage.data")
        mask = load_horse()
        assert mask.shape == (328, 400) and mask.dtype == bool
        np.testing.assert_array_equal(mask, ~skimage_data.horse())
        assert 0.2 < mask.mean() < 0.5  # the horse is the smaller part
        assert not mask[0].any() and not mask[:, 0].any()  # border is background

    @pytest.mark.parametrize("name", ["camera", "astronaut", "coins"])
    def test_sample_image(self, name):
        skimage_data = pytest.importorskip("skimage.data")
        np.testing.assert_array_equal(load_sample_image(name), getattr(skimage_data, name)())

    def test_every_listed_image_exists(self):
        skimage_data = pytest.importorskip("skimage.data")
        assert all(callable(getattr(skimage_data, name, None)) for name in SAMPLE_IMAGES)

    def test_unknown_image(self):
        with pytest.raises(InvalidParameterError, match="unknown sample image 'lena'; choose one of: .*camera"):
            load_sample_image("lena")

    @pytest.mark.parametrize("call", [load_horse, lambda: load_sample_image("camera")])
    def test_missing_scikit_image(self, monkeypatch, call):
        """Without scikit-image the loaders say which extra to install."""
        for mod in [m for m in sys.modules if m == "skimage" or m.startswith("skimage.")]:
            monkeypatch.delitem(sys.modules, mod)
        monkeypatch.setitem(sys.modules, "skimage", None)
        monkeypatch.setitem(sys.modules, "skimage.data", None)
        with pytest.raises(MissingDependencyError, match=r"needs the optional dependency skimage: pip install 'graphclust\[image\]'"):
            call()


# ---------------------------------------------------------------------- make_blobs
class TestBlobs:
    def test_shapes_and_sizes(self):
        X, y = make_blobs(10, n_clusters=3, n_features=5, random_state=0)
        assert X.shape == (10, 5) and X.dtype == np.float64 and y.dtype == np.int64
        assert np.bincount(y).tolist() == [4, 3, 3]
        X, y = make_blobs([5, 1, 2], random_state=0)
        assert np.bincount(y).tolist() == [5, 1, 2]

    def test_deterministic(self):
        a = make_blobs(50, 4, 3, random_state=7)
        b = make_blobs(50, 4, 3, random_state=7)
        c = make_blobs(50, 4, 3, random_state=8)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert not np.array_equal(a[0], c[0])

    def test_generator_is_threaded(self):
        """A Generator is consumed, so two calls with it differ."""
        rng = np.random.default_rng(0)
        assert not np.array_equal(make_blobs(20, random_state=rng)[0], make_blobs(20, random_state=rng)[0])

    @pytest.mark.parametrize("k, d, sep", [(2, 1, 3.0), (5, 3, 4.0), (8, 10, 1.5)])
    def test_closest_centres_at_separation(self, k, d, sep):
        _, _, C = make_blobs(4 * k, k, d, cluster_std=[0.5] * (k - 1) + [2.0], separation=sep,
                             return_centers=True, random_state=k)
        dist = np.linalg.norm(C[:, None] - C[None], axis=-1)[np.triu_indices(k, 1)]
        assert dist.min() == pytest.approx(sep * 2.0)

    def test_cluster_spread(self):
        """Points scatter around their centre with the requested deviation."""
        X, y, C = make_blobs([4000, 4000], cluster_std=[0.5, 2.0], return_centers=True, random_state=1)
        for k, s in enumerate([0.5, 2.0]):
            np.testing.assert_allclose(X[y == k].mean(axis=0), C[k], atol=0.1 * s)
            np.testing.assert_allclose(X[y == k].std(axis=0), s, rtol=0.05)

    def test_unshuffled_blocks(self):
        _, y = make_blobs(7, 2, shuffle=False, random_state=0)
        assert y.tolist() == [0, 0, 0, 0, 1, 1, 1]

    def test_errors(self):
        with pytest.raises(InvalidParameterError, match="n_clusters=2 but n_samples lists 3 cluster sizes"):
            make_blobs([1, 2, 3], n_clusters=2)
        with pytest.raises(InvalidParameterError, match="n_samples must be >= 4, got 3"):
            make_blobs(3, n_clusters=4)
        with pytest.raises(InvalidParameterError, match="cluster_std has 2 values for 3 clusters"):
            make_blobs(9, cluster_std=[1.0, 2.0])
        with pytest.raises(InvalidParameterError, match=r"cluster_std\[1\] is -1.0"):
            make_blobs(9, cluster_std=[1.0, -1.0, 1.0])
        with pytest.raises(InvalidParameterError, match=r"n_samples\[1\] must be >= 1, got 0"):
            make_blobs([3, 0])
        with pytest.raises(InvalidParameterError, match="separation must be >= 0"):
            make_blobs(9, separation=-1)


# ---------------------------------------------------------------------- make_moons
class TestMoons:
    def test_on_the_circles_without_noise(self):
        X, y = make_moons(101, noise=0.0, random_state=0)
        assert X.shape == (101, 2) and np.bincount(y).tolist() == [51, 50]
        up, low = X[y == 0], X[y == 1]
        np.testing.assert_allclose(np.linalg.norm(up, axis=1), 1.0)
        np.testing.assert_allclose(np.linalg.norm(low - [1.0, 0.5], axis=1), 1.0)
        assert (up[:, 1] >= -1e-12).all() and (low[:, 1] <= 0.5 + 1e-12).all()

    def test_noise_level(self):
        X0, y0 = make_moons(4000, noise=0.0, shuffle=False)
        X, y = make_moons(4000, noise=0.2, shuffle=False, random_state=3)
        assert (y == y0).all()
        np.testing.assert_allclose((X - X0).std(axis=0), 0.2, rtol=0.05)

    def test_deterministic_and_sizes(self):
        a, b = make_moons((3, 7), random_state=5), make_moons((3, 7), random_state=5)
        np.testing.assert_array_equal(a[0], b[0])
        assert np.bincount(a[1]).tolist() == [3, 7]

    def test_errors(self):
        with pytest.raises(InvalidParameterError, match="n_samples must be >= 2, got 1"):
            make_moons(1)
        with pytest.raises(InvalidParameterError, match="noise must be >= 0"):
            make_moons(10, noise=-0.1)
        with pytest.raises(InvalidParameterError, match="pair of moon sizes, got 'ab c'"):
            make_moons("ab c")


# ---------------------------------------------------------------------- make_label_image
class TestLabelImage:
    def test_shapes_dtypes_labels(self):
        image, labels = make_label_image((40, 50), n_labels=4, random_state=0)
        assert image.shape == labels.shape == (40, 50)
        assert image.dtype == np.float64 and labels.dtype == np.int64
        assert set(np.unique(labels)) == {0, 1, 2, 3}

    @pytest.mark.parametrize("noise", [0.1, 0.3, 1.0])
    def test_noise_level(self, noise):
        """The residual around the label intensities has the requested deviation."""
        image, labels = make_label_image((64, 64), n_labels=3, noise=noise, random_state=1)
        residual = image - labels / 2.0
        assert abs(residual.mean()) < 0.05 * noise
        assert residual.std() == pytest.approx(noise, rel=0.05)

    def test_piecewise_constant_regions(self):
        """Regions are blobs: far fewer label changes between neighbours than a random map."""
        _, labels = make_label_image((64, 64), n_labels=3, noise=0.0, random_state=2)
        changes = (labels[1:] != labels[:-1]).mean()
        assert changes < 0.15  # a random 3-label map changes on about 2/3 of the pairs

    def test_smoothness_controls_region_size(self):
        def boundary(s):
            _, lab = make_label_image((64, 64), n_labels=3, smoothness=s, random_state=3)
            return (lab[:, 1:] != lab[:, :-1]).mean()

        assert boundary(8.0) < boundary(2.0) < boundary(0.5)

    def test_deterministic(self):
        a = make_label_image((20, 20), random_state=4)
        b = make_label_image((20, 20), random_state=4)
        c = make_label_image((20, 20), random_state=5)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert not np.array_equal(a[0], c[0])

    def test_volume_and_square(self):
        image, labels = make_label_image((8, 9, 10), n_labels=2, random_state=0)
        assert image.shape == labels.shape == (8, 9, 10)
        assert make_label_image(12, random_state=0)[0].shape == (12, 12)

    def test_one_label(self):
        image, labels = make_label_image((5, 5), n_labels=1, noise=0.0, random_state=0)
        assert (labels == 0).all() and (image == 0).all()

    def test_errors(self):
        with pytest.raises(InvalidParameterError, match="n_labels must be <= 4, got 5"):
            make_label_image((2, 2), n_labels=5)
        with pytest.raises(InvalidParameterError, match="noise must be >= 0"):
            make_label_image(noise=-1.0)
        with pytest.raises(InvalidParameterError, match="smoothness must be >= 0"):
            make_label_image(smoothness=-2.0)
        with pytest.raises(InvalidParameterError, match=r"shape\[1\] must be >= 1, got 0"):
            make_label_image((4, 0))
        with pytest.raises(InvalidParameterError, match="at least 2 dimensions"):
            make_label_image((16,))
        with pytest.raises(InvalidParameterError, match="lower the smoothness"):
            make_label_image((2, 2), n_labels=4, smoothness=100.0, random_state=0)


def test_public_names():
    """__all__ lists exactly the public callables and constants of the module."""
    public = {n for n in vars(datasets) if not n.startswith("_") and (n.startswith(("load_", "make_")) or n.isupper())}
    assert public == set(datasets.__all__)


@pytest.mark.parametrize("name, digest", [
    ("iris", "aa06b8008ceba42e"), ("wine", "3a28849ef2366c4b"),
    ("breast_cancer", "25e2eb7b7a8745b1"), ("digits", "f6d9e39f37dc45d3"),
])
def test_loaders_read_from_scikit_learn_give_the_tables_shipped_before(name, digest):
    """The same bytes as the copies graphclust shipped until it read scikit-learn's."""
    import hashlib

    X, y = getattr(datasets, f"load_{name}")()
    assert X.dtype == np.float64 and y.dtype == np.int64 and X.flags["C_CONTIGUOUS"]
    assert hashlib.sha256(X.tobytes() + y.tobytes()).hexdigest()[:16] == digest


@pytest.mark.parametrize("name, shape", [("coffee", (400, 600)), ("astronaut", (512, 512))])
def test_scribble_scenes_agree_with_their_masks(name, shape):
    pytest.importorskip("skimage")
    image, scribbles, mask = datasets.load_scribble_scene(name)
    assert image.shape == shape + (3,) and scribbles.shape == mask.shape == shape
    assert sorted(np.unique(scribbles).tolist()) == [0, 1, 2]
    # no stroke crosses the reference boundary
    assert mask[scribbles == 2].all() and not mask[scribbles == 1].any()
    assert 0.2 < mask.mean() < 0.6


def test_an_unknown_scribble_scene_is_named():
    with pytest.raises(InvalidParameterError, match="name must be 'coffee' or 'astronaut', got 'horse'"):
        datasets.load_scribble_scene("horse")
