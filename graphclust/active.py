"""Active selection of side information: which pair to ask about next.

A person answering "same or different?" is the expensive part of constrained
clustering. The functions here take a fitted estimator and its data and return the
next few pairs worth asking, ranked, each with the score that put it there:

* ``"random"``: uniform over the undecided pairs (the baseline);
* ``"farthest_first"``: a cold start that needs no model. It finds one example of
  every cluster by farthest-first traversal, asking each new point against the
  nearest group found so far (explore), then places further points against their
  nearest groups (consolidate);
* ``"uncertainty"``: pairs whose probability of sharing a cluster is nearest ½;
* ``"impact"``: pairs whose answer is most likely to contradict the current labels,
  weighed by how many labels would follow (the uncertain neighbourhood of the less
  certain end).

No strategy asks a pair that the answers so far already decide: two nodes of one
must-link component, or two components joined by a cannot-link.

The probability that nodes ``i`` and ``j`` share a cluster comes from the estimator
(:func:`node_marginals`): the fraction of posterior samples that put them together
(TVClust, DCP, dd-MMDPM, MMDPM), or ``Σ_k p_ik p_jk`` from per-node probabilities: the
model's own costs turned into probabilities (HMRF's unary costs, RDP-means' and
DP-means' centroid distances, ``predict_proba``), or, for the graph methods (COSC,
spectral clustering), the labels smoothed over the data graph.

:class:`ActiveLoop` (function form :func:`run_active`) asks an oracle batch after
batch, refits the estimator and records a score after each batch; oracles are any
callable ``oracle(u, v)``, :class:`LabelOracle` (answers from labels, optionally
wrong at a given rate) or :class:`PromptOracle` (a person at a prompt).
:func:`suggest_strokes` does the same for images: where a scribble would help most.
"""

from dataclasses import dataclass, field
import numbers
import time

import numpy as np
import scipy.sparse as sp

from ._utils import check_float, check_int, check_random_state, sq_distances
from .base import check_is_fitted
from .errors import InvalidParameterError, NotFittedError
from .sideinfo import SideInfo, must_link_components, side_information

__all__ = [
    "STRATEGIES",
    "MARGINAL_SOURCES",
    "QueryBatch",
    "query",
    "node_marginals",
    "coclustering_probability",
    "parse_answer",
    "LabelOracle",
    "PromptOracle",
    "ActiveLoop",
    "run_active",
    "StrokeSuggestions",
    "suggest_strokes",
]

#: strategy -> whether it needs per-node probabilities (marginals) from the estimator
STRATEGIES = {"random": False, "farthest_first": False, "uncertainty": True, "impact": True}

#: where node marginals can come from (see :func:`node_marginals`)
MARGINAL_SOURCES = ("auto", "posterior", "model", "graph", "features")

#: answers an oracle may give, in their canonical form +1 (same), -1 (different), 0 (unknown)
_SAME = {"same", "must", "must-link", "y", "yes", "+", "1", "+1", "true"}
_DIFFERENT = {"different", "cannot", "cannot-link", "n", "no", "-", "-1", "false"}
_UNKNOWN = {"unknown", "?", "", "skip", "dont know", "don't know", "none"}

_N_NEIGHBOURS = 8  # partners per uncertain node, and the neighbourhood of "impact"
_MAX_POSTERIOR_SAMPLES = 200


# ============================================================================ context
class _Context:
    """What a strategy needs: the fitted labels, the problem's arrays and the closure
    of the answers so far (must-link components, cannot-linked component pairs)."""

    def __init__(self, estimator, X, sideinfo, marginals):
        if estimator is None or not hasattr(estimator, "fit"):
            raise InvalidParameterError(f"estimator must be a fitted clustering estimator, got {estimator!r}")
        try:
            check_is_fitted(estimator)
        except NotFittedError:
            raise NotFittedError(
                f"estimator: this {type(estimator).__name__} is not fitted yet; call fit(X, sideinfo=...) before "
                "asking which pairs to query (run_active fits it for you)") from None
        from .problem import as_problem

        if X is None:
            problem = getattr(estimator, "problem_", None)
            if problem is None:
                raise InvalidParameterError(
                    f"X is None and {type(estimator).__name__} keeps no problem_: pass the data it was fitted on")
        else:
            problem = as_problem(X)
        labels = np.asarray(estimator.labels_)
        if len(labels) != problem.n_nodes:
            raise InvalidParameterError(
                f"X has {problem.n_nodes} nodes but the estimator was fitted on {len(labels)}: pass the data it "
                "was fitted on")
        if marginals not in MARGINAL_SOURCES:
            raise InvalidParameterError(f"marginals must be one of {', '.join(map(repr, MARGINAL_SOURCES))}, "
                                        f"got {marginals!r}")
        self.estimator, self.problem, self.labels = estimator, problem, labels
        self.n = problem.n_nodes
        self.marginal_source = marginals
        # the answers so far: those given, else those the estimator was fitted with
        if sideinfo is not None:
            S = side_information(problem.nodes, None, sideinfo)
            pairs, weights = S.to_arrays(problem.index)
        else:
            own = getattr(estimator, "problem_", None)
            if own is not None and own.n_nodes == self.n:
                pairs, weights = own.constraints, own.constraint_weights
            else:
                pairs, weights = np.empty((0, 2), np.int64), np.empty(0)
        self.pairs, self.weights = np.asarray(pairs, np.int64).reshape(-1, 2), np.asarray(weights, float)
        self.n_comp, self.comp = must_link_components(self.n, self.pairs[self.weights > 0])
        self.comp_size = np.bincount(self.comp, minlength=self.n_comp)
        cp = self.pairs[self.weights < 0]
        ca, cb = self.comp[cp[:, 0]], self.comp[cp[:, 1]]
        self.cannot_keys = np.unique(self._key(ca, cb))
        self._features = self._P = None

    def _key(self, ca, cb):
        return np.minimum(ca, cb).astype(np.int64) * self.n_comp + np.maximum(ca, cb)

    def decided(self, a, b):
        """Whether the closure of the answers decides each pair ``(a[t], b[t])``."""
        ca, cb = self.comp[a], self.comp[b]
        same = ca == cb
        key = self._key(ca, cb)
        pos = np.clip(np.searchsorted(self.cannot_keys, key), 0, max(len(self.cannot_keys) - 1, 0))
        apart = (self.cannot_keys[pos] == key) if len(self.cannot_keys) else np.zeros(len(key), bool)
        return same | apart

    def touched(self):
        """Nodes that take part in an answer."""
        return np.unique(self.pairs.reshape(-1))

    @property
    def features(self):
        """Feature rows, or a spectral embedding of the data graph when there are none."""
        if self._features is None:
            X = self.problem.X
            if X is None:
                W = _graph_of(self.estimator, self.problem)
                if W is None:
                    raise InvalidParameterError("the data have neither node features nor graph edges to measure "
                                                "distances with")
                from .spectral import spectral_embedding

                k = int(min(max(len(np.unique(self.labels)) + 1, 3), self.n - 1, 16))
                X = spectral_embedding(sp.csr_array(W), k, random_state=0)
            else:
                counts = getattr(self.problem, "counts", None)
                X = np.asarray(X, float)
                if counts is not None and np.any(np.asarray(counts) != 1):  # rows hold sums of merged points
                    X = X / np.asarray(counts, float)[:, None]
            self._features = X
        return self._features

    def marginals(self, strategy):
        if self._P is None:
            self._P, self.source = _marginals(self, self.marginal_source, strategy)
        return self._P


def _graph_of(estimator, problem):
    """The data graph of a fit (COSC keeps the one it built from features)."""
    W = getattr(estimator, "affinity_matrix_", None)
    if W is None or W.shape[0] != problem.n_nodes:
        W = problem.W
    return W if W is not None and W.nnz else None


# ============================================================================ marginals
def node_marginals(estimator, X=None, *, source="auto", sideinfo=None):
    """Probability that each node belongs to each cluster, as the estimator sees it.

    Parameters
    ----------
    estimator : fitted estimator
    X : array-like, networkx.Graph, Problem or None, default=None
        The data the estimator was fitted on (``None``: its ``problem_``).
    source : {"auto", "posterior", "model", "graph", "features"}, default="auto"
        ``"posterior"``: the kept posterior samples (TVClust, DCP, DDMMDPM, MMDPM),
        each matched to ``labels_`` by overlap. ``"model"``: the model's costs turned
        into probabilities, ``softmax(-U / T)`` with ``T = 2σ²`` and ``σ²`` the mean
        within-cluster cost per feature (HMRF's unary costs under its learnt metric,
        RDP-means' and DP-means' squared distances to ``centroids_``), or
        ``predict_proba`` of an estimator that has one. ``"graph"``: the labels
        smoothed over the data graph, ``P ← ½ onehot + ½ D⁻¹WP`` five times (how
        firmly each node's neighbourhood holds its label; the graph methods COSC and
        spectral clustering have nothing else). ``"features"``: a Gaussian around the
        mean of each cluster's features, for any estimator fitted on features.
        ``"auto"``: the first of posterior, model, graph that the estimator has.
        The model, graph and features sources then multiply the probabilities over
        each must-link component of the answers, so a node tied to others is as
        certain as its component.
    sideinfo : SideInfo or None, default=None
        The answers so far (default: the constraints the estimator was fitted with).

    Returns
    -------
    P : ndarray of shape (n_nodes, n_columns)
        Rows sum to 1. Columns are the model's clusters (their numbering need not be
        that of ``labels_``).
    source : str
        The source used.

    Raises
    ------
    InvalidParameterError
        The estimator offers no such source; the message lists the sources it has and
        the strategies that need none.
    """
    ctx = _Context(estimator, X, sideinfo, source)
    return ctx.marginals("node_marginals"), ctx.source


def _available_sources(ctx):
    est, out = ctx.estimator, []
    if hasattr(est, "samples_") and hasattr(est, "coclustering"):
        out.append("posterior")
    inner = getattr(est, "estimator_", None)  # AutoCluster: the chosen estimator
    model = inner if inner is not None and hasattr(inner, "labels_") else est
    if (hasattr(model, "potentials_") and hasattr(model.potentials_, "unary")) or \
            (getattr(model, "centroids_", None) is not None and ctx.problem.X is not None) or \
            (hasattr(model, "predict_proba") and ctx.problem.X is not None):
        out.append("model")
    from .base import ClusteringEstimator

    if isinstance(est, ClusteringEstimator) and (_graph_of(est, ctx.problem) is not None or ctx.problem.X is not None):
        out.append("graph")
    if ctx.problem.X is not None or _graph_of(est, ctx.problem) is not None:
        out.append("features")
    return out


def _marginals(ctx, source, strategy):
    available = _available_sources(ctx)
    if source == "auto":
        usable = [s for s in available if s != "features"]
        if not usable:
            needless = [s for s, needs in STRATEGIES.items() if not needs]
            raise InvalidParameterError(
                f"strategy={strategy!r} needs node marginals, and {type(ctx.estimator).__name__} has none (no "
                f"posterior samples, model costs, predict_proba or data graph). Strategies that apply: "
                f"{', '.join(map(repr, needless))}" + (
                    "; or ask for marginals='features' (Gaussians around the cluster means)" if "features" in available
                    else ""))
        source = usable[0]
    elif source not in available:
        needless = [s for s, needs in STRATEGIES.items() if not needs]
        raise InvalidParameterError(
            f"marginals={source!r} is not available for {type(ctx.estimator).__name__}; it has "
            f"{', '.join(map(repr, available)) or 'none'}. Strategies that need no marginals: "
            f"{', '.join(map(repr, needless))}")
    if source == "posterior":
        return _posterior_marginals(ctx), source
    if source == "model":
        P = _model_marginals(ctx)
    elif source == "graph":
        P = _graph_marginals(ctx)
    else:
        P = _feature_marginals(ctx)
    return _tie_components(ctx, P), source


def _softmax_rows(L):
    L = L - L.max(axis=1, keepdims=True)
    E = np.exp(L)
    return E / E.sum(axis=1, keepdims=True)


def _temperature(U, labels_cols, n_features):
    """``2σ²`` with ``σ²`` the mean cost of a node at its own cluster per feature."""
    own = U[np.arange(len(U)), labels_cols]
    own = own[np.isfinite(own)]
    base = float(np.mean(own - U.min())) if own.size else 1.0
    return max(2.0 * base / max(n_features, 1), 1e-12)


def _costs_to_probabilities(U, d):
    U = np.asarray(U, float)
    cols = np.argmin(np.where(np.isfinite(U), U, np.inf), axis=1)
    return _softmax_rows(-np.where(np.isfinite(U), U, np.inf) / _temperature(U, cols, d))


def _model_marginals(ctx):
    est = ctx.estimator
    inner = getattr(est, "estimator_", None)
    model = inner if inner is not None and hasattr(inner, "labels_") else est
    X = ctx.problem.X
    d = 1 if X is None else X.shape[1]
    if hasattr(model, "potentials_") and hasattr(model.potentials_, "unary"):
        U = model.potentials_.unary(getattr(model, "problem_", ctx.problem))
        counts = getattr(ctx.problem, "counts", None)
        if counts is not None:  # a merged row costs what its points cost; one point's share
            U = U / np.maximum(np.asarray(counts, float), 1.0)[:, None]
        return _costs_to_probabilities(U, d)
    if getattr(model, "centroids_", None) is not None:
        return _costs_to_probabilities(sq_distances(ctx.features, np.asarray(model.centroids_, float)), d)
    P = np.asarray(model.predict_proba(ctx.features), float)
    return P / P.sum(axis=1, keepdims=True)


def _feature_marginals(ctx):
    Y = ctx.features
    _, lab = np.unique(ctx.labels, return_inverse=True)
    K = int(lab.max()) + 1
    sums = np.zeros((K, Y.shape[1]))
    np.add.at(sums, lab, Y)
    centres = sums / np.bincount(lab, minlength=K)[:, None]
    return _costs_to_probabilities(sq_distances(Y, centres), Y.shape[1])


def _graph_marginals(ctx, steps=5):
    W = _graph_of(ctx.estimator, ctx.problem)
    if W is None:
        from .graphs import knn_matrix

        W = knn_matrix(ctx.features, n_neighbors=min(10, ctx.n - 1))
    W = sp.csr_array(W)
    _, lab = np.unique(ctx.labels, return_inverse=True)
    K = int(lab.max()) + 1
    onehot = np.zeros((ctx.n, K))
    onehot[np.arange(ctx.n), lab] = 1.0
    deg = np.asarray(W.sum(axis=1)).ravel()
    inv = np.where(deg > 0, 1.0 / np.where(deg > 0, deg, 1.0), 0.0)
    P = onehot
    for _ in range(steps):
        P = 0.5 * onehot + 0.5 * np.where(deg[:, None] > 0, inv[:, None] * (W @ P), onehot)
    return P / P.sum(axis=1, keepdims=True)


def _posterior_marginals(ctx):
    """Each kept sample matched to ``labels_`` (every sample cluster to the fitted
    cluster it overlaps most); ``P[i, k]`` the fraction of samples putting ``i`` in ``k``."""
    Z = np.asarray(ctx.estimator.samples_)
    if len(Z) > _MAX_POSTERIOR_SAMPLES:
        Z = Z[np.linspace(0, len(Z) - 1, _MAX_POSTERIOR_SAMPLES).astype(int)]
    _, lab = np.unique(ctx.labels, return_inverse=True)
    K = int(lab.max()) + 1
    P = np.zeros((ctx.n, K))
    rows = np.arange(ctx.n)
    for z in Z:
        z = np.asarray(z, np.int64)
        Ks = int(z.max()) + 1
        table = np.bincount(z * K + lab, minlength=Ks * K).reshape(Ks, K)
        P[rows, table.argmax(axis=1)[z]] += 1.0
    return P / len(Z)


def _tie_components(ctx, P):
    """Multiply the probabilities over each must-link component (so its members agree)."""
    if ctx.n_comp == ctx.n:
        return P
    L = np.log(np.clip(P, 1e-300, None))
    S = np.zeros((ctx.n_comp, P.shape[1]))
    np.add.at(S, ctx.comp, L)
    return _softmax_rows(S[ctx.comp])


def coclustering_probability(estimator, pairs, X=None, *, marginals="auto", sideinfo=None):
    """Probability that each pair of nodes shares a cluster.

    With posterior samples, the fraction of samples that put the two nodes together
    (:meth:`~graphclust.bayesian.BayesianClusteringEstimator.coclustering`); otherwise
    ``Σ_k p_ik p_jk`` from :func:`node_marginals`.

    Parameters
    ----------
    estimator : fitted estimator
    pairs : array-like of shape (n_pairs, 2)
        Node *indices* (positions in ``estimator.nodes_``).
    X, marginals, sideinfo
        As for :func:`node_marginals`.

    Returns
    -------
    ndarray of shape (n_pairs,)

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1], [2.55]])
    >>> est = gc.HMRF(gc.potentials.Centroids(2), random_state=0).fit(X)
    >>> gc.active.coclustering_probability(est, [[0, 1], [0, 2], [0, 4]]).round(2).tolist()
    [1.0, 0.0, 0.89]
    """
    ctx = _Context(estimator, X, sideinfo, marginals)
    pairs = _check_index_pairs(pairs, ctx.n)
    return _pair_probability(ctx, pairs[:, 0], pairs[:, 1], "coclustering_probability")


def _check_index_pairs(pairs, n):
    pairs = np.asarray(pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or (pairs.size and not np.issubdtype(pairs.dtype, np.integer)):
        raise InvalidParameterError(f"pairs must be an integer array of shape (n_pairs, 2), got shape {pairs.shape}")
    pairs = pairs.astype(np.int64)
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
        raise InvalidParameterError(f"pairs must hold node indices in [0, {n})")
    return pairs


def _pair_probability(ctx, a, b, strategy):
    P = ctx.marginals(strategy)
    if ctx.source == "posterior":
        q = np.asarray(ctx.estimator.coclustering(np.stack([a, b], axis=1)), float)
    else:
        q = np.einsum("ij,ij->i", P[a], P[b])
    # what the answers decide overrides the model
    q = np.where(ctx.comp[a] == ctx.comp[b], 1.0, q)
    apart = ctx.decided(a, b) & (ctx.comp[a] != ctx.comp[b])
    return np.where(apart, 0.0, q)


# ============================================================================ query
@dataclass
class QueryBatch:
    """The pairs to ask next, best first; returned by :func:`query`.

    Attributes
    ----------
    pairs : list of tuple
        ``(u, v)`` node keys.
    indices : ndarray of shape (n_pairs, 2)
        The same pairs as node positions.
    scores : ndarray of shape (n_pairs,)
        The strategy's score of each pair (higher first): ``1 - |2q - 1|`` for
        ``"uncertainty"``, the expected number of labels an answer changes for
        ``"impact"``, the distance to the nearest group found so far for
        ``"farthest_first"``, a uniform draw for ``"random"``.
    p_same : ndarray of shape (n_pairs,)
        Probability ``q`` that the pair shares a cluster (``nan`` where the strategy
        computed none).
    strategy : str
    source : str or None
        Where the probabilities came from (see :func:`node_marginals`).
    n_candidates : int
        Undecided candidate pairs the strategy scored.
    seconds : float
    """

    pairs: list
    indices: np.ndarray
    scores: np.ndarray
    p_same: np.ndarray
    strategy: str
    source: str | None = None
    n_candidates: int = 0
    seconds: float = 0.0

    def __len__(self):
        return len(self.pairs)

    def __iter__(self):
        return iter(self.pairs)

    def __repr__(self):
        head = ", ".join(f"{p!r}: {s:.3g}" for p, s in zip(self.pairs[:3], self.scores[:3].tolist()))
        more = ", ..." if len(self.pairs) > 3 else ""
        return f"QueryBatch(strategy={self.strategy!r}, n_pairs={len(self.pairs)}, [{head}{more}])"


def query(estimator, X=None, sideinfo=None, *, n_queries=10, strategy="uncertainty", marginals="auto",
          exclude=None, random_state=None):
    """The next ``n_queries`` pairs to ask about, best first.

    Parameters
    ----------
    estimator : fitted estimator
        A graphclust estimator (or any fitted clusterer with ``labels_`` when the
        strategy needs no marginals, or has ``predict_proba``/``centroids_``).
    X : array-like, networkx.Graph, Problem or None, default=None
        The data it was fitted on; ``None`` uses its ``problem_``.
    sideinfo : SideInfo, networkx.Graph, iterable of (u, v, weight) or None, default=None
        The answers so far; ``None``: the constraints the estimator was fitted with.
        No pair their closure decides is returned.
    n_queries : int, default=10
        Batch size (fewer are returned when fewer pairs are undecided).
    strategy : {"uncertainty", "impact", "farthest_first", "random"}, default="uncertainty"
        See :mod:`graphclust.active`.
    marginals : {"auto", "posterior", "model", "graph", "features"}, default="auto"
        Where ``"uncertainty"`` and ``"impact"`` take node probabilities from
        (:func:`node_marginals`).
    exclude : iterable of (u, v) or None, default=None
        Pairs not to ask (e.g. answered "don't know").
    random_state : None, int or numpy.random.Generator, default=None

    Returns
    -------
    QueryBatch

    Raises
    ------
    NotFittedError
        The estimator is not fitted.
    InvalidParameterError
        Unknown strategy, ``n_queries < 1``, or a strategy that needs marginals
        with an estimator that has none (the message lists those that apply).

    Notes
    -----
    Candidates are pruned so that a batch costs ``O(n·K + m·n)`` for ``n`` nodes,
    ``K`` clusters and ``m = max(4·n_queries, 40)`` candidate nodes, never ``O(n²)``:
    the ``m`` least certain must-link components (one node each) are paired with
    their ``8`` nearest neighbours and with one representative of each of their
    three likeliest clusters (the member of the largest must-link component there,
    so that one answer settles many pairs).

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [2.6]])
    >>> est = gc.HMRF(gc.potentials.Centroids(2), random_state=0).fit(X)
    >>> batch = gc.active.query(est, n_queries=1, random_state=0)
    >>> 5 in batch.pairs[0]  # the point half-way between the clusters
    True
    """
    start = time.perf_counter()
    if strategy not in STRATEGIES:
        raise InvalidParameterError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}, got {strategy!r}")
    n_queries = check_int(n_queries, "n_queries", low=1)
    rng = check_random_state(random_state)
    ctx = _Context(estimator, X, sideinfo, marginals)
    ex_keys = np.empty(0, np.int64)
    if exclude is not None:
        idx = ctx.problem.index
        ex = [(idx[u], idx[v]) for u, v in exclude if u in idx and v in idx]
        if ex:
            ea = np.array(ex, np.int64)
            ex_keys = np.unique(np.minimum(ea[:, 0], ea[:, 1]) * ctx.n + np.maximum(ea[:, 0], ea[:, 1]))
    ctx.exclude_keys = ex_keys
    a, b, scores, q, n_cand = _STRATEGY_FUNCS[strategy](ctx, n_queries, rng)
    nodes = ctx.problem.nodes
    pairs = [(nodes[i], nodes[j]) for i, j in zip(a.tolist(), b.tolist())]
    return QueryBatch(pairs=pairs, indices=np.stack([a, b], axis=1).astype(np.int64).reshape(-1, 2),
                      scores=np.asarray(scores, float), p_same=np.asarray(q, float), strategy=strategy,
                      source=getattr(ctx, "source", None), n_candidates=int(n_cand),
                      seconds=time.perf_counter() - start)


def _usable(ctx, a, b):
    """Drop self-pairs, decided pairs, excluded pairs and repeats of one component pair."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ok = (a != b) & ~ctx.decided(a, b)
    if len(ctx.exclude_keys):
        key = np.minimum(a, b) * ctx.n + np.maximum(a, b)
        ok &= ~np.isin(key, ctx.exclude_keys)
    return ok


def _pick(ctx, a, b, scores, q, k, per_component=None):
    """The ``k`` best pairs with distinct component pairs; a component appears in at
    most ``per_component`` pairs (``None``: no limit), except one of size > 1 (an
    answered group), which may anchor many."""
    order = np.argsort(-scores, kind="stable")
    seen, used, out = set(), {}, []
    for t in order.tolist():
        ca, cb = int(ctx.comp[a[t]]), int(ctx.comp[b[t]])
        key = (min(ca, cb), max(ca, cb))
        if key in seen:
            continue
        if per_component is not None:
            busy = [c for c in (ca, cb) if ctx.comp_size[c] == 1 and used.get(c, 0) >= per_component]
            if busy:
                continue
        seen.add(key)
        for c in (ca, cb):
            used[c] = used.get(c, 0) + 1
        out.append(t)
        if len(out) == k:
            break
    out = np.asarray(out, np.int64)
    return a[out], b[out], scores[out], q[out]


def _strategy_random(ctx, k, rng):
    n = ctx.n
    if n < 2:
        return (np.empty(0, np.int64),) * 2 + (np.empty(0),) * 2 + (0,)
    draws = max(20 * k, 200)
    found_a, found_b = [], []
    for _ in range(20):
        a = rng.integers(0, n, draws)
        b = rng.integers(0, n, draws)
        ok = _usable(ctx, a, b)
        found_a.append(a[ok]), found_b.append(b[ok])
        if sum(len(x) for x in found_a) >= 4 * k:
            break
    a, b = np.concatenate(found_a), np.concatenate(found_b)
    scores = rng.random(len(a))
    a, b, s, q = _pick(ctx, a, b, scores, np.full(len(a), np.nan), k)
    return a, b, s, q, len(scores)


def _nearest(Y, rows, r, among=None):
    """``r`` nearest nodes of each of ``rows`` (from ``among``, default all), self excluded."""
    pool = np.arange(len(Y)) if among is None else np.asarray(among, np.int64)
    D = sq_distances(Y[rows], Y[pool])
    same = pool[None, :] == np.asarray(rows)[:, None]
    D[same] = np.inf
    r = min(r, len(pool) - 1) if len(pool) > 1 else 0
    if r <= 0:
        return np.empty((len(rows), 0), np.int64)
    part = np.argpartition(D, r - 1, axis=1)[:, :r] if r < len(pool) else np.argsort(D, axis=1)[:, :r]
    return pool[part]


def _candidates(ctx, P, k, rng):
    """Candidate pairs around the least certain components: ``(a, b)`` arrays."""
    conf = P.max(axis=1)
    # one node per component (its first), least certain first
    first = np.full(ctx.n_comp, ctx.n, np.int64)
    np.minimum.at(first, ctx.comp, np.arange(ctx.n))
    unc = 1.0 - conf[first] + 1e-9 * rng.random(ctx.n_comp)  # random tie-break
    m = int(min(ctx.n_comp, max(4 * k, 40)))
    top = first[np.argsort(-unc, kind="stable")[:m]]
    # representatives: per model cluster, the node of the largest component among the most confident
    col = P.argmax(axis=1)
    size = ctx.comp_size[ctx.comp]
    reps = np.full(P.shape[1], -1, np.int64)
    order = np.lexsort((-conf, -size))  # biggest component first, then most confident
    for c in np.unique(col).tolist():
        members = order[col[order] == c]
        reps[c] = members[0]
    likely = np.argsort(-P[top], axis=1)[:, : min(3, P.shape[1])]
    ra = np.repeat(top, likely.shape[1])
    rb = reps[likely.reshape(-1)]
    keep = rb >= 0
    ra, rb = ra[keep], rb[keep]
    near = _nearest(ctx.features, top, _N_NEIGHBOURS)
    na = np.repeat(top, near.shape[1])
    nb = near.reshape(-1)
    a = np.concatenate([ra, na])
    b = np.concatenate([rb, nb])
    ok = _usable(ctx, a, b)
    return a[ok], b[ok]


def _strategy_uncertainty(ctx, k, rng):
    P = ctx.marginals("uncertainty")
    a, b = _candidates(ctx, P, k, rng)
    q = _pair_probability(ctx, a, b, "uncertainty")
    scores = 1.0 - np.abs(2.0 * q - 1.0)
    out = _pick(ctx, a, b, scores, q, k, per_component=1)
    return (*out, len(a))


def _strategy_impact(ctx, k, rng):
    P = ctx.marginals("impact")
    a, b = _candidates(ctx, P, k, rng)
    q = _pair_probability(ctx, a, b, "impact")
    same_now = ctx.labels[a] == ctx.labels[b]
    contradict = np.where(same_now, 1.0 - q, q)
    # the labels that would follow: the less certain end's component and its uncertain neighbours
    conf = P.max(axis=1)
    weak = np.where(conf[a] <= conf[b], a, b)
    ends = np.unique(weak)
    near = _nearest(ctx.features, ends, _N_NEIGHBOURS)
    mass_of = np.zeros(ctx.n)
    mass_of[ends] = ctx.comp_size[ctx.comp[ends]] + (1.0 - conf[near]).sum(axis=1) if near.size else \
        ctx.comp_size[ctx.comp[ends]]
    scores = contradict * mass_of[weak]
    out = _pick(ctx, a, b, scores, q, k, per_component=1)
    return (*out, len(a))


def _strategy_farthest_first(ctx, k, rng):
    """Explore (a new farthest point against the nearest group) until there are as many
    groups as clusters, then consolidate (points against their nearest undecided group)."""
    Y = ctx.features
    n_clusters = max(len(np.unique(ctx.labels)), 2)
    touched = ctx.touched()
    # groups: touched components pairwise cannot-linked, largest first
    comps = np.unique(ctx.comp[touched]) if len(touched) else np.empty(0, np.int64)
    comps = comps[np.argsort(-ctx.comp_size[comps], kind="stable")]
    groups = []
    for c in comps.tolist():
        node = np.flatnonzero(ctx.comp == c)[:1]
        if all(ctx.decided(node, np.flatnonzero(ctx.comp == g)[:1])[0] for g in groups):
            groups.append(c)
    members = {g: np.flatnonzero(ctx.comp == g) for g in groups}
    centre = {g: Y[members[g]].mean(axis=0) for g in groups}
    out_a, out_b, out_s = [], [], []
    busy = set()

    def nearest_open_group(i):
        best, best_d = None, np.inf
        for g in groups:
            if g in busy and ctx.comp_size[g] == 1:
                continue
            if ctx.decided(np.array([i]), members[g][:1])[0] or _excluded(ctx, i, members[g]).all():
                continue
            d = float(((Y[i] - centre[g]) ** 2).sum())
            if d < best_d:
                best, best_d = g, d
        return best, best_d

    def ask(i, g, score):
        open_ = members[g][~_excluded(ctx, i, members[g])]  # "don't know" pairs stay out
        j = open_[int(np.argmin(((Y[open_] - Y[i]) ** 2).sum(axis=1)))]
        out_a.append(int(i)), out_b.append(int(j)), out_s.append(score)
        busy.add(int(ctx.comp[i])), busy.add(g)

    if not groups:  # nothing answered: start from the point nearest the mean, ask its farthest point
        s = int(np.argmin(((Y - Y.mean(axis=0)) ** 2).sum(axis=1)))
        d = ((Y - Y[s]) ** 2).sum(axis=1)
        t = int(np.argmax(d))
        if t != s:
            out_a.append(t), out_b.append(s), out_s.append(float(np.sqrt(d[t])))
        a = np.asarray(out_a, np.int64)
        return a, np.asarray(out_b, np.int64), np.asarray(out_s), np.full(len(a), np.nan), len(a)
    # 1. touched components not yet placed in a group: against their nearest open group
    for c in comps.tolist():
        if len(out_a) >= k:
            break
        if c in members or c in busy:
            continue
        i = int(np.flatnonzero(ctx.comp == c)[0])
        g, d = nearest_open_group(i)
        if g is not None:
            ask(i, g, np.sqrt(d))
    # 2. explore while groups are fewer than clusters, else consolidate
    if len(out_a) < k:
        asked = np.concatenate([touched, np.asarray(out_a, np.int64)])
        dist = np.full(ctx.n, np.inf)
        for chunk in np.array_split(asked, max(1, len(asked) // 256)):
            dist = np.minimum(dist, sq_distances(Y, Y[chunk]).min(axis=1))
        dist[ctx.comp_size[ctx.comp] > 1] = -np.inf  # answered groups are placed already
        if len(groups) < n_clusters:
            while len(out_a) < k:
                i = int(np.argmax(dist))
                if not np.isfinite(dist[i]) or dist[i] <= 0:
                    break
                score = float(np.sqrt(dist[i]))
                dist = np.minimum(dist, ((Y - Y[i]) ** 2).sum(axis=1))
                dist[i] = -np.inf
                g, _ = nearest_open_group(i)
                if g is not None:
                    ask(i, g, score)
        else:
            cand = np.flatnonzero(np.isfinite(dist) & (dist > 0) & (ctx.comp_size[ctx.comp] == 1))
            cand = rng.permutation(cand)
            for i in cand.tolist():
                if len(out_a) >= k:
                    break
                if int(ctx.comp[i]) in busy:
                    continue
                g, d = nearest_open_group(i)
                if g is not None:
                    ask(i, g, float(np.sqrt(d)))
    order = np.argsort(-np.asarray(out_s, float), kind="stable")
    a, b = np.asarray(out_a, np.int64)[order], np.asarray(out_b, np.int64)[order]
    return a, b, np.asarray(out_s, float)[order], np.full(len(a), np.nan), len(a)


def _excluded(ctx, i, js):
    """Which pairs ``(i, j)`` for ``j`` in ``js`` the caller excluded."""
    js = np.asarray(js, np.int64)
    if not len(ctx.exclude_keys):
        return np.zeros(len(js), bool)
    return np.isin(np.minimum(i, js) * ctx.n + np.maximum(i, js), ctx.exclude_keys)


_STRATEGY_FUNCS = {
    "random": _strategy_random,
    "farthest_first": _strategy_farthest_first,
    "uncertainty": _strategy_uncertainty,
    "impact": _strategy_impact,
}


# ============================================================================ oracles
def parse_answer(value, pair=None):
    """An oracle's answer as +1 (same), -1 (different) or 0 (unknown).

    Accepted: ``True``/``False``/``None``; ``1``/``-1``; the strings "same",
    "different", "unknown" (and "y"/"n"/"?", "yes"/"no", "must"/"cannot").
    Anything else raises :class:`InvalidParameterError` naming the pair.
    """
    if value is None:
        return 0
    if isinstance(value, (bool, np.bool_)):
        return 1 if value else -1
    if isinstance(value, numbers.Integral) and int(value) in (1, -1):
        return int(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _SAME:
            return 1
        if word in _DIFFERENT:
            return -1
        if word in _UNKNOWN:
            return 0
    where = f" for pair {pair!r}" if pair is not None else ""
    raise InvalidParameterError(
        f"oracle answered {value!r}{where}; an oracle must answer same (True, 1, 'same', 'y'), different "
        "(False, -1, 'different', 'n') or unknown (None, 'unknown', '?')")


class LabelOracle:
    """Answers from known labels, each answer wrong with probability ``noise``.

    The error of a pair is drawn once from ``random_state`` and the pair, so asking the
    same pair twice gives the same answer (a simulated person who is wrong about a pair
    stays wrong), whatever the order of the questions.

    Parameters
    ----------
    y : array-like of shape (n_nodes,)
        True classes, in node order.
    noise : float in [0, 0.5], default=0.0
        Probability that an answer is flipped.
    nodes : sequence or None, default=None
        Node keys of the entries of ``y`` (default ``0..n-1``).
    random_state : None or int, default=None

    Attributes
    ----------
    n_asked_, n_flipped_ : int
        Questions answered so far, and how many of those answers were wrong.

    Examples
    --------
    >>> oracle = LabelOracle([0, 0, 1])
    >>> oracle(0, 1), oracle(0, 2)
    (True, False)
    """

    def __init__(self, y, noise=0.0, *, nodes=None, random_state=None):
        self.y = np.asarray(y)
        if self.y.ndim != 1:
            raise InvalidParameterError(f"y must be 1-D, got shape {self.y.shape}")
        self.noise = check_float(noise, "noise", low=0.0, high=0.5)
        keys = range(len(self.y)) if nodes is None else list(nodes)
        self.index = {u: i for i, u in enumerate(keys)}
        if len(self.index) != len(self.y):
            raise InvalidParameterError(f"{len(self.index)} node keys for {len(self.y)} labels")
        if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
            self._seed = int(random_state)
        else:
            self._seed = int(check_random_state(random_state).integers(2**63))
        self.n_asked_ = self.n_flipped_ = 0

    def _flipped(self, i, j):
        if self.noise == 0.0:
            return False
        lo, hi = min(i, j), max(i, j)
        u = np.random.default_rng([self._seed, lo, hi]).random()
        return bool(u < self.noise)

    def __call__(self, u, v):
        try:
            i, j = self.index[u], self.index[v]
        except KeyError as exc:
            raise InvalidParameterError(f"LabelOracle has no label for node {exc.args[0]!r}") from None
        same = bool(self.y[i] == self.y[j])
        flip = self._flipped(i, j)
        self.n_asked_ += 1
        self.n_flipped_ += int(flip)
        return same != flip

    def __repr__(self):
        return f"LabelOracle(n_nodes={len(self.y)}, noise={self.noise})"


class PromptOracle:
    """A person at a prompt: asks "same cluster?" and reads y / n / ?.

    Parameters
    ----------
    input : callable, default=builtins.input
        Reads one answer given the question (inject a function in tests).
    output : callable or None, default=None
        Prints context before the question (e.g. a picture of both items); called
        as ``output(u, v)``.
    describe : callable or None, default=None
        ``describe(node) -> str`` used in the question (default ``repr``).
    max_retries : int, default=3
        Unreadable answers are asked again this many times, then refused.

    Examples
    --------
    >>> answers = iter(["maybe", "y"])
    >>> oracle = PromptOracle(input=lambda question: next(answers))
    >>> oracle("a", "b")
    True
    """

    def __init__(self, input=None, *, output=None, describe=None, max_retries=3):
        import builtins

        self.input = builtins.input if input is None else input
        self.output = output
        self.describe = repr if describe is None else describe
        self.max_retries = check_int(max_retries, "max_retries", low=0)

    def __call__(self, u, v):
        if self.output is not None:
            self.output(u, v)
        question = f"Same cluster? {self.describe(u)} and {self.describe(v)} [y/n/?]: "
        for attempt in range(self.max_retries + 1):
            text = self.input(question)
            try:
                answer = parse_answer(text, (u, v))
            except InvalidParameterError:
                if attempt == self.max_retries:
                    raise
                question = f"Please answer y (same), n (different) or ? (don't know) for {self.describe(u)} and " \
                           f"{self.describe(v)}: "
                continue
            return {1: True, -1: False, 0: None}[answer]


# ============================================================================ the loop
class ActiveLoop:
    """Ask, refit, score, repeat: active side information for evaluation and real use.

    Parameters
    ----------
    estimator : estimator
        Cloned at :meth:`run` (never modified); fitted first on the side information
        given, then refitted after every batch of answers.
    strategy : str, default="uncertainty"
        A key of :data:`STRATEGIES`. Strategies that need marginals begin with
        ``"farthest_first"`` until the answers hold a must-link and a cannot-link
        (``cold_start=True``).
    batch_size : int or sequence of int, default=10
        Questions per batch; a sequence is a schedule (its last entry repeats), e.g.
        ``[10, 10, 30, 50]`` for small batches while the model is poor.
    weight : float, default=1.0
        Strength of each answered constraint (``numpy.inf`` for hard ones). Soft
        answers let the methods that model noise (HMRF's cross-validated trust,
        RDP-means, TVClust, soft COSC) outvote wrong ones; an answer contradicting
        earlier ones (only possible within one batch, as the closure keeps decided
        pairs out) is kept, and counted in ``history_``'s ``n_conflicts``
        (:meth:`SideInfo.check`).
    warm_start : bool, default=False
        Start each refit from the previous fit where the estimator allows it: an
        estimator with a ``warm_start`` parameter gets ``warm_start=True``; HMRF gets
        ``init=`` the previous centroids (which skips its search over two starts, so
        it is faster but can settle in the previous answer's basin). ``False``: a
        fresh fit of a clone every time.
    cold_start : bool, default=True
        Begin with ``"farthest_first"`` while the answers hold no must-link or no
        cannot-link (there is no model of the constraints to be uncertain about yet).
    marginals : str, default="auto"
        See :func:`node_marginals`.
    random_state : None, int or numpy.random.Generator, default=None
    callback : callable or None, default=None
        ``callback(loop, record)`` after each batch; return True to stop.

    Attributes
    ----------
    estimator_ : estimator
        The last fit.
    sideinfo_ : SideInfo
        Everything answered (plus the side information given).
    history_ : list of dict
        One record after the initial fit and after each batch: ``n_queries``,
        ``score`` (``None`` without a scorer), ``n_same``, ``n_different``,
        ``n_unknown``, ``n_conflicts`` (cannot-links inside must-link components),
        ``query_seconds``, ``fit_seconds``, ``strategy``.
    queries_ : list of tuple
        ``(u, v, answer)`` in the order asked, answer ``True``/``False``/``None``.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [2.6]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> loop = ActiveLoop(gc.HMRF(gc.potentials.Centroids(2), random_state=0), batch_size=2, random_state=0)
    >>> loop = loop.run(X, LabelOracle(y), budget=4, scorer=lambda est: gc.ari(y, est.labels_))
    >>> loop.history_[-1]["n_queries"], loop.history_[-1]["score"]
    (4, 1.0)
    """

    def __init__(self, estimator, *, strategy="uncertainty", batch_size=10, weight=1.0, warm_start=False,
                 cold_start=True, marginals="auto", random_state=None, callback=None):
        self.estimator = estimator
        self.strategy = strategy
        self.batch_size = batch_size
        self.weight = weight
        self.warm_start = warm_start
        self.cold_start = cold_start
        self.marginals = marginals
        self.random_state = random_state
        self.callback = callback

    def run(self, X, oracle, budget, *, sideinfo=None, scorer=None):
        """Ask up to ``budget`` questions of ``oracle``; returns ``self``.

        Parameters
        ----------
        X : array-like, networkx.Graph or Problem
        oracle : callable
            ``oracle(u, v)`` answers same / different / unknown (see
            :func:`parse_answer`): a function, :class:`LabelOracle`, :class:`PromptOracle`.
        budget : int >= 1
            Questions to ask ("don't know" answers count).
        sideinfo : SideInfo or None, default=None
            What is known before the first question.
        scorer : callable or None, default=None
            ``scorer(estimator) -> float`` recorded after each fit, e.g.
            ``lambda est: gc.ari(y, est.labels_)``.
        """
        from sklearn.base import clone

        if self.strategy not in STRATEGIES:
            raise InvalidParameterError(
                f"strategy must be one of {', '.join(map(repr, STRATEGIES))}, got {self.strategy!r}")
        budget = check_int(budget, "budget", low=1)
        schedule = list(self.batch_size) if isinstance(self.batch_size, (list, tuple, np.ndarray)) else [self.batch_size]
        if not schedule:
            raise InvalidParameterError("batch_size must be an int >= 1 or a non-empty sequence of them")
        schedule = [check_int(b, "batch_size", low=1) for b in schedule]
        weight = check_float(self.weight, "weight", low=0.0, low_open=True, allow_inf=True)
        if not callable(oracle):
            raise InvalidParameterError(f"oracle must be callable as oracle(u, v), got {type(oracle).__name__}")
        if scorer is not None and not callable(scorer):
            raise InvalidParameterError(f"scorer must be callable as scorer(estimator), got {type(scorer).__name__}")
        rng = check_random_state(self.random_state)
        from .problem import as_problem

        problem = as_problem(X)
        S = SideInfo() if sideinfo is None else side_information(problem.nodes, None, sideinfo)
        est = clone(self.estimator)
        t0 = time.perf_counter()
        est.fit(problem, sideinfo=S if len(S) else None)
        fit_seconds = time.perf_counter() - t0
        self.history_, self.queries_ = [], []
        counts = {"n_same": 0, "n_different": 0, "n_unknown": 0}
        skipped = []
        self._record(est, S, problem, scorer, 0, counts, 0.0, fit_seconds, None)
        asked = 0
        while asked < budget:
            k = min(schedule[min(len(self.history_) - 1, len(schedule) - 1)], budget - asked)
            strategy = self.strategy
            if self.cold_start and STRATEGIES[strategy] and not (
                    any(w > 0 for *_, w in S.edges()) and any(w < 0 for *_, w in S.edges())):
                strategy = "farthest_first"
            t0 = time.perf_counter()
            batch = query(est, problem, S, n_queries=k, strategy=strategy, marginals=self.marginals,
                          exclude=skipped, random_state=rng)
            if not len(batch) and strategy != "random":
                batch = query(est, problem, S, n_queries=k, strategy="random", exclude=skipped, random_state=rng)
            query_seconds = time.perf_counter() - t0
            if not len(batch):
                break  # every pair is decided
            new = []
            for u, v in batch.pairs:
                answer = parse_answer(oracle(u, v), (u, v))
                asked += 1
                self.queries_.append((u, v, {1: True, -1: False, 0: None}[answer]))
                if answer == 0:
                    counts["n_unknown"] += 1
                    skipped.append((u, v))
                else:
                    counts["n_same" if answer > 0 else "n_different"] += 1
                    new.append((u, v, answer * weight))
            if new:
                S = S.union(SideInfo(new))
            t0 = time.perf_counter()
            est = self._refit(est, problem, S)
            fit_seconds = time.perf_counter() - t0
            record = self._record(est, S, problem, scorer, asked, counts, query_seconds, fit_seconds, strategy)
            if self.callback is not None and self.callback(self, record):
                break
        self.estimator_, self.sideinfo_ = est, S
        return self

    def _refit(self, previous, problem, S):
        from sklearn.base import clone

        est = clone(self.estimator)
        params = est.get_params(deep=False)
        if self.warm_start:
            if "warm_start" in params:
                est = previous
                est.set_params(warm_start=True)
            elif "init" in params and getattr(getattr(previous, "potentials_", None), "centroids_", None) is not None:
                est.set_params(init=np.array(previous.potentials_.centroids_))
        return est.fit(problem, sideinfo=S if len(S) else None)

    def _record(self, est, S, problem, scorer, asked, counts, query_seconds, fit_seconds, strategy):
        report = S.check(problem) if len(S) else None
        record = {"n_queries": asked, "score": None if scorer is None else float(scorer(est)),
                  **counts, "n_conflicts": 0 if report is None else len(report.conflicts),
                  "query_seconds": query_seconds, "fit_seconds": fit_seconds, "strategy": strategy}
        self.history_.append(record)
        return record

    @property
    def scores_(self):
        """``(n_queries, score)`` arrays of the history, for a learning curve."""
        return (np.array([r["n_queries"] for r in self.history_]),
                np.array([np.nan if r["score"] is None else r["score"] for r in self.history_]))


def run_active(estimator, X, oracle, budget, *, batch_size=10, strategy="uncertainty", sideinfo=None, scorer=None,
               **options):
    """Function form of :class:`ActiveLoop`: ``ActiveLoop(estimator, ...).run(X, oracle, budget)``.

    Returns the finished :class:`ActiveLoop` (``estimator_``, ``sideinfo_``,
    ``history_``, ``queries_``).

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X, y = gc.datasets.load_iris()
    >>> loop = gc.active.run_active(gc.HMRF(gc.potentials.Centroids(3), random_state=0), X,
    ...                             gc.active.LabelOracle(y, random_state=0), budget=20,
    ...                             scorer=lambda est: gc.ari(y, est.labels_), random_state=0)
    >>> [(r["n_queries"], r["strategy"]) for r in loop.history_]  # cold start until a must- and a cannot-link
    [(0, None), (1, 'farthest_first'), (3, 'farthest_first'), (13, 'uncertainty'), (20, 'uncertainty')]
    """
    loop = ActiveLoop(estimator, strategy=strategy, batch_size=batch_size, **options)
    return loop.run(X, oracle, budget, sideinfo=sideinfo, scorer=scorer)


# ============================================================================ images
@dataclass
class StrokeSuggestions:
    """Where a scribble would help most; returned by :func:`suggest_strokes`.

    Attributes
    ----------
    points : ndarray of shape (n_strokes, 2)
        ``(row, col)`` of each suggested place, most uncertain first.
    scores : ndarray of shape (n_strokes,)
        Mean label entropy (nats) around each point.
    current : ndarray of shape (n_strokes,)
        The label the segmentation gives each point now.
    entropy : ndarray of shape (rows, cols)
        Label entropy of every pixel.
    radius : int
        Half-width of the window the scores average over, and the spacing of the points.
    source : str
        Where the probabilities came from.
    """

    points: np.ndarray
    scores: np.ndarray
    current: np.ndarray
    entropy: np.ndarray
    radius: int
    source: str = ""
    info: dict = field(default_factory=dict)

    def mask(self):
        """Boolean image, True within ``radius`` of a suggested point (for display)."""
        rows, cols = self.entropy.shape
        rr, cc = np.mgrid[:rows, :cols]
        out = np.zeros((rows, cols), bool)
        for r, c in self.points.tolist():
            out |= (np.abs(rr - r) <= self.radius) & (np.abs(cc - c) <= self.radius)
        return out


def _segmentation_probabilities(seg):
    """Per-pixel label probabilities of a :class:`~graphclust.Segmentation`, ``(rows·cols, L)``."""
    info = seg.info
    pix_node = (np.arange(seg.labels.size) if seg.segments is None else seg.segments.reshape(-1))
    res = info.get("engine_result")
    if res is not None and getattr(res, "marginals", None) is not None:
        # min-marginals of an energy whose unary terms are negative log-likelihoods
        M = np.asarray(res.marginals, float)
        P = _softmax_rows(-np.where(np.isfinite(M), M, np.inf))
        return P[pix_node], "bp min-marginals"
    est = info.get("estimator")
    if est is not None:
        P, source = node_marginals(est)
        return P[pix_node], source
    if "colour_means" in info:
        raise InvalidParameterError(
            f"this segmentation (method={seg.method!r}) kept no marginals; use method='hmrf-bp' for suggest_strokes")
    raise InvalidParameterError("the segmentation carries neither marginals nor an estimator")


def suggest_strokes(segmentation, n_strokes=3, *, radius=None, exclude=None, spread=0.0):
    """Where a scribble would help most: the most uncertain regions of a segmentation.

    Each pixel's label entropy is computed from the segmentation's marginals (BP's
    min-marginals for ``"hmrf-bp"``, the estimator's :func:`node_marginals`
    otherwise), averaged over a ``(2·radius+1)²`` window, and the highest windows are
    taken greedily, no two closer than ``2·radius``.

    Parameters
    ----------
    segmentation : Segmentation
        What :func:`graphclust.segment` returned.
    n_strokes : int >= 1, default=3
    radius : int or None, default=None
        Default: 1/40 of the longer side (at least 1).
    exclude : array-like of shape (rows, cols) or None, default=None
        Pixels not to suggest (e.g. already scribbled: non-zero entries).
    spread : float >= 0, default=0.0
        Add ``spread`` times the distance to the nearest excluded pixel (both terms
        scaled to a maximum of 1) to the score, so that suggestions also go where no
        one has scribbled. Entropy alone finds the seams the model is unsure of, but
        not the regions its colour model gets confidently wrong; on a noisy
        silhouette with a brightness ramp (``examples/09_active_learning.ipynb``)
        random strokes beat entropy alone (pixel accuracy 0.78 against 0.93 after
        eight strokes), and ``spread=1`` comes within a few points of them (0.91) from
        the fourth stroke on.

    Returns
    -------
    StrokeSuggestions

    Raises
    ------
    InvalidParameterError
        ``n_strokes < 1``, or a segmentation without marginals (``"hmrf-icm"``, ...:
        the message says which method keeps them).

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> img = np.zeros((20, 20)); img[:, 10:] = 1.0
    >>> img[:, 9:11] = 0.5  # an ambiguous seam
    >>> scrib = np.zeros((20, 20), dtype=int); scrib[5, 2:5] = 1; scrib[15, 14:18] = 2
    >>> seg = gc.segment(img, scrib, method="hmrf-bp", random_state=0)  # BP keeps marginals
    >>> hint = gc.active.suggest_strokes(seg, n_strokes=1, radius=1)
    >>> 8 <= int(hint.points[0, 1]) <= 11
    True
    """
    from .segmentation import Segmentation

    if not isinstance(segmentation, Segmentation):
        raise InvalidParameterError(f"segmentation must be what gc.segment returned, got {type(segmentation).__name__}")
    n_strokes = check_int(n_strokes, "n_strokes", low=1)
    rows, cols = segmentation.labels.shape
    radius = max(1, max(rows, cols) // 40) if radius is None else check_int(radius, "radius", low=0)
    P, source = _segmentation_probabilities(segmentation)
    with np.errstate(divide="ignore", invalid="ignore"):
        H = -np.where(P > 0, P * np.log(P), 0.0).sum(axis=1).reshape(rows, cols)
    from scipy.ndimage import uniform_filter

    score = uniform_filter(H, size=2 * radius + 1, mode="nearest")
    blocked = np.zeros((rows, cols), bool)
    if exclude is not None:
        ex = np.asarray(exclude)
        if ex.shape != (rows, cols):
            raise InvalidParameterError(f"exclude must have the image's shape {(rows, cols)}, got {ex.shape}")
        blocked |= ex != 0
    spread = check_float(spread, "spread", low=0.0)
    points, scores = [], []
    work = score / max(float(score.max()), 1e-300)
    if spread > 0 and blocked.any():
        from scipy.ndimage import distance_transform_edt

        far = distance_transform_edt(~blocked)
        work = work + spread * far / max(float(far.max()), 1e-300)
    work = np.where(blocked, -np.inf, work)
    for _ in range(n_strokes):
        flat = int(np.argmax(work))
        if not np.isfinite(work.flat[flat]):
            break
        r, c = divmod(flat, cols)
        points.append((r, c)), scores.append(float(score[r, c]))
        work[max(0, r - 2 * radius):r + 2 * radius + 1, max(0, c - 2 * radius):c + 2 * radius + 1] = -np.inf
    pts = np.asarray(points, np.int64).reshape(-1, 2)
    current = segmentation.labels[pts[:, 0], pts[:, 1]] if len(pts) else np.empty(0, np.int64)
    return StrokeSuggestions(points=pts, scores=np.asarray(scores), current=current, entropy=H, radius=radius,
                             source=source)
