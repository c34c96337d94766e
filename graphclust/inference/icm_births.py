"""ICM with births: iterated conditional modes over a label set that grows.

The energy is an :class:`~graphclust.energy.Energy` with label costs whose unaries come
from an incremental node-potential provider (the costs of a cluster change as nodes
join and leave it) and whose label set is open: besides every current cluster, a node
may open a new one, paying its label cost. RDP-means and DP-means are this engine over
:class:`~graphclust.potentials.DPCentroids` with the birth cost ``λ``:

.. math::

    E(z) = \\sum_i U_i(z_i) + \\sum_{(i,j): w_{ij} > 0} w_{ij} [z_i \\ne z_j]
         + \\sum_{(i,j): w_{ij} < 0} |w_{ij}| [z_i = z_j] + λ K(z)

One pass visits the nodes in a given order. Node ``i`` is taken out of its cluster, the
provider scores it against every cluster and a new one, the pair terms of its
neighbours and the label costs are added (:mod:`graphclust.inference._local`, the local
update every ICM kernel shares: a cluster that ``i`` would open pays ``λ``, a cluster
that ``i`` alone holds is credited ``λ`` when it leaves), and ``i`` moves only to a
strictly cheaper option, ties to the lowest cluster and a new cluster last. With the
provider's scores exact changes of ``E`` at its current statistics, no visit raises
``E``.

**Providers.** A provider keeps its cluster statistics in a :class:`typing.NamedTuple`
of arrays (its *state*), which also holds the assignment the engine changes: ``z``
(int64 label per node) and ``count`` (int64 nodes per cluster slot; its length is the
number of slots the state holds). It registers numba functions for that class with
:func:`register_provider` (``njit(inline="always")``, so that they compile into the
kernel; they must not allocate):

* ``scores(ps, i, a, cost, n)``: take node ``i`` out of cluster ``a`` and write its cost
  for each cluster ``k < n`` into ``cost[k]`` and for a new cluster into ``cost[n]``
  (label costs excluded: the engine adds them);
* ``add(ps, i, k, new, n)``: put ``i`` into ``k`` (``new``: ``k`` is the slot just
  opened, at the node; ``n`` clusters now);
* optionally ``bounds(ps, i)`` → ``(stay, other, birth)`` and ``score(ps, i, k)``, which
  let a pass skip a node without scoring it: ``stay`` bounds ``i``'s cost in its
  cluster from above, ``other`` its cost in any other cluster that existed when the
  pass began from below, ``birth`` its cost in a new cluster from below (``stay = inf``:
  no bound), and ``score`` is one exact entry of ``scores`` (for clusters born during
  the pass). When the bounds, with the pair terms added exactly, prove that staying is
  cheapest by a margin, the node stays: the decision a full evaluation takes.

The engine compiles one kernel per provider with the hooks inlined (as fast as a
hand-written sweep), the way the Gibbs engine does (:mod:`._specialise`): it loads from
numba's disk cache in later processes, and an edited provider is compiled afresh.
"""

import numpy as np
from numba import njit

from ..errors import InvalidParameterError
from . import _local
from ._local import REL_TOL, cheapest, improves, label_costs, potts_pull
from ._specialise import bind, hook_space, source_stamp, state_tag

__all__ = ["register_provider", "sweep"]

#: a bound must prove a skip with this much room (rounding never decides a skip)
_MARGIN = 1e-9
_SAFE = 1.0 - 1e-9

#: state class -> compiled kernel
_KERNELS = {}


@njit(cache=True, inline="always")
def _no_bounds(ps, i):  # pragma: no cover - compiled
    return np.inf, 0.0, 0.0


@njit(cache=True, inline="always")
def _no_score(ps, i, k):  # pragma: no cover - compiled
    return np.inf


def register_provider(state_class, *, scores, add, bounds=None, score=None, cache=False):
    """Make ICM with births run the provider whose state is ``state_class``.

    Parameters
    ----------
    state_class : typing.NamedTuple subclass
        The class of the provider's state: arrays and scalars numba can type, with
        fields ``z`` and ``count`` (see the module docstring). The kernel is
        specialised on it.
    scores, add : numba-jitted functions
        See the module docstring.
    bounds, score : numba-jitted functions or None, default=None
        Both or neither: bounds that let a pass skip nodes.
    cache : bool, default=False
        Put the kernel in numba's on-disk cache. Only for a class importable in every
        process that shares the cache: numba reads every cached signature back, so an
        entry for a class a later process cannot import breaks the engine there.

    Raises
    ------
    InvalidParameterError
        Not a NamedTuple class with ``z`` and ``count`` fields, a hook that is not a
        numba function, or only one of ``bounds`` and ``score``.
    """
    if not (isinstance(state_class, type) and issubclass(state_class, tuple) and hasattr(state_class, "_fields")):
        raise InvalidParameterError(f"state_class must be a typing.NamedTuple subclass, got {state_class!r}")
    missing = [f for f in ("z", "count") if f not in state_class._fields]
    if missing:
        raise InvalidParameterError(f"{state_class.__name__} needs the field(s) {', '.join(missing)} "
                                    "(labels and nodes per slot, which the engine changes)")
    if (bounds is None) != (score is None):
        raise InvalidParameterError("give both bounds and score, or neither")
    hooks = {"scores": scores, "add": add, "bounds": bounds, "score": score}
    for name, fn in hooks.items():
        if fn is not None and not hasattr(fn, "py_func"):
            raise InvalidParameterError(f"hook {name!r} of {state_class.__name__} must be a numba-jitted function "
                                        f"(numba.njit), got {type(fn).__name__}")
    bounds = _no_bounds if bounds is None else bounds
    score = _no_score if score is None else score
    _KERNELS[state_class] = _make_kernel(state_class, {"_scores": scores, "_add": add, "_bounds": bounds,
                                                       "_score": score}, bool(cache))


@njit(cache=True, inline="always")
def _pulls_own_and_other(cost, z, indptr, indices, weights, i, a):  # pragma: no cover - compiled
    """``(pull of cluster a, largest pull of any other cluster)`` of node ``i``'s
    neighbours (``cost`` is scratch)."""
    pull_a, pull_max = 0.0, 0.0
    if indptr[i] < indptr[i + 1]:
        for q in range(indptr[i], indptr[i + 1]):
            zj = z[indices[q]]
            if zj >= 0:
                cost[zj] = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            zj = z[indices[q]]
            if zj >= 0:
                cost[zj] += weights[q]
        for q in range(indptr[i], indptr[i + 1]):
            zj = z[indices[q]]
            if zj == a:
                pull_a = cost[zj]
            elif zj >= 0 and cost[zj] > pull_max:
                pull_max = cost[zj]
    return pull_a, pull_max


def _pass_impl(ps, n_slots, order, start, indptr, indices, weights, lc, rel_tol, k_pass,
               cost):  # pragma: no cover - compiled
    """Template of the pass kernel (``_scores``, ``_add``, ``_bounds``, ``_score``: the
    provider's hooks, bound by :func:`_make_kernel`). One pass over ``order[start:]``;
    returns ``(position reached, n_slots, n_changed)``, stopping early when every slot
    is in use (the caller grows the state and resumes there; that node is untouched)."""
    z = ps.z
    count = ps.count
    cap = count.shape[0]
    changed = 0
    for p in range(start, order.shape[0]):
        if n_slots >= cap:
            return p, n_slots, changed
        i = order[p]
        a = z[i]
        if count[a] > 1:  # leaving would free no label: the bounds can decide
            stay_ub, other_lb, birth_lb = _bounds(ps, i)
            if stay_ub < np.inf:
                pull_a, pull_max = _pulls_own_and_other(cost, z, indptr, indices, weights, i, a)
                stay = stay_ub - pull_a
                room = _MARGIN * abs(stay)
                if stay + room <= other_lb - pull_max and stay + room <= birth_lb + lc[n_slots]:
                    far = True
                    for k in range(k_pass, n_slots):  # born in this pass: scored exactly
                        pull_k = 0.0
                        for q in range(indptr[i], indptr[i + 1]):
                            if z[indices[q]] == k:
                                pull_k += weights[q]
                        if not stay + room <= _score(ps, i, k) * _SAFE - pull_k:
                            far = False
                            break
                    if far:
                        continue
        _scores(ps, i, a, cost, n_slots)
        label_costs(cost, count, lc, a, n_slots + 1)
        potts_pull(cost, z, indptr, indices, weights, i)
        best = cheapest(cost, n_slots + 1)
        k = a
        if best != a and improves(cost[best], cost[a], rel_tol):
            changed += 1
            k = best
        new = k == n_slots
        if new:
            n_slots += 1
        z[i] = k
        count[a] -= 1
        count[k] += 1
        _add(ps, i, k, new, n_slots)
    return order.shape[0], n_slots, changed


def _make_kernel(state_class, hooks, cache):
    """The pass kernel with the provider's hooks compiled in.

    It allocates nothing, so it is compiled without numba's reference counting
    (``_nrt=False``): arrays read from the state inside inlined hooks and helpers would
    otherwise cost atomic increments per node, which doubled a pass that skips most
    nodes (1.1 ms -> 6.5 ms at 10⁵ points)."""
    stamp = source_stamp([_local.__file__] + [fn.py_func.__code__.co_filename for fn in hooks.values()])
    tag = state_tag(state_class)
    space = hook_space(globals(), hooks)
    space["_pass_impl"] = njit(_nrt=False)(bind(_pass_impl, space, "_pass_impl", tag))

    def kernel(ps, n_slots, order, start, indptr, indices, weights, lc, rel_tol, k_pass,
               cost):  # pragma: no cover - compiled
        stamp  # noqa: B018 - kept in the closure (the cache key)
        return _pass_impl(ps, n_slots, order, start, indptr, indices, weights, lc, rel_tol, k_pass, cost)

    return njit(cache=cache, _nrt=False)(bind(kernel, space, "kernel", tag, kernel.__closure__))


def sweep(provider, order, adjacency, label_cost):
    """One pass of ICM with births over the nodes in ``order``.

    Parameters
    ----------
    provider : object
        Has ``state`` (an instance of a registered state class, read before every
        kernel call), ``n_slots`` (clusters in use, empty ones included; the engine
        opens slot ``n_slots`` for a birth and sets the attribute) and ``grow()``
        (double the slots of the state, ``count`` included).
    order : array-like of int
        Nodes to visit, in order.
    adjacency : tuple (indptr, indices, weights, ...)
        The pair terms as CSR arrays (:attr:`Energy.adjacency
        <graphclust.energy.Energy.adjacency>`, :func:`graphclust.energy.potts_csr`):
        a neighbour in cluster ``k`` lowers the cost of ``k`` by ``w`` (``-inf``: a
        hard repulsive term forbids ``k``).
    label_cost : float >= 0
        Cost of every cluster in use (``λ``).

    Returns
    -------
    int
        Number of nodes that changed cluster.

    Raises
    ------
    InvalidParameterError
        The provider's state class is not registered.
    """
    indptr, indices, weights = adjacency[0], adjacency[1], adjacency[2]
    order = np.ascontiguousarray(order, dtype=np.int64)
    k_pass = provider.n_slots  # the clusters the provider's bounds cover
    pos, changed = 0, 0
    while True:
        state = provider.state
        try:
            kernel = _KERNELS[type(state)]
        except KeyError:
            raise InvalidParameterError(
                f"{type(state).__name__} is not a registered provider state of ICM with births; call "
                "graphclust.inference.icm_births.register_provider first"
            ) from None
        cap = state.count.shape[0]
        lc = np.full(cap + 1, float(label_cost))
        cost = np.empty(cap + 1)
        pos, provider.n_slots, moved = kernel(state, provider.n_slots, order, pos, indptr, indices, weights, lc,
                                              REL_TOL, k_pass, cost)
        changed += moved
        if pos >= len(order):
            return changed
        provider.grow()
