"""The Method page: each design's rates without a budget and at the look this run's budget
reached for claims of that design (claimbook.render.method_view), read off the run."""

from __future__ import annotations

from claimbook.judge.method import load_table
from claimbook.render.method_view import method_rows, reached
from claimbook.render.site import _environment

ROWS, CURRENT = load_table()
LOOKS, LOOK20 = [3, 5, 8, 12], [3, 5, 8, 12, 20]


def taken(*ns: int) -> list[dict]:
    return [{"n": n} for n in ns]


def claim(level: str, rule: dict, looks: list[int], *ns: int, **more) -> dict:
    stats = {"rule": rule, "looks_planned": looks, "looks": taken(*ns), **more}
    return {"id": f"c{len(ns)}", "level": level, "statistics": stats}


def run(*claims: dict) -> dict:
    return {"run": {"looks": {"budget": 0.3}}, "claims": list(claims)}


BEATS = {"rule": "Beats", "bimodal": False}
RESULTS = run(
    claim("likely", BEATS, LOOKS, 3, 5),
    claim("likely", BEATS, LOOKS, 3),  # left at the first look: the deepest counts
    claim("established", {"rule": "MostSeeds"}, LOOK20, 3),
    claim("speculative", BEATS, LOOKS, 3, 5, 8, 12),  # not gating: not counted
    claim("likely", {"rule": "Slower"}, [1], 1),  # a timing claim: no design of the table
    claim("established", {"rule": "AllOf", "parts": [
        {"rule": "Universal"}, {"rule": "Matches", "look20": True}]}, LOOKS,
        parts=[{"looks": taken(3, 5)}, {"looks": taken(3, 5, 8)}]),
    claim("likely", {"rule": "Ranking"}, LOOKS, parts=[{"looks": taken(3, 5, 8)}]),
)  # fmt: skip


def test_reached_is_the_deepest_look_of_gating_claims_by_design():
    assert reached(RESULTS) == {
        ("t", "likely", (3, 5, 8, 12)): 8,  # the ranking's pair read 8 seeds
        ("success", "established", (3, 5, 8, 12, 20)): 3,
        ("tolerance", "established", (3, 5, 8, 12)): 5,
        ("tost", "established", (3, 5, 8, 12, 20)): 8,
    }


def test_each_row_takes_its_designs_look_or_the_runs_deepest_and_says_which():
    rows = {(r["level"], r["design"]): r for r in method_rows(ROWS, RESULTS)}
    t = rows["likely", "typical value, paired comparison (t)"]
    assert (t["budget"]["look"], t["budget_from_run"]) == (8, False)
    assert t["budget"]["power"] < t["power"] and t["budget"]["false_rate"] <= t["false_rate"]
    success = rows["established", "in most seeds (success rate)"]
    assert (success["budget"]["look"], success["budget"]["power"]) == (3, 0.0)  # 3 cannot decide
    unmatched = rows["likely", "in every seed (tolerance bound)"]
    assert (unmatched["budget"]["look"], unmatched["budget_from_run"]) == (8, True)
    assert all(r["budget"] is None for r in method_rows(ROWS, run()))


def test_the_page_shows_both_columns_with_standard_errors():
    page = (
        _environment(None)
        .get_template("method.md.j2")
        .render(rows=method_rows(ROWS, RESULTS), current=CURRENT, budget=0.3)
    )
    t = next(r for r in ROWS if r["level"] == "likely" and r["test"] == "t")
    at8 = next(b for b in t["by_look"] if b["look"] == 8)
    line = next(x for x in page.splitlines() if x.startswith("| typical value") and "likely" in x)
    assert f"{100 * t['false_rate']:.2f}% ± {100 * t['false_se']:.2f}" in line
    assert f"{100 * at8['power']:.2f}% ± {100 * at8['power_se']:.2f} (look 8)" in line
    assert "(look 8\\*)" in page and "100,000" in page and "futility" in page
    empty = (
        _environment(None)
        .get_template("method.md.j2")
        .render(rows=method_rows(ROWS, run()), current=CURRENT, budget=0.3)
    )
    assert "no look taken" in empty
