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
own queues do not balance long tasks), the seconds of training one submission
should carry (a Slurm job wants tens of minutes, not one 60-second run), how to stop
the worker of one submission that ran past its limit (:attr:`Engine.stop`), and whether
its workers see the cache folder, where each run stamps its start (:attr:`Engine.stamps`,
:mod:`claimbook.runs.clock`).

Workers never outlive the driver, on SIGKILL too: the local pool's processes and
submitit-local's jobs call :func:`die_with_parent` first; Dask's worker processes end
with their nanny, which lives in the driver.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import importlib
import math
import multiprocessing
import os
import select
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

JOB_SECONDS = 20 * 60  # a Slurm job's share of training: tens of minutes
JOB_TIMEOUT_MIN = 120
START_S = 300  # a submission with no run training this long: it hung starting or ending
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


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
    # kills the worker of one submission; True when that took every worker down with it
    # (the local pool: the runs still in flight must be submitted again). None: it cannot
    stop: Callable[[concurrent.futures.Future], bool] | None = None
    stamps: bool = True  # its workers see the cache folder: each run's clock starts in them
    start_s: float = START_S  # how long a submission may have no run training (a queue: inf)

    def close(self) -> None:
        self.executor.shutdown(wait=True, cancel_futures=True)


def die_with_parent(parent: int) -> None:
    """In a worker: be killed when the process ``parent`` (the driver) dies. A child of the
    driver asks Linux for SIGKILL then (``prctl(PR_SET_PDEATHSIG)``: no thread needed); a
    grandchild (a submitit-local job, under its controller) waits in a thread on the
    driver's pidfd and exits when it ends. Linux only; elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    if os.getppid() == parent:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() == parent:
            return  # else the driver died before the request: nobody will signal
    try:
        handle = os.pidfd_open(parent)
    except ProcessLookupError:  # gone already
        os._exit(1)

    def wait() -> None:
        select.select([handle], [], [])  # readable once the driver has ended
        os._exit(1)

    threading.Thread(target=wait, name="claimbook-lifeline", daemon=True).start()


def _guarded(driver: int, fn: Callable, *args):
    """``fn(*args)`` in a job that ends with the driver (see :func:`die_with_parent`)."""
    die_with_parent(driver)
    return fn(*args)


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
        return _dask(name, workers, folder)
    if name in ("submitit-local", "slurm"):
        return _submitit(name, workers, folder)
    if ":" in name:
        module, _, function = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"--claimbook-train-on {name}: {exc}") from None
        return Engine(name, factory(workers), workers, stamps=False)  # it may run anywhere
    raise ValueError(
        f"--claimbook-train-on {name!r}: expected local, dask, dask://HOST:PORT, "
        "submitit-local, slurm or module:function"
    )


def _local(workers: int) -> Engine:
    """A pool of spawned processes that die with this one. Stopping one run kills every
    process of the pool (it cannot lose one alone): the caller starts a new pool."""
    spawn = multiprocessing.get_context("spawn")  # no fork of a threaded torch
    pool = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=spawn, initializer=die_with_parent, initargs=(os.getpid(),)
    )

    def stop(future) -> bool:  # the pool offers no public handle on its processes
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.kill()
        return True

    return Engine("local", pool, workers, stop=stop)


def _dask(name: str, workers: int, folder: Path) -> Engine:
    import dask
    from distributed import Client, LocalCluster

    from claimbook.runs.clock import shared

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
    executor = _DaskExecutor(client, cluster)
    stamps = cluster is not None or shared(client, folder)  # a remote cluster's may not
    return Engine(name, executor, slots, broken=(), stop=executor.stop, stamps=stamps)


class _DaskExecutor(concurrent.futures.Executor):
    """A Dask client as a ``concurrent.futures`` executor (as ``Client.get_executor``),
    closing the client and cluster too, and able to stop one task: its worker process is
    killed and its nanny starts a fresh one."""

    def __init__(self, client, cluster):
        self.client, self.cluster = client, cluster
        self.tasks: dict = {}  # our future -> the Dask future, until it is done

    def submit(self, fn, /, *args, **kwargs):
        task = self.client.submit(fn, *args, pure=False, **kwargs)
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        self.tasks[future] = task

        def done(task) -> None:  # in a thread of Dask's: the task finished, failed or ended
            self.tasks.pop(future, None)
            try:
                future.set_result(task.result())
            except BaseException as exc:
                if not future.done():
                    future.set_exception(exc)

        task.add_done_callback(done)
        return future

    def stop(self, future) -> bool:
        """Kill the worker running ``future`` (only a worker with a nanny comes back)."""
        task = self.tasks.pop(future, None)
        if task is None:
            return False
        busy = [w for w, keys in self.client.processing().items() if task.key in keys]
        task.cancel()
        if busy:
            self.client.restart_workers(busy, timeout=60, raise_for_error=False)
        return False

    def shutdown(self, wait=True, *, cancel_futures=False):
        if cancel_futures:
            for task in list(self.tasks.values()):
                task.cancel()
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _submitit(name: str, workers: int, folder: Path) -> Engine:
    import submitit

    cluster = "local" if name == "submitit-local" else "slurm"
    job = submitit.AutoExecutor(folder=str(folder / "submitit" / "%j"), cluster=cluster)
    job.update_parameters(timeout_min=JOB_TIMEOUT_MIN, cpus_per_task=1, tasks_per_node=1,
                          nodes=1, name="claimbook-train")  # fmt: skip
    executor = _Submitit(job, guard=cluster == "local")
    if cluster == "slurm":  # every bin a task of one job array, at most `workers` at once
        job.update_parameters(slurm_array_parallelism=workers)
        return Engine(name, executor, workers, bin_seconds=JOB_SECONDS, broken=(),
                      array=executor.map_array, stop=executor.stop, start_s=math.inf)  # fmt: skip
    return Engine(name, executor, workers, bin_seconds=JOB_SECONDS, broken=(), stop=executor.stop)


class _Submitit(concurrent.futures.Executor):
    """submitit's executor as a ``concurrent.futures`` one: each submission a job, its
    future resolved by a watcher thread (job.result() blocks until the job ends). With
    ``guard`` (local jobs), each job ends when the driver does."""

    def __init__(self, job, guard: bool = False):
        self.job, self.guard = job, guard
        self.jobs: list = []
        self.of: dict = {}  # our future -> its job

    def submit(self, fn, /, *args, **kwargs):
        if self.guard:
            fn, args = _guarded, (os.getpid(), fn, *args)
        return self._watch(self.job.submit(fn, *args, **kwargs))

    def stop(self, future) -> bool:
        """Cancel the job of ``future`` (submitit kills its processes)."""
        job = self.of.pop(future, None)
        if job is not None:
            job.cancel(check=False)
        return False

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
            finally:
                self.of.pop(future, None)

        future.set_running_or_notify_cancel()
        self.of[future] = job
        threading.Thread(target=watch, daemon=True).start()
        return future

    def shutdown(self, wait=True, *, cancel_futures=False):
        if cancel_futures:
            for job in self.jobs:
                if not job.done():
                    job.cancel(check=False)
