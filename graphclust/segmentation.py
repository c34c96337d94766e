"""Image segmentation: pixels (or superpixels) are nodes, neighbours are data edges,
scribbles are the side information.

The common case is one call::

    labels = gc.segment(image, scribbles=scribbles).labels

An image becomes a pixel grid with contrast-sensitive weights
(:func:`graphclust.grid_arrays`) or a region-adjacency graph of SLIC superpixels
(:func:`superpixel_graph`, ``image`` extra). A scribble image (``0`` = no scribble,
``1, 2, ...`` = segment labels, or a colour image whose distinct non-black colours
are the labels) gives hard must-links inside each label and cannot-links across
(:func:`scribbles_to_side_info`). The HMRF methods minimise

.. math::

    E(z) = \\sum_p c_p(z_p) + \\lambda \\sum_{(p,q)} w_{pq} [z_p \\ne z_q]

with ``c_p(l)`` the negative log-likelihood of the pixel colour under a Gaussian
fitted on the pixels scribbled ``l`` (``inf`` for the other labels at a scribbled
pixel, so scribbles always hold) with any inference engine. Without scribbles the
colour model is learnt by :class:`graphclust.HMRF` (k-means centroids plus the same
smoothness term). ``"cosc"`` and ``"rdpmeans"`` run those estimators on the same
graph and constraints.
"""

import os
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ._utils import atomic_write, check_float, extreme_scale, check_int, check_random_state, optional_import
from .energy import Energy
from .errors import ImageReadError, InvalidFeaturesError, InvalidParameterError
from .inference import ENGINES, solve
from .potentials.gaussian import DiagonalGaussian
from .potentials.mixture import GaussianMixtures
from . import _gridseg
from .problem import Problem
from .sideinfo import SideInfo

__all__ = [
    "SEGMENT_METHODS",
    "Segmentation",
    "Segmenter",
    "StrokeResult",
    "segment",
    "scribble_labels",
    "scribbles_to_side_info",
    "superpixel_graph",
    "overlay",
    "read_image",
    "write_label_image",
]

#: methods of :func:`segment`
SEGMENT_METHODS = ("auto", "graphcut", "hmrf-bp", "hmrf-icm", "hmrf-lp", "cosc", "rdpmeans")

#: pseudo-pixels of the pooled variance in each scribble label's colour variance
_PRIOR_PIXELS = 20.0

#: a colour per label for overlays (tab10-like, RGB in [0, 1])
_PALETTE = np.array([
    [0.12, 0.47, 0.71], [1.00, 0.50, 0.05], [0.17, 0.63, 0.17], [0.84, 0.15, 0.16], [0.58, 0.40, 0.74],
    [0.55, 0.34, 0.29], [0.89, 0.47, 0.76], [0.50, 0.50, 0.50], [0.74, 0.74, 0.13], [0.09, 0.75, 0.81],
])


@dataclass
class Segmentation:
    """What :func:`segment` returns.

    Attributes
    ----------
    labels : ndarray of shape (rows, cols), dtype int64
        The label image. With scribbles, segment ``l`` carries the scribble label
        ``l`` (a cluster no scribble touches gets the next free integer); without
        them, labels are ``0 .. n_segments - 1``.
    method : str
    energy : float or None
        Energy of the answer (HMRF methods with scribbles).
    lower_bound : float or None
        A lower bound on the minimum energy, when the engine gives one (``"hmrf-lp"``,
        ``"hmrf-mincut"``; the float32 grid cut of ``"graphcut"`` is exact up to float32
        rounding, so it claims none).
    seconds : float
        Wall-clock time of the whole call.
    segments : ndarray of shape (rows, cols) or None
        The superpixel of every pixel (``graph="superpixels"``).
    info : dict
        Graph size, the estimator or engine result, and the colour model.
    """

    labels: np.ndarray
    method: str
    energy: float | None = None
    lower_bound: float | None = None
    seconds: float = 0.0
    segments: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    def overlay(self, image, alpha=0.45):
        """The image with the segments painted over it (see :func:`overlay`)."""
        return overlay(image, self.labels, alpha=alpha)


# ---------------------------------------------------------------------- inputs
def _as_image(image):
    """Float image of shape (rows, cols, channels); integer images scaled to [0, 1]."""
    arr = np.asarray(image)
    if arr.dtype.kind not in "biuf":
        raise InvalidFeaturesError(f"image must be numeric, got dtype {arr.dtype}")
    if arr.ndim not in (2, 3) or arr.size == 0:
        raise InvalidParameterError(
            f"image must be 2-D (grey) or 3-D (rows, cols, channels) and non-empty, got shape {arr.shape}"
        )
    img = arr.astype(np.float64)
    if arr.dtype.kind in "iu" and arr.dtype != np.bool_:
        img /= float(np.iinfo(arr.dtype).max)
    if img.ndim == 2:
        img = img[:, :, None]
    if img.shape[2] == 4:  # RGBA: the alpha channel carries no colour
        img = img[:, :, :3]
    bad = ~np.isfinite(img)
    if bad.any():
        r, c, _ = np.argwhere(bad)[0]
        raise InvalidFeaturesError(f"image has a NaN or infinite value at pixel (row={r}, col={c})",
                                   node=(int(r), int(c)))
    # intensities near 1e±300 (squared differences overflow) brought to about 1 by a
    # power of two: exact, and the segmentation does not depend on the intensities' unit
    return img / extreme_scale(img)


def scribble_labels(scribbles, shape=None):
    """A scribble image as integer labels: ``0`` = unlabelled, ``1, 2, ...`` = labels.

    Parameters
    ----------
    scribbles : array-like of shape (rows, cols) or (rows, cols, 3 or 4)
        Integer labels (``0`` = no scribble; negative values are refused), or a
        colour image in which black (and, with an alpha channel, transparent)
        pixels carry no scribble and every other distinct colour is one label,
        numbered ``1, 2, ...`` in order of the colours' values.
    shape : tuple of int or None, default=None
        ``(rows, cols)`` of the image the scribbles belong to; a mismatch is an error.

    Returns
    -------
    ndarray of shape (rows, cols), dtype int64

    Examples
    --------
    >>> rgb = np.zeros((2, 3, 3), dtype=np.uint8)
    >>> rgb[0, 0] = [255, 0, 0]; rgb[1, 2] = [0, 0, 255]
    >>> scribble_labels(rgb).tolist()
    [[2, 0, 0], [0, 0, 1]]
    """
    s = np.asarray(scribbles)
    if s.dtype.kind not in "biuf":
        raise InvalidParameterError(f"scribbles must be numeric, got dtype {s.dtype}")
    if s.ndim == 3 and s.shape[2] in (3, 4):
        colour = s[:, :, :3].reshape(-1, 3)
        on = colour.any(axis=1)
        if s.shape[2] == 4:
            on &= s[:, :, 3].reshape(-1) > 0
        out = np.zeros(colour.shape[0], dtype=np.int64)
        if on.any():
            _, inv = np.unique(colour[on], axis=0, return_inverse=True)
            out[on] = inv.reshape(-1) + 1
        lab = out.reshape(s.shape[:2])
    elif s.ndim == 2:
        if s.dtype.kind == "f" and not np.all(np.isfinite(s) & (s == np.round(s))):
            raise InvalidParameterError("scribbles must hold integer labels (0 = no scribble)")
        lab = s.astype(np.int64)
        if (lab < 0).any():
            r, c = np.argwhere(lab < 0)[0]
            raise InvalidParameterError(f"scribbles has a negative label at pixel (row={r}, col={c}); "
                                        "use 0 for no scribble and 1, 2, ... for labels")
    else:
        raise InvalidParameterError(
            f"scribbles must be a label image (rows, cols) or a colour image (rows, cols, 3|4), got shape {s.shape}"
        )
    if shape is not None and lab.shape != tuple(shape):
        raise InvalidParameterError(
            f"scribbles have shape {lab.shape[0]}x{lab.shape[1]} but the image is {shape[0]}x{shape[1]}; "
            "draw them on an image of the same size"
        )
    return lab


def scribbles_to_side_info(scribbles, *, nodes="pixels", weight=np.inf):
    """Must-links inside each scribble label, cannot-links across, as a SideInfo.

    Built sparsely: the pixels of a label are chained by ``n - 1`` must-links and one
    representative per label is cannot-linked to the other labels' representatives
    (:meth:`SideInfo.from_labels`), which implies every other pair.

    Parameters
    ----------
    scribbles : array-like
        As :func:`scribble_labels`.
    nodes : {"pixels", "cells"}, default="pixels"
        Node keys: row-major pixel indices ``row * cols + col`` (as in
        :func:`graphclust.grid_arrays`), or ``(row, col)`` tuples (as in
        :func:`graphclust.grid_graph`).
    weight : float, default=inf
        Constraint strength (hard by default).

    Examples
    --------
    >>> S = scribbles_to_side_info([[1, 1, 0], [0, 0, 2]])
    >>> S.must_links(), S.cannot_links()
    ([(0, 1, inf)], [(0, 5, inf)])
    """
    lab = scribble_labels(scribbles)
    idx = np.flatnonzero(lab.reshape(-1) > 0)
    values = lab.reshape(-1)[idx]
    if nodes == "pixels":
        keys = idx.tolist()
    elif nodes == "cells":
        rows, cols = np.divmod(idx, lab.shape[1])
        keys = list(zip(rows.tolist(), cols.tolist()))
    else:
        raise InvalidParameterError(f"nodes must be 'pixels' or 'cells', got {nodes!r}")
    return SideInfo.from_labels(dict(zip(keys, values.tolist())), weight=weight)


# ---------------------------------------------------------------------- graphs
def superpixel_graph(image, n_superpixels=400, *, compactness=0.1, beta=None):
    """SLIC superpixels and their region-adjacency graph (``image`` extra).

    Parameters
    ----------
    image : array-like of shape (rows, cols) or (rows, cols, channels)
    n_superpixels : int, default=400
        Approximate number of superpixels (``skimage.segmentation.slic``).
    compactness : float, default=0.1
        SLIC's balance of colour against space, for values scaled to [0, 1] (higher:
        more regular, less colour-faithful superpixels).
    beta : float or None, default=None
        Contrast sensitivity of the weights ``w_ab = b_ab exp(-beta |μ_a − μ_b|²)``,
        ``b_ab`` the number of 4-neighbour pixel pairs on the common boundary and
        ``μ`` the mean colours; ``None``: ``1 / (2 mean |μ_a − μ_b|²)``.

    Returns
    -------
    segments : ndarray of shape (rows, cols), dtype int64
        Superpixel of every pixel, ``0 .. n - 1``.
    W : scipy.sparse.csr_array of shape (n, n)
    means : ndarray of shape (n, channels)
    counts : ndarray of shape (n,)
        Pixels per superpixel.
    """
    img = _as_image(image)
    n_superpixels = check_int(n_superpixels, "n_superpixels", low=1)
    compactness = check_float(compactness, "compactness", low=0.0, low_open=True)
    seg_mod = optional_import("skimage.segmentation", "image", "superpixel_graph()")
    channel_axis = -1 if img.shape[2] > 1 else None
    # SLIC on values scaled to [0, 1], without the Lab conversion (it assumes RGB in [0, 1])
    lo, hi = img.min(), img.max()
    data = (img - lo) / (hi - lo) if hi > lo else np.zeros_like(img)
    data = data if channel_axis is not None else data[:, :, 0]
    segments = seg_mod.slic(data, n_segments=n_superpixels, compactness=compactness, start_label=0,
                            channel_axis=channel_axis, convert2lab=False).astype(np.int64)
    _, segments = np.unique(segments, return_inverse=True)
    segments = segments.reshape(img.shape[:2]).astype(np.int64)
    n = int(segments.max()) + 1
    flat = img.reshape(-1, img.shape[2])
    counts = np.bincount(segments.reshape(-1), minlength=n).astype(np.float64)
    means = np.stack([np.bincount(segments.reshape(-1), weights=flat[:, c], minlength=n)
                      for c in range(flat.shape[1])], axis=1) / counts[:, None]
    a = np.concatenate([segments[:, :-1].reshape(-1), segments[:-1, :].reshape(-1)])
    b = np.concatenate([segments[:, 1:].reshape(-1), segments[1:, :].reshape(-1)])
    cross = a != b
    lo, hi = np.minimum(a[cross], b[cross]), np.maximum(a[cross], b[cross])
    B = sp.coo_array((np.ones(lo.size), (lo, hi)), shape=(n, n)).tocsr()
    B.sum_duplicates()
    B = B.tocoo()
    d2 = ((means[B.row] - means[B.col]) ** 2).sum(axis=1)
    if beta is None:
        beta = 1.0 / (2.0 * d2.mean()) if d2.size and d2.mean() > 0 else 0.0
    else:
        beta = check_float(beta, "beta", low=0.0)
    w = B.data * np.exp(-beta * d2)
    W = sp.coo_array((np.concatenate([w, w]), (np.concatenate([B.row, B.col]), np.concatenate([B.col, B.row]))),
                     shape=(n, n)).tocsr()
    return segments, sp.csr_array(W), means, counts


def _grid_graph(img, connectivity, beta):
    from .graphs import grid_arrays  # here: the graph builders load scipy.spatial, which grid cuts never need

    edges, weights, shape = grid_arrays(img if img.shape[2] > 1 else img[:, :, 0], connectivity, beta,
                                        channel_axis=-1 if img.shape[2] > 1 else None)
    n = shape[0] * shape[1]
    W = sp.coo_array((np.concatenate([weights, weights]),
                      (np.concatenate([edges[:, 0], edges[:, 1]]), np.concatenate([edges[:, 1], edges[:, 0]]))),
                     shape=(n, n)).tocsr()
    return edges, weights, sp.csr_array(W)


# ---------------------------------------------------------------------- colour models
def _pooled_pixels(pixels, pix_node, n_nodes):
    """The pixels of every node as one merged node: colour sums, pixel counts and the
    scatter of its pixels around their mean (what a provider needs to score all of
    them at once)."""
    d = pixels.shape[1]
    counts = np.bincount(pix_node, minlength=n_nodes)
    sums = np.stack([np.bincount(pix_node, weights=pixels[:, c], minlength=n_nodes) for c in range(d)], 1)
    dev = pixels - (sums / np.maximum(counts, 1)[:, None])[pix_node]
    scatter = np.empty((n_nodes, d, d))
    for a in range(d):  # channel pairs, not pixels
        for b in range(a, d):
            scatter[:, a, b] = scatter[:, b, a] = np.bincount(pix_node, weights=dev[:, a] * dev[:, b],
                                                              minlength=n_nodes)
    return Problem(nodes=range(n_nodes), W=sp.csr_array((n_nodes, n_nodes)), X=sums, counts=counts.astype(np.int64),
                   scatter_index=np.arange(n_nodes), scatter=scatter)


def _noise_variance(img):
    """Robust per-pixel noise variance (mean over channels): for neighbours inside a
    region ``I_p - I_q ~ N(0, 2 sigma^2)``, and the median of a chi-square(1) is 0.455."""
    d = np.concatenate([(img[:, 1:] - img[:, :-1]).reshape(-1, img.shape[2]),
                        (img[1:, :] - img[:-1, :]).reshape(-1, img.shape[2])])
    if d.shape[0] == 0:
        return 1.0
    var = float(np.mean(np.median(d ** 2, axis=0))) / (2 * 0.455)
    return var if var > 0 else 1.0


# ---------------------------------------------------------------------- segment
def segment(image, scribbles=None, *, n_segments=None, method="auto", graph="grid", connectivity=None,
            smoothness="auto", beta=None, n_superpixels=400, compactness=0.1, colour_reg=1e-3,
            channel_axis="auto", spacing=None, n_components=5, em_rounds=0, colour_model=None, locality=0.0,
            random_state=None, progress="auto", **options):
    """Segment an image or a volume from scribbles (or an image into ``n_segments``
    without them).

    Parameters
    ----------
    image : array-like of shape (rows, cols[, channels]) or (planes, rows, cols[, channels])
        Grey or colour image, or a volume (``"auto"``/``"graphcut"`` with scribbles
        only); integer images are scaled to [0, 1].
    scribbles : array-like or None, default=None
        Label image of the image's spatial shape (``0`` = no scribble) or, for a 2-D
        image, a colour scribble image (see :func:`scribble_labels`). Scribbled pixels
        always keep their label (hard constraints) in the graph-cut and HMRF methods.
    n_segments : int or None, default=None
        Required without scribbles (for ``"rdpmeans"`` it is a hint for λ). With
        scribbles the number of segments is the number of scribble labels
        (``"rdpmeans"`` may find more); when given with scribbles, the labels must be
        ``1 .. n_segments`` and each must be scribbled.
    method : {"auto", "graphcut", "hmrf-bp", "hmrf-icm", "hmrf-lp", "cosc", "rdpmeans"}, default="auto"
        ``"graphcut"``: the scribble model (a Gaussian mixture per label learnt from
        the scribbles and refined by EM on the segmentation, contrast-sensitive
        smoothness with a data-driven weight, hard scribbles) on the pixel or voxel
        grid, minimised exactly by a minimum cut for two labels and by α-expansion for
        more. ``"auto"``: ``"graphcut"`` with scribbles on the grid; with superpixels
        the single-Gaussian model below solved by the default engine
        (:func:`graphclust.inference.default_engine`: minimum cut or α-expansion);
        without scribbles ``"hmrf-bp"``. The ``"hmrf-*"`` names keep their model (one
        diagonal Gaussian per label from the scribbles, smoothness 1 by default) with
        loopy BP, ICM or the LP relaxation (the LP returns a lower bound),
        or ``"hmrf-"`` followed by any engine registered in
        :data:`graphclust.inference.ENGINES` (``"hmrf-mincut"`` for two labels);
        constrained 1-spectral clustering of the graph (slow on pixel grids beyond
        ~10^4 pixels: use ``graph="superpixels"``); RDP-means on the colours with
        the scribble constraints (no spatial term).
    graph : {"grid", "superpixels"}, default="grid"
    connectivity : {4, 8} (images), {6, 18, 26} (volumes) or None, default=None
        Grid neighbourhood; ``None``: 8 for images, 6 for volumes.
    smoothness : float or "auto", default="auto"
        Weight ``λ`` of the contrast-sensitive Potts term. ``"auto"``: for
        ``"graphcut"`` the data-driven rule ``λ = median_p g_p / mean w`` (``g_p`` the
        gap between the two cheapest labels' costs at an unscribbled pixel under the
        scribble-fitted colour model, ``mean w`` the mean contrast weight of a
        neighbour pair: cutting an average pair costs the evidence of a median pixel);
        1.0 for the other methods.
    beta : float or None, default=None
        Contrast sensitivity (see :func:`graphclust.grid_arrays`).
    channel_axis : int, None or "auto", default="auto"
        As in scikit-image: the axis holding the colour channels, ``None`` for grey.
        ``"auto"``: a 3-D array whose last axis has 3 or 4 entries is a colour image
        (unless ``spacing`` is given), any other 3-D array a grey volume.
    spacing : sequence of float or None, default=None
        Distance between neighbouring pixels along each spatial axis (``"graphcut"``):
        a pair's weight is divided by its length ``sqrt(sum (d_a spacing_a)^2)``.
        ``None``: 1 on every axis.
    n_components : int, default=5
        Gaussians per label in the ``"graphcut"`` colour model.
    em_rounds : int, default=0
        ``"graphcut"``: rounds of GrabCut-style EM — refit the colour model on the
        segmentation, solve again; a round is kept only when it lowers the energy
        (colour model and labels together), otherwise the refinement stops. Off by
        default: with scribbles the first model is fitted on correctly labelled pixels,
        and refitting on a segmentation feeds its errors back; two rounds lowered the
        pixel accuracy on the noisy horse, the coffee picture and the noisy volume and
        raised it on the astronaut (``docs/benchmarks/segment.md``).
    colour_model : GaussianMixtures or None, default=None
        ``"graphcut"``: a fitted colour model to use as is (with ``em_rounds=0`` the
        segmentation is then one solve of that model), e.g. ``Segmenter.model``.
    locality : float, default=0.0
        ``"graphcut"``: the weight of a prior on the distance to the strokes. A label
        costs ``locality·g·(d_l − min_k d_k)/D`` more at a pixel, ``d_l`` its distance
        to the nearest scribble of label ``l`` (in units of
        ``spacing``), ``D`` the grid's diagonal and ``g`` the median evidence gap of the
        colour costs (see ``smoothness``): far from every stroke of a label, that label
        needs more colour evidence. Helps where strokes are few and colours are shared
        across segments (coffee 0.89 -> 0.95, astronaut 0.80 -> 0.86 at 5); with
        scribbles scattered everywhere it changes little (noisy horse 0.9921 -> 0.9917).
        ``evidence=`` (a number) fixes ``g`` instead, e.g. ``Segmenter.evidence``.
    n_superpixels, compactness : default=400, 0.1
        For ``graph="superpixels"`` (see :func:`superpixel_graph`).
    colour_reg : float, default=1e-3
        Added to every colour variance of the scribble Gaussians (which are fitted
        on the scribbled pixels, each variance shrunk towards the variance pooled
        over all labels with the weight of 20 pixels), in units of the squared
        intensity range: of the dtype's for integer images, of the image's own
        (max − min) for float images, so a float image in other units gives the same
        segmentation (on the noisy horse, σ = 0.6 and 0.8, pixel accuracy went from
        0.969 and 0.963 with the value taken as absolute to 0.973 and 0.967).
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool or "auto", default="auto"
        Progress bar of the inference engine (or the estimator); ``"auto"`` shows it
        once the run has taken two seconds.
    **options
        Extra engine options (``max_iter``, ``damping``, ...) for the HMRF methods
        with scribbles; estimator parameters otherwise.

    Returns
    -------
    Segmentation

    Raises
    ------
    InvalidParameterError
        Unknown method or graph, scribbles of another size, no scribbles and no
        ``n_segments``, fewer than two scribble labels for ``"cosc"``, a scribble label
        above ``n_segments`` or a segment without a scribble (``"graphcut"``), a
        ``spacing`` or ``connectivity`` that does not fit the number of axes.
    InvalidFeaturesError
        A NaN or infinite pixel (named).
    ProblemTooLargeError
        The image or volume would not fit in the available memory (checked before
        anything is allocated; the message gives the estimate).

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((20, 20)); img[:, 10:] = 1.0
    >>> img += np.random.default_rng(0).normal(scale=0.3, size=img.shape)
    >>> scrib = np.zeros((20, 20), dtype=int); scrib[5, 2:5] = 1; scrib[15, 14:18] = 2
    >>> seg = segment(img, scrib, random_state=0)
    >>> seg.labels.shape, np.unique(seg.labels).tolist(), float((seg.labels[:, 10:] == 2).mean()) > 0.9
    ((20, 20), [1, 2], True)
    """
    start = time.perf_counter()
    if method not in SEGMENT_METHODS and not (method.startswith("hmrf-") and method[5:] in ENGINES):
        raise InvalidParameterError(
            f"method must be one of {', '.join(SEGMENT_METHODS)} or 'hmrf-' and a registered engine "
            f"({', '.join(sorted(ENGINES))}), got {method!r}"
        )
    if graph not in ("grid", "superpixels"):
        raise InvalidParameterError(f"graph must be 'grid' or 'superpixels', got {graph!r}")
    if not (isinstance(smoothness, str) and smoothness == "auto"):
        smoothness = check_float(smoothness, "smoothness", low=0.0)
    if graph == "grid":  # refuse an image too large for memory before reading it
        _gridseg.check_image_memory(image, channel_axis, spacing, connectivity, n_segments or 2)
    has_scribbles = scribbles is not None and np.any(np.asarray(scribbles))
    if method == "graphcut" or (method == "auto" and graph == "grid" and has_scribbles):
        if graph != "grid":
            raise InvalidParameterError("method='graphcut' works on the pixel grid; use graph='grid'")
        if not has_scribbles:
            raise InvalidParameterError("method='graphcut' needs scribbles (its colour model is learnt from them)")
        return _segment_grid(image, scribbles, n_segments=n_segments, connectivity=connectivity,
                             smoothness=smoothness, beta=beta, colour_reg=colour_reg, channel_axis=channel_axis,
                             spacing=spacing, n_components=n_components, em_rounds=em_rounds,
                             colour_model=colour_model, locality=locality, random_state=random_state, start=start,
                             **options)
    if method == "auto":
        method = "hmrf-auto" if has_scribbles else "hmrf-bp"
    if smoothness == "auto":
        smoothness = 1.0
    if connectivity is None:
        connectivity = 8
    spatial, _, axis = _gridseg.spatial_layout(np.shape(image), channel_axis, spacing)
    if spacing is not None or len(spatial) == 3:
        raise InvalidParameterError(f"method={method!r} segments 2-D images; volumes (and spacing) need "
                                    "method='graphcut' (or 'auto') with scribbles")
    if axis is not None and np.ndim(image) == 3:
        image = np.moveaxis(np.asarray(image), axis, -1)
    colour_reg = check_float(colour_reg, "colour_reg", low=0.0, low_open=True)
    img = _as_image(image)
    if np.asarray(image).dtype.kind == "f":  # float intensities carry the data's own unit
        span = float(img.max() - img.min())
        colour_reg *= span * span if span > 0 else 1.0
    rows, cols = img.shape[:2]
    lab = None if scribbles is None else scribble_labels(scribbles, (rows, cols))
    if lab is not None and not (lab > 0).any():
        lab = None
    if lab is None and n_segments is None:
        raise InvalidParameterError("give scribbles or n_segments: without scribbles the number of segments "
                                    "must be stated")
    if n_segments is not None:
        n_segments = check_int(n_segments, "n_segments", low=1)
    rng = check_random_state(random_state)

    # the graph: nodes are pixels or superpixels; `pix_node` maps pixels to nodes
    if graph == "grid":
        edges, weights, W = _grid_graph(img, connectivity, beta)
        pixels = img.reshape(-1, img.shape[2])
        X, counts, pix_node, segments = pixels, np.ones(rows * cols), np.arange(rows * cols), None
    else:
        segments, W, X, counts = superpixel_graph(img, n_superpixels, compactness=compactness, beta=beta)
        upper = sp.triu(W, k=1).tocoo()
        edges, weights = np.stack([upper.row, upper.col], 1).astype(np.int64), upper.data
        pixels = img.reshape(-1, img.shape[2])
        pix_node = segments.reshape(-1)
    n_nodes = W.shape[0]
    info = {"n_nodes": int(n_nodes), "n_edges": int(len(weights)), "graph": graph}

    # scribbles on nodes: a node takes the majority label of its scribbled pixels
    values = node_lab = None
    if lab is not None:
        flat = lab.reshape(-1)
        values = np.unique(flat[flat > 0])
        code = np.searchsorted(values, flat)  # label index per pixel (valid where flat > 0)
        on = flat > 0
        votes = sp.coo_array((np.ones(int(on.sum())), (pix_node[on], code[on])),
                             shape=(n_nodes, values.size)).toarray()
        node_lab = np.where(votes.sum(1) > 0, votes.argmax(1), -1)
        info["n_scribbled_nodes"] = int((node_lab >= 0).sum())

    energy_value = lower = None
    if method.startswith("hmrf"):
        engine = method.split("-", 1)[1]
        method = "auto" if engine == "auto" else method
        if lab is not None:
            pix_lab = np.full(rows * cols, -1, dtype=np.int64)
            pix_lab[lab.reshape(-1) > 0] = code[lab.reshape(-1) > 0]
            # the colour model: a diagonal Gaussian per label fitted on the scribbled
            # pixels; a superpixel costs what all its pixels cost (exact, via its scatter)
            pixel_problem = _pixel_problem(pixels)
            colours = DiagonalGaussian(values.size, shrinkage=_PRIOR_PIXELS, reg=colour_reg)
            colours.update(pixel_problem, pix_lab)
            U = colours.unary(pixel_problem if segments is None else _pooled_pixels(pixels, pix_node, n_nodes))
            mu, var = colours.means_, colours.variances_
            seeded = np.flatnonzero(node_lab >= 0)
            keep = U[seeded, node_lab[seeded]]
            U[seeded] = np.inf  # scribbles are hard: only the scribbled label is allowed
            U[seeded, node_lab[seeded]] = keep
            energy = Energy(U, edges, smoothness * weights)
            res = solve(energy, engine, random_state=rng, progress=progress, **options)
            node_labels = values[res.labels]
            energy_value, lower = float(res.energy), res.lower_bound
            info.update(engine_result=res, colour_means=mu, colour_vars=var)
        else:
            from .hmrf import HMRF
            from .potentials import Centroids

            # centroid costs |x - mu|^2 are Gaussian log-likelihoods times 2 sigma^2:
            # scale the smoothness the same way so that it means what it means with scribbles
            scale = 2.0 * _noise_variance(img)
            est = HMRF(Centroids(n_segments), inference=engine, smoothness=smoothness * scale, random_state=rng,
                       progress=progress, **options)
            # superpixels stand for their pixels: colour sums with pixel counts
            est.fit(Problem.from_arrays(W, X=X * counts[:, None], counts=counts.astype(np.int64)))
            node_labels = est.labels_
            info["estimator"] = est
    else:
        problem = Problem.from_arrays(W, X=X)
        if node_lab is not None:
            problem = _with_scribble_constraints(problem, node_lab)
        if method == "cosc":
            from .spectral import COSC

            k = values.size if values is not None else n_segments
            if k < 2:
                raise InvalidParameterError("method='cosc' needs at least two segments (two scribble labels or "
                                            "n_segments >= 2)")
            est = COSC(k, random_state=rng, progress=progress, **options)
        else:
            from .rdpmeans import RDPMeans

            hint = n_segments if n_segments is not None else (values.size if values is not None else None)
            est = RDPMeans(n_clusters=hint, random_state=rng, progress=progress, **options)
        est.fit(problem)
        node_labels = est.labels_ if values is None else _name_clusters(est.labels_, node_lab, values)
        info["estimator"] = est
    labels = np.asarray(node_labels, dtype=np.int64)[pix_node].reshape(rows, cols)
    return Segmentation(labels=labels, method=method, energy=energy_value, lower_bound=lower,
                        seconds=time.perf_counter() - start, segments=segments, info=info)


# ---------------------------------------------------------------------- the graph-cut model
def _grid_scribbles(scribbles, shape, n_segments):
    """Scribbles of an image or volume of spatial ``shape`` as ``(values, seeds)``:
    the scribble labels present (sorted) and flat label indices (``-1`` = none)."""
    if len(shape) == 2:
        lab = scribble_labels(scribbles, shape)
    else:
        lab = np.asarray(scribbles)
        if lab.shape != tuple(shape):
            raise InvalidParameterError(f"scribbles have shape {'x'.join(map(str, lab.shape))} but the volume is "
                                        f"{'x'.join(map(str, shape))}; draw them on a volume of the same size")
        if lab.dtype.kind not in "biu" and not (lab.dtype.kind == "f" and np.all(lab == np.round(lab))):
            raise InvalidParameterError("scribbles must hold integer labels (0 = no scribble)")
        lab = lab.astype(np.int64)
        if (lab < 0).any():
            where = tuple(int(v) for v in np.argwhere(lab < 0)[0])
            raise InvalidParameterError(f"scribbles has a negative label at voxel {where}; use 0 for no scribble "
                                        "and 1, 2, ... for labels")
    flat = lab.reshape(-1)
    values = np.unique(flat[flat > 0])
    if n_segments is not None:
        n_segments = check_int(n_segments, "n_segments", low=2)
        if values.size and values[-1] > n_segments:
            where = tuple(int(v) for v in np.argwhere(lab == values[-1])[0])
            raise InvalidParameterError(f"scribble label {values[-1]} (at pixel {where}) is beyond the {n_segments} "
                                        f"segments: labels are 1 .. {n_segments}")
        missing = sorted(set(range(1, n_segments + 1)) - set(values.tolist()))
        if missing:
            raise InvalidParameterError(f"segment {missing[0]} has no scribble; every segment's colour model is "
                                        "learnt from its scribbles")
        values = np.arange(1, n_segments + 1)
    if values.size < 2:
        raise InvalidParameterError(f"scribbles carry {values.size} label(s); give at least two segments a "
                                    "scribble")
    seeds = np.full(flat.size, -1, dtype=_gridseg.seed_dtype(values.size))
    on = flat > 0
    seeds[on] = np.searchsorted(values, flat[on])
    return values, seeds


def _pixel_problem(pixels):
    """The pixels as a Problem for the colour model: no edges, one point per node. The
    counts and vertex weights are read-only broadcast views of 1 (no per-pixel array:
    at 2048² three such arrays would take 96 MiB, more than the image)."""
    n = pixels.shape[0]
    W = sp.csr_array((np.empty(0), np.empty(0, np.int32), np.zeros(n + 1, np.int32)), shape=(n, n))
    return Problem(nodes=range(n), W=W, X=pixels, counts=np.broadcast_to(np.int64(1), (n,)),
                   vertex_weights=np.broadcast_to(1.0, (n,)))


class _GridScene:
    """An image or volume made ready for the graph-cut model: float32 pixels, the
    contrast weights per neighbour offset, and the pixels as the colour model scores
    them."""

    def __init__(self, image, *, channel_axis, spacing, connectivity, beta, colour_reg, n_labels):
        img, self.shape, self.spacing, self.connectivity, self.offsets = _gridseg.prepare_image(
            image, channel_axis, spacing, connectivity, n_labels)
        if beta is not None:
            beta = check_float(beta, "beta", low=0.0)
        self.pair_weights, self.beta = _gridseg.contrast_weights(img, self.offsets, self.spacing, beta)
        self.colour_reg = check_float(colour_reg, "colour_reg", low=0.0, low_open=True)
        if np.asarray(image).dtype.kind == "f":  # float intensities carry the data's own unit
            span = float(img.max() - img.min())
            self.colour_reg *= span * span if span > 0 else 1.0
        self.n_channels = img.shape[-1]
        self.pixels = _gridseg.GridPixels(img.reshape(-1, self.n_channels))

    def fit(self, seeds, n_labels, *, smoothness, n_components, em_rounds, colour_model, random_state, engine="auto",
            options=None, locality=0.0, gap=None, consume=False):
        """Colour model from the scribbles, solve, then EM rounds kept while they lower
        the energy. Returns a dict of the pieces. ``consume``: a one-shot fit without EM
        rounds scales the scene's contrast weights in place (one weight buffer fewer)."""
        if colour_model is None:
            model = GaussianMixtures(n_labels, n_components=n_components, reg=0.1 * self.colour_reg,
                                     random_state=random_state)
            model.update(self.pixels, seeds)
        else:
            if not isinstance(colour_model, GaussianMixtures) or getattr(colour_model, "means_", None) is None:
                raise InvalidParameterError("colour_model must be a fitted GaussianMixtures (e.g. Segmenter.model)")
            if colour_model.n_clusters != n_labels:
                raise InvalidParameterError(f"colour_model has {colour_model.n_clusters} labels, the scribbles "
                                            f"{n_labels}")
            model = colour_model
        locality = check_float(locality, "locality", low=0.0)
        inplace = consume and not check_int(em_rounds, "em_rounds", low=0)
        if inplace and n_labels == 2 and engine == "auto" and not locality and not options:
            # one solve, the cut from the terminal capacities: the unary is never stored
            labels, energy, res, lam, colour_gap = _gridseg.solve_two_labels_once(
                model, self.pixels, seeds, self.shape, self.offsets, self.pair_weights, smoothness)
            weights, self.pair_weights = self.pair_weights, None  # now the scaled weights
            return dict(model=model, unary=None, weights=weights, smoothness=lam, labels=labels, energy=energy,
                        result=res, history=[energy], gap=colour_gap if gap is None else gap)
        unary, weights, lam, gap = _gridseg.grid_model(model, self.pixels, seeds, self.shape, self.offsets,
                                                       self.pair_weights, smoothness, locality=locality,
                                                       spacing=self.spacing, gap=gap, inplace=inplace)
        if inplace:
            self.pair_weights = None  # now the scaled weights
        labels, energy, res = _gridseg.solve_grid(unary, self.offsets, weights, engine=engine, options=options)
        history = [energy]
        for _ in range(check_int(em_rounds, "em_rounds", low=0)):
            trial = model.clone()
            trial.update(self.pixels, labels.reshape(-1))
            u2, w2, _, _ = _gridseg.grid_model(trial, self.pixels, seeds, self.shape, self.offsets,
                                               self.pair_weights, lam, locality=locality, spacing=self.spacing,
                                               gap=gap)
            l2, e2, r2 = _gridseg.solve_grid(u2, self.offsets, w2, engine=engine, init=labels, reuse=res,
                                             options=options)
            history.append(e2)
            if not e2 < energy - 1e-9 * abs(energy):  # rejected: an explicit energy gets its unary back
                if "grid_energy" in res.info:
                    res.info["grid_energy"].unary[...] = unary.reshape(-1, unary.shape[-1])
                break
            model, unary, weights, labels, energy, res = trial, u2, w2, l2, e2, r2
        return dict(model=model, unary=unary, weights=weights, smoothness=lam, labels=labels, energy=energy,
                    result=res, history=history, gap=gap)


def _segment_grid(image, scribbles, *, n_segments, connectivity, smoothness, beta, colour_reg, channel_axis,
                  spacing, n_components, em_rounds, colour_model, random_state, start, engine="auto", locality=0.0,
                  evidence=None, **options):
    n_labels = int(n_segments) if isinstance(n_segments, (int, np.integer)) and n_segments > 1 else 2
    scene = _GridScene(image, channel_axis=channel_axis, spacing=spacing, connectivity=connectivity, beta=beta,
                       colour_reg=colour_reg, n_labels=n_labels)
    values, seeds = _grid_scribbles(scribbles, scene.shape, n_segments)
    rng = check_random_state(random_state)
    fit = scene.fit(seeds, values.size, smoothness=smoothness, n_components=n_components, em_rounds=em_rounds,
                    colour_model=colour_model, random_state=rng, engine=engine, options=options, locality=locality,
                    gap=evidence, consume=True)
    info = {"n_nodes": int(np.prod(scene.shape)), "graph": "grid", "shape": scene.shape,
            "connectivity": scene.connectivity, "offsets": scene.offsets, "spacing": scene.spacing.tolist(),
            "beta": scene.beta, "smoothness": fit["smoothness"], "colour_model": fit["model"],
            "engine": fit["result"].info.get("engine"), "engine_result": fit["result"],
            "em_energies": fit["history"], "values": values, "evidence_gap": fit["gap"]}
    return Segmentation(labels=np.asarray(values[fit["labels"]], dtype=np.int64), method="graphcut",
                        energy=fit["energy"], lower_bound=fit["result"].lower_bound,
                        seconds=time.perf_counter() - start, info=info)


@dataclass
class StrokeResult:
    """What :meth:`Segmenter.add_stroke` returns.

    Attributes
    ----------
    labels : ndarray of the image's spatial shape, int64, or None
        The segmentation after the stroke (None while a segment has no scribble).
    changed : ndarray of bool, same shape, or None
        Pixels whose label the stroke changed (every pixel at the first solve).
    n_changed : int
    energy : float or None
    seconds : float
        Time of the update and re-solve.
    warm : bool
        Whether the solve reused the previous one (dynamic graph cuts).
    """

    labels: np.ndarray | None
    changed: np.ndarray | None
    n_changed: int
    energy: float | None
    seconds: float
    warm: bool


class Segmenter:
    """Interactive scribble segmentation: add strokes, get the updated segmentation.

    The model is :func:`segment`'s ``"graphcut"`` model. Once every segment has a
    scribble, the first solve fits the colour model (with its EM rounds) and the
    smoothness, and keeps the solver alive; each later stroke only makes its pixels
    hard constraints — the unary rows of those pixels change, nothing else — and the
    solver re-solves from its previous flows (:class:`graphclust.inference.GridCutSolver`,
    dynamic graph cuts on the implicit grid), so the work follows what the stroke changed. The result is
    the one :func:`segment` gives with all strokes at once and the same colour model and
    smoothness (``segment(image, segmenter.scribbles, colour_model=segmenter.model,
    smoothness=segmenter.smoothness, locality=segmenter.locality, evidence=segmenter.evidence)``):
    exactly, for two labels.
    :meth:`refit` re-learns the colour model from the current segmentation.

    Parameters
    ----------
    image : array-like
        As :func:`segment` (2-D image or 3-D volume, grey or colour).
    scribbles : array-like or None, default=None
        Initial scribbles (as :func:`segment`).
    n_segments : int or None, default=None
        Number of segments, labelled ``1 .. n_segments``; ``None``: the largest initial
        scribble label, at least 2.
    channel_axis, spacing, connectivity, smoothness, beta, colour_reg, n_components, em_rounds, locality
        As :func:`segment`. With ``locality > 0`` a stroke also changes the unaries of
        the pixels whose nearest stroke distances it changed.
    random_state : None, int or numpy.random.Generator, default=0

    Attributes
    ----------
    labels : ndarray or None
        Current segmentation (labels ``1 .. n_segments``).
    scribbles : ndarray of int64
        Every stroke so far as a label image (0 = none).
    model : GaussianMixtures or None
        The colour model of the first solve.
    smoothness : float or None
    evidence : float or None
        The median evidence gap of the first colour costs (scales ``locality``).
    energy : float or None

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((20, 20)); img[:, 10:] = 1.0
    >>> img += np.random.default_rng(0).normal(scale=0.3, size=img.shape)
    >>> s = Segmenter(img, n_segments=2)
    >>> s.add_stroke([(5, 2), (5, 3), (5, 4)], label=1).labels is None   # segment 2 has no stroke yet
    True
    >>> r = s.add_stroke([(15, 15), (15, 16)], label=2)
    >>> r.n_changed, float((s.labels[:, 10:] == 2).mean()) > 0.9
    (400, True)
    """

    def __init__(self, image, scribbles=None, *, n_segments=None, channel_axis="auto", spacing=None,
                 connectivity=None, smoothness="auto", beta=None, colour_reg=1e-3, n_components=5, em_rounds=0,
                 locality=0.0, random_state=0):
        if n_segments is None:
            top = int(np.max(scribble_labels(scribbles))) if scribbles is not None and np.ndim(scribbles) == 2 \
                else (int(np.max(scribbles)) if scribbles is not None else 0)
            n_segments = max(2, top)
        self.n_segments = check_int(n_segments, "n_segments", low=2)
        if not (isinstance(smoothness, str) and smoothness == "auto"):
            smoothness = check_float(smoothness, "smoothness", low=0.0)
        self._smoothness_param = smoothness
        self._n_components, self._em_rounds = n_components, em_rounds
        self.locality = check_float(locality, "locality", low=0.0)
        self.evidence = self._prior = None
        self._rng = check_random_state(random_state)
        self._scene = _GridScene(image, channel_axis=channel_axis, spacing=spacing, connectivity=connectivity,
                                 beta=beta, colour_reg=colour_reg, n_labels=self.n_segments)
        self._image = image
        self.shape = self._scene.shape
        self._seeds = np.full(int(np.prod(self.shape)), -1, dtype=_gridseg.seed_dtype(self.n_segments))
        self.labels = self.model = self.smoothness = self.energy = None
        self._session = None
        if scribbles is not None and np.any(np.asarray(scribbles)):
            self.add_stroke(scribbles)

    @property
    def scribbles(self):
        return (self._seeds.astype(np.int64) + 1).reshape(self.shape)

    def _stroke_pixels(self, stroke, label):
        """Flat pixel indices and label indices of a stroke."""
        arr = np.asarray(stroke)
        dims = "x".join(map(str, self.shape))
        if arr.shape == self.shape or (arr.ndim == 3 and arr.shape[:2] == self.shape and len(self.shape) == 2):
            if arr.dtype == np.bool_ or label is not None:
                mask = arr.astype(bool) if arr.ndim == len(self.shape) else arr.any(axis=-1)
                idx = np.flatnonzero(mask.reshape(-1))
                labs = np.full(idx.size, -1 if label is None else label, dtype=np.int64)
            else:
                lab = scribble_labels(arr, self.shape) if len(self.shape) == 2 else \
                    _grid_scribbles_raw(arr, self.shape)
                flat = lab.reshape(-1)
                idx = np.flatnonzero(flat > 0)
                labs = flat[idx]
        elif arr.ndim == 2 and arr.shape[1] == len(self.shape) and arr.dtype.kind in "iu":
            if label is None:
                raise InvalidParameterError("a stroke given as coordinates needs its label: add_stroke(coords, label)")
            out = (arr < 0) | (arr >= np.asarray(self.shape))
            if out.any():
                k = int(np.flatnonzero(out.any(axis=1))[0])
                raise InvalidParameterError(f"stroke point {tuple(arr[k].tolist())} is outside the {dims} "
                                            f"{'image' if len(self.shape) == 2 else 'volume'}")
            idx = np.ravel_multi_index(tuple(arr.T), self.shape)
            labs = np.full(idx.size, label, dtype=np.int64)
        else:
            raise InvalidParameterError(
                f"a stroke is a mask or label image of shape {dims} (the image this Segmenter was made for) or "
                f"(n_points, {len(self.shape)}) integer coordinates; got shape {arr.shape}")
        if labs.size and (labs.min() < 1 or labs.max() > self.n_segments):
            bad = labs[(labs < 1) | (labs > self.n_segments)][0]
            raise InvalidParameterError(f"stroke label {bad} is beyond the {self.n_segments} segments: labels are "
                                        f"1 .. {self.n_segments}")
        return idx, (labs - 1).astype(np.int32)

    def add_stroke(self, stroke, label=None):
        """Add a stroke and re-solve.

        Parameters
        ----------
        stroke : array-like
            A boolean mask of the image's spatial shape (with ``label``), a label
            image of that shape (``0`` = none; for 2-D also a colour scribble image),
            or ``(n_points, ndim)`` integer pixel coordinates (with ``label``).
        label : int or None, default=None
            The segment ``1 .. n_segments`` of a mask or coordinate stroke.

        Returns
        -------
        StrokeResult

        Raises
        ------
        InvalidParameterError
            A stroke of another shape than the image, a point outside the image, a
            label outside ``1 .. n_segments``.
        """
        t0 = time.perf_counter()
        if label is not None:
            label = check_int(label, "label")
        idx, labs = self._stroke_pixels(stroke, label)
        idx, first = np.unique(idx, return_index=True)  # a point given twice counts once
        labs = labs[first]
        new = self._seeds[idx] != labs
        idx, labs = idx[new], labs[new]
        self._seeds[idx] = labs
        previous = self.labels
        if self._session is None:
            present = np.unique(self._seeds[self._seeds >= 0])
            if present.size < self.n_segments:
                return StrokeResult(None, None, 0, None, time.perf_counter() - t0, False)
            fit = self._scene.fit(self._seeds, self.n_segments, smoothness=self._smoothness_param,
                                  n_components=self._n_components, em_rounds=self._em_rounds, colour_model=None,
                                  random_state=self._rng, locality=self.locality)
            self.model, self.smoothness, self.evidence = fit["model"], fit["smoothness"], fit["gap"]
            if self.locality > 0:
                self._prior = _gridseg.distance_prior(self._seeds, self.shape, self.n_segments, self._scene.spacing)
            self._session = _gridseg.GridSession(fit["unary"], self._scene.offsets, fit["weights"])
            labels, energy, res = self._session.solve()
            warm = False
        else:
            rows = idx
            if self.locality > 0 and idx.size:  # the distances to the strokes changed around the stroke
                prior = _gridseg.distance_prior(self._seeds, self.shape, self.n_segments, self._scene.spacing)
                moved = np.flatnonzero((prior != self._prior).any(axis=-1).reshape(-1))
                self._prior = prior
                rows = np.union1d(moved, idx)
            if rows.size:
                costs = self.model.costs(self._scene.pixels.X[rows]).astype(np.float64)
                if self.locality > 0:
                    costs += self.locality * self.evidence * self._prior.reshape(-1, self.n_segments)[rows]
                seeded = self._seeds[rows]
                on = np.flatnonzero(seeded >= 0)
                keep = costs[on, seeded[on]]
                costs[on] = np.inf
                costs[on, seeded[on]] = keep
                self._session.update_unary(rows, costs)
            labels, energy, res = self._session.solve()
            warm = bool(res.info.get("warm"))
        self.labels = (labels + 1).astype(np.int64)
        self.energy = energy
        changed = np.ones(self.shape, dtype=bool) if previous is None else self.labels != previous
        return StrokeResult(self.labels, changed, int(changed.sum()), energy, time.perf_counter() - t0, warm)

    def refit(self):
        """Re-learn the colour model from the current segmentation and re-solve (every
        unary row changes; the solve is still warm)."""
        t0 = time.perf_counter()
        if self._session is None:
            raise InvalidParameterError("nothing to refit: every segment needs a stroke first")
        model = self.model.clone()
        model.update(self._scene.pixels, self.labels.reshape(-1) - 1)
        unary, _, _, _ = _gridseg.grid_model(model, self._scene.pixels, self._seeds, self.shape,
                                             self._scene.offsets, [], 0.0, locality=self.locality,
                                             spacing=self._scene.spacing, gap=self.evidence)
        previous = self.labels
        self.model = model
        self._session.update_unary(np.arange(self._seeds.size), unary.reshape(self._seeds.size, -1))
        labels, energy, res = self._session.solve()
        self.labels, self.energy = (labels + 1).astype(np.int64), energy
        changed = self.labels != previous
        return StrokeResult(self.labels, changed, int(changed.sum()), energy, time.perf_counter() - t0, True)

    def overlay(self, alpha=0.45):
        """The image with the current segments painted over it (2-D images)."""
        if self.labels is None:
            raise InvalidParameterError("no segmentation yet: every segment needs a stroke first")
        return overlay(self._image, self.labels, alpha=alpha)


def _grid_scribbles_raw(arr, shape):
    lab = np.asarray(arr)
    if lab.dtype.kind not in "biu":
        raise InvalidParameterError("a volume stroke must hold integer labels (0 = no scribble)")
    return lab.astype(np.int64)


def _with_scribble_constraints(problem, node_lab):
    """``problem`` with hard must-link chains per scribble label and cannot-links
    between one representative per label, as index arrays."""
    seeded = np.flatnonzero(node_lab >= 0)
    order = seeded[np.argsort(node_lab[seeded], kind="stable")]
    z = node_lab[order]
    same = z[1:] == z[:-1]
    must = np.stack([order[:-1][same], order[1:][same]], 1)
    first = order[np.r_[True, ~same]]
    a, b = np.triu_indices(first.size, 1)
    cannot = np.stack([first[a], first[b]], 1)
    pairs = np.concatenate([must, cannot]).astype(np.int64)
    pairs = np.sort(pairs, axis=1)
    w = np.concatenate([np.full(len(must), np.inf), np.full(len(cannot), -np.inf)])
    from dataclasses import replace

    return replace(problem, constraints=pairs, constraint_weights=w)


def _name_clusters(clusters, node_lab, values):
    """Give each cluster the scribble label most of its scribbled nodes carry; the
    others get fresh integers above the largest scribble label."""
    clusters = np.asarray(clusters)
    k = int(clusters.max()) + 1
    seeded = node_lab >= 0
    votes = sp.coo_array((np.ones(int(seeded.sum())), (clusters[seeded], node_lab[seeded])),
                         shape=(k, values.size)).toarray()
    name = np.where(votes.sum(1) > 0, values[votes.argmax(1)], 0)
    fresh = np.flatnonzero(votes.sum(1) == 0)
    name[fresh] = values.max() + 1 + np.arange(fresh.size)
    return name[clusters]


# ---------------------------------------------------------------------- output
def overlay(image, labels, *, alpha=0.45, boundaries=True):
    """The image (as RGB in [0, 1]) with each segment tinted by its label's colour,
    drawn with scikit-image (``image`` extra): ``skimage.color.label2rgb`` over the
    image in its own colours, then ``skimage.segmentation.mark_boundaries``.

    Parameters
    ----------
    image : array-like of shape (rows, cols) or (rows, cols, channels)
    labels : array-like of shape (rows, cols) of int
        Label ``v`` is drawn in palette colour ``v mod 10``, whichever other labels
        are present.
    alpha : float, default=0.45
        Opacity of the tint, in [0, 1].
    boundaries : bool, default=True
        Draw the segment boundaries in black (both pixels of each pair of neighbours
        with different labels).

    Returns
    -------
    ndarray of shape (rows, cols, 3), float in [0, 1]
    """
    skcolor = optional_import("skimage.color", "image", "drawing an overlay")
    sksegmentation = optional_import("skimage.segmentation", "image", "drawing an overlay")
    img = _as_image(image)
    labels = np.asarray(labels)
    if labels.shape != img.shape[:2]:
        raise InvalidParameterError(f"labels have shape {labels.shape} but the image is {img.shape[:2]}")
    alpha = check_float(alpha, "alpha", low=0.0, high=1.0)
    lo, hi = img.min(), img.max()
    base = (img - lo) / (hi - lo) if hi > lo else np.zeros_like(img)
    rgb = np.repeat(base, 3, axis=2) if base.shape[2] == 1 else base[:, :, :3]
    values, inv = np.unique(labels, return_inverse=True)
    inv = inv.reshape(labels.shape)
    # label2rgb colours the labels present in turn; giving it each one's palette entry
    # keeps a label's colour when others are absent (a truth panel and a result match)
    colors = _PALETTE[values.astype(np.int64) % len(_PALETTE)]
    # bg_label=-1: every segment is tinted (label 0 is a segment here, not background);
    # saturation=1 keeps the image's colours under the tint
    out = skcolor.label2rgb(inv, image=rgb, colors=colors, alpha=alpha, bg_label=-1, image_alpha=1,
                            kind="overlay", saturation=1)
    if boundaries:
        out = sksegmentation.mark_boundaries(out, inv, color=(0.0, 0.0, 0.0), mode="thick")
    return np.clip(out, 0.0, 1.0)


def read_image(path, *, what="image", palette_indices=False):
    """Read an image file (PNG, JPEG, TIFF, ...; ``image`` extra) as an array.

    ``palette_indices=True`` reads a palette image (such as the label images
    :func:`write_label_image` writes with ``palette=True``) as its indices, i.e. the
    labels, instead of its colours.

    Raises
    ------
    ImageReadError
        The file is missing or not a readable image (the message names the file).
    """
    io = optional_import("skimage.io", "image", f"reading the {what} {path}")
    if not os.path.exists(path):
        raise ImageReadError(f"{what} file {path} does not exist", path=os.fspath(path))
    try:
        if palette_indices:
            from PIL import Image  # installed with scikit-image

            with Image.open(path) as img:
                if img.mode == "P":
                    return np.asarray(img)
        return np.asarray(io.imread(path))
    except Exception as exc:  # imageio raises many types; all mean "not an image"
        raise ImageReadError(f"cannot read {what} file {path} as an image: {exc}", path=os.fspath(path)) from None


def write_label_image(path, labels, *, palette=False):
    """Write ``labels`` as an 8- or 16-bit PNG (atomically: the old file survives a failure).

    With ``palette=True`` (labels 0..255) the PNG is a palette image: its pixels are the
    labels, shown in distinct colours (label 0 black), so a viewer shows the segments
    and :func:`read_image` with ``palette_indices=True`` gives the labels back. Raw grey
    labels 1..k look black in a viewer.
    """
    Image = optional_import("PIL.Image", "image", f"writing {path}")  # installed with scikit-image
    arr = np.asarray(labels)
    if arr.dtype.kind == "f":
        arr = (np.clip(arr, 0.0, 1.0) * 255).round().astype(np.uint8)
    else:
        if arr.min() < 0 or arr.max() > 65535:
            raise InvalidParameterError("label values must be in 0 .. 65535 to be written as a PNG")
        arr = arr.astype(np.uint8 if arr.max() < 256 else np.uint16)
    if palette and arr.dtype != np.uint8:
        raise InvalidParameterError("a palette PNG holds labels 0 .. 255; write more labels with palette=False")
    img = Image.fromarray(arr)
    if palette:  # an 8-bit grey image with a palette becomes a palette image
        colours = np.vstack([[0.0, 0.0, 0.0], np.resize(_PALETTE, (255, 3))])
        img.putpalette((colours * 255).round().astype(np.uint8).ravel().tolist())
    with atomic_write(path, "wb") as handle:
        img.save(handle, format="PNG")
