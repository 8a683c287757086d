"""The two phases of a session's look: train the runs its claims need, then run the claims.

By default one session does both, look after look. Two options split them across
machines (the CI workflow's train legs and its claims job):

- ``--claimbook-train-part I/N``: phase 1 only. The runs the look needs and the cache
  lacks are split into N parts of near-equal recorded seconds, and this session trains
  part I and runs no claim of that look. When the look needs nothing, its claims run
  (they are cheap) to find the next look's runs, so each round of N legs trains the next
  look; the legs of one round all compute the same plan from the same cache.
- ``--claimbook-no-train``: phase 2 only. Nothing is trained; a run the cache lacks makes
  the claims reading it errors that name the run and why (a leg's recorded failure, or
  that no leg's cache folder holds it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimbook.plugin.options import option, path_option
from claimbook.storage import durations
from claimbook.storage.atomic import write_json


def recorded(settings, config=None) -> dict[str, float]:
    """The book's recorded durations (label -> seconds), read at the session's start with
    the other files a run reads or writes (``config``'s): a malformed durations file or a
    results folder that is a file stops pytest (a usage error, exit 4), and so does a
    baseline that cannot be read (exit 2), before anything is collected or trained."""
    if config is not None:
        _check_files(config)
    try:
        return durations.load(settings.path("durations"))
    except ValueError as exc:
        raise pytest.UsageError(f"the durations setting: {exc}") from None


def _check_files(config) -> None:
    results = path_option(config, "results_dir")
    if results.exists() and not results.is_dir():
        raise pytest.UsageError(f"--claimbook-results-dir names {results}, a file: it must "
                                "name a folder (results files are written into it)")  # fmt: skip
    if option(config, "update_baseline"):  # the way to replace an unreadable baseline
        return
    baseline = path_option(config, "baseline")
    if not baseline.exists():  # none yet: nothing to read (and no judge to import)
        return
    from claimbook.storage.baseline import BaselineError, load_baseline

    try:
        load_baseline(baseline)
    except BaselineError as exc:
        pytest.exit(f"claimbook: refused before any training: {exc}", returncode=2)


def new_leg(config) -> dict | None:
    """A training leg's record: what each look trained, and whether the leg stopped at a
    look whose runs were missing (then it runs no claim of that look); None otherwise."""
    return {"looks": [], "stopped": False} if option(config, "train_part") else None


def cuts_disagree(legs: Path) -> str | None:
    """Why the training legs whose markers are in ``legs`` cannot be merged: two legs cut
    the same missing runs into parts differently (say, from two durations files), so some
    runs were trained twice and others by no leg; None if they agree."""
    first: dict[str, tuple[str, str]] = {}
    for path in sorted(legs.glob("plan-*.json")):
        try:
            cut = json.loads(path.read_text())
            missing, planned = str(cut["missing"]), str(cut["plan"])
        except (OSError, ValueError, KeyError, TypeError):
            return f"the leg marker {path} is unreadable: its legs cannot be checked"
        other, name = first.setdefault(missing, (planned, path.name))
        if other != planned:
            return (f"the training legs {name} and {path.name} split the same missing runs "
                    "from different plans (different durations files or settings): their "
                    "parts overlap and leave runs to no leg; train the round again from one "
                    "plan")  # fmt: skip
    return None


def train_phase(claims, needed: set) -> None:
    """Phase 1 for the runs ``needed`` (see the module docstring); sets ``claims.training``
    and, in a leg, whether the leg stops here (``claims.leg["stopped"]``)."""
    from claimbook.runs.distribute import Trained  # the engines: only a run that trains
    from claimbook.runs.pool import plan, train_missing

    config = claims.config
    part = option(config, "train_part")
    legs = claims.cache.directory / "legs"
    disagree = cuts_disagree(legs)
    if disagree:
        pytest.exit(f"claimbook: refused: {disagree}", returncode=2)
    todo = plan(claims.cache, needed, claims.recorded, claims.settings.run_seconds, part)
    if todo.cut is not None and todo.missing:  # the merge of the legs checks they agree
        index, count = part
        name = f"plan-{todo.cut['missing'][:12]}-{todo.cut['plan'][:12]}-part{index}of{count}"
        write_json(legs / f"{name}.json", {**todo.cut, "part": f"{index}/{count}"})
    if option(config, "no_train"):
        claims.training = Trained(engine="none")
        if todo.missing:
            names = ", ".join(s["label"] for s in todo.specs[:6])
            more = f" and {todo.missing - 6} more" if todo.missing > 6 else ""
            line = (f"{todo.missing} training runs are not in the cache and this session "
                    f"trains nothing (--claimbook-no-train): the claims reading them are "
                    f"errors ({names}{more})")  # fmt: skip
            claims.say(line)
            claims.messages.append(line)
        return
    if todo.failed:
        claims.say(f"{todo.failed} runs left out: an earlier leg recorded their failure")
    workers, engine = option(config, "workers"), option(config, "train_on")
    factor = option(config, "run_timeout_factor")
    settings = claims.settings
    timeout = (settings.run_timeout_factor if factor is None else factor,
               settings.run_timeout_floor)  # fmt: skip
    claims.training = done = train_missing(claims.cache, todo, workers, claims.say, engine, timeout)
    if done.stopped:  # the cache's disk is full: the run fails, naming it
        claims.stopped = claims.stopped or done.stopped
        claims.messages.append(done.stopped)
        claims.claim_cache.enabled = False  # no claim outcome can be stored there either
    if part is not None:
        claims.leg["looks"].append({"missing": todo.missing, "in_part": len(todo.specs),
                                    "plan": (todo.cut or {}).get("plan"),
                                    "expected_s": round(todo.seconds, 1),
                                    "computed": len(done.computed),
                                    "failed": dict(done.failed),
                                    "left_out": todo.failed})  # fmt: skip
        claims.leg["stopped"] = todo.missing > 0


def leg_summary(claims) -> list[str]:
    """What a training leg did, for the terminal; and its exit status' reason."""
    index, count = option(claims.config, "train_part")
    if not claims.selection.selected:
        return ["no claim test was selected: this leg has nothing to train (exit status 5)"]
    lines = []
    for number, look in enumerate(claims.leg["looks"], 1):
        if not look["missing"]:
            continue
        lines.append(
            f"look {number}: {look['missing']} runs missing; part {index}/{count} held "
            f"{look['in_part']} (about {look['expected_s']:.0f} CPU-s), {look['computed']} trained"
            + (f", {len(look['failed'])} FAILED" if look["failed"] else "")
        )
        lines += [f"  {label}: {why[:200]}" for label, why in look["failed"].items()]
    if claims.leg["stopped"]:
        lines.append("merge this round's cache folders and run another round of legs on the "
                     "union: the next look's runs are planned from it")  # fmt: skip
        return lines
    left = sum(look.get("left_out", 0) for look in claims.leg["looks"])
    lines.append("nothing left to train: every look's runs are in the cache"
                 + (f", but for {left} whose training an earlier leg recorded as crashed "
                    "(the claims phase names them)" if left else ""))  # fmt: skip
    return lines
