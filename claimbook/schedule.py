"""Which training runs a session needs, training them on every core, and shards.

A claim declares its training runs (``@claim(trains=[...])``); an instance of
the test needs each of them at its ``seed`` (or at every seed of the session
when it takes ``seeds``). Before the first test, the runs not yet cached are
trained in a pool of one-thread processes, longest first; the tests then read
them. Shards split the suite so that every claim instance reading a run lands
in the shard that trains it.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

from claimbook.cache import RunCache, Training

Run = tuple[Training, int]  # a training and its seed


def available_cores() -> int:
    """Cores this process may use (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def instance_runs(trains: Iterable[Training], params: dict, fixtures: Iterable[str], seeds) -> set:
    """The (Training, seed) runs one test instance reads.

    Raises:
        ValueError: trainings are declared but the test takes neither ``seed`` nor ``seeds``.
    """
    trains = list(trains)
    if not trains:
        return set()
    if "seed" in params:
        run_seeds = [params["seed"]]
    elif "seeds" in fixtures:
        run_seeds = list(seeds)
    else:
        raise ValueError("declares trains= but takes neither 'seed' nor 'seeds'")
    return {(t, s) for t in trains for s in run_seeds}


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)  # one thread per process: cores are shared out by processes


def _train_one(directory: str, enabled: bool, training: Training, seed: int) -> float | None:
    cache = RunCache(directory, report=lambda _: None, enabled=enabled)
    _, seconds = cache.get(training.fn, training.config, seed)
    return seconds


@dataclass
class TrainingReport:
    """What :func:`train_missing` did: runs computed (label -> seconds), processes, wall."""

    computed: dict[str, float] = field(default_factory=dict)
    workers: int = 0
    wall_s: float = 0.0


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
    done = TrainingReport()
    todo, unkeyed = [], {}
    for run in runs:
        try:
            if not cache.cached(run[0].fn, run[0].config, run[1]):
                todo.append(run)
        except Exception as exc:  # e.g. a missing corpus: each test reading the run says why
            unkeyed.setdefault(f"{exc.__class__.__name__}: {exc}", []).append(run)
    for why, skipped in unkeyed.items():
        report(f"{len(skipped)} runs not trained: {why.splitlines()[0]} (their claims will error)")
    todo.sort(key=lambda r: (r[0].label(), r[1]))
    if not todo:
        return done
    last = {}
    for fn in {t.fn for t, _ in todo}:
        last.update(cache.last_seconds(fn))
    todo.sort(key=lambda r: -last.get(r[0].label(r[1]), 0.0))
    done.workers = min(workers, len(todo))
    report(f"training {len(todo)} runs in {done.workers} processes (one thread each) ...")
    context = multiprocessing.get_context("spawn")  # no fork of a threaded torch
    with ProcessPoolExecutor(done.workers, mp_context=context, initializer=_init_worker) as pool:
        futures = {
            pool.submit(_train_one, str(cache.directory), cache.enabled, t, s): (t, s)
            for t, s in todo
        }
        for n, future in enumerate(as_completed(futures), 1):
            training, seed = futures[future]
            label = training.label(seed)
            key = cache.key(training.fn, training.config, seed)
            try:
                seconds = future.result()
            except Exception as exc:  # the claims that read this run are errors, not the session
                cache.failed[key] = f"{exc.__class__.__name__}: {exc}"
                report(f"[{n}/{len(todo)} runs] {label}: CRASHED ({cache.failed[key][:300]})")
                continue
            cache.fresh.add(key)
            if seconds is None:
                report(f"[{n}/{len(todo)} runs] {label}: trained by another session, read")
                continue
            done.computed[label] = seconds
            report(f"[{n}/{len(todo)} runs] {label}: computed in {seconds:.0f} s")
    cache.computed += len(done.computed)
    done.wall_s = time.perf_counter() - start
    return done


# Shards -------------------------------------------------------------------------------------

RUN_WEIGHT = 60  # a training run costs about a minute on one core; a claim test about a second


def shard_of(instances: dict[str, set], count: int) -> dict[str, int]:
    """Assign each instance (node id -> the runs it reads) to one of ``count`` shards (0-based).

    Instances that share a run are one group, and a group stays in one shard, so no
    run is trained by two shards. Groups go, largest first, to the least loaded shard
    (load = RUN_WEIGHT per run + 1 per instance; ties to the lower index). The result
    depends only on the collected tests and seeds, so every shard computes the same split.
    """
    parent = {node: node for node in instances}

    def find(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    owner: dict = {}
    for node, runs in instances.items():
        for run in runs:
            key = (run[0].ident, run[1])
            if key in owner:
                parent[find(node)] = find(owner[key])
            else:
                owner[key] = node
    groups: dict[str, list[str]] = {}
    for node in instances:  # collection order, so the first member names the group
        groups.setdefault(find(node), []).append(node)

    def weight(members: list[str]) -> int:
        runs = {(r[0].ident, r[1]) for m in members for r in instances[m]}
        return RUN_WEIGHT * len(runs) + len(members)

    order = sorted(groups.values(), key=lambda members: -weight(members))  # stable
    load = [0] * count
    assigned = {}
    for members in order:
        target = min(range(count), key=lambda i: (load[i], i))
        load[target] += weight(members)
        assigned.update(dict.fromkeys(members, target))
    return assigned


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` (1-based) -> (I, N).

    Raises:
        ValueError: not of the form I/N with 1 <= I <= N.
    """
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard expects I/N, e.g. 2/3, got {text!r}") from None
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text}: I must be between 1 and N")
    return index, count
