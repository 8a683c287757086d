"""On-disk cache of expensive experiment runs, keyed by what can change their result.

A run is ``fn(config, seed)`` returning plain JSON data. Its key hashes the
function's name, the config, the seed, the source of the module that defines
``fn`` and of every project module it imports (transitively, relative imports
included), the checksums of the data files those modules declare
(``run_inputs()``), the torch and Python versions, the machine class, the
devices torch sees and the environment variables that can change a result
(see :mod:`claimbook.runs.keys`). Entries carry a format version, their key and a
sha256 of their content, all checked on load: an entry that fails its checksum is named
and recomputed, never used; one without a checksum (an older claimbook's) is recomputed.
So ten claims about one training run train it once,
in this run of the suite and the next; editing a claim test trains nothing;
editing the recall task leaves the language model's runs cached.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from claimbook.declare.numbers import decode, encode
from claimbook.declare.training import Training, describe, plain_config
from claimbook.runs.keys import (
    devices,
    digest,
    environment,
    input_checksums,
    machine,
    module_closure,
    source_hash,
    torch_module,
)
from claimbook.storage.atomic import corrupted_line, seal_of, sealed, write_json
from claimbook.storage.durations import seconds_of

FORMAT = 2  # of a run entry: {format, key, label, seconds, result, checksum}


class UndeclaredRunError(RuntimeError):
    """A claim test asked for a training run its ``@claim(trains=...)`` does not declare."""


class RunCrashedError(RuntimeError):
    """The training run a claim reads was not trained this session: it crashed, or its
    engine could not start, refused or lost it (the claim is an error)."""


class RunMissingError(RuntimeError):
    """A session that trains nothing (``--claimbook-no-train``) found no entry for a run."""


class RunCache:
    """Computes each (fn, config, seed, code, data) once and keeps its result on disk.

    Args:
        directory: where entries live, one JSON file per key, under a folder per function.
        report: called with one line of progress (computing, read, recomputed).
        packages: the book's ``packages`` setting: their code is part of a run's key
            wherever they are installed (site-packages included).
        enabled: False recomputes every run once in this session (``--claimbook-no-cache``); a
            run computed earlier in the same session is read, never computed twice.
        trains: False (``--claimbook-no-train``, and a leg's claims) computes nothing: a run
            without an entry raises :class:`RunMissingError`, naming why when a training
            session left a crash record for it.

    Attributes:
        computed, read: runs computed and cache reads in this process.
        declared: set by the plugin around each claim test: the (Training, seed) pairs it
            may ask for; None allows anything (unit tests, scripts).
    """

    def __init__(
        self,
        directory: Path,
        report: Callable[[str], None] = print,
        enabled=True,
        packages: tuple[str, ...] = (),
        trains: bool = True,
    ):
        self.directory = Path(directory)
        self.packages = tuple(packages)  # the book's code, hashed wherever it is installed
        self.report = report
        self.enabled = enabled
        self.trains = trains
        self.computed = 0
        self.read = 0
        self.fresh: set[str] = set()  # keys computed in this session
        self.failed: dict[str, str] = {}  # keys whose training crashed in a worker: the error
        self.declared: set[tuple[Training, int]] | None = None
        self._code: dict[str, tuple[str, dict]] = {}
        self._where: dict | None = None  # torch, python, machine, devices, environment: once
        self._said: set[str] = set()  # lines about bad entries, each printed once

    def key(self, fn: Callable, config, seed: int) -> str:
        """The entry's sha256 key (hex): of :meth:`payload`."""
        return digest(self.payload(fn, config, seed))

    def payload(self, fn: Callable, config, seed: int) -> dict:
        """Everything the key hashes: the run, its code and data, and where it runs."""
        module = fn.__module__
        if module not in self._code:
            modules = module_closure(module, self.packages)
            self._code[module] = (source_hash(module, self.packages), input_checksums(modules))
        code, inputs = self._code[module]
        if self._where is None:
            torch = torch_module()  # here, not at import: render and gate never load torch

            self._where = {
                "torch": torch.__version__ if torch else None,
                "python": sys.version_info[:2],
                "machine": machine(),
                "devices": devices(),
                "environment": environment(),
            }

        payload = {
            "format": FORMAT,
            "fn": f"{module}.{fn.__qualname__}",
            "config": plain_config(config),
            "seed": seed,
            "code": code,
            **self._where,
        }
        if inputs:  # only runs that read data files carry their checksums
            payload["inputs"] = inputs
        return json.loads(json.dumps(payload))  # plain JSON: tuples as lists, as hashed

    def path(self, fn: Callable, key: str) -> Path:
        return self.directory / fn.__name__ / f"{key[:32]}.json"

    def _say_once(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self.report(line)

    def cached(self, fn: Callable, config, seed: int) -> bool:
        """Whether an intact entry would be read (no computing)."""
        key = self.key(fn, config, seed)
        if not self.enabled and key not in self.fresh:
            return False
        label = describe(fn, config, seed)
        return _read(self.path(fn, key), key, self._say_once, label) is not None

    def has_all(self, runs) -> bool:
        """Whether every (Training, seed) of ``runs`` has an intact entry here (False when a
        key cannot be computed, e.g. without the corpus: the test itself will say why)."""
        try:
            return all(self.cached(t.fn, t.config, seed) for t, seed in runs)
        except Exception:
            return False

    def __call__(self, fn: Callable, config, seed: int) -> dict:
        """Return ``fn(config, seed)``, from the cache when an intact entry exists.

        Raises:
            UndeclaredRunError: inside a claim test, for a run its claim does not declare.
        """
        if self.declared is not None and (Training(fn, config), seed) not in self.declared:
            declared = sorted(t.label(s) for t, s in self.declared) or ["nothing"]
            raise UndeclaredRunError(
                f"{describe(fn, config, seed)} is not declared by this claim; add it to "
                f"@claim(trains=...) (it declares: {', '.join(declared)})"
            )
        crash = self.failed and self.failed.get(self.key(fn, config, seed))
        if crash:
            raise RunCrashedError(f"{describe(fn, config, seed)} was not trained: {crash}")
        return self.get(fn, config, seed)[0]

    def get(self, fn: Callable, config, seed: int) -> tuple[dict, float | None]:
        """``(result, seconds)``: seconds it took to compute now, None when it was read."""
        key = self.key(fn, config, seed)
        path = self.path(fn, key)
        label = describe(fn, config, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        # one lock per key: a second process that needs the run waits for it, then reads it
        import filelock  # here: only a run that trains takes the lock

        with filelock.FileLock(str(path) + ".lock"):
            if (self.enabled or key in self.fresh) and path.exists():
                entry = _read(path, key, self._say_once, label)
                if entry is not None:
                    self.read += 1  # counted, not printed: the summary gives the total
                    return decode(entry["result"]), None
            if not self.trains:
                failure = self.failure_of(key)
                why = f"its training failed: {failure}" if failure else (
                    "no training session put it there (was every training leg's cache "
                    "folder merged into this one?)")  # fmt: skip
                raise RunMissingError(  # the reason first: summaries cut long lines
                    f"{label} (key {key[:12]}) is missing: {why}; it is not in the cache "
                    f"{self.directory}, and this session trains nothing "
                    f"(--claimbook-no-train, or a training leg's claims)"
                )
            self.report(f"{label}: computing ...")
            start = time.perf_counter()
            result = fn(config, seed)
            seconds = time.perf_counter() - start
            entry = {"format": FORMAT, "key": key, "label": label, "seconds": seconds}
            write_json(path, sealed({**entry, "result": encode(result)}))
            self.computed += 1
            self.fresh.add(key)
            self.report(f"{label}: computed in {seconds:.1f} s")
            return result, seconds

    def put(self, fn: Callable, entry: dict) -> None:
        """Write an entry a worker returned (``{format, key, label, seconds, result}``, its
        result encoded) atomically; the driver is the only writer, so no lock is needed."""
        if entry.get("format") != FORMAT or "result" not in entry:
            raise ValueError(f"not a run entry of format {FORMAT}: {sorted(entry)}")
        if "checksum" in entry and seal_of(entry) != "intact":
            raise ValueError("its checksum does not match its content")
        write_json(self.path(fn, entry["key"]), sealed(entry))
        self.fresh.add(entry["key"])

    def record_failure(self, key: str, label: str, why: str, crashed: bool = True) -> None:
        """Note why a run's training failed: it raised (``crashed``), or the infrastructure
        lost it, refused it or could not start. Never an entry, so a later session trains it
        again; a session that trains nothing names it as the reason the run is missing."""
        write_json(self.directory / "crashes" / f"{key[:32]}.json",
                   {"key": key, "label": label, "crash": why, "crashed": crashed})  # fmt: skip

    def failure_of(self, key: str, crashes_only: bool = False) -> str:
        """Why a training session recorded that ``key`` failed, or "" (with
        ``crashes_only``, only when the training itself raised)."""
        try:
            record = json.loads((self.directory / "crashes" / f"{key[:32]}.json").read_text())
        except (OSError, ValueError):
            return ""
        if record.get("key") != key or (crashes_only and not record.get("crashed", True)):
            return ""
        return record.get("crash", "")

    def last_seconds(self, fn: Callable) -> dict[str, float]:
        """Seconds each earlier entry of ``fn`` took, by label (to schedule long runs first)."""
        return seconds_of(sorted((self.directory / fn.__name__).glob("*.json")))


def _read(
    path: Path, key: str, report: Callable[[str], None] = lambda _: None, label: str = ""
) -> dict | None:
    """The entry at ``path`` if it is intact (its checksum matches) and holds ``key``; a bad
    one is reported and never returned."""
    try:
        entry = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        report(f"{label}: cache entry {path.name} is corrupt ({exc}); recomputing")
        return None
    seal = seal_of(entry)
    if seal == "corrupted":
        report(corrupted_line(path))
        return None
    if (
        not isinstance(entry, dict)
        or entry.get("format") != FORMAT
        or entry.get("key") != key
        or "result" not in entry
    ):
        report(f"{label}: cache entry {path.name} is incomplete or has another key; recomputing")
        return None
    if seal == "unsealed":
        report(f"{label}: cache entry {path.name} has no checksum (an older claimbook wrote it); "
               "recomputing")  # fmt: skip
        return None
    return entry
