"""A stochastic claim's verdict from its declared rule, over the planned looks.

Seeds run in one fixed order (0, 1, 2, ...). The rule is looked at after each planned
number of seeds (3, 5, 8, 12, and 20 where declared) at a per-look level calibrated so
that the false-decision rate over all looks stays at the claim's alpha (0.01 established,
0.05 likely and speculative). Every planned look whose seeds all exist is taken, whoever
asked for them; the verdict is fixed at the first look that crosses a boundary, and a
later look that crosses the opposite boundary is flagged as a reversal.

Every seed read is evidence: a universal rule ("in every seed"), alone or inside a
composite, is refuted by any seed that fails it, wherever that seed lies, and it never
reads "supported" beside one. Undecided at its last look, a claim is inconclusive: the
record says why, and how many seeds would decide it at 80% power. No rule stops early for
futility: each asks for its next look until its cap or the budget. (A universal rule used
to stop when its support was out of reach within 1.5 x its cap and no failing seed seemed
plausible. Simulated, that stop cut the support of a likely rule at a mean 3 sd above its
threshold from 79% to 63%, and the refutations an established rule with 5% of its seeds
failing catches by its cap from 46% to 34%.) A rule whose measure is the same in every seed
read stops ("no spread", recorded as futile): it is no claim over seeds.
"""

from __future__ import annotations

from claimbook.declare.design import (
    AllOf,
    Beats,
    Diff,
    Matches,
    MostSeeds,
    Ranking,
    Rule,
    Typical,
    Universal,
    rule_to_dict,
)
from claimbook.judge import stats
from claimbook.lazy import lazy

np = lazy("numpy")
pd = lazy("pandas")

ALPHA = {"established": 0.01, "likely": 0.05, "speculative": 0.05}
COVERAGE = {"established": 0.99, "likely": 0.90, "speculative": 0.90}
OPPOSITE = {
    "supported": "refuted",
    "refuted": "supported",
    "equivalent": "not equivalent",
    "not equivalent": "equivalent",
}


def _column(frame: pd.DataFrame, x: str | Diff) -> np.ndarray:
    if isinstance(x, Diff):
        return (frame[x.a] - frame[x.b]).to_numpy(float)
    return frame[x].to_numpy(float)


def family(rule: Rule, level: str) -> tuple[str, float]:
    """The calibration family of a rule and its parameter (see stats.per_look_level)."""
    if isinstance(rule, Universal):
        return "tolerance", COVERAGE[level]
    if isinstance(rule, MostSeeds):
        return "success", rule.share
    if isinstance(rule, Beats) and rule.bimodal:
        return "success", 0.5
    return "t", 0.0


def _natural(look: stats.Look, threshold: float, sign: int) -> stats.Look:
    """Report a look on ``y = sign * (x - threshold)`` in the units of x."""
    low, high = sorted((threshold + sign * look.low, threshold + sign * look.high))
    look.estimate, look.low, look.high = threshold + sign * look.estimate, low, high
    return look


def look_at(rule: Rule, level: str, frame: pd.DataFrame, a: float, plan: bool = True) -> stats.Look:
    """The rule's test on the rows of ``frame`` (the first n seeds) at level ``a``."""
    if isinstance(rule, Typical):
        y = rule.sign * (_column(frame, rule.x) - rule.threshold)
        return _natural(stats.t_look(y, a, plan=plan), rule.threshold, rule.sign)
    if isinstance(rule, Universal):
        y = rule.sign * (_column(frame, rule.x) - rule.threshold)
        return _natural(
            stats.tolerance_look(y, a, COVERAGE[level], plan=plan), rule.threshold, rule.sign
        )
    if isinstance(rule, MostSeeds):
        success = rule.sign * (_column(frame, rule.x) - rule.threshold) > 0
        return stats.rate_look(success, a, rule.share, plan=plan)
    if isinstance(rule, Beats) and rule.bimodal:
        return stats.rate_look(_column(frame, rule.diff) > 0, a, 0.5, plan=plan)
    if isinstance(rule, Beats):
        y = _column(frame, rule.diff) - rule.margin
        return _natural(stats.t_look(y, a, plan=plan), rule.margin, 1)
    if isinstance(rule, Matches):
        if rule.b:
            d = (frame[rule.a] - frame[rule.b]).to_numpy(float)
            return stats.tost_look(d, a, rule.margin, plan=plan)
        d = (frame[rule.a] - rule.value).to_numpy(float)
        return stats.tost_look(d, a, rule.margin, offset=rule.value, plan=plan)
    raise TypeError(f"no single test for {type(rule).__name__}")


def _finite(x: float) -> float | None:
    """A bound too wide to state (one seed: no spread) is recorded as None, not infinity."""
    return float(x) if np.isfinite(x) else None


def look_dict(look: stats.Look) -> dict:
    return {
        "n": look.n, "decision": look.decision, "estimate": _finite(look.estimate),
        "low": _finite(look.low), "high": _finite(look.high), "p": float(look.p),
        "needed": look.needed,
    }  # fmt: skip


def contiguous(frame: pd.DataFrame) -> int:
    """How many rows from the first hold consecutive seeds: the planned looks read only
    those (a seed read beyond a gap still counts as a counterexample)."""
    seeds = list(frame.index)
    return next((i for i in range(1, len(seeds)) if seeds[i] != seeds[0] + i), len(seeds))


def counterexamples(rule: Rule, frame: pd.DataFrame) -> list[int]:
    """Every seed read that fails a universal rule, or a universal part of a composite."""
    parts = rule.parts if isinstance(rule, AllOf) else (rule,)
    found = set()
    for part in parts:
        if isinstance(part, Universal):
            y = part.sign * (_column(frame, part.x) - part.threshold)
            found |= {int(s) for s, v in zip(frame.index, y, strict=True) if not v > 0}
    return sorted(found)


def _sequence(rule: Rule, level: str, frame: pd.DataFrame, looks: tuple[int, ...]) -> dict:
    """Looks taken, first crossing, counterexamples, and what would decide an open claim."""
    fam, param = family(rule, level)
    a = stats.per_look_level(fam, ALPHA[level], looks, param)
    prefix = frame.iloc[: contiguous(frame)]
    ns = [n for n in looks if n <= len(prefix)]
    taken = [look_at(rule, level, prefix.iloc[:n], a, plan=n == ns[-1]) for n in ns]
    # the same value in every seed: no spread for a mean's bound to judge (a t or tolerance
    # bound would collapse onto the mean and "decide" at 3 seeds); the claim is not one over seeds
    flat = bool(fam != "success" and taken and taken[-1].n > 1 and taken[-1].low == taken[-1].high)
    first = None if flat else next((lk for lk in taken if lk.decision), None)
    shown = first or (taken[-1] if taken else None)
    failing = counterexamples(rule, frame)
    decision = first.decision if first else None
    decided_at = first.n if first else None
    out = {
        "per_look_level": a,
        "interval": 1 - 2 * a if fam != "tolerance" else 1 - a,
        "looks": [look_dict(lk) for lk in taken],
        "counterexamples": failing,
        "reversal": "",
        "futile": False,
        "next_look": None,
        "no_spread": flat,
    }
    last = taken[-1] if taken else None
    if first and last is not first and last.decision == OPPOSITE.get(first.decision):
        out["reversal"] = (
            f"decided {first.decision} at {first.n} seeds, but the look at {last.n} seeds "
            f"(seeds other claims asked for) reads {last.decision}"
        )
    if failing and decision != "refuted":  # a failing seed decides a universal rule outright
        if decision == "supported":
            out["reversal"] = (
                f"supported at {first.n} seeds, but seed {failing[0]}, read since, fails it"
            )
        decision, decided_at = "refuted", list(frame.index).index(failing[0]) + 1
    out.update(decision=decision, decided_at=decided_at,
               seeds_used=len(frame) if failing else shown.n if shown else 0,
               estimate=look_dict(shown) if shown else None)  # fmt: skip
    if decision is None:
        later = [n for n in looks if n > len(prefix)]
        out["futile"] = flat
        out["next_look"] = later[0] if later and not out["futile"] else None
    return out


def judge_rule(rule: Rule, level: str, frame: pd.DataFrame, looks: tuple[int, ...]) -> dict:
    """The statistics record of a claim: its design, looks, verdict and evidence.

    ``frame`` holds the rule's measures, one row per seed in seed order; ``looks`` are the
    planned looks, or one look at the explicit seeds' count when ``--claimbook-seeds`` was given.
    """
    record = {
        "kind": rule.kind, "rule": rule_to_dict(rule), "words": rule.words(),
        "alpha": ALPHA[level], "looks_planned": list(looks), "seeds_available": len(frame),
        "values": {"seed": [int(s) for s in frame.index],
                   **{c: [float(v) for v in frame[c]] for c in frame.columns}},
    }  # fmt: skip
    if isinstance(rule, Ranking | AllOf):
        components = rule.pairs() if isinstance(rule, Ranking) else list(rule.parts)
        parts = [_sequence(part, level, frame, looks) for part in components]
        decisions = [p["decision"] for p in parts]
        failing = counterexamples(rule, frame)
        if failing or any(d in ("refuted", "not equivalent") for d in decisions):
            decision = "refuted"
        elif all(d in ("supported", "equivalent") for d in decisions):
            decision = "supported"
        else:
            decision = None
        for component, part in zip(components, parts, strict=True):
            part["words"] = component.words()
            if isinstance(component, Beats):
                part["values"] = [float(v) for v in _column(frame, component.diff)]
        record.update(parts=parts, decision=decision, estimate=None, counterexamples=failing)
        record["decided_at"] = max((p["decided_at"] or 0) for p in parts) if decision else None
        record["seeds_used"] = max(p["seeds_used"] for p in parts)
        for part in parts:
            part.pop("counterexamples", None)  # the composite lists them once
        record["futile"] = decision is None and any(p["futile"] for p in parts)
        record["no_spread"] = decision is None and any(p["no_spread"] for p in parts)
        open_looks = [p["next_look"] for p in parts if p["decision"] is None and p["next_look"]]
        record["next_look"] = (
            None if decision or record["futile"] else min(open_looks, default=None)
        )
        record["reversal"] = "; ".join(p["reversal"] for p in parts if p["reversal"])
        record["p"] = max(p["estimate"]["p"] for p in parts if p["estimate"])
        record["per_look_level"] = parts[0]["per_look_level"]
        record["interval"] = parts[0]["interval"]
        needed = [p["estimate"]["needed"] for p in parts if p["decision"] is None]
        record["needed"] = None if None in needed or not needed else max(needed)
        return record
    part = _sequence(rule, level, frame, looks)
    record.update(part)
    record["p"] = part["estimate"]["p"] if part["estimate"] else 1.0
    record["needed"] = (
        part["estimate"]["needed"] if part["estimate"] and not part["decision"] else None
    )
    if isinstance(rule, Beats | Matches):
        diff = rule.diff if isinstance(rule, Beats) else None
        if diff is not None:
            record["values"]["difference"] = [float(v) for v in _column(frame, diff)]
        elif rule.b:
            record["values"]["difference"] = [float(v) for v in frame[rule.a] - frame[rule.b]]
    return record


def other_level(
    rule: Rule, level: str, frame: pd.DataFrame, looks: tuple[int, ...], here: str | None
) -> str:
    """Where the evidence earns another strength than the source's tag (``here``: its
    decision at its own level), say so."""
    if level == "speculative":
        return ""
    other = "likely" if level == "established" else "established"
    there = judge_rule(rule, other, frame, looks)["decision"]
    if level == "established" and here is None and there in ("supported", "equivalent"):
        parts = rule.parts if isinstance(rule, AllOf) else (rule,)
        if any(isinstance(p, Universal) for p in parts):
            return (
                f"{there} at 95% that 90% of seeds pass (likely strength), not at the 99% that "
                "99% of seeds pass an established claim needs"
            )
        return f"{there} at 95% (likely strength), not at the 99% an established claim needs"
    if level == "likely" and here in ("supported", "equivalent") and there == here:
        return f"{here} at 99% as well (established strength)"
    return ""


def by_design(rule: Rule, level: str) -> str:
    """Why the declared rule cannot reach its alpha at any seed count within its cap (empty
    when it can): flagged at collection, before anything runs."""
    parts = rule.parts if isinstance(rule, AllOf) else (rule,)
    for part in parts:
        fam, share = family(part, level)
        if fam != "success":
            continue  # t and tolerance bounds can decide at any n >= 3 given small spread
        a = stats.per_look_level(fam, ALPHA[level], part.looks, share)
        best, _ = stats.cp_bounds(part.cap, part.cap, a)
        if best <= share:
            return (
                f"inconclusive by design: even {part.cap} successes in {part.cap} seeds give a "
                f"rate bound of {best:.2f}, not above {share:g}, at alpha {ALPHA[level]}; "
                "raise the cap (look20=True), lower the share, or accept it"
            )
    return ""
