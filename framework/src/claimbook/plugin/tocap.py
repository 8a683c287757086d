"""What an open claim's remaining planned looks cost: the training to its cap, charging only
the runs the training cache does not hold, and the budget that buys it in a run of that
claim alone.

Every run is priced from the book's committed durations file (never the clock), as the
budget prices it. A claim run alone spends at most ``--budget`` x its first look's committed
seconds on its further seeds, counting every run whether cached or not; so the budget named is
the committed seconds of its seeds past the first look, up to its cap, over its first look's.
"""

from __future__ import annotations

import math

from claimbook.declare.design import rule_from_dict


def cap_cost(stats: dict, paid: dict, first: set, runs_of: dict, cost, cached) -> dict | None:
    """The training an open claim's cap takes: ``runs`` its unread seeds up to the cap read,
    ``cached`` of them already in the training cache (``cached(run)``), ``cpu_s`` the
    committed seconds (``cost(run)``) of the others, and ``budget``, the ``--budget`` that
    takes it to its cap when it runs alone. ``paid``: seed -> committed seconds of the seeds
    it read; ``first``: its first look's seeds; ``runs_of``: seed -> the runs an unread seed
    reads. None when an unread seed's runs are unknown."""
    rule = rule_from_dict(stats["rule"])
    read = set(stats["values"]["seed"])
    base = sum(paid.get(s, 0.0) for s in first)
    runs = held = 0
    cpu_s = committed = 0.0
    for seed in range(rule.fresh, rule.fresh + stats["outlook"]["cap"]):
        if seed in first:
            continue
        if seed in read:
            committed += paid.get(seed, 0.0)
            continue
        if seed not in runs_of:
            return None
        for run in runs_of[seed]:
            runs += 1
            committed += cost(run)
            if cached(run):
                held += 1
            else:
                cpu_s += cost(run)
    budget = math.ceil(10 * committed / base - 1e-9) / 10 if base else None
    return {"runs": runs, "cached": held, "cpu_s": round(cpu_s, 1), "budget": budget}
