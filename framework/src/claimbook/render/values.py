"""A claim's measures tables: each measured quantity beside the number the source prints,
one column per seed (or, beyond a few seeds, one wrapping cell)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from claimbook.declare.numbers import fmt
from claimbook.judge.claims import label, measures

SEED_COLUMNS = 6  # more seeds than this: a measures table keeps its per-seed values in one cell


@dataclass
class ValueRow:
    """One measured quantity across seeds: printed value and one cell per seed."""

    name: str
    printed: str
    cells: list[str]
    spread: str
    reproduced: str  # "yes", "no (1 of 3 seeds)", or "" when nothing is printed


def spread(values: list) -> str:
    nums = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(nums) < 2:
        return ""
    mean, sd = statistics.mean(nums), statistics.stdev(nums)
    if sd <= 1e-12 * max(abs(mean), 1e-300):  # identical values up to float rounding
        sd = 0
    return f"{fmt(mean)} ± {fmt(sd)}"


def reproduced(checks: list[bool]) -> str:
    if not checks:
        return ""
    if all(checks):
        return "yes"
    return f"no ({len(checks) - sum(checks)} of {len(checks)})"


def curve_rows(claim: dict) -> list[ValueRow]:
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
                    reproduced=reproduced(
                        [m["reproduced"]] if m.get("reproduced") is not None else []
                    ),
                )
            )
    return rows


def value_rows(claim: dict) -> tuple[list[str], list[ValueRow]]:
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
        over_seeds = spread([by_seed[s] for s in keys if s in by_seed])
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
                reproduced=reproduced(checks.get(name, [])),
            )
        )
    return columns, rows


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


def seed_range(seeds: list) -> str:
    """The seeds as words: "seeds 0 to 19" when consecutive, else "seeds 0, 2, 5"."""
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds {seeds[0]} to {seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))
