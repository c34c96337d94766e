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
"""

import numpy as np

from ..errors import InvalidFeaturesError, InvalidParameterError

__all__ = ["NodePotentials"]


class NodePotentials:
    """Base class of node-potential providers.

    Subclasses implement :meth:`initialize`, :meth:`unary` and :meth:`update`; the
    incremental methods are optional (they raise ``NotImplementedError`` here), as are
    the pair distortions used for distance-scaled constraint penalties.
    """

    #: True when the provider needs node features (``problem.X``)
    requires_features = True

    @property
    def n_clusters(self):
        """Current number of clusters (columns of :meth:`unary`)."""
        raise NotImplementedError

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


def check_features(problem, who):
    """The feature sums and counts of ``problem``, or a clear error without features."""
    if problem.X is None:
        raise InvalidFeaturesError(
            f"{who} needs node features: give nodes a 'features' attribute, or fit on an array X"
        )
    return problem.X, problem.counts


def check_n_clusters(n_clusters, who):
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)) or n_clusters < 1:
        raise InvalidParameterError(f"n_clusters of {who} must be an int >= 1, got {n_clusters!r}")
    return int(n_clusters)
