"""The driver: trains planned runs on an engine, longest first, and writes what returns.

At most ``capacity`` submissions are in flight; each time one finishes, the longest run
left is submitted (list scheduling: balance is claimbook's job, whatever the engine's own
queue does). A submission is one run, or for engines whose jobs are costly to start a
bin of runs of about ``bin_seconds`` (:func:`claimbook.runs.plan.pack_runs`).

Each entry a worker returns is checked (its key) and written into the cache by this
process, as soon as it arrives: killing the driver loses only the runs in flight, and the
next session trains only what is missing. The outcomes (see :mod:`claimbook.runs.remote`):

- a crash (the training raised): recorded once, never retried, never cached;
- a refusal (the worker's code, data or torch differ from the driver's): never retried,
  the run is an error naming what differs;
- an infrastructure failure (``future.result()`` raised: a lost worker, a killed
  process, a pre-empted or timed-out job): the run is submitted again, up to
  ``retries`` times, then reported as lost. An executor that broke is started anew;
- a timeout (a run still training past its ``limit`` of its own time, counted from when
  it started in its worker, :mod:`claimbook.runs.clock`): its worker is stopped
  (:attr:`claimbook.runs.executors.Engine.stop`), and the run is recorded as failed, never
  retried, naming the limit; the other runs its job held, or its pool (the local pool
  goes down whole), go again, uncounted;
- a full disk (the cache folder's): the training stops, and every run not written is an
  error naming the disk (``Trained.stopped``, which fails the session, naming it).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field

from claimbook.runs.cache import RunCache
from claimbook.runs.clock import POLL, start_clocks
from claimbook.runs.plan import pack_runs
from claimbook.runs.remote import train, train_batch
from claimbook.storage.atomic import DiskFullError

RETRIES = 2
NOT_WRITTEN = "the training runs could not be written to the cache"


@dataclass
class Trained:
    """What one phase of training did."""

    computed: dict[str, float] = field(default_factory=dict)  # label -> seconds
    failed: dict[str, str] = field(default_factory=dict)  # label -> why (crash, refusal, lost)
    workers: int = 0
    wall_s: float = 0.0
    engine: str = "local"
    stopped: str = ""  # why training stopped before its end (the cache's disk is full)


class Driver:
    """Trains ``specs`` (longest first already) on the engine ``start()`` returns
    (``Driver(...).run()``): the queue of submissions, those in flight, and what becomes of
    each run (the outcomes above)."""

    def __init__(self, start: Callable, specs: list[dict], cache: RunCache, report: Callable,
                 retries: int = RETRIES):  # fmt: skip
        self.start, self.specs, self.cache, self.report = start, specs, cache, report
        self.retries = retries
        self.done = Trained()
        self.finished = 0  # runs with an outcome, for the progress lines
        self.attempts: dict[str, int] = {}  # key -> tries the infrastructure lost
        # after a pool broke, the runs it held are suspects: each is tried alone next, so
        # the one that kills its process is found, and the others train
        self.suspects: set[str] = set()
        self.flight: dict = {}  # future -> the runs it trains
        self.batched: set = set()  # futures of train_batch, which answer with a list
        self.pending: deque = deque()
        self.engine = self.clocks = None

    def run(self) -> Trained:
        begin = time.perf_counter()
        try:
            self.engine = self.start()
        except Exception as exc:  # no engine, no training: each claim reading a run says why
            why = f"the engine could not start: {exc.__class__.__name__}: {exc}"
            for run in self.specs:
                self.failed(run, why, "NOT TRAINED")
            return self.done
        engine = self.engine
        self.done.workers, self.done.engine = engine.capacity, engine.name
        self.clocks = start_clocks(self.cache.directory, engine.stamps, engine.start_s)
        self.pending = self._queue()
        try:
            while self.pending or self.flight:
                broke = self._submit()
                self._read(self._wait(broke), broke)
                if self.done.stopped:  # the disk is full: nothing more can be written
                    while self.pending:
                        for run in self.pending.popleft():
                            self.failed(run, self.done.stopped, "NOT TRAINED")
                self.clocks.look(self.flight)  # a job's next run may start as its last ends
                self._stop_late()
                if broke:
                    self._recover(broke)
        finally:
            self.engine.close()
            self.clocks.close()
        self.cache.computed += len(self.done.computed)
        self.done.wall_s = time.perf_counter() - begin
        return self.done

    # the queue and the submissions -------------------------------------------------------

    def _queue(self) -> deque:
        """The submissions, longest first: one run each, or bins of runs for an engine whose
        jobs are costly to start."""
        if not self.engine.bin_seconds:
            return deque([s] for s in self.specs)
        by_key = {s["key"]: s for s in self.specs}
        keys = [s["key"] for s in self.specs]
        estimates = {s["key"]: s.get("estimate", 0.0) for s in self.specs}
        bins = pack_runs(keys, estimates, self.engine.bin_seconds, self.engine.capacity)
        return deque([by_key[k] for k in keys] for keys in bins)

    def _submit(self) -> list:
        """Fill the free slots (or send one job array); return [(runs, exception)] for the
        submissions a broken engine refused."""
        engine, pending, flight, broke = self.engine, self.pending, self.flight, []
        if engine.array and pending and not flight and not self.suspects:  # one job array
            batches = list(pending)
            pending.clear()
            try:
                batches = [self.clocks.send(runs) for runs in batches]
                futures = engine.array(train_batch, batches)
            except Exception as exc:
                broke += [(runs, exc) for runs in batches]
            else:
                flight.update(zip(futures, batches, strict=True))
                self.batched.update(futures)
        while not broke and pending and len(flight) < engine.capacity:
            solo = any(r["key"] in self.suspects for r in pending[0])
            if (solo and flight) or any(
                r["key"] in self.suspects for runs in flight.values() for r in runs
            ):
                break
            runs = self.clocks.send(pending.popleft())
            try:
                if len(runs) == 1:
                    future = engine.executor.submit(train, runs[0])
                else:
                    future = engine.executor.submit(train_batch, runs)
                    self.batched.add(future)
            except Exception as exc:  # a broken executor refuses new work
                broke.append((runs, exc))
                break
            flight[future] = runs
        return broke

    def _wait(self, broke: list) -> set:
        """The submissions that finished, waiting at most until the soonest limit (or the
        clocks' next poll while a run has not shown it started)."""
        waiting = self.clocks.look(self.flight)  # runs that started since: their clocks start
        soonest = min(map(self.clocks.deadline, self.flight.values()), default=math.inf)
        until = None if soonest == math.inf else max(0.0, soonest - time.monotonic())
        if waiting:
            until = POLL if until is None else min(until, POLL)
        if not self.flight or broke:
            return set()
        return wait(self.flight, timeout=until, return_when=FIRST_COMPLETED)[0]

    def _read(self, ready: set, broke: list) -> None:
        """Take each finished submission's answers; an infrastructure failure goes to
        ``broke``."""
        while ready:  # each future is dropped as soon as it is read: Dask keeps a result
            future = ready.pop()  # on its worker while the future lives, and retrains
            runs = self.flight.pop(future)  # the run if that worker dies later
            batch = future in self.batched
            self.batched.discard(future)
            try:
                answers = future.result()
            except Exception as exc:  # the infrastructure's failure
                broke.append((runs, exc))
                continue
            finally:
                del future
            if not batch:
                answers = [answers]
            if not isinstance(answers, list) or len(answers) != len(runs):
                answers = [{"refused": f"the job answered {str(answers)[:100]!r} for "
                            f"{len(runs)} runs"}] * len(runs)  # fmt: skip
            for run, answer in zip(runs, answers, strict=True):
                self.suspects.discard(run["key"])
                self.finish(run, answer)

    def _restart(self) -> None:
        self.engine.close()
        self.engine = self.start()

    # what becomes of a run ---------------------------------------------------------------

    def failed(self, run: dict, why: str, kind: str) -> None:
        self.finished += 1
        crashed = kind in ("CRASHED", "TIMED OUT")  # it would only do it again in the next leg
        try:
            self.cache.record_failure(run["key"], run["label"], why, crashed=crashed)
        except DiskFullError as exc:  # the session stops, naming the disk; other errors raise
            self.done.stopped = self.done.stopped or f"{NOT_WRITTEN}: {exc}"
        self.cache.failed[run["key"]] = f"its training raised {why}" if kind == "CRASHED" else why
        self.done.failed[run["label"]] = why
        self._progress(run, f"{kind} ({why[:300]})")

    def _progress(self, run: dict, what: str) -> None:
        self.report(f"[{self.finished}/{len(self.specs)} runs] {run['label']}: {what}")

    def finish(self, run: dict, answer) -> None:
        """Write a returned entry into the cache, or record the crash or refusal."""
        if not isinstance(answer, dict):
            answer = {"refused": f"the worker answered {type(answer).__name__}, not a dict"}
        if "entry" in answer:
            try:
                entry = answer["entry"]
                if entry["key"] != run["key"]:
                    raise ValueError(f"the entry of key {str(entry['key'])[:12]}")
                self.cache.put(run["training"].fn, entry)
            except (KeyError, TypeError, ValueError) as exc:
                answer = {"refused": f"its entry is malformed: {exc}"}
            except DiskFullError as exc:
                self.done.stopped = f"{NOT_WRITTEN}: {exc}"
                self.failed(run, self.done.stopped, "NOT WRITTEN")
                return
            else:
                self.finished += 1
                self.done.computed[run["label"]] = entry["seconds"]
                self._progress(run, f"computed in {entry['seconds']:.0f} s on {self.engine.name}")
                return
        if "crash" in answer:
            self.failed(run, str(answer["crash"]), "CRASHED")
        else:
            self.failed(run, f"the worker refused: {answer.get('refused')}", "REFUSED")

    def lost(self, runs: list[dict], exc: BaseException) -> None:
        """The infrastructure lost ``runs``: each goes again, up to ``retries`` times."""
        for run in runs:
            self.clocks.forget(run)  # a new try, a new clock
            tries = self.attempts[run["key"]] = self.attempts.get(run["key"], 0) + 1
            if tries <= self.retries:
                again = f"submitting it again (try {tries + 1} of {self.retries + 1})"
                self.report(f"{run['label']}: {exc.__class__.__name__} ({str(exc)[:200]}); {again}")
                self.pending.appendleft([run])
                continue
            why = (f"the infrastructure lost it {self.retries + 1} times "
                   f"(last: {exc.__class__.__name__}: {str(exc)[:200]})")  # fmt: skip
            self.failed(run, why, "LOST")

    # limits and broken engines -----------------------------------------------------------

    def _stop_late(self) -> None:
        """Stop every submission past its limit (every one, the disk being full); if the
        engine went down with one, the others in flight go again, each keeping its clock."""
        now = time.monotonic()
        late = [f for f, runs in self.flight.items()
                if self.done.stopped or self.clocks.deadline(runs) <= now]  # fmt: skip
        if any([self.overdue(f) for f in late]) and not self.done.stopped:
            for runs in self.flight.values():
                self.clocks.pause(runs)
            self.pending.extendleft(reversed(list(self.flight.values())))
            self.flight.clear()
            self.batched.clear()
            self._restart()

    def overdue(self, future) -> bool:
        """Stop a submission past its limit (or every one, the disk being full): its running
        run fails, its others go again; True when the engine went down with it (the others
        in flight go again too, uncounted)."""
        engine, clocks, done = self.engine, self.clocks, self.done
        runs = self.flight.pop(future)
        self.batched.discard(future)
        running = clocks.running(runs)
        whole = bool(engine.stop and engine.stop(future))
        if not engine.stop:
            future.cancel()
        stopped = "its worker was stopped" if engine.stop else (
            f"{engine.name} offers no way to stop its worker")  # fmt: skip
        if running is None and clocks.folder is not None and not done.stopped:
            why = f"its worker showed no sign of it for {clocks.start_s:.0f} s"
            self.lost(runs, TimeoutError(why))  # it hung while starting or ending: go again
            return whole
        for run in runs:
            if done.stopped:
                self.failed(run, done.stopped, "NOT TRAINED")
            elif running is not None and run is not running:  # done or not begun: again
                clocks.forget(run)
                self.pending.appendleft([run])
            elif len(runs) == 1 or run is running:
                self.failed(run, f"its training ran past its limit of {run['limit']:.0f} s "
                            f"({run['limit_why']}); {stopped}", "TIMED OUT")  # fmt: skip
            else:
                total = sum(r["limit"] for r in runs)
                self.failed(run, f"its job of {len(runs)} runs ran past their limits "
                            f"together, {total:.0f} s; {stopped}", "TIMED OUT")  # fmt: skip
        return whole

    def _recover(self, broke: list) -> None:
        """Submissions the infrastructure failed go again (see :meth:`lost`); a broken pool
        takes every run in flight with it and is started anew."""
        held = [r for runs, _ in broke for r in runs]
        restart = any(isinstance(exc, self.engine.broken) for _, exc in broke)
        if restart:  # a dead process takes its pool with it, and every run in flight
            held += [r for runs in self.flight.values() for r in runs]
            self.flight.clear()
        if len(held) > 1 or self.flight:  # a worker that died may have held others too
            self.report(f"a worker was lost; each run it may have held is tried alone "
                        f"next: {', '.join(r['label'] for r in held)}")  # fmt: skip
            self.suspects |= {r["key"] for r in held}
        for runs, exc in broke:
            self.lost(runs, exc)
        if restart:
            self.lost(
                [r for r in held if not any(r in runs for runs, _ in broke)],
                RuntimeError("its pool broke when another worker died"),
            )
            self._restart()
