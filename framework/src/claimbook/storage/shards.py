"""A shard's results file, and what the merge checks before it pools shards.

A shard (``--claimbook-shard I/N``) writes its claim records without verdicts: spec,
context, instances (outcomes and measured values) and its run's facts, never a verdict,
seed count, statistic or baseline comparison (:func:`unjudged`). The merge
(:mod:`claimbook.merge`) judges the pooled instances once, so no shard's verdict needs
checking; a shard file that carries one (of an older claimbook, or edited) is refused.

Before pooling, :func:`read_shards` checks that the files belong together (same schema,
commit, seeds, selection, shard count and collected suite; every shard exactly once; no
instance in two shards), that each agrees with itself (every instance its facts say
reported is in its claims and every one held is reported; an instance marked passed holds
no failure message; each printed-value check ``reproduced`` is what its measured and
printed values give), and that together they can give the unsharded verdicts: a claim
decided by a rule over seeds ran in one shard only, and the training budget, which the
shards split, limited no claim's planned looks. These checks catch damaged files and
files of different runs mixed together, not a deliberate forgery.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from claimbook.declare.design import rule_from_dict
from claimbook.declare.numbers import reproduces
from claimbook.declare.spec import ClaimSpec
from claimbook.storage.results import ResultsError, load_results

SPEC_FIELDS = [f.name for f in dataclasses.fields(ClaimSpec)]
CLAIM_CONTEXT = ("sentence", "test", "file", "line", "source_code")
JUDGED = ("verdict", "gates", "seeds_passed", "seeds_total", "printed_reproduced", "statistics")
# options that do not change which claim instances run (or, for --shard, that differ by design)
_NEUTRAL = tuple(f"--claimbook-{name}" for name in (
    "shard", "workers", "results-dir", "history", "baseline", "receipt", "no-cache",
    "require-baseline", "junit-values",
))  # fmt: skip
_FLAGS = tuple(f"--claimbook-{name}" for name in ("no-cache", "require-baseline", "junit-values"))


def unjudged(claim: dict) -> dict:
    """A claim record as a shard writes it: everything but what the judge decided."""
    return {k: v for k, v in claim.items() if k not in JUDGED}


def refuse(why: str) -> ResultsError:
    return ResultsError(f"cannot merge: {why}")


def selection(argv: list[str]) -> list[str]:
    """The pytest arguments of a run that choose its claim instances (paths, -k, -m, ...)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _NEUTRAL:
            skip = arg not in _FLAGS  # the others take a value
        elif not arg.startswith(tuple(f"{o}=" for o in _NEUTRAL)):
            kept.append(arg)
    return kept


def instances_of(claim: dict) -> list[dict]:
    """A claim record's instances as the judge takes them (each with its claim's spec)."""
    context = {k: claim[k] for k in CLAIM_CONTEXT}
    spec = {k: claim[k] for k in SPEC_FIELDS}
    return [{**inst, **context, "claim": spec} for inst in claim["instances"]]


def _same(loaded: list[tuple[Path, dict]], what: str, value) -> None:
    """Refuse unless every file gives the same ``value(run)``; name each file's value."""
    found = {repr(value(data["run"])) for _, data in loaded}
    if len(found) > 1:
        listing = "; ".join(f"{p.name}: {value(d['run'])}" for p, d in loaded)
        raise refuse(f"the shards differ in {what} ({listing})")


def read_shards(paths: list[Path]) -> tuple[list[tuple[Path, dict]], list[dict]]:
    """The shards' files in shard order, and their pooled instances in collection order.

    Raises:
        ResultsError: a file is unreadable, of another schema or shape, not a shard's, or
            carries verdicts; the files differ in commit, seeds, selection, shard count or
            suite; a shard is missing or given twice; two shards ran the same instance; a
            file disagrees with itself; the shards cannot give the unsharded verdicts.
    """
    if not paths:
        raise refuse("no results files given")
    loaded = [(Path(p), load_results(p)) for p in paths]  # refuses another schema, naming it
    for path, data in loaded:
        if not data["run"].get("shard"):
            raise refuse(f"{path.name} is not a shard's results (it ran without --shard)")
    _same(loaded, "commit", lambda run: run.get("git_commit"))
    _same(loaded, "seeds", lambda run: run["seeds"])
    _same(loaded, "selection (pytest arguments)", lambda run: selection(run["argv"]))
    _same(loaded, "shard count", lambda run: run["shard"]["count"])
    count = loaded[0][1]["run"]["shard"]["count"]
    indexes = [data["run"]["shard"]["index"] for _, data in loaded]
    twice = sorted({i for i in indexes if indexes.count(i) > 1})
    if twice:
        raise refuse(f"shard(s) {', '.join(f'{i}/{count}' for i in twice)} given twice")
    missing = sorted(set(range(1, count + 1)) - set(indexes))
    if missing:
        raise refuse(f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing")
    loaded.sort(key=lambda item: item[1]["run"]["shard"]["index"])
    if len({tuple(sorted(data["run"]["facts"]["suite"])) for _, data in loaded}) > 1:
        raise refuse("the shards collected different suites (another checkout or arguments)")
    instances, seen = [], {}
    for path, data in loaded:
        for claim in data["claims"]:
            for inst in instances_of(claim):
                if inst["nodeid"] in seen:
                    raise refuse(f"{inst['nodeid']} ran in both {seen[inst['nodeid']]} and {path}")
                seen[inst["nodeid"]] = path.name
                instances.append(inst)
    corrupt = [p for path, data in loaded for p in shard_problems(path.name, data)]
    if corrupt:
        raise refuse(
            "the shards' files do not agree with themselves (damaged, edited, of an older "
            f"claimbook, or parts of different runs): {'; '.join(corrupt[:8])}"
            + (f"; and {len(corrupt) - 8} more" if len(corrupt) > 8 else "")
        )
    unsharded = unsharded_problems(loaded)
    if unsharded:
        raise refuse("; ".join(unsharded))
    instances.sort(key=lambda i: (i["file"], i["line"]))  # as an unsharded run lists them
    return loaded, instances


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


def shard_problems(name: str, data: dict) -> list[str]:
    """Where one shard's results disagree with themselves, or carry a verdict (empty when
    neither)."""
    run, claims = data["run"], data["claims"]
    held = {inst["nodeid"]: inst for c in claims for inst in c["instances"]}
    found = []
    if data.get("comparison") is not None:
        found.append("it carries a comparison with the baseline (shards carry no verdicts)")
    reported = set(run["facts"].get("reported") or [])
    lost = sorted(reported - set(held))
    if lost:
        found.append(f"it reports {len(lost)} instances its claims lack: {_some(lost)}")
    unreported = sorted(n for n, i in held.items() if i["outcome"] != "error" and n not in reported)
    if unreported:
        found.append(
            f"it holds {len(unreported)} instances it does not report: {_some(unreported)}"
        )
    for claim in claims:
        carried = [key for key in JUDGED if key in claim]
        if carried:
            found.append(
                f"{claim['id']} carries {', '.join(carried)} (shards carry no verdicts: the "
                "merge judges; run the shard again with this claimbook)"
            )
        found += _instance_problems(claim)
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
