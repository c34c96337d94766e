"""What the Dask entry points share: importing dask, the client, and its plumbing.

``_dask`` imports dask only when an entry point runs, so ``import graphclust.distributed``
does not load it; ``_check_client`` validates a client (or finds the default one);
``_persist``, ``_wait`` and ``_compute`` run collections on a distributed client or,
without one, on dask's current scheduler; ``_distributed_client`` finds the distributed
client behind that scheduler, if any.
"""

from .._utils import optional_import
from ..errors import InvalidParameterError


def _dask():
    optional_import("dask", "dask", "graphclust.distributed")
    optional_import("distributed", "dask", "graphclust.distributed")
    import dask
    import dask.array as da

    return dask, da


def _check_client(client, *, required=False):
    """``client`` validated (running), the default distributed client, or None."""
    _dask()
    from distributed import Client

    if client is None:
        if not required:
            return None
        try:
            from distributed import get_client

            client = get_client()
        except ValueError:
            raise InvalidParameterError(
                "no dask.distributed Client is running; pass client=Client(...) (any cluster: "
                "LocalCluster, SSH, Kubernetes, ...)"
            ) from None
    if not isinstance(client, Client):
        raise InvalidParameterError(f"client must be a dask.distributed.Client, got {type(client).__name__}")
    if client.status not in ("running", "connecting", "newly-created"):
        raise InvalidParameterError(
            f"the dask client is {client.status!r} (closed or disconnected from its scheduler); "
            "create a new Client and pass it"
        )
    return client


def _persist(client, *xs, optimize=True):
    dask, _ = _dask()
    if client is not None:
        return list(client.persist(list(xs), optimize_graph=optimize))
    return list(dask.persist(*xs, optimize_graph=optimize))


def _wait(*xs):
    """Block until the persisted collections ``xs`` are in memory (no-op off distributed)."""
    _dask()
    from distributed import futures_of, wait

    futures = futures_of(list(xs))
    if futures:
        with futures[0].client.as_current():  # the client need not be the default one
            wait(futures)


def _compute(client, *xs):
    dask, _ = _dask()
    if client is not None:
        return client.gather(client.compute(list(xs)))
    return list(dask.compute(*xs))


def _distributed_client(client):
    """``client``, or the distributed client dask's current scheduler belongs to; None
    when dask runs locally."""
    if client is not None:
        return client
    from dask.base import get_scheduler
    from distributed import Client

    client = getattr(get_scheduler(), "__self__", None)  # Client.get when dask uses one
    return client if isinstance(client, Client) else None
