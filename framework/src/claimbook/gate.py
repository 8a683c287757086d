"""``python -m claimbook gate``: a run's outcome decided again from the facts it recorded,
each reason printed; on GitHub Actions also a Markdown summary of the run for its page.

When ``$GITHUB_STEP_SUMMARY`` names a file (GitHub sets it in every step), the gate
appends to it: whether the run passed and why not, what changed against the baseline (or,
without one, or when this run rewrote it, the previous complete run beside it), the new
errata and counterexamples, and the claims left inconclusive (:mod:`claimbook.judge.diff`).
Several steps append to that file, so it is never truncated; a failed write is a warning.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from claimbook.coverage import cli as coverage_cli
from claimbook.coverage.catalog import NARROWED
from claimbook.judge.diff import Diff, diff_claims, markdown_lines, md
from claimbook.judge.outcome import Facts, Outcome, decide_run
from claimbook.render.table import FAILING, diff_table, failing_lines
from claimbook.storage.baseline import BaselineError, load_baseline
from claimbook.storage.receipts import receipt_mismatch, write_decision
from claimbook.storage.results import ResultsError, load_results, previous_results

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
# a run that collected only part of the claims folder (plugin/selection.py's restrictions)


def gate(results: dict, path: Path, args=None) -> int:
    """Decide the run's outcome again from the facts it recorded; print why; 0 if it passed.

    With ``--receipt R``, the results file must be the one R's run wrote: their run ids
    agree (:func:`claimbook.storage.receipts.receipt_mismatch`). With
    ``--coverage-fail-under P``, the coverage maps must also pass (see
    :func:`claimbook.coverage.cli.gate_coverage`)."""
    run, claims, comparison = results["run"], results["claims"], results.get("comparison")
    receipt = getattr(args, "receipt", None)
    reason = receipt_mismatch(receipt, path, results) if receipt else None
    if reason is None and "facts" not in run:
        reason = f"{path} records no facts of its run"
    if reason is None and run.get("shard"):  # it carries no verdicts (storage/shards.py)
        reason = f"{path} is a shard's: gate the merge of the shards (python -m claimbook merge)"
    if reason:
        print(f"claimbook: FAILED: {reason}", file=sys.stderr)
        append_summary(failed_summary(reason))
        return 1
    update = (run.get("outcome") or {}).get("baseline_update")
    facts = Facts.from_dict(run["facts"])
    outcome = decide_run(facts, claims, comparison, update=update is not None)
    if update and update != "written":  # a write that failed after the decision
        outcome.failed = True
        outcome.failure_reasons.append(update)
    if comparison and not comparison.get("error"):
        print(f"claimbook: against {comparison['baseline']}:")
        for line in diff_table(comparison):
            print(f"    {line}")
    elif comparison is None:
        print("claimbook: no baseline to compare with")
    if not outcome.complete:
        print("claimbook: partial run: " + "; ".join(outcome.partial_reasons))
    for line in outcome.warnings:
        print(f"claimbook: warning: {line}")
    threshold = getattr(args, "coverage_fail_under", None)
    narrowed = [r for r in facts.restrictions if r.startswith(NARROWED)]
    if threshold is not None and narrowed:
        threshold = None  # its catalog lacks the claims it did not collect
        print(f"claimbook: coverage: not checked: this run collected part of the claims "
              f"folder ({narrowed[0]}); a run of the whole folder is checked, -k selecting "
              "in it")  # fmt: skip
    if threshold is not None:
        for reason in coverage_cli.gate_coverage(results, args.maps, threshold, args.sources_dir):
            outcome.failed = True
            outcome.failure_reasons.append(
                f"coverage (--coverage-fail-under {threshold:g}): {reason}"
            )
    try:  # the site shows this decision (render reads it beside the results file)
        write_decision(path, results, outcome.failed, outcome.failure_reasons)
    except (OSError, ValueError) as exc:
        print(f"claimbook: warning: the gate's decision could not be kept beside {path} ({exc});"
              " the site will say the run was not gated")  # fmt: skip
    print(f"claimbook: results {path}")
    failing = failing_lines(claims)
    if failing:  # last, above the closing line: why each failed, and how to replay it
        print(f"claimbook: {FAILING}")
        for line in failing:
            print(f"    {line}")
    print(outcome.last_line(len(claims)))
    if os.environ.get(SUMMARY_ENV):
        baseline = getattr(args, "baseline", None)
        append_summary(run_summary(outcome, results, path, against(results, path, baseline)))
    return 1 if outcome.failed else 0


def against(results: dict, path: Path, baseline: Path | None) -> Diff | None:
    """The run against the baseline, unless there is none or this run rewrote it; then
    against the previous complete run in the same folder; None with neither."""
    rewritten = (results["run"].get("outcome") or {}).get("baseline_update") == "written"
    if baseline is not None and not rewritten:
        try:
            reference = load_baseline(baseline)
        except BaselineError:
            reference = None  # the gate's reasons say it is unreadable
        if reference is not None:
            return diff_claims(reference, results, f"the baseline {_shown(baseline)}", "this run")
    previous = previous_results(Path(path).parent, path)
    if previous is None:
        return None
    try:
        older = load_results(previous)
    except ResultsError:
        return None
    return diff_claims(older, results, f"the previous run {previous.name}", "this run")


def _shown(path: Path) -> str:
    """``path`` relative to the working directory where it lies inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_summary(outcome: Outcome, results: dict, path: Path, diff: Diff | None) -> str:
    """The Markdown summary of a gated run (see the module docstring)."""
    book = results["run"].get("book") or "claimbook"
    claims = len(results["claims"])
    if outcome.failed:
        lines = [f"## {md(book)}: failed", "", f"The gate failed ({claims} claims):", ""]
        lines += [f"- {md(reason)}" for reason in outcome.failure_reasons]
        if not outcome.complete:
            lines += ["", f"Partial run: {md('; '.join(outcome.partial_reasons))}"]
    else:  # its line says whether the run is complete
        said = outcome.last_line(claims).removeprefix("claimbook: ")
        lines = [f"## {md(book)}: passed", "", md(said)]
    lines += [f"\nWarning: {md(line)}" for line in outcome.warnings]
    if diff is None:
        lines += ["", "No baseline or earlier complete run to compare with."]
        alone = diff_claims({"claims": []}, results, "", "this run")  # every claim "added"
        diff = Diff("", "this run", inconclusive=alone.inconclusive)
    else:
        lines += ["", f"Compared with {md(diff.old)}:"]
    lines += markdown_lines(diff)
    if not diff.inconclusive:
        lines += ["", "No claim is inconclusive."]
    lines += ["", f"Results: `{Path(path).name}`", ""]
    return "\n".join(lines)


def failed_summary(reason: str) -> str:
    """The summary of a gate that found no results to judge."""
    return f"## claimbook: failed\n\n{md(reason)}\n"


def append_summary(text: str, say=print) -> None:
    """Append ``text`` to ``$GITHUB_STEP_SUMMARY`` when it is set; a failure is a warning."""
    target = os.environ.get(SUMMARY_ENV)
    if not target:
        return
    try:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write("\n" + text.rstrip("\n") + "\n")  # its own block after another's
    except OSError as exc:
        say(f"claimbook: warning: the step summary could not be written to {target} "
            f"({exc.strerror or exc}); the gate's outcome stands")  # fmt: skip
