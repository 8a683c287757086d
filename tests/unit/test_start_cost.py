"""A pytest run that collects no claim pays nothing for claimbook's statistics or plotting:
the plugin loads in every pytest run of an environment that has claimbook installed."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = {"scipy", "pandas", "matplotlib", "jinja2", "numpy"}

RECORDER = """
import json, sys

def pytest_unconfigure(config):
    loaded = sorted(name for name in sys.modules if name.split(".")[0] in {heavy!r})
    plugin = config.pluginmanager.has_plugin("claimbook-session")
    open("loaded.json", "w").write(json.dumps({{"plugin": plugin, "loaded": loaded}}))
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
    assert not (tmp_path / ".claimbook-cache").exists()
    assert not (tmp_path / "reports").exists()


def test_the_recorder_sees_a_heavy_import(tmp_path):
    """The control: a test module that imports pandas is seen doing so."""
    seen = _loaded(tmp_path, "import pandas\n\ndef test_plain():\n    assert pandas\n")
    assert "pandas" in seen["loaded"]
