"""The coverage page of each source: its text line by line, marked by the claims covering it.

The text is read at render time from the sources folder (``CLAIMBOOK_SOURCES_DIR``); it is
never copied into the project. Without it the page still lists the map's statements with
their statuses, and says that the text was not available.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

from claimbook.coverage.catalog import ClaimInfo
from claimbook.coverage.check import ERROR, Finding, SourceReport, StatementResult, coverage_report
from claimbook.coverage.totals import table_rows
from claimbook.render.markup import md_escape, text_line

# LaTeX math in a line: \( \), \[ \] or $$ $$ around something, never a lone $ (money)
MATH = re.compile(r"(?<!\\)(?:\\\(.+?\\\)|\\\[.+?\\\]|\$\$.+?\$\$)")


def math_cell(text: str) -> str:
    """A line of a source text for a table cell, shown literally (``text_line``), its LaTeX
    math marked as pymdownx.arithmatex marks it: a span that KaTeX typesets, the LaTeX in it
    escaped like any text (a line can never inject markup)."""
    text = str(text)
    maths = MATH.findall(text)
    mark = "cbmath"
    while mark in text:  # a placeholder the line does not hold, which escaping keeps as is
        mark += "z"
    numbered = itertools.count()
    cell = text_line(MATH.sub(lambda _: f"{mark}{next(numbered)}q", text))
    for n, tex in enumerate(maths):
        cell = cell.replace(f"{mark}{n}q", f'<span class="arithmatex">{md_escape(tex)}</span>')
    return cell


@dataclass
class Badge:
    """A claim as a page shows it: its id, verdict, and its page (None when it has none)."""

    id: str
    verdict: str
    page: str | None


@dataclass
class StatementView:
    id: str
    kind: str
    says: str
    line: int | None
    category: str  # one of coverage.totals.CATEGORIES
    status: str
    reason: str
    level: str
    values: list[str]
    checked: str
    claims: list[Badge]
    missing: list[str]  # named claim ids the catalog does not know

    @property
    def flagged(self) -> bool:
        """An uncovered tagged statement: the page flags it."""
        return self.kind == "tagged" and self.category == "uncovered"


@dataclass
class LineView:
    number: int
    text: str
    statements: list[StatementView] = field(default_factory=list)
    anchors: list[Badge] = field(default_factory=list)  # claims whose at= points here

    @property
    def flagged(self) -> bool:
        return any(s.flagged for s in self.statements)

    @property
    def cell(self) -> str:
        """The line as its table cell shows it: literal text, math typeset."""
        return math_cell(self.text)


@dataclass
class CoverageView:
    id: str
    title: str
    rows: list[dict]  # the totals table (coverage.totals.table_rows)
    statements: list[StatementView]
    lines: list[LineView]  # empty when the text was not available
    text_problem: str
    findings: list[Finding]
    source_page: str = ""  # the source's claims page, when the results hold some of its claims

    @property
    def page(self) -> str:
        return f"coverage/{self.id}.md"

    @property
    def errors(self) -> int:
        return sum(f.severity == ERROR for f in self.findings)


def badge(claim: ClaimInfo) -> Badge:
    return Badge(claim.id, claim.verdict, f"claims/{claim.id}.md" if claim.has_page else None)


def statement_view(result: StatementResult) -> StatementView:
    st = result.statement
    known = {c.id for c in result.claims}
    return StatementView(
        id=st.id, kind=st.kind, says=st.says, line=result.line, category=result.category,
        status=st.status, reason=st.reason, level=st.level, values=list(st.values),
        checked=st.checked, claims=[badge(c) for c in result.claims],
        missing=[c for c in st.claims if c not in known],
    )  # fmt: skip


def coverage_view(report: SourceReport, findings: list[Finding], title: str) -> CoverageView:
    statements = [statement_view(r) for r in report.statements]
    lines = []
    if report.text is not None:
        lines = [LineView(n, text) for n, text in enumerate(report.text.lines, 1)]
        for view in statements:
            if view.line is not None:
                lines[view.line - 1].statements.append(view)
        for anchor in report.anchors:  # a claim's at=, unless a statement there shows it
            if anchor.line is not None:
                line = lines[anchor.line - 1]
                shown = {b.id for b in line.anchors} | {
                    b.id for s in line.statements for b in s.claims
                }
                if anchor.claim.id not in shown:
                    line.anchors.append(badge(anchor.claim))
    return CoverageView(
        id=report.source,
        title=title,
        rows=table_rows({report.source: report.totals}),
        statements=statements,
        lines=lines,
        text_problem=report.text_problem,
        findings=[f for f in findings if f.source == report.source],
    )


def coverage_views(
    results: dict, maps_dir: Path | None, folder: Path | None = None, titles: dict | None = None
) -> list[CoverageView]:
    """One view per map in ``maps_dir`` (none without the folder). Raises CoverageMapError
    for a malformed map."""  # fmt: skip
    report = coverage_report(results, maps_dir, folder)
    if report is None:
        return []
    titles = titles or {}
    views = [coverage_view(s, report.findings, titles.get(s.source, s.source))
             for s in report.sources]  # fmt: skip
    for view in views:
        view.source_page = f"sources/{view.id}.md" if view.id in titles else ""
    return views
