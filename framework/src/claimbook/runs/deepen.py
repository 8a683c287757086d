"""Which undecided claims get their next look's seeds, within the training budget.

The budget is CPU-seconds of training, counted from the book's committed durations (a run's
recorded seconds, or its configuration's at other seeds, or its function's), never from
the clock: which looks a run takes, and so every verdict, depends only on the code, the
seeds and the committed durations, not on the machine's load or on what an earlier run left
in the cache. A run counts whether or not the cache holds it; a run this session already
counts (by the first look or an earlier look) is free, since it serves every claim that
reads it.

The order is fixed before the budget is looked at: gating claims first (established, then
likely), claims that never gate (speculative, or tried on a stand-in) only after them; within
a tier, the one whose next look is likeliest to decide it (given the seeds read:
:func:`claimbook.judge.outlook.next_look_chance`, 0 for a look that cannot decide) per
CPU-second it still adds, ties by claim id. Claims are taken in that order while they fit,
and the first that does not fit ends the planning, this round and every later one
(:attr:`Plan.stopped`). So a run with a larger budget takes the same choices for longer: no
claim is ever shallower for it (tests/unit/test_budget_monotone.py checks this over
generated books).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

TIERS = {"established": 0, "likely": 1}  # any other level, or a stand-in, never gates: last


@dataclass
class Plan:
    chosen: list[str] = field(default_factory=list)  # claim ids, in the order taken
    runs: set = field(default_factory=set)  # the runs their looks add
    seconds: float = 0.0  # the committed CPU-seconds of those runs
    over_budget: list[str] = field(default_factory=list)  # claims left at the budget
    stopped: bool = False  # a claim did not fit: no later round is planned


def plan_looks(
    wants: dict[str, set],
    counted: set,
    budget_s: float,
    cost: Callable[[object], float],
    chance: dict[str, float] | None = None,
    tier: dict[str, int] | None = None,
) -> Plan:
    """Choose the claims (id -> runs their next look reads) to serve within ``budget_s``
    CPU-seconds beyond ``counted`` (the runs already paid for); ``cost(run)`` is a run's
    committed seconds, ``chance[id]`` its next look's chance to decide it, ``tier[id]`` its
    place (0 established, 1 likely, 2 never gates; absent: 2)."""
    plan, chance, tier = Plan(), chance or {}, tier or {}
    open_claims = dict(wants)

    def added(claim_id: str) -> float:
        return sum(cost(r) for r in open_claims[claim_id] - counted - plan.runs)

    def order(claim_id: str) -> tuple:
        seconds = added(claim_id)
        rate = chance.get(claim_id, 0.0) / seconds if seconds else float("inf")
        return (tier.get(claim_id, 2), -rate, seconds, claim_id)

    while open_claims:
        claim_id = min(open_claims, key=order)
        seconds = added(claim_id)
        if plan.seconds + seconds > budget_s:
            plan.stopped, plan.over_budget = True, sorted(open_claims)
            break
        plan.chosen.append(claim_id)
        plan.seconds += seconds
        plan.runs |= open_claims.pop(claim_id) - counted
    return plan


def tier_of(record: dict) -> int:
    """A claim's place in the budget's order: 0 established, 1 likely, 2 never gates."""
    if record.get("stand_in") or record.get("known_refuted"):
        return 2
    return TIERS.get(record.get("level"), 2)


def spend(
    budget_s: float,
    counted: set,
    ask: Callable[[], tuple[dict[str, set], dict[str, float], dict[str, int]]],
    cost: Callable[[object], float],
    read_free: Callable[[], None],
    take: Callable[[Plan], bool],
) -> Plan:
    """The budget's rounds, until no claim asks, a look does not fit, or ``take`` says stop.

    Each round first reads every seed whose runs are already counted (``read_free``: free,
    and every seed that exists is evidence), then asks the undecided claims for their next
    look (``ask()``: id -> runs, chance and tier, as :func:`plan_looks` takes them), plans,
    adds the plan's runs to ``counted`` and runs the plan's looks (``take(plan)``; False: stop,
    as a training leg does once it trained its part). After the round whose plan stopped at a
    claim that did not fit, the seeds that round paid for are read and no round follows.
    Returns the last plan; its ``over_budget``: every claim left asking when the budget
    stopped it (the claims served in that round and open still among them)."""
    spent = 0.0
    while True:
        read_free()
        wanted, chance, tier = ask()
        if not wanted:
            return Plan()
        plan = plan_looks(wanted, counted, budget_s - spent, cost, chance, tier)
        if not plan.chosen:
            return plan
        counted |= plan.runs
        spent += plan.seconds
        if not take(plan):
            return plan
        if plan.stopped:  # every claim still open is left at the budget
            read_free()
            plan.over_budget = sorted(ask()[0])
            return plan
