"""What a cached result depends on, as hashable facts: code, data, packages, machine, environment.

Two caches use these: training runs (:mod:`claimbook.runs.cache`) and claim outcomes
(:mod:`claimbook.runs.claimcache`). Everything here errs on the side of a new key: a
result read from a cache must be the one a fresh computation would give.

- Code: :func:`module_closure` follows every import of a module into project code (any
  module whose file lies outside the standard library and site-packages), including
  relative imports and ``from package import module``; :func:`project_sources` hashes
  every Python file of the project, for keys that must not miss a dynamic import.
- Machine: the CPU model, core count and, where torch is installed, the vector instruction
  set it dispatches to (``torch.backends.cpu.get_cpu_capability()``): two machines with one
  CPU name but another capability give other float digits.
- Environment: variables that can change a result (``CLAIMBOOK_*``, threads, CUDA
  visibility, ...) and the devices torch can see.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
import sysconfig
from collections.abc import Iterable
from functools import cache
from pathlib import Path

INPUTS_HOOK = "run_inputs"  # a module may define run_inputs() -> {file name: sha256}
# environment variables that can change what an experiment computes or whether it runs
ENV_PREFIXES = ("CLAIMBOOK_", "TORCH_", "CUBLAS_", "CUDA_", "OMP_", "MKL_", "OPENBLAS_")
ENV_NAMES = ("PYTHONHASHSEED", "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
# ... except those that only say where things live (data is keyed by its checksum)
ENV_IGNORED = (  # ... or only steer the site and its browser tests
    "CLAIMBOOK_CACHE_DIR", "CLAIMBOOK_DATA_DIR", "CLAIMBOOK_REQUIRE_BROWSER",
    "CLAIMBOOK_REQUIRE_VENV",
    "CLAIMBOOK_REPO_URL", "CLAIMBOOK_ARTIFACTS", "CLAIMBOOK_SOURCES_DIR",
)  # fmt: skip
# values that mean what no value means: Python hashes at random either way, and an empty
# device list leaves torch no GPU, which the key's devices say (an executor may set these)
ENV_AS_UNSET = {"PYTHONHASHSEED": "random", "CUDA_VISIBLE_DEVICES": ""}
_SKIP_DIRS = {"__pycache__", "node_modules", "site", "build", "reports"}


@cache
def _library_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths}
    roots |= {p for p in sys.path if "site-packages" in p or "dist-packages" in p}
    return tuple(str(Path(r).resolve()) for r in roots if r)


@cache
def _origin(module_name: str, packages: tuple[str, ...] = ()) -> Path | None:
    """The source file of a project module, None for library, built-in or missing modules.

    A module of one of ``packages`` (the book's ``packages`` setting) is the book's code
    wherever it is installed, site-packages included. A submodule of a library is a library
    module too, found without importing its parents (``find_spec`` of a submodule imports
    its package: transformers' takes seconds)."""
    top = module_name.split(".")[0]
    if top != module_name and _origin(top, packages) is None and not _is_package(top):
        return None
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    origin = Path(spec.origin).resolve()
    if str(origin).startswith(_library_roots()) and module_name.split(".")[0] not in packages:
        return None
    return origin


@cache
def _is_package(name: str) -> bool:
    """Whether the top-level ``name`` is a project package (its ``__init__`` has no .py
    origin only for a namespace package): False for a library or a missing name."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    roots = _library_roots()
    return not any(
        str(Path(p).resolve()).startswith(roots) for p in spec.submodule_search_locations
    )


def _imported_names(module_name: str, origin: Path) -> set[str]:
    """Absolute names of every module ``module_name`` may import, read from its source (once
    a process while the file is unchanged: a session keys hundreds of instances)."""
    stat = origin.stat()
    return _read_imports(module_name, origin, stat.st_mtime_ns, stat.st_size)


@cache
def _read_imports(module_name: str, origin: Path, _mtime: int, _size: int) -> frozenset[str]:
    is_package = origin.name == "__init__.py"
    package = module_name if is_package else module_name.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(origin.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            try:
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            except (ImportError, ValueError):
                continue
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    found = set()
    for name in names:  # a parent package's __init__ runs too
        parts = name.split(".")
        found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(found)


def forget_module_names() -> None:
    """Forget which file each module name resolved to: the next session may resolve a name to
    another file (pytest's in-process runs share one process, ``test_claims`` in each)."""
    for resolved in (_library_roots, _origin, _is_package):
        resolved.cache_clear()


def module_closure(module_name: str, packages: tuple[str, ...] = ()) -> list[str]:
    """``module_name`` and every project module it imports (``packages``' modules wherever
    they are installed), transitively, sorted."""
    seen, todo = set(), [module_name]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        origin = _origin(name, packages)
        if origin is None:
            continue
        seen.add(name)
        todo.extend(_imported_names(name, origin) - seen)
    return sorted(seen)


def source_hash(module_name: str, packages: tuple[str, ...] = ()) -> str:
    """sha256 of the source of :func:`module_closure` (hex)."""
    digest = hashlib.sha256()
    for name in module_closure(module_name, packages):
        digest.update(name.encode())
        digest.update(_origin(name, packages).read_bytes())
    return digest.hexdigest()


def project_sources(root: Path, exclude: Iterable[Path] = ()) -> str:
    """sha256 of every Python file under ``root`` but ``exclude``, by relative path.

    Hidden folders (``.git``, ``.nox``, caches), virtual environments and generated
    folders are left out.
    """
    root, skip = Path(root).resolve(), {Path(p).resolve() for p in exclude}
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in _SKIP_DIRS
            and not (Path(folder, d) / "pyvenv.cfg").exists()
        )
        for name in sorted(files):
            path = Path(folder, name)
            if name.endswith(".py") and path not in skip:
                digest.update(str(path.relative_to(root)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def package_sources(name: str) -> str:
    """sha256 of every Python file of the importable package ``name``, wherever it lies
    (a book's own code installed into site-packages included).

    Raises:
        ModuleNotFoundError: nothing called ``name`` can be imported (a typo in ``packages``).
    """
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"the packages setting names {name!r}, which is not importable")
    if spec.submodule_search_locations:
        return digest([project_sources(Path(p)) for p in spec.submodule_search_locations])
    return hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()


def input_checksums(modules: Iterable[str]) -> dict[str, str]:
    """Checksums of the data files the given modules read, from their ``run_inputs()``.

    Raises whatever a module's hook raises (e.g. a missing corpus, naming every place looked).
    """
    found = {}
    for name in modules:
        hook = getattr(importlib.import_module(name), INPUTS_HOOK, None)
        if callable(hook):
            found.update(hook())
    return found


_CPU_FIELDS = ("model name", "cpu family", "model", "stepping", "microcode", "cache size")


@cache
def cpu_facts() -> dict[str, str]:
    """The first processor's ``/proc/cpuinfo`` fields that tell hosts apart (``_CPU_FIELDS``;
    {} where it cannot be read)."""
    facts: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if not line.strip():
                break  # the first processor's block ends here
            name, _, value = line.partition(":")
            if name.strip() in _CPU_FIELDS:
                facts.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    return facts


def machine() -> str:
    """The machine class: CPU model, cores, and the instruction set torch dispatches to.

    With ``CLAIMBOOK_ANY_CPU=1`` only the architecture: for a fleet of mixed CPUs (hosted CI
    runners), whose entries must be one cache. torch does not promise bit-identical results
    across CPUs, so a run may then be read on a CPU other than the one that trained it (the
    entry records its host); the variable is part of every key, so both scopes never mix.
    """
    if os.environ.get("CLAIMBOOK_ANY_CPU") == "1":
        return f"any CPU, {platform.machine()}"
    return _machine_class()


@cache
def _machine_class() -> str:
    model = cpu_facts().get("model name") or platform.processor() or platform.machine()
    torch = torch_module()
    capability = f" {torch.backends.cpu.get_cpu_capability()}" if torch else ""
    return f"{model} x {os.cpu_count()}, {platform.machine()}{capability}"


def torch_module():
    """torch if the book's environment has it (a book need not), else None; imported here,
    not at import: render and gate never load it."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def host() -> str:
    """The host within its machine class, for the record (never a key): two hosts of one class
    ("AMD EPYC x 2") have printed other last float digits with the same code and torch."""
    f = cpu_facts()
    if not f:
        return platform.processor() or platform.machine()
    return (
        f"{f.get('model name', '?')}, family {f.get('cpu family', '?')} model "
        f"{f.get('model', '?')} stepping {f.get('stepping', '?')}, microcode "
        f"{f.get('microcode', '?')}, cache {f.get('cache size', '?')}"
    )


def devices() -> dict:
    """The accelerators torch can use now (a claim may skip without one); none without torch."""
    torch = torch_module()
    if torch is None:
        return {"cuda": 0, "mps": False}
    mps = getattr(torch.backends, "mps", None)
    return {
        "cuda": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        "mps": bool(mps and mps.is_available()),
    }


def environment(declared: Iterable[str] = ()) -> dict[str, str | None]:
    """The environment variables that can change a result, with ``declared`` extra names."""
    names = {k for k in os.environ if k.startswith(ENV_PREFIXES) or k in ENV_NAMES} - set(
        ENV_IGNORED
    )
    names -= {k for k, v in ENV_AS_UNSET.items() if os.environ.get(k) == v}
    return {name: os.environ.get(name) for name in sorted(names | set(declared))}


@cache
def _distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()  # scans every installed package: once


def package_versions(modules: Iterable[str]) -> dict[str, str]:
    """Installed versions of the third-party packages that ``modules`` import."""
    names = set()
    for name in modules:
        origin = _origin(name)
        if origin is not None:
            names.update(n.split(".")[0] for n in _imported_names(name, origin))
    names -= set(sys.stdlib_module_names) | {"__future__"}
    names = {n for n in names if _origin(n) is None}  # not a project package
    distributions = _distributions()
    return {
        dist: importlib.metadata.version(dist)
        for name in sorted(names)
        for dist in distributions.get(name, [])
    }


def digest(payload) -> str:
    """sha256 of a JSON-able payload (sorted keys), hex."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
