"""Which undecided claims get their next look's seeds, within the training budget.

The budget is CPU-seconds of training, counted from the book's committed durations (a run's
recorded seconds, or its configuration's at other seeds, or its function's), never from
the clock: which looks a run takes, and so every verdict, depends only on the code, the
seeds and the committed durations, not on the machine's load or on what an earlier run left
in the cache. A run counts whether or not the cache holds it.

A training run serves every claim that reads it, so runs already counted (by the first
look or an earlier look) are free. Claims are served greedily, the one whose next look is
most likely to decide it (:func:`claimbook.judge.priority.chance_to_decide`) per CPU-second
it still adds first, ties by claim id; a claim whose look no longer fits is left at the
budget while cheaper ones may still be served.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Plan:
    chosen: list[str] = field(default_factory=list)  # claim ids, in the order taken
    runs: set = field(default_factory=set)  # the runs their looks add
    seconds: float = 0.0  # the committed CPU-seconds of those runs
    over_budget: list[str] = field(default_factory=list)  # claims whose look did not fit


def plan_looks(
    wants: dict[str, set],
    counted: set,
    budget_s: float,
    cost: Callable[[object], float],
    chance: dict[str, float] | None = None,
) -> Plan:
    """Choose the claims (id -> runs their next look reads) to serve within ``budget_s``
    CPU-seconds beyond ``counted`` (the runs already paid for); ``cost(run)`` is a run's
    committed seconds, ``chance[id]`` its next look's chance to decide it."""
    plan, chance = Plan(), chance or {}
    open_claims = dict(wants)
    while open_claims:

        def added(claim_id: str) -> float:
            return sum(cost(r) for r in open_claims[claim_id] - counted - plan.runs)

        def order(claim_id: str) -> tuple:
            seconds = added(claim_id)
            rate = chance.get(claim_id, 0.0) / seconds if seconds else float("inf")
            return (-rate, seconds, claim_id)

        claim_id = min(open_claims, key=order)
        seconds = added(claim_id)
        runs = open_claims.pop(claim_id)
        if plan.seconds + seconds > budget_s:
            plan.over_budget.append(claim_id)
            continue
        plan.chosen.append(claim_id)
        plan.seconds += seconds
        plan.runs |= runs - counted
    plan.over_budget.sort()
    return plan
