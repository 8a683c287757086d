"""Where a source page lists a claim: under the heading of its ``place=`` snippet (the section
where its result is argued) rather than of a summary card above it, every heading present,
and the checks of the text as a whole on a page of their own, linked from what they check."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from claimbook import WHOLE_TEXT
from claimbook.coverage.anchors import Text
from claimbook.coverage.catalog import Catalog, ClaimInfo, catalog_entry
from claimbook.coverage.check import unresolved_anchors
from claimbook.declare.spec import ClaimDeclarationError, Source, validate
from claimbook.render.order import Section, link_checks, place
from claimbook.render.site import render_site
from claimbook.storage.results import latest_results

from tests.unit.conftest import strict_build

ROOT = Path(__file__).resolve().parents[2]
DOC = Source(id="doc", title="A test document", path="doc.txt")

# a summary card at the top, then the experiments that argue its results
TEXT = """A Little Book¶

What changed¶

Our runs: the model recalls 1.00 at every distance.

Experiment one: recall¶

The model recalls every key at every distance, in every seed.

A table printed twice: 12 rows.

Experiment two: a table¶

The same table again: 12 rows.

Further reading¶

Nothing here is a claim.
"""


@dataclass
class Claim:
    id: str
    text_line: int | None = None


def titles(sections: list[Section]) -> list[tuple[str, list[str]]]:
    return [(s.title, [c.id for c in s.claims]) for s in sections]


def test_a_place_snippet_lists_the_claim_where_its_result_is_argued_not_under_the_card():
    at = {"doc.recall": ["Our runs: the model recalls", "recalls every key"],
          "doc.card": ["Our runs: the model recalls"]}  # fmt: skip
    places = {"doc.recall": "The model recalls every key"}
    sections = place([Claim("doc.recall"), Claim("doc.card")], Text(TEXT), at, places)
    assert titles(sections) == [
        ("A Little Book", []),
        ("What changed", ["doc.card"]),
        ("Experiment one: recall", ["doc.recall"]),
        ("Experiment two: a table", []),
        ("Further reading", []),  # a heading with no claim is still a section of the page
    ]
    assert sections[2].claims[0].text_line == 9  # the line that places it


def test_a_place_snippet_the_text_lacks_falls_back_to_the_first_anchor():
    claim = Claim("doc.recall")
    sections = place([claim], Text(TEXT), {"doc.recall": ["Our runs"]}, {"doc.recall": "gone"})
    assert [s.title for s in sections if s.claims] == ["What changed"]
    assert claim.text_line == 5


def test_a_check_of_the_whole_text_is_linked_from_each_section_its_anchors_fall_in():
    at = {"doc.twice": ["A table printed twice", "The same table again", "12 rows."],
          "doc.card": ["Our runs"], "doc.nowhere": ["not in the text"]}  # fmt: skip
    sections = place([Claim("doc.card")], Text(TEXT), at)
    checks = [Claim("doc.twice"), Claim("doc.nowhere")]
    checked = link_checks(sections, checks, Text(TEXT), at)
    assert [s.title for s in checked["doc.twice"]] == ["Experiment one: recall",
                                                       "Experiment two: a table"]  # fmt: skip
    assert checked["doc.nowhere"] == []
    assert [[c.id for c in s.checks] for s in sections] == [[], [], ["doc.twice"],
                                                            ["doc.twice"], []]  # fmt: skip
    assert [s.anchor for s in sections[1:3]] == ["what-changed", "experiment-one-recall"]
    assert Section("¶ · ¶", 7).anchor == "line-7"


@pytest.mark.parametrize(
    ("place_", "message"),
    [(["two", "places"], "'place' must be one source snippet"),
     ("   ", "'place' must be one source snippet"),
     (3, "'place' must be one source snippet")],
)  # fmt: skip
def test_a_malformed_place_fails_its_declaration(place_, message):
    kwargs = dict(id="doc.x", level="established", source=DOC, at="recalls", place=place_)
    with pytest.raises(ClaimDeclarationError, match=message):
        validate("t.py::t", (), kwargs)


def test_place_needs_an_anchor_and_is_kept_in_the_spec_and_the_catalog():
    with pytest.raises(ClaimDeclarationError, match="give at= too"):
        validate("t.py::t", (), dict(id="doc.x", level="established", source=DOC, place="x"))
    spec = validate("t.py::t", (), dict(id="doc.x", level="established", source=DOC,
                                        at="Our runs", place="recalls every key"))  # fmt: skip
    assert spec.place == "recalls every key" and spec.to_dict()["place"] == "recalls every key"
    assert catalog_entry(spec.to_dict())["place"] == "recalls every key"
    plain = validate("t.py::t", (), dict(id="doc.y", level="established", source=DOC, at="x"))
    assert plain.place == ""


def test_a_place_snippet_is_resolved_like_an_anchor(tmp_path):
    (tmp_path / "doc.txt").write_text(TEXT)

    def info(claim_id: str, place_: str) -> ClaimInfo:
        return ClaimInfo(claim_id, "doc", "established", at=("Our runs",), place=place_,
                         source_path="doc.txt")  # fmt: skip

    catalog = Catalog({c.id: c for c in (info("doc.a", "not in the text"),
                                         info("doc.b", WHOLE_TEXT),
                                         info("doc.c", "recalls every key"))})  # fmt: skip
    unresolved, unread = unresolved_anchors(catalog, tmp_path)
    assert unread == [] and len(unresolved) == 1
    assert unresolved[0].startswith('doc.a: "not in the text" not found')


CLAIMS = """
DOC = Source(id="doc", title="A test document", path="doc.txt")

@claim("doc.recall", "established", source=DOC, at=("Our runs: the model", "recalls every key"),
       place="The model recalls every key")
def test_recall(measure):
    '''The model recalls every key.'''
    assert measure("accuracy", 1.0) == 1.0

@claim("doc.twice", "established", source=DOC, at=("A table printed twice", "The same table again"),
       place=WHOLE_TEXT)
def test_twice(measure):
    '''The table printed twice has the same rows both times.'''
    assert measure("rows", 12) == 12
"""


def test_the_pages_list_every_heading_and_the_checks_of_the_whole_text_apart(
    claims_project, pytester, tmp_path
):
    texts = tmp_path / "texts"
    texts.mkdir()
    (texts / "doc.txt").write_text(TEXT)
    result, _ = claims_project("from claimbook import WHOLE_TEXT\n" + CLAIMS)
    assert result.ret == 0, result.stdout.str()
    docs = tmp_path / "reports"
    render_site(latest_results(pytester.path / "reports" / "results"), docs,
                ROOT / "templates", sources_dir=texts)  # fmt: skip
    page = (docs / "sources" / "doc.md").read_text()
    headings = [line for line in page.splitlines() if line.startswith("## ")]
    assert headings == [
        "## A Little Book { #a-little-book }",
        "## What changed { #what-changed }",
        "## Experiment one: recall { #experiment-one-recall }",
        "## Experiment two: a table { #experiment-two-a-table }",
        "## Further reading { #further-reading }",
    ]
    recall = page.index("# The model recalls every key.")
    assert page.index("## Experiment one") < recall < page.index("## Experiment two")
    assert "### The table printed twice" not in page  # on the checks' own page
    link = "[`doc.twice`](../sources/doc.whole-text.md#doc-twice)"
    assert page.count(link) == 2  # from both sections it checks
    assert "*Line 17 of the text; no claim is tested under this heading.*" in page
    checks = (docs / "sources" / "doc.whole-text.md").read_text()
    assert "### The table printed twice has the same rows both times." in checks
    assert (
        "[Experiment one: recall](../sources/doc.md#experiment-one-recall), "
        "[Experiment two: a table](../sources/doc.md#experiment-two-a-table)."
    ) in checks
    claim_page = (docs / "claims" / "doc.twice.md").read_text()
    assert "Checks of the whole text of [doc](../sources/doc.whole-text.md#doc-twice)" in claim_page
    assert "line 9 of the text" in (docs / "claims" / "doc.recall.md").read_text()
    build = strict_build(docs, tmp_path)  # every link and anchor above resolves
    assert build.returncode == 0, build.stderr
