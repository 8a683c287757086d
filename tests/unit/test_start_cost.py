"""A pytest run that collects no claim pays nothing for claimbook's statistics or plotting,
nor for its claim session: the plugin loads in every pytest run of an environment that has
claimbook installed, so what it imports there is kept to its options and the book's
settings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = {"scipy", "pandas", "matplotlib", "jinja2", "numpy"}
# what the plugin needs to add its options, read [tool.claimbook] and check the files it
# names (the durations file, the results folder); nothing more
START = {
    "claimbook.config", "claimbook.declare", "claimbook.declare.seeds",
    "claimbook.declare.source", "claimbook.plugin", "claimbook.plugin.hooks",
    "claimbook.plugin.options", "claimbook.plugin.phases", "claimbook.plugin.workers",
    "claimbook.runs", "claimbook.runs.plan", "claimbook.storage", "claimbook.storage.atomic",
    "claimbook.storage.durations",
}  # fmt: skip

RECORDER = """
import json, sys

def pytest_unconfigure(config):
    loaded = sorted(name for name in sys.modules if name.split(".")[0] in {heavy!r})
    ours = sorted(name for name in sys.modules if name.startswith("claimbook."))
    plugin = config.pluginmanager.has_plugin("claimbook")
    session = config.pluginmanager.has_plugin("claimbook-session")
    open("loaded.json", "w").write(json.dumps({{"plugin": plugin, "session": session,
                                               "loaded": loaded, "ours": ours}}))
"""


def _loaded(folder, test: str) -> dict:
    (folder / "test_plain.py").write_text(test)
    (folder / "conftest.py").write_text(RECORDER.format(heavy=HEAVY))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads((folder / "loaded.json").read_text())


def test_a_run_without_claims_imports_no_heavy_library(tmp_path):
    seen = _loaded(tmp_path, "def test_plain():\n    assert 1 + 1 == 2\n")
    assert seen["plugin"], "claimbook's plugin was not loaded: this test would prove nothing"
    assert seen["loaded"] == []
    assert set(seen["ours"]) <= START, sorted(set(seen["ours"]) - START)
    assert not seen["session"], "a run with no claim started a claim session"
    assert not (tmp_path / ".claimbook-cache").exists()
    assert not (tmp_path / "reports").exists()


def test_the_recorder_sees_a_heavy_import(tmp_path):
    """The control: a test module that imports pandas is seen doing so."""
    seen = _loaded(tmp_path, "import pandas\n\ndef test_plain():\n    assert pandas\n")
    assert "pandas" in seen["loaded"]


CLAIM = """from claimbook import claim


@claim("x.one", "established")
def test_one():
    \"\"\"One is one.\"\"\"
    assert 1 == 1
"""


def test_the_recorder_sees_a_claim_session(tmp_path):
    """The control of the checks above: a module with a claim starts the session, which
    loads the stages the start leaves out."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.claimbook]\nsources = [{id = "x", title = "X"}]\n'
    )
    seen = _loaded(tmp_path, CLAIM)
    assert seen["session"]
    assert "claimbook.plugin.session" in seen["ours"]


def test_every_public_name_imports_on_first_use():
    """The package loads its public names lazily: each name of ``__all__`` is found where
    the package says, and no other name is."""
    import claimbook

    assert sorted(claimbook.__all__) == sorted(claimbook._MODULE)
    for name in claimbook.__all__:
        assert getattr(claimbook, name) is not None
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(claimbook, "no_such_name")  # noqa: B009
