"""What the merge of shards checks before it trusts them (:mod:`claimbook.storage.merge`).

Each shard's file must agree with itself: every claim instance its facts say reported is
in its claims, every instance in its claims reported; an instance marked passed holds no
failure message; each printed-value check (``reproduced``) is what its measured value and
printed value give; and every claim's verdict, seed counts and statistics are what the
judge gives again from the instances' outcomes and values. And the shards must be able to
give the unsharded run's verdicts: a claim decided by a rule over seeds ran in one shard
only, and the training budget, which the shards split, limited no claim's planned looks
(an unsharded run might have served that claim, or another, differently).

These checks catch accidental corruption and files of different runs mixed together; they
do not catch a deliberate forgery, which can rewrite a file so that it agrees with itself.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from claimbook.declare.design import rule_from_dict
from claimbook.declare.numbers import reproduces
from claimbook.declare.spec import ClaimSpec
from claimbook.judge.claims import claims_from_instances
from claimbook.judge.outcome import Facts, partial_reasons

SPEC_FIELDS = [f.name for f in dataclasses.fields(ClaimSpec)]
CLAIM_CONTEXT = ("sentence", "test", "file", "line", "source_code")
JUDGED = ("verdict", "gates", "seeds_passed", "seeds_total", "printed_reproduced", "statistics")


def instances_of(claim: dict) -> list[dict]:
    """A claim record's instances as the judge takes them (each with its claim's spec)."""
    context = {k: claim[k] for k in CLAIM_CONTEXT}
    spec = {k: claim[k] for k in SPEC_FIELDS}
    return [{**inst, **context, "claim": spec} for inst in claim["instances"]]


def _some(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _instance_problems(claim: dict) -> list[str]:
    found = []
    for inst in claim["instances"]:
        if inst["outcome"] == "passed" and (inst.get("message") or inst.get("replay")):
            found.append(f"{inst['nodeid']} is marked passed but holds a failure message")
        for m in inst.get("measures", []):
            if "printed" not in m or "reproduced" not in m:
                continue
            if reproduces(m["value"], m["printed"], m.get("tolerance")) != m["reproduced"]:
                found.append(
                    f"{inst['nodeid']}: value {m['name']!r} ({m['value']}) does not give its "
                    f"recorded check against the printed {m['printed']}"
                )
    return found


def _judged(claim: dict) -> str:
    kept = {k: claim.get(k) for k in JUDGED}
    if kept["statistics"]:  # the session adds why an open claim stopped and what its cap
        session = ("stopped_by", "to_cap")  # costs (runs not in its cache); the judge does not
        kept["statistics"] = {k: v for k, v in kept["statistics"].items() if k not in session}
    return json.dumps(kept, sort_keys=True, default=str)


def _stated(claim: dict) -> str:
    return f"{claim['verdict']}, {claim['seeds_passed']} of {claim['seeds_total']} seeds"


def shard_problems(name: str, data: dict) -> list[str]:
    """Where one shard's results disagree with themselves (empty when they agree)."""
    run, claims = data["run"], data["claims"]
    facts = Facts.from_dict(run["facts"])
    held = {inst["nodeid"]: inst for c in claims for inst in c["instances"]}
    found = []
    lost = sorted(set(facts.reported) - set(held))
    if lost:
        found.append(f"it reports {len(lost)} instances its claims lack: {_some(lost)}")
    reported = set(facts.reported)
    unreported = sorted(n for n, i in held.items() if i["outcome"] != "error" and n not in reported)
    if unreported:
        found.append(
            f"it holds {len(unreported)} instances it does not report: {_some(unreported)}"
        )
    complete = not partial_reasons(facts)
    for claim in claims:
        found += _instance_problems(claim)
        again = claims_from_instances(
            instances_of(claim), complete, adaptive=run.get("adaptive", True)
        )
        if again and _judged(again[0]) != _judged(claim):
            found.append(
                f"{claim['id']}: its recorded verdict, seed counts or statistics do not follow "
                f"from its instances (recorded {_stated(claim)}; judged again {_stated(again[0])})"
            )
    return [f"{name}: {problem}" for problem in found]


def unsharded_problems(loaded: list[tuple[Path, dict]]) -> list[str]:
    """Why the shards cannot give the verdicts of the unsharded run (empty when they can)."""
    where: dict[str, set[str]] = {}
    stopped: set[str] = set()
    for path, data in loaded:
        for claim in data["claims"]:
            rule = rule_from_dict(claim.get("rule"))
            if rule is not None and rule.stochastic:
                where.setdefault(claim["id"], set()).add(path.name)
        if data["run"].get("adaptive", True):
            for cid in (data["run"].get("looks") or {}).get("over_budget", []):
                stopped.add(cid)
    looks = [d["run"].get("looks") or {} for _, d in loaded if d["run"].get("adaptive", True)]
    spent = sum(look.get("extra_committed_s", 0) for look in looks)
    budget = max((look.get("budget", 0) for look in looks), default=0)
    if spent > budget * sum(look.get("base_committed_s", 0) for look in looks) + 1e-6:
        for look in looks:  # within each shard's share, beyond the whole run's budget
            for r in look.get("rounds", []):
                stopped.update(r["claims"])
    split = sorted(cid for cid, files in where.items() if len(files) > 1)
    found = []
    if split:
        found.append(
            f"the seeds of {_some(split)} ran in more than one shard, so no shard could take "
            "their planned looks (shards of this version deal whole claims: run them again)"
        )
    if stopped:
        found.append(
            f"the planned looks of {_some(sorted(stopped))} met the training budget, which "
            "the shards split, so an unsharded run may judge them otherwise (run them "
            "unsharded, or with a larger --budget)"
        )
    return found
