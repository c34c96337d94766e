"""Choosing by held-out constraints: cross-validation on the side information itself.

With noisy side information no one knows how far to trust it. The constraints can
tell: hold some out, cluster with the rest, and count how many of the held-out ones the
answer keeps. If each constraint is wrong with probability ``ε < 1/2`` independently of
the clustering, the expected fraction kept is ``ε + (1 − 2ε)·a``, where ``a`` is the
fraction of the same pairs the answer gets right. The count is therefore an unbiased,
increasing function of the answer's pairwise accuracy, whatever ``ε`` is. This is how
:class:`~graphclust.HMRF` chooses its constraint weight and :func:`graphclust.cluster`
its method when the constraints are inconsistent.

Must-links are rarer than cannot-links once there are more than two clusters, so the
score is *balanced*: the mean of the fraction of held-out must-links kept and the
fraction of held-out cannot-links kept.

Must-links alone cannot score an answer: one cluster keeps them all. When there are
too few cannot-links to hold out, random pairs of nodes stand in for them (with two or
more clusters of similar sizes most random pairs belong apart), so the score is the
mean of the held-out must-links kept and the fraction of all node pairs the answer
splits. An answer unrelated to the constraints still scores 1/2 on average.
"""

import numpy as np

__all__ = ["heldout_agreement", "split_fraction", "constraint_folds", "cross_validate_constraints", "above_chance",
           "null_standard_error", "paired_standard_error", "ConstraintKFold", "heldout_label_score", "heldout_constraint_score", "pair_kappa",
           "simplest_within_one_se"]


def heldout_agreement(labels, pairs, weights):
    """Balanced fraction of the constraints ``(pairs, weights)`` that ``labels`` keep.

    Parameters
    ----------
    labels : array-like of int, shape (n_nodes,)
    pairs : array-like of int, shape (n_constraints, 2)
    weights : array-like of float, shape (n_constraints,)
        Signed: ``> 0`` must-link, ``< 0`` cannot-link.

    Returns
    -------
    float
        The mean of the kept fractions of must-links and of cannot-links (of the one
        kind present if only one is); ``nan`` without constraints.

    Examples
    --------
    >>> from graphclust.selection import heldout_agreement
    >>> heldout_agreement([0, 0, 1], [[0, 1], [1, 2], [0, 2]], [1.0, 1.0, -1.0])
    0.75
    """
    labels = np.asarray(labels)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    same = labels[pairs[:, 0]] == labels[pairs[:, 1]]
    must = weights > 0
    parts = [same[must].mean()] if must.any() else []
    if (~must).any():
        parts.append((~same[~must]).mean())
    return float(np.mean(parts)) if parts else float("nan")


def constraint_folds(weights, n_folds, rng):
    """Fold index (``0..n_folds-1``) of each soft constraint, ``-1`` for hard ones.

    Must-links and cannot-links are dealt out separately, so each fold holds its share
    of both kinds; hard constraints (``±inf``) are never held out.
    """
    weights = np.asarray(weights, dtype=np.float64)
    fold = np.full(len(weights), -1, dtype=np.int64)
    for kind in (np.isfinite(weights) & (weights > 0), np.isfinite(weights) & (weights < 0)):
        rows = np.flatnonzero(kind)
        fold[rng.permutation(rows)] = np.arange(len(rows)) % n_folds
    return fold


def split_fraction(labels):
    """Fraction of the unordered node pairs that ``labels`` put into different clusters.

    >>> round(split_fraction([0, 0, 1, 1]), 4)  # 4 of the 6 pairs
    0.6667
    """
    labels = np.asarray(labels)
    n = len(labels)
    if n < 2:
        return 0.0
    sizes = np.unique(labels, return_counts=True)[1].astype(np.float64)
    return float(1.0 - (sizes * (sizes - 1)).sum() / (n * (n - 1.0)))


def cross_validate_constraints(fit_labels, problem, candidates, *, n_folds=5, random_state=None, return_kept=False,
                               min_per_kind=1):
    """Mean held-out agreement of each candidate over constraint folds.

    Parameters
    ----------
    fit_labels : callable
        ``fit_labels(candidate, train_problem, seed) -> labels`` (one per node of
        ``problem``): clusters ``train_problem`` (``problem`` with some constraints
        held out) the way ``candidate`` says.
    problem : Problem
    candidates : sequence
        Anything ``fit_labels`` understands (constraint weights, estimators, ...).
    n_folds : int, default=5
        Fewer when there are fewer soft constraints of a kind than folds.
    random_state : None, int or numpy.random.Generator
    return_kept : bool, default=False
        Also return which held-out constraints each candidate kept.
    min_per_kind : int, default=1
        A kind with fewer soft constraints than this is never held out (it stays in
        every training set). Without held-out cannot-links, the fraction of node pairs
        each fit splits (:func:`split_fraction`, averaged over the folds) takes their
        place in the score (see the module docstring).

    Returns
    -------
    scores : ndarray of shape (len(candidates),)
        Balanced held-out agreement (:func:`heldout_agreement`), pooled over the folds.
    kept : ndarray of bool, shape (len(candidates), n_constraints)
        Only with ``return_kept``: whether the candidate's fit without a constraint
        kept it (hard constraints, never held out: False).

    Examples
    --------
    >>> import numpy as np
    >>> import graphclust as gc
    >>> from graphclust.selection import cross_validate_constraints
    >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    >>> S = gc.SideInfo.from_pairs(must=[(0, 1), (1, 2), (3, 4), (4, 5)], cannot=[(0, 3), (2, 5)])
    >>> problem = gc.Problem.from_array(X, S)
    >>> def fit(split_at, train, seed):
    ...     return (train.X[:, 0] > split_at).astype(int)
    >>> cross_validate_constraints(fit, problem, [2.5, 0.15], n_folds=2, random_state=0)
    array([1.   , 0.625])
    """
    from ._utils import check_random_state

    rng = check_random_state(random_state)
    pairs, weights = problem.constraints, problem.constraint_weights
    # a kind too rare to hold out is treated like hard constraints: always trained on
    heldable = np.isfinite(weights)
    for kind in (weights > 0, weights < 0):
        if (heldable & kind).sum() < min_per_kind:
            heldable &= ~kind
    masked = np.where(heldable, weights, np.copysign(np.inf, weights))
    n_folds = int(max(1, min(n_folds, (heldable & (weights > 0)).sum() or n_folds,
                             (heldable & (weights < 0)).sum() or n_folds)))
    fold = constraint_folds(masked, n_folds, rng)
    seed = int(rng.integers(2**31))
    kept = np.zeros((len(candidates), len(weights)), dtype=bool)
    split = np.zeros((len(candidates), n_folds))
    held_in = np.zeros(n_folds)
    for f in range(n_folds):
        test = fold == f
        if not test.any():
            continue
        held_in[f] = test.sum()
        train = problem.with_constraints(pairs[~test], weights[~test])
        for c, cand in enumerate(candidates):
            labels = np.asarray(fit_labels(cand, train, seed))
            same = labels[pairs[test, 0]] == labels[pairs[test, 1]]
            kept[c, test] = same == (weights[test] > 0)
            split[c, f] = split_fraction(labels)
    held = fold >= 0
    kinds = [kept[:, k].mean(axis=1) for k in (held & (weights > 0), held & (weights < 0)) if k.any()]
    if (held & (weights > 0)).any() and not (held & (weights < 0)).any():
        kinds.append(split @ held_in / held_in.sum())  # random pairs in place of cannot-links
    scores = np.mean(kinds, axis=0) if kinds else np.full(len(candidates), np.nan)
    return (scores, kept) if return_kept else scores


def _scored_kinds(weights, min_per_kind):
    """The masks of the soft must-links and cannot-links the score holds out, and how
    many parts the score averages (two whenever must-links are held out: random pairs
    stand in for missing cannot-links)."""
    weights = np.asarray(weights, dtype=np.float64)
    kinds = [k for k in (np.isfinite(weights) & (weights > 0), np.isfinite(weights) & (weights < 0))
             if k.sum() >= max(1, min_per_kind)]
    n_parts = 2 if any((weights[k] > 0).all() for k in kinds) else len(kinds)
    return kinds, n_parts


def agreement_standard_error(kept, weights, *, min_per_kind=1):
    """Standard error of one candidate's pooled balanced agreement, from which held-out
    constraints it kept (:func:`cross_validate_constraints` with ``return_kept=True``
    and the same ``min_per_kind``; a kept-minus-kept difference gives the paired one)."""
    kept = np.asarray(kept, dtype=np.float64)
    kinds, n_parts = _scored_kinds(weights, min_per_kind)
    return float(np.sqrt(sum(kept[k].var() / k.sum() for k in kinds)) / n_parts) if kinds else float("inf")


def paired_standard_error(kept_a, kept_b, weights, *, min_per_kind=1):
    """Standard error of the difference of two candidates' balanced agreements, from
    which held-out constraints each kept (:func:`cross_validate_constraints` with
    ``return_kept=True`` and the same ``min_per_kind``): they are scored on the same
    constraints, so only the ones they disagree on count."""
    d = np.asarray(kept_a, dtype=np.float64) - np.asarray(kept_b, dtype=np.float64)
    return agreement_standard_error(d, weights, min_per_kind=min_per_kind)


def null_standard_error(weights, *, min_per_kind=1):
    """Standard error of the pooled balanced agreement of an answer unrelated to the
    soft constraints in ``weights`` (each held out once; kinds with fewer than
    ``min_per_kind`` are not held out)."""
    kinds, n_parts = _scored_kinds(weights, min_per_kind)
    return 0.5 * np.sqrt(sum(1.0 / k.sum() for k in kinds)) / n_parts if kinds else np.inf


def above_chance(score, weights, *, z=2.0, min_per_kind=1):
    """Whether a pooled held-out agreement ``score`` is above what coin flips give.

    An answer unrelated to the constraints keeps each held-out must-link with some
    probability ``t`` and each cannot-link with ``1 − t``: a balanced agreement of 1/2
    on average. ``score`` counts as above chance when it exceeds 1/2 by ``z`` standard
    errors of that null (:func:`null_standard_error`).

    Examples
    --------
    >>> from graphclust.selection import above_chance
    >>> above_chance(0.55, [1.0] * 50 + [-1.0] * 150), above_chance(0.7, [1.0] * 50 + [-1.0] * 150)
    (False, True)
    """
    return bool(score > 0.5 + z * null_standard_error(weights, min_per_kind=min_per_kind))


# ============================================================================ scikit-learn model selection
from sklearn.model_selection import BaseCrossValidator  # noqa: E402  (scikit-learn is a core dependency)


_NOT_ROWS = ("sideinfo is a {}, which scikit-learn's cross-validation does not slice with X: each fold would "
             "read row numbers of the whole data set; wrap it as graphclust.RowConstraints(S, len(X))")


class ConstraintKFold(BaseCrossValidator):
    """Folds over the side information, for ``GridSearchCV`` and ``cross_val_score``:
    each fold holds out a share of the constrained points as its test set and trains on
    the rest, so a grid search chooses ``n_clusters``, a constraint weight or ``lam``
    from the side information alone, no ground truth needed.

    * **Partial labels** as ``y`` (``-1`` unlabelled): each fold holds out a share of
      the labelled points of each label. Score with :func:`heldout_label_score`.
    * **Pairwise constraints** as ``sideinfo=`` (:class:`~graphclust.RowConstraints`,
      which reach the splitter and the scorer by scikit-learn's metadata routing,
      ``sklearn.set_config(enable_metadata_routing=True)``): the points in constraints
      are dealt out by must-link component, a component never split, so every
      must-link is held out in exactly one fold and no held-out pair is implied by the
      training pairs (a fold trains only on the constraints between its training
      points). A cannot-link is held out when both its points fall in one test fold.
      Score with :data:`heldout_constraint_score`.

    Unlabelled and unconstrained points are data, not answers: they always train.

    Parameters
    ----------
    n_splits : int, default=3
    shuffle : bool, default=True
        Shuffle the points (or must-link components) before dealing them out.
    random_state : None, int or numpy.random.Generator, default=None

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 0, 1, 1, -1, -1])
    >>> [(train.tolist(), test.tolist()) for train, test in ConstraintKFold(2, shuffle=False).split(None, y)]
    [([1, 3, 4, 5], [0, 2]), ([0, 2, 4, 5], [1, 3])]

    With pairs, a must-link component stays in one fold:

    >>> import graphclust as gc
    >>> C = gc.RowConstraints([(0, 1, 1.0), (1, 2, 1.0), (3, 4, 1.0), (2, 3, -1.0), (0, 5, -1.0)], n_rows=7)
    >>> [test.tolist() for _, test in ConstraintKFold(2, shuffle=False).split(np.zeros((7, 1)), sideinfo=C)]
    [[0, 1, 2], [3, 4, 5]]
    """

    # the pairs reach split() through metadata routing, as groups do for GroupKFold
    __metadata_request__split = {"sideinfo": True}

    def __init__(self, n_splits=3, *, shuffle=True, random_state=None):
        from ._utils import check_int

        self.n_splits = check_int(n_splits, "n_splits", low=2)
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None, *, sideinfo=None):
        return self.n_splits

    def split(self, X, y=None, groups=None, *, sideinfo=None):
        """Yield ``(train, test)`` row indices; see the class description."""
        from ._utils import check_random_state
        from .errors import InvalidParameterError

        rng = check_random_state(self.random_state)
        if y is not None and np.any(np.asarray(y) != -1):
            fold = self._label_folds(np.asarray(y), rng)
        elif sideinfo is not None:
            fold = self._pair_folds(sideinfo, X, rng)
        else:
            raise InvalidParameterError(
                "ConstraintKFold splits the side information: pass partial labels as y (-1 unlabelled), or "
                "pairwise constraints as sideinfo=RowConstraints(S, len(X)) with scikit-learn's metadata routing "
                "on (sklearn.set_config(enable_metadata_routing=True)) so that they reach the splitter")
        for k in range(self.n_splits):
            yield np.flatnonzero(fold != k), np.flatnonzero(fold == k)

    def _label_folds(self, y, rng):
        from .errors import InvalidParameterError

        labelled = np.flatnonzero(y != -1)
        if len(labelled) < self.n_splits:
            raise InvalidParameterError(
                f"ConstraintKFold needs at least n_splits={self.n_splits} labelled points (y != -1), got "
                f"{len(labelled)}")
        fold = np.full(len(y), -1, dtype=np.int64)
        start = 0
        for label in np.unique(y[labelled]):  # dealt round-robin per label: every fold gets its share
            members = labelled[y[labelled] == label]
            if self.shuffle:
                members = members[rng.permutation(len(members))]
            fold[members] = (start + np.arange(len(members))) % self.n_splits
            start += len(members)
        return fold

    def _pair_folds(self, sideinfo, X, rng):
        from .errors import InvalidParameterError
        from .sideinfo import RowConstraints, must_link_components

        if not isinstance(sideinfo, RowConstraints):
            raise InvalidParameterError(_NOT_ROWS.format(type(sideinfo).__name__))
        n = sideinfo.n_rows
        pairs, weights = sideinfo.pairs, sideinfo.weights
        constrained = np.zeros(n, dtype=bool)
        constrained[pairs.ravel()] = True
        _, comp = must_link_components(n, pairs[weights > 0])
        units = np.unique(comp[constrained])
        if len(units) < self.n_splits:
            raise InvalidParameterError(
                f"ConstraintKFold needs at least n_splits={self.n_splits} must-link components among the "
                f"constrained points, got {len(units)}; use fewer splits or more constraints")
        if self.shuffle:
            units = units[rng.permutation(len(units))]
        # largest components first, each to the fold with the fewest points so far
        size = np.bincount(comp[constrained], minlength=comp.max() + 1)
        units = units[np.argsort(-size[units], kind="stable")]
        unit_fold = np.empty(comp.max() + 1, dtype=np.int64)
        load = np.zeros(self.n_splits, dtype=np.int64)
        for u in units.tolist():  # one step per component, not per point
            k = int(np.argmin(load))
            unit_fold[u] = k
            load[k] += size[u]
        fold = np.where(constrained, unit_fold[comp], -1)
        held = fold[pairs[:, 0]] == fold[pairs[:, 1]]
        empty = sorted(set(range(self.n_splits)) - set(fold[pairs[held, 0]].tolist()))
        if empty:
            raise InvalidParameterError(
                f"ConstraintKFold: fold {empty[0]} holds out no constraint ({len(weights)} constraints, "
                f"n_splits={self.n_splits}); use fewer splits or more constraints")
        return fold


def pair_kappa(labels, pairs, weights):
    """Cohen's kappa between "same cluster" in ``labels`` and "must-link" over the
    constraint pairs: the agreement beyond what the two marginals give by chance.

    Over all node pairs of a ground truth this is the adjusted Rand index (the ARI is
    kappa on the pair table), so on a random sample of pairs it estimates the ARI. Unlike
    the balanced count of :func:`heldout_agreement` it does not reward merging classes
    (a merge raises the chance agreement too). ``0`` when either marginal is constant
    (kappa undefined), ``nan`` without pairs.

    >>> from graphclust.selection import pair_kappa
    >>> pair_kappa([0, 0, 1, 1], [[0, 1], [2, 3], [1, 2], [0, 3]], [1.0, 1.0, -1.0, -1.0])
    1.0
    """
    labels = np.asarray(labels)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    must = np.asarray(weights, dtype=np.float64).reshape(-1) > 0
    if len(must) == 0:
        return float("nan")
    same = labels[pairs[:, 0]] == labels[pairs[:, 1]]
    observed = np.mean(same == must)
    p_same, p_must = same.mean(), must.mean()
    chance = p_same * p_must + (1 - p_same) * (1 - p_must)
    return float((observed - chance) / (1 - chance)) if chance < 1 else 0.0


class _HeldoutConstraintScore:
    """Scorer: how well the fitted estimator's ``predict`` keeps the held-out
    constraints (``sideinfo=``, a :class:`~graphclust.RowConstraints` sliced to the
    test rows by scikit-learn), adjusted for chance: :func:`pair_kappa`, an estimate
    of the ARI from the held-out pairs. It reaches ``sideinfo`` by metadata routing;
    ``nan`` for a fold with no held-out constraint. Use it as ``scoring=`` with
    :class:`ConstraintKFold` and ``refit=simplest_within_one_se``.
    """

    def __call__(self, estimator, X, y=None, *, sideinfo=None):
        from .errors import InvalidParameterError
        from .sideinfo import RowConstraints

        if sideinfo is None:
            raise InvalidParameterError(
                "heldout_constraint_score scores the held-out pairwise constraints, which reach it as sideinfo= "
                "by scikit-learn's metadata routing: call sklearn.set_config(enable_metadata_routing=True) and "
                "pass sideinfo=RowConstraints(S, len(X)) to fit")
        if not isinstance(sideinfo, RowConstraints):
            raise InvalidParameterError(_NOT_ROWS.format(type(sideinfo).__name__))
        if len(sideinfo.weights) == 0:
            return float("nan")
        return pair_kappa(np.asarray(estimator.predict(X)), sideinfo.pairs, sideinfo.weights)

    def get_metadata_routing(self):
        from sklearn.utils.metadata_routing import MetadataRequest

        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="sideinfo", alias=True)
        return request

    def __repr__(self):
        return "heldout_constraint_score"


heldout_constraint_score = _HeldoutConstraintScore()
"""Scorer for ``GridSearchCV``/``cross_val_score`` with :class:`ConstraintKFold` on
pairwise constraints: :func:`pair_kappa` of the fitted estimator's ``predict`` on the
held-out pairs (routed ``sideinfo=``, a :class:`~graphclust.RowConstraints`), i.e.
the kept pairs adjusted for chance, an estimate of the ARI."""


def heldout_label_score(estimator, X, y):
    """Scorer: the adjusted Rand index between a fitted estimator's ``predict(X)`` and
    the labelled points of ``y`` (``-1`` ignored), i.e. how well the answer keeps the
    pairs the held-out labels imply, adjusted for chance. The adjustment matters for
    choosing ``k``: a balanced count of kept same-label and different-label pairs (as
    :func:`heldout_agreement` scores held-out constraints) rises when two classes are
    merged, because same-label pairs are few once there are many classes (digits: 0.84
    at k = 8 against 0.80 at the true k = 10). ``nan`` with fewer than two labelled points.

    Use it as ``scoring=`` of ``GridSearchCV`` or ``cross_val_score`` with
    :class:`ConstraintKFold` (see ``docs/guide.md``).
    """
    from sklearn.metrics import adjusted_rand_score

    y = np.asarray(y)
    keep = y != -1
    if keep.sum() < 2:
        return float("nan")
    rows = np.flatnonzero(keep)
    X_kept = X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]
    return float(adjusted_rand_score(y[keep], np.asarray(estimator.predict(X_kept))))


def simplest_within_one_se(cv_results):
    """``refit=`` rule for ``GridSearchCV``: the index of the first candidate (order the
    grid from the simplest, e.g. fewest clusters) whose mean held-out score is within
    one standard error of the best one's (the fold scores' standard deviation over
    ``sqrt(n_splits)``). Held-out pairs are few, so the best mean alone often picks a
    candidate that is only luckier; this is the rule :func:`graphclust.cluster` uses
    for ``k``.
    """
    mean = np.asarray(cv_results["mean_test_score"], dtype=np.float64)
    std = np.asarray(cv_results["std_test_score"], dtype=np.float64)
    n_splits = sum(1 for key in cv_results if key.startswith("split") and key.endswith("_test_score"))
    best = int(np.nanargmax(mean))
    bar = mean[best] - std[best] / np.sqrt(max(n_splits, 1))
    return int(np.flatnonzero(mean >= bar)[0])
