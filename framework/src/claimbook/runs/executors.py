"""The engines that train runs, chosen by ``--claimbook-train-on``, as
``concurrent.futures`` executors.

==================  ==============================================================
``local``           a process pool on this machine, one thread per process (default)
``dask``            a Dask ``LocalCluster`` of one-thread worker processes here
``dask://H:P``      the Dask scheduler at H:P (an existing cluster)
``submitit-local``  submitit's local executor: each bin of runs a job (tests, no queue)
``slurm``           Slurm through submitit: the bins of runs the tasks of one job array
                    (run the driver where the compute nodes' keys are the same, or set
                    ``CLAIMBOOK_ANY_CPU=1``: a worker whose key differs refuses)
``module:function`` any factory ``function(workers) -> concurrent.futures.Executor``
==================  ==============================================================

:func:`executor` returns an :class:`Engine`: the executor, how many runs it may hold
in flight (claimbook keeps at most that many submitted, longest first: the engines'
own queues do not balance long tasks), and the seconds of training one submission
should carry (a Slurm job wants tens of minutes, not one 60-second run).
"""

from __future__ import annotations

import concurrent.futures
import importlib
import multiprocessing
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

JOB_SECONDS = 20 * 60  # a Slurm job's share of training: tens of minutes
JOB_TIMEOUT_MIN = 120


@dataclass
class Engine:
    name: str
    executor: concurrent.futures.Executor
    capacity: int  # submissions in flight at once
    bin_seconds: float = 0.0  # > 0: runs are packed into submissions of about this length
    # errors after which the executor is remade (a dead process breaks a whole pool)
    broken: type[BaseException] | tuple = concurrent.futures.BrokenExecutor
    # submits all bins at once as one job array (Slurm), returning their futures
    array: Callable | None = None

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)


def names() -> list[str]:
    """The engines this environment can start (what the contract tests run on)."""
    found = ["local"]
    for name, module in (("dask", "distributed"), ("submitit-local", "submitit")):
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        found.append(name)
    return found


def check(name: str) -> None:
    """Raise ValueError, saying what to install or type, unless ``name`` can start here."""
    needs = {"dask": "distributed", "submitit-local": "submitit", "slurm": "submitit"}
    extra = {"distributed": "claimbook[dask]", "submitit": "claimbook[slurm]"}
    kind = "dask" if name.startswith(("dask://", "tcp://")) else name
    if kind == "local":
        return
    if kind in needs:
        try:
            importlib.import_module(needs[kind])
        except ImportError:
            raise ValueError(f"--claimbook-train-on {name} needs {needs[kind]}: "
                             f"pip install '{extra[needs[kind]]}'") from None  # fmt: skip
        return
    module, colon, function = name.partition(":")
    if not colon:
        raise ValueError(
            f"--claimbook-train-on {name!r}: expected local, dask, dask://HOST:PORT, "
            "submitit-local, slurm or module:function"
        )
    try:
        getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"--claimbook-train-on {name}: {exc}") from None


def executor(name: str, workers: int, folder: Path) -> Engine:
    """Start the engine ``name`` with ``workers`` slots; ``folder`` holds an engine's own
    files (submitit's job logs). Raises ValueError for an unknown name."""
    if name == "local":
        return _local(workers)
    if name == "dask" or name.startswith("dask://") or name.startswith("tcp://"):
        return _dask(name, workers)
    if name in ("submitit-local", "slurm"):
        return _submitit(name, workers, folder)
    if ":" in name:
        module, _, function = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"--claimbook-train-on {name}: {exc}") from None
        return Engine(name, factory(workers), workers)
    raise ValueError(
        f"--claimbook-train-on {name!r}: expected local, dask, dask://HOST:PORT, "
        "submitit-local, slurm or module:function"
    )


def _local(workers: int) -> Engine:
    spawn = multiprocessing.get_context("spawn")  # no fork of a threaded torch
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=spawn)
    return Engine("local", pool, workers)


def _dask(name: str, workers: int) -> Engine:
    import dask
    from distributed import Client, LocalCluster

    # the workers' environment must be the driver's, or their keys differ: no thread caps
    # (torch gets one thread from the run itself) and the driver's hash seed
    environ = {"MALLOC_TRIM_THRESHOLD_": 65536,
               "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "random")}  # fmt: skip
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ,
                          "distributed.scheduler.allowed-failures": 0}):  # fmt: skip
        if name == "dask":
            # the dashboard on a free port: None still binds 8787, and a second cluster on the
            # machine (another session, another test worker) then fails to start
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=40)  # fmt: skip
            client = Client(cluster)
        else:
            cluster, client = None, Client(name.replace("dask://", "tcp://"))
    slots = sum(w["nthreads"] for w in client.scheduler_info()["workers"].values()) or workers
    return Engine(name, _DaskExecutor(client, cluster), slots, broken=())


class _DaskExecutor(concurrent.futures.Executor):
    """Dask's own executor (``Client.get_executor``), closing the client and cluster too."""

    def __init__(self, client, cluster):
        self.client, self.cluster = client, cluster
        self.inner = client.get_executor(pure=False)

    def submit(self, fn, /, *args, **kwargs):
        return self.inner.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, *, cancel_futures=False):
        self.inner.shutdown(wait=wait)
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _submitit(name: str, workers: int, folder: Path) -> Engine:
    import submitit

    cluster = "local" if name == "submitit-local" else "slurm"
    job = submitit.AutoExecutor(folder=str(folder / "submitit" / "%j"), cluster=cluster)
    job.update_parameters(timeout_min=JOB_TIMEOUT_MIN, cpus_per_task=1, tasks_per_node=1,
                          nodes=1, name="claimbook-train")  # fmt: skip
    executor = _Submitit(job)
    if cluster == "slurm":  # every bin a task of one job array, at most `workers` at once
        job.update_parameters(slurm_array_parallelism=workers)
        return Engine(name, executor, workers, bin_seconds=JOB_SECONDS, broken=(),
                      array=executor.map_array)  # fmt: skip
    return Engine(name, executor, workers, bin_seconds=JOB_SECONDS, broken=())


class _Submitit(concurrent.futures.Executor):
    """submitit's executor as a ``concurrent.futures`` one: each submission a job, its
    future resolved by a watcher thread (job.result() blocks until the job ends)."""

    def __init__(self, job):
        self.job = job
        self.jobs: list = []

    def submit(self, fn, /, *args, **kwargs):
        return self._watch(self.job.submit(fn, *args, **kwargs))

    def map_array(self, fn, items: list) -> list:
        """One job array, a task per item (submitit's ``map_array``)."""
        return [self._watch(job) for job in self.job.map_array(fn, items)]

    def _watch(self, job) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        self.jobs.append(job)

        def watch() -> None:
            try:
                future.set_result(job.result())
            except BaseException as exc:  # a lost, pre-empted or timed-out job
                future.set_exception(exc)

        future.set_running_or_notify_cancel()
        threading.Thread(target=watch, daemon=True).start()
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        if cancel_futures:
            for job in self.jobs:
                if not job.done():
                    job.cancel(check=False)
