"""Sessions: claims (run, render, build, gate), tests, site, lint.

nox -s claims                     every claim over seeds 0,1,2, then the site, then the gate
nox -s claims -- --seeds 0 -k recall   a quicker subset (arguments go to pytest)
nox -s tests                      claimbook's and the experiments' own unit tests
nox -s site                       re-render and rebuild the site from the last results
nox -s lint                       ruff
"""

from __future__ import annotations

from pathlib import Path

import nox

nox.options.sessions = ["claims"]
nox.options.reuse_venv = (
    "yes"  # torch is large; rebuild with `nox -R` is not needed, `--no-reuse-venv` is
)
nox.options.error_on_missing_interpreters = True
# plain venv + pip: pip takes the pinned CPU torch wheel; uv would fetch a CUDA build of several GB
nox.options.default_venv_backend = "venv"

PYTHON = "3.11"


def install(session: nox.Session) -> None:
    session.install("-e", ".")


def build_site(session: nox.Session) -> None:
    """Render the newest results into reports/ and build site/ with MkDocs (no experiment runs)."""
    session.run("python", "-m", "claimbook", "render")
    session.run("mkdocs", "build", "--strict", "--quiet", env={"NO_MKDOCS_2_WARNING": "1"})
    session.log("site built: site/index.html")


@nox.session(python=PYTHON)
def claims(session: nox.Session) -> None:
    """Run every claim over the seeds, build the site, and fail if a claim regressed."""
    install(session)
    # a replay command names its test; otherwise run the whole claims folder
    named = any("::" in arg or Path(arg).exists() for arg in session.posargs)
    targets = [] if named else ["tests/claims"]
    # 1 means "the gate failed": render the site first, then report it below.
    session.run("python", "-m", "pytest", *targets, *session.posargs, success_codes=[0, 1])
    build_site(session)
    session.run("python", "-m", "claimbook", "gate")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Unit tests of claimbook/ and experiments/, and the built site in a real browser."""
    session.install("-e", ".[test]")
    session.run("python", "-m", "pytest", "tests/unit", "tests/e2e", *session.posargs)


@nox.session(python=PYTHON, default=False)
def site(session: nox.Session) -> None:
    """Render and build the site from the last results, running no experiment."""
    install(session)
    build_site(session)


@nox.session(python=PYTHON, default=False)
def lint(session: nox.Session) -> None:
    """ruff check and format check."""
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
