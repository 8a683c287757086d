"""The committed baseline (the accepted state of every claim) and the regression rules.

``reports/baseline.json`` (schema ``claimbook.baseline/1``) holds, per claim, its
verdict, seeds passed, per-instance outcomes, which printed values reproduced,
and each measured value per seed with its mean and sd (timings left out). Only
``nox -s claims -- --update-baseline`` writes it, so its diff in a pull request
shows a reviewer exactly what moved.

A run is compared with it on the seeds both have. Each regression names its rule:

| rule              | fires when                                                        |
| ----------------- | ----------------------------------------------------------------- |
| verdict-worse     | a non-speculative claim's verdict ranks worse than the baseline's  |
| printed-lost      | a printed value that reproduced in the baseline no longer does    |
| claim-missing     | a baseline claim is not in a full run (removed, or its id changed) |
| new-claim-refuted | a claim absent from the baseline has a gating verdict             |
| value-drift       | a mean moved past the drift tolerance its claim declares           |

Verdict ranks: holds and skipped 0, erratum 1, refuted, error and fixed 2.
Improvements (a better verdict, a new claim that holds, a printed value
reproduced again) are reported and never fail.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

from claimbook.atomic import write_json
from claimbook.table import fmt, label, measures
from claimbook.verdicts import Instance, decide

SCHEMA = "claimbook.baseline/1"
RULES = {
    "verdict-worse": "verdict worse than in the baseline",
    "printed-lost": "a printed value that reproduced in the baseline no longer does",
    "claim-missing": "a baseline claim is missing from this full run (removed or renamed)",
    "new-claim-refuted": "a claim new since the baseline is refuted or errored",
    "value-drift": "a measured mean moved past the claim's declared drift tolerance",
}
TIMING_UNITS = ("s", "time ratio")  # measured durations move on every run: not in the baseline
RANK = {"holds": 0, "skipped": 0, "erratum": 1, "refuted": 2, "error": 2, "fixed": 2}
ALL_SEEDS = "all"  # the seed key of a value measured about all seeds at once


class BaselineError(ValueError):
    """The baseline file is unreadable or of another schema."""


def _rounded(value):
    """6 significant digits: enough to see a change, few enough for a readable diff."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.6g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _seed_key(seed) -> str:
    return ALL_SEEDS if seed is None else str(seed)


def summarize(results: dict) -> dict:
    """The baseline record of a results file (see the module docstring).

    Timings (units "s" and "time ratio") are left out: they move on every run
    and would bury real changes in the diff.
    """
    claims = {}
    for c in results["claims"]:
        values: dict[str, dict] = defaultdict(dict)
        printed: dict[str, dict] = defaultdict(dict)
        for m in measures(c):
            if m.get("unit") in TIMING_UNITS:
                continue
            key, seed = label(m), _seed_key(m["seed"])
            values[key][seed] = _rounded(m["value"])
            if m.get("reproduced") is not None:
                printed[key][seed] = m["reproduced"]
        summary = {}
        for key, by_seed in values.items():
            entry: dict = {"per_seed": by_seed}
            nums = [v for v in by_seed.values() if _number(v)]
            if len(nums) > 1:
                entry["mean"] = _rounded(statistics.mean(nums))
                entry["sd"] = _rounded(statistics.stdev(nums))
            summary[key] = entry
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
            "printed": dict(printed),
            "values": summary,
        }
    return {
        "schema": SCHEMA,
        "commit": results["run"].get("git_commit"),
        "seeds": results["run"]["seeds"],
        "claims": dict(sorted(claims.items())),
    }


def write_baseline(path: Path, results: dict) -> None:
    """Write the baseline of ``results`` to ``path`` atomically."""
    write_json(Path(path), summarize(results))


def load_baseline(path: Path) -> dict | None:
    """The baseline at ``path``, or None if there is none.

    Raises:
        BaselineError: if the file exists but cannot be read or is of another schema.
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise BaselineError(
            f"{path} is not a {SCHEMA} file; rewrite it with `nox -s claims -- --update-baseline`"
        )
    return data


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


def _tolerance(spec, base_mean: float) -> float:
    """An absolute tolerance from a drift declaration: a number, or "5%" of the baseline mean."""
    if isinstance(spec, str) and spec.endswith("%"):
        return float(spec[:-1]) / 100 * abs(base_mean)
    return float(spec)


def compare(baseline: dict, results: dict) -> dict:
    """Compare a run with the baseline.

    Returns a dict with ``seeds`` (those compared), ``notes`` (e.g. that the
    seed lists differ), ``regressions``, ``improvements`` and ``changes``
    (neither: e.g. holds -> skipped, or a speculative claim refuted); each
    finding is a dict with claim, rule (regressions only), before, after, values.
    """
    run = results["run"]
    common = set(run["seeds"]) & set(baseline["seeds"])
    notes = []
    if set(run["seeds"]) != set(baseline["seeds"]):
        notes.append(
            f"this run has seeds {run['seeds']}, the baseline {baseline['seeds']}: compared on "
            f"seeds {sorted(common)} only"
        )
    partial = bool(run.get("partial"))
    complete = not partial
    regressions, improvements, changes = [], [], []
    current = {c["id"]: c for c in results["claims"]}
    for claim_id, base in baseline["claims"].items():
        c = current.get(claim_id)
        if c is None:
            if not partial:
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
        c_values = summarize({"run": run, "claims": [c]})["claims"][claim_id]
        base_instances = base["instances"]
        if partial:  # a -k subset or a replayed instance: compare only the instances it ran
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
        for key, by_seed in base["printed"].items():
            if partial and key not in c_values["values"]:
                continue  # a parameter this subset did not run
            now = c_values["printed"].get(key, {})
            lost = [s for s, ok in _per_seed(by_seed, common).items() if ok and not now.get(s)]
            if lost:
                was = _per_seed(base["values"].get(key, {}).get("per_seed", {}), common)
                is_ = _per_seed(c_values["values"].get(key, {}).get("per_seed", {}), common)
                regressions.append(
                    {
                        "claim": claim_id,
                        "rule": "printed-lost",
                        "before": f"{key}: reproduced",
                        "after": "not reproduced" if key in c_values["printed"] else "not measured",
                        "values": _values_text(was, is_),
                    }
                )
        for name, spec in (c.get("drift") or {}).items():
            for key in [k for k in base["values"] if k == name or k.startswith(name + " (")]:
                was = _per_seed(base["values"][key]["per_seed"], common)
                is_ = _per_seed(c_values["values"].get(key, {}).get("per_seed", {}), common)
                shared = [s for s in was if s in is_ and _number(was[s]) and _number(is_[s])]
                if not shared:
                    continue
                old = statistics.mean(was[s] for s in shared)
                new = statistics.mean(is_[s] for s in shared)
                if abs(new - old) > _tolerance(spec, old):
                    regressions.append(
                        {
                            "claim": claim_id,
                            "rule": "value-drift",
                            "before": f"{key}: mean {fmt(old)}",
                            "after": f"mean {fmt(new)} (tolerance {spec})",
                            "values": _values_text(was, is_),
                        }
                    )
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


def diff_table(comparison: dict, width: int = 160) -> list[str]:
    """Terminal lines: one row per regression, improvement and change, or "no regression"."""
    lines = [f"note: {n}" for n in comparison["notes"]]
    rows = [
        (f["claim"], f["rule"], f["before"], f["after"], f["values"])
        for f in comparison["regressions"]
    ]
    rows += [
        (f["claim"], "improvement", f["before"], f["after"], f["values"])
        for f in comparison["improvements"]
    ]
    rows += [
        (f["claim"], "changed", f["before"], f["after"], f["values"]) for f in comparison["changes"]
    ]
    if rows:
        header = ("claim", "rule", "before", "after", "per-seed values")
        widths = [min(40, max(len(r[i]) for r in [header, *rows])) for i in range(4)]
        for row in [header, *rows]:
            head = "  ".join(cell[:40].ljust(w) for cell, w in zip(row, widths, strict=False))
            line = f"{head}  {row[4]}"
            lines.append(line if len(line) <= width else line[: width - 3] + "...")
    n = len(comparison["regressions"])
    lines.append(
        f"{n} regression{'s' if n != 1 else ''} against the baseline"
        if n
        else "no regression against the baseline"
    )
    return lines
