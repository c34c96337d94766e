"""Regenerate graphclust/data/demo_iris.graphml, the problem `graphclust demo` runs on.

Iris (150 flowers, 3 species) as a 10-nearest-neighbour graph with Gaussian weights,
node features, the species as node attribute ``truth``, and 40 constraints sampled
from the species without noise.

    python tools/make_demo_problem.py
"""

from pathlib import Path

import networkx as nx

import graphclust as gc

X, y = gc.datasets.load_iris()
G = gc.knn_graph(X, n_neighbors=10)
nx.set_node_attributes(G, dict(enumerate(y.tolist())), "truth")
S = gc.SideInfo.sample(y, n_pairs=40, random_state=0)
out = Path(__file__).resolve().parent.parent / "graphclust" / "data" / "demo_iris.graphml"
gc.write_graphml(out, G, S)
print(f"wrote {out.name}: {G.number_of_nodes()} nodes, {G.number_of_edges()} edges, {len(S)} constraints")
