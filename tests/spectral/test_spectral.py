import networkx as nx
import numpy as np
import pytest

import graphclust as gc
from graphclust.errors import InvalidParameterError, TooFewClustersError
from graphclust.metrics import ari


def planted(n_per=30, k=3, p_in=0.5, p_out=0.01, seed=0):
    G = nx.planted_partition_graph(k, n_per, p_in, p_out, seed=seed)
    y = np.repeat(np.arange(k), n_per)
    return G, y


def test_recovers_planted_partition():
    G, y = planted()
    labels = gc.SpectralClustering(n_clusters=3, random_state=0).fit_predict(G)
    assert ari(y, labels) == 1.0


def test_hard_must_links_are_satisfied():
    G, y = planted()
    S = gc.SideInfo.from_pairs(must=[(0, 89), (1, 45)], weight=np.inf)
    est = gc.SpectralClustering(n_clusters=3, random_state=0).fit(G, S)
    assert est.labels_[0] == est.labels_[89] and est.labels_[1] == est.labels_[45]
    assert est.result_.violations.n_must_violated == 0


def test_parameter_and_size_errors():
    G, _ = planted(n_per=2, k=2)
    with pytest.raises(InvalidParameterError, match="n_clusters of SpectralClustering must be >= 1"):
        gc.SpectralClustering(n_clusters=0).fit(G)
    with pytest.raises(TooFewClustersError, match="only 4 nodes"):
        gc.SpectralClustering(n_clusters=5).fit(G)
