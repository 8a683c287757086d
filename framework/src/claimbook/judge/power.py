"""Seeds that would decide a rule at 80% power, and the tolerance factor, for
:mod:`claimbook.judge.stats`.

Each count is the first n at which the power reaches 80%, scanned over every n at once
(one vectorised scipy call per count instead of one per n; the critical values are cached
per level), so that the planned looks, the operating-characteristics simulation and the
Method page can afford them at every look.
"""

from __future__ import annotations

from functools import cache

from claimbook.lazy import lazy

np = lazy("numpy")
stats = lazy("scipy.stats")

POWER = 0.8  # "seeds that would decide it" are counted at this power
SCAN = 64  # n scanned at once; beyond, doubling and bisection


@cache
def _t_critical(a: float, cap: int) -> tuple[np.ndarray, np.ndarray]:
    ns = np.arange(2, cap + 1)
    return ns, stats.t.ppf(1 - a, ns - 1)


@cache
def _tolerance_critical(a: float, coverage: float, cap: int) -> tuple[np.ndarray, np.ndarray]:
    ns = np.arange(2, cap + 1)
    return ns, stats.nct.ppf(1 - a, ns - 1, stats.norm.ppf(coverage) * np.sqrt(ns))


@cache
def t_quantile(a: float, n: int) -> float:
    """The one-sided t critical value at level ``a`` for ``n`` seeds."""
    return float(stats.t.ppf(1 - a, n - 1))


def _first(ns: np.ndarray, power: np.ndarray) -> int | None:
    hit = np.flatnonzero(power >= POWER)
    return int(ns[hit[0]]) if hit.size else None


def smallest_n(power, low: int, cap: int) -> int | None:
    """The smallest n in [low, cap] with power(n) >= 80% (power rising with n): doubling,
    then bisection. None when even ``cap`` falls short."""
    high = low
    while power(high) < POWER:
        if high >= cap:
            return None
        high = min(2 * high, cap)
    low = max(low, high // 2)
    if power(low) >= POWER:
        return low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if power(mid) >= POWER else (mid, high)
    return high


def t_needed(effect: float, a: float, cap: int = 10_000) -> int | None:
    """The smallest n at which a one-sided t test at level ``a`` has 80% power for a true
    standardized effect (None when no n up to ``cap`` does, e.g. at effect 0)."""
    if not np.isfinite(effect) or effect <= 0:
        return None
    ns, crit = _t_critical(a, min(cap, SCAN))
    found = _first(ns, stats.nct.sf(crit, ns - 1, effect * np.sqrt(ns)))
    if found is not None or cap <= SCAN:
        return found

    def power(n: int) -> float:
        return float(stats.nct.sf(stats.t.ppf(1 - a, n - 1), n - 1, effect * np.sqrt(n)))

    return smallest_n(power, SCAN, cap)


def tost_needed(mean: float, sd: float, margin: float, a: float, cap: int = 10_000) -> int | None:
    """Seeds at which, were the estimate true, an equivalence is decided with 80% power.
    Inside the margin both one-sided tests must reject: their joint power is at least
    p_low + p_high - 1 (so at a zero difference each side needs 90%), and that bound is what
    is asked. Outside it, the one test that shows "not equivalent". None when no n up to
    ``cap`` does (or the seeds read have no spread)."""
    if not np.isfinite(sd) or sd <= 0:
        return None
    if abs(mean) >= margin:
        return t_needed((abs(mean) - margin) / sd, a, cap)

    def power(n: int) -> float:
        crit = stats.t.ppf(1 - a, n - 1)
        low = stats.nct.sf(crit, n - 1, (margin - mean) / sd * np.sqrt(n))
        high = stats.nct.sf(crit, n - 1, (margin + mean) / sd * np.sqrt(n))
        return float(low + high - 1)

    return smallest_n(power, 2, cap)


@cache
def tolerance_factor(n: int, coverage: float, a: float) -> float:
    """One-sided normal tolerance factor k: mean - k sd bounds the lower ``coverage`` quantile
    with confidence 1 - a."""
    z = stats.norm.ppf(coverage)
    return float(stats.nct.ppf(1 - a, n - 1, z * np.sqrt(n)) / np.sqrt(n))


def tolerance_needed(effect: float, a: float, coverage: float, cap: int = 60) -> int | None:
    """Seeds at which, were the estimate true, the universal rule is supported with 80%
    probability (every seed passing and the tolerance bound above 0). Power is not
    monotone in n here (every seed must pass), so every n up to ``cap`` is scanned."""
    ns, crit = _tolerance_critical(a, coverage, cap)
    power = stats.nct.sf(crit, ns - 1, effect * np.sqrt(ns)) * stats.norm.cdf(effect) ** ns
    return _first(ns, power)
