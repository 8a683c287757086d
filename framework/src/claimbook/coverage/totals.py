"""Coverage totals per source and kind, the table they print as, and the fail-under gate.

Counting: a tagged or model statement counts once; a number statement counts each of its
values. Each counted item falls in one column: tested (numbers split into asserted and
recorded), cited, hardware, not-a-claim or uncovered. Percentages leave not-a-claim out:

    covered   = tested / (total - not-a-claim)
    accounted = (tested + cited + hardware) / (total - not-a-claim)
"""

from __future__ import annotations

from dataclasses import dataclass

from claimbook.coverage.maps import KINDS

CATEGORIES = ("tested", "cited", "hardware", "not-a-claim", "uncovered")


@dataclass
class Totals:
    total: int = 0
    tested: int = 0
    asserted: int = 0
    recorded: int = 0
    cited: int = 0
    hardware: int = 0
    not_a_claim: int = 0
    uncovered: int = 0

    def add(self, category: str, weight: int, checked: str = "") -> None:
        """Count ``weight`` items of a statement that falls in ``category``."""
        self.total += weight
        name = category.replace("-", "_")
        setattr(self, name, getattr(self, name) + weight)
        if category == "tested" and checked in ("asserted", "recorded"):
            setattr(self, checked, getattr(self, checked) + weight)

    @property
    def claimable(self) -> int:
        return self.total - self.not_a_claim

    @property
    def covered_pct(self) -> float | None:
        return 100.0 * self.tested / self.claimable if self.claimable else None

    @property
    def accounted_pct(self) -> float | None:
        done = self.tested + self.cited + self.hardware
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
            tested = str(t.tested) + (f" ({t.asserted}/{t.recorded})" if kind == "number" else "")
            rows.append({
                "source": source, "kind": kind, "total": str(t.total), "tested": tested,
                "cited": str(t.cited), "hardware": str(t.hardware),
                "not-a-claim": str(t.not_a_claim), "uncovered": str(t.uncovered),
                "covered": pct(t.covered_pct), "accounted": pct(t.accounted_pct),
            })  # fmt: skip
    return rows


COLUMNS = ("source", "kind", "total", "tested", "cited", "hardware", "not-a-claim", "uncovered",
           "covered", "accounted")  # fmt: skip
HEADINGS = {"tested": "tested (asserted/recorded)"}


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
