"""View models of change over time: a claim's trend in the history, and what changed since
the previous run."""

from __future__ import annotations

from dataclasses import dataclass

from claimbook.declare.numbers import fmt


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


def trend_rows(trend: list[dict], names: list[str]) -> list[TrendRow]:
    """The history's runs of one claim as table rows, newest first."""
    return [
        TrendRow(
            started=t["started"][:16].replace("T", " "),
            commit=(t["commit"] or "none")[:8] + (" (partial)" if t["partial"] else ""),
            verdict=t["verdict"],
            seeds=t["seeds"],
            values=[fmt(t["values"][n]) if n in t["values"] else "" for n in names],
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
