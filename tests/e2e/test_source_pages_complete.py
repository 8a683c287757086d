"""The book's own source pages, from the newest complete run of this checkout, in headless
Chromium: each page starts with the text's first section and shows every section of the
text in its order; the checks of the text as a whole are on a page of their own.

The newest complete results under reports/results (a ``nox -s claims`` of this checkout) are
rendered afresh with today's templates, without figures (drawing them is most of a render's
time and no assertion here reads one), and built with MkDocs: about a minute, no training.
Skipped, with the reason, where this checkout has no complete run or the texts are absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from claimbook.coverage.anchors import read_text
from claimbook.render import site as site_module
from claimbook.render.order import WHOLE, headings
from claimbook.render.site import render_site
from claimbook.storage.results import latest_results

from tests.e2e.conftest import mkdocs_config

ROOT = Path(__file__).resolve().parents[2]
SOURCES = os.environ.get("CLAIMBOOK_SOURCES_DIR", "")


def complete_results() -> Path | None:
    """The newest results file of this checkout that holds the whole default suite."""
    folder = ROOT / "reports" / "results"
    if not folder.is_dir() or not any(folder.glob("run-*.json")):
        return None
    path = latest_results(folder, full=True)
    return None if json.loads(path.read_text())["run"].get("partial", True) else path


@pytest.fixture(scope="module")
def book_site(tmp_path_factory) -> dict:
    """The newest complete run rendered (no figures) and built; its sources by id."""
    results = complete_results()
    if results is None:
        pytest.skip("needs a complete default run of this checkout (nox -s claims)")
    if not SOURCES or not Path(SOURCES).is_dir():
        pytest.skip("needs CLAIMBOOK_SOURCES_DIR (the book's texts)")
    work = tmp_path_factory.mktemp("book-site")
    docs, site = work / "reports", work / "site"
    patch = pytest.MonkeyPatch()
    patch.setattr(site_module.FigureStore, "draw", lambda self, draw, *args: False)
    try:
        render_site(results, docs, ROOT / "templates", sources_dir=Path(SOURCES))
    finally:
        patch.undo()
    config = work / "mkdocs.yml"
    config.write_text(yaml.safe_dump(mkdocs_config(docs, site)))
    subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config)],
        check=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    claims = json.loads(results.read_text())["claims"]
    sources = {c["source"]["id"]: c["source"] for c in claims}
    return {"site": site, "sources": sources}


def shown(locator) -> list[str]:
    return [t.strip().rstrip("¶").strip() for t in locator.all_inner_texts()]


@pytest.mark.parametrize("source_id", ["ch04", "dd2"])
def test_a_source_page_starts_with_the_texts_first_section_and_shows_every_one_in_order(
    page, book_site, source_id
):
    source = book_site["sources"][source_id]
    text, why = read_text(Path(SOURCES), source["path"])
    assert text is not None, why
    wanted = [h.title for h in headings(text)]
    page.goto((book_site["site"] / "sources" / f"{source_id}.html").as_uri())
    article = page.locator("article")
    sections = [s for s in shown(article.locator("h2")) if s != "Not placed in the text"]
    assert sections == wanted, sections  # every heading of the text, once, in its order
    # before the first section: the page's title and a few lines saying how to read it, no
    # claim, no check and no table
    before = article.evaluate(
        """a => { const first = a.querySelector("h2"); const out = [];
                  for (const el of a.querySelectorAll("h3, table"))
                    if (el.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING)
                      out.push(el.tagName + ": " + el.innerText.slice(0, 60));
                  return out; }"""
    )
    assert before == [], before
    if source_id == "ch04":  # the recall result sits with the recall experiment
        recall = page.locator("#ch04-recall-attention")
        section = recall.evaluate(
            "h => { let e = h; while (e && e.tagName !== 'H2') e = e.previousElementSibling;"
            " return e ? e.innerText : ''; }"
        )
        assert (
            section.strip().rstrip("¶").strip() == "Experiment: the same recall task, with "
            "attention"
        )


@pytest.mark.parametrize("source_id", ["ch04", "dd2"])
def test_the_checks_of_the_whole_text_have_a_page_linked_from_the_sections(
    page, book_site, source_id
):
    checks = book_site["site"] / "sources" / f"{source_id}.whole-text.html"
    assert checks.exists()
    page.goto(checks.as_uri())
    count = page.locator("article h3").count()
    assert count, "no check of the whole text"
    page.goto((book_site["site"] / "sources" / f"{source_id}.html").as_uri())
    links = page.locator(f"article a[href*='{source_id}.whole-text.html#']")
    assert links.count() >= count  # each check linked from at least one section
    with page.expect_navigation():
        links.first.click()
    assert page.url.split("#")[0].endswith(f"/sources/{source_id}.whole-text.html")
    assert WHOLE.lower() in page.title().lower()
