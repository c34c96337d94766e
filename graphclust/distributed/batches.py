"""Fitting many problems on a Dask cluster: :func:`map_fit`.

:func:`map_fit` fits one clone of an estimator per problem (GraphML files, Problems,
graphs, ``(data, SideInfo)`` pairs) across the workers and yields the outcomes as they
finish; a failing problem yields an outcome carrying its error, the others carry on.
"""

import copy
import os
import time
import traceback
import uuid
from dataclasses import dataclass

import numpy as np

from .._utils import check_int
from ._common import _check_client

__all__ = ["map_fit", "FitOutcome"]


@dataclass
class FitOutcome:
    """What :func:`map_fit` yields for one problem.

    Attributes
    ----------
    index : int
        Position of the problem in the input sequence.
    name : str
        The file path, or ``"problem <index>"``.
    labels : ndarray or None
        ``labels_`` of the fitted clone (None on failure).
    partition : dict or None
        ``partition_`` (node -> cluster) of the fitted clone.
    result : ClusteringResult or None
        ``result_`` of the fitted clone.
    error : Exception or None
        The exception a failing fit raised (then ``labels`` is None).
    traceback : str or None
        Its formatted traceback.
    seconds : float
        Time spent on the worker (reading and fitting).
    worker : str or None
        Address of the worker that ran it.
    """

    index: int
    name: str
    labels: np.ndarray | None = None
    partition: dict | None = None
    result: object = None
    error: BaseException | None = None
    traceback: str | None = None
    seconds: float = 0.0
    worker: str | None = None

    @property
    def ok(self):
        """True when the fit succeeded."""
        return self.error is None


def _fit_one(estimator, problem, index, name):
    """Runs on a worker: read the problem if it is a path, fit a clone, never raise."""
    t0 = time.perf_counter()
    try:
        from distributed import get_worker

        worker = get_worker().address
    except (ImportError, ValueError):
        worker = None
    try:
        est = copy.deepcopy(estimator)
        if isinstance(problem, (str, os.PathLike)):
            from ..io import read_graphml

            data, S = read_graphml(problem)
        elif isinstance(problem, tuple) and len(problem) == 2:
            data, S = problem
        else:
            data, S = problem, None
        est.fit(data, S)
        return FitOutcome(index, name, labels=est.labels_, partition=est.partition_, result=est.result_,
                          seconds=time.perf_counter() - t0, worker=worker)
    except Exception as exc:  # reported, not raised: one bad problem must not sink the batch
        return FitOutcome(index, name, error=exc, traceback=traceback.format_exc(),
                          seconds=time.perf_counter() - t0, worker=worker)


def map_fit(estimator, problems, *, client=None, max_pending=None, ordered=False):
    """Fit one clone of ``estimator`` per problem across the workers of a Dask cluster.

    Problems are submitted as futures (at most ``max_pending`` in flight, so a long
    list of files is streamed, not loaded at once) and their outcomes are yielded as
    they finish. A problem whose reading or fitting raises yields a :class:`FitOutcome`
    with ``error`` set; the others are unaffected. A worker that dies mid-run is
    handled by Dask: its tasks are re-run elsewhere.

    Parameters
    ----------
    estimator : ClusteringEstimator
        Not modified; each problem is fitted by a deep copy on a worker.
    problems : iterable
        Each item is a GraphML path (read on the worker with
        :func:`graphclust.read_graphml`, so the path must be visible there), a
        :class:`~graphclust.Problem`, a networkx graph, a feature array, or a
        ``(data, SideInfo)`` pair.
    client : dask.distributed.Client or None, default=None
        ``None`` uses the default client (the last one created in this process).
    max_pending : int or None, default=None
        Futures in flight at once; default ``4 x`` the number of worker threads.
    ordered : bool, default=False
        Yield in input order instead of completion order.

    Yields
    ------
    FitOutcome

    Raises
    ------
    InvalidParameterError
        No running client, a closed client, or a bad ``max_pending``.

    Examples
    --------
    >>> import networkx as nx
    >>> import graphclust as gc
    >>> from distributed import Client
    >>> from graphclust.distributed import map_fit
    >>> client = Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None)
    >>> problems = [nx.barbell_graph(5, 0), nx.barbell_graph(6, 1), "missing.graphml"]
    >>> est = gc.SpectralClustering(n_clusters=2, random_state=0)
    >>> outs = sorted(map_fit(est, problems, client=client), key=lambda o: o.index)
    >>> [(o.index, o.ok, None if o.labels is None else len(o.labels)) for o in outs]
    [(0, True, 10), (1, True, 13), (2, False, None)]
    >>> type(outs[2].error).__name__ in ("FileNotFoundError", "GraphMLError")
    True
    >>> client.close()
    """
    client = _check_client(client, required=True)
    from distributed import as_completed

    if max_pending is None:
        max_pending = 4 * max(1, sum(client.nthreads().values()))
    max_pending = check_int(max_pending, "max_pending", low=1)
    items = iter(enumerate(problems))
    est = estimator
    tag = uuid.uuid4().hex[:8]
    pending = as_completed([], with_results=False)
    held = {}
    next_index = 0

    def submit():
        try:
            i, p = next(items)
        except StopIteration:
            return False
        name = os.fspath(p) if isinstance(p, (str, os.PathLike)) else f"problem {i}"
        pending.add(client.submit(_fit_one, est, p, i, name, pure=False, key=f"graphclust-fit-{tag}-{i}"))
        return True

    for _ in range(max_pending):
        if not submit():
            break
    for fut in pending:
        out = fut.result()
        fut.release()
        submit()
        if not ordered:
            yield out
            continue
        held[out.index] = out
        while next_index in held:
            yield held.pop(next_index)
            next_index += 1
