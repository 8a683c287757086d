"""View models: plain dataclasses the templates read; no logic lives in templates."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from claimbook.config import Settings
from claimbook.coverage.anchors import read_text, sources_dir
from claimbook.declare.spec import LEVELS, WHOLE_TEXT
from claimbook.judge.claims import DEFAULT_REPLAY, replay_command
from claimbook.judge.evidence import seeds_cell, summary
from claimbook.judge.verdicts import VERDICTS
from claimbook.render import values
from claimbook.render.errata import ErratumRow, ErrorGroup, corrections, erratum_rows, group_errors
from claimbook.render.evidence_view import EvidenceView, evidence_view
from claimbook.render.lean import lean
from claimbook.render.order import WHOLE, Section, declared, link_checks, name_places, place
from claimbook.render.table import printed_cell
from claimbook.render.trends import Change, CountGroup, TrendRow, changes_since, count_groups
from claimbook.render.values import ValueRow

# the verdicts in the order a reader wants them: what is wrong or unsettled first
PROBLEMS_FIRST = (
    "refuted", "error", "fixed", "not equivalent", "erratum", "inconclusive", "skipped", "cited",
    "not observed", "observed", "supported", "equivalent", "holds",
)  # fmt: skip


def problem_rank(verdict: str) -> int:
    return PROBLEMS_FIRST.index(verdict) if verdict in PROBLEMS_FIRST else len(PROBLEMS_FIRST)


@dataclass
class ClaimView:
    id: str
    sentence: str
    level: str
    verdict: str
    seeds: str
    note: str
    scope: str
    section: str
    source_id: str
    erratum: str
    error: str  # the source error an erratum shows (its key; "" for the claim's own)
    corrections: list[str]  # what an author can paste instead (an erratum's test records it)
    test: str
    file: str
    line: int
    printed: dict
    seed_columns: list[str]
    rows: list[ValueRow]
    curve_rows: list[ValueRow]
    remark: str
    source_code: str
    printed_summary: str
    figure: str | None = None
    figure_alt: str = ""
    strip: str | None = None
    known_refuted: str = ""  # refuted at the text's setup, seen and kept by the author: why
    stand_in: str = ""  # run on a model that cannot show the sentence: why (listed apart)
    failures: list[dict] = field(default_factory=list)
    replay: str = ""
    source_link: str = ""
    trend: list[TrendRow] = field(default_factory=list)
    trend_names: list[str] = field(default_factory=list)
    trend_figure: str | None = None
    measured: str = ""  # when its values were measured, if some were reused from a past run
    evidence_line: str = ""  # the evidence in one line (claimbook.judge.evidence.summary)
    evidence: EvidenceView | None = None  # None: no rule (deterministic) or nothing measured
    wide: bool = False  # more seeds than SEED_COLUMNS: per-seed values in one wrapping cell
    seed_range: str = ""  # the seeds of that wrapping cell, e.g. "seeds 0 to 19"
    text_line: int | None = None  # the source line its at= anchor resolves to (render time)
    text_section: str = ""  # the source page's section it is under (render time)
    names: dict = field(default_factory=dict)  # measure label -> its name as pages show it
    yearly: bool = False  # its printed integers are years: show its whole numbers as years
    lean: str = ""  # undecided: which way its evidence leans, in one phrase (render.lean)
    source_page: str = ""  # the page that lists it (from the docs root; render time)

    @property
    def page(self) -> str:
        return f"claims/{self.id}.md"


@dataclass
class SourceView:
    id: str
    title: str
    document: str
    sections: list[Section]  # the source's headings in text order, each with its claims
    counts: dict
    coverage: str = ""  # its coverage page (from the docs root), when it has a map
    unordered: str = ""  # why the claims are grouped by declared section, not by the text
    checks: list[ClaimView] = field(default_factory=list)  # of the whole text (own page)
    checked: dict = field(default_factory=dict)  # a check's id -> the sections it checks

    @property
    def page(self) -> str:
        return f"sources/{self.id}.md"

    @property
    def checks_page(self) -> str:
        """Its page of the checks of the whole text (from the docs root)."""
        return f"sources/{self.id}.whole-text.md"


@dataclass
class ErratumView:
    """A claim declared an erratum: where it is, what was printed, what holds, and why."""

    claim: ClaimView
    rows: list[ErratumRow]
    corrections: list[str] = field(default_factory=list)


@dataclass
class SiteView:
    title: str  # the book's name (its title setting)
    run: dict
    sources: list[SourceView]
    claims: list[ClaimView]
    by_verdict: dict
    by_level: dict
    by_source: dict  # {"verdict" | "level": {name: {source id: count}}}
    errata: list[ErrorGroup]  # one per distinct error in the sources, in the text's order
    run_failed: list[str]  # the run's own failure reasons (judge.outcome), empty if none
    partial_reasons: list[str]
    changes: list[Change] | None  # None: no previous run to compare with
    previous_run: dict | None
    history_changes: list[dict] | None = None  # None: no history; "linked": the claim has a page
    gate: dict | None = None  # the gate's decision (failed, reasons); None: not gated
    anchors: dict = field(default_factory=dict)  # {"verdict"|"level": {name: {source|"": id}}}
    verdict_groups: list[CountGroup] = field(default_factory=list)
    level_groups: list[CountGroup] = field(default_factory=list)
    fresh: dict = field(default_factory=dict)  # claim id -> first fresh seed (rule declared late)
    compared: bool = False  # the run was compared with a baseline (the gate's regression rules)

    problems_first: tuple = PROBLEMS_FIRST

    @property
    def refuted(self) -> list[ClaimView]:
        """Claims the runs show false (not errata: those are the source's own errors)."""
        return [c for c in self.claims if c.verdict in ("refuted", "not equivalent", "fixed")]

    @property
    def unsettled(self) -> list[ClaimView]:
        """Claims the runs could not decide (a stand-in's apart), or could not run: inconclusive,
        then errors."""
        order = ("inconclusive", "error")
        return sorted((c for c in self.claims if c.verdict in order and not (c.stand_in and
                       c.verdict == order[0])), key=lambda c: order.index(c.verdict))  # fmt: skip

    @property
    def examples(self) -> dict[str, ClaimView | None]:
        """One claim of this run per word the reading page explains with an example."""

        def first(test) -> ClaimView | None:
            return next((c for c in self.claims if test(c)), None)

        return {
            "deterministic": first(lambda c: c.verdict == "holds" and c.evidence_line),
            "supported": first(lambda c: c.verdict == "supported" and c.evidence),
            "inconclusive": first(lambda c: c.verdict == "inconclusive" and c.evidence
                                  and c.evidence.needed),
            "erratum": first(lambda c: c.verdict == "erratum"),
        }  # fmt: skip

    def listed(self, claims: list[ClaimView]) -> list[ClaimView]:
        """``claims`` problems first, then by source and id."""
        return sorted(claims, key=lambda c: (problem_rank(c.verdict), c.source_id, c.id))


def claim_view(
    claim: dict,
    figure: str | None,
    strip: str | None = None,
    commit_url: str = "",
    evidence: tuple[str, str] | None = None,
) -> ClaimView:
    """``evidence``: the path and alt text of the claim's evidence figure, if one was drawn."""
    columns, rows = values.value_rows(claim)
    wide = len(columns) > values.SEED_COLUMNS
    shown = evidence_view(claim)
    if shown and evidence:
        shown.figure, shown.figure_alt = evidence
    failures = [
        {"nodeid": i["nodeid"], "outcome": i["outcome"], "message": i["message"],
         "replay": i.get("replay", "")}
        for i in claim["instances"]
        if i["outcome"] in ("failed", "error", "skipped") and claim["verdict"] != "cited"
    ]  # fmt: skip
    fig = claim.get("figure")
    alt = f"{fig['title']}: {fig['ylabel']} against {fig['xlabel']}" if figure and fig else ""
    same = ("id", "sentence", "level", "verdict", "note", "scope", "section", "erratum", "test",
            "file", "line", "printed")  # fmt: skip
    return ClaimView(
        **{k: claim[k] for k in same},
        error=claim.get("error", ""),
        known_refuted=claim.get("known_refuted", ""),
        stand_in=claim.get("stand_in", ""),
        corrections=corrections(claim),
        seeds=seeds_cell(claim),
        source_id=claim["source"]["id"],
        seed_columns=columns,
        rows=rows,
        curve_rows=values.curve_rows(claim),
        remark=claim.get("remark", ""),
        source_code=claim.get("source_code", ""),
        printed_summary=printed_cell(claim),
        figure=figure,
        figure_alt=alt,
        strip=strip,
        failures=failures,
        replay=replay_command(claim["test"], None, claim.get("replay_form") or DEFAULT_REPLAY),
        measured=values.measured_note(claim),
        source_link=f"{commit_url}/{claim['file']}#L{claim['line']}" if commit_url else "",
        evidence_line=summary(claim),
        evidence=shown,
        names=values.shown_names(claim),
        yearly=values.years_table(claim),
        lean=lean(claim.get("statistics")) if claim["verdict"] == "inconclusive" else "",
        wide=wide,
        seed_range=values.seed_range([int(c.removeprefix("seed ")) for c in columns])
        if wide
        else "",
    )


def fresh_seeds(claims: list[dict]) -> dict[str, int]:
    """Claim id -> the first of its fresh seeds, for claims whose rule was declared late."""
    return {c["id"]: c["rule"]["fresh"] for c in claims if (c.get("rule") or {}).get("fresh")}


def site_view(
    results: dict,
    figures: dict[str, str],
    strips: dict[str, str] | None = None,
    previous: dict | None = None,
    repo_url: str = "",
    evidence: dict[str, tuple[str, str]] | None = None,
    texts: Path | None = None,
) -> SiteView:
    """Build the whole site's view from a results file, its figures and the previous run.

    ``evidence``: claim id -> (path, alt text) of its evidence figure. ``texts``: the folder
    of the source texts (default ``$CLAIMBOOK_SOURCES_DIR``), read to put each source page in
    the text's order; without it, claims are grouped by their declared sections.
    """
    strips, evidence = strips or {}, evidence or {}
    commit = results["run"].get("git_commit")
    commit_url = f"{repo_url.rstrip('/')}/blob/{commit}" if repo_url and commit else ""
    claims = [
        claim_view(c, figures.get(c["id"]), strips.get(c["id"]), commit_url, evidence.get(c["id"]))
        for c in results["claims"]
    ]
    sources = []
    by_source: dict[str, list] = defaultdict(list)
    titles = {}
    for raw, view in zip(results["claims"], claims, strict=False):
        by_source[raw["source"]["id"]].append(view)
        titles[raw["source"]["id"]] = raw["source"]
    at = {c["id"]: list(c.get("at") or []) for c in results["claims"]}
    places = {c["id"]: c.get("place") or "" for c in results["claims"]}
    for source_id, views in by_source.items():
        title, document = titles[source_id]["title"], titles[source_id]["document"]
        text, why = read_text(sources_dir(texts), titles[source_id].get("path", ""))
        # with the text, the checks of it as a whole go to a page of their own
        own = {v.id for v in views if text and places[v.id] == WHOLE_TEXT}
        whole = [v for v in views if v.id in own]
        rest = [v for v in views if v.id not in own]
        sections = place(rest, text, at, places) if text else declared(views)
        checked = link_checks(sections, whole, text, at) if whole else {}
        whole.sort(key=lambda c: ([s.line for s in checked[c.id]][:1], c.id))  # by 1st section
        name_places(sections)
        counts = dict(Counter(v.verdict for v in views))
        view = SourceView(source_id, title, document, sections, counts, unordered=why,
                          checks=whole, checked=checked)  # fmt: skip
        for claim in views:
            claim.source_page = view.checks_page if claim.id in own else view.page
        for claim in whole:
            claim.text_section = WHOLE
        sources.append(view)
    verdicts = Counter(c.verdict for c in claims)
    levels = Counter(c.level for c in claims)
    by_source = {
        "verdict": {v: Counter(c.source_id for c in claims if c.verdict == v) for v in VERDICTS},
        "level": {lv: Counter(c.source_id for c in claims if c.level == lv) for lv in LEVELS},
    }
    errata = [
        ErratumView(view, erratum_rows(raw), corrections(raw))
        for raw, view in zip(results["claims"], claims, strict=True)
        if view.erratum
    ]
    # the order of the source pages: each source's claims as its page lists them
    on_page = [c.id for s in sources for part in (*s.sections, Section(WHOLE, None, s.checks))
               for c in part.claims]  # fmt: skip
    order = {claim_id: (i,) for i, claim_id in enumerate(on_page)}
    shown = sorted(VERDICTS, key=problem_rank)
    verdict_groups, verdict_anchors = count_groups("verdict", shown, claims, sources)
    level_groups, level_anchors = count_groups("level", LEVELS, claims, sources)
    return SiteView(
        title=results["run"].get("book") or Settings.title,
        run=results["run"],
        sources=sources,
        claims=claims,
        by_verdict={v: verdicts.get(v, 0) for v in VERDICTS},
        by_level={lv: levels.get(lv, 0) for lv in LEVELS},
        by_source=by_source,
        errata=group_errors(errata, order),
        run_failed=(results["run"].get("outcome") or {}).get("failure_reasons", []),
        partial_reasons=(results["run"].get("outcome") or {}).get("partial_reasons", []),
        changes=changes_since(previous, results) if previous else None,
        previous_run=previous["run"] if previous else None,
        anchors={"verdict": verdict_anchors, "level": level_anchors},
        verdict_groups=verdict_groups,
        level_groups=level_groups,
        fresh=fresh_seeds(results["claims"]),
    )
