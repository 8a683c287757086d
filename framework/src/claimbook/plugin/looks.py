"""The planned looks of one session: after the first look (the default seeds), the
stochastic claims their rule has not decided ask for their next look's seeds, which are
trained (within the budget, the likeliest to decide per CPU-second first,
:mod:`claimbook.runs.deepen`) and run, look after look.

The seeds past the first look were collected and held back (``ClaimSession.reserve``);
they are run here with pytest's own runtest protocol, so they report, replay and store
their outcomes like any other instance.
"""

from __future__ import annotations

import pytest

from claimbook.declare.marker import spec_of
from claimbook.plugin.options import option
from claimbook.runs.deepen import spend, tier_of
from claimbook.runs.plan import estimate


def check_rule(test: str, rule, item, seed, params: dict):
    """A claim decided by a rule over seeds takes ``seed`` and no other parameter; returns
    the rule. Raises pytest.UsageError naming the test otherwise."""
    if rule is not None and rule.stochastic and ("seed" not in item.fixturenames or params):
        raise pytest.UsageError(
            f"{test}: claim marker: a claim decided by a rule over seeds takes `seed` "
            "(one instance per seed, so the planned looks can add seeds) and no other "
            f"parameter; got {sorted(item.fixturenames if seed is None else params)}"
        )
    return rule


def flag(claims, claim_id: str, why: str) -> None:
    """Note whether a claim's rule can decide within its cap; say it now if it cannot."""
    claims.flagged[claim_id] = why
    if why:
        claims.say(f"{claim_id}: {why}")
        claims.messages.append(f"{claim_id}: {why}")  # and again in the summary


def base_runs(items: list, key) -> set:
    """The training runs the first look's instances read: the budget is a multiple of
    their count, and they are paid for already."""
    return set().union(*(i.stash.get(key, set()) for i in items))


def shard_groups(items: list, reserve: dict, key, count: int, settings) -> tuple:
    """The arguments of :func:`claimbook.runs.plan.shard_of` for the collected ``items``:
    each instance's runs, the count, the run's seconds, each instance's claim id, and
    the runs each claim's held-back seeds (``reserve``) read."""
    runs = {item.nodeid: item.stash.get(key, set()) for item in items}
    owners = {i.nodeid: spec_of(i).id for i in items if spec_of(i) is not None}
    later = {cid: set().union(*(i.stash.get(key, set()) for i in seeds.values()))
             for cid, seeds in reserve.items()}  # fmt: skip
    return runs, count, settings.run_seconds, owners, later


def wants(claims) -> tuple[dict[str, list], dict[str, float], dict[str, int]]:
    """Claim id -> the reserved items its next look needs, for every claim its rule has
    not decided (nor given up on as futile) that can still have them; claim id -> the
    chance that look decides it; and claim id -> its tier in the budget's order."""
    ids = set(claims.reserve)
    instances = [i for i in claims.collector.instances() if i["claim"]["id"] in ids]
    found, chance, tier = {}, {}, {}
    from claimbook.judge.claims import claims_from_instances  # the judge: only where it looks
    from claimbook.judge.outlook import next_look_chance

    for record in claims_from_instances(instances, adaptive=True):
        stats = record.get("statistics")
        if record["verdict"] in ("error", "skipped") or not stats or not stats["next_look"]:
            continue
        read = set(stats["values"]["seed"])
        reserved = claims.reserve.get(record["id"], {})
        fresh = (stats["rule"] or {}).get("fresh", 0)
        seeds = [s for s in range(fresh, fresh + stats["next_look"]) if s not in read]
        if all(s in reserved for s in seeds):
            found[record["id"]] = [reserved[s] for s in seeds]
            chance[record["id"]] = next_look_chance(stats)
            tier[record["id"]] = tier_of(record)
    return found, chance, tier


def paid_for(claims) -> list:
    """The reserved items, in seed order, that read training runs and only runs this
    session already counts (trained or read for any claim): every seed that exists is
    evidence, so they run."""
    free = []
    for cid, reserved in claims.reserve.items():
        for seed in sorted(reserved):
            runs = reserved[seed].stash.get(claims.RUNS, set())
            if runs and runs <= claims.counted:  # a claim that trains nothing pays per seed
                free.append((cid, seed))
    return free


def _run(claims, session: pytest.Session, items: list) -> None:
    claims.selected += [i.nodeid for i in items]
    claims.total += len(items)
    session.testscollected += len(items)  # pytest's progress counts them too
    for index, item in enumerate(items):
        following = items[index + 1] if index + 1 < len(items) else None
        item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
        if session.shouldstop or session.shouldfail:
            break


def read_paid_for(claims, session: pytest.Session) -> None:
    """Run every reserved instance whose runs are already paid for (see :func:`paid_for`)."""
    free = paid_for(claims)
    if not free:
        return
    items = [claims.reserve[cid].pop(seed) for cid, seed in free]
    claims.say(
        f"reading {len(items)} more seeds of {len({c for c, _ in free})} claims: their "
        "training runs are in this run already"
    )
    claims.prepare(items)
    claims.looks["free_instances"] += len(items)
    _run(claims, session, items)


def run_cost(claims):
    """A run's committed training seconds (the book's durations file, never the clock)."""
    recorded, default = claims.recorded, claims.settings.run_seconds

    def cost(run) -> float:
        training, seed = run
        return estimate(training.label(seed), training.fn.__name__, recorded, default)

    return cost


def deepen(claims, session: pytest.Session) -> None:
    """Run the next planned look of every undecided stochastic claim, look after look,
    while the budget lasts (``--claimbook-budget`` x the first look's committed training
    CPU-seconds), in the budget's fixed order (:mod:`claimbook.runs.deepen`: gating claims
    first, then the likeliest to decide per CPU-second), until a look does not fit;
    record what it cost in ``claims.looks``: runs counted, committed and measured seconds."""
    looks, cost = claims.looks, run_cost(claims)
    looks["base_runs"] = len(claims.counted)
    looks["base_committed_s"] = round(sum(map(cost, claims.counted)), 1)
    budget = option(claims.config, "budget") * looks["base_committed_s"]
    looks["budget_cpu_s"] = round(budget, 1)
    asked: dict = {}

    def ask():
        if not claims.reserve or session.shouldstop or session.shouldfail:
            return {}, {}, {}
        found, chance, tier = wants(claims)
        asked.clear()
        asked.update(found)
        reads = {cid: set().union(*(i.stash.get(claims.RUNS, set()) for i in items))
                 for cid, items in found.items()}  # fmt: skip
        return reads, chance, tier

    def read_free():
        if not claims.leg or not claims.leg["stopped"]:
            read_paid_for(claims, session)

    def take(plan) -> bool:
        looks["extra_runs"] += len(plan.runs)
        looks["extra_committed_s"] = round(looks["extra_committed_s"] + plan.seconds, 1)
        items = [i for cid in plan.chosen for i in asked[cid]]
        for cid in plan.chosen:
            for item in asked[cid]:
                claims.reserve[cid].pop(item.callspec.params["seed"])
        claims.say(
            f"planned looks: {len(plan.chosen)} undecided claims ask for more seeds "
            f"({len(items)} instances, {len(plan.runs)} more training runs, about "
            f"{plan.seconds:.0f} CPU-s as the committed durations file prices them, which is "
            "what the budget counts, whether or not the training cache holds them already; "
            "gating claims first, then the likeliest to decide per CPU-s)"
        )
        claims.prepare(items)
        if claims.leg and claims.leg["stopped"]:
            return False  # a training leg trained its part of this look: the next round judges it
        trained = claims.training.computed if claims.training else {}
        measured = sum(trained.values())
        looks["extra_cpu_s"] = round(looks["extra_cpu_s"] + measured, 1)
        looks["extra_trained"] += len(trained)
        looks["extra_instances"] += len(items)
        looks["rounds"].append({"claims": plan.chosen, "instances": len(items),
                                "runs": len(plan.runs), "committed_s": round(plan.seconds, 1),
                                "trained": len(trained),
                                "cpu_s": round(measured, 1)})  # fmt: skip
        _run(claims, session, items)
        return True

    last = spend(budget, claims.counted, ask, cost, read_free, take)
    looks["over_budget"] = last.over_budget  # the claims whose latest ask was left
