"""A claim's verdict from all its instances, its rule and its evidence level.

A deterministic claim (no ``rule``: formulas, counts, exact identities) holds when every
instance passes, at any level; any failing instance refutes it (a counterexample). A
stochastic claim is decided by its declared rule over the seeds
(:mod:`claimbook.judge.sequential`): supported, refuted, equivalent, not equivalent or
inconclusive, at alpha 0.01 (established) or 0.05 (likely); speculative claims are
reported and never gate. Inconclusive never gates.

Whatever the level, an instance that crashed makes the verdict ``error`` (never
``refuted``), and an error always gates. A claim declared an erratum is
expected to be refuted: then its verdict is ``erratum`` and it does not gate;
if it holds instead, the verdict is ``fixed`` and it gates until the erratum
mark is removed (a strict expected failure).

A claim declared ``known_refuted`` (a tendency the runs refute at the text's setup, which
its author has seen and keeps) stays ``refuted`` with its reason, and does not gate; once
a complete run no longer refutes it, it gates until the declaration is removed
(:func:`known`).

A claim declared ``stand_in`` (its test runs on a model that cannot show what the sentence
says: a small model for a statement about large pretrained ones) is evidence about that
model, not about the text: a rule that holds there is ``observed``, one that fails is ``not
observed`` (never ``refuted``); neither gates, counts as holding, or as tested in the
coverage (:func:`stand_in`). An error still gates.

A claim declared ``cited`` (a literature result that cannot run here) is never run: its
verdict is ``cited``, which never gates and never counts as holding (it is not in
POSITIVE), whatever its instances say.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

HOLDS, REFUTED, ERROR, SKIPPED, ERRATUM, FIXED = (
    "holds",
    "refuted",
    "error",
    "skipped",
    "erratum",
    "fixed",
)
CITED = "cited"
OBSERVED, NOT_OBSERVED = "observed", "not observed"  # a stand-in's (see the module)
SUPPORTED, EQUIVALENT, NOT_EQUIVALENT, INCONCLUSIVE = (
    "supported",
    "equivalent",
    "not equivalent",
    "inconclusive",
)
VERDICTS = (
    HOLDS, SUPPORTED, EQUIVALENT, REFUTED, NOT_EQUIVALENT, INCONCLUSIVE, ERRATUM, FIXED, ERROR,
    SKIPPED, CITED, OBSERVED, NOT_OBSERVED,
)  # fmt: skip
POSITIVE = (HOLDS, SUPPORTED, EQUIVALENT)
NEGATIVE = (REFUTED, NOT_EQUIVALENT)
PASSED, FAILED = "passed", "failed"  # instance outcomes, besides "error" and "skipped"


@dataclass(frozen=True)
class Instance:
    """One test instance's outcome: ``passed``, ``failed``, ``error`` or ``skipped``."""

    seed: int | None
    params: dict
    outcome: str


@dataclass(frozen=True)
class Verdict:
    """The decision for one claim.

    Attributes:
        verdict: one of VERDICTS.
        gates: True when this verdict fails the session.
        seeds_passed, seeds_total: seeds in which every instance passed, out of
            the seeds run (None for claims that take no seed).
        note: where the measured robustness disagrees with the level, or why
            the claim was skipped or errored.
    """

    verdict: str
    gates: bool
    seeds_passed: int | None
    seeds_total: int | None
    note: str = ""


def decide(
    level: str,
    instances: list[Instance],
    erratum: str = "",
    complete: bool = True,
    cited: str = "",
) -> Verdict:
    """Decide a claim's verdict. Raises ValueError for an unknown level.

    ``complete`` says the run had at least the evidence an erratum was found
    with (the default seeds, every instance): only then can an erratum that
    holds be called ``fixed``; a subset that holds says nothing about it.
    ``cited``: the claim's reference; such a claim is ``cited``, never gating.
    """
    if level not in ("established", "likely", "speculative"):
        raise ValueError(f"unknown evidence level {level!r}")
    if cited:
        return Verdict(CITED, False, None, None, f"a literature result, not run here: {cited}")
    seeds = sorted({i.seed for i in instances if i.seed is not None})
    ran = [i for i in instances if i.outcome != "skipped"]
    ran_seeds = sorted({i.seed for i in ran if i.seed is not None})
    passed_seeds = [s for s in ran_seeds if all(i.outcome == PASSED for i in ran if i.seed == s)]
    seeds_passed = len(passed_seeds) if ran_seeds else None
    seeds_total = len(seeds) if ran_seeds else None

    def verdict(name: str, gates: bool, note: str = "") -> Verdict:
        return Verdict(name, gates, seeds_passed, seeds_total, note)

    if not instances or not ran:
        return verdict(SKIPPED, False, "every instance was skipped")
    if any(i.outcome == "error" for i in ran):
        return verdict(
            ERROR,
            True,
            "an instance errored (it crashed, measured a non-finite value or did not finish): "
            "the claim is untested, not refuted",
        )
    holds = all(i.outcome == PASSED for i in ran)
    failing = [s for s in ran_seeds if s not in passed_seeds]
    note = ""
    if failing and passed_seeds:
        note = (
            f"fails for input seed(s) {', '.join(map(str, failing))}: a deterministic claim "
            "needs every input"
        )
    elif ran_seeds and not passed_seeds:
        note = "holds for no input seed"
    if erratum:
        if holds and complete:
            return verdict(FIXED, True, "declared an erratum, but the claim now holds")
        if holds:
            return verdict(ERRATUM, False, "holds in this subset of seeds; " + erratum)
        return verdict(ERRATUM, False, erratum)
    if holds:
        return verdict(HOLDS, False, note)
    return verdict(REFUTED, level != "speculative", note)


def decide_statistical(
    level: str,
    instances: list[Instance],
    statistics: dict | None,
    erratum: str = "",
    complete: bool = True,
) -> Verdict:
    """Decide a claim with a rule from its instances' outcomes and its statistics record.

    An instance that crashed, or failed an assertion (a rule claim asserts only sanity
    checks of its experiment), makes the claim an ``error``: untested, not refuted.
    """  # fmt: skip
    ran = [i for i in instances if i.outcome != "skipped"]
    used = statistics.get("seeds_used") if statistics else None

    def verdict(name: str, gates: bool, note: str = "") -> Verdict:
        return Verdict(name, gates, None, used, note)

    if not instances or not ran:
        return verdict(SKIPPED, False, "every instance was skipped")
    if any(i.outcome in ("error", FAILED) for i in ran):
        return verdict(
            ERROR,
            True,
            "an instance errored or failed a sanity check (it crashed, measured a non-finite "
            "value, failed an assertion or did not finish): the claim is untested, not refuted",
        )
    if not statistics or not statistics.get("seeds_available"):
        return verdict(ERROR, True, "a seed did not measure every value its rule reads")
    decision = statistics["decision"] or INCONCLUSIVE
    gating = level != "speculative"
    if erratum:
        if decision in NEGATIVE:
            return verdict(ERRATUM, False, erratum)
        if decision == INCONCLUSIVE:
            return verdict(
                INCONCLUSIVE, False,
                "declared an erratum, but these seeds neither refute nor support the claim; "
                + erratum,
            )  # fmt: skip
        if complete:
            return verdict(FIXED, True, f"declared an erratum, but the claim is now {decision}")
        return verdict(ERRATUM, False, f"{decision} in this subset; " + erratum)
    if decision in NEGATIVE:
        return verdict(decision, gating)
    return verdict(decision, False, statistics.get("noisy") or "")  # a timing's real cause


def known(verdict: Verdict, known_refuted: str, complete: bool = True) -> Verdict:
    """``verdict`` of a claim declared ``known_refuted`` (see the module): a refutation stays
    a refutation, named as known, and does not gate; a claim no longer refuted gates, on a
    complete run, until its author removes the declaration."""
    if not known_refuted or verdict.verdict in (ERROR, SKIPPED, CITED):
        return verdict
    if verdict.verdict in NEGATIVE:
        note = "; ".join(filter(None, [verdict.note, f"refuted, and known: {known_refuted}"]))
        return replace(verdict, gates=False, note=note)
    if verdict.verdict in POSITIVE and complete:
        why = (
            f"declared known_refuted, but the claim is now {verdict.verdict}: remove known_refuted"
        )
        return replace(verdict, gates=True, note=why)
    return replace(verdict, note=f"declared known_refuted ({known_refuted}); now {verdict.verdict}")


def stand_in(verdict: Verdict, why: str) -> Verdict:
    """``verdict`` of a claim declared ``stand_in`` (see the module): a rule that holds on the
    stand-in is ``observed``, one refuted there ``not observed``; neither gates. Others
    (inconclusive, error, skipped) are untouched: an error still gates."""
    if not why or verdict.verdict not in (*POSITIVE, *NEGATIVE):
        return verdict
    seen = OBSERVED if verdict.verdict in POSITIVE else NOT_OBSERVED
    said = f"the rule {'holds' if seen == OBSERVED else 'fails'} on a stand-in: {why}"
    note = "; ".join(filter(None, [verdict.note, said]))
    return replace(verdict, verdict=seen, gates=False, note=note)
