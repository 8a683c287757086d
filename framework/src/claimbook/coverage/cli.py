"""``python -m claimbook coverage`` and the gate's ``--coverage-fail-under``."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from claimbook.config import SOURCES_ENV, Settings
from claimbook.coverage.anchors import sources_dir
from claimbook.coverage.catalog import catalog_of
from claimbook.coverage.check import ERROR, Report, check, coverage_report
from claimbook.coverage.maps import read_maps
from claimbook.coverage.totals import fail_under, table_lines
from claimbook.storage.atomic import write_json

SCHEMA = "claimbook.coverage/2"  # 2: tested only what can fail; recorded, construction, skipped


def percentage(text: str) -> float:
    """``--fail-under`` / ``--coverage-fail-under``: a percentage from 0 to 100."""
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage, got {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"expected a percentage from 0 to 100, got {text!r}")
    return value


def add_maps_options(parser: argparse.ArgumentParser, settings: Settings) -> None:
    parser.add_argument(
        "--maps", type=Path, default=settings.path("maps"),
        help="folder of the coverage maps, one <source id>.toml each (default: the book's "
        f"maps setting, {settings.maps})",
    )  # fmt: skip
    parser.add_argument(
        "--sources-dir", type=Path, default=settings.sources_folder(),
        help=f"folder of the source texts (default: ${SOURCES_ENV}, else the book's "
        "sources_dir setting)",
    )  # fmt: skip


def add_parser(commands, settings: Settings) -> None:
    parser = commands.add_parser(
        "coverage",
        help="print the coverage of the source texts by claims, per source and kind",
        description="Check the coverage maps against the source texts and the claims of a "
        "run, print the totals per source and kind and every finding. Exit 2 on a malformed "
        "map or unreadable results; with --fail-under, exit 1 when it fails the threshold.",
    )
    add_maps_options(parser, settings)
    parser.add_argument(
        "--results", type=Path, help="results file (default: the newest complete run)"
    )
    parser.add_argument("--results-dir", type=Path, default=settings.path("results"))
    parser.add_argument(
        "--fail-under", type=percentage, metavar="P",
        help="exit 1 if a source and kind is accounted for below P%%, a tagged statement is "
        "uncovered, or a finding is an error",
    )  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the totals and findings here")


def print_report(report: Report, say=print) -> None:
    for line in table_lines(report.totals()):
        say(f"  {line}")
    if not report.catalog.complete:
        say(f"claimbook: coverage: catalog incomplete: {report.catalog.why_incomplete}")
    errors = len(report.errors)
    say(f"claimbook: coverage: {errors} error(s), {len(report.findings) - errors} warning(s)")
    for finding in sorted(report.findings, key=lambda f: (f.severity != ERROR, f.source)):
        say(f"  {finding}")


def failures(report: Report, threshold: float, option: str, say=print) -> list[str]:
    """Why ``report`` fails ``threshold`` (each printed, naming ``option``): none, it passes."""
    reasons = fail_under(report.totals(), len(report.errors), threshold)
    for reason in reasons:
        say(f"claimbook: coverage FAILED ({option} {threshold:g}): {reason}")
    return reasons


def gate_coverage(results: dict, maps_dir: Path, threshold: float, folder=None, say=print) -> list:
    """The gate's coverage check: the reasons it fails (none: it passes). No maps folder:
    says so, never fails."""
    report = coverage_report(results, maps_dir, folder)
    if report is None:
        say(f"claimbook: coverage: no coverage maps in {maps_dir}/: not checked")
        return []
    print_report(report, say)
    return failures(report, threshold, "--coverage-fail-under", say)


def as_json(report: Report) -> dict:
    """The totals (with their percentages) and the findings, as standard JSON."""
    totals = {
        source: {
            kind: {**asdict(t), "covered_pct": t.covered_pct, "accounted_pct": t.accounted_pct}
            for kind, t in kinds.items()
        }
        for source, kinds in report.totals().items()
    }
    return {"schema": SCHEMA, "totals": totals, "findings": [asdict(f) for f in report.findings],
            "catalog_complete": report.catalog.complete}  # fmt: skip


def coverage_command(args, load) -> int:
    """Run ``python -m claimbook coverage``; ``load()`` gives the results dict (read only
    when there are maps)."""
    maps = read_maps(args.maps)
    if not maps:
        print(f"claimbook: coverage: no coverage maps in {args.maps}/")
        return 0
    report = check(maps, catalog_of(load()), sources_dir(args.sources_dir))
    print_report(report)
    if args.json:
        write_json(args.json, as_json(report))  # atomic: a reader never sees half of it
    if args.fail_under is None:
        return 0
    return 1 if failures(report, args.fail_under, "--fail-under") else 0
