"""A render killed after its figures and before its manifest: the next render repairs it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from claimbook.render.owned import MANIFEST, Owned, RenderConflict
from claimbook.render.site import render_site
from claimbook.storage.results import latest_results

from tests.unit.test_book_settings import PASSING

DRAWN = """
@claim(id="doc.curve", level="established", source=DOC, section="1",
       figure=Figure(title="curve", xlabel="step", ylabel="loss"))
def test_curve(seed, measure):
    '''The loss falls.'''
    measure("curve: model", [3.0, 2.0, 1.0 + seed], x=[0, 1, 2])
"""


def _interrupted(*args, **kwargs):
    raise KeyboardInterrupt  # Ctrl-C after the figures, before the pages and the manifest


def test_a_render_interrupted_before_its_manifest_is_repaired_by_the_next(
    claims_project, pytester, monkeypatch
):
    claims_project(DRAWN, "--claimbook-seeds", "0-2")
    results = latest_results(pytester.path / "reports" / "results")
    docs = pytester.path / "docs"
    docs.mkdir()
    (docs / "about.md").write_text("# About\n")
    with monkeypatch.context() as patch:
        patch.setattr(Owned, "finish", _interrupted)
        with pytest.raises(KeyboardInterrupt):
            render_site(results, docs, None)
    assert (docs / "figures" / "doc.curve.png").exists()  # drawn by the killed render
    render_site(results, docs, None)
    assert (docs / "index.md").exists() and (docs / "claims" / "doc.curve.md").exists()
    assert (docs / "about.md").read_text() == "# About\n"
    assert "pending" not in (docs / MANIFEST).read_text()  # the finished render's own list


def test_a_file_named_in_no_manifest_stays_the_authors(claims_project, pytester, monkeypatch):
    claims_project(PASSING)
    results = latest_results(pytester.path / "reports" / "results")
    docs = pytester.path / "docs"
    with monkeypatch.context() as patch:
        patch.setattr(Owned, "finish", _interrupted)
        with pytest.raises(KeyboardInterrupt):
            render_site(results, docs, None)
    (docs / "index.md").write_text("# The author's home page\n")  # never render's
    with pytest.raises(RenderConflict, match=r"index\.md exists and was not written by"):
        render_site(results, docs, None)
    assert (docs / "index.md").read_text() == "# The author's home page\n"


PAUSED = """
import sys, time
from pathlib import Path
from claimbook.render.site import render_site
from claimbook.render.owned import Owned

def pause(self, pages, drawn, inputs=None):  # the figures are written: wait here to be killed
    Path(sys.argv[3]).touch()
    time.sleep(120)

Owned.finish = pause
render_site(Path(sys.argv[1]), Path(sys.argv[2]), None)
"""


def test_a_render_killed_before_its_manifest_is_repaired_by_the_next(claims_project, pytester):
    claims_project(DRAWN, "--claimbook-seeds", "0-2")
    results = latest_results(pytester.path / "reports" / "results")
    docs, ready = pytester.path / "docs", pytester.path / "ready"
    docs.mkdir()
    (docs / "about.md").write_text("# About\n")
    proc = subprocess.Popen([sys.executable, "-c", PAUSED, str(results), str(docs), str(ready)])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ready.exists(), "the render never reached its pause"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert (docs / "figures" / "doc.curve.png").exists()
    render_site(results, docs, None)
    assert (docs / "claims" / "doc.curve.md").exists()
    assert (docs / "about.md").read_text() == "# About\n"
