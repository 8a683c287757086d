"""Stochastic claims through pytest: the planned looks add seeds only to undecided claims,
within the budget; an explicit --claimbook-seeds list is one fixed look; a rule claim is declared
per seed; a sanity check that fails is an error, never a refutation."""

from __future__ import annotations

from claimbook.judge.evidence import seeds_cell, summary

from tests.unit.conftest import claim_of

VALUES = [0.30, 0.02, 0.40, 0.35, 0.33, 0.31, 0.36, 0.29, 0.30, 0.34, 0.30, 0.30]
TYPICAL = f"""
from claimbook import Typical

VALUES = {VALUES}

@claim(id="doc.gain", level="likely", source=DOC, section="1", rule=Typical("gain", above=0))
def test_gain(seed, measure):
    '''The gain is positive on average over seeds.'''
    measure("gain", VALUES[seed])
"""


def test_an_undecided_claim_gets_its_next_look_and_is_decided_there(claims_project):
    result, data = claims_project(TYPICAL)
    assert result.ret == 0, result.stdout.str()
    stats = claim_of(data, "doc.gain")["statistics"]
    assert [look["n"] for look in stats["looks"]] == [3, 5]
    assert (stats["decision"], stats["decided_at"], stats["seeds_used"]) == ("supported", 5, 5)
    assert claim_of(data, "doc.gain")["verdict"] == "supported"
    assert data["run"]["looks"]["extra_instances"] == 2 and data["run"]["partial"] is False
    result.stdout.fnmatch_lines(
        [
            "*planned looks: 1 undecided claims ask for more seeds (2 instances, 0 more training*",
            "*doc.gain: supported at 95% (typical value, 5 seeds, decided at 5)*",
        ]
    )


def test_explicit_seeds_are_one_fixed_look_and_a_partial_run(claims_project):
    result, data = claims_project(TYPICAL, "--claimbook-seeds", "0,1,2")
    stats = claim_of(data, "doc.gain")["statistics"]
    assert stats["looks_planned"] == [3] and stats["adaptive"] is False
    assert stats["per_look_level"] == 0.05  # one look: the claim's alpha itself
    assert data["run"]["partial"] is True
    assert "a fixed sample of seeds, not the planned looks" in result.stdout.str()


def test_a_seed_past_the_first_look_replays_alone(claims_project):
    claims_project(TYPICAL)
    result, data = claims_project(
        TYPICAL, "test_claims.py::test_gain[seed4]", "--claimbook-seeds", "4"
    )
    assert result.ret == 0
    [inst] = claim_of(data, "doc.gain")["instances"]
    assert inst["seed"] == 4
    # one seed is fewer than the first look: its cell says so (it said "0 seeds")
    result, data = claims_project(TYPICAL, "test_claims.py::test_gain[seed0]")
    assert seeds_cell(claim_of(data, "doc.gain")) == "1 seed, no look", result.stdout.str()
    assert seeds_cell(claim_of(claims_project(TYPICAL)[1], "doc.gain")) == "5 seeds"  # looks


def test_a_rule_claim_must_take_seed_not_seeds(claims_project):
    body = """
from claimbook import Typical

@claim(id="doc.all", level="likely", source=DOC, section="1", rule=Typical("v", above=0))
def test_all(seeds, measure):
    '''Reads every seed at once.'''
"""
    result, _ = claims_project(body)
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*test_all: claim marker: a claim decided by a rule over seeds*"])


def test_a_malformed_rule_fails_collection_naming_the_test(claims_project):
    body = """
from claimbook import Matches

@claim(id="doc.eq", level="likely", source=DOC, section="1", rule=Matches("a", "b"))
def test_eq(seed, measure):
    '''Matches with no margin.'''
"""
    result, _ = claims_project(body)
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*test_eq*: claim marker: rule: Matches needs a margin > 0*"])


def test_a_failing_sanity_check_is_an_error_not_a_refutation(claims_project):
    body = TYPICAL.replace(
        'measure("gain", VALUES[seed])', 'measure("gain", VALUES[seed])\n    assert seed != 1'
    )
    result, data = claims_project(body)
    assert result.ret == 1
    claim = claim_of(data, "doc.gain")
    assert claim["verdict"] == "error" and "untested, not refuted" in claim["note"]


def test_the_budget_caps_the_extra_training(claims_project):
    body = """
from claimbook import Training, Typical
from tests.unit.cached_fns import square

VALUES = VALUES_HERE

@claim(id="doc.trained", level="likely", source=DOC, section="1",
       trains=[Training(square, {"x": 2})], rule=Typical("gain", above=0))
def test_trained(runs, seed, measure):
    '''Reads one training run per seed.'''
    runs(square, {"x": 2}, seed)
    measure("gain", VALUES[seed])
""".replace("VALUES_HERE", repr(VALUES))
    result, data = claims_project(body, "--claimbook-budget", "0")
    assert result.ret == 0, result.stdout.str()
    stats = claim_of(data, "doc.trained")["statistics"]
    assert stats["seeds_used"] == 3 and stats["decision"] is None
    assert stats["stopped_by"] == "budget"
    assert data["run"]["looks"]["over_budget"] == ["doc.trained"]
    assert "was not run (budget)" in summary(claim_of(data, "doc.trained"))
    result, data = claims_project(body)  # the default, half the first look's 3 runs: not 2
    assert claim_of(data, "doc.trained")["statistics"]["stopped_by"] == "budget"
    result, data = claims_project(body, "--claimbook-budget", "1")  # as much again: 3 runs
    stats = claim_of(data, "doc.trained")["statistics"]
    assert (stats["decision"], stats["seeds_used"]) == ("supported", 5)
    assert data["run"]["looks"]["extra_runs"] == data["run"]["looks"]["extra_trained"] == 2
    # warm: the same looks, the same verdict, nothing trained
    _, again = claims_project(body, "--claimbook-budget", "1")
    assert claim_of(again, "doc.trained")["statistics"]["seeds_used"] == 5
    assert again["run"]["looks"]["extra_runs"] == 2 and again["run"]["looks"]["extra_trained"] == 0


def test_the_measurements_export_as_one_tidy_table(claims_project, pytester):
    import pandas as pd
    from claimbook.__main__ import main

    claims_project(TYPICAL)
    results = sorted((pytester.path / "reports" / "results").glob("run-*.json"))[-1]
    target = pytester.path / "m.csv"
    assert main(["export", "--results", str(results), "--csv", str(target)]) == 0
    table = pd.read_csv(target)
    assert list(table.columns[:5]) == ["claim", "params", "seed", "measure", "value"]
    assert table["seed"].tolist() == [0, 1, 2, 3, 4]  # the planned looks' seeds
    assert table["value"].tolist() == VALUES[:5]


def test_a_rule_that_cannot_decide_within_its_cap_is_flagged_at_collection(claims_project):
    body = TYPICAL.replace('Typical("gain", above=0)', 'MostSeeds("gain", above=0, share=0.9)')
    body = body.replace("from claimbook import Typical", "from claimbook import MostSeeds")
    result, _ = claims_project(body, "--collect-only")
    result.stdout.fnmatch_lines(["*doc.gain: inconclusive by design: even 12 successes*"])


def test_a_named_test_keeps_its_planned_looks(claims_project):
    """Its page's replay command (the whole test) reaches the suite's verdict."""
    _, data = claims_project(TYPICAL, "test_claims.py::test_gain")
    stats = claim_of(data, "doc.gain")["statistics"]
    assert (stats["decision"], stats["seeds_used"]) == ("supported", 5)


def test_a_counterexample_prints_its_replay_command(claims_project):
    body = TYPICAL.replace('Typical("gain", above=0)', 'Universal("gain", above=0.1)')
    body = body.replace("from claimbook import Typical", "from claimbook import Universal")
    result, data = claims_project(body)
    assert result.ret == 1
    claim = claim_of(data, "doc.gain")
    assert claim["verdict"] == "refuted" and claim["statistics"]["counterexamples"] == [1]
    assert 'python -m pytest "test_claims.py::test_gain[seed1]" --claimbook-seeds 1' in summary(
        claim
    )


def test_a_rule_measure_no_seed_measured_is_named(claims_project):
    _, data = claims_project(TYPICAL.replace('measure("gain"', 'measure("gian"'))
    claim = claim_of(data, "doc.gain")
    assert claim["verdict"] == "error" and "not measured: seed 0: 'gain'" in claim["note"]
    assert claim["statistics"] is None  # untested: no estimate, no q-value


def test_one_seed_missing_a_rule_measure_makes_the_claim_an_error(claims_project):
    """Dropping the seed would shift every later look onto other seeds."""
    body = TYPICAL.replace(
        'measure("gain", VALUES[seed])', 'if seed != 1:\n        measure("gain", VALUES[seed])'
    )
    _, data = claims_project(body)
    claim = claim_of(data, "doc.gain")
    assert claim["verdict"] == "error" and "(not measured: seed 1: 'gain')" in claim["note"]


def test_a_seed_trained_for_another_claim_is_read_and_its_counterexample_refutes(claims_project):
    """doc.open asks for seeds up to 12; doc.every, supported at 3 seeds, reads them too (their
    run is trained already) and seed 6 fails it: refuted, with that counterexample."""
    body = """
from claimbook import Training, Typical, Universal
from tests.unit.cached_fns import square

OPEN = [0.1, -0.1, 0.12, -0.09, 0.11, -0.1, 0.1, -0.1, 0.1, -0.11, 0.1, -0.1]
EVERY = [1.0, 1.01, 0.99, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0]

@claim(id="doc.open", level="likely", source=DOC, section="1",
       trains=[Training(square, {"x": 2})], rule=Typical("gain", above=0))
def test_open(runs, seed, measure):
    '''An undecided claim that asks for more seeds.'''
    runs(square, {"x": 2}, seed)
    measure("gain", OPEN[seed])

@claim(id="doc.every", level="likely", source=DOC, section="1",
       trains=[Training(square, {"x": 2})], rule=Universal("v", above=0))
def test_every(runs, seed, measure):
    '''Positive in every seed.'''
    runs(square, {"x": 2}, seed)
    measure("v", EVERY[seed])
"""
    result, data = claims_project(body, "--claimbook-budget", "3")
    assert result.ret == 1, result.stdout.str()  # a refuted likely claim fails the run
    every = claim_of(data, "doc.every")
    assert every["verdict"] == "refuted"
    assert every["statistics"]["counterexamples"] == [6]
    assert "seed 6" in every["statistics"]["reversal"]
    assert claim_of(data, "doc.open")["statistics"]["seeds_used"] == 12
    assert data["run"]["looks"]["free_instances"] == 9
