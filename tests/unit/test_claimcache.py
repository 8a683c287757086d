"""Replaying unchanged claim instances, and what re-runs when something changes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.unit.conftest import HEADER, claim_of

TWO_CLAIMS = """
@claim(id="doc.one", level="established", source=DOC, section="1", printed={"v": 1})
def test_one(seed, measure):
    '''One is one.'''
    assert measure("v", 1, printed=1) == 1


@claim(id="doc.two", level="established", source=DOC, section="1", erratum="two is not three")
def test_two(measure):
    '''Two is three.'''
    assert measure("v", 2, printed=3) == 3
"""


def test_an_unchanged_run_replays_every_instance_with_the_same_results(claims_project):
    result, first = claims_project(TWO_CLAIMS)
    assert first["run"]["claims_executed"] == 4 and first["run"]["claims_replayed"] == 0
    result, second = claims_project(TWO_CLAIMS)
    assert second["run"]["claims_executed"] == 0 and second["run"]["claims_replayed"] == 4
    result.stdout.fnmatch_lines(["*claim tests: 0 executed, 4 reused*"])
    for claim_id in ("doc.one", "doc.two"):
        before, after = claim_of(first, claim_id), claim_of(second, claim_id)
        assert (before["verdict"], before["printed_reproduced"]) == (
            after["verdict"],
            after["printed_reproduced"],
        )
        assert [i["measures"] for i in before["instances"]] == [
            i["measures"] for i in after["instances"]
        ]
        assert all(i["replayed"]["measured_at"] for i in after["instances"])
    two = claim_of(second, "doc.two")["instances"][0]
    assert two["message"] == claim_of(first, "doc.two")["instances"][0]["message"] != ""


def test_editing_one_claim_test_re_runs_only_that_test(claims_project):
    claims_project(TWO_CLAIMS)
    _, data = claims_project(TWO_CLAIMS.replace("'''Two is three.'''", "'''Two is three!'''"))
    assert data["run"]["claims_executed"] == 1 and data["run"]["claims_replayed"] == 3
    _, data = claims_project("X = 1  # a module-level change\n" + TWO_CLAIMS)
    assert data["run"]["claims_executed"] == 4  # helpers and constants count for every test


def test_a_comment_is_not_a_change(claims_project):
    claims_project(TWO_CLAIMS)
    _, data = claims_project(TWO_CLAIMS.replace("def test_one(", "# a note\ndef test_one("))
    assert data["run"]["claims_executed"] == 0


def test_no_cache_executes_everything(claims_project):
    claims_project(TWO_CLAIMS)
    _, data = claims_project(TWO_CLAIMS, "--claimbook-no-cache")
    assert data["run"]["claims_executed"] == 4


def test_a_crash_is_never_replayed(claims_project):
    body = """
@claim(id="doc.crash", level="established", source=DOC, section="1")
def test_crash():
    '''Crashes.'''
    raise RuntimeError("boom")
"""
    claims_project(body)
    _, data = claims_project(body)
    assert data["run"]["claims_executed"] == 1
    assert claim_of(data, "doc.crash")["verdict"] == "error"


def test_a_corrupt_stored_outcome_is_reported_and_the_test_runs(claims_project, pytester):
    claims_project(TWO_CLAIMS)
    for entry in Path(pytester.path, ".claimbook-cache", "claims").rglob("*.json"):
        entry.write_text('{"key": "trunc')
    result, data = claims_project(TWO_CLAIMS)
    assert data["run"]["claims_executed"] == 4
    result.stdout.fnmatch_lines(["*claim cache entry * is corrupt*"])


RUNS = """
from claimbook import Training
from tests.unit.cached_fns import square

SQUARE = Training(square, {"x": 3})


@claim(id="doc.runs", level="established", source=DOC, section="1", trains=[SQUARE])
def test_runs(runs, seed, measure):
    '''Reads its declared run.'''
    assert measure("value", runs(square, {"x": 3}, seed)["value"]) == 9 + seed


@claim(id="doc.undeclared", level="established", source=DOC, section="1")
def test_undeclared(runs, seed):
    '''Reads a run it does not declare.'''
    runs(square, {"x": 4}, seed)
"""


def test_declared_runs_are_trained_before_the_tests_and_undeclared_ones_are_errors(
    claims_project,
):
    result, data = claims_project(RUNS)
    assert claim_of(data, "doc.runs")["verdict"] == "holds"
    assert data["run"]["runs_computed"] == 3  # seeds 0, 1, 2 of the declared run, once each
    undeclared = claim_of(data, "doc.undeclared")
    assert undeclared["verdict"] == "error"
    assert "not declared by this claim" in undeclared["instances"][0]["message"]
    result.stdout.fnmatch_lines(["*training runs: 3 computed* (each once)*"])


def test_trains_needs_a_seed(claims_project):
    result, _ = claims_project(
        RUNS.replace("def test_runs(runs, seed, measure)", "def test_runs(runs, measure)")
    )
    assert result.ret == 4  # usage error, before any run
    result.stderr.fnmatch_lines(["*test_runs*trains= but takes neither 'seed' nor 'seeds'*"])


def test_the_key_covers_the_test_modules_imports(tmp_path):
    from claimbook.runs.claimcache import _module_context

    context = json.loads(_module_context("tests.claims.test_ch04_token_mixing"))
    assert context["packages"]["torch"].startswith("2.13")
    assert context["inputs"]  # it imports experiments.data, which reads the corpus


def test_a_run_whose_data_is_missing_makes_its_claims_errors_not_the_session(claims_project):
    body = """
from claimbook import Training
from tests.unit.missing_data import train


@claim(id="doc.data", level="established", source=DOC, section="1", trains=[Training(train, {})])
def test_data(runs, seed):
    '''Reads a run whose data file is missing.'''
    runs(train, {}, seed)
"""
    result, data = claims_project(body, "--claimbook-seeds", "0")
    claim = claim_of(data, "doc.data")
    assert claim["verdict"] == "error"
    assert "looked in /nowhere and /nowhere/else" in claim["instances"][0]["message"]
    result.stdout.fnmatch_lines(["*1 runs not trained: FileNotFoundError: data.txt*"])


READS_THE_TEXT = """
import claimbook
from claimbook import source_text

NOTES = claimbook.source("notes")

@claim(id="notes.four", level="established", source=NOTES, section="1")
def test_four(measure):
    '''The notes print 2 + 2 = 4, and it is.'''
    printed = source_text(NOTES).split("= ")[1].strip()
    assert measure("2 + 2", 2 + 2, printed=printed) == int(printed)
"""


def declare_notes(pytester) -> Path:
    """The book declares its text, as a claim reading it at run time must."""
    pytester.makefile(
        ".toml",
        pyproject='[[tool.claimbook.sources]]\nid = "notes"\ntitle = "Notes"\npath = "notes.txt"\n',
    )
    texts = pytester.path / "texts"
    texts.mkdir()
    return texts


def test_a_claim_reading_the_text_runs_again_when_the_text_changes(
    claims_project, pytester, monkeypatch
):
    texts = declare_notes(pytester)
    (texts / "notes.txt").write_text("2 + 2 = 4\n")
    monkeypatch.setenv("CLAIMBOOK_SOURCES_DIR", str(texts))
    _, data = claims_project(READS_THE_TEXT)
    assert claim_of(data, "notes.four")["verdict"] == "holds"
    _, data = claims_project(READS_THE_TEXT)
    assert data["run"]["claims_replayed"] == 1  # nothing changed
    (texts / "notes.txt").write_text("2 + 2 = 5\n")  # the text is edited: checked as it stands
    _, data = claims_project(READS_THE_TEXT)
    assert data["run"]["claims_executed"] == 1
    assert claim_of(data, "notes.four")["verdict"] == "refuted"


def test_a_claim_reading_the_text_without_its_folder_is_an_error(
    claims_project, pytester, monkeypatch
):
    declare_notes(pytester)
    monkeypatch.delenv("CLAIMBOOK_SOURCES_DIR", raising=False)
    _, data = claims_project(READS_THE_TEXT)
    claim = claim_of(data, "notes.four")
    assert claim["verdict"] == "error"
    assert "set CLAIMBOOK_SOURCES_DIR" in claim["instances"][0]["message"]


CLAIMBOOK_SRC = Path(__file__).resolve().parents[2] / "framework" / "src"


def _run_book(book: Path, claimbook_from: Path) -> dict:
    """pytest in ``book`` as its own process, importing claimbook from ``claimbook_from``."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAIMBOOK_", "PYTEST_"))}
    env["PYTHONPATH"] = f"{claimbook_from}{os.pathsep}{book}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/claims"],
        cwd=book, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    results = sorted((book / "reports" / "results").glob("run-*.json"))
    return json.loads(results[-1].read_text())["run"]


def test_a_copy_of_the_book_at_another_path_replays_with_the_copied_cache(tmp_path):
    """The claim key holds no path: a clone elsewhere, given the cache, executes nothing,
    whether claimbook is its own copy or the first checkout's (a PYTHONPATH left pointing
    there), as long as the code is the same."""
    import shutil

    first = tmp_path / "first" / "book"
    (first / "tests" / "claims").mkdir(parents=True)
    (first / "pyproject.toml").write_text('[project]\nname = "book"\n')
    (first / "tests" / "claims" / "test_claims.py").write_text(HEADER + TWO_CLAIMS)
    # claimbook inside the project, as this repository keeps it (framework/src)
    shutil.copytree(CLAIMBOOK_SRC / "claimbook", first / "framework" / "src" / "claimbook",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    ran = _run_book(first, first / "framework" / "src")
    assert (ran["claims_executed"], ran["claims_replayed"]) == (4, 0)
    second = tmp_path / "elsewhere" / "clone-b"
    shutil.copytree(first, second, ignore=shutil.ignore_patterns("reports", "__pycache__"))
    for claimbook in (second / "framework" / "src", first / "framework" / "src"):
        ran = _run_book(second, claimbook)
        assert (ran["claims_executed"], ran["claims_replayed"]) == (0, 4), claimbook


def test_a_skip_runs_again_and_the_count_says_so(claims_project):
    skips = (
        TWO_CLAIMS
        + '''
@claim(id="doc.gpu", level="established", source=DOC, section="1")
def test_gpu():
    """Needs a GPU."""
    pytest.skip("needs a GPU")
'''
    )
    claims_project(skips)
    result, data = claims_project(skips)
    assert data["run"]["claims_executed"] == 1 and data["run"]["claims_replayed"] == 4
    result.stdout.fnmatch_lines(
        ["*claim tests: 1 executed (1 of them skipped: a skip is never stored), 4 reused*"]
    )


def test_a_later_session_in_the_same_process_keys_its_own_test_module(pytester, monkeypatch):
    """pytest's in-process runs share one process: the second book's ``test_claims.py`` is
    keyed by what it imports, not by what the first book's file of that name imported."""
    # loaded in this process, so that its caches outlive each in-process run (each run unloads
    # what it imported itself)
    from claimbook.runs import claimcache  # noqa: F401

    monkeypatch.delenv("CLAIMBOOK_CACHE_DIR", raising=False)
    body = HEADER + READS_NOTHING
    books = {"first": "from tests.unit.missing_data import train  # noqa: F401\n", "second": ""}
    for name, imports in books.items():
        book = pytester.mkdir(name)
        (book / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
        (book / "test_claims.py").write_text(imports + body)
    results = {}
    for name in [*books, "second"]:
        monkeypatch.chdir(pytester.path / name)
        results[name] = pytester.runpytest_inprocess("-p", "no:cacheprovider")
        assert results[name].ret == 0
    assert "executed without a stored outcome: FileNotFoundError" in results["first"].stdout.str()
    results["second"].stdout.fnmatch_lines(["*claim tests: 0 executed, 1 reused*"])
    assert "without a stored outcome" not in results["second"].stdout.str()


READS_NOTHING = """
@claim(id="doc.four", level="established", source=DOC, section="1")
def test_four(measure):
    '''Two and two make four.'''
    assert measure("2 + 2", 2 + 2, printed=4) == 4
"""
