"""The errata page: one entry per distinct error in a source, with every claim (check) that
shows it, the correction an author can paste, and each printed value beside what the run
measured."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from claimbook.render.values import as_year, shown_names, shown_value, years_table
from claimbook.storage.results import label


@dataclass
class ErratumRow:
    """One printed value an erratum concerns, beside what this run measured."""

    name: str
    printed: str
    measured: str


def erratum_rows(claim: dict) -> list[ErratumRow]:
    """The printed values that failing instances of ``claim`` did not reproduce, one row each.

    Only failing instances count: a passing seed's stray digit is not what makes
    the claim an erratum. Seeds that measured the same value share a row
    ("later tokens reach the first position, seeds 0, 1, 2"); a claim with no
    judged printed value gets no rows.
    """
    seeds: dict[tuple, list] = defaultdict(list)
    names, yearly = shown_names(claim), years_table(claim)
    for inst in claim["instances"]:
        if inst["outcome"] != "failed":
            continue
        for m in inst["measures"]:
            if m.get("reproduced") is False and not m.get("correction"):
                name = names[label({**m, "params": inst["params"]})]
                printed = shown_value(m["printed"], None, name, yearly)
                value = m["value"]  # its own digits, a year as a year where printed as one
                year = as_year(value, m["printed"], name, yearly)
                key = (name, printed, str(int(value)) if year else shown_value(value))
                seeds[key].append(m.get("seed", inst["seed"]))
    rows = []
    for (name, printed, measured), where in seeds.items():
        known = [s for s in where if s is not None]
        if known:
            name += f", seed{'s' if len(known) > 1 else ''} {', '.join(map(str, known))}"
        rows.append(ErratumRow(name, printed, measured))
    return rows


def corrections(claim: dict) -> list[str]:
    """The corrections the claim's test recorded (``measure.correct``), each once, in order."""
    found = [m["value"] for i in claim["instances"] for m in i["measures"] if m.get("correction")]
    return list(dict.fromkeys(found))


@dataclass
class ErrorGroup:
    """One error in a source, as the claims that show it (in the text's order) see it."""

    key: str
    checks: list  # ErratumView, the first one naming the error
    corrections: list[str]

    @property
    def anchor(self) -> str:
        """The entry's id on the errata page (a claim id's dot would read as a class)."""
        return self.key.replace(".", "-")

    @property
    def first(self):
        return self.checks[0]

    @property
    def rows(self) -> list[ErratumRow]:
        return [r for e in self.checks for r in e.rows]


def group_errors(errata: list, order: dict[str, tuple]) -> list[ErrorGroup]:
    """The errata grouped by the source error each shows (its ``error`` key, else its id).

    ``order``: claim id -> its place in the book (source, line); groups and the checks in
    each follow it, so the errata read in the text's order."""
    groups: dict[str, list] = defaultdict(list)
    for e in sorted(errata, key=lambda e: order.get(e.claim.id, ())):
        groups[e.claim.error or e.claim.id].append(e)
    return [
        ErrorGroup(key, checks, list(dict.fromkeys(c for e in checks for c in e.corrections)))
        for key, checks in groups.items()
    ]
