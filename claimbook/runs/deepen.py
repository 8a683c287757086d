"""Which undecided claims get their next look's seeds, within the training budget.

A training run serves every claim that reads it, so claims are taken greedily by the
CPU-seconds their next look would still cost (runs already cached, or already chosen
for another claim, cost nothing): the most undecided claims served per CPU-second first.
A claim whose next look no longer fits the budget stops there, inconclusive "at the
budget". The estimate of a run not trained yet is the mean of the seconds its training
took at the seeds already trained (:data:`claimbook.runs.plan.RUN_WEIGHT` if none).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from claimbook.runs.plan import RUN_WEIGHT


@dataclass
class Plan:
    chosen: list[str] = field(default_factory=list)  # claim ids, in the order taken
    runs: set = field(default_factory=set)  # the runs to train for them
    cost_s: float = 0.0  # their estimated CPU-seconds
    over_budget: list[str] = field(default_factory=list)  # claims whose look did not fit


def estimate(run, known: dict[str, list[float]]) -> float:
    """Seconds a run should take: its own recorded time, else its training's mean."""
    training, seed = run
    own = known.get(training.label(seed))
    if own:
        return own[0]
    seen = [s for label, values in known.items() if label.startswith(training.label() + " ")
            for s in values]  # fmt: skip
    return sum(seen) / len(seen) if seen else float(RUN_WEIGHT)


def plan_looks(
    wants: dict[str, set], cached: set, known: dict[str, list[float]], budget_s: float
) -> Plan:
    """Choose the claims (id -> runs their next look reads) to serve within ``budget_s``."""
    plan = Plan()
    open_claims = dict(wants)
    while open_claims:

        def marginal(claim_id: str) -> float:
            missing = open_claims[claim_id] - cached - plan.runs
            return sum(estimate(r, known) for r in missing)

        claim_id = min(sorted(open_claims), key=marginal)
        cost = marginal(claim_id)
        if plan.cost_s + cost > budget_s:
            plan.over_budget = sorted(open_claims)
            break
        plan.chosen.append(claim_id)
        plan.runs |= open_claims.pop(claim_id) - cached
        plan.cost_s += cost
    return plan
