"""The Performance page's view: the figures of the run the site shows, taken from its
results file, and the benchmark record (reports/bench.json) labelled as what it is, an
earlier measurement with its own date, commit and suite, never this run's."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from claimbook.render.trends import looks_view


def read_bench(path: Path | None) -> tuple[dict | None, str]:
    """The benchmark record and "", or None and why there is none to show ("" when the
    file does not exist, the reason when it cannot be read)."""
    if path is None or not Path(path).exists():
        return None, ""
    try:
        bench = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        return None, f"{Path(path).name} could not be read ({exc})"
    if not isinstance(bench, dict):
        return None, f"{Path(path).name} is not a claimbook benchmark record"
    return bench, ""


def slowest(results: dict, count: int = 10) -> list[dict]:
    """The ``count`` claim tests that took longest, summed over their instances (seconds).

    A replayed instance counts the seconds of the execution it replays; a skipped one ran
    nothing, and counts none.
    """
    rows = []
    for claim in results["claims"]:
        seconds = sum(
            (i.get("replayed") or {}).get("seconds") or i.get("duration_s") or 0.0
            for i in claim["instances"]
            if i.get("outcome") != "skipped"
        )
        rows.append(
            {"claim": claim["id"], "test": claim["test"].split("::")[-1], "seconds": seconds}
        )
    return sorted(rows, key=lambda r: -r["seconds"])[:count]


def trained(run: dict) -> dict | None:
    """The training this run did, as its results file records it: the CPU-seconds of the
    runs it trained (each run's seconds in its own process, summed), for the first look and
    for the planned looks. None for a results file that predates that record."""
    looks = run.get("looks")
    if not looks or "base_cpu_s" not in looks:
        return None
    first, later = float(looks["base_cpu_s"] or 0), float(looks.get("extra_cpu_s") or 0)
    return {"cpu_s": round(first + later, 1), "first_cpu_s": first, "looks_cpu_s": later,
            "runs": run.get("runs_computed", 0), "read": run.get("runs_read", 0)}  # fmt: skip


def _when(stamp: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None


def age(then: str | None, now: str | None) -> str:
    """How long before ``now`` ``then`` was, in words ("2 days", "5 hours"); "" if unknown."""
    start, end = _when(then), _when(now)
    if start is None or end is None or end < start:
        return ""
    hours = (end - start).total_seconds() / 3600
    if hours < 48:
        return f"{hours:.0f} hours"
    return f"{hours / 24:.0f} days"


def record(bench: dict, results: dict) -> dict:
    """What the benchmark record measured, beside this run: its date, commit and suite (the
    claim instances of its first timed run, and its claims where the shard check counted
    them), and this run's, so the page never passes the record off as this run."""
    run = results["run"]
    first = next(iter((bench.get("runs") or {}).values()), {})
    instances = (first.get("claims_executed") or 0) + (first.get("claims_replayed") or 0)
    commit = bench.get("git_commit")
    return {
        "started": (bench.get("started") or "?")[:16].replace("T", " "),
        "commit": (commit or "none")[:8],
        "same_commit": bool(commit) and commit == run.get("git_commit"),
        "before": age(bench.get("started"), run.get("started")),
        "instances": instances or None,
        "claims": (bench.get("shards") or {}).get("claims"),
        "run_instances": sum(len(c["instances"]) for c in results["claims"]),
        "run_claims": len(results["claims"]),
    }


def perf_view(results: dict, bench_path: Path | None) -> dict:
    """Everything the Performance page shows (see the module docstring)."""
    bench, unreadable = read_bench(bench_path)
    return {
        "run": results["run"],
        "trained": trained(results["run"]),
        "bench": bench,
        "bench_problem": unreadable,
        "record": record(bench, results) if bench else None,
        "slowest": slowest(results),
        "looks": looks_view(results),
    }
