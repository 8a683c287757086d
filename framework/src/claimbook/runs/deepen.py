"""Which undecided claims get their next look's seeds, within the training budget.

A training run serves every claim that reads it, so claims are taken greedily by the
training runs their next look still adds (runs that the first look or an earlier look
already counted are free): the most undecided claims served per run first. A claim
whose next look no longer fits the budget stops there, inconclusive "at the budget".

The budget counts training runs, not measured seconds, and counts a run whether or not
the cache already holds it: which looks a run takes, and so every verdict, depends only
on the code and the seeds, never on the machine's load or on what an earlier run left in
the cache. The CPU-seconds actually spent are measured and reported beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Plan:
    chosen: list[str] = field(default_factory=list)  # claim ids, in the order taken
    runs: set = field(default_factory=set)  # the runs their looks add
    over_budget: list[str] = field(default_factory=list)  # claims whose look did not fit


def plan_looks(wants: dict[str, set], counted: set, budget: float) -> Plan:
    """Choose the claims (id -> runs their next look reads) to serve within ``budget`` runs
    beyond ``counted`` (the runs already paid for)."""
    plan = Plan()
    open_claims = dict(wants)
    while open_claims:

        def added(claim_id: str) -> int:
            return len(open_claims[claim_id] - counted - plan.runs)

        claim_id = min(sorted(open_claims), key=added)
        if len(plan.runs) + added(claim_id) > budget:
            plan.over_budget = sorted(open_claims)
            break
        plan.chosen.append(claim_id)
        plan.runs |= open_claims.pop(claim_id) - counted
    return plan
