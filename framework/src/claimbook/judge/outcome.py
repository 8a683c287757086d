"""Whether a run is complete and whether it fails: decided here, once, from recorded facts.

The plugin at the end of a session, ``python -m claimbook gate`` and the merge of
shards all call :func:`decide_run`, so the exit status, the results file, the gate
and ``--claimbook-update-baseline`` can never disagree.

The facts (``run["facts"]`` of a results file, see :func:`facts`):

- ``suite``: the claim instances the configured claims folder holds at these seeds
  (node ids, before any ``-k``, path or shard narrows them);
- ``selected``: the instances this run set out to run; ``reported``: those that
  finished with an outcome (a run that stopped early reports fewer);
- ``restrictions``: why the selection is narrower than the suite (a path or node
  id, ``-k``, ``-m``, deselection, fewer seeds than the default, a shard);
- ``stopped``: why the session ended early (interrupted, ``-x``, collection errors);
- ``other_failures``: failing tests that are not claims; ``collection_errors``;
- ``unresolved_anchors``: claims' ``at=`` snippets not found exactly once in their source
  text, where the text was available (:func:`claimbook.coverage.check.unresolved_anchors`).

A run is **complete** when it selected the whole suite, reported every instance, and
was not stopped. It **fails** when a claim has a gating verdict, any test failed or
errored (claim or not), it was stopped or lost instances, an ``at=`` anchor is not in its
text, the baseline is unreadable, it regressed against the baseline (unless the run is an
accepted ``--claimbook-update-baseline``), or a requested baseline update was refused. Only a
complete run with no such failure may rewrite the baseline.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

SHARD = "shard "  # the restriction of a shard's run: "shard 1/3 of the suite"


@dataclass
class Facts:
    """What happened in a session, as the plugin (or a merge) recorded it."""

    suite: list[str] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)
    restrictions: list[str] = field(default_factory=list)
    stopped: str = ""
    other_failures: list[str] = field(default_factory=list)
    collection_errors: list[str] = field(default_factory=list)
    unresolved_anchors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Facts:
        return cls(**{k: data.get(k, v) for k, v in asdict(cls()).items()})


@dataclass
class Outcome:
    """The decision: complete or partial (with reasons), failed or not (with reasons)."""

    complete: bool
    partial_reasons: list[str]
    failed: bool
    failure_reasons: list[str]
    baseline_update: str | None  # None (not asked), "written", or why it was refused
    warnings: list[str] = field(default_factory=list)  # reported, never failing

    def to_dict(self) -> dict:
        return asdict(self)

    def last_line(self, claims: int) -> str:
        """The terminal's (and the gate's) closing line."""
        if self.failed:
            return "claimbook: FAILED: " + "; ".join(self.failure_reasons)
        scope = (
            "complete run"
            if self.complete
            else "partial run (" + "; ".join(self.partial_reasons) + ")"
        )
        written = ", baseline rewritten" if self.baseline_update == "written" else ""
        return (
            f"claimbook: passed: {plural(claims, 'claim')}, no gating verdict (no established "
            f"or likely claim refuted, none errored); {scope}{written}"
        )


def plural(count: int, noun: str) -> str:
    """ "1 claim", "2 claims"."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _some(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


WHY = ("error", "fixed")  # verdicts that do not say why they gate: their note does


def gating_reason(claim: dict, limit: int = 200) -> str:
    """ "attn.x (refuted)"; an error or a fixed erratum with its note, which says why."""
    note = claim.get("note") or ""
    if claim["verdict"] not in WHY or not note:
        return f"{claim['id']} ({claim['verdict']})"
    shown = note if len(note) <= limit else note[: limit - 3] + "..."
    return f"{claim['id']} ({claim['verdict']}: {shown})"


def partial_reasons(facts: Facts) -> list[str]:
    """Why the run is not complete (empty when it is)."""
    partial = list(facts.restrictions)
    if facts.stopped:
        partial.append(f"stopped early: {facts.stopped}")
    missing = set(facts.selected) - set(facts.reported)
    if missing:
        partial.append(f"{plural(len(missing), 'selected claim instance')} did not finish")
    unselected = set(facts.suite) - set(facts.selected)
    if unselected and not facts.restrictions:
        partial.append(f"{plural(len(unselected), 'claim instance')} of the suite not selected")
    return partial


def decide_run(
    facts: Facts, claims: list[dict], comparison: dict | None, update: bool = False
) -> Outcome:
    """Decide a run's outcome (see the module docstring)."""
    partial, failures = partial_reasons(facts), []
    missing = sorted(set(facts.selected) - set(facts.reported))
    if facts.collection_errors:  # the cause comes first: the rest follows from it
        failures.append(f"collection errors in {_some(facts.collection_errors)}")
    if facts.stopped:
        failures.append(f"the session stopped early ({facts.stopped})")
    if missing and facts.collection_errors:
        failures.append(f"so {plural(len(missing), 'claim instance')} did not run")
    elif missing:
        failures.append(
            f"{plural(len(missing), 'claim instance')} did not finish: {_some(missing)}"
        )
    sharded = any(r.startswith(SHARD) for r in facts.restrictions)
    if not facts.selected and not sharded:  # an empty shard is fine: the others hold the suite
        failures.append("no claim instance was selected")
    if facts.other_failures:
        others = facts.other_failures
        what = "test that is not a claim" if len(others) == 1 else "tests that are not claims"
        failures.append(f"{len(others)} {what} failed: {_some(others)}")
    if facts.unresolved_anchors:
        anchors = facts.unresolved_anchors
        failures.append(
            f"{plural(len(anchors), 'at= anchor')} not found once in the source text: "
            + _some(anchors, 8)
        )
    gating = [gating_reason(c) for c in claims if c["gates"]]
    if gating:
        failures.append(f"gating verdicts: {_some(gating, 8)}")
    unreadable = comparison.get("error") if comparison else None
    refusal = None
    if update:  # an unreadable baseline (e.g. an older schema) is what an update replaces
        if partial:
            refusal = (
                "--claimbook-update-baseline refused: the run is partial ("
                + "; ".join(partial)
                + ")"
            )
        elif failures:
            refusal = "--claimbook-update-baseline refused: the run failed (the reasons above)"
        if refusal:
            failures.append(refusal)
    if unreadable and (not update or refusal):
        failures.append(f"baseline unreadable: {unreadable}")
    regressions = (comparison or {}).get("regressions") or []
    if regressions and not (update and refusal is None):
        rules = sorted({f"{r['claim']} ({r['rule']})" for r in regressions})
        failures.append(
            f"{plural(len(regressions), 'regression')} against the baseline: {_some(rules, 8)}"
        )
    return Outcome(
        warnings=list((comparison or {}).get("warnings") or []),
        complete=not partial,
        partial_reasons=partial,
        failed=bool(failures),
        failure_reasons=failures,
        baseline_update=None if not update else (refusal or "written"),
    )
