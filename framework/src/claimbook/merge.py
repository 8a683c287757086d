"""``python -m claimbook merge``: the shards of one run judged as the whole run, once.

Each shard (``--claimbook-shard I/N``) ran a fixed part of the suite and wrote its claim
instances and facts, never a verdict (:mod:`claimbook.storage.shards`, which also checks
that the files belong together and agree with themselves). The merge pools the instances
and facts and judges each claim and the run's outcome exactly as an unsharded run would:
the merged run is complete only if the shards together reported every instance of the
suite. It then compares with the baseline and persists the run as a session does
(:func:`claimbook.storage.persist.persist`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from claimbook.judge.baseline import compare
from claimbook.judge.claims import claims_from_instances
from claimbook.judge.outcome import SHARD, Facts, decide_run, partial_reasons
from claimbook.storage.baseline import BaselineError, load_baseline
from claimbook.storage.persist import PersistError, persist
from claimbook.storage.receipts import new_run_id
from claimbook.storage.results import ResultsError
from claimbook.storage.shards import read_shards

_SUMS = ("runs_computed", "runs_read", "claims_executed", "claims_replayed")


def merge_shards(paths: list[Path]) -> dict:
    """The results (``run`` and judged ``claims``) of the whole run the shards in ``paths``
    make up.

    Raises:
        ResultsError: the shards cannot be merged (:func:`claimbook.storage.shards.read_shards`).
    """
    loaded, instances = read_shards(paths)
    count = loaded[0][1]["run"]["shard"]["count"]
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
    over = {cid for r in runs for cid in (r.get("looks") or {}).get("over_budget", [])}
    to_cap = {c["id"]: c["to_cap"] for _, data in loaded for c in data["claims"] if "to_cap" in c}
    for claim in claims:  # what the shard's session found: why it stopped, what its cap costs
        stats = claim.get("statistics")
        if stats and stats.get("next_look"):
            stats["stopped_by"] = "budget" if claim["id"] in over else "this run's selection"
        if stats and stats.get("outlook") and claim["id"] in to_cap:
            stats["to_cap"] = to_cap[claim["id"]]
    return {"run": run, "claims": claims}


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
    """Merge, compare, decide; persist the results, the receipt and the history. Returns the
    results file and its content; the gate that follows (``gate --receipt``) decides the
    exit status."""
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
    results["comparison"] = comparison
    try:
        path = persist(results, args.results_dir, receipt=args.receipt, history=args.history)
    except PersistError as exc:
        raise ResultsError(f"the merged run: {exc}") from exc
    return path, results
