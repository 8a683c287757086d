"""The plugin's command-line options, with their small parsers (the book's own settings are
:mod:`claimbook.config`'s)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from claimbook.config import for_pytest
from claimbook.declare.seeds import MAX_SEEDS, parse_seeds
from claimbook.runs.plan import available_cores, parse_shard


def _shard(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _part(text: str) -> tuple[int, int]:
    try:
        return parse_shard(text, "--claimbook-train-part")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _workers(text: str) -> int:
    if text == "auto":
        return available_cores()
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"--claimbook-workers expects a number >= 1 or auto, got {text!r}"
        )
    return int(text)


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"--claimbook-budget must be a number >= 0, got {text!r}")
    return value


def _factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e9:
        raise argparse.ArgumentTypeError(
            f"--claimbook-run-timeout-factor must be a number >= 0, got {text!r}"
        )
    return value


# the options' names: generic words get the plugin's prefix, so that no other plugin's
# option (pytest-parallel's --workers, ...) collides with them; each dest is prefixed too
PREFIX = "--claimbook-"


def option(config, name: str):
    """The value of the plugin's option ``name`` (e.g. "seeds" for ``--claimbook-seeds``);
    for an option a book can fix in ``[tool.claimbook]`` (:data:`BOOK_SET`), the book's
    setting where the command line does not give it."""
    value = config.getoption(f"claimbook_{name}")
    if value is None and name in BOOK_SET:
        return BOOK_SET[name](getattr(for_pytest(config), name))
    return value


# options whose default is the book's setting of the same name, each read as the option
BOOK_SET = {
    "budget": float,
    "workers": lambda value: _workers(str(value)),
    "train_on": str,
    "require_baseline": bool,
}
_SETTING = {"results_dir": "results", "baseline": "baseline", "history": "history"}


def path_option(config, name: str) -> Path:
    """A path option: as given (relative to the rootdir), else the book's setting."""
    given = option(config, name)
    return config.rootpath / given if given else for_pytest(config).path(_SETTING[name])


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("claimbook", "claimbook: claims tested across seeds")

    def add(name: str, **kwargs) -> None:
        group.addoption(PREFIX + name, dest="claimbook_" + name.replace("-", "_"), **kwargs)

    add(
        "seeds",
        type=parse_seeds,
        default=None,
        metavar="LIST",
        help=f"a fixed sample of seeds for every seeded claim, e.g. 0,1,2 or 0-4 (at most "
        f"{MAX_SEEDS:,} seeds, each below 2**31); turns the planned looks off (default: the "
        "book's seeds setting for every claim, and more, up to 12 or 20, for stochastic claims "
        "their rule has not decided yet)",
    )
    add(
        "budget",
        type=_share,
        default=None,
        metavar="SHARE",
        help="training CPU the planned looks may spend on further seeds, as a share of the "
        "first look's, both counted from the committed durations file (default: the book's "
        "budget setting, else 0.3; 3 goes deeper; 0 turns them off)",
    )
    add(
        "results-dir",
        default=None,
        metavar="DIR",
        help="where the run's results JSON is written (default: the book's results setting)",
    )
    add(
        "receipt",
        default=None,
        metavar="FILE",
        help="write the path of this run's results file to FILE, for "
        "`python -m claimbook gate --receipt FILE`; a training leg (--claimbook-train-part) "
        "writes its record there instead (what it trained), which no gate reads",
    )
    add(
        "no-cache",
        action="store_true",
        help="recompute every training run and execute every claim test; read no cache and "
        "store no claim outcome",
    )
    add(
        "workers",
        type=_workers,
        default=None,
        metavar="N",
        help="processes that train runs at once, one thread each (default: the book's "
        "workers setting, else auto: every core)",
    )
    add(
        "shard",
        type=_shard,
        default=None,
        metavar="I/N",
        help="run part I of N of the claims: a fixed split in which the claims reading one "
        "training run stay together (to judge some claims on other hardware); merge the N "
        "results files with `python -m claimbook merge FILES`. To split the training, "
        "use --claimbook-train-part",
    )
    add(
        "train-part",
        type=_part,
        default=None,
        metavar="I/N",
        help="phase 1 only, as a CI training leg: train part I of N (near-equal recorded "
        "seconds) of the runs the selected claims need and the cache lacks, and run no claim "
        "that reads them; then merge the legs' cache folders and run --claimbook-no-train",
    )
    add(
        "no-train",
        action="store_true",
        help="phase 2 only: run the claims against the cache and train nothing; a missing "
        "run makes the claims reading it errors that say which run and why",
    )
    add(
        "train-on",
        default=None,
        metavar="ENGINE",
        help="where runs are trained: local (a process pool, the default), dask (a "
        "LocalCluster), dask://HOST:PORT, submitit-local, slurm, or module:function (a "
        "factory(workers) returning a concurrent.futures executor); default: the book's "
        "train_on setting",
    )
    add(
        "run-timeout-factor",
        type=_factor,
        default=None,
        metavar="F",
        help="stop a training run still running after F times the seconds it is expected to "
        "take (its committed duration, else the run_seconds setting), and at least the "
        "run_timeout_floor setting (60 s): the claims reading it are errors naming it; 0: no "
        "limit (default: the book's run_timeout_factor setting, 10)",
    )
    add(
        "baseline",
        default=None,
        metavar="FILE",
        help="the accepted state this run is compared with (default: the book's baseline setting)",
    )
    add(
        "require-baseline",
        action="store_true",
        default=None,
        help="fail the run when the baseline file is missing, unless --claimbook-update-baseline "
        "is creating it (a lost baseline must not switch the regression rules off); default: "
        "the book's require_baseline setting",
    )
    add(
        "update-baseline",
        action="store_true",
        help="accept this run: rewrite the baseline from it (needs a complete run with no "
        "failure); regressions against the old baseline are reported, not failed",
    )
    add(
        "history",
        default=None,
        metavar="FILE",
        help="SQLite file every run is appended to (default: the book's history setting)",
    )
    add(
        "junit-values",
        action="store_true",
        help="also write each claim instance's spec and measured values into --junitxml's "
        "properties (left out by default)",
    )


# the seeds of a session -----------------------------------------------------------------


def base_seeds(config) -> list[int]:
    """The seeds every seeded claim runs: ``--claimbook-seeds`` if given, else the book's
    ``seeds`` setting (the first look; rules may ask for more)."""
    return config.getoption("claimbook_seeds") or parse_seeds(for_pytest(config).seeds)


def adaptive(config) -> bool:
    """Seeds follow each rule's planned looks unless ``--claimbook-seeds`` fixes the sample."""
    return config.getoption("claimbook_seeds") is None


def seeds_for(config, rule) -> list[int]:
    """The seeds a test is parametrized with: a stochastic rule's whole seed cap when
    adaptive, from its first fresh seed if it has one (the seeds past the first look run
    only if the claim asks for them)."""
    if adaptive(config) and rule is not None and rule.stochastic:
        return list(range(rule.fresh, rule.fresh + rule.cap))
    return base_seeds(config)


def first_look(config, rule) -> list[int]:
    """The seeds that run before any planned look: the book's seeds, or, for a rule judged
    on fresh seeds, as many from its first fresh seed (0, 1, 2 -> 1000, 1001, 1002)."""
    seeds = base_seeds(config)
    if adaptive(config) and rule is not None and rule.stochastic and rule.fresh:
        return [rule.fresh + i for i in range(len(seeds))]
    return seeds
