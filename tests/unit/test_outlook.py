"""An open claim's outlook: the chance that its remaining planned looks decide it by its cap,
given the seeds read (exact for success counts and for a universal rule's counterexamples,
simulated on 20,000 vectorised paths otherwise), and the training its cap takes, charging
only the runs the training cache does not hold."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from claimbook.declare.design import Beats, Matches, MostSeeds, Typical, Universal
from claimbook.judge import outlook as ol
from claimbook.judge import stats
from claimbook.judge.sequential import judge_rule
from claimbook.plugin.tocap import cap_cost
from claimbook.render.evidence_view import evidence_view
from claimbook.render.outlook_words import outlook_line, outlook_text
from claimbook.storage.results import load_results, write_results
from scipy.stats import norm


def _record(rule, level: str, columns: dict, looks=None, seeds=None) -> dict:
    n = len(next(iter(columns.values())))
    frame = pd.DataFrame(columns, index=seeds or list(range(n)))
    record = judge_rule(rule, level, frame, looks or rule.looks)
    record["adaptive"] = True
    return record


def test_a_success_count_is_exact_by_hand():
    """2 of 3 seeds succeed, rate 2/3 taken as the truth, likely, looks 3/5/8/12/20 at level
    0.026: 5/5 and 0/5 stay inside the bounds; 8 of 8 or 0 of 8 are out of reach (one seed
    failed, two succeeded); at 12 it is supported from 10 successes (P(X >= 10 | 1/2) = 79/4096)
    and refuted at 2 or fewer: 8 or 9 of the 9 new seeds, or none."""
    rule = MostSeeds("worst", above=0.995, look20=True)
    record = _record(rule, "likely", {"worst": [1.0, 0.16, 1.0]})
    assert record["decision"] is None
    o = ol.outlook(record, "likely")
    support = 9 * (2 / 3) ** 8 * (1 / 3) + (2 / 3) ** 9
    refute = (1 / 3) ** 9
    assert o["exact"] and o["paths"] is None and o["looks"] == [5, 8, 12, 20]
    assert o["by_look"][:2] == [0.0, 0.0]
    assert abs(o["by_look"][2] - (support + refute)) < 1e-4
    assert o["seeds_read"] == 3 and o["cap"] == 20 and o["chance"] >= o["by_look"][2]


def test_a_universal_rule_s_counterexample_is_binomial():
    """Every seed read passes, with mean / sd = r about 1 (a seed passes with p = Phi(r)): an
    established bound (99% of seeds) is out of reach by 12 seeds, so the chance is that of a
    counterexample among the 3 seeds to 8 and the 7 to 12, exactly 1 - p^3 and 1 - p^7."""
    x = np.array([0.3, 0.4, 0.5, 0.6, 2.0])
    record = _record(Universal("gap", above=0), "established", {"gap": list(x)})
    assert record["decision"] is None
    o = ol.outlook(record, "established")
    p = norm.cdf(np.mean(x) / np.std(x, ddof=1))
    assert o["by_look"] == [round(1 - p**3, 4), round(1 - p**7, 4)]
    assert o["supported"] == 0.0 and o["refuted"] == o["chance"]


def test_a_universal_rule_far_above_its_threshold_is_supported_by_its_cap():
    x = [1.0 + 0.05 * i for i in (0, 1, -1, 2, -2)]  # mean / sd = 12.6: support at 8 or 12
    record = _record(Universal("gap", above=0), "established", {"gap": x})
    o = ol.outlook(record, "established")
    assert record["decision"] is None and o["chance"] > 0.99 and o["refuted"] < 1e-4


def _slow_first(y, z, later, look):
    """The reference: each path in a Python loop, the product's own look at each n."""
    mean, sd = np.mean(y), np.std(y, ddof=1)
    pos, neg = np.zeros(len(later)), np.zeros(len(later))
    for row in z:
        path = np.concatenate([y, mean + sd * row])
        for i, n in enumerate(later):
            decision = look(path[:n]).decision
            if decision:
                hit = pos if decision in ("supported", "equivalent") else neg
                hit[i:] += 1
                break
    return pos / len(z), neg / len(z)


def test_the_vectorised_paths_agree_with_a_slow_loop():
    y = np.array([0.0264, 0.0398, -0.0038, 0.0296, 0.0145])  # dd2.gqa-beats-mqa's five
    d = np.array([-0.0123, 0.0033, 0.0195, 0.0041, 0.0139])  # ch04.gqa-matches-mha's five
    z = np.random.default_rng(7).standard_normal((400, 7))
    later, a = [8, 12], 0.0163
    fast = ol.mean_paths(y, later, a, z=z)
    slow = _slow_first(y, z, later, lambda v: stats.t_look(v, a, plan=False))
    assert np.allclose(fast, slow, atol=1.5 / len(z)) and 0 < fast[0][0] < fast[0][1] < 1
    fast = ol.mean_paths(d, later, a, margin=0.014, z=z)
    slow = _slow_first(d, z, later, lambda v: stats.tost_look(v, a, 0.014, plan=False))
    assert np.allclose(fast, slow, atol=1.5 / len(z)) and fast[0][1] > 0


def test_the_chance_is_reproducible_and_drawn_on_20000_paths():
    rule = Beats("GQA", "MQA", lower=True)
    columns = {"GQA": [1.8297, 1.8391, 1.8574, 1.8563, 1.8568],
               "MQA": [1.8562, 1.8788, 1.8536, 1.8859, 1.8713]}  # fmt: skip
    one, two = (ol.outlook(_record(rule, "likely", columns), "likely") for _ in range(2))
    assert one == two and one["paths"] == ol.PATHS >= 20_000 and not one["exact"]
    assert one["looks"] == [8, 12] and 0.5 < one["by_look"][0] < one["chance"] <= 1


def test_a_look_that_cannot_decide_gives_zero():
    """Established, looks 3 and 5: no count of 5 seeds reaches a level of 0.01 (1/32 > 0.01)."""
    rule = MostSeeds("worst", above=0.995)
    record = _record(rule, "established", {"worst": [1.0, 0.16, 1.0]}, looks=(3, 5))
    o = ol.outlook(record, "established")
    assert o["exact"] and o["looks"] == [5] and o["chance"] == 0.0 and o["by_look"] == [0.0]
    claim = {"id": "x.y", "test": "t.py::test_y", "verdict": "inconclusive", "level": "x",
             "rule": record["rule"], "statistics": {**record, "outlook": o}}  # fmt: skip
    assert outlook_line(claim).startswith("No remaining planned look can decide it")
    at_cap = _record(Typical("v", above=0), "likely", {"v": [0.1, -0.2] * 6})
    o = ol.outlook(at_cap, "likely")
    assert at_cap["decision"] is None and o["looks"] == [] and o["chance"] == 0.0
    flat = _record(Matches("a", "b", margin=0.1), "likely", {"a": [1.0] * 3, "b": [1.0] * 3})
    assert ol.outlook(flat, "likely")["no_spread"] and ol.outlook(flat, "likely")["chance"] == 0


def _open_claim():
    record = _record(Typical("v", above=0), "likely", {"v": [0.02, 0.5, -0.1]})
    record["outlook"] = ol.outlook(record, "likely")
    return record


def test_cached_runs_are_not_charged():
    record = _open_claim()
    paid = {0: 30.0, 1: 30.0, 2: 30.0}
    runs_of = {s: {("lm", s), ("probe", s)} for s in range(3, 12)}
    cost = {"lm": 25.0, "probe": 5.0}
    cached = {("lm", 3), ("probe", 3), ("lm", 4)}
    out = cap_cost(record, paid, {0, 1, 2}, runs_of, lambda r: cost[r[0]], cached.__contains__)
    assert out["runs"] == 18 and out["cached"] == 3
    assert out["cpu_s"] == 9 * 30 - 30 - 25  # only the 15 runs not in the cache
    assert out["budget"] == 3.0  # 270 committed seconds past the first look, over its 90
    assert cap_cost(record, paid, {0, 1, 2}, {}, lambda r: 1.0, cached.__contains__) is None


def test_the_page_gives_chance_cpu_and_command_and_the_results_file_keeps_them(tmp_path):
    record = _open_claim()
    record["to_cap"] = {"runs": 9, "cached": 2, "cpu_s": 210.0, "budget": 3.0}
    claim = {"id": "doc.v", "test": "tests/claims/test_doc.py::test_v", "level": "likely",
             "verdict": "inconclusive", "rule": record["rule"], "statistics": record,
             "instances": [], "source": {"id": "doc"}}  # fmt: skip
    view = evidence_view(claim)
    chance = ol.percent(record["outlook"]["chance"])
    assert view.needed.startswith(f"A {chance} chance that its remaining planned looks")
    assert "about 3.5 CPU-minutes of training, for the 7 training runs not in" in view.needed
    assert view.command == 'nox -s claims -- "tests/claims/test_doc.py::test_v" --budget 3'
    assert view.outlook.startswith(f"{chance} chance that its planned looks decide it by its")
    assert "chance that its planned looks decide it by its cap of 12" in view.summary
    path = write_results(
        tmp_path,
        {"seeds": [0, 1, 2], "argv": [], "started": "2026-12-06T00:00:00+00:00"},
        [claim],
        None,
    )
    back = load_results(path)["claims"][0]["statistics"]
    assert back["outlook"] == json.loads(json.dumps(record["outlook"]))
    assert back["to_cap"] == record["to_cap"]


def test_a_stand_ins_outlook_names_its_own_verdicts():
    """A claim run on a stand-in is observed or not observed, never refuted: its outlook says
    so; the same record without the stand-in says supported or refuted."""
    rule = Beats("a", "b", "lower")
    record = _record(rule, "likely", {"a": [1.0, 1.3, 0.8], "b": [1.1, 1.0, 1.2]})
    assert record["decision"] is None
    record["outlook"] = ol.outlook(record, "likely")
    plain = outlook_text({"statistics": record})
    assert "supported " in plain and "refuted " in plain
    standing = outlook_text({"statistics": record, "stand_in": "a small model"})
    assert "observed " in standing and "not observed " in standing and "refuted" not in standing
