"""graphclust on Dask: batches of problems, tiled pixel grids, chunked points.

Needs the optional extra ``graphclust[dask]`` (dask and dask.distributed); import it as
``import graphclust.distributed`` (it is not loaded by ``import graphclust``, and it
loads dask only when one of its functions runs). Nothing here is a cluster layer of
its own: every function takes any :class:`dask.distributed.Client` (or uses the default
scheduler when ``client=None``) and expresses the work as dask collections or futures,
so Dask schedules it, moves the data, and re-runs the tasks of a worker that dies.

Three entry points, one module each:

* :func:`map_fit` (:mod:`graphclust.distributed.batches`) fits one clone of an
  estimator per problem across the workers and yields the outcomes as they finish.
* :func:`grid_inference` and :func:`grid_energy` (:mod:`graphclust.distributed.grid`)
  minimise and evaluate a 4-connected pixel-grid Potts energy tile by tile, each tile
  running a single-machine engine with the labels just outside it held fixed.
* :func:`chunked_kmeans` (:mod:`graphclust.distributed.points`) runs the synchronous
  (Jacobi) HMRF-KMeans / RDP-means iteration over a chunked point array.
"""

from .batches import FitOutcome, map_fit
from .grid import GridResult, grid_energy, grid_inference
from .points import ChunkedKMeansResult, chunked_kmeans

__all__ = ["map_fit", "FitOutcome", "grid_inference", "grid_energy", "GridResult", "chunked_kmeans",
           "ChunkedKMeansResult"]
