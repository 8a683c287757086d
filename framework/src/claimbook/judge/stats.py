"""The tests behind each rule at one look, their calibrated per-look levels, and power.

Every distribution comes from scipy.stats. A look returns a decision in the claim's
direction ("supported"/"refuted", "equivalent"/"not equivalent") or None, with the
estimate and its interval. ``y`` is always oriented so that positive means the claim
holds (``y = sign * (x - threshold)``, or the paired difference minus the margin).

Per-look levels are calibrated by simulation with a fixed seed (:func:`per_look_level`):
the largest constant level whose chance of a false decision over all planned looks stays
at or below the claim's alpha. The unit tests re-check each design by an independent
simulation, and show that unadjusted peeking exceeds alpha.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from claimbook.judge.power import (
    POWER,
    t_needed,
    t_quantile,
    tolerance_factor,
    tolerance_needed,
    tost_needed,
)
from claimbook.lazy import lazy

np = lazy("numpy")
stats = lazy("scipy.stats")
CALIBRATION_SEED = 20261201
CALIBRATION_DRAWS = 40_000


@dataclass
class Look:  # plan=False in a look function skips ``needed`` (simulations need no plan)
    n: int
    decision: str | None
    estimate: float
    low: float
    high: float
    p: float  # one-sided p-value for the claim's direction at this n (fixed-sample)
    needed: int | None = None  # seeds that would decide it at 80% power (None: cannot say)


def _t_parts(y: np.ndarray, a: float) -> tuple[float, float, float]:
    n, mean = len(y), float(np.mean(y))
    sd = float(np.std(y, ddof=1)) if n > 1 else 0.0
    half = t_quantile(a, n) * sd / np.sqrt(n) if n > 1 else np.inf
    return mean, sd, half


def _t_p(mean: float, sd: float, n: int) -> float:
    if n < 2:
        return 1.0
    if sd == 0:
        return 0.0 if mean > 0 else 1.0
    return float(stats.t.sf(mean / (sd / np.sqrt(n)), n - 1))


def t_look(y: np.ndarray, a: float, offset: float = 0.0, plan: bool = True) -> Look:
    """Mean of ``y`` against 0; the estimate and interval are reported as mean + offset."""
    mean, sd, half = _t_parts(y, a)
    low, high = mean - half, mean + half
    decision = "supported" if low > 0 else "refuted" if high < 0 else None
    effect = abs(mean) / sd if sd > 0 else np.inf
    needed = t_needed(effect, a) if plan and not decision else None
    p = _t_p(mean, sd, len(y))
    return Look(len(y), decision, mean + offset, low + offset, high + offset, p, needed)


def tolerance_look(
    y: np.ndarray, a: float, coverage: float, offset: float = 0.0, plan: bool = True
) -> Look:
    """Universal: refuted by any failing seed; supported when every seed passes and the
    tolerance bound mean - k sd is above 0."""
    n = len(y)
    mean = float(np.mean(y))
    sd = float(np.std(y, ddof=1)) if n > 1 else 0.0
    k = tolerance_factor(n, coverage, a) if n > 1 else np.inf
    bound = mean - k * sd if sd > 0 else (mean if n > 1 else -np.inf)
    if np.any(y <= 0):
        decision = "refuted"
    elif bound > 0:
        decision = "supported"
    else:
        decision = None
    needed = None
    if plan and decision is None and sd > 0:
        needed = tolerance_needed(mean / sd, a, coverage)
    z = stats.norm.ppf(coverage)
    p = (
        1.0
        if n < 2 or sd == 0
        else float(stats.nct.sf(mean / (sd / np.sqrt(n)), n - 1, z * np.sqrt(n)))
    )
    return Look(n, decision, mean + offset, bound + offset, mean + offset, p, needed)


@cache
def cp_bounds(k: int, n: int, a: float) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds at level ``a`` each (exact binomial)."""
    low = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return low, high


def rate_look(success: np.ndarray, a: float, share: float, plan: bool = True) -> Look:
    n, k = len(success), int(np.sum(success))
    low, high = cp_bounds(k, n, a)
    decision = "supported" if low > share else "refuted" if high < share else None
    needed = None
    rate = k / n
    if plan and decision is None and rate != share:
        z_a, z_b = stats.norm.ppf(1 - a), stats.norm.ppf(POWER)
        spread = z_a * np.sqrt(share * (1 - share)) + z_b * np.sqrt(max(rate * (1 - rate), 1e-9))
        needed = int(np.ceil((spread / (rate - share)) ** 2))
    p = float(stats.binom.sf(k - 1, n, share))  # P(at least k successes | rate = share)
    return Look(n, decision, rate, low, high, p, needed)


def tost_look(
    d: np.ndarray, a: float, margin: float, offset: float = 0.0, plan: bool = True
) -> Look:
    """Equivalent when the (1 - 2a) interval of the mean lies inside (-margin, margin); not
    equivalent when it lies wholly outside. Reported as mean + offset (a value's units)."""
    mean, sd, half = _t_parts(d, a)
    low, high = mean - half, mean + half
    if -margin < low and high < margin:
        decision = "equivalent"
    elif low > margin or high < -margin:
        decision = "not equivalent"
    else:
        decision = None
    needed = None
    if plan and decision is None and sd > 0:
        needed = tost_needed(mean, sd, margin, a)  # both one-sided tests: two-sided
    n = len(d)
    p = max(_t_p(mean + margin, sd, n), _t_p(margin - mean, sd, n))  # the TOST p-value
    return Look(n, decision, mean + offset, low + offset, high + offset, p, needed)


def median_bounds(values: list[float], a: float) -> tuple[float, float]:
    """Distribution-free one-sided bounds for the median at level ``a`` each: the order
    statistics x_(j) and x_(n+1-j) with P(Binomial(n, 1/2) <= j - 1) <= a."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    j = int(np.sum(stats.binom.cdf(np.arange(n), n, 0.5) <= a))  # the largest such j
    if j == 0:
        return -np.inf, np.inf
    return float(x[j - 1]), float(x[n - j])


def band_decision(low: float, high: float, factor: float, at_most: float | None) -> str | None:
    """A ratio's interval [low, high] against "above ``factor``" (and "at most ``at_most``")."""
    if at_most is None:
        return "supported" if low > factor else "refuted" if high < factor else None
    if factor < low and high < at_most:
        return "supported"
    if high < factor or low > at_most:
        return "refuted"
    return None


def ratio_look(ratios: list[float], a: float, factor: float, at_most: float | None) -> Look:
    low, high = median_bounds(ratios, a)
    median = float(np.median(ratios))
    decision = band_decision(low, high, factor, at_most)
    above = np.sum(np.asarray(ratios) > factor)
    p = float(stats.binom.sf(above - 1, len(ratios), 0.5))
    return Look(len(ratios), decision, median, low, high, p)


# calibration ---------------------------------------------------------------------------


def _bisect(rate, alpha: float) -> float:
    """The largest level in (0, alpha] whose simulated overall false-decision rate stays
    two Monte-Carlo standard errors below alpha (so the true rate is at most alpha)."""
    target = alpha - 2 * np.sqrt(alpha * (1 - alpha) / CALIBRATION_DRAWS)
    if rate(alpha) <= target:
        return alpha
    low, high = alpha / 1000, alpha
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if rate(mid) <= target else (low, mid)
    return low


def _standardized(draws: np.ndarray, looks: tuple[int, ...]) -> list[np.ndarray]:
    """mean / sd of the first n draws of each row, for every look n."""
    return [draws[:, :n].mean(1) / draws[:, :n].std(1, ddof=1) for n in looks]


def false_rate_t(looks: tuple[int, ...], a: float, draws: np.ndarray, _cache=None) -> float:
    """Chance that a t look at level ``a`` declares "supported" at any look, true mean 0."""
    ratio = _cache or _standardized(draws, looks)
    hit = np.zeros(len(draws), bool)
    for n, r in zip(looks, ratio, strict=True):
        hit |= r * np.sqrt(n) > stats.t.ppf(1 - a, n - 1)
    return float(hit.mean())


def false_rate_tolerance(
    looks: tuple[int, ...], a: float, coverage: float, draws: np.ndarray, _cache=None
) -> float:
    """Chance of "supported" when exactly ``coverage`` of seeds pass (values N(z, 1))."""
    x_all = draws + stats.norm.ppf(coverage)
    ratio = _cache or _standardized(x_all, looks)
    hit = np.zeros(len(draws), bool)
    for n, r in zip(looks, ratio, strict=True):
        passing = np.all(x_all[:, :n] > 0, axis=1)
        hit |= passing & (r > tolerance_factor(n, coverage, a))
    return float(hit.mean())


def false_rate_success(
    looks: tuple[int, ...], a: float, share: float, uniform: np.ndarray
) -> float:
    """Chance that the Clopper-Pearson lower bound exceeds ``share`` at any look when the true
    success rate is ``share``."""
    success = np.cumsum(uniform < share, axis=1)
    hit = np.zeros(len(uniform), bool)
    for n in looks:
        lows = np.array([cp_bounds(k, n, a)[0] for k in range(n + 1)])
        hit |= lows[success[:, n - 1]] > share
    return float(hit.mean())


def _success_critical(n: int, share: float) -> tuple[np.ndarray, np.ndarray]:
    """At n seeds, the level above which k successes are "supported" (the Clopper-Pearson
    lower bound exceeds ``share`` exactly when P(Binomial(n, share) >= k) < a), and the level
    above which they are "refuted" (P(Binomial(n, share) <= k) < a), for k = 0..n."""
    k = np.arange(n + 1)
    return stats.binom.sf(k - 1, n, share), stats.binom.cdf(k, n, share)


def exact_false_rate_success(looks: tuple[int, ...], a: float, share: float) -> float:
    """The exact chance, at a true success rate of ``share``, that the rate rule declares
    "supported" at any of ``looks`` (binomial paths, no simulation)."""
    alive, at, hit = np.array([1.0]), 0, 0.0  # P(k successes so far, undecided)
    for n in looks:
        step = stats.binom.pmf(np.arange(n - at + 1), n - at, share)
        alive, at = np.convolve(alive, step), n
        supported = _success_critical(n, share)[0] < a
        hit += float(alive[supported].sum())
        alive = np.where(supported, 0.0, alive)
    return hit


def success_level(alpha: float, looks: tuple[int, ...], share: float) -> float:
    """The success family's per-look level, exact: decisions change only at the critical
    values (:func:`_success_critical`); take the largest decision set whose exact false-
    "supported" rate is at most ``alpha``, at the middle of its interval, far from a jump."""
    critical = {0.0}
    for n in looks:
        critical |= {float(c) for c in np.concatenate(_success_critical(n, share)) if 0 < c < alpha}
    jumps = [*sorted(critical), alpha]
    best = 0
    for i in range(len(jumps) - 1):
        if exact_false_rate_success(looks, (jumps[i] + jumps[i + 1]) / 2, share) <= alpha:
            best = i
    return (jumps[best] + jumps[best + 1]) / 2


@cache
def per_look_level(family: str, alpha: float, looks: tuple[int, ...], param: float = 0.0) -> float:
    """The constant per-look level for ``looks`` keeping the overall false-decision rate at
    or below ``alpha`` (one look: alpha itself, but for the discrete success family, whose
    level is exact and away from its jumps). ``family`` is "t" (t bounds and TOST: at a
    margin, TOST reduces to one one-sided t test), "tolerance" (``param`` = coverage) or
    "success" (``param`` = share)."""
    if family == "success":
        return success_level(alpha, looks, param)
    if len(looks) == 1:
        return alpha
    rng = np.random.default_rng(CALIBRATION_SEED)
    draws = rng.standard_normal((CALIBRATION_DRAWS, looks[-1]))
    if family == "tolerance":
        ratio = _standardized(draws + stats.norm.ppf(param), looks)
        return _bisect(lambda a: false_rate_tolerance(looks, a, param, draws, ratio), alpha)
    ratio = _standardized(draws, looks)
    return _bisect(lambda a: false_rate_t(looks, a, draws, ratio), alpha)
