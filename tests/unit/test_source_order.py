"""Source pages in the source's order: headings read from the text, claims under them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from claimbook.coverage.anchors import Text
from claimbook.render.glossary import link_terms
from claimbook.render.markup import heading
from claimbook.render.order import UNPLACED, declared, headings, place

EXPORT = """Chapter 9. Mixing¶

Intro words.

Step 1 (major): convolution¶

The idea¶

Kernels slide over the input.

Step 2 (major): recurrence¶

The idea¶

A state carries the past.

Step 3 (minor): attention¶

The problem before¶

The idea¶

Every token reads every other.

Recap¶

Convolutions see locally.
"""

PLAIN = """A Title Line

---

Part 6: Attention Patterns

Induction Heads and In-Context Learning

An induction head copies the token after a match.

Usage example:
x = torch.randn(1, 512, 768)  # [batch, seq, d_model]

1. Local attention: Each token attends to a window

Token 50 attends to tokens 40-60 only

Part 7: Putting It All Together

The whole layer is a sum of its parts.
"""


@dataclass
class Claim:
    id: str
    section: str = ""
    text_line: int | None = None


def test_pilcrow_headings_in_order_with_repeated_titles_named_by_their_parent():
    found = [(h.line, h.title) for h in headings(Text(EXPORT))]
    assert found == [
        (1, "Chapter 9. Mixing"),
        (5, "Step 1 (major): convolution"),
        (7, "Step 1 (major): convolution · The idea"),
        (11, "Step 2 (major): recurrence"),
        (13, "Step 2 (major): recurrence · The idea"),
        (17, "Step 3 (minor): attention"),
        (19, "The problem before"),
        # worded like its other parents ("Step ..."), not the nearest unique heading
        (21, "Step 3 (minor): attention · The idea"),
        (25, "Recap"),
    ]


def test_plain_text_headings_skip_code_list_items_and_sentences():
    titles = [h.title for h in headings(Text(PLAIN))]
    assert titles == [
        "A Title Line",
        "Part 6: Attention Patterns",
        "Induction Heads and In-Context Learning",
        "Part 7: Putting It All Together",
    ]


def test_markdown_headings_only_in_a_markdown_file(tmp_path):
    text = "# Title\n\nSome words.\n\n## Section two\n\n    # a comment in code\n"
    path = tmp_path / "notes.md"
    path.write_text(text)
    assert [h.title for h in headings(Text(text, path))] == ["Title", "Section two"]
    # in a plain-text file a line starting with "#" is code or a comment, never a heading
    assert [h.title for h in headings(Text(text, tmp_path / "notes.txt"))] == []


def test_claims_go_under_their_heading_in_text_order_and_each_section_once():
    claims = [Claim("c.recap"), Claim("c.state"), Claim("c.kernel"), Claim("c.late"),
              Claim("c.nowhere")]  # fmt: skip
    at = {
        "c.recap": ["see locally"],
        "c.state": ["A state carries"],
        "c.kernel": ["Kernels slide"],
        "c.late": ["Kernels slide over"],  # the same line: then by id
        "c.nowhere": ["not in the text"],
    }
    sections = place(claims, Text(EXPORT), at)
    shown = [(s.title, [c.id for c in s.claims]) for s in sections]
    assert shown == [  # every heading, those with no claim too
        ("Chapter 9. Mixing", []),
        ("Step 1 (major): convolution", []),
        ("Step 1 (major): convolution · The idea", ["c.kernel", "c.late"]),
        ("Step 2 (major): recurrence", []),
        ("Step 2 (major): recurrence · The idea", ["c.state"]),
        ("Step 3 (minor): attention", []),
        ("The problem before", []),
        ("Step 3 (minor): attention · The idea", []),
        ("Recap", ["c.recap"]),
        (UNPLACED, ["c.nowhere"]),
    ]
    lines = [s.line for s in sections if s.line is not None]
    assert lines == sorted(lines) and len({s.title for s in sections}) == len(sections)


def test_without_the_text_claims_keep_their_declared_sections_in_first_seen_order():
    claims = [Claim("a", "Step 3"), Claim("b", "Step 1"), Claim("c", "Step 3")]
    assert [(s.title, [c.id for c in s.claims]) for s in declared(claims)] == [
        ("Step 3", ["a", "c"]),
        ("Step 1", ["b"]),
    ]


def test_a_heading_is_cut_at_a_word_and_cannot_carry_attributes():
    assert (
        heading("A claim { #evil } about *stars*")
        == "A claim &#123; \\#evil &#125; about \\*stars\\*"
    )
    cut = heading("one two three four five six", 14)
    assert cut == "one two three …"


def test_terms_link_to_their_definition_once_each():
    text = "supported at 95% (96.7% per-look interval); the tolerance bound and the tolerance bound"
    linked = link_terms(text, "../")
    assert linked.startswith("[supported at 95%](../reading.md#confidence) (")
    assert "[96.7% per-look interval](../reading.md#per-look-interval)" in linked
    assert linked.count("reading.md#tolerance-bound") == 1
    stand_in = link_terms("not observed at 95% (typical value, 3 seeds)", "")
    assert stand_in.startswith("[not observed at 95%](reading.md#confidence) (")


SOURCES = os.environ.get("CLAIMBOOK_SOURCES_DIR")


@pytest.mark.skipif(not SOURCES, reason="needs CLAIMBOOK_SOURCES_DIR (the book's texts)")
@pytest.mark.parametrize("name", ["000_6d944b984c8dab64.txt", "001_4c9decde5873da15.txt"])
def test_the_books_texts_have_their_parts_as_headings_in_order(name):
    path = Path(SOURCES) / name
    found = headings(Text(path.read_text(encoding="utf-8"), path))
    titles = [h.title for h in found]
    assert len(titles) == len(set(titles)) and [h.line for h in found] == sorted(
        h.line for h in found
    )
    wanted = (
        ["Step 1 (major)", "Step 2 (major)", "Step 3 (major)", "Step 4 (minor)", "Step 5 (minor)"]
        if name.startswith("000")
        else ["Part 6:", "Part 7:", "Part 8:", "Summary: Key Takeaways"]
    )
    starts = [next(i for i, t in enumerate(titles) if t.startswith(w)) for w in wanted]
    assert starts == sorted(starts)
