"""On-disk cache of expensive experiment runs, keyed by what can change their result.

A run is ``fn(config, seed)`` returning plain JSON data. Its key hashes the
function's name, the config, the seed, the source of the module that defines
``fn`` and of every module of its package it imports, and the torch version;
so ten claims about one training run
train it once, in this run of the suite and the next, and any edit to the
experiments' code recomputes.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import filelock
import torch

from claimbook.atomic import write_json


def _local_imports(module_name: str, package: str) -> set[str]:
    """Modules of ``package`` that ``module_name`` imports, read from its source."""
    spec = importlib.util.find_spec(module_name)
    tree = ast.parse(Path(spec.origin).read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(n for n in names if n == package or n.startswith(package + "."))
    return found


def source_hash(module_name: str) -> str:
    """sha256 of ``module_name``'s source and of its package's modules it imports, transitively.

    Editing the recall task then leaves the language model's runs cached.
    """
    package = module_name.split(".")[0]
    seen, todo = set(), [module_name]
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(_local_imports(name, package) - seen)
    digest = hashlib.sha256()
    for name in sorted(seen):
        digest.update(name.encode())
        digest.update(Path(importlib.util.find_spec(name).origin).read_bytes())
    return digest.hexdigest()


def _plain(config) -> object:
    return dataclasses.asdict(config) if dataclasses.is_dataclass(config) else config


def describe(fn: Callable, config, seed: int) -> str:
    """A short human label of a run: the mixer and every setting off its default.

    E.g. ``train_lm(attention, 4 heads, 2 kv) seed 1`` or
    ``train_lm(attention, 4 heads, 4 kv, norm=layer) seed 0``.
    """
    parts = []
    if dataclasses.is_dataclass(config):
        for f in dataclasses.fields(config):
            value = getattr(config, f.name)
            if dataclasses.is_dataclass(value) and hasattr(value, "kind"):
                parts.append(value.kind)
                if value.kind == "attention":
                    parts.append(f"{value.n_heads} heads, {value.n_kv_heads} kv")
            elif f.default is dataclasses.MISSING or value != f.default:
                parts.append(f"{f.name}={value}")
    return f"{fn.__name__}({', '.join(parts)}) seed {seed}"


class RunCache:
    """Computes each (fn, config, seed, code) once and keeps its result on disk.

    Args:
        directory: where entries live, one JSON file per key.
        report: called with one line of progress (computing, read, recomputed).
        enabled: False recomputes every run (results are still written).
    """

    def __init__(self, directory: Path, report: Callable[[str], None] = print, enabled=True):
        self.directory = Path(directory)
        self.report = report
        self.enabled = enabled
        self.computed = 0
        self.read = 0
        self._code_hashes: dict[str, str] = {}

    def key(self, fn: Callable, config, seed: int) -> str:
        """The entry's sha256 key (hex)."""
        module = fn.__module__
        if module not in self._code_hashes:
            self._code_hashes[module] = source_hash(module)
        payload = {
            "fn": f"{module}.{fn.__qualname__}",
            "config": _plain(config),
            "seed": seed,
            "code": self._code_hashes[module],
            "torch": torch.__version__,
            "python": sys.version_info[:2],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def __call__(self, fn: Callable, config, seed: int) -> dict:
        """Return ``fn(config, seed)``, from the cache when an intact entry exists."""
        key = self.key(fn, config, seed)
        path = self.directory / fn.__name__ / f"{key[:32]}.json"
        label = describe(fn, config, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(str(path) + ".lock"):
            if self.enabled and path.exists():
                try:
                    entry = json.loads(path.read_text())
                    if entry.get("key") == key:
                        self.read += 1
                        self.report(f"{label}: read from cache")
                        return entry["result"]
                    self.report(f"{label}: cache entry {path.name} has another key; recomputing")
                except (json.JSONDecodeError, KeyError, UnicodeDecodeError) as exc:
                    self.report(f"{label}: cache entry {path.name} is corrupt ({exc}); recomputing")
            self.report(f"{label}: computing ...")
            start = time.perf_counter()
            result = fn(config, seed)
            seconds = time.perf_counter() - start
            write_json(path, {"key": key, "label": label, "seconds": seconds, "result": result})
            self.computed += 1
            self.report(f"{label}: computed in {seconds:.1f} s")
            return result
