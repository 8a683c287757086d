"""A source page in the source's own order: every heading of the text, and each claim under
the heading its ``place=`` snippet, else its first ``at=`` anchor, falls under. A check of
the text as a whole (``place=WHOLE_TEXT``) is listed on a page of its own, and each section
one of its anchors falls in links to it (:func:`link_checks`).

The text is read at render time (``CLAIMBOOK_SOURCES_DIR``), never copied. Headings are
found by the way a plain-text export writes them:

- a line ending in a pilcrow (``¶``, the permalink sign of MkDocs and Sphinx exports);
- else, in a Markdown file (``.md``), a Markdown heading (``# Title``);
- else a short line in title case standing alone between blank lines, with no sentence
  punctuation at its end, no code in it and no bullet, number or box-drawing at its start.

A heading whose title repeats in the text ("The idea", under each step) is named with the
nearest heading before it whose title does not repeat ("Step 1 (major): ... · The idea"),
so that each section appears once, under one name.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from claimbook.coverage.anchors import Text

PILCROW = "¶"
_MARKDOWN = re.compile(r"^#{1,6}\s+(\S.*?)\s*#*\s*$")
_NOT_A_START = (*"•-*+>|│┌└├─=#$`([{<\"'", "def ", "import ", "from ", "return ")
_SENTENCE_END = tuple(".,;:!?\"'”’…")
_CODE = re.compile(r"[=#\[\]{}<>_`\\]|\w\(")  # an assignment, a call, markup: not a heading
MAX_WORDS = 14


@dataclass
class Heading:
    line: int  # 1-based
    title: str


@dataclass
class Section:
    """A heading of the source (or, for claims it cannot place, the reason) and its claims."""

    title: str
    line: int | None  # None: the claims whose anchor the text does not hold
    claims: list = field(default_factory=list)
    checks: list = field(default_factory=list)  # checks of the whole text with an anchor here

    @property
    def anchor(self) -> str:
        """The id of its heading on the page, from its title ("line-N" if it has no word)."""
        words = re.findall(r"[a-z0-9]+", self.title.lower())
        return "-".join(words)[:80].strip("-") or f"line-{self.line}"


def _plain_heading(lines: list[str], i: int) -> bool:
    line = lines[i].strip()
    if not line or len(line.split()) > MAX_WORDS or len(line) > 100:
        return False
    if line.startswith(_NOT_A_START) or line.endswith(_SENTENCE_END) or _CODE.search(line):
        return False
    if not (line[0].isupper() or line[0].isdigit()):
        return False
    if re.match(r"\d+[.)] ", line):  # a numbered list item
        return False
    long = [w for w in re.findall(r"[^\W\d_][\w'-]*", line) if len(w) > 3]
    if long and sum(w[0].isupper() for w in long) * 2 < len(long):  # a title is in title case
        return False
    before = i == 0 or not lines[i - 1].strip()
    after = i + 1 == len(lines) or not lines[i + 1].strip()
    return before and after


def headings(text: Text) -> list[Heading]:
    """The headings of ``text`` in order, each titled as a reader sees it (see the module)."""
    lines = text.lines
    if any(line.rstrip().endswith(PILCROW) for line in lines):
        found = [
            Heading(n, line.rstrip().removesuffix(PILCROW).strip())
            for n, line in enumerate(lines, 1)
            if line.rstrip().endswith(PILCROW)
        ]
    elif text.path is not None and text.path.suffix in (".md", ".markdown"):
        matches = [(n, _MARKDOWN.match(line)) for n, line in enumerate(lines, 1)]
        found = [Heading(n, m.group(1)) for n, m in matches if m]
    else:
        found = [Heading(n, lines[n - 1].strip()) for n in range(1, len(lines) + 1)
                 if _plain_heading(lines, n - 1)]  # fmt: skip
    return _qualified(found)


def _first_word(title: str) -> str:
    return title.split(maxsplit=1)[0] if title.split() else ""


def _qualified(found: list[Heading]) -> list[Heading]:
    """Repeated titles named with their parent: the nearest earlier heading whose title is
    unique and is worded like the parents of the title's other occurrences ("Step 4 ..."
    over "The problem before" for Step 4's "The idea", as Steps 1-3 are its other parents)."""
    repeats = Counter(h.title for h in found)
    unique = [h for h in found if repeats[h.title] == 1]

    def candidates(h: Heading) -> list[Heading]:
        return [u for u in unique if u.line < h.line]

    nearest = {h.line: (candidates(h) or [None])[-1] for h in found if repeats[h.title] > 1}
    usual = Counter(
        (h.title, _first_word(p.title)) for h in found if (p := nearest.get(h.line)) is not None
    )
    out = []
    for h in found:
        if repeats[h.title] == 1:
            out.append(h)
            continue
        words = [w for (title, w), _ in usual.most_common() if title == h.title]
        before = [u for u in reversed(candidates(h)) if words and _first_word(u.title) == words[0]]
        parent = before[0] if before else nearest[h.line]
        out.append(Heading(h.line, f"{parent.title} · {h.title}" if parent else h.title))
    return out


def anchor_line(text: Text, snippets: list[str]) -> int | None:
    """The first line of ``text`` that one of a claim's ``at=`` snippets resolves to."""
    lines = [text.find(s).line for s in snippets]
    lines = [n for n in lines if n is not None]
    return min(lines) if lines else None


UNPLACED = "Not placed in the text"


WHOLE = "Checks of the whole text"  # the title of a source's page of such checks


UNREAD = "Claims (the text was not read, so their places in it are unknown)"


def declared(claims: list) -> list[Section]:
    """``claims`` grouped by their declared ``section``, in the order the sections first
    appear: the fallback when the source text cannot be read."""
    sections: dict[str, Section] = {}
    for claim in claims:
        title = claim.section or UNREAD
        sections.setdefault(title, Section(title, None)).claims.append(claim)
    return list(sections.values())


def name_places(sections: list[Section]) -> None:
    """Tell each claim the section of the page it is under (``text_section``)."""
    for section in sections:
        for claim in section.claims:
            claim.text_section = section.title


def _section_at(line: int, marks: list[Heading], sections: dict[int, Section]) -> Section:
    """The section of ``sections`` (by heading line) whose heading is the last at or above
    ``line``; above the first heading, an "Opening" section, made on first use."""
    above = [h for h in marks if h.line <= line]
    head = above[-1] if above else Heading(0, "Opening")
    return sections.setdefault(head.line, Section(head.title, head.line))


def place(
    claims: list, text: Text, at: dict[str, list[str]], places: dict[str, str] | None = None
) -> list[Section]:
    """Every heading of ``text`` in text order, each once, with the ``claims`` (objects with
    ``id`` and a writable ``text_line``) under it; within a heading by line, then id. A
    heading no claim falls under is listed with no claims.

    ``at``: each claim's ``at=`` snippets; ``places``: a claim's ``place=`` snippet, which
    places it instead of its first anchor (where that snippet is not found, the anchors
    do). Claims that neither finds go to a last section, :data:`UNPLACED`, in the order
    given. A claim above the first heading goes under an "Opening" section.
    """
    marks = headings(text)
    places = places or {}
    sections = {h.line: Section(h.title, h.line) for h in marks}
    unplaced = Section(UNPLACED, None)
    for claim in claims:
        where = places.get(claim.id)
        claim.text_line = anchor_line(text, [where]) if where else None
        if claim.text_line is None:
            claim.text_line = anchor_line(text, at.get(claim.id, []))
        if claim.text_line is None:
            unplaced.claims.append(claim)
            continue
        _section_at(claim.text_line, marks, sections).claims.append(claim)
    ordered = [sections[n] for n in sorted(sections)]
    for section in ordered:
        section.claims.sort(key=lambda c: (c.text_line, c.id))
    return ordered + ([unplaced] if unplaced.claims else [])


def link_checks(
    sections: list[Section], checks: list, text: Text, at: dict[str, list[str]]
) -> dict[str, list[Section]]:
    """Give each section of ``sections`` (from :func:`place`) the ``checks`` (claims that
    check the text as a whole) with an ``at=`` anchor under its heading; return each check's
    id -> those sections, in text order."""
    placed = [s for s in sections if s.line is not None]
    checked: dict[str, list[Section]] = {}
    for claim in checks:
        lines = sorted(n for s in at.get(claim.id, []) if (n := text.find(s).line) is not None)
        found = checked.setdefault(claim.id, [])
        for line in lines:
            above = [s for s in placed if s.line <= line]
            if above and all(
                s is not above[-1] for s in found
            ):  # above the first heading: no section
                found.append(above[-1])
                above[-1].checks.append(claim)
    return checked
