"""The site as a reader of the book uses it, in headless Chromium: source pages in the text's
order, the home page saying what is wrong and unsettled by sentence, and every statistics
word linked to its definition."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from claimbook.render.glossary import TERMS

from tests.e2e.conftest import served_book

ROOT = Path(__file__).resolve().parents[2]

# headings as an HTML export writes them (a pilcrow), the claims' lines out of module order
TEXT = """A Little Book of Mixing¶

Part one: windows¶

A window of four sees four tokens.

Part two: noise¶

The noisy score is typically above zero.

A coin lands heads in about half of the throws.

Part three: counting¶

A layer of 8 units holds 80 numbers.
"""

CLAIMS = '''
import numpy as np
from claimbook import Source, Typical, claim

BOOK = Source(id="book", title="A little book", document="a test text", path="book.txt")


@claim(id="book.count", level="established", source=BOOK, section="Counting, as declared",
       at="A layer of 8 units holds 80 numbers", printed={"numbers": 80},
       erratum="the layer holds 72 numbers (64 weights and 8 biases), not 80")
def test_count(measure):
    """A layer of 8 units over 8 inputs holds 80 numbers."""
    assert measure("numbers", 8 * 8 + 8, printed=80) == 80


@claim(id="book.coin", level="likely", source=BOOK, section="Part 2",
       at="A coin lands heads", rule=Typical("heads share", above=0.5))
def test_coin(seed, measure):
    """A fair coin lands heads in more than half of a few throws."""
    throws = np.random.default_rng(seed).integers(0, 2, size=7)
    measure("heads share", float(throws.mean()))


@claim(id="book.noise", level="likely", source=BOOK, section="Part 2 again",
       at="The noisy score is typically above zero", rule=Typical("score", above=0.0))
def test_noise(seed, measure):
    """The noisy score is typically above zero."""
    measure("score", 5.0 + float(np.random.default_rng(seed).normal(0.0, 0.1)))


@claim(id="book.window", level="established", source=BOOK, section="Part 1",
       at="A window of four sees four tokens")
def test_window(measure):
    """A window of four tokens sees four tokens."""
    assert measure("seen", 4) == 4
'''


@pytest.fixture(scope="module")
def reader_site(tmp_path_factory):
    """The little book run over its seeds, rendered and built, served over HTTP."""
    work = tmp_path_factory.mktemp("reader")
    for url, docs in served_book(work, CLAIMS, TEXT):
        yield {"url": url, "docs": docs}


def open_page(page, reader_site, name: str):
    """Open the page built from ``name``.md (as a .html file or a directory URL)."""
    base = reader_site["url"]
    response = page.goto(f"{base}/{name}.html")
    if response is None or response.status == 404:
        page.goto(f"{base}/{name}/")
    return page


def test_the_source_page_follows_the_text_with_each_section_once(page, reader_site):
    open_page(page, reader_site, "sources/book")
    sections = page.locator("article h2").all_inner_texts()
    sections = [s.strip().rstrip("¶").strip() for s in sections]
    assert sections == ["A Little Book of Mixing", "Part one: windows", "Part two: noise",
                        "Part three: counting"], sections  # fmt: skip
    titles = [t.strip().rstrip("¶").strip() for t in page.locator("article h3").all_inner_texts()]
    assert titles == [
        "A window of four tokens sees four tokens.",
        "The noisy score is typically above zero.",  # line 9, before the coin's line 11
        "A fair coin lands heads in more than half of a few throws.",
        "A layer of 8 units over 8 inputs holds 80 numbers.",
    ]
    # beside each title: its verdict (a badge linked to what it means), id and level
    first = page.locator("article h3").first.locator("xpath=following-sibling::*[1]")
    assert "holds" in first.inner_text() and "book.window" in first.inner_text()


def test_the_home_page_says_what_is_wrong_and_unsettled_by_sentence(page, reader_site):
    open_page(page, reader_site, "index")
    wrong = page.locator("h2", has_text="What the sources get wrong").locator(
        "xpath=following-sibling::ul[1]"
    )
    # one line per error: what is wrong, then printed against measured (or its correction)
    assert "the layer holds 72 numbers (64 weights and 8 biases), not 80" in wrong.inner_text()
    assert "printed 80, measured 72" in wrong.inner_text()
    unsettled = page.locator("h2", has_text="Unsettled").locator("xpath=following-sibling::ul[1]")
    text = unsettled.inner_text()
    # what would decide it, or that nothing planned can: this one is at its cap
    assert "A fair coin lands heads" in text and "at its cap of 12 seeds" in text
    assert "noisy score" not in text  # a supported claim is not unsettled
    # the CI outcome is a small box of its own, below the findings
    headings = page.locator("article h2").all_inner_texts()
    ci = page.locator(".admonition, details", has_text="CI result of this run")
    assert ci.count() == 1
    assert headings.index(next(h for h in headings if h.startswith("What holds"))) > 1


def test_every_statistics_word_links_to_its_definition(page, reader_site):
    open_page(page, reader_site, "claims/book.coin")
    links = page.locator("article a[href*='reading']")
    hrefs = {a.get_attribute("href") for a in links.all()}
    anchors = {h.split("#", 1)[1] for h in hrefs if "#" in h}
    assert {"inconclusive", "likely", "looks"} <= anchors, anchors
    # a word that is on the page unlinked would be a term missed: each TERM used is linked
    text = page.locator("article").inner_text().lower()
    for pattern, anchor in TERMS:
        if anchor in ("margin", "budget"):  # plain words too common to require a link
            continue
        if re.search(pattern, text, re.IGNORECASE):
            assert anchor in anchors, f"{pattern!r} is on the page but not linked"
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)  # a longer phrase wins, as linked
    # every link lands on a definition that exists
    open_page(page, reader_site, "reading")
    for anchor in anchors:
        assert page.locator(f"[id='{anchor}']").count() == 1, anchor


def test_inconclusive_is_not_shown_in_green(page, reader_site):
    open_page(page, reader_site, "claims/book.coin")
    box = page.locator(".admonition", has_text="Inconclusive: what would decide it")
    assert box.count() == 1
    colour = box.evaluate(
        "e => getComputedStyle(e).borderLeftColor || getComputedStyle(e).borderColor"
    )
    red, green, blue = [
        int(x) for x in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3]
    ]
    assert not (green > red and green > blue), colour
