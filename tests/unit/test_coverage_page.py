"""The coverage page of a source: its text line by line with the claims' verdicts, or the map."""

from __future__ import annotations

from pathlib import Path

from claimbook.render.site import render_site
from claimbook.storage.results import latest_results

from tests.unit.conftest import strict_build
from tests.unit.test_coverage_cli import CLAIMS, with_path

ROOT = Path(__file__).resolve().parents[2]
TEXT = (
    "A tiny text with a pipe | and <b>bold</b> *stars*.\n"
    "It says two and two make four.\n"
    "    indented: a paper found a thing [likely].\n"
    "Nothing is tagged here [speculative].\n"
)
MAP = """
source = "doc"

[[statement]]
id = "sum"
at = "two and two make four"
kind = "number"
values = ["four"]
says = "2 + 2 = 4"
claims = ["doc.sum"]
checked = "asserted"

[[statement]]
id = "paper"
at = "a paper found a thing"
kind = "tagged"
level = "likely"
claims = ["doc.paper"]

[[statement]]
id = "open-tag"
at = "Nothing is tagged here"
kind = "tagged"
level = "speculative"

[[statement]]
id = "pipe"
at = "with a pipe"
kind = "model"
status = "not-a-claim"
reason = "a definition, <i>not</i> a result"

[[statement]]
id = "bold"
at = "indented:"
kind = "model"
claims = ["doc.sum"]
checked = "construction"
reason = "it compares a constant with itself"
"""


def render(claims_project, pytester, tmp_path, text: bool = True) -> tuple[Path, str]:
    maps, texts = tmp_path / "coverage", tmp_path / "texts"
    maps.mkdir(exist_ok=True)
    texts.mkdir(exist_ok=True)
    (maps / "doc.toml").write_text(MAP)
    if text:
        (texts / "doc.txt").write_text(TEXT)
    claims_project(with_path(CLAIMS.replace('at="two and two"', 'at=("two and two", "tiny")')))
    docs = tmp_path / "reports"
    results = latest_results(pytester.path / "reports" / "results")
    render_site(results, docs, ROOT / "templates", coverage_dir=maps, sources_dir=texts)
    return docs, (docs / "coverage" / "doc.md").read_text()


def test_the_page_shows_the_text_with_verdicts_flags_and_statuses(
    claims_project, pytester, tmp_path
):
    docs, page = render(claims_project, pytester, tmp_path)
    text = page.split("## Text")[1].split("## Statements")[0]
    rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines() if " | " in line}
    assert r"a pipe \| and &lt;b&gt;bold&lt;/b&gt; \*stars\*." in rows["1"]  # literal, escaped
    sum_row = rows["2"]
    holds = '[<span class="cb-badge cb-holds">holds</span>](../reading.md#holds)'
    assert f"[`doc.sum`](../claims/doc.sum.md) {holds}" in sum_row  # two links, not nested
    assert "(four: asserted)" in sum_row
    assert "&nbsp;" * 4 + "indented" in rows["3"]  # indentation kept
    cited = '[<span class="cb-badge cb-cited">cited</span>](../reading.md#cited)'
    assert f"[`doc.paper`](../claims/doc.paper.md) {cited}" in rows["3"]
    assert "cb-uncovered" not in rows["3"]  # tagged and covered (by a cited claim)
    assert '<span class="cb-flag">4</span>' in page  # the uncovered tag's line is flagged
    assert '`open-tag` <span class="cb-badge cb-uncovered">uncovered</span>' in page
    assert '<span class="cb-badge cb-status">not-a-claim</span> a definition, &lt;i&gt;not' in page
    # cited, not tested: tested, recorded, construction, skipped, cited, stand-in, hardware,
    # not-a-claim, uncovered
    assert "| tagged | 2 | **0.0%** | 50.0% | 0 | 0 | 0 | 0 | 1 | 0 | 0 | 0 | 1 |" in page
    # a claim that runs but checks only by construction: accounted for, never covered
    assert "| model | 2 | **0.0%** | 100.0% | 0 | 0 | 1 | 0 | 0 | 0 | 0 | 1 | 0 |" in page
    assert "`bold` (construction) [`doc.sum`](../claims/doc.sum.md)" in rows["3"]
    assert "compares a constant with itself" in rows["3"]
    assert ".md).\n\n| kind | total |" in page  # a table of its own, not the paragraph's end
    assert "anchor of" not in rows["2"]  # its at= is shown once, by the statement there
    assert "anchor of [`doc.sum`](../claims/doc.sum.md) [<span" in rows["1"]  # an at= alone
    assert "[coverage of doc](../coverage/doc.md)" in (docs / "sources" / "doc.md").read_text()
    assert "[coverage of doc](coverage/doc.md)." in (docs / "index.md").read_text()
    build = strict_build(docs, tmp_path)
    assert build.returncode == 0, build.stderr
    html = (tmp_path / "site" / "coverage" / "doc.html").read_text()  # pages as page.html
    assert "<b>bold</b>" not in html and "<i>not</i>" not in html  # shown, never live HTML
    assert 'href="../claims/doc.sum.html"' in html


def test_without_the_text_the_page_lists_the_map_and_says_so(claims_project, pytester, tmp_path):
    docs, page = render(claims_project, pytester, tmp_path, text=False)
    assert "The source text was not available" in page
    assert "cannot read" in page and "FileNotFoundError" in page
    assert "It says two and two" not in page
    for statement in ("`sum`", "`paper`", "`open-tag`", "`pipe`", "`bold`"):
        assert statement in page
    assert '<span class="cb-badge cb-status">not-a-claim</span>' in page
    build = strict_build(docs, tmp_path)
    assert build.returncode == 0, build.stderr
