"""claimbook as a user gets it: installed from ./framework (not editable) into a fresh venv.

In that one venv (made once for this module): the little book of examples/little-book
(its claims over seeds, render, ``mkdocs build --strict``, the gate, then its own code
broken), a foreign project that only happens to have a ``seed`` fixture, the scaffold
of ``python -m claimbook init``, and what installing claimbook pulls in (no torch).

The venv needs python3.11 and a reachable package registry. Where either is missing the
module is skipped with the reason, unless ``CLAIMBOOK_REQUIRE_VENV=1`` (or
``CLAIMBOOK_REQUIRE_BROWSER=1``, which CI sets) makes that a failure.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.venv

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "little-book"
REQUIRED = ("CLAIMBOOK_REQUIRE_VENV", "CLAIMBOOK_REQUIRE_BROWSER")
GENERATED = {".claimbook-cache", ".nox", ".pytest_cache", "__pycache__", "reports", "site"}
FIXED = "return x * keep / (1.0 - p)"  # inverted dropout's scaling in littlebook/layers.py
CLAIMS = {"tricks.batchnorm-standardizes", "tricks.batchnorm-count", "tricks.dropout-mean"}


def unavailable(reason: str):
    if any(os.environ.get(name) == "1" for name in REQUIRED):
        pytest.fail(f"{reason} (required here: {' or '.join(REQUIRED)} is 1)")
    pytest.skip(reason)


class Venv:
    """A virtual environment and how to run commands in it, with an environment of its own:
    none of this session's CLAIMBOOK_*, PYTEST_* or PYTHON* variables (they would change
    the book's settings and keys), its bin/ first on PATH."""

    def __init__(self, path: Path):
        self.path, self.bin = path, path / "bin"
        drop = ("CLAIMBOOK_", "PYTEST_", "PYTHON", "VIRTUAL_ENV", "NOX_")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        self.env.update(PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
                        VIRTUAL_ENV=str(path), NO_MKDOCS_2_WARNING="1")  # fmt: skip
        self.times: dict[str, float] = {}

    def run(self, *args, cwd: Path, code: int | None = 0, env=None) -> subprocess.CompletedProcess:
        """Run ``args`` (``python`` and ``mkdocs`` are the venv's) and check the exit code."""
        result = subprocess.run(
            [str(a) for a in args], cwd=cwd, env={**self.env, **(env or {})},
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        if code is not None and result.returncode != code:
            pytest.fail(f"{' '.join(map(str, args))} in {cwd} exited {result.returncode}, not "
                        f"{code}:\n{result.stdout[-6000:]}\n{result.stderr[-4000:]}")  # fmt: skip
        return result

    def pip(self, *args, cwd: Path) -> None:
        start = time.perf_counter()
        result = self.run("python", "-m", "pip", "install", "-q", *args, cwd=cwd, code=None)
        self.times[" ".join(map(str, args))] = round(time.perf_counter() - start, 1)
        if result.returncode != 0:
            out = result.stdout + result.stderr
            # a registry pip cannot fetch from skips; any other failure is claimbook's
            probe = self.run("python", "-m", "pip", "download", "-q", "--no-deps", "-d",
                             cwd / "probe", "setuptools>=68", cwd=cwd, code=None)  # fmt: skip
            if probe.returncode != 0:
                unavailable(f"pip cannot fetch packages here: {(probe.stderr or out)[-500:]}")
            pytest.fail(f"pip install {' '.join(map(str, args))} failed:\n{out[-6000:]}")


def make_venv(tmp_path_factory, name: str) -> Venv:
    """A fresh python3.11 virtual environment (skipped, with the reason, where none can be made)."""
    python = shutil.which("python3.11") or (sys.executable if sys.version_info[:2] == (3, 11)
                                            else None)  # fmt: skip
    if python is None:
        unavailable("needs python3.11 to create the virtual environment")
    home = tmp_path_factory.mktemp(name) / name
    made = subprocess.run([python, "-m", "venv", str(home)], capture_output=True, text=True)
    if made.returncode != 0 or not (home / "bin" / "python").exists():
        unavailable(f"{python} -m venv does not work here: {made.stderr[-500:]}")
    return Venv(home)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Venv:
    """python3.11 -m venv, then pip install ./framework (a wheel, not editable) and nox."""
    env = make_venv(tmp_path_factory, "venv")
    # built from a copy: two xdist workers building in ./framework race on its build/ folder
    source = shutil.copytree(ROOT / "framework", env.path.parent / "framework",
                             ignore=shutil.ignore_patterns("build", "*.egg-info"))  # fmt: skip
    env.pip(source, "nox", cwd=env.path.parent)
    print(f"pip install (seconds): {env.times}")  # shown with -rP or -s
    return env


def copy_book(source: Path, target: Path, generated: bool = False) -> Path:
    """The book's own files (docs/ with only the author's about.md), or with ``generated``
    also its baseline, results and caches (the site excepted)."""

    def ignore(folder, names):
        if generated:
            return [n for n in names if n == "site" and Path(folder) == source]
        if Path(folder).name == "docs":
            return [n for n in names if n != "about.md"]
        return [n for n in names if n in GENERATED]

    shutil.copytree(source, target, ignore=ignore)
    return target


def claims_run(venv: Venv, book: Path, *args, code: int = 0) -> dict:
    """pytest over the book's claims with a receipt: the results file the receipt names."""
    receipt = book / "receipt.json"
    venv.run("python", "-m", "pytest", f"--claimbook-receipt={receipt}", *args, cwd=book,
             code=code)  # fmt: skip
    results = Path(json.loads(receipt.read_text())["results"])
    assert results.parent == book / "reports" / "results"
    return json.loads(results.read_text())


def site_and_gate(venv: Venv, book: Path, code: int) -> str:
    """render, mkdocs build --strict, then the gate on the run's receipt (its exit ``code``)."""
    venv.run("python", "-m", "claimbook", "render", cwd=book)
    venv.run("mkdocs", "build", "--strict", cwd=book)
    return venv.run("python", "-m", "claimbook", "gate", "--receipt", book / "receipt.json",
                    cwd=book, code=code).stdout  # fmt: skip


@pytest.fixture(scope="module")
def book(venv, tmp_path_factory) -> Path:
    """The little book copied out of the repository, its first run accepted as baseline."""
    book = copy_book(EXAMPLE, tmp_path_factory.mktemp("little") / "little-book")
    results = claims_run(venv, book, "--claimbook-update-baseline")
    assert results["run"]["outcome"]["baseline_update"] == "written"
    assert (book / "reports" / "baseline.json").exists()
    return book


def verdicts(results: dict) -> dict[str, str]:
    return {c["id"]: c["verdict"] for c in results["claims"]}


def test_claimbook_installs_without_torch(venv, tmp_path):
    shown = venv.run("python", "-m", "pip", "show", "claimbook", cwd=tmp_path).stdout
    requires = next(line for line in shown.splitlines() if line.startswith("Requires:"))
    assert not {"torch", "transformers"} & {r.strip() for r in requires[9:].split(",")}
    # a torch that would be found: importing claimbook (and its plugin) must not load it
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    probe = (
        "import sys, claimbook, claimbook.plugin.hooks, claimbook.__main__; "
        "print(claimbook.__file__); assert 'torch' not in sys.modules, 'torch imported'"
    )
    where = venv.run("python", "-c", probe, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert Path(where.stdout.strip()).is_relative_to(venv.path)  # installed, not the checkout


def test_the_little_book_passes_replays_and_keeps_the_authors_page(venv, book):
    about = (EXAMPLE / "docs" / "about.md").read_text()
    results = claims_run(venv, book)
    run = results["run"]
    assert verdicts(results) == {"tricks.batchnorm-standardizes": "holds",
                                 "tricks.batchnorm-count": "holds",
                                 "tricks.dropout-mean": "equivalent"}  # fmt: skip
    assert run["exit_status"] == 0 and run["outcome"]["complete"]
    # nothing changed since the baseline run: every instance replayed, none executed
    assert run["claims_executed"] == 0 and run["claims_replayed"] == len(run["facts"]["suite"])
    count = next(c for c in results["claims"] if c["id"] == "tricks.batchnorm-count")
    assert count["printed_reproduced"] == [2, 2]
    dropout = next(c for c in results["claims"] if c["id"] == "tricks.dropout-mean")
    assert dropout["statistics"]["decision"] == "equivalent"
    assert dropout["seeds_total"] >= 3 and dropout["statistics"]["seeds_used"] >= 3
    gate = site_and_gate(venv, book, code=0)
    assert "claimbook: passed: 3 claims" in gate
    assert (book / "docs" / "about.md").read_text() == about
    owned = json.loads((book / "docs" / ".claimbook-render.json").read_text())["files"]
    assert "about.md" not in owned and "index.md" in owned
    page = (book / "site" / "about.html").read_text()  # pages as page.html: they open from disk
    assert "About this book" in page
    assert 'href="about.html"' in (book / "site" / "index.html").read_text()  # in the nav
    for claim_id in CLAIMS:
        assert (book / "site" / "claims" / f"{claim_id}.html").exists()
    # the book's noxfile does the same steps in this environment
    nox = venv.run("nox", "-s", "claims", cwd=book)
    assert "Session claims was successful" in nox.stderr + nox.stdout
    assert (book / "docs" / "about.md").read_text() == about


def test_breaking_the_books_code_re_executes_its_claims_and_turns_the_gate_red(
    venv, book, tmp_path
):
    broken = copy_book(book, tmp_path / "broken", generated=True)  # baseline and caches too
    layers = broken / "littlebook" / "layers.py"
    assert FIXED in layers.read_text()
    layers.write_text(layers.read_text().replace(FIXED, "return x * keep"))  # no 1/(1-p)
    results = claims_run(venv, broken, code=1)
    run = results["run"]
    assert run["claims_replayed"] == 0 and run["claims_executed"] == len(run["facts"]["suite"])
    assert not any(i.get("replayed") for c in results["claims"] for i in c["instances"])
    assert verdicts(results)["tricks.dropout-mean"] == "not equivalent"
    assert verdicts(results)["tricks.batchnorm-count"] == "holds"
    dropout = next(c for c in results["claims"] if c["id"] == "tricks.dropout-mean")
    assert dropout["gates"] and dropout["statistics"]["estimate"]["high"] < 0.95
    rules = {(r["claim"], r["rule"]) for r in results["comparison"]["regressions"]}
    assert ("tricks.dropout-mean", "verdict-worse") in rules
    gate = site_and_gate(venv, broken, code=1)
    assert "FAILED" in gate and "tricks.dropout-mean" in gate
    assert (broken / "docs" / "about.md").exists()  # a second render kept it too
    nox = venv.run("nox", "-s", "claims", cwd=broken, code=1)  # the noxfile's gate is red too
    assert "claimbook: FAILED" in nox.stdout + nox.stderr


def test_junit_xml_has_claimbook_properties_only_when_asked(venv, book, tmp_path):
    copy = copy_book(book, tmp_path / "junit", generated=True)
    names = {}
    for name, extra in (("plain", ()), ("values", ("--claimbook-junit-values",))):
        xml = tmp_path / f"{name}.xml"
        venv.run("python", "-m", "pytest", f"--junitxml={xml}", *extra, cwd=copy)
        names[name] = set(re.findall(r'<property name="([^"]+)"', xml.read_text()))
    assert not any(n.startswith("claimbook") for n in names["plain"])
    assert {"claimbook.claim", "claimbook.measure"} <= names["values"]
    values = re.findall(r'<property name="claimbook[^"]*" value="([^"]*)"', xml.read_text())
    assert values and all(json.loads(html.unescape(v)) is not None for v in values)  # JSON
    # replayed: a copy of a book reuses its claim outcomes (so that only an edit re-executes)
    assert "claimbook.replayed" in names["values"]


FOREIGN_CONFTEST = """import pytest


@pytest.fixture(params=[1, 2])
def seed(request):
    return request.param
"""
FOREIGN_TESTS = """def test_uses_its_own_seed(seed):
    assert seed in (1, 2)


def test_fails_for_seed_two(seed):
    assert seed == 1
"""


def test_a_foreign_project_is_left_alone_also_beside_pytest_parallel(venv, tmp_path):
    venv.pip("pytest-parallel", cwd=tmp_path)  # its --workers must not collide with ours
    project = tmp_path / "foreign"
    project.mkdir()
    files = {"pyproject.toml": '[project]\nname = "foreign"\nversion = "1"\n\n'
                               '[tool.pytest.ini_options]\ntestpaths = ["."]\n',
             "conftest.py": FOREIGN_CONFTEST, "test_seeded.py": FOREIGN_TESTS}  # fmt: skip
    for name, text in files.items():
        (project / name).write_text(text)

    def pytest_(*args, code=1) -> str:
        out = venv.run("python", "-m", "pytest", "-p", "no:cacheprovider", *args,
                       cwd=project, code=code).stdout  # fmt: skip
        return re.sub(r" in [0-9.]+s", " in Ts", out.replace(str(venv.path), "VENV"))

    runs = {}
    for name, off in (("with", ()), ("without", ("-p", "no:claimbook"))):
        runs[name] = pytest_("-rA", "-q", *off)
        runs[name + " collect"] = pytest_("--collect-only", "-q", "--workers", "2", *off, code=0)
    assert runs["with"] == runs["without"]
    assert runs["with collect"] == runs["without collect"]
    assert "1 failed, 3 passed" in runs["with"]
    assert "PASSED test_seeded.py::test_uses_its_own_seed[2]" in runs["with"]
    assert "claimbook" not in runs["with"] + runs["with collect"]
    assert sorted(p.name for p in project.iterdir() if p.name != "__pycache__") == sorted(files)
    # both plugins' options are there, under their own names
    help_ = pytest_("--help", code=0)
    assert "--workers=WORKERS" in help_ and "--claimbook-workers=N" in help_


def test_the_scaffold_of_claimbook_init_runs_as_it_is(venv, tmp_path):
    """The scaffold's own CI workflow, step by step: its requirements installed (claimbook
    from where this venv's came); the main job fails while no baseline is accepted, and
    passes once the first run is."""
    import yaml

    folder = tmp_path / "new-book"
    folder.mkdir()
    venv.run("python", "-m", "claimbook", "init", folder, "--title", "Dense notes", cwd=tmp_path)
    workflow = yaml.safe_load((folder / ".github" / "workflows" / "claims.yml").read_text())
    install, main = [step["run"] for step in workflow["jobs"]["claims"]["steps"] if "run" in step]
    venv.run("bash", "-ec", install, cwd=folder)
    # no baseline yet: the scaffold requires one, so the main job fails, naming it
    failed = venv.run("bash", "-ec", main, cwd=folder, code=1)
    assert "baseline" in failed.stdout + failed.stderr
    venv.run("python", "-m", "pytest", "--claimbook-update-baseline", cwd=folder)  # accepted
    done = venv.run("bash", "-ec", main, cwd=folder)  # claims, gate, render, mkdocs --strict
    out = done.stdout + done.stderr
    assert "claimbook: passed: 3 claims" in out and "Session claims was successful" in out
    assert (folder / "site" / "index.html").exists()
    assert venv.run("python", "-m", "claimbook", "init", folder, cwd=tmp_path, code=1)


@pytest.fixture(scope="module")
def outside_nox(tmp_path_factory) -> Venv:
    """nox in an environment of its own, as pipx or a pyenv version installs it: its
    ``python`` has no claimbook."""
    env = make_venv(tmp_path_factory, "nox-alone")
    env.pip("nox", cwd=env.path.parent)
    return env


def test_a_nox_from_another_environment_names_the_missing_claimbook_or_runs_the_book(
    venv, book, outside_nox, tmp_path
):
    folder = tmp_path / "new-book"
    folder.mkdir()
    venv.run("python", "-m", "claimbook", "init", folder, "--title", "Dense notes", cwd=tmp_path)
    venv.run("python", "-m", "pytest", "--claimbook-update-baseline", cwd=folder)
    nox = outside_nox.bin / "nox"
    for where in (folder, copy_book(book, tmp_path / "little", generated=True)):
        # nox alone on PATH: the `python` every step runs is nox's own, without claimbook
        failed = outside_nox.run(nox, "-s", "claims", cwd=where, code=1)
        out = failed.stdout + failed.stderr
        assert f"claimbook is not installed in {outside_nox.bin / 'python'}" in out, out[-3000:]
        assert "unrecognized arguments" not in out and "Session claims aborted" in out
        assert not (where / "site").exists()  # stopped before pytest, render or mkdocs
    # the book's environment activated (its bin/ first on PATH): the same nox runs the book
    ran = outside_nox.run(nox, "-s", "claims", cwd=folder, env={"PATH": venv.env["PATH"]})
    assert "claimbook: passed: 3 claims" in ran.stdout + ran.stderr
    assert (folder / "site" / "index.html").exists()


def git(folder: Path, *args: str) -> str:
    """``git`` in ``folder`` with an identity of its own; its output."""
    if shutil.which("git") is None:
        unavailable("needs git")
    command = ["git", "-c", "user.name=claimbook", "-c", "user.email=claimbook@example.org"]
    done = subprocess.run([*command, *args], cwd=folder, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_run_in_a_fresh_clone_leaves_git_status_clean(venv, tmp_path):
    """A reader's clone of a book (the scaffold of ``claimbook init``, its baseline committed;
    the little book, whose baseline its first run writes): the claims, render, mkdocs build
    and gate change no tracked file and leave nothing untracked."""
    scaffold = tmp_path / "scaffold"
    scaffold.mkdir()
    venv.run("python", "-m", "claimbook", "init", scaffold, "--title", "Dense notes", cwd=tmp_path)
    git(scaffold, "init", "-q")
    venv.run("python", "-m", "pytest", "--claimbook-update-baseline", cwd=scaffold)  # the author
    git(scaffold, "add", "-A")
    git(scaffold, "commit", "-q", "-m", "a new book and its baseline")
    assert "reports/baseline.json" in git(scaffold, "ls-files")  # committed, not ignored
    little = copy_book(EXAMPLE, tmp_path / "little-book")
    git(little, "init", "-q")
    git(little, "add", "-A")
    git(little, "commit", "-q", "-m", "the little book")
    for origin in (scaffold, little):
        clone = tmp_path / f"clone-of-{origin.name}"
        git(tmp_path, "clone", "-q", str(origin), str(clone))
        if origin == little:  # its reports/ is not committed: the first run writes a baseline
            venv.run("python", "-m", "pytest", "--claimbook-update-baseline", cwd=clone)
        nox = venv.run("nox", "-s", "claims", cwd=clone)
        assert "Session claims was successful" in nox.stdout + nox.stderr
        assert (clone / "site" / "index.html").exists()
        assert git(clone, "status", "--porcelain", "--untracked-files=all") == "", origin.name
