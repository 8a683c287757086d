"""Merging the results files of the shards of one run into the results of the whole run.

Each shard (``--shard I/N``) ran a fixed part of the suite and wrote its own
results file. Merging checks that they belong together (same schema, commit,
seeds, shard count; every shard exactly once), pools their claim instances,
and decides each claim's verdict again from all of its instances, exactly as
an unsharded run would.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from claimbook.results import ResultsError, load_results
from claimbook.session import claims_from_instances
from claimbook.spec import ClaimSpec

_SPEC_FIELDS = [f.name for f in dataclasses.fields(ClaimSpec)]
_CLAIM_CONTEXT = ("sentence", "test", "file", "line", "source_code")
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
_NEUTRAL = ("--shard", "--workers", "--results-dir", "--history", "--baseline", "--no-cache")


def selection(argv: list[str]) -> list[str]:
    """The pytest arguments of a run that choose its claim instances (paths, -k, -m, ...)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _NEUTRAL:
            skip = arg != "--no-cache"  # the others take a value
        elif not arg.startswith(tuple(f"{o}=" for o in _NEUTRAL)):
            kept.append(arg)
    return kept


def merge_shards(paths: list[Path]) -> dict:
    """The results (``run`` and ``claims``) of the whole run the shards in ``paths`` make up.

    Raises:
        ResultsError: a file is unreadable or of another schema; a file is not a
            shard's; the files differ in commit, seeds or shard count; a shard is
            missing or given twice; two shards ran the same claim instance.
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

    instances, seen = [], {}
    for path, data in loaded:
        for claim in data["claims"]:
            context = {k: claim[k] for k in _CLAIM_CONTEXT}
            spec = {k: claim[k] for k in _SPEC_FIELDS}
            for inst in claim["instances"]:
                if inst["nodeid"] in seen:
                    raise _refuse(f"{inst['nodeid']} ran in both {seen[inst['nodeid']]} and {path}")
                seen[inst["nodeid"]] = path.name
                instances.append({**inst, **context, "claim": spec})
    # an unsharded run lists claims in collection order: file, then line
    instances.sort(key=lambda i: (i["file"], i["line"]))
    runs = [data["run"] for _, data in loaded]
    partial = any(run["shard"]["selected"] for run in runs)
    run = {
        **runs[0],
        "started": min(run["started"] for run in runs),
        "finished": max(run["finished"] for run in runs),
        "merged_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": max(run["wall_s"] for run in runs),  # shards run side by side
        "git_dirty": any(run["git_dirty"] for run in runs),
        "argv": ["merge", *(path.name for path, _ in loaded)],
        "partial": partial,
        "workers": max(run.get("workers", 0) for run in runs),
        "training_wall_s": max(run.get("training_wall_s", 0.0) for run in runs),
        "shard": None,
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
    return {"run": run, "claims": claims_from_instances(instances, complete=not partial)}
