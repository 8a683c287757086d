"""Training the runs a session needs on every core, before the first claim test.

The runs not yet cached are trained in a pool of one-thread processes, longest
first (by their last recorded duration); the tests then read them from the cache.
A training function that raises makes only its own run a crash. A worker that
dies (``os._exit``, a signal, the out-of-memory killer) breaks the pool: the runs
it may have been training are then retried one by one in a process of their own,
so the run that kills its process is recorded with its exit code or signal, and
every healthy run still trains.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from claimbook.runs.cache import RunCache, Training
from claimbook.runs.keys import torch_module

Run = tuple[Training, int]  # a training and its seed
_SPAWN = multiprocessing.get_context("spawn")  # no fork of a threaded torch


def available_cores() -> int:
    """Cores this process may use (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _init_worker() -> None:
    torch = torch_module()
    if torch is not None:  # one thread per process: cores are shared out by processes
        torch.set_num_threads(1)


def _train_one(directory: str, enabled: bool, packages, training: Training, seed: int):
    cache = RunCache(directory, report=lambda _: None, enabled=enabled, packages=packages)
    _, seconds = cache.get(training.fn, training.config, seed)
    return seconds


def _train_alone(directory: str, enabled: bool, packages, training: Training, seed: int, pipe):
    """A process of its own for one run: sends ("ok", seconds) or ("raised", error text)."""
    _init_worker()
    try:
        pipe.send(("ok", _train_one(directory, enabled, packages, training, seed)))
    except Exception as exc:
        pipe.send(("raised", f"{exc.__class__.__name__}: {exc}"))


def death(exitcode: int | None) -> str:
    """How a process ended, in words: "killed by signal SIGKILL" or "exited with code 3"."""
    if exitcode is not None and exitcode < 0:
        try:
            return f"killed by signal {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exited with code {exitcode}"


@dataclass
class TrainingReport:
    """What :func:`train_missing` did: runs computed (label -> seconds), processes, wall."""

    computed: dict[str, float] = field(default_factory=dict)
    workers: int = 0
    wall_s: float = 0.0
    crashed: dict[str, str] = field(default_factory=dict)  # label -> why


class _Trainer:
    """Trains a queue of runs; records each result, crash or death in the cache and report."""

    def __init__(self, cache: RunCache, total: int, report: Callable[[str], None]):
        self.cache, self.total, self.say = cache, total, report
        self.done = TrainingReport()
        self.finished = 0

    def _finish(self, run: Run, seconds: float | None, crash: str = "") -> None:
        training, seed = run
        label, key = training.label(seed), self.cache.key(training.fn, training.config, seed)
        self.finished += 1
        where = f"[{self.finished}/{self.total} runs] {label}"
        if crash:  # the claims that read this run are errors, not the session
            self.cache.failed[key] = crash
            self.done.crashed[label] = crash
            self.say(f"{where}: CRASHED ({crash[:300]})")
            return
        self.cache.fresh.add(key)
        if seconds is None:
            self.say(f"{where}: trained by another session, read")
            return
        self.done.computed[label] = seconds
        self.say(f"{where}: computed in {seconds:.0f} s")

    def in_pool(self, pending: deque, workers: int) -> list[Run]:
        """Train ``pending`` with at most ``workers`` in flight; the runs in flight when a
        worker died (one of them killed it), or [] when the pool finished everything."""
        directory, enabled = str(self.cache.directory), self.cache.enabled
        packages = self.cache.packages
        with ProcessPoolExecutor(workers, mp_context=_SPAWN, initializer=_init_worker) as pool:
            flight = {}
            while pending or flight:
                while pending and len(flight) < workers:
                    run = pending.popleft()
                    flight[pool.submit(_train_one, directory, enabled, packages, *run)] = run
                finished, _ = wait(flight, return_when=FIRST_COMPLETED)
                for future in finished:
                    try:
                        seconds = future.result()
                    except BrokenProcessPool:
                        return list(flight.values())
                    except Exception as exc:
                        self._finish(flight.pop(future), None, f"{exc.__class__.__name__}: {exc}")
                        continue
                    self._finish(flight.pop(future), seconds)
        return []

    def alone(self, run: Run) -> None:
        """Train one run in a process of its own, to tell a run that kills its process."""
        receive, send = _SPAWN.Pipe(duplex=False)
        process = _SPAWN.Process(
            target=_train_alone,
            args=(str(self.cache.directory), self.cache.enabled, self.cache.packages, *run, send),
        )
        process.start()
        send.close()
        try:
            message = receive.recv()
        except EOFError:  # it died before it could answer
            message = None
        process.join()
        if message is None or (process.exitcode != 0 and message[0] != "raised"):
            self._finish(run, None, f"its training process died ({death(process.exitcode)})")
        elif message[0] == "raised":
            self._finish(run, None, message[1])
        else:
            self._finish(run, message[1])


def train_missing(
    cache: RunCache, runs: Iterable[Run], workers: int, report: Callable[[str], None]
) -> TrainingReport:
    """Train every run of ``runs`` that ``cache`` does not hold, ``workers`` processes at once.

    Longest first (by the seconds an earlier entry of the same run took), so the
    last run to finish is a short one. Each run is computed by exactly one process
    and written to the cache, which the tests then read; a file lock per key makes
    another session that needs the same run wait for it instead of training it too.
    """
    start = time.perf_counter()
    todo, unkeyed = [], {}
    for run in runs:
        try:
            if not cache.cached(run[0].fn, run[0].config, run[1]):
                todo.append(run)
        except Exception as exc:  # e.g. a missing corpus: each test reading the run says why
            unkeyed.setdefault(f"{exc.__class__.__name__}: {exc}", []).append(run)
    for why, skipped in unkeyed.items():
        report(f"{len(skipped)} runs not trained: {why.splitlines()[0]} (their claims will error)")
    trainer = _Trainer(cache, len(todo), report)
    if not todo:
        return trainer.done
    todo.sort(key=lambda r: (r[0].label(), r[1]))
    last = {}
    for fn in {t.fn for t, _ in todo}:
        last.update(cache.last_seconds(fn))
    todo.sort(key=lambda r: -last.get(r[0].label(r[1]), 0.0))
    trainer.done.workers = min(workers, len(todo))
    report(f"training {len(todo)} runs in {trainer.done.workers} processes (one thread each) ...")
    pending = deque(todo)
    while pending:
        suspects = trainer.in_pool(pending, trainer.done.workers)
        if suspects:
            names = ", ".join(t.label(s) for t, s in suspects)
            report(f"a training process died; retrying each run it may have held alone: {names}")
        for run in suspects:
            trainer.alone(run)
    cache.computed += len(trainer.done.computed)
    trainer.done.wall_s = time.perf_counter() - start
    return trainer.done
