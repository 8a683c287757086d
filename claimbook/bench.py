"""The suite's cost, measured in one invocation on one machine: ``nox -s bench``.

Steps (``--steps``, default all, in this order):

- ``throughput``: each mixer's training steps per second and achieved FLOP/s
  against a large matmul's FLOP/s on one thread (experiments/throughput.py);
- ``cold``: the full ``nox -s claims`` from an empty cache, with every core and
  with one worker (``--workers 1``), each end to end (training, claims, site, gate);
- ``warm``: the same command again with nothing changed;
- ``touch``: again after touching one claim test's file (a new modification time);
- ``edit``: again after adding a statement to one claim test (restored after);
- ``shards``: the suite in 3 shards on the warm training runs (claims executed
  afresh), merged, and compared claim by claim with the unsharded run;
- ``looks``: what the planned looks cost the newest complete run (seeds per stochastic
  claim, extra training runs and CPU-seconds, CPU-seconds per decided claim).

Writes ``reports/bench.json`` (atomically), which the site's performance page
shows, and prints every figure with its ratio. Times are wall-clock seconds.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from claimbook.judge.cost import looks_cost
from claimbook.runs.keys import machine
from claimbook.runs.pool import available_cores
from claimbook.storage.atomic import write_json
from claimbook.storage.results import latest_results, load_results

SCHEMA = "claimbook.bench/1"
STEPS = ("throughput", "cold", "warm", "touch", "edit", "shards", "looks")
EDITED = (
    "tests/claims/test_ch04_token_mixing.py",
    "test_shakespeare_loss_ranks_conv_then_lstm_then_attention",
)
TARGETS = {  # name -> (limit, what is measured); from the issue that asked for them
    "cold, every core / one worker": 0.6,
    "warm re-run, nothing changed (s)": 30.0,
    "re-run after touching one claim test's file (s)": 45.0,
    "re-run after editing one claim test (s)": 45.0,
}
RESULTS = Path("reports/results")


def _log(text: str) -> None:
    print(f"[bench {datetime.now(UTC):%H:%M:%S}] {text}", flush=True)


def nox_claims(args: list[str], cache: Path, logs: Path, name: str) -> dict:
    """Run ``nox -s claims -- args`` with ``cache`` as the cache; its wall time and counters."""
    env = {**os.environ, "CLAIMBOOK_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "nox", "-s", "claims", "--", *args]
    before = {p.name for p in RESULTS.glob("run-*.json")}
    _log(f"{name}: {' '.join(command[2:])} (cache {cache}; log {logs / name}.log)")
    start = time.perf_counter()
    with open(logs / f"{name}.log", "w") as log:
        code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - start
    new = sorted(p for p in RESULTS.glob("run-*.json") if p.name not in before)
    record = {"command": " ".join(command[2:]), "exit_status": code, "wall_s": round(wall, 1)}
    if new:
        run = load_results(new[-1])["run"]
        record["results"] = new[-1].name
        for key in ("wall_s", "training_wall_s", "workers", "runs_computed", "runs_read"):
            record[f"pytest_{key}" if key == "wall_s" else key] = run.get(key)
        record["claims_executed"] = run.get("claims_executed")
        record["claims_replayed"] = run.get("claims_replayed")
    _log(
        f"{name}: {wall:.1f} s, exit {code}, "
        + json.dumps(
            {k: v for k, v in record.items() if k.startswith(("runs", "claims", "workers"))}
        )
    )
    return record


def _edit(path: Path, function: str) -> str:
    """Add a statement at the end of ``function`` in ``path``; return the original text."""
    text = path.read_text()
    node = next(
        n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == function
    )
    lines = text.splitlines(keepends=True)
    lines.insert(node.end_lineno, "    edited_by_the_benchmark = True  # noqa: F841\n")
    path.write_text("".join(lines))
    return text


def _verdicts(results: dict) -> dict:
    return {
        c["id"]: (c["verdict"], c["seeds_passed"], c["seeds_total"], c["printed_reproduced"])
        for c in results["claims"]
    }


def shards(cache: Path, work: Path, logs: Path, reference: Path, count: int = 3) -> dict:
    """Run the suite in ``count`` shards on ``cache``'s training runs, merge, and compare."""
    shard_cache = work / "shards"
    shutil.rmtree(shard_cache, ignore_errors=True)
    shard_cache.mkdir(parents=True)
    for folder in cache.iterdir():  # the training runs, not the stored claim outcomes
        if folder.is_dir() and folder.name not in ("claims", "figures"):
            (shard_cache / folder.name).symlink_to(folder.resolve())
    runs = [
        nox_claims([f"--shard={i}/{count}"], shard_cache, logs, f"shard{i}")
        for i in range(1, count + 1)
    ]
    files = [str(RESULTS / r["results"]) for r in runs if "results" in r]
    merge = subprocess.run(
        [sys.executable, "-m", "claimbook", "merge", *files], capture_output=True, text=True
    )
    (logs / "merge.log").write_text(merge.stdout + merge.stderr)
    record = {"shards": runs, "merge_exit_status": merge.returncode}
    if merge.returncode != 0:
        record["error"] = (merge.stdout + merge.stderr).strip().splitlines()[-1]
        return record
    merged_path = latest_results(RESULTS)
    merged, unsharded = _verdicts(load_results(merged_path)), _verdicts(load_results(reference))
    record["merged"] = merged_path.name
    record["compared_with"] = reference.name
    record["claims"] = len(merged)
    record["differences"] = [
        {"claim": c, "sharded": merged.get(c), "unsharded": unsharded.get(c)}
        for c in sorted(set(merged) | set(unsharded))
        if merged.get(c) != unsharded.get(c)
    ]
    record["same_verdicts"] = not record["differences"]
    return record


def run(steps: list[str], work: Path) -> dict:
    """Run the chosen steps; return the bench record (also written to reports/bench.json)."""
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    bench = {
        "schema": SCHEMA,
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "git_commit": subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or None,
        "machine": {"cpu": machine(), "cores": available_cores(), "platform": platform.platform()},
        "steps": steps,
        "runs": {},
    }
    warm_cache = Path(os.environ.get("CLAIMBOOK_CACHE_DIR") or ".claimbook-cache")
    subprocess.run(
        [sys.executable, "-m", "nox", "-s", "claims", "--install-only"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    if "throughput" in steps:
        _log("throughput: the mixers' training steps against a matmul, one thread")
        from experiments.lm import LMConfig
        from experiments.modules import MIXERS
        from experiments.throughput import mixer_throughput

        bench["throughput"] = mixer_throughput({n: LMConfig(s) for n, s in MIXERS.items()})
    if "cold" in steps:
        for name, args in (("cold, every core", []), ("cold, one worker", ["--workers=1"])):
            cache = work / ("cold-all" if args == [] else "cold-one")
            shutil.rmtree(cache, ignore_errors=True)
            bench["runs"][name] = nox_claims(
                args, cache, logs, name.replace(", ", "-").replace(" ", "-")
            )
        warm_cache = work / "cold-one"
    if "warm" in steps:
        bench["runs"]["warm, nothing changed"] = nox_claims([], warm_cache, logs, "warm")
    if "edit" in steps:
        path, function = Path(EDITED[0]), EDITED[1]
        original = _edit(path, function)
        try:
            record = nox_claims([], warm_cache, logs, "edit")
        finally:
            path.write_text(original)
        record["edited"] = f"{EDITED[0]}::{function}"
        bench["runs"]["edited one claim test"] = record
    if "touch" in steps:  # a new modification time, the same text: nothing to execute
        os.utime(EDITED[0])
        bench["runs"]["touched one claim test file"] = nox_claims([], warm_cache, logs, "touch")
    if "shards" in steps:
        warm = bench["runs"].get("warm, nothing changed", {}).get("results")
        reference = RESULTS / warm if warm else latest_results(RESULTS, full=True)
        bench["shards"] = shards(warm_cache, work, logs, reference)
    if "looks" in steps:
        newest = latest_results(RESULTS, full=True)
        bench["looks"] = {"results": newest.name, **looks_cost(load_results(newest))}
        _log(f"looks: {json.dumps({k: v for k, v in bench['looks'].items() if k != 'claims'})}")
    bench["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    bench["ratios"], bench["targets"] = ratios(bench["runs"])
    return bench


def ratios(runs: dict) -> tuple[dict, list[dict]]:
    """Ratios between the timed runs, and each target with its measured value."""
    wall = {name: r["wall_s"] for name, r in runs.items()}
    found = {}
    if {"cold, every core", "cold, one worker"} <= set(wall):
        found["cold, every core / one worker"] = wall["cold, every core"] / wall["cold, one worker"]
    cold = wall.get("cold, every core")
    for name in ("warm, nothing changed", "touched one claim test file", "edited one claim test"):
        if name in wall and cold:
            found[f"{name} / cold, every core"] = wall[name] / cold
    measured = {
        "cold, every core / one worker": found.get("cold, every core / one worker"),
        "warm re-run, nothing changed (s)": wall.get("warm, nothing changed"),
        "re-run after touching one claim test's file (s)": wall.get("touched one claim test file"),
        "re-run after editing one claim test (s)": wall.get("edited one claim test"),
    }
    targets = [
        {
            "target": name,
            "limit": limit,
            "measured": measured[name],
            "met": None if measured[name] is None else measured[name] <= limit,
        }
        for name, limit in TARGETS.items()
    ]
    return {k: round(v, 4) for k, v in found.items()}, targets


def report(bench: dict) -> None:
    """Print the bench record as a few plain tables."""
    for name, r in bench["runs"].items():
        counts = (
            f"runs computed {r.get('runs_computed')}, read {r.get('runs_read')}; claim tests "
            f"executed {r.get('claims_executed')}, replayed {r.get('claims_replayed')}"
        )
        print(f"  {name:<24} {r['wall_s']:>8.1f} s  exit {r['exit_status']}  {counts}")
    for name, value in bench["ratios"].items():
        print(f"  {name:<48} {value:.3f}")
    for t in bench["targets"]:
        state = "not measured" if t["met"] is None else ("met" if t["met"] else "MISSED")
        print(f"  target {t['target']}: at most {t['limit']}, measured {t['measured']}: {state}")
    if "throughput" in bench:
        tp = bench["throughput"]
        print(f"  matmul ceiling: {tp['matmul_flops_per_s'] / 1e9:.1f} GFLOP/s (one thread)")
        for name, m in tp["mixers"].items():
            rate, share = m["flops_per_s"] / 1e9, m["share_of_matmul"]
            print(f"  {name:<12} {m['steps_per_s']:.2f} steps/s, {rate:.2f} GFLOP/s = {share:.1%}")
    if "shards" in bench:
        s = bench["shards"]
        same = "same verdicts" if s.get("same_verdicts") else s.get("differences") or s.get("error")
        print(f"  3 shards merged vs unsharded: {same}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m claimbook.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--steps", default=",".join(STEPS), help=f"comma-separated subset of {','.join(STEPS)}"
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(".claimbook-bench"),
        help="scratch folder for the cold runs' caches and the logs (default: .claimbook-bench)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("reports/bench.json"),
        help="where the record goes (default: reports/bench.json, shown by the site)",
    )
    args = parser.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown step(s) {', '.join(unknown)}; choose from {', '.join(STEPS)}")
    bench = run(steps, args.work)
    write_json(args.out, bench)
    report(bench)
    site = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "site"], capture_output=True, text=True
    )
    if site.returncode != 0:
        print(site.stdout + site.stderr)
    _log(f"written {args.out}; the site's Performance page shows it (site/performance/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
