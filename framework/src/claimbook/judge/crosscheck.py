"""A distribution-free cross-check of a rule's normal-theory test, from 6 seeds on.

For a rule that tests a mean across seeds with a t statistic (a typical value, a paired
comparison, an equivalence), the same hypothesis is tested again without the normal model: an
exact sign-flip (randomisation) test of the per-seed values, enumerating all 2^n sign
patterns (as ``scipy.stats.permutation_test`` with ``permutation_type="samples"``), whose null
is "the values are symmetric about the boundary". Both are fixed-sample tests on the same
seeds, compared at the claim's alpha, one side at a time: a claimed side (mean above the
boundary) and the opposite side, and for an equivalence both one-sided tests of TOST. Where
one test rejects and the other does not, the record carries a warning. Below 6 seeds a
sign-flip test cannot reach 0.05 on either side (2 x 2^-5 > 0.05), so nothing is checked.

It never changes the verdict: the verdict stays the planned looks' normal-theory decision.

Success-count rules (most seeds, a bimodal comparison) are already exact binomial tests: there
is nothing normal to cross-check. A universal rule is refuted by a failing seed, exactly; its
support rests on a normal tolerance bound, beside which the record gives the distribution-free
bound that the seeds read can show (Clopper-Pearson, all seeds passing), as information only:
at 20 seeds or fewer it can never reach the 90% or 99% of seeds the tolerance bound speaks of.
"""

from __future__ import annotations

from claimbook.declare.design import (
    AllOf,
    Beats,
    Diff,
    Matches,
    MostSeeds,
    Ranking,
    Typical,
    Universal,
)
from claimbook.lazy import lazy

np = lazy("numpy")
scipy_stats = lazy("scipy.stats")

MIN_SEEDS = 6


def _sums(y) -> np.ndarray:
    """The sum of ``y`` under every sign pattern (2^len(y) of them)."""
    sums = np.zeros(1)
    for v in y:
        sums = np.concatenate((sums + v, sums - v))
    return sums


def sign_flip_p(y, alternative: str = "greater") -> float:
    """Exact one-sided sign-flip p of ``mean(y) > 0`` ("greater") or ``< 0`` ("less"): the
    share of the 2^n sign patterns whose sum is at least as extreme as the observed one. The
    same as ``scipy.stats.permutation_test((y,), np.mean, permutation_type="samples",
    n_resamples=np.inf)`` (the unit tests check it), enumerated in two halves so that 20
    seeds take milliseconds, not seconds."""
    y = np.asarray(y, float) * (1 if alternative == "greater" else -1)
    half = len(y) // 2
    total = (_sums(y[:half])[:, None] + _sums(y[half:])[None, :]).ravel()
    observed = float(np.sum(y))
    slack = 1e-12 * max(1.0, float(np.sum(np.abs(y))))  # ties count as extreme
    return float(np.mean(total >= observed - slack))


def t_p(y, alternative: str = "greater") -> float:
    """The fixed-sample one-sided t p of ``mean(y) > 0`` ("greater") or ``< 0`` ("less")."""
    y = np.asarray(y, float)
    if np.std(y) == 0:
        return 0.0 if (np.mean(y) > 0) == (alternative == "greater") and np.mean(y) != 0 else 1.0
    return float(scipy_stats.ttest_1samp(y, 0.0, alternative=alternative).pvalue)


def _side(name: str, y, alternative: str, alpha: float) -> dict:
    t, flip = t_p(y, alternative), sign_flip_p(y, alternative)
    return {"test": name, "t_p": t, "sign_flip_p": flip, "agree": (t < alpha) == (flip < alpha)}


def _column(values: dict, x) -> np.ndarray:
    if isinstance(x, Diff):
        return np.asarray(values[x.a], float) - np.asarray(values[x.b], float)
    return np.asarray(values[x], float)


def _sides(rule, values) -> list[tuple[str, object, str]]:
    """(what is tested, per-seed values shifted to the boundary, side) for one simple rule."""
    if isinstance(rule, Typical):
        y = rule.sign * (_column(values, rule.x) - rule.threshold)
        return [("claimed side", y, "greater"), ("opposite side", y, "less")]
    if isinstance(rule, Beats):
        y = _column(values, rule.diff) - rule.margin
        return [("claimed side", y, "greater"), ("opposite side", y, "less")]
    if isinstance(rule, Matches):
        a = np.asarray(values[rule.a], float)
        d = a - (np.asarray(values[rule.b], float) if rule.b else rule.value)
        m = rule.margin
        return [
            ("above -margin (TOST)", d + m, "greater"),
            ("below +margin (TOST)", d - m, "less"),
            ("beyond +margin", d - m, "greater"),
            ("beyond -margin", d + m, "less"),
        ]
    return []


def _exact_note(rule) -> str:
    if isinstance(rule, MostSeeds) or (isinstance(rule, Beats) and rule.bimodal):
        return "a success count: its binomial test is already exact, nothing to cross-check"
    return ""


def _universal(rule: Universal, values, level_alpha: float) -> str:
    y = rule.sign * (_column(values, rule.x) - rule.threshold)
    n, k = len(y), int(np.sum(y > 0))
    if k < n:
        return f"refuted by a failing seed ({n - k} of {n}): exact, no model needed"
    low = level_alpha ** (1 / n)  # Clopper-Pearson lower bound with n of n passing
    return (
        f"all {n} seeds pass: distribution-free, at least {low:.0%} of seeds pass at "
        f"{1 - level_alpha:.0%} confidence (the normal tolerance bound is what can say more)"
    )


def crosscheck(rule, alpha: float, values: dict, n: int) -> dict | None:
    """The cross-check record of a rule over its first ``n`` seeds (``values``: measure name ->
    per-seed values in seed order), or None below ``MIN_SEEDS`` seeds."""
    if n < MIN_SEEDS:
        return None
    values = {k: list(v)[:n] for k, v in values.items()}
    parts = rule.pairs() if isinstance(rule, Ranking) else (
        list(rule.parts) if isinstance(rule, AllOf) else [rule]
    )  # fmt: skip
    out = {"seeds": n, "alpha": alpha, "parts": [], "disagree": False}
    for part in parts:
        entry = {"words": part.words(), "sides": [], "note": _exact_note(part)}
        if isinstance(part, Universal):
            entry["note"] = _universal(part, values, alpha)
        elif not entry["note"]:
            entry["sides"] = [_side(name, y, alt, alpha) for name, y, alt in _sides(part, values)]
        out["parts"].append(entry)
        out["disagree"] = out["disagree"] or any(not s["agree"] for s in entry["sides"])
    return out


def lines(check: dict | None) -> list[str]:
    """The cross-check in words, one line per part, a warning first where the two disagree."""
    if not check:
        return []
    said = []
    if check["disagree"]:
        said.append(
            f"WARNING: the sign-flip test and the t test disagree at alpha {check['alpha']:g} "
            "on these seeds: the normal model may not fit them (the verdict is unchanged)"
        )
    for part in check["parts"]:
        if part["note"]:
            said.append(f"{part['words']}: {part['note']}")
            continue
        sides = "; ".join(
            f"{s['test']}: sign-flip p {s['sign_flip_p']:.3g}, t p {s['t_p']:.3g}"
            + ("" if s["agree"] else " (disagree)")
            for s in part["sides"]
        )
        said.append(f"{part['words']}: {sides}")
    return said
