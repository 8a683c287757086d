"""A run's limit counts only its own time in its worker: not the time it waits behind other
runs or for a pool to start, and a pool restarted for one hung run keeps the others' clocks
(:mod:`claimbook.runs.clock`). Real processes on each engine; toy runs keep it quick."""

from __future__ import annotations

import os
import time

import pytest
from claimbook.runs import executors
from claimbook.runs.cache import RunCache, Training
from claimbook.runs.clock import shared
from claimbook.runs.pool import plan, train_missing

from tests.unit.clock_fns import hangs, naps


def train(tmp_path, runs, recorded, engine, workers, timeout):
    cache, lines = RunCache(tmp_path / "cache", report=[].append), []
    todo = plan(cache, runs, recorded, 60.0)
    begin = time.monotonic()
    done = train_missing(cache, todo, workers, lambda s: lines.append((time.time(), s)),
                         engine, timeout)  # fmt: skip
    return done, lines, time.monotonic() - begin


@pytest.mark.parametrize("engine", executors.names())
def test_runs_waiting_for_slow_workers_and_each_other_never_count_it(engine, tmp_path, monkeypatch):
    # each worker takes 3 s to start; 8 runs of 0.2 s, two at a time, each a limit of 2 s
    monkeypatch.setenv("CLOCK_FNS_SLOW_IMPORT", f"{os.getpid()}:3")
    runs = {(Training(naps, {"x": x, "sleep": 0.2}), 0) for x in range(8)}
    recorded = {t.label(0): 0.2 for t, _ in runs}
    done, lines, took = train(tmp_path, runs, recorded, engine, 2, (10, 2))
    assert not done.failed and len(done.computed) == 8, lines
    assert took > 3 + 2  # the whole training outlasted every limit; no run did
    assert not list((tmp_path / "cache").glob(".started-*"))  # the stamps are gone


def test_a_pool_restarted_for_a_hung_run_keeps_the_clocks_of_the_others(tmp_path):
    # four hung runs, two at a time on the local pool: each stop kills the pool, and the
    # long run goes again with it; it keeps the seconds it ran each time, so it is stopped
    # after 4 s of its own time (the old way: 3 x 1 s + 4 s), late only by the time the
    # new pools took to start
    limits = {0: 4.0, 1: 1.0, 2: 1.0, 3: 1.0}
    trainings = {x: Training(hangs, {"x": x, "sleep": 300, "dir": str(tmp_path)}) for x in limits}
    recorded = {trainings[x].label(0): limit for x, limit in limits.items()}
    runs = {(t, 0) for t in trainings.values()}
    done, lines, _ = train(tmp_path, runs, recorded, "local", 2, (1, 0.5))
    assert not done.computed and len(done.failed) == 4, lines
    assert all(why.startswith("its training ran past its limit") for why in done.failed.values())
    stops = sorted(t for t, line in lines if "TIMED OUT" in line)  # each stop kills the pool
    for x, limit in limits.items():
        label = trainings[x].label(0)
        stopped = next(t for t, line in lines if "TIMED OUT" in line and label in line)
        tries = [float(t) for t in (tmp_path / f"{x}.log").read_text().split()]
        ends = [next(s for s in stops if s >= start) for start in tries]  # with the pool
        own = sum(end - start for start, end in zip(tries, ends, strict=True))
        slack = 0.25 * len(tries) + 0.5  # each stop a little after its limit, under load
        assert limit - 0.5 * len(tries) <= own <= limit + slack, (x, tries, stops, lines)
        # the time it waited for the pools to start again
        waited = sum(start - end for start, end in zip(tries[1:], ends, strict=False))
        assert stopped - tries[0] <= limit + waited + slack, (x, tries, stops)
    assert len((tmp_path / "0.log").read_text().split()) >= 3, lines  # it went again


def test_a_job_stopped_for_its_hung_run_trains_its_other_runs_again(tmp_path):
    pytest.importorskip("submitit")
    # one submitit job holds all three runs; the second hangs: only it fails, the third
    # (never begun) trains in a job of its own, and so does the first (its answer was lost)
    sleeps, expected = {0: 0.3, 1: 300, 2: 0.2}, {0: 0.6, 1: 0.5, 2: 0.2}  # in this order
    trainings = {x: Training(hangs, {"x": x, "sleep": s, "dir": str(tmp_path)})
                 for x, s in sleeps.items()}  # fmt: skip
    recorded = {trainings[x].label(0): s for x, s in expected.items()}
    runs = {(t, 0) for t in trainings.values()}
    done, lines, _ = train(tmp_path, runs, recorded, "submitit-local", 1, (4, 2))
    assert sorted(done.computed) == sorted([trainings[0].label(0), trainings[2].label(0)])
    assert list(done.failed) == [trainings[1].label(0)], lines
    assert done.failed[trainings[1].label(0)].startswith("its training ran past its limit of 2 s")
    tries = {x: len((tmp_path / f"{x}.log").read_text().split()) for x in sleeps}
    assert tries == {0: 2, 1: 1, 2: 1}, lines  # the first in the job and again; no retry


class Workers:
    """A Dask client's stand-in: what each worker answers to ``client.run``."""

    def __init__(self, *answers):
        self.answers = answers

    def run(self, fn, *args):
        if not self.answers:
            raise OSError("no workers")
        return {
            f"tcp://w{i}": a if a is not None else fn(*args) for i, a in enumerate(self.answers)
        }


def test_a_remote_cluster_stamps_only_where_every_worker_sees_the_folder(tmp_path):
    assert shared(Workers(None, None), tmp_path)  # the file made there exists for both
    assert not shared(Workers(None, False), tmp_path)  # one worker sees another disk
    assert not shared(Workers(), tmp_path)  # no answer, no stamps
    assert not list(tmp_path.iterdir())  # the probe is gone
