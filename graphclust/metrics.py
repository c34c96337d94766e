"""Scores for clusterings: agreement with a ground truth, constraint violations, cuts.

Three families, all computed from arrays without Python loops over points or edges:

* **external indices** comparing a clustering with reference labels, built on one sparse
  contingency table: :func:`nmi`, :func:`ari` and the pairwise precision / recall /
  F-measure of the constrained-clustering literature (:func:`pairwise_scores`,
  :func:`pairwise_f_measure`). Each takes an optional ``subset`` so that only some
  points are scored (the HMRF protocol scores the test-fold points only);
* **constraint violations** of a labelling (:func:`violations`,
  :func:`constraint_violations`);
* **graph cuts** of a labelling (:func:`cut`, :func:`normalized_cut`,
  :func:`ratio_cut`).

Labels may be any hashable values (ints, strings, tuples); only equality matters, so
every score is invariant under renaming the clusters.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import networkx as nx
import numpy as np
import scipy.sparse as sp

from .errors import InvalidConstraintError, InvalidGraphError, InvalidParameterError, UnknownNodeError
from .problem import Problem

__all__ = [
    "contingency",
    "nmi",
    "ari",
    "pairwise_scores",
    "pairwise_f_measure",
    "PairwiseScores",
    "Violations",
    "violations",
    "constraint_violations",
    "violated_mask",
    "cut_weights",
    "cut",
    "normalized_cut",
    "ratio_cut",
]

_AVERAGES = ("geometric", "arithmetic", "min", "max")


# ---------------------------------------------------------------------- labels
def _as_label_array(labels, name):
    """A 1-D array of labels; non-array inputs keep their Python objects (no str coercion)."""
    if isinstance(labels, np.ndarray):
        arr = labels
    else:
        if isinstance(labels, (str, bytes, Mapping)) or not isinstance(labels, Iterable):
            raise InvalidParameterError(f"{name} must be a sequence of labels, got {type(labels).__name__}")
        labels = labels if isinstance(labels, Sequence) else list(labels)
        try:
            arr = np.asarray(labels)
        except (TypeError, ValueError):  # ragged nested sequences
            arr = None
        if arr is None or arr.ndim != 1 or arr.dtype.kind not in "biuf":
            # strings, tuples, None, mixed types: keep the objects as they are, so that
            # 1 and "1" stay different labels and a tuple stays one label
            arr = np.fromiter(labels, dtype=object, count=len(labels))
    if arr.ndim != 1:
        raise InvalidParameterError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    return arr


def _factorize(arr, name):
    """Map labels to ``0..k-1`` (in sorted order when the labels can be sorted)."""
    try:
        _, codes = np.unique(arr, return_inverse=True)
    except TypeError:  # unorderable mix of types: first-seen order instead
        mapping = {}
        try:
            codes = np.fromiter((mapping.setdefault(x, len(mapping)) for x in arr.tolist()), np.int64, len(arr))
        except TypeError:
            k = next(i for i, x in enumerate(arr.tolist()) if not _hashable(x))
            raise InvalidParameterError(f"{name}[{k}] = {arr[k]!r} is not hashable; labels must be hashable") from None
    return codes.reshape(-1).astype(np.int64, copy=False)


def _hashable(x):
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _subset_index(subset, n):
    """Validate ``subset`` (boolean mask or integer positions) against ``n`` points."""
    s = np.asarray(subset)
    if s.dtype == bool:
        if s.shape != (n,):
            raise InvalidParameterError(f"the subset mask has shape {s.shape} but there are {n} labels")
        return np.flatnonzero(s)
    if s.ndim != 1 or (s.size and s.dtype.kind not in "iu"):
        raise InvalidParameterError(
            f"subset must be a boolean mask or a 1-D array of integer positions, got dtype {s.dtype} "
            f"and shape {s.shape}"
        )
    s = s.astype(np.int64)
    bad = (s < -n) | (s >= n)
    if bad.any():
        raise InvalidParameterError(f"subset position {int(s[bad][0])} is out of range for {n} labels")
    return s


def _codes_pair(labels_true, labels_pred, subset):
    """Validate two labellings (and an optional subset) and return their integer codes."""
    t = _as_label_array(labels_true, "labels_true")
    p = _as_label_array(labels_pred, "labels_pred")
    if len(t) != len(p):
        raise InvalidParameterError(
            f"labels_true has {len(t)} labels but labels_pred has {len(p)}; they must have the same length"
        )
    if subset is not None:
        idx = _subset_index(subset, len(t))
        t, p = t[idx], p[idx]
    if len(t) == 0:
        what = "the subset selects no points" if subset is not None else "the labellings are empty"
        raise InvalidParameterError(f"nothing to score: {what}")
    return _factorize(t, "labels_true"), _factorize(p, "labels_pred")


def _table(ct, cp):
    """Sparse contingency table of two code arrays, with its row and column sums."""
    n_rows, n_cols = int(ct.max()) + 1, int(cp.max()) + 1
    C = sp.coo_array((np.ones(len(ct), np.int64), (ct, cp)), shape=(n_rows, n_cols)).tocsr()
    C.sum_duplicates()
    a = np.bincount(ct, minlength=n_rows).astype(np.int64)
    b = np.bincount(cp, minlength=n_cols).astype(np.int64)
    return C, a, b


def _comb2(x):
    """Exact ``sum(C(x, 2))`` as a Python int."""
    x = np.asarray(x, dtype=np.int64)
    return int(np.sum(x * (x - 1) // 2, dtype=np.int64))


# ---------------------------------------------------------------------- external indices
def contingency(labels_true, labels_pred, *, subset=None):
    """Sparse contingency table of two labellings.

    Entry ``(i, j)`` counts the points whose true class is the ``i``-th class and
    whose predicted cluster is the ``j``-th cluster, classes and clusters taken in
    sorted order of their labels (first-seen order if the labels cannot be sorted).

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference classes; any hashable values.
    labels_pred : array-like of shape (n_samples,)
        Predicted clusters; any hashable values.
    subset : array-like of bool of shape (n_samples,) or of int, default=None
        Score only these points: a boolean mask or integer positions.

    Returns
    -------
    scipy.sparse.csr_array of shape (n_classes, n_clusters), dtype int64

    Raises
    ------
    InvalidParameterError
        The labellings differ in length, are empty, or ``subset`` is malformed.

    Examples
    --------
    >>> from graphclust.metrics import contingency
    >>> contingency(["a", "a", "b", "b"], [0, 1, 1, 1]).toarray()
    array([[1, 1],
           [0, 2]])
    """
    ct, cp = _codes_pair(labels_true, labels_pred, subset)
    return _table(ct, cp)[0]


def nmi(labels_true, labels_pred, *, average="geometric", subset=None):
    """Normalised mutual information between two labellings.

    .. math::

        \\mathrm{NMI}(U, V) = \\frac{I(U; V)}{\\operatorname{avg}(H(U), H(V))}

    with ``avg`` the geometric mean :math:`\\sqrt{H(U) H(V)}` by default, as in the
    TVClust / RDP-means paper (Khashabi et al.); ``"arithmetic"`` gives the variant of
    Manning et al. used by the DCP paper (and scikit-learn's default).

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
        The two labellings; any hashable values. The score is symmetric in them.
    average : {"geometric", "arithmetic", "min", "max"}, default="geometric"
        How the two entropies are averaged in the denominator.
    subset : array-like of bool of shape (n_samples,) or of int, default=None
        Score only these points (for example the test fold).

    Returns
    -------
    float
        In ``[0, 1]``; 1 for identical partitions.

    Raises
    ------
    InvalidParameterError
        Unknown ``average``; labellings of different lengths or empty; bad ``subset``.

    Notes
    -----
    scikit-learn's ``normalized_mutual_info_score`` on the validated labels (any
    hashable values, ``subset``), with ``average`` as its ``average_method``. If both
    labellings put every point in one cluster the partitions are identical and the
    score is 1.0; if exactly one of them does, the mutual information is zero and so is
    the score.

    References
    ----------
    Strehl, A. and Ghosh, J. (2002). Cluster ensembles. JMLR 3, 583-617.

    Examples
    --------
    >>> from graphclust.metrics import nmi
    >>> nmi([0, 0, 1, 1], ["x", "x", "y", "y"])
    1.0
    >>> round(nmi([0, 0, 1, 1], [0, 0, 0, 1]), 4)
    0.3456
    >>> round(nmi([0, 0, 1, 1], [0, 0, 0, 1], average="arithmetic"), 4)
    0.3437
    >>> round(nmi([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], average="arithmetic"), 4)
    0.5158
    """
    if average not in _AVERAGES:
        raise InvalidParameterError(f"average must be one of {', '.join(map(repr, _AVERAGES))}; got {average!r}")
    from sklearn.metrics import normalized_mutual_info_score

    ct, cp = _codes_pair(labels_true, labels_pred, subset)
    # scikit-learn's score, with the papers' geometric averaging by default (its own
    # default is arithmetic: the same labels can give 0.3229 here and 0.3191 there)
    return float(np.clip(normalized_mutual_info_score(ct, cp, average_method=average), 0.0, 1.0))


def ari(labels_true, labels_pred, *, subset=None):
    """Adjusted Rand index (Hubert and Arabie, 1985).

    .. math::

        \\mathrm{ARI} = \\frac{\\sum_{ij} \\binom{n_{ij}}{2} - E}{\\tfrac12 \\left(
        \\sum_i \\binom{a_i}{2} + \\sum_j \\binom{b_j}{2}\\right) - E},
        \\qquad E = \\frac{\\sum_i \\binom{a_i}{2} \\sum_j \\binom{b_j}{2}}{\\binom{n}{2}}

    with :math:`n_{ij}` the contingency table and :math:`a_i`, :math:`b_j` its row and
    column sums.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
        The two labellings; any hashable values. The score is symmetric in them.
    subset : array-like of bool of shape (n_samples,) or of int, default=None
        Score only these points.

    Returns
    -------
    float
        1 for identical partitions, about 0 for independent ones, can be negative.

    Raises
    ------
    InvalidParameterError
        Labellings of different lengths or empty; bad ``subset``.

    Notes
    -----
    scikit-learn's ``adjusted_rand_score`` on the validated labels (any hashable values,
    ``subset``). When the denominator is zero (both labellings are all singletons, or
    both a single cluster, including one point) the partitions are identical and the
    score is 1.0.

    References
    ----------
    Hubert, L. and Arabie, P. (1985). Comparing partitions. Journal of Classification
    2, 193-218. doi:10.1007/BF01908075

    Examples
    --------
    >>> from graphclust.metrics import ari
    >>> ari([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> round(ari([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]), 4)
    0.2424
    """
    from sklearn.metrics import adjusted_rand_score

    ct, cp = _codes_pair(labels_true, labels_pred, subset)
    return float(adjusted_rand_score(ct, cp))


class PairwiseScores(NamedTuple):
    """Pairwise precision, recall and F-measure (see :func:`pairwise_scores`)."""

    precision: float
    recall: float
    f: float


def pairwise_scores(labels_true, labels_pred, *, subset=None):
    """Pairwise precision, recall and F-measure of a clustering.

    A pair of points is *predicted* if ``labels_pred`` puts both in one cluster and
    *true* if ``labels_true`` does. With :math:`n_{ij}` the contingency table and
    :math:`a_i`, :math:`b_j` the sizes of the true classes and predicted clusters:

    .. math::

        TP = \\sum_{ij} \\binom{n_{ij}}{2}, \\quad
        P = \\frac{TP}{\\sum_j \\binom{b_j}{2}}, \\quad
        R = \\frac{TP}{\\sum_i \\binom{a_i}{2}}, \\quad
        F = \\frac{2 P R}{P + R}

    as defined by Bilenko, Basu and Mooney (2004, section 4.1) and used by the HMRF,
    TVClust and RDP-means papers.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Reference classes; any hashable values.
    labels_pred : array-like of shape (n_samples,)
        Predicted clusters; any hashable values.
    subset : array-like of bool of shape (n_samples,) or of int, default=None
        Score only the pairs among these points (the HMRF protocol scores the pairs of
        test-fold points; the clustering itself is computed on all points).

    Returns
    -------
    PairwiseScores
        Named tuple ``(precision, recall, f)``. Swapping the two arguments swaps
        precision and recall and leaves ``f`` unchanged.

    Raises
    ------
    InvalidParameterError
        Labellings of different lengths or empty; bad ``subset``.

    Notes
    -----
    An empty denominator is vacuous: with no predicted pair nothing predicted is wrong
    and precision is 1.0; with no true pair recall is 1.0. So two all-singleton
    labellings score ``(1, 1, 1)``, while all singletons against a truth with pairs
    score precision 1, recall 0 and F 0. ``F`` is 0 when precision and recall both are.

    References
    ----------
    Bilenko, M., Basu, S. and Mooney, R. J. (2004). Integrating constraints and metric
    learning in semi-supervised clustering. ICML. doi:10.1145/1015330.1015360

    Examples
    --------
    >>> from graphclust.metrics import pairwise_scores
    >>> pairwise_scores([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2])
    PairwiseScores(precision=0.6666666666666666, recall=0.3333333333333333, f=0.4444444444444444)
    >>> pairwise_scores([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2], subset=[0, 1, 4, 5])
    PairwiseScores(precision=1.0, recall=1.0, f=1.0)
    """
    ct, cp = _codes_pair(labels_true, labels_pred, subset)
    C, a, b = _table(ct, cp)
    tp, pairs_true, pairs_pred = _comb2(C.data), _comb2(a), _comb2(b)
    precision = tp / pairs_pred if pairs_pred else 1.0
    recall = tp / pairs_true if pairs_true else 1.0
    f = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return PairwiseScores(float(precision), float(recall), float(f))


def pairwise_f_measure(labels_true, labels_pred, *, subset=None):
    """Pairwise F-measure: the ``f`` of :func:`pairwise_scores`.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
        The two labellings; any hashable values. The score is symmetric in them.
    subset : array-like of bool of shape (n_samples,) or of int, default=None
        Score only the pairs among these points.

    Returns
    -------
    float
        In ``[0, 1]``.

    Examples
    --------
    >>> from graphclust.metrics import pairwise_f_measure
    >>> pairwise_f_measure(["a", "a", "b", "b"], [0, 0, 0, 1])  # P = 1/3, R = 1/2
    0.4
    """
    return pairwise_scores(labels_true, labels_pred, subset=subset).f


# ---------------------------------------------------------------------- constraints
@dataclass(frozen=True)
class Violations:
    """How many constraints a labelling violates, and their total weight.

    A must-link is violated when its two nodes get different labels, a cannot-link when
    they get the same label. Weights are strengths ``|w|``; a violated hard constraint
    (``|w| = inf``) makes the corresponding weight infinite.

    Attributes
    ----------
    n_must, n_cannot : int
        Number of must-links and cannot-links.
    n_must_violated, n_cannot_violated : int
        How many of them are violated.
    must_weight_violated, cannot_weight_violated : float
        Sum of the strengths of the violated ones.
    n_violated : int
        ``n_must_violated + n_cannot_violated``.
    weight_violated : float
        ``must_weight_violated + cannot_weight_violated`` (``inf`` if a hard
        constraint is violated).
    violated : ndarray of shape (n_violated,), dtype int64
        Rows of the constraint array that are violated, in increasing order.
    """

    n_must: int
    n_must_violated: int
    must_weight_violated: float
    n_cannot: int
    n_cannot_violated: int
    cannot_weight_violated: float
    n_violated: int
    weight_violated: float
    violated: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64), repr=False, compare=False)

    @property
    def n_constraints(self):
        """Total number of constraints."""
        return self.n_must + self.n_cannot

    @property
    def satisfied(self):
        """True if no constraint is violated."""
        return self.n_violated == 0


def constraint_violations(labels, constraints, weights):
    """Count the constraints a labelling violates (the array form of :func:`violations`).

    Parameters
    ----------
    labels : array-like of shape (n_nodes,)
        A label per node; any hashable values.
    constraints : array-like of shape (n_constraints, 2)
        Node positions ``(i, j)`` of each constrained pair.
    weights : array-like of shape (n_constraints,)
        Signed strengths: ``> 0`` must-link, ``< 0`` cannot-link, ``±inf`` hard.

    Returns
    -------
    Violations

    Raises
    ------
    InvalidParameterError
        ``constraints`` is not ``(n_constraints, 2)`` integers, a position is out of
        range (the message names the constraint), or ``weights`` has another length.
    InvalidConstraintError
        A weight is zero or NaN (the message names the constraint).

    Examples
    --------
    >>> from graphclust.metrics import constraint_violations
    >>> v = constraint_violations([0, 0, 1, 1], [[0, 1], [1, 2], [0, 3], [2, 3]],
    ...                           [1.0, 2.0, -0.5, -float("inf")])
    >>> v.n_must_violated, v.must_weight_violated, v.n_cannot_violated, v.weight_violated
    (1, 2.0, 1, inf)
    >>> v.violated
    array([1, 3])
    """
    codes = _factorize(_as_label_array(labels, "labels"), "labels")
    n = len(codes)
    pairs = np.asarray(constraints)
    if pairs.size == 0:
        pairs = pairs.reshape(0, 2)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or (pairs.size and pairs.dtype.kind not in "iu"):
        raise InvalidParameterError(
            f"constraints must be an integer array of shape (n_constraints, 2), got dtype {pairs.dtype} "
            f"and shape {pairs.shape}"
        )
    pairs = pairs.astype(np.int64, copy=False)
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(w) != len(pairs):
        raise InvalidParameterError(f"{len(pairs)} constraints but {len(w)} weights; they must match")
    bad = (pairs < 0) | (pairs >= n)
    if bad.any():
        k = int(np.flatnonzero(bad.any(axis=1))[0])
        raise InvalidParameterError(
            f"constraint {k} {tuple(pairs[k].tolist())!r} refers to a node position out of range for {n} labels"
        )
    zero = ~(np.abs(w) > 0)  # zero or NaN
    if zero.any():
        k = int(np.flatnonzero(zero)[0])
        pair = tuple(pairs[k].tolist())
        raise InvalidConstraintError(
            f"constraint {k} {pair!r} has weight {w[k]}; expected > 0 (must-link) or < 0 (cannot-link)",
            constraint=pair,
        )
    must = w > 0
    bad = violated_mask(codes, pairs, w)
    must_bad = must & bad
    cannot_bad = ~must & bad
    strength = np.abs(w)
    must_w = float(strength[must_bad].sum())
    cannot_w = float(strength[cannot_bad].sum())
    n_must_bad, n_cannot_bad = int(must_bad.sum()), int(cannot_bad.sum())
    return Violations(
        n_must=int(must.sum()),
        n_must_violated=n_must_bad,
        must_weight_violated=must_w,
        n_cannot=int((~must).sum()),
        n_cannot_violated=n_cannot_bad,
        cannot_weight_violated=cannot_w,
        n_violated=n_must_bad + n_cannot_bad,
        weight_violated=must_w + cannot_w,
        violated=np.flatnonzero(must_bad | cannot_bad),
    )


def violated_mask(labels, pairs, weights):
    """Which constraints ``labels`` violate, as a boolean mask over the rows of
    ``pairs``: a must-link (``weights > 0``) across two labels, a cannot-link
    (``weights < 0``) inside one. The trusting twin of :func:`constraint_violations`
    for the inner loops of estimators: integer labels and pairs in range, no checks."""
    same = labels[pairs[:, 0]] == labels[pairs[:, 1]]
    return np.where(weights > 0, ~same, same)


def violations(problem, labels, *, nodes=None):
    """Count the constraints of a problem (or of side information) a labelling violates.

    Parameters
    ----------
    problem : Problem or SideInfo
        A :class:`~graphclust.Problem` (its ``constraints`` and ``constraint_weights``
        are used), or a :class:`~graphclust.SideInfo` together with node keys.
    labels : array-like of shape (n_nodes,) or dict
        Labels in node order, or a dict ``node -> label`` (for example an estimator's
        ``partition_``).
    nodes : sequence of hashable or None, default=None
        Node keys the labels are aligned with, when ``problem`` is a ``SideInfo`` and
        ``labels`` is an array. Ignored for a ``Problem`` (its own nodes are used).

    Returns
    -------
    Violations

    Raises
    ------
    InvalidParameterError
        Wrong number of labels; a ``SideInfo`` with array labels but no ``nodes``; a
        node without a label in a dict.
    UnknownNodeError
        A constraint of the ``SideInfo`` refers to a node that has no label.

    See Also
    --------
    constraint_violations : the same count on raw arrays.

    Examples
    --------
    >>> import networkx as nx
    >>> import graphclust as gc
    >>> from graphclust.metrics import violations
    >>> S = gc.SideInfo.from_pairs(must=[("a", "b")], cannot=[("a", "d"), ("b", "c")])
    >>> P = gc.Problem.from_graph(nx.path_graph(["a", "b", "c", "d"]), S)
    >>> violations(P, [0, 0, 0, 1])
    Violations(n_must=1, n_must_violated=0, must_weight_violated=0.0, n_cannot=2, n_cannot_violated=1, cannot_weight_violated=1.0, n_violated=1, weight_violated=1.0)
    >>> violations(S, {"a": 0, "b": 1, "c": 1, "d": 1}).n_violated
    2
    """
    from .sideinfo import SideInfo

    if isinstance(problem, Problem):
        lab = _labels_for(problem.nodes, labels, problem.index if isinstance(labels, Mapping) else None)
        return constraint_violations(lab, problem.constraints, problem.constraint_weights)
    if isinstance(problem, SideInfo):
        if isinstance(labels, Mapping):
            keys = list(labels)
            lab = _as_label_array(list(labels.values()), "labels")
        else:
            if nodes is None:
                raise InvalidParameterError(
                    "labels is an array but no node keys were given: pass nodes=... or a dict node -> label"
                )
            keys = list(nodes)
            lab = _as_label_array(labels, "labels")
            if len(lab) != len(keys):
                raise InvalidParameterError(f"{len(lab)} labels given for {len(keys)} nodes")
        index = {u: i for i, u in enumerate(keys)}
        try:
            pairs, w = problem.to_arrays(index)
        except UnknownNodeError as exc:
            raise UnknownNodeError(
                f"constraint {exc.constraint!r} refers to node {exc.node!r}, which has no label",
                node=exc.node, constraint=exc.constraint,
            ) from None
        return constraint_violations(lab, pairs, w)
    raise InvalidParameterError(f"expected a Problem or a SideInfo, got {type(problem).__name__}")


def _labels_for(nodes, labels, index=None):
    """Labels aligned with ``nodes``: an array of the right length, or a dict over them."""
    n = len(nodes)
    if isinstance(labels, Mapping):
        missing = [u for u in nodes if u not in labels]
        if missing:
            raise InvalidParameterError(
                f"node {missing[0]!r} has no label ({len(missing)} of {n} nodes are missing from the dict)"
            )
        extra = [u for u in labels if u not in index] if index is not None else []
        if extra:
            raise UnknownNodeError(f"label given for node {extra[0]!r}, which is not in the graph", node=extra[0])
        return _as_label_array([labels[u] for u in nodes], "labels")
    lab = _as_label_array(labels, "labels")
    if len(lab) != n:
        raise InvalidParameterError(f"{len(lab)} labels given for a graph of {n} nodes; expected one per node")
    return lab


# ---------------------------------------------------------------------- cuts
def _edges_and_codes(W, labels):
    """Upper-triangle edges ``(i, j, w)`` of a similarity graph and label codes."""
    if isinstance(W, Problem):  # validated when it was built
        nodes, A, index = W.nodes, W.W, W.index
    elif isinstance(W, nx.Graph):
        P = Problem.from_graph(W, features=None)
        nodes, A, index = P.nodes, P.W, P.index
    else:
        A = _check_matrix(W)
        nodes = index = range(A.shape[0])
    lab = _labels_for(nodes, labels, index)
    codes = _factorize(lab, "labels")
    U = sp.triu(A, k=1).tocoo()
    return U.row.astype(np.int64), U.col.astype(np.int64), U.data.astype(np.float64), codes, lab


def _check_matrix(W):
    if not sp.issparse(W):
        try:
            W = np.asarray(W, dtype=np.float64)
        except (TypeError, ValueError):
            raise InvalidGraphError(
                f"W must be a Problem, a networkx graph or a numeric (sparse) matrix, got {type(W).__name__}"
            ) from None
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise InvalidGraphError(f"the similarity matrix must be square, got shape {W.shape}")
    A = sp.csr_array(W, dtype=np.float64)
    bad = ~(np.isfinite(A.data) & (A.data >= 0))
    if bad.any():
        coo = A.tocoo()
        k = int(np.flatnonzero(~(np.isfinite(coo.data) & (coo.data >= 0)))[0])
        i, j = int(coo.row[k]), int(coo.col[k])
        raise InvalidGraphError(
            f"edge {(i, j)!r} has weight {coo.data[k]}; similarities must be finite and >= 0", edge=(i, j)
        )
    diff = (A - A.T).tocoo()
    asym = diff.data != 0
    if asym.any():
        k = int(np.flatnonzero(asym)[0])
        i, j = int(diff.row[k]), int(diff.col[k])
        raise InvalidGraphError(
            f"the similarity matrix is not symmetric: W[{i}, {j}] = {A[i, j]} but W[{j}, {i}] = {A[j, i]}",
            edge=(i, j),
        )
    return A


def _cluster_cuts(W, labels):
    """Per-cluster cut weights, degrees, codes and the original labels."""
    rows, cols, data, codes, lab = _edges_and_codes(W, labels)
    per_cluster, total = cut_weights(rows, cols, data, codes)
    n = len(codes)
    degrees = np.bincount(rows, data, minlength=n) + np.bincount(cols, data, minlength=n)
    return per_cluster, degrees, codes, lab, total


def cut_weights(rows, cols, weights, labels, n_clusters=None):
    """Cut weight of every cluster and the total cut, from an edge list (each
    undirected edge once) and integer labels ``0..k-1``: the trusting twin of
    :func:`cut` for the inner loops of estimators (no checks).

    Returns
    -------
    per_cluster : ndarray of shape (n_clusters,)
        Weight of the edges leaving each cluster.
    total : float
        Weight of the edges between clusters (each once).

    Examples
    --------
    >>> import numpy as np
    >>> per, total = cut_weights(np.array([0, 1, 2]), np.array([1, 2, 3]), np.array([1.0, 0.5, 2.0]),
    ...                          np.array([0, 0, 1, 1]))
    >>> per.tolist(), total
    ([0.5, 0.5], 0.5)
    """
    k = (int(labels.max()) + 1 if len(labels) else 0) if n_clusters is None else n_clusters
    cross = labels[rows] != labels[cols]
    cw = weights[cross]
    per_cluster = np.bincount(labels[rows[cross]], cw, minlength=k) + np.bincount(labels[cols[cross]], cw, minlength=k)
    return per_cluster.astype(np.float64), float(cw.sum())


def cut(W, labels):
    """Total weight of the edges whose ends are in different clusters.

    .. math:: \\mathrm{cut}(A_1, \\dots, A_k) = \\sum_{i < j,\\; z_i \\neq z_j} w_{ij}
              = \\tfrac12 \\sum_k \\mathrm{cut}(A_k, \\bar A_k)

    Parameters
    ----------
    W : Problem, networkx.Graph, scipy.sparse matrix or ndarray of shape (n_nodes, n_nodes)
        Symmetric non-negative similarities (a graph uses its ``weight`` edge
        attribute, 1 if missing). The diagonal (self loops) is ignored.
    labels : array-like of shape (n_nodes,) or dict
        A label per node, in node order, or a dict ``node -> label`` for a Problem or
        a graph.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        Wrong number of labels, or a node without a label.
    InvalidGraphError
        ``W`` is not square, not symmetric, or has a negative or non-finite entry (the
        message names the entry).

    Examples
    --------
    >>> import networkx as nx
    >>> from graphclust.metrics import cut
    >>> cut(nx.barbell_graph(3, 0), [0, 0, 0, 1, 1, 1])
    1.0
    """
    return _cluster_cuts(W, labels)[4]


def _zero_error(kind, lab, codes, k, what):
    members = np.flatnonzero(codes == k)
    label = lab[members[0]]
    label = label.item() if hasattr(label, "item") else label
    return InvalidParameterError(
        f"cluster {label!r} has {kind} 0 ({len(members)} node(s) {what}), so its ratio cut/{kind} is 0/0 "
        f"and the {'normalized' if kind == 'volume' else 'ratio'} cut is undefined"
    )


def normalized_cut(W, labels):
    """Normalised cut of a labelling: each cluster's cut divided by its volume.

    .. math:: \\mathrm{Ncut}(A_1, \\dots, A_k) =
              \\sum_k \\frac{\\mathrm{cut}(A_k, \\bar A_k)}{\\mathrm{vol}(A_k)},
              \\qquad \\mathrm{vol}(A) = \\sum_{i \\in A} d_i

    For two clusters this equals networkx's ``normalized_cut_size``.

    Parameters
    ----------
    W : Problem, networkx.Graph, scipy.sparse matrix or ndarray of shape (n_nodes, n_nodes)
        Symmetric non-negative similarities; the diagonal is ignored.
    labels : array-like of shape (n_nodes,) or dict
        A label per node.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        Wrong number of labels; a cluster of volume 0 (only isolated nodes), whose
        term would be 0/0: the message names the cluster.
    InvalidGraphError
        As in :func:`cut`.

    Examples
    --------
    >>> import networkx as nx
    >>> from graphclust.metrics import normalized_cut
    >>> normalized_cut(nx.barbell_graph(3, 0), [0, 0, 0, 1, 1, 1])  # 1/7 + 1/7
    0.2857142857142857
    """
    per_cluster, degrees, codes, lab, _ = _cluster_cuts(W, labels)
    vol = np.bincount(codes, degrees, minlength=len(per_cluster))
    zero = vol <= 0
    if zero.any():
        raise _zero_error("volume", lab, codes, int(np.flatnonzero(zero)[0]), "without edges")
    return float(np.sum(per_cluster / vol))


def ratio_cut(W, labels, *, vertex_weights=None):
    """Ratio cut of a labelling: each cluster's cut divided by its size.

    .. math:: \\mathrm{RCut}(A_1, \\dots, A_k) =
              \\sum_k \\frac{\\mathrm{cut}(A_k, \\bar A_k)}{\\sum_{i \\in A_k} g_i}

    with vertex weights :math:`g_i` (1 for every node unless given, so the denominator
    is :math:`|A_k|`).

    Parameters
    ----------
    W : Problem, networkx.Graph, scipy.sparse matrix or ndarray of shape (n_nodes, n_nodes)
        Symmetric non-negative similarities; the diagonal is ignored.
    labels : array-like of shape (n_nodes,) or dict
        A label per node.
    vertex_weights : array-like of shape (n_nodes,) or None, default=None
        Non-negative vertex weights. ``None`` uses ``W.vertex_weights`` for a
        :class:`~graphclust.Problem` (so a must-link-contracted problem counts its
        original nodes) and ones otherwise.

    Returns
    -------
    float

    Raises
    ------
    InvalidParameterError
        Wrong number of labels or vertex weights; a negative or non-finite vertex
        weight; a cluster whose vertex weights sum to 0 (the message names it).
    InvalidGraphError
        As in :func:`cut`.

    Examples
    --------
    >>> import networkx as nx
    >>> from graphclust.metrics import ratio_cut
    >>> ratio_cut(nx.barbell_graph(3, 0), [0, 0, 0, 1, 1, 1])  # 1/3 + 1/3
    0.6666666666666666
    >>> ratio_cut(nx.barbell_graph(3, 0), [0, 0, 0, 1, 1, 1], vertex_weights=[1, 1, 2, 1, 1, 1])
    0.5833333333333333
    """
    per_cluster, degrees, codes, lab, _ = _cluster_cuts(W, labels)
    n = len(codes)
    if vertex_weights is None:
        vw = W.vertex_weights if isinstance(W, Problem) else np.ones(n)
    else:
        vw = np.asarray(vertex_weights, dtype=np.float64).reshape(-1)
        if vw.shape != (n,):
            raise InvalidParameterError(f"{vw.shape[0]} vertex weights given for a graph of {n} nodes")
        bad = ~(np.isfinite(vw) & (vw >= 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(f"vertex weight {i} is {vw[i]}; vertex weights must be finite and >= 0")
    size = np.bincount(codes, vw, minlength=len(per_cluster))
    zero = size <= 0
    if zero.any():
        raise _zero_error("size", lab, codes, int(np.flatnonzero(zero)[0]), "of vertex weight 0")
    return float(np.sum(per_cluster / size))
