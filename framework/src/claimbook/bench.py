"""The suite's cost, measured in one invocation on one machine: ``python -m claimbook.bench``.

The book's main job (``--command``, e.g. ``nox -s claims --``: claims, site and gate, with
pytest's arguments appended) is run as a user would run it. Steps (``--steps``, default
all, in this order):

- ``cold``: the main job from an empty cache, with every core and with one worker
  (``--claimbook-workers 1``), each end to end (training, claims, site, gate);
- ``warm``: the same command again with nothing changed;
- ``touch``: again after touching one claim test's file (a new modification time);
- ``edit``: again after adding a statement to one claim test (``--edit FILE::TEST``,
  default the first test of the claims folder; restored after);
- ``shards``: the suite in 3 shards on the warm training runs (claims executed
  afresh), merged, and compared claim by claim with the unsharded run;
- ``looks``: what the planned looks cost the newest complete run (seeds per stochastic
  claim, extra training runs and CPU-seconds, CPU-seconds per decided claim);
- ``balance``: the recorded durations split into 3 training legs (longest over mean);
- ``legs``: the CI workflow simulated from an empty cache (:mod:`claimbook.simulate`),
  compared value by value with the newest complete unsharded run. Steps not run keep
  their record from the file already at ``--out``.

Writes ``bench.json`` into the docs folder (atomically), which the site's performance page
shows, and prints every figure with its ratio. Times are wall-clock seconds. Nothing here
knows the book: a book's own measurements go into the record from its own code.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from claimbook.config import CACHE_ENV, find
from claimbook.judge.cost import looks_cost
from claimbook.runs.keys import machine
from claimbook.runs.plan import available_cores
from claimbook.simulate import balance, legs
from claimbook.storage.atomic import write_json
from claimbook.storage.benchfile import kept
from claimbook.storage.results import latest_results, load_results

SCHEMA = "claimbook.bench/1"
STEPS = ("cold", "warm", "touch", "edit", "shards", "looks", "balance", "legs")
TARGETS = {  # name -> (limit, what is measured); from the issue that asked for them
    "cold, every core / one worker": 0.6,
    "warm re-run, nothing changed (s)": 30.0,
    "re-run after touching one claim test's file (s)": 45.0,
    "re-run after editing one claim test (s)": 45.0,
}
SETTINGS = find()
RESULTS = SETTINGS.path("results")


def _log(text: str) -> None:
    print(f"[bench {datetime.now(UTC):%H:%M:%S}] {text}", flush=True)


def main_job(main: list[str], args: list[str], cache: Path, logs: Path, name: str) -> dict:
    """Run the main job with pytest's ``args`` and ``cache`` as the cache; its wall time and
    counters."""
    env = {**os.environ, CACHE_ENV: str(cache)}
    command = [*main, *args]
    before = {p.name for p in RESULTS.glob("run-*.json")}
    _log(f"{name}: {shlex.join(command)} (cache {cache}; log {logs / name}.log)")
    start = time.perf_counter()
    with open(logs / f"{name}.log", "w") as log:
        code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.perf_counter() - start
    new = sorted(p for p in RESULTS.glob("run-*.json") if p.name not in before)
    record = {"command": shlex.join(command), "exit_status": code, "wall_s": round(wall, 1)}
    missing = [line for line in (logs / f"{name}.log").read_text().splitlines()
               if "are not in the cache and this session trains nothing" in line]  # fmt: skip
    if missing:
        record["missing_named"] = missing[0][:400]
    if new:
        run = load_results(new[-1])["run"]
        record["results"], record["results_path"] = new[-1].name, str(new[-1])
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


def shards(
    main: list[str], cache: Path, work: Path, logs: Path, reference: Path, count: int = 3
) -> dict:
    """Run the suite in ``count`` shards on ``cache``'s training runs, merge, and compare."""
    shard_cache = work / "shards"
    shutil.rmtree(shard_cache, ignore_errors=True)
    shard_cache.mkdir(parents=True)
    for folder in cache.iterdir():  # the training runs, not the stored claim outcomes
        if folder.is_dir() and folder.name not in ("claims", "figures"):
            (shard_cache / folder.name).symlink_to(folder.resolve())
    runs = [
        main_job(main, [f"--claimbook-shard={i}/{count}"], shard_cache, logs, f"shard{i}")
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


def first_test(folder: Path) -> str:
    """``FILE::TEST`` of the first test function of the first claim module in ``folder``."""
    for path in sorted(folder.rglob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                return f"{path.relative_to(SETTINGS.root)}::{node.name}"
    raise SystemExit(f"claimbook.bench: no claim test in {folder} to edit (give --edit)")


def run(steps: list[str], work: Path, main: list[str], edited: str, setup: str) -> dict:
    """Run the chosen steps; return the bench record (also written to bench.json)."""
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
    bench["command"] = shlex.join(main)
    warm_cache = SETTINGS.cache_dir()
    if setup:  # e.g. build the main job's environment first, so that no step times it
        subprocess.run(shlex.split(setup), check=True, stdout=subprocess.DEVNULL)
    if "cold" in steps:
        one = ["--claimbook-workers=1"]
        for name, args in (("cold, every core", []), ("cold, one worker", one)):
            cache = work / ("cold-all" if args == [] else "cold-one")
            shutil.rmtree(cache, ignore_errors=True)
            bench["runs"][name] = main_job(
                main, args, cache, logs, name.replace(", ", "-").replace(" ", "-")
            )
        warm_cache = work / "cold-one"
    if "warm" in steps:
        bench["runs"]["warm, nothing changed"] = main_job(main, [], warm_cache, logs, "warm")
    file, _, function = edited.partition("::")
    if "edit" in steps:
        original = _edit(SETTINGS.root / file, function)
        try:
            record = main_job(main, [], warm_cache, logs, "edit")
        finally:
            (SETTINGS.root / file).write_text(original)
        record["edited"] = edited
        bench["runs"]["edited one claim test"] = record
    if "touch" in steps:  # a new modification time, the same text: nothing to execute
        os.utime(SETTINGS.root / file)
        touched = main_job(main, [], warm_cache, logs, "touch")
        bench["runs"]["touched one claim test file"] = touched
    if "shards" in steps:
        warm = bench["runs"].get("warm, nothing changed", {}).get("results")
        reference = RESULTS / warm if warm else latest_results(RESULTS, full=True)
        bench["shards"] = shards(main, warm_cache, work, logs, reference)
    if "looks" in steps:
        newest = latest_results(RESULTS, full=True)
        bench["looks"] = {"results": newest.name, **looks_cost(load_results(newest))}
        _log(f"looks: {json.dumps({k: v for k, v in bench['looks'].items() if k != 'claims'})}")
    if "legs" in steps:
        reference = latest_results(RESULTS, full=True)
        bench["legs"] = legs(lambda a, c, n: main_job(main, a, c, logs, n), work, reference)
        _log(f"legs: {json.dumps({k: v for k, v in bench['legs'].items() if k != 'rounds'})}")
    if "balance" in steps:  # after the legs, which record the durations they measured
        bench["balance"] = balance(SETTINGS.path("durations"))
        _log(f"balance: {json.dumps(bench['balance'])}")
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
        "--out", type=Path, default=SETTINGS.path("docs") / "bench.json",
        help="where the record goes (default: bench.json in the docs folder, shown by the site)",
    )  # fmt: skip
    parser.add_argument(
        "--command", default="python -m pytest",
        help="the book's main job, pytest's arguments appended (default: python -m pytest; "
        "e.g. 'nox -s claims --', which also renders, builds and gates)",
    )  # fmt: skip
    parser.add_argument("--setup", default="", help="a command run once before any step")
    parser.add_argument(
        "--edit", metavar="FILE::TEST",
        help="the claim test the edit step edits (default: the first of the claims folder)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    steps = [s for s in args.steps.split(",") if s]
    unknown = sorted(set(steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown step(s) {', '.join(unknown)}; choose from {', '.join(STEPS)}")
    edited = args.edit or first_test(SETTINGS.path("claims"))
    bench = run(steps, args.work, shlex.split(args.command), edited, args.setup)
    write_json(args.out, kept(args.out, bench, STEPS))
    report(bench)
    _log(f"written {args.out}; the site's Performance page shows it once rendered")
    return 0


if __name__ == "__main__":
    sys.exit(main())
