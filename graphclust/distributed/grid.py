"""Tiled pixel grids on Dask: :func:`grid_inference` and :func:`grid_energy`.

:func:`grid_inference` minimises the pixel-grid energy ``sum_p U[p, z_p] + sum_{p~q}
w_pq [z_p != z_q]`` of a chunked unary volume ``(H, W, K)`` (contrast-sensitive
4-connected Potts weights from a chunked image, or a constant smoothness) tile by tile:
each round updates the tiles of one colour of a checkerboard of tiles, then the other,
each tile running a single-machine engine (``"icm"``, ``"bp"``, ...) with the labels
just outside it held fixed. The energy never increases; the labels stay a chunked dask
array. :func:`grid_energy` evaluates the same energy chunk by chunk.

Here too: the tile plan (which worker updates which tile), the halo strips cut once
per block and run, the memory of converged tile updates (:class:`_FixedPoints`), and
the tile kernels.
"""

import time
import uuid
from dataclasses import dataclass, field

import numpy as np

from .._utils import check_float, check_int, check_random_state
from ..energy import Energy, check_unary_costs
from ..graphs import contrast_weight
from ..errors import InvalidParameterError
from ..inference.grid_icm import _unary_argmin
from ..inference._local import REL_TOL, improves
from ._common import _check_client, _compute, _dask, _distributed_client, _persist, _wait

__all__ = ["grid_inference", "grid_energy", "GridResult"]



@dataclass
class GridResult:
    """What :func:`grid_inference` returns.

    Attributes
    ----------
    labels : dask.array.Array of shape (H, W), dtype int32
        The labelling, chunked like the unary volume, persisted on the workers (call
        ``.compute()``, ``.to_zarr()`` or ``dask.array.store`` on it).
    n_rounds : int
        Rounds run (a round updates both colours of the tile checkerboard once).
    n_changes : list of int
        Labels changed in each round.
    converged : bool
        A round changed no label.
    beta : float
        Contrast sensitivity used (0 without an image).
    seconds : float
    """

    labels: object
    n_rounds: int
    n_changes: list = field(default_factory=list)
    converged: bool = False
    beta: float = 0.0
    seconds: float = 0.0


def _pair_weights(img, beta, smoothness, shape):
    """Horizontal ``(h, w-1)`` and vertical ``(h-1, w)`` Potts weights of a tile."""
    h, w = shape
    if img is None:
        return np.full((h, w - 1), smoothness), np.full((h - 1, w), smoothness)
    # float64 as in the compiled grid builders, so every path builds the same weights
    dh = ((img[:, 1:] - img[:, :-1]) ** 2).sum(axis=-1, dtype=np.float64)
    dv = ((img[1:] - img[:-1]) ** 2).sum(axis=-1, dtype=np.float64)
    beta = float(beta)
    return smoothness * contrast_weight(dh, beta, 0.0), smoothness * contrast_weight(dv, beta, 0.0)


def _sides(block_id, nblocks, halo):
    """Halo widths (top, bottom, left, right) present around a block."""
    bi, bj = block_id[0], block_id[1]
    return (halo if bi > 0 else 0, halo if bi < nblocks[0] - 1 else 0,
            halo if bj > 0 else 0, halo if bj < nblocks[1] - 1 else 0)


def _local_energy(z, U, wh, wv, r0, r1, c0, c1):
    """Energy terms touching the window ``[r0:r1, c0:c1]`` of an extended tile: its unary
    costs, pair terms inside it, and pair terms to the pixels just outside it."""
    zz = z[r0:r1, c0:c1]
    e = np.take_along_axis(U[r0:r1, c0:c1], zz[..., None].astype(np.intp), axis=2).sum()
    h, w = z.shape
    ca, cb = max(c0 - 1, 0), min(c1, w - 1)  # horizontal edges (c, c+1) touching the window columns
    e += (wh[r0:r1, ca:cb] * (z[r0:r1, ca:cb] != z[r0:r1, ca + 1:cb + 1])).sum()
    ra, rb = max(r0 - 1, 0), min(r1, h - 1)
    e += (wv[ra:rb, c0:c1] * (z[ra:rb, c0:c1] != z[ra + 1:rb + 1, c0:c1])).sum()
    return float(e)


def _fast_icm(method, options):
    """True when a tile's ICM can run on the grid kernel (:mod:`graphclust.inference.grid_icm`):
    the sequential schedule in random or raster order, no callback or explicit order."""
    if method != "icm":
        return False
    opts = options or {}
    order = opts.get("order", "random")
    return (set(opts) <= {"order", "max_iter", "random_state", "schedule"}
            and isinstance(order, str) and order in ("random", "fixed")
            and opts.get("schedule", "sequential") == "sequential")


class _FixedPoints:
    """The tile labels each converged ICM tile update (``halo=1``) of a run ended on,
    with the halo ring around them, kept in each worker process by run, tile and a
    digest of the labels. The update's last sweep moved no pixel, so under that ring no
    pixel can move, whatever the visiting order; the next update of the tile from the
    same labels then needs no full pass: under the same ring it returns the labels as
    they are (no arrays built, no sweep), and otherwise only the pixels next to ring
    pixels that changed can move at first, so its sweeps start from those (the sweeps
    a full pass would run). Keyed by run, so another run's unaries or weights never
    match; bounded, oldest first out."""

    def __init__(self, size=1 << 12):
        import collections
        import threading

        self.size, self._seen, self._lock = size, collections.OrderedDict(), threading.Lock()

    @staticmethod
    def key(run, block_id, labels):
        import hashlib

        return run, tuple(block_id), hashlib.blake2b(np.ascontiguousarray(labels).data, digest_size=16).digest()

    def get(self, key):
        with self._lock:
            return self._seen.get(key)

    def add(self, key, ring):
        with self._lock:
            self._seen[key] = ring
            self._seen.move_to_end(key)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)

    @staticmethod
    def ring(z, window):
        """The ring's four sides (top, bottom, left, right; None where the grid ends)
        around the free ``window`` of an extended tile."""
        r0, r1, c0, c1 = window
        h, w = z.shape
        return (z[0].copy() if r0 else None, z[-1].copy() if r1 < h else None,
                z[:, 0].copy() if c0 else None, z[:, -1].copy() if c1 < w else None)

    @staticmethod
    def candidates(z, ring, window):
        """The free pixels next to the ring pixels of ``z`` that differ from ``ring``, as
        a uint8 mask, or None when none differ."""
        r0, r1, c0, c1 = window
        mask = np.zeros(z.shape, np.uint8)
        now = _FixedPoints.ring(z, window)
        for side, (old, new) in enumerate(zip(ring, now)):
            if old is None:
                continue
            if side < 2:  # top or bottom: columns of the window
                moved = np.flatnonzero(old[c0:c1] != new[c0:c1]) + c0
                mask[r0 if side == 0 else r1 - 1, moved] = 1
            else:
                moved = np.flatnonzero(old[r0:r1] != new[r0:r1]) + r0
                mask[moved, c0 if side == 2 else c1 - 1] = 1
        return mask if mask.any() else None


_FIXED_POINTS = _FixedPoints()


def _tile_step(z, U, weights=None, *, U_ring=None, block_id=None, nblocks=None, halo=1, colour=0,
               smoothness=1.0, method="icm", options=None, seed=None, round_=0, run=None):
    """One tile update: run the engine on the tile (plus free context) with the outer
    ring of the halo fixed, keep the new tile labels only if they lower the energy.
    ``U`` is the extended tile's unaries, or the tile's with ``U_ring`` its halo strips;
    ``weights`` the extended tile's ``(wh, wv)`` (:func:`_tile_weights`), or None for
    the constant ``smoothness``. With a ``run`` id, the ICM grid kernel and ``halo=1``
    (the free region is the tile), an update from labels an earlier update of the tile
    in this run converged on starts from what changed around them since
    (:class:`_FixedPoints`)."""
    z = z[..., 0]
    top, bottom, left, right = _sides(block_id, nblocks, halo)
    h, w = z.shape
    tile = (slice(top, h - bottom), slice(left, w - right))
    if (block_id[0] + block_id[1]) % 2 != colour:
        return z[tile].copy()
    # free region: everything but the outermost ring where a halo exists
    window = r0, r1, c0, c1 = int(top > 0), h - int(bottom > 0), int(left > 0), w - int(right > 0)
    fast = _fast_icm(method, options)
    memo = fast and halo == 1 and run is not None
    candidates = None
    if memo:
        key = _FixedPoints.key(run, block_id, z[tile])
        ring = _FIXED_POINTS.get(key)
        if ring is not None:
            candidates = _FixedPoints.candidates(z, ring, window)
            if candidates is None:  # the same ring: no pixel can move
                return z[tile].copy()
    # with halo 1 the kernel reads only the tile's unaries: the block itself, offset,
    # instead of a copy extended by the halo (33 MB per 1024² tile at K = 4)
    tile_unaries = fast and halo == 1 and U_ring is not None
    if U_ring is not None and not tile_unaries:
        U = _extend(U, U_ring)
    U = np.asarray(U)
    if not (fast and U.dtype in (np.float32, np.float64)):
        U = U.astype(np.float64)
    wh, wv = _pair_weights(None, 0.0, smoothness, (h, w)) if weights is None else weights
    if fast:
        from ..inference.grid_icm import _run

        opts = options or {}
        order = opts.get("order", "random")
        rs = opts.get("random_state", None if seed is None else np.random.SeedSequence([seed, round_, colour,
                                                                                         *block_id]))
        s = int(check_random_state(rs).integers(2**63)) if order == "random" else 0
        new = np.array(z, dtype=np.int8 if z.dtype == np.int8 else np.int32, order="C")
        _, n_changes, _ = _run(np.ascontiguousarray(U), np.ascontiguousarray(wh), np.ascontiguousarray(wv), new,
                               window, order == "random", s, check_int(opts.get("max_iter", 100), "max_iter", low=1),
                               offset=(top, left) if tile_unaries else (0, 0), candidates=candidates)
        if memo and (n_changes.size == 0 or n_changes[-1] == 0):  # converged: a fixed point
            _FIXED_POINTS.add(_FixedPoints.key(run, block_id, new[tile].astype(z.dtype, copy=False)),
                              _FixedPoints.ring(z, window))
        if halo == 1:  # the free region is the tile: every move lowered the energy
            return (new[tile] if n_changes.sum() > 0 else z[tile]).astype(z.dtype)
    else:
        new = _engine_step(z, U, wh, wv, (r0, r1, c0, c1), method, options, seed, round_, colour, block_id)
    # only the tile's labels are kept: score them against the old labels around it
    cand = z.copy()
    cand[tile] = new[tile]
    before = _local_energy(z, U, wh, wv, top, h - bottom, left, w - right)
    after = _local_energy(cand, U, wh, wv, top, h - bottom, left, w - right)
    if improves(after, before, REL_TOL):
        return cand[tile].astype(z.dtype)
    return z[tile].copy()


def _engine_step(z, U, wh, wv, window, method, options, seed, round_, colour, block_id):
    """The generic tile update: an :class:`Energy` on the free window (the fixed
    ring's Potts terms folded into the unaries next to it) solved by ``method``;
    returns the extended tile's labels with the window replaced."""
    from ..inference import solve

    h, w = z.shape
    K = U.shape[2]
    r0, r1, c0, c1 = window
    fh, fw = r1 - r0, c1 - c0
    Uf = U[r0:r1, c0:c1].copy()
    ar = np.arange(K)
    if r0:  # fixed row above
        Uf[0] += wv[0, c0:c1, None] * (ar[None, :] != z[0, c0:c1, None])
    if r1 < h:
        Uf[-1] += wv[r1 - 1, c0:c1, None] * (ar[None, :] != z[r1, c0:c1, None])
    if c0:
        Uf[:, 0] += wh[r0:r1, 0, None] * (ar[None, :] != z[r0:r1, 0, None])
    if c1 < w:
        Uf[:, -1] += wh[r0:r1, c1 - 1, None] * (ar[None, :] != z[r0:r1, c1, None])
    idx = np.arange(fh * fw).reshape(fh, fw)
    edges = np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                            np.stack([idx[:-1].ravel(), idx[1:].ravel()], 1)])
    weights = np.concatenate([wh[r0:r1, c0:c1 - 1].ravel(), wv[r0:r1 - 1, c0:c1].ravel()])
    energy = Energy(Uf.reshape(-1, K), edges, weights)
    opts = dict(options or {})
    if seed is not None and method.startswith("icm"):
        opts.setdefault("random_state", np.random.SeedSequence([seed, round_, colour, *block_id]))
    res = solve(energy, method, init=z[r0:r1, c0:c1].ravel().astype(np.int64), **opts)
    new = z.copy()
    new[r0:r1, c0:c1] = res.labels.reshape(fh, fw)
    return new


def _tile_energy(z, U, *rest, block_id=None, nblocks=None, beta=0.0, smoothness=1.0):
    """Energy terms owned by one tile: its unaries and the pair terms from its pixels to
    their right and lower neighbours (which may sit in the halo)."""
    img = None if not rest else np.asarray(rest[0], dtype=np.float64)
    z = z[..., 0]
    top, bottom, left, right = _sides(block_id, nblocks, 1)
    h, w = z.shape
    wh, wv = _pair_weights(img, beta, smoothness, (h, w))
    r0, r1, c0, c1 = top, h - bottom, left, w - right
    e = np.take_along_axis(np.asarray(U, np.float64)[r0:r1, c0:c1], z[r0:r1, c0:c1, None].astype(np.intp),
                           axis=2).sum()
    ce = min(c1, w - 1)
    e += (wh[r0:r1, c0:ce] * (z[r0:r1, c0:ce] != z[r0:r1, c0 + 1:ce + 1])).sum()
    re = min(r1, h - 1)
    e += (wv[r0:re, c0:c1] * (z[r0:re, c0:c1] != z[r0 + 1:re + 1, c0:c1])).sum()
    return np.full((1, 1), e)


def _as_dask(x, chunks, name):
    _, da = _dask()
    if isinstance(x, da.Array):
        return x
    if chunks is None:
        raise InvalidParameterError(f"{name} is not a dask array; pass chunks=(rows, cols) to tile it")
    return da.from_array(np.asarray(x), chunks=tuple(chunks) + (-1,) * (np.ndim(x) - len(chunks)))


def _refuse_nan_unaries(block, block_info=None):
    """A unary tile as it is, or the error :class:`~graphclust.Energy` raises for NaN or
    ``-inf``, naming the pixel in the whole grid."""
    offset = ()
    if block_info is not None and block_info.get(0):
        offset = tuple(lo for lo, _ in block_info[0]["array-location"][:2])
    check_unary_costs(block, offset)
    return block


def _check_grid(unary, image, chunks, halo):
    _, da = _dask()
    U = _as_dask(unary, chunks, "unary")
    if U.ndim != 3 or min(U.shape) < 1:
        raise InvalidParameterError(f"unary must have shape (H, W, K) with all > 0, got {U.shape}")
    if not np.issubdtype(U.dtype, np.number):
        raise InvalidParameterError(f"unary must be numeric, got dtype {U.dtype}")
    if len(U.chunks[2]) > 1:
        U = U.rechunk({2: -1})
    # the check Energy makes, per tile as the tiles are computed (not a pass of its own)
    U = U.map_blocks(_refuse_nan_unaries, dtype=U.dtype, meta=np.empty((0, 0, 0), U.dtype))
    img = None
    if image is not None:
        img = _as_dask(image, chunks, "image")
        if img.ndim not in (2, 3) or img.shape[:2] != U.shape[:2]:
            raise InvalidParameterError(
                f"image must have shape {U.shape[:2]} or {U.shape[:2]} + (channels,), like unary, got {img.shape}"
            )
        if img.chunks[:2] != U.chunks[:2]:
            raise InvalidParameterError(
                f"image and unary are chunked differently over (rows, cols): {img.chunks[:2]} vs "
                f"{U.chunks[:2]}; rechunk one like the other (image.rechunk(unary.chunks[:2]))"
            )
        if img.ndim == 3 and len(img.chunks[2]) > 1:
            img = img.rechunk({2: -1})
    for axis, name in ((0, "row"), (1, "column")):
        if len(U.chunks[axis]) > 1:
            small = min(U.chunks[axis])
            if small < halo:
                raise InvalidParameterError(
                    f"a {name} chunk of {small} pixels is smaller than halo={halo}; use chunks of at least "
                    f"{halo} pixels (rechunk) or a smaller halo"
                )
    return U, img


# Halo exchange. A tile reads the strips of its neighbours next to it. map_overlap would
# build them with ~8 slicing tasks per array and block and a concatenation, every half
# round (~30 tasks per tile update). Here, for the unaries and the image, whose strips
# never change, one task per block cuts all the strips its neighbours need, once per
# run; the labels change every half round, and a tile task takes its neighbours' label
# blocks whole and cuts the strips itself (a separate strip task put a second scheduler
# round trip between a tile update and its neighbour's).
_OFFSETS = tuple((di, dj) for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0))


def _edges(x, halo):
    """The strips of block ``x`` its neighbours read, keyed by the offset ``(di, dj)`` of
    ``x`` seen from the reader: the reader below ``x`` (offset ``(-1, 0)``) gets its last
    ``halo`` rows, the reader to its lower right its bottom-right corner, and so on."""
    cut = {-1: slice(-halo, None), 0: slice(None), 1: slice(0, halo)}
    return {off: np.array(x[cut[off[0]], cut[off[1]]]) for off in _OFFSETS}


def _ring(neighbour_edges):
    """The halo around one block: ``{offset: strip or None}`` from its neighbours' edge
    dicts, given in ``_OFFSETS`` order (None where the grid ends)."""
    return {off: None if e is None else e[off] for off, e in zip(_OFFSETS, neighbour_edges)}


def _extend(center, ring):
    """``center`` with its halo around it; sides where the grid ends get none (as
    ``map_overlap(boundary="none")``)."""
    rows = []
    for di in (-1, 0, 1):
        if di and ring[(di, 0)] is None:
            continue
        parts = [center if di == dj == 0 else ring[(di, dj)]
                 for dj in (-1, 0, 1) if dj == 0 or ring[(0, dj)] is not None]
        rows.append(np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0])
    return np.concatenate(rows, axis=0) if len(rows) > 1 else rows[0]


def _neighbour_keys(name, i, j, numblocks):
    return [(name, i + di, j + dj) if 0 <= i + di < numblocks[0] and 0 <= j + dj < numblocks[1] else None
            for di, dj in _OFFSETS]


def _block_array(name, dsk, dependencies, like, dtype, meta):
    from dask.highlevelgraph import HighLevelGraph

    _, da = _dask()
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=dependencies)
    return da.Array(graph, name, chunks=like, dtype=dtype, meta=meta)


def _halo_rings(x, halo):
    """One block per block of the 2-D grid of ``x``: the dict of its halo strips."""
    from dask.base import tokenize

    nb = x.numblocks[:2]
    edges, rings = "grid-edges-" + tokenize(x.name, halo), "grid-ring-" + tokenize(x.name, halo)
    idx = [(i, j) for i in range(nb[0]) for j in range(nb[1])]
    tail = (0,) * (x.ndim - 2)
    dsk = {(edges, i, j): (_edges, (x.name, i, j, *tail), halo) for i, j in idx}
    dsk.update({(rings, i, j): (_ring, _neighbour_keys(edges, i, j, nb)) for i, j in idx})
    return _block_array(rings, dsk, [x], ((1,) * nb[0], (1,) * nb[1]), object, np.empty((0, 0), object))


def _pair_sq_sum(block, ring):
    """``sum |I_p - I_q|^2`` over the 4-neighbour pairs inside an image block and those
    joining it to its right and lower neighbours (first column / row of their strips)."""
    x = np.asarray(block, dtype=np.float64)
    x = x.reshape(x.shape[:2] + (-1,))
    s = ((x[:, 1:] - x[:, :-1]) ** 2).sum() + ((x[1:] - x[:-1]) ** 2).sum()
    right, below = ring[(0, 1)], ring[(1, 0)]
    if right is not None:
        s += ((x[:, -1] - right[:, 0].reshape(x.shape[0], -1)) ** 2).sum()
    if below is not None:
        s += ((x[-1] - below[0].reshape(x.shape[1], -1)) ** 2).sum()
    return float(s)


def _block_map(func, prefix, x, rings, *args):
    """One object block per block of the 2-D grid of ``x``: ``func(block, ring, *args)``."""
    from dask.base import tokenize

    nb, tail = x.numblocks[:2], (0,) * (x.ndim - 2)
    name = prefix + "-" + tokenize(func, x.name, rings.name, args)
    dsk = {(name, i, j): (func, (x.name, i, j, *tail), (rings.name, i, j), *args)
           for i in range(nb[0]) for j in range(nb[1])}
    return _block_array(name, dsk, [x, rings], ((1,) * nb[0], (1,) * nb[1]), object, np.empty((0, 0), object))


def _ring_beta(img, img_rings, client):
    """``1 / (2 mean |I_p - I_q|^2)`` over all 4-neighbour pairs, as
    :func:`graphclust.grid_arrays` computes it, from the image blocks and their halo
    strips: one task per block and a sum (a ``da.diff`` reduction needs ~10 tasks per
    block to pair pixels across chunk borders)."""
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    h, w = img.shape[:2]
    m = h * (w - 1) + (h - 1) * w
    if m == 0:
        return 0.0
    parts = _block_map(_pair_sq_sum, "grid-beta-part", img, img_rings)
    name = "grid-beta-" + parts.name
    dsk = {name: (sum, [k for row in parts.__dask_keys__() for k in row])}
    (total,) = _compute(client, Delayed(name, HighLevelGraph.from_collections(name, dsk, [parts])))
    mean = total / m
    return 0.5 / mean if mean > 0 else 0.0


def _tile_plan(numblocks, nthreads, current=None):
    """A worker per tile, ``{(i, j): address}``: the tiles of each checkerboard colour
    shared among the workers in proportion to their threads (the tiles of one colour
    run together, so a worker holding more than its share idles the others for that
    half round). A tile stays on the worker in ``current`` (where its unary block lives)
    while that worker is under its share; the others fill the remaining shares in
    raster order, which gives each worker bands of neighbouring tiles."""
    workers = sorted(nthreads)
    total = sum(nthreads[w] for w in workers)
    current = current or {}
    plan = {}
    for colour in (0, 1):
        tiles = [(i, j) for i in range(numblocks[0]) for j in range(numblocks[1]) if (i + j) % 2 == colour]
        exact = {w: len(tiles) * nthreads[w] / total for w in workers}
        quota = {w: int(exact[w]) for w in workers}
        # largest remainders take the tiles the floors leave over
        for w in sorted(workers, key=lambda w: quota[w] - exact[w])[:len(tiles) - sum(quota.values())]:
            quota[w] += 1
        rest = []
        for t in tiles:
            w = current.get(t)
            if quota.get(w, 0) > 0:
                plan[t], quota[w] = w, quota[w] - 1
            else:
                rest.append(t)
        free = (w for w in workers for _ in range(quota[w]))
        plan.update(zip(rest, free))
    return plan


def _grid_plan(client, U):
    """The tile plan on a distributed ``client``, keeping tiles where the blocks of an
    already persisted ``U`` live."""
    current = {}
    for key, where in client.who_has(U).items():
        if where and key[0] == U.name:
            current[(key[1], key[2])] = where[0]
    return _tile_plan(U.numblocks[:2], client.nthreads(), current)


def _placed(plan):
    """Annotate the tasks built inside: a task whose key names block ``(i, j)`` prefers
    the worker ``plan[(i, j)]`` and may run elsewhere if that worker is gone (so Dask's
    retry after a lost worker still works). No-op without a plan."""
    import contextlib

    if plan is None:
        return contextlib.nullcontext()
    dask, _ = _dask()
    return dask.annotate(workers=lambda key: [plan[(key[1], key[2])]], allow_other_workers=True)


def _label_dtype(K):
    return np.dtype(np.int8 if K <= 127 else np.int16 if K <= 32767 else np.int32)


def _argmin_labels(U, dtype):
    return _unary_argmin(U).astype(dtype, copy=False)


def _init_labels(z, K, dtype, block_info=None):
    """A block of the starting labels, checked to lie in ``0 .. K-1``, as ``dtype``."""
    z = np.asarray(z)
    bad = (z < 0) | (z >= K)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        (r, _), (c, _) = block_info[0]["array-location"] if block_info else ((0, 0), (0, 0))
        raise InvalidParameterError(f"init[{r + i}, {c + j}] is {z[i, j]}; labels must lie in 0 .. {K - 1} "
                                    f"(the unary volume has {K} labels)")
    return z.astype(dtype)


def _tile_weights(img, img_ring, beta, smoothness):
    """The Potts weights ``(wh, wv)`` of an image block extended by its halo; they never
    change during a run, so each block's are computed once (a quarter of a tile
    update's time in the late rounds, when few labels move)."""
    x = np.asarray(_extend(img, img_ring), dtype=np.float64)
    return _pair_weights(x.reshape(x.shape[:2] + (-1,)), beta, smoothness, x.shape[:2])


def _tile_task(z, U, weights, z_neighbours, U_ring, halo, step):
    """One tile update from its blocks, its neighbours' label blocks and its unaries'
    halo strips (see :func:`_tile_step`)."""
    ring = _ring([None if b is None else _edges(b, halo) for b in z_neighbours])
    return step(_extend(z, ring)[..., None], U, weights, U_ring=U_ring)


def _half_round(z, U, weights, U_rings, colour, halo, **step_kw):
    """The labels after the tiles of checkerboard colour ``colour`` moved: one task per
    block, a tile update (reading its neighbours' label blocks) or, for the idle colour,
    the block passed on by key."""
    import functools

    from dask.base import tokenize

    nb = z.numblocks
    token = tokenize(z.name, U.name, None if weights is None else weights.name, colour, halo, step_kw)
    name = "grid-half-round-" + token
    moving = [(i, j) for i in range(nb[0]) for j in range(nb[1]) if (i + j) % 2 == colour]
    dsk = {(name, i, j): (z.name, i, j) for i in range(nb[0]) for j in range(nb[1]) if (i + j) % 2 != colour}
    for i, j in moving:
        step = functools.partial(_tile_step, block_id=(i, j), nblocks=nb, halo=halo, colour=colour, **step_kw)
        dsk[(name, i, j)] = (_tile_task, (z.name, i, j), (U.name, i, j, 0),
                             None if weights is None else (weights.name, i, j),
                             _neighbour_keys(z.name, i, j, nb), (U_rings.name, i, j), halo, step)
    deps = [z, U, U_rings] + ([weights] if weights is not None else [])
    # a worker runs one task at a time: the key-keeping tasks go first, or they wait
    # behind its tile updates while the other worker waits for them
    dask, _ = _dask()
    with dask.annotate(priority=lambda key: 0 if key[0] == name and (key[1] + key[2]) % 2 == colour else 1):
        return _block_array(name, dsk, deps, z.chunks, z.dtype, z._meta)


def grid_inference(unary, image=None, *, method="icm", smoothness=1.0, beta=None, sigma=None, halo=1,
                   max_rounds=20, init=None, chunks=None, client=None, random_state=None, engine_options=None):
    """Minimise a pixel-grid Potts energy tile by tile on Dask.

    The energy is ``sum_p U[p, z_p] + sum_{p~q} w_pq [z_p != z_q]`` over the
    4-connected grid, with ``w_pq = smoothness * exp(-beta |I_p - I_q|^2)`` (the weights
    of :func:`graphclust.grid_arrays`) or ``w_pq = smoothness`` without an image. A
    round updates the tiles of one colour of a checkerboard of tiles, then those of the
    other; a tile reads its chunk plus ``halo`` pixels around it (cut from its
    neighbours' blocks: one task per block and half round),
    runs the single-machine engine ``method`` on the chunk and the inner ``halo - 1``
    rings with the outermost ring's labels held fixed (their Potts terms folded into the
    unaries of the pixels next to them), and keeps the new labels of its chunk only if
    they lower the energy. Tiles of one colour share no pair term, so every round lowers
    the global energy or leaves it; rounds stop when one changes no label, or after
    ``max_rounds``. Labels stay chunked on the workers between rounds; no worker ever
    holds more than a tile and its halo.

    Parameters
    ----------
    unary : dask.array.Array or ndarray of shape (H, W, K)
        Label costs per pixel (finite). An ndarray needs ``chunks``.
    image : dask.array.Array, ndarray of shape (H, W) or (H, W, C), or None, default=None
        Chunked like ``unary`` over (rows, cols); None gives constant weights.
    method : str, default="icm"
        Engine run on each tile (a key of :data:`graphclust.inference.ENGINES`:
        ``"icm"``, ``"icm-colour"``, ``"bp"``, ...). ``"icm"`` with at most the
        options ``order`` (``"random"`` or ``"fixed"``), ``max_iter`` and
        ``random_state`` runs the grid kernel
        :func:`graphclust.inference.grid_icm.grid_icm` on the tile's arrays (no
        :class:`~graphclust.energy.Energy` is built; float32 unaries are not copied);
        anything else builds an Energy per tile and calls
        :func:`graphclust.inference.solve`.
    smoothness : float, default=1.0
    beta, sigma : float or None, default=None
        Contrast sensitivity as in :func:`graphclust.grid_arrays`; ``None`` computes
        ``beta`` over the whole image (one task per image block and its halo strips).
    halo : int, default=1
        Pixels read around each tile (>= 1); every chunk must be at least this large.
    max_rounds : int, default=20
    init : dask.array.Array or ndarray of shape (H, W) of int, or None, default=None
        Starting labels in ``0 .. K-1``, chunked like ``unary``; default the unary
        argmin.
    chunks : tuple of int or None
        Tile size when ``unary``/``image`` are numpy arrays.
    client : dask.distributed.Client or None, default=None
        ``None`` uses dask's current scheduler (a default distributed client if one
        exists). On a distributed client each tile is given a worker (each colour's
        tiles shared among the workers by their threads, as a loose restriction) and the
        next round is submitted before the last one's changes are counted.
    random_state : int or None, default=None
        Seeds the ICM visiting orders (one stream per tile and round).
    engine_options : dict or None
        Passed to the engine on every tile (``max_iter``, ``schedule``, ...).

    Returns
    -------
    GridResult

    Raises
    ------
    InvalidParameterError
        A closed client, a chunk smaller than ``halo``, ``unary`` and ``image`` chunked
        differently, bad shapes or parameters.

    See Also
    --------
    grid_energy : the same energy, evaluated chunk by chunk.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> from graphclust.distributed import grid_inference, grid_energy
    >>> rng = np.random.default_rng(0)
    >>> truth = np.zeros((24, 24), int); truth[6:18, 6:18] = 1
    >>> noisy = truth + rng.normal(scale=0.6, size=truth.shape)
    >>> unary = da.from_array(np.stack([noisy ** 2, (noisy - 1) ** 2], -1), chunks=(8, 8, 2))
    >>> res = grid_inference(unary, smoothness=0.8, random_state=0)
    >>> labels = res.labels.compute()
    >>> res.converged, float((labels == truth).mean()) > 0.95
    (True, True)
    >>> grid_energy(res.labels, unary, smoothness=0.8) <= grid_energy(unary.argmin(-1), unary, smoothness=0.8)
    True
    """
    t0 = time.perf_counter()
    dask, da = _dask()
    client = _check_client(client)
    halo = check_int(halo, "halo", low=1)
    max_rounds = check_int(max_rounds, "max_rounds", low=1)
    smoothness = check_float(smoothness, "smoothness", low=0.0)
    if beta is not None and sigma is not None:
        raise InvalidParameterError("give beta or sigma, not both")
    if sigma is not None:
        beta = 0.5 / check_float(sigma, "sigma", low=0.0, low_open=True) ** 2
    from ..inference import ENGINES

    if method not in ENGINES:
        raise InvalidParameterError(f"unknown method {method!r}; available: {', '.join(sorted(ENGINES))}")
    seed = None if random_state is None else int(check_random_state(random_state).integers(2**31))
    run = uuid.uuid4().hex  # names this run's tile fixed points (_FixedPoints)
    # numpy inputs become dask arrays inside _placed, and the plan is filled in once
    # their blocks are known: the annotation reads it only when the graph is submitted.
    # A dask input's own layers (a rechunk, say) stay unannotated, as its graph is the user's
    dclient = _distributed_client(client)
    plan = None if dclient is None else {}
    with _placed(None if isinstance(unary, da.Array) else plan):
        U, img = _check_grid(unary, image, chunks, halo)
    if plan is not None:
        plan.update(_grid_plan(dclient, U))
    # graph optimisation drops the plan's annotations, so nothing below is optimised
    # when persisted; lazy inputs' own graphs are optimised here, once (not persisted
    # ones: dask.optimize drops the futures their graphs consist of)
    from distributed import futures_of

    U, img = (x if x is None or futures_of(x) else dask.optimize(x)[0] for x in (U, img))
    # numpy inputs go to the workers once; left in the graph they would be sent with
    # every half round's graph
    if not isinstance(unary, da.Array):
        (U,) = _persist(client, U, optimize=False)
    if img is not None and not isinstance(image, da.Array):
        (img,) = _persist(client, img, optimize=False)
    if img is None:
        beta = 0.0
    elif beta is not None:
        beta = check_float(beta, "beta", low=0.0)
    # labels travel between workers every half round: the smallest type that holds them
    # (a quarter of int32's bytes for K <= 127); the result is int32
    ltype = _label_dtype(U.shape[2])
    # only graph layers built inside _placed get the plan; persist outside it, or dask
    # would apply the plan to every task of the graph (the user's too)
    with _placed(plan):
        if init is None:
            z = U.map_blocks(_argmin_labels, ltype, drop_axis=2, dtype=ltype, meta=np.empty((0, 0), ltype))
        else:
            z = _as_dask(init, chunks, "init")
            if z.shape != U.shape[:2] or z.chunks != U.chunks[:2]:
                raise InvalidParameterError(
                    f"init must have shape {U.shape[:2]} and chunks {U.chunks[:2]}, got {z.shape} and {z.chunks}"
                )
            if not np.issubdtype(z.dtype, np.integer):
                raise InvalidParameterError(f"init must hold integer labels, got dtype {z.dtype}")
            z = z.map_blocks(_init_labels, U.shape[2], ltype, dtype=ltype, meta=np.empty((0, 0), ltype))
        # the halo strips of the unaries and the image never change: cut once per run
        rings = [_halo_rings(x, halo) for x in (U, img) if x is not None]
    (z,) = _persist(client, z, optimize=False)
    rings = _persist(client, *rings, optimize=False)
    # let these small tasks finish before the first tile update takes a worker's only
    # thread: one still waiting for a transfer would otherwise queue behind it
    _wait(z, *rings)
    U_rings, weights = rings[0], None
    if img is not None:
        img_rings = rings[1]
        if beta is None:
            beta = _ring_beta(img, img_rings, client)
        with _placed(plan):
            weights = _block_map(_tile_weights, "grid-weights", img, img_rings, beta, smoothness)
        (weights,) = _persist(client, weights, optimize=False)

    def submit_round(z, r):
        for colour in (0, 1):
            with _placed(plan):
                new = _half_round(z, U, weights, U_rings, colour, halo, smoothness=smoothness, method=method,
                                  options=engine_options, seed=seed, round_=r, run=run)
            (z,) = _persist(client, new, optimize=False)
        return z

    n_changes, converged, rounds = [], False, 0
    start, z = z, submit_round(z, 0)
    for r in range(max_rounds):
        last = r + 1 == max_rounds
        # on a distributed cluster round r + 1 is submitted before round r's changes are
        # counted, so the workers never drain between rounds; if round r changed nothing
        # its result is dropped and the labels are those of round r, as without it
        # (dask's local schedulers would run it in full first)
        following = submit_round(z, r + 1) if plan is not None and not last else None
        (changed,) = _compute(client, (z != start).sum())
        rounds += 1
        n_changes.append(int(changed))
        if changed == 0:
            converged = True
            if following is not None:  # cancelled: left to run it would cost a round
                dclient.cancel(futures_of(following))
            break
        if not last:
            start, z = z, following if following is not None else submit_round(z, r + 1)
    if z.dtype != np.int32:
        with _placed(plan):
            z = z.astype(np.int32)
        (z,) = _persist(client, z, optimize=False)
    return GridResult(labels=z, n_rounds=rounds, n_changes=n_changes, converged=converged, beta=float(beta),
                      seconds=time.perf_counter() - t0)


def grid_energy(labels, unary, image=None, *, smoothness=1.0, beta=None, sigma=None, chunks=None, client=None):
    """The grid energy of :func:`grid_inference` for ``labels``, summed chunk by chunk.

    Parameters
    ----------
    labels : dask.array.Array or ndarray of shape (H, W)
    unary, image, smoothness, beta, sigma, chunks, client
        As in :func:`grid_inference` (pass the ``beta`` that run used, ``result.beta``,
        to score the same energy).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from graphclust.distributed import grid_energy
    >>> unary = np.zeros((4, 4, 2)); labels = np.zeros((4, 4), int); labels[:, 2:] = 1
    >>> grid_energy(labels, unary, smoothness=0.5, chunks=(2, 2))   # 4 cut edges
    2.0
    """
    _, da = _dask()
    client = _check_client(client)
    if beta is not None and sigma is not None:
        raise InvalidParameterError("give beta or sigma, not both")
    if sigma is not None:
        beta = 0.5 / check_float(sigma, "sigma", low=0.0, low_open=True) ** 2
    smoothness = check_float(smoothness, "smoothness", low=0.0)
    U, img = _check_grid(unary, image, chunks, 1)
    z = _as_dask(labels, chunks if chunks is not None else U.chunks[:2], "labels")
    if z.shape != U.shape[:2]:
        raise InvalidParameterError(f"labels must have shape {U.shape[:2]}, got {z.shape}")
    if z.chunks != U.chunks[:2]:
        z = z.rechunk(U.chunks[:2])
    if img is None:
        beta = 0.0
    elif beta is None:
        beta = _ring_beta(img, _halo_rings(img, 1), client)
    args = [z[..., None], U] + ([img if img.ndim == 3 else img[..., None]] if img is not None else [])
    depth = [{0: 1, 1: 1, 2: 0}] * len(args)
    parts = da.map_overlap(
        _tile_energy, *args, depth=depth, boundary="none", trim=False, align_arrays=False, dtype=np.float64,
        chunks=((1,) * z.numblocks[0], (1,) * z.numblocks[1]), drop_axis=2, meta=np.empty((0, 0)),
        nblocks=z.numblocks, beta=float(beta), smoothness=smoothness,
    )
    (total,) = _compute(client, parts.sum())
    return float(total)
