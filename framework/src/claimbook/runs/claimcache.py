"""Replaying a claim test whose inputs have not changed since it last ran.

A claim instance's outcome (passed or failed), message and measured values are
stored under a key that hashes everything that can change them:

- the test's own code and the module around it, as an AST (other test functions
  excluded, so editing one claim re-executes only that claim; comments do not count);
- every other Python file of the project, conftest files and helpers included, the
  packages the book's ``packages`` setting names (wherever they are installed), and
  claimbook itself (conservative: a dynamic import is covered too);
- nothing of where the project lies: files are hashed by their content and their path
  inside the project (or inside claimbook's package), the test by its node id (relative to
  the rootdir), data and texts by checksum, and no mtime counts; so a clone at another
  path, given the claim cache, replays every unchanged instance;
- the seeds (for tests about all seeds), the data checksums, the Python version, the
  versions of the packages the test's modules import, the machine class, the devices
  torch sees, and the environment variables that can change a result (with those the
  claim declares in ``@claim(env=...)``).

A crash is never stored (it runs again), nor a skip (its reason may have changed
since), nor anything of a ``--claimbook-no-cache`` run. Entries carry a format version,
their key and a sha256 of their content, all checked on load: an entry that fails its
checksum is named and the test runs again; one without a checksum (an older claimbook's)
runs again too.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import sys
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from claimbook.config import Settings, text_checksums
from claimbook.runs.keys import (
    devices,
    digest,
    environment,
    input_checksums,
    machine,
    module_closure,
    package_sources,
    package_versions,
    project_sources,
)
from claimbook.storage.atomic import DiskFullError, corrupted_line, seal_of, sealed, write_json

FORMAT = 2  # of a stored outcome: {format, key, outcome, message, measures, seconds, measured_at,
# checksum}
STORED = ("passed", "failed")  # the outcomes that are replayed
CLAIMBOOK = Path(__file__).resolve().parents[1]


def test_context(function) -> str:
    """sha256 of the test's module with every *other* test function left out.

    Helpers, constants, imports, the test's decorators and body count; comments and
    blank lines do not (the AST is hashed).
    """
    return _context(Path(inspect.getsourcefile(function)).read_text(), function.__name__)


@cache
def _dumps(text: str) -> list[tuple[str | None, str]]:
    """Each top-level statement of a module's text: (its test function's name, or None; its
    ``ast.dump``), dumped once per text (a module's tests all share them)."""
    out = []
    for node in ast.parse(text).body:
        test = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        out.append((node.name if test and node.name.startswith("test") else None, ast.dump(node)))
    return out


@cache  # keyed by the text: an edited file is hashed again; instances of one test share it
def _context(text: str, name: str) -> str:
    kept = [dump for test, dump in _dumps(text) if test is None or test == name]
    # the text ast.dump gives the module of the kept statements alone
    module = f"Module(body=[{', '.join(kept)}], type_ignores=[])"
    return hashlib.sha256(module.encode()).hexdigest()


def session_context(root: Path, test_files: list[Path], settings: Settings | None = None) -> str:
    """What every claim instance of a session shares: the project's and claimbook's code, the
    book's ``packages`` wherever they are installed, the machine, the devices, the
    environment and the checksums of the book's source texts (claims may read them at run
    time: :func:`claimbook.source_text`); one hash, computed once a session."""
    packages = settings.packages if settings else ()
    texts = text_checksums(settings) if settings else {}
    return digest(
        {
            "format": FORMAT,
            "project": project_sources(root, exclude=test_files),
            "packages": {name: package_sources(name) for name in sorted(packages)},
            # claimbook's own code, by content wherever it is imported from (inside this
            # project, installed, or another checkout's on PYTHONPATH): the same claimbook
            # gives the same key at any path
            "claimbook": _claimbook_sources(),
            "python": sys.version_info[:2],
            "machine": machine(),
            "devices": devices(),
            "environment": environment(),
            "texts": texts,
        }
    )


def _claimbook_sources() -> str:
    """sha256 of claimbook's Python files by their path inside the package (about 20 ms)."""
    return project_sources(CLAIMBOOK)


def _module_context(module_name: str) -> str:
    """Data checksums and package versions of what a test module imports."""
    modules = module_closure(module_name)
    return json.dumps(
        {"inputs": input_checksums(modules), "packages": package_versions(modules)},
        sort_keys=True,
    )


class ClaimCache:
    """Stored outcomes of claim instances, one JSON file per key under ``directory``.

    Args:
        directory: e.g. ``.claimbook-cache/claims``.
        enabled: False (``--claimbook-no-cache``) reads and stores nothing.
    """

    def __init__(self, directory: Path, enabled: bool = True):
        self.directory = Path(directory)
        self.enabled = enabled
        self.problems: list[str] = []  # corrupt entries met, for the terminal summary
        self.context = ""  # set by the session: session_context(...)
        self._modules: dict[str, str] = {}  # module name -> _module_context, this session's

    def key(self, item, seeds: list[int], declared_env=()) -> str:
        """The key of one collected claim item (a pytest Function)."""
        payload = {
            "session": self.context,
            "nodeid": item.nodeid,
            "test": test_context(item.function),
            "module": self._module(item.function.__module__),
            "seeds": list(seeds) if "seeds" in item.fixturenames else None,
            "declared_env": environment(declared_env) if declared_env else None,
        }
        return digest(payload)

    def _module(self, name: str) -> str:
        if name not in self._modules:  # a module's instances share it; a failure is not kept
            self._modules[name] = _module_context(name)
        return self._modules[name]

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
        seal = seal_of(entry)
        if seal == "corrupted":
            self.problems.append(corrupted_line(path))
            return None
        fields = ("key", "outcome", "message", "measures", "measured_at")
        if (
            not isinstance(entry, dict)
            or entry.get("format") != FORMAT
            or entry.get("key") != key
            or entry.get("outcome") not in STORED
            or any(f not in entry for f in fields)
        ):
            self.problems.append(f"claim cache entry {path} is incomplete or stale; ran the test")
            return None
        if seal == "unsealed":  # an older claimbook's entry: run again, quietly
            return None
        return entry

    def store(
        self, key: str, outcome: str, message: str, measures: list, seconds: float, run: str = ""
    ) -> None:
        """Keep one executed instance's outcome (a pass or a failure; nothing when disabled).

        ``run`` names the run that executed it, for the pages of the runs that reuse it.
        """
        if not self.enabled or outcome not in STORED:
            return
        entry = {
            "format": FORMAT,
            "key": key,
            "outcome": outcome,
            "message": message,
            "measures": measures,
            "seconds": seconds,
            "run": run,
            "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        try:
            write_json(self._path(key), sealed(entry))
        except DiskFullError as exc:  # the outcome stands; only its reuse is lost
            self.enabled = False
            self.problems.append(f"claim outcomes are no longer stored for reuse: {exc}")
