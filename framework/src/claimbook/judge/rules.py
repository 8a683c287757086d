"""The regression rules that read values, and the per-seed helpers they share.

Each rule takes one claim's baseline record and its current record and returns its
findings (claim, rule, before, after, values); :func:`claimbook.judge.baseline.compare`
decides which of them gate.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from claimbook.declare.numbers import fmt, is_number, nonfinite_in
from claimbook.storage.results import label, measures

ALL_SEEDS = "all"  # the seed key of a value measured about all seeds at once


def seed_key(seed) -> str:
    return ALL_SEEDS if seed is None else str(seed)


def drift_keys(claim: dict) -> dict[str, object]:
    """Measure labels of ``claim`` that a drift tolerance covers -> that tolerance."""
    drift = claim.get("drift") or {}
    found = {}
    for m in measures(claim):
        key = label(m)
        for name, spec in drift.items():
            if key == name or key.startswith(name + " ("):
                found[key] = spec
    return found


def tolerance(spec, base_mean: float) -> float:
    """An absolute tolerance from a drift declaration: a number, or "5%" of the baseline mean."""
    if isinstance(spec, str) and spec.endswith("%"):
        return float(spec[:-1]) / 100 * abs(base_mean)
    return float(spec)


def per_seed(by_seed: dict, seeds: set) -> dict:
    return {s: v for s, v in by_seed.items() if s == ALL_SEEDS or int(s) in seeds}


def values_text(before: dict, after: dict) -> str:
    """Per seed "before -> after", e.g. "seed 1: 0.98 -> 0.53"."""
    parts = []
    for seed in sorted(set(before) | set(after)):
        name = "all seeds" if seed == ALL_SEEDS else f"seed {seed}"
        parts.append(f"{name}: {fmt(before.get(seed, '-'))} -> {fmt(after.get(seed, '-'))}")
    return "; ".join(parts)


def current_values(claim: dict, key: str, seeds: set) -> dict:
    found = {}
    for m in measures(claim):
        if label(m) == key:
            found[seed_key(m["seed"])] = m["value"]
    return per_seed(found, seeds)


def printed_lost(claim_id, base, now, claim, common, complete) -> list[dict]:
    found = []
    for key, by_seed in base["printed"].items():
        if not complete and key not in now["measured"]:
            continue  # a parameter this subset did not run
        flags = now["printed"].get(key, {})
        lost = [s for s, ok in per_seed(by_seed, common).items() if ok and not flags.get(s)]
        if lost:
            after = current_values(claim, key, {int(s) for s in lost if s != ALL_SEEDS})
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


def nonfinite(claim_id, base, claim, common) -> list[dict]:
    measured = set(base.get("measured", ()))
    bad = defaultdict(list)
    for m in measures(claim):
        key = label(m)
        if key in measured and nonfinite_in(m["value"]):
            seed = seed_key(m["seed"])
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


def drifted(claim_id, base, claim, common) -> list[dict]:
    found = []
    for key, spec in drift_keys(claim).items():
        was = per_seed(base["values"].get(key, {}), common)
        is_ = current_values(claim, key, common)
        shared = [s for s in was if s in is_ and is_number(was[s]) and is_number(is_[s])]
        if not shared:
            continue
        old = statistics.mean(was[s] for s in shared)
        new = statistics.mean(is_[s] for s in shared)
        if abs(new - old) > tolerance(spec, old):
            found.append(
                {
                    "claim": claim_id,
                    "rule": "value-drift",
                    "before": f"{key}: mean {fmt(old)}",
                    "after": f"mean {fmt(new)} (tolerance {spec})",
                    "values": values_text(was, is_),
                }
            )
    return found


def outcomes_text(before: list[dict], after: list[dict], seeds: set) -> str:
    """Per seed, the instance outcomes that differ: "seed 1: passed -> failed"."""

    def by_seed(instances):
        out = defaultdict(list)
        for i in instances:
            if i["seed"] is None or i["seed"] in seeds:
                out[seed_key(i["seed"])].append(i["outcome"])
        return {s: ",".join(sorted(v)) for s, v in out.items()}

    was, now = by_seed(before), by_seed(after)
    moved = {s for s in set(was) | set(now) if was.get(s) != now.get(s)}
    return values_text({s: was.get(s, "-") for s in moved}, {s: now.get(s, "-") for s in moved})
