"""Coverage totals per source and kind, the table they print as, and the fail-under gate.

Counting: a tagged or model statement counts once; a number statement counts each of its
values. Each counted item falls in one column:

- tested: a named claim runs and fails if the statement is false (its map's ``checked``
  is "asserted", the default for tagged and model statements);
- recorded: a claim runs but only measures and shows it (``checked = "recorded"``);
- construction: the claims' only check holds by construction (``checked = "construction"``);
- skipped: its claims were skipped in this run, for a reason other than hardware;
- cited, hardware, not-a-claim: statused so, or covered only by cited claims or by claims
  skipped for lack of hardware;
- stand-in: covered only by claims that run on a model that cannot show the statement
  (``stand_in=``): evidence about that model, never tested;
- uncovered: neither claims that the run knows nor a status.

Percentages leave not-a-claim out; only tested counts as covered:

    covered   = tested / (total - not-a-claim)
    accounted = (total - not-a-claim - uncovered) / (total - not-a-claim)
"""

from __future__ import annotations

from dataclasses import dataclass

from claimbook.coverage.maps import KINDS

CATEGORIES = (
    "tested", "recorded", "construction", "skipped", "cited", "stand-in", "hardware",
    "not-a-claim", "uncovered",
)  # fmt: skip


@dataclass
class Totals:
    total: int = 0
    tested: int = 0  # a claim that runs can fail on it: the only covered column
    recorded: int = 0
    construction: int = 0
    skipped: int = 0
    cited: int = 0
    stand_in: int = 0  # covered only by claims run on a stand-in that cannot show it
    hardware: int = 0
    not_a_claim: int = 0
    uncovered: int = 0

    def add(self, category: str, weight: int) -> None:
        """Count ``weight`` items of a statement that falls in ``category``."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown coverage category {category!r}")
        self.total += weight
        name = category.replace("-", "_")
        setattr(self, name, getattr(self, name) + weight)

    @property
    def claimable(self) -> int:
        return self.total - self.not_a_claim

    @property
    def covered_pct(self) -> float | None:
        return 100.0 * self.tested / self.claimable if self.claimable else None

    @property
    def accounted_pct(self) -> float | None:
        done = self.claimable - self.uncovered
        return 100.0 * done / self.claimable if self.claimable else None


def pct(value: float | None) -> str:
    """A percentage to one decimal, floored (99.96% is never shown as 100.0%); "-" for none."""
    if value is None:
        return "-"
    return f"{int(value * 10) / 10:.1f}%"


def table_rows(totals: dict[str, dict[str, Totals]]) -> list[dict]:
    """One row per source and kind that has statements: the columns as strings."""
    rows = []
    for source, kinds in totals.items():
        for kind in KINDS:
            t = kinds.get(kind)
            if t is None or not t.total:
                continue
            row = {"source": source, "kind": kind, "total": str(t.total)}
            row.update({c: str(getattr(t, c.replace("-", "_"))) for c in CATEGORIES})
            row.update(covered=pct(t.covered_pct), accounted=pct(t.accounted_pct))
            rows.append(row)
    return rows


COLUMNS = ("source", "kind", "total", *CATEGORIES, "covered", "accounted")
HEADINGS = {"tested": "tested (can fail)", "construction": "by construction"}


def table_lines(totals: dict[str, dict[str, Totals]]) -> list[str]:
    """The terminal table: one line per source and kind (numbers count values one by one)."""
    rows = table_rows(totals)
    head = {c: HEADINGS.get(c, c) for c in COLUMNS}
    widths = {c: max(len(r[c]) for r in [head, *rows]) for c in COLUMNS}
    return ["  ".join(r[c].ljust(widths[c]) for c in COLUMNS).rstrip() for r in [head, *rows]]


def fail_under(totals: dict[str, dict[str, Totals]], errors: int, threshold: float) -> list[str]:
    """Why the coverage fails ``threshold`` (accounted %): empty when it passes.

    It fails when a source and kind is accounted for below the threshold, when any tagged
    statement is uncovered, or when any finding is an error.
    """
    reasons = []
    for source, kinds in totals.items():
        for kind, t in kinds.items():
            share = t.accounted_pct
            if share is not None and share < threshold:
                reasons.append(f"{source} {kind}: accounted {pct(share)} < {threshold:g}%")
        tagged = kinds.get("tagged")
        if tagged and tagged.uncovered:
            reasons.append(f"{source}: {tagged.uncovered} tagged statement(s) uncovered")
    if errors:
        reasons.append(f"{errors} coverage finding(s) are errors")
    return reasons
