"""Where candidates run: a ``dask.distributed`` Client (the ``tune`` extra: ``pip install tinyfuse[tune]``).

- ``scheduler`` given (``tcp://host:port``): an existing cluster; its workers need tinyfuse, the cross
  toolchains and qemu, and read the model from the same path;
- else a ``dask.distributed.LocalCluster`` of ``workers`` single-threaded worker processes (default:
  one per core), started here and closed with the client.

Each candidate is one Dask task (``client.submit``); results stream back with ``as_completed``.
"""
from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading

from ..errors import TinyfuseError


def _distributed():
    try:
        import distributed
    except ImportError:
        raise TinyfuseError("tinyfuse tune measures candidates on Dask: install it with "
                            "`pip install 'tinyfuse[tune]'` (dask and distributed)") from None
    return distributed


def _exit_quietly(signum, frame) -> None:
    """A worker's SIGINT handler: exit at once, without a traceback (the process that started the
    cluster prints the one line). Unlike SIG_IGN, a handler is reset to the default action at exec, so
    the compilers and qemu the worker runs, in the same process group, stop on the same Ctrl-C."""
    os._exit(128 + signum)


def dask_setup(worker) -> None:
    """Preload of the LocalCluster's workers (``preload=["tinyfuse.tune.cluster"]``): SIGINT exits the
    worker quietly (:func:`_exit_quietly`)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _exit_quietly)


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored while the worker processes start, so they inherit it ignored (across exec too)
    until :func:`dask_setup` runs: Ctrl-C reaches the terminal's whole process group, and only this
    process should act on it (it closes the cluster and exits with one line); a worker would die
    printing its traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _quiet_interrupt(signum, frame) -> None:
    """SIGINT handler of the process that owns the LocalCluster while it runs: the scheduler (a thread
    of this process) is silenced before KeyboardInterrupt unwinds, so the futures cancelled on the way
    out ("Couldn't gather keys ... forgotten") and the workers that exit on the same Ctrl-C add no log
    lines to the one ``error: interrupted`` line."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
    raise KeyboardInterrupt


@contextlib.contextmanager
def _sigint_quiets_dask():
    """:func:`_quiet_interrupt` as the SIGINT handler inside the block (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, _quiet_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None):
    """A Client on an existing scheduler or on a LocalCluster of ``workers`` processes (module doc);
    yields (client, number of workers)."""
    distributed = _distributed()
    if scheduler:
        try:
            client = distributed.Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise TinyfuseError(f"--scheduler {scheduler}: cannot connect ({e})") from None
        try:
            yield client, len(client.scheduler_info().get("workers", {})) or 1
        finally:
            client.close()
        return
    n = workers or os.cpu_count() or 1
    with _sigint_ignored():
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                                           silence_logs=40, preload=[__name__])
    with _sigint_quiets_dask():
        client = distributed.Client(cluster)
        try:
            yield client, n
        finally:
            client.close()
            cluster.close()


def as_completed(futures):
    """dask.distributed.as_completed over ``futures`` (results as they finish)."""
    return _distributed().as_completed(futures)


__all__ = ["as_completed", "dask_client"]
