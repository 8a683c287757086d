"""The terminal tables: the verdicts of a run, its failing claims and its diff against the
baseline."""

from __future__ import annotations

import textwrap
from collections import defaultdict

from claimbook.declare.numbers import fmt
from claimbook.judge.claims import DEFAULT_REPLAY, replay_command
from claimbook.judge.diff import instance_name
from claimbook.judge.evidence import seeds_cell, summary
from claimbook.storage.results import measures
from claimbook.text import shown

FAILING = "failing claims (why, in one line; below it, one command that replays the claim afresh):"
__all__ = [
    "FAILING", "diff_table", "evidence_lines", "failing_lines", "key_values", "printed_cell",
    "verdict_table",
]  # fmt: skip


def evidence_lines(claims: list[dict], width: int = 160) -> list[str]:
    """Per stochastic claim, its evidence in words (see :mod:`claimbook.judge.evidence`)."""
    lines = []
    for c in sorted(claims, key=lambda c: c["id"]):
        if not c.get("rule") or not c.get("statistics"):
            continue
        text = shown(f"{c['id']}: {summary(c)}")
        lines += textwrap.wrap(text, width=width - 2, subsequent_indent="    ")  # never cut
    return lines


def key_values(claim: dict, limit: int = 2) -> str:
    """Scalar measures of a claim, seed by seed ("loss 1.71/1.74/1.72 (printed 1.708)")."""
    series: dict[str, list] = defaultdict(list)
    printed: dict[str, object] = {}
    for m in sorted(measures(claim), key=lambda m: (m.get("seed") is None, m.get("seed") or 0)):
        if isinstance(m["value"], list):
            continue
        series[m["name"]].append(fmt(m["value"], m.get("printed")))
        if "printed" in m and m["name"] not in printed:
            printed[m["name"]] = m["printed"]
    parts = []
    for name, values in list(series.items())[:limit]:
        text = f"{name} {'/'.join(values)}"
        if name in printed:
            text += f" (printed {fmt(printed[name])})"
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
            f"{c['verdict']}: {c['note']}"
            if c["verdict"] in ("skipped", "cited")
            else key_values(c),
        )
        for c in sorted(claims, key=lambda c: c["id"])
    ]
    rows = [tuple(map(shown, row)) for row in rows]  # a measured string's ESC stays visible
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
    lines = []
    for row in [header, *rows]:
        head = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False))
        line = f"{head}  {row[5]}"
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    counts = {}
    for c in claims:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if v != "cited")
    cited = counts.get("cited")
    lines.append(f"verdicts: {tally or 'none'}" + (f"; {cited} cited (not run here, never "
                 "counted as holding)" if cited else ""))  # fmt: skip
    return lines


def diff_table(comparison: dict, width: int = 160) -> list[str]:
    """Terminal lines: one row per regression, improvement and change, or "no regression"."""
    lines = [f"note: {shown(n)}" for n in comparison["notes"]]
    rows = [
        (f["claim"], f["rule"], f["before"], f["after"], f["values"])
        for f in comparison["regressions"]
    ]
    rows += [
        (f["claim"], "improvement", f["before"], f["after"], f["values"])
        for f in comparison["improvements"]
    ]
    rows += [
        (f["claim"], "changed", f["before"], f["after"], f["values"]) for f in comparison["changes"]
    ]
    rows = [tuple(map(shown, row)) for row in rows]
    if rows:
        header = ("claim", "rule", "before", "after", "per-seed values")
        widths = [min(40, max(len(r[i]) for r in [header, *rows])) for i in range(4)]
        for row in [header, *rows]:
            head = "  ".join(cell[:40].ljust(w) for cell, w in zip(row, widths, strict=False))
            line = f"{head}  {row[4]}"
            lines.append(line if len(line) <= width else line[: width - 3] + "...")
    n = len(comparison["regressions"])
    lines.append(
        f"{n} regression{'s' if n != 1 else ''} against the baseline"
        if n
        else "no regression against the baseline"
    )
    return lines


def failing_lines(claims: list[dict], limit: int = 400) -> list[str]:
    """The closing block of the terminal and the gate: each claim whose verdict fails the run,
    why in one line (a rule claim's estimate and what it was held against), and under it
    one command that replays the claim afresh."""
    lines = []
    for claim in claims:
        if not claim["gates"]:
            continue
        head = f"{claim['id']} [{claim['level']}] {claim['verdict']}: "
        lines.append(shown(head + _why(claim))[:limit])
        lines.append("    " + shown(claim_replay(claim)))
    return lines


def _why(claim: dict) -> str:
    stats = claim.get("statistics")
    if claim.get("rule") and stats and (stats.get("looks") or stats.get("parts")):
        return f"{summary(claim)}; the rule: {stats['words'].split(' (')[0]}"
    failing = [i for i in claim["instances"] if i["outcome"] in ("failed", "error")]
    note = claim.get("note") or ""
    if not failing:
        return note or summary(claim)
    messages = list(dict.fromkeys(i.get("message") or "" for i in failing))
    where = ", ".join(instance_name(i) for i in failing[:8])
    where += f" and {len(failing) - 8} more" if len(failing) > 8 else ""
    also = f" (and {len(messages) - 1} other messages)" if len(messages) > 1 else ""
    ran = sum(i["outcome"] != "skipped" for i in claim["instances"])
    head = f"{note}; " if claim["verdict"] in ("error", "fixed") and note else ""
    return f"{head}{len(failing)} of {ran} instances failed ({where}): {messages[0]}{also}"


def claim_replay(claim: dict) -> str:
    """One command that re-runs a claim afresh: its one failing instance's, else the test at
    the seeds of its failing instances (or, for a rule claim, at the seeds it was judged on)."""
    failing = [i for i in claim["instances"] if i.get("replay")]
    if len(failing) == 1:
        return failing[0]["replay"]
    ran = failing or [i for i in claim["instances"] if i["outcome"] != "skipped"]
    seeds = ",".join(map(str, sorted({i["seed"] for i in ran if i["seed"] is not None})))
    form = claim.get("replay_form") or DEFAULT_REPLAY
    return replay_command(claim["test"], seeds or None, form)
