"""Normalised spectral clustering (Ng, Jordan & Weiss 2002) with must-link merging.

The baseline every constrained method should beat: hard must-links are honoured by
contracting their components first (:func:`graphclust.contract`); cannot-links are
ignored, and the result reports how many it violates.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

from .._kmeans import kmeans
from .._params import Integer, RandomState
from .._utils import check_random_state, extreme_scale
from ..base import ClusteringEstimator, Transductive, ClusteringResult, register_method
from ..errors import InvalidParameterError, TooFewClustersError
from ..graphs import with_knn_graph
from ..merge import contract

__all__ = ["SpectralClustering", "spectral_embedding"]


def spectral_embedding(W, n_components, *, random_state=None):
    """Rows of the ``n_components`` bottom eigenvectors of the normalised Laplacian
    ``I - D^{-1/2} W D^{-1/2}``, each row scaled to unit length.

    Parameters
    ----------
    W : scipy.sparse matrix of shape (n, n)
        Symmetric non-negative similarities.
    n_components : int

    Returns
    -------
    ndarray of shape (n, n_components)
    """
    n = W.shape[0]
    d = np.asarray(W.sum(axis=1)).ravel()
    d_inv = np.where(d > 0, 1.0 / np.sqrt(np.where(d > 0, d, 1.0)), 0.0)
    A = sp.diags_array(d_inv) @ W @ sp.diags_array(d_inv)
    if n <= max(200, 5 * n_components):
        vals, vecs = np.linalg.eigh(A.toarray() if sp.issparse(A) else A)
        vecs = vecs[:, -n_components:]
    else:
        rng = check_random_state(random_state)
        # largest eigenvalues of the normalised adjacency = smallest of the Laplacian;
        # the shift keeps the operator positive so eigsh converges on "LA"
        vals, vecs = eigsh(A + sp.eye_array(n), k=n_components, which="LA", v0=rng.uniform(-1, 1, n), tol=1e-8)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms > 0, norms, 1.0)


class SpectralClustering(Transductive, ClusteringEstimator):
    """Normalised spectral clustering of the data graph, must-links merged first.

    Parameters
    ----------
    n_clusters : int, default=2
    n_init : int, default=10
        k-means restarts on the embedding.
    random_state : None, int or numpy.random.Generator, default=None
    n_neighbors : int, default=10
        Data given as features without a graph (a feature array, or a
        :class:`~graphclust.Problem` without edges) is clustered on
        ``knn_matrix(X, n_neighbors, bandwidth="self-tuning")``, as in
        :class:`~graphclust.COSC`. A given graph is used as it is.

    Attributes
    ----------
    labels_ : ndarray of shape (n_nodes,)
    nodes_ : list
    partition_ : dict
    result_ : ClusteringResult
        ``objective`` is the normalised cut of the answer.

    Examples
    --------
    >>> import networkx as nx
    >>> est = SpectralClustering(n_clusters=2, random_state=0).fit(nx.barbell_graph(3, 0))
    >>> est.partition_
    {0: 0, 1: 0, 2: 0, 3: 1, 4: 1, 5: 1}
    """

    _parameter_constraints = {
        "n_clusters": Integer(low=1),
        "n_init": Integer(low=1),
        "random_state": RandomState(),
        "n_neighbors": Integer(low=1),
    }

    def __init__(self, n_clusters=2, *, n_init=10, random_state=None, n_neighbors=10):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.random_state = random_state
        self.n_neighbors = n_neighbors

    def _fit(self, problem):
        from ..metrics import normalized_cut

        rng = check_random_state(self.random_state)
        if problem.n_nodes < 2:
            raise TooFewClustersError(
                f"SpectralClustering needs at least 2 nodes, got {problem.n_nodes} (n_samples={problem.n_nodes})",
                n_clusters=self.n_clusters)
        problem, graph_info = with_knn_graph(problem, self.n_neighbors)
        scale = extreme_scale(problem.W.data)  # weights near 1e±308: degrees would overflow
        if scale != 1.0:  # a power of two: exact, and the normalised cut is a ratio of weights
            from dataclasses import replace

            problem = replace(problem, W=problem.W / scale)
        reduced, lift = contract(problem)
        if self.n_clusters > reduced.n_nodes:
            raise TooFewClustersError(
                f"n_clusters={self.n_clusters} but the problem has only {reduced.n_nodes} nodes "
                "after merging must-links", n_clusters=self.n_clusters,
            )
        emb = spectral_embedding(reduced.W, self.n_clusters, random_state=rng)
        labels, _, _ = kmeans(emb, self.n_clusters, weights=reduced.counts, n_init=self.n_init, random_state=rng)
        full = lift(labels)
        info = {"n_super_nodes": reduced.n_nodes, **graph_info}
        try:
            objective = float(normalized_cut(problem.W, full))
        except InvalidParameterError as exc:  # a cluster of isolated nodes: valid labels, 0/0 score
            objective = float("inf")
            info["objective_undefined"] = str(exc)
            warnings.warn(f"SpectralClustering: {exc}; result_.objective is inf", UserWarning, stacklevel=3)
        return full, ClusteringResult(objective=objective, info=info)


@register_method("spectral", "normalised spectral clustering; hard must-links merged, cannot-links ignored")
def _spectral_factory(n_clusters=2, random_state=None):
    return SpectralClustering(n_clusters=n_clusters, random_state=random_state)
