"""A claim's verdict from all its instances and its evidence level.

| level       | holds when                                                   | gates |
| ----------- | ------------------------------------------------------------ | ----- |
| established | every instance passes (every seed, every parameter)          | yes   |
| likely      | for every parameter combination, a strict majority of seeds  | yes   |
| speculative | as likely, reported only                                     | no    |

Whatever the level, an instance that crashed makes the verdict ``error`` (never
``refuted``), and an error always gates. A claim declared an erratum is
expected to be refuted: then its verdict is ``erratum`` and it does not gate;
if it holds instead, the verdict is ``fixed`` and it gates until the erratum
mark is removed (a strict expected failure).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

HOLDS, REFUTED, ERROR, SKIPPED, ERRATUM, FIXED = (
    "holds",
    "refuted",
    "error",
    "skipped",
    "erratum",
    "fixed",
)
VERDICTS = (HOLDS, REFUTED, ERRATUM, FIXED, ERROR, SKIPPED)
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


def _holds_by_level(level: str, ran: list[Instance]) -> bool:
    if level == "established":
        return all(i.outcome == PASSED for i in ran)
    groups = defaultdict(list)  # parameter combination -> outcomes over seeds
    for i in ran:
        groups[json.dumps(i.params, sort_keys=True)].append(i.outcome == PASSED)
    return all(sum(ok) * 2 > len(ok) for ok in groups.values())


def decide(
    level: str, instances: list[Instance], erratum: str = "", complete: bool = True
) -> Verdict:
    """Decide a claim's verdict. Raises ValueError for an unknown level.

    ``complete`` says the run had at least the evidence an erratum was found
    with (the default seeds, every instance): only then can an erratum that
    holds be called ``fixed``; a subset that holds says nothing about it.
    """
    if level not in ("established", "likely", "speculative"):
        raise ValueError(f"unknown evidence level {level!r}")
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
    holds = _holds_by_level(level, ran)
    failing = [s for s in ran_seeds if s not in passed_seeds]
    note = ""
    if level == "established" and failing and passed_seeds:
        note = f"fails in seed(s) {', '.join(map(str, failing))} only; established needs every seed"
    elif level in ("likely", "speculative") and ran_seeds and not passed_seeds:
        note = "holds in no seed"
    if erratum:
        if holds and complete:
            return verdict(FIXED, True, "declared an erratum, but the claim now holds")
        if holds:
            return verdict(ERRATUM, False, "holds in this subset of seeds; " + erratum)
        return verdict(ERRATUM, False, erratum)
    if holds:
        return verdict(HOLDS, False, note)
    return verdict(REFUTED, level != "speculative", note)
