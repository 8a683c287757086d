"""Wide tables in headless Chromium: a Measured table with a column per seed, and a trend
table, on a MkDocs-material page styled by claimbook's own CSS (templates/claimbook.css)."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CSS = ROOT / "framework" / "src" / "claimbook" / "templates" / "claimbook.css"
SEEDS = 6


def _measured() -> str:
    """A claim page's Measured table at six seeds: ten columns."""
    head = ["measure", "printed", *(f"seed {s}" for s in range(SEEDS)), "mean ± sd", "reproduced"]
    rows = [" | ".join(head), " | ".join("---" for _ in head)]
    for name in ("val loss (spec=attention)", "parameters (kind=lstm, kernel=4, n_heads=4)"):
        seeds = [f"{1.5 + 0.0123456 * s:.6f}" for s in range(SEEDS)]
        rows.append(" | ".join([name, "1.52", *seeds, "1.530864 ± 0.023456", "no (2 of 6)"]))
    return "\n".join(f"| {row} |" for row in rows)


PAGES = {
    "wide.md": f"# A claim\n\nProse before the table.\n\n## Measured\n\n{_measured()}\n\n"
    "## Notes\n\nMore prose.\n",
    "narrow.md": "# Narrow\n\n## Counts\n\n| verdict | claims |\n|---|---|\n| holds | 3 |\n\n"
    "## Notes\n\nProse.\n",
}


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep the test's output clean
        pass


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> str:
    """The two pages built with MkDocs-material and claimbook.css, served over HTTP."""
    work = tmp_path_factory.mktemp("tables")
    docs = work / "docs"
    (docs / "assets").mkdir(parents=True)
    (docs / "assets" / "claimbook.css").write_text(CSS.read_text())
    for name, text in PAGES.items():
        (docs / name).write_text(text)
    config = {"site_name": "tables", "docs_dir": str(docs), "site_dir": str(work / "site"),
              "theme": {"name": "material", "font": False}, "extra_css": ["assets/claimbook.css"],
              "markdown_extensions": ["tables", "toc"]}  # fmt: skip
    (work / "mkdocs.yml").write_text(yaml.safe_dump(config))
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                    str(work / "mkdocs.yml")], check=True,
                   env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})  # fmt: skip
    handler = functools.partial(Quiet, directory=work / "site")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


GEOMETRY = """() => {
  const wrap = document.querySelector('article .md-typeset__scrollwrap');
  const table = wrap.querySelector('table'), article = document.querySelector('article');
  const toc = document.querySelector('.md-sidebar--secondary');
  return {table: table.getBoundingClientRect().right,
          article: article.getBoundingClientRect().right,
          scroll: wrap.scrollWidth - wrap.clientWidth, overflow: getComputedStyle(wrap).overflowX,
          toc: toc ? getComputedStyle(toc).display : 'none'};
}"""


def _open(browser, url: str, width: int):
    page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(url, wait_until="networkidle")
    return page


def test_a_wide_table_gets_a_wider_column_on_a_laptop_screen(browser, site, screenshots):
    page = _open(browser, f"{site}/wide/", 1280)
    shown = page.evaluate(GEOMETRY)
    page.screenshot(path=screenshots / "wide-table-1280.png", full_page=True)
    assert shown["table"] <= shown["article"] + 1, shown  # every column inside the column
    assert shown["scroll"] <= 0 and shown["toc"] == "none"
    narrow = _open(browser, f"{site}/narrow/", 1280).evaluate(GEOMETRY)
    assert narrow["toc"] != "none"  # a page of narrow tables keeps its table of contents


def test_a_table_wider_than_the_screen_scrolls_with_its_first_column_in_view(
    browser, site, screenshots
):
    page = _open(browser, f"{site}/wide/", 600)  # a phone held sideways
    shown = page.evaluate(GEOMETRY)
    assert shown["scroll"] > 200 and shown["overflow"] == "auto"
    before = page.evaluate(
        "() => [...document.querySelectorAll('article tbody tr:first-child td')]"
        ".slice(0, 2).map(c => c.getBoundingClientRect().left)"
    )
    page.evaluate("() => { document.querySelector('article .md-typeset__scrollwrap')"
                  ".scrollLeft = 200; }")  # fmt: skip
    after = page.evaluate(
        "() => [...document.querySelectorAll('article tbody tr:first-child td')]"
        ".slice(0, 2).map(c => c.getBoundingClientRect().left)"
    )
    page.screenshot(path=screenshots / "wide-table-600-scrolled.png", full_page=True)
    assert after[1] < before[1] - 100  # the other columns scrolled
    left = page.locator("article .md-typeset__scrollwrap").bounding_box()["x"]
    assert left - 1 <= after[0] <= before[0]  # the measure's name stayed in view, at the left
