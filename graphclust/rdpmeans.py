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

:class:`DPMeans` is the same code without constraints (Kulis & Jordan 2012).
"""

import math
import time
import warnings
from typing import ClassVar

import numpy as np
from scipy.special import xlogy

from ._params import AnyOf, Boolean, Callable, Integer, Optional, Options, RandomState, Real
from ._utils import check_float, check_int, check_random_state, progress_bar
from .base import ClusteringEstimator, ClusteringResult, canonical_labels, register_method
from .energy import energy_value, potts_csr
from .errors import InvalidParameterError, TooFewClustersError
from .inference import icm_births
from .merge import contract
from .potentials.base import check_features
from .potentials.dpcentroids import DIVERGENCES, DPCentroids, _entropy_rows, _log_floor
from .seeding import farthest_first

__all__ = ["RDPMeans", "DPMeans", "DPCentroids", "dp_lambda", "xi_from_pq"]

LAM_RULES = ("farthest_first", "kth_from_mean")

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


def _check_prob(value, name):
    v = check_float(value, name)
    if not 0.0 < v < 1.0:
        raise InvalidParameterError(
            f"{name} must lie strictly between 0 and 1, got {value!r} (p = 1 or q = 1 means the constraints "
            "are certain: give them weight=float('inf') instead, which makes them hard)"
        )


def _check_xi(value, name):
    if isinstance(value, str):
        if value not in ("anneal", "pq"):
            raise InvalidParameterError(
                f"{name} must be 'anneal', 'pq', a number >= 0 or a pair (xi1, xi2), got {value!r}"
            )
        return
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise InvalidParameterError(f"{name} as a pair must be (xi1, xi2), got {len(value)} values")
        for v in value:
            check_float(v, name, low=0.0)
        return
    check_float(value, name, low=0.0)


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

    Parameters
    ----------
    lam : float > 0 or None, default=None
        Cost of a cluster ``λ`` (squared-distance scale for ``"sqeuclidean"``).
        ``None``: from ``n_clusters`` by ``lam_rule``, or without it by the gap rule
        of :func:`dp_lambda`. A given ``lam`` wins over ``n_clusters``.
    n_clusters : int or None, default=None
        A hint: the number of clusters ``λ`` is chosen for. The result may have more
        or fewer (constraints and data decide).
    xi : {"anneal", "pq"}, float >= 0 or (float, float), default="anneal"
        Weight of the constraints.

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
        For ``xi="pq"``: ``σ²`` (``"sqeuclidean"``) or ``1/m`` (``"kl"``, ``m`` draws per
        histogram). ``"auto"`` runs DP-means first (``ξ = 0`` until no node moves),
        takes ``σ²`` as the pooled within-cluster variance per coordinate of that
        solution (``"kl"``: ``1/m`` with ``m`` the mean row total of the features),
        and continues from there with the fixed ``ξ``.
    divergence : {"sqeuclidean", "kl"}, default="sqeuclidean"
    smoothing : float >= 0, default=1e-3
        For ``"kl"``: added to every count before rows are normalised.
    lam_rule : {"farthest_first", "kth_from_mean"}, default="farthest_first"
        How ``n_clusters`` becomes ``λ`` (see :func:`dp_lambda`); ``"kth_from_mean"``
        reproduces the reference code.
    init : {"mean", "box"}, default="mean"
        One starting cluster holding every node, with centroid the global mean, or a
        point drawn uniformly in the bounding box of the data (the reference code).
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
    n_init : int >= 1, default=1
        Number of runs (restarts) from the same generator, which runs on, so the first
        restart is the single run; each draws its own visiting orders (and ``"box"``
        start). The answer is the restart with the lowest final ``J``, all compared at
        one ``ξ`` (the largest final one: restarts of the annealing end at different
        ``ξ``, all of them at or beyond saturation by default). Costs ``n_init`` fits.
    max_iter : int >= 1, default=1000
        Maximum number of passes.
    tol : float >= 0, default=1e-6
        At fixed ``ξ``, stop after a pass in which no node moved and ``J`` changed by
        at most ``tol·|J|``.
    random_state : None, int or numpy.random.Generator, default=None
        Seeds the visiting orders (and the ``"box"`` start).
    progress : bool, default=False
        Show a tqdm bar over passes.
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
        (final ``J`` of every restart at the common ``ξ``) and ``init_xi`` (that ``ξ``).

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
    give ``xi_max`` or use ``xi="pq"`` when they are noisy.

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

    ``λ`` from a target number of clusters, and the default annealing of ``ξ``. One run
    ends in a local minimum; restarts keep the lowest ``J``:

    >>> est = RDPMeans(n_clusters=2, random_state=0).fit(X, S)
    >>> est.labels_, round(est.lam_, 2), est.result_.info["xi_schedule"][:3]
    (array([0, 1, 1, 1, 1]), 2.07, [(0.0, 0.0), (0.002, 0.002), (0.004, 0.004)])
    >>> est = RDPMeans(n_clusters=2, n_init=5, random_state=0).fit(X, S)
    >>> est.labels_, [round(J, 2) for J in est.result_.info["init_objectives"]]
    (array([0, 0, 0, 1, 1]), [-16.29, -17.47, -17.47, -16.29, -16.29])
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
        "lam_rule": Options(*LAM_RULES),
        "init": Options("mean", "box"),
        "patience": Integer(low=1),
        "anneal_stop": Options("saturation", "patience"),
        "n_init": Integer(low=1),
        "max_iter": Integer(low=1),
        "tol": Real(low=0.0),
        "random_state": RandomState(),
        "progress": Boolean(),
        "callback": Callable(),
    }

    #: whether the side information is used (DPMeans sets False)
    _uses_constraints = True

    def __init__(self, lam=None, n_clusters=None, *, xi="anneal", xi0=1e-3, xi_rate=2.0, xi_max="auto",
                 p_link=None, q_link=None, noise_var="auto", divergence="sqeuclidean", smoothing=1e-3,
                 lam_rule="farthest_first", init="mean", patience=20, anneal_stop="saturation", n_init=1,
                 max_iter=1000, tol=1e-6, random_state=None, progress=False, callback=None):
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

        # ---- λ
        if self.lam is not None:
            lam, lam_rule, k_hint = float(self.lam), "given", None
        else:
            lam, lam_rule, k_hint = _lambda(Y, c, kl, self.n_clusters, self.lam_rule)
        provider.lam = lam

        # ---- constraints: merge hard must-links, keep the rest as a symmetric CSR
        mode, fixed = self._settings()
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
            Y_red = np.zeros((n_red, Y.shape[1]))
            np.add.at(Y_red, mapping, c[:, None] * Y)
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
        # the energy's pair terms as CSR (its structure is fixed; each ξ scales the weights)
        indptr, indices, _, edge_ids = potts_csr(pairs, w, n_red)
        finite_abs = np.abs(w[np.isfinite(w)])

        xi_sat = (self._saturation(Y_red, c_red, lam, finite_abs, kl)
                  if mode == "anneal" else None)

        def pair_sums(z):
            """(satisfied must-link weight, violated cannot-link weight) over finite weights."""
            _, ml_in, cl_in = offset_terms
            if not len(pairs):
                return ml_in, cl_in
            same = (z[pairs[:, 0]] == z[pairs[:, 1]]) & np.isfinite(w)
            return float(w[same & (w > 0)].sum()) + ml_in, float(-w[same & (w < 0)].sum()) + cl_in

        def one_run(rng):
            provider = DPCentroids(lam=lam, divergence=self.divergence, smoothing=self.smoothing)

            # ---- start: one cluster
            labels0 = np.zeros(n_red, dtype=np.int64)
            centroid0 = None
            if self.init == "box":
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
            bar = progress_bar(self.progress, self.max_iter, who, unit="pass")
            try:
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
                        bar.set_postfix(J=f"{J:.6g}", K=provider.n_clusters, xi=f"{xi1:.3g}", moved=moved)
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
            finally:
                if bar is not None:
                    bar.close()

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

        # ---- restarts: the same generator runs on, so restart 0 is the single run
        runs = []
        for _ in range(self.n_init):
            runs.append(one_run(rng))
            if runs[-1]["info"]["stop"] == "callback":
                break
        # compare the restarts at one ξ (the largest final one; all equal unless annealed or "pq"/"auto")
        xi1c = max(r["xi"][0] for r in runs)
        xi2c = max(r["xi"][1] for r in runs)
        compared = [a - xi1c * b + xi2c * cl for a, b, cl in (r["parts"] for r in runs)]
        best = int(np.argmin(compared))
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
            "init_xi": (xi1c, xi2c),
        }
        return canon, ClusteringResult(objective=history[-1], history=history, info=info)
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
            X, counts = problem.X, problem.counts
            totals = X.sum(1) / counts
            m = float(np.sum(totals * counts) / counts.sum())
            return 1.0 / m if m > 0 else 1.0
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
    lam_rule : {"farthest_first", "kth_from_mean"}, default="farthest_first"
    init : {"mean", "box"}, default="mean"
    n_init : int, default=1
        Restarts; the one with the lowest final objective is kept.
    max_iter : int, default=1000
    tol : float, default=1e-6
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool, default=False
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
                 progress=False, callback=None):
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


@register_method("rdpmeans", "RDP-means: DP-means with annealed soft must-/cannot-link terms; "
                             "n_clusters sets λ (farthest-first), the number of clusters is found")
def _rdpmeans_factory(n_clusters=2, random_state=None):
    return RDPMeans(n_clusters=n_clusters, random_state=random_state)


@register_method("dpmeans", "DP-means baseline (constraints ignored); n_clusters sets λ (farthest-first)")
def _dpmeans_factory(n_clusters=2, random_state=None):
    return DPMeans(n_clusters=n_clusters, random_state=random_state)

