"""The errata page's rows: each printed value an erratum concerns, beside what the run
measured."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from claimbook.declare.numbers import fmt
from claimbook.judge.claims import label


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
    for inst in claim["instances"]:
        if inst["outcome"] != "failed":
            continue
        for m in inst["measures"]:
            if m.get("reproduced") is False:
                m = {**m, "params": inst["params"]}
                key = (label(m), fmt(m["printed"]), fmt(m["value"]))
                seeds[key].append(m.get("seed", inst["seed"]))
    rows = []
    for (name, printed, measured), where in seeds.items():
        known = [s for s in where if s is not None]
        if known:
            name += f", seed{'s' if len(known) > 1 else ''} {', '.join(map(str, known))}"
        rows.append(ErratumRow(name, printed, measured))
    return rows
