"""A local Dask cluster with one worker process per GPU (docs/dask.md).

``jitkern.dask.local_cluster()`` starts one worker per visible GPU, each seeing only its own
GPU through ``CUDA_VISIBLE_DEVICES``, so that every worker's device 0 is a different GPU. It
uses dask-cuda's ``LocalCUDACluster`` where dask-cuda is installed; otherwise it starts the
same layout itself from distributed's public parts (a ``SpecCluster`` of ``Nanny`` workers,
each with its own environment).

This module needs ``dask[distributed]``; it is the one place jitkern imports Dask.
"""

from __future__ import annotations

import logging
import os

import numpy
from distributed import Nanny, Scheduler, SpecCluster, WorkerPlugin

from . import config
from .errors import CUDAError, JitkernTypeError, JitkernValueError
from .runtime import driver

#: workers of a simulated cluster where no GPU is visible
SIMULATED_WORKERS = 2


def local_cluster(devices=None, *, simulate=None, dask_cuda=None, threads_per_worker=1,
                  dashboard_address=None, local_directory=None, **worker_options):
    """A local Dask cluster with one worker process per GPU.

    Each worker's device 0 is a GPU of its own (its ``CUDA_VISIBLE_DEVICES`` starts with that
    GPU's entry: dask-cuda lists the other GPUs after it, the fallback none), so chunks a
    worker creates stay on its GPU and its kernels run there. Use it as a context manager,
    with a client::

        with jitkern.dask.local_cluster() as cluster, distributed.Client(cluster) as client:
            ...

    ``devices``: the GPUs, as a count ``n`` (the first ``n`` visible) or a list of
    ``CUDA_VISIBLE_DEVICES`` entries (indices or UUIDs); default every visible GPU (the
    entries of this process's ``CUDA_VISIBLE_DEVICES`` where it is set).
    ``simulate``: workers run every kernel in jitkern's CPU simulator (``JITKERN_SIMULATE``),
    so no GPU is needed; default this process's setting. Where no GPU is visible it starts
    two workers unless ``devices`` says otherwise.
    ``dask_cuda``: use dask-cuda's ``LocalCUDACluster`` (True), never (False), or where it is
    installed and not simulating (None); its workers need GPUs, so never with ``simulate``.
    ``threads_per_worker``: 1, as dask-cuda does: one thread issues a GPU's work.
    ``dashboard_address``: where the scheduler's dashboard listens (``":8787"``); None: no
    dashboard. ``local_directory``: the workers' scratch folder (Dask's default otherwise).
    ``worker_options``: passed to each worker (``memory_limit=``, ...). Without dask-cuda
    the workers have no memory limit unless given one: Dask counts a CuPy chunk's bytes as
    the worker's memory, and a host limit would spill GPU chunks through the host to disk
    (dask-cuda tracks device memory itself).

    Where no GPU is visible and ``simulate`` is off, raises :class:`jitkern.CUDAError`.
    Like any cluster of processes, make it under ``if __name__ == "__main__":`` in a script.
    """
    simulate = config.settings.simulate if simulate is None else bool(simulate)
    entries = _device_entries(devices, simulate)
    if _use_dask_cuda(dask_cuda, simulate):
        from dask_cuda import LocalCUDACluster

        return LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(entries),
                                threads_per_worker=threads_per_worker,
                                dashboard_address=dashboard_address,
                                local_directory=local_directory, **worker_options)
    return _spec_cluster(entries, simulate, threads_per_worker, dashboard_address,
                         local_directory, worker_options)


def array_module():
    """The array library of the chunks a worker makes: ``cupy`` on a GPU, ``numpy`` while the
    worker simulates (``JITKERN_SIMULATE=1``, ``local_cluster(simulate=True)``), whose chunks
    Dask moves and joins as it does any NumPy array. One block function serves both::

        def random_chunk(seed, block_info=None):
            xp = jitkern.dask.array_module()
            return xp.random.default_rng(seed).random(block_info[None]["chunk-shape"])
    """
    if config.settings.simulate:
        return numpy
    import cupy

    return cupy


def visible_devices() -> list[str]:
    """The ``CUDA_VISIBLE_DEVICES`` entries of the GPUs this process can use: the variable's
    own entries where it is set, else ``0 .. n-1`` for the ``n`` GPUs the driver finds."""
    raw = os.environ.get("CUDA_VISIBLE_DEVICES")
    if raw is not None:
        return [entry.strip() for entry in raw.split(",") if entry.strip()]
    try:
        count = driver.device_count()
    except CUDAError:  # no driver: no GPU
        count = 0
    return [str(i) for i in range(count)]


def _device_entries(devices, simulate: bool) -> list[str]:
    if devices is None or (isinstance(devices, int) and not isinstance(devices, bool)):
        return _first_visible(devices, simulate)
    if isinstance(devices, (str, bool)) or not hasattr(devices, "__iter__"):
        raise JitkernTypeError(f"jitkern.dask.local_cluster: devices={devices!r}: expected "
                               "a count or a list of CUDA_VISIBLE_DEVICES entries")
    entries = [str(d).strip() for d in devices]
    if not entries or "" in entries or any("," in e for e in entries):
        raise JitkernValueError(f"jitkern.dask.local_cluster: devices={devices!r}: expected "
                                "one or more CUDA_VISIBLE_DEVICES entries (index or UUID)")
    if len(set(entries)) != len(entries):
        raise JitkernValueError(f"jitkern.dask.local_cluster: devices={devices!r} names a "
                                "GPU twice; each GPU gets one worker")
    return entries


def _first_visible(count, simulate: bool) -> list[str]:
    """The first ``count`` visible GPUs (all where None); labels where simulating past them."""
    visible = visible_devices()
    if count is None:
        count = len(visible) or (SIMULATED_WORKERS if simulate else 0)
        if count == 0:
            raise CUDAError("jitkern.dask.local_cluster: no CUDA device is visible; "
                            "simulate=True runs the workers' kernels in the simulator")
    if count < 1:
        raise JitkernValueError(f"jitkern.dask.local_cluster: devices={count}: expected a "
                                "count of 1 or more")
    if len(visible) < count:
        if not simulate:
            raise CUDAError(f"jitkern.dask.local_cluster: devices={count} but "
                            f"{len(visible)} GPU(s) are visible ({', '.join(visible)})")
        visible += [str(i) for i in range(len(visible), count)]  # nothing runs on them
    return visible[:count]


def _use_dask_cuda(choice, simulate: bool) -> bool:
    if choice and simulate:
        raise JitkernValueError("jitkern.dask.local_cluster: dask_cuda=True with "
                                "simulate=True: dask-cuda's workers need GPUs")
    if choice is not None or simulate:
        return bool(choice)
    try:
        import dask_cuda  # noqa: F401
    except ImportError:
        return False
    return True


def _spec_cluster(entries, simulate, threads_per_worker, dashboard_address, local_directory,
                  worker_options):
    options = {"memory_limit": 0, "host": "127.0.0.1",
               "nthreads": threads_per_worker, "silence_logs": logging.WARN,
               "local_directory": local_directory, "plugins": {ReadSettings()},
               **worker_options}
    workers = {
        i: {"cls": Nanny, "options": dict(options, env=_worker_env(entry, simulate))}
        for i, entry in enumerate(entries)
    }
    scheduler = {"cls": Scheduler, "options": {
        "host": "127.0.0.1", "port": 0, "dashboard": dashboard_address is not None,
        "dashboard_address": dashboard_address}}
    return SpecCluster(workers=workers, scheduler=scheduler, silence_logs=logging.WARN,
                       name="jitkern.dask.local_cluster")


def _worker_env(entry: str, simulate: bool) -> dict:
    return {"CUDA_VISIBLE_DEVICES": entry, "JITKERN_SIMULATE": "1" if simulate else "0"}


class ReadSettings(WorkerPlugin):
    """A Dask worker plugin: jitkern reads its settings again when the worker starts.

    A worker process may import jitkern before its own environment is in place (a spawned
    process imports the parent's main script first), so ``JITKERN_SIMULATE`` and the other
    variables given to that worker are read again once it is."""

    idempotent = True
    name = "jitkern-settings"

    def setup(self, worker) -> None:
        config.reload()
