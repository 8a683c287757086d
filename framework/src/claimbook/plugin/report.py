"""The terminal summary of a claims session: verdicts, counts, the diff against the
baseline, then, last, each failing claim's reason in one line with one command that replays
it, and one closing line that states the run's outcome. (Each failing instance's own
command is on its claim's page.)"""

from __future__ import annotations

from claimbook.plugin.options import option
from claimbook.plugin.phases import leg_summary
from claimbook.render.table import (
    FAILING,
    diff_table,
    evidence_lines,
    failing_lines,
    verdict_table,
)


def _counts(claims) -> str:
    """Runs computed and read, and claim instances executed and replayed."""
    cache, training = claims.cache, claims.training
    workers = training.workers if training else 0
    where = f" in {workers} processes" if workers > 1 else ""
    once = ""
    if cache.computed:  # a key computed twice would leave fewer keys than computations
        once = " (each once)" if cache.computed == len(cache.fresh) else " (SOME TWICE)"
    reused = len(claims.replays)
    why = " (nothing they depend on changed)" if reused else ""
    skips = getattr(claims, "skips", 0)
    skipped = f" ({skips} of them skipped: a skip is never stored)" if skips else ""
    return (
        f"training runs: {cache.computed} computed{where}{once}, {cache.read} reads from the "
        "cache (a computed run is read back from it too); "
        f"claim tests: {claims.executed} executed{skipped}, {reused} reused from an earlier "
        f"run{why}"
    )


def terminal_summary(claims, tr) -> None:
    if claims.leg is not None:
        tr.section("claimbook training leg")
        for line in leg_summary(claims):
            tr.write_line(line)
        return
    outcome = claims.outcome
    if outcome is None:
        return  # no claim here: a plain pytest session
    width = max(tr._tw.fullwidth, 120)
    if claims.claims:
        tr.section("claimbook verdicts")
        for line in verdict_table(claims.claims, width=width):
            tr.write_line(line)
        evidence = evidence_lines(claims.claims, width=width)
        if evidence:
            tr.write_line("")
            tr.write_line(
                "evidence of the claims decided over seeds (alpha 0.01 established, 0.05 likely):"
            )
            for line in evidence:
                tr.write_line("  " + line)
    elif option(claims.config, "shard"):
        shard = "/".join(map(str, option(claims.config, "shard")))
        tr.write_line(
            f"shard {shard} holds none of the selected claim instances; its empty results: "
            f"{claims.results_path} (merge it with the others)"
        )
    tr.write_line("")
    tr.write_line(_counts(claims))
    reused = sorted({i["replayed"]["measured_at"] for c in claims.claims for i in c["instances"]
                     if i.get("replayed")})  # fmt: skip
    if reused:
        tr.write_line(f"reused values were measured between {reused[0]} and {reused[-1]}")
    for line in claims.claim_cache.problems:
        tr.write_line(line)
    if claims.results_path:
        tr.write_line(f"results: {claims.results_path}")
    for line in claims.messages:
        tr.write_line(line)
    comparison = claims.comparison
    if comparison and not comparison.get("error"):
        accepted = " (accepted: baseline rewritten)" if comparison.get("accepted") else ""
        tr.section(f"claimbook regressions against {comparison['baseline']}{accepted}")
        for line in diff_table(comparison, width=width):
            tr.write_line(line)
    if not outcome.complete:
        tr.write_line("partial run: " + "; ".join(outcome.partial_reasons)
                      + " (the gate judges it; the site keeps the last complete run)")  # fmt: skip
    for line in outcome.warnings:
        tr.write_line("warning: " + line, yellow=True)
    failing = failing_lines(claims.claims)
    if failing:  # last, above the closing line: why each failed, and how to replay it
        tr.write_line(FAILING)
        for line in failing:
            tr.write_line(line)
    last = outcome.last_line(len(claims.claims))
    tr.write_line(last, red=outcome.failed, bold=outcome.failed, green=not outcome.failed)


def progress(config, text: str) -> None:
    """Print a progress line now, even while the test's output is captured."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:  # e.g. an xdist worker
        return
    if capture is None:
        reporter.write_line(text)
        return
    with capture.global_and_fixture_disabled():
        reporter.ensure_newline()
        reporter.write_line(text)
