"""The baseline record of a run (what the claims judge) and the regression rules.

A baseline (schema ``claimbook.baseline/2``, see :mod:`claimbook.storage.baseline`)
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
| printed-lost      | a printed value that reproduced in the baseline no longer does     |
| claim-missing     | a baseline claim is not in a complete run (removed, or renamed)    |
| new-claim-refuted | a claim absent from the baseline has a gating verdict              |
| value-drift       | a mean moved past the drift tolerance its claim declares           |
| value-nonfinite   | a value the baseline measured is now NaN or infinite               |

Verdict ranks: holds 0; skipped and erratum 1 (a claim that held and is now skipped
is untested: a regression); refuted, error and fixed 2. Improvements (a better
verdict, a new claim that holds) are reported and never fail.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

from claimbook.declare.numbers import fmt, is_number, nonfinite_in
from claimbook.judge.claims import label, measures
from claimbook.judge.verdicts import Instance, decide

RULES = {
    "verdict-worse": "verdict worse than in the baseline",
    "printed-lost": "a printed value that reproduced in the baseline no longer does",
    "claim-missing": "a baseline claim is missing from this complete run (removed or renamed)",
    "new-claim-refuted": "a claim new since the baseline is refuted or errored",
    "value-drift": "a measured mean moved past the claim's declared drift tolerance",
    "value-nonfinite": "a value measured in the baseline is now NaN or infinite",
}
TIMING_UNITS = ("s", "time ratio")  # measured durations move on every run: not in the baseline
RANK = {"holds": 0, "skipped": 1, "erratum": 1, "refuted": 2, "error": 2, "fixed": 2}
ALL_SEEDS = "all"  # the seed key of a value measured about all seeds at once


def _seed_key(seed) -> str:
    return ALL_SEEDS if seed is None else str(seed)


def _drift_keys(claim: dict) -> dict[str, object]:
    """Measure labels of ``claim`` that a drift tolerance covers -> that tolerance."""
    drift = claim.get("drift") or {}
    found = {}
    for m in measures(claim):
        key = label(m)
        for name, spec in drift.items():
            if key == name or key.startswith(name + " ("):
                found[key] = spec
    return found


def _tolerance(spec, base_mean: float) -> float:
    """An absolute tolerance from a drift declaration: a number, or "5%" of the baseline mean."""
    if isinstance(spec, str) and spec.endswith("%"):
        return float(spec[:-1]) / 100 * abs(base_mean)
    return float(spec)


def at_precision(value: float, spec) -> float:
    """``value`` rounded (half up) to a tenth of its drift tolerance: what the rule resolves."""
    step = _tolerance(spec, value) / 10
    if not math.isfinite(value) or step <= 0:
        return value
    quantum = Decimal(1).scaleb(math.floor(math.log10(step)))
    return float(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))


def summarize(results: dict) -> dict:
    """The baseline record of each claim of a results file: id -> record (module docstring)."""
    claims = {}
    for c in results["claims"]:
        drift = _drift_keys(c)
        printed: dict[str, dict] = defaultdict(dict)
        values: dict[str, dict] = defaultdict(dict)
        measured = set()
        for m in measures(c):
            if m.get("unit") in TIMING_UNITS:
                continue
            key, seed = label(m), _seed_key(m["seed"])
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
            "instances": [
                {"seed": i["seed"], "params": i["params"], "outcome": i["outcome"]}
                for i in c["instances"]
            ],
            "measured": sorted(measured),
            "printed": {k: dict(sorted(v.items())) for k, v in sorted(printed.items())},
            "values": {k: dict(sorted(v.items())) for k, v in sorted(values.items())},
        }
    return dict(sorted(claims.items()))


def _instance_key(instance: dict) -> str:
    return json.dumps([instance["seed"], instance["params"]], sort_keys=True)


def _verdict_on(level: str, erratum: bool, instances: list[dict], seeds: set, complete: bool):
    """The claim's verdict using only ``seeds`` (instances without a seed always count)."""
    kept = [
        Instance(i["seed"], i["params"], i["outcome"])
        for i in instances
        if i["seed"] is None or i["seed"] in seeds
    ]
    return decide(level, kept, "erratum" if erratum else "", complete).verdict


def _per_seed(by_seed: dict, seeds: set) -> dict:
    return {s: v for s, v in by_seed.items() if s == ALL_SEEDS or int(s) in seeds}


def _values_text(before: dict, after: dict) -> str:
    """Per seed "before -> after", e.g. "seed 1: 0.98 -> 0.53"."""
    parts = []
    for seed in sorted(set(before) | set(after)):
        name = "all seeds" if seed == ALL_SEEDS else f"seed {seed}"
        parts.append(f"{name}: {fmt(before.get(seed, '-'))} -> {fmt(after.get(seed, '-'))}")
    return "; ".join(parts)


def _current_values(claim: dict, key: str, seeds: set) -> dict:
    found = {}
    for m in measures(claim):
        if label(m) == key:
            found[_seed_key(m["seed"])] = m["value"]
    return _per_seed(found, seeds)


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
    if baseline.get("machine") and run.get("machine") and baseline["machine"] != run["machine"]:
        notes.append(
            f"the baseline was recorded on {baseline['machine']}, this run on {run['machine']}: "
            "float digits may differ"
        )
    regressions, improvements, changes = [], [], []
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
        now = summarize({"run": run, "claims": [c]})[claim_id]
        base_instances = base["instances"]
        if not complete:  # a subset: compare only the instances it ran
            ran = {_instance_key(i) for i in c["instances"]}
            base_instances = [i for i in base_instances if _instance_key(i) in ran]
        before = _verdict_on(base["level"], base["erratum"], base_instances, common, complete)
        after = _verdict_on(c["level"], bool(c["erratum"]), c["instances"], common, complete)
        finding = {
            "claim": claim_id,
            "before": before,
            "after": after,
            "values": _outcomes_text(base_instances, c["instances"], common),
        }
        if RANK[after] > RANK[before] and c["level"] != "speculative":
            regressions.append({**finding, "rule": "verdict-worse"})
        elif RANK[after] < RANK[before]:
            improvements.append(finding)
        elif after != before:
            changes.append(finding)
        if c["verdict"] != "skipped":  # a skipped claim is judged by its verdict alone
            regressions += _printed_lost(claim_id, base, now, c, common, complete)
        regressions += _nonfinite(claim_id, base, c, common)
        regressions += _drifted(claim_id, base, c, common)
    for claim_id, c in current.items():
        if claim_id in baseline["claims"]:
            continue
        finding = {"claim": claim_id, "before": "(new)", "after": c["verdict"], "values": ""}
        if c["gates"]:
            regressions.append({**finding, "rule": "new-claim-refuted"})
        else:
            improvements.append(finding)
    return {
        "seeds": sorted(common),
        "notes": notes,
        "regressions": regressions,
        "improvements": improvements,
        "changes": changes,
    }


def _printed_lost(claim_id, base, now, claim, common, complete) -> list[dict]:
    found = []
    for key, by_seed in base["printed"].items():
        if not complete and key not in now["measured"]:
            continue  # a parameter this subset did not run
        flags = now["printed"].get(key, {})
        lost = [s for s, ok in _per_seed(by_seed, common).items() if ok and not flags.get(s)]
        if lost:
            after = _current_values(claim, key, {int(s) for s in lost if s != ALL_SEEDS})
            found.append(
                {
                    "claim": claim_id,
                    "rule": "printed-lost",
                    "before": f"{key}: reproduced",
                    "after": "not reproduced" if key in now["printed"] else "not measured",
                    "values": "; ".join(
                        f"{'all seeds' if s == ALL_SEEDS else 'seed ' + s}: now {fmt(v)}"
                        for s, v in sorted(after.items())
                    ),
                }
            )
    return found


def _nonfinite(claim_id, base, claim, common) -> list[dict]:
    measured = set(base.get("measured", ()))
    bad = defaultdict(list)
    for m in measures(claim):
        key = label(m)
        if key in measured and nonfinite_in(m["value"]):
            seed = _seed_key(m["seed"])
            if seed == ALL_SEEDS or int(seed) in common:
                bad[key].append(
                    f"{'all seeds' if seed == ALL_SEEDS else 'seed ' + seed}: "
                    f"{', '.join(nonfinite_in(m['value']))}"
                )
    return [
        {
            "claim": claim_id,
            "rule": "value-nonfinite",
            "before": f"{key}: finite",
            "after": "non-finite",
            "values": "; ".join(where),
        }
        for key, where in bad.items()
    ]


def _drifted(claim_id, base, claim, common) -> list[dict]:
    found = []
    for key, spec in _drift_keys(claim).items():
        was = _per_seed(base["values"].get(key, {}), common)
        is_ = _current_values(claim, key, common)
        shared = [s for s in was if s in is_ and is_number(was[s]) and is_number(is_[s])]
        if not shared:
            continue
        old = statistics.mean(was[s] for s in shared)
        new = statistics.mean(is_[s] for s in shared)
        if abs(new - old) > _tolerance(spec, old):
            found.append(
                {
                    "claim": claim_id,
                    "rule": "value-drift",
                    "before": f"{key}: mean {fmt(old)}",
                    "after": f"mean {fmt(new)} (tolerance {spec})",
                    "values": _values_text(was, is_),
                }
            )
    return found


def _outcomes_text(before: list[dict], after: list[dict], seeds: set) -> str:
    """Per seed, the instance outcomes that differ: "seed 1: passed -> failed"."""

    def by_seed(instances):
        out = defaultdict(list)
        for i in instances:
            if i["seed"] is None or i["seed"] in seeds:
                out[_seed_key(i["seed"])].append(i["outcome"])
        return {s: ",".join(sorted(v)) for s, v in out.items()}

    was, now = by_seed(before), by_seed(after)
    moved = {s for s in set(was) | set(now) if was.get(s) != now.get(s)}
    return _values_text({s: was.get(s, "-") for s in moved}, {s: now.get(s, "-") for s in moved})
