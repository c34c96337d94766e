"""Small data sets and synthetic generators for examples, tests and benchmarks.

* Classic UCI tables (no download): :func:`load_iris`, :func:`load_wine`,
  :func:`load_breast_cancer` and :func:`load_digits` from scikit-learn's bundled copies,
  and the other three sets of the TVClust / RDP-means paper's protocol, which
  scikit-learn lacks and graphclust ships: :func:`load_ecoli`, :func:`load_glass` and
  :func:`load_balance_scale`.
  Each returns ``(X, y)``: float64 features and int64 classes. Attribution is in
  ``graphclust/data/README.md``.
* Images from scikit-image (the ``image`` extra): :func:`load_horse` (a silhouette with
  a true foreground mask) and :func:`load_sample_image`.
* Seeded generators: :func:`make_blobs` and :func:`make_moons` for points,
  :func:`make_label_image` for a noisy piecewise-constant image with its true labels
  (ground truth for segmentation).
"""

from importlib import resources
import numbers

import numpy as np
from scipy import ndimage

from ._utils import check_float, check_int, check_random_state, optional_import
from .errors import InvalidParameterError

__all__ = [
    "load_iris",
    "load_wine",
    "load_breast_cancer",
    "load_digits",
    "load_ecoli",
    "load_glass",
    "load_balance_scale",
    "load_demo",
    "load_horse",
    "load_scribble_scene",
    "load_sample_image",
    "make_blobs",
    "make_moons",
    "make_label_image",
    "SAMPLE_IMAGES",
]


# ---------------------------------------------------------------------- shipped tables
def load_demo():
    """The problem ``graphclust demo`` runs on: iris as a 10-NN graph with 40 constraints.

    Returns
    -------
    G : networkx.Graph
        150 nodes ``0..149`` with ``features`` and the species as ``truth``.
    S : SideInfo
        40 pairs sampled from the species (no noise).
    y : ndarray of shape (150,)
        The species, in ``G.nodes`` order.
    n_clusters : int
        3.

    Examples
    --------
    >>> G, S, y, k = load_demo()
    >>> G.number_of_nodes(), len(S), k
    (150, 40, 3)
    """
    from .io import read_graphml

    with resources.as_file(resources.files(__package__) / "data" / "demo_iris.graphml") as path:
        G, S = read_graphml(path)
    y = np.array([G.nodes[u]["truth"] for u in G.nodes], dtype=np.int64)
    return G, S, y, int(len(np.unique(y)))


def _from_sklearn(name):
    """scikit-learn's bundled copy of a classic table, as float64 features and int64 classes."""
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    return np.ascontiguousarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)


def _load_table(filename):
    """Read ``graphclust/data/<filename>``: a header line, then features and a class column."""
    with resources.as_file(resources.files(__package__) / "data" / filename) as path:
        table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    X = np.ascontiguousarray(table[:, :-1])
    y = table[:, -1].astype(np.int64)
    return X, y


def load_iris():
    """Fisher's iris data: 150 flowers, 4 measurements (cm), 3 species of 50.

    Returns
    -------
    X : ndarray of shape (150, 4), dtype float64
        Sepal length, sepal width, petal length, petal width.
    y : ndarray of shape (150,), dtype int64
        0 = setosa, 1 = versicolor, 2 = virginica, in blocks of 50.

    Notes
    -----
    The copy distributed with scikit-learn, which corrects samples 35 and 38 of the
    UCI file to agree with Fisher's paper. UCI Machine Learning Repository, CC BY 4.0,
    doi:10.24432/C56C76.

    Examples
    --------
    >>> from graphclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> X.shape, X[0].tolist(), y[[0, 50, 100]].tolist()
    ((150, 4), [5.1, 3.5, 1.4, 0.2], [0, 1, 2])
    """
    return _from_sklearn("iris")


def load_wine():
    """Wine recognition data: 178 wines, 13 chemical measurements, 3 cultivars.

    Returns
    -------
    X : ndarray of shape (178, 13), dtype float64
        Alcohol, malic acid, ash, alcalinity of ash, magnesium, total phenols,
        flavanoids, nonflavanoid phenols, proanthocyanins, colour intensity, hue,
        OD280/OD315 of diluted wines, proline (on very different scales: standardise
        before clustering).
    y : ndarray of shape (178,), dtype int64
        Cultivar 0, 1 or 2 (59, 71 and 48 wines).

    Notes
    -----
    UCI Machine Learning Repository, CC BY 4.0, doi:10.24432/C5PC7J.

    Examples
    --------
    >>> from graphclust.datasets import load_wine
    >>> X, y = load_wine()
    >>> X.shape, [int((y == k).sum()) for k in range(3)]
    ((178, 13), [59, 71, 48])
    """
    return _from_sklearn("wine")


def load_breast_cancer():
    """Breast Cancer Wisconsin (Diagnostic), WDBC: 569 tumours, 30 features, 2 classes.

    Returns
    -------
    X : ndarray of shape (569, 30), dtype float64
        Mean, standard error and worst value of ten nucleus measurements (radius,
        texture, perimeter, area, smoothness, compactness, concavity, concave points,
        symmetry, fractal dimension).
    y : ndarray of shape (569,), dtype int64
        0 = malignant (212), 1 = benign (357), as in scikit-learn.

    Notes
    -----
    UCI Machine Learning Repository, CC BY 4.0, doi:10.24432/C5DW2B. Shipped
    gzip-compressed.

    Examples
    --------
    >>> from graphclust.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer()
    >>> X.shape, int((y == 0).sum()), int((y == 1).sum())
    ((569, 30), 212, 357)
    """
    return _from_sklearn("breast_cancer")


def load_digits():
    """Handwritten digits: 1797 images of 8x8 pixels with grey levels 0-16, 10 classes.

    Returns
    -------
    X : ndarray of shape (1797, 64), dtype float64
        Pixel values in row-major order (``X[i].reshape(8, 8)`` is the image).
    y : ndarray of shape (1797,), dtype int64
        The digit, 0 to 9 (174 to 183 images each).

    Notes
    -----
    The test part of the UCI "Optical Recognition of Handwritten Digits" data, as
    distributed with scikit-learn. UCI Machine Learning Repository, CC BY 4.0,
    doi:10.24432/C50P49. Shipped gzip-compressed.

    Examples
    --------
    >>> from graphclust.datasets import load_digits
    >>> X, y = load_digits()
    >>> X.shape, int(X.max()), y[:10].tolist()
    ((1797, 64), 16, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    """
    return _from_sklearn("digits")


def load_ecoli():
    """Protein localisation sites in E. coli: 336 proteins, 7 scores, 8 sites.

    Returns
    -------
    X : ndarray of shape (336, 7), dtype float64
        mcg, gvh, lip, chg, aac, alm1, alm2: scores in [0, 1] computed from the amino
        acid sequence (``lip`` and ``chg`` are nearly binary).
    y : ndarray of shape (336,), dtype int64
        0 = cp (143), 1 = im (77), 2 = pp (52), 3 = imU (35), 4 = om (20),
        5 = omL (5), 6 = imL (2), 7 = imS (2); rows grouped by class.

    Notes
    -----
    Nakai, K. (1996), UCI Machine Learning Repository, CC BY 4.0,
    doi:10.24432/C5388M. The values are the UCI file's; the row order within a class
    is not (``tools/make_uci_tables.py`` says how the table was rebuilt).

    Examples
    --------
    >>> from graphclust.datasets import load_ecoli
    >>> X, y = load_ecoli()
    >>> X.shape, [int((y == k).sum()) for k in range(8)]
    ((336, 7), [143, 77, 52, 35, 20, 5, 2, 2])
    """
    return _load_table("ecoli.csv")


def load_glass():
    """Glass identification: 214 glass fragments, 9 measurements, 6 types.

    Returns
    -------
    X : ndarray of shape (214, 9), dtype float64
        Refractive index, then the weight percent of the oxides of Na, Mg, Al, Si, K,
        Ca, Ba and Fe.
    y : ndarray of shape (214,), dtype int64
        The UCI glass type 1, 2, 3, 5, 6, 7 as 0 to 5 (70, 76, 17, 13, 9 and 29
        fragments; type 4 has none), in the UCI row order.

    Notes
    -----
    German, B. (1987), UCI Machine Learning Repository, CC BY 4.0,
    doi:10.24432/C5WW2P. The UCI file's first column, a record number that runs
    through the rows sorted by type, is left out: kept as a feature, it gives the
    classes away.

    Examples
    --------
    >>> from graphclust.datasets import load_glass
    >>> X, y = load_glass()
    >>> X.shape, X[0].tolist()[:3], [int((y == k).sum()) for k in range(6)]
    ((214, 9), [1.52101, 13.64, 4.49], [70, 76, 17, 13, 9, 29])
    """
    return _load_table("glass.csv")


def load_balance_scale():
    """Balance scale: the 625 settings of a two-armed scale, 4 features, 3 outcomes.

    Each arm carries a weight 1-5 at a distance 1-5; the scale tips to the side with
    the larger weight x distance, or balances. The UCI table is exactly the 5^4
    settings, so it is generated here rather than shipped.

    Returns
    -------
    X : ndarray of shape (625, 4), dtype float64
        Left weight, left distance, right weight, right distance, in the UCI row
        order (lexicographic).
    y : ndarray of shape (625,), dtype int64
        0 = tips left (288), 1 = balanced (49), 2 = tips right (288).

    Notes
    -----
    Siegler, R. S. (1994), UCI Machine Learning Repository, CC BY 4.0,
    doi:10.24432/C5488X.

    Examples
    --------
    >>> from graphclust.datasets import load_balance_scale
    >>> X, y = load_balance_scale()
    >>> X.shape, X[1].tolist(), [int((y == k).sum()) for k in range(3)]
    ((625, 4), [1.0, 1.0, 1.0, 2.0], [288, 49, 288])
    """
    X = np.array(list(np.ndindex(5, 5, 5, 5)), dtype=np.float64) + 1.0
    torque = X[:, 0] * X[:, 1] - X[:, 2] * X[:, 3]
    y = np.where(torque > 0, 0, np.where(torque == 0, 1, 2)).astype(np.int64)
    return X, y


# ---------------------------------------------------------------------- scikit-image
#: Names accepted by :func:`load_sample_image`: images bundled with scikit-image
#: (no download needed).
SAMPLE_IMAGES = (
    "astronaut", "brick", "camera", "cat", "cell", "checkerboard", "chelsea", "clock",
    "coffee", "coins", "colorwheel", "grass", "gravel", "horse", "hubble_deep_field",
    "immunohistochemistry", "logo", "microaneurysms", "moon", "page", "retina", "rocket",
    "text",
)


def load_scribble_scene(name):
    """A scikit-image picture with scribbles and a reference mask, for segmentation.

    ``"coffee"`` (400 x 600: the cup, saucer and spoon against the table) and
    ``"astronaut"`` (512 x 512: the person against flag, wall, shuttle model and helmet).
    The scribbles are a few straight strokes 3 pixels wide; the masks were drawn from
    shapes placed by eye and checked on overlays (``tools/make_scribble_scenes.py``
    writes both and says how; boundaries are followed to about 2-6 pixels).

    Parameters
    ----------
    name : {"coffee", "astronaut"}

    Returns
    -------
    image : ndarray of shape (rows, cols, 3), uint8
    scribbles : ndarray of shape (rows, cols), int64
        0 none, 1 background, 2 foreground.
    mask : ndarray of shape (rows, cols), bool
        The reference foreground.

    Examples
    --------
    >>> from graphclust.datasets import load_scribble_scene
    >>> image, scribbles, mask = load_scribble_scene("coffee")
    >>> image.shape, sorted(set(scribbles.ravel().tolist())), round(float(mask.mean()), 2)
    ((400, 600, 3), [0, 1, 2], 0.47)
    """
    if name not in ("coffee", "astronaut"):
        raise InvalidParameterError(f"name must be 'coffee' or 'astronaut', got {name!r}")
    skdata = optional_import("skimage.data", "image", "load_scribble_scene()")
    from PIL import Image  # installed with scikit-image

    image = np.asarray(getattr(skdata, name)())
    data = resources.files(__package__) / "data"
    with resources.as_file(data / f"{name}_scribbles.png") as path, Image.open(path) as f:
        scribbles = np.asarray(f).astype(np.int64)
    with resources.as_file(data / f"{name}_mask.png") as path, Image.open(path) as f:
        mask = np.asarray(f) > 0
    return image, scribbles, mask


def load_horse():
    """The scikit-image horse silhouette as a foreground mask.

    A binary ground truth for segmentation: add noise to it (or use it to build
    scribbles) and compare the segmentation with the mask.

    Returns
    -------
    mask : ndarray of shape (328, 400), dtype bool
        ``True`` on the horse, ``False`` on the background (scikit-image's image is
        the opposite: a black horse on white).

    Raises
    ------
    MissingDependencyError
        scikit-image is not installed (``pip install 'graphclust[image]'``).

    Examples
    --------
    >>> from graphclust.datasets import load_horse
    >>> mask = load_horse()
    >>> mask.shape, mask.dtype, bool(mask[0, 0]), bool(mask[160, 200])
    ((328, 400), dtype('bool'), False, True)
    """
    skdata = optional_import("skimage.data", "image", "load_horse()")
    return ~np.asarray(skdata.horse(), dtype=bool)


def load_sample_image(name):
    """An image bundled with scikit-image, by name.

    Parameters
    ----------
    name : str
        One of :data:`SAMPLE_IMAGES` (for example ``"camera"``, ``"coins"``,
        ``"astronaut"``); the names of the functions in ``skimage.data``.

    Returns
    -------
    image : ndarray
        As scikit-image returns it: ``(M, N)`` grey or ``(M, N, 3|4)`` colour, mostly
        uint8 (``"horse"`` is a boolean image with the horse ``False``).

    Raises
    ------
    InvalidParameterError
        Unknown name (the message lists the valid ones).
    MissingDependencyError
        scikit-image is not installed (``pip install 'graphclust[image]'``).

    Examples
    --------
    >>> from graphclust.datasets import load_sample_image
    >>> img = load_sample_image("coins")
    >>> img.shape, img.dtype
    ((303, 384), dtype('uint8'))
    """
    if not isinstance(name, str) or name not in SAMPLE_IMAGES:
        raise InvalidParameterError(
            f"unknown sample image {name!r}; choose one of: {', '.join(SAMPLE_IMAGES)}"
        )
    skdata = optional_import("skimage.data", "image", f"load_sample_image({name!r})")
    return getattr(skdata, name)()


# ---------------------------------------------------------------------- generators
def _cluster_sizes(n_samples, n_clusters):
    """Per-cluster sizes from an int (split evenly, earlier clusters one larger) or a list."""
    if isinstance(n_samples, numbers.Integral) and not isinstance(n_samples, bool):
        k = 3 if n_clusters is None else check_int(n_clusters, "n_clusters", low=1)
        n = check_int(n_samples, "n_samples", low=k)
        return np.full(k, n // k, dtype=np.int64) + (np.arange(k) < n % k)
    try:
        sizes = [check_int(s, f"n_samples[{i}]", low=1) for i, s in enumerate(n_samples)]
    except TypeError:
        raise InvalidParameterError(
            f"n_samples must be an int or a sequence of cluster sizes, got {n_samples!r}"
        ) from None
    if not sizes:
        raise InvalidParameterError("n_samples is an empty sequence; give at least one cluster size")
    if n_clusters is not None and check_int(n_clusters, "n_clusters", low=1) != len(sizes):
        raise InvalidParameterError(
            f"n_clusters={n_clusters} but n_samples lists {len(sizes)} cluster sizes"
        )
    return np.asarray(sizes, dtype=np.int64)


def make_blobs(
    n_samples=100,
    n_clusters=None,
    n_features=2,
    *,
    cluster_std=1.0,
    separation=4.0,
    shuffle=True,
    return_centers=False,
    random_state=None,
):
    """Isotropic Gaussian clusters with a controlled distance between centres.

    Centres are drawn from a standard normal distribution and the whole set is then
    scaled so that the two closest centres are exactly
    ``separation * max(cluster_std)`` apart: ``separation`` alone sets how hard the
    problem is, whatever the dimension.

    Parameters
    ----------
    n_samples : int or sequence of int, default=100
        Total number of points, split as evenly as possible (earlier clusters get the
        remainder), or the size of every cluster.
    n_clusters : int or None, default=None
        Number of clusters; 3 when ``n_samples`` is an int, ``len(n_samples)``
        otherwise (giving both, they must agree).
    n_features : int, default=2
        Dimension of the points.
    cluster_std : float or sequence of float, default=1.0
        Standard deviation of every cluster, or one per cluster.
    separation : float, default=4.0
        Smallest distance between two centres, in units of ``max(cluster_std)``.
    shuffle : bool, default=True
        Shuffle the points; otherwise clusters come in blocks, in order.
    return_centers : bool, default=False
        Also return the centres.
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the generator.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), dtype float64
    y : ndarray of shape (n_samples,), dtype int64
        The cluster of every point, ``0..n_clusters-1``.
    centers : ndarray of shape (n_clusters, n_features)
        Only with ``return_centers=True``.

    Raises
    ------
    InvalidParameterError
        A size, count, deviation or separation out of range (the message names it).

    Examples
    --------
    >>> from graphclust.datasets import make_blobs
    >>> X, y = make_blobs(7, n_clusters=2, random_state=0)
    >>> X.shape, y.tolist()
    ((7, 2), [0, 1, 1, 0, 0, 1, 0])
    >>> X, y, C = make_blobs([3, 2], cluster_std=0.5, separation=6, shuffle=False,
    ...                      return_centers=True, random_state=0)
    >>> y.tolist(), round(float(np.linalg.norm(C[0] - C[1])), 6)
    ([0, 0, 0, 1, 1], 3.0)
    """
    sizes = _cluster_sizes(n_samples, n_clusters)
    k = len(sizes)
    d = check_int(n_features, "n_features", low=1)
    std = np.broadcast_to(np.asarray(cluster_std, dtype=np.float64), (k,)) if np.ndim(cluster_std) == 0 else (
        np.asarray(cluster_std, dtype=np.float64).reshape(-1)
    )
    if std.shape != (k,):
        raise InvalidParameterError(f"cluster_std has {std.shape[0]} values for {k} clusters")
    bad = ~(np.isfinite(std) & (std >= 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(f"cluster_std[{i}] is {std[i]}; standard deviations must be finite and >= 0")
    separation = check_float(separation, "separation", low=0)
    rng = check_random_state(random_state)

    centers = rng.standard_normal((k, d))
    if k > 1:
        diff = centers[:, None, :] - centers[None, :, :]
        dist = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        closest = dist[np.triu_indices(k, 1)].min()
        scale = separation * (std.max() if std.max() > 0 else 1.0)
        centers *= scale / closest
    else:
        centers[:] = 0.0
    y = np.repeat(np.arange(k, dtype=np.int64), sizes)
    X = centers[y] + rng.standard_normal((len(y), d)) * std[y, None]
    if shuffle:
        perm = rng.permutation(len(y))
        X, y = X[perm], y[perm]
    return (X, y, centers) if return_centers else (X, y)


def make_moons(n_samples=100, *, noise=0.1, shuffle=True, random_state=None):
    """Two interleaving half circles, a classic non-convex clustering problem.

    The upper moon is the unit half circle ``(cos t, sin t)``, the lower one
    ``(1 - cos t, 0.5 - sin t)``, with ``t`` evenly spaced in ``[0, pi]``; Gaussian
    noise of standard deviation ``noise`` is added to both coordinates.

    Parameters
    ----------
    n_samples : int or (int, int), default=100
        Total number of points (the upper moon gets the odd one), or the size of each
        moon.
    noise : float, default=0.1
        Standard deviation of the added noise.
    shuffle : bool, default=True
        Shuffle the points; otherwise the upper moon comes first.
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the generator.

    Returns
    -------
    X : ndarray of shape (n_samples, 2), dtype float64
    y : ndarray of shape (n_samples,), dtype int64
        0 for the upper moon, 1 for the lower one.

    Raises
    ------
    InvalidParameterError
        Fewer than one point per moon, or a negative noise.

    Examples
    --------
    >>> from graphclust.datasets import make_moons
    >>> X, y = make_moons(5, noise=0.0, shuffle=False)
    >>> y.tolist(), np.round(X, 3).tolist()
    ([0, 0, 0, 1, 1], [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, 0.5], [2.0, 0.5]])
    """
    if isinstance(n_samples, numbers.Integral) and not isinstance(n_samples, bool):
        n = check_int(n_samples, "n_samples", low=2)
        sizes = ((n + 1) // 2, n // 2)
    else:
        try:
            n_up, n_low = n_samples
        except (TypeError, ValueError):
            raise InvalidParameterError(
                f"n_samples must be an int or a pair of moon sizes, got {n_samples!r}"
            ) from None
        sizes = (check_int(n_up, "n_samples[0]", low=1), check_int(n_low, "n_samples[1]", low=1))
    noise = check_float(noise, "noise", low=0)
    rng = check_random_state(random_state)
    t_up = np.linspace(0.0, np.pi, sizes[0])
    t_low = np.linspace(0.0, np.pi, sizes[1])
    X = np.concatenate([
        np.column_stack([np.cos(t_up), np.sin(t_up)]),
        np.column_stack([1.0 - np.cos(t_low), 0.5 - np.sin(t_low)]),
    ])
    y = np.repeat(np.array([0, 1], dtype=np.int64), sizes)
    if noise > 0:
        X = X + noise * rng.standard_normal(X.shape)
    if shuffle:
        perm = rng.permutation(len(y))
        X, y = X[perm], y[perm]
    return X, y


def make_label_image(shape=(64, 64), n_labels=3, *, noise=0.3, smoothness=None, random_state=None):
    """A noisy piecewise-constant image and its true label map.

    The label map has smooth, blob-like regions: ``n_labels`` fields of white noise
    are smoothed by a Gaussian filter of width ``smoothness`` and every pixel takes
    the label of the largest field there. Label ``k`` has intensity
    ``k / (n_labels - 1)`` (evenly spaced in ``[0, 1]``) and Gaussian noise of
    standard deviation ``noise`` is added; neighbouring intensities are
    ``1 / (n_labels - 1)`` apart, so that step over ``noise`` is the contrast-to-noise
    ratio. Ground truth for segmentation tests.

    Parameters
    ----------
    shape : int or tuple of int, default=(64, 64)
        Image shape (2-D or more; an int gives a square).
    n_labels : int, default=3
        Number of labels; every label occurs in the map.
    noise : float, default=0.3
        Standard deviation of the additive Gaussian noise.
    smoothness : float or None, default=None
        Width (standard deviation, in pixels) of the smoothing filter: larger values
        give larger regions. ``None`` uses ``max(1, min(shape) / 8)``.
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the generator.

    Returns
    -------
    image : ndarray of shape ``shape``, dtype float64
        Intensity of the true label plus noise.
    labels : ndarray of shape ``shape``, dtype int64
        The true label of every pixel, ``0..n_labels-1``.

    Raises
    ------
    InvalidParameterError
        A bad shape, more labels than pixels, a negative noise or smoothness, or (rarely,
        with very smooth fields on a tiny image) no draw of 20 containing every label.

    Examples
    --------
    >>> from graphclust.datasets import make_label_image
    >>> image, labels = make_label_image((6, 8), n_labels=3, noise=0.0, smoothness=1.5,
    ...                                  random_state=0)
    >>> labels
    array([[1, 1, 1, 1, 0, 0, 0, 0],
           [1, 1, 1, 1, 1, 2, 1, 1],
           [1, 1, 1, 1, 2, 2, 1, 1],
           [1, 1, 1, 0, 2, 2, 1, 1],
           [1, 0, 0, 0, 0, 0, 0, 1],
           [2, 0, 0, 0, 0, 0, 0, 0]])
    >>> bool((image == labels / 2).all())  # intensities 0, 0.5, 1 without noise
    True
    """
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape, shape)
    try:
        shape = tuple(check_int(s, f"shape[{i}]", low=1) for i, s in enumerate(shape))
    except TypeError:
        raise InvalidParameterError(f"shape must be an int or a tuple of ints, got {shape!r}") from None
    if len(shape) < 2:
        raise InvalidParameterError(f"shape must have at least 2 dimensions, got {shape!r}")
    size = int(np.prod(shape))
    k = check_int(n_labels, "n_labels", low=1, high=size)
    noise = check_float(noise, "noise", low=0)
    if smoothness is None:
        smoothness = max(1.0, min(shape) / 8)
    smoothness = check_float(smoothness, "smoothness", low=0)
    rng = check_random_state(random_state)

    levels = np.linspace(0.0, 1.0, k) if k > 1 else np.zeros(1)
    for _ in range(20):
        fields = rng.standard_normal((k, *shape))
        if smoothness > 0:
            fields = ndimage.gaussian_filter(fields, sigma=(0.0,) + (smoothness,) * len(shape), mode="reflect")
        labels = np.argmax(fields, axis=0).astype(np.int64)
        if k == 1 or np.bincount(labels.ravel(), minlength=k).min() > 0:
            break
    else:
        raise InvalidParameterError(
            f"no label map with all {k} labels was drawn in 20 tries on a {shape} image with "
            f"smoothness={smoothness}; lower the smoothness or the number of labels"
        )
    image = levels[labels]
    if noise > 0:
        image = image + noise * rng.standard_normal(shape)
    return image, labels
