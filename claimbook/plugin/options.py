"""The plugin's command-line options and ini settings, with their small parsers."""

from __future__ import annotations

import argparse

import pytest

from claimbook.declare.seeds import DEFAULT_SEEDS, parse_seeds
from claimbook.runs.plan import parse_shard
from claimbook.runs.pool import available_cores

CLAIMS_DIR = "tests/claims"  # the suite: a run of all of it at the default seeds is complete


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _workers(text: str) -> int:
    if text == "auto":
        return available_cores()
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--workers expects a number >= 1 or auto, got {text!r}")
    return int(text)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--budget must be a number >= 0, got {text!r}")
    return value


def add_options(parser: pytest.Parser) -> None:
    parser.addini(
        "claimbook_claims_dir",
        default=CLAIMS_DIR,
        help=f"folder of the claim tests, relative to the rootdir (default: {CLAIMS_DIR}); "
        "a run of all of it at the default seeds is complete",
    )
    group = parser.getgroup("claimbook", "claimbook: claims tested across seeds")
    group.addoption(
        "--seeds",
        type=parse_seeds,
        default=None,
        metavar="LIST",
        help="a fixed sample of seeds for every seeded claim, e.g. 0,1,2 or 0-4; turns the "
        f"planned looks off (default: seeds {DEFAULT_SEEDS} for every claim, and more, "
        "up to 12 or 20, for stochastic claims their rule has not decided yet)",
    )
    group.addoption(
        "--budget",
        type=_share,
        default=1.0,
        metavar="SHARE",
        help="CPU the planned looks may spend on extra training runs, as a share of the "
        "first look's training CPU (default: 1.0, i.e. as much again; 0 turns them off)",
    )
    group.addoption(
        "--results-dir",
        default="reports/results",
        metavar="DIR",
        help="where the run's results JSON is written (default: reports/results)",
    )
    group.addoption(
        "--receipt",
        default=None,
        metavar="FILE",
        help="write the path of this run's results file to FILE, for "
        "`python -m claimbook gate --receipt FILE` (nox does this)",
    )
    group.addoption(
        "--no-cache",
        action="store_true",
        help="recompute every training run and execute every claim test; read no cache and "
        "store no claim outcome",
    )
    group.addoption(
        "--workers",
        type=_workers,
        default="auto",
        metavar="N",
        help="processes that train runs at once, one thread each (default: auto, every core)",
    )
    group.addoption(
        "--shard",
        type=_shard,
        default=None,
        metavar="I/N",
        help="run part I of N: a fixed split in which the claims reading one training run "
        "stay together; merge the N results files with `nox -s site -- FILES`",
    )
    group.addoption(
        "--baseline",
        default="reports/baseline.json",
        metavar="FILE",
        help="the accepted state this run is compared with (default: reports/baseline.json)",
    )
    group.addoption(
        "--require-baseline",
        action="store_true",
        help="fail the run when the baseline file is missing, unless --update-baseline is "
        "creating it (nox -s claims passes this: a lost baseline must not switch the "
        "regression rules off)",
    )
    group.addoption(
        "--update-baseline",
        action="store_true",
        help="accept this run: rewrite the baseline from it (needs a complete run with no "
        "failure); regressions against the old baseline are reported, not failed",
    )
    group.addoption(
        "--history",
        default="reports/history.sqlite",
        metavar="FILE",
        help="SQLite file every run is appended to (default: reports/history.sqlite)",
    )
