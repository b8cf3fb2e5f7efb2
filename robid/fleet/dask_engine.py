"""Dask for fleets: a local cluster that lives as long as the command, or a client of a running scheduler
(docs/fleet.md "Running on several machines").

Workers run campaigns with one BLAS thread each (``OPENBLAS_NUM_THREADS=1`` and friends, set before the worker
process starts: many small factorisations, where BLAS threads only contend with the other workers) and share the
derivation cache (``ROBID_CACHE_DIR``; its lock makes each robot type derive once, robid/symbolic/cache.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

#: environment of every local worker process, set before it starts (BLAS reads it when numpy is imported)
SINGLE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                     "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}


def worker_env() -> dict[str, str]:
    """Single-threaded BLAS, the derivation cache of this process and the backend for figures."""
    from robid.symbolic.cache import cache_dir

    env = dict(SINGLE_THREAD_ENV)
    env["ROBID_CACHE_DIR"] = str(cache_dir().resolve())
    env["MPLBACKEND"] = os.environ.get("MPLBACKEND", "Agg")
    for name in ("ROBID_CACHE_LOCK", "ROBID_CACHE_LOCK_TIMEOUT", "ROBID_CACHE_STALE_LOCK"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, workers: int | None = None) -> Iterator:
    """A ``distributed.Client``: of the scheduler at ``scheduler`` (``tcp://host:port``), or of a
    ``LocalCluster`` of ``workers`` processes with one thread each (default: the cores) that stops on exit."""
    import dask
    from distributed import Client, LocalCluster

    from robid.errors import RobidOptionError

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise RobidOptionError("scheduler", f"{scheduler}: cannot reach the Dask scheduler ({exc})") from None
        try:
            yield client
        finally:
            client.close()
        return
    n = workers or os.cpu_count() or 1
    env = worker_env()
    with dask.config.set({"distributed.nanny.pre-spawn-environ": env, "distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                               env=env, silence_logs=40)
        try:
            client = Client(cluster)
            try:
                yield client
            finally:
                client.close()
        finally:
            cluster.close()
