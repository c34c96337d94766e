"""Read and write clustering problems as GraphML, and side information as CSV.

A graphclust GraphML file holds one problem: the data graph *and* its side
information, in a single undirected ``<graph>``.

Reading (and how it is kept safe) is in :mod:`graphclust.io.graphml_read`, writing in
:mod:`graphclust.io.graphml_write`, and CSV side-information files in
:mod:`graphclust.io.side_csv`; the public names are re-exported here.

File format
-----------
Nodes
    ``<node id="...">``. Ids are strings in the file. On reading, node keys become
    ``int`` when **every** id in the file is a canonical decimal integer (``"0"``,
    ``"17"``, ``"-3"``; not ``"007"``, ``"+1"`` or ``"1.0"``), else they stay strings.
    The graph attribute ``node_key_type`` overrides that rule: ``"int"``, ``"str"``
    or ``"repr"``. With ``"repr"`` each id is the Python ``repr`` of the key and is
    restored with :func:`ast.literal_eval`, which is how tuple keys (grid pixels
    ``(row, col)``) and graphs mixing int and str keys are stored; the writer sets the
    attribute whenever the default rule would not restore the keys exactly.
Edges
    Edge attribute ``kind`` is ``"data"`` (the default when absent), ``"must"`` or
    ``"cannot"``; attribute ``weight`` is a double (default 1.0). Data edges form the
    networkx data graph ``G`` (``weight`` is a similarity: finite and >= 0).
    ``must``/``cannot`` edges form the :class:`~graphclust.SideInfo` ``S``: the
    strength is ``|weight|`` (``INF`` for a hard constraint), ``kind`` gives the
    sign; other attributes of a constraint edge are not kept. A pair may carry both a
    data edge and a constraint edge (GraphML allows parallel edges), but not two data
    edges, nor both a must-link and a cannot-link.
Node attributes
    ``features``: a numeric vector written as a whitespace-separated string
    (``"0.5 1.25"``); commas and a JSON-style ``"[0.5, 1.25]"`` are accepted on
    reading; it is read back as a float64 ndarray (writing takes any flat numeric
    sequence: a list, a tuple or an array). ``label``: the seed label of a node
    (it goes to ``S.seeds``, not to ``G``). ``truth``: ground-truth class, kept on
    ``G`` like any other attribute.
Other attributes
    Node, edge and graph attributes of GraphML type ``boolean``, ``int``, ``long``,
    ``float``, ``double`` or ``string`` round-trip with their types (Python
    ``bool``, ``int``, ``float``, ``str``). ``<default>`` values of ``<key>`` apply
    to elements without the attribute.

Side-information files (``read_graphml(..., side=path)``, :func:`read_side_info`)
are either GraphML (edges of kind ``must``/``cannot``, or edges without ``kind``
whose ``weight`` is signed: > 0 must-link, < 0 cannot-link) or CSV with a header
line: ``u,v,weight`` (signed weight) or ``u,v,kind[,weight]`` (``kind`` must/cannot,
strength ``|weight|``, default 1). Lines starting with ``#`` are comments;
``# node_key_type=repr`` (or ``str``/``int``) plays the role of the graph attribute.
Node tokens are matched to the data graph's node keys by the same int/str/repr
rule. Fields are stripped of surrounding blanks.
"""

from .graphml_read import parse_graphml, read_graphml, read_problem, read_side_info
from .graphml_write import write_graphml
from .side_csv import write_side_info_csv

__all__ = ["read_graphml", "read_problem", "parse_graphml", "write_graphml", "read_side_info", "write_side_info_csv"]
