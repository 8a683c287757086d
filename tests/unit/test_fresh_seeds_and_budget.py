"""Rules declared after data run on fresh seeds alone; the budget goes, in CPU-seconds of the
committed durations, to the claims likeliest to decide per CPU-second; a run never rewrites
the committed durations; a measure that does not vary with the seed decides nothing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from claimbook.declare.design import Typical
from claimbook.judge.outlook import next_look_chance
from claimbook.judge.sequential import judge_rule
from claimbook.render.evidence_view import evidence_view
from claimbook.runs.deepen import plan_looks
from claimbook.runs.plan import estimate

from tests.unit.conftest import claim_of

FRESH = """
from claimbook import Typical

@claim(id="doc.fresh", level="likely", source=DOC, section="1",
       rule=Typical("gain", above=0, fresh=1000, seen="seeds 0-2, whose gains were all -1"))
def test_fresh(seed, measure):
    '''The gain is positive on average over seeds.'''
    measure("gain", 0.3 + 0.01 * (seed % 5) if seed >= 1000 else -1.0)
"""


def test_a_rule_declared_after_data_reads_only_fresh_seeds(claims_project):
    result, data = claims_project(FRESH)
    assert result.ret == 0, result.stdout.str()
    claim = claim_of(data, "doc.fresh")
    stats = claim["statistics"]
    assert stats["values"]["seed"] == [1000, 1001, 1002]  # seeds 0-2 (seen) are never read
    assert (stats["decision"], claim["verdict"]) == ("supported", "supported")
    assert stats["rule"]["fresh"] == 1000
    facts = dict(evidence_view(claim).facts)
    assert (
        "seeds 1000-1011: no training of them was in the training cache, run history or "
        "baseline when this rule first read them (the run started "
    ) in facts["declared after data"]
    assert "whose gains were all -1" in facts["declared after data"]


def test_fresh_seeds_without_saying_what_was_seen_fail_collection(claims_project):
    body = FRESH.replace(', seen="seeds 0-2, whose gains were all -1"', "")
    result, _ = claims_project(body)
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*test_fresh*claim marker: rule: a rule declared after data*"])


def test_the_budget_serves_the_likeliest_decision_per_cpu_second_first():
    cost = {"a": 10.0, "b": 100.0, "c": 30.0, "shared": 50.0}.__getitem__
    wants = {"cheap": {"a"}, "dear": {"b"}, "mid": {"c"}, "free": {"shared"}}
    chance = {"cheap": 0.2, "dear": 0.9, "mid": 0.8, "free": 0.01}
    plan = plan_looks(wants, {"shared"}, 45.0, cost, chance)
    # free first (nothing to add); mid 0.8/30 beats cheap 0.2/10; dear does not fit: left
    assert plan.chosen == ["free", "mid", "cheap"] and plan.over_budget == ["dear"]
    assert plan.seconds == 40.0 and plan.runs == {"a", "c"}
    again = plan_looks(dict(reversed(wants.items())), {"shared"}, 45.0, cost, chance)
    assert again.chosen == plan.chosen  # the order of the asks does not matter


def test_the_budget_ranks_by_the_chance_the_next_look_decides():
    """The first entry of the claim's outlook (cumulative by look), 0 without one."""
    assert next_look_chance({"outlook": {"by_look": [0.25, 0.5, 0.9]}}) == 0.25
    assert next_look_chance({"outlook": {"by_look": [0.0, 0.31]}}) == 0.0  # cannot decide yet
    assert next_look_chance({"outlook": None}) == next_look_chance({}) == 0.0


def test_a_run_costs_its_configurations_committed_seconds_at_other_seeds():
    recorded = {"f(x=1) seed 0": 10.0, "f(x=1) seed 1": 20.0, "f(x=2) seed 0": 99.0}
    assert estimate("f(x=1) seed 1000", "f", recorded, 60.0) == 15.0
    assert estimate("f(x=3) seed 0", "f", recorded, 60.0) == (10 + 20 + 99) / 3
    assert estimate("g() seed 0", "g", recorded, 60.0) == 60.0


def test_a_run_leaves_the_committed_durations_alone(claims_project, pytester):
    body = """
from claimbook import Training
from tests.unit.cached_fns import square

@claim(id="doc.trained", level="likely", source=DOC, section="1",
       trains=[Training(square, {"x": 2})])
def test_trained(runs, seed, measure):
    '''Reads one training run.'''
    assert runs(square, {"x": 2}, seed) is not None
"""
    durations = pytester.path / "reports" / "durations.json"
    durations.parent.mkdir(exist_ok=True)
    text = json.dumps({"schema": "claimbook.durations/1", "seconds": {"square(x=2) seed 0": 1}})
    durations.write_text(text)
    result, _ = claims_project(body)
    assert result.ret == 0, result.stdout.str()
    assert durations.read_text() == text


def test_a_measure_the_same_in_every_seed_decides_nothing():
    frame = pd.DataFrame({"gain": [0.5, 0.5, 0.5]}, index=[0, 1, 2])
    record = judge_rule(Typical("gain", above=0), "likely", frame, (3, 5, 8, 12))
    assert record["decision"] is None and record["no_spread"] and record["futile"]
    assert record["next_look"] is None
    varied = frame.assign(gain=np.array([0.5, 0.51, 0.49]))
    assert judge_rule(Typical("gain", above=0), "likely", varied, (3, 5))["decision"] == "supported"


def test_the_durations_command_records_the_caches_seconds(tmp_path):
    from claimbook.storage import durations

    folder = tmp_path / "cache" / "train_x"
    folder.mkdir(parents=True)
    for name, label, seconds in (("a", "train_x(k=1) seed 0", 10.0),
                                 ("b", "train_x(k=1) seed 0", 12.0),
                                 ("c", "train_x(k=1) seed 1", 30.0)):  # fmt: skip
        (folder / f"{name}.json").write_text(json.dumps({"label": label, "seconds": seconds}))
    (folder / "broken.json").write_text("{")
    measured = durations.from_cache(tmp_path / "cache")
    assert measured == {"train_x(k=1) seed 0": 12.0, "train_x(k=1) seed 1": 30.0}
    out = tmp_path / "durations.json"
    assert durations.update(out, measured) == 2
    assert durations.load(out) == measured
