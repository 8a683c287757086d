"""Command line over stored results; it never runs an experiment.

python -m claimbook init [FOLDER]     a new book: pyproject.toml, a source text, three claim
                                      tests, noxfile.py and mkdocs.yml (nothing overwritten)
python -m claimbook render            write the site's Markdown and figures into the docs folder
python -m claimbook site              render, then mkdocs build --strict into site/; each step
                                      skipped when nothing it reads changed
python -m claimbook gate --receipt F  exit 1 unless the run that wrote receipt F passed: its
                                      outcome decided again from its recorded facts, with each
                                      reason and each regression printed (--results FILE names
                                      a results file directly); on GitHub Actions, a summary
                                      of the run appended to $GITHUB_STEP_SUMMARY
python -m claimbook merge F...        merge the results files of a sharded run (--shard I/N)
                                      into the results of the whole run, judged and compared
                                      with the baseline
python -m claimbook durations         record the cache's training seconds in the committed
                                      durations file (runs never rewrite it)
python -m claimbook method            (claimbook's developers) simulate every design again for
                                      the Method page's table
python -m claimbook export --csv F    write a run's measurements as one tidy table (claim,
                                      params, seed, measure, value; --parquet F with pyarrow)
python -m claimbook diff OLD NEW      what changed between two runs (OLD may be the baseline):
                                      verdicts, claims added and gone, new errata and
                                      counterexamples, and the claims inconclusive in NEW
python -m claimbook coverage          the coverage maps (coverage/*.toml) checked against the
                                      source texts and a run's claims: totals per source and
                                      kind, and findings (--fail-under P exits 1 below P%)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from claimbook.config import ConfigError, Settings, find
from claimbook.coverage import cli as coverage_cli
from claimbook.coverage.maps import CoverageMapError
from claimbook.gate import append_summary, failed_summary, gate
from claimbook.judge.diff import diff_claims, records, text_lines
from claimbook.merge import merge_and_judge
from claimbook.render import publish
from claimbook.render.owned import RenderConflict
from claimbook.render.table import verdict_table
from claimbook.scaffold import add_init_parser, scaffold
from claimbook.storage.baseline import BaselineError, load_baseline
from claimbook.storage.results import (
    ResultsError,
    latest_results,
    load_results,
    read_receipt,
)


def _parser(settings: Settings) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m claimbook",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    render = commands.add_parser("render", help="render results into the MkDocs docs_dir")
    site = commands.add_parser(
        "site",
        help="render, then mkdocs build --strict; each skipped when what it reads is unchanged",
    )
    publish.add_site_options(site)
    for command in (render, site):
        _render_options(command, settings)
    gate = commands.add_parser(
        "gate",
        help="exit 1 unless the run passed",
        description="Decide a run's outcome again from the facts its results file records, "
        "print every reason it is partial or failed and its regressions against the baseline; "
        "exit 0 if it passed, 1 if it failed or wrote no results file. Where "
        "$GITHUB_STEP_SUMMARY is set (GitHub Actions), also append a Markdown summary of the "
        "run to that file: the outcome, what changed, the inconclusive claims.",
    )
    which = gate.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--receipt",
        type=Path,
        help="the file the run was given with pytest's --claimbook-receipt; it names the "
        "results file that run wrote, and its absence means the run wrote none",
    )
    which.add_argument("--results", type=Path, help="judge this results file directly")
    gate.add_argument(
        "--baseline", type=Path, default=settings.path("baseline"),
        help="the step summary's reference ($GITHUB_STEP_SUMMARY, on GitHub Actions): what "
        f"changed against this baseline (default: {settings.baseline})",
    )  # fmt: skip
    gate.add_argument(
        "--coverage-fail-under", type=coverage_cli.percentage, metavar="P",
        help="also fail if the coverage maps (--maps) account for less than P%% of a source's "
        "statements of a kind, leave a tagged statement uncovered, or have an error finding; "
        "without a maps folder this says so and does not fail",
    )  # fmt: skip
    coverage_cli.add_maps_options(gate, settings)
    coverage_cli.add_parser(commands, settings)
    merge = commands.add_parser(
        "merge",
        help="merge the shards' results files into one run",
        description="Check that the shards' results files belong together (schema, commit, "
        "seeds, selection, shard count, collected suite, every shard once), pool them, decide "
        "every verdict and the run's outcome again, compare with the baseline and write the "
        "merged results file. Exit 2 if the files are refused, else 0: the outcome is the "
        "gate's to judge (gate --receipt, with the receipt given here).",
    )
    merge.add_argument("files", nargs="+", type=Path, help="one results file per shard")
    merge.add_argument(
        "--baseline", type=Path, default=settings.path("baseline"),
        help=f"compare the merged run with this baseline (default: {settings.baseline})",
    )  # fmt: skip
    merge.add_argument(
        "--history", type=Path, default=settings.path("history"),
        help=f"append the merged run to this history (default: {settings.history})",
    )  # fmt: skip
    merge.add_argument(
        "--results-dir", type=Path, default=settings.path("results"),
        help=f"write the merged results file here (default: {settings.results})",
    )  # fmt: skip
    merge.add_argument("--receipt", type=Path, help="write the merged file's path here")
    merge.add_argument(
        "--require-baseline", action="store_true", help="fail the merged run without a baseline"
    )
    add_init_parser(commands)
    diff = commands.add_parser(
        "diff",
        help="what changed between two runs' verdicts",
        description="Print the claims whose verdict changed, the claims added and gone, the "
        "new errata and counterexamples, and the claims inconclusive in NEW. Exit 0; 2 if a "
        "file is unreadable or not a results file.",
    )
    diff.add_argument("old", type=Path, help="the older results file (or the baseline)")
    diff.add_argument("new", type=Path, help="the newer results file")
    export = commands.add_parser(
        "export",
        help="write a run's measurements as one tidy table (CSV or Parquet)",
        description="One row per scalar measured value: claim, params, seed, measure, value, "
        "unit, printed (claimbook.judge.tidy), for pandas.read_csv / read_parquet.",
    )
    export.add_argument(
        "--results", type=Path,
        help="results file (default: the newest complete run with measurements; the files "
        "passed over are named, with why)",
    )  # fmt: skip
    export.add_argument("--results-dir", type=Path, default=settings.path("results"))
    out = export.add_mutually_exclusive_group(required=True)
    out.add_argument("--csv", type=Path, help="write CSV here")
    out.add_argument("--parquet", type=Path, help="write Parquet here (needs pyarrow)")
    record = commands.add_parser(
        "durations",
        help="record the cache's measured training seconds in the committed durations file",
        description="Runs never rewrite the durations file: the planned looks' budget and the "
        "CI legs plan from it, so it changes only by this command, best after a quiet run.",
    )
    record.add_argument("--cache", type=Path, default=settings.cache_dir())
    record.add_argument("--out", type=Path, default=settings.path("durations"))
    commands.add_parser(
        "method",
        help="simulate every design's error rates and power again (claimbook's Method table)",
        description="For claimbook's developers: after a change to the judge, write the table "
        "the Method page shows (claimbook/templates/method.json); the unit tests check it.",
    )
    return parser


def _render_options(parser: argparse.ArgumentParser, settings: Settings) -> None:
    parser.add_argument(
        "--out", type=Path, default=settings.path("docs"),
        help=f"the MkDocs docs_dir (default: the book's docs setting, {settings.docs})",
    )  # fmt: skip
    parser.add_argument(
        "--templates", type=Path, default=settings.path("templates"),
        help="templates here replace claimbook's own of the same name (default: the book's "
        f"templates setting, {settings.templates}; claimbook's alone if it does not exist)",
    )  # fmt: skip
    parser.add_argument(
        "--history", type=Path, default=settings.path("history"),
        help=f"run history for trends (default: {settings.history}; skipped if absent)",
    )  # fmt: skip
    parser.add_argument(
        "--repo-url",
        default=os.environ.get("CLAIMBOOK_REPO_URL", ""),
        help="link tests to <repo-url>/blob/<commit>/<file>#L<line> (default: $CLAIMBOOK_REPO_URL)",
    )
    parser.add_argument(
        "--results", type=Path, help="results file (default: the newest complete run)"
    )
    parser.add_argument("--results-dir", type=Path, default=settings.path("results"))
    coverage_cli.add_maps_options(parser, settings)  # a coverage page per map


def record_durations(args) -> int:
    """Write the seconds the cache's entries took into the durations file."""
    from claimbook.storage import durations

    measured = durations.from_cache(args.cache)
    changed = durations.update(args.out, measured)
    print(f"claimbook: {len(measured)} runs in {args.cache}; {changed} durations changed in "
          f"{args.out}")  # fmt: skip
    return 0


def _readable(path: Path, baseline: bool = False) -> dict:
    """A results file (or, with ``baseline``, a baseline) that the diff can read."""
    if not Path(path).is_file():
        raise ResultsError(f"no such file: {path}")
    try:
        data = load_results(path)
    except ResultsError as exc:
        try:
            data = load_baseline(path) if baseline else None
        except BaselineError:
            data = None
        if data is None:
            raise exc from None
    try:
        records(data)
    except (KeyError, TypeError, AttributeError):
        raise ResultsError(f"{path} is not a results file: its claims are malformed") from None
    return data


def main(argv: list[str] | None = None) -> int:
    try:
        settings = find()  # the book's [tool.claimbook], from the working directory up
    except ConfigError as exc:
        print(f"claimbook: {exc}", file=sys.stderr)
        return 2
    args = _parser(settings).parse_args(argv)
    if args.command == "init":
        return scaffold(args.folder, args.title, args.claimbook_from)
    try:
        if args.command == "merge":
            path, merged = merge_and_judge(args)
            for line in verdict_table(merged["claims"]):
                print(line)
            shards = ", ".join(
                f"{s['shard']} ({s['claims']} claims)" for s in merged["run"]["shards"]
            )
            print(f"claimbook: merged {len(merged['run']['shards'])} shards [{shards}] into {path}")
            return 0
        if args.command == "gate":
            path = read_receipt(args.receipt) if args.receipt else args.results
            return gate(load_results(path), path, args)
        if args.command == "diff":
            old, new = _readable(args.old, baseline=True), _readable(args.new)
            for line in text_lines(diff_claims(old, new, args.old.name, args.new.name)):
                print(line)
            return 0
        if args.command == "export":
            from claimbook.export import export  # pandas: only export needs it

            return export(args)
        if args.command == "durations":
            return record_durations(args)
        if args.command == "method":
            from claimbook.judge.method import TABLE, write_table

            print(f"claimbook: {len(write_table()['rows'])} designs simulated -> {TABLE}")
            return 0
        if args.command == "coverage":
            return coverage_cli.coverage_command(
                args, lambda: load_results(args.results or latest_results(args.results_dir, True))
            )
        return (
            publish.site(args, settings)
            if args.command == "site"
            else publish.render(args, settings)
        )
    except (ResultsError, CoverageMapError, RenderConflict) as exc:
        print(f"claimbook: {exc}", file=sys.stderr)
        if args.command == "gate":
            append_summary(failed_summary(str(exc)))
        return 1 if args.command == "gate" else 2


if __name__ == "__main__":
    sys.exit(main())
