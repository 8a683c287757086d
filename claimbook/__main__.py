"""Command line over stored results; it never runs an experiment.

python -m claimbook render   write the site's Markdown and figures into reports/
python -m claimbook gate     exit 1 if the newest run has a gating verdict or a regression
                             against the baseline (each printed with the rule that fired)
python -m claimbook merge F… merge the results files of a sharded run (--shard I/N) into the
                             results of the whole run, compared with the baseline
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from pathlib import Path

from claimbook.baseline import BaselineError, compare, diff_table, load_baseline
from claimbook.history import History
from claimbook.merge import merge_shards
from claimbook.results import (
    ResultsError,
    latest_results,
    load_results,
    previous_results,
    write_results,
)
from claimbook.table import verdict_table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m claimbook",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="render results into the MkDocs docs_dir")
    render.add_argument(
        "--out", type=Path, default=Path("reports"), help="docs_dir (default: reports)"
    )
    render.add_argument("--templates", type=Path, default=Path("templates"))
    render.add_argument(
        "--history",
        type=Path,
        default=Path("reports/history.sqlite"),
        help="run history for trends (default: reports/history.sqlite; skipped if absent)",
    )
    render.add_argument(
        "--repo-url",
        default=os.environ.get("CLAIMBOOK_REPO_URL", ""),
        help="link tests to <repo-url>/blob/<commit>/<file>#L<line> (default: $CLAIMBOOK_REPO_URL)",
    )
    gate = commands.add_parser("gate", help="exit 1 if the newest run has a gating verdict")
    merge = commands.add_parser("merge", help="merge the shards' results files into one run")
    merge.add_argument("files", nargs="+", type=Path, help="one results file per shard")
    merge.add_argument(
        "--baseline",
        type=Path,
        default=Path("reports/baseline.json"),
        help="compare the merged run with this baseline (default: reports/baseline.json)",
    )
    merge.add_argument(
        "--history",
        type=Path,
        default=Path("reports/history.sqlite"),
        help="append the merged run to this history (default: reports/history.sqlite)",
    )
    merge.add_argument(
        "--results-dir",
        type=Path,
        default=Path("reports/results"),
        help="write the merged results file here (default: reports/results)",
    )
    for sub in (render, gate):
        sub.add_argument("--results", type=Path, help="results file (default: the newest run)")
        sub.add_argument("--results-dir", type=Path, default=Path("reports/results"))
    args = parser.parse_args(argv)
    try:
        if args.command == "merge":
            return _merge(args)
        # the site shows the newest run of the whole suite; the gate judges the newest run
        full = args.command == "render"
        path = args.results or latest_results(args.results_dir, full=full)
        if args.command == "gate":
            return _gate(load_results(path), path)
        from claimbook.render import render_site  # matplotlib: only the render command needs it

        previous = previous_results(args.results_dir, path)
        store = Path(os.environ.get("CLAIMBOOK_CACHE_DIR") or ".claimbook-cache") / "figures"
        written = render_site(
            path, args.out, args.templates, previous, args.repo_url, args.history, store,
            args.out / "bench.json",
        )  # fmt: skip
    except ResultsError as exc:
        print(f"claimbook: {exc}", file=sys.stderr)
        return 2
    print(f"claimbook: rendered {len(written)} files from {path} into {args.out}/")
    return 0


def _merge(args) -> int:
    """Merge, compare with the baseline, write the results file, and append the history."""
    results = merge_shards(args.files)
    try:
        baseline = load_baseline(args.baseline)
        comparison = None
        if baseline is not None:
            comparison = compare(baseline, results)
            comparison.update(
                baseline=str(args.baseline), baseline_commit=baseline.get("commit"), accepted=False
            )
    except BaselineError as exc:
        comparison = {"error": str(exc)}
    run, claims = results["run"], results["claims"]
    broken = bool(comparison and (comparison.get("error") or comparison.get("regressions")))
    run["baseline_update"] = None
    run["exit_status"] = int(any(c["gates"] for c in claims) or broken)
    path = write_results(args.results_dir, run, claims, comparison)
    try:
        history = History(args.history, print)
        history.append({"run": run, "claims": claims}, path.name)
        history.close()
    except (OSError, sqlite3.Error) as exc:
        print(f"claimbook: history not updated: {exc}")
    for line in verdict_table(claims):
        print(line)
    shards = ", ".join(f"{s['shard']} ({s['claims']} claims)" for s in run["shards"])
    print(f"claimbook: merged {len(run['shards'])} shards [{shards}] into {path}")
    return 0


def _gate(results: dict, path: Path) -> int:
    gating = [c for c in results["claims"] if c["gates"]]
    for c in gating:
        print(f"claimbook: GATE FAILED: {c['id']} [{c['level']}] is {c['verdict']}: {c['note']}")
        for inst in c["instances"]:
            if inst.get("replay"):
                print(f"    {inst['outcome']}: {inst['replay']}")
    comparison = results.get("comparison")
    failed = bool(gating)
    update = results["run"].get("baseline_update")
    if update and update != "written":
        print(f"claimbook: GATE FAILED: {update}")
        failed = True
    if comparison and comparison.get("error"):
        print(f"claimbook: GATE FAILED: baseline unreadable: {comparison['error']}")
        failed = True
    elif comparison:
        print(f"claimbook: against {comparison['baseline']}:")
        for line in diff_table(comparison):
            print(f"    {line}")
        if comparison["regressions"] and not comparison["accepted"]:
            rules = sorted({f"{r['claim']} ({r['rule']})" for r in comparison["regressions"]})
            print(f"claimbook: GATE FAILED: regressions: {', '.join(rules)}")
            failed = True
    else:
        print("claimbook: no baseline to compare with (reports/baseline.json)")
    if not failed:
        print(f"claimbook: gate passed ({len(results['claims'])} claims, results {path})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
