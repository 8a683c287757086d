"""Claim records: a claim's instances grouped under its spec, with its verdict.

A claim record (one per catalog id, in collection order) carries the claim's spec,
sentence, test and source location, its verdict from :mod:`claimbook.judge.verdicts`,
and its instances with their outcomes and measured values.
"""

from __future__ import annotations

from collections import defaultdict

from claimbook.config import DEFAULT_REPLAY
from claimbook.declare.design import Slower, rule_from_dict
from claimbook.declare.spec import ClaimSpec
from claimbook.judge.crosscheck import crosscheck
from claimbook.judge.outlook import outlook
from claimbook.judge.sequential import contiguous, judge_rule, other_level
from claimbook.judge.tidy import per_seed, tidy
from claimbook.judge.timing import judge_timing
from claimbook.judge.verdicts import Instance, decide, decide_statistical, known, stand_in

# what an instance record shares with its claim, kept once in the claim record
INSTANCE_ONLY = ("claim", "sentence", "test", "file", "line", "source_code", "replay_form")


def replay_command(nodeid: str, seed: int | str | None, form: str = DEFAULT_REPLAY) -> str:
    """The one command that re-runs a single claim instance afresh (no reuse), in the book's
    ``form`` (its ``replay`` setting, e.g. ``python -m pytest {test}{seeds}``); ``seed`` may
    be a list of seeds as the option spells it ("0,1,2")."""
    seeds = f" --claimbook-seeds {seed}" if seed is not None else ""
    return form.format(test=f'"{nodeid}"', seeds=seeds)


def statistics_of(spec: ClaimSpec, insts: list[dict], adaptive: bool) -> dict | None:
    """The rule's record (see :func:`claimbook.judge.sequential.judge_rule`), or None for a
    deterministic claim or one with nothing measured. ``adaptive``: the planned looks;
    otherwise (explicit ``--claimbook-seeds``) one look at the seeds measured."""
    rule = rule_from_dict(spec.rule)
    ok = [i for i in insts if i["outcome"] == "passed"]
    if rule is None or not ok:
        return None
    if isinstance(rule, Slower):
        found = {m["name"]: m["value"] for i in ok for m in i["measures"]}
        if rule.ratios not in found or (rule.noise and rule.noise not in found):
            return None
        return judge_timing(rule, spec.level, found[rule.ratios], found.get(rule.noise) or [])
    frame = per_seed(tidy([{"id": spec.id, "instances": ok}]), spec.id, rule.measures())
    if frame.empty or set(frame.index) != {i["seed"] for i in ok}:
        return None  # a seed without a value would shift every later look: untested
    looks = rule.looks if adaptive else (len(frame),)
    record = judge_rule(rule, spec.level, frame, looks)
    record["other_level"] = other_level(rule, spec.level, frame, looks, record["decision"])
    record["adaptive"] = adaptive
    prefix = contiguous(frame)  # the seeds read in order: never changes the verdict
    record["crosscheck"] = crosscheck(rule, record["alpha"], record["values"], prefix)
    record["outlook"] = outlook(record, spec.level)  # open: the chance its looks decide it
    costs = [i["train_s"] for i in ok if i.get("train_s") is not None]
    record["seed_cpu_s"] = round(sum(costs) / len(costs), 1) if costs else None  # committed
    return record


def _not_measured(wanted: list[str], insts: list[dict]) -> str:
    """Which seed did not measure which value a rule reads ("" if every seed did)."""
    lacking = []
    for inst in insts:
        missing = sorted(set(wanted) - {m["name"] for m in inst["measures"]})
        if missing:
            lacking.append(f"seed {inst['seed']}: {', '.join(map(repr, missing))}")
    return f" (not measured: {'; '.join(lacking)})" if lacking else ""


def claims_from_instances(
    instances: list[dict], complete: bool = True, adaptive: bool = True
) -> list[dict]:
    """Group instance records (each with its ``claim`` spec dict, sentence, test, file, line
    and source code) into claim records with verdicts, in order of first appearance.
    ``adaptive`` says the seeds followed the planned looks (no explicit ``--claimbook-seeds``)."""
    by_id: dict[str, list[dict]] = defaultdict(list)
    for inst in instances:
        by_id[inst["claim"]["id"]].append(inst)
    records = []
    for insts in by_id.values():
        spec = ClaimSpec.from_dict(insts[0]["claim"])
        outcomes = [Instance(i["seed"], i["params"], i["outcome"]) for i in insts]
        statistics = None
        if spec.rule:
            statistics = statistics_of(spec, insts, adaptive)
            verdict = decide_statistical(spec.level, outcomes, statistics, spec.erratum, complete)
            if verdict.verdict in ("error", "skipped"):  # untested: no estimate
                statistics = None
        else:
            verdict = decide(spec.level, outcomes, spec.erratum, complete, spec.cited)
        verdict = stand_in(known(verdict, spec.known_refuted, complete), spec.stand_in)
        note = verdict.note
        if (
            spec.rule
            and verdict.verdict == "error"
            and not any(i["outcome"] == "error" for i in insts)
        ):
            note += _not_measured(rule_from_dict(spec.rule).measures(), insts)
        if verdict.verdict == "skipped":  # say why, not only that
            note = "; ".join(sorted({i["message"] for i in insts if i["message"]}))
        first = insts[0]
        checks = [
            m["reproduced"] for i in insts for m in i["measures"] if m.get("reproduced") is not None
        ]
        records.append(
            {
                **spec.to_dict(),
                "sentence": first["sentence"],
                "test": first["test"],
                "file": first["file"],
                "line": first["line"],
                "source_code": first.get("source_code", ""),
                "replay_form": first.get("replay_form") or DEFAULT_REPLAY,
                "verdict": verdict.verdict,
                "gates": verdict.gates,
                "seeds_passed": verdict.seeds_passed,
                "seeds_total": verdict.seeds_total,
                "note": note,
                "statistics": statistics,
                # printed numbers that reproduce / printed numbers judged
                "printed_reproduced": [sum(checks), len(checks)] if checks else None,
                "instances": [
                    {k: v for k, v in i.items() if k not in INSTANCE_ONLY} for i in insts
                ],
            }
        )
    return records
