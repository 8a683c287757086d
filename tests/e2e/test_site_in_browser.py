"""The generated site as a reader sees it, in headless Chromium."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import ODD_SENTENCE

PAGES = {  # pages as page.html (use_directory_urls: false): the site opens from disk too
    "home": "/",
    "source": "/sources/doc.html",
    "claim": "/claims/doc.odd.html",
    "tags": "/tags.html",
    "errata": "/errata.html",
    "performance": "/performance.html",
    "coverage": "/coverage/doc.html",
}


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1600})
    page = context.new_page()
    page.errors = []
    page.on("console", lambda msg: msg.type == "error" and page.errors.append(msg.text))
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    yield page
    context.close()


@pytest.mark.parametrize("name", list(PAGES))
def test_page_loads_with_its_images_and_no_console_errors(page, served_site, screenshots, name):
    response = page.goto(served_site + PAGES[name], wait_until="networkidle")
    assert response.ok
    broken = page.eval_on_selector_all(
        "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    assert broken == []
    alts = page.eval_on_selector_all("article img", "imgs => imgs.map(i => i.alt)")
    assert all(alt.strip() for alt in alts)
    page.screenshot(path=screenshots / f"{name}.png", full_page=True)
    assert page.errors == []


def test_claim_pages_show_their_images(page, served_site):
    page.goto(served_site + PAGES["claim"], wait_until="networkidle")
    # the claim's figure, its per-seed strip and its trend over the two runs
    assert page.locator("article img").count() == 3


def test_markdown_and_html_characters_in_a_claim_are_shown_as_written(page, served_site):
    # the sentence titles the claim: an h3 on its source page, the h1 of its own page
    for path, title in ((PAGES["source"], "article h3"), (PAGES["claim"], "article h1")):
        page.goto(served_site + path, wait_until="networkidle")
        heading = page.locator(title).filter(has_text="A sentence with a pipe").first
        assert heading.inner_text().strip().rstrip("¶").strip() == ODD_SENTENCE
        assert heading.locator("b").count() == 0  # not interpreted as HTML


def test_search_finds_a_claim_by_a_word_of_its_sentence_and_by_its_id(page, served_site):
    page.goto(served_site + "/", wait_until="networkidle")
    for query in ("gallop", "doc.zebra"):
        box = page.locator("input.md-search__input")
        box.click()
        box.fill("")
        page.keyboard.type(query, delay=30)  # the theme searches on key events
        hit = page.locator(".md-search-result__item").filter(has_text="doc.zebra").first
        hit.wait_for(timeout=10_000)
        assert "doc.zebra" in hit.inner_text()
        page.keyboard.press("Escape")


def test_tag_page_lists_claims_by_level_and_verdict(page, served_site):
    page.goto(served_site + PAGES["tags"], wait_until="networkidle")
    text = page.locator("article").inner_text()
    for tag in ("established", "likely", "holds", "doc"):
        assert tag in text
    assert "doc.odd" in text and "doc.zebra" in text


def test_errata_page_shows_printed_against_measured(page, served_site):
    page.goto(served_site + PAGES["errata"], wait_until="networkidle")
    text = page.locator("article").inner_text()
    assert "What is wrong: snails have one foot, not two" in text
    assert "1 distinct error, shown by 1 check" in " ".join(text.split())
    row = page.locator("article table tr").filter(has_text="feet")
    assert [c.strip() for c in row.locator("td").all_inner_texts()] == ["feet", "2", "1"]


def test_the_performance_page_shows_the_benchmark_tables(page, served_site):
    page.goto(served_site + PAGES["performance"], wait_until="networkidle")
    text = page.locator("article").inner_text()
    assert "cold, every core / one worker" in text and "met" in text
    assert page.locator("article table").count() >= 5  # run, slowest, targets, runs, ratios...


def test_the_coverage_page_shows_the_text_with_linked_verdicts_and_flags(page, served_site):
    page.goto(served_site + PAGES["coverage"], wait_until="networkidle")
    rows = page.locator("article table").nth(1).locator("tbody tr")
    assert rows.count() == 5  # the text, line by line
    first = [c.strip() for c in rows.nth(0).locator("td").all_inner_texts()]
    assert first[:2] == ["1", "A test document about <b>animals</b> | and losses."]  # literal
    assert page.locator("article table b").count() == 0  # never live HTML from the text
    assert "not-a-claim" in first[2] and "the title" in first[2]
    zebra = rows.nth(2)
    assert zebra.locator("a .cb-holds").inner_text() == "holds"
    assert rows.nth(3).locator("a").filter(has_text="doc.typo").count() == 1
    assert rows.nth(3).locator("a .cb-erratum").inner_text() == "erratum"  # its own link
    flagged = rows.nth(4)
    assert flagged.locator(".cb-flag").inner_text() == "5"  # the uncovered tag's line
    assert flagged.locator(".cb-uncovered").inner_text() == "uncovered"
    assert rows.nth(1).locator(".cb-uncovered").count() == 0
    color = flagged.locator(".cb-uncovered").evaluate("e => getComputedStyle(e).backgroundColor")
    assert color == "rgb(198, 40, 40)"  # the badge's style reached the page
    totals = page.locator("article table").first.inner_text()
    # kind, total, covered, accounted, then tested (can fail), recorded, by construction,
    # skipped, cited, stand-in, hardware, not a claim, uncovered
    assert "tagged\t3\t66.6%\t66.6%\t2\t0\t0\t0\t0\t0\t0\t0\t1" in totals
    rows.nth(1).locator("a").filter(has_text="doc.odd").click()
    page.wait_for_url("**/claims/doc.odd.html")
    assert page.locator("article h1").inner_text().strip().startswith("A sentence with a pipe")
    assert "doc.odd" in page.locator("article").inner_text()
