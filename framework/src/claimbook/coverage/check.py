"""Check coverage maps against their source texts and a run's claims; count the totals.

For each map: resolve every statement's anchor and every anchor (``at=``) of the source's
claims in the text, check each number statement's values against its anchored line,
resolve the claim ids it names, and put each statement in one category (see
:mod:`claimbook.coverage.totals`). What is wrong becomes a :class:`Finding`: an *error*
(an anchor not found or ambiguous, an occurrence the text does not hold, a value not in
its line, a claim id no test declares) or a *warning* (a claim without ``at=`` or that no
statement names, the text not available because no sources folder is set, a claim id
unknown to an incomplete catalog, an uncovered statement). A text that a set sources
folder should hold but does not is an error: the anchors would otherwise go unchecked
while the gate passes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from claimbook.coverage.anchors import Text, read_text, sources_dir, value_in_line
from claimbook.coverage.catalog import Catalog, ClaimInfo, catalog_of
from claimbook.coverage.maps import CoverageMap, Statement, read_maps
from claimbook.coverage.totals import Totals
from claimbook.declare.spec import LEVELS, WHOLE_TEXT

TAG = re.compile(r"\[(?:" + "|".join(LEVELS) + r")\]", re.IGNORECASE)  # an evidence tag

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Finding:
    severity: str  # ERROR | WARNING
    source: str
    subject: str  # "statement 'x'", "claim ch04.y", "text"
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.source}: {self.subject}: {self.message}"


@dataclass
class StatementResult:
    statement: Statement
    line: int | None  # None: not found, ambiguous, or the text was not available
    category: str  # one of totals.CATEGORIES
    claims: list[ClaimInfo] = field(default_factory=list)  # the named claims the catalog knows


@dataclass
class ClaimAnchor:
    claim: ClaimInfo
    snippet: str
    line: int | None


@dataclass
class SourceReport:
    source: str
    map: CoverageMap
    text: Text | None
    text_problem: str  # why the text was not available ("" when it was)
    statements: list[StatementResult] = field(default_factory=list)
    anchors: list[ClaimAnchor] = field(default_factory=list)  # the source's claims' at=
    totals: dict[str, Totals] = field(default_factory=dict)


@dataclass
class Report:
    sources: list[SourceReport]
    findings: list[Finding]
    catalog: Catalog

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]

    def totals(self) -> dict[str, dict[str, Totals]]:
        return {s.source: s.totals for s in self.sources}


def category_of(statement: Statement, claims: list[ClaimInfo]) -> str:
    """The statement's column: its status; or, covered by claims of which one ran (or
    runs, in a partial run), "tested" when they can fail on it, else "recorded" or
    "construction" as its map says (``checked``); without a claim that ran, "hardware",
    "skipped", "stand-in" (run on a model that cannot show the sentence) or "cited", the
    first that a named claim is; "uncovered" when none is known."""
    if statement.status:
        return statement.status
    roles = {c.role for c in claims}
    if not roles:
        return "uncovered"
    if "tested" in roles:
        return statement.checked if statement.checked in ("recorded", "construction") else "tested"
    return next(role for role in ("hardware", "skipped", "stand-in", "cited") if role in roles)


def _check_statement(st: Statement, text: Text | None, say, cmap: CoverageMap) -> int | None:
    subject = f"statement {st.id!r}"
    if text is None:
        return None
    where = text.find(st.at, st.occurrence)
    if where.line is None and st.occurrence:
        say(ERROR, subject, f"occurrence = {st.occurrence} in {cmap.path}, but anchor "
            f"{st.at!r} {where.problem}")  # fmt: skip
        return None
    if where.line is None:
        hint = "; lengthen it, or give occurrence = N" if "ambiguous" in where.problem else ""
        say(ERROR, subject, f"anchor {st.at!r} {where.problem}{hint}")
        return None
    for value in st.values:
        if not value_in_line(value, text.lines[where.line - 1]):
            say(ERROR, subject, f"value {value!r} does not occur in its anchored line {where.line}")
    return where.line


def check_source(
    cmap: CoverageMap, catalog: Catalog, folder: Path | None
) -> tuple[SourceReport, list[Finding]]:
    """One map against its text (under ``folder``) and the catalog."""  # fmt: skip
    findings: list[Finding] = []

    def say(severity: str, subject: str, message: str) -> None:
        findings.append(Finding(severity, cmap.source, subject, message))

    text, problem = read_text(folder, catalog.source_path(cmap.source))
    if text is None:
        severity = WARNING if folder is None else ERROR  # a set folder must hold the text
        say(severity, "text", f"not available ({problem}): anchors and values not checked")
    report = SourceReport(cmap.source, cmap, text, problem)
    named: set[str] = set()
    for st in cmap.statements:
        line = _check_statement(st, text, say, cmap)
        known = []
        for claim_id in st.claims:
            named.add(claim_id)
            if claim_id in catalog.claims:
                known.append(catalog.claims[claim_id])
            elif catalog.complete:
                say(ERROR, f"statement {st.id!r}", f"names {claim_id!r}, which no test declares")
            else:
                say(WARNING, f"statement {st.id!r}", f"claim {claim_id!r} is not in the catalog "
                    f"({catalog.why_incomplete}): counted as uncovered")  # fmt: skip
        category = category_of(st, known)
        if category == "uncovered":
            say(WARNING, f"statement {st.id!r}", f"{st.kind} statement is uncovered")
        report.statements.append(StatementResult(st, line, category, known))
        report.totals.setdefault(st.kind, Totals()).add(category, st.weight)
    if text is not None:
        for line, missing in unmapped_tags(text, report.statements):
            say(WARNING, f"line {line}", f"{missing} evidence tag(s) in its paragraph that no "
                "tagged statement of the map covers: counted as uncovered")  # fmt: skip
            report.totals.setdefault("tagged", Totals()).add("uncovered", missing)
    for claim in catalog.of_source(cmap.source):
        subject = f"claim {claim.id}"
        if not claim.at:
            say(WARNING, subject, "declares no at= anchor")
        if claim.id not in named:
            say(WARNING, subject, "no statement of the map names it")
        for snippet in claim.at:
            where = text.find(snippet) if text else None
            if where is not None and where.line is None:
                say(ERROR, subject, f"at= anchor {snippet!r} {where.problem}")
            report.anchors.append(ClaimAnchor(claim, snippet, where.line if where else None))
    return report, findings


def unmapped_tags(text: Text, statements: list[StatementResult]) -> list[tuple[int, int]]:
    """(line, count) for each paragraph of ``text`` (lines between blank lines) that holds
    more evidence tags ("[likely]", ...) than the map has tagged statements in it: a tagged
    sentence the map leaves out is uncovered, not unseen. The line is the first tag line
    of the paragraph with more tags than statements."""
    tags = {n: len(TAG.findall(line)) for n, line in enumerate(text.lines, 1)}
    mapped = Counter(r.line for r in statements if r.statement.kind == "tagged" and r.line)
    found, paragraph = [], []
    for n in [*tags, len(tags) + 1]:  # a blank line, or the end, closes a paragraph
        if n <= len(tags) and text.lines[n - 1].strip():
            paragraph.append(n)
            continue
        missing = sum(tags[i] for i in paragraph) - sum(mapped[i] for i in paragraph)
        if missing > 0:
            short = [i for i in paragraph if tags[i] > mapped[i]]
            found.append((short[0], missing))
        paragraph = []
    return found


def check(maps: list[CoverageMap], catalog: Catalog, folder: Path | None) -> Report:
    """Every map against its text and the catalog (``folder``: the source texts)."""
    sources, findings = [], []
    for cmap in maps:
        report, found = check_source(cmap, catalog, folder)
        sources.append(report)
        findings += found
    mapped = {m.source for m in maps}
    for source in sorted({c.source for c in catalog.claims.values()} - mapped):
        findings.append(Finding(WARNING, source, "map", "its claims have no coverage map"))
    return Report(sources, findings, catalog)


def unresolved_anchors(catalog: Catalog, folder: Path | None) -> tuple[list[str], list[str]]:
    """Every claim's ``at=`` (and ``place=``) snippet that is not found exactly once in its
    source's text, with or without a coverage map: ``ch04.x: "snippet" not found in
    ch04.txt``; and why a text could not be read. Checks nothing without ``folder`` or a
    Source ``path``."""
    unresolved, unread, texts = [], [], {}
    if folder is None:
        return unresolved, unread
    for claim in sorted(catalog.claims.values(), key=lambda c: c.id):
        if not claim.at or not claim.source_path:
            continue
        if claim.source_path not in texts:
            texts[claim.source_path], problem = read_text(folder, claim.source_path)
            if problem:
                unread.append(f"{claim.source}: {problem}")
        text = texts[claim.source_path]
        placed = (claim.place,) if claim.place and claim.place != WHOLE_TEXT else ()
        for snippet in (*claim.at, *placed) if text else ():
            where = text.find(snippet)
            if where.line is None:
                unresolved.append(f'{claim.id}: "{snippet}" {where.problem} in {claim.source_path}')
    return unresolved, unread


def coverage_report(results: dict, maps_dir: Path | None, folder=None) -> Report | None:
    """The coverage of ``results``' claims by the maps in ``maps_dir``; None without maps.
    ``folder``: the source texts (default ``$CLAIMBOOK_SOURCES_DIR``).

    Raises CoverageMapError for a malformed map.
    """
    maps = read_maps(maps_dir) if maps_dir else []
    if not maps:
        return None
    return check(maps, catalog_of(results), sources_dir(folder))
