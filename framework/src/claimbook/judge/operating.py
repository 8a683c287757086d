"""Operating characteristics of a rule as the product runs it: the planned looks, the
per-look level and the cap of :func:`claimbook.judge.sequential.judge_rule`, applied to
simulated seeds, every path at once.

A path is a seed-by-seed row of values (normal, or 0/1 successes read off them); it starts
at the first look and takes the next look while undecided, as the session does when the
budget allows. :func:`characteristics` computes each look's decision for all paths with
numpy (the same tests, levels and critical values as :mod:`claimbook.judge.stats`), and
:func:`as_run` applies ``judge_rule`` itself to one path: the unit tests check, path by
path, that the two agree. The outcome: how often each decision is reached, and the mean
number of seeds read, by each look (a budget that stops a claim at a look leaves it there).
"""

from __future__ import annotations

import numpy as np

from claimbook.declare.design import Beats, Diff, Matches, MostSeeds, Typical, Universal
from claimbook.judge import stats
from claimbook.judge.power import t_quantile, tolerance_factor
from claimbook.judge.sequential import ALPHA, COVERAGE, family, judge_rule
from claimbook.lazy import lazy

pd = lazy("pandas")


def as_run(rule, level: str, path: np.ndarray, columns: dict) -> tuple[str | None, int]:
    """The decision ``judge_rule`` reaches on one path, and the seeds it read.
    ``columns`` maps each measure the rule reads to a function of the path."""
    n = rule.looks[0]
    while True:
        frame = pd.DataFrame({name: f(path[:n]) for name, f in columns.items()})
        record = judge_rule(rule, level, frame, rule.looks)
        if record["decision"] or not record["next_look"]:
            return record["decision"], n
        n = record["next_look"]


def outcomes(rule) -> tuple[str, str]:
    """The rule's decision for its claim, and against it."""
    if isinstance(rule, Matches):
        return "equivalent", "not equivalent"
    return "supported", "refuted"


def _column(values: dict, x: str | Diff) -> np.ndarray:
    return values[x.a] - values[x.b] if isinstance(x, Diff) else values[x]


def _oriented(rule, values: dict) -> np.ndarray:
    """Paths x seeds, oriented as the judge orients them (positive: the claim holds)."""
    if isinstance(rule, Typical | Universal | MostSeeds):
        return rule.sign * (_column(values, rule.x) - rule.threshold)
    if isinstance(rule, Beats):
        return _column(values, rule.diff) - (0.0 if rule.bimodal else rule.margin)
    if isinstance(rule, Matches):
        return values[rule.a] - (values[rule.b] if rule.b else rule.value)
    raise TypeError(f"no vectorised test for {type(rule).__name__}")


def _look(rule, level: str, y: np.ndarray, a: float) -> np.ndarray:
    """Each path's decision at one look on its first n seeds ``y``: 0 none, 1 for the claim,
    2 against it (stats.t_look, tolerance_look, rate_look and tost_look, vectorised)."""
    n = y.shape[1]
    fam, share = family(rule, level)
    if fam == "success":
        k = np.sum(y > 0, axis=1)
        bounds = np.array([stats.cp_bounds(j, n, a) for j in range(n + 1)])
        low, high = bounds[k, 0], bounds[k, 1]
        return np.where(low > share, 1, np.where(high < share, 2, 0))
    mean, sd = y.mean(axis=1), y.std(axis=1, ddof=1)
    if fam == "tolerance":
        bound = mean - tolerance_factor(n, COVERAGE[level], a) * sd
        return np.where(np.any(y <= 0, axis=1), 2, np.where(bound > 0, 1, 0))
    half = t_quantile(a, n) * sd / np.sqrt(n)
    low, high = mean - half, mean + half
    if isinstance(rule, Matches):
        m = rule.margin
        inside, outside = (-m < low) & (high < m), (low > m) | (high < -m)
        return np.where(inside, 1, np.where(outside, 2, 0))
    return np.where(low > 0, 1, np.where(high < 0, 2, 0))


def decide_paths(rule, level: str, paths: np.ndarray, columns: dict) -> tuple[np.ndarray, ...]:
    """Each path's decision (0 none, 1 for, 2 against) and the index of the look that
    decided it (``len(rule.looks)``: none did), the first crossing along the looks."""
    looks = rule.looks
    fam, param = family(rule, level)
    a = stats.per_look_level(fam, ALPHA[level], looks, param)
    y = _oriented(rule, {name: f(paths) for name, f in columns.items()})
    code = np.zeros(len(paths), int)
    at = np.full(len(paths), len(looks))
    for i, n in enumerate(looks):
        now = _look(rule, level, y[:, :n], a)
        new = (code == 0) & (now > 0)
        code[new], at[new] = now[new], i
    return code, at


def characteristics(rule, level: str, paths: np.ndarray, columns: dict) -> dict:
    """Shares of each outcome over ``paths`` (rows) and the mean seeds read, at the cap,
    and under "by_look" as they stand at each planned look (a claim stopped there)."""
    code, at = decide_paths(rule, level, paths, columns)
    looks = np.array(rule.looks)
    yes, no = outcomes(rule)
    by_look = []
    for i, n in enumerate(rule.looks):
        decided = at <= i
        read = np.where(decided, looks[np.minimum(at, i)], n)
        by_look.append({
            "look": n, yes: float(np.mean(decided & (code == 1))),
            no: float(np.mean(decided & (code == 2))),
            "inconclusive": float(np.mean(~decided)), "mean_seeds": float(np.mean(read)),
        })  # fmt: skip
    return {**{k: v for k, v in by_look[-1].items() if k != "look"}, "by_look": by_look}
