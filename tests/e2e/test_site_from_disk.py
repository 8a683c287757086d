"""The built site opened from disk, as the README tells a reader: site/index.html, file://.

Its links open pages (not a folder's "Index of" listing), its search works, and the source
texts' math is typeset by the KaTeX the site carries; no request leaves the machine.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest


@pytest.fixture
def page(browser):
    """A page that records console errors and every request for http(s), which it blocks."""
    context = browser.new_context(viewport={"width": 1280, "height": 1200})
    page = context.new_page()
    page.errors, page.requests = [], []
    page.on("console", lambda msg: msg.type == "error" and page.errors.append(msg.text))
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))

    def block(route):
        page.requests.append(route.request.url)
        route.abort()

    context.route("http*://**", block)  # a CDN the site would need offline
    yield page
    context.close()


def opened(page, title: str, path_end: str) -> str:
    """Check that the page shown is the page titled ``title`` (its ``<title>`` begins with
    it) at a file:// URL whose path ends in ``path_end``, not a folder's listing; return its
    heading."""
    page.wait_for_load_state()
    assert "Index of" not in page.content(), f"a folder's listing at {page.url}, not a page"
    assert page.url.startswith("file://") and urlsplit(page.url).path.endswith(path_end)
    assert page.title().startswith(title)
    heading = page.locator("article h1").first.inner_text().strip().rstrip("¶")  # permalink
    assert heading
    return heading


def follow(page, link, title: str, path_end: str) -> str:
    """Click ``link`` as a reader would; return the heading of the page it ``opened``."""
    with page.expect_navigation():
        link.click()
    return opened(page, title, path_end)


def test_links_open_each_page_from_disk(page, built_site):
    page.goto((built_site["site"] / "index.html").as_uri())
    opened(page, "Home", "/index.html")
    nav = page.locator("nav.md-nav--primary")
    source = nav.get_by_role("link", name="doc: A test document")  # in the navigation
    assert follow(page, source, "doc: A test document", "/sources/doc.html") == "A test document"
    claim = page.locator("article a").filter(has_text="doc.odd").first  # a claim of the source
    follow(page, claim, "doc.odd", "/claims/doc.odd.html")
    errata = nav.get_by_role("link", name="Errata", exact=True)
    assert follow(page, errata, "Errata", "/errata.html") == "Errata"
    assert "snails have one foot" in page.locator("article").inner_text()
    follow(page, page.locator("a.md-header__button.md-logo"), "Home", "/index.html")
    assert page.errors == [] and page.requests == []


def test_search_finds_a_claim_by_a_word_of_its_sentence_from_disk(page, built_site):
    page.goto((built_site["site"] / "index.html").as_uri())
    box = page.locator("input.md-search__input")
    box.click(timeout=10_000)
    page.keyboard.type("gallop", delay=30)  # the theme searches on key events
    hit = page.locator(".md-search-result__item a[href*='claims/doc.zebra.html']").first
    hit.wait_for(timeout=10_000)
    assert "Zebras gallop faster than snails" in hit.inner_text()
    follow(page, hit, "doc.zebra", "/claims/doc.zebra.html")
    assert page.errors == [] and page.requests == []


def test_the_source_texts_math_is_typeset_from_disk(page, math_site):
    page.goto((math_site["site"] / "index.html").as_uri())
    coverage = page.locator("nav.md-nav--primary").get_by_role("link", name="doc: coverage")
    follow(page, coverage, "doc: coverage", "/coverage/doc.html")
    page.evaluate("document.fonts.ready")
    rows = page.locator("article table").nth(1).locator("tbody tr")
    inline, display, money = rows.nth(5), rows.nth(6), rows.nth(7)
    assert inline.locator(".arithmatex .katex").count() == 3  # \(W_j\), \(d \times d\), \(1 < n\)
    assert display.locator(".arithmatex .katex-display").count() == 1  # $$ ... $$
    assert money.locator(".katex").count() == 0  # a lone $ is money, shown as written
    assert "A pen costs $2 and a book $5" in money.inner_text()
    shown = inline.locator("td").nth(1).inner_text()
    assert "\\(" not in shown and "\\times" not in shown  # typeset, not raw LaTeX
    assert "<b>here</b>" in shown  # the text beside the math stays literal
    assert page.locator("article table b").count() == 0  # never live HTML from the text
    fonts = page.evaluate(
        "[...document.fonts].filter(f => f.family.startsWith('KaTeX') && f.status === 'loaded')"
        ".length"
    )
    assert fonts > 0  # KaTeX's fonts, shipped with the site, load from disk
    assert page.errors == [] and page.requests == []
