"""Phase 1: plan the training runs a session needs and the cache lacks, and train them.

The plan names each missing run by its cache key, with its expected seconds (its
recorded duration, :func:`claimbook.runs.plan.estimate`), longest first; it depends only
on the runs, the cache and the recorded durations, never on the process or its hash
seed. A part ``(I, N)`` keeps the I-th of N parts of near-equal expected seconds (a CI
leg's share, :func:`claimbook.runs.plan.split_runs`). The runs are trained on the engine
``--claimbook-train-on`` names (:mod:`claimbook.runs.executors`, by default a pool of
one-thread processes on every core) by :class:`claimbook.runs.distribute.Driver`.
Every engine's workers end with the driver, on SIGTERM and on SIGKILL
(:mod:`claimbook.runs.lifeline`). Each run has a limit, ``factor`` times its expected
seconds and at least ``floor`` (:func:`limits`), of its own time (from its start in its
worker, :mod:`claimbook.runs.clock`): a run still training then is stopped and is an error
of the claims that read it (:class:`claimbook.runs.distribute.Driver`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from claimbook.declare.training import Training
from claimbook.runs.cache import RunCache
from claimbook.runs.distribute import Driver, Trained
from claimbook.runs.executors import executor
from claimbook.runs.keys import digest
from claimbook.runs.lifeline import sigterm_stops_training
from claimbook.runs.plan import estimate, longest_first, split_runs
from claimbook.runs.remote import spec

Run = tuple[Training, int]  # a training and its seed
FACTOR, FLOOR = 10.0, 60.0  # a run's limit: 10 times its expected seconds, at least 60 s


@dataclass
class Plan:
    """The runs to train, longest first (specs with their ``estimate``), and the runs
    whose key could not be computed (why -> runs: each claim reading one says why)."""

    specs: list[dict] = field(default_factory=list)
    unkeyed: dict[str, list[Run]] = field(default_factory=dict)
    missing: int = 0  # runs the cache lacks, in every part
    failed: int = 0  # left out of a part: an earlier leg recorded their failure
    cut: dict | None = None  # a part's: digests of the missing runs and of their split

    @property
    def seconds(self) -> float:
        return sum(s["estimate"] for s in self.specs)


def plan(
    cache: RunCache,
    runs: Iterable[Run],
    recorded: dict[str, float],
    default_s: float,
    part: tuple[int, int] | None = None,
) -> Plan:
    """The runs of ``runs`` that ``cache`` lacks, longest first; only part I of N if given.

    A part (a CI leg) leaves out the runs whose training an earlier leg recorded as crashed
    in this cache (counted in ``Plan.failed``): the claims phase names the crash, and
    another round would only repeat it. A run the infrastructure failed is planned again.
    """
    found = Plan()
    specs, last = {}, {}
    for training, seed in runs:
        try:
            if not cache.cached(training.fn, training.config, seed):
                run = spec(cache, training, seed)
                if part is not None and cache.failure_of(run["key"], crashes_only=True):
                    found.failed += 1
                    continue
                if training.fn not in last:  # the cache's own entries, then the file
                    last[training.fn] = {**recorded, **cache.last_seconds(training.fn)}
                run["estimate"] = estimate(run["label"], training.fn.__name__,
                                           last[training.fn], default_s)  # fmt: skip
                specs[run["key"]] = run
        except Exception as exc:  # e.g. a missing corpus: each test reading the run says why
            found.unkeyed.setdefault(f"{exc.__class__.__name__}: {exc}", []).append(
                (training, seed)
            )
    seconds = {k: s["estimate"] for k, s in specs.items()}
    found.missing = len(specs)
    names = {k: s["label"] for k, s in specs.items()}
    keys = longest_first(specs, seconds, names)
    if part is not None:
        index, count = part
        parts = split_runs(keys, seconds, count, names)
        found.cut = {"missing": digest(sorted(specs)), "plan": digest(parts)}
        keys = longest_first(parts[index - 1], seconds, names)
    found.specs = [specs[k] for k in keys]
    return found


def limits(specs: list[dict], factor: float = FACTOR, floor: float = FLOOR) -> None:
    """Give each spec its ``limit`` (seconds) and ``limit_why``; a factor of 0: none."""
    for run in specs:
        if factor > 0:
            run["limit"] = max(floor, factor * run["estimate"])
            run["limit_why"] = (f"{factor:g} times the {run['estimate']:.1f} s it is expected "
                                f"to take, at least {floor:g} s")  # fmt: skip


def train_missing(
    cache: RunCache,
    todo: Plan,
    workers: int,
    report: Callable[[str], None],
    engine: str = "local",
    timeout: tuple[float, float] = (FACTOR, FLOOR),
) -> Trained:
    """Train the plan's runs on ``engine`` with ``workers`` slots (see the module);
    ``timeout`` is (factor, floor) of each run's limit."""
    for why, skipped in todo.unkeyed.items():
        report(f"{len(skipped)} runs not trained: {why.splitlines()[0]} (their claims will error)")
    if not todo.specs:
        return Trained(engine=engine)
    slots = min(workers, len(todo.specs))
    limits(todo.specs, *timeout)
    report(f"training {len(todo.specs)} runs (about {todo.seconds:.0f} CPU-s expected from the "
           "times this cache recorded, else the committed durations file) on "
           f"{engine}, {slots} at once, one thread each ...")  # fmt: skip
    folder = Path(cache.directory)
    with sigterm_stops_training():
        return Driver(lambda: executor(engine, slots, folder), todo.specs, cache, report).run()
