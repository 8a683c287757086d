"""The end of a session: its facts, the judgement, and what is written where.

In order: gather the facts (:func:`facts_of`), decide every claim's verdict, compare
with the baseline, decide the run's outcome (:func:`claimbook.judge.outcome.decide_run`),
stage the new baseline if the outcome accepts the run, persist it as a merge does
(:func:`claimbook.storage.persist.persist`: results file, receipt, baseline, history), and
set pytest's exit status from the same outcome. A shard's results file holds its instances
and facts only: the merge judges them (:mod:`claimbook.storage.shards`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claimbook.coverage.catalog import catalog_of
from claimbook.coverage.check import unresolved_anchors
from claimbook.declare.fresh import read_with
from claimbook.judge.baseline import baseline_of, compare
from claimbook.judge.claims import claims_from_instances
from claimbook.judge.outcome import Facts, decide_run, partial_reasons
from claimbook.plugin.options import adaptive, base_seeds, option, path_option
from claimbook.plugin.workers import refused
from claimbook.storage.atomic import write_json
from claimbook.storage.baseline import BaselineError, StagedBaseline, load_baseline
from claimbook.storage.persist import PersistError, persist
from claimbook.storage.receipts import new_run_id
from claimbook.storage.results import provenance
from claimbook.storage.shards import unjudged


def _anchors(claims) -> list[str]:
    """The collected claims' at= snippets not found once in their source text, where the
    sources folder holds it; a text it lacks is said, not failed (the map's check fails it)."""
    catalog = catalog_of({"run": {"catalog": list(claims.catalog.values())}})
    unresolved, unread = unresolved_anchors(catalog, claims.settings.sources_folder())
    claims.messages += [f"at= anchors not checked: {why}" for why in unread]
    return unresolved


def facts_of(claims, session: pytest.Session) -> Facts:
    return Facts(
        suite=list(claims.selection.suite),
        selected=list(claims.selection.selected),
        reported=claims.collector.reported(),
        restrictions=claims.selection.restrictions(session.config, claims.settings.claims),
        stopped=claims.stopped,
        other_failures=list(claims.collector.other_failures),
        collection_errors=list(claims.collection_errors),
        unresolved_anchors=_anchors(claims),
    )


def _compare(claims, results: dict, complete: bool) -> dict | None:
    """This run against the baseline; None without one, {"error": ...} if it is unreadable."""
    config = claims.config
    path = path_option(config, "baseline")
    try:
        baseline = load_baseline(path)
    except BaselineError as exc:
        return {"error": str(exc)}
    if baseline is None and option(config, "require_baseline"):
        return {"error": f"no baseline at {path} (--claimbook-require-baseline)"}
    if baseline is None:
        if not option(config, "update_baseline"):  # that run is writing the first one
            claims.messages.append(
                f"no baseline at {path}: nothing to compare with; accept a complete run with "
                "--claimbook-update-baseline"
            )
        return None
    comparison = compare(baseline, results, complete)
    comparison["baseline"] = _shown(config, path)
    comparison["baseline_commit"] = baseline.get("commit")
    comparison["accepted"] = False
    return comparison


def finish(claims, session: pytest.Session) -> None:
    """Judge the session and persist it (see the module docstring)."""
    config = claims.config
    if refused(config):  # claim tests under pytest-xdist: nothing ran, nothing is written
        return
    if claims.leg is not None:  # a training leg judges nothing: its exit says if it trained
        return _finish_leg(claims, session)
    wanted = bool(option(config, "receipt") or option(config, "shard"))
    if config.option.collectonly or (not claims.selection.suite and not wanted):
        return  # no claim test here: a plain pytest session, nothing to write
    facts = facts_of(claims, session)
    complete = not partial_reasons(facts)
    seeds = base_seeds(config)
    run = provenance(config.rootpath, claims.started, seeds, list(config.invocation_params.args))
    run.update(
        book=claims.settings.title,
        runs_computed=claims.cache.computed,
        runs_read=claims.cache.read,
        workers=claims.training.workers if claims.training else 0,
        training_wall_s=round(claims.training.wall_s, 3) if claims.training else 0.0,
        claims_executed=claims.executed,
        claims_replayed=len(claims.replays),
        shard=_shard(config),
        facts=facts.to_dict(),
        catalog=list(claims.catalog.values()),  # every claim collected: coverage resolves ids
        adaptive=adaptive(config),
        looks={**claims.looks.counts, "budget": option(config, "budget")},
    )  # fmt: skip
    claims.claims = claims_from_instances(
        claims.collector.instances(), complete, adaptive=adaptive(config)
    )
    for c in claims.claims:  # say why an open claim got no further look
        if c["id"] in claims.fresh:  # what its fresh seeds' record shows
            c["fresh"] = claims.fresh[c["id"]]
            c["fresh_with"] = read_with(c["id"], list(claims.specs.values()), claims.fresh)
        stats = c.get("statistics")
        if stats and stats.get("next_look"):
            budget = c["id"] in claims.looks.counts["over_budget"]
            stats["stopped_by"] = "budget" if budget else "this run's selection"
        if stats and stats.get("outlook"):  # what its cap costs: runs not in the cache
            stats["to_cap"] = claims.looks.to_cap(c)
    run["run_id"] = new_run_id()  # in the receipt too: the gate checks they agree
    results = {"run": run, "claims": claims.claims}
    claims.comparison = _compare(claims, results, complete)
    update = option(config, "update_baseline")
    outcome = decide_run(facts, claims.claims, claims.comparison, update)
    staged = _stage_baseline(claims, outcome, results)
    run.update(partial=not outcome.complete, outcome=outcome.to_dict())
    run["exit_status"] = 1 if outcome.failed else 0
    claims.outcome = outcome
    try:
        claims.results_path = persist(
            _written(results, claims.comparison),
            path_option(config, "results_dir"),
            receipt=option(config, "receipt"),
            baseline=staged,
            history=None if run["shard"] else path_option(config, "history"),
            say=claims.messages.append,
        )
    except PersistError as exc:
        _failed(claims, outcome, staged, exc)
    else:
        if staged:
            claims.messages.append(f"baseline updated: {staged.path} ({len(claims.claims)} claims)")
    if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or (
        session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and option(config, "shard")
    ):
        failed = outcome.failed
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK


def _finish_leg(claims, session: pytest.Session) -> None:
    """A training leg's end: its receipt (what it trained, for the workflow), and an exit
    status that says only whether it trained its part: the claims it ran only found the
    next look, and a failing one is the claims phase's to judge."""
    config = claims.config
    failed = any(look["failed"] for look in claims.leg["looks"])
    if option(config, "receipt"):  # standard JSON
        part = "/".join(map(str, option(config, "train_part")))
        write_json(Path(option(config, "receipt")), {"leg": part, **claims.leg})
    ran = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)
    if not claims.selection.selected:  # a selection that holds no claim test is a mistake
        session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED
    elif session.exitstatus in ran:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED if failed else pytest.ExitCode.OK


def _written(results: dict, comparison: dict | None) -> dict:
    """What the results file holds: a shard's holds its instances and facts, never a verdict
    or its outcome (the merge judges them once: claimbook.storage.shards)."""
    run = results["run"]
    if not run["shard"]:
        return {**results, "comparison": comparison}
    records = []
    for claim in results["claims"]:  # what its cap costs (runs not in its cache) is a fact
        cost = (claim.get("statistics") or {}).get("to_cap")
        records.append({**unjudged(claim), **({"to_cap": cost} if cost is not None else {})})
    shard_run = {k: v for k, v in run.items() if k != "outcome"}
    return {"run": shard_run, "claims": records, "comparison": None}


def _failed(claims, outcome, staged: StagedBaseline | None, exc: PersistError) -> None:
    """A write failed: the run fails, its staged baseline is dropped (persist removed it, and
    a receipt written before it), and the baseline is not said accepted."""
    outcome.failed = True
    outcome.failure_reasons.append(str(exc))
    claims.results_path = exc.path
    if staged:
        outcome.baseline_update = "--claimbook-update-baseline: not written, the run failed"
        if claims.comparison:
            claims.comparison["accepted"] = False


def _stage_baseline(claims, outcome, results: dict) -> StagedBaseline | None:
    """The new baseline, written beside the old one, when the outcome accepts this run; it
    is committed only once the results file is written. A failure to write it fails the run."""
    if outcome.baseline_update != "written":
        return None
    try:
        staged = StagedBaseline(path_option(claims.config, "baseline"), baseline_of(results))
    except (OSError, ValueError) as exc:
        outcome.baseline_update = f"--claimbook-update-baseline failed: {exc}"
        outcome.failed = True
        outcome.failure_reasons.append(f"the baseline could not be written ({exc})")
        return None
    if claims.comparison:
        claims.comparison["accepted"] = True
    return staged


def _shown(config, path: Path) -> str:
    """``path`` relative to the rootdir where it lies inside it (as the pages show it)."""
    return (
        str(path.relative_to(config.rootpath))
        if path.is_relative_to(config.rootpath)
        else str(path)
    )


def _shard(config) -> dict | None:
    shard = option(config, "shard")
    return {"index": shard[0], "count": shard[1]} if shard else None
