"""The planned looks of one session: after the first look (the default seeds), the
stochastic claims their rule has not decided ask for their next look's seeds, which are
trained (within the budget, the likeliest to decide per CPU-second first,
:mod:`claimbook.runs.deepen`) and run, look after look.

:class:`PlannedLooks` owns what they need: the seeds past the first look, collected and held
back; the runs paid for; which rules cannot decide; what each look cost. The held seeds are
run with pytest's own runtest protocol, so they report, replay and store their outcomes like
any other instance.
"""

from __future__ import annotations

import pytest

from claimbook.declare.design import rule_from_dict
from claimbook.declare.marker import spec_of
from claimbook.plugin.options import first_look, option
from claimbook.plugin.tocap import cap_cost
from claimbook.runs.deepen import spend, tier_of
from claimbook.runs.plan import estimate

COUNTS = ("budget_cpu_s", "base_runs", "base_committed_s", "extra_runs", "extra_committed_s",
          "extra_trained", "extra_cpu_s", "extra_instances", "free_instances")  # fmt: skip


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


def base_runs(items: list, key) -> set:
    """The training runs the first look's instances read: the budget is a multiple of
    their count, and they are paid for already."""
    return set().union(*(i.stash.get(key, set()) for i in items))


class PlannedLooks:
    """The planned looks of one claim session (``claims``, whose collector, cache, training
    phase and terminal they use)."""

    def __init__(self, claims):
        self.claims = claims
        self.key = claims.RUNS  # the stash key of the runs an instance reads
        self.reserve: dict[str, dict[int, object]] = {}  # claim id -> seed -> held item
        self.held = 0  # instances held back at collection
        self.counted: set = set()  # training runs paid for: the first look's, then each look's
        self.flagged: dict[str, str] = {}  # claim id -> why its rule cannot decide, or ""
        self.counts = dict.fromkeys(COUNTS, 0) | {"rounds": [], "over_budget": []}

    # collection ------------------------------------------------------------------------------

    def flag(self, claim_id: str, why: str) -> None:
        """Note whether a claim's rule can decide within its cap; say it now if it cannot."""
        self.flagged[claim_id] = why
        if why:
            self.claims.say(f"{claim_id}: {why}")
            self.claims.messages.append(f"{claim_id}: {why}")  # and again in the summary

    def hold(self, claim_id: str, seed: int, item) -> None:
        """Hold back an instance past its claim's first look: it runs only if asked for."""
        self.reserve.setdefault(claim_id, {})[seed] = item

    def hold_back(self, items: list) -> None:
        """Remove the held instances from the collected ``items`` (in place) and count them."""
        held = {id(i) for seeds in self.reserve.values() for i in seeds.values()}
        items[:], self.held = [i for i in items if id(i) not in held], len(held)

    def keep(self, ids: set[str]) -> None:
        """Keep the held seeds of the claims ``ids`` only (after -k, -m or a shard)."""
        self.reserve = {k: v for k, v in self.reserve.items() if k in ids}

    def shard_groups(self, items: list, count: int, settings) -> tuple:
        """The arguments of :func:`claimbook.runs.plan.shard_of` for the collected ``items``:
        each instance's runs, the count, the run's seconds, each instance's claim id, and
        the runs each claim's held-back seeds read."""
        runs = {item.nodeid: item.stash.get(self.key, set()) for item in items}
        owners = {i.nodeid: spec_of(i).id for i in items if spec_of(i) is not None}
        later = {cid: set().union(*(i.stash.get(self.key, set()) for i in seeds.values()))
                 for cid, seeds in self.reserve.items()}  # fmt: skip
        return runs, count, settings.run_seconds, owners, later

    def first_look_paid(self, claim_items: list, computed: dict) -> None:
        """The first look's runs, which the budget is a multiple of, and the CPU they took."""
        self.counted = base_runs(claim_items, self.key)
        self.counts["base_cpu_s"] = round(sum(computed.values()), 1)

    # pricing ---------------------------------------------------------------------------------

    def cost(self, run) -> float:
        """A run's committed training seconds (the book's durations file, never the clock)."""
        training, seed = run
        claims = self.claims
        return estimate(training.label(seed), training.fn.__name__, claims.recorded,
                        claims.settings.run_seconds)  # fmt: skip

    def to_cap(self, claim: dict) -> dict | None:
        """:func:`claimbook.plugin.tocap.cap_cost` of an open claim (None without an outlook)."""
        stats = claim.get("statistics") or {}
        rule = rule_from_dict(stats.get("rule"))
        if rule is None or not stats.get("outlook"):
            return None
        reserved = self.reserve.get(claim["id"], {})
        runs_of = {seed: item.stash.get(self.key, set()) for seed, item in reserved.items()}
        paid = {i["seed"]: i.get("train_s") or 0.0 for i in claim["instances"]}
        first = set(first_look(self.claims.config, rule))
        cache = self.claims.cache
        return cap_cost(stats, paid, first, runs_of, self.cost, lambda r: cache.has_all([r]))

    # the looks -------------------------------------------------------------------------------

    def wants(self) -> tuple[dict[str, list], dict[str, float], dict[str, int]]:
        """Claim id -> the held items its next look needs, for every claim its rule has
        not decided (nor given up on as futile) that can still have them; claim id -> the
        chance that look decides it; and claim id -> its tier in the budget's order."""
        ids = set(self.reserve)
        instances = [i for i in self.claims.collector.instances() if i["claim"]["id"] in ids]
        found, chance, tier = {}, {}, {}
        from claimbook.judge.claims import claims_from_instances  # the judge: only where it looks
        from claimbook.judge.outlook import next_look_chance

        for record in claims_from_instances(instances, adaptive=True):
            stats = record.get("statistics")
            if record["verdict"] in ("error", "skipped") or not stats or not stats["next_look"]:
                continue
            read = set(stats["values"]["seed"])
            reserved = self.reserve.get(record["id"], {})
            fresh = (stats["rule"] or {}).get("fresh", 0)
            seeds = [s for s in range(fresh, fresh + stats["next_look"]) if s not in read]
            if all(s in reserved for s in seeds):
                found[record["id"]] = [reserved[s] for s in seeds]
                chance[record["id"]] = next_look_chance(stats)
                tier[record["id"]] = tier_of(record)
        return found, chance, tier

    def paid_for(self) -> list:
        """The held (claim id, seed) pairs, in seed order, that read training runs and only
        runs this session already counts (trained or read for any claim): every seed that
        exists is evidence, so they run."""
        free = []
        for cid, reserved in self.reserve.items():
            for seed in sorted(reserved):
                runs = reserved[seed].stash.get(self.key, set())
                if runs and runs <= self.counted:  # a claim that trains nothing pays per seed
                    free.append((cid, seed))
        return free

    def _run(self, session: pytest.Session, items: list) -> None:
        self.claims.selection.add(items)
        session.testscollected += len(items)  # pytest's progress counts them too
        for index, item in enumerate(items):
            following = items[index + 1] if index + 1 < len(items) else None
            item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
            if session.shouldstop or session.shouldfail:
                break

    def read_paid_for(self, session: pytest.Session) -> None:
        """Run every held instance whose runs are already paid for (see :meth:`paid_for`)."""
        free = self.paid_for()
        if not free:
            return
        items = [self.reserve[cid].pop(seed) for cid, seed in free]
        self.claims.say(
            f"reading {len(items)} more seeds of {len({c for c, _ in free})} claims: their "
            "training runs are in this run already"
        )
        self.claims.prepare(items)
        self.counts["free_instances"] += len(items)
        self._run(session, items)

    def deepen(self, session: pytest.Session) -> None:
        """Run the next planned look of every undecided stochastic claim, look after look,
        while the budget lasts (``--claimbook-budget`` x the first look's committed training
        CPU-seconds), in the budget's fixed order (:mod:`claimbook.runs.deepen`: gating
        claims first, then the likeliest to decide per CPU-second), until a look does not
        fit; count what it cost: runs counted, committed and measured seconds."""
        claims, looks = self.claims, self.counts
        looks["base_runs"] = len(self.counted)
        looks["base_committed_s"] = round(sum(map(self.cost, self.counted)), 1)
        budget = option(claims.config, "budget") * looks["base_committed_s"]
        looks["budget_cpu_s"] = round(budget, 1)
        asked: dict = {}

        def ask():
            if not self.reserve or session.shouldstop or session.shouldfail:
                return {}, {}, {}
            found, chance, tier = self.wants()
            asked.clear()
            asked.update(found)
            reads = {cid: set().union(*(i.stash.get(self.key, set()) for i in items))
                     for cid, items in found.items()}  # fmt: skip
            return reads, chance, tier

        def read_free():
            if not claims.leg or not claims.leg["stopped"]:
                self.read_paid_for(session)

        def take(plan) -> bool:
            looks["extra_runs"] += len(plan.runs)
            looks["extra_committed_s"] = round(looks["extra_committed_s"] + plan.seconds, 1)
            items = [i for cid in plan.chosen for i in asked[cid]]
            for cid in plan.chosen:
                for item in asked[cid]:
                    self.reserve[cid].pop(item.callspec.params["seed"])
            claims.say(
                f"planned looks: {len(plan.chosen)} undecided claims ask for more seeds "
                f"({len(items)} instances, {len(plan.runs)} more training runs, about "
                f"{plan.seconds:.0f} CPU-s as the committed durations file prices them, which "
                "is what the budget counts, whether or not the training cache holds them "
                "already; gating claims first, then the likeliest to decide per CPU-s)"
            )
            claims.prepare(items)
            if claims.leg and claims.leg["stopped"]:
                return False  # a training leg trained its part of this look: the next round judges
            trained = claims.training.computed if claims.training else {}
            measured = sum(trained.values())
            looks["extra_cpu_s"] = round(looks["extra_cpu_s"] + measured, 1)
            looks["extra_trained"] += len(trained)
            looks["extra_instances"] += len(items)
            looks["rounds"].append({"claims": plan.chosen, "instances": len(items),
                                    "runs": len(plan.runs), "committed_s": round(plan.seconds, 1),
                                    "trained": len(trained),
                                    "cpu_s": round(measured, 1)})  # fmt: skip
            self._run(session, items)
            return True

        last = spend(budget, self.counted, ask, self.cost, read_free, take)
        looks["over_budget"] = last.over_budget  # the claims whose latest ask was left
