"""Shared helpers for claimbook's own tests."""

from __future__ import annotations

# loaded once here, as torch below: a second copy, imported inside a pytester run, cannot
# pickle the local pool's worker function ("not the same object")
import concurrent.futures.process  # noqa: F401
import json
import subprocess
import sys
from pathlib import Path

# loaded once here: pytester's in-process runs unload what they import, and torch, numpy,
# scipy and pandas cannot be imported twice in one process (the plugin imports the last
# three on first use only: claimbook/lazy.py)
import numpy  # noqa: F401
import pandas  # noqa: F401
import pytest
import scipy.stats  # noqa: F401
import torch  # noqa: F401

HEADER = """
import pytest
from claimbook import Figure, Source, claim

DOC = Source(id="doc", title="A test document", document="doc.txt")
"""


@pytest.fixture
def claims_project(pytester, monkeypatch):
    """A pytester project whose claim tests are written by the test; returns a runner.

    ``run(body, *args)`` writes ``test_claims.py`` (the header above plus
    ``body``), runs pytest in-process and returns (result, results-json-or-None).
    """
    monkeypatch.delenv("CLAIMBOOK_CACHE_DIR", raising=False)

    def run(body: str, *args: str):
        pytester.makepyfile(test_claims=HEADER + body)
        result = pytester.runpytest("-p", "no:cacheprovider", *args)
        files = sorted(Path(pytester.path, "reports", "results").glob("run-*.json"))
        data = json.loads(files[-1].read_text()) if files else None
        return result, data

    return run


def claim_of(data: dict, claim_id: str) -> dict:
    return next(c for c in data["claims"] if c["id"] == claim_id)


def gate(args: list[str], capsys) -> tuple[int, str]:
    """``claimbook gate ARGS`` in this process: its exit code and what it printed (out, then
    err); what was printed before it is dropped first."""
    from claimbook.__main__ import main

    capsys.readouterr()
    code = main(["gate", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def strict_build(docs: Path, work: Path, **overrides) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of ``docs`` with the project's mkdocs.yml, into work/site."""
    import yaml

    config = yaml.safe_load((Path(__file__).resolve().parents[2] / "mkdocs.yml").read_text())
    config.update(docs_dir=str(docs), site_dir=str(work / "site"), **overrides)
    (work / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(work / "mkdocs.yml")],
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )


def noxfile_module(path: Path):
    """A noxfile as a module, for tests that call its helpers or sessions in-process. Its
    sessions register again with nox each time it is loaded, which nox warns about (as a
    future error); the module is used, never run by nox, so that warning is left out."""
    import importlib.util
    import warnings

    spec = importlib.util.spec_from_file_location(f"noxfile_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "The session .* has already been registered")
        spec.loader.exec_module(module)
    return module


@pytest.fixture
def doctored(tmp_path, monkeypatch):
    """doctored(source, old, new): the copy of ``source`` with ``old`` (printed once) made
    ``new``, read by the claims; from the start the claims read copies of both texts."""
    from tests.unit import planted

    planted.plant(tmp_path, monkeypatch, planted.CH04_FILE, [])

    def edit(source, old: str, new: str) -> str:
        return planted.plant(tmp_path, monkeypatch, source.path, [(old, new)], once=True)

    return edit
