"""The Determinantal Clustering Process (DCP): a kernel-based distribution over set
partitions, sampled by Gibbs sampling with hard constraints.

Shah & Ghahramani's DCP scores a partition ``S`` of the nodes by the Gram determinants
of its blocks under a positive-definite kernel ``K``:

.. math::

    p(S \\mid θ, τ) \\propto \\prod_{C \\in S} α \\det(K_C)^{-τ},

with a factor ``α`` per cluster that this package adds (the paper has ``α = 1``; the
DCP alone never penalises a merge, see :class:`DCP`). A node ``x`` joining cluster
``C`` multiplies the score by ``s_C(x)^{-τ}``, where
``s_C(x) = k(x, x) − k_{x,C} K_C^{-1} k_{C,x}`` is the Gaussian-process posterior
variance of ``x`` given ``C``; a new cluster costs ``α k(x, x)^{-τ}``. The sampler keeps
one Cholesky factor per cluster: a node is appended by forward substitution and
deleted by a rank-one update of the trailing block (``O(|C|²)`` each), in numba.
Hard must-links merge nodes into blocks that move as one (the score of a block is
the determinant of its Schur complement), hard cannot-links veto clusters, and
finite-weight constraints add their weights to the log score. The kernel's
lengthscales and ``τ`` are learnt by the exchange algorithm (Murray, Ghahramani &
MacKay 2006) with an auxiliary partition drawn by a few Gibbs sweeps of the
unconstrained DCP.

Read the Notes of :class:`DCP` before using the output: without the cluster factor the
most probable partition of a DCP is always the one-cluster partition (Fischer's
inequality), so every summary here comes from posterior samples, never from the mode.
"""

import math
import time

import numpy as np
from numba import njit

from ._params import AnyOf, Boolean, Integer, Options, Real
from ._utils import check_feature_matrix, check_int, check_random_state
from .base import ClusteringResult, check_is_fitted, register_method
from .bayesian import (BayesianClusteringEstimator, Pair, SamplerItems, SweepMonitor, binder_point_estimate,
                       canonical_rows)
from .conflict_repair import set_aside_suspects, without_suspects
from .errors import InvalidFeaturesError, InvalidParameterError
from .selection import above_chance, cross_validate_constraints, paired_standard_error
from .potentials.dcp import (
    _KERNEL_CONSTRAINTS,
    DCPKernel,
    _append,
    _check_lengthscale,
    _default_lengthscale,
    _KernelSpec,
    _neighbour_information,
    _new_slots,
    _no_adjacency,
    _partition_logdet,
    _score_block,
    _se_kernel,
    _singleton_items,
    _Store,
    _store_logdet,
)

__all__ = ["DCP", "DCPKernel"]

#: target acceptance rate of the exchange moves while the steps adapt (burn-in)
_TARGET_ACCEPT = 0.3
#: ``tau="auto"`` chooses from these temperatures
CV_TAUS = (2.0, 4.0, 8.0)
#: the temperature "auto" falls back to without enough soft constraints
AUTO_TAU = 4.0
CV_FOLDS = 3
#: sweeps of each cross-validation fit
CV_SWEEPS = 20
#: fewer soft must-links or cannot-links than this: no cross-validation
CV_MIN_PER_KIND = 10
#: z-score by which the best held-out agreement without the broken constraints must
#: beat the best with them for ``drop_suspects`` to set them aside when nothing
#: conflicts (a one-sided test at 5 %)
DROP_Z = 1.645
#: ``concentration="auto"`` with cannot-links: ``log α = −CLUSTER_COST · c``, ``c`` the
#: constraint weight factor (``τ`` by default): a cluster costs two unit cannot-links
CLUSTER_COST = 2.0


# ============================================================================ split-merge
@njit(cache=True)
def _cross_weight(z, ka, kb, sp_ptr, sp_idx, sp_w):
    """``Σ w`` of the item-level constraints between the items in slot ``ka`` and those
    in slot ``kb`` (``-inf`` when a hard cannot-link joins them)."""
    total = 0.0
    for u in range(z.shape[0]):
        if z[u] == ka:
            for e in range(sp_ptr[u], sp_ptr[u + 1]):
                if z[sp_idx[e]] == kb:
                    if sp_w[e] == -np.inf:
                        return -np.inf
                    total += sp_w[e]
    return total


@njit(cache=True)
def _sams(K, facs, mems, size, pos, zn, iptr, inodes, sp_ptr, sp_idx, sp_w, lab, a, b, order, forced, tau, floor,
          unif, side, merged):
    """Sequential allocation (Dahl's SAMS) of the items ``order`` to two clusters
    seeded by items ``a`` (slot 0) and ``b`` (slot 1), each item by the DCP conditional
    restricted to the two (``−τ log det`` of its Schur complement plus its soft
    constraints to the items placed so far). ``forced[u] >= 0`` replays a given
    allocation (the reverse of a merge) instead of sampling. With ``merged``, slot 2
    receives every item, so it ends as the merged cluster (its log-determinant is
    returned; 0 otherwise).

    Returns ``(log q, log det K_A, log det K_B, log det K_{A∪B}, Σ w between A and B)``;
    ``side[r]`` gets the cluster (0 or 1) of ``order[r]``. ``lab`` (item scratch, all
    ``-1``) and the scratch ``zn`` entries are left as they were found."""
    ld = np.zeros(3)
    size[0] = 0
    size[1] = 0
    size[2] = 0
    for t in range(iptr[a], iptr[a + 1]):
        ld[0] += _append(K, facs, mems, size, pos, zn, 0, inodes[t], floor)
        if merged:
            ld[2] += _append(K, facs, mems, size, pos, zn, 2, inodes[t], floor)
    for t in range(iptr[b], iptr[b + 1]):
        ld[1] += _append(K, facs, mems, size, pos, zn, 1, inodes[t], floor)
        if merged:
            ld[2] += _append(K, facs, mems, size, pos, zn, 2, inodes[t], floor)
    lab[a] = 0
    lab[b] = 1
    logq = 0.0
    for r in range(order.shape[0]):
        u = order[r]
        s0 = 0.0
        s1 = 0.0
        for e in range(sp_ptr[u], sp_ptr[u + 1]):
            j = sp_idx[e]
            if lab[j] == 0:
                s0 += sp_w[e]
            elif lab[j] == 1:
                s1 += sp_w[e]
        l0 = s0
        if l0 > -np.inf:
            l0 += -tau * _score_block(K, facs, mems, size, pos, zn, 0, inodes, iptr[u], iptr[u + 1], floor)
        l1 = s1
        if l1 > -np.inf:
            l1 += -tau * _score_block(K, facs, mems, size, pos, zn, 1, inodes, iptr[u], iptr[u + 1], floor)
        m = max(l0, l1)
        lse = m + math.log(math.exp(l0 - m) + math.exp(l1 - m))
        if forced[u] >= 0:
            c = forced[u]
        else:
            c = 0 if unif[r] < math.exp(l0 - lse) else 1
        logq += (l0 if c == 0 else l1) - lse
        for t in range(iptr[u], iptr[u + 1]):
            ld[c] += _append(K, facs, mems, size, pos, zn, c, inodes[t], floor)
            if merged:
                ld[2] += _append(K, facs, mems, size, pos, zn, 2, inodes[t], floor)
        lab[u] = c
        side[r] = c
    cross = 0.0
    for r in range(order.shape[0] + 2):
        u = a if r == 0 else (b if r == 1 else order[r - 2])
        if lab[u] == 0:
            for e in range(sp_ptr[u], sp_ptr[u + 1]):
                if lab[sp_idx[e]] == 1:
                    cross += sp_w[e]
    for r in range(order.shape[0] + 2):
        u = a if r == 0 else (b if r == 1 else order[r - 2])
        lab[u] = -1
        for t in range(iptr[u], iptr[u + 1]):
            zn[inodes[t]] = -1
    return logq, ld[0], ld[1], ld[2], cross


class _SplitMerge:
    """Split-merge moves for a DCP chain (Dahl's sequentially-allocated merge-split
    sampler, 2003): two distinct items drawn uniformly; in one cluster, a split of
    that cluster proposed by sequential allocation; in two clusters, their merge. The
    acceptance ratio keeps ``p(S) ∝ Π_C det(K_C)^(−τ) · exp(Σ w)`` invariant, so the
    moves may be mixed freely with the Gibbs sweeps. Scratch factors (three slots) and
    item labels are kept between moves."""

    def __init__(self, n_nodes, iptr, inodes, side):
        self.iptr, self.inodes = iptr, inodes
        self.sp_ptr, self.sp_idx, self.sp_w = side
        self.n_items = len(iptr) - 1
        self.facs, self.mems = _new_slots(3, 4)
        self.size = np.zeros(3, dtype=np.int64)
        self.pos = np.zeros(n_nodes, dtype=np.int64)
        self.zn = np.full(n_nodes, -1, dtype=np.int64)
        self.lab = np.full(self.n_items, -1, dtype=np.int64)
        self.proposed = np.zeros(2, dtype=np.int64)  # splits, merges
        self.accepted = np.zeros(2, dtype=np.int64)

    def move(self, store, tau, rng, log_alpha=0.0):
        """One proposal on ``store`` (a :class:`_Store`) for ``Π_C α det(K_C)^(−τ) ·
        exp(Σ w)``; returns whether it was accepted."""
        n_items = self.n_items
        if n_items < 2:
            return False
        a, b = (int(v) for v in rng.choice(n_items, 2, replace=False))
        z = store.zi
        ka, kb = int(z[a]), int(z[b])
        split = ka == kb
        rest = np.flatnonzero(((z == ka) | (z == kb)) & (np.arange(n_items) != a) & (np.arange(n_items) != b))
        order = rest[rng.permutation(len(rest))].astype(np.int64)
        unif = rng.random(len(order))
        side = np.empty(len(order), dtype=np.int64)
        if split:
            forced = np.full(n_items, -1, dtype=np.int64)
        else:
            cross = _cross_weight(z, ka, kb, self.sp_ptr, self.sp_idx, self.sp_w)
            if cross == -np.inf:  # a hard cannot-link: the merge has probability 0
                self.proposed[1] += 1
                return False
            forced = np.where(z == ka, 0, np.where(z == kb, 1, -1)).astype(np.int64)
        logq, ld_a, ld_b, ld_ab, cross = _sams(store.K, self.facs, self.mems, self.size, self.pos, self.zn, self.iptr,
                                               self.inodes, self.sp_ptr, self.sp_idx, self.sp_w, self.lab, a, b,
                                               order, forced, float(tau), store.floor, unif, side, not split)
        if split:  # the cluster as it stands: its cached factor
            ld_ab = _store_logdet(store.facs, store.size, np.array([ka], dtype=np.int64), 1)
        # log p(split) − log p(merged): one more cluster, the determinants, and the
        # constraints across
        log_ratio = log_alpha - tau * (ld_a + ld_b - ld_ab) - cross
        log_accept = log_ratio - logq if split else -log_ratio + logq
        self.proposed[0 if split else 1] += 1
        if not math.log(rng.random()) < log_accept:
            return False
        self.accepted[0 if split else 1] += 1
        labels = z.copy()
        if split:
            labels[b] = labels[order[side == 1]] = n_items  # a fresh label, made canonical below
        else:
            labels[labels == kb] = ka
        store.set_labels(np.unique(labels, return_inverse=True)[1].reshape(-1).astype(np.int64))
        return True


# ============================================================================ estimator
class DCP(BayesianClusteringEstimator):
    """Determinantal Clustering Process: a nonparametric, kernel-based distribution over
    partitions, sampled by Gibbs sampling with hard constraints; the number of clusters
    is inferred.

    The partition ``S`` has probability ``∝ Π_C α det(K_C)^(−τ)`` under a
    squared-exponential kernel on the node features (ARD or one shared lengthscale),
    or a graph kernel (heat or regularised Laplacian of the data graph) when nodes
    have no features; ``α`` (the concentration) is a factor per cluster. Hard
    must-links (labels give them: same label) merge nodes into blocks that move
    together; hard cannot-links (different labels) veto clusters;
    constraints of finite weight ``w`` add ``w`` to the log weight of a cluster for
    each partner in it. The lengthscales and ``τ`` are learnt by the exchange
    algorithm. The answer is the sampled partition with the least posterior expected
    Binder loss; the samples, the co-clustering probabilities, the posterior of the
    number of clusters and test-point predictions are available.

    Parameters
    ----------
    tau : float or "auto", default="auto"
        Temperature ``τ > 0`` (the start value when ``learn_tau=True``): large values
        sharpen the distribution, ``τ → 0`` makes it uniform over partitions.
        ``"auto"``: 4, unless another of ``CV_TAUS = (2, 4, 8)`` keeps more held-out
        soft constraints by more than one paired standard error and better than coin
        flips (balanced agreement, :mod:`graphclust.selection`; 3 folds of 20-sweep
        fits), when there are at least 10 soft must-links and 10 soft cannot-links.
        On wine at 1 % of the pairs and 20 % noise no candidate beat coin flips
        (held-out agreement 0.46–0.51); choosing among them anyway gave τ = 2 and 36
        clusters (F 0.07) where τ = 4 gives 0.66–0.74. ``τ = 1`` (the old default and the prior's centre) scattered iris
        and wine over 40–47 clusters (pairwise F 0.04–0.07) in the protocol of
        ``benchmarks/bench_noisy_defaults.py``; the best fixed ``τ`` was 3–8
        depending on the data set (``docs/dcp.md``).
    concentration : float or "auto", default="auto"
        The factor ``α > 0`` every cluster contributes to the partition's weight,
        ``Π_C α det(K_C)^(−τ)``: a new cluster is opened with weight ``α det(K_B)^(−τ)``
        and a split proposal gains ``log α``. The DCP alone never penalises a merge
        (Fischer's inequality; merged and split differ by ``2τ I(f_A; f_B)``, the GP
        mutual information of the parts), so without side information it returned one
        cluster on scikit-learn's three blobs. ``α > 1`` splits two groups whose mutual
        information is below ``log α / 2τ``; ``α < 1`` is a cost per cluster that keeps
        stray points in their neighbours' clusters. ``1`` switches the term off (the
        paper's DCP). ``"auto"``:

        * no cannot-link in the side information: ``log α = τ · ι``, ``ι`` the 10 %
          quantile over the nodes of ``log(k(x, x) / s_N(x))``, the information a node
          has about its 3 nearest neighbours ``N`` (``result_.info["split_information"]``):
          a node that tells less than that about every cluster would rather be alone.
          On ``check_clustering``'s blobs ``ι = 1.05`` and the defaults find 3–4
          clusters (ARI 0.91–0.94 over 5 seeds; without the term 1–2, ARI 0–0.57);
        * a cannot-link (soft, hard or from labels): ``log α = −2 c``, ``c`` the
          constraint weight factor (``τ`` by default): a cluster costs as much as two
          unit cannot-links, so one flipped cannot-link cannot split a node off its
          class, while the cannot-links keep the classes apart. With 100 clean pairs
          wine gave 3–4 clusters (ARI 0.88–0.99, 5 seeds) where ``α = 1`` and
          ``constraint_weight=1`` gave 4–8 (ARI 0.36 on average).

        ``log α`` is fixed for the fit (``log_alpha_``) and used by ``predict``;
        ``docs/dcp.md`` has the measurements, and what the term cannot do (iris and
        wine without side information).
    lengthscale : float, array-like of shape (n_features,) or None, default=None
        Squared-exponential lengthscale(s) on the (standardised) features, the kernel
        being ``exp(−½ Σ_d (x_d − x'_d)² / ℓ_d²)``; the start value when learnt and the
        centre of its prior. ``None``: the median distance to the 7th nearest
        neighbour (the seed spec's ℓ₀). A vector gives ARD. With split-merge moves,
        1.5 ℓ₀ and 2 ℓ₀ merged neighbouring classes (ecoli F 0.84 → 0.46, held-out
        constraints preferred ℓ₀ on 5 of 8 draws; ``docs/dcp.md``).
    kernel : {"auto", "se", "heat", "regularized_laplacian"} or ndarray, default="auto"
        ``"se"``: squared exponential on node features; ``"heat"``:
        ``expm(−β L)``; ``"regularized_laplacian"``: ``(I + α L)⁻¹``, with ``L`` the
        normalised Laplacian of the data graph and ``β``/``α`` = ``graph_scale``;
        ``"auto"``: ``"se"`` when nodes have features, else ``"heat"``. An
        ``(n_nodes, n_nodes)`` array is a precomputed kernel (checked positive
        semi-definite). Only ``"se"`` has learnable lengthscales.
    ard : bool, default=False
        One lengthscale per feature (when ``lengthscale`` is a scalar or ``None`` it is
        the start value of each).
    graph_scale : float, default=1.0
    standardize : bool, default=True
        Centre and scale features to unit variance before the kernel.
    jitter : float, default=1e-6
        Relative diagonal jitter ``ε·mean(diag K)``; it keeps every ``K_C`` positive
        definite (duplicates, long lengthscales) and floors ``s_C(x) ≥ ε·mean(diag K)``.
    learn_tau, learn_lengthscale : bool, default=False
        Exchange-algorithm moves (log-space Gaussian random walks, alternating between
        the two when both are learnt; steps adapt towards 30 % acceptance during the
        burn-in). Off by default: without labels the marginal posterior of
        ``(ℓ, τ)`` is its prior, so with a few soft constraints the moves mostly
        sample the prior (learnt from τ = 1, τ stayed at 0.9–1.6 on iris and
        digits); they took 84 % of a fit's time on digits (453 of 542 s), and from
        τ = 4 learning changed F on iris, wine and glass by −0.19 to +0.02
        (``docs/dcp.md``).
    tau_prior : tuple of two floats, default=(0.0, 1.0)
        ``log τ ~ N(mean, sd²)``.
    lengthscale_prior_sd : float, default=1.0
        ``log ℓ_d ~ N(log ℓ₀_d, sd²)`` with ``ℓ₀`` the start value.
    n_aux_sweeps : int, default=5
        Gibbs sweeps of the auxiliary chain in each exchange move (unconstrained DCP
        over all nodes at the proposed parameters, started at the current partition).
    split_merge : int, default=10
        Split-merge proposals after every sweep (Dahl's sequentially-allocated
        merge-split moves; 0: Gibbs sweeps only, the paper's sampler). They leave the
        posterior unchanged and free the chain from partitions single-node moves
        cannot leave: two far-apart groups in one cluster (independent under the
        kernel, so merged and split score the same and only the cannot-links between
        them tell) stay merged under Gibbs moves, each node being held by its group.
    constraint_weight : float or "tau", default="tau"
        Factor ``c`` on the soft constraints' weights: the chain samples
        ``p(S) ∝ Π_C α det(K_C)^(−τ) · exp(c Σ w)``. ``"tau"``: ``c = τ`` (the start
        value when ``τ`` is learnt), so the temperature tempers the whole energy,
        ``(Π_C α^(1/τ) det(K_C)^(−1) · exp(Σ w))^τ``, and raising ``τ`` does not
        silence the constraints. With ``c = 1`` the kernel term outweighs the
        cannot-links between neighbouring classes at ``τ = 4``: on wine at 1 % of the
        pairs the DCP merged two of the three classes (F 0.69 on the issue #26
        protocol; one draw gave 0.94 with ``c = τ``). The default since the cluster
        term: with it and ``concentration="auto"`` iris and wine gain at 0–10 % of
        flipped pairs and lose at 20 % (``docs/dcp.md``). Hard constraints are
        unaffected.
    drop_suspects : bool, default=True
        Drop the likely-wrong soft constraints before sampling
        (:func:`graphclust.conflict_repair.without_suspects`: every one that a
        noise-robust clustering breaks, with a repair of the rest), when the soft
        constraints conflict and the nodes have features; the dropped ones are in
        ``dropped_constraints_``. The DCP takes every constraint at its word
        (``constraint_weight="tau"``): on the noisy-pair protocol (iris, wine, glass,
        ecoli; rates 0.01 and 0.03) mean F is 0.796 / 0.763 / 0.746 at 5 / 10 / 20 %
        flipped against 0.801 / 0.743 / 0.698 without dropping
        (``docs/benchmarks/noisy_defaults.md``); the clustering makes a fit about 1.5
        times as long. Without conflicts (with ``tau="auto"``) the held-out constraints
        decide: each candidate ``τ`` is also fitted without the constraints a
        noise-robust clustering of the fold's training constraints breaks, and the
        broken constraints of the whole set go when the best such fit keeps the
        held-out constraints better than the best fit with them all, by
        ``DROP_Z = 1.645`` paired standard errors (one-sided, 5 %), or when no
        candidate keeps them better than coin flips; ``τ`` is then chosen again on
        the rest. On the noisy-pair protocol (4 sets, 5 runs) this changed 7 of 160
        draws and brought wine at 20 % flipped from F −0.061 to −0.010 against
        k-means (clean glass lost 0.03 of F), for about 1.6 times the median fit time
        (a noise-robust clustering per fold). Otherwise nothing changes.
    exchange_every : int, default=1
        One exchange move after every this many sweeps.
    n_iter : int, default=60
        Gibbs sweeps per chain after the sequential start. The point estimate from
        sweeps 10–30 was within 0.02 in F of the one from sweeps 30–100 on iris,
        wine, glass and digits (``docs/dcp.md``).
    burn_in : int or None, default=None
        ``None``: ``n_iter // 2``.
    thin : int, default=1
    n_chains : int, default=2
        Independent chains (``Generator.spawn``), samples pooled. Two by default: one
        chain now and then stays in a worse mode (a wine draw at 5 % flipped: two
        classes merged, log joint 2085 where another seed reaches 2293), and the
        pooled samples' point estimate then follows the other chain. On the
        noisy-pair protocol (4 sets, 5 runs) mean F went 0.824 / 0.774 / 0.780 →
        0.846 / 0.807 / 0.783 at 0 / 5 / 10 % flipped (0.755 either way at 20 %), for
        about 1.15 times the total fit time (the held-out choice of ``τ`` runs one
        chain per fit; ``docs/benchmarks/noisy_defaults.md``).
    refresh_every : int, default=10
        Rebuild every Cholesky factor from scratch after this many sweeps.
    random_state : None, int or numpy.random.Generator, default=None
    progress : bool or "auto", default="auto"
        Show a progress bar over the sweeps; ``"auto"`` shows it only once the fit has
        run two seconds (quick fits print nothing), ``False`` never.
    callback : callable or None, default=None
        ``callback(sweep, labels, log_joint)`` after every sweep (sweeps counted over
        all chains from 1; node labels; the log joint of ``result_.history``); return
        True to stop. The answer then summarises the samples kept so far (the current
        state when none was kept yet).

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
        Binder point estimate (Dahl's least-squares rule over the sampled partitions).
    dropped_constraints_ : list of (u, v, weight)
        The soft constraints ``drop_suspects`` set aside (empty when none conflict).
    nodes_, partition_, n_clusters_
    samples_ : ndarray of shape (n_samples, n_nodes)
        Kept partitions (labels in order of first appearance).
    coclustering_ : scipy.sparse.csr_array of shape (n_nodes, n_nodes)
        Posterior co-clustering probability of every constrained pair and data-graph
        edge; :meth:`coclustering` gives other pairs or the dense matrix.
    n_clusters_posterior_ : ndarray
        ``[k]`` = posterior probability of ``k`` clusters.
    tau_, lengthscale_ : float, ndarray or None
        Posterior means over the kept sweeps (``lengthscale_`` is None for fixed
        kernels).
    kernel_ : str
        The kernel used (``"auto"`` resolved).
    result_ : ClusteringResult
        ``objective``: expected Binder loss of ``labels_``; ``history``: the log joint
        ``−τ Σ_C log det K_C + |S| log α + c Σ w_ij`` (over the finite-weight
        constraints whose nodes share a cluster; hard constraints always hold) after
        every sweep of the first chain, the unnormalised log density the sweeps sample
        (at the current ``τ`` and lengthscales); ``info``: traces ``"n_clusters"``, ``"tau"``,
        ``"log_joint"``, ``"log_score"`` (``log f(S) = −τ Σ_C log det K_C`` alone)
        (``(n_chains, n_iter)``),
        ``"lengthscale"`` (``(n_chains, n_iter, n_ell)``), ``"accept_tau"``,
        ``"accept_lengthscale"`` (acceptance rates), ``"sweep_seconds"``,
        ``"n_items"`` (blocks after merging hard must-links), ``"accept_split"``,
        ``"accept_merge"``, ``"split_merge_seconds"``, ``"tau_start"`` (``τ`` after
        ``"auto"``), ``"tau_cv"`` (held-out agreement of each candidate), ``"no_signal"``
        (none above coin flips), ``"tau_cv_without_broken"`` (each candidate without
        the constraints a noise-robust clustering breaks, when nothing conflicts),
        ``"tau_cv_before_drop"`` and ``"dropped_by"`` (``"tau_cv"`` or ``"no_signal"``:
        when the broken constraints went without a conflict, see ``drop_suspects``),
        ``"log_alpha"``,
        ``"split_information"`` (``concentration="auto"`` without cannot-links) and more.
    log_alpha_ : float
        ``log α`` of the fit (``concentration`` resolved).

    Raises
    ------
    InvalidParameterError
        ``tau`` or ``lengthscale`` ``<= 0``, a precomputed kernel that is not positive
        semi-definite, every node labelled (the hard constraints fix the partition),
        a single node.
    InfeasibleConstraintsError
        Contradictory hard constraints.

    Notes
    -----
    **The mode is degenerate.** For any disjoint ``A, B``,
    ``det K_{A∪B} ≤ det K_A det K_B`` (Fischer), so merging clusters never lowers the
    score: without the cluster term (``α = 1``) the most probable partition is one
    cluster (with ``L`` labels, ``L`` clusters). Finer partitions carry the mass
    because there are many of them, or because ``α > 1`` rewards them. Use the
    samples; never a MAP or ICM optimum of the DCP with a free number of clusters.

    **Gibbs step.** A block ``B`` (a node, or nodes joined by hard must-links) joins
    cluster ``C`` with weight ``det(K_B − K_{B,C}K_C⁻¹K_{C,B})^(−τ)`` (``s_C(x)^(−τ)``
    for one node) and opens a new cluster with weight ``α det(K_B)^(−τ)``. The factors
    are cached per cluster (append by forward substitution, delete by a rank-one update
    of the trailing block) and rebuilt every ``refresh_every`` sweeps. A sweep costs
    ``O(n Σ_C |C|²)``: 50–70 ms for 500 points in a few dozen clusters, 0.4–0.7 s
    when all 500 share one cluster (``docs/benchmarks/dcp.md``).

    **Split-merge moves.** Two distinct items ``a, b`` are drawn uniformly. In one
    cluster ``C``, the other items of ``C`` are allocated one at a time in random
    order to the clusters seeded by ``a`` and ``b``, each by the DCP conditional
    restricted to the two (probability ``q`` of the allocation); the split is accepted
    with probability ``min(1, p(split) / (p(merged) q))`` (the ratio holds ``α``). In
    two clusters, their merge is accepted with ``min(1, p(merged) q / p(split))``, ``q``
    replaying the allocation that gives the current pair (Dahl 2003). A proposal costs
    ``O(|C|³)``.

    **Exchange algorithm.** A proposal ``ψ' = (ℓ', τ')`` is accepted with probability
    ``min(1, p(ψ') f(S; ψ') f(S'; ψ) / (p(ψ) f(S; ψ) f(S'; ψ')))``, where ``S'`` is
    drawn from the *unconstrained* DCP at ``ψ'`` over all nodes (with the fit's ``α``,
    which cancels from the ratio); here by ``n_aux_sweeps`` Gibbs sweeps started at
    ``S`` (an approximation: the exact algorithm needs an exact draw). The paper's
    Eq. 13 inverts the proposal ratio and drops the prior; this is the standard form.

    **Constraints.** Nodes labelled alike are merged; nodes labelled differently are
    cannot-linked, so anchored clusters never merge; unlabelled nodes may open
    clusters of their own. Constraints between blocks that are not cannot-linked leave
    the block's membership free, and it is sampled.

    References
    ----------
    A. Shah, Z. Ghahramani, *Determinantal clustering process – a nonparametric
    Bayesian approach to kernel based semi-supervised clustering*, UAI 2013.
    I. Murray, Z. Ghahramani, D. MacKay, *MCMC for doubly-intractable distributions*,
    UAI 2006.
    D. B. Dahl, *Model-based clustering for expression data via a Dirichlet process
    mixture model*, 2006.
    D. B. Dahl, *An improved merge-split sampler for conjugate Dirichlet process
    mixture models*, Technical Report 1086, University of Wisconsin, 2003.

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> X = np.array([[0.0, 0.0], [0.3, 0.1], [0.1, 0.3], [4.0, 4.0], [4.2, 3.9], [3.9, 4.2]])
    >>> S = gc.SideInfo.from_labels({0: "a", 3: "b"})
    >>> est = gc.DCP(tau=2.0, lengthscale=1.0, n_iter=60, random_state=0).fit(X, S)
    >>> est.labels_
    array([0, 0, 0, 1, 1, 1])
    >>> float(est.n_clusters_posterior_[2]) > 0.5
    True
    """

    _parameter_constraints = {
        **BayesianClusteringEstimator._parameter_constraints,
        **_KERNEL_CONSTRAINTS,
        "tau": AnyOf(Options("auto"), Real(low=0.0, low_open=True),
                     message="{name} must be 'auto' or a number > 0, got {value!r}"),
        "ard": Boolean(),
        "learn_tau": Boolean(),
        "learn_lengthscale": Boolean(),
        "tau_prior": Pair(Real(), Real(low=0.0, low_open=True), what="a pair (mean, sd) of log tau"),
        "lengthscale_prior_sd": Real(low=0.0, low_open=True),
        "n_aux_sweeps": Integer(low=1),
        "split_merge": Integer(low=0),
        "constraint_weight": AnyOf(Options("tau"), Real(low=0.0),
                                   message="{name} must be 'tau' or a number >= 0, got {value!r}"),
        "exchange_every": Integer(low=1),
        "refresh_every": Integer(low=1),
        "concentration": AnyOf(Options("auto"), Real(low=0.0, low_open=True),
                               message="{name} must be 'auto' or a number > 0, got {value!r}"),
        "drop_suspects": Boolean(),
    }

    def __init__(self, tau="auto", *, concentration="auto", lengthscale=None, kernel="auto", ard=False,
                 graph_scale=1.0, standardize=True, jitter=1e-6, learn_tau=False, learn_lengthscale=False,
                 tau_prior=(0.0, 1.0), lengthscale_prior_sd=1.0, n_aux_sweeps=5, split_merge=10,
                 constraint_weight="tau", drop_suspects=True, exchange_every=1, n_iter=60, burn_in=None, thin=1,
                 n_chains=2, refresh_every=10, random_state=None, progress="auto", callback=None):
        self.tau = tau
        self.concentration = concentration
        self.lengthscale = lengthscale
        self.kernel = kernel
        self.ard = ard
        self.graph_scale = graph_scale
        self.standardize = standardize
        self.jitter = jitter
        self.learn_tau = learn_tau
        self.learn_lengthscale = learn_lengthscale
        self.tau_prior = tau_prior
        self.lengthscale_prior_sd = lengthscale_prior_sd
        self.n_aux_sweeps = n_aux_sweeps
        self.split_merge = split_merge
        self.constraint_weight = constraint_weight
        self.drop_suspects = drop_suspects
        self.exchange_every = exchange_every
        self.n_iter = n_iter
        self.burn_in = burn_in
        self.thin = thin
        self.n_chains = n_chains
        self.refresh_every = refresh_every
        self.random_state = random_state
        self.progress = progress
        self.callback = callback

    # ------------------------------------------------------------------ "auto"
    def _resolve_tau(self, problem, rng, drop=False):
        """``(τ, drop, info)``: the given ``tau``, or for ``"auto"`` :data:`AUTO_TAU` unless
        another of :data:`CV_TAUS` keeps more held-out soft constraints (balanced
        agreement over :data:`CV_FOLDS` folds of :data:`CV_SWEEPS`-sweep fits at fixed
        parameters) by more than one paired standard error and better than coin flips
        (:func:`~graphclust.selection.above_chance`); without :data:`CV_MIN_PER_KIND`
        soft must-links and cannot-links, :data:`AUTO_TAU`. With ``drop`` each ``τ`` is
        also tried without the constraints a noise-robust clustering of the fold's
        training constraints breaks (:func:`~graphclust.conflict_repair.without_suspects`),
        and ``drop`` in the answer says whether such a candidate won."""
        if not isinstance(self.tau, str):
            return float(self.tau), False, {}
        w = problem.constraint_weights
        soft = np.isfinite(w)
        if min((soft & (w > 0)).sum(), (soft & (w < 0)).sum()) < CV_MIN_PER_KIND:
            return AUTO_TAU, False, {}
        trial = self.clone(learn_tau=False, n_iter=CV_SWEEPS, burn_in=None, thin=1, n_chains=1, progress=False,
                           callback=None)
        candidates = [(t, False) for t in CV_TAUS] + ([(t, True) for t in CV_TAUS] if drop else [])
        cleaned = []  # (train, train without its broken constraints), one per fold

        def fit_labels(cand, train, seed):
            tau, without = cand
            if without:
                if not cleaned or cleaned[-1][0] is not train:
                    cleaned.append((train, without_suspects(train, random_state=seed, force=True)[0]))
                train = cleaned[-1][1]
            return trial.set_params(tau=tau, random_state=seed).fit(train).labels_

        scores, kept = cross_validate_constraints(fit_labels, problem, candidates, n_folds=CV_FOLDS, random_state=rng,
                                                  return_kept=True)
        # the fallback stands unless the held-out constraints reject it: the best
        # candidate only when it beats the fallback by more than a paired standard error
        n_keep = len(CV_TAUS)
        top, base = int(np.argmax(scores[:n_keep])), candidates.index((AUTO_TAU, False))
        pick = top if scores[top] - scores[base] > paired_standard_error(kept[top], kept[base], w) else base
        if drop:
            # setting the user's answers aside takes more: the best without them must
            # beat the best with them significantly (one-sided, 5 %)
            best = n_keep + int(np.argmax(scores[n_keep:]))
            if scores[best] - scores[top] > DROP_Z * paired_standard_error(kept[best], kept[top], w):
                pick = best
        no_signal = not above_chance(scores[top], w)
        if no_signal:  # no candidate keeps them better than coin flips
            pick = base
        info = {"tau_cv": {f"{t:g}": float(v) for (t, d), v in zip(candidates, scores) if not d},
                "no_signal": no_signal}
        if drop:
            info["tau_cv_without_broken"] = {f"{t:g}": float(v) for (t, d), v in zip(candidates, scores) if d}
        return candidates[pick][0], candidates[pick][1], info

    def _resolve_log_alpha(self, problem, K, floor, tau, cw):
        """``(log α, info)``: ``log concentration``; for ``"auto"``, with a cannot-link in the
        side information ``−CLUSTER_COST · cw`` (a cluster costs as much as that many
        unit constraints, after ``constraint_weight``), without ``τ`` times the
        information a node has about its nearest neighbours
        (:func:`~graphclust.potentials.dcp._neighbour_information`, the 10 % quantile)."""
        if not isinstance(self.concentration, str):
            return math.log(float(self.concentration)), {}
        if (problem.constraint_weights < 0).any():
            return -CLUSTER_COST * cw, {}
        info = _neighbour_information(K, floor)
        return info * tau, {"split_information": info}

    # ------------------------------------------------------------------ fit
    def _fit(self, problem):
        rng = check_random_state(self.random_state)
        n = problem.n_nodes
        if n < 2:
            raise InvalidParameterError(
                f"DCP needs at least 2 nodes to cluster, got {n} (n_samples={n}); a single node is its own cluster"
            )
        problem, self.dropped_constraints_ = set_aside_suspects(problem, self.drop_suspects, rng)
        # without conflicts, dropping what a noise-robust clustering breaks is one more
        # candidate for the held-out constraints to judge (issue #26)
        may_drop = self.drop_suspects and not self.dropped_constraints_ and problem.X is not None
        tau0, drop, chosen = self._resolve_tau(problem, rng, drop=may_drop)
        if may_drop and (drop or chosen.get("no_signal")):
            # held-out constraints kept better without the broken ones, or no τ keeps
            # them better than coin flips: the answers disagree with the data
            kept, dropped = set_aside_suspects(problem, True, rng, force=True)
            if dropped:  # τ chosen again on what is left
                problem, self.dropped_constraints_ = kept, dropped
                tau0, _, again = self._resolve_tau(problem, rng)
                again.update(tau_cv_before_drop=chosen["tau_cv"], dropped_by="tau_cv" if drop else "no_signal")
                if "tau_cv_without_broken" in chosen:
                    again["tau_cv_without_broken"] = chosen["tau_cv_without_broken"]
                chosen = again
        # the temperature tempers the whole energy, constraints included (issue #26)
        cw = tau0 if isinstance(self.constraint_weight, str) else float(self.constraint_weight)
        if cw != 1.0 and problem.n_constraints:
            w = problem.constraint_weights
            problem = problem.with_constraints(problem.constraints, np.where(np.isfinite(w), cw * w, w))
        spec = _KernelSpec(problem, self.kernel, self.graph_scale, self.standardize, self.jitter, "DCP")
        learn_ell = bool(self.learn_lengthscale) and spec.learnable
        ell0 = None
        if spec.learnable:
            d = spec.Y.shape[1]
            ell0 = _check_lengthscale(self.lengthscale, "lengthscale of DCP")
            ell0 = np.array([_default_lengthscale(spec.Y)]) if ell0 is None else ell0
            if ell0.size not in (1, d):
                raise InvalidParameterError(
                    f"lengthscale of DCP has {ell0.size} entries but the data have {d} features; give one value "
                    "or one per feature"
                )
            if self.ard and ell0.size == 1:
                ell0 = np.full(d, float(ell0[0]))

        # hard must-links merge nodes into blocks (items); the item-level constraints
        # of the contracted problem are the side information (hard cannot-links veto)
        merged = SamplerItems(problem)
        n_items, iptr, inodes = merged.n_items, merged.ptr, merged.members
        adj = merged.side
        item_pairs, item_w = merged.reduced.constraints, merged.reduced.constraint_weights
        hard_cl = np.isneginf(item_w)  # one row per cannot-linked item pair
        if n_items == 1 or int(hard_cl.sum()) == n_items * (n_items - 1) // 2:
            raise InvalidParameterError(
                f"every node is labelled: the hard constraints fix the partition ({n_items} group(s) of nodes, "
                "all cannot-linked pairwise or one group), so the DCP has nothing to sample; leave some nodes "
                "unlabelled (without hard constraints)"
            )
        is_anchor = np.diff(iptr) > 1
        is_anchor[item_pairs[hard_cl].ravel()] = True
        anchors, others = np.flatnonzero(is_anchor), np.flatnonzero(~is_anchor)
        # the soft constraints' part of the log joint: Σ w over the pairs in one cluster
        # (those inside a block always are)
        soft = np.isfinite(item_w)
        soft_a, soft_b, soft_w = item_pairs[soft, 0], item_pairs[soft, 1], item_w[soft]
        w_node = problem.constraint_weights
        soft_inside = float(w_node[merged.inside & np.isfinite(w_node)].sum())
        node_iptr, node_inodes = _singleton_items(n)
        no_adj = _no_adjacency(n)

        n_iter = int(self.n_iter)
        burn_in = n_iter // 2 if self.burn_in is None else int(self.burn_in)
        thin = int(self.thin)
        kept_idx = np.arange(burn_in, n_iter, thin)
        C = int(self.n_chains)
        n_ell = 0 if ell0 is None else ell0.size
        traces = {key: np.zeros((C, n_iter)) for key in ("n_clusters", "tau", "log_score", "log_joint")}
        traces["lengthscale"] = np.zeros((C, n_iter, n_ell))
        samples = np.empty((C * len(kept_idx), n_items), dtype=np.int64)
        kept_tau = np.empty(C * len(kept_idx))
        kept_ell = np.empty((C * len(kept_idx), n_ell))
        mu_tau, sd_tau = (float(v) for v in self.tau_prior)
        sd_ell = float(self.lengthscale_prior_sd)
        moves = []
        if self.learn_tau:
            moves.append("tau")
        if learn_ell:
            moves.append("lengthscale")
        accepts = {m: [0, 0] for m in moves}
        monitor = SweepMonitor(self, C * n_iter, "DCP Gibbs")
        sweep_seconds = exchange_seconds = split_merge_seconds = 0.0
        n_sm = int(self.split_merge)
        sm = _SplitMerge(n, iptr, inodes, adj)
        floor = spec.floor
        row = 0
        for c, crng in enumerate(rng.spawn(C)):
            tau = tau0
            ell = None if ell0 is None else ell0.copy()
            K = spec.matrix(ell)
            if c == 0:
                log_alpha, alpha_info = self._resolve_log_alpha(problem, K, floor, tau0, cw)
            store = _Store(K, iptr, inodes, floor)
            steps = {"tau": 0.5, "lengthscale": 0.3 / math.sqrt(max(n_ell, 1))}
            # anchors first (labelled groups: blocks and cannot-linked items), then the rest
            start = np.concatenate([crng.permutation(anchors), crng.permutation(others)])
            store.sweep(start, crng.random(n_items), adj, tau, log_alpha)
            n_exchange = 0
            for t in range(n_iter):
                t0 = time.perf_counter()
                store.sweep(crng.permutation(n_items), crng.random(n_items), adj, tau, log_alpha)
                if (t + 1) % int(self.refresh_every) == 0:
                    store.rebuild()
                sweep_seconds += time.perf_counter() - t0
                t0 = time.perf_counter()
                for _ in range(n_sm):
                    sm.move(store, tau, crng, log_alpha)
                split_merge_seconds += time.perf_counter() - t0
                if moves and (t + 1) % int(self.exchange_every) == 0:
                    t0 = time.perf_counter()
                    move = moves[n_exchange % len(moves)]
                    n_exchange += 1
                    zn = store.node_labels()
                    lam_S = store.logdet()
                    if move == "tau":
                        tau_new, ell_new, K_new = tau * math.exp(steps["tau"] * crng.normal()), ell, K
                        log_prior = (_log_normal(math.log(tau_new), mu_tau, sd_tau)
                                     - _log_normal(math.log(tau), mu_tau, sd_tau))
                    else:
                        tau_new = tau
                        ell_new = ell * np.exp(steps["lengthscale"] * crng.normal(size=n_ell))
                        K_new = spec.matrix(ell_new)
                        log_prior = float(_log_normal(np.log(ell_new), np.log(ell0), sd_ell).sum()
                                          - _log_normal(np.log(ell), np.log(ell0), sd_ell).sum())
                    aux = _Store(K_new, node_iptr, node_inodes, floor)
                    aux.set_labels(zn)
                    for _ in range(int(self.n_aux_sweeps)):
                        aux.sweep(crng.permutation(n), crng.random(n), no_adj, tau_new, log_alpha)
                    lam_Sp_new = aux.logdet()
                    lam_S_new = lam_S if K_new is K else _partition_logdet(K_new, zn, floor)
                    lam_Sp_old = _partition_logdet(K, aux.zn.copy(), floor)
                    log_a = (-tau_new * lam_S_new + tau * lam_S - tau * lam_Sp_old + tau_new * lam_Sp_new
                             + log_prior)
                    ok = math.log(crng.random()) < log_a
                    accepts[move][0] += int(ok)
                    accepts[move][1] += 1
                    if ok:
                        if K_new is not K:
                            K = K_new
                            store.rebuild(K)
                        tau, ell = tau_new, ell_new
                    if t < burn_in:  # adapt the step towards the target acceptance rate
                        steps[move] *= math.exp((float(ok) - _TARGET_ACCEPT) / math.sqrt(n_exchange))
                    exchange_seconds += time.perf_counter() - t0
                lam = store.logdet()
                traces["n_clusters"][c, t] = store.n_clusters
                traces["tau"][c, t] = tau
                traces["log_score"][c, t] = -tau * lam
                zi = store.zi
                traces["log_joint"][c, t] = (-tau * lam + log_alpha * store.n_clusters + soft_inside
                                             + float(soft_w[zi[soft_a] == zi[soft_b]].sum()))
                if n_ell:
                    traces["lengthscale"][c, t] = ell
                if t >= burn_in and (t - burn_in) % thin == 0:
                    samples[row] = store.zi
                    kept_tau[row] = tau
                    if n_ell:
                        kept_ell[row] = ell
                    row += 1
                if monitor(lambda: merged.lift(store.zi), traces["log_joint"][c, t]):
                    break
            if monitor.stopped:
                break
        monitor.close()

        # ---------------------------------------------------------------- summaries
        if monitor.stopped:  # the callback ended the run: what was kept (or the current state)
            kept_tau = monitor.kept(kept_tau, row, tau)
            kept_ell = monitor.kept(kept_ell, row, ell if n_ell else np.empty(0))
            samples = monitor.kept(samples, row, store.zi)
            self.tau_ = float(kept_tau.mean())
            self.lengthscale_ = None if not n_ell else kept_ell.mean(0)
        else:
            self.tau_ = float(traces["tau"][:, kept_idx].mean())
            self.lengthscale_ = None if not n_ell else traces["lengthscale"][:, kept_idx].reshape(-1, n_ell).mean(0)
        labels, loss, n_distinct = self._summarise(problem, samples, merged.lift)
        self.kernel_ = spec.kind
        self.log_alpha_ = log_alpha
        self._kept = (canonical_rows(samples), kept_tau, kept_ell)
        self._spec = spec
        info = {**traces, "n_samples": int(len(samples)), "n_distinct_partitions": n_distinct,
                "n_items": int(n_items), "sweep_seconds": sweep_seconds, "exchange_seconds": exchange_seconds,
                "split_merge_seconds": split_merge_seconds, "tau_start": tau0, "constraint_weight": cw, **chosen,
                "log_alpha": log_alpha, **alpha_info,
                "accept_split": float(sm.accepted[0] / sm.proposed[0]) if sm.proposed[0] else float("nan"),
                "accept_merge": float(sm.accepted[1] / sm.proposed[1]) if sm.proposed[1] else float("nan"),
                "n_sweeps": int(C * n_iter), "kernel": spec.kind,
                **{f"accept_{m}": (a / b if b else float("nan")) for m, (a, b) in accepts.items()}}
        history = traces["log_joint"][0][:min(monitor.sweeps, n_iter)].tolist()
        return labels, ClusteringResult(objective=loss, history=history, info=info)

    # ------------------------------------------------------------------ results
    def predict_samples(self, X, *, n_sweeps=3, max_samples=50, random_state=None):
        """Partitions of the training nodes plus new points, one per posterior sample.

        For each kept sample (at most ``max_samples``, evenly spaced) the training
        partition and ``(ℓ, τ)`` are held fixed; the new points are seated one at a
        time in random order by the DCP conditional (joining a training cluster or
        opening a cluster of their own), then ``n_sweeps`` Gibbs sweeps over the new
        points only. This draws from the conditional of the ``(n + m)``-point DCP
        (the DCP is not projective, so this is the natural inductive rule).

        Parameters
        ----------
        X : array-like of shape (m, n_features)
            New points (original, unstandardised features).
        n_sweeps : int, default=3
        max_samples : int or None, default=50
        random_state : None, int or numpy.random.Generator, default=None

        Returns
        -------
        ndarray of shape (n_used_samples, n_nodes + m)
            Labels (first appearance order); the last ``m`` columns are the new points.
        """
        check_is_fitted(self)
        spec = self._spec
        if spec.kind != "se":
            raise InvalidParameterError(
                f"predict needs the feature kernel (kernel='se'); this DCP used kernel={spec.kind!r}, which has no "
                "value at new points. Fit on all nodes instead (transductive): leave the new nodes unlabelled"
            )
        X = check_feature_matrix(X)
        if X.shape[1] != spec.Y.shape[1]:
            raise InvalidFeaturesError(
                f"X has {X.shape[1]} features, but DCP is expecting {spec.Y.shape[1]} features as input (it was "
                "fitted on those)")
        n_sweeps = check_int(n_sweeps, "n_sweeps", low=0)
        rng = check_random_state(random_state)
        canon, kept_tau, kept_ell = self._kept
        S = len(canon)
        use = np.arange(S) if max_samples is None or S <= max_samples else \
            np.unique(np.linspace(0, S - 1, check_int(max_samples, "max_samples", low=1)).astype(np.int64))
        _, _, comp = self._posterior
        n, m = len(comp), len(X)
        Yall = np.concatenate([spec.Y, spec.transform(X)])
        iptr, inodes = _singleton_items(n + m)
        no_adj = _no_adjacency(n + m)
        test = np.arange(n, n + m, dtype=np.int64)
        out = np.empty((len(use), n + m), dtype=np.int64)
        for r, s in enumerate(use):
            K = _se_kernel(Yall, kept_ell[s], spec.jitter)
            st = _Store(K, iptr, inodes, spec.floor)
            st.set_labels(np.concatenate([canon[s][comp], np.full(m, -1)]))
            for _ in range(n_sweeps + 1):
                st.sweep(rng.permutation(test), rng.random(m), no_adj, kept_tau[s], self.log_alpha_)
            out[r] = st.node_labels()
        return out

    def predict(self, X, *, n_sweeps=3, max_samples=50, random_state=None):
        """Cluster labels of new points: the Binder point estimate of the joint
        (training + new) samples of :meth:`predict_samples`, restricted to the new
        points, numbered like ``labels_`` (each cluster takes the most common label of
        its training members; clusters of new points only get labels from
        ``labels_.max() + 1``).

        Returns
        -------
        ndarray of shape (m,)
        """
        Z = self.predict_samples(X, n_sweeps=n_sweeps, max_samples=max_samples, random_state=random_state)
        best = binder_point_estimate(Z)
        n = len(self.labels_)
        train, new = best[:n], best[n:]
        # canonical labels: clusters of new points only appear in increasing order
        clusters, inverse = np.unique(new, return_inverse=True)
        mapped = np.empty(len(clusters), dtype=np.int64)
        nxt = int(self.labels_.max()) + 1
        for a, lab in enumerate(clusters.tolist()):  # one step per cluster
            members = self.labels_[train == lab]
            if len(members):
                mapped[a] = int(np.bincount(members).argmax())
            else:
                mapped[a] = nxt
                nxt += 1
        return mapped[inverse.reshape(-1)]


def _log_normal(x, mu, sd):
    return -0.5 * ((x - mu) / sd) ** 2 - np.log(sd) - 0.5 * math.log(2.0 * math.pi)


@register_method("dcp", "DCP: determinantal clustering process, Gibbs sampling with split-merge moves at a "
                        "temperature chosen on held-out constraints (infers the number of clusters; -k is ignored)")
def _dcp_factory(n_clusters=2, random_state=None):
    return DCP(random_state=random_state)
