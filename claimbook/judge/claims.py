"""Claim records: a claim's instances grouped under its spec, with its verdict.

A claim record (one per catalog id, in collection order) carries the claim's spec,
sentence, test and source location, its verdict from :mod:`claimbook.judge.verdicts`,
and its instances with their outcomes and measured values.
"""

from __future__ import annotations

from collections import defaultdict

from claimbook.declare.spec import ClaimSpec
from claimbook.judge.verdicts import Instance, decide


def replay_command(nodeid: str, seed: int | None) -> str:
    """The one command that re-runs a single claim instance afresh (no reuse)."""
    seeds = f" --seeds {seed}" if seed is not None else ""
    return f'nox -s claims -- "{nodeid}"{seeds}'


def measures(claim: dict) -> list[dict]:
    """Every measure of a claim, each tagged with its seed (the instance's, or its own)."""
    return [
        {**m, "seed": m.get("seed", inst["seed"]), "params": inst["params"]}
        for inst in claim["instances"]
        for m in inst["measures"]
    ]


def label(m: dict) -> str:
    """A measure's name with its test parameters, e.g. "reach (layers=4)"."""
    params = ", ".join(f"{k}={v}" for k, v in m["params"].items())
    return f"{m['name']} ({params})" if params and params not in m["name"] else m["name"]


def claims_from_instances(instances: list[dict], complete: bool = True) -> list[dict]:
    """Group instance records (each with its ``claim`` spec dict, sentence, test, file, line
    and source code) into claim records with verdicts, in order of first appearance."""
    by_id: dict[str, list[dict]] = defaultdict(list)
    for inst in instances:
        by_id[inst["claim"]["id"]].append(inst)
    records = []
    for insts in by_id.values():
        spec = ClaimSpec.from_dict(insts[0]["claim"])
        verdict = decide(
            spec.level,
            [Instance(i["seed"], i["params"], i["outcome"]) for i in insts],
            spec.erratum,
            complete,
        )
        note = verdict.note
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
                "verdict": verdict.verdict,
                "gates": verdict.gates,
                "seeds_passed": verdict.seeds_passed,
                "seeds_total": verdict.seeds_total,
                "note": note,
                # printed numbers that reproduce / printed numbers judged
                "printed_reproduced": [sum(checks), len(checks)] if checks else None,
                "instances": [
                    {
                        k: v
                        for k, v in i.items()
                        if k not in ("claim", "sentence", "test", "file", "line", "source_code")
                    }
                    for i in insts
                ],
            }
        )
    return records
