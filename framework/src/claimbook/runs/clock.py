"""Each run's clock: its limit counts only its own time in its worker.

The driver sends each run with the path of a stamp (:meth:`Clocks.send`); the worker
makes the stamp as the run starts, and another as it ends (:func:`stamp`, in
:func:`claimbook.runs.remote.train`), and the driver, looking every ``POLL`` seconds,
starts the run's clock at the stamp's time (as far as it lies between two looks) and
stops it at the other. So the time a run waits behind others, in a Slurm queue or for a
pool and its imports to start never counts (on a loaded machine, that wait alone outlasted
short runs' limits), nor the time an engine takes to see that its job ended (submitit
looks once a second).

A run stopped only because its pool went down with another run (the local pool) keeps
the seconds it ran and goes on counting when it starts again: a hung run is stopped
after its limit of its own time however often the pool restarts, each restart adding only
the time the new pool takes to start. Any other try starts afresh: after a lost worker
(at most ``retries`` more), or a run of a job stopped for another run of it.

The stamps lie in a folder in the cache's, which the workers of every engine here see (a
Slurm job reads submitit's folder there too). Where the workers may not see it
(``Engine.stamps`` False: a factory's executor, a remote Dask cluster without the
folder), each limit counts from the submission. A submission with no run training for
``Engine.start_s`` seconds (none begun since it was sent, or one ended and the next did not
begin) is lost, and goes again as a lost worker's runs do: its worker hung while starting
or ending (a Slurm job may wait in its queue: never).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

POLL = 0.25  # seconds between looks for new stamps


def stamp(run: dict, end: bool = False) -> None:
    """In the worker: say that ``run`` starts now, or ends. A worker that cannot says
    nothing."""
    if run.get("stamp"):
        with contextlib.suppress(OSError):
            Path(run["stamp"] + (".end" if end else "")).touch()


def shared(client, folder: Path) -> bool:
    """Whether every worker of the Dask ``client`` sees ``folder`` (a file made there)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-") as probe:
            return all(client.run(os.path.exists, probe.name).values())
    except Exception:  # a worker that cannot answer cannot stamp either
        return False


class Clocks:
    """The clocks of the runs of one training (see the module); ``folder`` holds the
    stamps, None where the workers cannot make them."""

    def __init__(self, folder: Path | None, start_s: float = math.inf):
        self.folder, self.start_s = folder, start_s
        self.began: dict[str, float] = {}  # key -> when this try's start was seen
        self.ended: dict[str, float] = {}  # key -> when this try's end was seen
        self.spent: dict[str, float] = {}  # key -> seconds it ran in tries a restart ended
        self.sent = 0
        self.looked = -math.inf  # when the last look was (monotonic)

    def send(self, runs: list[dict]) -> list[dict]:
        """The runs as sent for one try: each with its submission time and a new stamp."""
        copies = []
        for run in runs:
            self.sent += 1
            stamp = None if self.folder is None else str(self.folder / str(self.sent))
            copies.append({**run, "sent": time.monotonic(), "stamp": stamp})
        return copies

    def look(self, flight: dict) -> bool:
        """Start (or stop) the clock of each run in ``flight`` whose stamp appeared, at the
        stamp's own time as far as it lies between this look and the last; True while a
        run with a limit may yet start (the driver looks again within ``POLL``)."""
        if self.folder is None:
            return False
        now, wall = time.monotonic(), time.time()
        since, self.looked = self.looked, now
        try:
            names = set(os.listdir(self.folder))
        except OSError:
            names = set()
        waiting = False
        for run in (run for runs in flight.values() for run in runs):
            for seen, name in ((self.began, run["stamp"]), (self.ended, run["stamp"] + ".end")):
                if Path(name).name in names and run["key"] not in seen:
                    age = 0.0  # a clock elsewhere (a file server's) moves it only that far
                    with contextlib.suppress(OSError):
                        age = wall - os.stat(name).st_mtime
                        os.unlink(name)  # seen: the next looks list less
                    seen[run["key"]] = min(now, max(since, run["sent"], now - age))
            waiting = waiting or (bool(run.get("limit")) and run["key"] not in self.began)
        return waiting

    def running(self, runs: list[dict]) -> dict | None:
        """The run of one submission that is training (one at a time), if any."""
        return next((r for r in runs if r["key"] in self.began and r["key"] not in self.ended),
                    None)  # fmt: skip

    def deadline(self, runs: list[dict]) -> float:
        """When one submission is overdue (monotonic; inf: never): its running run at its
        limit of its own time; none running, ``start_s`` after its last sign of life
        (submitted, a run ended); without stamps, all their limits from the submission."""
        if not all(r.get("limit") for r in runs):
            return math.inf
        run = self.running(runs)
        if run is not None:
            return self.began[run["key"]] + run["limit"] - self.spent.get(run["key"], 0.0)
        if self.folder is None:
            return runs[0]["sent"] + sum(r["limit"] for r in runs)
        ended = [self.ended[r["key"]] for r in runs if r["key"] in self.ended]
        return max([runs[0]["sent"], *ended]) + self.start_s

    def pause(self, runs: list[dict]) -> None:
        """One submission's pool went down under it: its running run keeps its seconds."""
        run = self.running(runs)
        for other in runs:
            if other is run:
                spent = time.monotonic() - self.began.pop(run["key"])
                self.spent[run["key"]] = self.spent.get(run["key"], 0.0) + spent
            else:
                self.forget(other)

    def forget(self, run: dict) -> None:
        """Its next try starts a clock afresh."""
        for clock in (self.began, self.ended, self.spent):
            clock.pop(run["key"], None)

    def close(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def start_clocks(directory: Path, stamps: bool, start_s: float) -> Clocks:
    """The clocks of one training, their stamps in a new folder in ``directory`` (removed
    by :meth:`Clocks.close`); where the workers cannot stamp or it cannot be made, none."""
    folder = None
    if stamps:
        with contextlib.suppress(OSError):
            Path(directory).mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix=".started-", dir=directory))
    return Clocks(folder, start_s)
