"""``python -m claimbook site`` renders and builds only what changed: a re-run with nothing
changed leaves the pages and the built site as they are, and any change to what a render
reads (the results, the gate's decision) renders again."""

from __future__ import annotations

import pytest
from claimbook.__main__ import main

from tests.unit.conftest import HEADER

CLAIMS = """
@claim(id="doc.sum", level="established", source=DOC, section="1")
def test_sum(measure):
    '''Two and two make four.'''
    assert measure("sum", 2 + 2, printed=4) == 4
"""

MKDOCS = """site_name: test
docs_dir: reports
site_dir: site
use_directory_urls: false
theme:
  name: material
exclude_docs: |
  results/
  history.sqlite*
"""


@pytest.fixture
def book(pytester, monkeypatch):
    monkeypatch.delenv("CLAIMBOOK_CACHE_DIR", raising=False)
    monkeypatch.chdir(pytester.path)
    pytester.makepyfile(test_claims=HEADER + CLAIMS)
    (pytester.path / "mkdocs.yml").write_text(MKDOCS)
    return pytester


def _site(capsys) -> str:
    assert main(["site"]) == 0
    return capsys.readouterr().out


def test_an_unchanged_run_is_neither_rendered_nor_built_again(book, capsys):
    book.runpytest("-p", "no:cacheprovider")
    _site(capsys)
    book.runpytest("-p", "no:cacheprovider")  # replayed: the run records that it reused it
    out = _site(capsys)
    assert "rendered" in out and "site built" in out
    home = book.path / "reports" / "index.md"
    built = book.path / "site" / "index.html"
    before = (home.stat().st_mtime_ns, built.stat().st_mtime_ns)

    book.runpytest("-p", "no:cacheprovider")  # nothing changed: the claim is replayed
    out = _site(capsys)
    assert "changes nothing its pages show" in out and "is up to date" in out, out
    assert (home.stat().st_mtime_ns, built.stat().st_mtime_ns) == before

    # the gate's decision is an input: the home page must show it, so the site is redone
    assert (
        main(["gate", "--results", str(sorted((book.path / "reports/results").glob("run-*"))[-1])])
        == 0
    )
    out = _site(capsys)
    assert "rendered" in out and "site built" in out, out
    assert "CI result of this run: passed" in home.read_text()


def test_a_changed_value_renders_again_and_a_deleted_site_is_rebuilt(book, capsys):
    book.runpytest("-p", "no:cacheprovider")
    _site(capsys)
    book.makepyfile(test_claims=HEADER + CLAIMS.replace("2 + 2", "1 + 3"))
    book.runpytest("-p", "no:cacheprovider")  # another value path: executed again
    out = _site(capsys)
    assert "rendered" in out, out
    (book.path / "site" / "index.html").unlink()
    out = _site(capsys)
    assert "changes nothing its pages show" in out and "site built" in out, out
