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


def train_on(
    start: Callable[[], object],
    specs: list[dict],
    cache: RunCache,
    report: Callable[[str], None],
    retries: int = RETRIES,
) -> Trained:
    """Train ``specs`` (longest first already) on the engine ``start()`` returns."""
    begin = time.perf_counter()
    done = Trained()
    finished = 0

    def failed(run: dict, why: str, kind: str) -> None:
        nonlocal finished
        finished += 1
        crashed = kind in ("CRASHED", "TIMED OUT")  # it would only do it again in the next leg
        try:
            cache.record_failure(run["key"], run["label"], why, crashed=crashed)
        except DiskFullError as exc:  # the session stops, naming the disk; other errors raise
            done.stopped = done.stopped or f"{NOT_WRITTEN}: {exc}"
        cache.failed[run["key"]] = f"its training raised {why}" if kind == "CRASHED" else why
        done.failed[run["label"]] = why
        report(f"[{finished}/{len(specs)} runs] {run['label']}: {kind} ({why[:300]})")

    try:
        engine = start()
    except Exception as exc:  # no engine, no training: each claim reading a run says why
        for run in specs:
            failed(
                run, f"the engine could not start: {exc.__class__.__name__}: {exc}", "NOT TRAINED"
            )
        return done
    done.workers, done.engine = engine.capacity, engine.name
    clocks = start_clocks(cache.directory, engine.stamps, engine.start_s)
    by_key = {s["key"]: s for s in specs}
    estimates = {s["key"]: s.get("estimate", 0.0) for s in specs}
    if engine.bin_seconds:
        keys = [s["key"] for s in specs]
        bins = pack_runs(keys, estimates, engine.bin_seconds, engine.capacity)
        pending = deque([by_key[k] for k in keys] for keys in bins)
    else:
        pending = deque([s] for s in specs)
    attempts: dict[str, int] = {}

    def finish(run: dict, answer) -> None:
        nonlocal finished
        if not isinstance(answer, dict):
            answer = {"refused": f"the worker answered {type(answer).__name__}, not a dict"}
        if "entry" in answer:
            try:
                entry = answer["entry"]
                if entry["key"] != run["key"]:
                    raise ValueError(f"the entry of key {str(entry['key'])[:12]}")
                cache.put(run["training"].fn, entry)
            except (KeyError, TypeError, ValueError) as exc:
                answer = {"refused": f"its entry is malformed: {exc}"}
            except DiskFullError as exc:
                done.stopped = f"{NOT_WRITTEN}: {exc}"
                failed(run, done.stopped, "NOT WRITTEN")
                return
            else:
                finished += 1
                done.computed[run["label"]] = entry["seconds"]
                report(f"[{finished}/{len(specs)} runs] {run['label']}: computed in "
                       f"{entry['seconds']:.0f} s on {engine.name}")  # fmt: skip
                return
        if "crash" in answer:
            failed(run, str(answer["crash"]), "CRASHED")
        else:
            failed(run, f"the worker refused: {answer.get('refused')}", "REFUSED")

    def lost(runs: list[dict], exc: BaseException) -> None:
        for run in runs:
            clocks.forget(run)  # a new try, a new clock
            attempts[run["key"]] = attempts.get(run["key"], 0) + 1
            if attempts[run["key"]] <= retries:
                tries = f"try {attempts[run['key']] + 1} of {retries + 1}"
                report(f"{run['label']}: {exc.__class__.__name__} ({str(exc)[:200]}); "
                       f"submitting it again ({tries})")  # fmt: skip
                pending.appendleft([run])
                continue
            why = (f"the infrastructure lost it {retries + 1} times "
                   f"(last: {exc.__class__.__name__}: {str(exc)[:200]})")  # fmt: skip
            failed(run, why, "LOST")

    # after a pool broke, the runs it held are suspects: each is tried alone next, so the
    # one that kills its process is found, and the others train
    suspects: set[str] = set()
    flight: dict = {}  # future -> the runs it trains
    batched: set = set()  # futures of train_batch, which answer with a list

    def overdue(future) -> bool:
        """Stop a submission past its limit (or every one, the disk being full): its running
        run fails, its others go again; True when the engine went down with it (the others
        in flight go again too, uncounted)."""
        runs = flight.pop(future)
        batched.discard(future)
        running = clocks.running(runs)
        whole = bool(engine.stop and engine.stop(future))
        if not engine.stop:
            future.cancel()
        stopped = "its worker was stopped" if engine.stop else (
            f"{engine.name} offers no way to stop its worker")  # fmt: skip
        if running is None and clocks.folder is not None and not done.stopped:
            why = f"its worker showed no sign of it for {clocks.start_s:.0f} s"
            lost(runs, TimeoutError(why))  # it hung while starting or ending: go again
            return whole
        for run in runs:
            if done.stopped:
                failed(run, done.stopped, "NOT TRAINED")
            elif running is not None and run is not running:  # done or not begun: again
                clocks.forget(run)
                pending.appendleft([run])
            elif len(runs) == 1 or run is running:
                failed(run, f"its training ran past its limit of {run['limit']:.0f} s "
                       f"({run['limit_why']}); {stopped}", "TIMED OUT")  # fmt: skip
            else:
                total = sum(r["limit"] for r in runs)
                failed(run, f"its job of {len(runs)} runs ran past their limits together, "
                       f"{total:.0f} s; {stopped}", "TIMED OUT")  # fmt: skip
        return whole

    try:
        while pending or flight:
            broke = []
            if engine.array and pending and not flight and not suspects:  # one job array
                batches = list(pending)
                pending.clear()
                try:
                    batches = [clocks.send(runs) for runs in batches]
                    futures = engine.array(train_batch, batches)
                except Exception as exc:
                    broke += [(runs, exc) for runs in batches]
                else:
                    flight.update(zip(futures, batches, strict=True))
                    batched.update(futures)
            while not broke and pending and len(flight) < engine.capacity:
                solo = any(r["key"] in suspects for r in pending[0])
                if (solo and flight) or any(
                    r["key"] in suspects for runs in flight.values() for r in runs
                ):
                    break
                runs = clocks.send(pending.popleft())
                try:
                    if len(runs) == 1:
                        future = engine.executor.submit(train, runs[0])
                    else:
                        future = engine.executor.submit(train_batch, runs)
                        batched.add(future)
                except Exception as exc:  # a broken executor refuses new work
                    broke.append((runs, exc))
                    break
                flight[future] = runs
            waiting = clocks.look(flight)  # runs that started since: their clocks start
            soonest = min(map(clocks.deadline, flight.values()), default=math.inf)
            until = None if soonest == math.inf else max(0.0, soonest - time.monotonic())
            if waiting:
                until = POLL if until is None else min(until, POLL)
            ready = set()
            if flight and not broke:
                ready = wait(flight, timeout=until, return_when=FIRST_COMPLETED)[0]
            while ready:  # each future is dropped as soon as it is read: Dask keeps a result
                future = ready.pop()  # on its worker while the future lives, and retrains
                runs = flight.pop(future)  # the run if that worker dies later
                batch = future in batched
                batched.discard(future)
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
                    suspects.discard(run["key"])
                    finish(run, answer)
            if done.stopped:  # the disk is full: nothing more can be written
                while pending:
                    for run in pending.popleft():
                        failed(run, done.stopped, "NOT TRAINED")
            clocks.look(flight)  # a job's next run may have started as its last one ended
            now = time.monotonic()
            late = [f for f, runs in flight.items()
                    if done.stopped or clocks.deadline(runs) <= now]  # fmt: skip
            if any([overdue(f) for f in late]) and not done.stopped:  # the whole pool went
                for runs in flight.values():  # down: they go again, each keeping its clock
                    clocks.pause(runs)
                pending.extendleft(reversed(list(flight.values())))
                flight.clear()
                batched.clear()
                engine.close()
                engine = start()
            if broke:
                held = [r for runs, _ in broke for r in runs]
                restart = any(isinstance(exc, engine.broken) for _, exc in broke)
                if restart:  # a dead process takes its pool with it, and every run in flight
                    held += [r for runs in flight.values() for r in runs]
                    flight.clear()
                if len(held) > 1 or flight:  # a worker that died may have held others too
                    report(f"a worker was lost; each run it may have held is tried alone "
                           f"next: {', '.join(r['label'] for r in held)}")  # fmt: skip
                    suspects |= {r["key"] for r in held}
                for runs, exc in broke:
                    lost(runs, exc)
                if restart:
                    lost(
                        [r for r in held if not any(r in runs for runs, _ in broke)],
                        RuntimeError("its pool broke when another worker died"),
                    )
                    engine.close()
                    engine = start()
    finally:
        engine.close()
        clocks.close()
    cache.computed += len(done.computed)
    done.wall_s = time.perf_counter() - begin
    return done
