"""Each design's error rate and power as the product runs it (claimbook.judge.operating):
the judge's tests, per-look levels and cap, vectorised over paths and checked path by path
against judge_rule itself.

The committed Method table is held, row by row and look by look, likely and established, to
alpha plus three Monte-Carlo standard errors at its paths; a design whose true false-decision
rate is 1.5 x alpha fails that bound (shown exactly, and by simulating such designs). The
control replaces the calibrated per-look level by the unadjusted alpha at every look and
must exceed the bound: the simulation can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from claimbook.declare.design import Beats, Matches, MostSeeds, Universal
from claimbook.judge import stats
from claimbook.judge.method import PATHS, compute, designs, load_table
from claimbook.judge.operating import as_run, characteristics, decide_paths, outcomes
from claimbook.judge.sequential import ALPHA
from scipy.stats import binom, norm

DRAWS = 20_000
VALUE = {"x": lambda p: p}
PAIRED = {"a": lambda p: p, "b": lambda p: 0 * p}
ROWS, CURRENT = load_table()


def bound(alpha: float, paths: int = DRAWS) -> float:
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / paths)


def paths(seed: int, shift: float, n: int = 20, draws: int = DRAWS) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((draws, n)) + shift


@pytest.mark.parametrize("index", range(len(designs())))
def test_the_vectorised_simulation_is_judge_rule_path_by_path(index):
    """Under the null, the alternative and halfway: the same decision and seeds read."""
    design = designs()[index]
    looks, rng = design.rule.looks, np.random.default_rng(100 + index)
    means = (design.null, design.alternative, (design.null + design.alternative) / 2)
    rows = np.concatenate([rng.standard_normal((40, looks[-1])) + m for m in means])
    code, at = decide_paths(design.rule, design.level, rows, design.columns)
    names = (None, *outcomes(design.rule))
    for row, c, i in zip(rows, code, at, strict=True):
        expected = (names[c], looks[min(i, len(looks) - 1)])
        assert as_run(design.rule, design.level, row, design.columns) == expected


def test_paired_t_keeps_alpha_and_the_designs_power():
    """Paired t, likely (alpha 0.05), looks 3/5/8/12: false "supported" at most alpha, and
    at a true effect of 1 sd the design's power (86% in CONFIDENCE.md)."""
    rule = Beats("a", "b", lower=False)
    null = characteristics(rule, "likely", paths(11, 0.0, 12), PAIRED)
    assert null["supported"] <= bound(0.05)
    effect = characteristics(rule, "likely", paths(12, 1.0, 12), PAIRED)
    assert effect["supported"] >= 0.84
    assert effect["mean_seeds"] > 5  # it reads past the first look when undecided
    by_look = [look["supported"] for look in effect["by_look"]]
    assert by_look == sorted(by_look) and by_look[0] < 0.2  # a budget stopping at 3 costs


def test_equivalence_keeps_alpha_at_the_margin_and_its_power_at_zero():
    rule = Matches("x", value=0.0, margin=1.27)
    at_margin = characteristics(rule, "likely", paths(13, 1.27, 12), VALUE)
    assert at_margin["equivalent"] <= bound(0.05)
    assert characteristics(rule, "likely", paths(14, 0.0, 12), VALUE)["equivalent"] >= 0.92


def test_success_rate_keeps_alpha_and_its_power_at_ninety_percent():
    rule = MostSeeds("x", above=0, share=0.5, look20=True)
    assert characteristics(rule, "likely", paths(15, 0.0), VALUE)["supported"] <= bound(0.05)
    assert characteristics(rule, "likely", paths(16, norm.ppf(0.9)), VALUE)["supported"] >= 0.98


def test_a_universal_rule_reads_to_its_cap_for_support_and_counterexamples():
    """No futility: exactly 90% of seeds passing, "supported" at most alpha; at a mean 3 sd
    above the threshold support 79% (63% with the futility stop it had); with 5% of seeds
    failing, an established rule reads on and finds one in 46% of paths by 12 seeds
    (1 - 0.95^12, less the few supported first; 34% with the futility stop)."""
    rule = Universal("x", above=0)
    edge = characteristics(rule, "likely", paths(17, norm.ppf(0.9), 12), VALUE)
    assert edge["supported"] <= bound(0.05)
    assert characteristics(rule, "likely", paths(18, 3.0, 12), VALUE)["supported"] >= 0.77
    failing = characteristics(rule, "established", paths(19, norm.ppf(0.95), 12), VALUE)
    assert failing["refuted"] >= 0.44 and failing["mean_seeds"] > 9


def test_unadjusted_levels_fail_the_same_simulation(monkeypatch):
    """The control: alpha at every look is not an alpha rule, and this simulation shows it."""
    monkeypatch.setattr(stats, "per_look_level", lambda family, alpha, looks, param=0.0: alpha)
    rule = Beats("a", "b", lower=False)
    null = characteristics(rule, "likely", paths(11, 0.0, 12), PAIRED)
    assert null["supported"] > bound(0.05)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['level']}-{r['design']}" for r in ROWS])
def test_every_row_of_the_table_keeps_its_alpha_at_every_look(row):
    """Likely and established, at the cap and at each look a budget may stop a claim at."""
    assert row["paths"] >= 20_000
    for look in row["by_look"]:
        assert look["false_rate"] <= bound(row["alpha"], row["paths"]), look
        for rate, se in ((look["false_rate"], look["false_se"]), (look["power"], look["power_se"])):
            assert se == pytest.approx(math.sqrt(rate * (1 - rate) / row["paths"]))
    assert row["false_rate"] == row["by_look"][-1]["false_rate"]


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['level']}-{r['design']}" for r in ROWS])
def test_the_bound_rejects_a_design_at_one_and_a_half_alpha(row):
    """Exactly: a design whose true false-decision rate is 1.5 x alpha passes the row's
    bound with a chance below 1 in 1000."""
    n, alpha = row["paths"], row["alpha"]
    assert binom.cdf(math.floor(bound(alpha, n) * n), n, 1.5 * alpha) < 1e-3


@pytest.mark.parametrize("level", ["likely", "established"])
@pytest.mark.parametrize("index", [0, 1, 3])  # the t, tolerance and equivalence designs
def test_a_simulated_design_at_one_and_a_half_alpha_fails_the_bound(monkeypatch, level, index):
    """The design with its per-look level calibrated for 1.5 x alpha instead of alpha, run by
    the table's own simulation at the table's paths: its false-decision rate exceeds the
    bound the table's rows are held to."""
    design = next(d for d in designs()[index::5] if d.level == level)
    calibrated = stats.per_look_level

    def loose(family, alpha, looks, param=0.0):
        return calibrated(family, 1.5 * alpha, looks, param)

    monkeypatch.setattr(stats, "per_look_level", loose)
    null = characteristics(design.rule, level, paths(21, design.null, 12, PATHS), design.columns)
    alpha = ALPHA[level]
    assert bound(alpha, PATHS) < null[design.false] <= bound(1.5 * alpha, PATHS)


@pytest.mark.parametrize("share", [0.5, 0.8])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
@pytest.mark.parametrize("looks", [(3, 5, 8, 12), (3, 5, 8, 12, 20)])
def test_success_levels_are_exact_and_away_from_the_jumps(share, alpha, looks):
    """The exact error is at most alpha, and moving the level by 1e-12 either way changes no
    decision at any look (the level sits between two critical values, not on one)."""
    a = stats.per_look_level("success", alpha, looks, share)
    assert stats.exact_false_rate_success(looks, a, share) <= alpha
    for n in looks:
        for k in range(n + 1):
            decide = [
                (low > share, high < share)
                for low, high in (stats.cp_bounds(k, n, a + e) for e in (-1e-12, 0, 1e-12))
            ]
            assert decide[0] == decide[1] == decide[2], (n, k)


def test_exact_success_rate_agrees_with_simulation():
    looks, share = (3, 5, 8, 12, 20), 0.5
    a = stats.per_look_level("success", 0.05, looks, share)
    uniform = np.random.default_rng(19).random((40_000, 20))
    simulated = stats.false_rate_success(looks, a, share, uniform)
    exact = stats.exact_false_rate_success(looks, a, share)
    assert abs(simulated - exact) < 3 * math.sqrt(exact * (1 - exact) / 40_000)


def test_the_method_pages_table_is_this_codes_own_simulation():
    """The Method page reads a committed table; it must be exactly what this judge computes
    (``python -m claimbook method`` writes it after a change to the judge)."""
    assert CURRENT, "the judge changed since the table was computed: python -m claimbook method"
    assert compute()["rows"] == ROWS
    assert {(r["level"], r["test"]) for r in ROWS} == {
        (level, test)
        for level in ("likely", "established")
        for test in ("t", "tolerance", "success", "tost")
    }
    likely_t = next(r for r in ROWS if r["level"] == "likely" and r["test"] == "t")
    assert likely_t["power"] >= 0.84
