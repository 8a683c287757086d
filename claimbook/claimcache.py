"""Replaying a claim test whose inputs have not changed since it last ran.

A claim instance's outcome (passed, failed, skipped), message and measured
values are stored under a key that hashes everything that can change them: the
test's own code and the module around it (other tests excluded, so editing one
claim re-runs only that claim), the source of every project module it imports,
claimbook's measuring code, the seeds, the data checksums, the Python version,
the versions of the packages those modules import, and the machine (timing
claims measure it). An unchanged instance is replayed instead of executed; a
crash is never stored, so it runs again.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import platform
import sys
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from claimbook.atomic import write_json
from claimbook.cache import input_checksums, module_closure, source_hash

PROJECT_PACKAGES = ("experiments", "claimbook", "tests")
CLAIMBOOK_MODULES = ("claimbook.measure", "claimbook.cache", "claimbook.spec")


@cache
def machine() -> str:
    """The CPU model and core count (timings depend on them)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model} x {os.cpu_count()}"


@cache
def _distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()  # scans every installed package: once


def _third_party(modules: list[str]) -> dict[str, str]:
    """Installed versions of the non-project, non-stdlib packages ``modules`` import."""
    names = set()
    for name in modules:
        tree = _parse(Path(importlib.util.find_spec(name).origin).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    names -= set(sys.stdlib_module_names) | set(PROJECT_PACKAGES) | {"__future__"}
    distributions = _distributions()
    return {
        dist: importlib.metadata.version(dist)
        for name in sorted(names)
        for dist in distributions.get(name, [])
    }


@cache
def _module_context(module_name: str) -> tuple[str, str]:
    """Hash of the project modules a test module imports (itself excluded), their data
    checksums and the versions of the packages they import, as one string each."""
    modules = [
        m
        for m in module_closure(module_name, PROJECT_PACKAGES)
        if m != module_name and m.split(".")[0] in PROJECT_PACKAGES
    ]
    digest = hashlib.sha256()
    for name in modules + list(CLAIMBOOK_MODULES):
        digest.update(source_hash(name).encode())
    environment = {"inputs": input_checksums(modules), "packages": _third_party(modules)}
    return digest.hexdigest(), json.dumps(environment, sort_keys=True)


def test_context(function) -> str:
    """sha256 of the test's module with every *other* test function left out.

    Helpers, constants, imports, the test's decorators and body count; comments and
    blank lines do not (the AST is hashed).
    """
    return _context(Path(inspect.getsourcefile(function)).read_text(), function.__name__)


@cache
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


@cache  # keyed by the text: an edited file is hashed again; instances of one test share it
def _context(text: str, name: str) -> str:
    kept = [
        node
        for node in _parse(text).body
        if not (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name.startswith("test")
            and node.name != name
        )
    ]
    return hashlib.sha256(ast.dump(ast.Module(kept, [])).encode()).hexdigest()


class ClaimCache:
    """Stored outcomes of claim instances, one JSON file per key under ``directory``.

    Args:
        directory: e.g. ``.claimbook-cache/claims``.
        enabled: False executes every instance (``--no-cache``); outcomes are still stored.
    """

    def __init__(self, directory: Path, enabled: bool = True):
        self.directory = Path(directory)
        self.enabled = enabled
        self.problems: list[str] = []  # corrupt entries met, for the terminal summary

    def key(self, item, seeds: list[int]) -> str:
        """The key of one collected claim item (a pytest Function)."""
        code, environment = _module_context(item.function.__module__)
        payload = {
            "nodeid": item.nodeid,
            "test": test_context(item.function),
            "code": code,
            "environment": environment,
            "seeds": list(seeds) if "seeds" in item.fixturenames else None,
            "python": sys.version_info[:2],
            "machine": machine(),
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key[:32]}.json"

    def load(self, key: str) -> dict | None:
        """The stored outcome for ``key``, or None (absent, disabled, or corrupt: reported)."""
        if not self.enabled:
            return None
        path = self._path(key)
        try:
            entry = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            self.problems.append(f"claim cache entry {path} is corrupt ({exc}); ran the test")
            return None
        fields = ("key", "outcome", "message", "measures", "measured_at")
        if (
            not isinstance(entry, dict)
            or entry.get("key") != key
            or any(f not in entry for f in fields)
        ):
            self.problems.append(f"claim cache entry {path} is incomplete; ran the test")
            return None
        return entry

    def store(self, key: str, outcome: str, message: str, measures: list, seconds: float) -> None:
        """Keep one executed instance's outcome (never a crash: that one runs again)."""
        entry = {
            "key": key,
            "outcome": outcome,
            "message": message,
            "measures": measures,
            "seconds": seconds,
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_json(self._path(key), entry)
