"""Collapsed Gibbs sampling over cluster assignments: one engine for every sampler.

The engine moves *items* (a node, or nodes joined by hard must-links) between cluster
*slots*. For each item in a given order it takes the item out of its cluster, scores
it against every occupied cluster and a new one, draws the new cluster and puts the
item back:

.. math::

    P(z_u = k \\mid \\cdot) \\propto \\exp\\big(\\text{score}(u, k) + \\textstyle\\sum_{v \\sim u,\\, z_v = k} w_{uv}\\big),
    \\qquad P(z_u = \\text{new} \\mid \\cdot) \\propto \\exp(\\text{score\\_new}(u))

where ``score`` is the provider's prior times likelihood (CRP and a collapsed
predictive for TVClust, a Gram determinant for DCP, a distance-dependent prior and a
max-margin scorer for dd-MMDPM) and ``w_uv`` the signed side-information terms
(may-link / may-not-link log-odds; ``-inf``, a hard cannot-link, forbids the
cluster). Emptied slots go back to a free stack and are reused, lowest first.
Sequentially-allocated split–merge moves (Dahl 2005) run for providers that give
the four extra hooks.

**Providers.** A provider keeps its cluster statistics in a :class:`typing.NamedTuple`
of arrays (its *state*) and registers, for that class, a handful of numba functions
(:func:`register_provider`). Each provider gets its own kernels, compiled from the
engine's templates with the provider's functions inlined (numba IR); the state is
passed once per kernel call and its arrays are borrowed, not reference-counted, inside
it, so a sweep runs as fast as a hand-written one, or faster. The kernels of the
package's providers go into numba's disk cache (the public ``cache=True``) and load
from it in later processes. ``docs/gibbs.md`` shows a provider written from scratch.
"""

import math

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.core.datamodel.models import ArrayModel
from numba.extending import intrinsic, lower_cast, register_model

from .. import _sampling
from .._sampling import release_slot, sample_log_weights
from ..errors import InvalidParameterError
from ._specialise import bind as bind_template
from ._specialise import hook_space, source_stamp, state_tag

__all__ = ["register_provider", "GibbsChain", "HOOKS", "SPLIT_MERGE_HOOKS"]

#: hooks every provider gives: ``scores(ps, u, k_old, z, active, n_active, pos, died, side, out)``
#: (take the item out of its slot and score it) and ``add(ps, u, k, new, active, n_active)``
HOOKS = ("scores", "add")
#: hooks that enable split–merge moves: ``score(ps, u, k)``, ``reset(ps, k)``,
#: ``copy(ps, src, dst)``, ``split_delta(ps, k1, k2, k_merged)``
SPLIT_MERGE_HOOKS = ("score", "reset", "copy", "split_delta")

#: state class -> {"hooks": {name: function}, "split": bool, "cache": bool,
#: "kernels": (sweep,) or (sweep, split_merge)}
_PROVIDERS = {}


def register_provider(state_class, *, scores, add, score=None, reset=None, copy=None, split_delta=None, cache=False):
    """Make the Gibbs engine sample with the provider whose state is ``state_class``.

    Parameters
    ----------
    state_class : typing.NamedTuple subclass
        The class of the provider's state (arrays and scalars numba can type). Each
        provider needs its own class: the engine is specialised on it.
    scores, add : numba-jitted functions
        ``scores(ps, u, k_old, z, active, n_active, pos, died, side, out)``: take item
        ``u`` out of slot ``k_old`` (``k_old < 0``: it is not placed yet; ``z[u]`` is
        already -1, and ``died`` is ``k_old`` when the item was its last member, else
        -1), then write the log weight of ``u`` joining each occupied slot ``active[a]``
        (prior and likelihood) into ``out[a]``, ``a < n_active``, and of ``u`` opening a
        new cluster into ``out[n_active]`` (``pos``: the position in the sweep's order).
        A slot ``k`` with ``side[k] == -inf`` is forbidden by a hard cannot-link: its
        entry is ignored and need not be computed.
        ``add(ps, u, k, new, active, n_active)``: put ``u`` into slot ``k`` (``new``: the
        slot was just opened, and is already in ``active``).
    score, reset, copy, split_delta : numba-jitted functions, optional
        For split–merge moves: ``score(ps, u, k)`` is one entry of ``scores``;
        ``reset(ps, k)`` empties slot ``k``; ``copy(ps, src, dst)`` copies slot
        statistics; ``split_delta(ps, k1, k2, km)`` is ``log π(split into k1, k2) −
        log π(merged km)`` without side information.
    cache : bool, default=False
        Let the engine's kernels for this provider go into numba's on-disk cache
        (``NUMBA_CACHE_DIR``). Only for a class importable in every process that
        shares the cache: numba unpickles the state class of every cached signature.

    Raises
    ------
    InvalidParameterError
        ``state_class`` is not a NamedTuple class, or a hook is not a numba function.

    Notes
    -----
    The hooks are inlined into the engine's kernels (compiled from their Python source
    with the kernels' options), so a provider edited later needs a new process. Inside
    the kernels the arrays of the state, and those the engine passes, are *borrowed*:
    typed ``borrowed array(...)`` (a subtype of numba's array type), they behave as
    arrays but numba counts no references to them, which is what makes the inlined
    calls free. Functions the hooks call are compiled for these types too.
    """
    if not (isinstance(state_class, type) and issubclass(state_class, tuple) and hasattr(state_class, "_fields")):
        raise InvalidParameterError(f"state_class must be a typing.NamedTuple subclass, got {state_class!r}")
    hooks = {"scores": scores, "add": add, "score": score, "reset": reset, "copy": copy, "split_delta": split_delta}
    for name, fn in hooks.items():
        if fn is not None and not hasattr(fn, "py_func"):
            raise InvalidParameterError(f"hook {name!r} of {state_class.__name__} must be a numba-jitted function "
                                        f"(numba.njit), got {type(fn).__name__}")
    hooks = {name: fn for name, fn in hooks.items() if fn is not None}
    entry = {"hooks": hooks, "split": all(name in hooks for name in SPLIT_MERGE_HOOKS), "cache": bool(cache)}
    entry["kernels"] = _make_kernels(state_class, hooks, entry["cache"])
    _PROVIDERS[state_class] = entry


def _entry(state):
    try:
        return _PROVIDERS[type(state)]
    except KeyError:
        raise InvalidParameterError(
            f"{type(state).__name__} is not a registered Gibbs provider state; call "
            "graphclust.inference.gibbs.register_provider first"
        ) from None


# ============================================================================ kernels
class _BorrowedArray(types.Array):
    """The type of an array inside the engine's kernels (see :func:`_borrow`): an
    ordinary array to every operation, but numba counts no references to it (the
    kernel's caller owns it). Views and casts of it are ordinary, counted arrays. Its
    module and name are part of numba's cache keys: keep them."""

    def __init__(self, dtype, ndim, layout, readonly=False, aligned=True):
        name = f"borrowed array({dtype}, {ndim}d, {layout}{', readonly' if readonly else ''})"
        super().__init__(dtype, ndim, layout, readonly=readonly, name=name, aligned=aligned)


@register_model(_BorrowedArray)
class _BorrowedArrayModel(ArrayModel):
    def traverse(self, builder):
        return []  # numba finds no reference count in it, so it emits no increment or decrement


@lower_cast(_BorrowedArray, types.Array)
def _borrowed_to_array(context, builder, fromty, toty, val):
    return val  # same memory and owner; the counted array takes its own references


def _borrowed_type(ty):
    if isinstance(ty, types.Array) and not isinstance(ty, _BorrowedArray):
        return _BorrowedArray(ty.dtype, ty.ndim, ty.layout, readonly=not ty.mutable, aligned=ty.aligned)
    if isinstance(ty, types.BaseTuple):
        return types.BaseTuple.from_types([_borrowed_type(t) for t in ty.types], getattr(ty, "instance_class", tuple))
    return ty


def _borrowed(context, builder, ty, value):
    if isinstance(ty, types.Array):
        return value  # retyped, not counted: no reference is taken, none will be dropped
    if isinstance(ty, types.BaseTuple):
        for i, t in enumerate(ty.types):
            value = builder.insert_value(value, _borrowed(context, builder, t, builder.extract_value(value, i)), i)
        return value
    # anything else (a typed list, ...) is passed on as a new reference, as numba expects
    # of an intrinsic's result
    context.nrt.incref(builder, ty, value)
    return value


@intrinsic
def _borrow(typingctx, x):
    """``x`` (an array, or a tuple of arrays and other values, nested) with every array
    typed :class:`_BorrowedArray`: numba then counts no references to them. The hooks
    are inlined into the kernels, an inlined function copies its arguments, and a copy
    of a counted array costs a call and an atomic increment, and later a decrement, for
    every array of the state at every hook call. The caller's references keep the
    arrays alive for the kernel call."""
    def codegen(context, builder, signature, args):
        return _borrowed(context, builder, x, args[0])
    return _borrowed_type(x)(x), codegen


# The kernels' bodies are templates: for each provider they are compiled with its hooks
# bound to these names (see _make_kernels), as njit(inline="always") functions that numba
# inlines (numba IR: no call, no copy of the state per call).
def _unbound_hook(*args):  # pragma: no cover - never called
    raise NotImplementedError("the kernel templates run only as compiled per provider, see _make_kernels")


_scores = _add = _score = _reset = _copy = _split_delta = _unbound_hook


def _sweep_impl(ps, z, count, adj_ptr, adj_idx, adj_w, order, unif, start, book, active, where, free, side,
                logw):  # pragma: no cover - compiled
    """One Gibbs sweep over the items in ``order`` from position ``start``.

    The provider's ``scores`` and ``add`` (see :func:`register_provider`) are inlined
    and called with its state ``ps``.

    ``z[u]``: slot of item ``u`` (``-1``: not placed yet, as in a sequential start);
    ``count[k]``: items in slot ``k``. ``(adj_ptr, adj_idx, adj_w)``: the item-level
    side information in CSR form, ``adj_w`` the signed log weight a partner in a
    cluster adds to it (``-inf``: hard cannot-link). ``active[:book[0]]`` lists the
    occupied slots (``where`` is its inverse), ``free[:book[1]]`` the free ones (a
    stack). Returns the position reached: ``len(order)``, or earlier when no free slot
    would be left for the new-cluster option (the caller grows the slots and resumes
    there; that item has not been touched).
    """
    n = order.shape[0]
    n_active = book[0]
    n_free = book[1]
    for pos in range(start, n):
        u = order[pos]
        k_old = z[u]
        if n_free == 0 and not (k_old >= 0 and count[k_old] == 1):
            book[0] = n_active
            book[1] = n_free
            return pos
        died = -1
        if k_old >= 0:
            z[u] = -1
            count[k_old] -= 1
            if count[k_old] == 0:  # the cluster goes: its slot returns to the free list
                n_active, n_free = release_slot(k_old, active, where, free, n_active, n_free)
                died = k_old
        # side information: the signed weights of u's partners, per cluster
        for e in range(adj_ptr[u], adj_ptr[u + 1]):
            kv = z[adj_idx[e]]
            if kv >= 0:
                side[kv] += adj_w[e]
        _scores(ps, u, k_old, z, active, n_active, pos, died, side, logw)
        top = -np.inf
        for a in range(n_active):
            s = side[active[a]]
            v = -np.inf if s == -np.inf else logw[a] + s
            logw[a] = v
            if v > top:
                top = v
        if logw[n_active] > top:
            top = logw[n_active]
        choice = sample_log_weights(logw, n_active + 1, top, unif[pos])
        for e in range(adj_ptr[u], adj_ptr[u + 1]):
            kv = z[adj_idx[e]]
            if kv >= 0:
                side[kv] = 0.0
        new = choice == n_active
        if new:
            n_free -= 1
            k = free[n_free]
            active[n_active] = k
            where[k] = n_active
            n_active += 1
        else:
            k = active[choice]
        z[u] = k
        count[k] += 1
        _add(ps, u, k, new, active, n_active)
    book[0] = n_active
    book[1] = n_free
    return n


def _split_merge_impl(ps, z, count, adj_ptr, adj_idx, adj_w, n_attempts, seed, book, active, where, free, tmp, members,
                      scratch):  # pragma: no cover - compiled
    """Sequentially-allocated split–merge moves (Dahl 2005), Metropolis–Hastings.

    Two distinct items ``i, j`` are drawn. If they share a cluster ``S``, a split is
    proposed: ``i`` and ``j`` seed two new clusters and the other members of ``S`` are
    allocated one at a time, in random order, in proportion to ``score`` and the side
    information given the members allocated so far. If they are in different clusters,
    their merge is proposed, and the probability of the reverse split is the product
    of the same allocation probabilities for the current assignment. Acceptance uses
    ``split_delta`` and the side information of the pairs the split separates. Uses
    numba's generator seeded with ``seed``; needs two free slots and the provider's
    ``scratch`` slot. Returns the number of accepted moves.
    """
    np.random.seed(seed)
    n = z.shape[0]
    accepted = 0
    for attempt in range(n_attempts):
        if n < 2 or book[1] < 2:
            break
        i = np.random.randint(n)
        j = np.random.randint(n - 1)
        if j >= i:
            j += 1
        ki = z[i]
        kj = z[j]
        split = ki == kj
        ms = 0
        for u in range(n):
            if u != i and u != j and (z[u] == ki or z[u] == kj):
                members[ms] = u
                ms += 1
        for a in range(ms - 1, 0, -1):
            b = np.random.randint(a + 1)
            t = members[a]
            members[a] = members[b]
            members[b] = t
        nf = book[1]
        si = free[nf - 1]
        sj = free[nf - 2]
        # each hook is called from as few places as possible: every call site is a copy of
        # the hook's code, inlined (the compile time grows with them, not the run time)
        for t in range(2):
            _reset(ps, si if t == 0 else sj)
        logq = 0.0
        n_j = 0
        for a in range(-2, ms):  # i and j seed the two clusters, then the members join
            if a < 0:
                u = i if a == -2 else j
                go_i = a == -2
            else:
                u = members[a]
                side_i = 0.0
                side_j = 0.0
                for e in range(adj_ptr[u], adj_ptr[u + 1]):
                    t = tmp[adj_idx[e]]
                    if t > 0:
                        if t == 1:
                            side_i += adj_w[e]
                        else:
                            side_j += adj_w[e]
                li = 0.0
                lj = 0.0
                for t in range(2):
                    lt = _score(ps, u, si if t == 0 else sj)
                    if t == 0:
                        li = lt + side_i
                    else:
                        lj = lt + side_j
                top = max(li, lj)
                if top == -np.inf:
                    log_pi, log_pj = -np.inf, -np.inf
                else:
                    lse = top + math.log(math.exp(li - top) + math.exp(lj - top))
                    log_pi, log_pj = li - lse, lj - lse
                if split:
                    go_i = np.random.random() < math.exp(log_pi)
                else:
                    go_i = z[u] == ki
                logq += log_pi if go_i else log_pj
            _add(ps, u, si if go_i else sj, False, active, book[0])
            if go_i:
                tmp[u] = 1
            else:
                tmp[u] = 2
                n_j += 1
        # pairs that the split separates, and the merged cluster built from scratch
        cross = 0.0
        hard = False
        _copy(ps, si, scratch)
        for a in range(ms + 2):
            u = i if a == ms else (j if a == ms + 1 else members[a])
            if tmp[u] == 2:
                _add(ps, u, scratch, False, active, book[0])
            for e in range(adj_ptr[u], adj_ptr[u + 1]):
                t = tmp[adj_idx[e]]
                if t > 0 and t != tmp[u]:
                    if adj_w[e] == -np.inf:
                        hard = True
                    else:
                        cross += adj_w[e]
        cross *= 0.5
        # log π(split) − log π(merged)
        delta = _split_delta(ps, si, sj, scratch) - cross
        # the outcome: which slot's statistics become cluster ki's, and the slots emptied
        src = -1
        n_reset = 2
        r0, r1, r2 = si, sj, sj
        if split:
            if math.log(np.random.random()) < delta - logq:
                src = si
                free[nf - 2] = si  # sj leaves the free list, si stays on it
                book[1] = nf - 1
                active[book[0]] = sj
                where[sj] = book[0]
                book[0] += 1
                for a in range(ms + 2):
                    u = i if a == ms else (j if a == ms + 1 else members[a])
                    if tmp[u] == 2:
                        z[u] = sj
                count[sj] = n_j
                count[ki] -= n_j
                n_reset = 1
                accepted += 1
        elif not hard and math.log(np.random.random()) < logq - delta:
            src = scratch
            for a in range(ms + 2):
                u = i if a == ms else (j if a == ms + 1 else members[a])
                if tmp[u] == 2:
                    z[u] = ki
            a = where[kj]
            last = active[book[0] - 1]
            active[a] = last
            where[last] = a
            book[0] -= 1
            count[ki] += count[kj]
            count[kj] = 0
            free[nf] = kj
            book[1] = nf + 1
            r0, r1, r2 = kj, si, sj
            n_reset = 3
            accepted += 1
        if src >= 0:
            _copy(ps, src, ki)
        for r in range(n_reset):
            _reset(ps, r0 if r == 0 else (r1 if r == 1 else r2))
        for a in range(ms + 2):
            u = i if a == ms else (j if a == ms + 1 else members[a])
            tmp[u] = 0
    return accepted


#: the names under which the kernel templates call the hooks
_HOOK_NAMES = {"scores": "_scores", "add": "_add", "score": "_score", "reset": "_reset", "copy": "_copy",
               "split_delta": "_split_delta"}


def _make_kernels(state_class, hooks, cache):
    """The sweep and split–merge kernels of one provider (``hooks``: name -> function).

    Each kernel is an entry point that borrows the arrays (:func:`_borrow`) and calls
    the template compiled with this provider's hooks inlined; the arrays arrive there
    as arguments, which numba's analyses take as shared (a value returned by the
    borrow would not be, and numba may drop writes to it). The entry points are
    closures over a stamp of the source files compiled into them (the hooks' modules
    and the sampling helpers; numba itself watches only the kernels' own file): numba
    keys a cached closure also by its contents, so an edited provider compiles afresh.
    Each provider's kernels have their own names, hence their own cache index, so
    loading them never imports another provider's state class."""
    stamp = source_stamp([_sampling.__file__] + [fn.py_func.__code__.co_filename for fn in hooks.values()])
    tag = state_tag(state_class)
    space = hook_space(globals(), {_HOOK_NAMES[name]: fn for name, fn in hooks.items()})

    def bind(fn, name, closure=None):
        return bind_template(fn, space, name, tag, closure)

    space["_sweep_impl"] = njit(bind(_sweep_impl, "_sweep_impl"))
    space["_split_merge_impl"] = njit(bind(_split_merge_impl, "_split_merge_impl"))

    def sweep(ps, z, count, adj_ptr, adj_idx, adj_w, order, unif, start, book, active, where, free, side,
              logw):  # pragma: no cover - compiled
        stamp  # noqa: B018 - kept in the closure (the cache key)
        return _sweep_impl(_borrow(ps), _borrow(z), count, adj_ptr, adj_idx, adj_w, order, unif, start, book,
                           _borrow(active), where, free, _borrow(side), _borrow(logw))

    def split_merge(ps, z, count, adj_ptr, adj_idx, adj_w, n_attempts, seed, book, active, where, free, tmp,
                    members, scratch):  # pragma: no cover - compiled
        stamp  # noqa: B018 - kept in the closure (the cache key)
        return _split_merge_impl(_borrow(ps), z, count, adj_ptr, adj_idx, adj_w, n_attempts, seed, book,
                                 _borrow(active), where, free, tmp, members, scratch)

    kernels = (njit(cache=cache)(bind(sweep, "sweep", sweep.__closure__)),)
    if all(name in hooks for name in SPLIT_MERGE_HOOKS):
        kernels += (njit(cache=cache)(bind(split_merge, "split_merge", split_merge.__closure__)),)
    return kernels


# ============================================================================ chain
class GibbsChain:
    """The assignment state of one chain: item labels, items per slot, the active and
    free slot lists and the kernels' scratch space; the cluster statistics stay with
    the provider.

    Parameters
    ----------
    provider : object
        Has ``state`` (an instance of a registered state class, read before every
        kernel call) and, when slots can run out, ``grow(capacity)`` (enlarge the
        state to ``capacity`` slots); ``build(z)`` (statistics from scratch for slot
        labels ``z``) is called by :meth:`set_labels`.
    n_items : int
        Number of items.
    capacity : int
        Number of slots to start with (``first_slot`` of them are the provider's own,
        never handed out: e.g. a prior or scratch slot).
    first_slot : int, default=0
    """

    def __init__(self, provider, n_items, capacity, first_slot=0):
        self.provider = provider
        self.first_slot = int(first_slot)
        self.z = np.full(n_items, -1, dtype=np.int64)
        self.book = np.zeros(2, dtype=np.int64)
        self.tmp = None
        self.members = None
        self.active = np.zeros(capacity, dtype=np.int64)
        self.where = np.zeros(capacity, dtype=np.int64)
        self.count = np.zeros(capacity, dtype=np.int64)
        # a stack: the lowest free slot is on top (last)
        self.free = np.zeros(capacity, dtype=np.int64)
        slots = np.arange(capacity - 1, self.first_slot - 1, -1)
        self.free[:len(slots)] = slots
        self.book[1] = len(slots)
        self.side = np.zeros(capacity)
        self.logw = np.zeros(capacity + 1)

    @property
    def capacity(self):
        return len(self.active)

    @property
    def n_clusters(self):
        return int(self.book[0])

    def grow(self):
        """Double the number of slots (the provider's state first)."""
        old = self.capacity
        capacity = 2 * old
        self.provider.grow(capacity)
        for name in ("active", "where", "count", "free"):
            arr = np.zeros(capacity, dtype=np.int64)
            arr[:old] = getattr(self, name)
            setattr(self, name, arr)
        n_free = self.book[1]
        new = np.arange(capacity - 1, old - 1, -1)
        # new slots go under the existing free ones, so lower slots are reused first
        self.free[len(new):len(new) + n_free] = self.free[:n_free].copy()
        self.free[:len(new)] = new
        self.book[1] = n_free + len(new)
        self.side = np.zeros(capacity)
        self.logw = np.zeros(capacity + 1)

    def set_labels(self, labels):
        """Start from ``labels`` (``0..K-1`` per item, ``-1``: not placed): label ``k``
        goes to slot ``first_slot + k``, then the provider builds its statistics."""
        labels = np.asarray(labels, dtype=np.int64)
        placed = labels >= 0
        need = self.first_slot + (int(labels.max()) + 1 if placed.any() else 0)
        while self.capacity < need:  # the sweep grows the slots when a new cluster needs one
            self.grow()
        self.z = np.where(placed, labels + self.first_slot, -1).astype(np.int64)
        used = np.unique(self.z[placed])
        self.count[:] = np.bincount(self.z[placed], minlength=self.capacity)
        self.active[:len(used)] = used
        self.where[used] = np.arange(len(used))
        free = np.setdiff1d(np.arange(self.first_slot, self.capacity), used)[::-1]
        self.free[:len(free)] = free
        self.book[:] = (len(used), len(free))
        self.provider.build(self.z)

    def sweep(self, order, unif, adj):
        """One sweep over the items in ``order`` with uniform draws ``unif`` (one per
        position); ``adj = (ptr, idx, w)`` the signed side information (CSR over
        items, ``w`` the log weight, ``-inf`` a hard cannot-link)."""
        pos = 0
        while True:
            state = self.provider.state
            pos = _entry(state)["kernels"][0](state, self.z, self.count, adj[0], adj[1], adj[2], order, unif, pos,
                                              self.book, self.active, self.where, self.free, self.side, self.logw)
            if pos >= len(order):
                return
            self.grow()

    def split_merge(self, adj, n_attempts, seed, scratch):
        """``n_attempts`` split–merge proposals (the provider must give the split–merge
        hooks; ``scratch``: a slot of its own the kernel may overwrite). Returns the
        number accepted."""
        while self.book[1] < n_attempts + 1:  # every accepted split takes one slot
            self.grow()
        if self.tmp is None:
            self.tmp = np.zeros(len(self.z), dtype=np.int8)
            self.members = np.zeros(len(self.z), dtype=np.int64)
        state = self.provider.state
        entry = _entry(state)
        if not entry["split"]:
            raise InvalidParameterError(f"{type(state).__name__} has no split-merge hooks "
                                        f"({', '.join(SPLIT_MERGE_HOOKS)})")
        return entry["kernels"][1](state, self.z, self.count, adj[0], adj[1], adj[2], int(n_attempts), int(seed),
                                   self.book, self.active, self.where, self.free, self.tmp, self.members,
                                   int(scratch))


def no_side_information(n_items):
    """An empty item-level side-information CSR ``(ptr, idx, w)``."""
    return np.zeros(n_items + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
