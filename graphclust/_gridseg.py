"""Scribble segmentation on implicit pixel/voxel grids: the model and its solve.

The model of :func:`graphclust.segment` (``method="auto"``/``"graphcut"``) and of
:class:`graphclust.Segmenter` is made of three pieces, all on the grid's own shape:

* ``unary`` — float32 ``(*shape, K)``: the colour model's costs, ``inf`` on the other
  labels at a scribbled pixel;
* ``offsets`` — the forward neighbour offsets ``(d_0, ..., d_{n-1})`` (first non-zero
  entry positive), one per undirected neighbour direction;
* ``weights`` — one float32 array of the grid's shape per offset: ``weights[i][p]`` is
  the Potts weight of the pair ``(p, p + offsets[i])`` (0 where ``p + offsets[i]``
  leaves the grid), smoothness included.

``E(z) = sum_p U[p, z_p] + sum_i sum_p weights[i][p] [z_p != z_{p + offsets[i]}]``.

:func:`grid_model` builds them (the only place that does) and :func:`solve_grid` /
:class:`GridSession` solve them (the only places that do): by graph cuts on the implicit
grid (:mod:`graphclust.inference.grid_cut`: the exact minimum cut for two labels,
α-expansion otherwise), or, when an engine is named, on the explicit
:class:`~graphclust.energy.Energy`. :func:`solve_two_labels_once` does both for the
commonest call, one two-label solve, without storing the unary.
"""

import os
from dataclasses import dataclass

import numpy as np

from .energy import Energy
from .errors import InvalidFeaturesError, InvalidParameterError, ProblemTooLargeError
from .inference.grid_cut import grid_offsets

#: allowed connectivities per number of spatial dimensions, and the default
CONNECTIVITY = {2: (4, 8), 3: (6, 18, 26)}
DEFAULT_CONNECTIVITY = {2: 8, 3: 6}
_TINY32 = float(np.finfo(np.float32).tiny)
_BLOCK = 1 << 17  # pixels scored at once by the one-shot path


def _slices(offset, shape):
    """(source, target) slices of the pairs ``(p, p + offset)`` inside the grid."""
    src, dst = [], []
    for o, n in zip(offset, shape):
        src.append(slice(max(0, -o), n - max(0, o)))
        dst.append(slice(max(0, o), n - max(0, -o)))
    return tuple(src), tuple(dst)


@dataclass(frozen=True)
class GridPixels:
    """The pixels of a grid as a node-potential provider reads a Problem: feature sums
    ``X`` (the colours, not copied) and ``counts`` (a broadcast 1). Nothing else: a
    Problem would add CSR row pointers of an empty graph, 4 bytes per pixel."""

    X: np.ndarray

    @property
    def counts(self):
        return np.broadcast_to(np.int64(1), (self.X.shape[0],))


def seed_dtype(n_labels):
    """The smallest signed integer dtype of flat scribble label indices (``-1`` = none)
    for ``n_labels`` labels: int8 up to 127 (1 byte per pixel rather than 4)."""
    return np.int8 if n_labels <= 127 else np.int16 if n_labels <= 32767 else np.int32


def bytes_per_pixel(n_channels, n_labels, n_offsets):
    """A generous estimate of the memory per pixel of one solve on the implicit grid:
    the float32 image (a copy unless given as float32) and its temporaries, the scribble
    labels, the float32 unary with the float64 costs it is made from, one float32 weight
    buffer, the graph cut's float32 flows and per-pixel search state, and the labels.
    (Measured at 2048², grey, two labels, 8-connected: 49 bytes per pixel at the peak
    above the process's baseline, the unary not stored (:func:`solve_two_labels_once`);
    this gives 108.)"""
    image = 4 * n_channels + 4 * n_channels  # float32 image, a temporary of its size
    scribbles = 1 + 8  # int8 seeds, int64 label image while it is read
    unary = 4 * n_labels + 8 * n_labels  # float32 unary, float64 costs it is made from
    pairs = 4 * n_offsets  # the weight buffer, scaled in place
    flow = 4 * n_offsets + 19  # float32 flow per (pixel, offset), terminal residual, trees, queues
    return image + scribbles + unary + pairs + flow + 16  # labels, twice


def available_memory():
    """Bytes of memory available now (psutil when installed, else ``os.sysconf``), or
    None when unknown."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # psutil missing or unable to read the system
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(shape, n_channels, n_labels, n_offsets, what="image"):
    """Raise :class:`ProblemTooLargeError` with the estimate when a grid of ``shape``
    would not fit in the available memory (checked before anything is allocated)."""
    n = int(np.prod(shape, dtype=np.float64))
    need = float(n) * bytes_per_pixel(n_channels, n_labels, n_offsets)
    have = available_memory()
    if have is not None and need > have:
        dims = "x".join(map(str, shape))
        raise ProblemTooLargeError(
            f"the {dims} {what} ({n:.3g} pixels) needs about {need / 2 ** 30:.1f} GiB to segment "
            f"(~{bytes_per_pixel(n_channels, n_labels, n_offsets)} bytes per pixel with {n_labels} labels and "
            f"{n_offsets} neighbour directions), but only {have / 2 ** 30:.1f} GiB is available; segment a "
            "smaller crop or a downsampled copy, or use a lower connectivity")


def spatial_layout(shape, channel_axis, spacing):
    """``(spatial shape, n_channels, channel_axis)`` of an array of ``shape``, without
    reading it (``channel_axis="auto"`` resolved as :func:`graphclust.segment` says)."""
    ndim = len(shape)
    if channel_axis == "auto":
        channel_axis = -1 if ndim == 3 and shape[-1] in (3, 4) and spacing is None else None
    if channel_axis is None:
        return tuple(shape), 1, None
    if isinstance(channel_axis, bool) or not isinstance(channel_axis, (int, np.integer)):
        raise InvalidParameterError(f"channel_axis must be None, 'auto' or an int, got {channel_axis!r}")
    if not -ndim <= channel_axis < ndim:
        raise InvalidParameterError(f"channel_axis={channel_axis} is out of range for an image of shape {tuple(shape)}")
    axis = channel_axis % ndim
    return tuple(n for a, n in enumerate(shape) if a != axis), shape[axis], channel_axis


def check_image_memory(image, channel_axis, spacing, connectivity, n_labels):
    """:func:`check_memory` from the array's shape alone (nothing read or copied)."""
    shape, n_channels, _ = spatial_layout(np.shape(image), channel_axis, spacing)
    if len(shape) in CONNECTIVITY:
        conn = DEFAULT_CONNECTIVITY[len(shape)] if connectivity is None else connectivity
        n_off = len(grid_offsets(len(shape), conn)) if conn in CONNECTIVITY[len(shape)] else 4
        check_memory(shape, n_channels, max(int(n_labels), 2), n_off, "volume" if len(shape) == 3 else "image")


def prepare_image(image, channel_axis, spacing, connectivity, n_labels):
    """The image as float32 ``(*shape, channels)`` (integer images scaled to [0, 1]),
    the spatial shape, the spacing and the connectivity, all checked; the memory check
    comes before the conversion."""
    arr = np.asarray(image)
    if arr.dtype.kind not in "biuf":
        raise InvalidFeaturesError(f"image must be numeric, got dtype {arr.dtype}")
    shape, _, channel_axis = spatial_layout(arr.shape, channel_axis, spacing)
    if channel_axis is not None:
        arr = np.moveaxis(arr, channel_axis, -1)
    ndim = len(shape)
    if ndim not in (2, 3) or arr.size == 0:
        raise InvalidParameterError(
            f"image must be a non-empty 2-D image or 3-D volume (plus a channel axis), got shape {np.shape(image)}"
            + (f" with channel_axis={channel_axis}" if channel_axis is not None else ""))
    if connectivity is None:
        connectivity = DEFAULT_CONNECTIVITY[ndim]
    offsets = grid_offsets(ndim, connectivity)
    if spacing is None:
        spacing = np.ones(ndim)
    else:
        spacing = np.asarray(spacing, dtype=np.float64).reshape(-1)
        if spacing.size != ndim:
            raise InvalidParameterError(f"spacing has {spacing.size} entries but the {'image' if ndim == 2 else 'volume'}"
                                        f" has {ndim} spatial axes (shape {tuple(shape)}); give one distance per axis")
        if not (np.isfinite(spacing) & (spacing > 0)).all():
            raise InvalidParameterError(f"spacing must be finite and > 0 on every axis, got {spacing.tolist()}")
    n_channels = arr.shape[-1] if channel_axis is not None else 1
    check_memory(shape, n_channels, max(int(n_labels), 2), len(offsets), "volume" if ndim == 3 else "image")
    if arr.dtype.kind == "f":
        # float intensities in any unit: brought near 1 by a power of two (exact) before
        # float32, which would overflow near 1e±38; the model does not depend on the unit
        top = float(np.max(np.abs(arr))) if arr.size else 0.0
        if np.isfinite(top) and top > 0:
            arr = arr * np.float64(2.0) ** -np.round(np.log2(top)) if not 1e-4 < top < 1e4 else arr
    if arr.dtype.kind in "iu":
        img = arr.astype(np.float32)
        img /= float(np.iinfo(arr.dtype).max)
    else:  # no copy of a float32 image: nothing below writes into it
        img = np.asarray(arr, dtype=np.float32)
    if channel_axis is None:
        img = img[..., None]
    if img.shape[-1] == 4 and channel_axis is not None and ndim == 2:  # RGBA: alpha carries no colour
        img = img[..., :3]
    if not np.isfinite(img.sum(dtype=np.float64)):
        bad = np.argwhere(~np.isfinite(img))[0]
        where = ", ".join(f"{a}={int(v)}" for a, v in zip(("row", "col") if ndim == 2 else ("plane", "row", "col"),
                                                           bad[:ndim]))
        raise InvalidFeaturesError(f"image has a NaN or infinite value at pixel ({where})",
                                   node=tuple(int(v) for v in bad[:ndim]))
    return np.ascontiguousarray(img), tuple(shape), spacing, connectivity, offsets


def contrast_weights(img, offsets, spacing, beta=None):
    """Per-offset float32 weights ``exp(-beta |I_p - I_q|^2) / dist(p, q)`` (0 where the
    neighbour is outside) as one ``(n_offsets, *shape)`` array, ``dist`` in units of ``spacing``, and the beta used: given,
    or ``1 / (2 mean |I_p - I_q|^2)`` over all neighbour pairs."""
    shape = img.shape[:-1]
    # one (n_offsets, *shape) float32 buffer: the grid engine uses it without a copy
    weights, total, count = np.zeros((len(offsets), *shape), dtype=np.float32), 0.0, 0
    for off, w in zip(offsets, weights):
        src, dst = _slices(off, shape)
        d = img[src] - img[dst]
        d2 = np.einsum("...c,...c->...", d, d)
        del d
        w[src] = d2
        total += float(d2.sum(dtype=np.float64))
        count += d2.size
    if beta is None:
        beta = 0.5 * count / total if total > 0 else 0.0
    for off, w in zip(offsets, weights):
        src, _ = _slices(off, shape)
        dist = float(np.sqrt(np.sum((np.asarray(off) * spacing) ** 2)))
        view = w[src]
        view *= -beta
        np.exp(view, out=view)
        view /= dist
        np.maximum(view, _TINY32, out=view)
    return weights, float(beta)


def hard_scribbles(unary, seeds):
    """``inf`` on every label but the scribbled one at scribbled pixels (in place;
    ``seeds`` flat, ``-1`` = none)."""
    flat = unary.reshape(-1, unary.shape[-1])
    on = np.flatnonzero(seeds >= 0)
    keep = flat[on, seeds[on]]
    flat[on] = np.inf
    flat[on, seeds[on]] = keep
    return unary


def _free_sample(seeds):
    """Unscribbled pixels, at most about 200 000 of them, evenly spread (the median of
    such a sample is as good as the median of all)."""
    free = np.flatnonzero(seeds < 0)
    return free[:: free.size // 200000 + 1].copy() if free.size > 200000 else free  # not a view of all


def evidence_gap(unary, seeds):
    """Median over unscribbled pixels of the gap between the two cheapest labels' costs:
    the nats of evidence a typical pixel carries (0 without free pixels)."""
    flat = unary.reshape(-1, unary.shape[-1])
    free = _free_sample(seeds)
    if free.size == 0 or flat.shape[1] < 2:
        return 0.0
    two = np.partition(flat[free], 1, axis=1)[:, :2]
    return float(np.median(two[:, 1] - two[:, 0]))


def smoothness_for_gap(gap, weights, shape, offsets):
    """:func:`auto_smoothness` from the evidence gap: ``gap / mean w``."""
    total = sum(float(w.sum(dtype=np.float64)) for w in weights)
    pairs = sum(int(np.prod([n - abs(o) for n, o in zip(shape, off)])) for off in offsets)
    return gap * pairs / total if total > 0 else 0.0


def auto_smoothness(unary, weights, seeds, offsets):
    """The data-driven smoothness ``lambda = median_p g_p / mean w``: ``g_p`` the gap
    between the two cheapest labels' costs at an unscribbled pixel (the nats of
    evidence a pixel carries, :func:`evidence_gap`) and ``mean w`` the mean contrast
    weight of a neighbour pair. Cutting an average pair then costs the evidence of a
    median pixel: a lone pixel among 8 neighbours of another label keeps its label only
    with about 8 times the median evidence."""
    return smoothness_for_gap(evidence_gap(unary, seeds), weights, unary.shape[:-1], offsets)


def distance_prior(seeds, shape, n_labels, spacing):
    """float32 ``(*shape, K)``: the distance from each pixel to the nearest scribble of
    each label minus the distance to the nearest scribble of any label, over the grid's
    diagonal (in units of ``spacing``)."""
    spacing = np.ones(len(shape)) if spacing is None else np.asarray(spacing, dtype=np.float64)
    lab = seeds.reshape(shape)
    out = np.empty((*shape, n_labels), dtype=np.float32)
    from scipy import ndimage

    for k in range(n_labels):
        out[..., k] = ndimage.distance_transform_edt(lab != k, sampling=spacing)
    out -= out.min(axis=-1, keepdims=True)
    out /= np.float32(np.sqrt(np.sum((np.asarray(shape) * spacing) ** 2)))
    return out


def grid_model(provider, features, seeds, shape, offsets, pair_weights, smoothness, *, locality=0.0, spacing=None,
               gap=None, inplace=False):
    """THE model: ``(unary (*shape, K) float32, offsets-aligned weights)``.

    ``provider`` is a fitted node-potential provider, ``features`` a pixel
    :class:`~graphclust.Problem` (or what its ``unary`` takes), ``seeds`` flat scribble
    label indices (``-1`` none), ``pair_weights`` the contrast weights, and
    ``smoothness`` a number or ``"auto"`` (:func:`auto_smoothness`, decided on the
    colour costs). ``locality > 0`` adds ``locality * gap * distance_prior`` (``gap``
    the colour costs' :func:`evidence_gap` unless given): a label costs more the farther
    its nearest stroke, ``locality`` median evidences over the grid's diagonal. Returns
    ``unary, weights, smoothness, gap``; ``weights`` is a new ``(n_offsets, *shape)``
    float32 array, or ``pair_weights`` scaled in place with ``inplace=True``."""
    unary = provider.unary(features).astype(np.float32, copy=False).reshape(*shape, -1)
    if smoothness == "auto":
        smoothness = auto_smoothness(unary, pair_weights, seeds, offsets)
    if gap is None:
        gap = evidence_gap(unary, seeds)
    if locality > 0:
        unary += np.float32(locality * gap) * distance_prior(seeds, shape, unary.shape[-1], spacing)
    hard_scribbles(unary, seeds)
    if inplace:  # the caller gives its float32 weight buffer away
        weights = pair_weights
        weights *= np.float32(smoothness)
    else:
        weights = np.asarray(pair_weights, dtype=np.float32) * np.float32(smoothness)
    return unary, weights, float(smoothness), float(gap)


def solve_two_labels_once(provider, pixels, seeds, shape, offsets, pair_weights, smoothness):
    """:func:`grid_model` and :func:`solve_grid` for one two-label solve on the
    implicit grid (no EM round, no locality prior) in 8 bytes per pixel less: the
    ``(*shape, 2)`` unary is never stored. The terminal capacities ``t = U1 − U0``
    (hard scribbles as ``±inf``) are scored block by block into the array the search
    works in (:func:`~graphclust.inference.grid_cut_terminals`), and the unary part of
    the energy is scored again after the cut. The same energy, labels and smoothness
    as the two calls (the cut reads ``t`` in both). ``pixels`` is a :class:`GridPixels`;
    ``pair_weights`` is scaled in place. Returns ``labels (*shape) int64, energy,
    InferenceResult, smoothness, gap``."""
    from .inference import InferenceResult, grid_cut_terminals

    t = np.empty(pixels.X.shape[0], np.float32)
    for rows, u in _scored_blocks(provider, pixels):
        hard_scribbles(u, seeds[rows])
        np.subtract(u[:, 1], u[:, 0], out=t[rows])  # +inf: label 1 forbidden, -inf: label 0
    free = _free_sample(seeds)
    gap = float(np.median(np.abs(t[free]))) if free.size else 0.0  # evidence_gap for two labels
    del free
    if smoothness == "auto":
        smoothness = smoothness_for_gap(gap, pair_weights, shape, offsets)
    pair_weights *= np.float32(smoothness)
    labels, pairs, flow = grid_cut_terminals(t.reshape(shape), offsets, pair_weights)
    del t  # the search's residuals
    z = labels.reshape(-1).astype(np.int64)
    del labels
    energy = pairs.pair_energy(z)
    for rows, u in _scored_blocks(provider, pixels):  # the unary part again (a scribbled pixel keeps its label)
        energy += float(np.take_along_axis(u, z[rows, None], axis=1).sum(dtype=np.float64))
    info = {"moves": "cut", "n_moves": 1, "n_accepted": 1, "flow_value": flow, "engine": "grid_cut",
            "unary_stored": False}
    res = InferenceResult(labels=z, energy=energy, iterations=1, converged=True, history=[energy], info=info)
    return z.reshape(shape), energy, res, float(smoothness), gap


def _scored_blocks(provider, pixels):
    """``(rows, costs)`` over the pixels in blocks of ``_BLOCK``: ``costs`` float32
    ``(len(rows), K)``, the provider's unary of those pixels (a new array)."""
    n = pixels.X.shape[0]
    for start in range(0, n, _BLOCK):
        rows = slice(start, min(n, start + _BLOCK))
        yield rows, provider.unary(GridPixels(pixels.X[rows])).astype(np.float32, copy=False)


def grid_edges(shape, offsets, weights):
    """The explicit edge list ``(edges (m, 2) int64, w (m,) float64)`` of per-offset
    weights (pairs with weight 0 left out)."""
    strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1]
    index = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    es, ws = [], []
    for off, w in zip(offsets, weights):
        src, _ = _slices(off, shape)
        p = index[src].reshape(-1)
        wv = w[src].reshape(-1)
        keep = wv > 0
        p = p[keep]
        es.append(np.stack([p, p + int(np.dot(off, strides))], axis=1))
        ws.append(wv[keep].astype(np.float64))
    return np.concatenate(es), np.concatenate(ws)


def grid_energy(unary, offsets, weights):
    """The explicit :class:`Energy` of the grid model."""
    shape = unary.shape[:-1]
    edges, w = grid_edges(shape, offsets, weights)
    return Energy._from_unique_pairs(unary.reshape(-1, unary.shape[-1]), edges, w)


def solve_grid(unary, offsets, weights, *, engine="auto", init=None, reuse=None, options=None):
    """THE solve: minimise the grid model. ``engine="auto"``: graph cuts on the implicit
    grid (:func:`graphclust.inference.grid_cut`: the exact minimum cut for two labels,
    α-expansion otherwise; float32 flows, tens of bytes per pixel); any engine name of
    :data:`graphclust.inference.ENGINES` solves the explicit :class:`Energy` instead.
    ``reuse``: the ``InferenceResult`` of a solve with the same ``weights`` (an EM
    round changes only the unary), whose explicit energy is then reused. Returns
    ``(labels (*shape) int64, energy, InferenceResult)``; on the explicit path
    ``result.info["grid_energy"]`` is the explicit energy."""
    from .energy import check_unary_costs
    from .inference import GridEnergy, check_engine_options, grid_cut, solve

    options = dict(options or {})
    if engine == "auto":
        if init is not None:
            options["init"] = np.asarray(init).reshape(-1)
        check_engine_options("grid_cut", options, grid_cut)
        res = grid_cut(GridEnergy(unary, offsets, weights), **options)
        res.info.setdefault("engine", "grid_cut")
        return res.labels.reshape(unary.shape[:-1]), float(res.energy), res
    if reuse is not None and "grid_energy" in reuse.info:
        energy = reuse.info["grid_energy"]
        U = unary.reshape(-1, unary.shape[-1])
        check_unary_costs(U)
        energy.unary[...] = U
    else:
        energy = grid_energy(unary, offsets, weights)
    if init is not None and engine != "mincut":
        options["init"] = np.asarray(init).reshape(-1)
    res = solve(energy, engine, **options)
    res.info.setdefault("engine", engine)
    res.info["grid_energy"] = energy
    return res.labels.reshape(unary.shape[:-1]), float(res.energy), res



class GridSession:
    """A grid model kept alive for interactive re-solves: :meth:`update_unary` on a few
    pixels, then a warm :meth:`solve` (dynamic graph cuts on the implicit grid through
    :class:`~graphclust.inference.GridCutSolver`: the last flow is resumed for two
    labels, each expansion move's flow for more)."""

    def __init__(self, unary, offsets, weights):
        from .inference import GridCutSolver, GridEnergy

        self.shape = unary.shape[:-1]
        self.solver = GridCutSolver(GridEnergy(unary, offsets, weights))

    def update_unary(self, index, costs):
        """``index`` flat pixel indices, ``costs`` ``(len(index), K)``."""
        self.solver.update_unary(index, costs)

    def solve(self):
        res = self.solver.solve()
        return res.labels.reshape(self.shape), float(res.energy), res
