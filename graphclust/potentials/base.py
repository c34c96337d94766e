"""The node-potential provider interface.

A provider turns node features (or a kernel) plus the current labelling into unary
costs for the shared :class:`~graphclust.energy.Energy`. Engines never see features:
the HMRF driver asks the provider for costs, builds the energy, runs an engine, and
hands the labels back to the provider's M-step.

Two access patterns:

* **batch** — :meth:`NodePotentials.unary` returns an ``(n_nodes, n_clusters)`` array
  under the current parameters, and :meth:`NodePotentials.update` re-estimates the
  parameters from a labelling (the M-step). This is what ICM, BP and the LP use inside
  EM.
* **incremental** — :meth:`NodePotentials.start` builds sufficient statistics from a
  labelling; :meth:`remove`, :meth:`add` and :meth:`scores` then move one node at a
  time and score it against every cluster plus a *new cluster* option (the last
  column), for sequential samplers and ICM with cluster births (RDP-means, TVClust,
  DCP). The number of clusters may change along the way.

Optional capabilities are declared, so that a driver refuses a provider that lacks
what it needs when ``fit`` starts, with a message naming the missing piece, instead of
failing half-way: :attr:`NodePotentials.has_pair_distortion` (distance-scaled
constraint penalties in :class:`~graphclust.HMRF`) and
:attr:`NodePotentials.has_incremental` (samplers and ICM with cluster births). A
subclass that implements the methods gets the flag set for it; it may also set the flag
itself.
"""

import numpy as np

from .._params import Parametrized
from ..errors import InvalidFeaturesError, InvalidParameterError

__all__ = ["NodePotentials", "CountParameter"]


class NodePotentials(Parametrized):
    """Base class of node-potential providers.

    Subclasses implement :meth:`initialize`, :meth:`unary` and :meth:`update`; the
    incremental methods are optional, as are the pair distortions used for
    distance-scaled constraint penalties (see the capability flags). Parameters,
    ``clone`` and ``repr`` come from the ``__init__`` signature as for estimators.

    Every provider has an ``n_clusters`` attribute: the current number of clusters
    (columns of :meth:`unary`). A provider with a fixed number stores its parameter
    under that name; one whose clusters are born and die along the way mixes in
    :class:`CountParameter` (the parameter is then ``n_clusters_param``) and makes
    ``n_clusters`` a property.
    """

    #: True when the provider needs node features (``problem.X``)
    requires_features = True
    #: True when :meth:`pair_distortion` and :meth:`max_distortion` are implemented
    has_pair_distortion = False
    #: True when :meth:`start`, :meth:`remove`, :meth:`add` and :meth:`scores` are implemented
    has_incremental = False
    #: True when :meth:`update` learns from the constraints (``must``, ``cannot``), as a
    #: learnt metric does: then the start matters more, and :class:`~graphclust.HMRF`
    #: tries both of its default starts also in the fits that choose the constraint weight
    learns_from_constraints = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a capability is declared by implementing its methods (or by setting the flag)
        if "has_pair_distortion" not in cls.__dict__:
            cls.has_pair_distortion = _implements(cls, "pair_distortion", "max_distortion")
        if "has_incremental" not in cls.__dict__:
            cls.has_incremental = _implements(cls, "start", "remove", "add", "scores")

    # ------------------------------------------------------------------ batch
    def initialize(self, problem, seeds, rng):
        """Set the parameters from seed feature vectors ``(n_clusters, n_features)``
        (cluster representatives chosen by the driver) and reset anything learnt."""
        raise NotImplementedError

    def unary(self, problem):
        """Costs ``(n_nodes, n_clusters)`` of every label for every node."""
        raise NotImplementedError

    def update(self, problem, labels, **penalty_terms):
        """M-step: re-estimate the parameters from ``labels``.

        ``penalty_terms`` carries what a metric-learning step needs from the
        constraints (see :class:`~graphclust.potentials.Centroids`)."""
        raise NotImplementedError

    def label_free_energy(self, problem):
        """Part of the objective that does not depend on the labels (e.g. the
        ``-N log det A`` normaliser of a learnt metric); 0 by default."""
        return 0.0

    def share_caches(self, other):
        """Adopt ``other``'s caches of quantities that depend on the data alone (not on
        fitted parameters), so that a copy fitted to the same features does not
        recompute them; the caches are keyed by the arrays they were computed from, so
        a copy used on other data simply misses. None by default."""

    def points(self, problem):
        """``(Y, counts)``: the vectors the driver seeds clusters from (one row per
        node, means of merged nodes) and how many original points each stands for.
        The feature means by default."""
        X, counts = check_features(problem, type(self).__name__)
        return X / counts[:, None], counts

    def distortion_matrix(self, Y, C):
        """Distortion ``(n_points, n_centres)`` of rows ``Y`` to centres ``C`` in the
        space of :meth:`points`, for seeding; squared Euclidean by default."""
        Y, C = np.asarray(Y, dtype=np.float64), np.asarray(C, dtype=np.float64)
        return np.stack([((Y - c) ** 2).sum(1) for c in C], axis=1)

    # ------------------------------------------------------------------ pair terms
    def pair_distortion(self, problem, pairs):
        """Distortion ``φ(x_i, x_j)`` of each node pair ``(M, 2)`` under the current
        parameters (symmetric, >= 0)."""
        raise NotImplementedError

    def max_distortion(self, problem):
        """``(φ_max, (i, j))``: the largest pair distortion in the data set and a pair
        that realises it (exact or a documented lower bound on large data)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ incremental
    def start(self, problem, labels):
        """Build sufficient statistics for ``labels`` (incremental path)."""
        raise NotImplementedError

    def remove(self, i):
        """Take node ``i`` out of its cluster."""
        raise NotImplementedError

    def add(self, i, k):
        """Put node ``i`` into cluster ``k`` (``k == n_clusters`` opens a new one)."""
        raise NotImplementedError

    def scores(self, i):
        """Costs ``(n_clusters + 1,)`` of node ``i`` in each cluster, and in a new
        cluster last (``inf`` when the provider has a fixed number of clusters)."""
        raise NotImplementedError


class CountParameter:
    """Mixin for a provider whose clusters open (and empty) along the way: its
    ``n_clusters`` parameter (the batch interface's count) is stored as
    ``n_clusters_param``, ``n_clusters`` being the current count, and
    ``get_params``/``set_params`` map the name back (``clone`` and ``repr`` follow)."""

    def get_params(self, deep=True):
        return {**super().get_params(deep), "n_clusters": self.n_clusters_param}

    def set_params(self, **params):
        if "n_clusters" in params:
            self.n_clusters_param = params.pop("n_clusters")
        return super().set_params(**params)


def _implements(cls, *names):
    return all(getattr(cls, name) is not getattr(NodePotentials, name) for name in names)


def check_features(problem, who):
    """The feature sums and counts of ``problem``, or a clear error without features."""
    if problem.X is None:
        raise InvalidFeaturesError(
            f"{who} needs node features: give nodes a 'features' attribute, or fit on an array X"
        )
    return problem.X, problem.counts


def check_seeds(seeds, n_clusters, n_features):
    """``seeds`` as a float array ``(n_clusters, n_features)``, or a clear error."""
    seeds = np.asarray(seeds, dtype=np.float64)
    if seeds.shape != (n_clusters, n_features):
        raise InvalidParameterError(f"expected {n_clusters} seeds of {n_features} features, got shape {seeds.shape}")
    return seeds
