"""A stochastic claim's evidence for the pages: the per-seed values its rule reads, as a
table and as the panels of its evidence figure (against its thresholds and margins)."""

from __future__ import annotations

import itertools
import math

from claimbook.declare.numbers import fmt


def _difference(a: str, b: str, lower: bool | None) -> str:
    """A paired comparison's per-seed difference, oriented so positive favours the claim."""
    return f"{b} − {a}" if lower else f"{a} − {b}"


def rule_values(stats: dict) -> tuple[list[str], list[list[str]]]:
    """The values a rule read, one row per seed (or repetition): seed, each measure, the
    difference; the per-seed differences of a ranking's or conjunction's parts after them."""
    values, rule = stats.get("values") or {}, stats.get("rule") or {}
    index = "repetition" if "repetition" in values else "seed"
    columns = [(c, v) for c, v in values.items() if c not in (index, "difference")]
    if "difference" in values:
        if rule.get("rule") == "Beats":
            name = _difference(rule["a"], rule["b"], rule.get("lower"))
        else:  # Matches a measure against another
            name = _difference(rule["a"], rule["b"], False)
        columns.append((f"difference ({name})", values["difference"]))
    if rule.get("rule") == "Ranking":
        order = itertools.pairwise(rule["order"])
        pairs = [{"a": a, "b": b, "lower": rule.get("lower")} for a, b in order]
    else:
        pairs = rule.get("parts") or []
    for pair, part in zip(pairs, stats.get("parts") or [], strict=False):
        if part.get("values") and "a" in pair:
            columns.append((_difference(pair["a"], pair["b"], pair.get("lower")), part["values"]))
    used, counter = stats.get("seeds_used"), set(stats.get("counterexamples") or [])
    rows = []
    for i, key in enumerate(values.get(index) or []):
        notes = ["counterexample"] if index == "seed" and key in counter else []
        if index == "seed" and isinstance(used, int) and i >= used:
            notes.append("not in the shown look")
        cell = f"{key} ({', '.join(notes)})" if notes else str(key)
        rows.append([cell] + [fmt(col[i]) if i < len(col) else "" for _, col in columns])
    return [index] + [name for name, _ in columns], rows


def _num(value) -> float | None:
    """``value`` as a finite float, or None (a word, a list, a non-finite record)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _column(values: dict, x) -> tuple[str, list | None]:
    """A rule's ``x`` per seed: a measure's values, or ({"a", "b"}) their difference."""
    if not isinstance(x, dict):
        return str(x), values.get(x)
    pairs = zip(values.get(x["a"]) or [], values.get(x["b"]) or [], strict=False)
    diff = [None if _num(p) is None or _num(q) is None else p - q for p, q in pairs]
    return _difference(x["a"], x["b"], False), diff or None


def _panel(rule: dict, part: dict, values: dict, given: list | None = None) -> dict | None:
    """What one rule (or one part of a ranking or conjunction) reads, for a figure: x per
    seed, the shown interval in x's units (None for a success rate, which has other units),
    the threshold or margin lines, and (threshold, sign) where each seed passes or fails."""
    kind, look = rule.get("rule"), part.get("estimate")
    band = (look["low"], look["high"], look["estimate"]) if look else None
    passes, note = None, ""
    if kind in ("Typical", "Universal", "MostSeeds"):
        name, x = _column(values, rule.get("x"))
        sign = 1 if rule.get("above") is not None else -1
        threshold = rule["above"] if sign > 0 else rule.get("below")
        if threshold is None:
            return None
        refs = [(threshold, f"threshold: {'above' if sign > 0 else 'below'} {threshold:g}")]
        passes = None if kind == "Typical" else (threshold, sign)
        if kind == "MostSeeds":
            note, band = "success rate", None
        elif kind == "Universal":
            note = "band: tolerance bound to mean"
    elif kind == "Beats":
        a, b = (rule["b"], rule["a"]) if rule.get("lower") else (rule["a"], rule["b"])
        name, x = _column(values, {"a": a, "b": b})
        x = given if given is not None else values.get("difference", x)
        margin = float(rule.get("margin") or 0.0)
        refs = [(margin, f"margin {margin:g}" if margin else "0: no difference")]
        if rule.get("bimodal"):
            passes, note, band = (0.0, 1), "share of seeds won", None
    elif kind == "Matches":
        margin = float(rule["margin"])
        if rule.get("b"):
            name, x = _column(values, {"a": rule["a"], "b": rule["b"]})
            x, centre = values.get("difference", x), 0.0
        else:
            name, x, centre = str(rule["a"]), values.get(rule["a"]), float(rule["value"])
            nums = [v for v in map(_num, (x or [])[: (look or {}).get("n", 0)]) if v is not None]
            if band and nums:  # older records gave the look as the distance from the value
                mean = sum(nums) / len(nums)
                if abs(band[2] - (mean - centre)) < abs(band[2] - mean):
                    band = tuple(v + centre for v in band)
        refs = [(centre - margin, f"{centre:g} − {margin:g}"),
                (centre + margin, f"{centre:g} + {margin:g}")]  # fmt: skip
    else:
        return None
    x = [_num(v) for v in x or []]
    if all(v is None for v in x):
        return None
    return {
        "title": part.get("words", ""), "xlabel": name, "x": x,
        "used": part.get("seeds_used") or len(x), "interval": part.get("interval"),
        "band": band if band and all(_num(v) is not None for v in band) else None,
        "look": look, "note": note, "refs": refs, "passes": passes,
    }  # fmt: skip


def rule_panels(claim: dict) -> tuple[list[str], list[dict]]:
    """Row labels (one per seed, or repetition) and what a claim's evidence figure draws: one
    panel for a single rule, one per part of a ranking or conjunction (see :func:`_panel`)."""
    stats = claim.get("statistics")
    if not claim.get("rule") or not stats:
        return [], []
    rule, values, look = stats["rule"], stats.get("values") or {}, stats.get("estimate")
    if stats["kind"] == "timing ratio":
        x = [_num(v) for v in values.get(rule.get("ratios")) or []]
        limits = (("factor", rule.get("factor")), ("at most", rule.get("at_most")))
        band = (look["low"], look["high"], look["estimate"]) if look else ()
        if not band or all(v is None for v in x) or any(_num(v) is None for v in band):
            return [], []
        panel = {
            "title": stats.get("words", ""), "xlabel": rule["ratios"], "x": x, "used": len(x),
            "interval": stats.get("interval"), "band": band, "look": look, "passes": None,
            "note": "band: the median's interval",
            "refs": [(float(v), f"{k} {v:g}") for k, v in limits if v is not None],
        }  # fmt: skip
        return [f"rep {r}" for r in values.get("repetition", [])], [panel]
    if rule.get("rule") == "Ranking":
        pairs = itertools.pairwise(rule["order"])
        rules = [{"rule": "Beats", "a": a, "b": b, "lower": rule.get("lower")} for a, b in pairs]
    else:
        rules = rule.get("parts") or []
    if stats.get("parts"):
        parts = zip(rules, stats["parts"], strict=False)
        panels = [_panel(r, p, values, p.get("values")) for r, p in parts]
    else:
        panels = [_panel(rule, stats, values)]
    return [f"seed {s}" for s in values.get("seed", [])], [p for p in panels if p]
