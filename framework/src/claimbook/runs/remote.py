"""One training run as plain data, and the function that trains it on any worker.

A :func:`spec` is what the driver sends: the training, its seed, the cache key the
driver computed and the payload behind it. :func:`train` runs on the worker (a local
process, a Dask worker, a Slurm job): it computes the key again from its own code, data,
torch and environment and refuses to train when it differs, naming the parts that differ;
otherwise it trains with one thread and returns the entry, which the driver writes into
its cache. The worker writes nothing, so it needs no shared disk and no lock.

The answer is always a dict, so the driver tells the three outcomes apart on any engine:
``{"entry": ...}``, ``{"crash": "..."}`` (the training raised: never retried) or
``{"refused": "..."}`` (the worker's code differs). Anything raised by ``future.result()``
instead is the infrastructure's failure (a lost worker, a pre-empted job): retried.
"""

from __future__ import annotations

import socket
import time

from claimbook.declare.numbers import encode
from claimbook.declare.training import Training
from claimbook.runs.cache import FORMAT, RunCache
from claimbook.runs.clock import stamp
from claimbook.runs.keys import digest, torch_module


def spec(cache: RunCache, training: Training, seed: int) -> dict:
    """What a worker needs to train ``training`` at ``seed`` and prove it is the same run."""
    payload = cache.payload(training.fn, training.config, seed)
    return {"training": training, "seed": seed, "key": digest(payload), "payload": payload,
            "label": training.label(seed), "packages": cache.packages}  # fmt: skip


def differences(mine: dict, theirs: dict, prefix: str = "") -> list[str]:
    """The payload parts that differ, as dotted names (``environment.OMP_NUM_THREADS``)."""
    found = []
    for name in sorted(set(mine) | set(theirs)):
        a, b = mine.get(name), theirs.get(name)
        if isinstance(a, dict) and isinstance(b, dict):
            found += differences(a, b, f"{prefix}{name}.")
        elif a != b:
            found.append(f"{prefix}{name} ({b!r} on the driver, {a!r} here)")
    return found


def train(run: dict) -> dict:
    """Train one :func:`spec` here, with one thread; see the module's docstring. Its clock
    runs from its start to its end here (:mod:`claimbook.runs.clock`): the pool's start
    and its imports before, and the answer's way back after, are not its own."""
    torch = torch_module()
    if torch is not None:  # one thread per process: cores are shared out by processes
        torch.set_num_threads(1)
    stamp(run)
    try:
        return _train(run)
    finally:
        stamp(run, end=True)


def _train(run: dict) -> dict:
    training, seed = run["training"], run["seed"]
    local = RunCache(".", report=lambda _: None, packages=run["packages"])  # keys only
    payload = local.payload(training.fn, training.config, seed)
    if digest(payload) != run["key"]:
        parts = "; ".join(differences(payload, run["payload"]))
        return {"refused": f"{socket.gethostname()} would train another run: {parts}"}
    start = time.perf_counter()
    try:
        result = training.fn(training.config, seed)
    except Exception as exc:
        return {"crash": f"{exc.__class__.__name__}: {exc}"}
    seconds = time.perf_counter() - start
    entry = {"format": FORMAT, "key": run["key"], "label": run["label"], "seconds": seconds,
             "host": socket.gethostname(), "result": encode(result)}  # fmt: skip
    return {"entry": entry}


def train_batch(runs: list[dict]) -> list[dict]:
    """Train several specs one after another (a Slurm job holds a bin of runs)."""
    return [train(run) for run in runs]
