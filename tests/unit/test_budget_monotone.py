"""The budget's order (claimbook.runs.deepen): gating claims first, and monotone in the budget.

The rounds are the real ones (:func:`spend` with :func:`plan_looks`) over generated books: a
claim is a list of looks, each reading some training runs of a shared pool, decided once it
has read a drawn number of looks. A larger budget must never leave a claim shallower, and no
claim that never gates is served while a gating claim's next look fits.
"""

from __future__ import annotations

from claimbook.runs.deepen import plan_looks, spend
from hypothesis import given, settings
from hypothesis import strategies as st

RUNS = [f"r{i}" for i in range(8)]


@st.composite
def books(draw):
    cost = {r: draw(st.integers(1, 50)) for r in RUNS}
    claims = {}
    for index in range(draw(st.integers(1, 6))):
        looks = draw(st.lists(st.sets(st.sampled_from(RUNS), max_size=3), min_size=1, max_size=4))
        claims[f"c{index}"] = {
            "tier": draw(st.integers(0, 2)),
            "looks": looks,
            "decided_after": draw(st.integers(1, len(looks) + 1)),  # past the cap: never
            "chances": draw(st.lists(st.floats(0, 1), min_size=len(looks), max_size=len(looks))),
        }
    base = draw(st.sets(st.sampled_from(RUNS), max_size=3))
    return cost, claims, base


def run_book(cost, claims, base, budget):
    """Each claim's depth (looks read) after the budget's rounds, and every plan taken."""
    depth, counted, plans = dict.fromkeys(claims, 0), set(base), []

    def open_claims():
        return [c for c, k in claims.items()
                if depth[c] < min(len(k["looks"]), k["decided_after"])]  # fmt: skip

    def ask():
        wanted = {c: set(claims[c]["looks"][depth[c]]) for c in open_claims()}
        chance = {c: claims[c]["chances"][depth[c]] for c in wanted}
        return wanted, chance, {c: claims[c]["tier"] for c in wanted}

    def read_free():
        while free := [c for c in open_claims() if claims[c]["looks"][depth[c]] <= counted]:
            for c in free:
                depth[c] += 1

    def take(plan):
        plans.append((plan, ask()))
        for c in plan.chosen:
            depth[c] += 1
        return True

    spend(budget, counted, ask, cost.__getitem__, read_free, take)
    return depth, plans


@settings(max_examples=300, deadline=None)
@given(books(), st.integers(0, 200), st.integers(0, 200))
def test_a_larger_budget_never_leaves_a_claim_shallower(book, small, extra):
    cost, claims, base = book
    less, _ = run_book(cost, claims, base, small)
    more, _ = run_book(cost, claims, base, small + extra)
    assert all(less[c] <= more[c] for c in claims), (less, more)


@settings(max_examples=300, deadline=None)
@given(books(), st.integers(0, 200))
def test_no_claim_that_never_gates_is_served_while_a_gating_look_fits(book, budget):
    cost, claims, base = book
    _, plans = run_book(cost, claims, base, budget)
    for plan, (wanted, _, tier) in plans:
        if any(tier[c] == 2 for c in plan.chosen):
            assert all(c in plan.chosen for c in wanted if tier[c] < 2), plan


def test_the_first_look_that_does_not_fit_ends_the_plan():
    """A cheaper claim after it is not served: taking it would make the outcome depend on
    the budget in both directions (a larger budget could then leave it shallower)."""
    cost = {"a": 10.0, "b": 100.0, "c": 5.0}.__getitem__
    wants = {"likely": {"b"}, "spec": {"c"}, "est": {"a"}}
    tier = {"est": 0, "likely": 1, "spec": 2}
    plan = plan_looks(wants, set(), 50.0, cost, {"est": 0.1, "likely": 0.9, "spec": 0.9}, tier)
    assert plan.chosen == ["est"] and plan.stopped and plan.over_budget == ["likely", "spec"]
    assert plan_looks(wants, set(), 200.0, cost, {}, tier).chosen == ["est", "likely", "spec"]


def test_every_claim_still_open_when_the_budget_stops_is_left_at_the_budget():
    """Served in the round that stopped, a claim whose next look is never planned was
    stopped by the budget too (its page must not say 'this run's selection')."""
    claims = {
        "served": {"tier": 0, "looks": [{"r0"}, {"r1"}], "decided_after": 3, "chances": [1, 1]},
        "dear": {"tier": 1, "looks": [{"r2"}], "decided_after": 2, "chances": [1]},
    }
    cost, depth, plans = dict.fromkeys(RUNS, 10), dict.fromkeys(claims, 0), []

    def ask():
        wanted = {c: set(k["looks"][depth[c]]) for c, k in claims.items()
                  if depth[c] < min(len(k["looks"]), k["decided_after"])}  # fmt: skip
        return wanted, {c: 1.0 for c in wanted}, {c: claims[c]["tier"] for c in wanted}

    def served(plan):
        plans.append(plan)
        for c in plan.chosen:
            depth[c] += 1
        return True

    last = spend(15, set(), ask, cost.__getitem__, lambda: None, served)
    assert last.stopped and plans[0].chosen == ["served"]
    assert last.over_budget == ["dear", "served"]  # served once, still open: left too
