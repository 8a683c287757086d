"""Values as a reader reads them, in headless Chromium on a small book run for real: years
without a thousands separator beside a count that keeps one, no "name=" label or repr on any
page, a claim's sentence marked as our paraphrase, and the home page saying which way each
unsettled claim leans."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import served_book

ROOT = Path(__file__).resolve().parents[2]

TEXT = """Years and counts

LeCun et al. (1989) trained a network of 2,048 units.

A coin lands heads in about half of the throws.
"""

CLAIMS = '''
import numpy as np
import pytest
from claimbook import MostSeeds, Source, claim

BOOK = Source(id="book", title="Years", document="a test text", path="book.txt")


@claim(id="book.years", level="established", source=BOOK, section="Years",
       at="LeCun et al. (1989)")
@pytest.mark.parametrize("kind", ["who and when", "what it introduced"])
def test_years(kind, measure):
    """The network dated 1989 has 2,048 units, in each kind of attribution the text makes."""
    measure("LeCun et al., 1989" if kind == "who and when" else "convolutions", 1989,
            printed="1989")
    measure("units", 2048, printed="2,048")


@claim(id="book.coin", level="likely", source=BOOK, section="Years", at="A coin lands heads",
       rule=MostSeeds("heads share", above=0.5))
def test_coin(seed, measure):
    """In most seeds a fair coin lands heads in more than half of seven throws."""
    measure("heads share", [0.71, 0.29, 0.57][seed % 3])
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The small book run over its seeds, rendered and built, served over HTTP."""
    work = tmp_path_factory.mktemp("values")
    for url, _docs in served_book(work, CLAIMS, TEXT):
        yield url


def text_of(browser, url: str) -> str:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    response = page.goto(f"{url}.html")
    if response is None or response.status == 404:
        page.goto(f"{url}/")
    text = page.locator("article").inner_text()
    context.close()
    return text


def test_years_read_as_years_and_no_page_shows_a_name_label(browser, site):
    names = ("index", "sources/book", "claims/book.years", "claims/book.coin")
    pages = {name: text_of(browser, f"{site}/{name}") for name in names}
    claim = pages["claims/book.years"]
    assert "1989" in claim and "1,989" not in claim and "2,048" in claim
    assert "units (who and when)" in claim and "units (what it introduced)" in claim
    for name, text in pages.items():
        assert "kind=" not in text and "(quantity=" not in text, name
    assert "1,989" not in pages["sources/book"]


def test_the_home_page_says_which_way_an_unsettled_claim_leans(browser, site):
    home = text_of(browser, f"{site}/index")
    unsettled = home.split("Unsettled", 1)[1].split("What holds", 1)[0]
    assert "leans towards the claim (" in unsettled and " seeds succeed" in unsettled
    assert "per-look" not in home
