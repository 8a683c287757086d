"""Merging the results files of the shards of one run into the results of the whole run.

Each shard (``--claimbook-shard I/N``) ran a fixed part of the suite and wrote its own
results file. Merging checks that they belong together (same schema, commit,
seeds, selection, shard count and collected suite; every shard exactly once), that
each agrees with itself and that together they can give the unsharded verdicts
(:mod:`claimbook.storage.verify`),
pools their claim instances and facts, and decides each claim's verdict and the
run's outcome again, exactly as an unsharded run would: the merged run is complete
only if the shards together reported every instance of the suite.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from claimbook.judge.baseline import compare
from claimbook.judge.claims import claims_from_instances
from claimbook.judge.outcome import SHARD, Facts, decide_run, partial_reasons
from claimbook.storage.baseline import BaselineError, load_baseline
from claimbook.storage.history import History
from claimbook.storage.receipts import new_run_id, write_bound_receipt
from claimbook.storage.results import ResultsError, load_results, write_results
from claimbook.storage.verify import instances_of, shard_problems, unsharded_problems

_SUMS = ("runs_computed", "runs_read", "claims_executed", "claims_replayed")


def _refuse(why: str) -> ResultsError:
    return ResultsError(f"cannot merge: {why}")


def _same(loaded: list[tuple[Path, dict]], what: str, value) -> None:
    """Refuse unless every file gives the same ``value(run)``; name each file's value."""
    found = {repr(value(data["run"])) for _, data in loaded}
    if len(found) > 1:
        listing = "; ".join(f"{p.name}: {value(d['run'])}" for p, d in loaded)
        raise _refuse(f"the shards differ in {what} ({listing})")


# options that do not change which claim instances run (or, for --shard, that differ by design)
_NEUTRAL = tuple(f"--claimbook-{name}" for name in (
    "shard", "workers", "results-dir", "history", "baseline", "receipt", "no-cache",
    "require-baseline", "junit-values",
))  # fmt: skip
_FLAGS = tuple(f"--claimbook-{name}" for name in ("no-cache", "require-baseline", "junit-values"))


def selection(argv: list[str]) -> list[str]:
    """The pytest arguments of a run that choose its claim instances (paths, -k, -m, ...)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _NEUTRAL:
            skip = arg not in _FLAGS  # the others take a value
        elif not arg.startswith(tuple(f"{o}=" for o in _NEUTRAL)):
            kept.append(arg)
    return kept


def merge_shards(paths: list[Path]) -> dict:
    """The results (``run`` and ``claims``) of the whole run the shards in ``paths`` make up.

    Raises:
        ResultsError: a file is unreadable or of another schema; a file is not a
            shard's; the files differ in commit, seeds or shard count; a shard is
            missing or given twice; two shards ran the same claim instance; a shard's file
            disagrees with itself; the shards cannot give the unsharded run's verdicts
            (:mod:`claimbook.storage.verify`).
    """
    if not paths:
        raise _refuse("no results files given")
    loaded = [(Path(p), load_results(p)) for p in paths]  # refuses another schema, naming it
    for path, data in loaded:
        if not data["run"].get("shard"):
            raise _refuse(f"{path.name} is not a shard's results (it ran without --shard)")
    _same(loaded, "commit", lambda run: run.get("git_commit"))
    _same(loaded, "seeds", lambda run: run["seeds"])
    _same(loaded, "selection (pytest arguments)", lambda run: selection(run["argv"]))
    _same(loaded, "shard count", lambda run: run["shard"]["count"])
    count = loaded[0][1]["run"]["shard"]["count"]
    indexes = [data["run"]["shard"]["index"] for _, data in loaded]
    twice = sorted({i for i in indexes if indexes.count(i) > 1})
    if twice:
        raise _refuse(f"shard(s) {', '.join(f'{i}/{count}' for i in twice)} given twice")
    missing = sorted(set(range(1, count + 1)) - set(indexes))
    if missing:
        raise _refuse(f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing")
    loaded.sort(key=lambda item: item[1]["run"]["shard"]["index"])
    suites = {tuple(sorted(data["run"]["facts"]["suite"])) for _, data in loaded}
    if len(suites) > 1:
        raise _refuse("the shards collected different suites (another checkout or arguments)")

    instances, seen = [], {}
    for path, data in loaded:
        for claim in data["claims"]:
            for inst in instances_of(claim):
                if inst["nodeid"] in seen:
                    raise _refuse(f"{inst['nodeid']} ran in both {seen[inst['nodeid']]} and {path}")
                seen[inst["nodeid"]] = path.name
                instances.append(inst)
    _verify(loaded)
    # an unsharded run lists claims in collection order: file, then line
    instances.sort(key=lambda i: (i["file"], i["line"]))
    runs = [data["run"] for _, data in loaded]
    facts = _merged_facts(runs)
    complete = not partial_reasons(facts)
    run = {
        **runs[0],
        "started": min(run["started"] for run in runs),
        "finished": max(run["finished"] for run in runs),
        "merged_at": datetime.now(UTC).isoformat(timespec="microseconds"),
        "wall_s": max(run["wall_s"] for run in runs),  # shards run side by side
        "git_dirty": any(run["git_dirty"] for run in runs),
        "argv": ["merge", *(path.name for path, _ in loaded)],
        "workers": max(run.get("workers", 0) for run in runs),
        "training_wall_s": max(run.get("training_wall_s", 0.0) for run in runs),
        "shard": None,
        "facts": facts.to_dict(),
        "shards": [
            {
                "file": path.name,
                "shard": f"{data['run']['shard']['index']}/{count}",
                "wall_s": data["run"]["wall_s"],
                "runs_computed": data["run"].get("runs_computed", 0),
                "claims": len(data["claims"]),
            }
            for path, data in loaded
        ],
        **{key: sum(run.get(key, 0) for run in runs) for key in _SUMS},
    }
    adaptive = all(r.get("adaptive", True) for r in runs)  # each took its claims' looks (verified)
    run["adaptive"] = adaptive
    claims = claims_from_instances(instances, complete=complete, adaptive=adaptive)
    stated = {c["id"]: c.get("statistics") or {} for _, data in loaded for c in data["claims"]}
    for claim in claims:  # what the shard's session added: why it stopped, what its cap costs
        for key in ("stopped_by", "to_cap"):
            if claim.get("statistics") and key in stated.get(claim["id"], {}):
                claim["statistics"][key] = stated[claim["id"]][key]
    return {"run": run, "claims": claims}


def _verify(loaded: list[tuple[Path, dict]]) -> None:
    """Refuse shards that disagree with themselves, or that cannot give the unsharded
    run's verdicts, naming each claim or instance (see :mod:`claimbook.storage.verify`)."""
    corrupt = [p for path, data in loaded for p in shard_problems(path.name, data)]
    if corrupt:
        raise _refuse(
            "the shards' files do not agree with themselves (damaged, edited, or parts of "
            f"different runs): {'; '.join(corrupt[:8])}"
            + (f"; and {len(corrupt) - 8} more" if len(corrupt) > 8 else "")
        )
    unsharded = unsharded_problems(loaded)
    if unsharded:
        raise _refuse("; ".join(unsharded))


def _merged_facts(runs: list[dict]) -> Facts:
    """The facts of the whole run: the shards' selections and reports pooled."""
    shards = [Facts.from_dict(run["facts"]) for run in runs]

    def union(name: str) -> list[str]:
        return sorted({x for f in shards for x in getattr(f, name)})

    restrictions = sorted({r for f in shards for r in f.restrictions if not r.startswith(SHARD)})
    return Facts(
        suite=shards[0].suite,
        selected=union("selected"),
        reported=union("reported"),
        restrictions=restrictions,
        stopped="; ".join(f.stopped for f in shards if f.stopped),
        other_failures=union("other_failures"),
        collection_errors=union("collection_errors"),
        unresolved_anchors=union("unresolved_anchors"),
    )


def merge_and_judge(args) -> tuple[Path, dict]:
    """``python -m claimbook merge``: merge, compare, decide; write the results, the receipt
    and the history. Returns the results file and its content; the gate that follows
    (``gate --receipt``) decides the exit status."""
    results = merge_shards(args.files)
    run, claims = results["run"], results["claims"]
    facts = Facts.from_dict(run["facts"])
    try:
        baseline = load_baseline(args.baseline)
        comparison = None
        if baseline is None and args.require_baseline:
            comparison = {"error": f"no baseline at {args.baseline} (--require-baseline)"}
        elif baseline is not None:
            comparison = compare(baseline, results, complete=not partial_reasons(facts))
            comparison.update(
                baseline=str(args.baseline), baseline_commit=baseline.get("commit"), accepted=False
            )
    except BaselineError as exc:
        comparison = {"error": str(exc)}
    outcome = decide_run(facts, claims, comparison)
    run.update(partial=not outcome.complete, outcome=outcome.to_dict())
    run["exit_status"] = int(outcome.failed)
    run["run_id"] = new_run_id()  # the merged run's own: its receipt is bound to it
    path = write_results(args.results_dir, run, claims, comparison)
    if args.receipt:
        write_bound_receipt(args.receipt, path, run)
    try:
        history = History(args.history, print)
        history.append({"run": run, "claims": claims}, path.name)
        history.close()
    except (OSError, sqlite3.Error) as exc:
        print(f"claimbook: history not updated: {exc}")
    return path, {**results, "comparison": comparison}
