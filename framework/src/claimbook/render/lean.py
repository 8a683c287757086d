"""Which way an undecided claim's evidence leans, in one phrase, for the home page's list of
unsettled claims: the estimate of its last look against the boundary its rule names, and how
many of the seeds that look read fall on the claim's side ("leans towards the claim (2 of 3
seeds on its side; estimate 0.021, the claim needs above 0)").

Read from the claim's statistics record alone (its rule, looks and per-seed values): nothing
is judged again, and the verdict stays what the judge decided."""

from __future__ import annotations

from claimbook.declare.design import (
    AllOf,
    Beats,
    Diff,
    Matches,
    MostSeeds,
    Ranking,
    Rule,
    rule_from_dict,
)
from claimbook.declare.numbers import fmt


def _column(values: dict, x) -> list[float] | None:
    """A measure's (or a difference's) per-seed values from the record, None if not stored."""
    if isinstance(x, Diff):
        a, b = values.get(x.a), values.get(x.b)
        return None if a is None or b is None else [p - q for p, q in zip(a, b, strict=False)]
    return values.get(x)


def _side(rule: Rule, values: dict) -> tuple[list[bool], float, str] | None:
    """Per seed, whether it falls on the claim's side; the boundary the estimate is read
    against, and what the claim needs in words. None for a rule this cannot read."""
    if isinstance(rule, Beats):
        diff = _column(values, rule.diff)
        if diff is None:
            return None
        if rule.bimodal:
            return [d > 0 for d in diff], 0.5, "the claim needs more than half"
        needs = f"the claim needs above {rule.margin:g}"
        return [d > rule.margin for d in diff], rule.margin, needs
    if isinstance(rule, Matches):
        a = values.get(rule.a)
        other = values.get(rule.b) if rule.b else [rule.value] * len(a or [])
        if a is None or other is None:
            return None
        sides = [abs(p - q) < rule.margin for p, q in zip(a, other, strict=False)]
        return sides, rule.margin, f"the claim needs within ±{rule.margin:g}"
    x = getattr(rule, "x", None)
    column = _column(values, x) if x else None
    if column is None or getattr(rule, "threshold", None) is None:
        return None
    sides = [rule.sign * (v - rule.threshold) > 0 for v in column]
    if isinstance(rule, MostSeeds):
        return sides, rule.share, f"the claim needs more than {rule.share:.0%}"
    return sides, rule.threshold, f"the claim needs {rule.side()}"


def _toward(rule: Rule, estimate: float, boundary: float) -> float:
    """How far the estimate lies from the boundary, positive on the claim's side."""
    if isinstance(rule, Matches):
        centre = 0.0 if rule.b else float(rule.value)
        return boundary - abs(estimate - centre)
    if isinstance(rule, Beats | MostSeeds):
        return estimate - boundary
    return rule.sign * (estimate - boundary)


def part_lean(rule: Rule, look: dict | None, values: dict) -> str:
    """One rule's lean at ``look`` (its estimate and seed count n), e.g. "leans towards the
    claim (2 of 3 seeds on its side; estimate 0.61, the claim needs above 0.5)"; "" if
    unreadable. It leans one way only where the estimate and most seeds agree on it."""
    found = _side(rule, values)
    if not look or look.get("estimate") is None or found is None:
        return ""
    sides, boundary, needs = found
    n = look["n"]
    on_side = sum(sides[:n])
    toward = _toward(rule, look["estimate"], boundary)
    lean = "leans neither way"
    if toward > 0 and 2 * on_side > n:
        lean = "leans towards the claim"
    elif toward < 0 and 2 * on_side < n:
        lean = "leans against the claim"
    seeds = list(zip(values.get("seed") or [], sides[:n], strict=False))
    off = [str(s) for s, side in seeds if not side]
    on = [str(s) for s, side in seeds if side]
    against = ""  # the few seeds on the minority side, by number
    if 0 < len(off) <= 2 and len(off) < len(on):
        against = f", all but seed{'s' if len(off) > 1 else ''} {', '.join(off)}"
    elif 0 < len(on) <= 2 and len(on) < len(off):
        against = f", only seed{'s' if len(on) > 1 else ''} {', '.join(on)}"
    if isinstance(rule, MostSeeds) or (isinstance(rule, Beats) and rule.bimodal):
        verb = "succeed" if isinstance(rule, MostSeeds) else "won"
        return f"{lean} ({on_side} of {n} seeds {verb}{against}; {needs})"
    estimate = fmt(round(look["estimate"], 4))
    return f"{lean} ({on_side} of {n} seeds on its side{against}; estimate {estimate}, {needs})"


def lean(stats: dict | None) -> str:
    """An undecided claim's lean in one phrase ("" when decided, a timing ratio, or when the
    record lacks what it needs); a composite names each open part ("MHA > LSTM: leans ...")."""
    if not stats or stats.get("decision") is not None or stats["kind"] == "timing ratio":
        return ""
    rule = rule_from_dict(stats.get("rule"))
    values = stats.get("values") or {}
    if isinstance(rule, Ranking | AllOf):
        components = rule.pairs() if isinstance(rule, Ranking) else list(rule.parts)
        phrases = [
            f"{part['words'].split(':')[0].split(' (')[0]}: {text}"
            for component, part in zip(components, stats.get("parts") or [], strict=False)
            if part["decision"] is None and (text := part_lean(component, part["estimate"], values))
        ]
        return "; ".join(phrases)
    return part_lean(rule, stats.get("estimate"), values) if rule else ""
