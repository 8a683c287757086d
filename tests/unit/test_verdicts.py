import pytest
from claimbook.judge.verdicts import Instance, decide


def seeded(*outcomes, params=None):
    return [Instance(seed, params or {}, o) for seed, o in enumerate(outcomes)]


P, F, E, S = "passed", "failed", "error", "skipped"


@pytest.mark.parametrize(
    ("level", "instances", "verdict", "gates", "passed"),
    [
        ("established", seeded(P, P, P), "holds", False, 3),
        ("established", seeded(P, F, P), "refuted", True, 2),
        # deterministic at any level: one failing input refutes (a counterexample)
        ("likely", seeded(P, F, P), "refuted", True, 2),
        ("likely", seeded(F, F, P), "refuted", True, 1),
        ("speculative", seeded(F, F, F), "refuted", False, 0),
        ("speculative", seeded(P, E, P), "error", True, 2),
        ("established", seeded(P, E, F), "error", True, 1),
        ("likely", seeded(S, S, S), "skipped", False, None),
    ],
)
def test_verdict_table(level, instances, verdict, gates, passed):
    v = decide(level, instances)
    total = None if passed is None else len(instances)
    assert (v.verdict, v.gates, v.seeds_passed, v.seeds_total) == (verdict, gates, passed, total)


def test_a_deterministic_claim_needs_every_input_at_any_level():
    good = seeded(P, P, P, params={"n": 1})
    bad = seeded(P, P, F, params={"n": 2})
    assert decide("likely", good).verdict == "holds"
    assert decide("likely", good + bad).verdict == "refuted"


def test_the_failing_inputs_are_named():
    assert "seed(s) 1" in decide("established", seeded(P, F, P)).note
    assert decide("likely", seeded(F, F, F)).note == "holds for no input seed"


def test_unseeded_claims_have_no_seed_count():
    v = decide("established", [Instance(None, {"n": 1}, P), Instance(None, {"n": 2}, P)])
    assert (v.verdict, v.seeds_passed, v.seeds_total) == ("holds", None, None)


def test_an_erratum_is_a_strict_expected_failure():
    assert decide("established", seeded(P, F, P), erratum="why").verdict == "erratum"
    assert decide("established", seeded(P, F, P), erratum="why").gates is False
    fixed = decide("established", seeded(P, P, P), erratum="why")
    assert (fixed.verdict, fixed.gates) == ("fixed", True)
    subset = decide("established", seeded(P), erratum="why", complete=False)
    assert (subset.verdict, subset.gates) == ("erratum", False)


def test_unknown_level_is_rejected():
    with pytest.raises(ValueError, match="unknown evidence level"):
        decide("certain", seeded(P))


def test_a_known_refutation_stays_refuted_never_gates_and_gates_once_it_holds():
    from claimbook.judge.verdicts import known

    refuted = decide("likely", [Instance(0, {}, "failed"), Instance(1, {}, "passed")])
    assert refuted.verdict == "refuted" and refuted.gates
    kept = known(refuted, "refuted at 4 layers; the text speaks of 24")
    assert kept.verdict == "refuted" and not kept.gates  # never turned into a pass
    assert "refuted, and known: refuted at 4 layers" in kept.note
    holds = decide("likely", [Instance(0, {}, "passed")])
    now = known(holds, "why")
    assert now.verdict == "holds" and now.gates and "declared known_refuted, but" in now.note
    assert not known(holds, "why", complete=False).gates  # a subset says nothing of it
    assert known(refuted, "") == refuted  # undeclared: untouched


def test_a_stand_in_is_observed_or_not_observed_never_refuted_and_never_gates():
    """A claim run on a stand-in that cannot show the sentence (stand_in=): a failing rule is
    "not observed", a holding one "observed"; neither gates. An error still gates, and an
    undecided rule stays inconclusive."""
    from claimbook.judge.verdicts import NEGATIVE, POSITIVE, decide_statistical, stand_in

    why = "a 4-layer model for a statement about BERT"
    refuted = decide("likely", seeded(F, F, P))
    assert (refuted.verdict, refuted.gates) == ("refuted", True)
    seen = stand_in(refuted, why)
    assert (seen.verdict, seen.gates) == ("not observed", False)
    assert "the rule fails on a stand-in: a 4-layer model" in seen.note
    assert seen.verdict not in (*NEGATIVE, *POSITIVE)  # never refuted, never holding
    assert stand_in(decide("likely", seeded(P, P)), why).verdict == "observed"
    stats = {"seeds_used": 3, "seeds_available": 3, "decision": "refuted"}
    rule = stand_in(decide_statistical("likely", seeded(P, P, P), stats), why)
    assert (rule.verdict, rule.gates) == ("not observed", False)
    crashed = stand_in(decide("likely", seeded(P, E, P)), why)
    assert (crashed.verdict, crashed.gates) == ("error", True)
    open_ = {**stats, "decision": None}
    assert stand_in(decide_statistical("likely", seeded(P), open_), why).verdict == "inconclusive"
    assert stand_in(refuted, "") == refuted  # undeclared: untouched
