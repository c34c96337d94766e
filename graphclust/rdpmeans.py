"""DP-means and RDP-means: clustering with a birth cost and (noisy) pairwise constraints.

RDP-means (Khashabi, Wieting, Liu, Liang 2015) is the small-variance limit of a
Dirichlet-process mixture whose partition also explains a noisy graph of may-links and
may-not-links. It minimises

.. math::

    J(z, μ) = \\sum_i c_i D(\\bar x_i, μ_{z_i})
            − ξ_1 \\sum_{(i,j): w_{ij} > 0} w_{ij} [z_i = z_j]
            + ξ_2 \\sum_{(i,j): w_{ij} < 0} |w_{ij}| [z_i = z_j]
            + λ K

over partitions ``z`` with ``K`` non-empty clusters and their centroids ``μ``: a Bregman
divergence ``D`` (squared Euclidean or KL) to the centroid, signed Potts terms on the
constraint graph, and a cost ``λ`` per cluster. Each constrained pair counts once (the
paper's eq. 20 counts it twice; see the research spec, §3.6). Hard constraints
(``±inf``) are feasibility conditions: hard must-links are merged first
(:func:`graphclust.contract`), a violated hard cannot-link makes ``J`` infinite.

``J`` is the energy of an :class:`~graphclust.energy.Energy` with label costs: unary
``c_i D(x̄_i, μ_k)``, the constraints as signed Potts terms of weight ``ξ1·w`` and
``ξ2·w``, ``λ`` per label used, and a constant (a must-link's ``−ξ1 w [z_i = z_j]`` is
``ξ1 w [z_i ≠ z_j] − ξ1 w``). The composition:

* :class:`DPCentroids` — a node-potential provider: centroid costs ``c_i D(x̄_i, μ_k)``,
  batch (for :class:`graphclust.HMRF`), incremental (``start``/``remove``/``add``/
  ``scores``) and compiled (the hooks of ICM with births);
* :func:`graphclust.inference.icm_births.sweep` — ICM with births over that energy:
  every node, in a fresh random order, takes the cheapest of "each cluster + its
  constraint terms + λ if it would open it" and "a new cluster + λ";
* the M-step (centroids = means), removal of empty clusters, and the ξ schedule; after
  every pass ``J`` is computed by :func:`graphclust.energy.energy_value`, the formula of
  :meth:`Energy.evaluate <graphclust.energy.Energy.evaluate>`, from each node's cost for
  its own cluster (an ``n × K`` unary matrix is never formed).

By default (``xi="auto"``) the run starts from k-means, ``λ`` keeps that start, and
``ξ`` is the strongest of a few candidates that held-out constraints accept
(:mod:`graphclust.selection`), so noisy links help without being enforced; the
paper's annealing is ``xi="anneal"``. :class:`DPMeans` is the same code without
constraints (Kulis & Jordan 2012).
"""

import math
import time
import warnings
from typing import ClassVar

import numpy as np
from scipy.special import xlogy

from ._params import AnyOf, Callable, Integer, Optional, Options, Progress, RandomState, Real
from ._utils import check_float, check_int, check_random_state, group_sums, progress_bar, sq_distances
from .base import ClusteringEstimator, ClusteringResult, canonical_labels, register_method
from .energy import energy_value, potts_csr
from .errors import InvalidParameterError, TooFewClustersError
from .inference import icm_births
from .merge import contract
from .potentials.base import check_features
from .potentials.dpcentroids import DIVERGENCES, DPCentroids, _cluster_sums, _entropy_rows, _log_floor
from .seeding import farthest_first, kmeans_plusplus
from .selection import above_chance, cross_validate_constraints, heldout_agreement, paired_standard_error
from .sideinfo import check_constraints

__all__ = ["RDPMeans", "DPMeans", "DPCentroids", "dp_lambda", "xi_from_pq"]

LAM_RULES = ("farthest_first", "kth_from_mean")
INITS = ("auto", "kmeans", "mean", "box")

#: xi="auto": the link accuracies (p = q) whose ξ (xi_from_pq, σ² of the k-means stage)
#: constraint cross-validation chooses from, strongest first; ξ = 0 is the last candidate
AUTO_LINK_ACCURACIES = (0.99, 0.9, 0.7)
#: xi="auto": constraint folds, and the fewest soft must-links and cannot-links to use them
AUTO_CV_FOLDS = 3
AUTO_CV_MIN_PER_KIND = 10
#: init="kmeans": k-means restarts of the stage, and k-means++ draws for the gain of a cluster
KMEANS_RESTARTS = 10
_GAIN_DRAWS = 3
#: no k hint: k-means restarts for each k of the scan (the chosen k then gets KMEANS_RESTARTS)
_SCAN_RESTARTS = 3
#: n_init="auto" with init="kmeans": restarts of the fit (the k-means stage, then k-means++ seeds)
AUTO_RESTARTS = 10

#: largest k tried by the default (gap) rule for λ
_GAP_MAX_K = 20
#: passes visit blocks of this many nodes in a random order (nodes laid out randomly once)
_BLOCK = 512
#: from this many (merged) nodes on; below it every pass draws a full permutation
_BLOCKED_FROM = 16_384
# ====================================================================== helpers
def _dist_to(Y, ent, kl, t):
    """D(y_i, t) for every row (t a point in the divergence's space)."""
    if kl:
        return np.maximum(ent - Y @ _log_floor(t), 0.0)
    diff = Y - t
    return np.einsum("ij,ij->i", diff, diff)


def _farthest_first(Y, ent, kl, mean, n_steps):
    """Farthest-first traversal from the mean: ``seq[j]`` is the largest divergence of a
    point to the set (mean + the ``j`` points added so far), before adding that point."""
    _, gaps = farthest_first(lambda i: _dist_to(Y, ent, kl, Y[i]), _dist_to(Y, ent, kl, mean), n_steps,
                             stop_at_zero=True)
    return gaps


def _fallback_lambda(seq):
    positive = seq[seq > 0]
    return 0.5 * float(positive.min()) if positive.size else 1.0


def _lambda(Y, c, kl, k, rule):
    """λ and the rule that produced it, on points ``Y`` (rows in the divergence's space)."""
    ent = _entropy_rows(Y) if kl else None
    mean = (c[:, None] * Y).sum(0) / c.sum()
    if k is None:
        seq = _farthest_first(Y, ent, kl, mean, min(_GAP_MAX_K + 1, len(Y)))
        valid = [j for j in range(1, len(seq)) if seq[j] > 0]
        if not valid:
            return _fallback_lambda(seq), "gap (degenerate: fallback)", None
        j = max(valid, key=lambda j: (seq[j - 1] / seq[j], -j))
        return float(seq[j - 1]), "gap", j
    if rule == "kth_from_mean":
        dm = np.sort(_dist_to(Y, ent, kl, mean))[::-1]
        lam = float(dm[k - 1])
        return (lam, rule, k) if lam > 0 else (_fallback_lambda(dm), rule + " (fallback)", k)
    seq = _farthest_first(Y, ent, kl, mean, k)
    if len(seq) == k and seq[k - 1] > 0:
        return float(seq[k - 1]), rule, k
    return _fallback_lambda(seq), rule + " (fallback: fewer distinct points than k)", k


def _lloyd(provider, Y, c, C, max_iter=300, tol=1e-10):
    """Weighted Lloyd iterations under the provider's divergence from centres ``C``:
    ``(labels, centres, cost)`` with ``cost = Σ c_i D(y_i, C[labels_i])`` of the labels
    returned (the mean is the best centre for every Bregman divergence)."""
    C = np.array(C, dtype=np.float64)
    ar = np.arange(len(Y))
    prev = math.inf
    for _ in range(max_iter):
        D = provider.distortion_matrix(Y, C)
        z = D.argmin(1)
        cost = float(c @ D[ar, z])
        if prev - cost <= tol * abs(cost):  # relative: the same iterations in any units
            break
        prev = cost
        sums, mass = _cluster_sums(Y, c, z, len(C))
        filled = mass > 0
        C[filled] = sums[filled] / mass[filled, None]
    return z, C, cost


def _kmeans_stage(provider, Y, c, k, rng, n_init=KMEANS_RESTARTS):
    """The k-means stage of ``init="kmeans"`` and ``lam_rule="kmeans"``: the best of
    ``KMEANS_RESTARTS`` weighted k-means runs (k-means++ seeds, Lloyd) under the
    divergence, and ``λ = max(gain, max_node_cost)``: ``gain`` is what a ``(k+1)``-th
    cluster saves (best of ``_GAIN_DRAWS`` k-means++ draws added to the answer, then
    Lloyd), ``max_node_cost`` the largest ``c_i D(y_i, μ_{z_i})``. With that ``λ`` the
    k-means answer is a fixed point of DP-means (no node opens a cluster) and a
    ``(k+1)``-th cluster does not pay for itself."""
    k = int(min(k, len(Y)))
    Y = _centred(provider, Y, c)
    best = None
    for _ in range(n_init):
        out = _lloyd(provider, Y, c, kmeans_plusplus(Y, k, rng, c))
        if best is None or out[2] < best[2]:
            best = out
    z, C, cost = best
    D = provider.distortion_matrix(Y, C)
    node = c * D[np.arange(len(Y)), z]
    gain = 0.0
    if k < len(Y) and node.sum() > 0:
        for _ in range(_GAIN_DRAWS):
            extra = Y[rng.choice(len(Y), p=node / node.sum())]
            gain = max(gain, cost - _lloyd(provider, Y, c, np.vstack([C, extra]))[2])
    d_max = float(node.max()) if len(node) else 0.0
    lam = max(gain, d_max)
    return {"labels": canonical_labels(z), "k": k, "objective": cost, "gain": gain, "max_node_cost": d_max,
            "lam": lam if lam > 0 else 1.0}


def _scan_k(provider, Y, c, pairs, w, rng, k_max=_GAP_MAX_K):
    """``(k, stage, scores)``: k-means (``_SCAN_RESTARTS`` restarts) for ``k = 2 ..
    k_max``, the ``k`` whose answer keeps the most of the soft constraints ``(pairs,
    w)`` (balanced agreement, :func:`graphclust.selection.heldout_agreement`; k-means
    never sees the constraints, so every one of them is held out; under flips with rate
    ``< 1/2`` its expectation increases with the answer's pairwise accuracy), and the
    full k-means stage for that ``k``."""
    scores = {}
    for k in range(2, max(2, min(k_max, len(Y))) + 1):
        labels = _kmeans_stage(provider, Y, c, k, rng, n_init=_SCAN_RESTARTS)["labels"]
        scores[k] = heldout_agreement(labels, pairs, w)
    k = max(scores, key=lambda j: (scores[j], -j))
    return k, _kmeans_stage(provider, Y, c, k, rng), scores


def _centred(provider, Y, c):
    """Squared distances on points centred at their weighted mean (the same distances,
    computed without losing digits to an offset); KL points as they are."""
    if provider.divergence != "sqeuclidean":
        return Y
    return Y - (c[:, None] * Y).sum(0) / c.sum()


def _seeded_labels(provider, Y, c, k, rng):
    """Fresh k-means++ seeds (weights ``c``), every node with its nearest seed."""
    Y = _centred(provider, Y, c)
    C = kmeans_plusplus(Y, int(min(k, len(Y))), rng, c)
    return canonical_labels(provider.distortion_matrix(Y, C).argmin(1))


def _kl_noise_var(problem):
    """``1/m`` with ``m`` the mean number of draws per histogram (row totals)."""
    X, counts = problem.X, problem.counts
    totals = X.sum(1) / counts
    m = float(np.sum(totals * counts) / counts.sum())
    return 1.0 / m if m > 0 else 1.0


def _link_estimates(kept, weights):
    """``(p̂, q̂)`` from which held-out soft constraints a fit kept: ``p̂`` the fraction of
    must-links among the held-out pairs the fit put together, ``q̂`` the fraction of
    cannot-links among those it kept apart (TVClust's update of p and q, spec §2.3, on
    pairs the fit did not see); ``nan`` where no pair counts."""
    soft = np.isfinite(weights)
    must = weights > 0
    together = np.where(must, kept, ~kept)
    n11 = int((soft & must & together).sum())
    n01 = int((soft & ~must & together).sum())
    n00 = int((soft & ~must & ~together).sum())
    n10 = int((soft & must & ~together).sum())
    p = n11 / (n11 + n01) if n11 + n01 else float("nan")
    q = n00 / (n00 + n10) if n00 + n10 else float("nan")
    return p, q


def _check_prob(value, name):
    v = check_float(value, name)
    if not 0.0 < v < 1.0:
        raise InvalidParameterError(
            f"{name} must lie strictly between 0 and 1, got {value!r} (p = 1 or q = 1 means the constraints "
            "are certain: give them weight=float('inf') instead, which makes them hard)"
        )


def _check_xi(value, name):
    if isinstance(value, str):
        if value not in ("auto", "anneal", "pq"):
            raise InvalidParameterError(
                f"{name} must be 'anneal', 'pq', 'auto', a number >= 0 or a pair (xi1, xi2), got {value!r}"
            )
        return
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise InvalidParameterError(f"{name} as a pair must be (xi1, xi2), got {len(value)} values")
        for v in value:
            check_float(v, name, low=0.0)
        return
    check_float(value, name, low=0.0)


def _check_init(value, name):
    if isinstance(value, str) or value is None or np.ndim(value) != 1:
        if not (isinstance(value, str) and value in INITS):
            raise InvalidParameterError(
                f"{name} must be one of {', '.join(map(repr, INITS))} or an array of labels, got {value!r}"
            )


def xi_from_pq(p_link, q_link=None, noise_var=1.0, divergence="sqeuclidean"):
    """Constraint weights ``(ξ1, ξ2)`` from link credibilities and the noise level.

    In the small-variance limit of TVClust (research spec §3.3, §3.11), a may-link is
    worth ``ln(p/(1−q))`` nats and a may-not-link ``ln(q/(1−p))`` nats; on the cost
    scale of the divergence they become

    * ``"sqeuclidean"`` (spherical Gaussian clusters of variance ``σ²`` per
      coordinate, ``D = ‖x − μ‖² = 2σ² × nats``): ``ξ1 = 2σ² ln(p/(1−q))``,
      ``ξ2 = 2σ² ln(q/(1−p))``;
    * ``"kl"`` (multinomial histograms of ``m`` draws, ``D_KL = nats / m``):
      ``ξ = ln(...) / m``, with ``noise_var = 1/m``.

    Parameters
    ----------
    p_link : float in (0, 1)
        ``P(may-link | same cluster)``: how trustworthy the must-links are.
    q_link : float in (0, 1) or None, default=None
        ``P(may-not-link | different clusters)``; ``None`` means ``p_link`` (symmetric
        flipping with accuracy ``a`` gives ``p_link = q_link = a``).
    noise_var : float > 0, default=1.0
        ``σ²`` for ``"sqeuclidean"``, ``1/m`` for ``"kl"``.
    divergence : {"sqeuclidean", "kl"}, default="sqeuclidean"

    Returns
    -------
    (xi1, xi2) : tuple of float
        Both 0 when ``p = q = 1/2`` (the links carry no information); negative when
        ``p + q < 1`` (the links are more often wrong than right).

    Examples
    --------
    >>> xi1, xi2 = xi_from_pq(0.95, noise_var=1.0)
    >>> round(xi1, 3), round(xi2, 3)
    (5.889, 5.889)
    >>> xi_from_pq(0.5)
    (0.0, 0.0)
    """
    _check_prob(p_link, "p_link")
    q_link = p_link if q_link is None else q_link
    _check_prob(q_link, "q_link")
    noise_var = check_float(noise_var, "noise_var", low=0.0, low_open=True)
    Options(*DIVERGENCES).check(divergence, "divergence")
    scale = 2.0 * noise_var if divergence == "sqeuclidean" else noise_var
    xi1 = scale * math.log(p_link / (1.0 - q_link))
    xi2 = scale * math.log(q_link / (1.0 - p_link))
    return float(xi1) + 0.0, float(xi2) + 0.0


def dp_lambda(X, n_clusters=None, *, rule="farthest_first", divergence="sqeuclidean", smoothing=1e-3):
    """The birth cost ``λ`` for DP-means / RDP-means, from a target number of clusters.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or Problem
        Features (feature sums with counts for a Problem).
    n_clusters : int or None, default=None
        The target ``k``. ``None`` picks ``k`` by the largest gap of the farthest-first
        sequence (see Notes).
    rule : {"farthest_first", "kth_from_mean"}, default="farthest_first"
        * ``"farthest_first"`` (Kulis & Jordan 2012, the rule the RDP-means paper
          cites): start a set ``T`` with the global mean; ``k`` times, find the point
          farthest from ``T`` (divergence to its nearest member), note that divergence
          and add the point to ``T``. ``λ`` is the ``k``-th divergence noted, so the
          ``k`` clusters of ``T`` minus its last point cover the data within ``λ``.
        * ``"kth_from_mean"`` (what the RDP-means reference code does, and hence its
          published numbers): the ``k``-th largest divergence of a point to the global
          mean.
    divergence : {"sqeuclidean", "kl"}, default="sqeuclidean"
        ``λ`` is on the divergence's scale (squared distances for ``"sqeuclidean"``).
    smoothing : float, default=1e-3
        For ``"kl"``: added to every count before normalising rows to distributions.

    Returns
    -------
    float

    Raises
    ------
    TooFewClustersError
        ``n_clusters`` larger than the number of points.

    Notes
    -----
    ``n_clusters`` is a hint: DP-means with this ``λ`` found the true number of
    well-separated Gaussian blobs in 38 of 40 of our trials (2 to 5 blobs in 2 to 4
    dimensions), but symmetric data can tie (a point exactly at ``λ`` from the mean
    does not open a cluster), and constraints change the count.

    Without ``n_clusters`` the sequence ``d_1 ≥ d_2 ≥ ...`` of noted divergences is
    computed up to ``k = 20`` and ``k*`` maximises ``d_k / d_{k+1}`` (the largest
    relative drop, between-cluster to within-cluster distances); ``λ = d_{k*}``. This
    is rougher: it found the true number in about half of the same trials, more often
    too few than too many. When the points run out (fewer distinct points than ``k``),
    ``λ`` is half the smallest positive divergence noted (``1.0`` if all points
    coincide). Costs ``O(k n d)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [11.0], [13.0]])
    >>> dp_lambda(X, 2), dp_lambda(X, 3), dp_lambda(X, 2, rule="kth_from_mean")
    (25.0, 4.0, 36.0)
    >>> dp_lambda(X)  # the largest drop is after k = 2
    25.0
    """
    from .problem import as_problem

    problem = as_problem(X)
    provider = DPCentroids(lam=1.0, divergence=divergence, smoothing=smoothing)
    Y, c = provider.points(problem)
    Options(*LAM_RULES).check(rule, "rule")
    if n_clusters is not None:
        n_clusters = check_int(n_clusters, "n_clusters", low=1)
        if n_clusters > len(Y):
            raise TooFewClustersError(
                f"n_clusters={n_clusters} exceeds the {len(Y)} points", n_clusters=n_clusters
            )
    return _lambda(Y, c, divergence == "kl", n_clusters, rule)[0]


# ====================================================================== estimators
class RDPMeans(ClusteringEstimator):
    """Relational DP-means: DP-means with noisy must-links and cannot-links.

    Sequential ICM with births (:mod:`graphclust.inference.icm_births`) on the objective
    ``J`` of the module docstring, the energy of an ``Energy`` with label costs ``λ``:
    nodes are visited in a fresh random order every pass; each takes the cheapest of
    its clusters (divergence to the centroid, minus ``ξ1·w`` per must-link partner in
    it, plus ``ξ2·|w|`` per cannot-link partner) or a new cluster (``λ``); then
    centroids become means and empty clusters disappear. At fixed ``ξ`` no step raises
    ``J``, so ``result_.history`` never increases, and the answer is a local minimum:
    no single node can move (to another cluster or a new one) and lower ``J``.

    By default (``xi="auto"``) the constraints are trusted only as far as held-out
    constraints say: the fit starts from k-means, ``λ`` keeps that start, and ``ξ`` is
    chosen by cross-validation over the constraints (Notes, "The default").

    Parameters
    ----------
    lam : float > 0 or None, default=None
        Cost of a cluster ``λ`` (squared-distance scale for ``"sqeuclidean"``).
        ``None``: by ``lam_rule``, from ``n_clusters`` (without it: the gap rule of
        :func:`dp_lambda`, or for ``lam_rule="kmeans"`` the ``k`` the default scans
        for). A given ``lam`` wins over ``n_clusters``.
    n_clusters : int or None, default=None
        A hint: the number of clusters ``λ`` (and the k-means start) is chosen for. The
        result may have more or fewer (constraints and data decide); with
        ``xi="auto"`` it keeps between 2 and ``2·n_clusters``.
    xi : {"auto", "anneal", "pq"}, float >= 0 or (float, float), default="auto"
        Weight of the constraints.

        * ``"auto"``: fixed ``ξ1 = ξ2`` from the link accuracy ``p = q`` in
          ``AUTO_LINK_ACCURACIES`` (0.99, 0.9, 0.7) or ``ξ = 0``, by :func:`xi_from_pq`
          with ``σ²`` of the k-means start, whichever held-out constraints prefer
          (Notes, "The default"). Implies ``init="kmeans"``, ``lam_rule="kmeans"`` and
          ``AUTO_RESTARTS`` restarts unless those are given.
        * ``"anneal"``: the paper's schedule (as its reference code runs it): ``ξ = 0``
          on pass 1 (a DP-means pass), ``ξ = xi0 · xi_rate**(t-1)`` on pass ``t``
          (``2·xi0`` on pass 2), capped at ``xi_max``; ``ξ1 = ξ2 = ξ``.
        * ``"pq"``: fixed ``(ξ1, ξ2)`` from ``p_link``, ``q_link`` and ``noise_var`` by
          :func:`xi_from_pq` (research spec §3.11).
        * a number or a pair: fixed ``ξ1 = ξ2`` or ``(ξ1, ξ2)``.
    xi0 : float > 0, default=1e-3
    xi_rate : float >= 1, default=2.0
    xi_max : "auto", float > 0 or None, default="auto"
        Cap of the annealed ``ξ``. ``"auto"``: the saturation level
        ``ξ_sat = 2 (λ + D_max) / w_min``, with ``D_max`` a bound on any node's
        divergence to any centroid and ``w_min`` the smallest constraint strength; from
        there on, with equal strengths, the constraints decide every move they touch
        (they act as hard), so a larger ``ξ`` changes no decision. ``None``: no cap (the
        reference code). A smaller number keeps noisy constraints soft.
    p_link, q_link : float in (0, 1) or None, default=None
        Link credibilities for ``xi="pq"`` (``q_link=None`` means ``p_link``).
    noise_var : "auto" or float > 0, default="auto"
        For ``xi="pq"`` and ``xi="auto"``: ``σ²`` (``"sqeuclidean"``) or ``1/m``
        (``"kl"``, ``m`` draws per histogram). ``"auto"``: ``xi="pq"`` runs DP-means
        first (``ξ = 0`` until no node moves), takes ``σ²`` as the pooled within-cluster
        variance per coordinate of that solution, and continues from there with the
        fixed ``ξ``; ``xi="auto"`` takes it from the k-means start. ``"kl"``: ``1/m``
        with ``m`` the mean row total of the features.
    divergence : {"sqeuclidean", "kl"}, default="sqeuclidean"
    smoothing : float >= 0, default=1e-3
        For ``"kl"``: added to every count before rows are normalised.
    lam_rule : {"auto", "farthest_first", "kth_from_mean", "kmeans"}, default="auto"
        How ``n_clusters`` becomes ``λ``. ``"farthest_first"`` and ``"kth_from_mean"``
        (the reference code's) as in :func:`dp_lambda`. ``"kmeans"``: from the k-means
        stage (the best of ``KMEANS_RESTARTS`` weighted k-means runs under the
        divergence, k-means++ seeds), ``λ = max(gain, max_node_cost)`` with ``gain``
        what a ``(k+1)``-th cluster would save (best of 3 k-means++ draws added to the
        answer, then Lloyd) and ``max_node_cost`` the largest divergence of a node to
        its centre: no node then opens a cluster at ``ξ = 0`` (the k-means answer is
        a fixed point) and a ``(k+1)``-th cluster does not pay for itself. ``"auto"``:
        ``"kmeans"`` with ``init="kmeans"``, else ``"farthest_first"``. Farthest-first
        picks outliers on standardised high-dimensional data (digits: one cluster of
        1053 points, one of 695 and eight of at most 32), so ``λ`` from it lets
        DP-means keep a few giant clusters.
    init : {"auto", "kmeans", "mean", "box"} or array-like of int, default="auto"
        ``"mean"``: one starting cluster holding every node, centroid the global mean;
        ``"box"``: one centroid drawn uniformly in the bounding box of the data (the
        reference code); ``"kmeans"``: restart 0 starts from the k-means stage (see
        ``lam_rule``; ``k`` = ``n_clusters``, or without it the ``k`` whose k-means
        answer keeps the most constraints, see Notes), later restarts from fresh
        k-means++ seeds (each node with its nearest seed); an array: starting labels,
        one per node. ``"auto"``: ``"kmeans"`` with ``xi="auto"``, else ``"mean"``.
    patience : int >= 1, default=20
        Annealing with ``anneal_stop="patience"`` (or when ``ξ_sat`` is unbounded: KL
        without smoothing): stop after this many consecutive passes in which no node
        moved.
    anneal_stop : {"saturation", "patience"}, default="saturation"
        When the annealing stops. ``"saturation"``: after a pass in which no node moved,
        once ``ξ`` has reached ``xi_max`` or ``ξ_sat`` (whichever is lower), i.e. once a
        larger ``ξ`` could change nothing. ``"patience"``: the paper's rule, ``patience``
        passes without a move (or an unchanged pass at the cap); on data with large
        coordinates the labels can sit still for ``patience`` passes while ``ξ`` is still
        far too small to matter, and the run then ends with the DP-means answer.
    n_init : "auto" or int >= 1, default="auto"
        Number of runs (restarts) from the same generator, which runs on, so the first
        restart is the single run; each draws its own visiting orders (and ``"box"`` or
        k-means++ start). The answer is the restart with the lowest final ``J``, all
        compared at one ``ξ`` (the largest final one: restarts of the annealing end at
        different ``ξ``, all of them at or beyond saturation by default). Costs
        ``n_init`` fits. ``"auto"``: ``AUTO_RESTARTS`` (10) with ``init="kmeans"``
        (the k-means start and 9 k-means++ seeds: on the benchmark below, 1 restart
        gives mean F 0.80 / 0.80 / 0.78 / 0.73 at 0 / 5 / 10 / 20 % noise, 10 give
        0.85 / 0.83 / 0.79 / 0.76), else 1.
    max_iter : int >= 1, default=1000
        Maximum number of passes.
    tol : float >= 0, default=1e-6
        At fixed ``ξ``, stop after a pass in which no node moved and ``J`` changed by
        at most ``tol·|J|``.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the visiting orders (and the ``"box"`` start).
    progress : bool or "auto", default="auto"
        Show a progress bar over passes; ``"auto"`` shows it only once the fit has run two
        seconds (quick fits print nothing), ``False`` never.
    callback : callable or None, default=None
        ``callback(pass, labels, objective)`` after every pass of every restart; return
        True to stop (no further restart is run).

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
    nodes_, partition_, n_clusters_, problem_
        See :class:`~graphclust.base.ClusteringEstimator`.
    centroids_ : ndarray of shape (n_clusters_, n_features)
        Cluster means (row ``k`` for label ``k``; distributions for ``"kl"``).
    lam_ : float
        The ``λ`` used.
    xi_ : tuple (float, float)
        ``(ξ1, ξ2)`` of the last pass.
    result_ : ClusteringResult
        ``objective``: ``J`` of the answer on the given problem (with the final
        ``ξ``): ``Energy.from_problem(problem, U, smoothness=0, constraint_weights=ξ·w,
        label_costs=[λ]*K, constant=-ξ1·Σ_{w>0} w).evaluate(labels_)`` with
        ``U[i, k] = c_i D(x̄_i, μ_k)``; ``history``: ``J`` after every pass; ``info``:
        ``lam``, ``lam_rule``, ``n_clusters_hint``, ``xi_mode``, ``xi_schedule`` (``(ξ1, ξ2)`` per pass),
        ``objective_before`` (``J`` at the start of every pass under that pass's ``ξ``:
        ``history[t] <= objective_before[t]`` always holds), ``n_changed`` and
        ``n_clusters`` per pass, ``stages`` (passes sharing one fixed ``ξ``),
        ``xi_max``, ``xi_saturation`` (``ξ_sat``, annealing only), ``noise_var``,
        ``iterations``, ``converged``, ``stop``, ``n_super_nodes``, ``sweep_seconds``
        (all of the chosen restart), ``n_init``, ``best_init``, ``init_objectives``
        (final ``J`` of every restart at the common ``ξ``), ``init_xi`` (that ``ξ``),
        ``init_n_clusters`` (final ``K`` of every restart), ``init`` (the start used:
        ``"kmeans"``, ``"mean"``, ``"box"`` or ``"given"``), ``n_clusters_bounds``
        (``(2, 2k)`` under ``xi="auto"`` with a ``k``, else None); with a k-means stage
        ``kmeans_stage`` (``k``, ``objective``, ``gain``, ``max_node_cost``, ``lam``)
        and without a hint ``n_clusters_scan`` (``k`` → balanced agreement of its
        k-means answer with the constraints); with ``xi="auto"``: ``xi`` (the ``(ξ1,
        ξ2)`` used), ``link_accuracy`` (the ``p = q`` it stands for; 0.5 for ``ξ = 0``),
        ``xi_candidates`` (accuracy → ``(ξ1, ξ2)``), ``xi_cv`` (accuracy → held-out
        balanced agreement), ``xi_choice`` (why), ``p_link_estimate`` and
        ``q_link_estimate`` (the estimated ``p`` and ``q``, see Notes),
        ``n_soft_must``, ``n_soft_cannot`` and, if a setting left the cluster-count
        bounds, ``out_of_bounds`` (the accuracies passed over).

    Raises
    ------
    InvalidParameterError
        A parameter out of range (``lam <= 0``, ``p_link`` outside ``(0, 1)``, ...).
    InvalidFeaturesError
        No features, or a non-finite one (the message names the node).
    TooFewClustersError
        ``n_clusters`` larger than the number of nodes.
    InfeasibleConstraintsError
        Hard must-links join two hard-cannot-linked nodes.

    Notes
    -----
    **Side information.** Soft constraints (finite weights ``w``) enter as ``ξ1·w``
    (must) and ``ξ2·|w|`` (cannot). Hard must-links are merged before clustering (the
    reported objective is on the original nodes); a hard cannot-link is never
    violated, whatever ``ξ`` (a new cluster is always available). When every
    constraint is noise, ``xi="pq"`` with ``p_link = q_link = 0.5`` gives them no
    weight and the result is the DP-means one; annealing on the other hand makes them
    decisive in the end (P13 of the research spec), so wrong constraints are enforced:
    give ``xi_max`` or use ``xi="pq"`` when they are noisy (or keep the default).

    **The default** (``xi="auto"``; issue #26: noisy side information must help, never
    hurt). Three steps, each a rule rather than a constant fitted to a data set:

    1. *Start.* The k-means stage (see ``lam_rule``) with ``k = n_clusters``. Without a
       hint, ``k`` is scanned over 2..20: the ``k`` whose k-means answer (3 restarts
       each) keeps the most constraints (balanced agreement; k-means never sees them,
       so all are held out) — without both must-links and cannot-links, the gap rule
       of :func:`dp_lambda`. ``λ`` keeps that start (``lam_rule="kmeans"``).
    2. *ξ.* Candidates ``ξ1 = ξ2 = xi_from_pq(p, noise_var=σ²)`` for link accuracies
       ``p = q`` in 0.99, 0.9, 0.7, and ``ξ = 0`` (the k-means answer), ``σ²`` the
       within-cluster variance per coordinate of the k-means stage. Each is fitted
       from the k-means start on 2/3 of the soft constraints and scored on the other
       third (:func:`graphclust.selection.cross_validate_constraints`, 3 folds,
       balanced agreement: under independent flips with rate ``ε < 1/2`` its
       expectation increases with the fit's pairwise accuracy, whatever ``ε``); the
       strongest candidate within one paired standard error of the best wins, and
       ``ξ = 0`` if the constraints conflict and no candidate beats coin flips (as
       :class:`graphclust.HMRF` does). With fewer than 10 soft must-links or
       cannot-links there is nothing to cross-validate: the strongest candidate.
    3. *Fit.* 10 restarts at that ``ξ`` (the k-means start, then k-means++ seeds), the
       lowest ``J`` among those that end with between 2 and ``2k`` clusters; if none
       does, the next weaker candidate (``ξ = 0`` keeps the k-means answer's ``k``).

    The constraint accuracy is estimated too: ``p_link_estimate`` is the fraction of
    must-links among the held-out pairs the chosen candidate's fits put together,
    ``q_link_estimate`` the fraction of cannot-links among those they keep apart
    (TVClust's update of ``p`` and ``q``, research spec §2.3, on pairs the fit did not
    see). It is exact when the fit is right (4000 pairs on four well-separated blobs:
    0.956 / 0.951 for 4.8 % flipped, 0.859 / 0.855 for 14.4 %) and low when the
    clusters mix classes (digits: ``p̂ ≈ 0.5`` even without noise). ``ξ`` is chosen
    by cross-validation rather than set from an accuracy because that measured
    better. Mean F / NMI over the seven data sets of the benchmark below (3 runs a
    cell, both rates; ``benchmarks/bench_rdpmeans.py --ablation``), by noise level,
    from the same k-means start and ``λ``:

    ======================================  ========  =============  =============  =============  =============
    ξ                                       restarts  0 %            5 %            10 %           20 %
    ======================================  ========  =============  =============  =============  =============
    ``xi="pq"``, the true accuracy          1         0.803 / 0.784  0.790 / 0.751  0.764 / 0.716  0.723 / 0.653
    ``xi="pq"``, ``p̂`` and ``q̂``            1         0.779 / 0.751  0.779 / 0.734  0.757 / 0.706  0.705 / 0.630
    cross-validated (the default)           1         0.804 / 0.782  0.797 / 0.761  0.776 / 0.730  0.729 / 0.672
    ``xi="pq"``, the true accuracy          10        0.849 / 0.824  0.815 / 0.774  0.774 / 0.724  0.732 / 0.663
    ``xi="pq"``, ``p̂`` and ``q̂``            10        0.799 / 0.773  0.785 / 0.743  0.768 / 0.714  0.720 / 0.648
    cross-validated (the default)           10        0.846 / 0.819  0.826 / 0.791  0.789 / 0.747  0.755 / 0.692
    ======================================  ========  =============  =============  =============  =============

    The Gaussian model behind :func:`xi_from_pq` undervalues a constraint on real
    data (``p̂`` is also low where the clusters mix classes), and the strongest
    candidate the held-out constraints accept makes up for it.

    **Measured** with ``benchmarks/bench_noisy_defaults.py --methods kmeans,rdpmeans
    --runs 5`` (issue #26's protocol: standardised features, ``min(round(r·n(n−1)/2),
    5000)`` pairs drawn uniformly at ``r`` = 0.01 and 0.03, each type flipped with
    probability ``noise``; iris, wine, breast cancer, digits, ecoli, glass, balance
    scale; the true ``k`` as ``n_clusters``; scikit-learn ``KMeans(k, n_init=10)``
    without side information as the floor). Mean F / NMI, and the worst data set's
    gap to k-means:

    =====  =============  ======================  ======================  ==============================
    noise  k-means        before (``"anneal"``)   the default             worst set, F / NMI gap
    =====  =============  ======================  ======================  ==============================
    0      0.649 / 0.540  0.752 / 0.699           0.848 / 0.818           +0.052 (wine) / +0.047 (digits)
    0.05   0.653 / 0.546  0.701 / 0.620           0.826 / 0.789           +0.037 (digits) / +0.021 (digits)
    0.1    0.650 / 0.542  0.668 / 0.563           0.792 / 0.751           +0.033 (glass) / +0.025 (digits)
    0.2    0.648 / 0.539  0.566 / 0.423           0.754 / 0.690           +0.009 (glass) / +0.023 (wine)
    =====  =============  ======================  ======================  ==============================

    Before, the worst set was digits at every level (F −0.31 to −0.37, NMI −0.41 to
    −0.52: farthest-first ``λ`` on 64 standardised dimensions) and 40 of 280 runs had
    more than ``2k`` clusters; with the default no run has one cluster or more than
    ``2k``. On held-out data (``benchmarks/bench_rdpmeans.py --heldout``: six
    synthetic sets, overlapping blobs in 2, 8 and 20 dimensions, unequal sizes,
    anisotropic blobs, two moons; the same protocol with new seeds, 3 runs) the
    default's mean F is 0.95 / 0.91 / 0.89 / 0.82 against k-means' 0.71 (the
    annealing's 0.86 / 0.78 / 0.73 / 0.59; without a hint 0.90 / 0.87 / 0.84 / 0.77),
    and no set falls below k-means. The price is time: about 20 fits (k-means stage,
    3 × 3 cross-validation fits, 10 restarts) where annealing made one; 0.14 s median
    per fit on the seven sets, against 0.02 s.

    **Merged nodes.** A node with ``counts[i] > 1`` (features = sums) costs
    ``c_i D(x̄_i, μ)``, which differs from the sum over its members by a constant, so
    merging changes no decision; the estimator adds that constant back when it merges
    hard must-links itself.

    **Cost.** A pass is ``O(n K d + M)`` for ``n`` nodes, ``K`` clusters, ``d``
    features and ``M`` constraints, compiled with numba.

    References
    ----------
    D. Khashabi, J. Wieting, J. Y. Liu, F. Liang, "Clustering with side information:
    from a probabilistic model to a deterministic algorithm", arXiv:1508.06235, 2015.
    B. Kulis, M. I. Jordan, "Revisiting k-means: new algorithms via Bayesian
    nonparametrics", ICML 2012.

    Examples
    --------
    Two groups of points on a line and a must-link across them, worth ``ξ``. A weak
    one is outvoted by the data; a strong one takes node 1 away from node 0 into a
    cluster of its own with node 2 (splitting node 2 from its group):

    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0], [0.2], [3.0], [3.2], [3.4]])
    >>> S = gc.SideInfo.from_pairs(must=[(1, 2)])
    >>> RDPMeans(lam=1.0, xi=1.0, random_state=0).fit(X, S).labels_
    array([0, 0, 1, 1, 1])
    >>> est = RDPMeans(lam=1.0, xi=5.0, random_state=0).fit(X, S)
    >>> est.labels_, est.result_.violations.n_violated
    (array([0, 1, 1, 2, 2]), 0)

    ``λ`` from a target number of clusters, and the paper's annealing of ``ξ`` (from
    one cluster at the mean). One run ends in a local minimum; restarts keep the
    lowest ``J``:

    >>> est = RDPMeans(n_clusters=2, xi="anneal", random_state=0).fit(X, S)
    >>> est.labels_, round(est.lam_, 2), est.result_.info["xi_schedule"][:3]
    (array([0, 1, 1, 1, 1]), 2.07, [(0.0, 0.0), (0.002, 0.002), (0.004, 0.004)])
    >>> est = RDPMeans(n_clusters=2, xi="anneal", n_init=5, random_state=0).fit(X, S)
    >>> est.labels_, [round(J, 2) for J in est.result_.info["init_objectives"]]
    (array([0, 0, 0, 1, 1]), [-16.29, -17.47, -17.47, -16.29, -16.29])

    The default: a k-means start and ``ξ`` chosen by cross-validation over the links
    (here the strongest candidate, ``p = q = 0.99``), with the links' accuracy
    estimated on held-out pairs (16 of these 150 links are flipped):

    >>> X3, y3 = gc.datasets.make_blobs(60, 3, 2, separation=4, random_state=0)
    >>> S3 = gc.SideInfo.sample(y3, n_pairs=150, noise=0.1, random_state=0)
    >>> est = RDPMeans(n_clusters=3, random_state=0).fit(X3, S3)
    >>> info = est.result_.info
    >>> est.n_clusters_, info["init"], info["link_accuracy"], gc.ari(y3, est.labels_)
    (3, 'kmeans', 0.99, 1.0)
    >>> round(info["p_link_estimate"], 2), round(info["q_link_estimate"], 2)
    (0.96, 0.86)
    """

    _parameter_constraints: ClassVar[dict] = {
        "lam": Optional(Real(low=0.0, low_open=True)),
        "n_clusters": Optional(Integer(low=1)),
        "xi": _check_xi,
        "xi0": Real(low=0.0, low_open=True),
        "xi_rate": Real(low=1.0),
        "xi_max": AnyOf(Options("auto"), None, Real(low=0.0, low_open=True),
                        message="{name} must be 'auto', None or a number > 0, got {value!r}"),
        "p_link": Optional(_check_prob),
        "q_link": Optional(_check_prob),
        "noise_var": AnyOf(Options("auto"), Real(low=0.0, low_open=True),
                           message="{name} must be 'auto' or a number > 0, got {value!r}"),
        "divergence": Options(*DIVERGENCES),
        "smoothing": Real(low=0.0),
        "lam_rule": Options("auto", *LAM_RULES, "kmeans"),
        "init": _check_init,
        "patience": Integer(low=1),
        "anneal_stop": Options("saturation", "patience"),
        "n_init": AnyOf(Options("auto"), Integer(low=1), message="{name} must be 'auto' or an int >= 1, got {value!r}"),
        "max_iter": Integer(low=1),
        "tol": Real(low=0.0),
        "random_state": RandomState(),
        "progress": Progress(),
        "callback": Callable(),
    }

    #: whether the side information is used (DPMeans sets False)
    _uses_constraints = True

    def __init__(self, lam=None, n_clusters=None, *, xi="auto", xi0=1e-3, xi_rate=2.0, xi_max="auto",
                 p_link=None, q_link=None, noise_var="auto", divergence="sqeuclidean", smoothing=1e-3,
                 lam_rule="auto", init="auto", patience=20, anneal_stop="saturation", n_init="auto",
                 max_iter=1000, tol=1e-6, random_state=None, progress="auto", callback=None):
        self.lam = lam
        self.n_clusters = n_clusters
        self.xi = xi
        self.xi0 = xi0
        self.xi_rate = xi_rate
        self.xi_max = xi_max
        self.p_link = p_link
        self.q_link = q_link
        self.noise_var = noise_var
        self.divergence = divergence
        self.smoothing = smoothing
        self.lam_rule = lam_rule
        self.init = init
        self.patience = patience
        self.anneal_stop = anneal_stop
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.progress = progress
        self.callback = callback

    def _check_params(self):
        name = type(self).__name__
        if self.xi == "pq" and self.p_link is None:
            raise InvalidParameterError(f"xi='pq' of {name} needs p_link (and optionally q_link)")
        if self.xi != "pq" and (self.p_link is not None or self.q_link is not None):
            raise InvalidParameterError(
                f"p_link/q_link of {name} only apply with xi='pq' (got xi={self.xi!r}); set xi='pq'"
            )

    # ------------------------------------------------------------------ settings
    def _resolve_start(self, mode):
        """``(init, lam_rule)`` with "auto" resolved: the k-means start and the λ that
        keeps it go with ``xi="auto"``; the other modes keep the paper's start."""
        init = self.init if isinstance(self.init, str) else "given"
        if init == "auto":
            init = "kmeans" if mode == "auto" else "mean"
        lam_rule = self.lam_rule
        if lam_rule == "auto":
            lam_rule = "kmeans" if init == "kmeans" else "farthest_first"
        return init, lam_rule

    def _n_restarts(self, init):
        if self.n_init == "auto":
            return AUTO_RESTARTS if init == "kmeans" else 1
        return int(self.n_init)

    def _settings(self):
        """The run's schedule settings (DPMeans overrides)."""
        xi = self.xi
        if isinstance(xi, str):
            mode = xi
            fixed = None
        else:
            mode = "fixed"
            fixed = tuple(float(v) for v in xi) if isinstance(xi, (tuple, list)) else (float(xi), float(xi))
        return mode, fixed

    def _needs_features(self):
        return True

    def predict(self, X):
        """Cluster labels of new points: the nearest of ``centroids_`` under the
        divergence of the fit (squared Euclidean, or KL between the smoothed rows).

        Parameters
        ----------
        X : array-like of shape (n_points, n_features)

        Returns
        -------
        ndarray of shape (n_points,)
            Labels numbered like ``labels_``.
        """
        from .problem import Problem

        X = self._new_points(X)
        provider = DPCentroids(lam=1.0, divergence=self.divergence, smoothing=self.smoothing)
        Y, _ = provider.points(Problem.from_array(X))
        if self.divergence == "kl":  # D(y, m) = const(y) - y . log m
            return np.argmin(-(Y @ _log_floor(self.centroids_).T), axis=1).astype(np.int64)
        return np.argmin(sq_distances(Y, self.centroids_), axis=1).astype(np.int64)

    # ------------------------------------------------------------------ fit
    def _fit(self, problem):
        who = type(self).__name__
        check_features(problem, who)
        if self.n_clusters is not None and self.n_clusters > problem.n_nodes:
            raise TooFewClustersError(
                f"n_clusters={self.n_clusters} (the hint {who} chooses λ for) exceeds the {problem.n_nodes} nodes; "
                "lower it", n_clusters=self.n_clusters,
            )
        provider = DPCentroids(lam=1.0, divergence=self.divergence, smoothing=self.smoothing)
        Y, c = provider.points(problem)
        kl = self.divergence == "kl"
        mode, fixed = self._settings()
        init, lam_rule = self._resolve_start(mode)

        # ---- λ (the "kmeans" rule waits for the k-means stage, on the merged nodes)
        if self.lam is not None:
            lam, lam_rule, k_hint = float(self.lam), "given", None
        elif lam_rule == "kmeans":
            lam, k_hint = None, self.n_clusters
        else:
            lam, lam_rule, k_hint = _lambda(Y, c, kl, self.n_clusters, lam_rule)
        need_stage = init == "kmeans" or lam_rule == "kmeans" or mode == "auto"
        k_stage = self.n_clusters if need_stage else None

        # ---- constraints: merge hard must-links, keep the rest as a symmetric CSR
        pairs = problem.constraints if self._uses_constraints else np.empty((0, 2), np.int64)
        w = problem.constraint_weights if self._uses_constraints else np.empty(0)
        mapping, n_red, offset_terms = None, problem.n_nodes, (0.0, 0.0, 0.0)
        if self._uses_constraints and np.isposinf(w).any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # soft cannot-links inside merged groups: reported below
                reduced, lift = contract(problem)
            mapping, n_red = lift.mapping, lift.n_super
            inside = mapping[pairs[:, 0]] == mapping[pairs[:, 1]]
            if (inside & (w < 0)).any():
                warnings.warn(
                    f"{int((inside & (w < 0)).sum())} soft cannot-link(s) join nodes that hard must-links merge; "
                    "they are always violated", UserWarning, stacklevel=3,
                )
            c_red = np.bincount(mapping, weights=c, minlength=n_red)
            Y_red = group_sums(mapping, Y, n_red, c)
            Y_red /= c_red[:, None]
            scatter = float(np.sum(c * _node_divergence(Y, Y_red[mapping], kl)))
            finite = np.isfinite(w)
            offset_terms = (scatter, float(w[inside & finite & (w > 0)].sum()),
                            float(-w[inside & finite & (w < 0)].sum()))
            pairs, w = reduced.constraints, reduced.constraint_weights
        else:
            Y_red, c_red = Y, c
        rng = check_random_state(self.random_state)
        if n_red >= _BLOCKED_FROM:
            # visit order: the nodes are laid out once in a random order, and every pass
            # walks that layout in a fresh random order of blocks of _BLOCK nodes. Each
            # pass is a random order of the nodes, read from memory block by block
            # instead of one cache miss per node (3x faster a pass at 10^5 points)
            perm = rng.permutation(n_red)
            inv = np.empty(n_red, dtype=np.int64)
            inv[perm] = np.arange(n_red)
            Y_red, c_red = Y_red[perm], c_red[perm]
            mapping = inv if mapping is None else inv[mapping]
            pairs = np.sort(inv[pairs], axis=1)
        stage, k_scan = None, None
        if need_stage:
            soft = np.isfinite(w)
            if k_stage is None and (soft & (w > 0)).any() and (soft & (w < 0)).any():
                # no hint: the k whose k-means answer keeps most of the constraints
                k_stage, stage, k_scan = _scan_k(provider, Y_red, c_red, pairs[soft], w[soft], rng)
            elif k_stage is None:  # no hint and nothing to scan with: the k of the gap rule (see dp_lambda)
                k_stage = _lambda(Y_red, c_red, kl, None, "farthest_first")[2] or 1
            if stage is None:
                stage = _kmeans_stage(provider, Y_red, c_red, k_stage, rng)
            if lam is None:
                lam, k_hint = stage["lam"], k_stage
        start_red = None
        if init == "given":
            start_red = np.zeros(n_red, dtype=np.int64)
            start_red[np.arange(n_red) if mapping is None else mapping] = self._start_labels(problem.n_nodes)
            start_red = canonical_labels(start_red)
        # the energy's pair terms as CSR (its structure is fixed; each ξ scales the weights)
        indptr, indices, _, edge_ids = potts_csr(pairs, w, n_red)
        finite_abs = np.abs(w[np.isfinite(w)])

        xi_sat = (self._saturation(Y_red, c_red, lam, finite_abs, kl)
                  if mode == "anneal" else None)
        bounds = None
        if mode == "auto" and (self.n_clusters is not None or k_scan is not None):
            # a k (the hint, or the scanned one): the answer keeps between 2 (1 for k = 1) and 2k clusters
            bounds = (min(2, k_stage), 2 * k_stage)

        def pair_sums(z):
            """(satisfied must-link weight, violated cannot-link weight) over finite weights."""
            _, ml_in, cl_in = offset_terms
            if not len(pairs):
                return ml_in, cl_in
            same = (z[pairs[:, 0]] == z[pairs[:, 1]]) & np.isfinite(w)
            return float(w[same & (w > 0)].sum()) + ml_in, float(-w[same & (w < 0)].sum()) + cl_in

        def one_run(rng, restart, mode, fixed):
            provider = DPCentroids(lam=lam, divergence=self.divergence, smoothing=self.smoothing)

            # ---- start: one cluster, the given labels, or k-means (restart 0: the k-means
            # stage; later restarts: fresh k-means++ seeds, each node with its nearest seed)
            if init == "kmeans":
                labels0 = stage["labels"].copy() if restart == 0 else _seeded_labels(provider, Y_red, c_red,
                                                                                     k_stage, rng)
            else:
                labels0 = np.zeros(n_red, dtype=np.int64) if start_red is None else start_red.copy()
            centroid0 = None
            if init == "box":
                lo, hi = Y_red.min(0), Y_red.max(0)
                centroid0 = rng.uniform(lo, hi)[None, :]
                if kl:
                    centroid0 = np.maximum(centroid0, 1e-300)
                    centroid0 /= centroid0.sum()
            provider.start_arrays(Y_red, c_red, labels0, centroid0)

            # ---- ξ schedule
            fixed_run, xi_cap, noise_var = fixed, None, None
            if mode == "anneal":
                xi_cap = self._auto_cap(xi_sat, finite_abs)
            elif mode == "pq" and self.noise_var != "auto":
                noise_var = float(self.noise_var)
                fixed_run = xi_from_pq(self.p_link, self.q_link, noise_var, self.divergence)
            elif mode == "none":
                fixed_run = (0.0, 0.0)
            # annealing: ξ stops mattering at the cap, or (anneal_stop="saturation") once the
            # constraints decide every move they touch (ξ_sat); anneal_stop="patience" is the
            # paper's rule: stop after `patience` unchanged passes, whatever ξ has reached
            sat = xi_sat if self._uses_constraints and self.anneal_stop == "saturation" else None
            xi_enough = min(v for v in (xi_cap, sat, math.inf) if v is not None) if mode == "anneal" else math.inf

            def total(xi1, xi2, we, attract):
                """J: the energy of the merged problem (unary c_i D(x̄_i, μ_k), the ξ-weighted
                constraints as signed Potts terms, λ per cluster), whose constant turns
                "ξ1 w if apart" into J's "−ξ1 w if together" (``attract``: Σ ξ1 w) and adds
                what merging took out."""
                scat, ml_in, cl_in = offset_terms
                sizes = provider.cluster_sizes()
                return energy_value(provider._z, provider.assignment_cost(), pairs, we,
                                    label_costs=np.full(len(sizes), lam), used=sizes > 0,
                                    constant=scat - xi1 * ml_in + xi2 * cl_in - attract)

            history, before, xi_sched, n_changed, n_clusters = [], [], [], [], []
            stages = []
            stage_xi = None
            waiting_for_dp = mode == "pq" and fixed_run is None  # noise_var="auto": DP-means first
            unchanged = 0
            converged, stop = False, "max_iter"
            sweep_seconds = 0.0
            for t in range(1, self.max_iter + 1):
                if mode == "anneal":
                    xi = _anneal_xi(self.xi0, self.xi_rate, t)
                    xi = min(xi, xi_cap) if xi_cap is not None else xi
                    xi1 = xi2 = xi
                elif waiting_for_dp:
                    xi1 = xi2 = 0.0
                else:
                    xi1, xi2 = fixed_run
                if (xi1, xi2) != stage_xi:
                    stages.append({"first_pass": t, "xi1": xi1, "xi2": xi2})
                    stage_xi = (xi1, xi2)
                same_xi = bool(xi_sched) and xi_sched[-1] == (xi1, xi2)
                if not same_xi:
                    we = _effective(w, xi1, xi2)
                    w_adj = we[edge_ids]
                    attract = we[(we > 0) & np.isfinite(we)].sum()
                J_before = history[-1] if same_xi else total(xi1, xi2, we, attract)
                t0 = time.perf_counter()
                moved = icm_births.sweep(provider, _visit_order(n_red, rng), (indptr, indices, w_adj), lam)
                provider.refit()
                sweep_seconds += time.perf_counter() - t0
                z = provider._z
                J = total(xi1, xi2, we, attract)
                history.append(J)
                before.append(J_before)
                xi_sched.append((xi1, xi2))
                n_changed.append(int(moved))
                n_clusters.append(int(provider.n_clusters))
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(restart=restart, J=f"{J:.6g}", K=provider.n_clusters, xi=f"{xi1:.3g}",
                                    moved=moved)
                if self.callback is not None:
                    full = z if mapping is None else z[mapping]
                    if self.callback(t, full.copy(), J):
                        stop = "callback"
                        break
                still = moved == 0 and (abs(J_before - J) <= self.tol * max(abs(J), 1e-300) or J == J_before)
                unchanged = unchanged + 1 if moved == 0 else 0
                if mode == "anneal":
                    if still and xi >= xi_enough:
                        converged, stop = True, "converged"
                        break
                    if unchanged >= self.patience and (self.anneal_stop == "patience" or sat is None):
                        converged, stop = True, "patience"
                        break
                elif still:
                    if waiting_for_dp:
                        noise_var = self._estimate_noise_var(problem, provider, offset_terms[0])
                        fixed_run = xi_from_pq(self.p_link, self.q_link, noise_var, self.divergence)
                        waiting_for_dp = False
                        continue
                    converged, stop = True, "converged"
                    break

            if waiting_for_dp:
                warnings.warn(
                    f"{who} stopped after max_iter={self.max_iter} passes before the DP-means stage of xi='pq' "
                    "converged; the constraints were never applied (raise max_iter)", UserWarning, stacklevel=4,
                )
            z = provider._z
            for s, nxt in zip(stages, stages[1:] + [None]):
                s["last_pass"] = (nxt["first_pass"] - 1) if nxt else len(history)
            info = {
                "xi_schedule": xi_sched, "objective_before": before, "n_changed": n_changed,
                "n_clusters": n_clusters, "stages": stages, "xi_max": xi_cap, "xi_saturation": xi_sat,
                "noise_var": noise_var, "iterations": len(history), "converged": converged, "stop": stop,
                "sweep_seconds": sweep_seconds,
            }
            data_cost = provider.objective() + offset_terms[0]
            return {"z": z.copy(), "centroids": provider.centroids_.copy(), "history": history, "info": info,
                    "parts": (data_cost, *pair_sums(z)), "xi": xi_sched[-1]}

        n_init = self._n_restarts(init)

        def solve(mode, fixed):
            """The restarts at one setting: ``(runs, compared, best)``; ``best`` is None when
            no restart keeps within ``bounds``."""
            # the same generator runs on, so restart 0 is the single run
            runs = []
            for r in range(n_init):
                runs.append(one_run(rng, r, mode, fixed))
                if runs[-1]["info"]["stop"] == "callback":
                    break
            # compare the restarts at one ξ (the largest final one; all equal unless annealed or "pq" with
            # noise_var="auto")
            xi1c = max(r["xi"][0] for r in runs)
            xi2c = max(r["xi"][1] for r in runs)
            compared = [a - xi1c * b + xi2c * cl for a, b, cl in (r["parts"] for r in runs)]
            ok = [i for i, r in enumerate(runs) if bounds is None or r["info"]["stop"] == "callback"
                  or bounds[0] <= r["info"]["n_clusters"][-1] <= bounds[1]]
            best = min(ok, key=lambda i: compared[i]) if ok else None
            return runs, compared, best, (xi1c, xi2c)

        auto_info = {}
        # one bar per fit, over the passes of every restart (how many is not known ahead)
        bar = progress_bar(self.progress, self.max_iter if n_init == 1 and mode != "auto" else None, who,
                           unit="pass")
        try:
            if mode == "auto":
                # ξ by cross-validation over the constraints; strongest first, then weaker
                # ones if a setting leaves the cluster-count bounds (ξ = 0 keeps the k-means stage)
                noise_var = self._stage_noise_var(problem, Y, c, offset_terms[0], stage)
                start = stage["labels"] if mapping is None else stage["labels"][mapping]
                order, auto_info = self._choose_xi(problem, init, start, lam, noise_var, rng)
                for accuracy, fixed in order:
                    runs, compared, best, (xi1c, xi2c) = solve("fixed", fixed)
                    if best is not None:
                        break
                    auto_info.setdefault("out_of_bounds", []).append(accuracy)
                if best is None:  # pragma: no cover - ξ = 0 keeps the k-means stage's k clusters
                    best = int(np.argmin(compared))
                auto_info.update(xi=tuple(fixed), link_accuracy=accuracy)
            else:
                runs, compared, best, (xi1c, xi2c) = solve(mode, fixed)
        finally:
            if bar is not None:
                bar.close()
        run = runs[best]

        z = run["z"]
        centroids = run["centroids"]
        full = z if mapping is None else z[mapping]
        canon = canonical_labels(full)
        order = np.empty(len(centroids), dtype=np.int64)
        order[canon] = full  # canonical id -> provider id (every provider cluster is used)
        self.centroids_ = centroids[order]
        self.lam_ = lam
        self.xi_ = tuple(run["xi"])
        history = run["history"]
        info = {
            "lam": lam, "lam_rule": lam_rule, "n_clusters_hint": k_hint, "xi_mode": mode, **run["info"],
            "p_link": self.p_link if mode == "pq" else None,
            "q_link": (self.q_link if self.q_link is not None else self.p_link) if mode == "pq" else None,
            "n_super_nodes": n_red, "n_init": len(runs), "best_init": best, "init_objectives": compared,
            "init_xi": (xi1c, xi2c), "init_n_clusters": [r["info"]["n_clusters"][-1] for r in runs], "init": init,
            **({"kmeans_stage": {k: v for k, v in stage.items() if k != "labels"}} if stage is not None else {}),
            **({"n_clusters_scan": k_scan} if k_scan is not None else {}),
            "n_clusters_bounds": bounds,
            **auto_info,
        }
        return canon, ClusteringResult(objective=history[-1], history=history, info=info)
    def _stage_noise_var(self, problem, Y, c, scatter, stage):
        """``noise_var`` of ``xi="auto"``: the given one, else σ² per coordinate of the
        k-means stage (``"sqeuclidean"``; merged nodes' inner scatter included) or ``1/m``
        (``"kl"``)."""
        if self.noise_var != "auto":
            return float(self.noise_var)
        if self.divergence == "kl":
            return _kl_noise_var(problem)
        return max((stage["objective"] + scatter) / (float(c.sum()) * Y.shape[1]), 0.0) or 1e-300

    def _choose_xi(self, problem, init, start, lam, noise_var, rng):
        """``xi="auto"``: the ``(ξ1, ξ2)`` settings to try, chosen one first (then the
        weaker ones, fallbacks should a setting leave the cluster-count bounds), and
        what to record. ``start``: the k-means stage's labels on the nodes of
        ``problem`` (``init="kmeans"``)."""
        w = problem.constraint_weights
        soft = np.isfinite(w)
        n_must, n_cannot = int((soft & (w > 0)).sum()), int((soft & (w < 0)).sum())
        accuracies = (*AUTO_LINK_ACCURACIES, 0.5)
        cands = [xi_from_pq(a, noise_var=noise_var, divergence=self.divergence) if a > 0.5 else (0.0, 0.0)
                 for a in accuracies]
        info = {"noise_var": noise_var, "n_soft_must": n_must, "n_soft_cannot": n_cannot,
                "xi_candidates": {a: xi for a, xi in zip(accuracies, cands)}, "xi_cv": None,
                "p_link_estimate": None, "q_link_estimate": None}
        if not n_must and not n_cannot:
            info["xi_choice"] = "no soft constraints: ξ = 0"
            return [(None, cands[-1])], info
        if n_must < AUTO_CV_MIN_PER_KIND:
            info["xi_choice"] = (f"fewer than {AUTO_CV_MIN_PER_KIND} soft must-links to cross-validate: the "
                                 "strongest candidate")
            return list(zip(accuracies, cands)), info
        trial = self.clone(xi=cands[0], lam=lam, init=start if init == "kmeans" else self.init, n_init=1,
                           progress=False, callback=None)

        shortcut = init == "kmeans" and not np.isneginf(w).any()

        def fit_labels(xi, train, seed):
            if xi == (0.0, 0.0) and shortcut:
                return start  # the k-means stage is where ξ = 0 stays (no hard cannot-link to mend)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                return trial.set_params(xi=xi, random_state=seed).fit(train).labels_

        # too few cannot-links to hold out stay in every fold; random pairs stand in for them
        least = AUTO_CV_MIN_PER_KIND
        scores, kept = cross_validate_constraints(fit_labels, problem, cands, n_folds=AUTO_CV_FOLDS,
                                                  random_state=rng, return_kept=True, min_per_kind=least)
        # the strongest candidate within one paired standard error of the best
        top = int(np.argmax(scores))
        pick = next(i for i in range(len(cands))
                    if scores[top] - scores[i] <= paired_standard_error(kept[top], kept[i], w, min_per_kind=least))
        why = "cross-validation: the strongest within one paired standard error of the best"
        report = check_constraints(problem.nodes, problem.constraints, w)
        # noisy for sure: conflicts, or must-links joining the nodes into fewer groups than the k hint
        noisy = bool(report.conflicts) or (self.n_clusters is not None and report.n_components < self.n_clusters)
        if noisy and not above_chance(scores.max(), w, min_per_kind=least):
            pick, why = len(cands) - 1, "noisy constraints that no candidate keeps better than coin flips: ξ = 0"
        held = w if n_cannot >= least else np.where(w < 0, -np.inf, w)  # p̂, q̂ from held-out pairs only
        p_hat, q_hat = _link_estimates(kept[pick], held)
        info.update(xi_cv={a: float(v) for a, v in zip(accuracies, scores)}, xi_choice=why, p_link_estimate=p_hat,
                    q_link_estimate=q_hat)
        return list(zip(accuracies, cands))[pick:], info

    def _start_labels(self, n_nodes):
        """The given starting labels, checked: one integer >= 0 per node."""
        lab = np.asarray(self.init)
        if lab.shape != (n_nodes,) or not np.issubdtype(lab.dtype, np.integer) or (lab < 0).any():
            raise InvalidParameterError(
                f"init of {type(self).__name__} must be 'mean', 'box' or {n_nodes} integer labels >= 0, got an "
                f"array of shape {lab.shape} and dtype {lab.dtype}"
            )
        return lab.astype(np.int64)

    def _saturation(self, Y, c, lam, finite_abs, kl):
        """``ξ_sat = 2 (λ + D_max) / w_min``: from this ``ξ`` on, one soft constraint of the
        smallest strength outweighs any divergence difference and a birth, so (with equal
        strengths) the constraints decide every move they touch and a larger ``ξ`` changes
        no decision. ``D_max`` bounds ``c_i D(x̄_i, μ)`` for any node and any centroid in the
        data's convex hull. ``None`` when it is unbounded (``"kl"`` with zero entries);
        ``xi0`` without soft constraints (``ξ`` plays no part)."""
        if not finite_abs.size:
            return self.xi0
        if kl:
            low = float(Y.min())
            if low <= 0:
                return None
            d_max = float(c.max()) * -math.log(low)
        else:
            d_max = float(c.max()) * float(np.sum((Y.max(0) - Y.min(0)) ** 2))
        sat = 2.0 * (lam + d_max) / float(finite_abs.min())
        return min(sat, 1e300 / max(1.0, float(finite_abs.max())) / (1.0 + len(finite_abs)))

    def _auto_cap(self, xi_sat, finite_abs):
        """``xi_max``: the given cap, None, or ``ξ_sat`` for "auto"."""
        if self.xi_max is None:
            return None
        if not (isinstance(self.xi_max, str) and self.xi_max == "auto"):
            return float(self.xi_max)
        return xi_sat

    def _estimate_noise_var(self, problem, provider, scatter):
        """σ² of the DP-means solution (sqeuclidean) or 1/m (kl); see ``noise_var``."""
        if self.divergence == "kl":
            return _kl_noise_var(problem)
        sse = provider.objective() - provider.lam * provider.n_clusters + scatter
        n_points = float(problem.counts.sum())
        return max(sse / (n_points * provider._Y.shape[1]), 0.0) or 1e-300


class DPMeans(RDPMeans):
    """DP-means (Kulis & Jordan 2012): k-means with a cost ``λ`` per cluster.

    The same code as :class:`RDPMeans` with ``ξ = 0``: side information given to
    ``fit`` is ignored (violations are still reported in ``result_.violations``), hard
    constraints included. Minimises ``Σ_i c_i D(x̄_i, μ_{z_i}) + λ K``; the history
    never increases.

    Parameters
    ----------
    lam : float > 0 or None, default=None
    n_clusters : int or None, default=None
        Hint for ``λ`` (see :func:`dp_lambda`).
    divergence : {"sqeuclidean", "kl"}, default="sqeuclidean"
    smoothing : float, default=1e-3
    lam_rule : {"farthest_first", "kth_from_mean", "kmeans", "auto"}, default="farthest_first"
        As in :class:`RDPMeans` (``"kmeans"``: ``λ`` that keeps the k-means answer).
    init : {"mean", "box", "kmeans", "auto"} or array-like of int, default="mean"
        As in :class:`RDPMeans` (``"auto"`` is ``"mean"`` here).
    n_init : int or "auto", default=1
        Restarts; the one with the lowest final objective is kept.
    max_iter : int, default=1000
    tol : float, default=1e-6
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool or "auto", default="auto"
        As in :class:`RDPMeans`.
    callback : callable or None, default=None

    Attributes
    ----------
    labels_, nodes_, partition_, n_clusters_, centroids_, lam_, result_
        As in :class:`RDPMeans`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [4.0, 4.0], [4.1, 4.0], [8.0, 0.0]])
    >>> est = DPMeans(lam=2.0, random_state=0).fit(X)
    >>> est.labels_, est.n_clusters_
    (array([0, 0, 1, 1, 2]), 3)
    >>> DPMeans(lam=1e6, random_state=0).fit(X).n_clusters_  # a cluster costs too much
    1
    """

    _parameter_constraints: ClassVar[dict] = {
        name: check for name, check in RDPMeans._parameter_constraints.items()
        if name in ("lam", "n_clusters", "divergence", "smoothing", "lam_rule", "init", "n_init", "max_iter",
                    "tol", "random_state", "progress", "callback")
    }
    _uses_constraints = False

    def __init__(self, lam=None, n_clusters=None, *, divergence="sqeuclidean", smoothing=1e-3,
                 lam_rule="farthest_first", init="mean", n_init=1, max_iter=1000, tol=1e-6, random_state=None,
                 progress="auto", callback=None):
        self.lam = lam
        self.n_clusters = n_clusters
        self.divergence = divergence
        self.smoothing = smoothing
        self.lam_rule = lam_rule
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.progress = progress
        self.callback = callback

    def _check_params(self):
        pass

    def _settings(self):
        return "none", (0.0, 0.0)


# ====================================================================== small pieces
def _node_divergence(Y, M, kl):
    """Row-wise D(Y_r, M_r)."""
    if kl:
        return np.maximum((xlogy(Y, Y) - Y * _log_floor(M)).sum(1), 0.0)
    diff = Y - M
    return np.einsum("ij,ij->i", diff, diff)


def _visit_order(n, rng):
    """A fresh random visiting order of ``n`` nodes: a permutation, or from
    ``_BLOCKED_FROM`` nodes on (laid out in a random order beforehand) a random order of
    contiguous blocks of ``_BLOCK`` nodes."""
    if n < _BLOCKED_FROM:
        return rng.permutation(n)
    n_blocks = -(-n // _BLOCK)
    starts = rng.permutation(n_blocks) * _BLOCK
    lengths = np.minimum(starts + _BLOCK, n) - starts
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(n)


def _effective(w, xi1, xi2):
    """Signed Potts weights of one pass: ``ξ1·w`` (must), ``ξ2·w`` (cannot), hard kept."""
    with np.errstate(invalid="ignore"):  # 0 * inf: hard terms are restored below
        out = np.where(w > 0, xi1 * w, xi2 * w)
    hard = np.isinf(w)
    if hard.any():
        out[hard] = w[hard]
    return np.ascontiguousarray(out, dtype=np.float64)


def _anneal_xi(xi0, rate, t):
    """ξ of pass ``t`` (1-based) of the annealing: 0 on pass 1, then ``xi0 · rate**(t-1)``
    (the reference code's ``ξ0·2^t`` after pass ``t``), kept finite."""
    if t == 1:
        return 0.0
    try:
        return min(xi0 * rate ** (t - 1), 1e300)
    except OverflowError:
        return 1e300


@register_method("rdpmeans", "RDP-means: DP-means with soft must-/cannot-link terms weighted by cross-validation "
                             "over the links, from a k-means start; n_clusters sets the start and λ, the result keeps "
                             "2 to 2k clusters")
def _rdpmeans_factory(n_clusters=2, random_state=None):
    return RDPMeans(n_clusters=n_clusters, random_state=random_state)


@register_method("dpmeans", "DP-means baseline (constraints ignored); n_clusters sets λ (farthest-first)")
def _dpmeans_factory(n_clusters=2, random_state=None):
    return DPMeans(n_clusters=n_clusters, random_state=random_state)

