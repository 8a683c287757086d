"""View models of a run as a whole: its verdicts counted by source (the home page), what
changed since the previous run, a claim's trend over the history (with its figure), and what
the planned looks spent on seeds for undecided claims (the performance page)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: render to files only
import matplotlib.pyplot as plt

from claimbook.judge.evidence import seeds_cell
from claimbook.render.values import shown_value

matplotlib.rcParams["text.parse_math"] = False  # a "$" in a measure's name is just text


@dataclass
class TrendRow:
    """One run of a claim in the history: when, which commit, the verdict, key values."""

    started: str
    commit: str
    verdict: str
    seeds: str
    values: list[str]


@dataclass
class Change:
    """A claim whose verdict differs from the previous run's (or that is new or gone)."""

    id: str
    before: str
    after: str


TREND_VALUES = 3  # measured values shown per run in a claim's trend


def trend_names(trend: list[dict], limit: int = TREND_VALUES) -> list[str]:
    """The measures a claim's trend shows: those present in its latest run, first ones first."""
    return list(trend[-1]["values"])[:limit] if trend else []


def trend_rows(
    trend: list[dict], names: list[str], printed: dict | None = None, yearly: bool = False
) -> list[TrendRow]:
    """The history's runs of one claim as table rows, newest first; a value with a number
    printed beside it (``printed``: name -> printed) keeps at least the printed digits, and
    a year reads as a year (:func:`claimbook.render.values.shown_value`; ``yearly``: the
    claim's printed integers are years)."""
    printed = printed or {}
    return [
        TrendRow(
            started=t["started"][:16].replace("T", " "),
            commit=(t["commit"] or "none")[:8],
            verdict=t["verdict"],
            seeds=t["seeds"],
            values=[
                shown_value(t["values"][n], printed.get(n), n, yearly) if n in t["values"] else ""
                for n in names
            ],
        )
        for t in reversed(trend)
    ]


def changes_since(previous: dict, results: dict) -> list[Change]:
    """Claims whose verdict moved between two runs, plus new and vanished ones."""
    before = {c["id"]: c["verdict"] for c in previous["claims"]}
    after = {c["id"]: c["verdict"] for c in results["claims"]}
    return [
        Change(claim_id, before.get(claim_id, "(new)"), after.get(claim_id, "(gone)"))
        for claim_id in sorted(set(before) | set(after))
        if before.get(claim_id) != after.get(claim_id)
    ]


@dataclass
class CountGroup:
    """The claims one count on the home page counts: a verdict or a level, by source."""

    name: str
    anchor: str
    claims: list
    by_source: list[tuple[str, str, str, list]]  # (source id, title, anchor, its claims)


def slug(text: str) -> str:
    """``text`` as part of an HTML id or class: lower-case letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def count_groups(attr: str, names, claims: list, sources: list) -> tuple[list[CountGroup], dict]:
    """The claims behind each count of the home page, by ``attr`` ("verdict" or "level") and
    by source, and the anchors of their lists on counts.md ({name: {source id or "": id}})."""
    groups, anchors = [], {}
    for name in names:
        anchor = f"{attr}-{slug(name)}"
        anchors[name] = {"": anchor} | {s.id: f"{anchor}-{slug(s.id)}" for s in sources}
        members = [c for c in claims if getattr(c, attr) == name]
        mine = {s.id: [c for c in members if c.source_id == s.id] for s in sources}
        by_source = [
            (s.id, s.title, anchors[name][s.id], mine[s.id]) for s in sources if mine[s.id]
        ]
        groups.append(CountGroup(name, anchor, members, by_source))
    return groups, anchors


def looks_view(results: dict) -> dict:
    """The performance page's account of the planned looks: the run's ``looks`` record (None
    in results files older than the looks), each stochastic claim's seeds and verdict, and
    the extra training CPU per stochastic claim decided."""
    looks = results["run"].get("looks")
    pages = {c["id"] for c in results["claims"]}
    stochastic = sorted(
        (c for c in results["claims"] if c.get("rule") and c.get("statistics")),
        key=lambda c: c["id"],
    )
    rows = []
    for c in stochastic:
        stats, decided = c["statistics"], "-"
        if stats.get("decided_at"):
            timing = stats["kind"] == "timing ratio"
            n = (stats.get("estimate") or {}).get("n") if timing else stats["decided_at"]
            decided = f"{n} {'reps' if timing else 'seeds'}"
        rows.append({"claim": c["id"], "kind": stats["kind"], "seeds": seeds_cell(c),
                     "verdict": c["verdict"], "decided_at": decided})  # fmt: skip
    decided = sum(1 for c in stochastic if c["statistics"].get("decision"))
    extra = float((looks or {}).get("extra_cpu_s") or 0.0)
    return {
        "looks": looks,
        "adaptive": results["run"].get("adaptive"),
        "rows": rows,
        "decided": decided,
        "per_decided": f"{extra / decided:.1f} s" if decided else "-",
        "rounds": [
            [(c, c in pages) for c in r.get("claims", [])] for r in (looks or {}).get("rounds", [])
        ],
        "over_budget": [(c, c in pages) for c in (looks or {}).get("over_budget", [])],
    }


VERDICT_COLORS = {  # the pages' badges (claimbook.css) use the same hues
    "holds": "tab:green",
    "supported": "#558b2f",
    "equivalent": "#00838f",
    "refuted": "tab:red",
    "not equivalent": "#ad1457",
    "inconclusive": "#8d6e63",
    "error": "black",
    "erratum": "tab:orange",
    "fixed": "tab:purple",
    "skipped": "tab:gray",
    "cited": "#5c6bc0",
    "observed": "#78909c",
    "not observed": "#90a4ae",
}


def trend_figure(claim_id: str, trend: list[dict], names: list[str], path: Path) -> bool:
    """Key values of one claim over the history's runs, one panel per value.

    Each point is one run (its mean over seeds), coloured by that run's verdict
    and labelled by commit. Returns False, writing nothing, with fewer than two
    runs or no value to draw.
    """
    names = [n for n in names if sum(n in t["values"] for t in trend) >= 2]
    if len(trend) < 2 or not names:
        return False
    fig, axes = plt.subplots(
        len(names), 1, figsize=(7.5, 1.5 * len(names) + 0.8), squeeze=False, sharex=True
    )
    xs = range(len(trend))
    for ax, name in zip(axes[:, 0], names, strict=True):
        points = [(x, t["values"][name], t["verdict"]) for x, t in zip(xs, trend, strict=True)
                  if name in t["values"]]  # fmt: skip
        ax.plot([p[0] for p in points], [p[1] for p in points], color="lightgray", lw=1, zorder=1)
        for x, y, verdict in points:
            ax.scatter(x, y, color=VERDICT_COLORS.get(verdict, "tab:blue"), s=25, zorder=2)
        ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=7)
        ax.tick_params(labelsize=7)
    labels = [(t["commit"] or "none")[:7] for t in trend]
    axes[-1, 0].set_xticks(list(xs), labels, rotation=45, ha="right", fontsize=7)
    seen = list(dict.fromkeys(t["verdict"] for t in trend))
    axes[0, 0].legend(
        handles=[
            plt.Line2D([], [], ls="", marker="o", color=VERDICT_COLORS.get(v, "tab:blue"), label=v)
            for v in seen
        ],
        fontsize=7,
        frameon=False,
        ncol=len(seen),
        loc="lower left",
        bbox_to_anchor=(0, 1),
    )
    fig.suptitle(f"{claim_id} over complete runs, coloured by verdict", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
