"""The baseline record of a run (what the claims judge) and the regression rules.

A baseline (schema ``claimbook.baseline/3``, see :mod:`claimbook.storage.baseline`)
holds, per claim, exactly what the rules below read, so that its diff in a pull
request shows what moved and nothing else: the verdict, seeds passed, per-instance
outcomes, which printed values reproduced in which seed, the names of the values it
measured, and the per-seed values of measures that declare a drift tolerance, at the
precision that tolerance resolves (a tenth of it). Other values, and timings, are
not stored: no rule reads them, and float noise across machines would fill the diff.

A run is compared with it on the seeds both have. Each regression names its rule:

| rule              | fires when                                                         |
| ----------------- | ------------------------------------------------------------------ |
| verdict-worse     | a non-speculative claim's verdict ranks worse than the baseline's  |
| printed-lost      | a printed value that reproduced in the baseline no longer does, on |
|                   | the baseline's machine class (elsewhere it is reported, not gated) |
| claim-missing     | a baseline claim is not in a complete run (removed, or renamed)    |
| new-claim-refuted | a claim absent from the baseline has a gating verdict              |
| value-drift       | a mean moved past the drift tolerance its claim declares           |
| value-nonfinite   | a value the baseline measured is now NaN or infinite               |

Verdict ranks: holds 0; skipped and erratum 1 (a claim that held and is now skipped
is untested: a regression); refuted, error and fixed 2. Improvements (a better
verdict, a new claim that holds) are reported and never fail. A claim that is ``cited``
(a literature result, not run) before or after is never a regression: a move between
cited and any other verdict is reported as a change. A stand-in's ``observed`` and ``not
observed`` (see :mod:`claimbook.judge.verdicts`) rank 1 both: evidence about the stand-in,
never a regression of the text's claim, each move between them a change.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

from claimbook.declare.numbers import is_number
from claimbook.judge.rules import (
    drift_keys,
    drifted,
    nonfinite,
    outcomes_text,
    printed_lost,
    seed_key,
    tolerance,
)
from claimbook.judge.verdicts import Instance, decide, stand_in
from claimbook.storage.results import label, measures

RULES = {
    "verdict-worse": "verdict worse than in the baseline",
    "printed-lost": "a printed value that reproduced in the baseline no longer does",
    "claim-missing": "a baseline claim is missing from this complete run (removed or renamed)",
    "new-claim-refuted": "a claim new since the baseline is refuted or errored",
    "value-drift": "a measured mean moved past the claim's declared drift tolerance",
    "value-nonfinite": "a value measured in the baseline is now NaN or infinite",
}
TIMING_UNITS = ("s", "time ratio")  # measured durations move on every run: not in the baseline
RANK = {
    "holds": 0, "supported": 0, "equivalent": 0, "inconclusive": 1, "skipped": 1, "erratum": 1,
    "refuted": 2, "not equivalent": 2, "error": 2, "fixed": 2, "cited": 1, "observed": 1,
    "not observed": 1,
}  # fmt: skip


def at_precision(value: float, spec) -> float:
    """``value`` rounded (half up) to a tenth of its drift tolerance: what the rule resolves."""
    step = tolerance(spec, value) / 10
    if not math.isfinite(value) or step <= 0:
        return value
    quantum = Decimal(1).scaleb(math.floor(math.log10(step)))
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def baseline_of(results: dict) -> dict:
    """The baseline of an accepted run (claimbook.storage.baseline adds its schema)."""
    run = results["run"]
    return {
        "commit": run.get("git_commit"),
        "machine": run.get("machine"),
        "seeds": run["seeds"],
        "claims": summarize(results),
    }


def summarize(results: dict) -> dict:
    """The baseline record of each claim of a results file: id -> record (module docstring)."""
    claims = {}
    for c in results["claims"]:
        drift = drift_keys(c)
        printed: dict[str, dict] = defaultdict(dict)
        values: dict[str, dict] = defaultdict(dict)
        measured = set()
        for m in measures(c):
            if m.get("unit") in TIMING_UNITS:
                continue
            key, seed = label(m), seed_key(m["seed"])
            measured.add(key)
            if m.get("reproduced") is not None:
                printed[key][seed] = m["reproduced"]
            if key in drift and is_number(m["value"]):
                values[key][seed] = at_precision(float(m["value"]), drift[key])
        claims[c["id"]] = {
            "level": c["level"],
            "source": c["source"]["id"],
            "erratum": bool(c["erratum"]),
            "verdict": c["verdict"],
            "seeds_passed": c["seeds_passed"],
            "seeds_total": c["seeds_total"],
            "printed_reproduced": c["printed_reproduced"],
            "rule": bool(c.get("rule")),
            "counterexamples": (c.get("statistics") or {}).get("counterexamples") or [],
            "instances": [
                {"seed": i["seed"], "params": i["params"], "outcome": i["outcome"]}
                for i in c["instances"]
            ],
            "measured": sorted(measured),
            "printed": {k: dict(sorted(v.items())) for k, v in sorted(printed.items())},
            "values": {k: dict(sorted(v.items())) for k, v in sorted(values.items())},
        }
        if c.get("fresh"):  # an after-data rule's first read, kept with the claim
            claims[c["id"]]["fresh"] = c["fresh"]
    return dict(sorted(claims.items()))


def _instance_key(instance: dict) -> str:
    return json.dumps([instance["seed"], instance["params"]], sort_keys=True)


def _verdict_on(
    level: str, erratum: bool, instances: list[dict], seeds: set, complete: bool, stand: str = ""
):
    """The claim's verdict using only ``seeds`` (instances without a seed always count); a
    stand-in's (``stand``: why) as its declaration reads it, on both sides alike."""
    kept = [
        Instance(i["seed"], i["params"], i["outcome"])
        for i in instances
        if i["seed"] is None or i["seed"] in seeds
    ]
    return stand_in(decide(level, kept, "erratum" if erratum else "", complete), stand).verdict


def compare(baseline: dict, results: dict, complete: bool) -> dict:
    """Compare a run with the baseline (``complete``: the run's outcome says it is complete).

    Returns a dict with ``seeds`` (those compared), ``notes`` (e.g. that the seed
    lists or machines differ), ``regressions``, ``improvements`` and ``changes``
    (neither: e.g. erratum -> skipped, or a speculative claim refuted); each finding
    is a dict with claim, rule (regressions only), before, after, values.
    """
    run = results["run"]
    common = set(run["seeds"]) & set(baseline["seeds"])
    notes = []
    if set(run["seeds"]) != set(baseline["seeds"]):
        notes.append(
            f"this run has seeds {run['seeds']}, the baseline {baseline['seeds']}: compared on "
            f"seeds {sorted(common)} only"
        )
    other_machine = bool(
        baseline.get("machine") and run.get("machine") and baseline["machine"] != run["machine"]
    )
    if other_machine:
        notes.append(
            f"the baseline was recorded on {baseline['machine']}, this run on {run['machine']}: "
            "which printed digits reproduce depends on the machine class, so printed-lost is "
            "reported, not gated; re-record the baseline on this class to gate digits here"
        )
    regressions, improvements, changes, warnings = [], [], [], []
    current = {c["id"]: c for c in results["claims"]}
    for claim_id, base in baseline["claims"].items():
        c = current.get(claim_id)
        if c is None:
            if complete:
                regressions.append(
                    {
                        "claim": claim_id,
                        "rule": "claim-missing",
                        "before": base["verdict"],
                        "after": "(missing)",
                        "values": "no test declares this id any more",
                    }
                )
            continue
        if "cited" in (c["verdict"], base["verdict"]):  # not run: judged by its verdict alone
            if c["verdict"] != base["verdict"]:
                changes.append({"claim": claim_id, "before": base["verdict"],
                                "after": c["verdict"], "values": "cited: not run"})  # fmt: skip
            continue
        now = summarize({"run": run, "claims": [c]})[claim_id]
        base_instances, seeds = base["instances"], common
        if not complete:  # a subset: compare only the instances and seeds it ran
            ran = {_instance_key(i) for i in c["instances"]}
            base_instances = [i for i in base_instances if _instance_key(i) in ran]
            seeds = common & {i["seed"] for i in c["instances"]}  # e.g. one node id's seed
        if c.get("rule") or base.get("rule"):
            found = _compare_statistical(claim_id, base, c, complete)
            regressions += found["regressions"]
            improvements += found["improvements"]
            changes += found["changes"]
            warnings += found["warnings"]
        else:
            stand = c.get("stand_in") or ""
            before = _verdict_on(
                base["level"], base["erratum"], base_instances, seeds, complete, stand
            )
            after = _verdict_on(
                c["level"], bool(c["erratum"]), c["instances"], seeds, complete, stand
            )
            finding = {
                "claim": claim_id,
                "before": before,
                "after": after,
                "values": outcomes_text(base_instances, c["instances"], seeds),
            }
            if RANK[after] > RANK[before] and c["level"] != "speculative":
                regressions.append({**finding, "rule": "verdict-worse"})
            elif RANK[after] < RANK[before]:
                improvements.append(finding)
            elif after != before:
                changes.append(finding)
        if c["verdict"] != "skipped":  # a skipped claim is judged by its verdict alone
            lost = printed_lost(claim_id, base, now, c, seeds, complete)
            if other_machine:  # digits are keyed by machine class: not comparable here
                changes += [{**f, "before": f"{f['before']} on another machine"} for f in lost]
            else:
                regressions += lost
        regressions += nonfinite(claim_id, base, c, seeds)
        regressions += drifted(claim_id, base, c, seeds)
    for claim_id, c in current.items():
        if claim_id in baseline["claims"]:
            continue
        finding = {"claim": claim_id, "before": "(new)", "after": c["verdict"], "values": ""}
        if c["gates"]:
            regressions.append({**finding, "rule": "new-claim-refuted"})
        elif c["verdict"] == "cited":
            changes.append(finding)
        else:
            improvements.append(finding)
    return {
        "seeds": sorted(common),
        "notes": notes,
        "regressions": regressions,
        "improvements": improvements,
        "changes": changes,
        "warnings": warnings,
    }


def _compare_statistical(claim_id: str, base: dict, c: dict, complete: bool) -> dict:
    """A claim decided by its rule against the baseline. Only complete runs compare (a
    subset's looks are not the design's). It fails on supported -> refuted, equivalent ->
    not equivalent (any verdict turning negative) and on a new counterexample to a universal
    claim; it warns, without failing, on supported -> inconclusive (a code change that
    re-draws the random numbers can cost a marginal claim its support, with probability one
    minus its power) and on inconclusive -> supported (a re-draw can cross a bound too)."""
    found = {"regressions": [], "improvements": [], "changes": [], "warnings": []}
    if not complete:
        return found
    before, after = base["verdict"], c["verdict"]
    stats = c.get("statistics") or {}
    finding = {"claim": claim_id, "before": before, "after": after, "values": ""}
    new = sorted(set(stats.get("counterexamples") or []) - set(base.get("counterexamples") or []))
    gated = c["level"] != "speculative" and not c.get("stand_in")  # a stand-in never gates
    if new and gated and not c["erratum"]:
        seeds = ", ".join(map(str, new))
        found["regressions"].append(
            {**finding, "rule": "new-counterexample", "values": f"seed {seeds} now fails"}
        )
    if RANK[after] == 2 and RANK[before] < 2 and gated:
        found["regressions"].append({**finding, "rule": "verdict-worse"})
    elif before in ("supported", "equivalent", "holds") and after == "inconclusive":
        found["changes"].append({**finding, "rule": "support-lost"})
        if gated:
            found["warnings"].append(
                f"{claim_id}: {before} -> inconclusive against the baseline ({_lost(stats)}; "
                "not a failure)"
            )
    elif before == "inconclusive" and after in ("supported", "equivalent"):
        found["improvements"].append({**finding, "rule": "support-gained"})
        found["warnings"].append(
            f"{claim_id}: inconclusive -> {after} against the baseline: its evidence crossed "
            f"the bound in this run ({_gained(stats)}; check its values); not a failure"
        )
    elif RANK[after] < RANK[before]:
        found["improvements"].append(finding)
    elif after != before:
        found["changes"].append(finding)
    return found


def _lost(stats: dict) -> str:
    """Why a claim lost its support: for a timing, the machine (its noise, or a ratio now
    near its bound); otherwise a re-drawn random stream."""
    if stats.get("kind") != "timing ratio":
        return "a re-drawn random stream can cost a marginal claim its support"
    if stats.get("noisy"):
        return stats["noisy"]
    return (
        "a timing: its ratio on this machine, at this moment, came too close to its bound to "
        "decide; timings move with the machine and its load, not with seeds"
    )


def _gained(stats: dict) -> str:
    if stats.get("kind") == "timing ratio":
        return "a timing: ratios move with the machine and its load from run to run"
    return "a re-drawn random stream does so at most at the design's error rate"
