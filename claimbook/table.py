"""The verdict table printed at the end of a run (and reused by the site)."""

from __future__ import annotations

from collections import defaultdict


def fmt(value) -> str:
    """A compact number: 4 significant digits for floats, thousands separators for ints."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.4g}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, list):
        return (
            "[" + " ".join(fmt(v) for v in value[:12]) + (" ..." if len(value) > 12 else "") + "]"
        )
    return str(value)


def seeds_cell(claim: dict) -> str:
    if claim["seeds_total"] is None:
        return "-"
    return f"{claim['seeds_passed']}/{claim['seeds_total']}"


def measures(claim: dict) -> list[dict]:
    """Every measure of a claim, each tagged with its seed (the instance's, or its own)."""
    return [
        {**m, "seed": m.get("seed", inst["seed"]), "params": inst["params"]}
        for inst in claim["instances"]
        for m in inst["measures"]
    ]


def label(m: dict) -> str:
    """A measure's name with its test parameters, e.g. "reach (layers=4)"."""
    params = ", ".join(f"{k}={v}" for k, v in m["params"].items())
    return f"{m['name']} ({params})" if params and params not in m["name"] else m["name"]


def key_values(claim: dict, limit: int = 2) -> str:
    """Scalar measures of a claim, seed by seed ("loss 1.71/1.74/1.72 (book 1.708)")."""
    series: dict[str, list] = defaultdict(list)
    printed: dict[str, object] = {}
    for m in sorted(measures(claim), key=lambda m: (m.get("seed") is None, m.get("seed") or 0)):
        if isinstance(m["value"], list):
            continue
        series[m["name"]].append(fmt(m["value"]))
        if "printed" in m and m["name"] not in printed:
            printed[m["name"]] = m["printed"]
    parts = []
    for name, values in list(series.items())[:limit]:
        text = f"{name} {'/'.join(values)}"
        if name in printed:
            text += f" (book {fmt(printed[name])})"
        parts.append(text)
    if len(series) > limit:
        parts.append(f"+{len(series) - limit} more")
    return "; ".join(parts)


def printed_cell(claim: dict) -> str:
    """How many of a claim's printed numbers reproduce, e.g. "3/3"; "-" if none is judged."""
    counts = claim.get("printed_reproduced")
    return f"{counts[0]}/{counts[1]}" if counts else "-"


def verdict_table(claims: list[dict], width: int = 160) -> list[str]:
    """Rows of the terminal table: id, level, verdict, seeds passed, printed reproduced, values."""
    header = ("claim", "level", "verdict", "seeds", "printed", "key measured values")
    rows = [
        (
            c["id"],
            c["level"],
            c["verdict"],
            seeds_cell(c),
            printed_cell(c),
            key_values(c) if c["verdict"] != "skipped" else f"skipped: {c['note']}",
        )
        for c in sorted(claims, key=lambda c: c["id"])
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    lines = []
    for row in [header, *rows]:
        head = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False))
        line = f"{head}  {row[5]}"
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    return lines
