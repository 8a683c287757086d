"""The gate decides once, then the site shows its decision: a run the gate fails (here on the
coverage maps, which only the gate checks) never has a home page that says it passed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from claimbook.__main__ import main

UNCOVERED = """source = "notes"

[[statement]]
id = "xavier"
at = "keeps the variance of its input"
kind = "tagged"
level = "likely"
says = "Xavier initialisation keeps the variance"
"""


def _nox_claims(book: Path) -> subprocess.CompletedProcess:
    """The scaffold's own ``nox -s claims``, in this environment (its python on PATH)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("CLAIMBOOK_SOURCES_DIR", None)  # the scaffold reads its text from its folder
    env.pop("CLAIMBOOK_CACHE_DIR", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "nox",
            "-f",
            "noxfile.py",
            "-s",
            "claims",
            "--",
            "-p",
            "no:cacheprovider",
        ],
        cwd=book,
        env=env,
        capture_output=True,
        text=True,
    )


def _accept_first_run(book: Path) -> None:
    """The scaffold requires a baseline: accept its first run, as init's next steps say."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAIMBOOK_SOURCES_DIR",
                                                             "CLAIMBOOK_CACHE_DIR")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--claimbook-update-baseline", "-p", "no:cacheprovider"],
        cwd=book, env=env, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_run_the_gate_fails_on_coverage_has_a_site_that_says_failed(tmp_path):
    book = tmp_path / "book"
    assert main(["init", str(book), "--title", "dense notes"]) == 0
    _accept_first_run(book)
    (book / "coverage").mkdir()
    (book / "coverage" / "notes.toml").write_text(UNCOVERED)
    done = _nox_claims(book)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "coverage (--coverage-fail-under 95)" in output
    home = (book / "reports" / "index.md").read_text()
    assert '!!! failure "CI result of this run: failed"' in home, home
    assert "coverage (--coverage-fail-under 95)" in home
    assert "run: passed" not in home
    assert (book / "site" / "index.html").exists()  # built after the gate, whatever it said

    # the control: the statement covered by its claim, the same book passes, and says so
    covered = UNCOVERED + 'claims = ["notes.xavier-variance"]\n'
    (book / "coverage" / "notes.toml").write_text(covered)
    done = _nox_claims(book)
    assert done.returncode == 0, done.stdout + done.stderr
    home = (book / "reports" / "index.md").read_text()
    assert '??? success "CI result of this run: passed"' in home
    assert "run: failed" not in home
    assert "nothing regressed against the baseline, and the coverage maps hold" in home


def test_a_site_rendered_before_any_gate_says_not_gated(tmp_path, pytester):
    from claimbook.render.site import render_site

    pytester.makepyfile(
        test_claims="""
from claimbook import Source, claim

DOC = Source(id="doc", title="A test document", document="doc.txt")

@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4
"""
    )
    pytester.runpytest("-p", "no:cacheprovider")
    results = sorted((pytester.path / "reports" / "results").glob("run-*.json"))[-1]
    docs = tmp_path / "docs"
    render_site(results, docs, tmp_path / "no-templates")
    assert '!!! warning "CI result of this run: not gated"' in (docs / "index.md").read_text()
    assert main(["gate", "--results", str(results)]) == 0
    render_site(results, docs, tmp_path / "no-templates")
    home = (docs / "index.md").read_text()
    assert '??? success "CI result of this run: passed"' in home
    # what the gate could not check, the box does not claim: no baseline, no coverage map
    assert "there was no baseline to compare with" in home and "no coverage map to" in home
    assert "nothing regressed against the baseline" not in home and "maps hold" not in home
