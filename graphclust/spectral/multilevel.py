"""Graph coarsening for multilevel COSC on large graphs.

Heavy-edge matching (Graclus-style, with the normalised-cut priority
``w_uv (1/b_u + 1/b_v)``) merges pairs of vertices, summing their vertex weights and
the weights of the edges to their neighbours. A bipartition of the coarse graph then
has exactly the cut, the volumes and hence the balanced cut of its prolongation to
the fine graph. Endpoints of cannot-links are never merged with anything, so the
coarse cannot-links are the fine ones (between the same, unmerged vertices): their
structure (for example the 2-colourability the COSC guarantee rests on) is kept, and
a coarse partition satisfying them satisfies the fine ones.
"""

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._utils import check_random_state

__all__ = ["heavy_edge_matching", "coarsen", "merge_groups"]


def merge_groups(W, b, lab, k):
    """Sum the vertices of each group of ``lab``: ``(P^T W P`` without its diagonal, ``P^T b)``."""
    coo = sp.coo_array(W)
    r, c = lab[coo.row], lab[coo.col]
    off = r != c
    W2 = sp.coo_array((coo.data[off], (r[off], c[off])), shape=(k, k)).tocsr()
    W2.sum_duplicates()
    W2 = sp.csr_array(0.5 * (W2 + W2.T))
    W2.eliminate_zeros()
    return W2, np.bincount(lab, weights=b, minlength=k)


@njit(cache=True)
def _match(indptr, indices, data, b, order, frozen, n):  # pragma: no cover - numba
    mate = np.full(n, -1, dtype=np.int64)
    for u in order:
        if mate[u] >= 0:
            continue
        best, best_score = -1, 0.0
        if not frozen[u]:
            for p in range(indptr[u], indptr[u + 1]):
                v = indices[p]
                if v == u or mate[v] >= 0 or frozen[v]:
                    continue
                score = data[p] * (1.0 / b[u] + 1.0 / b[v])
                if score > best_score:
                    best, best_score = v, score
        mate[u] = u if best < 0 else best
        if best >= 0:
            mate[best] = u
    lab = np.full(n, -1, dtype=np.int64)
    k = 0
    for u in range(n):
        if lab[u] < 0:
            lab[u] = k
            lab[mate[u]] = k
            k += 1
    return lab, k


def heavy_edge_matching(W, b, cannot_pairs=None, *, random_state=None):
    """Group the vertices of ``W`` in pairs along heavy edges.

    Vertices are visited in a random order; each unmatched vertex is matched with the
    unmatched neighbour of largest ``w_uv (1/b_u + 1/b_v)``, and stays alone when
    there is none. Endpoints of cannot-links always stay alone.

    Parameters
    ----------
    W : scipy.sparse matrix of shape (n, n)
        Symmetric non-negative weights.
    b : array-like of shape (n,)
        Positive vertex weights.
    cannot_pairs : array-like of shape (m, 2) or None
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    labels : ndarray of int64, shape (n,)
        Group of each vertex, numbered by first vertex.
    n_groups : int

    Examples
    --------
    >>> import networkx as nx
    >>> W = nx.to_scipy_sparse_array(nx.path_graph(4), format="csr")
    >>> heavy_edge_matching(W, [1.0, 2, 2, 1], random_state=0)[1]
    2
    >>> heavy_edge_matching(W, [1.0, 2, 2, 1], [(0, 3)], random_state=0)
    (array([0, 1, 1, 2]), 3)
    """
    W = sp.csr_array(W)
    n = W.shape[0]
    b = np.asarray(b, dtype=np.float64)
    frozen = np.zeros(n, dtype=np.bool_)
    if cannot_pairs is not None and len(cannot_pairs):
        frozen[np.asarray(cannot_pairs, dtype=np.int64).ravel()] = True
    order = check_random_state(random_state).permutation(n).astype(np.int64)
    return _match(W.indptr.astype(np.int64), W.indices.astype(np.int64), W.data.astype(np.float64), b, order,
                  frozen, n)


def coarsen(W, b, cannot_pairs, *, min_n, random_state=None, min_shrink=0.9):
    """Coarsen by repeated heavy-edge matching until at most ``min_n`` vertices remain
    (or a round shrinks the graph by less than ``1 - min_shrink``).

    Returns a list of levels ``(W, b, cannot_pairs, labels)``, finest first, where
    ``labels`` maps the level's vertices to those of the next coarser level, and the
    coarsest ``(W, b, cannot_pairs)``.
    """
    rng = check_random_state(random_state)
    levels = []
    cl = np.asarray(cannot_pairs, dtype=np.int64).reshape(-1, 2)
    while W.shape[0] > min_n:
        lab, k = heavy_edge_matching(W, b, cl, random_state=rng)
        if k > min_shrink * W.shape[0]:
            break
        levels.append((W, b, cl, lab))
        W, b = merge_groups(W, b, lab, k)
        cl = lab[cl]  # endpoints are never merged: the same pairs, renumbered
    return levels, (W, b, cl)
