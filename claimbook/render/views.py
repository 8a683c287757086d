"""View models: plain dataclasses the templates read; no logic lives in templates."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from claimbook.declare.numbers import fmt
from claimbook.declare.spec import LEVELS
from claimbook.judge.claims import label, measures, replay_command
from claimbook.judge.verdicts import VERDICTS
from claimbook.render.errata import ErratumRow, erratum_rows
from claimbook.render.table import printed_cell
from claimbook.render.trends import Change, TrendRow, changes_since


@dataclass
class ValueRow:
    """One measured quantity across seeds: printed value and one cell per seed."""

    name: str
    printed: str
    cells: list[str]
    spread: str
    reproduced: str  # "yes", "no (1 of 3 seeds)", or "" when nothing is printed


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
    failures: list[dict] = field(default_factory=list)
    replay: str = ""
    source_link: str = ""
    trend: list[TrendRow] = field(default_factory=list)
    trend_names: list[str] = field(default_factory=list)
    trend_figure: str | None = None
    measured: str = ""  # when its values were measured, if some were reused from a past run

    @property
    def page(self) -> str:
        return f"claims/{self.id}.md"


@dataclass
class SourceView:
    id: str
    title: str
    document: str
    sections: list[tuple[str, list[ClaimView]]]
    counts: dict


@dataclass
class ErratumView:
    """A claim declared an erratum: where it is, what was printed, what holds, and why."""

    claim: ClaimView
    source_title: str
    rows: list[ErratumRow]


@dataclass
class SiteView:
    run: dict
    sources: list[SourceView]
    claims: list[ClaimView]
    by_verdict: dict
    by_level: dict
    by_source: dict  # {"verdict" | "level": {name: {source id: count}}}
    errata: list[ErratumView]
    gate_failed: list[str]  # the run's failure reasons (judge.outcome), empty if it passed
    partial_reasons: list[str]
    changes: list[Change] | None  # None: no previous run to compare with
    previous_run: dict | None
    history_changes: list[dict] | None = None  # None: no run history to read


def _spread(values: list) -> str:
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) < 2:
        return ""
    mean, sd = statistics.mean(nums), statistics.stdev(nums)
    if sd <= 1e-12 * max(abs(mean), 1e-300):  # identical values up to float rounding
        sd = 0
    return f"{fmt(mean)} ± {fmt(sd)}"


def _reproduced(checks: list[bool]) -> str:
    if not checks:
        return ""
    if all(checks):
        return "yes"
    return f"no ({len(checks) - sum(checks)} of {len(checks)})"


def _curve_rows(claim: dict) -> list[ValueRow]:
    """List-valued measures with a printed list (accuracy by distance) or no figure to
    draw them (weights per head), one row per seed."""
    rows = []
    for m in measures(claim):
        if isinstance(m["value"], list) and ("printed" in m or m.get("x") is None):
            seed = "" if m["seed"] is None else f" (seed {m['seed']})"
            rows.append(
                ValueRow(
                    name=m["name"] + seed,
                    printed=fmt(m["printed"]) if "printed" in m else "",
                    cells=[fmt(m["value"])],
                    spread="",
                    reproduced=_reproduced(
                        [m["reproduced"]] if m.get("reproduced") is not None else []
                    ),
                )
            )
    return rows


def _rows(claim: dict) -> tuple[list[str], list[ValueRow]]:
    """Scalar measures as rows (name and parameters) by seed columns."""
    # figure points (scalars with an x) are drawn, not tabulated
    ms = [m for m in measures(claim) if not isinstance(m["value"], list) and m.get("x") is None]
    seeds = sorted({m["seed"] for m in ms if m["seed"] is not None})
    columns = [f"seed {s}" for s in seeds] or ["value"]
    grouped: dict[str, dict] = defaultdict(dict)
    printed: dict[str, object] = {}
    checks: dict[str, list] = defaultdict(list)
    for m in ms:
        name = label(m)
        if m.get("unit"):
            name += f" [{m['unit']}]"
        grouped[name][m["seed"]] = m["value"]
        if "printed" in m:
            printed.setdefault(name, {})[m["seed"]] = m["printed"]
        if m.get("reproduced") is not None:
            checks[name].append(m["reproduced"])
    rows = []
    for name, by_seed in grouped.items():
        keys = seeds or [None]
        book = printed.get(name, {})
        book_values = sorted({fmt(v) for v in book.values()})
        over_seeds = _spread([by_seed[s] for s in keys if s in by_seed])
        if seeds and None in by_seed:  # a value about all seeds at once, in a per-seed table
            over_seeds = fmt(by_seed[None])
        rows.append(
            ValueRow(
                name=name,
                printed=" / ".join(fmt(book.get(s)) for s in keys if s in book)
                if len(book_values) > 1
                else (book_values[0] if book_values else ""),
                cells=[fmt(by_seed[s]) if s in by_seed else "" for s in keys],
                spread=over_seeds,
                reproduced=_reproduced(checks.get(name, [])),
            )
        )
    return columns, rows


def claim_view(
    claim: dict, figure: str | None, strip: str | None = None, commit_url: str = ""
) -> ClaimView:
    columns, rows = _rows(claim)
    seeds = (
        "-" if claim["seeds_total"] is None else f"{claim['seeds_passed']}/{claim['seeds_total']}"
    )
    failures = [
        {
            "nodeid": i["nodeid"],
            "outcome": i["outcome"],
            "message": i["message"],
            "replay": i.get("replay", ""),
        }
        for i in claim["instances"]
        if i["outcome"] in ("failed", "error", "skipped")
    ]
    alt = ""
    if figure and claim.get("figure"):
        fig = claim["figure"]
        alt = f"{fig['title']}: {fig['ylabel']} against {fig['xlabel']}"
    return ClaimView(
        id=claim["id"],
        sentence=claim["sentence"],
        level=claim["level"],
        verdict=claim["verdict"],
        seeds=seeds,
        note=claim["note"],
        scope=claim["scope"],
        section=claim["section"],
        source_id=claim["source"]["id"],
        erratum=claim["erratum"],
        test=claim["test"],
        file=claim["file"],
        line=claim["line"],
        printed=claim["printed"],
        seed_columns=columns,
        rows=rows,
        curve_rows=_curve_rows(claim),
        remark=claim.get("remark", ""),
        source_code=claim.get("source_code", ""),
        printed_summary=printed_cell(claim),
        figure=figure,
        figure_alt=alt,
        strip=strip,
        failures=failures,
        replay=replay_command(claim["test"], None),
        measured=measured_note(claim),
        source_link=f"{commit_url}/{claim['file']}#L{claim['line']}" if commit_url else "",
    )


def measured_note(claim: dict) -> str:
    """Which of the claim's instances were reused from an earlier execution, and from when."""
    reused = [i["replayed"]["measured_at"] for i in claim["instances"] if i.get("replayed")]
    if not reused:
        return ""
    when = f"{min(reused)[:16].replace('T', ' ')} UTC"
    if max(reused) != min(reused):
        when += f" to {max(reused)[:16].replace('T', ' ')} UTC"
    runs = sorted(
        {i["replayed"].get("run") for i in claim["instances"] if i.get("replayed")} - {None, ""}
    )
    where = f" in {', '.join(runs)}" if runs else ""
    return (
        f"{len(reused)} of {len(claim['instances'])} instances reused from their execution of "
        f"{when}{where}: nothing they depend on changed since."
    )


def site_view(
    results: dict,
    figures: dict[str, str],
    strips: dict[str, str] | None = None,
    previous: dict | None = None,
    repo_url: str = "",
) -> SiteView:
    """Build the whole site's view from a results file, its figures and the previous run."""
    strips = strips or {}
    commit = results["run"].get("git_commit")
    commit_url = f"{repo_url.rstrip('/')}/blob/{commit}" if repo_url and commit else ""
    claims = [
        claim_view(c, figures.get(c["id"]), strips.get(c["id"]), commit_url)
        for c in results["claims"]
    ]
    sources = []
    by_source: dict[str, list] = defaultdict(list)
    titles = {}
    for raw, view in zip(results["claims"], claims, strict=False):
        by_source[raw["source"]["id"]].append(view)
        titles[raw["source"]["id"]] = raw["source"]
    for source_id, views in by_source.items():
        sections: dict[str, list] = defaultdict(list)
        for v in views:
            sections[v.section].append(v)
        sources.append(
            SourceView(
                id=source_id,
                title=titles[source_id]["title"],
                document=titles[source_id]["document"],
                sections=list(sections.items()),
                counts=dict(Counter(v.verdict for v in views)),
            )
        )
    verdicts = Counter(c.verdict for c in claims)
    levels = Counter(c.level for c in claims)
    by_source = {
        "verdict": {v: Counter(c.source_id for c in claims if c.verdict == v) for v in VERDICTS},
        "level": {lv: Counter(c.source_id for c in claims if c.level == lv) for lv in LEVELS},
    }
    errata = [
        ErratumView(view, titles[view.source_id]["title"], erratum_rows(raw))
        for raw, view in zip(results["claims"], claims, strict=True)
        if view.erratum
    ]
    return SiteView(
        run=results["run"],
        sources=sources,
        claims=claims,
        by_verdict={v: verdicts.get(v, 0) for v in VERDICTS},
        by_level={lv: levels.get(lv, 0) for lv in LEVELS},
        by_source=by_source,
        errata=errata,
        gate_failed=(results["run"].get("outcome") or {}).get("failure_reasons", []),
        partial_reasons=(results["run"].get("outcome") or {}).get("partial_reasons", []),
        changes=changes_since(previous, results) if previous else None,
        previous_run=previous["run"] if previous else None,
    )
