"""Graph cuts on implicit N-d pixel grids: a Potts energy with no per-edge arrays.

An :class:`~graphclust.energy.Energy` on a 2048² image holds edge index arrays, a CSR
adjacency and float64 weights, and the max-flow of :func:`~graphclust.inference.mincut`
builds per-arc arrays on top: about 1–1.5 KB per pixel in all. On a grid none of that
is needed. The neighbours of a pixel are ``p + offset`` for a few fixed offsets, so a
:class:`GridEnergy` keeps only the unary volume and one weight array per offset, and
:func:`grid_cut` runs the Boykov–Kolmogorov max-flow with neighbours computed from
the offsets (flat index ``p ± stride``):

* per (pixel, offset) one float32 *flow* on the pair ``(p, p + offset)``; the two
  residual capacities are ``w − f`` and ``w + f``, read from the weight and the flow,
  so both directions of an edge cost 4 bytes of solver memory;
* per pixel a float32 signed terminal residual (``> 0`` from the source, ``< 0`` to
  the sink), the parent as an int8 direction code, the tree as an int8, an int32
  timestamp, a saturating uint8 distance, an int32 link of the active queue and an
  int32 slot of the orphan stack.

For 2-D 8-connected grids with two labels that is 35 bytes per pixel of solver state,
plus the energy itself (float32 unaries and weights: 24 bytes per pixel), 59 in all;
3-D 26-connected grids take 131 bytes per voxel (71 of them the solver's).
``docs/benchmarks/grid_cut.md`` has the measured figures.

Two labels are one exact minimum cut (the energy is submodular); more labels run
α-expansion, whose moves on Potts terms are submodular and solved exactly by the same
max-flow. :class:`GridCutSolver` keeps the flows between solves (for more labels, one
per move), so that after a stroke changed a few unary rows each cut resumes from its
previous flow (dynamic graph cuts, Kohli & Torr 2007).
"""

import numbers
import time

import numpy as np
from numba import njit

from .._utils import check_float, check_int, progress_bar
from ..errors import InvalidConstraintError, InvalidParameterError
from .base import InferenceResult, check_unary_update

__all__ = ["GridEnergy", "grid_cut", "grid_cut_terminals", "GridCutSolver", "grid_offsets"]

#: a move is kept only when it lowers the energy by more than this, relative (as α-expansion)
REL_TOL = 1e-12
_TERMINAL, _ORPHAN, _FREE = -1, -2, -3
_MAX_OFFSETS = 63  # direction codes (2 per offset) must fit an int8
_DIST_MAX = 255  # uint8 distances saturate here (a heuristic only: trees stay far shallower, 20 at 2048²)
_TS_LIMIT = 2**31 - 4  # int32 timestamps: all made stale when the clock gets here


# --------------------------------------------------------------------------- neighbourhoods
def grid_offsets(ndim, connectivity):
    """The positive half of a standard grid neighbourhood.

    Parameters
    ----------
    ndim : int
        Number of grid axes (1, 2, 3, ...).
    connectivity : int
        Number of neighbours of an inner pixel: 4 or 8 in 2-D, 6, 18 or 26 in 3-D
        (``2·ndim`` or ``3**ndim − 1`` in any dimension, and 2 in 1-D).

    Returns
    -------
    list of tuple of int
        One offset per neighbour pair, ``connectivity // 2`` of them, each with its
        first non-zero coordinate positive; axis-aligned offsets come first.

    Raises
    ------
    InvalidParameterError
        A connectivity the dimension does not have.

    Examples
    --------
    >>> grid_offsets(2, 4)
    [(0, 1), (1, 0)]
    >>> grid_offsets(2, 8)
    [(0, 1), (1, 0), (1, 1), (1, -1)]
    >>> len(grid_offsets(3, 6)), len(grid_offsets(3, 18)), len(grid_offsets(3, 26))
    (3, 9, 13)
    """
    ndim = check_int(ndim, "ndim", low=1)
    allowed = {}  # connectivity -> largest number of non-zero coordinates
    count = 0
    for r in range(1, ndim + 1):
        count += _n_with_support(ndim, r)
        allowed.setdefault(2 * count, r)
    if isinstance(connectivity, bool) or not isinstance(connectivity, numbers.Integral) \
            or int(connectivity) not in allowed:
        raise InvalidParameterError(
            f"connectivity must be one of {sorted(allowed)} for a {ndim}-D grid, got {connectivity!r}")
    import itertools

    out = []
    for support in range(1, allowed[int(connectivity)] + 1):
        found = [v for v in itertools.product((0, 1, -1), repeat=ndim)
                 if sum(1 for x in v if x) == support and [x for x in v if x][0] > 0]
        # axis-aligned: the last axis first, (0, 1) then (1, 0); diagonals: (1, 1) before (1, -1)
        found.sort(key=(lambda v: tuple(abs(x) for x in v)) if support == 1 else (lambda v: tuple(-x for x in v)))
        out.extend(found)
    return out


def _n_with_support(ndim, s):
    """Offsets in the positive half with exactly ``s`` non-zero coordinates."""
    from math import comb

    return comb(ndim, s) * 2 ** (s - 1)


# --------------------------------------------------------------------------- the energy
class GridEnergy:
    """A Potts energy on an N-d pixel grid, kept implicit (no per-edge arrays).

    .. math::

        E(z) = \\sum_p U_{p, z_p} + \\sum_i \\sum_p w^{(i)}_p \\, [z_p \\ne z_{p + o_i}]

    over the pixels ``p`` of the grid and the offsets ``o_i``; pairs whose second pixel
    is outside the grid do not exist.

    Parameters
    ----------
    unary : array-like of shape (*shape, n_labels)
        Cost of giving pixel ``p`` label ``k``; float32 is kept as float32 (half the
        memory), anything else becomes float64. ``+inf`` forbids a label (a hard
        scribble). Held by reference when already float32/float64 and C-contiguous:
        do not change it while the energy is in use (:class:`GridCutSolver` copies it).
    offsets : sequence of tuple of int
        The positive half of the neighbourhood, each of length ``ndim`` and not zero,
        e.g. ``[(0, 1), (1, 0)]`` for a 4-connected image (see :func:`grid_offsets`).
    weights : sequence
        One entry per offset: an array of the grid's shape (``weights[i][p]`` is the
        weight of the pair ``(p, p + offsets[i])``; entries whose neighbour is outside
        the grid are ignored) or a number (the same weight everywhere). Finite and
        ``>= 0``; stored as float32 in one buffer (a copy), except that a float32
        C-contiguous array of shape ``(n_offsets, *shape)`` is used as it is (no copy,
        so it must not change while the energy is in use).

    Attributes
    ----------
    unary : ndarray of shape (*shape, n_labels)
    offsets : ndarray of shape (n_offsets, ndim), dtype int64
    shape : tuple of int
    ndim, n_pixels, n_labels, n_offsets : int
    nbytes : int
        Memory held: the unaries and the weight buffer.

    Raises
    ------
    InvalidParameterError
        A unary of fewer than 2 dimensions or with NaN / ``-inf`` (the entry is named),
        an offset of the wrong length, zero or not integral, a weight array of the wrong
        shape, a NaN, infinite or negative weight (offset and pixel named), or a
        weight count that differs from the offset count.
    InvalidConstraintError
        A pixel where every label is forbidden (the pixel is named).

    See Also
    --------
    grid_cut : minimise it.
    GridEnergy.to_energy : the same energy as an explicit :class:`~graphclust.energy.Energy`.

    Examples
    --------
    A 2×3 image, two labels, 4-connected, uniform weight 0.5 along rows and a weight
    array down the columns:

    >>> import numpy as np
    >>> U = np.zeros((2, 3, 2)); U[:, 2] = [1.0, 0.0]
    >>> G = GridEnergy(U, [(0, 1), (1, 0)], [0.5, np.full((2, 3), 2.0)])
    >>> G.shape, G.n_labels, G.n_offsets
    ((2, 3), 2, 2)
    >>> G.evaluate([[0, 0, 1], [0, 0, 1]]), G.evaluate(np.zeros((2, 3), int))
    (1.0, 2.0)
    >>> G.to_energy().evaluate([0, 0, 1, 0, 0, 1])
    1.0
    """

    def __init__(self, unary, offsets, weights):
        U = np.asarray(unary)
        if U.dtype != np.float32:
            U = np.asarray(U, dtype=np.float64)
        U = np.ascontiguousarray(U)
        if U.ndim < 2 or 0 in U.shape:
            raise InvalidParameterError(
                f"unary must have shape (*shape, n_labels) with at least one grid axis and no empty axis, "
                f"got {U.shape}")
        _check_unary(U)
        self.unary = U
        shape = U.shape[:-1]
        ndim = len(shape)
        try:
            offs = [tuple(o) for o in offsets]
        except TypeError:
            raise InvalidParameterError(f"offsets must be a sequence of integer tuples, got {offsets!r}") from None
        if not offs:
            raise InvalidParameterError("offsets must hold at least one offset")
        if len(offs) > _MAX_OFFSETS:
            raise InvalidParameterError(f"at most {_MAX_OFFSETS} offsets are supported, got {len(offs)}")
        for i, o in enumerate(offs):
            if len(o) != ndim:
                raise InvalidParameterError(
                    f"offsets[{i}] = {o!r} has length {len(o)}, the grid has {ndim} axes (unary shape {U.shape})")
            if not all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in o):
                raise InvalidParameterError(f"offsets[{i}] = {o!r} must hold integers")
            if not any(o):
                raise InvalidParameterError(f"offsets[{i}] = {o!r} is zero; a pixel is not its own neighbour")
        self.offsets = np.array(offs, dtype=np.int64).reshape(len(offs), ndim)
        if (isinstance(weights, np.ndarray) and weights.shape == (len(offs), *shape)
                and weights.dtype == np.float32 and weights.flags.c_contiguous):
            # one float32 buffer already: used as it is (no copy; do not change it while in use)
            for i, a in enumerate(weights):
                _check_weights(a, i, shape)
            self._wbase = np.arange(len(offs), dtype=np.int64) * int(np.prod(shape))
            self._wmul = np.ones(len(offs), dtype=np.int64)
            self._w = weights.reshape(-1)
            self.shape = tuple(int(s) for s in shape)
            return
        if isinstance(weights, np.ndarray) and weights.ndim == ndim + 1 and weights.shape[0] == len(offs):
            weights = list(weights)
        try:
            weights = list(weights)
        except TypeError:
            raise InvalidParameterError(
                f"weights must be a sequence with one entry per offset, got {type(weights).__name__}") from None
        if len(weights) != len(offs):
            raise InvalidParameterError(f"{len(offs)} offsets but {len(weights)} weights; give one weight array "
                                        "(or number) per offset")
        n = int(np.prod(shape))
        sizes = []
        for i, w in enumerate(weights):
            a = np.asarray(w)
            if a.ndim == 0:
                sizes.append(1)
            elif a.shape == shape:
                sizes.append(n)
            else:
                raise InvalidParameterError(
                    f"weights[{i}] must be a number or an array of the grid's shape {shape}, got shape {a.shape}")
        self._wbase = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self._wmul = np.array([1 if s > 1 else 0 for s in sizes], dtype=np.int64)
        self._w = np.empty(int(sum(sizes)), dtype=np.float32)
        for i, w in enumerate(weights):
            a = np.asarray(w)
            _check_weights(a, i, shape)
            seg = self._w[self._wbase[i]:self._wbase[i] + sizes[i]]
            with np.errstate(over="ignore"):
                seg[...] = a.reshape(-1)
            if not np.isfinite(seg).all():
                raise InvalidParameterError(
                    f"weights[{i}] has values beyond the float32 range ({np.abs(a).max()!r}); rescale the energy")
        self.shape = tuple(int(s) for s in shape)

    # ------------------------------------------------------------------ facts
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def n_pixels(self):
        return int(np.prod(self.shape))

    @property
    def n_labels(self):
        return self.unary.shape[-1]

    @property
    def n_offsets(self):
        return len(self.offsets)

    @property
    def weights(self):
        """One entry per offset: a float32 array of the grid's shape (a view of the
        internal buffer), or a float for a uniform weight."""
        out = []
        for i in range(self.n_offsets):
            b = self._wbase[i]
            out.append(self._w[b:b + self.n_pixels].reshape(self.shape) if self._wmul[i] else float(self._w[b]))
        return out

    @property
    def nbytes(self):
        return int(self.unary.nbytes + self._w.nbytes)

    def __repr__(self):
        return (f"GridEnergy(shape={self.shape}, n_labels={self.n_labels}, offsets={self.offsets.tolist()}, "
                f"{self.nbytes / 2**20:.1f} MiB)")

    # ------------------------------------------------------------------ internals
    def _strides(self):
        """Flat index step of each offset (C order)."""
        st = np.cumprod((self.shape[1:] + (1,))[::-1])[::-1].astype(np.int64)
        return self.offsets @ st

    def _kernel_args(self):
        """``(shape, step, doff)`` per direction: directions ``0..n_off-1`` are the
        offsets, ``n_off + i`` the opposite of offset ``i``."""
        step = self._strides()
        return (np.array(self.shape, np.int64), np.concatenate([step, -step]),
                np.ascontiguousarray(np.concatenate([self.offsets, -self.offsets])))

    def _pair_slices(self, i):
        """Slices ``(src, dst)`` of the grid such that ``dst`` is ``src + offsets[i]``."""
        src, dst = [], []
        for o, s in zip(self.offsets[i], self.shape):
            o = int(o)
            if o >= 0:
                src.append(slice(0, max(s - o, 0)))
                dst.append(slice(min(o, s), s))
            else:
                src.append(slice(min(-o, s), s))
                dst.append(slice(0, max(s + o, 0)))
        return tuple(src), tuple(dst)

    def check_labels(self, labels, name="labels"):
        """``labels`` (grid-shaped or flat) as a flat int64 array, validated."""
        z = np.asarray(labels)
        if z.shape == self.shape:
            z = z.reshape(-1)
        if z.shape != (self.n_pixels,):
            raise InvalidParameterError(
                f"{name} must have the grid's shape {self.shape} or ({self.n_pixels},), got {z.shape}")
        if z.size and not np.issubdtype(z.dtype, np.integer):
            zf = z.astype(np.float64)
            bad = np.flatnonzero(~np.isfinite(zf) | (zf != np.round(np.nan_to_num(zf))))
            if len(bad):
                raise InvalidParameterError(f"{name}[{self._where(bad[0])}] = {z[bad[0]]!r} is not an integer label")
        z = z.astype(np.int64, copy=False)  # read only: a copy would double the labels' memory
        bad = np.flatnonzero((z < 0) | (z >= self.n_labels))
        if len(bad):
            raise InvalidParameterError(
                f"{name}[{self._where(bad[0])}] = {z[bad[0]]} is not a label in [0, {self.n_labels})")
        return z

    def _where(self, flat):
        return ", ".join(str(int(c)) for c in np.unravel_index(int(flat), self.shape))

    # ------------------------------------------------------------------ scoring
    def evaluate(self, labels):
        """Energy of a labelling, in float64 (whatever the storage precision).

        Parameters
        ----------
        labels : array-like of int, shape ``shape`` or (n_pixels,)

        Returns
        -------
        float
            ``inf`` when a pixel has a forbidden label.
        """
        z = self.check_labels(labels).reshape(self.shape)
        return float(np.take_along_axis(self.unary, z[..., None], axis=-1).sum(dtype=np.float64)) \
            + self.pair_energy(z)

    def pair_energy(self, labels):
        """The pair part of :meth:`evaluate`: the weight of the pairs whose labels differ,
        in float64."""
        z = self.check_labels(labels).reshape(self.shape)
        total = 0.0
        for i, w in enumerate(self.weights):
            src, dst = self._pair_slices(i)
            diff = z[src] != z[dst]
            if isinstance(w, float):
                total += w * float(np.count_nonzero(diff))
            else:
                total += float(np.sum(w[src], where=diff, dtype=np.float64))
        return float(total)

    def to_energy(self):
        """The same energy as an explicit :class:`~graphclust.energy.Energy`: node
        ``p`` is the flat (C-order) index of a pixel, one edge per in-grid pair of
        positive weight. Costs O(n_pixels · n_offsets) memory: for tests and for the
        engines that need an edge list."""
        from ..energy import Energy

        idx = np.arange(self.n_pixels, dtype=np.int64).reshape(self.shape)
        edges, weights = [], []
        for i, w in enumerate(self.weights):
            src, dst = self._pair_slices(i)
            wi = np.broadcast_to(np.float64(w), idx[src].shape) if isinstance(w, float) else w[src]
            keep = (wi > 0).ravel()
            edges.append(np.stack([idx[src].ravel()[keep], idx[dst].ravel()[keep]], 1))
            weights.append(np.asarray(wi, dtype=np.float64).ravel()[keep])
        return Energy(self.unary.reshape(-1, self.n_labels), np.concatenate(edges), np.concatenate(weights))


def _check_unary(U):
    """NaN / -inf refused, naming the entry; a pixel with every label forbidden refused
    (cheap reductions first, the search only on failure)."""
    from ..energy import check_unary_costs

    low = U.min()
    if np.isnan(low) or np.isneginf(low):
        check_unary_costs(U)
    if np.isposinf(U.max()):
        _check_feasible(U)


def _check_feasible(U, rows=None):
    allinf = np.isinf(U).all(axis=-1)
    if allinf.any():
        where = tuple(int(c) for c in np.argwhere(allinf)[0])
        if rows is not None:
            raise InvalidConstraintError(f"costs[{where[0]}] (pixel {rows[where[0]]}) forbids every label; "
                                         "no labelling is feasible")
        raise InvalidConstraintError(f"pixel {where} has an infinite cost for every label; no labelling is feasible")


def _check_weights(a, i, shape):
    if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
        raise InvalidParameterError(f"weights[{i}] must be real numbers, got dtype {a.dtype}")
    bad = ~np.isfinite(a) | (a < 0)
    if bad.any():
        if a.ndim == 0:
            raise InvalidParameterError(f"weights[{i}] is {a.item()!r}; Potts weights must be finite and >= 0")
        where = tuple(int(c) for c in np.argwhere(bad)[0])
        raise InvalidParameterError(
            f"weights[{i}] at pixel {where} is {a[where].item()!r}; Potts weights must be finite and >= 0")


# --------------------------------------------------------------------------- the engine
def grid_cut(genergy, *, init=None, max_iter=100, tol=1e-7, progress=False, callback=None):
    """Minimise a :class:`GridEnergy` by graph cuts on the implicit grid.

    Two labels: one minimum s–t cut, which is the exact minimum (the Potts energy is
    submodular). More labels: α-expansion (Boykov, Veksler & Zabih 2001): every cycle
    visits the labels in order ``0..n_labels-1``; for label α one minimum cut finds the
    best labelling in which each pixel keeps its label or takes α, and the move is kept
    when it lowers the energy. Both use a Boykov–Kolmogorov max-flow whose neighbours
    come from the offsets and whose state is float32 flows per (pixel, offset) plus a
    few bytes per pixel (module docstring), so the memory is a small multiple of the
    energy's own.

    Parameters
    ----------
    genergy : GridEnergy
    init : array-like of int, shape ``shape`` or (n_pixels,), or None, default=None
        Starting labelling of α-expansion (ignored for two labels, whose cut does not
        depend on it). ``None`` starts from the unary argmin (ties to the lowest label).
        Pixels whose ``init`` label is forbidden (``+inf``) start from their unary
        argmin instead.
    max_iter : int, default=100
        Maximum number of cycles over the labels.
    tol : float, default=1e-7
        Stop when a cycle lowers the energy by at most ``tol · |E|``.
    progress : bool, default=False
        Show a tqdm bar over the cycles.
    callback : callable or None, default=None
        ``callback(cycle, labels, energy_value)`` after every cycle (after the cut for
        two labels); returning ``True`` stops the run.

    Returns
    -------
    InferenceResult
        ``labels`` flat, shape (n_pixels,), int64, in C order of the grid (the node
        order of :meth:`GridEnergy.to_energy`, as for every engine; use
        ``labels.reshape(genergy.shape)`` for the label image). ``energy`` is
        :meth:`GridEnergy.evaluate` (float64). ``info`` holds ``moves`` (``"cut"`` or
        ``"expansion"``), ``n_moves``, ``n_accepted``, ``flow_value`` (two labels) and
        ``solver_bytes`` (the max-flow's arrays). ``lower_bound`` is None: the cut is
        computed in float32.

    Raises
    ------
    InvalidParameterError
        Not a GridEnergy, or a bad ``init``, ``max_iter`` or ``tol``.

    See Also
    --------
    GridCutSolver : the same engine kept alive for warm re-solves.
    graphclust.inference.mincut, graphclust.inference.alpha_expansion : the explicit
        float64 engines on ``genergy.to_energy()``.

    Notes
    -----
    **Precision.** Residual capacities are float32. The cut found is a minimum cut of the
    capacities as rounded to float32 (saturated arcs are set to exactly zero residual),
    so its energy equals the float64 optimum up to float32 rounding (relative ~1e-6 of
    the energy scale; the tests compare with the float64 engines at rel 1e-5).
    Energies are always recomputed in float64 by :meth:`GridEnergy.evaluate`. Forbidden
    labels (``+inf``) are infinite terminal capacities and are never chosen.

    **Moves.** An expansion move's pair term on ``(p, q)`` is ``w·[l_p ≠ l_q]`` with
    ``l ∈ {z, α}``; it becomes a symmetric arc of capacity ``w`` (both pixels share a
    label other than α), ``w/2`` (different labels, neither α) or nothing (one of them
    is α), plus terminal terms, so the move's capacities are computed from the weights
    and the current labels on the fly, never stored. Label order, acceptance rule and
    stopping rule are those of :func:`~graphclust.inference.alpha_expansion`.

    **Memory** (bytes per pixel, ``m`` offsets): ``4m`` (flows) ``+ 19`` (terminal
    residual, tree, parent, timestamp, distance, queue link, orphan slot), plus for
    more labels the labelling (int32) and the candidate one. For the energy itself:
    ``4·n_labels`` or ``8·n_labels`` (float32/float64 unaries) ``+ 4m`` (weight arrays).

    References
    ----------
    Y. Boykov, V. Kolmogorov, "An experimental comparison of min-cut/max-flow algorithms
    for energy minimization in vision", IEEE TPAMI 26(9), 2004. doi:10.1109/TPAMI.2004.60

    Y. Boykov, O. Veksler, R. Zabih, "Fast approximate energy minimization via graph
    cuts", IEEE TPAMI 23(11), 2001. doi:10.1109/34.969114

    Examples
    --------
    A 1×6 strip, two labels, hard scribbles at both ends:

    >>> import numpy as np
    >>> inf = np.inf
    >>> U = np.array([[[0, inf], [0.4, 0.6], [0.6, 0.4], [0.6, 0.4], [0.4, 0.6], [inf, 0]]])
    >>> G = GridEnergy(U, grid_offsets(2, 4), [1.0, 0.0])
    >>> result = grid_cut(G)
    >>> result.labels.reshape(G.shape), round(result.energy, 6)
    (array([[0, 0, 1, 1, 1, 1]]), 2.8)
    """
    t0 = time.perf_counter()
    if not isinstance(genergy, GridEnergy):
        raise InvalidParameterError(f"grid_cut needs a GridEnergy, got {type(genergy).__name__}")
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_float(tol, "tol", low=0.0)
    core = _GridCore(genergy)
    if genergy.n_labels <= 2:
        if init is not None:
            genergy.check_labels(init, "init")
        res = core.binary(genergy.unary.reshape(-1, genergy.n_labels))
        if callback is not None:
            callback(1, res.labels.copy(), res.energy)
    else:
        z = core.initial_labels(init)
        res = core.expand(z, max_iter=max_iter, tol=tol, progress=progress, callback=callback, stale=None)
    res.seconds = time.perf_counter() - t0
    return res


def grid_cut_terminals(terminals, offsets, weights):
    """The minimum cut of a two-label grid energy given by its terminal capacities,
    for callers that never store the unary.

    A two-label Potts energy on a grid is, up to a constant, its pair weights and one
    number per pixel, ``t = U[..., 1] − U[..., 0]``: the cut needs nothing else. A
    one-shot segmentation computes ``t`` block by block from its colour model and
    hands it over, so that the ``(*shape, 2)`` unary is never stored during the search
    (8 bytes per pixel less than :func:`grid_cut`, whose energy keeps it for
    :meth:`GridEnergy.evaluate`).

    Parameters
    ----------
    terminals : ndarray of float32, the grid's shape, C-contiguous
        ``U[..., 1] − U[..., 0]``; ``+inf`` forbids label 1, ``-inf`` label 0.
        **Overwritten**: the search keeps its terminal residuals in it.
    offsets, weights
        As for :class:`GridEnergy`.

    Returns
    -------
    labels : ndarray of bool, the grid's shape
        ``True`` where the minimum cut gives label 1 (ties to label 0, as
        :func:`grid_cut`).
    pairs : GridEnergy
        The pair part: its unary is zero, so ``pairs.pair_energy(labels)`` (or
        ``evaluate``) is the pair energy of any labelling (``np.zeros`` pages are
        mapped when first written, so this unary, never written, takes no memory).
    flow : float
        The flow value: the capacity of the cut beyond each pixel's cheaper label (in
        float32 arithmetic).

    Examples
    --------
    >>> t = np.array([[-1.0, -1.0, 0.5, 2.0]], dtype=np.float32)  # pixels 0, 1 prefer label 1
    >>> labels, pairs, flow = grid_cut_terminals(t, [(0, 1)], [0.8])
    >>> labels.astype(int).tolist(), round(pairs.evaluate(labels.astype(int)), 6), round(flow, 6)
    ([[1, 1, 0, 0]], 0.8, 0.8)
    """
    t = terminals
    if not (isinstance(t, np.ndarray) and t.dtype == np.float32 and t.flags.c_contiguous and t.flags.writeable):
        raise InvalidParameterError("terminals must be a writeable C-contiguous float32 array (it is overwritten)")
    if np.isnan(t.min()) or np.isnan(t.max()):
        where = tuple(int(c) for c in np.argwhere(np.isnan(t))[0])
        raise InvalidParameterError(f"terminals at pixel {where} is NaN")
    pairs = GridEnergy(np.zeros((*t.shape, 2), np.float32), offsets, weights)
    core = _GridCore(pairs)
    state = _GridFlow(core.n, core.m, tr=t.reshape(-1))
    flow = core.cut(state)
    tree = state.tree
    del state  # the flows and the search state go before the labels come
    return (tree == 2).reshape(t.shape), pairs, float(flow)


class _GridCore:
    """What the cuts on one grid share: the grid's kernel arguments and its energy."""

    def __init__(self, genergy, unary=None):
        self.g = genergy
        self.U = (genergy.unary if unary is None else unary).reshape(-1, genergy.n_labels)
        self.shape_a, self.step, self.doff = genergy._kernel_args()
        self.n = genergy.n_pixels
        self.m = genergy.n_offsets

    def new_state(self, scratch=None):
        return _GridFlow(self.n, self.m, scratch)

    def initial_labels(self, init):
        U = self.U
        if init is None:
            return np.argmin(U, axis=1).astype(np.int32)
        z = self.g.check_labels(init, "init").astype(np.int32)
        bad = np.flatnonzero(np.isinf(U[np.arange(self.n), z]))
        if len(bad):
            z[bad] = np.argmin(U[bad], axis=1)
        return z

    def energy(self, z):
        return _grid_energy(self.U, self.g._w, self.g._wbase, self.g._wmul, self.shape_a, self.step, self.doff,
                            self.m, z)

    # ---- two labels
    def binary(self, U, state=None, changed=None):
        """The exact cut for two labels; ``state`` (a :class:`_GridFlow`) is resumed when
        given and already holds a flow (``changed``: the pixels whose unaries changed)."""
        n = self.n
        info = {"moves": "cut", "n_moves": 1, "n_accepted": 1}
        if U.shape[1] == 1:
            labels = np.zeros(n, np.int64)
            return InferenceResult(labels=labels, energy=self.g.evaluate(labels), iterations=1, info=info)
        keep = state is not None
        if state is None:
            state = self.new_state()
        warm = keep and state.used
        if warm:
            idx = np.asarray(changed, np.int64)
            t_new = (U[idx, 1].astype(np.float64) - U[idx, 0])
            _grid_update(idx, t_new, state.f, state.tr, state.tree, state.parent, state.ts, state.dist,
                         state.clock, state.nxt, state.qstate, state.orphans, state.norph, self.shape_a, self.step, self.doff,
                         self.m)
        else:
            with np.errstate(invalid="ignore", over="ignore"):  # beyond float32: a hard seed
                np.subtract(U[:, 1], U[:, 0], out=state.tr, casting="unsafe")
        flow = self.cut(state, warm)
        state.flow_value += flow
        info["flow_value"] = float(state.flow_value)
        info["solver_bytes"] = state.nbytes
        tree = state.tree
        if not keep:
            del state  # free the flows before the labels are allocated
        labels = (tree == 2).astype(np.int64)
        del tree
        value = self.g.evaluate(labels)
        return InferenceResult(labels=labels, energy=value, iterations=1, converged=True, history=[value],
                               info=info)

    def cut(self, state, warm=False):
        """The two-label search from ``state`` (its terminal residuals ``tr`` set;
        ``warm``: a resumed flow already repaired); returns the flow it adds."""
        if not warm:
            state.reset()
            _grid_roots(state.tr, state.tree, state.parent, state.dist, state.nxt, state.qstate)
        flow = _grid_bk(self.shape_a, self.step, self.doff, self.m, self.g._w, self.g._wbase, self.g._wmul,
                        np.empty(0, np.int32), 0, state.f, state.tr, state.tree, state.parent, state.ts, state.dist,
                        state.clock, state.nxt, state.qstate, state.orphans, state.norph)
        state.used = True
        return flow

    # ---- more labels
    def expand(self, z, *, max_iter, tol, progress, callback, stale, flows=None):
        """α-expansion from the labelling ``z`` (int32, in place). ``flows`` (a
        :class:`_MoveFlows`) keeps every move's flow for its next cut; None shares one
        state between the moves, each cut starting from zero."""
        K = self.U.shape[1]
        st = self.new_state() if flows is None else None
        e_cur = self.energy(z)
        if stale is None:
            stale = np.zeros(K, bool)
        history = []
        n_moves = n_accepted = n_touched = 0
        converged = False
        new = np.empty_like(z)
        bar = progress_bar(progress, max_iter, "grid expansion", leave=False)
        it = 0
        try:
            for it in range(1, max_iter + 1):
                e_start = e_cur
                for a in range(K):
                    if stale[a]:
                        continue
                    if flows is not None:
                        st = flows.state(a)
                    if flows is not None and st.used:
                        n_touched += flows.rebase(a, z)
                    else:
                        st.f.fill(0.0)
                        _fill_expansion(self.U, self.g._w, self.g._wbase, self.g._wmul, self.shape_a, self.step,
                                        self.doff, self.m, z, a, st.tr)
                        st.reset()
                        _grid_roots(st.tr, st.tree, st.parent, st.dist, st.nxt, st.qstate)
                        st.used = True
                        if flows is not None:
                            flows.started(a, z)
                    _grid_bk(self.shape_a, self.step, self.doff, self.m, self.g._w, self.g._wbase, self.g._wmul,
                             z, a, st.f, st.tr, st.tree, st.parent, st.ts, st.dist, st.clock, st.nxt, st.qstate,
                             st.orphans, st.norph)
                    n_moves += 1
                    stale[a] = True
                    changed = _apply_move(z, st.tree, a, new)
                    if not changed:
                        continue
                    e_new = self.energy(new)
                    if e_new < e_cur - REL_TOL * abs(e_cur):
                        z, new = new, z
                        e_cur = e_new
                        n_accepted += 1
                        stale[:] = False
                        stale[a] = True
                history.append(e_cur)
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(energy=e_cur, refresh=False)
                if stale.all() or e_start - e_cur <= tol * abs(e_start):
                    converged = True
                if callback is not None and callback(it, z.astype(np.int64), e_cur):
                    break
                if converged:
                    break
        finally:
            if bar is not None:
                bar.close()
        solver_bytes = (st.nbytes if flows is None else flows.nbytes) + new.nbytes + z.nbytes
        del st, new
        labels = z.astype(np.int64)
        info = {"moves": "expansion", "n_moves": n_moves, "n_accepted": n_accepted, "solver_bytes": solver_bytes}
        if flows is not None:
            info["n_touched"] = n_touched  # pixels whose capacities the resumed cuts had to update
        return InferenceResult(labels=labels, energy=self.g.evaluate(labels), iterations=len(history),
                               converged=converged, history=history, info=info)


class _GridFlow:
    """A max-flow's state on a grid: float32 flows per (pixel, offset), float32 signed
    terminal residuals, the two search trees (tree, parent direction, timestamp,
    distance) and the scratch of the search (queue links, orphan stack)."""

    def __init__(self, n, m, scratch=None, tr=None):
        self.f = np.zeros(n * m, np.float32)
        self.tr = np.zeros(n, np.float32) if tr is None else tr  # given: the caller's terminal capacities
        self.tree = np.zeros(n, np.int8)
        self.parent = np.full(n, _FREE, np.int8)
        self.ts = np.zeros(n, np.int32)
        self.dist = np.zeros(n, np.uint8)
        # the queue links and the orphan stack are empty between searches: flows kept
        # side by side share them (``scratch``, another state)
        self.nxt = np.full(n, -1, np.int32) if scratch is None else scratch.nxt
        self.orphans = np.empty(n, np.int32) if scratch is None else scratch.orphans
        self.qstate = np.full(2, -1, np.int64)  # head, tail of the active queue
        self.norph = np.zeros(1, np.int64)
        self.clock = np.zeros(1, np.int64)
        self.used = False
        self.flow_value = 0.0

    def reset(self):
        self.tree.fill(0)
        self.parent.fill(_FREE)
        self.ts.fill(0)
        self.dist.fill(0)
        self.nxt.fill(-1)
        self.qstate[:] = -1
        self.norph[0] = 0
        self.clock[0] = 0
        self.flow_value = 0.0

    @property
    def nbytes(self):
        return self.own_bytes + self.nxt.nbytes + self.orphans.nbytes

    @property
    def own_bytes(self):
        return sum(a.nbytes for a in (self.f, self.tr, self.tree, self.parent, self.ts, self.dist))


class _MoveFlows:
    """The flow of every α-expansion move, kept for the move's next cut, with the
    labelling it was computed for (``zs``, int32) and the unary version it saw. The
    queue links, the orphan stack and the marks, empty between searches, are shared,
    as is ``uver`` (per pixel, the version of its last unary change)."""

    def __init__(self, core):
        self.core = core
        self.states = {}
        self.labels = {}
        self.seen = {}
        n = core.n
        self.version = 0
        self.uver = np.zeros(n, np.int32)
        self.mark = np.zeros(n, np.int8)
        self.touched = np.empty(n, np.int32)

    def state(self, a):
        st = self.states.get(a)
        if st is None:
            st = self.states[a] = self.core.new_state(next(iter(self.states.values()), None))
        return st

    def unary_changed(self, idx):
        self.version += 1
        self.uver[idx] = self.version

    def started(self, a, z):
        self.labels[a] = z.copy()
        self.seen[a] = self.version

    def rebase(self, a, z):
        c, st = self.core, self.states[a]
        g = c.g
        nt = _grid_rebase(c.U, g._w, g._wbase, g._wmul, c.shape_a, c.step, c.doff, c.m, z, self.labels[a], self.uver,
                          self.seen[a], a, st.f, st.tr, st.tree, st.parent, st.ts, st.dist, st.clock, st.nxt,
                          st.qstate, st.orphans, st.norph, self.mark, self.touched)
        self.seen[a] = self.version
        return nt

    @property
    def nbytes(self):
        states = list(self.states.values())
        if not states:
            return 0
        shared = states[0].nxt.nbytes + states[0].orphans.nbytes + self.uver.nbytes + self.mark.nbytes \
            + self.touched.nbytes
        return sum(st.own_bytes for st in states) + sum(v.nbytes for v in self.labels.values()) + shared


# --------------------------------------------------------------------------- warm re-solves
class GridCutSolver:
    """:func:`grid_cut` kept alive between solves, for interactive re-solves.

    The solver holds a private copy of the unaries and, for two labels, the maximum
    flow of the last cut (flows, terminal residuals and search trees). After
    :meth:`update_unary` changed a few pixels (a user drew a stroke), :meth:`solve`
    moves that flow to the new terminal capacities and resumes the Boykov–Kolmogorov
    search from the repaired trees (dynamic graph cuts, Kohli & Torr 2007), so the work
    follows what changed. For more labels the solve restarts α-expansion from the last
    labelling, and with ``reuse_flows`` each move's cut resumes from the flow that
    move's last cut left, moved to the current labels and unaries (across the cycles of
    one solve too).

    Parameters
    ----------
    genergy : GridEnergy
        Its unaries are copied; the weights are shared (never modified).
    max_iter, tol : see :func:`grid_cut`
    reuse_flows : bool, default=True
        More labels only: keep every move's flow. Memory: ``n_labels · (4·n_offsets +
        16) + 17`` bytes per pixel (per move the flows, terminal residuals, trees and
        the labelling the flow was computed for; shared scratch), e.g. 113 for K = 4 on
        a 4-connected image; ``False`` keeps only the labelling, and every cut starts
        from zero (the memory of :func:`grid_cut`, released after each solve).

    Attributes
    ----------
    genergy : GridEnergy
        The solver's current energy (with every update applied).
    labels : ndarray of shape (n_pixels,) or None
        The labelling of the last solve.
    flow_bytes : int
        Memory held between solves by the stored flows (two labels: ``4·n_offsets + 20``
        bytes per pixel; more labels: see ``reuse_flows``).

    Raises
    ------
    InvalidParameterError
        Not a GridEnergy, or a bad ``max_iter`` or ``tol``.

    Notes
    -----
    **Why the warm cut is exact.** Only terminal capacities change. The signed terminal
    residual of a changed pixel is recomputed as its new ``U[p, 1] − U[p, 0]`` minus the
    net flow its edges carry out of it (known from the stored flows), which is the
    Kohli–Torr reparametrisation: where the new capacity is below the flow already
    through it, both terminal capacities are raised by the same amount, which adds the
    same constant to every cut. A pixel whose residual changed side becomes a root of
    the other tree (its children in the old tree are orphaned and its old neighbours
    activated), one whose residual vanished is orphaned, and the search resumes: the
    result is the minimum cut of the new energy, as from scratch (the tests compare it
    with a cold solve).

    With more labels, a move's capacities change where labels or unaries changed since
    its last cut (an arc's capacity depends on its two ends' labels, a terminal on the
    pixel's unaries and its neighbours' labels). Only those pixels and their neighbours
    are touched: their pair flows are clipped to the new capacities and their terminal
    residuals recomputed from the flows, the same reparametrisation, then the trees are
    repaired there (``info["n_touched"]`` counts them). Every move is still the exact
    cut of its move graph, so a warm solve makes the moves α-expansion would make from
    the last labelling (the tests compare the energies).

    Examples
    --------
    >>> import numpy as np
    >>> U = np.zeros((1, 6, 2), np.float32); U[0, :3, 1] = 1.0; U[0, 3:, 0] = 1.0
    >>> solver = GridCutSolver(GridEnergy(U, [(0, 1), (1, 0)], [0.6, 0.0]))
    >>> solver.solve().labels
    array([0, 0, 0, 1, 1, 1])
    >>> solver.update_unary([2], [[5.0, 0.0]])
    >>> res = solver.solve()
    >>> res.labels, res.info["warm"]
    (array([0, 0, 1, 1, 1, 1]), True)
    """

    def __init__(self, genergy, *, max_iter=100, tol=1e-7, reuse_flows=True):
        if not isinstance(genergy, GridEnergy):
            raise InvalidParameterError(f"GridCutSolver needs a GridEnergy, got {type(genergy).__name__}")
        self.max_iter = check_int(max_iter, "max_iter", low=1)
        self.tol = check_float(tol, "tol", low=0.0)
        own = object.__new__(GridEnergy)
        own.__dict__.update(genergy.__dict__)
        own.unary = genergy.unary.copy()
        self.genergy = own
        self._core = _GridCore(own)
        self._state = self._core.new_state() if own.n_labels == 2 else None
        self._flows = _MoveFlows(self._core) if own.n_labels > 2 and reuse_flows else None
        self._changed = []
        self._stale = np.zeros(own.n_labels, bool)
        self.labels = None

    @property
    def flow_bytes(self):
        if self._state is not None:
            return self._state.nbytes
        return 0 if self._flows is None else self._flows.nbytes

    def update_unary(self, index, costs):
        """Replace the unaries of some pixels.

        Parameters
        ----------
        index : array-like of int, shape (m,), or bool array of the grid's shape
            Flat (C-order) pixel indices, distinct, or a mask (its pixels in C order).
        costs : array-like of shape (m, n_labels)
            Their new costs (numbers or ``+inf``, a forbidden label).

        Raises
        ------
        InvalidParameterError
            Indices outside the grid or repeated, a mask of the wrong shape, costs of
            the wrong shape, NaN or ``-inf``.
        InvalidConstraintError
            A row with every label forbidden (the message names its pixel).
        """
        g = self.genergy
        n, K = g.n_pixels, g.n_labels
        idx = np.asarray(index)
        if idx.dtype == bool:
            if idx.shape != g.shape:
                raise InvalidParameterError(f"a boolean index must have the grid's shape {g.shape}, got {idx.shape}")
            idx = np.flatnonzero(idx.reshape(-1))
        idx, C = check_unary_update(idx, costs, n, K, name="index", what="pixel")
        bad = np.isnan(C) | np.isneginf(C)
        if bad.any():
            r, k = (int(x) for x in np.argwhere(bad)[0])
            raise InvalidParameterError(f"costs[{r}, {k}] (pixel {g._where(idx[r])}) is {C[r, k]}; costs must be "
                                        "numbers or +inf")
        if len(idx):
            _check_feasible(C, rows=[g._where(i) for i in idx] if np.isinf(C).all(axis=1).any() else None)
        if g.unary.dtype == np.float32:
            big = np.isfinite(C) & (np.abs(C) > np.finfo(np.float32).max)
            if big.any():
                r, k = (int(x) for x in np.argwhere(big)[0])
                raise InvalidParameterError(f"costs[{r}, {k}] (pixel {g._where(idx[r])}) is {C[r, k]}, beyond the "
                                            "range of the energy's float32 unaries")
        g.unary.reshape(-1, K)[idx] = C
        self._changed.append(idx)
        if self._flows is not None:
            self._flows.unary_changed(idx)
        self._stale[:] = False

    def solve(self, init=None, *, callback=None, progress=False):
        """Solve the current energy: for two labels by resuming the last flow, for more
        labels by α-expansion from ``init``, else the last labelling, else the unary
        argmin.

        Returns
        -------
        InferenceResult
            As :func:`grid_cut`, with ``info["warm"]`` (whether a previous flow or
            labelling was reused) and ``info["n_changed"]`` (pixels updated since the
            last solve).
        """
        t0 = time.perf_counter()
        core, g = self._core, self.genergy
        changed = np.unique(np.concatenate(self._changed)) if self._changed else np.empty(0, np.int64)
        if self._state is not None:
            if init is not None:
                g.check_labels(init, "init")
            warm = self._state.used
            res = core.binary(core.U, state=self._state, changed=changed)
            if callback is not None:
                callback(1, res.labels.copy(), res.energy)
        else:
            warm = init is None and self.labels is not None
            if warm:
                z = core.initial_labels(self.labels)
            else:
                z = core.initial_labels(init)
                self._stale[:] = False
            res = core.expand(z, max_iter=self.max_iter, tol=self.tol, progress=progress, callback=callback,
                              stale=self._stale, flows=self._flows)
        self._changed = []
        self.labels = res.labels.copy()
        res.info["warm"] = bool(warm)
        res.info["n_changed"] = int(len(changed))
        res.info["flow_bytes"] = self.flow_bytes
        res.seconds = time.perf_counter() - t0
        return res


# --------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def _coords(p, shape, c):  # pragma: no cover - compiled
    for k in range(len(shape) - 1, -1, -1):
        s = shape[k]
        c[k] = p % s
        p //= s


@njit(cache=True, inline="always")
def _valid(c, doff, d, shape):  # pragma: no cover - compiled
    for k in range(len(shape)):
        x = c[k] + doff[d, k]
        if x < 0 or x >= shape[k]:
            return False
    return True


@njit(cache=True, inline="always")
def _cap(W, wbase, wmul, e, i, q, p, z, alpha):  # pragma: no cover - compiled
    """Capacity (each way) of the pair ``(e, e + offset i)``, whose ends are ``p`` and
    ``q``: the weight, or for an expansion move (``z`` not empty) the weight times 1,
    1/2 or 0 (both keep one label, different labels, one of them is α)."""
    c = W[wbase[i] + wmul[i] * e]
    if z.size == 0:
        return np.float64(c)
    a = z[p]
    b = z[q]
    if a == alpha or b == alpha:
        return 0.0
    if a == b:
        return np.float64(c)
    return 0.5 * np.float64(c)


@njit(cache=True, inline="always")
def _res(p, d, step, m, W, wbase, wmul, f, z, alpha):  # pragma: no cover - compiled
    """Residual capacity of the arc from ``p`` in direction ``d``."""
    q = p + step[d]
    if d < m:
        return _cap(W, wbase, wmul, p, d, q, p, z, alpha) - np.float64(f[p * m + d])
    i = d - m
    return _cap(W, wbase, wmul, q, i, q, p, z, alpha) + np.float64(f[q * m + i])


@njit(cache=True, inline="always")
def _push(p, d, delta, step, m, W, wbase, wmul, f, z, alpha):  # pragma: no cover - compiled
    """Push ``delta`` along the arc from ``p`` in direction ``d``; returns True when the
    arc is saturated afterwards (its residual is then exactly zero)."""
    q = p + step[d]
    if d < m:
        k = p * m + d
        c = _cap(W, wbase, wmul, p, d, q, p, z, alpha)
        nf = np.float64(f[k]) + delta
        if c - nf <= 0.0:
            f[k] = c
            return True
        f[k] = nf
        if c - np.float64(f[k]) <= 0.0:  # rounded to the capacity
            f[k] = c
            return True
        return False
    i = d - m
    k = q * m + i
    c = _cap(W, wbase, wmul, q, i, q, p, z, alpha)
    nf = np.float64(f[k]) - delta
    if c + nf <= 0.0:
        f[k] = -c
        return True
    f[k] = nf
    if c + np.float64(f[k]) <= 0.0:
        f[k] = -c
        return True
    return False


@njit(cache=True, inline="always")
def _enqueue(i, nxt, qstate):  # pragma: no cover - compiled
    if nxt[i] >= 0:
        return
    tail = qstate[1]
    if tail < 0:
        qstate[0] = i
    else:
        nxt[tail] = i
    nxt[i] = i
    qstate[1] = i


@njit(cache=True, inline="always")
def _orphan(x, parent, orphans, norph):  # pragma: no cover - compiled
    if parent[x] != _ORPHAN:
        parent[x] = _ORPHAN
        orphans[norph[0]] = x
        norph[0] += 1


@njit(cache=True, nogil=True)
def _make_root(p, side, c, tree, parent, dist, ts, nxt, qstate, orphans, norph, shape, step, doff,
               D):  # pragma: no cover - compiled
    """Make ``p``, whose terminal residual now has sign ``side`` (1 source, 2 sink), a
    root of that tree. If it changes tree, its children in the old one lose their
    parent and its old tree's neighbours become active (BK's invariant for passive
    nodes). ``c`` is scratch for coordinates."""
    old = tree[p]
    if old != 0 and old != side:
        _coords(p, shape, c)
        for d in range(D):
            if not _valid(c, doff, d, shape):
                continue
            q = p + step[d]
            if tree[q] != old:
                continue
            _enqueue(q, nxt, qstate)
            pa = parent[q]
            if pa >= 0 and q + step[pa] == p:
                _orphan(q, parent, orphans, norph)
    tree[p] = side
    parent[p] = _TERMINAL
    dist[p] = 1
    ts[p] = 0


@njit(cache=True, nogil=True)
def _grid_roots(tr, tree, parent, dist, nxt, qstate):  # pragma: no cover - compiled
    """Cold start: every pixel with a terminal residual is a root of its tree, active."""
    for i in range(len(tr)):
        t = tr[i]
        if t > 0.0 or t < 0.0:
            tree[i] = 1 if t > 0.0 else 2
            parent[i] = _TERMINAL
            dist[i] = 1
            _enqueue(i, nxt, qstate)


@njit(cache=True, nogil=True)
def _grid_update(idx, t_new, f, tr, tree, parent, ts, dist, clock, nxt, qstate, orphans, norph, shape, step,
                 doff, m):  # pragma: no cover - compiled
    """Move a stored flow to new terminal capacities ``t_new`` (signed, ``U1 − U0``) of
    the pixels ``idx`` and repair the trees (Kohli & Torr 2007; see
    :class:`GridCutSolver`)."""
    c = np.empty(len(shape), np.int64)
    D = 2 * m
    clock[0] += 1  # the marks of the last search are stale: no node counts as verified rooted
    for k in range(len(idx)):
        p = idx[k]
        _coords(p, shape, c)
        out = 0.0  # net flow p sends into the grid
        for d in range(D):
            if not _valid(c, doff, d, shape):
                continue
            if d < m:
                out += np.float64(f[p * m + d])
            else:
                out -= np.float64(f[(p + step[d]) * m + d - m])
        tr[p] = t_new[k] - out
        t = tr[p]
        side = 1 if t > 0.0 else (2 if t < 0.0 else 0)
        if side == 0:
            if parent[p] == _TERMINAL:
                _orphan(p, parent, orphans, norph)
        else:
            _make_root(p, side, c, tree, parent, dist, ts, nxt, qstate, orphans, norph, shape, step, doff, D)
        _enqueue(p, nxt, qstate)


@njit(cache=True, nogil=True)
def _stale_marks(ts, dist):  # pragma: no cover - compiled
    """Restart the clock: every mark stale (``ts`` 0) and every distance the
    largest, so that the search's re-parenting rule (``ts[j] <= ts[i]`` and
    ``dist[j] > dist[i]``) never moves a node below one whose distance is from another
    epoch, which could close a cycle. Returns the new time."""
    ts[:] = 0
    dist[:] = _DIST_MAX
    return 1


@njit(cache=True, nogil=True)
def _grid_bk(shape, step, doff, m, W, wbase, wmul, z, alpha, f, tr, tree, parent, ts, dist, clock, nxt, qstate,
             orphans, norph):  # pragma: no cover - compiled
    """The Boykov–Kolmogorov search on an implicit grid, from the given trees (active
    pixels in the queue ``nxt``/``qstate``, orphans waiting in ``orphans``). Flows,
    terminal residuals and trees are updated in place; returns the flow pushed.

    Direction ``d < m`` is offset ``d``, ``d = m + i`` its opposite; ``parent[x] = d``
    means the parent is ``x + step[d]``. A source-tree parent has a residual arc to its
    child, a sink-tree child one to its parent."""
    D = 2 * m
    c = np.empty(len(shape), np.int64)
    flow = 0.0
    time = clock[0]
    if time >= _TS_LIMIT:  # the callers' increments may have brought the clock here
        time = _stale_marks(ts, dist)
    while True:
        # ---- adoption
        while norph[0] > 0:
            norph[0] -= 1
            o = orphans[norph[0]]
            if parent[o] != _ORPHAN:
                continue
            side = tree[o]
            _coords(o, shape, c)
            best = -1
            dmin = 1 << 62
            for d in range(D):
                if not _valid(c, doff, d, shape):
                    continue
                q = o + step[d]
                if tree[q] != side:
                    continue
                rd = d + m if d < m else d - m
                r = _res(q, rd, step, m, W, wbase, wmul, f, z, alpha) if side == 1 else \
                    _res(o, d, step, m, W, wbase, wmul, f, z, alpha)
                if r <= 0.0:
                    continue
                dd = 0
                j = q
                ok = False
                while True:
                    if ts[j] == time:
                        dd += np.int64(dist[j])
                        ok = True
                        break
                    pa = parent[j]
                    dd += 1
                    if pa == _TERMINAL:
                        ts[j] = time
                        dist[j] = 1
                        ok = True
                        break
                    if pa < 0:
                        break
                    j = j + step[pa]
                if ok:
                    if dd < dmin:
                        dmin = dd
                        best = d
                    j = q
                    while ts[j] != time:
                        ts[j] = time
                        dist[j] = dd if dd < _DIST_MAX else _DIST_MAX
                        dd -= 1
                        j = j + step[parent[j]]
            if best >= 0:
                parent[o] = best
                ts[o] = time
                dist[o] = dmin + 1 if dmin + 1 < _DIST_MAX else _DIST_MAX
                continue
            for d in range(D):
                if not _valid(c, doff, d, shape):
                    continue
                q = o + step[d]
                if tree[q] != side:
                    continue
                rd = d + m if d < m else d - m
                r = _res(q, rd, step, m, W, wbase, wmul, f, z, alpha) if side == 1 else \
                    _res(o, d, step, m, W, wbase, wmul, f, z, alpha)
                if r > 0.0:
                    _enqueue(q, nxt, qstate)
                pa = parent[q]
                if pa >= 0 and q + step[pa] == o:
                    parent[q] = _ORPHAN
                    orphans[norph[0]] = q
                    norph[0] += 1
            tree[o] = 0
            parent[o] = _FREE
        # ---- growth
        fu = -1
        fd = -1
        while qstate[0] >= 0:
            i = qstate[0]
            ti = tree[i]
            if ti != 0:
                _coords(i, shape, c)
                for d in range(D):
                    if not _valid(c, doff, d, shape):
                        continue
                    j = i + step[d]
                    rd = d + m if d < m else d - m
                    if ti == 1:
                        if _res(i, d, step, m, W, wbase, wmul, f, z, alpha) <= 0.0:
                            continue
                        tj = tree[j]
                        if tj == 0:
                            tree[j] = 1
                            parent[j] = rd
                            ts[j] = ts[i]
                            dist[j] = dist[i] + 1 if dist[i] < _DIST_MAX else _DIST_MAX
                            _enqueue(j, nxt, qstate)
                        elif tj == 2:
                            fu = i
                            fd = d
                            break
                        elif ts[j] <= ts[i] and dist[j] > dist[i]:
                            parent[j] = rd
                            ts[j] = ts[i]
                            dist[j] = dist[i] + 1
                    else:
                        if _res(j, rd, step, m, W, wbase, wmul, f, z, alpha) <= 0.0:
                            continue
                        tj = tree[j]
                        if tj == 0:
                            tree[j] = 2
                            parent[j] = rd
                            ts[j] = ts[i]
                            dist[j] = dist[i] + 1 if dist[i] < _DIST_MAX else _DIST_MAX
                            _enqueue(j, nxt, qstate)
                        elif tj == 1:
                            fu = j
                            fd = rd
                            break
                        elif ts[j] <= ts[i] and dist[j] > dist[i]:
                            parent[j] = rd
                            ts[j] = ts[i]
                            dist[j] = dist[i] + 1
                if fu >= 0:
                    break
            # pop i
            if nxt[i] == i:
                qstate[0] = -1
                qstate[1] = -1
            else:
                qstate[0] = nxt[i]
            nxt[i] = -1
        if fu < 0:
            break
        time += 1
        if time >= _TS_LIMIT:
            time = _stale_marks(ts, dist)
        # ---- augmentation along source ... u -> v ... sink
        u = fu
        v = u + step[fd]
        bott = _res(u, fd, step, m, W, wbase, wmul, f, z, alpha)
        x = u
        while parent[x] != _TERMINAL:
            pd = parent[x]
            px = x + step[pd]
            rd = pd + m if pd < m else pd - m
            r = _res(px, rd, step, m, W, wbase, wmul, f, z, alpha)
            if r < bott:
                bott = r
            x = px
        if np.float64(tr[x]) < bott:
            bott = np.float64(tr[x])
        x = v
        while parent[x] != _TERMINAL:
            pd = parent[x]
            r = _res(x, pd, step, m, W, wbase, wmul, f, z, alpha)
            if r < bott:
                bott = r
            x = x + step[pd]
        if -np.float64(tr[x]) < bott:
            bott = -np.float64(tr[x])
        _push(u, fd, bott, step, m, W, wbase, wmul, f, z, alpha)
        x = u
        while parent[x] != _TERMINAL:
            pd = parent[x]
            px = x + step[pd]
            rd = pd + m if pd < m else pd - m
            if _push(px, rd, bott, step, m, W, wbase, wmul, f, z, alpha):
                parent[x] = _ORPHAN
                orphans[norph[0]] = x
                norph[0] += 1
            x = px
        t = np.float64(tr[x]) - bott
        if t <= 0.0:
            tr[x] = 0.0
        else:
            tr[x] = t
            if tr[x] <= 0.0:
                tr[x] = 0.0
        if tr[x] == 0.0:
            parent[x] = _ORPHAN
            orphans[norph[0]] = x
            norph[0] += 1
        x = v
        while parent[x] != _TERMINAL:
            pd = parent[x]
            px = x + step[pd]
            if _push(x, pd, bott, step, m, W, wbase, wmul, f, z, alpha):
                parent[x] = _ORPHAN
                orphans[norph[0]] = x
                norph[0] += 1
            x = px
        t = np.float64(tr[x]) + bott
        if t >= 0.0:
            tr[x] = 0.0
        else:
            tr[x] = t
            if tr[x] >= 0.0:
                tr[x] = 0.0
        if tr[x] == 0.0:
            parent[x] = _ORPHAN
            orphans[norph[0]] = x
            norph[0] += 1
        flow += bott
    clock[0] = time
    return flow


@njit(cache=True, nogil=True)
def _fill_expansion(U, W, wbase, wmul, shape, step, doff, m, z, alpha, tr):  # pragma: no cover - compiled
    """Signed terminal residuals of the α-expansion move from ``z`` (``x_p = 1``: ``p``
    takes α): ``U[p, α] − U[p, z_p]`` plus the terminal part of every pair term (see
    :func:`grid_cut`, Notes)."""
    n = len(z)
    c = np.empty(len(shape), np.int64)
    for p in range(n):
        tr[p] = np.float64(U[p, alpha]) - np.float64(U[p, z[p]]) if z[p] != alpha else 0.0
    for p in range(n):
        _coords(p, shape, c)
        a = z[p]
        for i in range(m):
            if not _valid(c, doff, i, shape):
                continue
            q = p + step[i]
            b = z[q]
            if a == alpha and b == alpha:
                continue
            w = np.float64(W[wbase[i] + wmul[i] * p])
            if a == alpha:
                tr[q] = np.float64(tr[q]) - w
            elif b == alpha:
                tr[p] = np.float64(tr[p]) - w
            elif a != b:
                tr[p] = np.float64(tr[p]) - 0.5 * w
                tr[q] = np.float64(tr[q]) - 0.5 * w


@njit(cache=True, nogil=True)
def _grid_rebase(U, W, wbase, wmul, shape, step, doff, m, z, zs, uver, ver, alpha, f, tr, tree, parent, ts, dist,
                 clock, nxt, qstate, orphans, norph, mark, touched):  # pragma: no cover - compiled
    """Move the stored flow of the α move, computed for the labelling ``zs``, to the
    move graph of ``z`` (dynamic graph cuts, Kohli & Torr 2007) and repair its search
    trees; ``uver[p] > ver`` marks the pixels whose unaries changed since. Returns the
    number of pixels touched.

    Only pixels whose label or unaries changed, and their neighbours, have new
    capacities (an arc's capacity depends on its two ends' labels, a terminal on the
    pixel's unaries and its neighbours' labels). For those: the pair flows are clipped
    to the new capacities and the signed terminal residual becomes the new terminal
    capacity minus the net flow the pixel's pairs carry out of it. Any flow within the
    capacities, completed so by the terminals, is a flow of the new graph after both
    terminal capacities of a pixel are raised by the same amount, which adds a constant
    to every cut: the maximum flow resumed from here gives the new move's minimum cut.
    Trees: a touched pixel whose parent arc lost its residual, or whose terminal
    residual vanished, is orphaned; one with a terminal residual becomes a root of its
    side's tree (its children in the other tree are orphaned, its old tree's neighbours
    activated); every touched pixel in a tree is made active."""
    n = len(z)
    D = 2 * m
    c = np.empty(len(shape), np.int64)
    clock[0] += 1
    for p in range(n):
        if z[p] != zs[p]:
            mark[p] = 1
            _coords(p, shape, c)
            for d in range(D):
                if _valid(c, doff, d, shape):
                    mark[p + step[d]] = 1
        elif uver[p] > ver:
            mark[p] = 1
    nt = 0
    for p in range(n):
        if mark[p]:
            mark[p] = 0
            touched[nt] = p
            nt += 1
    for k in range(nt):
        p = touched[k]
        _coords(p, shape, c)
        a = z[p]
        t = np.float64(U[p, alpha]) - np.float64(U[p, a]) if a != alpha else 0.0
        out = 0.0
        for d in range(D):
            if not _valid(c, doff, d, shape):
                continue
            q = p + step[d]
            if d < m:
                e = p
                i = d
            else:
                e = q
                i = d - m
            b = z[q]
            if a != alpha:
                w = np.float64(W[wbase[i] + wmul[i] * e])
                if b == alpha:
                    t -= w
                elif a != b:
                    t -= 0.5 * w
            cap = _cap(W, wbase, wmul, e, i, q, p, z, alpha)
            j = e * m + i
            fl = np.float64(f[j])
            if fl > cap:
                f[j] = cap
            elif fl < -cap:
                f[j] = -cap
            out += np.float64(f[j]) if d < m else -np.float64(f[j])
        tr[p] = t - out
    for k in range(nt):
        p = touched[k]
        tp = tree[p]
        if tp == 0:
            continue
        pa = parent[p]
        if pa == _TERMINAL:
            if tr[p] == 0.0:
                _orphan(p, parent, orphans, norph)
        elif pa >= 0:
            q = p + step[pa]
            if tp == 1:
                rd = pa + m if pa < m else pa - m
                r = _res(q, rd, step, m, W, wbase, wmul, f, z, alpha)
            else:
                r = _res(p, pa, step, m, W, wbase, wmul, f, z, alpha)
            if r <= 0.0:
                _orphan(p, parent, orphans, norph)
    for k in range(nt):
        p = touched[k]
        tp = tr[p]
        if tp != 0.0:
            _make_root(p, 1 if tp > 0.0 else 2, c, tree, parent, dist, ts, nxt, qstate, orphans, norph, shape,
                       step, doff, D)
        if tree[p] != 0:
            _enqueue(p, nxt, qstate)
    zs[:] = z
    return nt


@njit(cache=True, nogil=True)
def _apply_move(z, tree, alpha, new):  # pragma: no cover - compiled
    """``new = α`` where the pixel is on the sink side, else ``z``; whether any changed."""
    changed = False
    for p in range(len(z)):
        if tree[p] == 2 and z[p] != alpha:
            new[p] = alpha
            changed = True
        else:
            new[p] = z[p]
    return changed


@njit(cache=True, nogil=True)
def _grid_energy(U, W, wbase, wmul, shape, step, doff, m, z):  # pragma: no cover - compiled
    """The energy of ``z`` in float64 (for the moves; results use GridEnergy.evaluate)."""
    n = len(z)
    c = np.empty(len(shape), np.int64)
    e = 0.0
    for p in range(n):
        a = z[p]
        e += np.float64(U[p, a])
        _coords(p, shape, c)
        for i in range(m):
            if _valid(c, doff, i, shape) and z[p + step[i]] != a:
                e += np.float64(W[wbase[i] + wmul[i] * p])
    return e
