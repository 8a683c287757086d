"""The Method page's rows: the committed table of each design's simulated rates
(:mod:`claimbook.judge.method`), each with its rates at the look this run's budget reached.

"At this run's budget" is read off the run itself, not modelled: for each row, the deepest
look this run took for a gating claim (likely or established) judged by the row's test, at
the row's level, with the row's planned looks (each part of a composite counts as a claim).
A row that no claim of the run matches takes the deepest look any gating claim reached, and
says so. The rates there are those of a claim that stops at that look (a budget stops a claim
without changing its per-look level), so they are at most the rates without a budget.
"""

from __future__ import annotations

from claimbook.judge.method import test_of

SINGLE = {"Typical", "Universal", "MostSeeds", "Beats", "Matches"}
LOOKS, LOOK20 = (3, 5, 8, 12), (3, 5, 8, 12, 20)


def _parts(stats: dict) -> list[tuple[dict, tuple[int, ...], list[dict]]]:
    """(rule, planned looks, looks taken) of a record's single rules, a composite's one by one."""
    rule = stats.get("rule") or {}
    if rule.get("rule") in SINGLE:
        return [(rule, tuple(stats["looks_planned"]), stats.get("looks") or [])]
    looks = tuple(stats["looks_planned"])
    if rule.get("rule") == "Ranking":
        pair = {"rule": "Beats", "bimodal": False}
        return [(pair, looks, part.get("looks") or []) for part in stats.get("parts", [])]
    if rule.get("rule") == "AllOf":
        return [
            (r, LOOK20 if r.get("look20") else LOOKS, part.get("looks") or [])
            for r, part in zip(rule["parts"], stats.get("parts", []), strict=False)
            if r.get("rule") in SINGLE
        ]
    return []


def reached(results: dict) -> dict[tuple, int]:
    """(test, level, planned looks) -> the deepest look this run took for a gating claim
    (or a part of one) of that design."""
    deepest: dict[tuple, int] = {}
    for claim in results.get("claims", []):
        stats = claim.get("statistics")
        if not stats or claim.get("level") not in ("likely", "established"):
            continue
        for rule, looks, taken in _parts(stats):
            if taken:
                key = (test_of(rule), claim["level"], looks)
                deepest[key] = max(deepest.get(key, 0), taken[-1]["n"])
    return deepest


def method_rows(rows: list[dict], results: dict) -> list[dict]:
    """Each row with ``budget`` (its entry of "by_look" at the look this run reached, or
    None when no gating claim took a look) and ``budget_from_run`` (True: no claim of the
    row's design ran; the look is the deepest of any gating claim)."""
    deepest = reached(results)
    anywhere = max(deepest.values(), default=None)
    out = []
    for row in rows:
        key = (row["test"], row["level"], tuple(row["looks"]))
        depth = deepest.get(key, anywhere)
        fitting = [b for b in row["by_look"] if depth is not None and b["look"] <= depth]
        out.append({**row, "budget": fitting[-1] if fitting else None,
                    "budget_from_run": key not in deepest})  # fmt: skip
    return out
