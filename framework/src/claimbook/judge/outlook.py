"""An open claim's outlook: the chance that its remaining planned looks decide it by its cap,
given the seeds already read.

The chance takes the current estimate as the truth (a plug-in, not a predictive
distribution), applies the claim's own tests at its own per-look level at every remaining
planned look (3, 5, 8, 12, and 20 where declared: the record's ``looks_planned``), and fixes
the first look that crosses a bound, as the planned looks do:

- **mean rules** (typical value, paired comparison, equivalence): the remaining seeds' values
  are drawn normal with the mean and sd of the seeds read; :data:`PATHS` paths, numpy over
  paths, from the fixed seed :data:`SEED`, so the number is the same in every run.
- **universal** ("in every seed"): under the same normal model a seed passes with chance
  p = Phi(mean / sd); no counterexample among the m seeds up to a look has chance p^m exactly
  (binomial), and the chance of support without one is simulated on paths drawn from the
  normal truncated to passing values (the tolerance bound at each look).
- **success counts** ("in most seeds", bimodal comparisons): the observed success share as
  the truth; the counts at each remaining look are binomial, and the chance is exact (a
  recursion over the counts, no simulation).
- **composites** (rankings, conjunctions): each part as above, the parts taken as
  independent: decided when a part is refuted or every part supported.

A claim with no remaining planned look, or none that can cross a bound, has chance 0.
"""

from __future__ import annotations

from claimbook.declare.design import AllOf, Beats, Matches, Ranking, Rule, rule_from_dict
from claimbook.judge import sequential, stats
from claimbook.judge.power import t_quantile, tolerance_factor
from claimbook.lazy import lazy

np = lazy("numpy")
pd = lazy("pandas")
scipy_stats = lazy("scipy.stats")

PATHS = 20_000
SEED = 20261206
MODELS = {
    "t": "the remaining seeds drawn normal with the mean and sd of the seeds read",
    "tolerance": "each remaining seed drawn normal with the mean and sd of the seeds read: "
    "the chance of a counterexample exact (binomial), of support simulated",
    "success": "the remaining seeds succeeding at the observed rate (binomial, exact)",
}


def _y(rule: Rule, frame: pd.DataFrame) -> np.ndarray:
    """The per-seed values a rule's test reads, positive where the claim holds (a difference
    against the margin for an equivalence)."""
    if isinstance(rule, Beats):
        return sequential._column(frame, rule.diff) - (0.0 if rule.bimodal else rule.margin)
    if isinstance(rule, Matches):
        other = frame[rule.b].to_numpy(float) if rule.b else rule.value
        return frame[rule.a].to_numpy(float) - other
    return rule.sign * (sequential._column(frame, rule.x) - rule.threshold)


def mean_paths(y, later, a: float, margin: float | None = None, z=None) -> tuple:
    """Cumulative chances, at each look of ``later``, that a t bound (``margin`` None) or
    TOST (within ``margin``) has decided: (positive, negative) arrays. ``z``: the standard
    normal draws, paths x further seeds (default: :data:`PATHS` from :data:`SEED`)."""
    n0, mean, sd = len(y), float(np.mean(y)), float(np.std(y, ddof=1))
    if z is None:
        z = np.random.default_rng(SEED).standard_normal((PATHS, later[-1] - n0))
    new = sd * z  # each value less the observed mean: sums stay exact for small spreads
    sums = np.sum(y - mean) + np.cumsum(new, axis=1)
    squares = np.sum((y - mean) ** 2) + np.cumsum(new**2, axis=1)
    pos, neg = np.zeros(len(z), bool), np.zeros(len(z), bool)
    out_pos, out_neg = [], []
    for n in later:
        shift = sums[:, n - n0 - 1] / n
        spread = np.sqrt(np.maximum(squares[:, n - n0 - 1] - n * shift**2, 0) / (n - 1))
        half = t_quantile(a, n) * spread / np.sqrt(n)
        low, high = mean + shift - half, mean + shift + half
        if margin is None:
            yes, no = low > 0, high < 0
        else:
            yes, no = (-margin < low) & (high < margin), (low > margin) | (high < -margin)
        open_ = ~(pos | neg)
        pos |= open_ & yes
        neg |= open_ & no
        out_pos.append(pos.mean())
        out_neg.append(neg.mean())
    return np.array(out_pos), np.array(out_neg)


def tolerance_paths(y, later, a: float, coverage: float, u=None) -> tuple:
    """As :func:`mean_paths` for a universal rule: the chance of no counterexample up to a
    look is exact, p^m; support is simulated on passing paths (``u``: uniform draws)."""
    n0, mean, sd = len(y), float(np.mean(y)), float(np.std(y, ddof=1))
    if u is None:
        u = np.random.default_rng(SEED).random((PATHS, later[-1] - n0))
    below = float(scipy_stats.norm.cdf(-mean / sd))  # the chance that a seed fails
    values = mean + sd * scipy_stats.norm.ppf(below + u * (1 - below))  # given that it passes
    values = np.concatenate([np.broadcast_to(y, (len(u), n0)), values], axis=1)
    supported = np.zeros(len(u), bool)
    first = []  # the share of passing paths first supported at each look
    for n in later:
        x = values[:, :n]
        bound = x.mean(1) - tolerance_factor(n, coverage, a) * x.std(1, ddof=1)
        now = ~supported & (bound > 0)
        supported |= now
        first.append(now.mean())
    passing = (1 - below) ** (np.array(later) - n0)  # exact: binomial, no failure among m
    pos = np.cumsum(passing * np.array(first))
    decided = 1 - passing * (1 - np.cumsum(first))
    return pos, decided - pos


def success_exact(success, later, a: float, share: float) -> tuple:
    """As :func:`mean_paths` for a success count, exact: the counts at each look are
    binomial at the observed rate; a count crossing its Clopper-Pearson bound stops there."""
    n0, k = len(success), int(np.sum(success))
    alive, at = np.zeros(n0 + 1), n0
    alive[k] = 1.0  # chance of each count so far, undecided
    pos = neg = 0.0
    out_pos, out_neg = [], []
    for n in later:
        alive = np.convolve(alive, scipy_stats.binom.pmf(np.arange(n - at + 1), n - at, k / n0))
        at = n
        bounds = [stats.cp_bounds(c, n, a) for c in range(n + 1)]
        yes = np.array([low > share for low, _ in bounds])
        no = np.array([high < share for _, high in bounds])
        pos, neg = pos + float(alive[yes].sum()), neg + float(alive[no].sum())
        alive = np.where(yes | no, 0.0, alive)
        out_pos.append(pos)
        out_neg.append(neg)
    return np.array(out_pos), np.array(out_neg)


def _part(rule: Rule, level: str, prefix: pd.DataFrame, later: list, looks: tuple) -> dict:
    """One open single rule's cumulative (positive, negative) chances at the ``later`` looks,
    from the seeds of ``prefix``; its family, and whether its values have no spread."""
    fam, param = sequential.family(rule, level)
    a = stats.per_look_level(fam, sequential.ALPHA[level], looks, param)
    zeros = np.zeros(len(later))
    part = {"family": fam, "flat": False, "pos": zeros, "neg": zeros}
    if not later:
        return part
    y = _y(rule, prefix)
    if fam == "success":
        pos, neg = success_exact(y > 0, later, a, param)
    elif len(y) < 2 or not np.std(y, ddof=1) > 0:  # no spread: nothing to draw, no bound moves
        return {**part, "flat": True}
    elif fam == "tolerance":
        pos, neg = tolerance_paths(y, later, a, param)
    else:
        pos, neg = mean_paths(y, later, a, rule.margin if isinstance(rule, Matches) else None)
    return {**part, "pos": pos, "neg": neg}


def percent(x: float) -> str:
    """A chance as the pages show it: whole percent, never rounding a real chance to 0 or 100."""
    if 0 < x < 0.005:
        return "under 1%"
    if 0.995 < x < 1:
        return "over 99%"
    return f"{100 * x:.0f}%"


def _rounded(x) -> float:
    return round(float(x), 4)


def outlook(record: dict, level: str) -> dict | None:
    """The outlook of an open claim's statistics record (its rule, values and planned
    looks): ``chance`` that a remaining look decides it by the ``cap``, the cumulative
    chance at each remaining look (``by_look``), split into ``supported`` and ``refuted``
    (equivalent / not equivalent), with the ``model`` and ``paths`` behind it. None for a
    decided claim, a timing ratio or a fixed sample (``--claimbook-seeds``: no planned look)."""
    rule = rule_from_dict(record.get("rule"))
    looks = tuple(record.get("looks_planned") or ())
    if rule is None or record.get("decision") is not None or record["kind"] == "timing ratio":
        return None
    if not record.get("adaptive", True) or len(looks) <= 1:
        return None
    values = record["values"]
    frame = pd.DataFrame({k: v for k, v in values.items() if k != "seed"}, index=values["seed"])
    prefix = frame.iloc[: sequential.contiguous(frame)]
    later = [n for n in looks if n > len(prefix)]
    if isinstance(rule, Ranking | AllOf):
        components = rule.pairs() if isinstance(rule, Ranking) else list(rule.parts)
        known = [p["decision"] for p in record["parts"]]
    else:
        components, known = [rule], [None]
    parts = []
    for component, decision in zip(components, known, strict=True):
        if decision is None:
            parts.append(_part(component, level, prefix, later, looks))
        else:  # a decided part keeps its decision at every look
            yes = np.full(len(later), float(decision in ("supported", "equivalent")))
            parts.append({"family": "success", "flat": False, "pos": yes, "neg": 1 - yes})
    open_families = sorted({p["family"] for p, d in zip(parts, known, strict=True) if d is None})
    flat = any(p["flat"] for p in parts)
    supported = np.prod([p["pos"] for p in parts], axis=0) * (not flat)
    decided = (1 - np.prod([1 - p["neg"] for p in parts], axis=0) + supported) * (not flat)
    chance = float(decided[-1]) if later else 0.0
    simulated = any(f != "success" for f in open_families)
    model = "; ".join(MODELS[f] for f in open_families)
    if len(parts) > 1:
        model = f"each open part apart, the parts taken as independent: {model}"
    return {
        "seeds_read": len(prefix),
        "cap": looks[-1],
        "looks": later,
        "by_look": [_rounded(x) for x in decided],
        "chance": _rounded(chance),
        "supported": _rounded(supported[-1]) if later else 0.0,
        "refuted": _rounded(chance - supported[-1]) if later else 0.0,
        "exact": not simulated,
        "paths": PATHS if simulated and not flat else None,
        "no_spread": flat,
        "model": model,
    }


def next_look_chance(stats: dict) -> float:
    """The chance that an open claim's next planned look decides it, given the seeds read:
    the first entry of its outlook (exact where the family is discrete; 0 where that look
    cannot cross a bound, or the claim has no outlook). The budget ranks claims by it."""
    view = stats.get("outlook")
    return float(view["by_look"][0]) if view and view["by_look"] else 0.0
